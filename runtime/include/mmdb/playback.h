// CPU playback: sample a pose, inertialize transitions, forward kinematics, and hold planted feet
// (foot locking with two-bone leg IK). These are the reference twins of the GPU sample,
// inertialize, fk and foot lock passes.
//
// Each is a job: a struct of inputs and outputs (spans the caller owns, sized jointCount()),
// Validate() to check them and Run() to do the work. Run() validates first and returns the
// error instead of touching the outputs. Nothing allocates; outputs never alias inputs unless a
// comment says so.
#pragma once

#include "mmdb/database.h"
#include "mmdb/result.h"
#include "mmdb/span.h"
#include "mmdb/synchronization.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <array>
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

// A clip-local clock moved on by dt seconds, as the crowds move theirs: time + dt, and where that
// lands within kClipTimeSnap of a frame's key (in frames), the key's time itself (its frame times
// float(1 / frame_rate)). Without the snap, the rounding of time + dt adds up over a clip (at
// 60 Hz, more than a thousandth of a frame within 30 s), and a clock stepped at the frame rate
// samples between keys: a slerp per joint for a pose a hair away from the key's. A dt that is no
// multiple of the frame period keeps its pace: a step moves the clock by at most kClipTimeSnap
// frames more or less than dt, and the snaps do not add up. SamplePoseJob takes the key's rotations
// within kClipTimeSnap of a key. A frame_rate that is not positive gives time + dt.
inline constexpr float kClipTimeSnap = 1e-3f;
float advanceClipTime(float time, float dt, float frame_rate) noexcept;

// The critically damped decay of an offset x with velocity v, after t seconds, in closed form
// (Holden's decay_spring_damper_exact): y = 2 ln 2 / halflife, j = v + x y,
// x(t) = e^(-y t) (x + j t), v(t) = e^(-y t) (v - j y t).
void decayOffset(glm::vec3& x, glm::vec3& v, float halflife, float t) noexcept;

// The same decay with the offset and its rate apart: the offset x (from rest) decays with
// `halflife`, the rate v (from no offset) with `rate_halflife`, and the two are added. Position
// and rate at t = 0 are x and v as before, so a transition stays continuous; a slow decay of a
// large offset then does not carry a fast source motion on for longer. Equal half-lives give
// decayOffset's numbers exactly.
void decayOffsetSplit(glm::vec3& x, glm::vec3& v, float halflife, float rate_halflife,
                      float t) noexcept;

// A rotation offset and its angular velocity (in/out) decayed by t seconds. Equal half-lives:
// the rotation vector and its rate decay as one (decayOffset), as the reference does. Otherwise
// apart and composed: offset(t) = exp(r(t)) * exp(p(t)), p the offset's rotation vector from
// rest with `halflife`, r the rate's from nothing with `rate_halflife`. Each turns about a fixed
// axis, so the angular velocity is exact: at t = 0 it is the rate given, however large the
// offset. (Added to a large rotation vector, a rate turns it about another axis: a source
// twisting about its upper arm would swing the arm of the destination.)
glm::quat decayRotationSplit(const glm::quat& offset, glm::vec3& angular_velocity, float halflife,
                             float rate_halflife, float t) noexcept;

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
  float halflife = kDefaultInertializationHalflife;  // s: the previous offsets decay with these
  float rate_halflife = 0;                           // (decayOffsetSplit; 0: halflife)
  float time_since_previous = 0;                     // s since the previous switch, >= 0
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
  // The angular-velocity offset is (previous offset's rate + source) - destination, as the
  // reference controller subtracts them, instead of keeping the shown angular velocity (the
  // offset rotation applied to each pose's): CrowdSettings::unrotated_angular_offsets.
  bool unrotated_rates = false;

  Status Validate() const noexcept;
  Status Run() const noexcept;
};

