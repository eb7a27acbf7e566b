#version 450
// Pass 5, a thread per (character, joint): add the transition offsets, decayed by a critically
// damped spring evaluated in closed form from the transition's time (mmdb::InertializeJob; the
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

  local_poses[index] = inertializedJoint(local_poses[index], index, characters[c].transition_time);
}
