#include "reference_search.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace mmdb::test {

mmdb::SearchResult referenceSearch(const mmdb::Database& db, const mmdb::SearchRequest& request) {
  const float* q = request.query.data();
  const float* features = db.features().data();
  const uint32_t n = db.featureCount(), stride = db.featureStride();
  const uint32_t small = db.boundsSmallSize(), large = db.boundsLargeSize();
  const float* small_min = db.boundsSmallMin().data();
  const float* small_max = db.boundsSmallMax().data();
  const float* large_min = db.boundsLargeMin().data();
  const float* large_max = db.boundsLargeMax().data();
  const float transition = request.transition_cost;
  const int64_t current = request.current_frame;
  const int64_t neighbourhood = request.neighbourhood_frames == mmdb::kDefaultNeighbourhood
                                    ? db.defaultNeighbourhoodFrames()
                                    : request.neighbourhood_frames;

  mmdb::SearchResult result;
  float best = std::numeric_limits<float>::infinity();
  int64_t best_frame = current;
  if (current >= 0) {
    const float* row = features + size_t(current) * stride;
    float cost = 0;
    for (uint32_t c = 0; c < n; ++c) cost += (q[c] - row[c]) * (q[c] - row[c]);
    best = cost;
  }
  // Sum of the distance from the query to a box, abandoned once it reaches best.
  auto boxCost = [&](const float* lo, const float* hi) {
    float cost = transition;
    for (uint32_t c = 0; c < n && cost < best; ++c) {
      const float d = std::max(std::max(lo[c] - q[c], q[c] - hi[c]), 0.f);
      cost += d * d;
    }
    return cost;
  };
  for (const mmdb::MatchRange& range : db.ranges()) {
    if (!request.filter.passes(range.tag_mask)) continue;
    const uint32_t end = range.first_frame + range.frame_count;
    uint32_t i = range.first_frame;
    while (i < end) {
      const uint32_t lb = i / large, large_end = std::min(end, (lb + 1) * large);
      if (boxCost(large_min + size_t(lb) * stride, large_max + size_t(lb) * stride) >= best) {
        i = large_end;
        continue;
      }
      while (i < large_end) {
        const uint32_t sb = i / small, small_end = std::min(large_end, (sb + 1) * small);
        if (boxCost(small_min + size_t(sb) * stride, small_max + size_t(sb) * stride) >= best) {
          i = small_end;
          continue;
        }
        for (; i < small_end; ++i) {
          if (current >= 0 && std::llabs(int64_t(i) - current) < neighbourhood) continue;
          const float* row = features + size_t(i) * stride;
          float cost = transition;
          uint32_t c = 0;
          for (; c < n; ++c) {
            const float d = q[c] - row[c];
            cost += d * d;
            if (cost >= best) break;
          }
          ++result.evaluated;
          if (c == n && cost < best) {
            best = cost;
            best_frame = i;
          }
        }
      }
    }
  }
  result.frame = int32_t(best_frame);
  result.cost = best;
  result.changed = best_frame != current;
  return result;
}

}  // namespace mmdb::test
