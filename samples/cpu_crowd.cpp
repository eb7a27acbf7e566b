// The crowd on the CPU runtime: an mmdb::Crowd steps every character every tick, as a game's
// animation update would (controller, query, search, then sample, inertialize and pose). The
// characters that search in a tick are answered together by one mmdb::searchBatch (one pass over
// the database for all of them); with --exhaustive each is searched alone with
// mmdb::searchExhaustive. Here the crowd gets the scripted sticks, and its searches are timed,
// logged and explained between the parts of its step.
#include "crowd.h"

#include <mmdb/crowd.h>
#include <mmdb/search.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace mmdb::sample {

SearchReason sample_reason(mmdb::SearchReason reason) {
  switch (reason) {
    case mmdb::SearchReason::Start:
      return SearchReason::Start;
    case mmdb::SearchReason::RangeEnd:
      return SearchReason::RangeEnd;
    case mmdb::SearchReason::Forced:
      return SearchReason::StickChanged;  // the only force
    default:
      return SearchReason::Periodic;
  }
}

namespace {

bool report(const mmdb::Status& status, const char* what) {
  if (status.ok()) return true;
  std::fprintf(stderr, "mmdb_sample: %s failed: %s: %s\n", what, mmdb::errorCodeName(status.code()),
               status.message());
  return false;
}

class CpuCrowdRun {
 public:
  CpuCrowdRun(const mmdb::Database& db, const SampleOptions& options,
              const mmdb::StickScript& script, const LocomotionSpeeds& speeds, DecisionLog& log,
              TrajectoryTrace& trace, PlaybackStats& stats, mmdb::Crowd& crowd)
      : db_(db),
        options_(options),
        script_(script),
        speeds_(speeds),
        log_(log),
        trace_(trace),
        stats_(stats),
        crowd_(crowd),
        previous_sticks_(size_t(options.characters)) {
    const int32_t hips = db.roleJoint(mmdb::Role::Hips);
    hips_ = hips >= 0 ? uint32_t(hips) : 0;
  }

  int run() {
    const long ticks = std::lround(options_.seconds / kTickSeconds);
    mmdb::Result<mmdb::MotionMeter> meter = mmdb::MotionMeter::create(crowd_);
    if (!report(meter.error(), "measuring the motion")) return kExitInternal;
    meter.value().reserve(uint64_t(std::max(ticks, 0L)));
    for (long tick = 0; tick < ticks; ++tick) {
      const double time = double(tick) * kTickSeconds;
      if (!set_inputs(time, tick == 0)) return kExitInternal;
      // Character 0's achieved path before the step moves it: where the plot draws this tick.
      const glm::vec3 achieved = crowd_.characters()[0].achieved_position;
      if (!report(crowd_.beginStep(float(kTickSeconds)), "starting a step")) return kExitInternal;
      if (!search(time, achieved)) return failure_;
      if (!report(crowd_.endStep(), "playing a step")) return kExitInternal;
      if (!report(meter.value().record(crowd_, float(kTickSeconds)), "measuring the motion"))
        return kExitInternal;
      finish(tick, achieved);
    }
    stats_.motion = meter.value().total();
    stats_.slides = meter.value().clipSlides();
    return kExitSuccess;
  }

 private:
  // The stick of each character, and a forced search when it turned sharply (the GPU run gives
  // the GPU crowd the same). The first search and range ends are the crowd's own decisions.
  bool set_inputs(double time, bool first) {
    for (size_t i = 0; i < previous_sticks_.size(); ++i) {
      const ScriptedStick stick = script_.at(time + script_.characterOffset(uint32_t(i)));
      if (!report(crowd_.setInput(uint32_t(i), mmdb::stickInput(stick, speeds_)),
                  "setting the stick"))
        return false;
      if (!first && mmdb::stickChangedSharply(previous_sticks_[i], stick) &&
          !report(crowd_.forceSearch(uint32_t(i)), "forcing a search"))
        return false;
      previous_sticks_[i] = stick;
    }
    return true;
  }

  // This tick's searches, timed together; then each one logged (and explained) in character
  // order, before the crowd acts on it.
  bool search(double time, const glm::vec3& achieved) {
    const mmdb::Span<const mmdb::SearchRequest> requests = crowd_.requests();
    if (requests.empty()) return true;
    const auto start = std::chrono::steady_clock::now();
    const mmdb::Status searched = crowd_.search();
    const auto stop = std::chrono::steady_clock::now();
    if (!report(searched, options_.exhaustive ? "the search" : "the batch search")) return false;
    const double microseconds =
        std::chrono::duration<double, std::micro>(stop - start).count() / double(requests.size());
    const mmdb::Span<const mmdb::SearchResult> results = crowd_.results();
    for (size_t k = 0; k < requests.size(); ++k) {
      const uint32_t i = crowd_.searching()[k];
      const mmdb::CrowdCharacter& c = crowd_.characters()[i];  // as before the step
      const mmdb::SearchResult& found = results[k];
      if (found.frame < 0) {
        std::fprintf(stderr,
                     "mmdb_sample: the database has no matchable frame to play; re-cook it with "
                     "longer clips or fewer excluded ranges\n");
        failure_ = kExitBadInput;
        return false;
      }
      const int64_t playing = c.playing ? int64_t(c.current_frame) : -1;
      log_.record(time, int(i), playing, uint32_t(found.frame), found.cost, microseconds,
                  sample_reason(crowd_.decisions()[i].reason));
      if (i == 0 && (!c.playing || uint32_t(found.frame) != c.current_frame))
        trace_jump(achieved, uint32_t(found.frame));
      if (options_.explain && !explain(int(i), requests[k])) return false;
    }
    return true;
  }

