// Shared declarations of the motion-matching compute passes: one descriptor set, one push-constant
// block and the math the passes share. The C++ side (runtime/gpu/include/mmdb/gpu/layout.h) mirrors every
// struct and binding here; change both together.

// ---- Database (uploaded once, read-only) ----
layout(std430, set = 0, binding = 0) readonly buffer Features { vec4 features[]; };       // rows at feature_stride floats
layout(std430, set = 0, binding = 1) readonly buffer Ranges { uvec4 ranges[]; };          // first, count, mask lo, mask hi
layout(std430, set = 0, binding = 2) readonly buffer Rotations { vec4 rotations[]; };     // [frame * joint_count + joint]
layout(std430, set = 0, binding = 3) readonly buffer Translations { vec4 translations[]; };
layout(std430, set = 0, binding = 4) readonly buffer Velocities { vec4 velocities[]; };
layout(std430, set = 0, binding = 5) readonly buffer AngularVelocities { vec4 angular_velocities[]; };
layout(std430, set = 0, binding = 6) readonly buffer ClipStarts { uint clip_starts[]; };  // clip_count + 1 global frames
layout(std430, set = 0, binding = 7) readonly buffer Normalization { float normalization[]; }; // offset[n], scale[n]
layout(std430, set = 0, binding = 8) readonly buffer Parents { int parents[]; };

// ---- Per character ----
struct Character {
  vec4 sim_position;          // controller: world position on the ground
  vec4 sim_velocity;
  vec4 sim_acceleration;
  vec4 sim_rotation;          // pure yaw quaternion
  vec4 sim_angular_velocity;
  uint clip_first;            // global first frame of the playing clip
  uint clip_count;            // its frame count
  float clip_time;            // clip-local seconds playing
  float search_timer;         // seconds until the next periodic search
  float since_switch;         // seconds since the last switch (drives the inertialization decay)
  uint current_frame;         // global frame playing: clip_first + floor(clip_time * rate + 1e-4)
  float offset_bound_x;       // max |offset| over joints at the switch (rad or m)
  float offset_bound_v;       // max |offset velocity| over joints at the switch
  uint flags;                 // kCharacter* bits
  uint last_winner;           // frame the last search returned
  float last_cost;            // its cost
  uint search_count;          // searches run since creation
};
const uint kCharacterSearched = 1u;      // searched during the last step
const uint kCharacterSwitched = 2u;      // switched to a new frame during the last step
const uint kCharacterInertializing = 4u; // offsets are still above the threshold
const uint kCharacterPlaying = 8u;       // a first search has picked a frame

// Why a character searches (MatchResult.reason), in order of precedence.
const uint kReasonNone = 0u;
const uint kReasonStart = 1u;     // nothing playing yet: no seed
const uint kReasonRangeEnd = 2u;  // at the last frame of a matchable range or clip: no seed
const uint kReasonForced = 3u;    // the host asked
const uint kReasonPeriodic = 4u;  // the search timer ran out

struct Input {
  vec4 desired_velocity;      // world, m/s (y ignored)
  vec4 desired_facing;        // world direction to face (y ignored); zero keeps the facing
  uvec4 tags;                 // required lo, hi, excluded lo, hi
  uvec4 control;              // x: force a search this step (1/0)
};

struct MatchResult {
  uint frame;                 // winner (global); the current frame when nothing was strictly
                              // cheaper; 0xFFFFFFFF when unseeded and no candidate passed
  float cost;                 // its cost
  uint reason;                // kReason*: kReasonNone when the character did not search
  float seed_cost;            // cost of the frame playing (+inf when unseeded)
};

struct JointOffset {          // inertialization offsets captured at the switch
  vec4 rotation;              // scaled angle-axis
  vec4 angular_velocity;
  vec4 translation;
  vec4 velocity;
};

struct JointPose {            // local pose (after sampling, then after inertialization)
  vec4 rotation;
  vec4 translation;
  vec4 velocity;
  vec4 angular_velocity;
};

struct ModelJoint {
  vec4 rotation;
  vec4 position;
};

layout(std430, set = 0, binding = 9) buffer Characters { Character characters[]; };
layout(std430, set = 0, binding = 10) readonly buffer Inputs { Input inputs[]; };
layout(std430, set = 0, binding = 11) buffer Queries { vec4 queries[]; };           // feature_stride floats per character
layout(std430, set = 0, binding = 12) buffer Results { MatchResult results[]; };
layout(std430, set = 0, binding = 13) buffer Offsets { JointOffset offsets[]; };    // [character * joint_count + joint]
layout(std430, set = 0, binding = 14) buffer LocalPoses { JointPose local_poses[]; };
layout(std430, set = 0, binding = 15) buffer ModelPoses { ModelJoint model_poses[]; };
// Per-column min / max of the features over boxes of bounds_size frames (rows at feature_stride).
layout(std430, set = 0, binding = 16) readonly buffer BoundsMin { vec4 bounds_min[]; };
layout(std430, set = 0, binding = 17) readonly buffer BoundsMax { vec4 bounds_max[]; };

