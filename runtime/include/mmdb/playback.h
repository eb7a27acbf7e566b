// CPU playback: sample a pose, inertialize transitions, forward kinematics. These are the
// reference twins of the GPU sample, inertialize and pose passes.
//
// Each is a job: a struct of inputs and outputs (spans the caller owns, sized jointCount()),
// Validate() to check them and Run() to do the work. Run() validates first and returns the
// error instead of touching the outputs. Nothing allocates; outputs never alias inputs unless a
// comment says so.
#pragma once

#include "mmdb/database.h"
#include "mmdb/result.h"
#include "mmdb/span.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <cstdint>

namespace mmdb {

inline constexpr float kDefaultInertializationHalflife = 0.1f;  // s

// The pose of one clip at a clip-local time, at the uniform layout: key = time * rate; the
// two keys around it are blended (rotations slerp along the shorter arc, translations and
// velocities lerp). Time is clamped to [0, (frame_count - 1) / rate]: never crosses clip ends.
// It reads `poses`, which must hold the clip's frames: memory Database::decodePoses() filled, or
// left empty for the file's own streams when they are raw (Database::rawPoses()).
struct SamplePoseJob {
  const Database* database = nullptr;
  PoseView poses;  // empty: database->rawPoses()
  uint32_t clip = 0;
  float time = 0;                      // clip-local seconds
  Span<glm::quat> rotations;           // out, local
  Span<glm::vec3> translations;        // out, local
  Span<glm::vec3> velocities;          // out, local m/s; may be empty
  Span<glm::vec3> angular_velocities;  // out, local scaled axis rad/s; may be empty

  Status Validate() const noexcept;
  Status Run() const noexcept;
};

// Where a global frame is: its clip and clip-local time. InvalidArgument when out of range.
struct ClipTime {
  uint32_t clip = 0;
  float time = 0;
};
Result<ClipTime> clipTimeOfFrame(const Database& db, uint32_t global_frame) noexcept;

// The critically damped decay of an offset x with velocity v, after t seconds, in closed form
// (Holden's decay_spring_damper_exact): y = 2 ln 2 / halflife, j = v + x y,
// x(t) = e^(-y t) (x + j t), v(t) = e^(-y t) (v - j y t).
void decayOffset(glm::vec3& x, glm::vec3& v, float halflife, float t) noexcept;

// At a switch: capture per joint the offset between the pose that was showing (source, as
// sampled, plus the previous offsets decayed by time_since_previous) and the destination pose,
// so that showing destination + offset is continuous in position and velocity:
//   rotation offset    = (decayed previous offset * source rotation) * inverse(destination),
//                        on the shorter arc;
//   angular velocity   = (decayed previous angular offset + decayed previous rotation offset
//                        * source angular velocity) - rotation offset * destination angular
//                        velocity, so the shown angular velocity (InertializeJob) is unchanged;
//   translation        = (source + decayed previous offset) - destination, same for velocity.
// The offset spans are read (previous switch) and written (this switch) in place; for the
// first switch pass identity/zero offsets (or any offsets with a large time_since_previous).
struct InertializeTransitionJob {
  float halflife = kDefaultInertializationHalflife;
  float time_since_previous = 0;  // s since the previous switch, >= 0
  Span<const glm::quat> source_rotations;
  Span<const glm::vec3> source_angular_velocities;
  Span<const glm::vec3> source_translations;
  Span<const glm::vec3> source_velocities;
  Span<const glm::quat> destination_rotations;
  Span<const glm::vec3> destination_angular_velocities;
  Span<const glm::vec3> destination_translations;
  Span<const glm::vec3> destination_velocities;
  Span<glm::quat> offset_rotations;           // in/out
  Span<glm::vec3> offset_angular_velocities;  // in/out
  Span<glm::vec3> offset_translations;        // in/out
  Span<glm::vec3> offset_velocities;          // in/out

  Status Validate() const noexcept;
  Status Run() const noexcept;
};

// Every frame: the pose to show = the pose sampled now + the captured offsets decayed by the
// time since the switch (evaluated analytically, so no per-frame state is integrated):
//   rotation = decayed rotation offset * rotation, translation = translation + decayed offset.
// The rotation offset decays as a rotation vector (scaled axis) with its angular velocity.
// Outputs may alias the pose inputs.
struct InertializeJob {
  float halflife = kDefaultInertializationHalflife;
  float time_since_switch = 0;  // s, >= 0
  Span<const glm::quat> rotations;
  Span<const glm::vec3> translations;
  Span<const glm::quat> offset_rotations;  // as captured at the switch
  Span<const glm::vec3> offset_angular_velocities;
  Span<const glm::vec3> offset_translations;
  Span<const glm::vec3> offset_velocities;
  Span<glm::quat> out_rotations;
  Span<glm::vec3> out_translations;

  Status Validate() const noexcept;
  Status Run() const noexcept;
};

// Local -> model (or world) space: model[j] = model[parent[j]] * local[j], roots placed by
// root_rotation and root_position (the simulation root; identity gives model space).
struct ForwardKinematicsJob {
  Span<const int32_t> parents;  // parents[j] < j, -1 for a root (Database::parents())
  Span<const glm::quat> local_rotations;
  Span<const glm::vec3> local_translations;
  glm::quat root_rotation{1.f, 0.f, 0.f, 0.f};
  glm::vec3 root_position{0.f};
  Span<glm::quat> model_rotations;     // out
  Span<glm::vec3> model_translations;  // out

  Status Validate() const noexcept;
  Status Run() const noexcept;
};

}  // namespace mmdb
