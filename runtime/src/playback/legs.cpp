// The legs: two-bone IK, the leg chains of a skeleton, and foot locking, a pose at a time or four
// at once.
#include "mmdb/playback.h"

#include "playback/job_checks.h"
#include "playback/lanes.h"
#include "playback/playback_run.h"
#include "playback/rotation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>

namespace mmdb {
namespace {

constexpr float kBlendHalflives = 20.f;  // a foot's blend back ends this many half-lives on
// How much the plane a knee bends in leans towards knee_forward: as much as a knee's own plane
// weighs when bent by asin(0.1), about 6 degrees from straight.
constexpr float kKneeHint = 0.1f;
// A leg whose hip-to-ankle distance is at most kFoldedReach of its length (a transition can fold
// one further than any clip) follows the animation; the IK fades in up to kFullIkReach.
constexpr float kFoldedReach = 0.2f;
constexpr float kFullIkReach = 0.35f;

const glm::quat kIdentity(1.f, 0.f, 0.f, 0.f);

bool finiteVec(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// Whether joint j is `root` or below it (parents precede their children).
bool inSubtree(Span<const int32_t> parents, uint32_t j, uint32_t root) {
  int32_t p = int32_t(j);
  while (p > int32_t(root)) p = parents[size_t(p)];
  return p == int32_t(root);
}

// Four poses' buffers for the leg IK, a lane each. Lanes past the jobs' count point at the last
// and are never written.
struct LegPoses {
  Span<const int32_t> parents;
  glm::quat* local_rotations[4];
  const glm::vec3* local_translations[4];
  glm::quat* model_rotations[4];
  glm::vec3* model_translations[4];

  template <class Job>
  LegPoses(const Job* jobs, size_t count) : parents(jobs[0].parents) {
    for (size_t i = 0; i < 4; ++i) {
      const Job& job = jobs[std::min(i, count - 1)];
      local_rotations[i] = job.local_rotations.data();
      local_translations[i] = job.local_translations.data();
      model_rotations[i] = job.model_rotations.data();
      model_translations[i] = job.model_translations.data();
    }
  }

  V4 position(uint32_t j) const {
    const glm::vec3 v[4] = {model_translations[0][j], model_translations[1][j],
                            model_translations[2][j], model_translations[3][j]};
    return vectors4(v);
  }
  Q4 rotation(uint32_t j) const {
    const glm::quat q[4] = {model_rotations[0][j], model_rotations[1][j], model_rotations[2][j],
                            model_rotations[3][j]};
    return quats4(q);
  }
  Q4 parentRotation(uint32_t j) const {
    const int32_t p = parents[j];
    return p < 0 ? identity4() : rotation(uint32_t(p));
  }
  void setLocalRotation(uint32_t j, const Q4& q, int lanes) const {
    for (int i = 0; i < 4; ++i)
      if ((lanes >> i) & 1) local_rotations[i][j] = lane(q, i);
  }
  // Gives joint j this model rotation (its parent's kept), by its local rotation.
  void setModelRotation(uint32_t j, const Q4& model, int lanes) const {
    setLocalRotation(j, normalized(inverse(parentRotation(j)) * model), lanes);
  }

  // The model pose of `root` and of every joint below it, from the local pose (as
  // ForwardKinematicsJob computes it, with the roots at the origin), in `lanes`.
  void refresh(uint32_t root, int lanes) const {
    // Bit k: joint root + k is `root` or below it, for the first 64 joints from root (a parent
    // precedes its child, so its bit is known); further joints walk their parents.
    uint64_t below = 1;
    for (size_t j = root; j < parents.size(); ++j) {
      const size_t k = j - root;
      if (k >= 64) {
        if (!inSubtree(parents, uint32_t(j), root)) continue;
      } else if (k > 0) {
        const int32_t parent = parents[j];
        if (parent < int32_t(root) || ((below >> (uint32_t(parent) - root)) & 1u) == 0) continue;
        below |= uint64_t(1) << k;
      }
      const int32_t p = parents[j];
      const Q4 parent_rotation = p < 0 ? identity4() : rotation(uint32_t(p));
      const V4 parent_position = p < 0 ? splat(glm::vec3(0.f)) : position(uint32_t(p));
      const glm::quat local_r[4] = {local_rotations[0][j], local_rotations[1][j],
                                    local_rotations[2][j], local_rotations[3][j]};
      const glm::vec3 local_t[4] = {local_translations[0][j], local_translations[1][j],
                                    local_translations[2][j], local_translations[3][j]};
      const V4 t = parent_position + rotate(parent_rotation, vectors4(local_t));
      const Q4 r = normalized(parent_rotation * quats4(local_r));
      for (int i = 0; i < 4; ++i) {
        if (!((lanes >> i) & 1)) continue;
        model_translations[i][j] = lane(t, i);
        model_rotations[i][j] = lane(r, i);
      }
    }
  }

  // Two-bone IK (TwoBoneIkJob::Run without the checks) in `lanes`.
  void bend(uint32_t upper, uint32_t knee, uint32_t end, const V4& target, const V4& knee_forward,
            float max_length_buffer, int lanes) const {
    const V4 a = position(upper), b = position(knee), c = position(end);
    const V4 ab = b - a, bc = c - b;
    const F4 lab = length(ab), lbc = length(bc);
    lanes &= greater(lab, splat(1e-6f)) & greater(lbc, splat(1e-6f));  // else no bone to turn
    if (!lanes) return;
    // How far the chain reaches: towards the target, at most its length less the buffer (or as
    // far as the pose given already reaches, when that is further: never straighter than the
    // animation, never snapping straight) and at least as close as it folds.
    const F4 zero = splat(0.f), one = splat(1.f);
    const F4 longest = maxOf(maxOf(lab + lbc - splat(max_length_buffer), zero), length(c - a));
    const F4 shortest = abs(lab - lbc);
    const F4 reach = maxOf(minOf(length(target - a), longest), shortest);
    // The knee's inner angle now and the one that reaches (the law of cosines).
    const F4 cos_now = minOf(maxOf(dot(-ab, bc) / (lab * lbc), -one), one);
    const F4 cos_wanted =
        minOf(maxOf((lab * lab + lbc * lbc - reach * reach) / (splat(2.f) * lab * lbc), -one), one);
    // The plane to bend in, by its normal: the pose's own (ab x bc, as long as the sine of the
    // knee's angle) plus kKneeHint of the one towards knee_forward. Both are across the hip-to-
    // ankle line. A well bent knee keeps its plane within a few degrees; a nearly straight one,
    // whose own plane turns about wildly from step to step (and flips as the knee passes
    // straight), bends towards knee_forward, so that its knee never swings round in one step.
    const V4 ac = c - a;
    const V4 own = cross(ab, bc) / (lab * lbc);
    V4 axis = own;
    const V4 hint = cross(knee_forward, ac);
    const F4 hint_length = length(hint);
    const int hinted = greater(hint_length, splat(1e-6f) * length(knee_forward) * length(ac));
    if (hinted) {
      // A knee bent backwards (no knee does, but a transition between two poses can pass
      // through it) bends as far forwards instead: its plane's backward part is mirrored, so the
      // plane never flips as the bend crosses the hint's lean (the knee swung round in one step).
      const F4 backwards = dot(own, hint) / hint_length;
      axis = select(hinted & less(backwards, zero),
                    axis - (splat(2.f) * backwards / hint_length) * hint, axis);
      axis = select(hinted, axis + (splat(kKneeHint) / hint_length) * hint, axis);
    }
    if (const int none = ~greater(length(axis), splat(1e-6f)) & lanes) {
      const int small_x = less(abs(ab.x), splat(0.9f) * lab);
      const V4 other{select(small_x, one, zero), select(small_x, zero, one), zero};
      axis = select(none, cross(ab, other), axis);
    }
    axis = normalized(axis);
    // The chain first turns about the hip-to-ankle line (the ankle stays) until its own plane is
    // that one; a straight chain has no plane to turn.
    const int planar = greater(length(own), splat(1e-6f)) & greater(length(ac), splat(1e-6f));
    const Q4 swivel = select(planar, turnAbout(normalized(own), axis, normalized(ac)), identity4());
    const V4 b_swivelled = a + rotate(swivel, ab);
    const V4 bc_swivelled = rotate(swivel, bc);
    // The knee turns by (inner angle now - wanted), both in [0, pi], about the plane's normal: its
    // cosine and sine from the two cosines, and the half-angle rotation as normalize(sin * axis,
    // 1 + cos) (no acos, whose precision a GPU leaves loose).
    const F4 sin_now = sqrt(maxOf(one - cos_now * cos_now, zero));
    const F4 sin_wanted = sqrt(maxOf(one - cos_wanted * cos_wanted, zero));
    const F4 cos_turn = cos_now * cos_wanted + sin_now * sin_wanted;
    const F4 sin_turn = sin_now * cos_wanted - cos_now * sin_wanted;
    const Q4 knee_turn = select(
        greater(one + cos_turn, splat(1e-6f)),
        normalized(Q4{one + cos_turn, axis.x * sin_turn, axis.y * sin_turn, axis.z * sin_turn}),
        halfTurn(axis));
    const V4 bent = b_swivelled + rotate(knee_turn, bc_swivelled);  // the end once bent
    const Q4 swing = rotationBetween(bent - a, target - a);
    const Q4 upper_model = normalized(swing * (swivel * rotation(upper)));
    const Q4 knee_model = normalized(swing * (knee_turn * (swivel * rotation(knee))));
    setModelRotation(upper, upper_model, lanes);
    setLocalRotation(knee, normalized(inverse(upper_model) * knee_model), lanes);
    refresh(upper, lanes);
  }
};

Status checkPose(const char* job, Span<const int32_t> parents, size_t rotations,
                 size_t translations, size_t model_rotations, size_t model_translations) {
  const size_t n = parents.size();
  if (rotations != n) return sizeError(job, "local_rotations", rotations, n);
  if (translations != n) return sizeError(job, "local_translations", translations, n);
  if (model_rotations != n) return sizeError(job, "model_rotations", model_rotations, n);
  if (model_translations != n) return sizeError(job, "model_translations", model_translations, n);
  for (size_t j = 0; j < n; ++j)
    if (parents[j] < -1 || parents[j] >= int64_t(j))
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: joint %zu has parent %d; a parent must precede its child", job, j,
                           parents[j]);
  return {};
}

}  // namespace

Status TwoBoneIkJob::Validate() const noexcept {
  constexpr const char* job = "TwoBoneIkJob";
  if (Status s = checkPose(job, parents, local_rotations.size(), local_translations.size(),
                           model_rotations.size(), model_translations.size());
      !s)
    return s;
  const size_t n = parents.size();
  if (upper >= n || knee >= n || end >= n)
    return Error::format(ErrorCode::InvalidArgument,
                         "TwoBoneIkJob: joints %u, %u, %u of a skeleton of %zu", upper, knee, end,
                         n);
  if (parents[end] != int32_t(knee) || parents[knee] != int32_t(upper))
    return Error::format(ErrorCode::InvalidArgument,
                         "TwoBoneIkJob: joint %u must be the parent of %u, and %u the parent of %u",
                         knee, end, upper, knee);
  if (!finiteVec(target) || !finiteVec(knee_forward))
    return Error(ErrorCode::InvalidArgument,
                 "TwoBoneIkJob: target and knee_forward must be finite");
  if (!validTime(max_length_buffer))
    return Error::format(ErrorCode::InvalidArgument,
                         "TwoBoneIkJob: max_length_buffer %g m must be finite and >= 0",
                         double(max_length_buffer));
  return {};
}

Status TwoBoneIkJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  const LegPoses pose(this, 1);
  pose.bend(upper, knee, end, splat(target), splat(knee_forward), max_length_buffer, 1);
  return {};
}

