#include "mmdb/synchronization.h"

#include <cmath>
#include <cstdio>

namespace mmdb {
namespace {

constexpr float kLn2 = 0.69314718056f;
constexpr float kPi = 3.14159265359f;

glm::vec3 ground(const glm::vec3& v) { return {v.x, 0.f, v.z}; }

glm::quat yawRotation(float angle) {
  return glm::quat(std::cos(0.5f * angle), 0.f, std::sin(0.5f * angle), 0.f);
}

// Warping's fades: a clip root under kStillClip m/s is not warped, one at twice that fully; the
// turn fades out below kSlowWanted m/s wanted, and from 135 degrees (cos kBehindCos) to behind.
constexpr float kStillClip = 0.05f;
constexpr float kSlowWanted = 0.1f;
constexpr float kBehindCos = -0.70710678f;

// The share of a gap a damped adjustment closes in dt: 1 - 2^(-dt / halflife).
float dampedShare(float dt, float halflife) { return 1.f - std::exp(-kLn2 * dt / halflife); }

}  // namespace

float playRate(const SynchronizationSettings& settings, const glm::vec3& clip_velocity,
               const glm::vec3& sim_velocity) noexcept {
  if (settings.mode == Synchronization::None) return 1.f;
  if (settings.rate_min == 1.f && settings.rate_max == 1.f) return 1.f;
  const float clip = glm::length(ground(clip_velocity));
  if (!(clip > 0.1f)) return 1.f;
  float rate = glm::length(ground(sim_velocity)) / clip;
  rate = std::fmin(std::fmax(rate, settings.rate_min), settings.rate_max);
  return std::floor(rate * 64.f + 0.5f) / 64.f;
}

float yawAngle(const glm::quat& yaw) noexcept {
  const float w = yaw.w < 0 ? -yaw.w : yaw.w;
  const float y = yaw.w < 0 ? -yaw.y : yaw.y;
  return 2.f * std::atan2(y, w);
}

Status validateSynchronization(const char* what, const SynchronizationSettings& s) noexcept {
  const uint32_t mode = static_cast<uint32_t>(s.mode);
  if (mode > static_cast<uint32_t>(Synchronization::ControllerFollows))
    return Error::format(ErrorCode::InvalidArgument,
                         "%ssynchronization mode %u is unknown: 0 none, 1 the character follows "
                         "the controller, 2 the controller follows the character",
                         what, mode);
  const struct {
    const char* name;
    float value;
    float low;
    bool above;  // > low, else >= low
    float high;
  } checks[] = {{"position_halflife", s.position_halflife, 0.f, true, INFINITY},
                {"rotation_halflife", s.rotation_halflife, 0.f, true, INFINITY},
                {"position_ratio", s.position_ratio, 0.f, false, INFINITY},
                {"rotation_ratio", s.rotation_ratio, 0.f, false, INFINITY},
                {"max_distance", s.max_distance, 0.f, false, INFINITY},
                {"hard_distance", s.hard_distance, 0.f, false, INFINITY},
                {"max_angle", s.max_angle, 0.f, false, kPi},
                {"foot_reach", s.foot_reach, 0.f, false, INFINITY},
                {"rate_min", s.rate_min, 0.f, true, 4.f},
                {"stride_min", s.stride_min, 0.f, false, 1.f},
                {"stride_max", s.stride_max, 1.f, false, 4.f},
                {"warp_angle", s.warp_angle, 0.f, false, 0.5f * kPi},
                {"warp_halflife", s.warp_halflife, 0.f, true, INFINITY},
                {"rate_max", s.rate_max, 0.f, true, 4.f}};
  for (const auto& c : checks) {
    const bool fits = std::isfinite(c.value) && (c.above ? c.value > c.low : c.value >= c.low) &&
                      c.value <= c.high;
    if (!fits) {
      char most[32] = "";
      if (c.high == kPi)
        std::snprintf(most, sizeof most, " and at most pi");
      else if (c.high == 0.5f * kPi)
        std::snprintf(most, sizeof most, " and at most pi/2");
      else if (c.high < INFINITY)
        std::snprintf(most, sizeof most, " and at most %g", double(c.high));
      return Error::format(ErrorCode::InvalidArgument,
                           "%ssynchronization %s %g must be finite and %s %g%s", what, c.name,
                           double(c.value), c.above ? ">" : ">=", double(c.low), most);
    }
  }
  if (!(s.rate_max >= s.rate_min))
    return Error::format(ErrorCode::InvalidArgument,
                         "%ssynchronization rate_max %g must be at least rate_min %g", what,
                         double(s.rate_max), double(s.rate_min));
  return Status();
}

bool warpingOn(const SynchronizationSettings& s) noexcept {
  return s.mode == Synchronization::CharacterFollows &&
         (s.stride_min != 1.f || s.stride_max != 1.f || s.warp_angle > 0.f);
}

void stepGroundWarp(const SynchronizationSettings& settings, float dt,
                    const glm::vec3& clip_velocity, const glm::vec3& wanted_velocity,
                    GroundWarp& warp) noexcept {
  if (!warpingOn(settings)) {
    warp = GroundWarp{};
    return;
  }
  GroundWarp aim;
  const glm::vec2 clip(clip_velocity.x, clip_velocity.z);
  const glm::vec2 wanted(wanted_velocity.x, wanted_velocity.z);
  const float clip_speed = glm::length(clip);
  if (clip_speed > kStillClip) {
    const glm::vec2 d = clip / clip_speed;
    // The turn from the clip's direction to the wanted one, within warp_angle; then the stride
    // that brings the turned direction's speed to the wanted one's along it. The turn fades out
    // for a wanted velocity near zero or nearly behind (where turning left or right is a coin's
    // toss), so the aim never jumps.
    const float wanted_speed = glm::length(wanted);
    float angle = std::atan2(d.x * wanted.y - d.y * wanted.x, glm::dot(d, wanted));
    const float behind = std::fmin((1.f + std::cos(angle)) / (1.f + kBehindCos), 1.f);
    const float slow = std::fmin(wanted_speed / kSlowWanted, 1.f);
    angle = std::fmin(std::fmax(angle, -settings.warp_angle), settings.warp_angle) * behind * slow;
    const float c = std::cos(angle), s = std::sin(angle);
    const glm::vec2 turned(c * d.x - s * d.y, s * d.x + c * d.y);
    float stride = glm::dot(turned, wanted) / clip_speed;
    stride = std::fmin(std::fmax(stride, settings.stride_min), settings.stride_max);
    // scale along d: S = I + (stride - 1) d d^T; then the turn R: W = R S.
    const float sxx = 1.f + (stride - 1.f) * d.x * d.x, sxz = (stride - 1.f) * d.x * d.y;
    const float szz = 1.f + (stride - 1.f) * d.y * d.y;
    // R turns by `angle` in the (x, z) plane, from +X towards +Z as the angle above is measured.
    aim.xx = c * sxx - s * sxz;
    aim.xz = c * sxz - s * szz;
    aim.zx = s * sxx + c * sxz;
    aim.zz = s * sxz + c * szz;
    // From a nearly still clip root, the identity, continuously.
    const float moving = std::fmin((clip_speed - kStillClip) / kStillClip, 1.f);
    aim.xx = 1.f + (aim.xx - 1.f) * moving;
    aim.zx *= moving;
    aim.xz *= moving;
    aim.zz = 1.f + (aim.zz - 1.f) * moving;
  }
  const float share = dampedShare(dt, settings.warp_halflife);
  warp.xx += (aim.xx - warp.xx) * share;
  warp.xz += (aim.xz - warp.xz) * share;
  warp.zx += (aim.zx - warp.zx) * share;
  warp.zz += (aim.zz - warp.zz) * share;
}

void AdjustmentJob::Run() noexcept {
  const glm::vec3 start = position;
  const glm::quat start_rotation = rotation;
  moved = glm::vec3(0.f);
  turned = 0;
  if (!(dt > 0.f)) return;

  // The damped adjustment, at most a share of the step's own motion.
  glm::vec3 step = ground(sim_position - position) * dampedShare(dt, settings.position_halflife);
  const float most = settings.position_ratio * glm::length(ground(root_motion));
  const float length = glm::length(step);
  if (length > most) step *= length > 0.f ? most / length : 0.f;
  // Past max_distance, the rest of the way back to it too, as far as the feet allow.
  const glm::vec3 past = ground(position + step - sim_position);
  const float past_length = glm::length(past);
  if (past_length > settings.max_distance)
    step -= past * ((past_length - settings.max_distance) / past_length);
  float turn =
      yawAngle(sim_rotation * glm::inverse(rotation)) * dampedShare(dt, settings.rotation_halflife);
  const float most_turn = settings.rotation_ratio * std::fabs(root_turn);
  if (std::fabs(turn) > most_turn) turn = turn < 0.f ? -most_turn : most_turn;

  // Locked toes: the adjustment keeps each animated toe within foot_reach of its lock (or as
  // close as it already was), so the foot lock holds it and the legs reach it. The largest share
  // of the adjustment that does, to 1/65536 (fine halvings keep the CPU's and the GPU's answers
  // close where their rounding flips one).
  float limits[2] = {0.f, 0.f};
  for (uint32_t leg = 0; leg < 2; ++leg) {
    if (!(locked_legs & (1u << leg))) continue;
    const glm::vec3 d = ground(position + rotation * toes[leg] - locks[leg]);
    const float reach = std::fmax(glm::length(d), settings.foot_reach);
    limits[leg] = reach * reach;
  }
  const auto fits = [&](float share) {
    const glm::vec3 p = position + share * step;
    const glm::quat q = yawRotation(share * turn) * rotation;
    for (uint32_t leg = 0; leg < 2; ++leg) {
      if (!(locked_legs & (1u << leg))) continue;
      const glm::vec3 d = ground(p + q * toes[leg] - locks[leg]);
      if (glm::dot(d, d) > limits[leg]) return false;
    }
    return true;
  };
  float share = 1.f;
  if (locked_legs != 0 && !fits(1.f)) {
    float low = 0.f, high = 1.f;
    for (int i = 0; i < 16; ++i) {
      const float mid = 0.5f * (low + high);
      if (fits(mid))
        low = mid;
      else
        high = mid;
    }
    share = low;
  }
  position += share * step;
  rotation = glm::normalize(yawRotation(share * turn) * rotation);

  // The clamp: never further than hard_distance and max_angle from the simulation root.
  const glm::vec3 gap = ground(position - sim_position);
  const float distance = glm::length(gap);
  if (distance > settings.hard_distance) {
    const glm::vec3 kept = gap * (settings.hard_distance / distance);
    position = glm::vec3(sim_position.x + kept.x, position.y, sim_position.z + kept.z);
  }
  const float angle = yawAngle(rotation * glm::inverse(sim_rotation));
  if (std::fabs(angle) > settings.max_angle)
    rotation = glm::normalize(yawRotation(angle < 0.f ? -settings.max_angle : settings.max_angle) *
                              sim_rotation);

  moved = position - start;
  turned = yawAngle(rotation * glm::inverse(start_rotation));
}

}  // namespace mmdb
