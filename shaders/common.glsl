// Shared declarations of the motion-matching compute passes: one descriptor set, one push-constant
// block and the math the passes share. The structs, bindings and constants come from
// mmdb/gpu/shader_interface.h, which the C++ side compiles too.
#include "mmdb/gpu/shader_interface.h"

// ---- Database (uploaded once, read-only) ----
layout(std430, set = 0, binding = MMDB_BINDING_FEATURES) readonly buffer Features { vec4 features[]; };
layout(std430, set = 0, binding = MMDB_BINDING_RANGES) readonly buffer Ranges { uvec4 ranges[]; };
layout(std430, set = 0, binding = MMDB_BINDING_ROTATIONS) readonly buffer Rotations { vec4 rotations[]; };
layout(std430, set = 0, binding = MMDB_BINDING_TRANSLATIONS) readonly buffer Translations { vec4 translations[]; };
layout(std430, set = 0, binding = MMDB_BINDING_VELOCITIES) readonly buffer Velocities { vec4 velocities[]; };
layout(std430, set = 0, binding = MMDB_BINDING_ANGULAR_VELOCITIES) readonly buffer AngularVelocities { vec4 angular_velocities[]; };
layout(std430, set = 0, binding = MMDB_BINDING_CLIP_STARTS) readonly buffer ClipStarts { uint clip_starts[]; };
layout(std430, set = 0, binding = MMDB_BINDING_NORMALIZATION) readonly buffer Normalization { float normalization[]; };
layout(std430, set = 0, binding = MMDB_BINDING_PARENTS) readonly buffer Parents { int parents[]; };
layout(std430, set = 0, binding = MMDB_BINDING_BOUNDS_MIN) readonly buffer BoundsMin { vec4 bounds_min[]; };
layout(std430, set = 0, binding = MMDB_BINDING_BOUNDS_MAX) readonly buffer BoundsMax { vec4 bounds_max[]; };
layout(std430, set = 0, binding = MMDB_BINDING_ROOT_MOTION) readonly buffer RootMotion { RootFrame root_motion[]; };
layout(std430, set = 0, binding = MMDB_BINDING_BIASES) readonly buffer Biases { float biases[]; };
layout(std430, set = 0, binding = MMDB_BINDING_CONTACTS) readonly buffer Contacts { uint contact_masks[]; };
layout(std430, set = 0, binding = MMDB_BINDING_LEGS) readonly buffer Legs { FootLockSetup foot_setup; };

// ---- Per character ----
layout(std430, set = 0, binding = MMDB_BINDING_CHARACTERS) buffer Characters { CrowdCharacter characters[]; };
layout(std430, set = 0, binding = MMDB_BINDING_INPUTS) readonly buffer Inputs { CharacterInput inputs[]; };
layout(std430, set = 0, binding = MMDB_BINDING_QUERIES) buffer Queries { vec4 queries[]; };
layout(std430, set = 0, binding = MMDB_BINDING_WEIGHTS) readonly buffer Weights { vec4 weights[]; };
layout(std430, set = 0, binding = MMDB_BINDING_RESULTS) buffer Results { MatchResult results[]; };
layout(std430, set = 0, binding = MMDB_BINDING_OFFSETS) buffer Offsets { JointOffset offsets[]; };
layout(std430, set = 0, binding = MMDB_BINDING_LOCAL_POSES) buffer LocalPoses { JointPose local_poses[]; };
layout(std430, set = 0, binding = MMDB_BINDING_MODEL_POSES) buffer ModelPoses { ModelJoint model_poses[]; };
layout(std430, set = 0, binding = MMDB_BINDING_FEET) buffer Feet { CharacterFeet feet[]; };
layout(std430, set = 0, binding = MMDB_BINDING_JOINT_LIMITS) readonly buffer JointLimits { float joint_limits[]; };
layout(std430, set = 0, binding = MMDB_BINDING_UNLOCKED) buffer Unlocked { vec4 unlocked_positions[]; };

layout(push_constant, std430) uniform Params { PassParams params; };

// ---- Math (quaternions x, y, z, w) ----
vec4 quatMul(vec4 a, vec4 b) {
  return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}
