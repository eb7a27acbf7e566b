// Search: pruned == exhaustive on random queries, and the rules of the reference (self match,
// strictly cheaper, neighbourhood, tags, transition cost, ties) hold.
#include "synthetic_database.h"

#include <mmdb/database.h>
#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using mmdb::Database;
using mmdb::SearchRequest;
using mmdb::SearchResult;

class Search : public ::testing::Test {
 protected:
  void SetUp() override {
    mmdb::test::SyntheticSpec spec;
    spec.clips = 8;
    spec.frames_per_clip = 500;
    cooked_ = mmdb::test::makeSyntheticDatabase(spec);
    bytes_ = mmdb::test::serializeAligned(cooked_);
    auto r = Database::fromMemory(bytes_.data(), bytes_.size());
    ASSERT_TRUE(r.ok()) << r.error().message();
    db_ = std::move(r.value());
  }

  std::vector<float> row(uint32_t frame) const {
    auto r = db_.featureRow(frame);
    return std::vector<float>(r.begin(), r.end());
  }

  // NoMatch (no current frame, no candidate passes the filter) reads as frame -1 here.
  SearchResult exhaustive(const SearchRequest& q) const {
    auto r = mmdb::searchExhaustive(db_, q);
    EXPECT_TRUE(r.ok() || r.error().code() == mmdb::ErrorCode::NoMatch) << r.error().message();
    return r.ok() ? r.value() : SearchResult{};
  }
  // NoMatch (no current frame, no candidate passes the filter) reads as frame -1 here.
  SearchResult pruned(const SearchRequest& q) const {
    auto r = mmdb::searchPruned(db_, q);
    EXPECT_TRUE(r.ok() || r.error().code() == mmdb::ErrorCode::NoMatch) << r.error().message();
    return r.ok() ? r.value() : SearchResult{};
  }

  mmdb::cook::CookedDatabase cooked_;
  mmdb::test::AlignedBytes bytes_;
  Database db_;
};

TEST_F(Search, PrunedAgreesWithExhaustiveOn10000RandomQueries) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> noise(-0.3f, 0.3f);
  const uint64_t masks[] = {0, 1, 2, 4, 3};
  uint64_t pruned_rows = 0, exhaustive_rows = 0;
  for (int i = 0; i < 10000; ++i) {
    // Near-database queries (what a game asks) and wilder ones.
    std::vector<float> q = row(rng() % db_.frameCount());
    const float spread = (i % 4 == 0) ? 3.f : 1.f;
    for (float& v : q) v += spread * noise(rng);
    SearchRequest request;
    request.query = q;
    request.current_frame = (i % 3 == 0) ? -1 : int32_t(rng() % db_.frameCount());
    request.transition_cost = (i % 5 == 0) ? 0.5f * float(rng() % 4) : 0.f;
    request.neighbourhood_frames = (i % 7 == 0) ? int32_t(rng() % 40) : mmdb::kDefaultNeighbourhood;
    request.range_end_margin = (i % 6 == 0) ? int32_t(rng() % 600) : 0;  // up to past a range
    request.filter.required = masks[rng() % 5];
    request.filter.excluded = (i % 11 == 0) ? 4 : 0;
    const SearchResult a = exhaustive(request), b = pruned(request);
    ASSERT_EQ(a.frame, b.frame) << "query " << i;
    ASSERT_EQ(a.cost, b.cost) << "query " << i;  // bit-identical, not just close
    ASSERT_EQ(a.changed, b.changed);
    exhaustive_rows += a.evaluated;
    pruned_rows += b.evaluated;
  }
  // The bounds must actually prune on smooth data.
  EXPECT_LT(pruned_rows * 3, exhaustive_rows);
}

TEST_F(Search, ARowFindsItselfAtCostZero) {
  for (uint32_t f : {0u, 17u, 250u, 1001u, 3479u}) {
    const std::vector<float> q = row(f);
    SearchRequest request;
    request.query = q;
    const SearchResult a = exhaustive(request), b = pruned(request);
    EXPECT_EQ(a.frame, int32_t(f));
    EXPECT_EQ(b.frame, int32_t(f));
    EXPECT_EQ(a.cost, 0.f);
    EXPECT_TRUE(a.changed);
  }
}

