// The CPU crowd's step: 1,000 characters on bandai-1 mirrored at 60 Hz (a legged synthetic
// database where the corpus is absent), the sample's built-in stick script, foot locking on.
// One thread (Crowd::step) against two (the searches split in halves with searchRange, the end
// of the step with endStepRange, on a worker thread kept from step to step; with split_begin the
// controllers and queries too, with beginStepRange), in the same process; and the first step, whose
// searches are all Start searches (or a sixth or a twelfth of them, staggered over one or two
// intervals), against a steady one; and one thread with every character's offsets added at every
// step (inertialization_threshold 0) against the default, which stops adding them once they have
// decayed; and one thread with one 0.1 s half-life for the offsets and their rates (reference()'s
// decay) against the default split decay (two springs a joint, the rotation's composed); and one
// thread without the transition speed limit against the default. Counters: milliseconds per step
// for each part (begin, search, end), the step's mean (step_ms, without the sticks' setting that
// Time counts) and its p99 over the run, and the searches per step. BM_PosingJobs times two of
// the end of the step's jobs alone.
#include "real_database.h"
#include "synthetic_database.h"

#include <mmdb/crowd.h>
#include <mmdb/playback.h>
#include <mmdb/search.h>
#include <mmdb/stick_script.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr float kDt = 1.f / 60;
constexpr uint32_t kCharacters = 1000;
constexpr int kWarmSteps = 120;  // every character has started and searched a few times

struct Data {
  mmdb::test::AlignedBytes bytes;  // the synthetic database's, when used
  mmdb::Database synthetic;
  const mmdb::Database* db = nullptr;
  const mmdb::test::AlignedBytes* file = nullptr;  // db's bytes
  mmdb::Database floats_only;  // db again, opened without its half-precision features
  std::string name;
};

const Data& data() {
  static std::unique_ptr<Data> d;
  if (d) return *d;
  d = std::make_unique<Data>();
  std::string why;
  if (const mmdb::test::RealDatabase* real = mmdb::test::bandaiDatabaseAt(60, true, &why)) {
    d->db = &real->db;
    d->file = &real->bytes;
    d->name = "bandai-1 mirrored";
  } else {
    std::fprintf(stderr, "bench_crowd: %s; a synthetic database instead\n", why.c_str());
    mmdb::test::SyntheticSpec spec;
    spec.clips = 40;
    spec.frames_per_clip = 600;
    spec.joints = 24;
    spec.legs = true;
    d->bytes = mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(spec));
    auto opened = mmdb::Database::fromMemory(d->bytes.data(), d->bytes.size());
    if (opened) d->synthetic = std::move(opened.value());
    d->db = &d->synthetic;
    d->file = &d->bytes;
    d->name = "synthetic, 24 joints";
  }
  mmdb::OpenOptions floats_only;
  floats_only.half_features = false;
  auto opened = mmdb::Database::fromMemory(d->file->data(), d->file->size(), floats_only);
  if (opened) d->floats_only = std::move(opened.value());
  return *d;
}

// A crowd of kCharacters on the benchmark's database, or none with the benchmark skipped.
std::optional<mmdb::Crowd> newCrowd(benchmark::State& state, const mmdb::CrowdSettings& settings) {
  auto created = mmdb::Crowd::create(*data().db, kCharacters, settings);
  if (!created) {
    state.SkipWithError(created.error().message());
    return std::nullopt;
  }
  return std::move(created.value());
}

// The sample's sticks: the script at each character's offset, at speeds the database follows.
void setSticks(mmdb::Crowd& crowd, const mmdb::StickScript& script, int step) {
  static const mmdb::LocomotionSpeeds speeds = mmdb::speedsForDatabase(crowd.database());
  for (uint32_t i = 0; i < crowd.characterCount(); ++i)
    (void)crowd.setInput(
        i, mmdb::stickInput(script.at(step * kDt + script.characterOffset(i)), speeds));
}

// Threads kept for the whole run, as a job system keeps its workers: run(task) calls task(t)
// for t = 0 (on the calling thread) to threads - 1 and returns when every call has.
class Workers {
 public:
  explicit Workers(uint32_t threads) {
    for (uint32_t t = 1; t < threads; ++t) pool_.emplace_back([this, t] { work(t); });
  }
  ~Workers() {
    stop_.store(true, std::memory_order_release);
    for (std::thread& th : pool_) th.join();
  }
  template <class Task>
  void run(const Task& task) {
    task_ = [&task](uint32_t t) { task(t); };
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    task(0);
    while (done_.load(std::memory_order_acquire) < pool_.size()) std::this_thread::yield();
  }

