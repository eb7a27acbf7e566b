// Critically damped spring character (Holden's spring_character_update) and query building.
#include "mmdb/controller.h"

#include "playback/rotation.h"

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <cmath>

namespace mmdb {
namespace {

using detail::fromScaledAxis;
using detail::quatAbs;
using detail::referenceFromScaledAxis;
using detail::referenceNegExp;
using detail::referenceQuatInv;
using detail::referenceQuatMul;
using detail::referenceSpringY;
using detail::referenceToScaledAxis;
using detail::springY;
using detail::toScaledAxis;

glm::vec3 ground(const glm::vec3& v) { return {v.x, 0.f, v.z}; }

void springPosition(glm::vec3& x, glm::vec3& v, glm::vec3& a, const glm::vec3& target_v,
                    float halflife, float dt, bool reference) {
  const float y = reference ? referenceSpringY(halflife) : springY(halflife);
  const glm::vec3 j0 = v - target_v;
  const glm::vec3 j1 = a + j0 * y;
  const float e = reference ? referenceNegExp(y * dt) : std::exp(-y * dt);
  x = e * (-j1 / (y * y) + (-j0 - j1 * dt) / y) + j1 / (y * y) + j0 / y + target_v * dt + x;
  v = e * (j0 + j1 * dt) + target_v;
  a = e * (a - j1 * y * dt);
}

void springRotation(glm::quat& q, glm::vec3& w, const glm::quat& target, float halflife, float dt,
                    bool reference) {
  if (reference) {
    const float y = referenceSpringY(halflife);
    const glm::vec3 j0 =
        referenceToScaledAxis(quatAbs(referenceQuatMul(q, referenceQuatInv(target))));
    const glm::vec3 j1 = w + j0 * y;
    const float e = referenceNegExp(y * dt);
    q = referenceQuatMul(referenceFromScaledAxis(e * (j0 + j1 * dt)), target);
    w = e * (w - j1 * y * dt);
    return;
  }
  const float y = springY(halflife);
  const glm::vec3 j0 = toScaledAxis(quatAbs(q * glm::inverse(target)));
  const glm::vec3 j1 = w + j0 * y;
  const float e = std::exp(-y * dt);
  q = glm::normalize(fromScaledAxis(e * (j0 + j1 * dt)) * target);
  w = e * (w - j1 * y * dt);
}

glm::quat desiredRotation(const CharacterState& state, const StickInput& stick) {
  const glm::vec3 f = ground(stick.desired_facing);
  return glm::dot(f, f) > 1e-12f ? facingRotation(f) : state.rotation;
}

}  // namespace

glm::quat facingRotation(const glm::vec3& facing) noexcept {
  const glm::vec3 f = ground(facing);
  if (glm::dot(f, f) <= 1e-12f) return glm::quat(1.f, 0.f, 0.f, 0.f);
  const float yaw = std::atan2(f.x, f.z);  // +Z -> facing, about +Y
  return glm::quat(std::cos(0.5f * yaw), 0.f, std::sin(0.5f * yaw), 0.f);
}

void updateCharacter(CharacterState& state, const StickInput& stick,
                     const ControllerSettings& settings, float dt) noexcept {
  const glm::quat target = desiredRotation(state, stick);
  springPosition(state.position, state.velocity, state.acceleration, ground(stick.desired_velocity),
                 settings.position_halflife, dt, settings.reference_arithmetic);
  springRotation(state.rotation, state.angular_velocity, target, settings.rotation_halflife, dt,
                 settings.reference_arithmetic);
}

void predictTrajectory(const CharacterState& state, const StickInput& stick,
                       const ControllerSettings& settings,
                       float trajectory[kTrajectoryFloats]) noexcept {
  const glm::quat inverse_now = glm::inverse(state.rotation);
  CharacterState stepped = state;  // reference_arithmetic: the position stepped sample to sample
  float stepped_time = 0.f;
  for (int k = 0; k < kTrajectorySamples; ++k) {
    // The spring is exact, so jumping straight to each time equals stepping there.
    CharacterState future = state;
    updateCharacter(future, stick, settings, settings.times[k]);
    if (settings.reference_arithmetic) {
      // Its approximate exponential does not compose: the reference steps the position from the
      // sample before (and jumps the rotation from now, as above).
      updateCharacter(stepped, stick, settings, settings.times[k] - stepped_time);
      stepped_time = settings.times[k];
      future.position = stepped.position;
    }
    const glm::vec3 p = inverse_now * (future.position - state.position);
    const glm::vec3 d = inverse_now * (future.rotation * glm::vec3(0.f, 0.f, 1.f));
    trajectory[2 * k + 0] = p.x;
    trajectory[2 * k + 1] = p.z;
    trajectory[2 * kTrajectorySamples + 2 * k + 0] = d.x;
    trajectory[2 * kTrajectorySamples + 2 * k + 1] = d.z;
  }
}

Status buildQuery(const Database& db, int32_t current_frame,
                  const float trajectory[kTrajectoryFloats], Span<float> query) noexcept {
  const uint32_t n = db.featureCount();
  if (!db.valid() || query.size() != n)
    return Error::format(ErrorCode::InvalidArgument,
                         "buildQuery: the query has %zu floats, the database has %u features",
                         query.size(), n);
  if (current_frame < -1 || current_frame >= int64_t(db.frameCount()))
    return Error::format(ErrorCode::InvalidArgument,
                         "buildQuery: current frame %d is outside [-1, %u) (global frames)",
                         current_frame, db.frameCount());
  const int32_t pos_block = db.findFeatureBlock(FeatureKind::TrajectoryPosition);
  const int32_t dir_block = db.findFeatureBlock(FeatureKind::TrajectoryDirection);
  if (pos_block < 0 || dir_block < 0 ||
      db.featureBlock(uint32_t(pos_block)).width != 2 * kTrajectorySamples ||
      db.featureBlock(uint32_t(dir_block)).width != 2 * kTrajectorySamples)
    return Error(ErrorCode::InvalidArgument,
                 "buildQuery: the database has no 6-wide trajectory position and direction "
                 "blocks");
  if (current_frame >= 0) {
    const Span<const float> row = db.featureRow(uint32_t(current_frame));
    for (uint32_t c = 0; c < n; ++c) query[c] = row[c];
  } else {
    for (uint32_t c = 0; c < n; ++c) query[c] = 0.f;
  }
  const Span<const float> offset = db.featureOffset(), scale = db.featureScale();
  const uint32_t columns[2] = {db.featureBlock(uint32_t(pos_block)).first_column,
                               db.featureBlock(uint32_t(dir_block)).first_column};
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 2 * kTrajectorySamples; ++i) {
      const uint32_t c = columns[b] + uint32_t(i);
      query[c] = (trajectory[b * 2 * kTrajectorySamples + i] - offset[c]) / scale[c];
    }
  }
  return {};
}

