// Placing a crowd's characters, and the checks of what places and steers them.
#include "mmdb/crowd.h"

#include "crowd/spans.h"
#include "mmdb/playback.h"
#include "playback/playback_run.h"
#include "playback/rotation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

namespace mmdb {
namespace {

using detail::slice;

bool finite(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// The turn about +Y of a rotation (its twist about Y), normalized; false when it has none: not
// finite, zero, or a half turn about a horizontal axis.
bool yawOf(const glm::quat& q, glm::quat& yaw) {
  if (!std::isfinite(q.w) || !std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z))
    return false;
  // Scaled by its largest component first, so that no square overflows or underflows: any
  // scale of a rotation keeps its yaw.
  const float largest = std::fmax(std::fmax(std::fabs(q.w), std::fabs(q.x)),
                                  std::fmax(std::fabs(q.y), std::fabs(q.z)));
  if (!(largest > 0.f)) return false;
  const float w = q.w / largest, y = q.y / largest;
  const float length = std::sqrt(w * w + y * y);
  if (!(length > 1e-6f)) return false;
  yaw = glm::quat(w / length, 0.f, y / length, 0.f);
  return true;
}

// Whether every component of v is at most `limit` in size (and finite), and its length too.
bool within(const glm::vec3& v, float limit) {
  if (!(std::fabs(v.x) <= limit && std::fabs(v.y) <= limit && std::fabs(v.z) <= limit))
    return false;
  return double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z <= double(limit) * limit;
}

}  // namespace

Status checkPlacement(const char* what, uint32_t character, const glm::vec3& position,
                      const glm::quat& rotation, glm::quat& yaw) noexcept {
  if (!finite(position))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's position (%g, %g, %g) is not finite", what,
                         character, double(position.x), double(position.y), double(position.z));
  if (!(std::fabs(position.x) <= kMaxCrowdCoordinate &&
        std::fabs(position.y) <= kMaxCrowdCoordinate &&
        std::fabs(position.z) <= kMaxCrowdCoordinate))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's position (%g, %g, %g) has a coordinate beyond %g m",
                         what, character, double(position.x), double(position.y),
                         double(position.z), double(kMaxCrowdCoordinate));
  if (!yawOf(rotation, yaw))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's rotation (%g, %g, %g, %g) has no turn about +Y to "
                         "take (not finite, zero, or a half turn about a horizontal axis)",
                         what, character, double(rotation.x), double(rotation.y),
                         double(rotation.z), double(rotation.w));
  return Status();
}

Status checkCrowdDt(const char* what, float dt) noexcept {
  if (!(dt >= 0.f && dt <= kMaxCrowdDt))
    return Error::format(ErrorCode::InvalidArgument, "%.60s: dt %g s must be finite and 0 to %g s",
                         what, double(dt), double(kMaxCrowdDt));
  return Status();
}

Status checkStick(const char* what, uint32_t character, float& x, float& z) noexcept {
  if (!(std::fabs(x) <= kMaxStickLength && std::fabs(z) <= kMaxStickLength) ||
      !(x * x + z * z <= kMaxStickLength * kMaxStickLength))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's stick (%g, %g) is not finite or longer than %g (a "
                         "stick is at most 1 long; up to %g it is scaled to 1)",
                         what, character, double(x), double(z), double(kMaxStickLength),
                         double(kMaxStickLength));
  const float length = std::sqrt(x * x + z * z);
  if (length > 1.0f) {
    x /= length;
    z /= length;
  }
  return Status();
}

Status checkStickInput(const char* what, uint32_t character, const glm::vec3& velocity,
                       const glm::vec3& facing) noexcept {
  if (!within(glm::vec3(velocity.x, 0.f, velocity.z), kMaxCrowdSpeed))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's desired velocity (%g, %g) m/s is not finite or "
                         "faster than %g m/s",
                         what, character, double(velocity.x), double(velocity.z),
                         double(kMaxCrowdSpeed));
  if (!(std::fabs(facing.x) <= kMaxCrowdFacing && std::fabs(facing.z) <= kMaxCrowdFacing))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's desired facing (%g, %g) is not finite or has a "
                         "component beyond %g (only its direction counts)",
                         what, character, double(facing.x), double(facing.z),
                         double(kMaxCrowdFacing));
  return Status();
}