TEST_F(Search, ItStaysOnTheCurrentFrameUnlessSomethingIsStrictlyCheaper) {
  // Query = the current row exactly: its cost is 0, nothing can be cheaper.
  const std::vector<float> q = row(300);
  SearchRequest request;
  request.query = q;
  request.current_frame = 300;
  SearchResult r = pruned(request);
  EXPECT_EQ(r.frame, 300);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.cost, 0.f);
  // An exact duplicate of the playing row elsewhere ties: the playing frame is kept.
  mmdb::cook::CookedDatabase copy = cooked_;
  std::copy(copy.features.begin() + 300 * 28, copy.features.begin() + 301 * 28,
            copy.features.begin() + 1200 * 28);
  mmdb::test::computeBounds(copy);
  mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(copy);
  auto db = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(mmdb::searchPruned(db.value(), request).value().frame, 300);
  EXPECT_EQ(mmdb::searchExhaustive(db.value(), request).value().frame, 300);
  // Without a playing frame the duplicates tie and the lowest global frame wins.
  request.current_frame = -1;
  EXPECT_EQ(mmdb::searchPruned(db.value(), request).value().frame, 300);
  EXPECT_EQ(mmdb::searchExhaustive(db.value(), request).value().frame, 300);
}

TEST_F(Search, EqualCostsGoToTheLowestGlobalFrame) {
  mmdb::cook::CookedDatabase copy = cooked_;
  // Frames 2100 and 1500 hold the same row; the query is that row plus an offset so that
  // neither is the current frame and both cost the same.
  std::copy(copy.features.begin() + 2100 * 28, copy.features.begin() + 2101 * 28,
            copy.features.begin() + 1500 * 28);
  mmdb::test::computeBounds(copy);
  mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(copy);
  auto db = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(db.ok());
  std::vector<float> q(db.value().featureRow(2100).begin(), db.value().featureRow(2100).end());
  SearchRequest request;
  request.query = q;
  EXPECT_EQ(mmdb::searchExhaustive(db.value(), request).value().frame, 1500);
  EXPECT_EQ(mmdb::searchPruned(db.value(), request).value().frame, 1500);
}

TEST_F(Search, FramesNearTheCurrentOneAreSkipped) {
  const std::vector<float> q = row(1000);
  SearchRequest request;
  request.query = q;
  // Playing 1010: 1000 is 10 frames away, inside the default 20-frame neighbourhood.
  request.current_frame = 1010;
  SearchResult r = pruned(request);
  EXPECT_TRUE(std::abs(r.frame - 1010) >= 20 || r.frame == 1010) << r.frame;
  EXPECT_NE(r.frame, 1000);
  EXPECT_EQ(exhaustive(request).frame, r.frame);
  // Exactly 20 away is a candidate again (|frame - current| < 20 is skipped).
  request.current_frame = 1020;
  EXPECT_EQ(pruned(request).frame, 1000);
  EXPECT_EQ(exhaustive(request).frame, 1000);
  // A smaller neighbourhood lets 1000 back in.
  request.current_frame = 1010;
  request.neighbourhood_frames = 10;
  EXPECT_EQ(pruned(request).frame, 1000);
  request.neighbourhood_frames = 11;
  EXPECT_NE(pruned(request).frame, 1000);
}

// Rule 4's margin, by brute force: the best frame of the ranges, each less its last `margin`
// frames (at least its first frame kept), for an unseeded search.
int32_t bestOutsideTheMargins(const Database& db, const std::vector<float>& q, uint32_t margin) {
  int32_t best = -1;
  float best_cost = INFINITY;
  for (const mmdb::MatchRange& r : db.ranges()) {
    const uint32_t keep = r.frame_count > margin ? r.frame_count - margin : 1u;
    for (uint32_t f = r.first_frame; f < r.first_frame + keep; ++f) {
      float acc = 0.f;
      for (uint32_t c = 0; c < db.featureCount(); ++c) {
        const float d = q[c] - db.featureRow(f)[c];
        acc += d * d;
      }
      if (acc < best_cost) best_cost = acc, best = int32_t(f);
    }
  }
  return best;
}

