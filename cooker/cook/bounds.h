// Acceleration data (docs/cook.md "Bounds"): per-column min and max of the normalized
// features over boxes of consecutive global frames, for the bounds-pruned CPU search.
#pragma once

#include <vector>

namespace mmdb::cook {

struct FeatureBounds {
  std::vector<float> min, max;  // boxes * stride; box b covers frames [b * size, (b + 1) * size)
};

// `features` holds frame_count rows of `stride` floats; the last box may be shorter. Up to `jobs`
// threads; the result does not depend on them.
FeatureBounds buildFeatureBounds(const std::vector<float>& features, int stride, int box_size,
                                 int jobs = 1);

}  // namespace mmdb::cook
