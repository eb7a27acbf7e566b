// Measures of the motion a player sees, taken from a crowd step after step: planted feet that
// slide, poses that jump, characters that switch clip too often, a trajectory that lags the
// stick, a facing slow to answer a sharp turn. docs/review.md "Motion measures" defines each one
// exactly; mmdb_sample prints them, `mmcook diff` compares two databases by them and
// `mmcook diff --fail-on` turns them into a data check.
//
//   auto meter = mmdb::MotionMeter::create(crowd.value());
//   each step:  crowd.value().step(dt);  meter.value().record(crowd.value(), dt);
//   then:       meter.value().total(), meter.value().character(i), meter.value().clipSlides()
//
// What is measured is what a game shows: the pose the crowd returns after step() (model space,
// modelTranslations()), placed in the world by the character's achieved transform after the step.
// A step counts only when the character played in it and in the step before (the first frame a
// character plays is not a transition).
//
// Unlike the crowd, the meter is a tool: it keeps every sample it needs for its percentiles and
// grows as it records (reserve() sizes it once). Errors are values; nothing is thrown.
#pragma once

#include "mmdb/crowd.h"
#include "mmdb/database.h"
#include "mmdb/result.h"
#include "mmdb/span.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec2.hpp>
#include <glm/vec3.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace mmdb {

struct MotionMeasureSettings {
  float phase_drift_limit = 0.021f;  // m: a contact phase drifting more than this is seen to slide
                                     // (Prazak, Hoyet and O'Sullivan, SCA 2011)
  float transition_window = 0.6f;    // s after a switch whose steps count as "at a switch"
  float sharp_turn_degrees = 30.f;   // a desired facing turning more than this within one step
                                     // starts a response
  float facing_tolerance_degrees = 20.f;  // answered once the achieved facing is this close
  float response_timeout = 3.f;           // s: a response not answered by then counts as missed
  float min_joint_step = 0.0005f;         // m: the smallest per-step move a joint's ratio is taken
                                          // against (a joint that never moves in the clips)
};

// A set of samples summarized: p50 and p90 are the values at index floor(q * (n - 1)) of the
// sorted samples, as p95 elsewhere in the runtime's tools; all 0 for no sample.
struct Distribution {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, max = 0;
};

// Where a pose measure is taken: [kElsewhere] or [kAtSwitch] (within transition_window of a
// switch).
inline constexpr int kElsewhere = 0;
inline constexpr int kAtSwitch = 1;

struct MotionMeasures {
  uint32_t characters = 0;
  uint64_t steps = 0;            // steps recorded, each for every character counted
  double character_seconds = 0;  // sum over characters of the time recorded
  // Planted feet, in the world's ground plane (x, z), contact joints (the toes) only.
  Distribution planted_slide_mm;      // per step a toe is planted in that step and the one before
  Distribution phase_drift_mm;        // per contact phase that started and ended while recorded:
                                      // from the toe where it planted to where it lifted
  uint64_t phases_over_limit = 0;     // phases drifting more than phase_drift_limit
  double phase_share_over_limit = 0;  // of phase_drift_mm.count (0 for none)
  // Of those phases, the ones a switch ran through (ClipSlide): a transition's slide, not a
  // clip's; and how many of them drift more than phase_drift_limit.
  uint64_t phases_across_switch = 0;
  uint64_t phases_across_switch_over_limit = 0;
  // Pose continuity, in model space.
  std::array<double, 2> max_joint_step_mm{};   // the largest move of any joint within one step
  std::array<double, 2> max_step_ratio{};      // the largest move over that joint's largest in
                                               // the clips (scaled to the step)
  std::array<int32_t, 2> worst_joint{-1, -1};  // the joint of max_step_ratio
  std::array<double, 2> max_acceleration{};    // m/s^2: the largest second difference of a
                                               // joint over three steps
  // Decisions.
  uint64_t searches = 0;
  uint64_t switches = 0;                         // inertialized switches to another frame
  std::array<uint64_t, 5> switches_by_reason{};  // indexed by SearchReason
  uint64_t continuations = 0;  // searches whose winner the continuing rule kept playing
  uint64_t held = 0;           // searches whose winner the jump cooldown refused
  double switch_rate = 0;      // switches per character-second
  // The trajectory: desired (the controller, taken the database's trajectory times ahead) against
  // achieved once the run reaches that time, mean over the three times (docs/review.md).
  Distribution trajectory_error_m;
  // Where the character is against its controller (mmdb/synchronization.h), per step a character
  // plays: the ground distance from its achieved position to the simulation root after the step,
  // and how much the synchronization moved and turned it, summed over the run per
  // character-second (m/s, degrees/s).
  Distribution controller_distance_m;
  double adjustment_m_per_s = 0;
  double adjustment_deg_per_s = 0;
  // Responsiveness: after a sharp turn of the desired facing, the time until the achieved facing
  // is within facing_tolerance_degrees of the desired one.
  uint64_t sharp_turns = 0;
  uint64_t responses_missed = 0;  // not answered within response_timeout
  Distribution response_s;
};

