// The replay: a scripted stick played through a database by the runtime's CPU crowd
// (mmdb::Crowd), exactly as mmdb_sample's CPU run does, and measured. `mmcook diff` replays one
// script against two databases and compares what each decided; a report shows one.
//
// The run, per step of 1/60 s for `characters` characters (character i reads the script at
// StickScript::characterOffset(i)): each character's stick becomes its controller input at the
// speeds the database can follow (mmdb::speedsForDatabase), a sharp stick change (from the
// second step on) forces a search, then the crowd steps (periodic search every 6 steps, no
// staggering, max_drift 0.5 m, the bounds-pruned batch search; everything else the crowd's
// defaults: the playability policies, the synchronization, and foot locking unless
// ReplaySettings::feet asks for the clips' own feet), and an mmdb::MotionMeter measures it.
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
#include <mmdb/search.h>
#include <mmdb/stick_script.h>

#include <glm/vec2.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mmcook::review {

inline constexpr uint32_t kMaxReplayCharacters = 256;
inline constexpr double kMaxReplaySeconds = 600.0;
inline constexpr double kReplayStepSeconds = 1.0 / 60.0;   // the sample's update rate
inline constexpr uint32_t kReplaySearchIntervalSteps = 6;  // the sample's: 0.1 s
inline constexpr float kReplayMaxDrift = 0.5f;             // m, the sample's

// Whose feet a replay shows: the runtime's default, foot locking holding a planted toe where it
// planted (mmdb::CrowdSettings::foot_locking, what a game shows), or the clips' own feet, planted
// toes sliding as the clips and their transitions move them.
enum class ReplayFeet { Locked, Clips };

struct ReplaySettings {
  uint32_t characters = 16;  // 1 .. kMaxReplayCharacters
  double seconds = 20.0;     // simulated, above 0 and at most kMaxReplaySeconds; rounded to steps
  bool keep_decisions = false;           // fill Replay::decisions (each search with its query)
  bool reference_policies = false;       // the crowd's playability policies off
                                         // (mmdb::CrowdSettings::reference())
  ReplayFeet feet = ReplayFeet::Locked;  // foot locking on, as the crowd's default
  bool keep_poses = false;  // fill Replay::poses (the posed skeletons, for drawing) and each
                            // jump's candidates (ReplayJump::candidates)
  // Most bytes Replay::poses.offsets_mm may hold: a longer replay keeps every stride-th step
  // (ReplayPoses::stride), so a page that embeds it stays a few megabytes.
  size_t max_pose_bytes = size_t(4) << 20;
};

// The cheapest candidates at a jump, kept with ReplaySettings::keep_poses: what
// mmdb::explainCandidates() gives for the request (the winner first, then the next ones), each
// from another stretch of motion (distinctCandidates()), picked from the cheapest
// kReplayCandidatePool.
inline constexpr uint32_t kReplayCandidates = 4;
inline constexpr uint32_t kReplayCandidatePool = 64;

// The first `count` of `ranked` (best first, as mmdb::explainCandidates() ranks them) that are
// not within `spacing` frames (|a - b| <= spacing) of a better kept one in the same clip: the
// winner, then the best answers from other clips or other stretches of the same clip, not the
// winner's own neighbouring frames. A frame outside every clip counts as its own clip.
std::vector<mmdb::CandidateCost> distinctCandidates(const mmdb::Database& db,
                                                    mmdb::Span<const mmdb::CandidateCost> ranked,
                                                    size_t count, int32_t spacing);

// The frames a replay keeps apart in a jump's candidates: the search's own neighbourhood
// (mmdb::Database::defaultNeighbourhoodFrames(), 1/3 s), at least 1.
int32_t candidateSpacing(const mmdb::Database& db);

// A search whose winner is not the frame playing: the first frame a character plays, or a jump.
struct ReplayJump {
  double time;  // s, at the start of the step
  uint32_t character;
  int32_t from_frame;  // global frame playing before, -1 for the first search
  int32_t to_frame;    // global winner
  float cost;          // its cost
  mmdb::SearchReason reason;
  std::vector<mmdb::CandidateCost> candidates = {};  // with keep_poses: up to kReplayCandidates
  // With keep_poses, the frame that was playing (from_frame) costed for the same query as the
  // search costs its seed (no transition cost, its own bias): what the winner beat. frame -1 for
  // the first search. A seeded search switches only to a strictly cheaper winner, so there
  // playing.cost > cost; a search that was not seeded (a range that ends must move on) may
  // leave a cheaper frame playing.
  mmdb::CandidateCost playing = {};
  bool seeded = true;
  std::vector<float> query = {};  // with keep_poses: the normalized query (featureCount() floats)
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
  // unitWeightDistance() of the last decision's winner: the cost's feature part with every
  // block's weight taken out, on one scale across a weight change.
  std::vector<float> unit_distance;
};

