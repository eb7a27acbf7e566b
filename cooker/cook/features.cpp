#include "cook/features.h"

#include <algorithm>

namespace mmdb::cook {

FeatureBlockId blockWeightId(int block) {
  static constexpr FeatureBlockId kIds[kFeatureBlockCount] = {
      kBlockFootPosition, kBlockFootPosition,       kBlockFootVelocity,       kBlockFootVelocity,
      kBlockHipVelocity,  kBlockTrajectoryPosition, kBlockTrajectoryDirection};
  return kIds[block];
}

std::vector<CookedFeatureBlock> featureBlocks(const SkeletonRoles& roles,
                                              const std::array<float, kWeightCount>& weights) {
  const int lf = roles.joint(Role::LeftFoot), rf = roles.joint(Role::RightFoot);
  std::vector<CookedFeatureBlock> blocks = {
      {"left_foot_position", FeatureKind::Position, lf, 0, 3, 0, 1},
      {"right_foot_position", FeatureKind::Position, rf, 3, 3, 0, 1},
      {"left_foot_velocity", FeatureKind::Velocity, lf, 6, 3, 0, 1},
      {"right_foot_velocity", FeatureKind::Velocity, rf, 9, 3, 0, 1},
      {"hip_velocity", FeatureKind::Velocity, roles.joint(Role::Hips), 12, 3, 0, 1},
      {"trajectory_position", FeatureKind::TrajectoryPosition, -1, 15, 6, 0, 1},
      {"trajectory_direction", FeatureKind::TrajectoryDirection, -1, 21, 6, 0, 1}};
  for (int b = 0; b < kFeatureBlockCount; ++b) blocks[b].weight = weights[blockWeightId(b)];
  return blocks;
}

std::vector<float> FeatureBuilder::run(const RawClip& clip, const std::vector<glm::vec3>& lv,
                                       const std::vector<glm::vec3>& lw,
                                       const std::vector<CookedRootFrame>& root,
                                       const SkeletonRoles& roles, ToeSpeeds* toe_speeds) const {
  const int n = clip.frame_count;
  const size_t joints = clip.skeleton.names.size();
  const std::vector<int>& parents = clip.skeleton.parents;
  const int lf = roles.joint(Role::LeftFoot), rf = roles.joint(Role::RightFoot),
            hips = roles.joint(Role::Hips);
  const int lt = roles.joint(Role::LeftToe), rt = roles.joint(Role::RightToe);
  if (toe_speeds) {
    (*toe_speeds)[0].resize(n);
    (*toe_speeds)[1].resize(n);
  }
  std::vector<float> out(static_cast<size_t>(n) * kFeatureCount);
  // Only the feet, the toes, the hips and the joints above them: the others (arms, head) are in
  // no feature. Parents come before their children.
  std::vector<size_t> chain;
  {
    std::vector<char> needed(joints, 0);
    for (int j : {lf, rf, lt, rt, hips})
      for (int a = j; a >= 0 && !needed[size_t(a)]; a = parents[size_t(a)]) needed[size_t(a)] = 1;
    for (size_t j = 0; j < joints; ++j)
      if (needed[j]) chain.push_back(j);
  }
  // Per joint, relative to the root's frame: rotation, position, velocity, angular velocity.
  std::vector<glm::quat> r(joints);
  std::vector<glm::vec3> p(joints), v(joints), w(joints);
  for (int f = 0; f < n; ++f) {
    const size_t base = static_cast<size_t>(f) * joints;
    // The root frame moves: its velocity and angular velocity, seen from itself.
    const glm::quat root_inv = glm::inverse(root[f].rotation);
    const glm::vec3 root_v = root_inv * root[f].velocity,
                    root_w = root_inv * root[f].angular_velocity;
    for (const size_t j : chain) {
      const int pa = parents[j];
      const glm::quat pr = pa < 0 ? glm::quat(1, 0, 0, 0) : r[pa];
      const glm::vec3 pp = pa < 0 ? glm::vec3(0) : p[pa];
      const glm::vec3 pv = pa < 0 ? root_v : v[pa];
      const glm::vec3 pw = pa < 0 ? root_w : w[pa];
      const glm::vec3 offset = pr * clip.translations[base + j];
      p[j] = pp + offset;
      r[j] = pr * clip.rotations[base + j];
      // World velocity, expressed in the root's axes: the parent's, plus the parent's spin
      // acting on the offset, plus the joint's own motion in its parent.
      v[j] = pv + glm::cross(pw, offset) + pr * lv[base + j];
      w[j] = pw + pr * lw[base + j];
    }
    if (toe_speeds) {
      (*toe_speeds)[0][f] = glm::length(v[lt]);
      (*toe_speeds)[1][f] = glm::length(v[rt]);
    }
    float* row = &out[static_cast<size_t>(f) * kFeatureCount];
    auto put = [&](int col, const glm::vec3& x) {
      row[col] = x.x;
      row[col + 1] = x.y;
      row[col + 2] = x.z;
    };
    put(0, p[lf]);
    put(3, p[rf]);
    put(6, v[lf]);
    put(9, v[rf]);
    put(12, v[hips]);
    for (int s = 0; s < 3; ++s) {
      const int t = std::clamp(f + trajectory_frames[s], 0, n - 1);
      const glm::vec3 tp = root_inv * (root[t].position - root[f].position);
      const glm::vec3 td = root_inv * (root[t].rotation * glm::vec3(0, 0, 1));
      row[15 + 2 * s] = tp.x;
      row[16 + 2 * s] = tp.z;
      row[21 + 2 * s] = td.x;
      row[22 + 2 * s] = td.z;
    }
  }
  return out;
}

}  // namespace mmdb::cook