Status validateFootLockSettings(const FootLockSettings& settings) noexcept {
  const struct {
    const char* name;
    float value;
    const char* unit;
  } checked[] = {{"foot_unlock_radius", settings.foot_unlock_radius, " m"},
                 {"foot_unlock_halflife", settings.foot_unlock_halflife, " s"},
                 {"ik_foot_height", settings.ik_foot_height, " m"},
                 {"ik_toe_length", settings.ik_toe_length, " m"},
                 {"ik_max_length_buffer", settings.ik_max_length_buffer, " m"}};
  for (const auto& c : checked)
    if (!validTime(c.value))
      return Error::format(ErrorCode::InvalidArgument, "%s %g%s must be finite and >= 0", c.name,
                           double(c.value), c.unit);
  return {};
}

Result<std::array<LegChain, kLegCount>> findLegChains(const Database& db) noexcept {
  if (!db.valid() || db.jointCount() == 0)
    return Error(ErrorCode::InvalidArgument, "the database has no skeleton");
  const Span<const int32_t> parents = db.parents();
  const uint32_t n = db.jointCount();
  const auto name = [&](uint32_t j) {
    const std::string_view s = db.jointName(j);
    return s;
  };
#define MMDB_JOINT(j) int(std::min<size_t>(name(j).size(), 64)), name(j).data()
  static const char* const kSide[kLegCount] = {"left leg", "right leg"};
  static const Role kFoot[kLegCount] = {Role::LeftFoot, Role::RightFoot};
  static const Role kToe[kLegCount] = {Role::LeftToe, Role::RightToe};
  static const char* const kFootName[kLegCount] = {"LeftFoot", "RightFoot"};
  static const char* const kToeName[kLegCount] = {"LeftToe", "RightToe"};

  // The bind pose in model space, for the toes' tips.
  std::array<LegChain, kLegCount> legs{};
  for (uint32_t s = 0; s < kLegCount; ++s) {
    const char* side = kSide[s];
    const int32_t foot = db.roleJoint(kFoot[s]);
    if (foot < 0 || uint32_t(foot) >= n)
      return Error::format(ErrorCode::InvalidArgument, "%s: the skeleton names no %s joint", side,
                           kFootName[s]);
    const int32_t toe = db.roleJoint(kToe[s]);
    if (toe < 0 || uint32_t(toe) >= n)
      return Error::format(ErrorCode::InvalidArgument, "%s: the skeleton names no %s joint", side,
                           kToeName[s]);
    if (toe == foot)
      return Error::format(ErrorCode::InvalidArgument, "%s: toe '%.*s' is the foot itself", side,
                           MMDB_JOINT(uint32_t(toe)));
    int32_t above = parents[size_t(toe)];
    while (above >= 0 && above != foot) above = parents[size_t(above)];
    if (above != foot)
      return Error::format(ErrorCode::InvalidArgument, "%s: toe '%.*s' is not below foot '%.*s'",
                           side, MMDB_JOINT(uint32_t(toe)), MMDB_JOINT(uint32_t(foot)));
    const Span<const int32_t> contact_joints = db.contactJoints();
    uint32_t bit = 0;
    while (bit < contact_joints.size() && contact_joints[bit] != toe) ++bit;
    if (bit == contact_joints.size() || bit >= 32 || db.contacts().size() != db.frameCount())
      return Error::format(
          ErrorCode::InvalidArgument,
          "%s: toe '%.*s' is not a contact joint: it has no contact bit to lock on", side,
          MMDB_JOINT(uint32_t(toe)));
    const int32_t knee = parents[size_t(foot)];
    if (knee < 0)
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: foot '%.*s' has no parent to bend as a knee", side,
                           MMDB_JOINT(uint32_t(foot)));
    const int32_t upper = parents[size_t(knee)];
    if (upper < 0)
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: knee '%.*s' (the parent of foot '%.*s') is the root: it has no "
                           "parent to turn as an upper leg",
                           side, MMDB_JOINT(uint32_t(knee)), MMDB_JOINT(uint32_t(foot)));
    if (parents[size_t(upper)] < 0)
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: upper leg '%.*s' (the parent of knee '%.*s') is the root, which "
                           "the leg must not turn",
                           side, MMDB_JOINT(uint32_t(upper)), MMDB_JOINT(uint32_t(knee)));
    legs[s].upper_leg = uint32_t(upper);
    legs[s].knee = uint32_t(knee);
    legs[s].foot = uint32_t(foot);
    legs[s].toe = uint32_t(toe);
    legs[s].contact_bit = bit;
  }
  const LegChain& left = legs[0];
  const LegChain& right = legs[1];
  for (const uint32_t j : {right.upper_leg, right.knee, right.foot, right.toe})
    if (j == left.upper_leg || j == left.knee || j == left.foot || j == left.toe)
      return Error::format(ErrorCode::InvalidArgument,
                           "right leg: joint '%.*s' is in the left leg too", MMDB_JOINT(j));
