// A cook request over synthetic BVH files (synthetic_bvh.h) written into a folder, for the tests
// of the whole cook and of its clip cache.
#pragma once

#include "core/cook_settings.h"
#include "synthetic_bvh.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace mmdb::test {

// Three clips from two sources: a tagged walk with a tagged range, a mirrored turn, and part of
// the walk with an excluded range.
inline mmdb::cook::CookRequest walkTurnAndPart(const std::filesystem::path& folder) {
  auto write = [&](const std::string& name, const std::string& text) {
    const std::filesystem::path p = folder / name;
    std::ofstream(p) << text;
    return p.string();
  };
  mmdb::cook::CookRequest r;
  mmdb::cook::ClipSpec walk;
  walk.source = write("walk.bvh", bvhText(walkFrames(121, 1.2f)));
  walk.source_label = "walk.bvh";
  walk.tags = {"locomotion"};
  walk.ranges = {{30, 40, {"fast"}, false}};
  mmdb::cook::ClipSpec circle;
  circle.name = "turn";
  circle.source = write("circle.bvh", bvhText(circleFrames(151, 1.0, 1.5)));
  circle.tags = {"locomotion", "turn"};
  circle.mirror = true;
  mmdb::cook::ClipSpec part = walk;
  part.name = "walk_part";
  part.source_first_frame = 10;
  part.source_frame_count = 61;
  part.tags = {};
  part.ranges = {{0, 10, {}, true}};
  r.clips = {walk, circle, part};
  return r;
}

}  // namespace mmdb::test
