// Foot contacts (docs/cook.md "Contacts"): a toe touches the ground while its world speed is
// under a threshold, cleaned up by a median filter over a short window.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace mmdb::cook {

// Median of a 0/1 signal over `size` frames, the window [i - size/2, i + size - 1 - size/2] with
// the end values repeated beyond the ends (scipy's median_filter, mode 'nearest', whose rank
// size/2 is the upper median for an even size): 1 when at least size - size/2 frames are 1.
std::vector<uint8_t> medianFilterBinary(const std::vector<uint8_t>& values, int size);

// Per frame, the world speed of the left toe (0) and the right toe (1), m/s.
using ToeSpeeds = std::array<std::vector<float>, 2>;

struct ContactDetector {
  // From ClipStageSettings.
  float speed_threshold = 0;  // m/s
  int median_frames = 0;

  // Per frame, bit i set when toe i is in contact: its world speed (`toe_speeds[i]`, per frame)
  // is below speed_threshold, then median filtered. The speeds are those the foot-velocity
  // features use (FeatureBuilder): forward kinematics of the local velocities and angular
  // velocities, as the reference takes them, not differences of world positions (which read a
  // turning toe's speed low, by the chord's sin(w dt) / (w dt)).
  std::vector<uint32_t> run(const ToeSpeeds& toe_speeds) const;
};

}  // namespace mmdb::cook