 private:
  void work(uint32_t t) {
    uint64_t seen = 0;
    while (!stop_.load(std::memory_order_acquire)) {
      const uint64_t generation = generation_.load(std::memory_order_acquire);
      if (generation == seen) {
        std::this_thread::yield();
        continue;
      }
      seen = generation;
      task_(t);
      done_.fetch_add(1, std::memory_order_acq_rel);
    }
  }
  std::vector<std::thread> pool_;
  std::function<void(uint32_t)> task_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<size_t> done_{0};
  std::atomic<bool> stop_{false};
};

// The step over `threads` threads: the characters' controllers and queries in equal ranges
// (with split_begin; else beginStep() on this thread), the requests in equal parts (searchRange,
// each worker with its scratch), then the characters in equal ranges, on workers kept from step
// to step.
struct SplitStep {
  SplitStep(uint32_t threads, bool split_begin)
      : threads(threads), split_begin(split_begin), workers(threads) {}
  bool begin(mmdb::Crowd& crowd) {
    if (threads == 1 || !split_begin) return crowd.beginStep(kDt).ok();
    if (!crowd.prepareStep(kDt)) return false;
    const uint32_t n = crowd.characterCount();
    std::atomic<bool> ok{true};
    workers.run([&](uint32_t t) {
      const uint32_t first = n * t / threads, last = n * (t + 1) / threads;
      if (!crowd.beginStepRange(first, last - first)) ok = false;
    });
    return ok && crowd.finishBeginStep();
  }
  bool run(mmdb::Crowd& crowd, double* begin_ms, double* search_ms, double* end_ms) {
    const auto t0 = Clock::now();
    if (!begin(crowd)) return false;
    const auto t1 = Clock::now();
    if (threads == 1) {  // the crowd's own search and end of step, on this thread
      const bool searched = crowd.search().ok();
      const auto t2 = Clock::now();
      const bool ended = searched && crowd.endStep().ok();
      *begin_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
      *search_ms += std::chrono::duration<double, std::milli>(t2 - t1).count();
      *end_ms += std::chrono::duration<double, std::milli>(Clock::now() - t2).count();
      return ended;
    }
    const uint32_t searches = uint32_t(crowd.requests().size());
    std::atomic<bool> ok{true};
    workers.run([&](uint32_t t) {
      const uint32_t first = searches * t / threads, last = searches * (t + 1) / threads;
      if (!crowd.searchRange(first, last - first, t)) ok = false;
    });
    const auto t2 = Clock::now();
    const uint32_t n = crowd.characterCount();
    workers.run([&](uint32_t t) {
      const uint32_t first = n * t / threads, last = n * (t + 1) / threads;
      if (!crowd.endStepRange(first, last - first, t)) ok = false;
    });
    const bool finished = ok && crowd.finishStep();
    const auto t3 = Clock::now();
    *begin_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
    *search_ms += std::chrono::duration<double, std::milli>(t2 - t1).count();
    *end_ms += std::chrono::duration<double, std::milli>(t3 - t2).count();
    return finished;
  }
  uint32_t threads;
  bool split_begin;
  Workers workers;
};