TEST_F(Search, TheLastFramesOfEachRangeAreNoCandidatesWithAMargin) {
  const mmdb::MatchRange range = db_.ranges()[2];
  ASSERT_GT(range.frame_count, 40u);
  const uint32_t last = range.first_frame + range.frame_count - 1;
  for (const uint32_t target : {last, last - 9, last - 10, last - 30}) {
    SCOPED_TRACE("query at frame " + std::to_string(target));
    const std::vector<float> q = row(target);
    SearchRequest request;
    request.query = q;
    EXPECT_EQ(pruned(request).frame, int32_t(target));  // no margin: the row finds itself
    request.range_end_margin = 10;
    const SearchResult r = pruned(request);
    const bool in_margin = target > last - 10;
    EXPECT_EQ(r.frame == int32_t(target), !in_margin) << r.frame;
    EXPECT_EQ(r.frame, bestOutsideTheMargins(db_, q, 10));
    EXPECT_EQ(exhaustive(request).frame, r.frame);
    EXPECT_EQ(exhaustive(request).cost, r.cost);
  }
  // A margin as long as every range leaves each its first frame: there is always a candidate.
  const std::vector<float> q = row(last);
  SearchRequest request;
  request.query = q;
  request.range_end_margin = 100000;
  const SearchResult r = pruned(request);
  ASSERT_GE(r.frame, 0);
  bool first_of_a_range = false;
  for (const mmdb::MatchRange& range_k : db_.ranges())
    first_of_a_range |= uint32_t(r.frame) == range_k.first_frame;
  EXPECT_TRUE(first_of_a_range) << r.frame;
  EXPECT_EQ(r.frame, bestOutsideTheMargins(db_, q, 100000));
  // Seeded, the frame playing stays the seed even inside the margin.
  request.current_frame = int32_t(last);
  request.range_end_margin = 10;
  EXPECT_EQ(pruned(request).frame, int32_t(last));
  EXPECT_EQ(exhaustive(request).frame, int32_t(last));
}

TEST_F(Search, OnlyRangesWhoseTagsPassAreSearched) {
  const uint64_t locomotion = db_.tagMask("locomotion"), idle = db_.tagMask("idle"),
                 jump = db_.tagMask("jump");
  ASSERT_EQ(locomotion, 1u);
  // Frame 600 is in clip 1 ("idle").
  const std::vector<float> q = row(600);
  SearchRequest request;
  request.query = q;
  request.filter.required = locomotion;
  for (auto* search : {&mmdb::searchExhaustive, &mmdb::searchPruned}) {
    SearchResult r = search(db_, request).value();
    ASSERT_GE(r.frame, 0);
    EXPECT_EQ(db_.clipOfFrame(uint32_t(r.frame)) % 2, 0) << "an idle clip was returned";
  }
  request.filter.required = idle;
  EXPECT_EQ(mmdb::searchPruned(db_, request).value().frame, 600);
  // Required jump: only the tagged second half of clip 0's matchable frames.
  request.filter.required = jump;
  SearchResult r = mmdb::searchPruned(db_, request).value();
  EXPECT_GE(r.frame, 240);
  EXPECT_LT(r.frame, 480);
  // Excluding jump from locomotion leaves clip 0's first half and the other even clips.
  request.filter.required = locomotion;
  request.filter.excluded = jump;
  r = mmdb::searchExhaustive(db_, request).value();
  EXPECT_FALSE(r.frame >= 240 && r.frame < 480);
  // Excluding everything: no candidate, no current frame -> NoMatch with the reason, never -1.
  request.filter.required = 0;
  request.filter.excluded = ~0ull;
  for (auto* search : {&mmdb::searchPruned, &mmdb::searchExhaustive}) {
    const auto none = search(db_, request);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code(), mmdb::ErrorCode::NoMatch);
    EXPECT_NE(std::string(none.error().message()).find("no candidate frame"), std::string::npos);
  }
}