#undef MMDB_JOINT

  // The tip of the toes: from the toe joint along the ground direction from the foot to the toe
  // in the bind pose, in the toe joint's frame. The bind pose is walked up each chain alone (no
  // allocation): model = product of the bind rotations above.
  const Span<const Float4> bind_t = db.bindTranslations();
  const Span<const Float4> bind_r = db.bindRotations();
  const auto bindModel = [&](uint32_t j, glm::quat& rotation, glm::vec3& position) {
    rotation = kIdentity;
    position = glm::vec3(0.f);
    // Compose from j up to the root: model(j) = model(parent) * local(j).
    for (int32_t k = int32_t(j); k >= 0; k = parents[size_t(k)]) {
      const glm::quat r = toQuat(bind_r[size_t(k)]);
      position = toVec3(bind_t[size_t(k)]) + r * position;
      rotation = r * rotation;
    }
  };
  for (LegChain& leg : legs) {
    glm::quat foot_r, toe_r;
    glm::vec3 foot_p, toe_p;
    bindModel(leg.foot, foot_r, foot_p);
    bindModel(leg.toe, toe_r, toe_p);
    glm::vec3 ahead = toe_p - foot_p;
    ahead.y = 0.f;
    const float length = glm::length(ahead);
    ahead = length > 1e-6f ? ahead / length : glm::vec3(0.f, 0.f, 1.f);
    const glm::vec3 tip = glm::inverse(glm::normalize(toe_r)) * ahead;
    leg.toe_tip =
        finiteVec(tip) && glm::length(tip) > 0.5f ? glm::normalize(tip) : glm::vec3(0.f, 0.f, 1.f);
  }
  return legs;
}

