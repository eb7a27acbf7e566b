// Importers: a file in, a RawClip out (source units, source frame rate, Y up). Errors are
// InputError naming the file and line (BVH) or Assimp's reason (FBX and others).
#pragma once

#include "core/raw_clip.h"

#include <glm/mat3x3.hpp>

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

// FBX and the other formats Assimp reads (assimp_importer.cpp). `take` is an animation name or
// index as text; "" picks the first and the importer logs which.
RawClip importAssimpFile(const std::string& path, const std::string& take);

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

// The rotation that takes an FBX file's axis system (GlobalSettings UpAxis, FrontAxis, CoordAxis:
// 0 = X, 1 = Y, 2 = Z, and their signs) to ours: X = coord axis, Y = up, Z = front. Identity for
// an invalid combination. Its determinant is -1 for a left-handed file.
glm::dmat3 axisConversionToYUp(int up_axis, int up_sign, int front_axis, int front_sign,
                               int coord_axis, int coord_sign);

}  // namespace mmdb::cook
