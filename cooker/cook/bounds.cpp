#include "cook/bounds.h"

#include <algorithm>
#include <limits>

namespace mmdb::cook {

FeatureBounds buildFeatureBounds(const std::vector<float>& features, int stride, int box_size) {
  const size_t s = static_cast<size_t>(stride), size = static_cast<size_t>(box_size);
  const size_t frames = features.size() / s;
  const size_t boxes = (frames + size - 1) / size;
  FeatureBounds b;
  b.min.assign(boxes * s, std::numeric_limits<float>::max());
  b.max.assign(boxes * s, std::numeric_limits<float>::lowest());
  for (size_t f = 0; f < frames; ++f) {
    const size_t box = f / size;
    for (size_t k = 0; k < s; ++k) {
      const float v = features[f * s + k];
      b.min[box * s + k] = std::min(b.min[box * s + k], v);
      b.max[box * s + k] = std::max(b.max[box * s + k], v);
    }
  }
  return b;
}

}  // namespace mmdb::cook
