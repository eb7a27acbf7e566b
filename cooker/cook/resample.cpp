#include "cook/resample.h"

#include "cook/pose_math.h"
#include "core/errors.h"

#include <cmath>

namespace mmdb::cook {

int resampledFrameCount(int source_frames, double rate_in, double rate_out) {
  if (source_frames <= 0) return 0;
  // The small bias keeps exact ratios (30 -> 60 Hz) from rounding down.
  return static_cast<int>(std::floor((source_frames - 1) * rate_out / rate_in + 1e-9)) + 1;
}

RawClip resampleClip(RawClip clip, double rate) {
  if (!(clip.frame_rate > 0) || !std::isfinite(clip.frame_rate))
    throw InputError(clip.source_path + ": clip " + clip.name + " has no valid frame rate (" +
                     std::to_string(clip.frame_rate) + " Hz)");
  if (!(rate > 0)) throw InputError("the database frame rate must be above 0 Hz");
  if (clip.frame_rate == rate) return clip;

  // The clip keeps every other field; its frames are rebuilt from the originals.
  const std::vector<glm::quat> rotations = std::move(clip.rotations);
  const std::vector<glm::vec3> translations = std::move(clip.translations);
  const size_t joints = clip.skeleton.names.size();
  const int source_frames = clip.frame_count;
  const double source_rate = clip.frame_rate;
  const int frames = resampledFrameCount(source_frames, source_rate, rate);
  clip.frame_rate = rate;
  clip.frame_count = frames;
  clip.rotations.assign(joints * frames, glm::quat(1, 0, 0, 0));
  clip.translations.assign(joints * frames, glm::vec3(0));
  for (int f = 0; f < frames; ++f) {
    const double s = f * source_rate / rate;
    int i = static_cast<int>(std::floor(s + 1e-9));
    double a = s - i;
    if (a < 1e-9) a = 0;  // on a source frame: copy it exactly
    if (i >= source_frames - 1) {
      i = source_frames - 1;
      a = 0;
    }
    const int k = a == 0 ? i : i + 1;
    for (size_t j = 0; j < joints; ++j) {
      const size_t src0 = i * joints + j, src1 = k * joints + j, dst = f * joints + j;
      clip.rotations[dst] = slerpShortest(rotations[src0], rotations[src1], static_cast<float>(a));
      clip.translations[dst] =
          glm::mix(translations[src0], translations[src1], static_cast<float>(a));
    }
  }
  return clip;
}

}  // namespace mmdb::cook