layout(push_constant) uniform Params {
  uint character_count;
  uint joint_count;
  uint feature_count;
  uint feature_stride;        // floats, a multiple of 4
  uint range_count;
  uint clip_count;
  uint trajectory_position_column;
  uint trajectory_direction_column;
  uint ignore_surrounding;    // frames around the playing one the search skips
  float frame_rate;
  float dt;
  float search_interval;      // seconds between searches
  float transition_cost;
  float inertialization_halflife;
  float inertialization_threshold;
  float controller_halflife;  // position and rotation springs
  uint stagger_phases;        // character c's first periodic search is delayed (c % n) / n intervals
  uint bounds_size;           // frames per bounds box; 0: no pruning (exhaustive match)
  uint pad1, pad2;
  vec4 trajectory_times;      // xyz: seconds ahead of the three trajectory samples
} params;

// ---- Math (quaternions x, y, z, w) ----
vec4 quat_mul(vec4 a, vec4 b) {
  return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}
vec4 quat_inv(vec4 q) { return vec4(-q.xyz, q.w); }
vec4 quat_abs(vec4 q) { return q.w < 0.0 ? -q : q; }
vec3 quat_rotate(vec4 q, vec3 v) {
  vec3 t = 2.0 * cross(q.xyz, v);
  return v + q.w * t + cross(q.xyz, t);
}
vec4 quat_from_scaled_angle_axis(vec3 v) {
  float angle = length(v);
  if (angle < 1e-8) return normalize(vec4(0.5 * v, 1.0));
  return vec4((v / angle) * sin(0.5 * angle), cos(0.5 * angle));
}
vec3 quat_to_scaled_angle_axis(vec4 q) {
  float s = length(q.xyz);
  if (s < 1e-8) return 2.0 * q.xyz;
  return q.xyz * (2.0 * atan(s, q.w) / s);
}

// Critically damped spring: damping y for a half-life (Holden's halflife_to_damping / 2).
float spring_y(float halflife) { return 2.0 * 0.69314718056 / max(halflife, 1e-5); }

// The clip holding a global frame: its first frame and frame count (clip_starts is sorted,
// clip_count + 1 entries).
uvec2 clip_of(uint frame) {
  uint lo = 0u, hi = params.clip_count;
  while (hi - lo > 1u) {
    uint mid = (lo + hi) / 2u;
    if (clip_starts[mid] <= frame) lo = mid; else hi = mid;
  }
  return uvec2(clip_starts[lo], clip_starts[lo + 1u] - clip_starts[lo]);
}

// Whether a global frame is the last of a matchable range (ranges are sorted by first frame).
bool last_of_range(uint frame) {
  uint lo = 0u, hi = params.range_count;
  while (lo < hi) {  // first range starting after frame
    uint mid = (lo + hi) / 2u;
    if (ranges[mid].x <= frame) lo = mid + 1u; else hi = mid;
  }
  return lo > 0u && ranges[lo - 1u].x + ranges[lo - 1u].y == frame + 1u;
}

float infinity() { return uintBitsToFloat(0x7F800000u); }

// glm::slerp: shorter arc, and a plain (unnormalized) lerp when the two are within float epsilon.
vec4 quat_slerp(vec4 a, vec4 b, float t) {
  float c = dot(a, b);
  if (c < 0.0) { b = -b; c = -c; }
  if (c > 1.0 - 1.1920929e-7) return mix(a, b, t);
  float angle = acos(c);
  return (sin((1.0 - t) * angle) * a + sin(t * angle) * b) / sin(angle);
}

// One joint of the pose of a clip at a clip-local time (the CPU's SamplePoseJob): key =
// clamp(time * rate, 0, count - 1), the two keys around it blended.
JointPose sample_joint(uint clip_first, uint clip_count, float time, uint joint) {
  float key = min(max(time * params.frame_rate, 0.0), float(clip_count - 1u));
  uint k0 = uint(key);
  uint k1 = k0 + 1u < clip_count ? k0 + 1u : k0;
  float alpha = key - float(k0);
  uint a = (clip_first + k0) * params.joint_count + joint;
  uint b = (clip_first + k1) * params.joint_count + joint;
  JointPose pose;
  pose.rotation = quat_slerp(rotations[a], rotations[b], alpha);
  pose.translation = vec4(mix(translations[a].xyz, translations[b].xyz, alpha), 0.0);
  pose.velocity = vec4(mix(velocities[a].xyz, velocities[b].xyz, alpha), 0.0);
  pose.angular_velocity = vec4(mix(angular_velocities[a].xyz, angular_velocities[b].xyz, alpha), 0.0);
  return pose;
}

// Critically damped decay of an offset (x, v) after t seconds, in closed form.
void decay_offset(inout vec3 x, inout vec3 v, float halflife, float t) {
  float y = spring_y(halflife);
  vec3 j = v + x * y;
  float e = exp(-y * t);
  x = e * (x + j * t);
  v = e * (v - j * y * t);
}
