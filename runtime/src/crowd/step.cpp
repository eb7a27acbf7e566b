// A crowd's step and its phases: begin (decide who searches), search, end; whole or by ranges of
// characters.
#include "mmdb/crowd.h"

#include "crowd/spans.h"
#include "mmdb/playback.h"
#include "playback/playback_run.h"
#include "playback/rotation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

namespace mmdb {
namespace {

using detail::slice;

}  // namespace

// What search(), endStep() and their parts say when no step has begun, or its beginning is not
// finished.
Status Crowd::notBegun(const char* what) const noexcept {
  if (phase_ == Phase::Beginning)
    return Error::format(ErrorCode::InvalidArgument,
                         "%s: the step's beginning is not finished (call finishBeginStep)", what);
  return Error::format(ErrorCode::InvalidArgument, "%s: no step has begun (call beginStep)", what);
}

Status Crowd::checkRange(uint32_t first, uint32_t count, const char* what) const noexcept {
  if (first <= count_ && count <= count_ - first) return Status();
  return Error::format(ErrorCode::InvalidArgument,
                       "%s: characters [%u, %u + %u) are outside the crowd's %u", what, first,
                       first, count, count_);
}

// Claims a range's characters for this part of the step; a character another range already
// claimed is an overlap: what this one claimed is given back, and nothing else is touched.
Status Crowd::claimRange(uint32_t first, uint32_t count, const char* what) noexcept {
  for (uint32_t c = first; c < first + count; ++c) {
    if (claimed_[c].exchange(1, std::memory_order_acq_rel) != 0) {
      for (uint32_t u = first; u < c; ++u) claimed_[u].store(0, std::memory_order_release);
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: character %u of [%u, %u + %u) is in another range of this step; "
                           "the ranges must not overlap",
                           what, c, first, first, count);
    }
  }
  return Status();
}

// Whether every character was claimed by a `range_call` of this part of the step.
Status Crowd::checkAllClaimed(const char* what, const char* range_call) const noexcept {
  for (uint32_t c = 0; c < count_; ++c) {
    if (claimed_[c].load(std::memory_order_acquire) == 0)
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: character %u is in no range of this step (call %s for it first)",
                           what, c, range_call);
  }
  return Status();
}

Status Crowd::step(float dt) noexcept {
  if (Status s = beginStep(dt); !s) return s;
  // A failure past the beginning closes the step too: the next one may begin.
  Status s = search();
  if (s) s = endStep();
  if (!s) abandonStep();
  return s;
}

void Crowd::abandonStep() noexcept {
  for (uint32_t c = 0; c < count_; ++c) claimed_[c].store(0, std::memory_order_relaxed);
  phase_ = Phase::Idle;
}

Status Crowd::beginStep(float dt) noexcept {
  if (Status s = prepare(dt, "beginStep"); !s) return s;
  // One thread: the requests go straight to their places in character order.
  for (uint32_t c = 0; c < count_; ++c) {
    if (Status s = decide(c, searches_); !s) {
      abandonStep();  // closed: the next one may begin
      return s;
    }
    searches_ += decisions_[c].reason != SearchReason::None ? 1 : 0;
  }
  phase_ = Phase::Begun;
  return Status();
}

Status Crowd::prepareStep(float dt) noexcept { return prepare(dt, "prepareStep"); }

Status Crowd::prepare(float dt, const char* what) noexcept {
  if (db_ == nullptr)
    return Error::format(ErrorCode::InvalidArgument, "%s: the crowd is empty", what);
  if (phase_ != Phase::Idle)
    return Error::format(ErrorCode::InvalidArgument, "%s: the previous step has not ended", what);
  if (Status s = checkCrowdDt(what, dt); !s) return s;
  dt_ = dt;
  searches_ = 0;
  for (uint32_t c = 0; c <= count_; ++c) searched_[c].store(0, std::memory_order_relaxed);
  const SettleLimits limits =
      settleLimits(settings_.settle_velocity_change, settings_.settle_rotation_change, dt);
  settle_velocity_limit_ = limits.velocity_squared;
  settle_cos_limit_ = limits.cos_limit;
  phase_ = Phase::Beginning;
  return Status();
}

