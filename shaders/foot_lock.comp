#version 450
// Pass 7, a thread per character: foot locking (mmdb::FootLockJob), after fk, with the achieved
// transform of after the step placing the model pose in the world. Per leg, with the contact bit
// of the pose shown (the frame fk kept): a contact that starts locks the toe where it is shown
// (no lower than ik_foot_height); a locked toe lets go when its contact ends or the animated toe
// is further than foot_unlock_radius, and blends back from the lock to the animation (the offset
// and the opposite of the toe's velocity, decayed by the time since); while locked or blending,
// (or warped: the animated toe mapped by the character's warp) two-bone IK bends the upper leg and the knee to put the ankle where the animated foot-to-toe
// vector puts the toe on its target, the foot keeps its animated orientation (turned for the toe
// to reach when the ankle could not), and the toe joint turns up when the tip of the toes would go
// below ik_foot_height. The local rotations of the leg change and the model pose below each upper
// leg is recomputed from the local pose; everything else is left as fk wrote it.
#include "common.glsl"

layout(local_size_x = MMDB_GROUP_SIZE) in;

const float kBlendHalflives = 20.0;  // a blend back ends this many half-lives after its unlock
const float kKneeHint = 0.1;        // the lean of a knee's plane towards knee_forward (the CPU's)
const float kFoldedReach = 0.2;     // a leg folded this far (hip to ankle over its length) is as
const float kFullIkReach = 0.35;    // animated; the IK fades in up to this (the CPU's)

// The shortest rotation taking direction a to direction b (identity when either vanishes).
vec4 rotationBetween(vec3 a, vec3 b) {
  float la = length(a), lb = length(b);
  if (!(la > 1e-9) || !(lb > 1e-9)) return vec4(0.0, 0.0, 0.0, 1.0);
  vec3 u = a / la, v = b / lb;
  float c = dot(u, v);
  if (c < -1.0 + 1e-6) {  // a half turn, about any axis across u
    vec3 other = abs(u.x) < 0.9 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0);
    return vec4(normalize(cross(u, other)), 0.0);
  }
  return normalize(vec4(cross(u, v), 1.0 + c));
}

// The rotation about `axis` (unit) taking unit u to unit v, both across it (a half turn about
// `axis` when they are opposite).
vec4 turnAbout(vec3 u, vec3 v, vec3 axis) {
  float c = dot(u, v);
  if (c < -1.0 + 1e-6) return vec4(axis, 0.0);
  return normalize(vec4(cross(u, v), 1.0 + c));
}

// The model pose of `root` and every joint below it, from the local pose (fk.comp's product).
void refresh(uint base, uint root) {
  for (uint j = root; j < params.joint_count; ++j) {
    int up = int(j);
    while (up > int(root)) up = parents[up];
    if (up != int(root)) continue;
    int p = parents[j];
    vec4 parent_rotation = p < 0 ? vec4(0.0, 0.0, 0.0, 1.0) : model_poses[base + uint(p)].rotation;
    vec3 parent_position = p < 0 ? vec3(0.0) : model_poses[base + uint(p)].position.xyz;
    model_poses[base + j].position = vec4(parent_position + quatRotate(parent_rotation, local_poses[base + j].translation.xyz), 1.0);
    model_poses[base + j].rotation = normalize(quatMul(parent_rotation, local_poses[base + j].rotation));
  }
}

// Gives joint j this model rotation (its parent's kept), by its local rotation.
void setModelRotation(uint base, uint j, vec4 model) {
  int p = parents[j];
  vec4 parent_rotation = p < 0 ? vec4(0.0, 0.0, 0.0, 1.0) : model_poses[base + uint(p)].rotation;
  local_poses[base + j].rotation = normalize(quatMul(quatInv(parent_rotation), model));
}

