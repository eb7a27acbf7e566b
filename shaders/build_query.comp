#version 450
// Pass 1, a thread per character: advance the controller (critically damped springs toward the
// stick's velocity and facing, mmdb::updateCharacter), decide whether to search and why, and
// build the query (mmdb::predictTrajectory + mmdb::buildQuery): the pose columns copied from the
// normalized row playing (zero when nothing plays yet), the trajectory columns predicted by the
// controller, then expressed from where the animated character is and faces (its achieved path),
// with the gap between controller and character capped at max_drift, and normalized like the
// database. That re-expression is mmdb::expressInCharacterFrame: when the character
// drifts from the controller, the trajectory bends back towards it.
#include "common.glsl"

layout(local_size_x = MMDB_GROUP_SIZE) in;

struct Sim {
  vec3 position, velocity, acceleration;
  vec4 rotation;
  vec3 angular_velocity;
};

vec4 desiredRotation(vec4 current, vec3 facing) {
  vec3 f = vec3(facing.x, 0.0, facing.z);
  if (dot(f, f) <= 1e-12) return current;
  float yaw = atan(f.x, f.z);
  return vec4(0.0, sin(0.5 * yaw), 0.0, cos(0.5 * yaw));
}

void update(inout Sim s, vec3 goal_velocity, vec4 goal_rotation, float t) {
  bool reference = referenceArithmetic();  // the reference's springs (mmdb::updateCharacter's)
  float y = reference ? referenceSpringY(params.controller_halflife) : springY(params.controller_halflife);
  vec3 j0 = s.velocity - goal_velocity;
  vec3 j1 = s.acceleration + j0 * y;
  float e = reference ? referenceNegExp(y * t) : exp(-y * t);
  s.position = e * (-j1 / (y * y) + (-j0 - j1 * t) / y) + j1 / (y * y) + j0 / y + goal_velocity * t + s.position;
  s.velocity = e * (j0 + j1 * t) + goal_velocity;
  s.acceleration = e * (s.acceleration - j1 * y * t);

  vec3 r0 = reference ? referenceToScaledAxis(quatAbs(referenceQuatMul(s.rotation, referenceQuatInv(goal_rotation))))
                      : toScaledAxis(quatAbs(quatMul(s.rotation, quatInv(goal_rotation))));
  vec3 r1 = s.angular_velocity + r0 * y;
  s.rotation = reference ? referenceQuatMul(referenceFromScaledAxis(e * (r0 + r1 * t)), goal_rotation)
                         : normalize(quatMul(fromScaledAxis(e * (r0 + r1 * t)), goal_rotation));
  s.angular_velocity = e * (s.angular_velocity - r1 * y * t);
}

void setQuery(uint base, uint column, float raw) {
  float value = (raw - normalization[column]) / normalization[params.feature_count + column];
  uint i = base + column;
  queries[i / 4u][i % 4u] = value;
}

