// The character controller: a critically damped spring (Holden's spring character update) that
// moves the simulation root towards the stick, and predicts the trajectory part of a query.
//
// Conventions: world space is right-handed, Y up; the character faces +Z of its rotation, which
// is a pure yaw. The spring is evaluated in closed form, so one update over dt equals any number
// of smaller updates that add up to dt.
#pragma once

#include "mmdb/database.h"
#include "mmdb/result.h"
#include "mmdb/span.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

namespace mmdb {

// Number of trajectory floats in a query: 3 future positions (x, z), then 3 facings (x, z).
inline constexpr int kTrajectoryFloats = 12;
inline constexpr int kTrajectorySamples = 3;

struct ControllerSettings {
  float position_halflife = 0.27f;  // s: velocity reaches half-way to the stick in this time
  float rotation_halflife = 0.27f;  // s: same for the facing
  float times[kTrajectorySamples] = {1.f / 3, 2.f / 3, 1.f};  // s ahead (the file's, usually)
  // The springs in Holden's reference controller's arithmetic (CrowdSettings::
  // reference_arithmetic): its approximate exponential 1 / (1 + x + 0.48 x^2 + 0.235 x^3), 1e-5 s
  // added to each half-life, a rotation's angle from acos(w), and the trajectory's positions
  // stepped from sample to sample (its rotations jump from now, as the reference's do). Off: exact.
  bool reference_arithmetic = false;
};

// What the player asks for, in world space.
struct StickInput {
  glm::vec3 desired_velocity{0.f};          // m/s, y ignored
  glm::vec3 desired_facing{0.f, 0.f, 1.f};  // direction to face, y ignored; zero keeps facing
};

// The simulation root's state, in world space.
struct CharacterState {
  glm::vec3 position{0.f};
  glm::vec3 velocity{0.f};
  glm::vec3 acceleration{0.f};
  glm::quat rotation{1.f, 0.f, 0.f, 0.f};  // pure yaw
  glm::vec3 angular_velocity{0.f};         // scaled axis, rad/s
};

// The yaw rotation that turns +Z onto `facing` (ground-projected); identity for a zero vector.
glm::quat facingRotation(const glm::vec3& facing) noexcept;

// Advances the state by dt seconds towards the stick (an exact spring, any dt >= 0; the
// reference's approximation with settings.reference_arithmetic).
void updateCharacter(CharacterState& state, const StickInput& stick,
                     const ControllerSettings& settings, float dt) noexcept;

// The 12 trajectory floats for a query, in the character's frame (its position and rotation
// now): positions (x, z) at times[0..2], then facings (x, z) at times[0..2]. Raw units, the
// order of the file's TrajectoryPosition and TrajectoryDirection blocks.
void predictTrajectory(const CharacterState& state, const StickInput& stick,
                       const ControllerSettings& settings,
                       float trajectory[kTrajectoryFloats]) noexcept;

// The animated character: where the root motion of the frames it played took it. The controller
// runs ahead of it (CharacterState); the two drift apart and the query pulls them together.
//
// Moves (position, rotation) by dt seconds of global frame `frame`'s root velocity and angular
// velocity, taken from its clip's world into the character's (the rotation stays pure yaw).
// `frame` must be below db.frameCount().
void integrateRootMotion(const Database& db, uint32_t frame, float dt, glm::vec3& position,
                         glm::quat& rotation) noexcept;

// predictTrajectory() describes the trajectory from the controller (the simulation root). A query
// must describe it from where the animated character is and faces, as Holden's controller does:
// when the character drifts from the simulation, the trajectory bends back towards it and the
// search picks motion that corrects the drift. Rewrites the 12 floats so; the position gap it
// asks to close is capped at max_drift metres, so a database that cannot keep up (no run in it)
// is not queried with ever longer trajectories. The GPU crowd's build_query does the same.
void expressInCharacterFrame(const CharacterState& sim, const glm::vec3& character_position,
                             const glm::quat& character_rotation, float max_drift,
                             float trajectory[kTrajectoryFloats]) noexcept;

// A full normalized query: the pose columns (every column outside the trajectory blocks) are
// copied from the normalized row of current_frame (so the pose part needs no arithmetic and
// matches that row exactly), and the 12 raw trajectory floats are normalized with the file's
// offset and scale into the columns of its TrajectoryPosition and TrajectoryDirection blocks.
// With current_frame == -1 the pose columns are 0 (the database mean).
// InvalidArgument when `query` is not featureCount() long, current_frame is out of range, or the
// file has no 6-wide trajectory blocks.
Status buildQuery(const Database& db, int32_t current_frame,
                  const float trajectory[kTrajectoryFloats], Span<float> query) noexcept;

}  // namespace mmdb
