// Inertialization: the offsets of a switch, their decay, and the pose they are added to.
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

void decayOffset(glm::vec3& x, glm::vec3& v, float halflife, float t) noexcept {
  const float y = springY(halflife);
  const glm::vec3 j = v + x * y;
  const float e = std::exp(-y * t);
  x = e * (x + j * t);
  v = e * (v - j * y * t);
}

void decayOffsetSplit(glm::vec3& x, glm::vec3& v, float halflife, float rate_halflife,
                      float t) noexcept {
  if (rate_halflife == halflife) return decayOffset(x, v, halflife, t);
  glm::vec3 x_part = x, v_part(0.f);  // the offset, still
  glm::vec3 x_rate(0.f), v_rate = v;  // its rate, from nothing
  decayOffset(x_part, v_part, halflife, t);
  decayOffset(x_rate, v_rate, rate_halflife, t);
  x = x_part + x_rate;
  v = v_part + v_rate;
}

glm::quat decayRotationSplit(const glm::quat& offset, glm::vec3& angular_velocity, float halflife,
                             float rate_halflife, float t) noexcept {
  if (rate_halflife == halflife) {  // one spring on the rotation vector, as the reference
    glm::vec3 x = toScaledAxis(quatAbs(offset));
    decayOffset(x, angular_velocity, halflife, t);
    return fromScaledAxis(x);
  }
  // Each part turns about a fixed axis (the offset's, the rate's), so its rotation vector's rate
  // is its angular velocity exactly.
  glm::vec3 x_part = toScaledAxis(quatAbs(offset)), v_part(0.f);
  glm::vec3 x_rate(0.f), v_rate = angular_velocity;
  decayOffset(x_part, v_part, halflife, t);
  decayOffset(x_rate, v_rate, rate_halflife, t);
  const glm::quat rate = fromScaledAxis(x_rate);
  angular_velocity = v_rate + rate * v_part;
  return glm::normalize(rate * fromScaledAxis(x_part));
}

// --- inertialization ---------------------------------------------------------------------------

Status InertializeTransitionJob::Validate() const noexcept {
  constexpr const char* job = "InertializeTransitionJob";
  if (!validHalflife(halflife) || !(rate_halflife >= 0.f) || !std::isfinite(rate_halflife))
    return Error(ErrorCode::InvalidArgument,
                 "InertializeTransitionJob: halflife must be > 0 and rate_halflife >= 0");
  if (!validTime(time_since_previous))
    return Error(ErrorCode::InvalidArgument,
                 "InertializeTransitionJob: time_since_previous must be finite and >= 0");
  const size_t n = offset_rotations.size();
  struct Named {
    const char* name;
    size_t size;
  };
  const Named all[] = {{"source_rotations", source_rotations.size()},
                       {"source_angular_velocities", source_angular_velocities.size()},
                       {"source_translations", source_translations.size()},
                       {"source_velocities", source_velocities.size()},
                       {"destination_rotations", destination_rotations.size()},
                       {"destination_angular_velocities", destination_angular_velocities.size()},
                       {"destination_translations", destination_translations.size()},
                       {"destination_velocities", destination_velocities.size()},
                       {"offset_angular_velocities", offset_angular_velocities.size()},
                       {"offset_translations", offset_translations.size()},
                       {"offset_velocities", offset_velocities.size()}};
  for (const Named& a : all)
    if (a.size != n) return sizeError(job, a.name, a.size, n);
  return {};
}

Status InertializeTransitionJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  detail::runInertializeTransition(*this);
  return {};
}

Status InertializeJob::Validate() const noexcept {
  constexpr const char* job = "InertializeJob";
  if (!validHalflife(halflife) || !(rate_halflife >= 0.f) || !std::isfinite(rate_halflife))
    return Error(ErrorCode::InvalidArgument,
                 "InertializeJob: halflife must be > 0 and rate_halflife >= 0");
  if (!validTime(time_since_switch))
    return Error(ErrorCode::InvalidArgument,
                 "InertializeJob: time_since_switch must be finite and >= 0");
  const size_t n = rotations.size();
  struct Named {
    const char* name;
    size_t size;
  };
  const Named all[] = {{"translations", translations.size()},
                       {"offset_rotations", offset_rotations.size()},
                       {"offset_angular_velocities", offset_angular_velocities.size()},
                       {"offset_translations", offset_translations.size()},
                       {"offset_velocities", offset_velocities.size()},
                       {"out_rotations", out_rotations.size()},
                       {"out_translations", out_translations.size()}};
  for (const Named& a : all)
    if (a.size != n) return sizeError(job, a.name, a.size, n);
  return {};
}

Status InertializeJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  detail::runInertialize(*this);
  return {};
}

