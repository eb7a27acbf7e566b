#version 450
// Pass 4, a thread per (character, joint): sample the local pose of the playing clip at its
// clip-local time, one step on with kPolicyShowNextFrame (mmdb::SamplePoseJob): key = time * rate clamped to the clip, rotations slerp
// along the shorter arc, translations and velocities lerp. A character that has not started
// playing shows the first frame of the first matchable range, still (as mmdb::Crowd).
#include "common.glsl"

layout(local_size_x = MMDB_GROUP_SIZE) in;

void main() {
  uint index = gl_GlobalInvocationID.x;
  if (index >= params.character_count * params.joint_count) return;
  uint c = index / params.joint_count;
  CrowdCharacter ch = characters[c];
  if ((ch.flags & kCharacterPlaying) == 0u) {
    // Waiting for its start: the first frame of the first matchable range, still.
    if (params.range_count == 0u) {
      local_poses[index] = JointPose(vec4(0.0, 0.0, 0.0, 1.0), vec4(0.0), vec4(0.0), vec4(0.0));
      return;
    }
    uint frame = ranges[0].x;
    uvec2 clip = clipOf(frame);
    local_poses[index] = sampleJoint(clip.x, clip.y, float(frame - clip.x) / params.frame_rate, index % params.joint_count);
    return;
  }
  local_poses[index] = sampleJoint(ch.clip_first, ch.clip_count, shownClipTime(ch), index % params.joint_count);
}
