// The same scripted crowd on the GPU, through mmdb::gpu's Crowd: the six compute passes run for
// every character each tick; the host only writes stick inputs and reads decisions back.
#pragma once

#include "crowd.h"

namespace mmdb::sample {

// Runs the crowd on a headless Vulkan device and prints the mean time of each pass. Returns
// kExitBadInput, with a message on stderr, when there is no usable Vulkan device or the
// database does not fit the GPU passes.
int run_gpu_crowd(const mmdb::Database& db, const SampleOptions& options,
                  const mmdb::StickScript& script, const LocomotionSpeeds& speeds, DecisionLog& log,
                  TrajectoryTrace& trace);

}  // namespace mmdb::sample
