#include "decision_log.h"

#include <mmdb/database.h>

namespace mmdb::sample {

const char* search_reason_name(SearchReason reason) {
  switch (reason) {
    case SearchReason::Start:
      return "start";
    case SearchReason::Periodic:
      return "0.1 s timer";
    case SearchReason::StickChanged:
      return "stick changed";
    case SearchReason::RangeEnd:
      return "end of matchable range";
  }
  return "?";
}

DecisionLog::DecisionLog(const mmdb::Database& db, std::FILE* out, bool print_decisions)
    : db_(db), out_(out), print_decisions_(print_decisions) {}

void DecisionLog::record(double time, int character, int64_t playing_frame, uint32_t chosen_frame,
                         float cost, double search_microseconds, SearchReason reason) {
  const Outcome outcome = playing_frame < 0                        ? Outcome::Start
                          : int64_t(chosen_frame) == playing_frame ? Outcome::Kept
                                                                   : Outcome::Jump;
  record(time, character, outcome, chosen_frame, cost, reason);
  add_search_time(search_microseconds, 1);
}

void DecisionLog::add_search_time(double microseconds, uint64_t searches) {
  timed_searches_ += searches;
  microseconds_sum_ += microseconds;
}

void DecisionLog::record(double time, int character, Outcome outcome, uint32_t chosen_frame,
                         float cost, SearchReason reason) {
  ++searches_;
  cost_sum_ += cost;
  if (outcome == Outcome::Kept) return;
  if (outcome == Outcome::Jump) ++jumps_;
  if (!print_decisions_) return;
  const int32_t clip_index = db_.clipOfFrame(chosen_frame);
  const mmdb::ClipInfo clip = clip_index >= 0 ? db_.clip(uint32_t(clip_index)) : mmdb::ClipInfo{};
  const uint32_t local_frame = chosen_frame - clip.first_frame;
  std::fprintf(out_,
               "t=%7.2f s  char %2d  %s global frame %6u (clip '%.*s' local frame %5u)  "
               "cost %8.3f  [%s]\n",
               time, character, outcome == Outcome::Start ? "start at" : "jump to", chosen_frame,
               int(clip.name.size()), clip.name.data(), local_frame, cost,
               search_reason_name(reason));
}

void DecisionLog::explain(int character, mmdb::Span<const mmdb::CandidateCost> candidates) {
  if (!print_decisions_) return;
  for (size_t k = 0; k < candidates.size(); ++k) {
    const mmdb::CandidateCost& c = candidates[k];
    const int32_t clip_index = db_.clipOfFrame(uint32_t(c.frame));
    const mmdb::ClipInfo clip = clip_index >= 0 ? db_.clip(uint32_t(clip_index)) : mmdb::ClipInfo{};
    std::fprintf(out_,
                 "    char %2d  #%zu %s frame %6d (clip '%.*s' local %5u)  cost %8.3f =", character,
                 k + 1, c.current ? "playing" : "       ", c.frame, int(clip.name.size()),
                 clip.name.data(), uint32_t(c.frame) - clip.first_frame, c.cost);
    for (uint32_t b = 0; b < c.block_count; ++b) {
      const mmdb::FeatureBlockInfo block = db_.featureBlock(b);
      std::fprintf(out_, "%s %.3f %.*s", b ? " +" : "", c.block_costs[b], int(block.name.size()),
                   block.name.data());
    }
    if (c.transition != 0.f) std::fprintf(out_, " + %.3f transition", c.transition);
    // The cost bias cooked into the frame's range (0 when the manifest gives none).
    std::fprintf(out_, " + %.3f bias\n", c.bias);
  }
}

void DecisionLog::print_summary(std::string_view method, double simulated_seconds,
                                int characters) const {
  const double jumps_per_second =
      simulated_seconds > 0.0 ? double(jumps_) / (simulated_seconds * characters) : 0.0;
  const double mean_cost = searches_ ? cost_sum_ / double(searches_) : 0.0;
  const double mean_us = timed_searches_ ? microseconds_sum_ / double(timed_searches_) : 0.0;
  std::fprintf(out_,
               "summary: %llu searches (%.*s), %.2f jumps/s per character, mean cost %.3f, "
               "mean search %.1f us\n",
               static_cast<unsigned long long>(searches_), int(method.size()), method.data(),
               jumps_per_second, mean_cost, mean_us);
}

}  // namespace mmdb::sample
