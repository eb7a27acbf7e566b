// parallelFor and the worker pool under it: every index runs once whoever runs it, the error
// rethrown is the lowest failing index's, and a parallelFor inside another one's work, or on two
// threads at once, still runs all its work (on threads of its own).
#include "core/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using mmdb::cook::parallelFor;

// Per index, how many times it ran.
struct Runs {
  explicit Runs(int count) : times(size_t(count)) {}
  std::vector<std::atomic<int>> times;
};

TEST(ParallelFor, EveryIndexRunsOnceForAnyJobCount) {
  for (int jobs : {1, 2, 3, 8}) {
    // Back to back, as a cook's trial codings come: the pool's threads go from one to the next.
    for (int call = 0; call < 200; ++call) {
      const int first = call % 3, count = call % 50;
      Runs runs(std::max(count, 1));
      parallelFor(first, count, jobs, [&](int i) { runs.times[size_t(i)]++; });
      for (int i = 0; i < count; ++i)
        ASSERT_EQ(runs.times[size_t(i)].load(), i >= first ? 1 : 0)
            << "index " << i << " of [" << first << ", " << count << "), " << jobs << " jobs";
    }
  }
}

TEST(ParallelFor, WorkIsSharedBetweenThreads) {
  // Each index waits (up to 10 s) until a second thread has taken one: with two jobs, both must
  // run work.
  std::atomic<int> started{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  parallelFor(0, 2, 2, [&](int) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    started++;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
  });
  EXPECT_EQ(threads.size(), 2u);
}

TEST(ParallelFor, TheLowestFailingIndexIsRethrown) {
  for (int jobs : {1, 2, 4}) {
    Runs runs(100);
    try {
      parallelFor(0, 100, jobs, [&](int i) {
        runs.times[size_t(i)]++;
        if (i == 37 || i == 60) throw std::runtime_error("index " + std::to_string(i));
      });
      ADD_FAILURE() << "no error, " << jobs << " jobs";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "index 37") << jobs << " jobs";
    }
    for (int i = 0; i < 37; ++i) EXPECT_EQ(runs.times[size_t(i)].load(), 1) << "index " << i;
    // The pool is free again: the next parallelFor runs all of its work.
    Runs after(50);
    parallelFor(0, 50, jobs, [&](int i) { after.times[size_t(i)]++; });
    for (int i = 0; i < 50; ++i) ASSERT_EQ(after.times[size_t(i)].load(), 1);
  }
}

TEST(ParallelFor, NestedCallsRunAllTheirWork) {
  constexpr int kOuter = 6, kInner = 40;
  std::vector<std::atomic<int>> runs(kOuter * kInner);
  parallelFor(0, kOuter, 3, [&](int o) {
    parallelFor(0, kInner, 2, [&](int i) { runs[size_t(o * kInner + i)]++; });
  });
  for (size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k].load(), 1) << "item " << k;
}

TEST(ParallelFor, CallsFromTwoThreadsAtOnceRunAllTheirWork) {
  constexpr int kCalls = 100, kCount = 64;
  std::vector<std::atomic<int>> a(kCalls * kCount), b(kCalls * kCount);
  auto calls = [](std::vector<std::atomic<int>>& runs) {
    for (int c = 0; c < kCalls; ++c)
      parallelFor(0, kCount, 2, [&](int i) { runs[size_t(c * kCount + i)]++; });
  };
  std::thread other([&] { calls(b); });
  calls(a);
  other.join();
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].load(), 1) << "item " << k;
    ASSERT_EQ(b[k].load(), 1) << "item " << k;
  }
}

}  // namespace
