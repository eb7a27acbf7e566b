#include "cook/velocities.h"

#include "cook/pose_math.h"

namespace mmdb::cook {
namespace {

// Fills frames 1..n-2 from per-step differences d(f) = (x[f+1] - x[f]) * rate, then the ends.
template <typename Step>
std::vector<glm::vec3> differentiate(size_t count, int stride, Step step) {
  std::vector<glm::vec3> v(count, glm::vec3(0));
  const size_t s = static_cast<size_t>(stride);
  const size_t n = s ? count / s : 0;
  if (n < 2) return v;
  for (size_t e = 0; e < s; ++e) {
    auto at = [&](size_t f) -> glm::vec3& { return v[f * s + e]; };
    if (n < 4) {
      // Too short for the reference's extrapolation: one-sided at the ends.
      for (size_t f = 0; f < n; ++f) {
        const size_t a = f == 0 ? 0 : f - 1, b = f + 1 < n ? f + 1 : n - 1;
        glm::vec3 sum(0);
        for (size_t k = a; k < b; ++k) sum += step(k, e);
        at(f) = sum / static_cast<float>(b - a);
      }
      continue;
    }
    // Each step is the mean's second term for one frame and its first for the next: computed
    // once (for rotations it is a quaternion logarithm, with an atan2).
    glm::vec3 before = step(0, e);
    for (size_t f = 1; f + 1 < n; ++f) {
      const glm::vec3 after = step(f, e);
      at(f) = 0.5f * after + 0.5f * before;
      before = after;
    }
    at(0) = at(1) - (at(3) - at(2));
    at(n - 1) = at(n - 2) + (at(n - 2) - at(n - 3));
  }
  return v;
}

}  // namespace

std::vector<glm::vec3> linearVelocities(const std::vector<glm::vec3>& x, int stride, double rate) {
  const float r = static_cast<float>(rate);
  const size_t s = static_cast<size_t>(stride);
  return differentiate(x.size(), stride,
                       [&](size_t f, size_t e) { return (x[(f + 1) * s + e] - x[f * s + e]) * r; });
}

std::vector<glm::vec3> angularVelocities(const std::vector<glm::quat>& q, int stride, double rate) {
  const float r = static_cast<float>(rate);
  const size_t s = static_cast<size_t>(stride);
  return differentiate(q.size(), stride, [&](size_t f, size_t e) {
    return toScaledAxis(q[(f + 1) * s + e] * glm::inverse(q[f * s + e])) * r;
  });
}

}  // namespace mmdb::cook
