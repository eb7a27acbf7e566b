// mmdb_sample: opens a cooked motion-matching database and drives a scripted crowd with it, the
// way a game would (controller -> query -> search -> sample, inertialize, pose), then prints
// what motion matching decided and plots character 0's desired against achieved path.
#include "crowd.h"
#include "decision_log.h"
#include "sample_options.h"
#include "svg_plot.h"

#if MMDB_SAMPLE_HAS_GPU
#include "gpu_crowd.h"
#endif

#include <mmdb/database.h>
#include <mmdb/stick_script.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

namespace mmdb::sample {
namespace {

void print_database(const mmdb::Database& db, const char* path) {
  std::printf("database: %s: %u frames at %g Hz (%.1f s), %u clips, %u joints, %u features\n", path,
              db.frameCount(), double(db.frameRate()),
              db.frameRate() > 0 ? db.frameCount() / double(db.frameRate()) : 0.0, db.clipCount(),
              db.jointCount(), unsigned(db.featureCount()));
}

void print_run(const SampleOptions& options, const char* method) {
  std::printf(
      "run: %d character%s, %g s at 60 Hz, %s search every %g s, when the stick turns "
      "sharply and at the end of each matchable range; foot locking %s%s\n",
      options.characters, options.characters == 1 ? "" : "s", options.seconds, method,
      kSearchIntervalTicks * kTickSeconds, options.foot_locking ? "on" : "off",
      options.start_stagger > 0 ? "; starts staggered" : "");
  std::printf(
      "frames: 'global' indexes the whole database, 'local' counts from its clip's "
      "first frame\n");
}

bool write_plot(const SampleOptions& options, const TrajectoryTrace& trace) {
  const std::vector<PlotSeries> series{
      {"desired (controller)", "#1f77b4", trace.desired},
      {"achieved (root motion played)", "#d62728", trace.achieved},
  };
  PlotLabels labels;
  const std::string file = std::filesystem::path(options.database_path).filename().string();
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", options.seconds);
  labels.title =
      "Character 0 on " + file + ", seen from above: " + seconds + " s of the stick script";
  // As mmcook report draws it: looking down from +Y in a right-handed frame with +z (forward)
  // up the page, +x runs to the left.
  labels.x_axis = "x (m), +x to the left";
  labels.y_axis = "z (m), +z up";
  labels.y_down = false;
  labels.x_left = true;
  // Seconds along the desired path, and each jump where it happened with the clip it went to.
  std::vector<PlotMarker> markers;
  for (const TrajectoryTrace::Event& e : trace.seconds)
    markers.push_back({e.at, e.label, "#1f77b4", PlotMarker::Shape::Dot});
  for (const TrajectoryTrace::Event& e : trace.jumps)
    markers.push_back({e.at, e.label, "#d62728", PlotMarker::Shape::Cross});
  const MarkerLegend legend{"seconds along the desired path", "jump (to the clip named)"};
  std::string error;
  if (!write_svg_plot_file(options.svg_path, series, labels, error, markers, legend)) {
    std::fprintf(stderr, "mmdb_sample: %s\n", error.c_str());
    return false;
  }
  std::printf("plot: %s (desired vs achieved path of character 0)\n", options.svg_path.c_str());
  return true;
}

const char* joint_name(const mmdb::Database& db, int32_t joint) {
  static std::string name;
  name = joint >= 0 ? std::string(db.jointName(uint32_t(joint))) : std::string("-");
  return name.c_str();
}

}  // namespace

void print_motion(const mmdb::Database& db, const PlaybackStats& stats) {
  const mmdb::MotionMeasures& m = stats.motion;
  std::printf(
      "motion: planted toes slide p50 %.1f mm, p90 %.1f mm, max %.1f mm per step; %llu contact "
      "phases, %.1f%% drift over 21 mm (p50 %.1f mm, p90 %.1f mm)\n",
      m.planted_slide_mm.p50, m.planted_slide_mm.p90, m.planted_slide_mm.max,
      static_cast<unsigned long long>(m.phase_drift_mm.count), 100.0 * m.phase_share_over_limit,
      m.phase_drift_mm.p50, m.phase_drift_mm.p90);
  for (int w : {mmdb::kAtSwitch, mmdb::kElsewhere})
    std::printf(
        "motion: %s: largest joint step %.1f mm, %.2fx the clips' (%s), acceleration %.0f "
        "m/s^2\n",
        w == mmdb::kAtSwitch ? "within 0.6 s of a switch" : "elsewhere", m.max_joint_step_mm[w],
        m.max_step_ratio[w], joint_name(db, m.worst_joint[w]), m.max_acceleration[w]);
  const auto& r = m.switches_by_reason;
  std::printf(
      "motion: %.2f switches per character-second (%llu: %llu periodic, %llu range end, %llu "
      "forced), %llu continuations, %llu held by the cooldown\n",
      m.switch_rate, static_cast<unsigned long long>(m.switches),
      static_cast<unsigned long long>(r[size_t(mmdb::SearchReason::Periodic)]),
      static_cast<unsigned long long>(r[size_t(mmdb::SearchReason::RangeEnd)]),
      static_cast<unsigned long long>(r[size_t(mmdb::SearchReason::Forced)]),
      static_cast<unsigned long long>(m.continuations), static_cast<unsigned long long>(m.held));
  std::printf(
      "motion: trajectory error mean %.3f m, p95 %.3f m; %llu sharp turns answered in p50 %.2f "
      "s, p90 %.2f s (%llu missed)\n",
      m.trajectory_error_m.mean, m.trajectory_error_m.p95,
      static_cast<unsigned long long>(m.sharp_turns), m.response_s.p50, m.response_s.p90,
      static_cast<unsigned long long>(m.responses_missed));
  std::printf(
      "motion: controller distance p50 %.3f m, p95 %.3f m, max %.3f m; adjusted %.3f m/s, %.1f "
      "deg/s\n",
      m.controller_distance_m.p50, m.controller_distance_m.p95, m.controller_distance_m.max,
      m.adjustment_m_per_s, m.adjustment_deg_per_s);
  for (size_t i = 0; i < stats.slides.size() && i < 3; ++i) {
    const mmdb::ClipSlide& s = stats.slides[i];
    if (s.over_limit == 0) break;
    std::printf("motion: feet slide in clip %s: %llu of %llu phases over 21 mm, mean %.1f mm\n",
                std::string(db.clip(s.clip).name).c_str(),
                static_cast<unsigned long long>(s.over_limit),
                static_cast<unsigned long long>(s.phases), s.mean_drift_mm);
  }
}

namespace {

int run(const SampleOptions& options) {
  const mmdb::Result<mmdb::Database> opened = mmdb::Database::open(options.database_path.c_str());
  if (!opened) {
    std::fprintf(stderr, "mmdb_sample: cannot open database '%s': %s: %s\n",
                 options.database_path.c_str(), mmdb::errorCodeName(opened.error().code()),
                 opened.error().message());
    return kExitBadInput;
  }
  const mmdb::Database& db = opened.value();
  print_database(db, options.database_path.c_str());
  if (db.ranges().empty()) {
    std::fprintf(stderr,
                 "mmdb_sample: '%s' has no matchable frame to play; re-cook it with "
                 "longer clips or fewer excluded ranges\n",
                 options.database_path.c_str());
    return kExitBadInput;
  }

  mmdb::StickScript script = mmdb::StickScript::builtIn();
  if (!options.stick_path.empty()) {
    mmdb::Result<mmdb::StickScript> loaded = mmdb::StickScript::load(options.stick_path.c_str());
    if (!loaded) {
      std::fprintf(stderr, "mmdb_sample: bad stick file: %s\n", loaded.error().message());
      return kExitBadInput;
    }
    script = std::move(loaded.value());
    std::printf("stick file: %s, %zu segments, %g s (looping)\n", options.stick_path.c_str(),
                script.segments().size(), script.duration());
  }
  float top_speed = 0.0f;
  const LocomotionSpeeds speeds = mmdb::speedsForDatabase(db, &top_speed);
  std::printf(
      "stick: walk %.2f m/s, run %.2f m/s (95%% of matchable frames move at most %.2f "
      "m/s)\n",
      double(speeds.walk), double(speeds.run), double(top_speed));
  DecisionLog log(db, stdout, !options.quiet_decisions);
  TrajectoryTrace trace;
  if (options.gpu) {
#if MMDB_SAMPLE_HAS_GPU
    print_run(options, "GPU");
    const int status = run_gpu_crowd(db, options, script, speeds, log, trace);
    if (status != kExitSuccess) return status;
    log.print_summary("gpu", options.seconds, options.characters);
#else
    std::fprintf(stderr,
                 "mmdb_sample: this build has no GPU support; configure with "
                 "-DMMDB_BUILD_GPU=ON (needs the Vulkan headers and loader)\n");
    return kExitBadInput;
#endif
  } else {
    const char* method = options.exhaustive ? "exhaustive" : "pruned";
    print_run(options, method);
    PlaybackStats stats;
    const int status = run_cpu_crowd(db, options, script, speeds, log, trace, stats);
    if (status != kExitSuccess) return status;
    log.print_summary(method, options.seconds, options.characters);
    std::printf("playback: %llu inertialized transitions, mean hip height %.3f m\n",
                static_cast<unsigned long long>(stats.transitions),
                stats.hip_height_samples ? stats.hip_height_sum / stats.hip_height_samples : 0.0);
    print_motion(db, stats);
  }
  return write_plot(options, trace) ? kExitSuccess : kExitBadInput;
}

}  // namespace
}  // namespace mmdb::sample

int main(int argc, char** argv) {
  using namespace mmdb::sample;
  SampleOptions options;
  std::string error;
  if (!parse_options(argc, argv, options, error)) {
    std::fprintf(stderr, "mmdb_sample: %s\nUsage: %s DATABASE.mmdb [options] (--help lists them)\n",
                 error.c_str(), argv[0]);
    return kExitBadUsage;
  }
  if (options.help) {
    std::printf("%s", usage_text(argv[0]).c_str());
    return kExitSuccess;
  }
  return run(options);
}
