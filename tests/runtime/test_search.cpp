// Search: pruned == exhaustive on random queries, and the rules of the reference (self match,
// strictly cheaper, neighbourhood, tags, transition cost, ties) hold.
#include "synthetic_database.h"

#include <mmdb/database.h>
#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
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

  mm::CookedDatabase cooked_;
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
  mm::CookedDatabase copy = cooked_;
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
  mm::CookedDatabase copy = cooked_;
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

}  // namespace