vec4 quatInv(vec4 q) { return vec4(-q.xyz, q.w); }
vec4 quatAbs(vec4 q) { return q.w < 0.0 ? -q : q; }
vec3 quatRotate(vec4 q, vec3 v) {
  vec3 t = 2.0 * cross(q.xyz, v);
  return v + q.w * t + cross(q.xyz, t);
}
vec4 fromScaledAxis(vec3 v) {
  float angle = length(v);
  if (angle < 1e-8) return normalize(vec4(0.5 * v, 1.0));
  return vec4((v / angle) * sin(0.5 * angle), cos(0.5 * angle));
}
vec3 toScaledAxis(vec4 q) {
  float s = length(q.xyz);
  if (s < 1e-8) return 2.0 * q.xyz;
  return q.xyz * (2.0 * atan(s, q.w) / s);
}

// Critically damped spring: damping y for a half-life (Holden's halflife_to_damping / 2).
float springY(float halflife) { return 2.0 * 0.69314718056 / max(halflife, 1e-5); }

// The reference controller's arithmetic (kPolicyReferenceArithmetic, mmdb::detail's reference*
// helpers): its approximate exponential, the damping's 1e-5 s, a rotation's angle from acos.
bool referenceArithmetic() { return (params.policies & kPolicyReferenceArithmetic) != 0u; }
float referenceNegExp(float x) { return 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x); }
float referenceSpringY(float halflife) { return (4.0 * 0.69314718056) / (halflife + 1e-5) / 2.0; }
vec3 referenceToScaledAxis(vec4 q) {
  float len = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
  if (len < 1e-8) return 2.0 * q.xyz;
  return 2.0 * (acos(clamp(q.w, -1.0, 1.0)) * (q.xyz / len));
}
// Its quaternion product and inverse in its order of operations (mmdb::detail's), unfused: acos
// turns one unit in the last place of a w near 1 into 3e-4 rad.
vec4 referenceQuatMul(vec4 q, vec4 p) {
  precise float w = p.w * q.w - p.x * q.x - p.y * q.y - p.z * q.z;
  precise float x = p.w * q.x + p.x * q.w - p.y * q.z + p.z * q.y;
  precise float y = p.w * q.y + p.x * q.z + p.y * q.w - p.z * q.x;
  precise float z = p.w * q.z - p.x * q.y + p.y * q.x + p.z * q.w;
  return vec4(x, y, z, w);
}
vec4 referenceQuatInv(vec4 q) { return vec4(q.xyz, -q.w); }
vec4 referenceFromScaledAxis(vec3 r) {
  vec3 v = r / 2.0;
  float half_angle = sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
  if (half_angle < 1e-8) {
    float len = sqrt(1.0 + v.x * v.x + v.y * v.y + v.z * v.z) + 1e-8;
    return vec4(v / len, 1.0 / len);
  }
  return vec4((sin(half_angle) / half_angle) * v, cos(half_angle));
}

// The clip holding a global frame: its first frame and frame count (clip_starts is sorted,
// clip_count + 1 entries).
uvec2 clipOf(uint frame) {
  uint lo = 0u, hi = params.clip_count;
  while (hi - lo > 1u) {
    uint mid = (lo + hi) / 2u;
    if (clip_starts[mid] <= frame) lo = mid; else hi = mid;
  }
  return uvec2(clip_starts[lo], clip_starts[lo + 1u] - clip_starts[lo]);
}

// Whether a global frame is the last of a matchable range (ranges are sorted by first frame).
bool lastOfRange(uint frame) {
  uint lo = 0u, hi = params.range_count;
  while (lo < hi) {  // first range starting after frame
    uint mid = (lo + hi) / 2u;
    if (ranges[mid].x <= frame) lo = mid + 1u; else hi = mid;
  }
  return lo > 0u && ranges[lo - 1u].x + ranges[lo - 1u].y == frame + 1u;
}