// Each spring's offset after t seconds is e (x + (v + y x) t) = x e (1 + y t) + v e t: two
// weights for every joint. With one spring a joint the rotation offset is the rotation vector
// of the offset and its rate so weighed; with the split decay (decayRotationSplit) the rate's
// rotation, from its own spring, is composed onto the offset's.
void detail::runInertialize(const InertializeJob& job, const glm::vec3* offset_vectors) noexcept {
  const float t = job.time_since_switch;
  const float y = springY(job.halflife);
  const float e = std::exp(-y * t);
  const bool split = rateHalflife(job.halflife, job.rate_halflife) != job.halflife;
  const float e_rate = split ? std::exp(-springY(job.rate_halflife) * t) : e;
  const F4 offset_weight = splat(e * (1.f + y * t));
  const F4 rate_weight = splat(e_rate * t);
  const size_t n = job.rotations.size();
  for (size_t j = 0; j < n; j += 4) {
    const size_t count = std::min<size_t>(4, n - j);
    const V4 offset =
        offset_vectors
            ? gatherVectors(offset_vectors + j, count)
            : toScaledAxes(positive(gatherQuats(job.offset_rotations.data() + j, count)));
    const V4 rate = gatherVectors(job.offset_angular_velocities.data() + j, count);
    const Q4 rotation_offset =
        split ? fromScaledAxes(rate_weight * rate) * fromScaledAxes(offset_weight * offset)
              : fromScaledAxes(offset_weight * offset + rate_weight * rate);
    const Q4 rotation = normalized(rotation_offset * gatherQuats(job.rotations.data() + j, count));
    const V4 translation =
        gatherVectors(job.translations.data() + j, count) +
        offset_weight * gatherVectors(job.offset_translations.data() + j, count) +
        rate_weight * gatherVectors(job.offset_velocities.data() + j, count);
    scatter(rotation, translation, job.out_rotations.data() + j, job.out_translations.data() + j,
            count);
  }
}

// --- the switch's offsets, four joints at once ---------------------------------------------------

namespace {

// A critically damped spring's offset x and rate v after t seconds (decayOffset), with its
// y and e = exp(-y t) given (the same for every joint).
inline void decay(V4& x, V4& v, F4 y, F4 e, F4 t) {
  const V4 j = v + y * x;
  x = e * (x + t * j);
  v = e * (v - (y * t) * j);
}

}  // namespace

// InertializeTransitionJob::Run()'s work: per joint, the offsets showing (decayed to now, as
// decayRotationSplit() and decayOffsetSplit() decay them) carried onto the switch, four joints
// at once, with the rotations' arc tangents, sines and cosines from polynomials (within about
// 1e-6 of the library's); each spring's exponential once for all joints.
void detail::runInertializeTransition(const InertializeTransitionJob& job,
                                      glm::vec3* offset_vectors) noexcept {
  const float t = job.time_since_previous;
  const float halflife = job.halflife, rate = rateHalflife(job.halflife, job.rate_halflife);
  const bool split = rate != halflife;
  const float y_offset = springY(halflife), y_rate = springY(rate);
  const F4 time = splat(t), y = splat(y_offset), e = splat(std::exp(-y_offset * t));
  const F4 yr = splat(y_rate), er = split ? splat(std::exp(-y_rate * t)) : e;
  const V4 zero{splat(0.f), splat(0.f), splat(0.f)};
  const size_t n = job.offset_rotations.size();
  for (size_t j = 0; j < n; j += 4) {
    const size_t count = std::min<size_t>(4, n - j);
    // What was showing: the previous offsets decayed to now.
    V4 angular = gatherVectors(job.offset_angular_velocities.data() + j, count);
    const V4 scaled = toScaledAxes(positive(gatherQuats(job.offset_rotations.data() + j, count)));
    Q4 previous;
    V4 translation = gatherVectors(job.offset_translations.data() + j, count);
    V4 velocity = gatherVectors(job.offset_velocities.data() + j, count);
    if (!split) {
      V4 x = scaled;
      decay(x, angular, y, e, time);
      previous = fromScaledAxes(x);
      decay(translation, velocity, y, e, time);
    } else {
      // The offset and its rate each on its own spring, the rate's rotation composed onto the
      // offset's (decayRotationSplit).
      V4 x_part = scaled, v_part = zero, x_rate = zero, v_rate = angular;
      decay(x_part, v_part, y, e, time);
      decay(x_rate, v_rate, yr, er, time);
      const Q4 turn = fromScaledAxes(x_rate);
      angular = v_rate + rotate(turn, v_part);
      previous = normalized(turn * fromScaledAxes(x_part));
      V4 tx_part = translation, tv_part = zero, tx_rate = zero, tv_rate = velocity;
      decay(tx_part, tv_part, y, e, time);
      decay(tx_rate, tv_rate, yr, er, time);
      translation = tx_part + tx_rate;
      velocity = tv_part + tv_rate;
    }
    const Q4 source = gatherQuats(job.source_rotations.data() + j, count);
    const Q4 destination = gatherQuats(job.destination_rotations.data() + j, count);
    const Q4 offset = normalized(positive(previous * source * inverse(destination)));
    // Angular velocity shown = offset velocity + offset rotation applied to the pose's velocity
    // (as InertializeJob shows it), so keep that sum unchanged across the switch.
    const V4 source_angular = gatherVectors(job.source_angular_velocities.data() + j, count);
    const V4 destination_angular =
        gatherVectors(job.destination_angular_velocities.data() + j, count);
    const V4 offset_angular = job.unrotated_rates ? (angular + source_angular) - destination_angular
                                                  : (angular + rotate(previous, source_angular)) -
                                                        rotate(offset, destination_angular);
    scatterQuats(offset, job.offset_rotations.data() + j, count);
    scatterVectors(offset_angular, job.offset_angular_velocities.data() + j, count);
    scatterVectors((gatherVectors(job.source_translations.data() + j, count) + translation) -
                       gatherVectors(job.destination_translations.data() + j, count),
                   job.offset_translations.data() + j, count);
    scatterVectors((gatherVectors(job.source_velocities.data() + j, count) + velocity) -
                       gatherVectors(job.destination_velocities.data() + j, count),
                   job.offset_velocities.data() + j, count);
    if (offset_vectors) scatterVectors(toScaledAxes(offset), offset_vectors + j, count);
  }
}

}  // namespace mmdb