Status Crowd::beginStepRange(uint32_t first, uint32_t count) noexcept {
  if (phase_ != Phase::Beginning)
    return Error(ErrorCode::InvalidArgument,
                 "beginStepRange: no step is being begun (call prepareStep)");
  if (Status s = checkRange(first, count, "beginStepRange"); !s) return s;
  if (Status s = claimRange(first, count, "beginStepRange"); !s) return s;
  // Each character's request in its own slot (slot c); finishBeginStep() packs them.
  // A character that fails is marked (2); the others of the range are decided, and
  // finishBeginStep() closes the step naming the first that failed.
  Status failed;
  for (uint32_t c = first; c < first + count; ++c) {
    if (Status s = decide(c, c); !s) {
      claimed_[c].store(2, std::memory_order_release);
      if (failed) failed = s;
    }
  }
  return failed;
}

Status Crowd::finishBeginStep() noexcept {
  if (phase_ != Phase::Beginning)
    return Error(ErrorCode::InvalidArgument,
                 "finishBeginStep: no step is being begun (call prepareStep)");
  if (Status s = checkAllClaimed("finishBeginStep", "beginStepRange"); !s) return s;
  for (uint32_t c = 0; c < count_; ++c) {
    if (claimed_[c].load(std::memory_order_acquire) != 2) continue;
    abandonStep();
    return Error::format(ErrorCode::InvalidArgument,
                         "finishBeginStep: character %u failed in beginStepRange (its query is not "
                         "finite); the step is closed, nothing played",
                         c);
  }
  // The searching characters' requests, packed in character order: slot k <= c, so the move is
  // in place.
  size_t k = 0;
  for (uint32_t c = 0; c < count_; ++c) {
    claimed_[c].store(0, std::memory_order_relaxed);
    if (decisions_[c].reason == SearchReason::None) continue;
    if (k != c) {
      requests_[k] = requests_[c];
      results_[k] = results_[c];
    }
    searching_[k] = c;
    ++k;
  }
  searches_ = k;
  phase_ = Phase::Begun;
  return Status();
}

