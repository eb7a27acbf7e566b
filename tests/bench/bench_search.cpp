// Runtime search benchmarks: open time against file size; time per query of the exhaustive and
// the bounds-pruned search on a synthetic million-frame database (and on bandai-1 cooked, when
// the corpus and the cooker are there); the exhaustive scan as a fraction of this machine's
// streaming read bandwidth over a buffer of the same size, measured in the same run.
//
// Against the reference-style baseline (reference_search.h), in the same run and with the same
// 1,000 game queries, on ~300k-frame databases: exhaustive, reference-style, pruned, and 64
// requests as one searchBatch against 64 single searches.
//
//   ./bench_search --benchmark_counters_tabular=true
//   ./bench_search --benchmark_filter=Game --benchmark_counters_tabular=true
#include "real_database.h"
#include "reference_search.h"
#include "synthetic_database.h"

#include "cook/bounds.h"

#include <mmdb/database.h>
#include <mmdb/search.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct Loaded {
  mmdb::test::AlignedBytes bytes;
  mmdb::Database db;
  std::string path;  // the same bytes on disk, for the open benchmark
  std::vector<std::vector<float>> queries;
  std::vector<int32_t> current;
};

// Queries a game would ask: a row of the database (the pose playing) with its columns moved by
// noise, searched from a playing frame elsewhere.
void makeQueries(Loaded& l, uint32_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.3f);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t f = rng() % l.db.frameCount();
    auto row = l.db.featureRow(f);
    std::vector<float> q(row.begin(), row.end());
    for (float& v : q) v += noise(rng);
    l.queries.push_back(std::move(q));
    l.current.push_back(int32_t(rng() % l.db.frameCount()));
  }
}

std::unique_ptr<Loaded> loadSynthetic(uint32_t frames) {
  auto l = std::make_unique<Loaded>();
  mmdb::test::SyntheticSpec spec;
  spec.frames_per_clip = 1000;
  spec.clips = frames / spec.frames_per_clip;
  spec.joints = 1;
  l->bytes = mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(spec));
  auto r = mmdb::Database::fromMemory(l->bytes.data(), l->bytes.size());
  if (!r.ok()) {
    std::fprintf(stderr, "synthetic database does not open: %s\n", r.error().message());
    std::exit(1);
  }
  l->db = std::move(r.value());
  l->path = "/tmp/bench_search_" + std::to_string(frames) + ".mmdb";
  mmdb::test::writeFile(l->path.c_str(), l->bytes.data(), l->bytes.size());
  makeQueries(*l, 256, 7);
  return l;
}

Loaded& synthetic(uint32_t frames) {
  static std::map<uint32_t, std::unique_ptr<Loaded>> cache;
  auto& slot = cache[frames];
  if (!slot) slot = loadSynthetic(frames);
  return *slot;
}

// CPU time of this thread: the benchmark's rate counters use CPU time too, and on a shared
// machine wall time measures the neighbours.
double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Streaming read bandwidth (bytes/s, per CPU second) over a buffer of `bytes`, best of a few
// passes.
// Reads the whole buffer once with four independent sums, so it is bound by memory, not adds.
void streamRead(const std::vector<float>& buffer) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= buffer.size(); i += 4) {
    s0 += buffer[i];
    s1 += buffer[i + 1];
    s2 += buffer[i + 2];
    s3 += buffer[i + 3];
  }
  benchmark::DoNotOptimize(s0 + s1 + s2 + s3);
}

double streamBandwidth(size_t bytes) {
  std::vector<float> buffer(bytes / sizeof(float), 1.f);
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const double t0 = cpuSeconds();
    streamRead(buffer);
    const double s = cpuSeconds() - t0;
    best = std::max(best, double(bytes) / s);
  }
  return best;
}