// Two-bone IK (mmdb::TwoBoneIkJob): the knee bends in the plane of the chain, leaning towards
// knee_forward (all of the way when it is straight), to reach as far as the target, at most the chain's length
// less the buffer (or as far as it reaches already), then the upper joint swings it onto the
// target.
void bend(uint base, uint upper, uint knee, uint end, vec3 target, vec3 knee_forward, float length_buffer) {
  vec3 a = model_poses[base + upper].position.xyz;
  vec3 b = model_poses[base + knee].position.xyz;
  vec3 c = model_poses[base + end].position.xyz;
  vec3 ab = b - a, bc = c - b;
  float lab = length(ab), lbc = length(bc);
  if (!(lab > 1e-6) || !(lbc > 1e-6)) return;
  float longest = max(max(lab + lbc - length_buffer, 0.0), length(c - a));
  float shortest = abs(lab - lbc);
  float reach = max(min(length(target - a), longest), shortest);
  float cos_now = min(max(dot(-ab, bc) / (lab * lbc), -1.0), 1.0);
  float cos_wanted = min(max((lab * lab + lbc * lbc - reach * reach) / (2.0 * lab * lbc), -1.0), 1.0);
  // The plane to bend in: the chain's own normal (as long as the knee's sine) plus kKneeHint of
  // the one towards knee_forward; the chain first swivels about the hip-to-ankle line into it.
  vec3 ac = c - a;
  vec3 own = cross(ab, bc) / (lab * lbc);
  vec3 axis = own;
  vec3 hint = cross(knee_forward, ac);
  float hint_length = length(hint);
  if (hint_length > 1e-6 * length(knee_forward) * length(ac)) {
    // A knee bent backwards bends as far forwards instead (the CPU's): its plane never flips.
    float backwards = dot(own, hint) / hint_length;
    if (backwards < 0.0) axis -= (2.0 * backwards / hint_length) * hint;
    axis += (kKneeHint / hint_length) * hint;
  }
  if (!(length(axis) > 1e-6)) axis = cross(ab, abs(ab.x) < 0.9 * lab ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0));
  axis = normalize(axis);
  vec4 swivel = vec4(0.0, 0.0, 0.0, 1.0);
  if (length(own) > 1e-6 && length(ac) > 1e-6) swivel = turnAbout(normalize(own), axis, normalize(ac));
  vec3 b_swivelled = a + quatRotate(swivel, ab);
  vec3 bc_swivelled = quatRotate(swivel, bc);
  float sin_now = sqrt(max(1.0 - cos_now * cos_now, 0.0));
  float sin_wanted = sqrt(max(1.0 - cos_wanted * cos_wanted, 0.0));
  float cos_turn = cos_now * cos_wanted + sin_now * sin_wanted;
  float sin_turn = sin_now * cos_wanted - cos_now * sin_wanted;
  vec4 knee_turn = 1.0 + cos_turn > 1e-6 ? normalize(vec4(axis * sin_turn, 1.0 + cos_turn)) : vec4(axis, 0.0);
  vec3 bent = b_swivelled + quatRotate(knee_turn, bc_swivelled);
  vec4 swing = rotationBetween(bent - a, target - a);
  vec4 upper_model = normalize(quatMul(swing, quatMul(swivel, model_poses[base + upper].rotation)));
  vec4 knee_model = normalize(quatMul(swing, quatMul(knee_turn, quatMul(swivel, model_poses[base + knee].rotation))));
  setModelRotation(base, upper, upper_model);
  local_poses[base + knee].rotation = normalize(quatMul(quatInv(upper_model), knee_model));
  refresh(base, upper);
}

