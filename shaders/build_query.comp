#version 450
// Pass 1, a thread per character: advance the controller (critically damped springs toward the
// stick's velocity and facing, mmdb::updateCharacter), decide whether to search and why, and
// build the query (mmdb::predictTrajectory + mmdb::buildQuery): the pose columns copied from the
// normalized row playing (zero when nothing plays yet), the trajectory columns predicted by the
// controller in the character's frame and normalized like the database.
#include "common.glsl"

layout(local_size_x = 64) in;

struct Sim {
  vec3 position, velocity, acceleration;
  vec4 rotation;
  vec3 angular_velocity;
};

vec4 desired_rotation(vec4 current, vec3 facing) {
  vec3 f = vec3(facing.x, 0.0, facing.z);
  if (dot(f, f) <= 1e-12) return current;
  float yaw = atan(f.x, f.z);
  return vec4(0.0, sin(0.5 * yaw), 0.0, cos(0.5 * yaw));
}

void update(inout Sim s, vec3 goal_velocity, vec4 goal_rotation, float t) {
  float y = spring_y(params.controller_halflife);
  vec3 j0 = s.velocity - goal_velocity;
  vec3 j1 = s.acceleration + j0 * y;
  float e = exp(-y * t);
  s.position = e * (-j1 / (y * y) + (-j0 - j1 * t) / y) + j1 / (y * y) + j0 / y + goal_velocity * t + s.position;
  s.velocity = e * (j0 + j1 * t) + goal_velocity;
  s.acceleration = e * (s.acceleration - j1 * y * t);

  vec3 r0 = quat_to_scaled_angle_axis(quat_abs(quat_mul(s.rotation, quat_inv(goal_rotation))));
  vec3 r1 = s.angular_velocity + r0 * y;
  s.rotation = normalize(quat_mul(quat_from_scaled_angle_axis(e * (r0 + r1 * t)), goal_rotation));
  s.angular_velocity = e * (s.angular_velocity - r1 * y * t);
}

void set_query(uint base, uint column, float raw) {
  float value = (raw - normalization[column]) / normalization[params.feature_count + column];
  uint i = base + column;
  queries[i / 4u][i % 4u] = value;
}

void main() {
  uint c = gl_GlobalInvocationID.x;
  if (c >= params.character_count) return;
  Character ch = characters[c];
  Input inp = inputs[c];

  Sim s;
  s.position = ch.sim_position.xyz;
  s.velocity = ch.sim_velocity.xyz;
  s.acceleration = ch.sim_acceleration.xyz;
  s.rotation = ch.sim_rotation;
  s.angular_velocity = ch.sim_angular_velocity.xyz;
  vec3 goal_velocity = vec3(inp.desired_velocity.x, 0.0, inp.desired_velocity.z);
  update(s, goal_velocity, desired_rotation(s.rotation, inp.desired_facing.xyz), params.dt);
  characters[c].sim_position = vec4(s.position, 0.0);
  characters[c].sim_velocity = vec4(s.velocity, 0.0);
  characters[c].sim_acceleration = vec4(s.acceleration, 0.0);
  characters[c].sim_rotation = s.rotation;
  characters[c].sim_angular_velocity = vec4(s.angular_velocity, 0.0);

  bool playing = (ch.flags & kCharacterPlaying) != 0u;
  uint frame = ch.current_frame;
  uint reason = kReasonNone;
  if (!playing) reason = kReasonStart;
  else if (last_of_range(frame) || frame + 1u >= ch.clip_first + ch.clip_count) reason = kReasonRangeEnd;
  else if (inp.control.x != 0u) reason = kReasonForced;
  // Due within 1e-5 s of zero: float decrements of 1/60 s from 0.1 s must land on the 6th frame.
  else if (ch.search_timer <= 1e-5) reason = kReasonPeriodic;
  results[c].reason = reason;
  if (reason == kReasonNone) return;

  // Pose columns (and the zero padding) from the row playing, then the trajectory over them.
  uint base = c * params.feature_stride;
  uint vecs = params.feature_stride / 4u;
  for (uint i = 0u; i < vecs; ++i) queries[c * vecs + i] = playing ? features[frame * vecs + i] : vec4(0.0);

  vec4 goal_rotation = desired_rotation(s.rotation, inp.desired_facing.xyz);
  vec4 inverse_now = quat_inv(s.rotation);
  for (uint k = 0u; k < 3u; ++k) {
    Sim future = s;
    update(future, goal_velocity, goal_rotation, params.trajectory_times[k]);
    vec3 p = quat_rotate(inverse_now, future.position - s.position);
    vec3 d = quat_rotate(inverse_now, quat_rotate(future.rotation, vec3(0.0, 0.0, 1.0)));
    set_query(base, params.trajectory_position_column + 2u * k, p.x);
    set_query(base, params.trajectory_position_column + 2u * k + 1u, p.z);
    set_query(base, params.trajectory_direction_column + 2u * k, d.x);
    set_query(base, params.trajectory_direction_column + 2u * k + 1u, d.z);
  }
}
