// The sample's output: one line per decision (a search that jumps to another frame), with
// --explain the best candidates of every search, and a summary of all searches. The CPU and GPU
// paths count decisions the same way, through this.
#pragma once

#include <mmdb/search.h>
#include <mmdb/span.h>

#include <cstdint>
#include <cstdio>
#include <string_view>

namespace mmdb::sample {

// Why a search ran.
// Start: the first search of a character. RangeEnd: the playing frame is the last one the
// search may return (or the clip's last), so the character must move on.
enum class SearchReason { Start, Periodic, StickChanged, RangeEnd };
const char* search_reason_name(SearchReason reason);

class DecisionLog {
 public:
  // print_decisions = false counts without printing (--quiet-decisions).
  DecisionLog(const mmdb::Database& db, std::FILE* out, bool print_decisions);

  // One search on the CPU: the global frame playing when it ran (-1 before the first), the
  // global frame it chose, its cost and how long it took.
  void record(double time, int character, int64_t playing_frame, uint32_t chosen_frame, float cost,
              double search_microseconds, SearchReason reason);
  // One search whose outcome is already known (the GPU reports it): kept the playing frame,
  // started playing (the first search) or jumped to `chosen_frame` (global). A kept frame
  // counts but prints nothing.
  enum class Outcome { Kept, Start, Jump };
  void record(double time, int character, Outcome outcome, uint32_t chosen_frame, float cost,
              SearchReason reason);
  // The candidates explainCandidates() ranked for one search, best first, one line each with
  // every feature block's part of the cost (--explain). Printed under the decision it explains.
  void explain(int character, mmdb::Span<const mmdb::CandidateCost> candidates);
  // Search time measured for a batch of searches (a GPU match pass): adds to the mean.
  void add_search_time(double microseconds, uint64_t searches);

  // "summary: N searches (method), X jumps/s per character, mean cost C, mean search T us",
  // jumps counted over `simulated_seconds` for each of `characters`.
  void print_summary(std::string_view method, double simulated_seconds, int characters) const;

  uint64_t searches() const { return searches_; }
  uint64_t jumps() const { return jumps_; }

 private:
  const mmdb::Database& db_;
  std::FILE* out_;
  bool print_decisions_;
  uint64_t searches_ = 0;
  uint64_t jumps_ = 0;
  uint64_t timed_searches_ = 0;
  double cost_sum_ = 0.0;
  double microseconds_sum_ = 0.0;
};

}  // namespace mmdb::sample
