// What the playback jobs share: conversions from the file's floats and the checks of their
// arguments (internal). In an unnamed namespace, as in one file.
#pragma once

#include "mmdb/playback.h"

#include "playback/rotation.h"

#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <cstddef>

namespace mmdb {
namespace {

using detail::fromScaledAxis;
using detail::quatAbs;
using detail::springY;
using detail::toScaledAxis;

inline glm::quat toQuat(const Float4& q) { return glm::quat(q.w, q.x, q.y, q.z); }
inline glm::vec3 toVec3(const Float4& v) { return glm::vec3(v.x, v.y, v.z); }

template <class A, class B>
inline bool sameSize(const A& a, const B& b) {
  return a.size() == b.size();
}

inline Status sizeError(const char* job, const char* what, size_t actual, size_t expected) {
  return Error::format(ErrorCode::InvalidArgument, "%s: %s has %zu elements, expected %zu", job,
                       what, actual, expected);
}

// A job's rate half-life: its own, or 0 for the job's halflife.
inline float rateHalflife(float halflife, float rate_halflife) {
  return rate_halflife > 0.f ? rate_halflife : halflife;
}

inline bool validHalflife(float h) { return std::isfinite(h) && h > 0; }
inline bool validTime(float t) { return std::isfinite(t) && t >= 0; }

}  // namespace
}  // namespace mmdb
