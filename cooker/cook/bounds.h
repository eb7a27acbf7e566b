// Acceleration data (docs/cook.md "Bounds"): per-column min and max of the normalized
// features over boxes of consecutive global frames, for the bounds-pruned CPU search.
#pragma once

#include "core/cooked_database.h"

#include <cstdint>
#include <vector>

namespace mmdb::cook {

struct FeatureBounds {
  std::vector<float> min, max;  // boxes * stride; box b covers frames [b * size, (b + 1) * size)
};

// Per global frame, 1 where a matchable range holds it (a frame a search may return), else 0.
std::vector<uint8_t> matchableFrames(const std::vector<CookedRange>& ranges, size_t frames);

// `features` holds frame_count rows of `stride` floats; the last box may be shorter. With
// `matchable` (one byte per frame), a box spans only its matchable frames: a search never
// returns another, and the unmatchable tail of a clip (or a clip without ranges) would widen the
// box around it. A box without a matchable frame spans all of its frames (no search tests it).
// Empty `matchable`: every frame counts. Up to `jobs` threads; the result does not depend on them.
FeatureBounds buildFeatureBounds(const std::vector<float>& features, int stride, int box_size,
                                 const std::vector<uint8_t>& matchable = {}, int jobs = 1);

// Both box sizes' bounds of db's features over its matchable frames (db's box sizes and ranges).
void buildDatabaseBounds(CookedDatabase& db, int jobs = 1);

}  // namespace mmdb::cook
