// Pose sampling, inertialization and forward kinematics on the CPU.
#include "mmdb/playback.h"

#include "rotation.h"

#include <cmath>

namespace mmdb {
namespace {

using detail::fromScaledAxis;
using detail::quatAbs;
using detail::springY;
using detail::toScaledAxis;

glm::quat toQuat(const Float4& q) { return glm::quat(q.w, q.x, q.y, q.z); }
glm::vec3 toVec3(const Float4& v) { return glm::vec3(v.x, v.y, v.z); }

template <class A, class B>
bool sameSize(const A& a, const B& b) {
  return a.size() == b.size();
}

Status sizeError(const char* job, const char* what, size_t actual, size_t expected) {
  return Error::format(ErrorCode::InvalidArgument, "%s: %s has %zu elements, expected %zu", job,
                       what, actual, expected);
}

// Decays a rotation offset (as a rotation vector) and its angular velocity by t seconds.
glm::quat decayRotation(const glm::quat& offset, glm::vec3& angular_velocity, float halflife,
                        float t) {
  glm::vec3 x = toScaledAxis(quatAbs(offset));
  decayOffset(x, angular_velocity, halflife, t);
  return fromScaledAxis(x);
}

bool validHalflife(float h) { return std::isfinite(h) && h > 0; }
bool validTime(float t) { return std::isfinite(t) && t >= 0; }

}  // namespace

void decayOffset(glm::vec3& x, glm::vec3& v, float halflife, float t) noexcept {
  const float y = springY(halflife);
  const glm::vec3 j = v + x * y;
  const float e = std::exp(-y * t);
  x = e * (x + j * t);
  v = e * (v - j * y * t);
}

// --- sampling ----------------------------------------------------------------------------------

Status SamplePoseJob::Validate() const noexcept {
  constexpr const char* job = "SamplePoseJob";
  if (!database || !database->valid())
    return Error(ErrorCode::InvalidArgument, "SamplePoseJob: no database");
  if (clip >= database->clipCount())
    return Error::format(ErrorCode::InvalidArgument, "SamplePoseJob: clip %u of %u", clip,
                         database->clipCount());
  if (!std::isfinite(time))
    return Error(ErrorCode::InvalidArgument, "SamplePoseJob: time is not finite");
  const size_t joints = database->jointCount();
  const PoseView view = poses.frame_count ? poses : database->rawPoses();
  if (view.frame_count == 0)
    return Error(ErrorCode::InvalidArgument,
                 "SamplePoseJob: the database's pose streams are coded; decode them with "
                 "Database::decodePoses() and pass them as poses");
  const ClipInfo c = database->clip(clip);
  if (!view.covers(c.first_frame, c.frame_count))
    return Error::format(
        ErrorCode::InvalidArgument,
        "SamplePoseJob: poses hold global frames [%u, %llu), not all of clip %u's "
        "[%u, %llu)",
        view.first_frame, (unsigned long long)(uint64_t(view.first_frame) + view.frame_count), clip,
        c.first_frame, (unsigned long long)(uint64_t(c.first_frame) + c.frame_count));
  const size_t elements = size_t(view.frame_count) * joints;
  if (view.rotations.size() != elements)
    return sizeError(job, "poses.rotations", view.rotations.size(), elements);
  if (view.translations.size() != elements)
    return sizeError(job, "poses.translations", view.translations.size(), elements);
  if (!velocities.empty() && view.velocities.size() != elements)
    return sizeError(job, "poses.velocities", view.velocities.size(), elements);
  if (!angular_velocities.empty() && view.angular_velocities.size() != elements)
    return sizeError(job, "poses.angular_velocities", view.angular_velocities.size(), elements);
  if (rotations.size() != joints) return sizeError(job, "rotations", rotations.size(), joints);
  if (translations.size() != joints)
    return sizeError(job, "translations", translations.size(), joints);
  if (!velocities.empty() && velocities.size() != joints)
    return sizeError(job, "velocities", velocities.size(), joints);
  if (!angular_velocities.empty() && angular_velocities.size() != joints)
    return sizeError(job, "angular_velocities", angular_velocities.size(), joints);
  return {};
}

Status SamplePoseJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  const ClipInfo c = database->clip(clip);
  const float last = float(c.frame_count - 1);
  const float key = std::fmin(std::fmax(time * database->frameRate(), 0.f), last);
  const uint32_t k0 = uint32_t(key);
  const uint32_t k1 = k0 + 1 < c.frame_count ? k0 + 1 : k0;
  const float alpha = key - float(k0);
  const size_t joints = database->jointCount();
  const PoseView view = poses.frame_count ? poses : database->rawPoses();
  const size_t row = size_t(c.first_frame) - view.first_frame;
  const size_t a = (row + k0) * joints;
  const size_t b = (row + k1) * joints;
  const Span<const Float4> rot = view.rotations;
  const Span<const Float4> pos = view.translations;
  const Span<const Float4> vel = view.velocities;
  const Span<const Float4> ang = view.angular_velocities;
  for (size_t j = 0; j < joints; ++j) {
    rotations[j] = glm::slerp(toQuat(rot[a + j]), toQuat(rot[b + j]), alpha);  // shorter arc
    translations[j] = glm::mix(toVec3(pos[a + j]), toVec3(pos[b + j]), alpha);
    if (!velocities.empty())
      velocities[j] = glm::mix(toVec3(vel[a + j]), toVec3(vel[b + j]), alpha);
    if (!angular_velocities.empty())
      angular_velocities[j] = glm::mix(toVec3(ang[a + j]), toVec3(ang[b + j]), alpha);
  }
  return {};
}