TEST_F(Search, TrailingFramesOfEachClipAreNeverReturned) {
  // The last 20 frames of clip 2 are not in a range: a query equal to one finds another frame.
  const std::vector<float> q = row(1495);
  SearchRequest request;
  request.query = q;
  const SearchResult r = pruned(request);
  EXPECT_NE(r.frame, 1495);
  EXPECT_GT(r.cost, 0.f);
  EXPECT_EQ(exhaustive(request).frame, r.frame);
}

TEST_F(Search, TransitionCostIsAddedToCandidatesNotToTheCurrentFrame) {
  const std::vector<float> q = row(700);
  SearchRequest request;
  request.query = q;
  request.current_frame = 2000;
  const SearchResult free_switch = pruned(request);
  EXPECT_EQ(free_switch.frame, 700);
  EXPECT_EQ(free_switch.cost, 0.f);
  // The current frame costs c; a transition cost above c keeps it.
  const std::vector<float> current = row(2000);
  float c = 0;
  for (size_t i = 0; i < q.size(); ++i) c += (q[i] - current[i]) * (q[i] - current[i]);
  request.transition_cost = c * 1.01f;
  EXPECT_EQ(pruned(request).frame, 2000);
  EXPECT_EQ(exhaustive(request).frame, 2000);
  request.transition_cost = c * 0.5f;
  SearchResult r = pruned(request);
  EXPECT_EQ(r.frame, 700);
  EXPECT_EQ(r.cost, c * 0.5f);
}

TEST_F(Search, InvalidRequestsAreErrors) {
  std::vector<float> q = row(5);
  SearchRequest request;
  request.query = q;
  std::vector<float> shorter(q.begin(), q.end() - 1);
  SearchRequest bad = request;
  bad.query = shorter;
  EXPECT_EQ(mmdb::searchPruned(db_, bad).error().code(), mmdb::ErrorCode::InvalidArgument);
  bad = request;
  bad.current_frame = int32_t(db_.frameCount());
  EXPECT_FALSE(mmdb::searchExhaustive(db_, bad).ok());
  bad = request;
  bad.current_frame = -2;
  EXPECT_FALSE(mmdb::searchExhaustive(db_, bad).ok());
  bad = request;
  bad.transition_cost = -1.f;
  EXPECT_FALSE(mmdb::searchPruned(db_, bad).ok());
  bad = request;
  bad.transition_cost = NAN;
  EXPECT_FALSE(mmdb::searchPruned(db_, bad).ok());
  bad = request;
  bad.neighbourhood_frames = -5;
  EXPECT_FALSE(mmdb::searchPruned(db_, bad).ok());
  bad = request;
  bad.range_end_margin = -1;
  const auto margin = mmdb::searchPruned(db_, bad);
  ASSERT_FALSE(margin.ok());
  EXPECT_NE(std::string(margin.error().message()).find("range end margin -1"), std::string::npos)
      << margin.error().message();
  std::vector<float> nan_query = q;
  nan_query[3] = NAN;
  bad = request;
  bad.query = nan_query;
  EXPECT_FALSE(mmdb::searchPruned(db_, bad).ok());
  EXPECT_FALSE(mmdb::searchPruned(Database(), request).ok());
}

