// Mirroring: left/right joint pairs by name pattern, and the reflected clip.
//
// The reflection M = diag(-1, 1, 1) acts on world space. A world position p becomes M p. A world
// rotation is not reflected alone: what a skinned mesh sees is each joint's deformation
// D = R_world * B_world^-1 (B = the joint's world bind rotation). Joint j of the mirrored clip
// takes the reflected deformation of its counterpart k, M D_k M, so its world rotation is
// M (R_k B_k^-1) M B_j, while the bind pose is symmetric (mirrorFrames() below says what is done
// when it is not). Mirroring twice gives back R_j. Local translations are rebuilt
// from the reflected world positions, so positions (and everything derived from them) are exactly
// the reflection of the original's even when the bind skeleton is not perfectly symmetric.
#include "cook/mirror.h"

#include "cook/skeleton_presets.h"
#include "core/errors.h"
#include "core/pose_space.h"

#include <glm/gtc/quaternion.hpp>

#include <algorithm>

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

// The shortest rotation taking direction u onto direction v (both not zero); a half turn about an
// axis across u when they are opposite.
glm::dquat rotationBetween(const glm::dvec3& u, const glm::dvec3& v) {
  const glm::dvec3 a = glm::normalize(u), b = glm::normalize(v);
  const double d = glm::dot(a, b);
  if (d < -1.0 + 1e-12) {
    glm::dvec3 axis = glm::cross(a, glm::dvec3(1, 0, 0));
    if (glm::length(axis) < 1e-6) axis = glm::cross(a, glm::dvec3(0, 1, 0));
    return glm::angleAxis(3.14159265358979323846, glm::normalize(axis));
  }
  const glm::dvec3 c = glm::cross(a, b);
  return glm::normalize(glm::dquat(1.0 + d, c.x, c.y, c.z));
}

// The rotation taking the frame of (a, b) onto the frame of (a2, b2): a onto a2, then the plane
// of a and b onto the plane of a2 and b2.
glm::dquat rotationOfPair(const glm::dvec3& a, const glm::dvec3& b, const glm::dvec3& a2,
                          const glm::dvec3& b2) {
  auto frame = [](const glm::dvec3& x, const glm::dvec3& y) {
    const glm::dvec3 e0 = glm::normalize(x);
    const glm::dvec3 e2 = glm::normalize(glm::cross(x, y));
    return glm::dmat3(e0, glm::cross(e2, e0), e2);
  };
  return glm::normalize(glm::quat_cast(frame(a2, b2) * glm::transpose(frame(a, b))));
}

// Per joint j, the constant G_j of its mirrored world rotation M R_k M G_j (k its counterpart).
// From the bind pose, G_j = M B_k^-1 M B_j: the reflected deformation of k. That holds while the
// bind pose is itself symmetric across X = 0. A rig whose rest pose is not (bones along their
// local X, the standing pose in the motion, as some BVH exports) would give mirrored joint frames
// another convention than the original's: rotations half a turn apart for the same pose, which
// a transition between a clip and a mirrored one then swings through. That shows as a bone whose
// mirrored direction is more than 45 degrees from where the frame puts it (a bind merely not
// quite symmetric stays well inside). There, G_j is the rotation
// that keeps the bones where the joint frames say they are: each child's offset t_c onto the
// reflection of its counterpart's, M t_kc (from the two children farthest from collinear; with
// one child the shortest such turn from the parent's convention; with none the parent's).
// `fitted[j]` says which joints took the second rule.
std::vector<glm::dquat> mirrorFrames(const Skeleton& s, const std::vector<int>& map,
                                     const std::vector<glm::dquat>& bind_r,
                                     std::vector<char>& fitted) {
  const size_t n = s.names.size();
  std::vector<std::vector<size_t>> children(n);
  for (size_t c = 0; c < n; ++c)
    if (s.parents[c] >= 0) children[size_t(s.parents[c])].push_back(c);
  std::vector<glm::dquat> g(n);
  fitted.assign(n, 0);
  // A rig that gives bind rotations (FBX) is mirrored by them: they are the frames its mesh is
  // skinned in. Only a rest pose without them (BVH: every rotation zero) may need frames fitted.
  bool identity_bind = true;
  for (const glm::quat& b : s.bind_rotations)
    identity_bind = identity_bind && std::abs(std::abs(b.w) - 1.f) < 1e-6f;
  for (size_t j = 0; j < n; ++j) {
    const size_t k = size_t(map[j]);
    const glm::dquat from_bind = reflectRotation(glm::conjugate(bind_r[k])) * bind_r[j];
    // Pairs (t_c, M t_kc) of the children whose counterparts are the counterpart's children.
    std::vector<std::pair<glm::dvec3, glm::dvec3>> bones;
    for (const size_t c : children[j]) {
      const size_t kc = size_t(map[c]);
      const glm::dvec3 t(s.offsets[c]);
      if (s.parents[kc] != int(k) || glm::length(t) < 1e-6) continue;
      bones.push_back({t, reflectPosition(glm::dvec3(s.offsets[kc]))});
    }
    bool holds = true;
    for (const auto& [t, target] : bones)
      holds = holds && glm::dot(glm::normalize(from_bind * t), glm::normalize(target)) > 0.7;
    const int parent = s.parents[j];
    const bool parent_fitted = parent >= 0 && fitted[size_t(parent)];
    if (!identity_bind || (holds && !(bones.empty() && parent_fitted))) {
      g[j] = from_bind;
      continue;
    }
    fitted[j] = 1;
    const glm::dquat prior = parent_fitted ? g[size_t(parent)] : from_bind;
    // The two bones farthest from collinear.
    double best = 0;
    size_t a = 0, b = 0;
    for (size_t x = 0; x < bones.size(); ++x)
      for (size_t y = x + 1; y < bones.size(); ++y) {
        const double area =
            glm::length(glm::cross(glm::normalize(bones[x].first), glm::normalize(bones[y].first)));
        if (area > best) best = area, a = x, b = y;
      }
    if (best > 0.1)
      g[j] = rotationOfPair(bones[a].first, bones[b].first, bones[a].second, bones[b].second);
    else if (!bones.empty())
      g[j] = glm::normalize(rotationBetween(prior * bones[0].first, bones[0].second) * prior);
    else
      g[j] = prior;
  }
  return g;
}

