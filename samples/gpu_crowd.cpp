#include "gpu_crowd.h"

#include <mmdb/gpu/crowd.h>

#include <array>
#include <cmath>
#include <cstdio>

namespace mmdb::sample {
namespace {

constexpr std::array<const char*, mmdb::gpu::kPassCount> kPassNames{
    "build_query", "match", "resolve", "sample", "inertialize", "fk", "foot_lock"};

class GpuCrowdRun {
 public:
  GpuCrowdRun(const mmdb::Database& db, const SampleOptions& options,
              const mmdb::StickScript& script, const LocomotionSpeeds& speeds, DecisionLog& log,
              TrajectoryTrace& trace, mmdb::gpu::Crowd& crowd)
      : db_(db),
        options_(options),
        script_(script),
        speeds_(speeds),
        log_(log),
        trace_(trace),
        crowd_(crowd),
        previous_sticks_(size_t(options.characters)),
        inputs_(size_t(options.characters)) {}

  int run() {
    const long ticks = std::lround(options_.seconds / kTickSeconds);
    for (long tick = 0; tick < ticks; ++tick) {
      const double time = double(tick) * kTickSeconds;
      if (tick % 2 == 0 && !trace_character_zero(tick)) return kExitInternal;
      if (!write_inputs(time, tick == 0)) return kExitInternal;
      if (const mmdb::Status s = crowd_.stepAndWait(float(kTickSeconds)); !s) {
        std::fprintf(stderr, "mmdb_sample: a GPU step failed: %s: %s\n",
                     mmdb::errorCodeName(s.code()), s.message());
        return kExitInternal;
      }
      if (!read_decisions(time)) return kExitInternal;
      add_timings();
    }
    print_timings();
    return kExitSuccess;
  }

 private:
  // The same inputs as the CPU crowd: stick velocity, facing along the stick (zero keeps it),
  // and a forced search when the stick turned sharply. Range ends and the first search are the
  // GPU's own decisions, as they are the CPU crowd's.
  bool write_inputs(double time, bool first) {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const ScriptedStick stick = script_.at(time + script_.characterOffset(uint32_t(i)));
      const mmdb::StickInput input = mmdb::stickInput(stick, speeds_);
      mmdb::gpu::CharacterInput& in = inputs_[i];
      in = {};
      in.desired_velocity = {input.desired_velocity.x, 0.0f, input.desired_velocity.z, 0.0f};
      in.desired_facing = {input.desired_facing.x, 0.0f, input.desired_facing.z, 0.0f};
      in.force_search = !first && mmdb::stickChangedSharply(previous_sticks_[i], stick) ? 1u : 0u;
      previous_sticks_[i] = stick;
    }
    return report(crowd_.setInputs(inputs_.data(), inputs_.size()), "setting the inputs");
  }

  static bool report(const mmdb::Status& status, const char* what) {
    if (status) return true;
    std::fprintf(stderr, "mmdb_sample: %s failed: %s: %s\n", what,
                 mmdb::errorCodeName(status.code()), status.message());
    return false;
  }

  bool read_decisions(double time) {
    const mmdb::Result<std::vector<mmdb::gpu::Decision>> read = crowd_.readDecisions();
    if (!report(read.error(), "reading the GPU decisions back")) return false;
    const std::vector<mmdb::gpu::Decision>& decisions = read.value();
    searches_this_step_ = 0;
    for (size_t i = 0; i < decisions.size(); ++i) {
      const mmdb::gpu::Decision& d = decisions[i];
      if (d.reason == mmdb::gpu::SearchReason::None) continue;
      if (d.frame == mmdb::gpu::kNoFrame) {
        std::fprintf(stderr,
                     "mmdb_sample: the database has no matchable frame to play; re-cook it with "
                     "longer clips or fewer excluded ranges\n");
        return false;
      }
      using Outcome = DecisionLog::Outcome;
      const Outcome outcome = d.reason == mmdb::gpu::SearchReason::Start ? Outcome::Start
                              : d.switched                               ? Outcome::Jump
                                                                         : Outcome::Kept;
      log_.record(time, int(i), outcome, d.frame, d.cost, sample_reason(d.reason));
      // Where character 0 jumped: its achieved path at the last trace (at most 2 ticks before).
      if (i == 0 && outcome != Outcome::Kept && !trace_.achieved.empty()) {
        const int32_t clip = db_.clipOfFrame(d.frame);
        const std::string_view name = clip >= 0 ? db_.clip(uint32_t(clip)).name : "";
        trace_.jumps.push_back({trace_.achieved.back(), std::string(name)});
      }
      ++searches_this_step_;
    }
    return true;
  }