// The cost bias of a global frame (mmdb::Database::frameBias): its matchable range's, else its
// clip's.
float frameBias(uint frame) {
  uint lo = 0u, hi = params.range_count;
  while (lo < hi) {  // first range starting after frame
    uint mid = (lo + hi) / 2u;
    if (ranges[mid].x <= frame) lo = mid + 1u; else hi = mid;
  }
  if (lo > 0u && frame - ranges[lo - 1u].x < ranges[lo - 1u].y) return biases[lo - 1u];
  uint clip_lo = 0u, clip_hi = params.clip_count;
  while (clip_hi - clip_lo > 1u) {
    uint mid = (clip_lo + clip_hi) / 2u;
    if (clip_starts[mid] <= frame) clip_lo = mid; else clip_hi = mid;
  }
  return biases[params.range_count + clip_lo];
}

float infinity() { return uintBitsToFloat(0x7F800000u); }

// glm::slerp: shorter arc, and a plain (unnormalized) lerp when the two are within float epsilon.
vec4 slerpShortest(vec4 a, vec4 b, float t) {
  float c = dot(a, b);
  if (c < 0.0) { b = -b; c = -c; }
  if (c > 1.0 - 1.1920929e-7) return mix(a, b, t);
  float angle = acos(c);
  return (sin((1.0 - t) * angle) * a + sin(t * angle) * b) / sin(angle);
}

// Within this fraction of a frame of a key, a clock moved on is put on the key
// (mmdb::kClipTimeSnap), and a sample takes the key's rotation (the CPU's kOnKey).
const float kClipTimeSnap = 1e-3;
const float kOnKey = kClipTimeSnap;

// One joint of the pose of a clip at a clip-local time (the CPU's SamplePoseJob): key =
// clamp(time * rate, 0, count - 1), the two keys around it blended.
JointPose sampleJoint(uint clip_first, uint clip_count, float time, uint joint) {
  float key = min(max(time * params.frame_rate, 0.0), float(clip_count - 1u));
  uint k0 = uint(key);
  uint k1 = k0 + 1u < clip_count ? k0 + 1u : k0;
  float alpha = key - float(k0);
  uint a = (clip_first + k0) * params.joint_count + joint;
  uint b = (clip_first + k1) * params.joint_count + joint;
  JointPose pose;
  if (alpha <= kOnKey)
    pose.rotation = rotations[a];
  else if (alpha >= 1.0 - kOnKey)
    pose.rotation = dot(rotations[a], rotations[b]) < 0.0 ? -rotations[b] : rotations[b];
  else
    pose.rotation = slerpShortest(rotations[a], rotations[b], alpha);
  pose.translation = vec4(mix(translations[a].xyz, translations[b].xyz, alpha), 0.0);
  pose.velocity = vec4(mix(velocities[a].xyz, velocities[b].xyz, alpha), 0.0);
  pose.angular_velocity = vec4(mix(angular_velocities[a].xyz, angular_velocities[b].xyz, alpha), 0.0);
  return pose;
}

// Critically damped decay of an offset (x, v) after t seconds, in closed form.
void decayOffset(inout vec3 x, inout vec3 v, float halflife, float t) {
  float y = springY(halflife);
  vec3 j = v + x * y;
  float e = exp(-y * t);
  x = e * (x + j * t);
  v = e * (v - j * y * t);
}

// The same with the offset and its rate apart (mmdb::decayOffsetSplit): the offset from rest with
// halflife, the rate from no offset with rate_halflife, added; equal half-lives are decayOffset.
void decayOffsetSplit(inout vec3 x, inout vec3 v, float halflife, float rate_halflife, float t) {
  if (rate_halflife == halflife) {
    decayOffset(x, v, halflife, t);
    return;
  }
  vec3 x_part = x, v_part = vec3(0.0);
  vec3 x_rate = vec3(0.0), v_rate = v;
  decayOffset(x_part, v_part, halflife, t);
  decayOffset(x_rate, v_rate, rate_halflife, t);
  x = x_part + x_rate;
  v = v_part + v_rate;
}