// Every character's posed skeleton after each kept step (ReplaySettings::keep_poses): the pose
// the crowd returns (modelTranslations(), the same numbers a game reads) placed in the world by
// the character's achieved transform, quantized. Sample s is the state after step
// s * stride (time (s * stride + 1) * kReplayStepSeconds). Element [s][character] below; the
// offsets [s][character][joint][x, y, z].
struct ReplayPoses {
  uint32_t characters = 0, joints = 0;
  uint32_t stride = 1;   // steps between two samples (1: every step)
  uint32_t samples = 0;  // samples kept
  // World joint position minus the character's achieved position (the offset of the joint from
  // where the character stands, world axes), in millimetres, rounded and clamped to int16 (a
  // joint further than 32.767 m from its root is clamped).
  std::vector<int16_t> offsets_mm;
  // Where the character stands (achieved position, x and z) and where the controller's
  // simulation root is (desired, x and z), in millimetres: 4 per element.
  std::vector<int32_t> ground_mm;
  std::vector<uint32_t> contacts;  // contact bits of the pose shown (bit i: contactJoints()[i])
  std::vector<uint8_t> locked;     // bit per leg (0 left, 1 right): foot locking holds the toe
  std::vector<int32_t> clip;       // clip of the pose shown, -1 before the first search
  // Measures over time, each the largest since the previous sample:
  std::vector<float> slide_mm;      // a contact joint planted in this step and the one before:
                                    // its move on the ground (x, z) in the step, mm
  std::vector<float> pose_step_mm;  // the largest move of any joint in model space in one step
  std::vector<float> gap_m;         // ground distance between desired and achieved positions
  std::vector<uint8_t> switched;    // 1 when the character started a switch since the last sample

  size_t at(uint32_t sample, uint32_t character) const {
    return size_t(sample) * characters + character;
  }
};

// The squared distance between a request's query and a frame's features with each block's
// cooked weight divided out: sum over the columns of ((query - feature) / weight)^2, what the
// cost's feature part would be with every weight 1 (the request's run-time weights, which scale
// only the search's sum, do not enter). Blocks of weight 0 count nothing.
double unitWeightDistance(const mmdb::Database& db, const mmdb::SearchRequest& request,
                          int32_t frame);

// The quantization of ReplayPoses::offsets_mm: metres to the nearest millimetre, clamped to
// +-32767 mm (NaN to 0). Within 0.5 mm of the value inside that range.
int16_t replayMillimetres(float metres);

struct ReplayStats {
  uint64_t decisions = 0;                  // searches, all characters
  double decisions_per_second = 0.0;       // searches / wall-clock seconds spent searching
  double mean_cost = 0.0, p95_cost = 0.0;  // of the searches' winners
  // The winners' squared feature distance with every block's weight taken out (unitWeightDistance):
  // unlike the cost, it does not scale with the weights, so it compares across a weight change.
  double mean_unit_distance = 0.0;
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
  ReplayPoses poses;                      // with ReplaySettings::keep_poses
  // Why the feet were the clips' own though ReplayFeet::Locked asked for foot locking: the
  // skeleton has no two legs to bend (mmdb::findLegChains()'s error, with which a crowd that
  // locks feet refuses the database); "" when locked as asked, or when Clips asked.
  std::string locking_unavailable;
};

// The 95th percentile as this replay defines it: the value at index floor(0.95 * (n - 1)) of the
// sorted values (0 for none). Reorders `values`.
double percentile95(std::vector<double>& values);

// Decodes every frame of the four pose streams, clip by clip: a coded stream is decoded lazily,
// when it plays, not when the database opens, so a damaged segment opens and fails later. The
// runtime's error for the first range that does not decode (Corrupt: a segment whose bytes do not
// decode; Inconsistent: a value that decodes to NaN or a rotation far from unit length), naming
// the stream, joint and frames, with the clip that holds them; ok when every frame decodes.
mmdb::Status checkPoses(const mmdb::Database& db);

// Each clip's own feet, played straight: the clip alone from its first frame to its last, no
// switch, no runtime adjustment, as the file holds it. Per frame, its pose (forward kinematics of
// the frame's local pose) placed on the ground by the clip's root motion (RootFrame); a contact
// phase of a contact joint runs from the frame its contact bit sets to the last frame before it
// clears, both inside the clip (a phase the clip starts or ends in is not counted), and drifts by
// the ground-plane (x, z) distance between where the toe planted and where it was last planted,
// as mmdb::MotionMeter measures a phase. One ClipSlide per clip, in clip order (the clip's own
// phases; no phase across a switch); `drift_limit_mm` counts over_limit. The runtime's error
// for poses that do not decode.
mmdb::Result<std::vector<mmdb::ClipSlide>> straightClipSlides(const mmdb::Database& db,
                                                              double drift_limit_mm);

// Plays `script` through `db`. InvalidArgument for characters or seconds out of range; the
// crowd's error for a database it refuses (no 6-wide trajectory blocks, poses that do not
// decode); NoMatch when the database has no matchable frame to start from.
mmdb::Result<Replay> replay(const mmdb::Database& db, const mmdb::StickScript& script,
                            const ReplaySettings& settings);

}  // namespace mmcook::review
