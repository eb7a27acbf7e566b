// Coded pose streams: file size per stream, raw against coded (bandai-1, synthetic databases, the
// CMU FBX set), and decodePoses() throughput on one core against copying the raw streams (the
// baseline, what a raw file costs to bring into the same memory).
#include "compress/pose_compression.h"
#include "cook/cook_database.h"
#include "real_database.h"
#include "synthetic_database.h"
#include "write/database_writer.h"

#include <mmdb/database.h>

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

namespace {

namespace fs = std::filesystem;

struct Coded {
  mmdb::cook::CompressionReport report;
  uint64_t raw_file = 0, coded_file = 0;
  mmdb::test::AlignedBytes raw_bytes, coded_bytes;
};

const Coded& codedOf(const std::string& name, const mmdb::cook::CookedDatabase* cooked) {
  static std::map<std::string, std::unique_ptr<Coded>> cache;
  auto& slot = cache[name];
  if (slot) return *slot;
  slot = std::make_unique<Coded>();
  mmdb::cook::CookedDatabase db = *cooked;
  db.pose_coding = {};
  slot->raw_bytes = mmdb::test::serializeAligned(db);
  mmdb::cook::compressPoses(db, {}, 1, &slot->report);
  slot->coded_bytes = mmdb::test::serializeAligned(db);
  slot->raw_file = slot->raw_bytes.size();
  slot->coded_file = slot->coded_bytes.size();
  return *slot;
}

const mmdb::cook::CookedDatabase* cmuFbx() {
  static std::unique_ptr<mmdb::cook::CookedDatabase> db;
  if (db) return db.get();
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "cmu-fbx";
  if (!fs::exists(dir)) return nullptr;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".fbx") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  mmdb::cook::CookRequest request;
  for (const auto& f : files) {
    mmdb::cook::ClipSpec c;
    c.source = f;
    c.source_label = fs::path(f).filename().string();
    request.clips.push_back(c);
  }
  spdlog::set_level(spdlog::level::err);
  db = std::make_unique<mmdb::cook::CookedDatabase>(mmdb::cook::cookDatabase(request));
  return db.get();
}

const mmdb::cook::CookedDatabase* synthetic(uint32_t joints, uint32_t clips, uint32_t frames) {
  static std::map<uint32_t, std::unique_ptr<mmdb::cook::CookedDatabase>> cache;
  auto& slot = cache[joints * 1000003u + clips * 1009u + frames];
  if (!slot) {
    mmdb::test::SyntheticSpec spec;
    spec.joints = joints;
    spec.clips = clips;
    spec.frames_per_clip = frames;
    slot = std::make_unique<mmdb::cook::CookedDatabase>(mmdb::test::makeSyntheticDatabase(spec));
  }
  return slot.get();
}

const mmdb::cook::CookedDatabase* databaseNamed(int which, std::string& name) {
  std::string why;
  switch (which) {
    case 0:
      name = "bandai-1";
      return mmdb::test::bandaiCookedDatabase(&why);
    case 1:
      name = "cmu-fbx";
      return cmuFbx();
    case 2:
      name = "synthetic 4 joints, 6 x 240 frames";
      return synthetic(4, 6, 240);
    case 3:
      name = "synthetic 22 joints, 40 x 1000 frames";
      return synthetic(22, 40, 1000);
  }
  return nullptr;
}

// Sizes: one iteration that codes the database; the figures are counters.
void BM_PoseSizes(benchmark::State& state) {
  std::string name;
  const mmdb::cook::CookedDatabase* db = databaseNamed(int(state.range(0)), name);
  if (!db) return state.SkipWithError(("no motion corpus for " + name).c_str());
  const Coded* coded = nullptr;
  for (auto _ : state) coded = &codedOf(name, db);
  state.SetLabel(name);
  state.counters["file_raw_MiB"] = double(coded->raw_file) / 1048576.0;
  state.counters["file_coded_MiB"] = double(coded->coded_file) / 1048576.0;
  state.counters["file_ratio"] = double(coded->raw_file) / double(coded->coded_file);
  uint64_t raw = 0, coded_bytes = 0;
  static const char* const kShort[] = {"rot", "trans", "vel", "angvel"};
  for (int s = 0; s < mmdb::cook::kPoseStreamCount; ++s) {
    const mmdb::cook::StreamCompressionReport& r = coded->report.streams[size_t(s)];
    raw += r.raw_bytes;
    coded_bytes += r.coded_bytes;
    state.counters[std::string(kShort[s]) + "_ratio"] = double(r.raw_bytes) / double(r.coded_bytes);
  }
  state.counters["poses_raw_MB"] = double(raw) / 1e6;
  state.counters["poses_coded_MB"] = double(coded_bytes) / 1e6;
  state.counters["poses_ratio"] = double(raw) / double(coded_bytes);
  state.counters["worst_mm"] = coded->report.streams[0].max_error * 1000.0;
}
BENCHMARK(BM_PoseSizes)->DenseRange(0, 3)->Iterations(1)->Unit(benchmark::kMillisecond);

// Decoding every frame of every stream into caller memory on one core; arg 0: copy of a raw
// file's streams (the baseline), 1: decode of the coded file. GB/s of decoded output.
void BM_DecodePoses(benchmark::State& state) {
  std::string name;
  const mmdb::cook::CookedDatabase* cooked = databaseNamed(int(state.range(1)), name);
  if (!cooked) return state.SkipWithError(("no motion corpus for " + name).c_str());
  const Coded& coded = codedOf(name, cooked);
  const bool decode = state.range(0) == 1;
  const mmdb::test::AlignedBytes& bytes = decode ? coded.coded_bytes : coded.raw_bytes;
  auto opened = mmdb::Database::fromMemory(bytes.data(), bytes.size());
  if (!opened.ok()) return state.SkipWithError(opened.error().message());
  const mmdb::Database& db = opened.value();
  const size_t elements = size_t(db.frameCount()) * db.jointCount();
  std::vector<mmdb::Float4> s[4];
  for (auto& v : s) v.resize(elements);
  for (auto _ : state) {
    const mmdb::Status st = db.decodePoses(0, db.frameCount(), {s[0], s[1], s[2], s[3]});
    if (!st) return state.SkipWithError(st.message());
    benchmark::DoNotOptimize(s[0].data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(name + (decode ? ", coded: decode" : ", raw: copy (baseline)"));
  state.SetBytesProcessed(int64_t(state.iterations()) *
                          int64_t(elements * 4 * sizeof(mmdb::Float4)));
}
BENCHMARK(BM_DecodePoses)
    ->ArgsProduct({{0, 1}, {0, 3}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