Status FootLockJob::Validate() const noexcept {
  constexpr const char* job = "FootLockJob";
  if (Status s = checkPose(job, parents, local_rotations.size(), local_translations.size(),
                           model_rotations.size(), model_translations.size());
      !s)
    return s;
  if (feet.size() != legs.size()) return sizeError(job, "feet", feet.size(), legs.size());
  const size_t n = parents.size();
  for (size_t s = 0; s < legs.size(); ++s) {
    const LegChain& leg = legs[s];
    bool below = false;  // the toe is below the foot
    if (leg.toe < n && leg.foot < n)
      for (int32_t p = parents[leg.toe]; p >= 0 && !below; p = parents[size_t(p)])
        below = p == int32_t(leg.foot);
    if (leg.upper_leg >= n || leg.knee >= n || !below || parents[leg.foot] != int32_t(leg.knee) ||
        parents[leg.knee] != int32_t(leg.upper_leg) || leg.contact_bit >= 32 ||
        !finiteVec(leg.toe_tip))
      return Error::format(ErrorCode::InvalidArgument,
                           "FootLockJob: leg %zu (upper leg %u, knee %u, foot %u, toe %u, bit %u) "
                           "is not a chain of the skeleton",
                           s, leg.upper_leg, leg.knee, leg.foot, leg.toe, leg.contact_bit);
  }
  if (Status s = validateFootLockSettings(settings); !s)
    return Error::format(ErrorCode::InvalidArgument, "FootLockJob: %.200s", s.message());
  if (!validTime(dt))
    return Error(ErrorCode::InvalidArgument, "FootLockJob: dt must be finite and >= 0");
  if (!finiteVec(position) || !std::isfinite(rotation.w) || !std::isfinite(rotation.x) ||
      !std::isfinite(rotation.y) || !std::isfinite(rotation.z))
    return Error(ErrorCode::InvalidArgument, "FootLockJob: the placement must be finite");
  return {};
}

