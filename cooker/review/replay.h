// The replay: a scripted stick played through a database by the runtime's CPU crowd
// (mmdb::Crowd), exactly as mmdb_sample's CPU run does, and measured. `mmcook diff` replays one
// script against two databases and compares what each decided; a report shows one.
//
// The run, per step of 1/60 s for `characters` characters (character i reads the script at
// StickScript::characterOffset(i)): each character's stick becomes its controller input at the
// speeds the database can follow (mmdb::speedsForDatabase), a sharp stick change (from the
// second step on) forces a search, then the crowd steps (periodic search every 6 steps, no
// staggering, max_drift 0.5 m, the bounds-pruned batch search, the default playability
// policies), and an mmdb::MotionMeter measures it.
//
// The trajectory error of a character at a step (docs/review.md): the controller predicts, from
// its state after the step, where the simulation root will be at the database's trajectory times
// (1/3, 2/3 and 1 s ahead: mmdb::predictTrajectory, taken to the world); the error is the mean,
// over those three times, of the ground-plane distance between that desired position and the
// achieved position (where the root motion of the frames played took the character) once the
// replay reaches that time. Steps whose last trajectory time falls after the end of the replay
// have no error.
//
// Deterministic: the same database, script and settings give the same Replay, but for
// decisions_per_second, which measures this machine.
#pragma once

#include <mmdb/crowd.h>
#include <mmdb/database.h>
#include <mmdb/motion_measures.h>
#include <mmdb/result.h>
#include <mmdb/stick_script.h>

#include <glm/vec2.hpp>

#include <cstdint>
#include <vector>

namespace mmcook::review {

inline constexpr uint32_t kMaxReplayCharacters = 256;
inline constexpr double kMaxReplaySeconds = 600.0;
inline constexpr double kReplayStepSeconds = 1.0 / 60.0;   // the sample's update rate
inline constexpr uint32_t kReplaySearchIntervalSteps = 6;  // the sample's: 0.1 s
inline constexpr float kReplayMaxDrift = 0.5f;             // m, the sample's

struct ReplaySettings {
  uint32_t characters = 16;  // 1 .. kMaxReplayCharacters
  double seconds = 20.0;     // simulated, above 0 and at most kMaxReplaySeconds; rounded to steps
  bool keep_decisions = false;      // fill Replay::decisions (each search with its query)
  bool reference_policies = false;  // the crowd's playability policies off
                                    // (mmdb::CrowdSettings::reference())
};

// A search whose winner is not the frame playing: the first frame a character plays, or a jump.
struct ReplayJump {
  double time;  // s, at the start of the step
  uint32_t character;
  int32_t from_frame;  // global frame playing before, -1 for the first search
  int32_t to_frame;    // global winner
  float cost;          // its cost
  mmdb::SearchReason reason;
};

// Every search of the replay (Replay::decisions, with ReplaySettings::keep_decisions).
struct ReplayDecision {
  uint32_t step;  // the step it ran in (time = step * kReplayStepSeconds)
  uint32_t character;
  mmdb::SearchReason reason;
  int32_t playing_frame;     // global frame playing when it ran, -1 for none
  int32_t frame;             // global winner (the frame playing when nothing was cheaper)
  float cost;                // the winner's cost
  std::vector<float> query;  // the normalized query it searched with (featureCount() floats)
  // The rest of the request as the crowd made it (mmdb::SearchRequest): the frame it started from
  // or skipped around, whether it was seeded with it, the transition cost, the range end margin.
  int32_t request_current = -1;
  bool seeded = false;
  float transition_cost = 0;
  int32_t range_end_margin = 0;
};

// Character 0, one entry per step, after the step.
struct ReplayTrace {
  std::vector<double> time;         // s, at the end of the step
  std::vector<glm::vec2> desired;   // (x, z) of the controller's simulation root
  std::vector<glm::vec2> achieved;  // (x, z) of the achieved path (root motion played)
  std::vector<float> cost;          // cost of the last decision's winner
};

struct ReplayStats {
  uint64_t decisions = 0;                  // searches, all characters
  double decisions_per_second = 0.0;       // searches / wall-clock seconds spent searching
  double mean_cost = 0.0, p95_cost = 0.0;  // of the searches' winners
  double mean_trajectory_error = 0.0, p95_trajectory_error = 0.0;  // m, desired vs achieved
  std::vector<uint64_t> clip_frames;  // steps played per clip (clip order), all characters
  // Additions: what else the crowd did.
  uint64_t jumps = 0;  // searches whose winner was not the frame playing (Replay::jumps)
  uint64_t steps = 0;  // steps run (each for every character)
  uint64_t trajectory_samples = 0;  // steps with a trajectory error, all characters
  // What a player sees (mmdb::MotionMeter, docs/review.md "Motion measures"); the trajectory
  // error above is its trajectory_error_m.
  mmdb::MotionMeasures motion;
  std::vector<mmdb::ClipSlide> slides;  // clips where planted feet drift most, worst first
};

struct Replay {
  ReplayStats stats;
  std::vector<ReplayJump> jumps;  // in step order, then character order
  ReplayTrace trace;
  std::vector<ReplayDecision> decisions;  // in step order, then character order; kept only with
                                          // ReplaySettings::keep_decisions
};

// The 95th percentile as this replay defines it: the value at index floor(0.95 * (n - 1)) of the
// sorted values (0 for none). Reorders `values`.
double percentile95(std::vector<double>& values);

// Plays `script` through `db`. InvalidArgument for characters or seconds out of range; the
// crowd's error for a database it refuses (no 6-wide trajectory blocks, poses that do not
// decode); NoMatch when the database has no matchable frame to start from.
mmdb::Result<Replay> replay(const mmdb::Database& db, const mmdb::StickScript& script,
                            const ReplaySettings& settings);

}  // namespace mmcook::review