// A rotation offset (rotation vector x) and its angular velocity v decayed by t seconds
// (mmdb::decayRotationSplit): equal half-lives decay the rotation vector as one; otherwise the
// offset and its rate decay apart, composed as exp(rate part) * exp(offset part). Returns the
// offset; v becomes its angular velocity.
vec4 decayRotationSplit(vec3 x, inout vec3 v, float halflife, float rate_halflife, float t) {
  if (rate_halflife == halflife) {
    decayOffset(x, v, halflife, t);
    return fromScaledAxis(x);
  }
  vec3 x_part = x, v_part = vec3(0.0);
  vec3 x_rate = vec3(0.0), v_rate = v;
  decayOffset(x_part, v_part, halflife, t);
  decayOffset(x_rate, v_rate, rate_halflife, t);
  vec4 rate = fromScaledAxis(x_rate);
  v = v_rate + quatRotate(rate, v_part);
  return normalize(quatMul(rate, fromScaledAxis(x_part)));
}

// The reference's arithmetic (mmdb::Crowd::decayReferenceOffsets): a joint's offsets, the
// rotation kept as a quaternion, decayed in place by dt in one step of the reference's spring.
void referenceDecay(inout JointOffset o, float dt) {
  // The offsets start zeroed: a rotation offset not yet made is no turn.
  if (o.rotation == vec4(0.0)) o.rotation = vec4(0.0, 0.0, 0.0, 1.0);
  if (!(dt > 0.0)) return;
  float y = referenceSpringY(params.inertialization_halflife);
  float e = referenceNegExp(y * dt);
  vec3 x0 = referenceToScaledAxis(o.rotation);
  vec3 j1 = o.angular_velocity.xyz + x0 * y;
  o.rotation = referenceFromScaledAxis(e * (x0 + j1 * dt));
  o.angular_velocity = vec4(e * (o.angular_velocity.xyz - j1 * y * dt), 0.0);
  vec3 k1 = o.velocity.xyz + o.translation.xyz * y;
  o.translation = vec4(e * (o.translation.xyz + k1 * dt), 0.0);
  o.velocity = vec4(e * (o.velocity.xyz - k1 * y * dt), 0.0);
}

// The clip time of the pose shown (mmdb::Crowd::shownClipTime): the clock's, or with
// kPolicyShowNextFrame one step on at the rate the clip last played (mmdb::advanceClipTime).
float shownClipTime(CrowdCharacter ch) {
  if ((params.policies & kPolicyShowNextFrame) == 0u) return ch.clip_time;
  precise float time = ch.clip_time + params.dt * ch.play_rate;
  precise float at = time * params.frame_rate;
  precise float nearest = floor(at + 0.5);
  if (abs(at - nearest) <= kClipTimeSnap) time = nearest * params.frame_period;
  return time;
}
float shownLead() { return (params.policies & kPolicyShowNextFrame) != 0u ? params.dt : 0.0; }

// A sampled joint with its transition offsets (offsets[index]) decayed by t seconds added
// (mmdb::InertializeJob): rotation = offset(t) * rotation, translation += offset(t), velocity +=
// offset rate, angular velocity = offset rate + offset(t) * angular velocity.
JointPose inertializedJoint(JointPose pose, uint index, float t) {
  JointOffset o = offsets[index];
  vec3 rx = o.rotation.xyz, rv = o.angular_velocity.xyz;
  vec3 tx = o.translation.xyz, tv = o.velocity.xyz;
  vec4 offset = decayRotationSplit(rx, rv, params.inertialization_halflife, params.inertialization_rate_halflife, t);
  decayOffsetSplit(tx, tv, params.inertialization_halflife, params.inertialization_rate_halflife, t);
  pose.rotation = normalize(quatMul(offset, pose.rotation));
  pose.angular_velocity = vec4(rv + quatRotate(offset, pose.angular_velocity.xyz), 0.0);
  pose.translation = vec4(pose.translation.xyz + tx, 0.0);
  pose.velocity = vec4(pose.velocity.xyz + tv, 0.0);
  return pose;
}

