// What the compute shaders and the C++ side of mmdb::gpu share, written once: descriptor
// bindings, workgroup sizes, limits, character flags, search reasons and the std430 structs of
// the buffers and push constants. This file is both GLSL (shaders/common.glsl includes it through
// glslc's #include) and C++17 (mmdb/gpu/layout.h includes it, and checks every offset); the
// shaders are compiled from the same struct definitions as the C++ side.
//
// Write only what both languages accept: scalars `uint`, `int`, `float` and `vec4` members, arrays
// of them, and arrays of these structs when their size is a multiple of 16 bytes (std430 then
// lays them out as C++ does, given the static_asserts in layout.h), constants through
// MMDB_UINT_CONST, and plain macros where GLSL needs a constant expression (layout qualifiers).
#ifndef MMDB_GPU_SHADER_INTERFACE_H
#define MMDB_GPU_SHADER_INTERFACE_H

// ---- Numbers GLSL needs as literals ----
#define MMDB_GROUP_SIZE 64  // threads per workgroup of the per-character and per-joint passes
#define MMDB_MATCH_GROUP_SIZE 256    // threads per workgroup of the match pass (one per character)
#define MMDB_MAX_FEATURE_STRIDE 128  // floats per feature row the match pass keeps in shared memory

// Descriptor bindings of the one set (set 0), all storage buffers.
#define MMDB_BINDING_FEATURES 0   // vec4 rows at feature_stride floats
#define MMDB_BINDING_RANGES 1     // uvec4: first, count, mask lo, mask hi
#define MMDB_BINDING_ROTATIONS 2  // [frame * joint_count + joint]
#define MMDB_BINDING_TRANSLATIONS 3
#define MMDB_BINDING_VELOCITIES 4
#define MMDB_BINDING_ANGULAR_VELOCITIES 5
#define MMDB_BINDING_CLIP_STARTS 6    // clip_count + 1 global frames
#define MMDB_BINDING_NORMALIZATION 7  // offset[feature_count], scale[feature_count]
#define MMDB_BINDING_PARENTS 8
#define MMDB_BINDING_CHARACTERS 9    // CrowdCharacter per character
#define MMDB_BINDING_INPUTS 10       // CharacterInput per character
#define MMDB_BINDING_QUERIES 11      // feature_stride floats per character
#define MMDB_BINDING_RESULTS 12      // MatchResult per character
#define MMDB_BINDING_OFFSETS 13      // JointOffset [character * joint_count + joint]
#define MMDB_BINDING_LOCAL_POSES 14  // JointPose, same indexing
#define MMDB_BINDING_MODEL_POSES 15  // ModelJoint, same indexing
#define MMDB_BINDING_BOUNDS_MIN 16   // per-column min over boxes of bounds_size frames
#define MMDB_BINDING_BOUNDS_MAX 17   // ... and max
#define MMDB_BINDING_ROOT_MOTION 18  // mmdb::RootFrame per frame
#define MMDB_BINDING_BIASES 19       // cost biases: range_count per range, then clip_count per clip
#define MMDB_BINDING_WEIGHTS 20      // feature_stride per-column run-time weights per character
#define MMDB_BINDING_CONTACTS 21     // contact mask per frame (mmdb::Database::contacts())
#define MMDB_BINDING_FEET 22         // CharacterFeet per character
#define MMDB_BINDING_LEGS 23         // one FootLockSetup: the legs and the foot-locking settings
// The transition speed limit's: per joint 1 / (the most it may move in a frame, m)^2, and per
// character and joint the last pose's model position before foot locking (vec4, same indexing).
#define MMDB_BINDING_JOINT_LIMITS 24
#define MMDB_BINDING_UNLOCKED 25
#define MMDB_BINDING_COUNT 26

#ifdef __cplusplus
#include "mmdb/database.h"

#include <cstdint>

