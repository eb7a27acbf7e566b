// Importers: a file in, a RawClip out (source units, source frame rate, Y up). Errors are
// InputError naming the file and line (BVH) or Assimp's reason (FBX and others).
#pragma once

#include "core/raw_clip.h"

#include <string>
#include <string_view>
#include <vector>

namespace mm {

// BVH (bvh_importer.cpp). parseBvh reads text already in memory; `path` is used in messages.
RawClip importBvhFile(const std::string& path);
RawClip parseBvh(std::string_view text, const std::string& path);

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
};
SourceInfo inspectSourceFile(const std::string& path);

}  // namespace mm