// Forward kinematics of a character's local pose (base: its first joint) into model_poses,
// relative to its simulation root (mmdb::ForwardKinematicsJob with an identity root).
void forwardKinematics(uint base) {
  for (uint j = 0u; j < params.joint_count; ++j) {
    JointPose local = local_poses[base + j];
    int p = parents[j];
    vec4 parent_rotation = p < 0 ? vec4(0.0, 0.0, 0.0, 1.0) : model_poses[base + uint(p)].rotation;
    vec3 parent_position = p < 0 ? vec3(0.0) : model_poses[base + uint(p)].position.xyz;
    ModelJoint m;
    m.position = vec4(parent_position + quatRotate(parent_rotation, local.translation.xyz), 1.0);
    m.rotation = normalize(quatMul(parent_rotation, local.rotation));
    model_poses[base + j] = m;
  }
}

// The largest, over joints, of how far the model pose moved since the last one shown (before
// foot locking) over that joint's limit in this step, squared (mmdb::Crowd's).
float squaredStepRatio(uint base) {
  float per_frame = 1.0 / (params.dt * params.frame_rate);
  float ratio = 0.0;
  for (uint j = 0u; j < params.joint_count; ++j) {
    vec3 moved = model_poses[base + j].position.xyz - unlocked_positions[base + j].xyz;
    ratio = max(ratio, dot(moved, moved) * joint_limits[j]);
  }
  return ratio * per_frame * per_frame;
}

// The character's local pose sampled with its offsets decayed by t (the sample and inertialize
// passes' work), then forward kinematics.
void poseAt(CrowdCharacter ch, uint base, float t) {
  for (uint j = 0u; j < params.joint_count; ++j)
    local_poses[base + j] = inertializedJoint(sampleJoint(ch.clip_first, ch.clip_count, shownClipTime(ch), j), base + j, t);
  forwardKinematics(base);
}

// The transition speed limit (mmdb::Crowd::limitTransition) on the clip and transition playing:
// the decay tried at the whole step (already posed when `posed`), then at half, a quarter and none
// of it, until no joint moves further than its limit since the last pose (failing all, the try
// that moved one the least). Leaves that pose in local_poses and model_poses, and its time in
// ch.transition_time.
void limitTransition(inout CrowdCharacter ch, uint base, bool posed) {
  precise float to = ch.transition_time + shownLead();
  precise float from = max(to - params.dt, 0.0);
  precise float half_time = from + 0.5 * (to - from);
  precise float quarter_time = from + 0.25 * (to - from);
  if (!posed) poseAt(ch, base, to);
  float best_time = to, time = to;
  float best_ratio = squaredStepRatio(base);
  for (uint k = 1u; k < 4u && best_ratio > 1.0; ++k) {
    time = k == 1u ? half_time : (k == 2u ? quarter_time : from);
    poseAt(ch, base, time);
    float ratio = squaredStepRatio(base);
    if (ratio < best_ratio) {
      best_ratio = ratio;
      best_time = time;
    }
  }
  if (time != best_time) poseAt(ch, base, best_time);  // the last try is not the one kept
  ch.transition_time = best_time - shownLead();
}

// Whether a transition's offsets are still added at its time: an upper bound over joints of the
// decaying offsets, x(t) = e^-yt (x0 + (v0 + y x0) t), and of their rate, with the slower
// half-life (it bounds the split decay too), above the threshold (mmdb::Crowd's).
bool offsetsShow(CrowdCharacter ch) {
  // The reference's arithmetic decays the offsets in place: always added (mmdb::Crowd's).
  if (referenceArithmetic()) return true;
  float y = springY(max(params.inertialization_halflife, params.inertialization_rate_halflife));
  float t = ch.transition_time;
  float j1 = ch.offset_bound_v + y * ch.offset_bound_x;
  float bound = exp(-y * t) * max(ch.offset_bound_x + j1 * t, ch.offset_bound_v + j1 * y * t);
  return bound > params.inertialization_threshold;
}

// The achieved path (mmdb::integrateRootMotion): dt seconds of a frame's root
// velocity and spin, taken from its clip's world into the character's.
void integrateRootMotion(inout vec3 position, inout vec4 rotation, uint frame, float dt) {
  RootFrame root = root_motion[frame];
  vec4 clip_to_character = quatMul(rotation, quatInv(root.rotation));
  position += quatRotate(clip_to_character, root.velocity.xyz) * dt;
  vec3 spin = quatRotate(clip_to_character, root.angular_velocity.xyz) * dt;
  float angle = length(spin);
  if (angle > 1e-9) rotation = normalize(quatMul(vec4((spin / angle) * sin(0.5 * angle), cos(0.5 * angle)), rotation));
}

