// Importers: a file in, a RawClip out (source units, source frame rate, Y up). Errors are
// InputError naming the file and line (BVH) or Assimp's reason (FBX and others).
#pragma once

#include "core/raw_clip.h"

#include <glm/mat3x3.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmdb::cook {

// BVH (bvh_importer.cpp). parseBvh reads text already in memory; `path` is used in messages.
RawClip importBvhFile(const std::string& path);
RawClip parseBvh(std::string_view text, const std::string& path);

// What a BVH file's header declares (its "Frames:" and "Frame Time:" lines), read from the
// file's first 256 KiB alone, for a cook that lays out clips before it imports them. The frames
// the file holds may differ (the import warns). nullopt where the header cannot be read so (a
// longer hierarchy, a bad file: the import reports what is wrong).
struct BvhMotionHeader {
  int64_t declared_frames = 0;
  double frame_rate = 0;  // as the import takes it
};
std::optional<BvhMotionHeader> readBvhMotionHeader(const std::string& path);

// FBX and the other formats Assimp reads. `take` is an animation name or index as text; "" picks
// the first and the importer logs which.
//
// Assimp is large and slow to load (about 12 ms of every process that links it), and a BVH cook
// never needs it, so mmcook loads it on demand: importAssimpFile() and inspectAssimpFile() load
// the importer module (assimp_loader.cpp: mmcook_assimp.so, beside the executable or in
// <libdir>/mmcook) at their first call and call its ...Here twins (assimp_importer.cpp), which
// do the work. Builds with MMCOOK_ASSIMP_ON_DEMAND off (a static C++ runtime) link the twins
// and call them directly (assimp_direct.cpp).
RawClip importAssimpFile(const std::string& path, const std::string& take);
RawClip importAssimpFileHere(const std::string& path, const std::string& take);

// Picks the importer by extension (.bvh -> BVH, anything else -> Assimp).
RawClip importClipFile(const std::string& path, const std::string& take);

// What `mmcook inspect-source` prints: takes, joints, frame ranges.
struct SourceTake {
  std::string name;
  double frame_rate = 0;
  int frame_count = 0;
  double duration_s = 0;
};
struct SourceInfo {
  std::string path;
  std::string format;  // "BVH", "FBX", ...
  std::vector<SourceTake> takes;
  Skeleton skeleton;
  double declared_unit_scale = 0;
  std::vector<std::string> notes;  // conventions applied: units, axes, collapsed nodes, warnings
};
SourceInfo inspectSourceFile(const std::string& path);
SourceInfo inspectAssimpFile(const std::string& path);
SourceInfo inspectAssimpFileHere(const std::string& path);

// What the importer module hands the loader: the build it comes from (the loader refuses a
// module of another build, whose C++ types may differ) and its two functions.
struct AssimpImporterModule {
  const char* build;  // kAssimpModuleBuild of the build that made the module
  size_t raw_clip_size;
  size_t source_info_size;
  RawClip (*import_file)(const std::string& path, const std::string& take);
  SourceInfo (*inspect_file)(const std::string& path);
};
inline constexpr const char* kAssimpModuleBuild = "mmcook " MMDB_VERSION ", " __VERSION__;
inline constexpr const char* kAssimpModuleEntry = "mmcook_assimp_importer_module";

// The rotation that takes an FBX file's axis system (GlobalSettings UpAxis, FrontAxis, CoordAxis:
// 0 = X, 1 = Y, 2 = Z, and their signs) to ours: X = coord axis, Y = up, Z = front. Identity for
// an invalid combination. Its determinant is -1 for a left-handed file.
glm::dmat3 axisConversionToYUp(int up_axis, int up_sign, int front_axis, int front_sign,
                               int coord_axis, int coord_sign);

}  // namespace mmdb::cook
