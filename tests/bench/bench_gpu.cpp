// GPU crowd motion matching: GPU time of each compute pass per frame (timestamp queries), for
// {1, 64, 250, 1024} characters × synthetic databases of 50k, 250k and 1M frames (and bandai-1
// cooked, when the corpus is there, or any --mmdb=<file>). Every character searches in the
// measured frame (the worst frame; with the default 10 Hz staggered timers about 1/6 do).
// Baselines from the same run: the CPU runtime's pruned and exhaustive search for the same
// queries, and the bandwidth floor of the match pass = bytes it must read (searching characters
// × matchable rows × feature stride × 4) / this device's copy bandwidth measured here (or
// --bandwidth-gbs=<GB/s>); `floor_fraction` = floor / measured match time.
//
//   ./bench_gpu [--device=<name substring or index>] [--bandwidth-gbs=4800] [--mmdb=<file>]
//               [--max-work=<rows>] [--exhaustive] --benchmark_counters_tabular=true
//
// --device (or MMDB_VK_DEVICE) picks the Vulkan device; the default is the best type (discrete
// first). On a CPU device (lavapipe) configurations whose match pass reads more than --max-work
// rows (default 2e7 there, unlimited on GPUs) are skipped. --exhaustive turns the match pass's
// bounds pruning off (the A/B baseline of the pruning).
#include "compress/pose_compression.h"
#include "cook/cook_database.h"
#include "synthetic_database.h"

#include <mmdb/database.h>
#include <mmdb/gpu/crowd.h>
#include <mmdb/search.h>

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string device;
  double bandwidth_gbs = 0;  // 0: measure
  std::string mmdb;
  double max_work = -1;     // rows; -1: by device type
  bool exhaustive = false;  // match without the bounds (pruning off)
};
Options g_options;

struct Loaded {
  std::string name;
  mmdb::test::AlignedBytes bytes;
  mmdb::Database db;
  mmdb::gpu::DatabaseView view;
  uint64_t matchable = 0;
};

mmdb::gpu::Context& context() {
  static std::unique_ptr<mmdb::gpu::Context> ctx = [] {
    mmdb::gpu::ContextOptions options;
    options.device = g_options.device;
    auto created = mmdb::gpu::Context::createHeadless(options);
    if (!created) {
      std::fprintf(stderr, "bench_gpu: %s\n", created.error().message());
      std::exit(1);
    }
    return std::move(created.value());
  }();
  return *ctx;
}

std::unique_ptr<Loaded> open(std::string name, mmdb::test::AlignedBytes bytes) {
  auto l = std::make_unique<Loaded>();
  l->name = std::move(name);
  l->bytes = std::move(bytes);
  auto db = mmdb::Database::fromMemory(l->bytes.data(), l->bytes.size());
  if (!db) {
    std::fprintf(stderr, "bench_gpu: %s does not open: %s\n", l->name.c_str(),
                 db.error().message());
    std::exit(1);
  }
  l->db = std::move(db.value());
  auto view = mmdb::gpu::DatabaseView::fromDatabase(l->db);
  if (!view) {
    std::fprintf(stderr, "bench_gpu: %s: %s\n", l->name.c_str(), view.error().message());
    std::exit(1);
  }
  l->view = std::move(view.value());
  for (const mmdb::MatchRange& r : l->db.ranges()) l->matchable += r.frame_count;
  return l;
}

mmdb::test::AlignedBytes readAligned(const std::string& path) {
  const std::vector<uint8_t> bytes = mmdb::test::readFile(path.c_str());
  return mmdb::test::AlignedBytes(bytes);
}

