#include "cook/root_motion.h"

#include "cook/pose_math.h"
#include "cook/savitzky_golay.h"
#include "cook/velocities.h"
#include "core/errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mmdb::cook {

int fitFilterWindow(int configured, int frames, const std::string& clip, const char* filter,
                    std::vector<Warning>* warnings) {
  if (frames >= configured) return configured;
  const int w = frames % 2 == 1 ? frames : frames - 1;
  if (warnings)
    warnings->push_back({"filter-window-shortened",
                         "clip " + clip + ": " + std::to_string(frames) +
                             " frames is shorter than the " + filter + " window of " +
                             std::to_string(configured) + " frames; using " + std::to_string(w),
                         "", 0});
  return w < kMinimumFilterWindow ? kMinimumFilterWindow : w;
}

std::vector<glm::vec3> projectedFacing(const RawClip& clip, int joint, const glm::vec3& axis) {
  const std::vector<glm::quat> rotations = worldRotationsOfJoint(clip, joint);
  std::vector<glm::vec3> out(rotations.size());
  glm::vec3 previous(0, 0, 1);
  for (size_t f = 0; f < rotations.size(); ++f) {
    glm::vec3 d = rotations[f] * axis;
    d.y = 0;
    const float len = glm::length(d);
    previous = len > 1e-6f ? d / len : previous;
    out[f] = previous;
  }
  return out;
}

std::vector<CookedRootFrame> RootMotionExtractor::run(const RawClip& clip,
                                                      const std::vector<glm::vec3>& root_joint,
                                                      const SkeletonRoles& roles,
                                                      std::vector<Warning>* warnings) const {
  const int n = clip.frame_count;
  if (n < kMinimumFilterWindow)
    throw InputError("clip " + clip.name + " (" + clip.source_path + ") has " + std::to_string(n) +
                     " frames at " + fmt::format("{:g}", frame_rate) + " Hz; at least " +
                     std::to_string(kMinimumFilterWindow) +
                     " are needed: widen its frame range or leave it out");
  std::vector<glm::vec3> position(n);
  for (int f = 0; f < n; ++f) {
    position[f] = root_joint[f];
    position[f].y = 0;
  }
  const int pw = fitFilterWindow(position_window, n, clip.name, "root position", warnings);
  const int fw = fitFilterWindow(facing_window, n, clip.name, "facing", warnings);
  if (std::min(pw, fw) <= order)
    throw InputError("clip " + clip.name + " (" + clip.source_path + ") has " + std::to_string(n) +
                     " frames, too few for a Savitzky-Golay filter of order " +
                     std::to_string(order) + ": lower savitzky_golay_order or leave the clip out");
  position = sharedSavitzkyGolayFilter(pw, order).apply(position);
  for (auto& p : position) p.y = 0;

  std::vector<glm::vec3> facing =
      projectedFacing(clip, roles.joint(Role::Facing), roles.facing_axis);
  facing = sharedSavitzkyGolayFilter(fw, order).apply(facing);

  std::vector<glm::quat> rotation(n);
  for (int f = 0; f < n; ++f) {
    const glm::vec3 d = facing[f];
    // The smoothed facing cannot vanish unless the character spins a half turn inside the window;
    // keep the previous yaw then.
    rotation[f] = glm::length(glm::vec2(d.x, d.z)) > 1e-6f ? yawRotation(std::atan2(d.x, d.z))
                  : f > 0                                  ? rotation[f - 1]
                                                           : glm::quat(1, 0, 0, 0);
  }

  const std::vector<glm::vec3> velocity = linearVelocities(position, 1, frame_rate);
  const std::vector<glm::vec3> angular = angularVelocities(rotation, 1, frame_rate);
  std::vector<CookedRootFrame> root(n);
  for (int f = 0; f < n; ++f) root[f] = {position[f], rotation[f], velocity[f], angular[f]};
  return root;
}

void stripRootMotion(RawClip& clip, const std::vector<CookedRootFrame>& root) {
  const size_t joints = clip.skeleton.names.size();
  for (int f = 0; f < clip.frame_count; ++f) {
    const glm::quat inv = glm::inverse(root[f].rotation);
    glm::vec3& t = clip.translations[f * joints];
    glm::quat& r = clip.rotations[f * joints];
    t = inv * (t - root[f].position);
    r = inv * r;
  }
}

bool hasRootBone(const Skeleton& skeleton, int hips) {
  if (hips <= 0 || size_t(hips) >= skeleton.parents.size()) return false;
  int j = hips;
  while (skeleton.parents[size_t(j)] >= 0) j = skeleton.parents[size_t(j)];
  return j == 0;
}

void anchorRootBone(RawClip& clip, double frame_rate, std::vector<glm::vec3>& velocities,
                    std::vector<glm::vec3>& angular_velocities) {
  const size_t joints = clip.skeleton.names.size();
  const size_t n = size_t(clip.frame_count);
  std::vector<size_t> children;
  for (size_t j = 1; j < joints; ++j)
    if (clip.skeleton.parents[j] == 0) children.push_back(j);
  for (size_t f = 0; f < n; ++f) {
    const size_t base = f * joints;
    const glm::quat r0 = clip.rotations[base];
    const glm::vec3 t0 = clip.translations[base];
    for (const size_t c : children) {
      clip.translations[base + c] = t0 + r0 * clip.translations[base + c];
      clip.rotations[base + c] = r0 * clip.rotations[base + c];
    }
    clip.rotations[base] = glm::quat(1, 0, 0, 0);
    clip.translations[base] = glm::vec3(0);
    velocities[base] = glm::vec3(0);
    angular_velocities[base] = glm::vec3(0);
  }
  // The children's velocities from their new tracks, one joint at a time.
  std::vector<glm::vec3> track(n);
  std::vector<glm::quat> turns(n);
  for (const size_t c : children) {
    for (size_t f = 0; f < n; ++f) {
      track[f] = clip.translations[f * joints + c];
      turns[f] = clip.rotations[f * joints + c];
    }
    const std::vector<glm::vec3> v = linearVelocities(track, 1, frame_rate);
    const std::vector<glm::vec3> w = angularVelocities(turns, 1, frame_rate);
    for (size_t f = 0; f < n; ++f) {
      velocities[f * joints + c] = v[f];
      angular_velocities[f * joints + c] = w[f];
    }
  }
}

}  // namespace mmdb::cook
