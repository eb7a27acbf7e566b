// Velocities (docs/cook.md "Velocities") by central differences at the database rate. The two
// end frames are extrapolated as in the reference: v[0] = v[1] - (v[3] - v[2]) and
// v[n-1] = v[n-2] + (v[n-2] - v[n-3]). Clips of 2 or 3 frames use one-sided differences.
#pragma once

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <vector>

namespace mmdb::cook {

// `values` holds frames of `stride` elements each ([frame * stride + element]); the result has
// the same layout.
std::vector<glm::vec3> linearVelocities(const std::vector<glm::vec3>& values, int stride,
                                        double rate);

// Angular velocity (scaled angle-axis, rad/s, in the frame the rotations are expressed in) from
// q[f+1] * inverse(q[f]).
std::vector<glm::vec3> angularVelocities(const std::vector<glm::quat>& rotations, int stride,
                                         double rate);

}  // namespace mmdb::cook
