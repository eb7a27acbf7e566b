// Root motion (docs/cook.md "Root motion"): the simulation root's trajectory, and stripping it
// from the skeleton's root joint so that a clip plays in place.
#pragma once

#include "cook/skeleton_presets.h"
#include "core/cooked_database.h"
#include "core/raw_clip.h"

#include <string>
#include <vector>

namespace mmdb::cook {

// The smallest window a short clip may fall back to.
inline constexpr int kMinimumFilterWindow = 5;

// `configured` when the clip has that many frames, else the largest odd count that fits (at least
// kMinimumFilterWindow). Appends a warning naming the clip and the filter when it shrinks.
int fitFilterWindow(int configured, int frames, const std::string& clip, const char* filter,
                    std::vector<Warning>* warnings);

struct RootMotionExtractor {
  // From ClipStageSettings.
  double frame_rate = 0;    // the clip's rate, for velocities
  int position_window = 0;  // Savitzky-Golay frames, odd
  int facing_window = 0;
  int order = 0;

  // Position: ground projection of roles.RootPosition, smoothed. Facing: ground projection of the
  // facing joint's axis, normalized, smoothed, normalized; rotation is the yaw that turns +Z onto
  // it. Velocities are world-space, by central differences. `root_joint_positions` is
  // worldPositionsOfJoint(clip, roles.joint(Role::RootPosition)). Throws InputError when the
  // clip is shorter than 5 frames.
  std::vector<CookedRootFrame> run(const RawClip& clip,
                                   const std::vector<glm::vec3>& root_joint_positions,
                                   const SkeletonRoles& roles,
                                   std::vector<Warning>* warnings) const;
};

// Ground-projected, normalized facing directions of the facing joint's `axis`; a frame where the
// axis is vertical keeps the previous frame's direction (+Z for the first).
std::vector<glm::vec3> projectedFacing(const RawClip& clip, int joint, const glm::vec3& axis);

// Re-expresses joint 0 of every frame relative to the simulation root:
// t' = inverse(R) * (t - p), r' = inverse(R) * r.
void stripRootMotion(RawClip& clip, const std::vector<CookedRootFrame>& root);

// Whether joint 0 is a root bone above the hips (the hips role joint descends from it and is not
// it), as in skeletons whose first joint sits at the origin or follows the character on the
// ground.
bool hasRootBone(const Skeleton& skeleton, int hips);

// For a skeleton with a root bone, after stripping: the root bone plays the simulation root.
// Joint 0 becomes the identity in every frame and its children are re-expressed against it, so
// that every other joint keeps its pose relative to the simulation root; the velocities of joint
// 0 (zero) and its children (by the same central differences) are made again. Left as it was,
// joint 0 holds the inverse of the root's whole trajectory and its children metres of
// translation, which a transition's offsets, blended joint by joint, swing through the blend.
void anchorRootBone(RawClip& clip, double frame_rate, std::vector<glm::vec3>& velocities,
                    std::vector<glm::vec3>& angular_velocities);

}  // namespace mmdb::cook