void runSearch(benchmark::State& state, Loaded& l, bool pruned) {
  const double bandwidth = streamBandwidth(l.db.features().size_bytes());
  size_t i = 0;
  uint64_t evaluated = 0, mismatches = 0, searches = 0;
  for (auto _ : state) {
    mmdb::SearchRequest request;
    request.query = l.queries[i % l.queries.size()];
    request.current_frame = l.current[i % l.current.size()];
    ++i;
    auto r = pruned ? mmdb::searchPruned(l.db, request) : mmdb::searchExhaustive(l.db, request);
    benchmark::DoNotOptimize(r);
    evaluated += r.value().evaluated;
    ++searches;
  }
  // Same winners, checked after the timed loop on every query used.
  for (size_t q = 0; q < std::min(i, l.queries.size()); ++q) {
    mmdb::SearchRequest request;
    request.query = l.queries[q];
    request.current_frame = l.current[q];
    const auto a = mmdb::searchExhaustive(l.db, request).value();
    const auto b = mmdb::searchPruned(l.db, request).value();
    if (a.frame != b.frame || a.cost != b.cost) ++mismatches;
  }
  const double scanned = double(l.db.features().size_bytes()) * double(searches);
  state.counters["rows_per_query"] = double(evaluated) / double(searches);
  state.counters["frames"] = double(l.db.frameCount());
  state.counters["mismatches"] = double(mismatches);
  if (!pruned) {
    // Fraction of streaming bandwidth reached by the exhaustive scan (features bytes / time).
    state.counters["stream_GBps"] = bandwidth / 1e9;
    state.counters["bw_fraction"] =
        benchmark::Counter(scanned / bandwidth, benchmark::Counter::kIsRate);
  }
  if (mismatches) state.SkipWithError("pruned and exhaustive searches disagree");
}

void BM_SearchExhaustive(benchmark::State& state) {
  runSearch(state, synthetic(uint32_t(state.range(0))), false);
}
void BM_SearchPruned(benchmark::State& state) {
  runSearch(state, synthetic(uint32_t(state.range(0))), true);
}
BENCHMARK(BM_SearchExhaustive)->Arg(1000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchPruned)->Arg(1000000)->Unit(benchmark::kMillisecond);

// bandai-1 cooked (36k frames at 60 Hz), game queries from the controller.
Loaded* bandai(benchmark::State& state) {
  static std::unique_ptr<Loaded> cached;
  static std::string why;
  if (!cached && why.empty()) {
    const mmdb::test::RealDatabase* real = mmdb::test::bandaiDatabase(&why);
    if (real) {
      cached = std::make_unique<Loaded>();
      cached->bytes = mmdb::test::AlignedBytes(real->bytes.data(), real->bytes.size());
      cached->db =
          std::move(mmdb::Database::fromMemory(cached->bytes.data(), cached->bytes.size()).value());
      mmdb::test::makeGameQueries(cached->db, 256, 11, cached->queries, cached->current);
    }
  }
  if (!cached) state.SkipWithError(why.c_str());
  return cached.get();
}
void BM_SearchExhaustiveBandai(benchmark::State& state) {
  if (Loaded* l = bandai(state)) runSearch(state, *l, false);
}
void BM_SearchPrunedBandai(benchmark::State& state) {
  if (Loaded* l = bandai(state)) runSearch(state, *l, true);
}
BENCHMARK(BM_SearchExhaustiveBandai)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SearchPrunedBandai)->Unit(benchmark::kMicrosecond);

// ~300k-frame databases with a game's queries: the playing frame's pose columns and another
// trajectory. 0: synthetic, 300 clips of 1,000 frames (smooth curves plus noise); the trajectory
// columns of another frame moved by N(0, 0.3) noise (the tests' generator has no root motion the
// features follow, so a controller cannot drive it). 1: bandai-1 cooked mirrored at 240 Hz
// (about 290k frames); the trajectory predicted by the controller from the playing frame's root
// motion and a random stick (mmdb::test::makeGameQueries). 2: a database that does not repeat
// itself (mmdb::test::nonRepeatingDatabase): bandai-1's clips once each, mirrored, at 60 Hz,
// completed to 300k frames with synthetic motion blended from them; queries as for 1. 3: the
// real clips of 2 alone (bandai-1 mirrored at 60 Hz, about 72k frames), for its pruning rate.
// 4 and 5: the same at 30 Hz (a library's rate: a box of 16 frames spans twice the motion).
constexpr uint32_t kGameQueries = 1000;

struct Game {
  std::string name;
  const mmdb::Database* db = nullptr;
  std::unique_ptr<Loaded> owned;
  std::vector<std::vector<float>> queries;
  std::vector<int32_t> current;
  std::vector<mmdb::SearchResult> expected;  // searchExhaustive's, computed once
  // Run-time weights a technical artist might try (feet positions halved, trajectory direction
  // doubled), and searchExhaustive's answers with them.
  std::vector<float> weights;
  std::vector<mmdb::SearchResult> expected_weighted;
};

