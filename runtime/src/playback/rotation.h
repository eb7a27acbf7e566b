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

// Holden's reference controller's arithmetic (ControllerSettings::reference_arithmetic, the
// crowds' reference mode), its approximations kept: exp(-x) as 1 / (1 + x + 0.48 x^2 + 0.235 x^3)
// (within 0.1 % up to x = 0.5, 4.5 % off at x = 3.5), the damping's 1e-5 s, and a rotation's
// half-angle from acos(w), which loses the small angles float cannot tell from w = 1.
inline float referenceNegExp(float x) {
  return 1.f / (1.f + x + 0.48f * x * x + 0.235f * x * x * x);
}
inline float referenceSpringY(float halflife) {
  constexpr float kLn2 = 0.69314718056f;
  return (4.f * kLn2) / (halflife + 1e-5f) / 2.f;
}
inline glm::vec3 referenceToScaledAxis(const glm::quat& q) {
  const glm::vec3 v(q.x, q.y, q.z);
  const float length = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
  if (length < 1e-8f) return 2.f * v;
  const float half = std::acos(q.w < -1.f ? -1.f : (q.w > 1.f ? 1.f : q.w));
  return 2.f * (half * (v / length));
}
// Its quaternion product and inverse, in its order of operations: a rotation's w near 1 goes
// through acos, which turns one unit in the last place of w into 3e-4 rad, so the products that
// feed it must round as the reference's do.
inline glm::quat referenceQuatMul(const glm::quat& q, const glm::quat& p) {
  return glm::quat(
      p.w * q.w - p.x * q.x - p.y * q.y - p.z * q.z, p.w * q.x + p.x * q.w - p.y * q.z + p.z * q.y,
      p.w * q.y + p.x * q.z + p.y * q.w - p.z * q.x, p.w * q.z - p.x * q.y + p.y * q.x + p.z * q.w);
}
inline glm::quat referenceQuatInv(const glm::quat& q) { return glm::quat(-q.w, q.x, q.y, q.z); }
inline glm::quat referenceFromScaledAxis(const glm::vec3& r) {
  const glm::vec3 v = r / 2.f;
  const float half = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
  if (half < 1e-8f) {
    const float length = std::sqrt(1.f + v.x * v.x + v.y * v.y + v.z * v.z) + 1e-8f;
    return glm::quat(1.f / length, v.x / length, v.y / length, v.z / length);
  }
  const float s = std::sin(half) / half;
  return glm::quat(std::cos(half), s * v.x, s * v.y, s * v.z);
}

}  // namespace mmdb::detail