// On a rig whose rest pose is not symmetric, the bones fix a mirrored joint frame only up to a
// turn about its bone (or wholly, for a joint without children): the turn that takes the mirrored
// frames' mean local rotation onto the original's. L'_j = G_p^-1 (M L_k M) G_j is the mirrored
// local rotation of j (p its parent), so the means need no pose: G_j becomes G_j Q, with Q the
// part about the bone of (mean L'_j)^-1 (mean L_j) for one child, all of it for none, and nothing
// for two or more children (the bones fix the frame).
void alignMirrorRolls(const RawClip& clip, const std::vector<int>& map,
                      std::vector<glm::dquat>& g) {
  const Skeleton& s = clip.skeleton;
  const size_t n = s.names.size();
  std::vector<glm::dquat> mean(n, glm::dquat(0, 0, 0, 0));
  for (int f = 0; f < clip.frame_count; ++f)
    for (size_t j = 0; j < n; ++j) {
      glm::dquat q(clip.rotations[size_t(f) * n + j]);
      if (glm::dot(q, mean[j]) < 0) q = -q;
      mean[j] += q;
    }
  for (glm::dquat& m : mean) m = glm::length(m) > 0 ? glm::normalize(m) : glm::dquat(1, 0, 0, 0);
  std::vector<std::vector<size_t>> children(n);
  for (size_t c = 0; c < n; ++c)
    if (s.parents[c] >= 0) children[size_t(s.parents[c])].push_back(c);
  for (size_t j = 0; j < n; ++j) {
    std::vector<glm::dvec3> bones;
    for (const size_t c : children[j])
      if (glm::length(glm::dvec3(s.offsets[c])) > 1e-6)
        bones.push_back(glm::normalize(glm::dvec3(s.offsets[c])));
    bool fixed = false;
    for (size_t x = 0; x < bones.size() && !fixed; ++x)
      for (size_t y = x + 1; y < bones.size() && !fixed; ++y)
        fixed = glm::length(glm::cross(bones[x], bones[y])) > 0.1;
    if (fixed) continue;
    const int p = s.parents[j];
    const glm::dquat parent = p >= 0 ? glm::conjugate(g[size_t(p)]) : glm::dquat(1, 0, 0, 0);
    const glm::dquat mirrored = parent * reflectRotation(mean[size_t(map[j])]) * g[j];
    glm::dquat q = glm::conjugate(mirrored) * mean[j];
    if (!bones.empty()) {
      // The twist of q about the bone.
      const glm::dvec3 axis = bones[0];
      const glm::dvec3 along = axis * glm::dot(glm::dvec3(q.x, q.y, q.z), axis);
      q = glm::dquat(q.w, along.x, along.y, along.z);
      q = glm::length(q) > 1e-9 ? glm::normalize(q) : glm::dquat(1, 0, 0, 0);
    }
    g[j] = glm::normalize(g[j] * q);
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
  std::vector<char> fitted;
  std::vector<glm::dquat> frames = mirrorFrames(s, map, bind_r, fitted);
  // A rest pose that is not symmetric leaves the turn about each bone to the motion.
  if (std::find(fitted.begin(), fitted.end(), 1) != fitted.end()) {
    alignMirrorRolls(clip, map, frames);
    fitted.assign(n, 1);
  }

  RawClip out = clip;
  std::vector<glm::dquat> world_r, mirrored_r(n);
  std::vector<glm::dvec3> world_p, mirrored_p(n);
  for (int f = 0; f < clip.frame_count; ++f) {
    const size_t base = static_cast<size_t>(f) * n;
    worldPose(s, clip.rotations.data() + base, clip.translations.data() + base, world_r, world_p);
    for (size_t j = 0; j < n; ++j) {
      const int k = map[j];
      mirrored_r[j] = fitted[j]
                          ? glm::normalize(reflectRotation(world_r[k]) * frames[j])
                          : glm::normalize(reflectRotation(world_r[k] * inv_bind[k]) * bind_r[j]);
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
