#include "cook/units.h"

#include "cook/pose_math.h"
#include "core/errors.h"

#include <algorithm>
#include <cmath>

namespace mmdb::cook {

double standingHipHeight(const RawClip& clip, int hips, int left_toe, int right_toe) {
  const size_t n = clip.skeleton.names.size();
  std::vector<glm::quat> r(n);
  std::vector<glm::vec3> p(n);
  forwardKinematics(clip.skeleton.parents, clip.rotations.data(), clip.translations.data(),
                    r.data(), p.data());
  return static_cast<double>(p[hips].y) - std::min(p[left_toe].y, p[right_toe].y);
}

double inferUnitScale(const RawClip& clip, int hips, int left_toe, int right_toe) {
  if (clip.frame_count < 1) throw InputError(clip.name + ": the clip has no frames");
  const double h = standingHipHeight(clip, hips, left_toe, right_toe);
  if (!(h > 0) || !std::isfinite(h))
    throw InputError(clip.name +
                     ": cannot infer the unit from the standing hip height (the hips, " +
                     clip.skeleton.names[hips] +
                     ", are not above the toes in the first frame); "
                     "set unit_scale (metres per source unit) under [database] in the manifest");
  return kStandingHipHeight / h;
}

UnitScale chooseUnitScale(double manifest_scale, const RawClip& clip, double preset_scale,
                          double inferred, const std::string& inferred_origin) {
  if (manifest_scale > 0) return {manifest_scale, "manifest"};
  if (clip.declared_unit_scale > 0) return {clip.declared_unit_scale, "file"};
  if (preset_scale > 0) return {preset_scale, "preset"};
  return {inferred, inferred_origin};
}

void scaleClip(RawClip& clip, double scale) {
  const float s = static_cast<float>(scale);
  for (auto& o : clip.skeleton.offsets) o *= s;
  for (auto& t : clip.translations) t *= s;
}

}  // namespace mmdb::cook