// The cooked database behind a name: "50k", "250k", "1M" (synthetic, 8 joints), "bandai-1";
// null when the corpus is absent.
std::unique_ptr<mmdb::cook::CookedDatabase> cookedNamed(const std::string& name) {
  if (name == "bandai-1") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(MMDB_SHARED_DATA) / "bandai-1";
    if (!fs::exists(dir)) return nullptr;
    spdlog::set_level(spdlog::level::err);
    mmdb::cook::CookRequest request;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".bvh") continue;
      mmdb::cook::ClipSpec clip;
      clip.source = e.path().string();
      request.clips.push_back(clip);
    }
    std::sort(request.clips.begin(), request.clips.end(),
              [](const mmdb::cook::ClipSpec& a, const mmdb::cook::ClipSpec& b) {
                return a.source < b.source;
              });
    return std::make_unique<mmdb::cook::CookedDatabase>(mmdb::cook::cookDatabase(request));
  }
  mmdb::test::SyntheticSpec spec;
  spec.frames_per_clip = 1000;
  spec.clips = (name == "50k" ? 50000 : name == "250k" ? 250000 : 1000000) / spec.frames_per_clip;
  spec.joints = 8;
  return std::make_unique<mmdb::cook::CookedDatabase>(mmdb::test::makeSyntheticDatabase(spec));
}

// Databases by name, made once: "50k", "250k", "1M", "bandai-1" (raw pose streams), the same
// with " coded" (pose streams coded with the default budget), and "file".
Loaded* database(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;
  auto& slot = cache[name];
  if (slot) return slot.get();
  if (name == "file") {
    slot = open(g_options.mmdb, readAligned(g_options.mmdb));
    return slot.get();
  }
  const std::string suffix = " coded";
  const bool coded = name.size() > suffix.size() &&
                     name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  std::unique_ptr<mmdb::cook::CookedDatabase> cooked =
      cookedNamed(coded ? name.substr(0, name.size() - suffix.size()) : name);
  if (!cooked) return nullptr;
  if (coded) mmdb::cook::compressPoses(*cooked, {}, 0);
  slot = open(name, mmdb::test::serializeAligned(*cooked));
  return slot.get();
}

// Device-to-device copy bandwidth (read + write bytes per second), from timestamps.
double measuredBandwidth() {
  static double gbs = [] {
    if (g_options.bandwidth_gbs > 0) return g_options.bandwidth_gbs;
    mmdb::gpu::Context& ctx = context();
    if (ctx.info().timestamp_period_ns <= 0) return 0.0;
    const VkDeviceSize bytes =
        ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU ? (64u << 20) : (512u << 20);
    VkBuffer buffers[2] = {};
    VkDeviceMemory memory[2] = {};
    for (int i = 0; i < 2; ++i) {
      VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
      bci.size = bytes;
      bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
      vkCreateBuffer(ctx.device(), &bci, nullptr, &buffers[i]);
      VkMemoryRequirements req;
      vkGetBufferMemoryRequirements(ctx.device(), buffers[i], &req);
      VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
      mai.allocationSize = req.size;
      mai.memoryTypeIndex = ctx.memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
      vkAllocateMemory(ctx.device(), &mai, nullptr, &memory[i]);
      vkBindBufferMemory(ctx.device(), buffers[i], memory[i], 0);
    }
    VkQueryPoolCreateInfo qpci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpci.queryCount = 2;
    VkQueryPool pool = VK_NULL_HANDLE;
    vkCreateQueryPool(ctx.device(), &qpci, nullptr, &pool);
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
      ctx.submitAndWait([&](VkCommandBuffer cmd) {
        vkCmdResetQueryPool(cmd, pool, 0, 2);
        vkCmdFillBuffer(cmd, buffers[0], 0, VK_WHOLE_SIZE, uint32_t(round));
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                             1, &barrier, 0, nullptr, 0, nullptr);
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool, 0);
        VkBufferCopy copy{0, 0, bytes};
        vkCmdCopyBuffer(cmd, buffers[0], buffers[1], 1, &copy);
        vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 1);
      });
      uint64_t stamps[2] = {};
      vkGetQueryPoolResults(ctx.device(), pool, 0, 2, sizeof(stamps), stamps, sizeof(uint64_t),
                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      best = std::min(best, double(stamps[1] - stamps[0]) * ctx.info().timestamp_period_ns * 1e-9);
    }
    vkDestroyQueryPool(ctx.device(), pool, nullptr);
    for (int i = 0; i < 2; ++i) {
      vkDestroyBuffer(ctx.device(), buffers[i], nullptr);
      vkFreeMemory(ctx.device(), memory[i], nullptr);
    }
    return 2.0 * double(bytes) / best * 1e-9;
  }();
  return gbs;
}

