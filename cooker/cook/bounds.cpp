#include "cook/bounds.h"

#include "core/parallel_for.h"

#include <algorithm>
#include <limits>

namespace mmdb::cook {

std::vector<uint8_t> matchableFrames(const std::vector<CookedRange>& ranges, size_t frames) {
  std::vector<uint8_t> matchable(frames, 0);
  for (const CookedRange& r : ranges) {
    const size_t first = std::min<size_t>(r.first_frame, frames);
    const size_t end = std::min<size_t>(size_t(r.first_frame) + r.frame_count, frames);
    std::fill(matchable.begin() + first, matchable.begin() + end, uint8_t(1));
  }
  return matchable;
}

FeatureBounds buildFeatureBounds(const std::vector<float>& features, int stride, int box_size,
                                 const std::vector<uint8_t>& matchable, int jobs) {
  const size_t s = static_cast<size_t>(stride), size = static_cast<size_t>(box_size);
  const size_t frames = features.size() / s;
  const size_t boxes = (frames + size - 1) / size;
  FeatureBounds b;
  b.min.assign(boxes * s, std::numeric_limits<float>::max());
  b.max.assign(boxes * s, std::numeric_limits<float>::lowest());
  const auto counts = [&](size_t f) { return matchable.empty() || matchable[f] != 0; };
  // Each box is its own: the threads take runs of whole boxes.
  const int parts = static_cast<int>(std::min<size_t>(size_t(std::max(1, jobs)), boxes));
  parallelFor(0, parts, parts, [&](int part) {
    const auto [first_box, last_box] = partOf(boxes, parts, part);
    for (size_t box = first_box; box < last_box; ++box) {
      const size_t first = box * size, end = std::min(frames, first + size);
      const bool any = std::any_of(matchable.begin() + std::min(first, matchable.size()),
                                   matchable.begin() + std::min(end, matchable.size()),
                                   [](uint8_t m) { return m != 0; });
      float* lo = &b.min[box * s];
      float* hi = &b.max[box * s];
      for (size_t f = first; f < end; ++f) {
        if (any && !counts(f)) continue;
        for (size_t k = 0; k < s; ++k) {
          const float v = features[f * s + k];
          lo[k] = std::min(lo[k], v);
          hi[k] = std::max(hi[k], v);
        }
      }
    }
  });
  return b;
}

void buildDatabaseBounds(CookedDatabase& db, int jobs) {
  const std::vector<uint8_t> matchable =
      matchableFrames(db.ranges, db.features.size() / db.feature_stride);
  FeatureBounds small =
      buildFeatureBounds(db.features, db.feature_stride, db.bounds_small_size, matchable, jobs);
  FeatureBounds large =
      buildFeatureBounds(db.features, db.feature_stride, db.bounds_large_size, matchable, jobs);
  db.bounds_small_min = std::move(small.min);
  db.bounds_small_max = std::move(small.max);
  db.bounds_large_min = std::move(large.min);
  db.bounds_large_max = std::move(large.max);
}

}  // namespace mmdb::cook
