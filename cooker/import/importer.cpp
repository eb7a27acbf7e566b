// Importer dispatch by file extension, and source inspection for `mmcook inspect-source`.
#include "import/importer.h"

#include "core/errors.h"

#include <cctype>
#include <filesystem>

namespace mmdb::cook {
namespace {

bool isBvh(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".bvh";
}

}  // namespace

RawClip importClipFile(const std::string& path, const std::string& take) {
  if (!isBvh(path)) return importAssimpFile(path, take);
  if (!take.empty() && take != "0")
    throw InputError(path + ": a BVH file holds a single take, but take '" + take +
                     "' was asked for; remove the take setting for this clip");
  return importBvhFile(path);
}

SourceInfo inspectSourceFile(const std::string& path) {
  if (!isBvh(path)) return inspectAssimpFile(path);
  const RawClip clip = importBvhFile(path);
  SourceInfo info;
  info.path = path;
  info.format = "BVH";
  const double duration = clip.frame_rate > 0 ? (clip.frame_count - 1) / clip.frame_rate : 0.0;
  info.takes.push_back(
      {std::filesystem::path(path).stem().string(), clip.frame_rate, clip.frame_count, duration});
  info.skeleton = clip.skeleton;
  info.declared_unit_scale = clip.declared_unit_scale;
  if (clip.declared_unit_scale <= 0)
    info.notes.push_back(
        "BVH declares no unit: the cook takes the scale from the manifest, the "
        "preset or the standing hip height");
  for (const Warning& w : clip.warnings) info.notes.push_back("warning: " + w.text);
  return info;
}

}  // namespace mmdb::cook
