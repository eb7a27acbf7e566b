// Whole-cook throughput on the Bandai Namco corpus (105 BVH clips, 30 Hz): source frames per
// second with 1 and 2 threads, against importing the same files alone (the baseline).
// Re-cooks with the clip cache, on the corpus and on 1,000 renamed copies of its files: a cold
// cook (no cache) first, then a cook into an empty cache, a warm cook after a weight change and
// after one edited clip; each reports its wall time as a fraction of the cold cook's in the same
// run (of_cold). These time what `mmcook cook` does: cook, serialize and write the file.
#include "cache/clip_store.h"
#include "cook/cook_database.h"
#include "import/importer.h"
#include "write/database_writer.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>

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
      const mmdb::cook::RawClip clip = mmdb::cook::importClipFile(f, "");
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
  mmdb::cook::CookRequest request;
  for (const auto& f : files) {
    mmdb::cook::ClipSpec c;
    c.source = f;
    request.clips.push_back(c);
  }
  request.jobs = static_cast<int>(state.range(0));
  long long frames = 0;
  for (auto _ : state) {
    mmdb::cook::CookReport report;
    const mmdb::cook::CookedDatabase db = mmdb::cook::cookDatabase(request, &report);
    frames += report.source_frames;
    benchmark::DoNotOptimize(db.features.data());
  }
  state.SetItemsProcessed(frames);
  state.counters["source_frames_per_s"] =
      benchmark::Counter(static_cast<double>(frames), benchmark::Counter::kIsRate);
}

// A corpus for the re-cook benchmarks, in a temporary folder: the Bandai files (copies == 0), or
// `copies` clips named clip_0000.bvh, ... cycling through them.
struct RecookCorpus {
  fs::path folder;
  mmdb::cook::CookRequest request;
  std::string edited;  // the source the "one edited clip" case rewrites
  std::string edited_text;
};

const RecookCorpus* recookCorpus(int copies) {
  static std::map<int, RecookCorpus> corpora;
  if (auto it = corpora.find(copies); it != corpora.end()) return &it->second;
  const std::vector<std::string> files = bandaiFiles();
  if (files.empty()) return nullptr;
  RecookCorpus& c = corpora[copies];
  c.folder = fs::temp_directory_path() /
             ("mmdb_bench_recook_" + std::to_string(::getpid()) + "_" + std::to_string(copies));
  fs::remove_all(c.folder);
  fs::create_directories(c.folder / "sources");
  const int count = copies > 0 ? copies : static_cast<int>(files.size());
  for (int i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "clip_%04d.bvh", i);
    const fs::path to = c.folder / "sources" / name;
    fs::copy_file(files[i % files.size()], to);
    mmdb::cook::ClipSpec spec;
    spec.source = to.string();
    c.request.clips.push_back(spec);
  }
  c.edited = c.request.clips[count / 2].source;
  std::ifstream in(c.edited, std::ios::binary);
  c.edited_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return &c;
}

// Wall seconds of the cold cook, per corpus, for of_cold.
std::map<int, double>& coldSeconds() {
  static std::map<int, double> seconds;
  return seconds;
}

enum Recook { kCold = 0, kIntoEmptyCache, kWeightChange, kOneEditedClip };

void BM_Recook(benchmark::State& state) {
  const int copies = static_cast<int>(state.range(0));
  const auto kind = static_cast<Recook>(state.range(1));
  const RecookCorpus* corpus = recookCorpus(copies);
  if (!corpus) return state.SkipWithError("no ../shared/data/bandai-1");
  spdlog::set_level(spdlog::level::err);
  mmdb::cook::CookRequest request = corpus->request;
  request.jobs = 0;
  const fs::path cache_dir = corpus->folder / "cache";
  const std::string output = (corpus->folder / "out.mmdb").string();
  std::unique_ptr<mmdb::cook::ClipCacheFolder> cache;
  if (kind != kCold) {
    fs::remove_all(cache_dir);
    cache = std::make_unique<mmdb::cook::ClipCacheFolder>(cache_dir.string());
    if (kind != kIntoEmptyCache)
      mmdb::cook::cookDatabase(request, nullptr, {}, cache.get(),
                               mmdb::cook::PoseOutput::Coded);  // warm it
  }
  double seconds = 0;
  int iteration = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ++iteration;
    if (kind == kIntoEmptyCache) {
      fs::remove_all(cache_dir);
      fs::create_directories(cache_dir);
    } else if (kind == kWeightChange) {
      request.settings.weights[mmdb::cook::kBlockFootPosition] = iteration % 2 ? 0.5f : 0.75f;
    } else if (kind == kOneEditedClip) {  // a new version of one source each time
      std::ofstream(corpus->edited, std::ios::binary)
          << corpus->edited_text << std::string(static_cast<size_t>(iteration), '\n');
    }
    state.ResumeTiming();
    const auto start = std::chrono::steady_clock::now();
    mmdb::cook::CookReport report;
    const mmdb::cook::CookedDatabase db =
        mmdb::cook::cookDatabase(request, &report, {}, cache.get(), mmdb::cook::PoseOutput::Coded);
    mmdb::cook::writeFileAtomically(output, mmdb::cook::serializeForWriting(db));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.counters["hits"] = report.store.hits;
    state.counters["misses"] = report.store.misses;
    state.counters["poses_found"] = report.store.coded_poses_found;
  }
  const double per_cook = seconds / static_cast<double>(state.iterations());
  if (kind == kCold) coldSeconds()[copies] = per_cook;
  state.counters["clips"] = static_cast<double>(request.clips.size());
  if (coldSeconds().count(copies)) state.counters["of_cold"] = per_cook / coldSeconds()[copies];
  if (kind == kOneEditedClip)
    std::ofstream(corpus->edited, std::ios::binary) << corpus->edited_text;
}

void recookArguments(benchmark::internal::Benchmark* b) {
  b->ArgNames({"copies", "case"});
  for (int copies : {0, 1000})
    for (int kind : {kCold, kIntoEmptyCache, kWeightChange, kOneEditedClip})
      b->Args({copies, kind});
}

BENCHMARK(BM_ImportOnly)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CookDatabase)
    ->ArgName("jobs")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_Recook)->Apply(recookArguments)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
