#include "cook/contacts.h"

#include <algorithm>

namespace mmdb::cook {

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

std::vector<uint32_t> ContactDetector::run(const ToeSpeeds& toe_speeds) const {
  const size_t n = toe_speeds[0].size();
  std::vector<uint32_t> mask(n, 0);
  std::vector<uint8_t> slow(n);
  for (size_t toe = 0; toe < toe_speeds.size(); ++toe) {
    for (size_t f = 0; f < n; ++f) slow[f] = toe_speeds[toe][f] < speed_threshold ? 1 : 0;
    const std::vector<uint8_t> filtered = medianFilterBinary(slow, median_frames);
    for (size_t f = 0; f < n; ++f) mask[f] |= static_cast<uint32_t>(filtered[f]) << toe;
  }
  return mask;
}

}  // namespace mmdb::cook
