// The cooker's one way to spread independent work over threads.
#pragma once

#include "core/worker_pool.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

namespace mmdb::cook {

// [first, last) of part `i` of `n` nearly equal parts of [0, count): the items one work(i) of a
// parallelFor over n parts takes.
inline std::pair<size_t, size_t> partOf(size_t count, int n, int i) {
  return {count * size_t(i) / size_t(n), count * size_t(i + 1) / size_t(n)};
}

// Runs work(i) for i in [first, count) on `jobs` threads (at least one): the caller's and the
// worker pool's (worker_pool.h). Work is taken in index order, and after a failure no new index is
// started, so every index below the first failing one has run: the error rethrown (the lowest
// failing index) is the same for any thread count.
template <typename Work>
void parallelFor(int first, int count, int jobs, Work work) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(std::max(count, 0)));
  std::atomic<int> next{first};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    for (int i; !failed && (i = next.fetch_add(1)) < count;) {
      try {
        work(i);
      } catch (...) {
        errors[static_cast<size_t>(i)] = std::current_exception();
        failed = true;
      }
    }
  };
  const int threads = std::max(1, std::min(jobs, count - first));
  using Worker = decltype(worker);
  if (threads == 1) {
    worker();
  } else if (!runOnWorkerPool(
                 threads - 1, [](void* w) { (*static_cast<Worker*>(w))(); }, &worker)) {
    // The pool is taken (by the parallelFor whose work this runs in, or on another thread):
    // threads of its own.
    std::vector<std::thread> helpers;
    for (int t = 1; t < threads; ++t) helpers.emplace_back(worker);
    worker();
    for (auto& t : helpers) t.join();
  }
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace mmdb::cook
