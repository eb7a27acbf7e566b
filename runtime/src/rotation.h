// Quaternion helpers shared by the controller and playback (internal).
#pragma once

#include <glm/gtc/quaternion.hpp>

#include <cmath>

namespace mmdb::detail {

// The same rotation with w >= 0 (the shorter way round).
inline glm::quat quatAbs(const glm::quat& q) { return q.w < 0 ? -q : q; }

// Unit quaternion -> rotation vector (axis * angle).
inline glm::vec3 toScaledAxis(const glm::quat& q) {
  const glm::vec3 v(q.x, q.y, q.z);
  const float s = glm::length(v);
  if (s < 1e-8f) return 2.f * v;  // small angle: angle ~ 2 sin(angle / 2)
  return v * (2.f * std::atan2(s, q.w) / s);
}

// Rotation vector -> unit quaternion.
inline glm::quat fromScaledAxis(const glm::vec3& r) {
  const float angle = glm::length(r);
  if (angle < 1e-8f) return glm::normalize(glm::quat(1.f, 0.5f * r.x, 0.5f * r.y, 0.5f * r.z));
  const glm::vec3 axis = r / angle;
  const float s = std::sin(0.5f * angle);
  return glm::quat(std::cos(0.5f * angle), axis.x * s, axis.y * s, axis.z * s);
}

// Half the damping of a critically damped spring with this halflife: y = 2 ln 2 / halflife.
inline float springY(float halflife) {
  constexpr float kLn2 = 0.69314718056f;
  return 2.f * kLn2 / (halflife > 1e-5f ? halflife : 1e-5f);
}

}  // namespace mmdb::detail
