#include "review/replay.h"

#include <mmdb/controller.h>
#include <mmdb/search.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <utility>

namespace mmcook::review {
namespace {

using mmdb::ErrorCode;

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (const double v : values) sum += v;
  return values.empty() ? 0.0 : sum / double(values.size());
}

}  // namespace

double percentile95(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const auto at = values.begin() + std::ptrdiff_t(0.95 * double(values.size() - 1));
  std::nth_element(values.begin(), at, values.end());
  return *at;
}

mmdb::Result<Replay> replay(const mmdb::Database& db, const mmdb::StickScript& script,
                            const ReplaySettings& settings) {
  if (settings.characters < 1 || settings.characters > kMaxReplayCharacters)
    return mmdb::Error::format(ErrorCode::InvalidArgument, "replay: %u characters; replay 1 to %u",
                               settings.characters, kMaxReplayCharacters);
  if (!(settings.seconds >= kReplayStepSeconds && settings.seconds <= kMaxReplaySeconds))
    return mmdb::Error::format(ErrorCode::InvalidArgument,
                               "replay: %g s; replay from one step (1/60 s) to %g s",
                               settings.seconds, kMaxReplaySeconds);
  if (script.segments().empty())
    return mmdb::Error(ErrorCode::InvalidArgument, "replay: the stick script has no segment");
  if (db.ranges().empty())
    return mmdb::Error(ErrorCode::NoMatch,
                       "the database has no matchable frame to play; re-cook it with longer "
                       "clips or fewer excluded ranges");

  mmdb::CrowdSettings crowd_settings =
      settings.reference_policies ? mmdb::CrowdSettings::reference() : mmdb::CrowdSettings{};
  crowd_settings.search_interval_ticks = kReplaySearchIntervalSteps;
  crowd_settings.stagger_phases = 0;
  crowd_settings.max_drift = kReplayMaxDrift;
  crowd_settings.bounds_pruning = true;
  // The databases' own motion: planted feet slide as the clips move them, not held by the
  // runtime's foot locking (which would hide what a diff compares).
  crowd_settings.foot_locking = false;
  mmdb::Result<mmdb::Crowd> created = mmdb::Crowd::create(db, settings.characters, crowd_settings);
  if (!created) return created.error();
  mmdb::Crowd& crowd = created.value();
  mmdb::Result<mmdb::MotionMeter> metered = mmdb::MotionMeter::create(crowd);
  if (!metered) return metered.error();
  mmdb::MotionMeter& meter = metered.value();

  const mmdb::LocomotionSpeeds speeds = mmdb::speedsForDatabase(db);
  const uint64_t steps = uint64_t(std::max(1L, std::lround(settings.seconds / kReplayStepSeconds)));

  Replay out;
  out.stats.clip_frames.assign(db.clipCount(), 0);
  out.trace.time.reserve(steps);
  out.trace.desired.reserve(steps);
  out.trace.achieved.reserve(steps);
  out.trace.cost.reserve(steps);
  meter.reserve(steps);
  std::vector<double> costs;
  std::vector<mmdb::ScriptedStick> previous(settings.characters);
  double search_seconds = 0.0;

  for (uint64_t step = 0; step < steps; ++step) {
    const double time = double(step) * kReplayStepSeconds;
    // The sticks, and a forced search where one turned sharply (as mmdb_sample).
    for (uint32_t i = 0; i < settings.characters; ++i) {
      const mmdb::ScriptedStick stick = script.at(time + script.characterOffset(i));
      if (mmdb::Status s = crowd.setInput(i, mmdb::stickInput(stick, speeds)); !s) return s;
      if (step > 0 && mmdb::stickChangedSharply(previous[i], stick))
        if (mmdb::Status s = crowd.forceSearch(i); !s) return s;
      previous[i] = stick;
    }

    if (mmdb::Status s = crowd.beginStep(float(kReplayStepSeconds)); !s) return s;
    const mmdb::Span<const mmdb::SearchRequest> requests = crowd.requests();
    if (!requests.empty()) {
      const auto start = std::chrono::steady_clock::now();
      const mmdb::Status searched = crowd.search();
      search_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!searched) return searched;
    }
    const mmdb::Span<const mmdb::SearchResult> results = crowd.results();
    for (size_t k = 0; k < requests.size(); ++k) {
      const uint32_t i = crowd.searching()[k];
      const mmdb::CrowdCharacter& c = crowd.characters()[i];  // as before the step
      const mmdb::SearchResult& found = results[k];
      if (found.frame < 0)
        return mmdb::Error::format(ErrorCode::NoMatch,
                                   "character %u found no frame to play at %.3f s: no matchable "
                                   "range passes its search",
                                   i, time);
      const mmdb::SearchReason reason = crowd.decisions()[i].reason;
      const int32_t playing = c.playing ? int32_t(c.current_frame) : -1;
      ++out.stats.decisions;
      costs.push_back(double(found.cost));
      if (found.frame != playing)
        out.jumps.push_back({time, i, playing, found.frame, found.cost, reason});
      if (settings.keep_decisions) {
        const mmdb::SearchRequest& request = requests[k];
        out.decisions.push_back({uint32_t(step), i, reason, playing, found.frame, found.cost,
                                 std::vector<float>(request.query.begin(), request.query.end()),
                                 request.current_frame, request.seeded, request.transition_cost,
                                 request.range_end_margin});
      }
    }
    if (mmdb::Status s = crowd.endStep(); !s) return s;

    if (mmdb::Status s = meter.record(crowd, float(kReplayStepSeconds)); !s) return s;
    for (uint32_t i = 0; i < settings.characters; ++i) {
      const mmdb::CrowdCharacter& c = crowd.characters()[i];
      if (c.playing) ++out.stats.clip_frames[c.clip];
    }
    const mmdb::CrowdCharacter& first = crowd.characters()[0];
    out.trace.time.push_back(double(step + 1) * kReplayStepSeconds);
    out.trace.desired.emplace_back(first.sim.position.x, first.sim.position.z);
    out.trace.achieved.emplace_back(first.achieved_position.x, first.achieved_position.z);
    out.trace.cost.push_back(first.last_cost);
  }

  ReplayStats& stats = out.stats;
  stats.steps = steps;
  stats.jumps = out.jumps.size();
  stats.decisions_per_second =
      search_seconds > 0.0 ? double(stats.decisions) / search_seconds : 0.0;
  stats.mean_cost = mean(costs);
  stats.p95_cost = percentile95(costs);
  stats.motion = meter.total();
  stats.slides = meter.clipSlides();
  stats.trajectory_samples = stats.motion.trajectory_error_m.count;
  stats.mean_trajectory_error = stats.motion.trajectory_error_m.mean;
  stats.p95_trajectory_error = stats.motion.trajectory_error_m.p95;
  return out;
}

}  // namespace mmcook::review
