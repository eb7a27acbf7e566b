// Units (docs/cook.md "Units"): every length is converted to metres before any other stage.
#pragma once

#include "core/raw_clip.h"

#include <string>

namespace mmdb::cook {

inline constexpr double kStandingHipHeight = 0.9;  // metres, an adult's

// Height of the hips above the lower toe in the clip's first frame, in the clip's units.
double standingHipHeight(const RawClip& clip, int hips, int left_toe, int right_toe);

// The origins a UnitScale names.
inline constexpr const char* kUnitFromHipHeight = "inferred from hip height";
inline constexpr const char* kUnitFromFirstClipsFile = "declared by the first clip's file";

struct UnitScale {
  double scale = 1;    // metres per source unit
  std::string origin;  // "manifest", "file", "preset" or "inferred from hip height"
};

// The scale for one clip: the manifest's if > 0, else the file's declared unit, else the
// preset's, else `inferred` (> 0: the first clip's declared unit, or the one inferUnitScale
// found on it), whose origin is `inferred_origin`.
UnitScale chooseUnitScale(double manifest_scale, const RawClip& clip, double preset_scale,
                          double inferred, const std::string& inferred_origin = kUnitFromHipHeight);

// Metres per unit that make the standing hip height 0.9 m. Throws InputError naming the clip
// when the hips are not above the toes.
double inferUnitScale(const RawClip& clip, int hips, int left_toe, int right_toe);

// Multiplies bind offsets and every translation by `scale`.
void scaleClip(RawClip& clip, double scale);

}  // namespace mmdb::cook
