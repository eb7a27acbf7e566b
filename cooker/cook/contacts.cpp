#include "cook/contacts.h"

#include "cook/velocities.h"

#include <algorithm>

namespace mm {

std::vector<uint8_t> medianFilterBinary(const std::vector<uint8_t>& values, int size) {
  const int n = static_cast<int>(values.size());
  if (size <= 1 || n == 0) return values;
  const int before = size / 2, after = size - 1 - size / 2, needed = size - size / 2;
  std::vector<uint8_t> out(n);
  for (int i = 0; i < n; ++i) {
    int ones = 0;
    for (int k = i - before; k <= i + after; ++k) ones += values[std::clamp(k, 0, n - 1)] ? 1 : 0;
    out[i] = ones >= needed ? 1 : 0;
  }
  return out;
}

std::vector<uint32_t> ContactDetector::run(
    const std::vector<std::vector<glm::vec3>>& toe_positions) const {
  const size_t n = toe_positions.empty() ? 0 : toe_positions[0].size();
  std::vector<uint32_t> mask(n, 0);
  for (size_t toe = 0; toe < toe_positions.size(); ++toe) {
    const std::vector<glm::vec3> v = linearVelocities(toe_positions[toe], 1, frame_rate);
    std::vector<uint8_t> slow(n);
    for (size_t f = 0; f < n; ++f) slow[f] = glm::length(v[f]) < speed_threshold ? 1 : 0;
    const std::vector<uint8_t> filtered = medianFilterBinary(slow, median_frames);
    for (size_t f = 0; f < n; ++f) mask[f] |= static_cast<uint32_t>(filtered[f]) << toe;
  }
  return mask;
}

}  // namespace mm
