// BVH parse throughput: mmcook's importer against Assimp's BVH loader on the same bytes, in the
// same run. Corpus: every file of ../shared/data/bandai-1, or a synthetic clip when it is absent.
//
//   bench_bvh --benchmark_min_time=0.5
//
// Prints MB/s per benchmark, then the ratio of each mmcook variant to Assimp.
#include "import/importer.h"

#include <assimp/cimport.h>
#include <assimp/scene.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Corpus {
  std::vector<std::string> paths;  // on disk, for the from-disk variant
  std::vector<std::string> texts;  // the same files' bytes, read before timing
  int64_t bytes = 0;
  std::string description;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A Bandai-like clip: 22 joints in a chain, six channels each (ZXY), 30 fps.
std::string syntheticBvh(int joints, int frames) {
  std::string text = "HIERARCHY\nROOT J0\n{\n  OFFSET 0 0 0\n";
  text += "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n";
  for (int j = 1; j < joints; ++j) {
    text += "JOINT J" + std::to_string(j) + "\n{\n  OFFSET 12.345 0.5 -3.25\n";
    text += "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n";
  }
  text += "End Site\n{\n  OFFSET 0 1 0\n}\n";
  for (int j = 0; j < joints; ++j) text += "}\n";
  text += "MOTION\nFrames:\t" + std::to_string(frames) + "\nFrame Time:\t0.0333333\n";
  char number[32];
  for (int f = 0; f < frames; ++f) {
    for (int c = 0; c < joints * 6; ++c) {
      const double v = 90.0 * std::sin(0.01 * f + 0.37 * c) + (c % 7 == 0 ? 1e-6 : 0.0);
      std::snprintf(number, sizeof number, c ? " %g" : "%g", v);
      text += number;
    }
    text += '\n';
  }
  return text;
}

Corpus loadCorpus() {
  Corpus corpus;
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "bandai-1";
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".bvh") corpus.paths.push_back(entry.path().string());
    std::sort(corpus.paths.begin(), corpus.paths.end());
    corpus.description = std::to_string(corpus.paths.size()) + " files of " + dir.string();
  } else {
    const fs::path synthetic = fs::temp_directory_path() / "mmdb_bench_synthetic.bvh";
    std::ofstream(synthetic, std::ios::binary) << syntheticBvh(22, 3000);
    corpus.paths.push_back(synthetic.string());
    corpus.description = "no shared corpus at " + dir.string() +
                         ": a synthetic 22-joint, 3000-frame clip (" + synthetic.string() + ")";
  }
  for (const std::string& path : corpus.paths) {
    corpus.texts.push_back(readFile(path));
    corpus.bytes += static_cast<int64_t>(corpus.texts.back().size());
  }
  return corpus;
}

const Corpus& corpus() {
  static const Corpus c = loadCorpus();
  return c;
}

void BM_MmcookParseMemory(benchmark::State& state) {
  const Corpus& c = corpus();
  for (auto _ : state) {
    for (size_t i = 0; i < c.texts.size(); ++i) {
      mmdb::cook::RawClip clip = mmdb::cook::parseBvh(c.texts[i], c.paths[i]);
      benchmark::DoNotOptimize(clip.rotations.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * c.bytes);
}

void BM_MmcookImportDisk(benchmark::State& state) {
  const Corpus& c = corpus();
  for (auto _ : state) {
    for (const std::string& path : c.paths) {
      mmdb::cook::RawClip clip = mmdb::cook::importBvhFile(path);
      benchmark::DoNotOptimize(clip.rotations.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * c.bytes);
}

void BM_AssimpImportMemory(benchmark::State& state) {
  const Corpus& c = corpus();
  for (auto _ : state) {
    for (const std::string& text : c.texts) {
      const aiScene* scene =
          aiImportFileFromMemory(text.data(), static_cast<unsigned>(text.size()), 0, "bvh");
      if (!scene || scene->mNumAnimations == 0) {
        state.SkipWithError(aiGetErrorString());
        return;
      }
      benchmark::DoNotOptimize(scene->mAnimations[0]);
      aiReleaseImport(scene);
    }
  }
  state.SetBytesProcessed(state.iterations() * c.bytes);
}

BENCHMARK(BM_MmcookParseMemory)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MmcookImportDisk)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AssimpImportMemory)->Unit(benchmark::kMillisecond);

// The console output, plus each benchmark's bytes per second for the ratios at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const auto rate = run.counters.find("bytes_per_second");
      if (run.error_occurred || rate == run.counters.end()) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Iteration || median)
        rates_[run.run_name.function_name] = rate->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }

  void printRatios() const {
    const auto assimp = rates_.find("BM_AssimpImportMemory");
    std::printf("\nCorpus: %s, %.1f MB\n", corpus().description.c_str(), corpus().bytes / 1e6);
    for (const auto& [name, rate] : rates_)
      std::printf("%-24s %9.1f MB/s\n", name.c_str(), rate / 1e6);
    if (assimp == rates_.end() || assimp->second <= 0) return;
    for (const char* name : {"BM_MmcookParseMemory", "BM_MmcookImportDisk"}) {
      const auto it = rates_.find(name);
      if (it != rates_.end())
        std::printf("%s / Assimp: %.1fx\n", name, it->second / assimp->second);
    }
  }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::printf("BVH corpus: %s\n", corpus().description.c_str());
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.printRatios();
  benchmark::Shutdown();
  return 0;
}
