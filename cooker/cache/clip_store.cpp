#include "cache/clip_store.h"

#include "cache/clip_file.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "write/database_writer.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace mmdb::cook {

namespace fs = std::filesystem;

ClipCacheFolder::ClipCacheFolder(std::string folder) : folder_(std::move(folder)) {
  std::error_code ec;
  if (fs::exists(folder_, ec) && !fs::is_directory(folder_, ec))
    throw InputError(folder_ +
                     ": the clip cache is not a folder; give a folder with --cache, "
                     "or cook with --no-cache");
  fs::create_directories(folder_, ec);
  if (ec)
    throw InputError(folder_ + ": cannot create the clip cache folder: " + ec.message() +
                     "; give another with --cache, or cook with --no-cache");
  // The same check an entry's write makes, so a read-only cache fails before the cook.
  try {
    checkWritable((fs::path(folder_) / "probe.mmclip").string());
  } catch (const InputError& e) {
    throw InputError(folder_ + ": the clip cache folder is not writable (" + e.what() +
                     "); give another with --cache, or cook with --no-cache");
  }
}

std::string ClipCacheFolder::entryPath(const std::string& key) const {
  Fnv1a64 hash;
  hash.add(key.data(), key.size());
  const std::string name = fmt::format("{:016x}", hash.value());
  return (fs::path(folder_) / name.substr(0, 2) / (name + ".mmclip")).string();
}

std::optional<ClipPart> ClipCacheFolder::find(const std::string& key, int, bool* refused) {
  const std::string path = entryPath(key);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  try {
    ClipFile file = readClipFile(path);
    if (file.key != key) {  // another key with the same hash: a miss, the entry is replaced
      spdlog::debug("clip cache: {} holds another clip ({})", path,
                    firstKeyDifference(file.key, key));
      return std::nullopt;
    }
    return std::move(file.part);
  } catch (const InputError& e) {
    spdlog::warn("clip cache: {}; cooking the clip again", e.what());
    if (refused) *refused = true;
    return std::nullopt;
  }
}

void ClipCacheFolder::keep(const std::string& key, int, const ClipPart& part) {
  const std::string path = entryPath(key);
  try {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    writeFileAtomically(path, serializeClipFile(key, part));
  } catch (const InputError& e) {
    // The cook goes on: a cache that cannot keep a part only makes the next cook slower.
    std::lock_guard lock(warn_mutex_);
    if (!keep_failed_) spdlog::warn("clip cache: cannot keep a clip: {}", e.what());
    keep_failed_ = true;
  }
}

std::string defaultClipCacheFolder() {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
  };
  if (std::string dir = env("MMCOOK_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string dir = env("XDG_CACHE_HOME"); !dir.empty())
    return (fs::path(dir) / "mmcook").string();
  if (std::string dir = env("HOME"); !dir.empty())
    return (fs::path(dir) / ".cache" / "mmcook").string();
  return "";
}

ClipFileList::ClipFileList(std::vector<std::string> files, std::vector<std::string> clip_names)
    : files_(std::move(files)), clip_names_(std::move(clip_names)), loaded_(files_.size()) {
  if (files_.size() != clip_names_.size())
    throw InputError(
        fmt::format("the manifest has {} clips but {} .mmclip files were given; give "
                    "one per clip, in the manifest's order (re-run CMake when the "
                    "manifest's clips changed)",
                    clip_names_.size(), files_.size()));
}

ClipFile& ClipFileList::load(int index) {
  std::unique_ptr<ClipFile>& file = loaded_.at(static_cast<size_t>(index));
  if (!file) file = std::make_unique<ClipFile>(readClipFile(files_[index]));
  return *file;
}

std::optional<CookedSource> ClipFileList::recordedSource(int index) {
  return load(index).part.source;
}

std::optional<ClipPart> ClipFileList::find(const std::string& key, int index, bool*) {
  const std::string& path = files_.at(static_cast<size_t>(index));
  ClipFile file = std::move(load(index));
  loaded_[index].reset();
  if (file.key != key)
    throw InputError(
        path + ": it was not cooked from what clip " + clip_names_[index] +
        " of the manifest is now (first difference: " + firstKeyDifference(file.key, key) +
        "); cook it again with mmcook cook-clip, and give the files in the "
        "manifest's clip order");
  return std::move(file.part);
}

void ClipFileList::keep(const std::string&, int, const ClipPart&) {}

}  // namespace mmdb::cook