// ---- Synchronization (mmdb::AdjustmentJob, mmdb/synchronization.h) ----

vec3 groundOf(vec3 v) { return vec3(v.x, 0.0, v.z); }
vec4 yawRotation(float angle) { return vec4(0.0, sin(0.5 * angle), 0.0, cos(0.5 * angle)); }
// The turn about +Y of a pure-yaw rotation, in (-pi, pi].
float yawAngle(vec4 q) {
  vec4 a = quatAbs(q);
  return 2.0 * atan(a.y, a.w);
}
// Play-rate matching (mmdb::playRate): the rate the clip plays at, 1 when off.
float playRate(vec3 clip_velocity, vec3 sim_velocity) {
  if (foot_setup.sync_mode == 0u) return 1.0;
  if (foot_setup.sync_rate_min == 1.0 && foot_setup.sync_rate_max == 1.0) return 1.0;
  float clip = length(groundOf(clip_velocity));
  if (!(clip > 0.1)) return 1.0;
  float rate = length(groundOf(sim_velocity)) / clip;
  rate = min(max(rate, foot_setup.sync_rate_min), foot_setup.sync_rate_max);
  return floor(rate * 64.0 + 0.5) / 64.0;
}

// The share of a gap a damped adjustment closes in dt.
float dampedShare(float dt, float halflife) { return 1.0 - exp(-0.69314718056 * dt / halflife); }

// Warping (mmdb::warpingOn, mmdb::stepGroundWarp): the ground-plane map (xx, zx, xz, zz) of the
// root motion and the feet, and a model-space point through it.
bool warpingOn() {
  return foot_setup.sync_mode == 1u &&
         (foot_setup.sync_stride_min != 1.0 || foot_setup.sync_stride_max != 1.0 || foot_setup.sync_warp_angle > 0.0);
}
vec3 warpApply(vec4 warp, vec3 p) { return vec3(warp.x * p.x + warp.z * p.z, p.y, warp.y * p.x + warp.w * p.z); }
// Eases `warp` towards the map taking the clip's root velocity onto the wanted one (model space):
// the clip's way turned by at most warp_angle, the stride along it within the bounds.
vec4 stepGroundWarp(vec4 warp, vec3 clip_velocity, vec3 wanted_velocity, float dt) {
  if (!warpingOn()) return vec4(1.0, 0.0, 0.0, 1.0);
  vec4 aim = vec4(1.0, 0.0, 0.0, 1.0);
  vec2 clip = clip_velocity.xz;
  vec2 wanted = wanted_velocity.xz;
  float clip_speed = length(clip);
  if (clip_speed > 0.05) {
    vec2 d = clip / clip_speed;
    // The turn fades out for a wanted velocity near zero or nearly behind (the CPU's fades).
    float angle = atan(d.x * wanted.y - d.y * wanted.x, dot(d, wanted));
    float behind = min((1.0 + cos(angle)) / (1.0 - 0.70710678), 1.0);
    float slow = min(length(wanted) / 0.1, 1.0);
    angle = min(max(angle, -foot_setup.sync_warp_angle), foot_setup.sync_warp_angle) * behind * slow;
    float c = cos(angle), s = sin(angle);
    vec2 turned = vec2(c * d.x - s * d.y, s * d.x + c * d.y);
    float stride = dot(turned, wanted) / clip_speed;
    stride = min(max(stride, foot_setup.sync_stride_min), foot_setup.sync_stride_max);
    float sxx = 1.0 + (stride - 1.0) * d.x * d.x, sxz = (stride - 1.0) * d.x * d.y;
    float szz = 1.0 + (stride - 1.0) * d.y * d.y;
    aim = vec4(c * sxx - s * sxz, s * sxx + c * sxz, c * sxz - s * szz, s * sxz + c * szz);
    // From a nearly still clip root, the identity, continuously.
    float moving = min((clip_speed - 0.05) / 0.05, 1.0);
    aim = vec4(1.0, 0.0, 0.0, 1.0) + (aim - vec4(1.0, 0.0, 0.0, 1.0)) * moving;
  }
  return warp + (aim - warp) * dampedShare(dt, foot_setup.sync_warp_halflife);
}