#define MMDB_UINT_CONST(name, value) inline constexpr std::uint32_t name = value
namespace mmdb::gpu {
#else
#define MMDB_UINT_CONST(name, value) const uint name = value
#endif

MMDB_UINT_CONST(kGroupSize, MMDB_GROUP_SIZE);
MMDB_UINT_CONST(kMatchGroupSize, MMDB_MATCH_GROUP_SIZE);
MMDB_UINT_CONST(kMaxFeatureStride, MMDB_MAX_FEATURE_STRIDE);

// CrowdCharacter::flags bits.
MMDB_UINT_CONST(kCharacterSearched, 1u);        // searched during the last step
MMDB_UINT_CONST(kCharacterSwitched, 2u);        // inertialized switch in the last step
MMDB_UINT_CONST(kCharacterInertializing, 4u);   // offsets still above the threshold
MMDB_UINT_CONST(kCharacterPlaying, 8u);         // a first search has picked a frame
MMDB_UINT_CONST(kCharacterInputChanging, 16u);  // the input changed sharply in the last step
MMDB_UINT_CONST(kCharacterForcePending, 32u);   // a forced search waits for the jump cooldown
MMDB_UINT_CONST(kCharacterHeld, 64u);        // a due search waited for the jump cooldown this step
MMDB_UINT_CONST(kCharacterContinued, 128u);  // the winner was played on to (continuing rule)
// CharacterInput::teleport values.
MMDB_UINT_CONST(kTeleportNone, 0u);
MMDB_UINT_CONST(kTeleportMove, 1u);   // Crowd::teleport: the simulation moves along, feet let go
MMDB_UINT_CONST(kTeleportPlace, 2u);  // Crowd::place: the placement alone
// PassParams::policies bits; bits 16 and up hold the continuing rule's window in frames.
MMDB_UINT_CONST(kPolicySearchWhenSettled, 1u);
MMDB_UINT_CONST(kPolicyRangeEndMovesOn, 2u);
MMDB_UINT_CONST(kPolicyStaggerStarts, 4u);    // start_stagger_intervals > 0: a Start search waits
                                              // for the search timer
MMDB_UINT_CONST(kPolicyClipEndOnly, 32u);     // search_at_clip_end: only a clip's last frame must
                                              // move, not a range's
MMDB_UINT_CONST(kPolicyUnrotatedRates, 64u);  // unrotated_angular_offsets: the reference's
                                              // angular-velocity offsets
MMDB_UINT_CONST(kPolicySpeedLimit, 16u);      // transition_speed_limit > 0: the fk pass holds a
                                              // transition's decay back (mmdb::Crowd's rule)
MMDB_UINT_CONST(kPolicyPredictBeforeUpdate, 8u);    // predict_before_update: the trajectory from
                                                    // the simulation root before its update
MMDB_UINT_CONST(kPolicyShowNextFrame, 128u);        // show_next_frame: the pose one step ahead
MMDB_UINT_CONST(kPolicyReferenceArithmetic, 256u);  // reference_arithmetic: the reference's
                                                    // springs, the offsets decayed in place (their
                                                    // rotation a quaternion)
MMDB_UINT_CONST(kPolicyContinueShift, 16u);

// Why a character searched (MatchResult::reason), in order of precedence (SearchReason in C++).
MMDB_UINT_CONST(kReasonNone, 0u);      // did not search this step
MMDB_UINT_CONST(kReasonStart, 1u);     // nothing playing yet: unseeded
MMDB_UINT_CONST(kReasonRangeEnd, 2u);  // at the last frame of a matchable range or clip: unseeded
MMDB_UINT_CONST(kReasonForced, 3u);    // the host asked: seeded with the frame playing
MMDB_UINT_CONST(kReasonPeriodic, 4u);  // the search timer ran out: seeded

// MatchResult::frame when an unseeded search found no candidate.
MMDB_UINT_CONST(kNoFrame, 0xFFFFFFFFu);

// FootLock::flags bits (mmdb::FootLock's booleans).
MMDB_UINT_CONST(kFootLocked, 1u);    // the toe is held at `position`
MMDB_UINT_CONST(kFootBlending, 2u);  // let go: blending back to the animation
MMDB_UINT_CONST(kFootContact, 4u);   // the contact bit of the pose shown at the last step
MMDB_UINT_CONST(kFootSeen, 8u);      // `animated` holds the last step's animated toe

#ifdef __cplusplus
// The GLSL spellings of the member types, for the struct definitions below only.
namespace glsl {
using uint = std::uint32_t;
using vec4 = mmdb::Float4;
#endif

// Per-character state, on the GPU between frames.
struct CrowdCharacter {
  vec4 sim_position;  // controller: world position on the ground (w = 0)
  vec4 sim_velocity;
  vec4 sim_acceleration;
  vec4 sim_rotation;  // pure yaw quaternion (x, y, z, w)
  vec4 sim_angular_velocity;
  vec4 achieved_position;  // where the root motion of the frames played took it (w = 0)
  vec4 achieved_rotation;  // ... and its facing, pure yaw; the query is built from here
  uint clip_first;         // global first frame of the playing clip
  uint clip_count;         // its frame count
  float clip_time;         // clip-local seconds playing
  int search_timer;        // steps until the next periodic search (due at 0 or below)
  float since_switch;      // seconds since the last switch
  uint current_frame;      // global frame playing: clip_first + floor(clip_time * rate + 1e-3)
  float offset_bound_x;    // max |offset| over joints at the switch (rad or m)
  float offset_bound_v;    // max |offset rate| over joints at the switch
  uint flags;              // kCharacter* bits
  uint last_winner;        // global frame the last search returned
  float last_cost;         // its cost
  uint search_count;       // searches since creation
  float transition_time;   // seconds the offsets have decayed for: since_switch less what the
                           // transition speed limit held back
  float play_rate;         // the rate the clip played at in the last step (mmdb::CrowdCharacter's)
  float search_clock;      // s until the next periodic search (search_interval_seconds > 0)
  float settle_clock;      // s until a settled stick may force one (settle_search_interval > 0)
  vec4 input_velocity;     // the desired velocity of the last step (ground, w = 0)
  vec4 input_facing;       // the last desired facing that was not zero (ground, w = 0)
  // The root motion of the last step (mmdb::CrowdCharacter's): how far the achieved transform
  // moved in the world and in the character's frame before the step, and how it turned
  // (achieved_rotation after = root_motion_rotation * before). Zero when nothing played.
  vec4 root_motion_world;     // w = 0
  vec4 root_motion_local;     // w = 0
  vec4 root_motion_rotation;  // pure yaw quaternion (x, y, z, w)
  // The synchronization of the last step (mmdb::CrowdCharacter::adjustment_world and
  // adjustment_angle): xyz how far the adjustment moved the achieved transform, w its turn (rad).
  vec4 adjustment;
  // Warping (mmdb::CrowdCharacter::warp): the ground-plane map (xx, zx, xz, zz), eased step by
  // step; (1, 0, 0, 1) when off.
  vec4 warp;
};

// Per-character input of one step; the host's copy is recorded into the command buffer.
struct CharacterInput {
  vec4 desired_velocity;  // world m/s (y ignored)
  vec4 desired_facing;    // world direction to face (y ignored); zero keeps the facing
  uint required_tags_lo;  // a range must carry all of these tags
  uint required_tags_hi;
  uint excluded_tags_lo;  // ... and none of these
  uint excluded_tags_hi;
  uint force_search;    // 1: search this step (seeded)
  uint teleport;        // kTeleport*: first move the character to teleport_position and _rotation
  uint set_simulation;  // 1: then the simulation root becomes sim_* (Crowd::setSimulation)
  uint reserved;
  vec4 teleport_position;  // world (w = 0)
  vec4 teleport_rotation;  // pure yaw quaternion (x, y, z, w)
  vec4 sim_position;       // mmdb::CharacterState, world (w = 0)
  vec4 sim_velocity;
  vec4 sim_acceleration;
  vec4 sim_rotation;  // pure yaw quaternion (x, y, z, w)
  vec4 sim_angular_velocity;
};

struct MatchResult {
  uint frame;       // winner (global); the frame playing when nothing was strictly
                    // cheaper; kNoFrame when unseeded and no range passed the filter
  float cost;       // its cost
  uint reason;      // kReason*: kReasonNone when the character did not search
  float seed_cost;  // cost of the frame playing (+inf when unseeded)
};

// Inertialization offsets captured at a switch (per character and joint).
struct JointOffset {
  vec4 rotation;          // scaled angle-axis, rad
  vec4 angular_velocity;  // rad/s
  vec4 translation;       // m
  vec4 velocity;          // m/s
};

// A local joint pose (parent space; the root joint relative to the simulation root), after
// sampling, then after inertialization.
struct JointPose {
  vec4 rotation;
  vec4 translation;
  vec4 velocity;
  vec4 angular_velocity;
};

// A joint in model space (relative to the character's simulation root), position w = 1.
struct ModelJoint {
  vec4 rotation;
  vec4 position;
};

// One foot of one character between steps (mmdb::FootLock), world space.
struct FootLock {
  vec4 position;         // where the toe is held (while locked)
  vec4 target;           // where the toe was shown at the last step
  vec4 animated;         // the animated toe at the last step
  vec4 offset;           // at the unlock: held - animated toe ...
  vec4 offset_velocity;  // ... and 0 - the animated toe's velocity
  float since_unlock;    // s since the unlock
  uint flags;            // kFoot* bits
  uint pad0;
  uint pad1;
};

// Per character: its feet (left, right) and the pose shown, as the fk pass writes them.
struct CharacterFeet {
  FootLock foot[2];
  uint shown_frame;  // the global frame at or below the clip time sampled (within 1e-3 of a
                     // frame), whose contact bits are the shown pose's
  float shown_time;  // the clip-local seconds it was sampled at (clamped to the clip)
  uint previous_shown_frame;  // the step before's shown_frame, kNoFrame when nothing played then
  uint shown_playing;         // 1: the pose shown plays a frame (the character has started)
};

// A leg foot locking bends (mmdb::LegChain).
struct LegSetup {
  uint upper_leg;
  uint knee;
  uint foot;
  uint toe;
  uint contact_bit;
  uint pad[3];
  vec4 toe_tip;  // xyz: the tip of the toes from the toe joint, in its frame (unit)
};

// The legs, the foot-locking settings and the synchronization of a crowd (CrowdSettings' names),
// uploaded at create (the push constants have no room left).
struct FootLockSetup {
  LegSetup legs[2];   // left, right
  uint foot_locking;  // 0: the foot lock pass leaves the pose as it is
  float foot_unlock_radius;
  float foot_unlock_halflife;
  float ik_foot_height;
  float ik_toe_length;
  float ik_max_length_buffer;
  uint sync_mode;  // mmdb::Synchronization
  float sync_position_halflife;
  float sync_rotation_halflife;  // mmdb::SynchronizationSettings, field by field
  float sync_position_ratio;
  float sync_rotation_ratio;
  float sync_max_distance;
  float sync_max_angle;
  float sync_foot_reach;
  float sync_hard_distance;
  float sync_rate_min;
  float sync_rate_max;
  float sync_stride_min;  // warping
  float sync_stride_max;
  float sync_warp_angle;
  float sync_warp_halflife;
  float search_interval_seconds;  // the reference's float timers (mmdb::CrowdSettings's; 0: off)
  float settle_search_interval;
  uint pad;
};

// The push constants every pass reads.
struct PassParams {
  uint character_count;
  uint joint_count;
  uint feature_count;
  uint feature_stride;  // floats, a multiple of 4
  uint range_count;
  uint clip_count;
  uint trajectory_position_column;
  uint trajectory_direction_column;
  int neighbourhood_frames;  // frames around the playing one a seeded search skips (resolved, >= 0)
  float frame_rate;
  float dt;
  uint search_interval_ticks;  // steps between periodic searches
  float transition_cost;
  float inertialization_halflife;
  float inertialization_threshold;
  float controller_halflife;  // position and rotation springs
  uint stagger_phases;        // character c's first periodic search is (c % n) * interval / n late
  uint bounds_size;           // frames per bounds box; 0: no pruning (exhaustive match)
  float max_drift;            // m: the most of the controller-character gap the query closes
  uint policies;              // kPolicy* bits, and the continuing window in frames from bit 8
  vec4 trajectory_times;      // xyz: seconds ahead of the three trajectory samples
  float jump_cooldown;        // s after a switch in which periodic and forced searches wait
  float settle_velocity_squared;  // mmdb::SettleLimits for this step's dt
  float settle_cos_limit;
  uint range_end_margin;                // frames at the end of each range that are no candidate
  float inertialization_rate_halflife;  // s: the offsets' rates decay with it (decayOffsetSplit)
  float frame_period;                   // float(1 / frame_rate): a key's time is its frame times it
  uint pad_params[2];                   // std430 rounds the block to 16 bytes
};

#ifdef __cplusplus
}  // namespace glsl
using glsl::CharacterFeet;
using glsl::CharacterInput;
using glsl::CrowdCharacter;
using glsl::FootLock;
using glsl::FootLockSetup;
using glsl::JointOffset;
using glsl::JointPose;
using glsl::LegSetup;
using glsl::MatchResult;
using glsl::ModelJoint;
using glsl::PassParams;
}  // namespace mmdb::gpu
#else
// The file's root motion (mmdb::RootFrame, whose offsets layout.h checks).
struct RootFrame {
  vec4 position;
  vec4 rotation;
  vec4 velocity;
  vec4 angular_velocity;
};
#endif

#undef MMDB_UINT_CONST
#endif  // MMDB_GPU_SHADER_INTERFACE_H