void main() {
  uint c = gl_GlobalInvocationID.x;
  if (c >= params.character_count) return;
  CrowdCharacter ch = characters[c];
  CharacterInput inp = inputs[c];

  if (inp.teleport == kTeleportMove) {
    // mmdb::Crowd::teleport: the rigid move taking the achieved transform to the one given
    // carries the simulation root with it; held feet are let go.
    vec4 turn = normalize(quatMul(inp.teleport_rotation, quatInv(ch.achieved_rotation)));
    ch.sim_position = vec4(inp.teleport_position.xyz +
                           quatRotate(turn, ch.sim_position.xyz - ch.achieved_position.xyz), 0.0);
    ch.sim_rotation = normalize(quatMul(turn, ch.sim_rotation));
    ch.sim_velocity = vec4(quatRotate(turn, ch.sim_velocity.xyz), 0.0);
    ch.sim_acceleration = vec4(quatRotate(turn, ch.sim_acceleration.xyz), 0.0);
    ch.sim_angular_velocity = vec4(quatRotate(turn, ch.sim_angular_velocity.xyz), 0.0);
    for (uint leg = 0u; leg < 2u; ++leg) {
      feet[c].foot[leg].position = vec4(0.0);
      feet[c].foot[leg].target = vec4(0.0);
      feet[c].foot[leg].animated = vec4(0.0);
      feet[c].foot[leg].offset = vec4(0.0);
      feet[c].foot[leg].offset_velocity = vec4(0.0);
      feet[c].foot[leg].since_unlock = 0.0;
      feet[c].foot[leg].flags = 0u;
    }
  }
  if (inp.teleport != kTeleportNone) {  // teleport and place (mmdb::Crowd::place: this alone)
    ch.achieved_position = vec4(inp.teleport_position.xyz, 0.0);
    ch.achieved_rotation = inp.teleport_rotation;
    characters[c].achieved_position = ch.achieved_position;
    characters[c].achieved_rotation = ch.achieved_rotation;
  }
  if (inp.set_simulation != 0u) {  // mmdb::Crowd::setSimulation: the simulation root alone
    ch.sim_position = vec4(inp.sim_position.xyz, 0.0);
    ch.sim_velocity = vec4(inp.sim_velocity.xyz, 0.0);
    ch.sim_acceleration = vec4(inp.sim_acceleration.xyz, 0.0);
    ch.sim_rotation = inp.sim_rotation;
    ch.sim_angular_velocity = vec4(inp.sim_angular_velocity.xyz, 0.0);
  }

  Sim s;
  s.position = ch.sim_position.xyz;
  s.velocity = ch.sim_velocity.xyz;
  s.acceleration = ch.sim_acceleration.xyz;
  s.rotation = ch.sim_rotation;
  s.angular_velocity = ch.sim_angular_velocity.xyz;
  Sim before = s;
  vec3 goal_velocity = vec3(inp.desired_velocity.x, 0.0, inp.desired_velocity.z);
  update(s, goal_velocity, desiredRotation(s.rotation, inp.desired_facing.xyz), params.dt);
  characters[c].sim_position = vec4(s.position, 0.0);
  characters[c].sim_velocity = vec4(s.velocity, 0.0);
  characters[c].sim_acceleration = vec4(s.acceleration, 0.0);
  characters[c].sim_rotation = s.rotation;
  characters[c].sim_angular_velocity = vec4(s.angular_velocity, 0.0);

  bool playing = (ch.flags & kCharacterPlaying) != 0u;
  uint flags = ch.flags & ~(kCharacterInputChanging | kCharacterForcePending | kCharacterHeld);

  // The stick settles: it changed sharply in the last step and no longer does (mmdb::Crowd).
  bool settled = false;
  if (params.dt > 0.0) {
    vec3 velocity = vec3(inp.desired_velocity.x, 0.0, inp.desired_velocity.z);
    vec3 facing = vec3(inp.desired_facing.x, 0.0, inp.desired_facing.z);
    vec3 last_facing = ch.input_facing.xyz;
    if (facing.x * facing.x + facing.z * facing.z <= 1e-12) facing = last_facing;
    vec3 change = velocity - ch.input_velocity.xyz;
    precise float dot_facing = last_facing.x * facing.x + last_facing.z * facing.z;
    precise float lengths = sqrt((last_facing.x * last_facing.x + last_facing.z * last_facing.z) *
                                 (facing.x * facing.x + facing.z * facing.z));
    precise float change_squared = change.x * change.x + change.z * change.z;
    bool changing = change_squared > params.settle_velocity_squared ||
                    dot_facing < params.settle_cos_limit * lengths;
    settled = (params.policies & kPolicySearchWhenSettled) != 0u && playing &&
              (ch.flags & kCharacterInputChanging) != 0u && !changing;
    if (playing && changing) flags |= kCharacterInputChanging;
    // settle_search_interval: at most once per interval (mmdb::Crowd's float timer).
    if (foot_setup.settle_search_interval > 0.0) {
      if (settled && ch.settle_clock <= 0.0) {
        characters[c].settle_clock = foot_setup.settle_search_interval;
      } else {
        settled = false;
        if (ch.settle_clock > 0.0) characters[c].settle_clock = ch.settle_clock - params.dt;
      }
    }
    characters[c].input_velocity = vec4(velocity, 0.0);
    characters[c].input_facing = vec4(facing, 0.0);
  } else {
    flags |= ch.flags & kCharacterInputChanging;
  }

  uint frame = ch.current_frame;
  uint reason = kReasonNone;
  bool forced = inp.force_search != 0u || (ch.flags & kCharacterForcePending) != 0u || settled;
  if (!playing) {
    if ((params.policies & kPolicyStaggerStarts) == 0u || ch.search_timer <= 0) reason = kReasonStart;
  } else if ((lastOfRange(frame) && (params.policies & kPolicyClipEndOnly) == 0u) ||
             frame + 1u >= ch.clip_first + ch.clip_count) reason = kReasonRangeEnd;
  else if (forced) reason = kReasonForced;
  else if (foot_setup.search_interval_seconds > 0.0 ? ch.search_clock <= 0.0 : ch.search_timer <= 0)
    reason = kReasonPeriodic;  // whole steps: no float drift (unless the float timer is asked for)
  // The jump cooldown: a periodic or forced search waits for it to end; a forced one is kept.
  if ((reason == kReasonForced || reason == kReasonPeriodic) && ch.since_switch < params.jump_cooldown) {
    flags |= kCharacterHeld;
    if (reason == kReasonForced) flags |= kCharacterForcePending;
    reason = kReasonNone;
  }
  characters[c].flags = flags;
  results[c].reason = reason;
  if (reason == kReasonNone) return;

  // Pose columns (and the zero padding) from the row playing, then the trajectory over them.
  uint base = c * params.feature_stride;
  uint vecs = params.feature_stride / 4u;
  for (uint i = 0u; i < vecs; ++i) queries[c * vecs + i] = playing ? features[frame * vecs + i] : vec4(0.0);

  // The trajectory from the simulation root after this step's update, or before it
  // (kPolicyPredictBeforeUpdate, the reference's order).
  if ((params.policies & kPolicyPredictBeforeUpdate) != 0u) s = before;
  vec4 goal_rotation = desiredRotation(s.rotation, inp.desired_facing.xyz);
  vec4 inverse_now = quatInv(s.rotation);
  vec3 gap = s.position - ch.achieved_position.xyz;
  gap.y = 0.0;
  float gap_length = length(gap);
  if (gap_length > params.max_drift) gap *= params.max_drift / gap_length;
  vec4 to_character = quatInv(ch.achieved_rotation);
  Sim stepped = s;  // the reference's arithmetic: positions stepped from sample to sample
  float stepped_time = 0.0;
  for (uint k = 0u; k < 3u; ++k) {
    Sim future = s;
    update(future, goal_velocity, goal_rotation, params.trajectory_times[k]);
    if (referenceArithmetic()) {
      update(stepped, goal_velocity, goal_rotation, params.trajectory_times[k] - stepped_time);
      stepped_time = params.trajectory_times[k];
      future.position = stepped.position;
    }
    // In the controller's frame (mmdb::predictTrajectory), then from the character.
    vec3 p = quatRotate(inverse_now, future.position - s.position);
    vec3 d = quatRotate(inverse_now, quatRotate(future.rotation, vec3(0.0, 0.0, 1.0)));
    vec3 ahead = quatRotate(s.rotation, vec3(p.x, 0.0, p.z));
    vec3 local = quatRotate(to_character, gap + ahead);
    vec3 facing = quatRotate(to_character, quatRotate(s.rotation, vec3(d.x, 0.0, d.z)));
    setQuery(base, params.trajectory_position_column + 2u * k, local.x);
    setQuery(base, params.trajectory_position_column + 2u * k + 1u, local.z);
    setQuery(base, params.trajectory_direction_column + 2u * k, facing.x);
    setQuery(base, params.trajectory_direction_column + 2u * k + 1u, facing.z);
  }
}
