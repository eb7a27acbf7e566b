// FBX import throughput on ../shared/data/cmu-fbx: mmcook's Assimp importer (parse, skeleton,
// sampling every frame) against Assimp's parse alone of the same files in the same run, and the
// whole cook of the same files.
//
//   bench_fbx --benchmark_min_time=1
//
// Prints MB/s and source frames/s (per CPU second) per benchmark, then each one's CPU time
// relative to the parse.
#include "cook/cook_database.h"
#include "import/importer.h"

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/scene.h>
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Corpus {
  std::vector<std::string> paths;
  int64_t bytes = 0;
  int64_t frames = 0;  // source frames of every file's first take
};

const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus out;
    const fs::path dir = fs::path(MMDB_SHARED_DATA) / "cmu-fbx";
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".fbx") out.paths.push_back(e.path().string());
    std::sort(out.paths.begin(), out.paths.end());
    for (const auto& p : out.paths) {
      out.bytes += static_cast<int64_t>(fs::file_size(p));
      const mmdb::cook::SourceInfo info = mmdb::cook::inspectSourceFile(p);
      if (!info.takes.empty()) out.frames += info.takes[0].frame_count;
    }
    return out;
  }();
  return c;
}

void setCounters(benchmark::State& state, const Corpus& c) {
  state.SetBytesProcessed(state.iterations() * c.bytes);
  state.counters["frames/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * c.frames), benchmark::Counter::kIsRate);
}

// Baseline: Assimp reads the same files with the importer's settings and nothing else.
void BM_AssimpParseOnly(benchmark::State& state) {
  const Corpus& c = corpus();
  if (c.paths.empty()) return state.SkipWithError("shared corpus absent (cmu-fbx)");
  for (auto _ : state)
    for (const auto& p : c.paths) {
      Assimp::Importer importer;
      importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
      const aiScene* scene = importer.ReadFile(p, 0);
      benchmark::DoNotOptimize(scene);
    }
  setCounters(state, c);
}
BENCHMARK(BM_AssimpParseOnly)->Unit(benchmark::kMillisecond);

void BM_MmcookFbxImport(benchmark::State& state) {
  const Corpus& c = corpus();
  if (c.paths.empty()) return state.SkipWithError("shared corpus absent (cmu-fbx)");
  for (auto _ : state)
    for (const auto& p : c.paths) {
      mmdb::cook::RawClip clip = mmdb::cook::importAssimpFile(p, "");
      benchmark::DoNotOptimize(clip.rotations.data());
    }
  setCounters(state, c);
}
BENCHMARK(BM_MmcookFbxImport)->Unit(benchmark::kMillisecond);

// Import, scale, resample to 60 Hz, root motion, velocities, contacts, features, normalization,
// ranges and bounds, on one thread and on all.
void BM_CookFbxCorpus(benchmark::State& state) {
  const Corpus& c = corpus();
  if (c.paths.empty()) return state.SkipWithError("shared corpus absent (cmu-fbx)");
  mmdb::cook::CookRequest request;
  for (const auto& p : c.paths) {
    mmdb::cook::ClipSpec spec;
    spec.source = p;
    spec.source_label = p;
    request.clips.push_back(spec);
  }
  request.jobs = static_cast<int>(state.range(0));
  for (auto _ : state) {
    mmdb::cook::CookedDatabase db = mmdb::cook::cookDatabase(request);
    benchmark::DoNotOptimize(db.features.data());
  }
  setCounters(state, c);
}
// CPU time of the whole process, so the threaded run counts every thread's work.
BENCHMARK(BM_CookFbxCorpus)
    ->Arg(1)
    ->Arg(0)
    ->ArgName("jobs")
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// Collects each benchmark's time per iteration to print the ratios at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (!r.error_occurred) seconds_[r.benchmark_name()] = r.GetAdjustedCPUTime();
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    const auto base = seconds_.find("BM_AssimpParseOnly");
    if (base == seconds_.end()) return;
    for (const auto& [name, t] : seconds_)
      std::printf("%-32s %6.2fx the CPU time of Assimp's parse alone\n", name.c_str(),
                  t / base->second);
  }

 private:
  std::map<std::string, double> seconds_;
};

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::err);  // the importer's per-file notes would flood the output
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const Corpus& c = corpus();
  std::printf("corpus: %zu CMU FBX files, %.2f MB, %lld source frames\n", c.paths.size(),
              c.bytes / 1e6, static_cast<long long>(c.frames));
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
}