// Every frame: the pose to show = the pose sampled now + the captured offsets decayed by the
// time since the switch (evaluated analytically, so no per-frame state is integrated):
//   rotation = decayed rotation offset * rotation, translation = translation + decayed offset.
// The rotation offset decays as a rotation vector (scaled axis) with its angular velocity.
// Outputs may alias the pose inputs.
struct InertializeJob {
  float halflife = kDefaultInertializationHalflife;  // s: the offsets decay with these
  float rate_halflife = 0;                           // (decayOffsetSplit; 0: halflife)
  float time_since_switch = 0;                       // s, >= 0
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

// --- Foot locking and leg IK ------------------------------------------------------------------

// The defaults of the foot-locking settings (CrowdSettings has the same names), after the
// reference controller's (Holden's Motion-Matching demo), but for the unlock radius: the
// reference lets go at 0.2 m; 0.3 m keeps 96 % of bandai-1's contact phases within
// 21 mm of drift, against 92 % (BENCHMARKS.md "Motion measures").
inline constexpr float kDefaultFootUnlockRadius = 0.3f;     // m
inline constexpr float kDefaultFootUnlockHalflife = 0.1f;   // s
inline constexpr float kDefaultIkFootHeight = 0.02f;        // m
inline constexpr float kDefaultIkToeLength = 0.15f;         // m
inline constexpr float kDefaultIkMaxLengthBuffer = 0.015f;  // m

inline constexpr uint32_t kLegCount = 2;  // legs[0] is the left leg, legs[1] the right one

// One leg of the skeleton, as foot locking bends it: the toe (a contact joint, Role::LeftToe or
// RightToe), the foot above it (Role::LeftFoot or RightFoot, the ankle), the knee (the foot's
// parent) and the upper leg (the knee's parent, the hip joint).
struct LegChain {
  uint32_t upper_leg = 0;
  uint32_t knee = 0;
  uint32_t foot = 0;
  uint32_t toe = 0;
  uint32_t contact_bit = 0;  // the toe's bit of Database::contacts()
  // Where the tip of the toes lies from the toe joint, in the toe joint's own frame (unit): the
  // ground direction from the foot to the toe in the bind pose (a toe joint is a leaf in most
  // skeletons, so its bone has no end to point at).
  glm::vec3 toe_tip{0.f, 0.f, 1.f};
};

// The database's two legs, left then right. InvalidArgument naming the leg, the role and the
// joint when one cannot be bent: a foot or toe role the skeleton does not name, a toe that is
// not below its foot or has no contact bit, a foot without a parent to bend as a knee, a knee or
// upper leg that is the root, a joint in both legs. For example
// "left leg: foot 'Foot_L' has no parent to bend as a knee".
Result<std::array<LegChain, kLegCount>> findLegChains(const Database& db) noexcept;

// Two-bone IK: turns `upper` and `knee` (the parent of `end`, whose parent is `upper`) so that
// `end` reaches `target`, in the space of the model pose given. The knee bends in the plane the
// three joints span, leaning towards `knee_forward` (the way the knee bends) by as much as a knee
// bent 6 degrees weighs: a well bent knee keeps its plane within a few degrees, a straight or
// nearly straight one bends towards knee_forward, so the knee never swings round as the pose
// passes straight (the chain first turns about the line from `upper` to `end` into that plane);
// the upper joint then swings the chain onto the target. The chain never reaches further than
// its length less `max_length_buffer`, nor closer than it can fold: a target out of reach leaves
// `end` on the line towards it, at that distance. Only the local rotations of `upper` and `knee`
// change, so bone lengths are kept; the model pose of `upper` and everything below it is recomputed
// from the local pose (as ForwardKinematicsJob computes it, the model pose of the rest is read as
// it is).
struct TwoBoneIkJob {
  Span<const int32_t> parents;  // Database::parents()
  uint32_t upper = 0;
  uint32_t knee = 0;
  uint32_t end = 0;
  glm::vec3 target{0.f};                  // model space
  glm::vec3 knee_forward{0.f, 0.f, 1.f};  // model space; +Z is the character's forward
  float max_length_buffer = kDefaultIkMaxLengthBuffer;  // m, >= 0
  Span<glm::quat> local_rotations;                      // in/out
  Span<const glm::vec3> local_translations;
  Span<glm::quat> model_rotations;     // in/out: a model pose of the local one (FK)
  Span<glm::vec3> model_translations;  // in/out