TEST_F(Search, NormalizeAndDenormalizeAreInverse) {
  std::vector<float> raw(27), normalized(27), back(27);
  for (int c = 0; c < 27; ++c) raw[c] = 0.3f * float(c) - 2.f;
  ASSERT_TRUE(mmdb::normalizeQuery(db_, raw, mmdb::Span<float>(normalized)).ok());
  for (int c = 0; c < 27; ++c)
    EXPECT_FLOAT_EQ(normalized[c], (raw[c] - cooked_.feature_offset[c]) / cooked_.feature_scale[c]);
  ASSERT_TRUE(mmdb::denormalizeQuery(db_, normalized, mmdb::Span<float>(back)).ok());
  for (int c = 0; c < 27; ++c) EXPECT_NEAR(back[c], raw[c], 1e-5f);
  std::vector<float> wrong(26);
  EXPECT_FALSE(mmdb::normalizeQuery(db_, wrong, mmdb::Span<float>(normalized)).ok());
}

// ---- explainCandidates ------------------------------------------------------------------------

// Every candidate's cost, by brute force: the ranking explainCandidates must reproduce.
std::vector<mmdb::CandidateCost> allCandidates(const Database& db, const SearchRequest& q) {
  std::vector<mmdb::CandidateCost> all;
  const int64_t nb =
      q.neighbourhood_frames < 0 ? db.defaultNeighbourhoodFrames() : q.neighbourhood_frames;
  auto cost = [&](uint32_t f, float start) {
    float acc = start;
    for (uint32_t c = 0; c < db.featureCount(); ++c) {
      const float d = q.query[c] - db.featureRow(f)[c];
      acc += d * d;
    }
    return acc;
  };
  if (q.current_frame >= 0) {
    mmdb::CandidateCost c;
    c.frame = q.current_frame;
    c.current = true;
    c.cost = cost(uint32_t(q.current_frame), 0.f);
    all.push_back(c);
  }
  const uint32_t margin = uint32_t(q.range_end_margin);
  for (const mmdb::MatchRange& r : db.ranges()) {
    if (!q.filter.passes(r.tag_mask)) continue;
    const uint32_t keep = r.frame_count > margin ? r.frame_count - margin : 1u;
    for (uint32_t f = r.first_frame; f < r.first_frame + keep; ++f) {
      if (q.current_frame >= 0 &&
          std::llabs(int64_t(f) - q.current_frame) < std::max<int64_t>(nb, 1))
        continue;
      mmdb::CandidateCost c;
      c.frame = int32_t(f);
      c.cost = cost(f, q.transition_cost);
      all.push_back(c);
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.current != b.current) return a.current;
    return a.frame < b.frame;
  });
  return all;
}

TEST_F(Search, ExplainRanksCandidatesAsTheSearchDoes) {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> noise(-0.3f, 0.3f);
  const uint64_t masks[] = {0, 1, 2, 4};
  for (int i = 0; i < 300; ++i) {
    std::vector<float> q = row(rng() % db_.frameCount());
    for (float& v : q) v += noise(rng);
    SearchRequest request;
    request.query = q;
    request.current_frame = (i % 3 == 0) ? -1 : int32_t(rng() % db_.frameCount());
    request.transition_cost = (i % 4 == 0) ? 0.25f : 0.f;
    request.neighbourhood_frames = (i % 5 == 0) ? int32_t(rng() % 30) : mmdb::kDefaultNeighbourhood;
    request.range_end_margin = (i % 3 == 1) ? int32_t(rng() % 520) : 0;
    request.filter.required = masks[rng() % 4];
    const SearchResult winner = exhaustive(request);
    std::vector<mmdb::CandidateCost> out(1 + i % 7);
    auto n = mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(out));
    if (winner.frame < 0) {
      ASSERT_FALSE(n.ok());
      EXPECT_EQ(n.error().code(), mmdb::ErrorCode::NoMatch);
      continue;
    }
    ASSERT_TRUE(n.ok()) << n.error().message();
    // The first is the search's winner, with the search's very cost.
    ASSERT_EQ(out[0].frame, winner.frame) << "query " << i;
    ASSERT_EQ(out[0].cost, winner.cost) << "query " << i;
    const std::vector<mmdb::CandidateCost> all = allCandidates(db_, request);
    ASSERT_EQ(n.value(), std::min(out.size(), all.size()));
    for (uint32_t k = 0; k < n.value(); ++k) {
      EXPECT_EQ(out[k].frame, all[k].frame) << "query " << i << ", rank " << k;
      EXPECT_EQ(out[k].cost, all[k].cost) << "query " << i << ", rank " << k;
      EXPECT_EQ(out[k].current, all[k].current);
      // The parts add up to the cost.
      ASSERT_EQ(out[k].block_count, db_.featureBlockCount());
      float parts = out[k].transition;
      for (uint32_t b = 0; b < out[k].block_count; ++b) parts += out[k].block_costs[b];
      EXPECT_NEAR(parts, out[k].cost, 1e-5f * std::max(1.f, out[k].cost));
      EXPECT_EQ(out[k].transition, out[k].current ? 0.f : request.transition_cost);
    }
  }
}

