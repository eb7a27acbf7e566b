#include "cook/resample.h"

#include "cook/pose_math.h"
#include "core/errors.h"

#include <cmath>

namespace mm {

int resampledFrameCount(int source_frames, double rate_in, double rate_out) {
  if (source_frames <= 0) return 0;
  // The small bias keeps exact ratios (30 -> 60 Hz) from rounding down.
  return static_cast<int>(std::floor((source_frames - 1) * rate_out / rate_in + 1e-9)) + 1;
}

RawClip resampleClip(const RawClip& clip, double rate) {
  if (!(clip.frame_rate > 0) || !std::isfinite(clip.frame_rate))
    throw InputError(clip.source_path + ": clip " + clip.name + " has no valid frame rate (" +
                     std::to_string(clip.frame_rate) + " Hz)");
  if (!(rate > 0)) throw InputError("the database frame rate must be above 0 Hz");
  RawClip out = clip;
  out.frame_rate = rate;
  if (clip.frame_rate == rate) return out;

  const size_t joints = clip.skeleton.names.size();
  const int frames = resampledFrameCount(clip.frame_count, clip.frame_rate, rate);
  out.frame_count = frames;
  out.rotations.assign(joints * frames, glm::quat(1, 0, 0, 0));
  out.translations.assign(joints * frames, glm::vec3(0));
  for (int f = 0; f < frames; ++f) {
    const double s = f * clip.frame_rate / rate;
    int i = static_cast<int>(std::floor(s + 1e-9));
    double a = s - i;
    if (a < 1e-9) a = 0;  // on a source frame: copy it exactly
    if (i >= clip.frame_count - 1) {
      i = clip.frame_count - 1;
      a = 0;
    }
    const int k = a == 0 ? i : i + 1;
    for (size_t j = 0; j < joints; ++j) {
      const size_t src0 = i * joints + j, src1 = k * joints + j, dst = f * joints + j;
      out.rotations[dst] =
          slerpShortest(clip.rotations[src0], clip.rotations[src1], static_cast<float>(a));
      out.translations[dst] =
          glm::mix(clip.translations[src0], clip.translations[src1], static_cast<float>(a));
    }
  }
  return out;
}

}  // namespace mm