  Status Validate() const noexcept;
  Status Run() const noexcept;
};

// The settings of foot locking, named as in CrowdSettings.
struct FootLockSettings {
  float foot_unlock_radius = kDefaultFootUnlockRadius;      // m: a held toe lets go when the
                                                            // animated one is further away
  float foot_unlock_halflife = kDefaultFootUnlockHalflife;  // s: the blend back to the animation
  float ik_foot_height = kDefaultIkFootHeight;  // m: the lowest a held toe, and the tip of its
                                                // toes, go above the ground (world y = 0)
  float ik_toe_length = kDefaultIkToeLength;    // m: from the toe joint to the tip of the toes
  float ik_max_length_buffer = kDefaultIkMaxLengthBuffer;  // m: a leg reaches at most its length
                                                           // less this, so it never snaps straight
};
// InvalidArgument naming the first setting that is not finite and >= 0, for example
// "foot_unlock_radius -1 m must be finite and >= 0".
Status validateFootLockSettings(const FootLockSettings& settings) noexcept;

// One foot of one character between steps (all in world space).
struct FootLock {
  bool locked = false;      // the toe is held at `position`
  bool blending = false;    // let go: the toe blends back from where it was held to the animation
  bool contact = false;     // the contact bit of the pose shown at the last step
  bool seen = false;        // `animated` holds the last step's animated toe
  glm::vec3 position{0.f};  // where the toe is held (while locked)
  glm::vec3 target{0.f};    // where the toe was shown at the last step (the animated toe
                            // when neither locked nor blending)
  glm::vec3 animated{0.f};  // the animated toe at the last step
  glm::vec3 offset{0.f};    // at the unlock: held - animated toe ...
  glm::vec3 offset_velocity{0.f};  // ... and 0 - the animated toe's velocity
  float since_unlock = 0;          // s since the unlock (the blend decays the offset by it)
};

// Foot locking, once per step and character, after the pose is final in model space and the
// character is placed in the world (the achieved transform after the step: position + rotation *
// model). For each leg, with its toe's contact bit in `contacts` (the shown pose's mask,
// Database::contacts()[frame]) and the animated toe in the world:
//   - a contact that starts (the bit is set and was not at the last step) locks the toe where it
//     is shown, no lower than ik_foot_height;
//   - a locked toe lets go when the contact ends or the animated toe is further than
//     foot_unlock_radius from the lock: the offset from the animated toe to the lock, and the
//     opposite of the animated toe's velocity, are captured, and the toe is shown at the animated
//     toe plus that offset decayed by the time since (decayOffset, foot_unlock_halflife): it starts
//     where it was held, still, and reaches the animation continuously;
//   - while locked or blending, the leg is bent to put the toe there: the ankle goes where the
//     target minus the animated foot-to-toe vector puts it (TwoBoneIkJob on the upper leg and the
//     knee, with ik_max_length_buffer), the foot keeps its animated orientation and turns just
//     enough for the toe to reach the target when the ankle could not, and the toe joint turns
//     up when the tip of the toes (ik_toe_length along LegChain::toe_tip) would go below
//     ik_foot_height. Otherwise the leg is left exactly as animated.
// Only local rotations of the upper leg, knee, foot and toe change; the model pose below each
// upper leg is recomputed from the local pose. `reset` (a character that starts, or was moved
// somewhere else) drops every lock and blend first, and with them the last contact bits and
// animated toes. A blend ends 20 half-lives after its unlock.
struct FootLockJob {
  Span<const int32_t> parents;  // Database::parents()
  Span<const LegChain> legs;    // findLegChains(), or any chains of the skeleton
  FootLockSettings settings;
  uint32_t contacts = 0;                   // the shown pose's contact mask
  glm::vec3 position{0.f};                 // world placement of model space
  glm::quat rotation{1.f, 0.f, 0.f, 0.f};  // (the achieved transform after the step)
  float dt = 0;                            // s since the last step, finite, >= 0
  bool reset = false;
  // Only the legs of held toes bent again to their locks (FootLock::position), for a pose already
  // locked and a placement moved since (Crowd::place): no contact starts or ends, nothing lets
  // go, the feet's state and every other joint stay.
  bool hold_only = false;
  // Warping (SynchronizationSettings): the animated toes' ground positions are mapped by this
  // first, and a warped leg bends to its mapped toe when neither held nor blending.
  GroundWarp warp;
  Span<FootLock> feet;              // in/out, one per leg
  Span<glm::quat> local_rotations;  // in/out
  Span<const glm::vec3> local_translations;
  Span<glm::quat> model_rotations;     // in/out: the model pose of the local one (FK)
  Span<glm::vec3> model_translations;  // in/out

  Status Validate() const noexcept;
  Status Run() const noexcept;
};

}  // namespace mmdb