void integrateRootMotion(const Database& db, uint32_t frame, float dt, glm::vec3& position,
                         glm::quat& rotation) noexcept {
  const RootFrame& root = db.rootMotion()[frame];
  const glm::quat clip_rotation(root.rotation.w, root.rotation.x, root.rotation.y, root.rotation.z);
  const glm::quat clip_to_character = rotation * glm::inverse(clip_rotation);
  const glm::vec3 velocity(root.velocity.x, root.velocity.y, root.velocity.z);
  const glm::vec3 angular(root.angular_velocity.x, root.angular_velocity.y,
                          root.angular_velocity.z);
  position += clip_to_character * velocity * dt;
  const glm::vec3 spin = clip_to_character * angular * dt;
  const float angle = glm::length(spin);
  if (angle > 1e-9f) rotation = glm::normalize(glm::angleAxis(angle, spin / angle) * rotation);
}

void expressInCharacterFrame(const CharacterState& sim, const glm::vec3& character_position,
                             const glm::quat& character_rotation, float max_drift,
                             float trajectory[kTrajectoryFloats]) noexcept {
  glm::vec3 gap = sim.position - character_position;
  gap.y = 0.0f;
  const float gap_length = glm::length(gap);
  if (gap_length > max_drift) gap *= max_drift / gap_length;
  const glm::quat to_character = glm::inverse(character_rotation);
  constexpr int kDirections = 2 * kTrajectorySamples;
  for (int i = 0; i < kTrajectorySamples; ++i) {
    float* position = trajectory + 2 * i;
    float* direction = trajectory + kDirections + 2 * i;
    const glm::vec3 ahead = sim.rotation * glm::vec3(position[0], 0.0f, position[1]);
    const glm::vec3 local = to_character * (gap + ahead);
    position[0] = local.x;
    position[1] = local.z;
    const glm::vec3 facing =
        to_character * (sim.rotation * glm::vec3(direction[0], 0.0f, direction[1]));
    direction[0] = facing.x;
    direction[1] = facing.z;
  }
}

}  // namespace mmdb
