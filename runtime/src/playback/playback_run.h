// The playback jobs' work without their checks (internal). Each job's Run() is Validate() and
// then this; a caller that has checked once what every call reads (the crowd, at create and at
// each setter) calls these per character and step, where the checks cost as much as the work.
#pragma once

#include "mmdb/playback.h"

namespace mmdb::detail {

void runSamplePose(const SamplePoseJob& job) noexcept;
// runSamplePose() of a job whose clip (job.clip) starts at first_frame and has frame_count
// frames, given by a caller that keeps them (the file's clip table costs a lookup per field).
void runSamplePose(const SamplePoseJob& job, uint32_t first_frame, uint32_t frame_count) noexcept;
// offset_vectors: null, or each offset rotation as a rotation vector already (as
// runInertializeTransition() gives them), which then is not computed again.
void runInertialize(const InertializeJob& job, const glm::vec3* offset_vectors = nullptr) noexcept;
// offset_vectors: null, or where each new offset rotation goes as a rotation vector too.
void runInertializeTransition(const InertializeTransitionJob& job,
                              glm::vec3* offset_vectors = nullptr) noexcept;
void runForwardKinematics(const ForwardKinematicsJob& job) noexcept;
// The forward kinematics of `count` (1 to 4) jobs on one skeleton (their parents the same) at
// once, the same bits as each job's; scratch: forwardKinematics4ScratchFloats(joints) floats.
void runForwardKinematics4(const ForwardKinematicsJob* jobs, size_t count, float* scratch) noexcept;
size_t forwardKinematics4ScratchFloats(size_t joints) noexcept;
// The foot locks of `count` (1 to 4) jobs at once, the same bits as each job's alone: their
// skeleton, legs and settings those of jobs[0], their poses and feet each its own.
void runFootLock4(const FootLockJob* jobs, size_t count) noexcept;

}  // namespace mmdb::detail
