// The GPU buffers' element types, byte for byte as the compute shaders declare them
// (shaders/common.glsl, std430). Change both together. C++17.
#pragma once

#include <cstdint>

namespace mmdb::gpu {

struct Float4 {
  float x = 0, y = 0, z = 0, w = 0;
};

// CharacterState::flags bits.
inline constexpr uint32_t kCharacterSearched = 1u;       // searched during the last step
inline constexpr uint32_t kCharacterSwitched = 2u;       // inertialized switch in the last step
inline constexpr uint32_t kCharacterInertializing = 4u;  // offsets still above the threshold
inline constexpr uint32_t kCharacterPlaying = 8u;        // a first search has picked a frame

// Why a character searched (MatchResult::reason), in order of precedence.
enum class SearchReason : uint32_t {
  None = 0,      // did not search this step
  Start = 1,     // nothing playing yet: unseeded
  RangeEnd = 2,  // at the last frame of a matchable range or clip: unseeded, must move
  Forced = 3,    // the host asked (Crowd::forceSearch): seeded with the frame playing
  Periodic = 4,  // the search timer ran out: seeded
};

// Per-character state, on the GPU between frames.
struct CharacterState {
  Float4 sim_position;              // controller: world position on the ground (w = 0)
  Float4 sim_velocity;
  Float4 sim_acceleration;
  Float4 sim_rotation{0, 0, 0, 1};  // pure yaw quaternion (x, y, z, w)
  Float4 sim_angular_velocity;
  uint32_t clip_first = 0;          // global first frame of the playing clip
  uint32_t clip_count = 0;          // its frame count
  float clip_time = 0;              // clip-local seconds playing
  float search_timer = 0;           // seconds until the next periodic search
  float since_switch = 1e6f;        // seconds since the last switch
  uint32_t current_frame = 0;       // global frame playing: clip_first + floor(time * rate + 1e-4)
  float offset_bound_x = 0;         // max |offset| over joints at the switch (rad or m)
  float offset_bound_v = 0;         // max |offset rate| over joints at the switch
  uint32_t flags = 0;               // kCharacter* bits
  uint32_t last_winner = 0;         // global frame the last search returned
  float last_cost = 0;              // its cost
  uint32_t search_count = 0;        // searches since creation
};
static_assert(sizeof(CharacterState) == 128, "std430 Character");

// Per-character input of one step; the host's copy is recorded into the command buffer.
struct CharacterInput {
  Float4 desired_velocity;  // world m/s (y ignored)
  Float4 desired_facing;    // world direction to face (y ignored); zero keeps the facing
  uint32_t required_tags_lo = 0, required_tags_hi = 0;  // a range must carry all of these tags
  uint32_t excluded_tags_lo = 0, excluded_tags_hi = 0;  // ... and none of these
  uint32_t force_search = 0;                            // 1: search this step (seeded)
  uint32_t reserved[3] = {0, 0, 0};
};
static_assert(sizeof(CharacterInput) == 64, "std430 Input");

inline constexpr uint32_t kNoFrame = 0xFFFFFFFFu;

struct MatchResult {
  uint32_t frame = 0;      // winner (global); the frame playing when nothing was strictly cheaper;
                           // kNoFrame when unseeded and no range passed the filter
  float cost = 0;          // its cost
  uint32_t reason = 0;     // SearchReason
  float seed_cost = 0;     // cost of the frame playing (+inf when unseeded)
};
static_assert(sizeof(MatchResult) == 16, "std430 MatchResult");

// Inertialization offsets captured at a switch (per character and joint).
struct JointOffset {
  Float4 rotation;          // scaled angle-axis, rad
  Float4 angular_velocity;  // rad/s
  Float4 translation;       // m
  Float4 velocity;          // m/s
};
static_assert(sizeof(JointOffset) == 64, "std430 JointOffset");

// A local joint pose (parent space; the root joint relative to the simulation root).
struct JointPose {
  Float4 rotation{0, 0, 0, 1};
  Float4 translation;
  Float4 velocity;
  Float4 angular_velocity;
};
static_assert(sizeof(JointPose) == 64, "std430 JointPose");

// A joint in model space (relative to the character's simulation root), position w = 1.
struct ModelJoint {
  Float4 rotation{0, 0, 0, 1};
  Float4 position;
};
static_assert(sizeof(ModelJoint) == 32, "std430 ModelJoint");

// The push constants every pass reads.
struct PassParams {
  uint32_t character_count = 0;
  uint32_t joint_count = 0;
  uint32_t feature_count = 0;
  uint32_t feature_stride = 0;
  uint32_t range_count = 0;
  uint32_t clip_count = 0;
  uint32_t trajectory_position_column = 15;
  uint32_t trajectory_direction_column = 21;
  uint32_t ignore_surrounding = 20;
  float frame_rate = 60;
  float dt = 1.f / 60;
  float search_interval = 0.1f;
  float transition_cost = 0;
  float inertialization_halflife = 0.1f;
  float inertialization_threshold = 1e-5f;
  float controller_halflife = 0.27f;
  uint32_t stagger_phases = 6;
  uint32_t bounds_size = 16;  // frames per bounds box the match prunes with; 0: exhaustive
  uint32_t pad[2] = {0, 0};
  Float4 trajectory_times{1.f / 3, 2.f / 3, 1.f, 0};
};
static_assert(sizeof(PassParams) == 96, "push constants");

}  // namespace mmdb::gpu