TEST_F(Search, ExplainNamesTheBlockThatCosts) {
  // The query is frame 100 itself: it ranks first, at cost 0 in every block.
  std::vector<float> q = row(100);
  SearchRequest request;
  request.query = q;
  std::vector<mmdb::CandidateCost> out(3);
  auto n = mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(out));
  ASSERT_TRUE(n.ok()) << n.error().message();
  ASSERT_EQ(n.value(), 3u);
  EXPECT_EQ(out[0].frame, 100);
  EXPECT_EQ(out[0].cost, 0.f);
  for (uint32_t b = 0; b < out[0].block_count; ++b) EXPECT_EQ(out[0].block_costs[b], 0.f);
  // Moved by 2 in one column of block 2, the query costs frame 100 exactly 4 there and nothing
  // elsewhere; every listed frame's parts are its own columns' squared differences.
  const mmdb::FeatureBlockInfo block = db_.featureBlock(2);
  q[block.first_column] += 2.f;
  std::vector<mmdb::CandidateCost> wide(64);
  n = mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(wide));
  ASSERT_TRUE(n.ok()) << n.error().message();
  bool saw_100 = false;
  for (uint32_t k = 0; k < n.value(); ++k) {
    const mmdb::CandidateCost& c = wide[k];
    for (uint32_t b = 0; b < c.block_count; ++b) {
      const mmdb::FeatureBlockInfo info = db_.featureBlock(b);
      float want = 0;
      for (uint32_t col = info.first_column; col < info.first_column + info.width; ++col) {
        const float d = q[col] - db_.featureRow(uint32_t(c.frame))[col];
        want += d * d;
      }
      EXPECT_EQ(c.block_costs[b], want) << "frame " << c.frame << ", " << info.name;
    }
    if (c.frame == 100) {
      saw_100 = true;
      EXPECT_EQ(c.cost, 4.f);
      for (uint32_t b = 0; b < c.block_count; ++b)
        EXPECT_EQ(c.block_costs[b], b == 2 ? 4.f : 0.f) << db_.featureBlock(b).name;
    }
  }
  EXPECT_TRUE(saw_100) << "frame 100 is not among the 64 cheapest";
}

TEST_F(Search, ExplainRefusesBadRequests) {
  std::vector<float> q = row(10);
  SearchRequest request;
  request.query = q;
  std::vector<mmdb::CandidateCost> none;
  auto empty = mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(none));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code(), mmdb::ErrorCode::InvalidArgument);
  uint64_t matchable = 0;
  for (const mmdb::MatchRange& r : db_.ranges()) matchable += r.frame_count;
  std::vector<mmdb::CandidateCost> too_many(matchable + 1);
  auto many = mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(too_many));
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().code(), mmdb::ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(many.error().message()).find("matchable frames"), std::string::npos);
  std::vector<mmdb::CandidateCost> all(matchable);  // every matchable frame is allowed
  EXPECT_TRUE(mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(all)).ok());
  std::vector<float> short_query(db_.featureCount() - 1);
  request.query = short_query;
  std::vector<mmdb::CandidateCost> one(1);
  auto bad = mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(one));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), mmdb::ErrorCode::InvalidArgument);
}

}  // namespace
