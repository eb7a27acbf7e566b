#include "core/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mmdb::cook {
namespace {

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long a thread spins for the next piece of work before it sleeps, and how long the caller
// spins for its helpers to finish before it sleeps. Long enough to span the serial steps between
// the trials of a tightening round (a few to a hundred us), short enough that a pool left idle
// costs nothing measurable.
constexpr auto kSpin = std::chrono::microseconds(200);

// Spins until ready() or kSpin has passed; whether ready().
template <typename Ready>
bool spinUntil(Ready ready) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() - start > kSpin) return ready();
  }
}

class WorkerPool {
 public:
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  bool run(int helpers, void (*body)(void*), void* arg) {
    if (helpers <= 0) {
      body(arg);
      return true;
    }
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    try {
      grow(helpers);
    } catch (...) {  // no thread could be started: the caller starts its own, or fails there
      busy_.store(false, std::memory_order_release);
      return false;
    }
    body_ = body;
    arg_ = arg;
    running_.store(helpers, std::memory_order_relaxed);
    wanted_.store(helpers, std::memory_order_release);
    bool sleepers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
      sleepers = sleeping_ > 0;
    }
    if (sleepers) wake_.notify_all();
    body(arg);
    // Helpers that have not joined yet never will: the work is done or taken.
    const int unjoined = wanted_.exchange(0, std::memory_order_acq_rel);
    if (running_.fetch_sub(unjoined, std::memory_order_acq_rel) != unjoined &&
        !spinUntil([&] { return running_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return running_.load(std::memory_order_acquire) == 0; });
    }
    busy_.store(false, std::memory_order_release);
    return true;
  }

 private:
  // Started before the body is posted, each thread waits for the next generation: this body.
  void grow(int helpers) {
    while (int(threads_.size()) < helpers) {
      const uint64_t now = generation_.load(std::memory_order_acquire);
      threads_.emplace_back([this, now] { serve(now); });
      thread_count_.store(int(threads_.size()), std::memory_order_release);
    }
  }

  void serve(uint64_t seen) {
    for (;;) {
      // Spinning only where each pool thread can have a processor of its own beside the caller.
      const bool spin = thread_count_.load(std::memory_order_acquire) < cores_;
      if (!spin ||
          !spinUntil([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleeping_;
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        --sleeping_;
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_acquire)) return;
      int wanted = wanted_.load(std::memory_order_acquire);
      while (wanted > 0 &&
             !wanted_.compare_exchange_weak(wanted, wanted - 1, std::memory_order_acq_rel)) {
      }
      if (wanted <= 0) continue;  // the body is done, or has all the helpers it asked for
      body_(arg_);
      if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);  // the caller may be about to sleep
        done_.notify_one();
      }
    }
  }

  std::atomic<bool> busy_{false};     // a caller holds the pool
  std::vector<std::thread> threads_;  // the caller's alone
  std::atomic<int> thread_count_{0};
  const int cores_ = int(std::thread::hardware_concurrency());
  // The body being run; written by the caller before `wanted_`, read by a helper after it took
  // one of `wanted_`.
  void (*body_)(void*) = nullptr;
  void* arg_ = nullptr;
  std::atomic<int> wanted_{0};   // helpers the body may still take
  std::atomic<int> running_{0};  // helpers asked for and not yet returned (or never to join)
  std::atomic<uint64_t> generation_{0};  // one more for each body, and for the stop
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  int sleeping_ = 0;  // pool threads waiting on wake_; under mutex_
};

}  // namespace

bool runOnWorkerPool(int helpers, void (*body)(void*), void* arg) {
  static WorkerPool pool;
  return pool.run(helpers, body, arg);
}

}  // namespace mmdb::cook