Game* game(benchmark::State& state) {
  static std::map<int64_t, std::unique_ptr<Game>> cache;
  static std::map<int64_t, std::string> why;
  const int64_t which = state.range(0);
  auto& slot = cache[which];
  if (!slot && why[which].empty()) {
    auto g = std::make_unique<Game>();
    if (which == 0) {
      g->owned = std::make_unique<Loaded>();
      mmdb::test::SyntheticSpec spec;
      spec.frames_per_clip = 1000;
      spec.clips = 300;
      spec.joints = 1;
      g->owned->bytes = mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(spec));
      g->owned->db = std::move(
          mmdb::Database::fromMemory(g->owned->bytes.data(), g->owned->bytes.size()).value());
      g->db = &g->owned->db;
      g->name = "synthetic 300k";
      std::mt19937 rng(21);
      std::normal_distribution<float> noise(0.f, 0.3f);
      for (uint32_t i = 0; i < kGameQueries; ++i) {
        const uint32_t playing = rng() % g->db->frameCount();
        const uint32_t other = rng() % g->db->frameCount();
        auto a = g->db->featureRow(playing), b = g->db->featureRow(other);
        std::vector<float> q(a.begin(), a.end());
        for (size_t c = 15; c < q.size(); ++c) q[c] = b[c] + noise(rng);
        g->queries.push_back(std::move(q));
        g->current.push_back(int32_t(playing));
      }
    } else {
      const mmdb::test::RealDatabase* real =
          which == 1   ? mmdb::test::bandaiDatabaseAt(240, true, &why[which])
          : which == 2 ? mmdb::test::nonRepeatingDatabase(60, &why[which])
          : which == 3 ? mmdb::test::bandaiDatabaseAt(60, true, &why[which])
          : which == 4 ? mmdb::test::nonRepeatingDatabase(30, &why[which])
                       : mmdb::test::bandaiDatabaseAt(30, true, &why[which]);
      if (real) {
        g->db = &real->db;
        g->name = which == 1   ? "bandai-1 mirrored 240 Hz"
                  : which == 2 ? "non-repeating 300k"
                  : which == 3 ? "bandai-1 mirrored 60 Hz"
                  : which == 4 ? "non-repeating 300k 30 Hz"
                               : "bandai-1 mirrored 30 Hz";
        mmdb::test::makeGameQueries(*g->db, kGameQueries, 23, g->queries, g->current);
      }
    }
    if (g->db) {
      g->weights.assign(g->db->featureBlockCount(), 1.f);
      for (uint32_t b = 0; b < g->db->featureBlockCount(); ++b) {
        const mmdb::FeatureKind kind = g->db->featureBlock(b).kind;
        if (kind == mmdb::FeatureKind::Position) g->weights[b] = 0.5f;
        if (kind == mmdb::FeatureKind::TrajectoryDirection) g->weights[b] = 2.f;
      }
      for (size_t i = 0; i < g->queries.size(); ++i) {
        mmdb::SearchRequest request;
        request.query = g->queries[i];
        request.current_frame = g->current[i];
        g->expected.push_back(mmdb::searchExhaustive(*g->db, request).value());
        request.block_weights = g->weights;
        g->expected_weighted.push_back(mmdb::searchExhaustive(*g->db, request).value());
      }
      slot = std::move(g);
    }
  }
  if (!slot) state.SkipWithError(why[which].c_str());
  if (slot) state.SetLabel(slot->name);
  return slot.get();
}

enum class Method { Exhaustive, Reference, Pruned, PrunedWeighted };