  // What the plot and the playback line show, once the crowd has played the tick.
  void finish(long tick, const glm::vec3& achieved) {
    const uint32_t joints = crowd_.jointCount();
    for (uint32_t i = 0; i < crowd_.characterCount(); ++i) {
      stats_.transitions += crowd_.decisions()[i].switched ? 1 : 0;
      stats_.hip_height_sum += crowd_.modelTranslations()[size_t(i) * joints + hips_].y;
      ++stats_.hip_height_samples;
    }
    const glm::vec3& sim = crowd_.characters()[0].sim.position;
    if (tick % 60 == 0)
      trace_.seconds.push_back({glm::vec2(sim.x, sim.z), std::to_string(tick / 60) + " s"});
    if (trace_.desired.empty() || ++trace_ticks_ % 2 == 0) {
      trace_.desired.emplace_back(sim.x, sim.z);
      trace_.achieved.emplace_back(achieved.x, achieved.z);
    }
  }

  void trace_jump(const glm::vec3& at, uint32_t frame) {
    const int32_t clip = db_.clipOfFrame(frame);
    const std::string_view name = clip >= 0 ? db_.clip(uint32_t(clip)).name : std::string_view();
    trace_.jumps.push_back({glm::vec2(at.x, at.z), std::string(name)});
  }

  // --explain: the search's winner and the next two, each block's part of their cost.
  bool explain(int character, const mmdb::SearchRequest& request) {
    std::array<mmdb::CandidateCost, 3> best;
    uint64_t matchable = 0;  // a tiny database may have fewer frames to rank
    for (const mmdb::MatchRange& range : db_.ranges()) matchable += range.frame_count;
    const size_t k = size_t(std::min<uint64_t>(best.size(), matchable));
    const mmdb::Result<uint32_t> n =
        mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(best.data(), k));
    if (!n) {
      // NoMatch is the file's doing (nothing matchable, or features changed under the mapping).
      if (n.error().code() == mmdb::ErrorCode::NoMatch) failure_ = kExitBadInput;
      return report(n.error(), "explaining the search");
    }
    log_.explain(character, mmdb::Span<const mmdb::CandidateCost>(best.data(), n.value()));
    return true;
  }

  const mmdb::Database& db_;
  const SampleOptions& options_;
  const mmdb::StickScript& script_;
  LocomotionSpeeds speeds_;
  DecisionLog& log_;
  TrajectoryTrace& trace_;
  PlaybackStats& stats_;
  mmdb::Crowd& crowd_;
  std::vector<ScriptedStick> previous_sticks_;
  uint32_t hips_ = 0;
  int failure_ = kExitInternal;  // a failed step's exit code: 1 when the file is to blame
  long trace_ticks_ = 0;
};

}  // namespace

int run_cpu_crowd(const mmdb::Database& db, const SampleOptions& options,
                  const mmdb::StickScript& script, const LocomotionSpeeds& speeds, DecisionLog& log,
                  TrajectoryTrace& trace, PlaybackStats& stats) {
  mmdb::CrowdSettings settings;
  // The sample's search interval, no staggering (unless the starts are), its drift cap: as the
  // GPU run (gpu_crowd.cpp).
  settings.search_interval_ticks = uint32_t(kSearchIntervalTicks);
  settings.stagger_phases = 0;
  // Staggered starts spread over the steps with the crowd's default phases (and so do the
  // periodic searches that follow them).
  if (options.start_stagger > 0) settings.stagger_phases = mmdb::CrowdSettings{}.stagger_phases;
  settings.max_drift = kMaxDrift;
  settings.bounds_pruning = !options.exhaustive;
  settings.foot_locking = options.foot_locking;
  settings.start_stagger_intervals = uint32_t(options.start_stagger);
  if (options.speed_limit >= 0) settings.transition_speed_limit = float(options.speed_limit);
  apply_sync_options(options, settings.synchronization);
  mmdb::Result<mmdb::Crowd> crowd =
      mmdb::Crowd::create(db, uint32_t(std::max(options.characters, 0)), settings);
  if (!crowd) {
    // It opened, so what the crowd refuses (no trajectory blocks, poses that do not decode) is
    // the file's doing.
    report(crowd.error(), "creating the crowd");
    return kExitBadInput;
  }
  CpuCrowdRun run(db, options, script, speeds, log, trace, stats, crowd.value());
  return run.run();
}

}  // namespace mmdb::sample
