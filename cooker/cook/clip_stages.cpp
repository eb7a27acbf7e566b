#include "cook/clip_stages.h"

#include "cook/contacts.h"
#include "cook/features.h"
#include "cook/pose_math.h"
#include "cook/root_motion.h"
#include "cook/savitzky_golay.h"
#include "cook/velocities.h"
#include "core/errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mmdb::cook {

ClipStageSettings clipStageSettings(const CookSettings& s) {
  if (!(s.frame_rate > 0) || !std::isfinite(s.frame_rate))
    throw InputError("frame_rate must be above 0 Hz (it is " + fmt::format("{:g}", s.frame_rate) +
                     ")");
  if (s.savitzky_golay_order < 0 || s.savitzky_golay_order > 6)
    throw InputError("savitzky_golay_order must be 0 to 6 (it is " +
                     std::to_string(s.savitzky_golay_order) + ")");
  ClipStageSettings c;
  c.frame_rate = s.frame_rate;
  c.order = s.savitzky_golay_order;
  c.root_position_window = oddWindowFrames(s.root_position_window_s, s.frame_rate);
  c.facing_window = oddWindowFrames(s.facing_window_s, s.frame_rate);
  for (int w : {c.root_position_window, c.facing_window})
    if (w <= c.order || w < 5)
      throw InputError("a Savitzky-Golay window of " + std::to_string(w) + " frames at " +
                       fmt::format("{:g}", s.frame_rate) + " Hz is too short for order " +
                       std::to_string(c.order) +
                       " (at least 5 frames and more than the order): "
                       "lengthen root_position_window or facing_window");
  if (!(s.contact_speed_threshold > 0))
    throw InputError("contact_speed_threshold must be above 0 m/s");
  c.contact_speed_threshold = static_cast<float>(s.contact_speed_threshold);
  c.contact_median_frames =
      std::max(1, static_cast<int>(std::lround(s.contact_median_s * s.frame_rate)));
  if (s.trailing_unmatchable_s < 0) throw InputError("trailing_unmatchable must not be negative");
  c.trailing_unmatchable_frames =
      static_cast<int>(std::lround(s.trailing_unmatchable_s * s.frame_rate));
  for (int i = 0; i < 3; ++i) {
    if (!(s.trajectory_times[i] > 0)) throw InputError("trajectory times must be above 0 s");
    c.trajectory_frames[i] = static_cast<int>(std::lround(s.trajectory_times[i] * s.frame_rate));
  }
  return c;
}

glm::vec3 facingCandidateAxis(int candidate) {
  glm::vec3 a(0);
  a[candidate / 2] = candidate % 2 == 0 ? 1.0f : -1.0f;
  return a;
}

namespace {

FacingAgreement measureFacing(const RawClip& clip, const std::vector<CookedRootFrame>& root,
                              const SkeletonRoles& roles) {
  FacingAgreement a;
  const int joint = roles.joint(Role::Facing);
  std::array<std::vector<glm::vec3>, FacingAgreement::kCandidates> candidates;
  for (int c = 0; c < FacingAgreement::kCandidates; ++c)
    candidates[c] = projectedFacing(clip, joint, facingCandidateAxis(c));
  const std::vector<glm::vec3> configured = projectedFacing(clip, joint, roles.facing_axis);
  for (size_t f = 0; f < root.size(); ++f) {
    const glm::vec3 v(root[f].velocity.x, 0, root[f].velocity.z);
    const float speed = glm::length(v);
    if (!(speed > kMovingSpeed)) continue;
    const glm::vec3 dir = v / speed;
    ++a.moving_frames;
    for (int c = 0; c < FacingAgreement::kCandidates; ++c)
      a.candidate_sum[c] += glm::dot(candidates[c][f], dir);
    a.configured_sum += glm::dot(configured[f], dir);
  }
  return a;
}

}  // namespace

namespace {

bool finite(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}
bool finite(const glm::quat& q) { return std::isfinite(q.w) && finite(glm::vec3(q.x, q.y, q.z)); }

void checkFinite(const RawClip& clip, double rate) {
  const size_t joints = clip.skeleton.names.size();
  for (size_t i = 0; i < clip.rotations.size(); ++i)
    if (!finite(clip.rotations[i]) || !finite(clip.translations[i]))
      throw InputError("clip " + clip.name + " (" + clip.source_path + "), frame " +
                       std::to_string(i / joints) + " (clip-local, at " +
                       fmt::format("{:g}", rate) + " Hz), joint " +
                       clip.skeleton.names[i % joints] +
                       ": the source holds NaN or infinite values; fix them or cut that part out");
}

}  // namespace

ClipMotion cookClipMotion(RawClip clip, const SkeletonRoles& roles,
                          const ClipStageSettings& settings) {
  checkFinite(clip, settings.frame_rate);
  ClipMotion m;
  const size_t joints = clip.skeleton.names.size();
  const std::vector<glm::vec3> root_joint =
      worldPositionsOfJoint(clip, roles.joint(Role::RootPosition));

  RootMotionExtractor extract;
  extract.frame_rate = settings.frame_rate;
  extract.position_window = settings.root_position_window;
  extract.facing_window = settings.facing_window;
  extract.order = settings.order;
  m.root = extract.run(clip, root_joint, roles, &m.warnings);
  m.facing = measureFacing(clip, m.root, roles);

  stripRootMotion(clip, m.root);
  m.velocities = linearVelocities(clip.translations, static_cast<int>(joints), settings.frame_rate);
  m.angular_velocities =
      angularVelocities(clip.rotations, static_cast<int>(joints), settings.frame_rate);

  FeatureBuilder features;
  features.trajectory_frames = settings.trajectory_frames;
  ToeSpeeds toe_speeds;
  m.features = features.run(clip, m.velocities, m.angular_velocities, m.root, roles, &toe_speeds);
  ContactDetector contacts;
  contacts.speed_threshold = settings.contact_speed_threshold;
  contacts.median_frames = settings.contact_median_frames;
  m.contacts = contacts.run(toe_speeds);
  // Features and contacts are taken above, from the stripped pose as the reference takes them;
  // a root bone is anchored to the simulation root only in the pose streams played back.
  if (hasRootBone(clip.skeleton, roles.joint(Role::Hips)))
    anchorRootBone(clip, settings.frame_rate, m.velocities, m.angular_velocities);
  // A degenerate pose must not poison the whole database's normalization.
  for (size_t i = 0; i < m.features.size(); ++i)
    if (!std::isfinite(m.features[i]))
      throw InputError("clip " + clip.name + " (" + clip.source_path + "), frame " +
                       std::to_string(i / kFeatureCount) + " (clip-local, at " +
                       fmt::format("{:g}", settings.frame_rate) + " Hz): feature column " +
                       std::to_string(i % kFeatureCount) +
                       " is not a finite number (degenerate motion near that time): fix or cut "
                       "that part out");
  m.clip = std::move(clip);
  return m;
}

}  // namespace mmdb::cook
