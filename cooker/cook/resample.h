// Resampling (docs/cook.md "Resample") to the database rate.
#pragma once

#include "core/raw_clip.h"

namespace mmdb::cook {

// floor((n - 1) * rate_out / rate_in) + 1: the frames at times f / rate_out that lie inside the
// source's [0, (n - 1) / rate_in].
int resampledFrameCount(int source_frames, double rate_in, double rate_out);

// The clip at `rate`: output frame f samples source time f / rate; rotations slerp along the
// shorter arc, translations interpolate linearly. Throws InputError for a rate <= 0.
RawClip resampleClip(RawClip clip, double rate);

}  // namespace mmdb::cook