  void add_timings() {
    const mmdb::gpu::PassTimings timings = crowd_.readTimings();
    if (!timings.valid) return;
    for (uint32_t p = 0; p < mmdb::gpu::kPassCount; ++p) pass_ms_[p] += timings.ms[p];
    total_ms_ += timings.total_ms;
    ++timed_steps_;
    const auto match = size_t(mmdb::gpu::Pass::Match);
    if (searches_this_step_ > 0)
      log_.add_search_time(timings.ms[match] * 1000.0, searches_this_step_);
  }

  // Before the tick's step, as the CPU crowd traces: the controller and the achieved path the
  // GPU integrates (the root motion of the frames played).
  bool trace_character_zero(long tick) {
    const mmdb::Result<std::vector<mmdb::gpu::CrowdCharacter>> read = crowd_.readCharacters();
    if (!report(read.error(), "reading the GPU character states back")) return false;
    const mmdb::gpu::CrowdCharacter& zero = read.value()[0];
    if (tick % 60 == 0)
      trace_.seconds.push_back(
          {glm::vec2(zero.sim_position.x, zero.sim_position.z), std::to_string(tick / 60) + " s"});
    trace_.desired.emplace_back(zero.sim_position.x, zero.sim_position.z);
    trace_.achieved.emplace_back(zero.achieved_position.x, zero.achieved_position.z);
    return true;
  }

  void print_timings() const {
    if (timed_steps_ == 0) {
      std::printf("gpu passes: no timestamps on this queue\n");
      return;
    }
    std::printf("gpu passes, mean ms per step over %llu steps, %d characters:",
                static_cast<unsigned long long>(timed_steps_), options_.characters);
    for (uint32_t p = 0; p < mmdb::gpu::kPassCount; ++p)
      std::printf(" %s %.4f", kPassNames[p], pass_ms_[p] / double(timed_steps_));
    std::printf(", total %.4f\n", total_ms_ / double(timed_steps_));
  }

  const mmdb::Database& db_;  // names the clips of the plot's jumps
  const SampleOptions& options_;
  const mmdb::StickScript& script_;
  LocomotionSpeeds speeds_;
  DecisionLog& log_;
  TrajectoryTrace& trace_;
  mmdb::gpu::Crowd& crowd_;
  std::vector<ScriptedStick> previous_sticks_;
  std::vector<mmdb::gpu::CharacterInput> inputs_;
  uint64_t searches_this_step_ = 0;
  std::array<double, mmdb::gpu::kPassCount> pass_ms_{};
  double total_ms_ = 0.0;
  uint64_t timed_steps_ = 0;
};

}  // namespace

int run_gpu_crowd(const mmdb::Database& db, const SampleOptions& options,
                  const mmdb::StickScript& script, const LocomotionSpeeds& speeds, DecisionLog& log,
                  TrajectoryTrace& trace) {
  auto context = mmdb::gpu::Context::createHeadless({});
  if (!context) {
    std::fprintf(stderr,
                 "mmdb_sample: --gpu needs a Vulkan device and none could be used: %s\n"
                 "Install a Vulkan driver (on Debian, mesa-vulkan-drivers runs Vulkan on the "
                 "CPU) or run without --gpu.\n",
                 context.error().message());
    return kExitBadInput;
  }
  const mmdb::gpu::Context& ctx = *context.value();
  std::printf("gpu: %s, subgroup size %u\n", ctx.info().name.c_str(), ctx.info().subgroup_size);

  auto view = mmdb::gpu::DatabaseView::fromDatabase(db);
  if (!view) {
    std::fprintf(stderr, "mmdb_sample: the database does not fit the GPU passes: %s\n",
                 view.error().message());
    return kExitBadInput;
  }
  mmdb::gpu::CrowdSettings settings;
  // Decide as the CPU crowd does, so the two runs print the same decisions: its search interval,
  // no staggering (unless the starts are), its drift cap (the default neighbourhood is the CPU
  // search's already).
  settings.search_interval_ticks = uint32_t(kSearchIntervalTicks);
  settings.stagger_phases = 0;
  // Staggered starts spread over the steps with the crowd's default phases (and so do the
  // periodic searches that follow them).
  if (options.start_stagger > 0)
    settings.stagger_phases = mmdb::gpu::CrowdSettings{}.stagger_phases;
  settings.max_drift = kMaxDrift;
  settings.foot_locking = options.foot_locking;
  settings.start_stagger_intervals = uint32_t(options.start_stagger);
  if (options.speed_limit >= 0) settings.transition_speed_limit = float(options.speed_limit);
  apply_sync_options(options, settings.synchronization);
  auto crowd = mmdb::gpu::Crowd::create(ctx, view.value(), uint32_t(options.characters), settings);
  if (!crowd) {
    std::fprintf(stderr, "mmdb_sample: creating the GPU crowd failed: %s\n",
                 crowd.error().message());
    return kExitBadInput;
  }
  GpuCrowdRun run(db, options, script, speeds, log, trace, *crowd.value());
  return run.run();
}

}  // namespace mmdb::sample
