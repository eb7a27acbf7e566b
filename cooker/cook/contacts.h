// Foot contacts (docs/cook.md "Contacts"): a toe touches the ground while its world speed is
// under a threshold, cleaned up by a median filter over a short window.
#pragma once

#include <glm/vec3.hpp>

#include <cstdint>
#include <vector>

namespace mm {

// Median of a 0/1 signal over `size` frames, the window [i - size/2, i + size - 1 - size/2] with
// the end values repeated beyond the ends (scipy's median_filter, mode 'nearest', whose rank
// size/2 is the upper median for an even size): 1 when at least size - size/2 frames are 1.
std::vector<uint8_t> medianFilterBinary(const std::vector<uint8_t>& values, int size);

struct ContactDetector {
  double frame_rate = 60;
  float speed_threshold = 0.15f;  // m/s
  int median_frames = 6;

  // Per frame, bit i set when toe i is in contact. `toe_positions[i]` holds toe i's world
  // position per frame; speeds come from linearVelocities at frame_rate.
  std::vector<uint32_t> run(const std::vector<std::vector<glm::vec3>>& toe_positions) const;
};

}  // namespace mm