// Per clip, the contact phases that started in it (the shown pose's clip when the toe planted),
// in two kinds. Across a switch: a switch (Decision::switched) in any step from the one the toe
// planted in to the last it stayed planted, or a toe that planted within transition_window of a
// switch (its transition still running), so the transition moved the toe: that slide is the
// switch's, not the clip's. The clip's own: every other phase, whose drift is the clip's motion
// and the runtime's adjustments.
struct ClipSlide {
  uint32_t clip = 0;
  uint64_t phases = 0;  // the clip's own phases
  uint64_t over_limit = 0;
  double mean_drift_mm = 0;
  double max_drift_mm = 0;
  uint64_t across_phases = 0;  // phases across a switch
  uint64_t across_over_limit = 0;
  double across_mean_drift_mm = 0;
  double across_max_drift_mm = 0;
};

class MotionMeter {
 public:
  // A meter for `crowd` (its database, poses, settings and character count). Measures the
  // database's own motion once here: each joint's largest model-space move between two frames
  // of a clip. InvalidArgument for an empty crowd or settings that are not finite and > 0
  // (naming the setting).
  static Result<MotionMeter> create(const Crowd& crowd, const MotionMeasureSettings& settings = {});

  // Room for `steps` steps of every character, so that record() does not allocate.
  void reserve(uint64_t steps);

  // After each step of dt seconds (the dt the step was given, > 0). InvalidArgument for a crowd
  // of another size or database than create()'s, or a dt that is not finite and > 0.
  Status record(const Crowd& crowd, float dt);

  MotionMeasures total() const;
  MotionMeasures character(uint32_t character) const;  // empty for an index out of range
  // Clips by how far their own phases drift (ClipSlide): most own phases over the limit first,
  // then the largest own mean drift, then the most phases across a switch over the limit; clips
  // without a phase of either kind are left out.
  std::vector<ClipSlide> clipSlides() const;
  // Each joint's largest model-space move between two consecutive frames of a clip, m.
  Span<const float> clipJointSteps() const noexcept { return clip_joint_step_; }
  const MotionMeasureSettings& settings() const noexcept { return settings_; }

 private:
  struct Toe {
    bool planted = false;
    bool phase_open = false;  // planted since a start seen while recording
    bool switched = false;    // a switch in a step of the open phase
    glm::vec2 previous{0.f};  // ground position at the last step
    glm::vec2 start{0.f};     // where the open phase planted
    uint32_t clip = 0;        // the clip it planted in
  };
  struct Character {
    uint32_t history = 0;             // consecutive playing steps recorded (for the differences)
    std::vector<glm::vec3> model[2];  // the last two poses, [0] the latest
    std::vector<Toe> toes;
    glm::vec3 last_facing{0.f};  // the last desired facing that was not zero
    bool responding = false;
    double response_elapsed = 0;
    std::vector<double> slide_mm, drift_mm, trajectory_m, response_s, controller_m;
    double adjusted_m = 0, adjusted_deg = 0;  // the synchronization's adjustments, summed
    // Trajectory error: desired positions waiting for the run to reach their time.
    std::vector<std::array<glm::vec2, 3>> desired;
    std::vector<double> error_sums;
    MotionMeasures counts;  // the counters and maxima; distributions filled by summarize()
  };

  MotionMeasures summarize(const std::vector<const Character*>& characters) const;

  const Database* db_ = nullptr;
  MotionMeasureSettings settings_;
  ControllerSettings controller_;
  uint32_t count_ = 0, joints_ = 0;
  std::vector<uint32_t> contact_joints_;
  std::vector<float> clip_joint_step_;
  std::array<float, kTrajectorySamples> horizons_{};          // sorted seconds
  std::array<uint32_t, kTrajectorySamples> horizon_steps_{};  // in steps, set by the first dt
  uint32_t ring_ = 0;
  uint64_t step_ = 0;
  float dt_ = 0;
  std::vector<Character> characters_;
  std::vector<ClipSlide> clips_;
};

}  // namespace mmdb
