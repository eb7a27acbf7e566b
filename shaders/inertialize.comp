#version 450
// Pass 5, a thread per (character, joint): add the transition offsets, decayed by a critically
// damped spring evaluated in closed form from the transition's time (mmdb::InertializeJob; the
// offset and its rate decay with their own half-lives, decayOffsetSplit):
//   x(t) = e^-yt (x0 + (v0 + y x0) t),  v(t) = e^-yt (v0 - (v0 + y x0) y t);
//   rotation = offset(t) * rotation, translation += offset(t), velocity += offset rate,
//   angular velocity = offset rate + offset(t) * angular velocity.
// Characters whose offsets have decayed below the threshold are skipped. With the reference's
// arithmetic the offsets (their rotation a quaternion) decay in place, step by step.
#include "common.glsl"

layout(local_size_x = MMDB_GROUP_SIZE) in;

void main() {
  uint index = gl_GlobalInvocationID.x;
  if (index >= params.character_count * params.joint_count) return;
  uint c = index / params.joint_count;
  if ((characters[c].flags & kCharacterInertializing) == 0u) return;

  float transition_time = characters[c].transition_time;
  if (referenceArithmetic()) {
    // The offsets decay in place by the step (at a switch, from the switch to the time shown),
    // then are added (the reference's inertialize_update; mmdb::Crowd's).
    JointOffset o = offsets[index];
    referenceDecay(o, transition_time == 0.0 ? shownLead() : params.dt);
    offsets[index] = o;
    JointPose pose = local_poses[index];
    pose.rotation = referenceQuatMul(o.rotation, pose.rotation);
    pose.angular_velocity = vec4(o.angular_velocity.xyz + quatRotate(o.rotation, pose.angular_velocity.xyz), 0.0);
    pose.translation = vec4(pose.translation.xyz + o.translation.xyz, 0.0);
    pose.velocity = vec4(pose.velocity.xyz + o.velocity.xyz, 0.0);
    local_poses[index] = pose;
    return;
  }
  local_poses[index] = inertializedJoint(local_poses[index], index, transition_time + shownLead());
}