// The build query pass: the controller, the reason to search, the query and the request.
Status Crowd::decide(uint32_t c, size_t slot) noexcept {
  CrowdCharacter& ch = characters_[c];
  const StickInput& input = inputs_[c];
  const CharacterState before = ch.sim;
  updateCharacter(ch.sim, input, controller_, dt_);

  // The stick settles: it changed sharply in the last step and no longer does.
  bool settled = false;
  if (dt_ > 0.f) {
    const glm::vec3 velocity(input.desired_velocity.x, 0.f, input.desired_velocity.z);
    glm::vec3 facing(input.desired_facing.x, 0.f, input.desired_facing.z);
    if (facing.x * facing.x + facing.z * facing.z <= 1e-12f) facing = ch.input_facing;
    const glm::vec3 change = velocity - ch.input_velocity;
    const bool changing = change.x * change.x + change.z * change.z > settle_velocity_limit_ ||
                          turnedSharply(ch.input_facing, facing, settle_cos_limit_);
    settled = settings_.search_when_settled && ch.playing && ch.input_changing && !changing;
    ch.input_changing = ch.playing && changing;
    // settle_search_interval: at most once per interval (the reference's force-search timer,
    // counted down in the steps that do not force).
    if (settings_.settle_search_interval > 0.f) {
      if (settled && ch.settle_clock <= 0.f)
        ch.settle_clock = settings_.settle_search_interval;
      else if (ch.settle_clock > 0.f) {
        settled = false;
        ch.settle_clock -= dt_;
      } else {
        settled = false;
      }
    }
    ch.input_velocity = velocity;
    ch.input_facing = facing;
  }

  SearchReason reason = SearchReason::None;
  if (!ch.playing) {
    if (settings_.start_stagger_intervals == 0 || ch.search_timer <= 0)
      reason = SearchReason::Start;
  } else if (must_move_[ch.current_frame])
    reason = SearchReason::RangeEnd;
  else if (forced_[c] || settled)
    reason = SearchReason::Forced;
  else if (settings_.search_interval_seconds > 0.f ? ch.search_clock <= 0.f
                                                   : ch.search_timer <= 0)  // whole steps: no drift
    reason = SearchReason::Periodic;
  // The jump cooldown: a periodic or forced search waits for it to end; a forced one is kept.
  const bool held = (reason == SearchReason::Forced || reason == SearchReason::Periodic) &&
                    ch.since_switch < settings_.jump_cooldown;
  forced_[c] = held && reason == SearchReason::Forced ? 1 : 0;  // else one step only
  if (held) reason = SearchReason::None;
  decisions_[c].reason = reason;
  decisions_[c].switched = false;
  decisions_[c].continued = false;
  decisions_[c].held = held;
  if (reason == SearchReason::None) return Status();

  // The trajectory from the simulation root after this step's update, or (the reference's
  // order) before it.
  const CharacterState& predicted = settings_.predict_before_update ? before : ch.sim;
  float trajectory[kTrajectoryFloats];
  predictTrajectory(predicted, input, controller_, trajectory);
  expressInCharacterFrame(predicted, ch.achieved_position, ch.achieved_rotation,
                          settings_.max_drift, trajectory);
  const int32_t playing = ch.playing ? int32_t(ch.current_frame) : -1;
  const Span<float> query = slice(queries_, c, features_);
  if (Status s = buildQuery(*db_, playing, trajectory, query); !s) return s;
  // The inputs' limits keep the query finite; one that is not anyway (a placement or simulation
  // root carried beyond them by the step) fails the character here, not the crowd's search: its
  // controller is as before the step and it does not search.
  for (const float value : query) {
    if (std::isfinite(value)) continue;
    ch.sim = before;
    decisions_[c].reason = SearchReason::None;
    return Error::format(ErrorCode::InvalidArgument,
                         "step: character %u's query is not finite (its placement (%g, %g, %g) or "
                         "simulation root (%g, %g, %g) is beyond what the step holds: teleport it)",
                         c, double(ch.achieved_position.x), double(ch.achieved_position.y),
                         double(ch.achieved_position.z), double(ch.sim.position.x),
                         double(ch.sim.position.y), double(ch.sim.position.z));
  }
  SearchRequest& request = requests_[slot];
  request = SearchRequest{};
  request.query = query;
  // Start and range-end searches have no frame to beat: at a range end the search must move.
  const bool seeded = reason == SearchReason::Forced || reason == SearchReason::Periodic;
  const bool moves_on = reason == SearchReason::RangeEnd && settings_.range_end_moves_on;
  request.current_frame = seeded || moves_on ? playing : -1;
  request.seeded = seeded;
  request.transition_cost = settings_.transition_cost;
  request.neighbourhood_frames =
      settings_.neighbourhood_frames < 0 ? kDefaultNeighbourhood : settings_.neighbourhood_frames;
  request.range_end_margin = int32_t(range_end_frames_);
  request.filter = filters_[c];
  request.block_weights = blockWeights(c);
  results_[slot] = SearchResult{};
  searching_[slot] = c;
  return Status();
}

// The match pass. NoMatch is not an error of the step: that character's result has frame -1, as
// the GPU's kNoFrame, and it keeps what it plays.
Status Crowd::search() noexcept {
  if (phase_ != Phase::Begun) return notBegun("search");
  return searchRange(0, uint32_t(searches_), 0);
}

