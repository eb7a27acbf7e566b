#version 450
// Pass 3, a thread per character: act on the search's decision. A winner other than the frame
// playing (or a first winner) switches playback to it; when something was playing, the switch is
// inertialized (mmdb::InertializeTransitionJob): per joint, the offsets between the pose showing
// now (the sample at the current time plus the previous offsets decayed to now) and the winner's
// pose are captured, so the shown pose stays continuous in position and velocity.
#include "common.glsl"

layout(local_size_x = MMDB_GROUP_SIZE) in;

void captureOffsets(inout CrowdCharacter ch, uint winner_first, uint winner_count, float winner_time, uint c) {
  float bound_x = 0.0, bound_v = 0.0;
  for (uint j = 0u; j < params.joint_count; ++j) {
    uint index = c * params.joint_count + j;
    JointOffset o = offsets[index];
    vec3 rx = o.rotation.xyz, rv = o.angular_velocity.xyz;
    vec3 tx = o.translation.xyz, tv = o.velocity.xyz;
    vec4 previous;
    if (referenceArithmetic()) {
      // Decayed in place from the time last shown to now, its rotation a quaternion.
      referenceDecay(o, params.dt - shownLead());
      previous = o.rotation;
      rv = o.angular_velocity.xyz;
      tx = o.translation.xyz;
      tv = o.velocity.xyz;
    } else {
      previous = decayRotationSplit(rx, rv, params.inertialization_halflife, params.inertialization_rate_halflife, ch.transition_time);
      decayOffsetSplit(tx, tv, params.inertialization_halflife, params.inertialization_rate_halflife, ch.transition_time);
    }
    JointPose src = sampleJoint(ch.clip_first, ch.clip_count, ch.clip_time, j);
    JointPose dst = sampleJoint(winner_first, winner_count, winner_time, j);

    // The reference's arithmetic rounds as its inertialize_transition does (not normalized).
    vec4 offset = referenceArithmetic()
                      ? quatAbs(referenceQuatMul(referenceQuatMul(previous, src.rotation), referenceQuatInv(dst.rotation)))
                      : normalize(quatAbs(quatMul(quatMul(previous, src.rotation), quatInv(dst.rotation))));
    o.rotation = referenceArithmetic() ? offset : vec4(toScaledAxis(offset), 0.0);
    // The shown angular velocity (offset rate + offset rotation applied to the pose's) is kept.
    if ((params.policies & kPolicyUnrotatedRates) != 0u)  // the reference's: as they are
      o.angular_velocity = vec4((rv + src.angular_velocity.xyz) - dst.angular_velocity.xyz, 0.0);
    else
      o.angular_velocity = vec4((rv + quatRotate(previous, src.angular_velocity.xyz)) -
                                quatRotate(offset, dst.angular_velocity.xyz), 0.0);
    o.translation = vec4((src.translation.xyz + tx) - dst.translation.xyz, 0.0);
    o.velocity = vec4((src.velocity.xyz + tv) - dst.velocity.xyz, 0.0);
    offsets[index] = o;
    bound_x = max(bound_x, max(length(referenceArithmetic() ? toScaledAxis(offset) : o.rotation.xyz), length(o.translation.xyz)));
    bound_v = max(bound_v, max(length(o.angular_velocity.xyz), length(o.velocity.xyz)));
  }
  ch.offset_bound_x = bound_x;
  ch.offset_bound_v = bound_v;
}

void main() {
  uint c = gl_GlobalInvocationID.x;
  if (c >= params.character_count) return;
  CrowdCharacter ch = characters[c];
  MatchResult result = results[c];
  // build_query's bits of this step stay; the others are this pass's.
  uint flags = ch.flags & (kCharacterPlaying | kCharacterInputChanging | kCharacterForcePending | kCharacterHeld);

  if (result.reason != kReasonNone) {
    flags |= kCharacterSearched;
    ch.search_count += 1u;
    ch.search_timer = int(params.search_interval_ticks);
    ch.search_clock = foot_setup.search_interval_seconds;
    // Spread the crowd's searches, once: from the first periodic search, or from the starts.
    if (result.reason == kReasonStart && params.stagger_phases > 1u &&
        (params.policies & kPolicyStaggerStarts) == 0u) {
      uint late = params.search_interval_ticks * (c % params.stagger_phases) / params.stagger_phases;
      ch.search_timer += int(late);
      if (params.search_interval_ticks > 0u)
        ch.search_clock += foot_setup.search_interval_seconds * float(late) / float(params.search_interval_ticks);
    }
    ch.last_winner = result.frame;
    ch.last_cost = result.cost;
    bool playing = (ch.flags & kCharacterPlaying) != 0u;
    // The continuing rule: playback reaches a winner a little ahead in the same clip by itself.
    uint continue_frames = params.policies >> kPolicyContinueShift;
    bool continued = playing && result.frame != kNoFrame && continue_frames > 0u &&
                     result.frame > ch.current_frame && result.frame < ch.clip_first + ch.clip_count &&
                     result.frame - ch.current_frame <= continue_frames;
    if (continued) flags |= kCharacterContinued;
    if (result.frame != kNoFrame && !continued && (!playing || result.frame != ch.current_frame)) {
      uvec2 clip = clipOf(result.frame);
      float time = float(result.frame - clip.x) / params.frame_rate;
      if (playing) {
        // The pose the switch starts from keeps within the transition speed limit too.
        if ((params.policies & kPolicySpeedLimit) != 0u && ch.transition_time > 0.0 && params.dt > 0.0 &&
            offsetsShow(ch))
          limitTransition(ch, c * params.joint_count, false);
        captureOffsets(ch, clip.x, clip.y, time, c);
        ch.since_switch = 0.0;
        ch.transition_time = 0.0;
        flags |= kCharacterSwitched;
      }
      ch.clip_first = clip.x;
      ch.clip_count = clip.y;
      ch.clip_time = time;
      ch.current_frame = result.frame;
      flags |= kCharacterPlaying;
    }
  }

  // Below the threshold the inertialize pass skips the character.
  if (offsetsShow(ch)) flags |= kCharacterInertializing;

  ch.flags = flags;
  characters[c] = ch;
}
