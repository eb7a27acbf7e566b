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

// `rows` holds `stride` floats per frame, of which the first `columns` are raw values (the rest
// is padding). Fills each block's std (the mean over its columns of the per-column population
// standard deviation). Each column's sums run in frame order in double, so the result depends
// neither on how clips were cooked nor on `jobs`, the threads it may use. The features are written
// over `rows` (moved in, it is the only copy), the padding 0. Throws InputError naming a block
// whose weight is not above 0 or whose values never change.
NormalizedFeatures normalizeFeatureRows(std::vector<float> rows, int columns, int stride,
                                        std::vector<CookedFeatureBlock>& blocks, int jobs);

// The same from `raw` holding `columns` floats per frame, packed (stride >= columns).
NormalizedFeatures normalizeFeatures(std::vector<float> raw, int columns, int stride,
                                     std::vector<CookedFeatureBlock>& blocks);

}  // namespace mmdb::cook