double cpuMilliseconds(const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// The CPU search for a sample of the GPU's own queries, per query.
void cpuSearchTimes(const Loaded& l, const mmdb::gpu::Crowd& crowd, uint32_t characters,
                    double& pruned_ms, double& exhaustive_ms) {
  const mmdb::Result<std::vector<float>> read_queries = crowd.readQueries();
  const mmdb::Result<std::vector<mmdb::gpu::CrowdCharacter>> read_states = crowd.readCharacters();
  pruned_ms = exhaustive_ms = 0;
  if (!read_queries || !read_states) return;
  const std::vector<float>& queries = read_queries.value();
  const std::vector<mmdb::gpu::CrowdCharacter>& states = read_states.value();
  const uint32_t sample = std::min<uint32_t>(characters, 8);
  const uint32_t stride = l.db.featureStride();
  for (int kind = 0; kind < 2; ++kind) {
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < sample; ++i) {
      mmdb::SearchRequest request;
      request.query =
          mmdb::Span<const float>(queries.data() + size_t(i) * stride, l.db.featureCount());
      request.current_frame = int32_t(states[i].current_frame);
      auto r =
          kind == 0 ? mmdb::searchPruned(l.db, request) : mmdb::searchExhaustive(l.db, request);
      benchmark::DoNotOptimize(r);
    }
    (kind == 0 ? pruned_ms : exhaustive_ms) = cpuMilliseconds(start) / sample;
  }
}

void BM_GpuFrame(benchmark::State& state, const std::string& db_name, uint32_t characters) {
  Loaded* l = database(db_name);
  if (!l) return state.SkipWithError("database not available (../shared/data/bandai-1 absent?)");
  mmdb::gpu::Context& ctx = context();
  const double rows = double(characters) * double(l->matchable);
  double max_work = g_options.max_work >= 0                          ? g_options.max_work
                    : ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 2e7
                                                                     : 0;
  if (max_work > 0 && rows > max_work) return state.SkipWithError("over --max-work on this device");
  if (ctx.info().timestamp_period_ns <= 0)
    return state.SkipWithError("the queue has no timestamps");

  mmdb::gpu::CrowdSettings settings;
  settings.bounds_pruning = !g_options.exhaustive;
  settings.foot_locking = l->view.legs_status.ok();  // the synthetic skeletons have no legs
  auto created = mmdb::gpu::Crowd::create(ctx, l->view, characters, settings);
  if (!created) return state.SkipWithError(created.error().message());
  mmdb::gpu::Crowd& crowd = *created.value();
  for (uint32_t i = 0; i < characters; ++i) crowd.setStick(i, 0.3f * float(i % 3), 0.8f);
  for (int warm = 0; warm < 3; ++warm) crowd.stepAndWait(1.f / 60);  // past the start searches

  std::array<double, mmdb::gpu::kPassCount> sums{};
  double total = 0;
  int64_t frames = 0;
  for (auto _ : state) {
    for (uint32_t i = 0; i < characters; ++i) crowd.forceSearch(i);
    if (const mmdb::Status s = crowd.stepAndWait(1.f / 60); !s)
      return state.SkipWithError(s.message());
    const mmdb::gpu::PassTimings t = crowd.readTimings();
    if (!t.valid) return state.SkipWithError("no timings");
    for (uint32_t p = 0; p < mmdb::gpu::kPassCount; ++p) sums[p] += t.ms[p];
    total += t.total_ms;
    ++frames;
    state.SetIterationTime(t.total_ms * 1e-3);
  }
  const char* names[] = {"query_ms",       "match_ms", "resolve_ms",  "sample_ms",
                         "inertialize_ms", "fk_ms",    "foot_lock_ms"};
  static_assert(sizeof(names) / sizeof(names[0]) == mmdb::gpu::kPassCount);
  for (uint32_t p = 0; p < mmdb::gpu::kPassCount; ++p)
    state.counters[names[p]] = sums[p] / double(frames);
  state.counters["frame_ms"] = total / double(frames);
  const double match_ms = sums[1] / double(frames);
  const double bytes = rows * double(l->db.featureStride()) * sizeof(float);
  const double bandwidth = measuredBandwidth();
  state.counters["match_GB"] = bytes * 1e-9;
  if (bandwidth > 0) {
    const double floor_ms = bytes / (bandwidth * 1e9) * 1e3;
    state.counters["floor_ms"] = floor_ms;
    state.counters["floor_fraction"] = floor_ms / match_ms;
  }
  double pruned = 0, exhaustive = 0;
  cpuSearchTimes(*l, crowd, characters, pruned, exhaustive);
  state.counters["cpu_pruned_ms"] = pruned * characters;
  state.counters["cpu_exhaustive_ms"] = exhaustive * characters;
  state.counters["gpu_vs_pruned"] = pruned * characters / match_ms;
  state.SetLabel(ctx.info().name + ", " + std::to_string(l->db.frameCount()) + " frames, " +
                 std::to_string(l->db.jointCount()) + " joints");
}