Status checkSimulation(const char* what, uint32_t character, const CharacterState& state,
                       glm::quat& yaw) noexcept {
  const struct {
    const char* name;
    const glm::vec3& value;
    float limit;
    const char* unit;
  } rates[] = {{"velocity", state.velocity, kMaxCrowdSpeed, "m/s"},
               {"acceleration", state.acceleration, kMaxCrowdAcceleration, "m/s^2"},
               {"angular velocity", state.angular_velocity, kMaxCrowdAngularVelocity, "rad/s"}};
  for (const auto& r : rates)
    if (!within(r.value, r.limit))
      return Error::format(
          ErrorCode::InvalidArgument,
          "%.60s: character %u's %.20s (%g, %g, %g) %.8s is not finite or beyond %g %.8s", what,
          character, r.name, double(r.value.x), double(r.value.y), double(r.value.z), r.unit,
          double(r.limit), r.unit);
  return checkPlacement(what, character, state.position, state.rotation, yaw);
}

Status checkCrowdSize(const char* what, uint32_t character_count) noexcept {
  if (character_count == 0)
    return Error::format(ErrorCode::InvalidArgument, "%.60s: a crowd needs at least one character",
                         what);
  if (character_count > kMaxCrowdCharacters)
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: %u characters are more than a crowd holds (at most %u)", what,
                         character_count, kMaxCrowdCharacters);
  return Status();
}

Status checkControllerSettings(const char* what, float max_speed,
                               float controller_halflife) noexcept {
  if (!(std::fabs(max_speed) <= kMaxCrowdSpeed))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: max_speed %g m/s must be finite and at most %g m/s in size", what,
                         double(max_speed), double(kMaxCrowdSpeed));
  if (!(controller_halflife >= kMinControllerHalflife &&
        controller_halflife <= kMaxControllerHalflife))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: controller_halflife %g s must be finite and %g to %g s", what,
                         double(controller_halflife), double(kMinControllerHalflife),
                         double(kMaxControllerHalflife));
  return Status();
}

Status Crowd::teleport(uint32_t character, const glm::vec3& position,
                       const glm::quat& rotation) noexcept {
  if (Status s = checkBetweenSteps(character, "teleport"); !s) return s;
  glm::quat yaw;
  if (Status s = checkPlacement("teleport", character, position, rotation, yaw); !s) return s;
  CrowdCharacter& ch = characters_[character];
  // The rigid move that takes the achieved transform to the new one carries the simulation too.
  const glm::quat turn = glm::normalize(yaw * glm::inverse(ch.achieved_rotation));
  CharacterState& sim = ch.sim;
  sim.position = position + turn * (sim.position - ch.achieved_position);
  sim.rotation = glm::normalize(turn * sim.rotation);
  sim.velocity = turn * sim.velocity;
  sim.acceleration = turn * sim.acceleration;
  sim.angular_velocity = turn * sim.angular_velocity;
  ch.achieved_position = position;
  ch.achieved_rotation = yaw;
  for (FootLock& f : slice(feet_, character, kLegCount)) f = FootLock{};
  return Status();
}

Status Crowd::place(uint32_t character, const glm::vec3& position,
                    const glm::quat& rotation) noexcept {
  if (Status s = checkBetweenSteps(character, "place"); !s) return s;
  glm::quat yaw;
  if (Status s = checkPlacement("place", character, position, rotation, yaw); !s) return s;
  CrowdCharacter& ch = characters_[character];
  // The feet held in the world stay, their legs bent to them again at once: the pose a game draws
  // after the placing has its held toes where they were, not carried along by it.
  ch.achieved_position = position;
  ch.achieved_rotation = yaw;
  if (settings_.foot_locking && ch.playing) {
    FootLockJob job;
    job.parents = db_->parents();
    job.legs = Span<const LegChain>(legs_.data(), legs_.size());
    job.settings = foot_settings_;
    job.position = ch.achieved_position;
    job.rotation = ch.achieved_rotation;
    job.hold_only = true;
    job.feet = slice(feet_, character, kLegCount);
    job.local_rotations = slice(local_rotations_, character, joints_);
    job.local_translations = slice(local_translations_, character, joints_);
    job.model_rotations = slice(model_rotations_, character, joints_);
    job.model_translations = slice(model_translations_, character, joints_);
    detail::runFootLock4(&job, 1);
  }
  return Status();
}

Status Crowd::setSimulation(uint32_t character, const CharacterState& state) noexcept {
  if (Status s = checkBetweenSteps(character, "setSimulation"); !s) return s;
  glm::quat yaw;
  if (!finite(state.position) || !finite(state.velocity) || !finite(state.acceleration) ||
      !finite(state.angular_velocity))
    return Error::format(ErrorCode::InvalidArgument,
                         "setSimulation: character %u's state is not finite", character);
  if (Status s = checkSimulation("setSimulation", character, state, yaw); !s) return s;
  characters_[character].sim = state;
  characters_[character].sim.rotation = yaw;
  return Status();
}

}  // namespace mmdb
