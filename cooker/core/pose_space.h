// Conversions between world (model) space and local joint space, in double precision for the
// stages that rebuild local poses from world transforms (FBX import, mirroring).
#pragma once

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <cstddef>

namespace mmdb::cook {

// The local rotation and translation of joint j from the world transforms of every joint
// (world_r, world_p indexed by joint) and its parent index (-1 for a root, which keeps its world
// transform).
inline void localFromWorld(const glm::dquat* world_r, const glm::dvec3* world_p, size_t j,
                           int parent, glm::dquat& local_r, glm::dvec3& local_t) {
  local_r = world_r[j];
  local_t = world_p[j];
  if (parent >= 0) {
    const glm::dquat inv_parent = glm::conjugate(world_r[parent]);
    local_r = inv_parent * world_r[j];
    local_t = inv_parent * (world_p[j] - world_p[parent]);
  }
}

}  // namespace mmdb::cook