void BM_Game(benchmark::State& state, Method method) {
  Game* g = game(state);
  if (!g) return;
  size_t i = 0;
  uint64_t evaluated = 0, mismatches = 0;
  std::vector<mmdb::SearchResult> got(g->queries.size());
  std::vector<bool> seen(g->queries.size(), false);
  for (auto _ : state) {
    const size_t k = i++ % g->queries.size();
    mmdb::SearchRequest request;
    request.query = g->queries[k];
    request.current_frame = g->current[k];
    if (method == Method::PrunedWeighted) request.block_weights = g->weights;
    mmdb::SearchResult r;
    switch (method) {
      case Method::Exhaustive:
        r = mmdb::searchExhaustive(*g->db, request).value();
        break;
      case Method::Reference:
        r = mmdb::test::referenceSearch(*g->db, request);
        break;
      case Method::Pruned:
      case Method::PrunedWeighted:
        r = mmdb::searchPruned(*g->db, request).value();
        break;
    }
    benchmark::DoNotOptimize(r);
    evaluated += r.evaluated;
    got[k] = r;
    seen[k] = true;
  }
  const std::vector<mmdb::SearchResult>& expected =
      method == Method::PrunedWeighted ? g->expected_weighted : g->expected;
  for (size_t k = 0; k < got.size(); ++k)
    if (seen[k] && (got[k].frame != expected[k].frame || got[k].cost != expected[k].cost))
      ++mismatches;
  state.counters["frames"] = double(g->db->frameCount());
  state.counters["rows_per_query"] = double(evaluated) / double(std::max<size_t>(i, 1));
  state.counters["mismatches"] = double(mismatches);
  state.SetItemsProcessed(int64_t(i));
  if (mismatches) state.SkipWithError("winners or costs differ from searchExhaustive");
}
void BM_GameExhaustive(benchmark::State& state) { BM_Game(state, Method::Exhaustive); }
void BM_GameReference(benchmark::State& state) { BM_Game(state, Method::Reference); }
void BM_GamePruned(benchmark::State& state) { BM_Game(state, Method::Pruned); }
// The same with run-time block weights (SearchRequest::block_weights).
void BM_GamePrunedWeighted(benchmark::State& state) { BM_Game(state, Method::PrunedWeighted); }
BENCHMARK(BM_GameReference)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GameExhaustive)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GamePruned)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GamePrunedWeighted)->DenseRange(0, 5)->Unit(benchmark::kMicrosecond);

// 64 characters: 64 single searchPruned calls against one searchBatch of the same 64 requests
// (consecutive queries of the 1,000, round robin). items = queries answered.
enum class Crowd { Singles, Batch, BatchWithScratch };
void BM_GameCrowd(benchmark::State& state, Crowd how) {
  Game* g = game(state);
  if (!g) return;
  const size_t count = size_t(state.range(1));
  std::vector<mmdb::SearchRequest> requests(count);
  std::vector<mmdb::SearchResult> results(count);
  std::vector<float> scratch(how == Crowd::BatchWithScratch ? mmdb::batchScratchFloats(*g->db) : 0);
  size_t next = 0;
  uint64_t mismatches = 0, answered = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const size_t first = next;
    for (size_t j = 0; j < count; ++j) {
      const size_t k = (first + j) % g->queries.size();
      requests[j] = {};
      requests[j].query = g->queries[k];
      requests[j].current_frame = g->current[k];
    }
    next = (first + count) % g->queries.size();
    state.ResumeTiming();
    if (how == Crowd::Singles) {
      for (size_t j = 0; j < count; ++j)
        results[j] = mmdb::searchPruned(*g->db, requests[j]).value();
    } else if (!mmdb::searchBatch(*g->db, requests, results, scratch).ok()) {
      state.SkipWithError("batch failed");
    }
    benchmark::DoNotOptimize(results.data());
    for (size_t j = 0; j < count; ++j) {
      const auto& e = g->expected[(first + j) % g->queries.size()];
      mismatches += results[j].frame != e.frame || results[j].cost != e.cost;
    }
    answered += count;
  }
  state.counters["mismatches"] = double(mismatches);
  state.SetItemsProcessed(int64_t(answered));
  if (mismatches) state.SkipWithError("winners or costs differ from searchExhaustive");
}
void BM_GameSingles(benchmark::State& state) { BM_GameCrowd(state, Crowd::Singles); }
void BM_GameBatch(benchmark::State& state) { BM_GameCrowd(state, Crowd::Batch); }
// The batch given a scratch (batchScratchFloats): seeds and group bounds kept for the pass.
void BM_GameBatchScratch(benchmark::State& state) { BM_GameCrowd(state, Crowd::BatchWithScratch); }
BENCHMARK(BM_GameSingles)->ArgsProduct({{0, 1, 2, 3, 4, 5}, {64}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GameBatch)->ArgsProduct({{0, 1, 2, 3, 4, 5}, {64}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GameBatchScratch)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {64}})
    ->Unit(benchmark::kMillisecond);

