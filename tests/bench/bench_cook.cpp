// Whole-cook throughput on the Bandai Namco corpus (105 BVH clips, 30 Hz): source frames per
// second with 1 and 2 threads, against importing the same files alone (the baseline).
#include "cook/cook_database.h"
#include "import/importer.h"

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

namespace {

namespace fs = std::filesystem;

std::vector<std::string> bandaiFiles() {
  std::vector<std::string> files;
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "bandai-1";
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".bvh") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

void BM_ImportOnly(benchmark::State& state) {
  const std::vector<std::string> files = bandaiFiles();
  if (files.empty()) return state.SkipWithError("no ../shared/data/bandai-1");
  long long frames = 0;
  for (auto _ : state)
    for (const auto& f : files) {
      const mm::RawClip clip = mm::importClipFile(f, "");
      frames += clip.frame_count;
      benchmark::DoNotOptimize(clip.rotations.data());
    }
  state.SetItemsProcessed(frames);
  state.counters["source_frames_per_s"] =
      benchmark::Counter(static_cast<double>(frames), benchmark::Counter::kIsRate);
}

void BM_CookDatabase(benchmark::State& state) {
  const std::vector<std::string> files = bandaiFiles();
  if (files.empty()) return state.SkipWithError("no ../shared/data/bandai-1");
  spdlog::set_level(spdlog::level::err);  // two short clips warn about their filter windows
  mm::CookRequest request;
  for (const auto& f : files) {
    mm::ClipSpec c;
    c.source = f;
    request.clips.push_back(c);
  }
  request.jobs = static_cast<int>(state.range(0));
  long long frames = 0;
  for (auto _ : state) {
    mm::CookReport report;
    const mm::CookedDatabase db = mm::cookDatabase(request, &report);
    frames += report.source_frames;
    benchmark::DoNotOptimize(db.features.data());
  }
  state.SetItemsProcessed(frames);
  state.counters["source_frames_per_s"] =
      benchmark::Counter(static_cast<double>(frames), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_ImportOnly)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CookDatabase)->ArgName("jobs")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