Result<ClipTime> clipTimeOfFrame(const Database& db, uint32_t global_frame) noexcept {
  const int32_t clip = db.valid() ? db.clipOfFrame(global_frame) : -1;
  if (clip < 0)
    return Error::format(ErrorCode::InvalidArgument, "global frame %u is in no clip", global_frame);
  ClipTime t;
  t.clip = uint32_t(clip);
  t.time = float(global_frame - db.clip(t.clip).first_frame) / db.frameRate();
  return t;
}

// --- inertialization ---------------------------------------------------------------------------

Status InertializeTransitionJob::Validate() const noexcept {
  constexpr const char* job = "InertializeTransitionJob";
  if (!validHalflife(halflife))
    return Error(ErrorCode::InvalidArgument, "InertializeTransitionJob: halflife must be > 0");
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
  for (size_t j = 0; j < offset_rotations.size(); ++j) {
    // What was showing: the source plus the previous offsets, decayed to now.
    glm::vec3 angular = offset_angular_velocities[j];
    const glm::quat previous =
        decayRotation(offset_rotations[j], angular, halflife, time_since_previous);
    glm::vec3 translation = offset_translations[j], velocity = offset_velocities[j];
    decayOffset(translation, velocity, halflife, time_since_previous);

    const glm::quat offset = glm::normalize(
        quatAbs(previous * source_rotations[j] * glm::inverse(destination_rotations[j])));
    // Angular velocity shown = offset velocity + offset rotation applied to the pose's velocity
    // (as InertializeJob shows it), so keep that sum unchanged across the switch.
    offset_angular_velocities[j] = (angular + previous * source_angular_velocities[j]) -
                                   offset * destination_angular_velocities[j];
    offset_rotations[j] = offset;
    offset_translations[j] = (source_translations[j] + translation) - destination_translations[j];
    offset_velocities[j] = (source_velocities[j] + velocity) - destination_velocities[j];
  }
  return {};
}

Status InertializeJob::Validate() const noexcept {
  constexpr const char* job = "InertializeJob";
  if (!validHalflife(halflife))
    return Error(ErrorCode::InvalidArgument, "InertializeJob: halflife must be > 0");
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
  for (size_t j = 0; j < rotations.size(); ++j) {
    glm::vec3 angular = offset_angular_velocities[j];
    const glm::quat offset =
        decayRotation(offset_rotations[j], angular, halflife, time_since_switch);
    glm::vec3 translation = offset_translations[j], velocity = offset_velocities[j];
    decayOffset(translation, velocity, halflife, time_since_switch);
    out_rotations[j] = glm::normalize(offset * rotations[j]);
    out_translations[j] = translations[j] + translation;
  }
  return {};
}

// --- forward kinematics ------------------------------------------------------------------------

Status ForwardKinematicsJob::Validate() const noexcept {
  constexpr const char* job = "ForwardKinematicsJob";
  const size_t n = parents.size();
  if (local_rotations.size() != n)
    return sizeError(job, "local_rotations", local_rotations.size(), n);
  if (local_translations.size() != n)
    return sizeError(job, "local_translations", local_translations.size(), n);
  if (model_rotations.size() != n)
    return sizeError(job, "model_rotations", model_rotations.size(), n);
  if (model_translations.size() != n)
    return sizeError(job, "model_translations", model_translations.size(), n);
  for (size_t j = 0; j < n; ++j)
    if (parents[j] < -1 || parents[j] >= int64_t(j))
      return Error::format(ErrorCode::InvalidArgument,
                           "ForwardKinematicsJob: joint %zu has parent %d; a parent must precede "
                           "its child",
                           j, parents[j]);
  return {};
}

Status ForwardKinematicsJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  for (size_t j = 0; j < parents.size(); ++j) {
    const int32_t p = parents[j];
    const glm::quat parent_rotation = p < 0 ? root_rotation : model_rotations[size_t(p)];
    const glm::vec3 parent_position = p < 0 ? root_position : model_translations[size_t(p)];
    model_translations[j] = parent_position + parent_rotation * local_translations[j];
    model_rotations[j] = glm::normalize(parent_rotation * local_rotations[j]);
  }
  return {};
}

}  // namespace mmdb
