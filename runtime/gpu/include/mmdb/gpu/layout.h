// The GPU buffers' element types and the numbers the passes share, as C++: they are defined once
// in mmdb/gpu/shader_interface.h, which the shaders compile too. Here: what only C++ has (the
// SearchReason enum, shared with the CPU crowd; the starting state) and a check of every std430
// offset. C++17.
#pragma once

#include "mmdb/crowd.h"
#include "mmdb/database.h"
#include "mmdb/gpu/shader_interface.h"

#include <cstddef>
#include <cstdint>

namespace mmdb::gpu {

// Why a character searched (MatchResult::reason), in order of precedence: the CPU crowd's type
// (mmdb/crowd.h), whose values are the shaders' kReason* constants.
using SearchReason = mmdb::SearchReason;
static_assert(uint32_t(SearchReason::None) == kReasonNone);
static_assert(uint32_t(SearchReason::Start) == kReasonStart);
static_assert(uint32_t(SearchReason::RangeEnd) == kReasonRangeEnd);
static_assert(uint32_t(SearchReason::Forced) == kReasonForced);
static_assert(uint32_t(SearchReason::Periodic) == kReasonPeriodic);
static_assert(mmdb::kNoFrame == kNoFrame);

// The structs carry no default member initializers (GLSL has none): these are the values a
// character starts with. Nothing playing, at the origin facing +Z, no offsets to decay.
inline CrowdCharacter initialCharacter() {
  CrowdCharacter c{};
  c.sim_rotation = {0, 0, 0, 1};
  c.achieved_rotation = {0, 0, 0, 1};
  c.since_switch = 1e6f;
  c.transition_time = 1e6f;
  c.input_facing = {0, 0, 1, 0};
  c.root_motion_rotation = {0, 0, 0, 1};
  c.play_rate = 1;
  c.warp = {1, 0, 0, 1};
  return c;
}

// ---- std430 offsets: the GLSL compiler lays the same definitions out this way ----
#define MMDB_CHECK_OFFSET(type, field, offset)                                    \
  static_assert(offsetof(type, field) == (offset), #type "::" #field              \
                                                         " is not at its std430 " \
                                                         "offset")

MMDB_CHECK_OFFSET(CrowdCharacter, sim_position, 0);
MMDB_CHECK_OFFSET(CrowdCharacter, sim_velocity, 16);
MMDB_CHECK_OFFSET(CrowdCharacter, sim_acceleration, 32);
MMDB_CHECK_OFFSET(CrowdCharacter, sim_rotation, 48);
MMDB_CHECK_OFFSET(CrowdCharacter, sim_angular_velocity, 64);
MMDB_CHECK_OFFSET(CrowdCharacter, achieved_position, 80);
MMDB_CHECK_OFFSET(CrowdCharacter, achieved_rotation, 96);
MMDB_CHECK_OFFSET(CrowdCharacter, clip_first, 112);
MMDB_CHECK_OFFSET(CrowdCharacter, clip_count, 116);
MMDB_CHECK_OFFSET(CrowdCharacter, clip_time, 120);
MMDB_CHECK_OFFSET(CrowdCharacter, search_timer, 124);
MMDB_CHECK_OFFSET(CrowdCharacter, since_switch, 128);
MMDB_CHECK_OFFSET(CrowdCharacter, current_frame, 132);
MMDB_CHECK_OFFSET(CrowdCharacter, offset_bound_x, 136);
MMDB_CHECK_OFFSET(CrowdCharacter, offset_bound_v, 140);
MMDB_CHECK_OFFSET(CrowdCharacter, flags, 144);
MMDB_CHECK_OFFSET(CrowdCharacter, last_winner, 148);
MMDB_CHECK_OFFSET(CrowdCharacter, last_cost, 152);
MMDB_CHECK_OFFSET(CrowdCharacter, search_count, 156);
MMDB_CHECK_OFFSET(CrowdCharacter, transition_time, 160);
MMDB_CHECK_OFFSET(CrowdCharacter, play_rate, 164);
MMDB_CHECK_OFFSET(CrowdCharacter, search_clock, 168);
MMDB_CHECK_OFFSET(CrowdCharacter, settle_clock, 172);
MMDB_CHECK_OFFSET(CrowdCharacter, input_velocity, 176);
MMDB_CHECK_OFFSET(CrowdCharacter, input_facing, 192);
MMDB_CHECK_OFFSET(CrowdCharacter, root_motion_world, 208);
MMDB_CHECK_OFFSET(CrowdCharacter, root_motion_local, 224);
MMDB_CHECK_OFFSET(CrowdCharacter, root_motion_rotation, 240);
MMDB_CHECK_OFFSET(CrowdCharacter, adjustment, 256);
MMDB_CHECK_OFFSET(CrowdCharacter, warp, 272);
static_assert(sizeof(CrowdCharacter) == 288, "std430 CrowdCharacter: a multiple of 16 bytes");

MMDB_CHECK_OFFSET(CharacterInput, desired_velocity, 0);
MMDB_CHECK_OFFSET(CharacterInput, desired_facing, 16);
MMDB_CHECK_OFFSET(CharacterInput, required_tags_lo, 32);
MMDB_CHECK_OFFSET(CharacterInput, required_tags_hi, 36);
MMDB_CHECK_OFFSET(CharacterInput, excluded_tags_lo, 40);
MMDB_CHECK_OFFSET(CharacterInput, excluded_tags_hi, 44);
MMDB_CHECK_OFFSET(CharacterInput, force_search, 48);
MMDB_CHECK_OFFSET(CharacterInput, teleport, 52);
MMDB_CHECK_OFFSET(CharacterInput, set_simulation, 56);
MMDB_CHECK_OFFSET(CharacterInput, reserved, 60);
MMDB_CHECK_OFFSET(CharacterInput, teleport_position, 64);
MMDB_CHECK_OFFSET(CharacterInput, teleport_rotation, 80);
MMDB_CHECK_OFFSET(CharacterInput, sim_position, 96);
MMDB_CHECK_OFFSET(CharacterInput, sim_velocity, 112);
MMDB_CHECK_OFFSET(CharacterInput, sim_acceleration, 128);
MMDB_CHECK_OFFSET(CharacterInput, sim_rotation, 144);
MMDB_CHECK_OFFSET(CharacterInput, sim_angular_velocity, 160);
static_assert(sizeof(CharacterInput) == 176, "std430 CharacterInput");

MMDB_CHECK_OFFSET(MatchResult, frame, 0);
MMDB_CHECK_OFFSET(MatchResult, cost, 4);
MMDB_CHECK_OFFSET(MatchResult, reason, 8);
MMDB_CHECK_OFFSET(MatchResult, seed_cost, 12);
static_assert(sizeof(MatchResult) == 16, "std430 MatchResult");

MMDB_CHECK_OFFSET(JointOffset, rotation, 0);
MMDB_CHECK_OFFSET(JointOffset, angular_velocity, 16);
MMDB_CHECK_OFFSET(JointOffset, translation, 32);
MMDB_CHECK_OFFSET(JointOffset, velocity, 48);
static_assert(sizeof(JointOffset) == 64, "std430 JointOffset");

MMDB_CHECK_OFFSET(JointPose, rotation, 0);
MMDB_CHECK_OFFSET(JointPose, translation, 16);
MMDB_CHECK_OFFSET(JointPose, velocity, 32);
MMDB_CHECK_OFFSET(JointPose, angular_velocity, 48);
static_assert(sizeof(JointPose) == 64, "std430 JointPose");

MMDB_CHECK_OFFSET(ModelJoint, rotation, 0);
MMDB_CHECK_OFFSET(ModelJoint, position, 16);
static_assert(sizeof(ModelJoint) == 32, "std430 ModelJoint");

MMDB_CHECK_OFFSET(PassParams, character_count, 0);
MMDB_CHECK_OFFSET(PassParams, joint_count, 4);
MMDB_CHECK_OFFSET(PassParams, feature_count, 8);
MMDB_CHECK_OFFSET(PassParams, feature_stride, 12);
MMDB_CHECK_OFFSET(PassParams, range_count, 16);
MMDB_CHECK_OFFSET(PassParams, clip_count, 20);
MMDB_CHECK_OFFSET(PassParams, trajectory_position_column, 24);
MMDB_CHECK_OFFSET(PassParams, trajectory_direction_column, 28);
MMDB_CHECK_OFFSET(PassParams, neighbourhood_frames, 32);
MMDB_CHECK_OFFSET(PassParams, frame_rate, 36);
MMDB_CHECK_OFFSET(PassParams, dt, 40);
MMDB_CHECK_OFFSET(PassParams, search_interval_ticks, 44);
MMDB_CHECK_OFFSET(PassParams, transition_cost, 48);
MMDB_CHECK_OFFSET(PassParams, inertialization_halflife, 52);
MMDB_CHECK_OFFSET(PassParams, inertialization_threshold, 56);
MMDB_CHECK_OFFSET(PassParams, controller_halflife, 60);
MMDB_CHECK_OFFSET(PassParams, stagger_phases, 64);
MMDB_CHECK_OFFSET(PassParams, bounds_size, 68);
MMDB_CHECK_OFFSET(PassParams, max_drift, 72);
MMDB_CHECK_OFFSET(PassParams, policies, 76);
MMDB_CHECK_OFFSET(PassParams, trajectory_times, 80);
MMDB_CHECK_OFFSET(PassParams, jump_cooldown, 96);
MMDB_CHECK_OFFSET(PassParams, settle_velocity_squared, 100);
MMDB_CHECK_OFFSET(PassParams, settle_cos_limit, 104);
MMDB_CHECK_OFFSET(PassParams, range_end_margin, 108);
MMDB_CHECK_OFFSET(PassParams, inertialization_rate_halflife, 112);
MMDB_CHECK_OFFSET(PassParams, frame_period, 116);
static_assert(sizeof(PassParams) == 128, "push constants (at most 128 bytes on every device)");

MMDB_CHECK_OFFSET(FootLock, position, 0);
MMDB_CHECK_OFFSET(FootLock, target, 16);
MMDB_CHECK_OFFSET(FootLock, animated, 32);
MMDB_CHECK_OFFSET(FootLock, offset, 48);
MMDB_CHECK_OFFSET(FootLock, offset_velocity, 64);
MMDB_CHECK_OFFSET(FootLock, since_unlock, 80);
MMDB_CHECK_OFFSET(FootLock, flags, 84);
MMDB_CHECK_OFFSET(FootLock, pad0, 88);
MMDB_CHECK_OFFSET(FootLock, pad1, 92);
static_assert(sizeof(FootLock) == 96, "std430 FootLock");

MMDB_CHECK_OFFSET(CharacterFeet, foot, 0);
MMDB_CHECK_OFFSET(CharacterFeet, shown_frame, 192);
MMDB_CHECK_OFFSET(CharacterFeet, shown_time, 196);
MMDB_CHECK_OFFSET(CharacterFeet, previous_shown_frame, 200);
MMDB_CHECK_OFFSET(CharacterFeet, shown_playing, 204);
static_assert(sizeof(CharacterFeet) == 208, "std430 CharacterFeet: a multiple of 16 bytes");

MMDB_CHECK_OFFSET(LegSetup, upper_leg, 0);
MMDB_CHECK_OFFSET(LegSetup, knee, 4);
MMDB_CHECK_OFFSET(LegSetup, foot, 8);
MMDB_CHECK_OFFSET(LegSetup, toe, 12);
MMDB_CHECK_OFFSET(LegSetup, contact_bit, 16);
MMDB_CHECK_OFFSET(LegSetup, pad, 20);
MMDB_CHECK_OFFSET(LegSetup, toe_tip, 32);
static_assert(sizeof(LegSetup) == 48, "std430 LegSetup");

MMDB_CHECK_OFFSET(FootLockSetup, legs, 0);
MMDB_CHECK_OFFSET(FootLockSetup, foot_locking, 96);
MMDB_CHECK_OFFSET(FootLockSetup, foot_unlock_radius, 100);
MMDB_CHECK_OFFSET(FootLockSetup, foot_unlock_halflife, 104);
MMDB_CHECK_OFFSET(FootLockSetup, ik_foot_height, 108);
MMDB_CHECK_OFFSET(FootLockSetup, ik_toe_length, 112);
MMDB_CHECK_OFFSET(FootLockSetup, ik_max_length_buffer, 116);
MMDB_CHECK_OFFSET(FootLockSetup, sync_mode, 120);
MMDB_CHECK_OFFSET(FootLockSetup, sync_position_halflife, 124);
MMDB_CHECK_OFFSET(FootLockSetup, sync_rotation_halflife, 128);
MMDB_CHECK_OFFSET(FootLockSetup, sync_position_ratio, 132);
MMDB_CHECK_OFFSET(FootLockSetup, sync_rotation_ratio, 136);
MMDB_CHECK_OFFSET(FootLockSetup, sync_max_distance, 140);
MMDB_CHECK_OFFSET(FootLockSetup, sync_max_angle, 144);
MMDB_CHECK_OFFSET(FootLockSetup, sync_foot_reach, 148);
MMDB_CHECK_OFFSET(FootLockSetup, sync_hard_distance, 152);
MMDB_CHECK_OFFSET(FootLockSetup, sync_rate_min, 156);
MMDB_CHECK_OFFSET(FootLockSetup, sync_rate_max, 160);
MMDB_CHECK_OFFSET(FootLockSetup, sync_stride_min, 164);
MMDB_CHECK_OFFSET(FootLockSetup, sync_stride_max, 168);
MMDB_CHECK_OFFSET(FootLockSetup, sync_warp_angle, 172);
MMDB_CHECK_OFFSET(FootLockSetup, sync_warp_halflife, 176);
MMDB_CHECK_OFFSET(FootLockSetup, search_interval_seconds, 180);
MMDB_CHECK_OFFSET(FootLockSetup, settle_search_interval, 184);
MMDB_CHECK_OFFSET(FootLockSetup, pad, 188);
static_assert(sizeof(FootLockSetup) == 192, "std430 FootLockSetup");

// The file's arrays the shaders read as they are (RootFrame is declared for GLSL only).
MMDB_CHECK_OFFSET(mmdb::RootFrame, position, 0);
MMDB_CHECK_OFFSET(mmdb::RootFrame, rotation, 16);
MMDB_CHECK_OFFSET(mmdb::RootFrame, velocity, 32);
MMDB_CHECK_OFFSET(mmdb::RootFrame, angular_velocity, 48);
static_assert(sizeof(mmdb::RootFrame) == 64, "std430 RootFrame");
static_assert(sizeof(mmdb::MatchRange) == 16, "a range is one uvec4");
static_assert(sizeof(mmdb::Float4) == 16, "a vec4");

#undef MMDB_CHECK_OFFSET

}  // namespace mmdb::gpu
