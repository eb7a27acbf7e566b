#include "cook/bounds.h"

#include "core/parallel_for.h"

#include <algorithm>
#include <limits>

namespace mmdb::cook {

FeatureBounds buildFeatureBounds(const std::vector<float>& features, int stride, int box_size,
                                 int jobs) {
  const size_t s = static_cast<size_t>(stride), size = static_cast<size_t>(box_size);
  const size_t frames = features.size() / s;
  const size_t boxes = (frames + size - 1) / size;
  FeatureBounds b;
  b.min.assign(boxes * s, std::numeric_limits<float>::max());
  b.max.assign(boxes * s, std::numeric_limits<float>::lowest());
  // Each box is its own: the threads take runs of whole boxes.
  const int parts = static_cast<int>(std::min<size_t>(size_t(std::max(1, jobs)), boxes));
  parallelFor(0, parts, parts, [&](int part) {
    const auto [first_box, last_box] = partOf(boxes, parts, part);
    for (size_t f = first_box * size; f < std::min(frames, last_box * size); ++f) {
      const size_t box = f / size;
      for (size_t k = 0; k < s; ++k) {
        const float v = features[f * s + k];
        b.min[box * s + k] = std::min(b.min[box * s + k], v);
        b.max[box * s + k] = std::max(b.max[box * s + k], v);
      }
    }
  });
  return b;
}

}  // namespace mmdb::cook
