#version 450
// Pass 6, a thread per character: forward kinematics of the shown local pose to model space,
// relative to the character's simulation root (mmdb::ForwardKinematicsJob with an identity
// root); parents precede their children. With the transition speed limit (mmdb::Crowd's rule),
// a transition whose decay moved a joint further than its limit since the last pose is posed
// again with the decay gone on by half, a quarter or none of the step, the first that keeps
// within (else the one moving least). Then the character's achieved path takes dt of the
// root motion of the frame playing, warped (kept as the step's root motion too), then the synchronization
// (mmdb/synchronization.h: the character adjusted towards its simulation root, or the root put on
// the character), and the playback clock moves on: clip time and the frame playing by dt times
// the play rate, the time since the switch by dt, and the search timer by one step. It keeps the frame and time of the pose shown (and the step before's frame) for
// the foot lock pass and the host's readPlaying().
#include "common.glsl"

layout(local_size_x = MMDB_GROUP_SIZE) in;

void main() {
  uint c = gl_GlobalInvocationID.x;
  if (c >= params.character_count) return;
  uint base = c * params.joint_count;
  forwardKinematics(base);

  CrowdCharacter ch = characters[c];
  if ((params.policies & kPolicySpeedLimit) != 0u) {
    uint limited = kCharacterPlaying | kCharacterInertializing;
    if ((ch.flags & limited) == limited && ch.transition_time > 0.0 && params.dt > 0.0)
      limitTransition(ch, base, true);  // the whole step's decay is the pose the passes made
    for (uint j = 0u; j < params.joint_count; ++j) unlocked_positions[base + j] = model_poses[base + j].position;
  }
  // The frame of the pose shown (sampled at the clip time before it moves on, or one step on with
  // kPolicyShowNextFrame): the foot lock pass reads its contact bits, the host what is playing
  // (mmdb::Crowd::playing's numbers).
  bool playing = (ch.flags & kCharacterPlaying) != 0u;
  precise float shown_time = shownClipTime(ch);
  precise float shown = floor(max(shown_time * params.frame_rate, 0.0) + kClipTimeSnap);
  feet[c].previous_shown_frame = feet[c].shown_playing != 0u ? feet[c].shown_frame : kNoFrame;
  feet[c].shown_frame = ch.clip_first + uint(min(shown, float(ch.clip_count - 1u)));
  feet[c].shown_time = min(max(shown_time, 0.0), float(ch.clip_count - 1u) / params.frame_rate);
  feet[c].shown_playing = playing ? 1u : 0u;
  if (playing) {
    vec3 position = ch.achieved_position.xyz;
    vec4 rotation = ch.achieved_rotation;
    // Play-rate matching: the clip's clock and root motion take dt times the rate.
    float play_rate = playRate(root_motion[ch.current_frame].velocity.xyz, ch.sim_velocity.xyz);
    precise float clip_dt = params.dt * play_rate;
    characters[c].play_rate = play_rate;
    integrateRootMotion(position, rotation, ch.current_frame, clip_dt);
    // Warping (mmdb::Crowd::advance's): the step's root motion, in the character's frame, mapped
    // onto the velocity the controller wants (its own, plus the gap closing with the position
    // half-life).
    vec4 warp = vec4(1.0, 0.0, 0.0, 1.0);
    if (warpingOn() && params.dt > 0.0) {
      vec4 to_model = quatInv(ch.achieved_rotation);
      vec3 local = quatRotate(to_model, position - ch.achieved_position.xyz);
      vec3 gap = ch.sim_position.xyz - ch.achieved_position.xyz;
      vec3 wanted = ch.sim_velocity.xyz + vec3(gap.x, 0.0, gap.z) * (0.69314718056 / foot_setup.sync_position_halflife);
      warp = stepGroundWarp(ch.warp, local / params.dt, quatRotate(to_model, wanted), params.dt);
      position = ch.achieved_position.xyz + quatRotate(ch.achieved_rotation, warpApply(warp, local));
    }
    characters[c].warp = warp;
    // The step's root motion, for a game that owns the root (mmdb::Crowd::advance's).
    vec3 moved = position - ch.achieved_position.xyz;
    vec4 turned = normalize(quatMul(rotation, quatInv(ch.achieved_rotation)));
    characters[c].root_motion_world = vec4(moved, 0.0);
    characters[c].root_motion_local = vec4(quatRotate(quatInv(ch.achieved_rotation), moved), 0.0);
    characters[c].root_motion_rotation = turned;
    // The synchronization (mmdb::Crowd::synchronize): the character adjusted towards the
    // simulation root, held back by the toes locked at the last step, or the root put on it.
    vec4 adjustment = vec4(0.0);
    if (foot_setup.sync_mode == 2u) {
      characters[c].sim_position = vec4(position, 0.0);
      characters[c].sim_rotation = rotation;
    } else if (foot_setup.sync_mode == 1u) {
      uint locked = 0u;
      vec3 locks[2] = vec3[2](vec3(0.0), vec3(0.0));
      vec3 toes[2] = vec3[2](vec3(0.0), vec3(0.0));
      if (foot_setup.foot_locking != 0u) {
        for (uint leg = 0u; leg < 2u; ++leg) {
          if ((feet[c].foot[leg].flags & kFootLocked) == 0u) continue;
          locked |= 1u << leg;
          locks[leg] = feet[c].foot[leg].position.xyz;
          toes[leg] = warpApply(warp, model_poses[base + foot_setup.legs[leg].toe].position.xyz);
        }
      }
      adjustTowardsController(position, rotation, moved, yawAngle(turned), ch.sim_position.xyz, ch.sim_rotation,
                              locked, locks, toes, params.dt, adjustment);
    }
    characters[c].achieved_position = vec4(position, 0.0);
    characters[c].achieved_rotation = rotation;
    characters[c].adjustment = adjustment;
    // mmdb::advanceClipTime: a clock within kClipTimeSnap of a key is put on it.
    precise float time = ch.clip_time + clip_dt;
    precise float at = time * params.frame_rate;
    precise float nearest = floor(at + 0.5);
    if (abs(at - nearest) <= kClipTimeSnap) time = nearest * params.frame_period;
    ch.clip_time = time;
    precise float key = floor(ch.clip_time * params.frame_rate + kClipTimeSnap);  // no fused multiply-add
    ch.current_frame = ch.clip_first + uint(min(key, float(ch.clip_count - 1u)));
  }
  ch.since_switch += params.dt;
  ch.transition_time += params.dt;
  ch.search_timer -= 1;
  characters[c].search_clock = ch.search_clock - params.dt;
  characters[c].clip_time = ch.clip_time;
  characters[c].current_frame = ch.current_frame;
  characters[c].since_switch = ch.since_switch;
  characters[c].transition_time = ch.transition_time;
  characters[c].search_timer = ch.search_timer;
}