// Crowd::create for one character: the upload of every database stream (a coded file's pose
// streams decoded into the staging buffer) plus pipelines and state buffers, which cost the same
// for both; the raw file of the same database, in the same run, is the baseline.
void BM_Upload(benchmark::State& state, const std::string& db_name) {
  Loaded* l = database(db_name);
  if (!l) return state.SkipWithError("database not available (../shared/data/bandai-1 absent?)");
  mmdb::gpu::Context& ctx = context();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    mmdb::gpu::CrowdSettings settings;
    settings.foot_locking = l->view.legs_status.ok();
    auto crowd = mmdb::gpu::Crowd::create(ctx, l->view, 1, settings);
    const double seconds = cpuMilliseconds(start) * 1e-3;
    if (!crowd) return state.SkipWithError(crowd.error().message());
    state.SetIterationTime(seconds);
  }
  state.counters["file_MiB"] = double(l->bytes.size()) / 1048576.0;
  state.counters["pose_MiB_uploaded"] =
      double(l->db.frameCount()) * l->db.jointCount() * 64 / 1048576.0;
}

// Strips this program's flags from argv, leaving Google Benchmark's.
void parseOptions(int& argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) {
      return a.rfind(flag, 0) == 0 ? a.substr(std::strlen(flag)) : std::string();
    };
    if (!value("--device=").empty())
      g_options.device = value("--device=");
    else if (!value("--bandwidth-gbs=").empty())
      g_options.bandwidth_gbs = std::atof(value("--bandwidth-gbs=").c_str());
    else if (!value("--mmdb=").empty())
      g_options.mmdb = value("--mmdb=");
    else if (!value("--max-work=").empty())
      g_options.max_work = std::atof(value("--max-work=").c_str());
    else if (a == "--exhaustive")
      g_options.exhaustive = true;
    else
      argv[out++] = argv[i];
  }
  argc = out;
}

}  // namespace

int main(int argc, char** argv) {
  parseOptions(argc, argv);
  std::vector<std::string> databases = {"50k", "250k", "1M", "bandai-1"};
  if (!g_options.mmdb.empty()) databases.push_back("file");
  for (const std::string& db : databases) {
    for (uint32_t characters : {1u, 64u, 250u, 1024u}) {
      benchmark::RegisterBenchmark(
          ("BM_GpuFrame/" + db + "/" + std::to_string(characters)).c_str(),
          [db, characters](benchmark::State& s) { BM_GpuFrame(s, db, characters); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(characters >= 250 ? 3 : 10);
    }
  }
  for (const std::string db : {"bandai-1", "bandai-1 coded", "250k", "250k coded"})
    benchmark::RegisterBenchmark(("BM_Upload/" + db).c_str(),
                                 [db](benchmark::State& s) { BM_Upload(s, db); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(5);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("vulkan_device", context().info().name);
  benchmark::AddCustomContext("copy_bandwidth_GBs", std::to_string(measuredBandwidth()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
