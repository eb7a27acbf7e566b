// The scripted crowd: every character follows the stick script (mmdb/stick_script.h) at its own
// time offset, a controller turns the stick into a trajectory, and motion matching picks the
// frames to play.
#pragma once

#include "decision_log.h"
#include "sample_options.h"

#include <mmdb/controller.h>
#include <mmdb/crowd.h>
#include <mmdb/database.h>
#include <mmdb/motion_measures.h>
#include <mmdb/stick_script.h>

#include <glm/vec2.hpp>
#include <glm/vec3.hpp>

#include <string>
#include <vector>

namespace mmdb::sample {

inline constexpr double kTickSeconds = 1.0 / 60.0;  // the game's update rate
// Ticks between periodic searches (0.1 s). Whole ticks, on the CPU and the GPU alike: a float
// timer counting down 1/60 s steps from 0.1 s lands on either side of zero by rounding.
inline constexpr int kSearchIntervalTicks = 6;
// The most of the gap between the controller and the animated character the query asks to
// close, in metres (mmdb::expressInCharacterFrame; the GPU's max_drift).
inline constexpr float kMaxDrift = 0.5f;

// Top-down (x, z) paths of character 0, for the plot.
struct TrajectoryTrace {
  std::vector<glm::vec2> desired;   // the controller's simulation root
  std::vector<glm::vec2> achieved;  // root motion of the frames played, in the world
  struct Event {
    glm::vec2 at{0.0f};
    std::string label;
  };
  std::vector<Event> seconds;  // on the desired path at each whole second ("3 s")
  std::vector<Event> jumps;    // on the achieved path where character 0 started or jumped, with
                               // the name of the clip it went to
};

// What the playback of the CPU crowd saw, as a sanity check printed after the summary.
struct PlaybackStats {
  uint64_t transitions = 0;     // inertialized switches
  double hip_height_sum = 0.0;  // model-space hip height, summed over characters and ticks
  uint64_t hip_height_samples = 0;
  mmdb::MotionMeasures motion;          // the motion measures of the run (mmdb::MotionMeter)
  std::vector<mmdb::ClipSlide> slides;  // clips whose planted feet drift most, worst first
};

// Prints the motion measures of a run: foot slide, pose continuity, switches, trajectory error
// and responsiveness (docs/review.md "Motion measures"), and the clips where feet slide most.
void print_motion(const mmdb::Database& db, const PlaybackStats& stats);

// The log's reason for a search of the runtime's crowds (mmdb::Crowd, mmdb::gpu::Crowd): a forced
// search is the sample's only force, the stick's sharp turn.
SearchReason sample_reason(mmdb::SearchReason reason);

// Runs the crowd on the CPU runtime (an mmdb::Crowd): each character follows `script` (at its
// own offset, mmdb::StickScript::characterOffset) at `speeds` (mmdb::speedsForDatabase). Returns
// an exit code; prints a reason to stderr on failure.
int run_cpu_crowd(const mmdb::Database& db, const SampleOptions& options,
                  const mmdb::StickScript& script, const LocomotionSpeeds& speeds, DecisionLog& log,
                  TrajectoryTrace& trace, PlaybackStats& stats);

}  // namespace mmdb::sample
