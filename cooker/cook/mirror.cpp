// Mirroring: left/right joint pairs by name pattern, and the reflected clip.
//
// The reflection M = diag(-1, 1, 1) acts on world space. A world position p becomes M p. A world
// rotation is not reflected alone: what a skinned mesh sees is each joint's deformation
// D = R_world * B_world^-1 (B = the joint's world bind rotation). Joint j of the mirrored clip
// takes the reflected deformation of its counterpart k, M D_k M, so its world rotation is
// M (R_k B_k^-1) M B_j. Mirroring twice gives back R_j exactly. Local translations are rebuilt
// from the reflected world positions, so positions (and everything derived from them) are exactly
// the reflection of the original's even when the bind skeleton is not perfectly symmetric.
#include "cook/mirror.h"

#include "cook/skeleton_presets.h"
#include "core/errors.h"
#include "core/pose_space.h"

#include <glm/gtc/quaternion.hpp>

namespace mmdb::cook {
namespace {

struct NameParts {
  std::string prefix;  // namespace with its ':' ("mixamorig:"), or ""
  std::string base;
};

// FBX names often carry a namespace ("mixamorig:LeftFoot"); patterns apply to the rest.
NameParts splitNamespace(const std::string& name) {
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos) return {"", name};
  return {name.substr(0, colon + 1), name.substr(colon + 1)};
}

void checkPattern(const std::string& pattern) {
  const size_t star = pattern.find('*');
  if (star == std::string::npos || pattern.find('*', star + 1) != std::string::npos)
    throw InputError("mirror pattern '" + pattern +
                     "' must hold exactly one '*' (for example \"Left*\" or \"*_L\")");
}

// The text that '*' stands for when `name` matches `pattern`.
bool matchPattern(const std::string& pattern, const std::string& name, std::string& rest) {
  const size_t star = pattern.find('*');
  const std::string_view head(pattern.data(), star);
  const std::string_view tail(pattern.data() + star + 1, pattern.size() - star - 1);
  if (name.size() < head.size() + tail.size()) return false;
  if (std::string_view(name).substr(0, head.size()) != head) return false;
  if (std::string_view(name).substr(name.size() - tail.size()) != tail) return false;
  rest = name.substr(head.size(), name.size() - head.size() - tail.size());
  return true;
}

std::string fillPattern(const std::string& pattern, const std::string& rest) {
  const size_t star = pattern.find('*');
  return pattern.substr(0, star) + rest + pattern.substr(star + 1);
}

// The counterpart of `name` under one pattern pair, or -1.
int counterpartByPattern(const Skeleton& skeleton, const std::string& name,
                         const std::pair<std::string, std::string>& pair) {
  const NameParts parts = splitNamespace(name);
  std::string rest;
  for (int side = 0; side < 2; ++side) {
    const std::string& from = side == 0 ? pair.first : pair.second;
    const std::string& to = side == 0 ? pair.second : pair.first;
    if (!matchPattern(from, parts.base, rest)) continue;
    const std::string other = parts.prefix + fillPattern(to, rest);
    if (other == name) continue;
    const int k = skeleton.find(other);
    if (k >= 0) return k;
  }
  return -1;
}

glm::dquat reflectRotation(const glm::dquat& q) { return glm::dquat(q.w, q.x, -q.y, -q.z); }
glm::dvec3 reflectPosition(const glm::dvec3& p) { return glm::dvec3(-p.x, p.y, p.z); }

void worldPose(const Skeleton& s, const glm::quat* local_r, const glm::vec3* local_t,
               std::vector<glm::dquat>& world_r, std::vector<glm::dvec3>& world_p) {
  const size_t n = s.names.size();
  world_r.resize(n);
  world_p.resize(n);
  for (size_t j = 0; j < n; ++j) {
    const glm::dquat r(local_r[j]);
    const glm::dvec3 t(local_t[j]);
    const int p = s.parents[j];
    if (p < 0) {
      world_r[j] = r;
      world_p[j] = t;
    } else {
      world_r[j] = world_r[p] * r;
      world_p[j] = world_p[p] + world_r[p] * t;
    }
  }
}

}  // namespace

std::vector<int> mirrorJointMap(const Skeleton& skeleton, const MirrorSettings& settings) {
  for (const auto& [a, b] : settings.patterns) {
    checkPattern(a);
    checkPattern(b);
  }
  const int n = skeleton.jointCount();
  std::vector<int> map(n);
  for (int j = 0; j < n; ++j) {
    map[j] = j;
    for (const auto& pair : settings.patterns) {
      const int k = counterpartByPattern(skeleton, skeleton.names[j], pair);
      if (k >= 0) {
        map[j] = k;
        break;
      }
    }
  }
  // Then the built-in presets' explicit pairs, for names the patterns miss.
  for (const SkeletonPreset& preset : builtinPresets())
    for (const auto& [a, b] : preset.mirror_pairs) {
      const int ja = skeleton.find(a), jb = skeleton.find(b);
      if (ja >= 0 && jb >= 0 && ja != jb && map[ja] == ja && map[jb] == jb) {
        map[ja] = jb;
        map[jb] = ja;
      }
    }
  for (int j = 0; j < n; ++j)
    if (map[map[j]] != j)
      throw InputError("mirroring: joint '" + skeleton.names[j] + "' pairs with '" +
                       skeleton.names[map[j]] + "', but '" + skeleton.names[map[j]] +
                       "' pairs with '" + skeleton.names[map[map[j]]] +
                       "'; give mirror patterns that pair each left joint with one right joint");
  return map;
}

RawClip mirrorClip(const RawClip& clip, const MirrorSettings& settings) {
  const Skeleton& s = clip.skeleton;
  const std::vector<int> map = mirrorJointMap(s, settings);
  const size_t n = s.names.size();

  // World bind rotations.
  std::vector<glm::dquat> bind_r;
  std::vector<glm::dvec3> bind_p;
  worldPose(s, s.bind_rotations.data(), s.offsets.data(), bind_r, bind_p);
  // Per joint j: M (R_k B_k^-1) M B_j, with R_k the only per-frame part.
  std::vector<glm::dquat> inv_bind(n);
  for (size_t j = 0; j < n; ++j) inv_bind[j] = glm::conjugate(bind_r[j]);

  RawClip out = clip;
  std::vector<glm::dquat> world_r, mirrored_r(n);
  std::vector<glm::dvec3> world_p, mirrored_p(n);
  for (int f = 0; f < clip.frame_count; ++f) {
    const size_t base = static_cast<size_t>(f) * n;
    worldPose(s, clip.rotations.data() + base, clip.translations.data() + base, world_r, world_p);
    for (size_t j = 0; j < n; ++j) {
      const int k = map[j];
      mirrored_r[j] = glm::normalize(reflectRotation(world_r[k] * inv_bind[k]) * bind_r[j]);
      mirrored_p[j] = reflectPosition(world_p[k]);
    }
    for (size_t j = 0; j < n; ++j) {
      glm::dquat r;
      glm::dvec3 t;
      localFromWorld(mirrored_r.data(), mirrored_p.data(), j, s.parents[j], r, t);
      glm::quat q(glm::normalize(r));
      // Keep the sign of the source frame's quaternion family so differences stay short.
      if (f > 0 && glm::dot(q, out.rotations[base - n + j]) < 0) q = -q;
      out.rotations[base + j] = q;
      out.translations[base + j] = glm::vec3(t);
    }
  }
  return out;
}

}  // namespace mmdb::cook