// The database of `which` (1: bandai-1 mirrored at 240 Hz, 3: at 60 Hz, 5: at 30 Hz).
const mmdb::test::RealDatabase* gameDatabase(int64_t which) {
  return mmdb::test::bandaiDatabaseAt(which == 1 ? 240 : which == 3 ? 60 : 30, true, nullptr);
}

// The same frames with other bounds: the cook's, with large boxes of `large` frames, over the
// matchable frames only (as mmcook 1.3 cooks them) or over every frame (as before).
std::unique_ptr<Loaded> withBounds(const mmdb::test::RealDatabase& real, uint16_t large,
                                   bool matchable_only) {
  mmdb::cook::CookedDatabase cooked = real.cooked;
  cooked.bounds_large_size = large;
  const std::vector<uint8_t> matchable =
      matchable_only ? mmdb::cook::matchableFrames(cooked.ranges, cooked.frame_count)
                     : std::vector<uint8_t>();
  for (auto [size, lo, hi] :
       {std::tuple{cooked.bounds_small_size, &cooked.bounds_small_min, &cooked.bounds_small_max},
        std::tuple{cooked.bounds_large_size, &cooked.bounds_large_min, &cooked.bounds_large_max}}) {
    mmdb::cook::FeatureBounds boxes =
        mmdb::cook::buildFeatureBounds(cooked.features, cooked.feature_stride, size, matchable);
    *lo = std::move(boxes.min);
    *hi = std::move(boxes.max);
  }
  auto out = std::make_unique<Loaded>();
  out->bytes = mmdb::test::serializeAligned(cooked);
  out->db = std::move(mmdb::Database::fromMemory(out->bytes.data(), out->bytes.size()).value());
  return out;
}

// The 1,000 game queries on two versions of one database (db[0], db[1]: the same frames, other
// bounds), both in every iteration, in alternating order: singles (searchPruned) and batches of
// 64 with a scratch. Counters: microseconds per query for each (single_us_<name>,
// batch_us_<name>), their ratios (db[1] over db[0]) and mismatches (results that differ).
void compareBounds(benchmark::State& state, const Game& g, const mmdb::Database* const db[2],
                   const char* const name[2]) {
  const size_t n = g.queries.size();
  std::vector<mmdb::SearchResult> got[2] = {std::vector<mmdb::SearchResult>(n),
                                            std::vector<mmdb::SearchResult>(n)};
  std::vector<mmdb::SearchRequest> batch(mmdb::kBatchChunk);
  std::vector<mmdb::SearchResult> results(mmdb::kBatchChunk);
  std::vector<float> scratch(
      std::max(mmdb::batchScratchFloats(*db[0]), mmdb::batchScratchFloats(*db[1])));
  double single_us[2] = {}, batch_us[2] = {};
  size_t batched = 0;
  int iteration = 0;
  for (auto _ : state) {
    for (int turn = 0; turn < 2; ++turn) {
      const int k = (turn + iteration) % 2;  // which goes first alternates
      const auto t0 = std::chrono::steady_clock::now();
      for (size_t q = 0; q < n; ++q) {
        mmdb::SearchRequest request;
        request.query = g.queries[q];
        request.current_frame = g.current[q];
        got[k][q] = mmdb::searchPruned(*db[k], request).value();
      }
      const auto t1 = std::chrono::steady_clock::now();
      const mmdb::Span<float> scratch_of_db(scratch.data(), mmdb::batchScratchFloats(*db[k]));
      for (size_t first = 0; first + mmdb::kBatchChunk <= n; first += mmdb::kBatchChunk) {
        for (size_t j = 0; j < mmdb::kBatchChunk; ++j) {
          batch[j] = {};
          batch[j].query = g.queries[first + j];
          batch[j].current_frame = g.current[first + j];
        }
        if (!mmdb::searchBatch(*db[k], batch, results, scratch_of_db))
          state.SkipWithError("batch failed");
      }
      const auto t2 = std::chrono::steady_clock::now();
      single_us[k] += std::chrono::duration<double, std::micro>(t1 - t0).count();
      batch_us[k] += std::chrono::duration<double, std::micro>(t2 - t1).count();
    }
    batched += n / mmdb::kBatchChunk * mmdb::kBatchChunk;
    ++iteration;
  }
  uint64_t mismatches = 0;
  for (size_t q = 0; q < n; ++q)
    mismatches += got[0][q].frame != got[1][q].frame || got[0][q].cost != got[1][q].cost;
  const double queries = double(n) * iteration;
  for (int k = 0; k < 2; ++k) {
    state.counters[std::string("single_us_") + name[k]] = single_us[k] / queries;
    state.counters[std::string("batch_us_") + name[k]] = batch_us[k] / double(batched);
  }
  state.counters["single_ratio"] = single_us[1] / single_us[0];
  state.counters["batch_ratio"] = batch_us[1] / batch_us[0];
  state.counters["mismatches"] = double(mismatches);
  if (mismatches) state.SkipWithError("the two bounds give different results");
}

