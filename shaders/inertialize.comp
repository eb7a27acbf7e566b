#version 450
// Pass 5, a thread per (character, joint): add the transition offsets, decayed by a critically
// damped spring evaluated in closed form from the time since the switch (mmdb::InertializeJob; the
// offset and its rate decay with their own half-lives, decayOffsetSplit):
//   x(t) = e^-yt (x0 + (v0 + y x0) t),  v(t) = e^-yt (v0 - (v0 + y x0) y t);
//   rotation = offset(t) * rotation, translation += offset(t), velocity += offset rate,
//   angular velocity = offset rate + offset(t) * angular velocity.
// Characters whose offsets have decayed below the threshold are skipped.
#include "common.glsl"

layout(local_size_x = MMDB_GROUP_SIZE) in;

void main() {
  uint index = gl_GlobalInvocationID.x;
  if (index >= params.character_count * params.joint_count) return;
  uint c = index / params.joint_count;
  if ((characters[c].flags & kCharacterInertializing) == 0u) return;

  float t = characters[c].since_switch;
  JointOffset o = offsets[index];
  vec3 rx = o.rotation.xyz, rv = o.angular_velocity.xyz;
  vec3 tx = o.translation.xyz, tv = o.velocity.xyz;
  vec4 offset = decayRotationSplit(rx, rv, params.inertialization_halflife, params.inertialization_rate_halflife, t);
  decayOffsetSplit(tx, tv, params.inertialization_halflife, params.inertialization_rate_halflife, t);

  JointPose pose = local_poses[index];
  pose.rotation = normalize(quatMul(offset, pose.rotation));
  pose.angular_velocity = vec4(rv + quatRotate(offset, pose.angular_velocity.xyz), 0.0);
  pose.translation = vec4(pose.translation.xyz + tx, 0.0);
  pose.velocity = vec4(pose.velocity.xyz + tv, 0.0);
  local_poses[index] = pose;
}