void main() {
  uint c = gl_GlobalInvocationID.x;
  if (c >= params.character_count || foot_setup.foot_locking == 0u) return;
  CrowdCharacter ch = characters[c];
  if ((ch.flags & kCharacterPlaying) == 0u) {  // nothing shown yet: nothing held
    for (uint s = 0u; s < 2u; ++s) {
      FootLock none;
      none.position = vec4(0.0);
      none.target = vec4(0.0);
      none.animated = vec4(0.0);
      none.offset = vec4(0.0);
      none.offset_velocity = vec4(0.0);
      none.since_unlock = 0.0;
      none.flags = 0u;
      none.pad0 = 0u;
      none.pad1 = 0u;
      feet[c].foot[s] = none;
    }
    return;
  }
  uint base = c * params.joint_count;
  vec3 position = ch.achieved_position.xyz;
  vec4 rotation = ch.achieved_rotation;
  vec4 to_model = quatInv(rotation);
  uint contacts = contact_masks[feet[c].shown_frame];
  float halflife = foot_setup.foot_unlock_halflife;
  float foot_height = foot_setup.ik_foot_height;
  for (uint s = 0u; s < 2u; ++s) {
    LegSetup leg = foot_setup.legs[s];
    FootLock f = feet[c].foot[s];
    bool locked = (f.flags & kFootLocked) != 0u;
    bool blending = (f.flags & kFootBlending) != 0u;
    bool was_contact = (f.flags & kFootContact) != 0u;
    bool seen = (f.flags & kFootSeen) != 0u;
    bool contact = ((contacts >> leg.contact_bit) & 1u) != 0u;
    // The animated toe, where warping maps it.
    bool warped = ch.warp != vec4(1.0, 0.0, 0.0, 1.0);
    vec3 animated = position + quatRotate(rotation, warpApply(ch.warp, model_poses[base + leg.toe].position.xyz));
    vec3 velocity = seen && params.dt > 0.0 ? (animated - f.animated.xyz) / params.dt : vec3(0.0);

    // Where the toe goes on from the last step: held, blending back, or as animated.
    if (blending) f.since_unlock += params.dt;
    vec3 target = animated;
    if (locked) {
      target = f.position.xyz;
    } else if (blending) {
      vec3 x = f.offset.xyz, v = f.offset_velocity.xyz;
      decayOffset(x, v, halflife, f.since_unlock);
      target = animated + x;
    }
    if (locked && (!contact || length(animated - f.position.xyz) > foot_setup.foot_unlock_radius)) {
      locked = false;  // let go: blend from the lock, still, to the animation
      blending = true;
      f.since_unlock = 0.0;
      f.offset = vec4(f.position.xyz - animated, 0.0);
      f.offset_velocity = vec4(-velocity, 0.0);
      target = f.position.xyz;
    } else if (!locked && contact && !was_contact) {
      locked = true;  // a contact starts: hold the toe where it is shown
      blending = false;
      f.position = vec4(target.x, max(target.y, foot_height), target.z, 0.0);
      target = f.position.xyz;
    }
    if (blending && f.since_unlock >= kBlendHalflives * halflife) {
      blending = false;
      target = animated;
    }
    f.flags = (locked ? kFootLocked : 0u) | (blending ? kFootBlending : 0u) |
              (contact ? kFootContact : 0u) | kFootSeen;
    f.animated = vec4(animated, 0.0);
    f.target = vec4(target, 0.0);
    feet[c].foot[s] = f;
    if (!locked && !blending && !warped) continue;  // the leg as animated

    // A leg folded nearly shut follows the animation, the IK fading in as it opens (the CPU's).
    vec3 hip = model_poses[base + leg.upper_leg].position.xyz;
    vec3 knee = model_poses[base + leg.knee].position.xyz;
    vec3 ankle = model_poses[base + leg.foot].position.xyz;
    float leg_length = length(knee - hip) + length(ankle - knee);
    float open = leg_length > 0.0 ? length(ankle - hip) / leg_length : 1.0;
    float weight = min(max((open - kFoldedReach) / (kFullIkReach - kFoldedReach), 0.0), 1.0);
    if (!(weight > 0.0)) continue;

    // The leg to the target, in model space.
    vec3 toe_target = quatRotate(to_model, target - position);
    if (weight < 1.0) {
      vec3 toe_animated = model_poses[base + leg.toe].position.xyz;
      toe_target = toe_animated + weight * (toe_target - toe_animated);
    }
    vec3 foot_to_toe = model_poses[base + leg.toe].position.xyz - model_poses[base + leg.foot].position.xyz;
    vec4 foot_animated = model_poses[base + leg.foot].rotation;
    bend(base, leg.upper_leg, leg.knee, leg.foot, toe_target - foot_to_toe, vec3(0.0, 0.0, 1.0), foot_setup.ik_max_length_buffer);
    vec4 aim = rotationBetween(foot_to_toe, toe_target - model_poses[base + leg.foot].position.xyz);
    setModelRotation(base, leg.foot, normalize(quatMul(aim, foot_animated)));
    refresh(base, leg.foot);
    // The tip of the toes no lower than the foot height: the toe joint turns up towards it.
    vec3 toe = model_poses[base + leg.toe].position.xyz;
    vec3 tip = toe + quatRotate(model_poses[base + leg.toe].rotation, leg.toe_tip.xyz * foot_setup.ik_toe_length);
    vec3 tip_world = position + quatRotate(rotation, tip);
    if (foot_setup.ik_toe_length > 0.0 && tip_world.y < foot_height) {
      vec3 lifted = quatRotate(to_model, vec3(tip_world.x, foot_height, tip_world.z) - position);
      vec4 lift = rotationBetween(tip - toe, lifted - toe);
      setModelRotation(base, leg.toe, normalize(quatMul(lift, model_poses[base + leg.toe].rotation)));
      refresh(base, leg.toe);
    }
  }
}