// Steady steps of 1,000 characters on `threads` threads (1: Crowd's own search and endStep).
void BM_CrowdStep(benchmark::State& state) {
  const Data& d = data();
  const uint32_t threads = uint32_t(state.range(0));
  mmdb::CrowdSettings settings;
  settings.step_workers = threads;
  if (state.range(1) == 0) settings.inertialization_threshold = 0;  // every offset added, always
  if (state.range(2) == 0)  // one spring a joint, as the reference
    settings.inertialization_halflife = settings.inertialization_rate_halflife;
  if (state.range(3) == 0) settings.transition_speed_limit = 0;  // transitions never held back
  std::optional<mmdb::Crowd> created = newCrowd(state, settings);
  if (!created) return;
  mmdb::Crowd& crowd = *created;
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  SplitStep split(threads, state.range(4) != 0);
  int step = 0;
  double begin_ms = 0, search_ms = 0, end_ms = 0;
  for (; step < kWarmSteps; ++step) {
    setSticks(crowd, script, step);
    split.run(crowd, &begin_ms, &search_ms, &end_ms);
  }
  begin_ms = search_ms = end_ms = 0;
  std::vector<double> steps;
  double searches = 0;
  for (auto _ : state) {
    setSticks(crowd, script, step++);
    const auto start = Clock::now();
    if (!split.run(crowd, &begin_ms, &search_ms, &end_ms)) {
      state.SkipWithError("the step failed");
      return;
    }
    steps.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    searches += double(crowd.results().size());
  }
  std::sort(steps.begin(), steps.end());
  const double n = double(steps.size());
  state.counters["begin_ms"] = begin_ms / n;
  state.counters["search_ms"] = search_ms / n;
  state.counters["end_ms"] = end_ms / n;
  double sum = 0;
  for (const double ms : steps) sum += ms;
  state.counters["step_ms"] = sum / n;  // the step alone (Time adds each step's setSticks)
  state.counters["p99_ms"] = steps[size_t(0.99 * (n - 1))];
  state.counters["searches"] = searches / n;  // per step
  state.SetLabel(d.name);
}
BENCHMARK(BM_CrowdStep)
    ->ArgNames({"threads", "skip_decayed", "split_decay", "speed_limit", "split_begin"})
    ->Args({1, 0, 1, 1, 0})
    ->Args({1, 1, 1, 1, 0})
    ->Args({1, 1, 1, 0, 0})
    ->Args({1, 1, 0, 1, 0})
    ->Args({2, 1, 1, 1, 0})
    ->Args({2, 1, 1, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0)
    ->UseRealTime();

// One thread's steady step with the database's half-precision features (the default) against
// the same database opened without them, two crowds stepped in turn (in alternating order) on
// the same sticks. Counters: each one's search and step in ms, and the ratios (half / float).
// Their winners must be the same: the benchmark fails if any differs.
void BM_CrowdHalfFeatures(benchmark::State& state) {
  const Data& d = data();
  if (d.db->halfFeatures().empty()) {
    state.SkipWithError("this CPU or build has no half-precision features (AVX2, FMA and F16C)");
    return;
  }
  mmdb::CrowdSettings settings;
  std::optional<mmdb::Crowd> half = newCrowd(state, settings);
  auto created = mmdb::Crowd::create(d.floats_only, kCharacters, settings);
  if (!half || !created) {
    if (!created) state.SkipWithError(created.error().message());
    return;
  }
  mmdb::Crowd& floats = created.value();
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  SplitStep with(1, false), without(1, false);
  double h[3] = {}, f[3] = {};  // begin, search, end
  bool same = true;
  auto stepBoth = [&](int step) {
    setSticks(*half, script, step);
    setSticks(floats, script, step);
    const bool half_first = step % 2 == 0;
    bool ok = true;
    for (int k = 0; k < 2; ++k) {
      if ((k == 0) == half_first)
        ok = with.run(*half, h, h + 1, h + 2) && ok;
      else
        ok = without.run(floats, f, f + 1, f + 2) && ok;
    }
    for (size_t i = 0; ok && i < half->results().size(); ++i)
      same = same && half->results()[i].frame == floats.results()[i].frame &&
             half->results()[i].cost == floats.results()[i].cost;
    return ok;
  };
  int step = 0;
  for (; step < kWarmSteps; ++step) stepBoth(step);
  for (double* v : {h, f}) v[0] = v[1] = v[2] = 0;
  double n = 0;
  for (auto _ : state) {
    if (!stepBoth(step++)) {
      state.SkipWithError("a step failed");
      return;
    }
    n += 1;
  }
  if (!same) {
    state.SkipWithError("the half-precision features changed a winner");
    return;
  }
  state.counters["search_ms"] = h[1] / n;
  state.counters["search_float_ms"] = f[1] / n;
  state.counters["search_ratio"] = h[1] / f[1];
  state.counters["step_ms"] = (h[0] + h[1] + h[2]) / n;
  state.counters["step_float_ms"] = (f[0] + f[1] + f[2]) / n;
  state.counters["step_ratio"] = (h[0] + h[1] + h[2]) / (f[0] + f[1] + f[2]);
  state.SetLabel(d.name);
}
BENCHMARK(BM_CrowdHalfFeatures)->Unit(benchmark::kMillisecond)->MinTime(6.0)->UseRealTime();

// The first step of a new crowd, one thread: every character's Start search at once, or spread
// over the first one or two intervals (start_stagger_intervals). Counters: of the 11 steps after
// it (untimed by the benchmark), in which staggered starts go on, the mean and the slowest step's
// mean over the runs.
void BM_CrowdFirstStep(benchmark::State& state) {
  constexpr int kNext = 11;
  const Data& d = data();
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  mmdb::CrowdSettings settings;
  settings.start_stagger_intervals = uint32_t(state.range(0));
  double next_ms[kNext + 1] = {};
  int runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::optional<mmdb::Crowd> created = newCrowd(state, settings);
    if (!created) return;
    mmdb::Crowd& crowd = *created;
    setSticks(crowd, script, 0);
    state.ResumeTiming();
    if (!crowd.step(kDt)) state.SkipWithError("the step failed");
    state.PauseTiming();
    for (int step = 1; step <= kNext; ++step) {
      setSticks(crowd, script, step);
      const auto start = Clock::now();
      if (!crowd.step(kDt)) state.SkipWithError("the step failed");
      next_ms[step] += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    }
    ++runs;
    state.ResumeTiming();
  }
  double sum = 0, slowest = 0;
  for (int step = 1; step <= kNext; ++step) {
    sum += next_ms[step];
    slowest = std::max(slowest, next_ms[step]);
  }
  state.counters["next_mean_ms"] = sum / kNext / std::max(runs, 1);
  state.counters["next_slowest_ms"] = slowest / std::max(runs, 1);
  state.SetLabel(d.name);
}
BENCHMARK(BM_CrowdFirstStep)
    ->ArgName("start_stagger_intervals")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();