Status FootLockJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  detail::runFootLock4(this, 1);
  return {};
}

void detail::runFootLock4(const FootLockJob* jobs, size_t count) noexcept {
  const FootLockJob& first = jobs[0];
  const LegPoses pose(jobs, count);
  const FootLockSettings& settings = first.settings;
  const float halflife = settings.foot_unlock_halflife;
  // Each lane's placement in the world (lanes past `count` the last job's).
  glm::quat to_model_of[4];
  glm::vec3 position_of[4];
  glm::quat rotation_of[4];
  for (size_t i = 0; i < 4; ++i) {
    const FootLockJob& job = jobs[std::min(i, count - 1)];
    to_model_of[i] = glm::inverse(job.rotation);
    position_of[i] = job.position;
    rotation_of[i] = job.rotation;
  }
  const V4 position = vectors4(position_of);
  const Q4 rotation = quats4(rotation_of);
  const Q4 to_model = quats4(to_model_of);
  const int real_lanes = (1 << count) - 1;
  for (size_t s = 0; s < first.legs.size(); ++s) {
    const LegChain& leg = first.legs[s];
    // Where each lane's toe goes on from the last step: held, blending back, or as animated.
    int held = 0;  // the lanes whose toe is held or blends back: their legs bend
    glm::vec3 target_of[4];
    for (size_t i = 0; i < 4; ++i) target_of[i] = position_of[i];
    for (size_t i = 0; i < count; ++i) {
      const FootLockJob& one = jobs[i];
      FootLock& f = one.feet[s];
      if (one.hold_only) {
        if (!f.locked) continue;
        target_of[i] = f.position;
        held |= 1 << i;
        continue;
      }
      if (one.reset) f = FootLock{};
      const bool contact = ((one.contacts >> leg.contact_bit) & 1u) != 0;
      // The animated toe, where warping maps it (as animated without warping).
      const bool warped = !one.warp.identity();
      const glm::vec3 animated =
          one.position + one.rotation * one.warp.apply(one.model_translations[leg.toe]);
      const glm::vec3 velocity =
          f.seen && one.dt > 0.f ? (animated - f.animated) / one.dt : glm::vec3(0.f);
      if (f.blending) f.since_unlock += one.dt;
      glm::vec3 target = animated;
      if (f.locked) {
        target = f.position;
      } else if (f.blending) {
        glm::vec3 x = f.offset, v = f.offset_velocity;
        decayOffset(x, v, halflife, f.since_unlock);
        target = animated + x;
      }
      if (f.locked &&
          (!contact || glm::length(animated - f.position) > settings.foot_unlock_radius)) {
        // Let go: blend from the lock, still, to the animation.
        f.locked = false;
        f.blending = true;
        f.since_unlock = 0.f;
        f.offset = f.position - animated;
        f.offset_velocity = -velocity;
        target = f.position;
      } else if (!f.locked && contact && !f.contact) {
        // A contact starts: hold the toe where it is shown, not below the foot height.
        f.locked = true;
        f.blending = false;
        f.position = glm::vec3(target.x, std::fmax(target.y, settings.ik_foot_height), target.z);
        target = f.position;
      }
      if (f.blending && f.since_unlock >= kBlendHalflives * halflife) {
        f.blending = false;
        target = animated;
      }
      f.contact = contact;
      f.animated = animated;
      f.seen = true;
      f.target = target;
      target_of[i] = target;
      // Held, blending back or warped: the leg bends; else it is left as animated.
      if (f.locked || f.blending || warped) held |= 1 << i;
    }
    if (!held) continue;

    // A leg folded nearly shut has no stable way to swing its short hip-to-ankle line onto a
    // target (its knee swung round in one step): it follows the animation, the IK fading in as
    // the leg opens.
    const V4 hip = pose.position(leg.upper_leg);
    const V4 knee = pose.position(leg.knee);
    const V4 ankle = pose.position(leg.foot);
    const F4 leg_length = length(knee - hip) + length(ankle - knee);
    const F4 open =
        select(greater(leg_length, splat(0.f)), length(ankle - hip) / leg_length, splat(1.f));
    const F4 weight =
        minOf(maxOf((open - splat(kFoldedReach)) / splat(kFullIkReach - kFoldedReach), splat(0.f)),
              splat(1.f));
    const int lanes = held & greater(weight, splat(0.f)) & real_lanes;
    if (!lanes) continue;

    // The leg to the target, in model space: the ankle where the animated foot-to-toe vector
    // puts the toe on the target, then the foot as animated, turned for the toe to reach.
    const V4 toe_animated = pose.position(leg.toe);
    V4 toe_target = rotate(to_model, vectors4(target_of) - position);
    toe_target = select(less(weight, splat(1.f)),
                        toe_animated + weight * (toe_target - toe_animated), toe_target);
    const V4 foot_to_toe = toe_animated - ankle;
    const Q4 foot_animated = pose.rotation(leg.foot);
    pose.bend(leg.upper_leg, leg.knee, leg.foot, toe_target - foot_to_toe,
              splat(glm::vec3(0.f, 0.f, 1.f)), settings.ik_max_length_buffer, lanes);
    const Q4 aim = rotationBetween(foot_to_toe, toe_target - pose.position(leg.foot));
    pose.setModelRotation(leg.foot, normalized(aim * foot_animated), lanes);
    pose.refresh(leg.foot, lanes);
    // The tip of the toes no lower than the foot height: the toe joint turns up towards it.
    if (!(settings.ik_toe_length > 0.f)) continue;
    const V4 toe = pose.position(leg.toe);
    const V4 tip =
        toe + rotate(pose.rotation(leg.toe), splat(leg.toe_tip * settings.ik_toe_length));
    const V4 tip_world = position + rotate(rotation, tip);
    const F4 height = splat(settings.ik_foot_height);
    const int low = lanes & less(tip_world.y, height);
    if (!low) continue;
    const V4 lifted = rotate(to_model, V4{tip_world.x, height, tip_world.z} - position);
    const Q4 lift = rotationBetween(tip - toe, lifted - toe);
    pose.setModelRotation(leg.toe, normalized(lift * pose.rotation(leg.toe)), low);
    pose.refresh(leg.toe, low);
  }
}

}  // namespace mmdb
