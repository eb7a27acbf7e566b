// Small rotation and hierarchy helpers shared by the cook stages. Quaternions are glm's (x, y, z,
// w in memory); all math in float except where a stage says otherwise.
#pragma once

#include "core/raw_clip.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <vector>

namespace mmdb::cook {

// q or -q, whichever has w >= 0 (the same rotation, the short way round).
glm::quat quatAbs(const glm::quat& q);

// Spherical interpolation along the shorter arc; t = 0 returns a exactly, t = 1 returns b (or -b).
glm::quat slerpShortest(const glm::quat& a, const glm::quat& b, float t);

// The rotation as axis * angle (radians), angle in [0, pi].
glm::vec3 toScaledAxis(const glm::quat& q);

// A rotation about +Y by `angle` radians: turns +Z towards +X. Exactly unit length.
glm::quat yawRotation(float angle);

// World rotations and positions of every joint of one frame. `local_*` point at jointCount
// elements; a root joint's parent frame is (root_rotation, root_position).
void forwardKinematics(const std::vector<int>& parents, const glm::quat* local_rotations,
                       const glm::vec3* local_translations, glm::quat* world_rotations,
                       glm::vec3* world_positions,
                       const glm::quat& root_rotation = glm::quat(1, 0, 0, 0),
                       const glm::vec3& root_position = glm::vec3(0));

// World positions of every joint of every frame of a clip: [frame * jointCount + joint].
std::vector<glm::vec3> worldPositions(const RawClip& clip);
// World positions of one joint over all frames of a clip: worldPositions' floats for it, posing
// only its chain.
std::vector<glm::vec3> worldPositionsOfJoint(const RawClip& clip, int joint);
// World rotations of one joint over all frames of a clip.
std::vector<glm::quat> worldRotationsOfJoint(const RawClip& clip, int joint);

}  // namespace mmdb::cook