// Whether `share` of the adjustment (step, turn) keeps each locked toe within its limit.
bool adjustmentFits(float share, vec3 position, vec4 rotation, vec3 step, float turn, uint locked,
                    vec3 locks[2], vec3 toes[2], float limits[2]) {
  vec3 p = position + share * step;
  vec4 q = quatMul(yawRotation(share * turn), rotation);
  for (uint leg = 0u; leg < 2u; ++leg) {
    if ((locked & (1u << leg)) == 0u) continue;
    vec3 d = groundOf(p + quatRotate(q, toes[leg]) - locks[leg]);
    if (dot(d, d) > limits[leg]) return false;
  }
  return true;
}

// Synchronization::CharacterFollows for one character: the placement after the root motion
// moved towards the simulation root; returns (moved, turned) in `adjustment`.
void adjustTowardsController(inout vec3 position, inout vec4 rotation, vec3 root_motion, float root_turn,
                             vec3 sim_position, vec4 sim_rotation, uint locked, vec3 locks[2], vec3 toes[2],
                             float dt, out vec4 adjustment) {
  vec3 start = position;
  vec4 start_rotation = rotation;
  adjustment = vec4(0.0);
  if (!(dt > 0.0)) return;
  vec3 step = groundOf(sim_position - position) * dampedShare(dt, foot_setup.sync_position_halflife);
  float most = foot_setup.sync_position_ratio * length(groundOf(root_motion));
  float len = length(step);
  if (len > most) step *= len > 0.0 ? most / len : 0.0;
  vec3 past = groundOf(position + step - sim_position);
  float past_length = length(past);
  if (past_length > foot_setup.sync_max_distance)
    step -= past * ((past_length - foot_setup.sync_max_distance) / past_length);
  float turn = yawAngle(quatMul(sim_rotation, quatInv(rotation))) * dampedShare(dt, foot_setup.sync_rotation_halflife);
  float most_turn = foot_setup.sync_rotation_ratio * abs(root_turn);
  if (abs(turn) > most_turn) turn = turn < 0.0 ? -most_turn : most_turn;

  float limits[2] = float[2](0.0, 0.0);
  for (uint leg = 0u; leg < 2u; ++leg) {
    if ((locked & (1u << leg)) == 0u) continue;
    vec3 d = groundOf(position + quatRotate(rotation, toes[leg]) - locks[leg]);
    float reach = max(length(d), foot_setup.sync_foot_reach);
    limits[leg] = reach * reach;
  }
  float share = 1.0;
  if (locked != 0u && !adjustmentFits(1.0, position, rotation, step, turn, locked, locks, toes, limits)) {
    float low = 0.0, high = 1.0;
    for (int i = 0; i < 16; ++i) {
      float mid = 0.5 * (low + high);
      if (adjustmentFits(mid, position, rotation, step, turn, locked, locks, toes, limits))
        low = mid;
      else
        high = mid;
    }
    share = low;
  }
  position += share * step;
  rotation = normalize(quatMul(yawRotation(share * turn), rotation));

  vec3 gap = groundOf(position - sim_position);
  float distance = length(gap);
  if (distance > foot_setup.sync_hard_distance) {
    vec3 kept = gap * (foot_setup.sync_hard_distance / distance);
    position = vec3(sim_position.x + kept.x, position.y, sim_position.z + kept.z);
  }
  float angle = yawAngle(quatMul(rotation, quatInv(sim_rotation)));
  if (abs(angle) > foot_setup.sync_max_angle)
    rotation = normalize(quatMul(yawRotation(angle < 0.0 ? -foot_setup.sync_max_angle : foot_setup.sync_max_angle), sim_rotation));
  adjustment = vec4(position - start, yawAngle(quatMul(rotation, quatInv(start_rotation))));
}
