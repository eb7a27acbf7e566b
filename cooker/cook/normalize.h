// Block-weighted normalization (docs/cook.md "Normalization") over the whole database.
#pragma once

#include "core/cooked_database.h"

#include <vector>

namespace mmdb::cook {

struct NormalizedFeatures {
  std::vector<float> features;  // frame_count * stride, (raw - offset) / scale, padding 0
  std::vector<float> offset;    // per column: the mean
  std::vector<float> scale;     // per column: its block's std / its block's weight
};

// `raw` holds `columns` floats per frame (stride >= columns). Fills each block's std (the mean
// over its columns of the per-column population standard deviation). Sums run in frame order in
// double, so the result does not depend on how clips were cooked. The features are written over
// `raw` (moved in, with room for `stride` floats per frame, it is the only copy). Throws
// InputError naming a block whose weight is not above 0 or whose values never change.
NormalizedFeatures normalizeFeatures(std::vector<float> raw, int columns, int stride,
                                     std::vector<CookedFeatureBlock>& blocks);

}  // namespace mmdb::cook