// The cook's large boxes (128 frames) against the 64 it cooked before (both over the matchable
// frames), on the database of `which` (gameDatabase()).
void BM_GameLargeBoxes(benchmark::State& state) {
  Game* g = game(state);
  if (!g) return;
  const int64_t which = state.range(0);
  static std::map<int64_t, std::unique_ptr<Loaded>> cache[2];
  const uint16_t sizes[2] = {64, 128};
  for (int k = 0; k < 2; ++k)
    if (!cache[k][which]) cache[k][which] = withBounds(*gameDatabase(which), sizes[k], true);
  const mmdb::Database* const db[2] = {&cache[0][which]->db, &cache[1][which]->db};
  const char* const name[2] = {"64", "128"};
  compareBounds(state, *g, db, name);
}
BENCHMARK(BM_GameLargeBoxes)->Arg(1)->Arg(3)->Arg(5)->Iterations(8)->Unit(benchmark::kMillisecond);

// Boxes over the matchable frames only (mmcook 1.3) against boxes over every frame (before), on
// the database of `which` (gameDatabase()), large boxes of 128 frames.
void BM_GameMatchableBounds(benchmark::State& state) {
  Game* g = game(state);
  if (!g) return;
  const int64_t which = state.range(0);
  static std::map<int64_t, std::unique_ptr<Loaded>> cache[2];
  for (int k = 0; k < 2; ++k)
    if (!cache[k][which]) cache[k][which] = withBounds(*gameDatabase(which), 128, k == 1);
  const mmdb::Database* const db[2] = {&cache[0][which]->db, &cache[1][which]->db};
  const char* const name[2] = {"every", "matchable"};
  compareBounds(state, *g, db, name);
}
BENCHMARK(BM_GameMatchableBounds)
    ->Arg(1)
    ->Arg(3)
    ->Arg(5)
    ->Iterations(8)
    ->Unit(benchmark::kMillisecond);

// Streaming read over a buffer the size of the million-frame feature array: the baseline.
void BM_StreamRead(benchmark::State& state) {
  const size_t bytes = size_t(state.range(0)) * 28 * sizeof(float);
  std::vector<float> buffer(bytes / sizeof(float), 1.f);
  for (auto _ : state) streamRead(buffer);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}
BENCHMARK(BM_StreamRead)->Arg(1000000)->Unit(benchmark::kMillisecond);

// Open = mmap + identifier/version/alignment + verifier + semantic checks (the NaN and bounds
// scans read the features once), with the half-precision copy of the features (half:1, the
// default) or without. The file is in the page cache.
void BM_Open(benchmark::State& state) {
  Loaded& l = synthetic(uint32_t(state.range(0)));
  mmdb::OpenOptions options;
  options.half_features = state.range(1) != 0;
  for (auto _ : state) {
    auto r = mmdb::Database::open(l.path.c_str(), options);
    if (!r.ok()) state.SkipWithError(r.error().message());
    benchmark::DoNotOptimize(r);
  }
  state.counters["file_MB"] = double(l.bytes.size()) / 1e6;
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(l.bytes.size()));
}
BENCHMARK(BM_Open)
    ->ArgNames({"frames", "half"})
    ->ArgsProduct({{10000, 100000, 1000000}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