Status Crowd::searchRange(uint32_t first, uint32_t count, uint32_t worker) noexcept {
  if (phase_ != Phase::Begun) return notBegun("searchRange");
  if (first > searches_ || count > searches_ - first)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchRange: requests [%u, %u + %u) are outside this step's %zu", first,
                         first, count, searches_);
  if (worker >= settings_.step_workers)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchRange: worker %u of %u (CrowdSettings::step_workers)", worker,
                         settings_.step_workers);
  if (searched_[count_].load(std::memory_order_acquire) != 0)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchRange: requests [%u, %u + %u): the step's end has begun "
                         "(endStepRange); every search comes before it",
                         first, first, count);
  for (uint32_t k = first; k < first + count; ++k) {
    if (searched_[k].exchange(1, std::memory_order_acq_rel) != 0) {
      for (uint32_t u = first; u < k; ++u) searched_[u].store(0, std::memory_order_release);
      return Error::format(ErrorCode::InvalidArgument,
                           "searchRange: request %u of [%u, %u + %u) was searched by another "
                           "range of this step; the ranges must not overlap",
                           k, first, first, count);
    }
  }
  if (count == 0) return Status();
  const Span<const SearchRequest> requests(requests_.data() + first, count);
  const Span<SearchResult> results(results_.data() + first, count);
  if (settings_.bounds_pruning) {
    const size_t floats = batch_scratch_.size() / settings_.step_workers;
    const Status s = searchBatch(*db_, requests, results,
                                 Span<float>(batch_scratch_.data() + worker * floats, floats));
    if (!s && s.code() != ErrorCode::NoMatch) return s;
    return Status();
  }
  for (size_t k = 0; k < count; ++k) {
    const Result<SearchResult> found = searchExhaustive(*db_, requests[k]);
    if (found) {
      results[k] = found.value();
    } else if (found.error().code() == ErrorCode::NoMatch) {
      results[k] = SearchResult{};
    } else {
      return found.error();
    }
  }
  return Status();
}

Status Crowd::endStep() noexcept {
  if (phase_ != Phase::Begun) return notBegun("endStep");
  if (Status s = endStepRange(0, count_, 0); !s) return s;
  return finishStep();
}

Status Crowd::endStepRange(uint32_t first, uint32_t count, uint32_t worker) noexcept {
  if (phase_ != Phase::Begun) return notBegun("endStepRange");
  if (Status s = checkRange(first, count, "endStepRange"); !s) return s;
  if (worker >= settings_.step_workers)
    return Error::format(ErrorCode::InvalidArgument,
                         "endStepRange: worker %u of %u (CrowdSettings::step_workers)", worker,
                         settings_.step_workers);
  // This range's results, checked before anything moves.
  const uint32_t* begin = searching_.data();
  const uint32_t* end = begin + searches_;
  const size_t k_first = size_t(std::lower_bound(begin, end, first) - begin);
  size_t k_end = k_first;
  for (; k_end < searches_ && searching_[k_end] < first + count; ++k_end) {
    const int32_t frame = results_[k_end].frame;
    if (frame < -1 || frame >= int64_t(db_->frameCount()))
      return Error::format(ErrorCode::InvalidArgument,
                           "endStep: result %zu (character %u) has frame %d, outside [-1, %u)",
                           k_end, searching_[k_end], frame, db_->frameCount());
  }
  if (Status s = claimRange(first, count, "endStepRange"); !s) return s;
  searched_[count_].store(1, std::memory_order_release);  // no search after this
  // Four characters at a time: each one's switch, if any, and its sampled pose; their forward
  // kinematics side by side; each one's clock moved on; their foot locks side by side; then what
  // each one reports.
  size_t k = k_first;
  prefetchBlock(first, std::min(4u, count));
  for (uint32_t block = first; block < first + count; block += 4) {
    const uint32_t in_block = std::min(4u, first + count - block);
    if (block + 4 < first + count)
      prefetchBlock(block + 4, std::min(4u, first + count - block - 4));
    for (uint32_t c = block; c < block + in_block; ++c) {
      if (k < k_end && searching_[k] == c) {
        if (Status s = resolve(c, results_[k++], worker); !s) return s;
      }
    }
    if (Status s = poseBlock(block, in_block, worker); !s) return s;
    for (uint32_t c = block; c < block + in_block; ++c) advance(c);
    if (settings_.foot_locking) lockFeet(block, in_block);
    for (uint32_t c = block; c < block + in_block; ++c) {
      const CrowdCharacter& ch = characters_[c];
      decisions_[c].frame = ch.last_winner;
      decisions_[c].cost = ch.last_cost;
      decisions_[c].playing = ch.current_frame;
      showRange(c);
    }
  }
  return Status();
}

Status Crowd::finishStep() noexcept {
  if (phase_ != Phase::Begun) return notBegun("finishStep");
  if (Status s = checkAllClaimed("finishStep", "endStepRange"); !s) return s;
  for (uint32_t c = 0; c < count_; ++c) claimed_[c].store(0, std::memory_order_relaxed);
  phase_ = Phase::Idle;
  return Status();
}

}  // namespace mmdb
