#include "cook/pose_math.h"

#include <algorithm>
#include <cmath>

namespace mmdb::cook {

glm::quat quatAbs(const glm::quat& q) { return q.w < 0 ? -q : q; }

glm::quat slerpShortest(const glm::quat& a, const glm::quat& b_in, float t) {
  if (t == 0.0f) return a;
  glm::quat b = b_in;
  float cos_theta = glm::dot(a, b);
  if (cos_theta < 0) {
    b = -b;
    cos_theta = -cos_theta;
  }
  if (t == 1.0f) return b;
  // Nearly parallel: a normalized lerp is accurate and avoids dividing by sin(theta) ~ 0.
  if (cos_theta > 0.9995f) return glm::normalize(a * (1.0f - t) + b * t);
  const float theta = std::acos(cos_theta);
  const float sin_theta = std::sin(theta);
  return a * (std::sin((1.0f - t) * theta) / sin_theta) + b * (std::sin(t * theta) / sin_theta);
}

glm::vec3 toScaledAxis(const glm::quat& q_in) {
  const glm::quat q = quatAbs(q_in);
  const glm::vec3 v(q.x, q.y, q.z);
  const float s = glm::length(v);
  if (s < 1e-8f) return 2.0f * v;  // small angle: angle * axis ~ 2 * vector part
  const float angle = 2.0f * std::atan2(s, q.w);
  return v * (angle / s);
}

glm::quat yawRotation(float angle) {
  const double half = 0.5 * static_cast<double>(angle);
  const double c = std::cos(half), s = std::sin(half);
  const double n = std::sqrt(c * c + s * s);  // 1 up to rounding; divide it out in double
  return glm::quat(static_cast<float>(c / n), 0.0f, static_cast<float>(s / n), 0.0f);
}

void forwardKinematics(const std::vector<int>& parents, const glm::quat* local_rotations,
                       const glm::vec3* local_translations, glm::quat* world_rotations,
                       glm::vec3* world_positions, const glm::quat& root_rotation,
                       const glm::vec3& root_position) {
  for (size_t j = 0; j < parents.size(); ++j) {
    const int p = parents[j];
    const glm::quat& pr = p < 0 ? root_rotation : world_rotations[p];
    const glm::vec3& pp = p < 0 ? root_position : world_positions[p];
    world_positions[j] = pp + pr * local_translations[j];
    world_rotations[j] = pr * local_rotations[j];
  }
}

std::vector<glm::vec3> worldPositions(const RawClip& clip) {
  const size_t n = clip.skeleton.names.size();
  std::vector<glm::vec3> positions(n * clip.frame_count);
  std::vector<glm::quat> rotations(n);
  for (int f = 0; f < clip.frame_count; ++f)
    forwardKinematics(clip.skeleton.parents, &clip.rotations[f * n], &clip.translations[f * n],
                      rotations.data(), &positions[f * n]);
  return positions;
}

std::vector<glm::vec3> worldPositionsOfJoint(const RawClip& clip, int joint) {
  std::vector<int> chain;  // the root first, as forwardKinematics meets them
  for (int a = joint; a >= 0; a = clip.skeleton.parents[size_t(a)]) chain.push_back(a);
  std::reverse(chain.begin(), chain.end());
  const size_t n = clip.skeleton.names.size();
  std::vector<glm::vec3> out(static_cast<size_t>(clip.frame_count));
  for (int f = 0; f < clip.frame_count; ++f) {
    // forwardKinematics' operations, from its default root frame.
    glm::quat r(1, 0, 0, 0);
    glm::vec3 p(0);
    for (const int a : chain) {
      const size_t i = static_cast<size_t>(f) * n + static_cast<size_t>(a);
      p = p + r * clip.translations[i];
      r = r * clip.rotations[i];
    }
    out[static_cast<size_t>(f)] = p;
  }
  return out;
}

std::vector<glm::quat> worldRotationsOfJoint(const RawClip& clip, int joint) {
  std::vector<glm::quat> out(clip.frame_count);
  for (int f = 0; f < clip.frame_count; ++f) {
    glm::quat r = clip.rotation(f, joint);
    for (int p = clip.skeleton.parents[joint]; p >= 0; p = clip.skeleton.parents[p])
      r = clip.rotation(f, p) * r;
    out[f] = r;
  }
  return out;
}

}  // namespace mmdb::cook
