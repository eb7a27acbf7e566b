// Mirroring (docs/cook.md "Mirror"): reflect a clip across the character's
// X = 0 plane and swap left and right joints.
#pragma once

#include "core/cook_settings.h"
#include "core/raw_clip.h"

#include <vector>

namespace mmdb::cook {

// For each joint, its counterpart (itself when unpaired). Pairs come from settings.patterns,
// tried in order, then from the preset's own pairs. Throws InputError on an ambiguous pairing.
std::vector<int> mirrorJointMap(const Skeleton& skeleton, const MirrorSettings& settings);

// The mirrored copy of `clip` (already scaled to metres and resampled). World positions,
// velocities and contacts of the result are exactly the reflection of the original's; each
// rotation is expressed relative to the counterpart joint's bind frame. Name and tags are left to
// the caller (the cook names it "<clip>#mirror").
RawClip mirrorClip(const RawClip& clip, const MirrorSettings& settings);

}  // namespace mmdb::cook