// Two of the end of the step's jobs alone, on the poses and offsets of a crowd of 1,000 after
// its warm-up: job 0 inertializes every character's local pose with the crowd's offsets at its
// time since the switch (the default split decay), job 1 is the forward kinematics of every
// character. Through the public jobs (their checks included), so a build before and after a
// change to either compares.
void BM_PosingJobs(benchmark::State& state) {
  const Data& d = data();
  const mmdb::CrowdSettings settings;
  std::optional<mmdb::Crowd> created = newCrowd(state, settings);
  if (!created) return;
  mmdb::Crowd& crowd = *created;
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  for (int step = 0; step < kWarmSteps; ++step) {
    setSticks(crowd, script, step);
    (void)crowd.step(kDt);
  }
  const size_t joints = crowd.database().jointCount();
  std::vector<glm::quat> rotations(crowd.localRotations().begin(), crowd.localRotations().end());
  std::vector<glm::vec3> translations(crowd.localTranslations().begin(),
                                      crowd.localTranslations().end());
  std::vector<glm::quat> model_rotations(rotations.size());
  std::vector<glm::vec3> model_translations(translations.size());
  const auto part = [&](auto span, uint32_t c) { return span.subspan(c * joints, joints); };
  for (auto _ : state) {
    for (uint32_t c = 0; c < kCharacters; ++c) {
      if (state.range(0) == 0) {
        mmdb::InertializeJob job;
        job.halflife = settings.inertialization_halflife;
        job.rate_halflife = settings.inertialization_rate_halflife;
        job.time_since_switch = crowd.characters()[c].transition_time;
        job.rotations = part(crowd.localRotations(), c);
        job.translations = part(crowd.localTranslations(), c);
        job.offset_rotations = part(crowd.offsetRotations(), c);
        job.offset_angular_velocities = part(crowd.offsetAngularVelocities(), c);
        job.offset_translations = part(crowd.offsetTranslations(), c);
        job.offset_velocities = part(crowd.offsetVelocities(), c);
        job.out_rotations = part(mmdb::Span<glm::quat>(rotations), c);
        job.out_translations = part(mmdb::Span<glm::vec3>(translations), c);
        if (!job.Run()) state.SkipWithError("InertializeJob failed");
      } else {
        mmdb::ForwardKinematicsJob job;
        job.parents = crowd.database().parents();
        job.local_rotations = part(crowd.localRotations(), c);
        job.local_translations = part(crowd.localTranslations(), c);
        job.model_rotations = part(mmdb::Span<glm::quat>(model_rotations), c);
        job.model_translations = part(mmdb::Span<glm::vec3>(model_translations), c);
        if (!job.Run()) state.SkipWithError("ForwardKinematicsJob failed");
      }
    }
    benchmark::DoNotOptimize(rotations.data());
    benchmark::DoNotOptimize(model_rotations.data());
  }
  state.SetLabel(d.name);
}
BENCHMARK(BM_PosingJobs)
    ->ArgName("job")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
