// The fast pruned search, the batch and split searches: on 10,000 game-like queries, with
// transition costs 0 and 0.5, each gives searchExhaustive's winner and cost bit for bit, and the
// tie rules hold across batches and merged parts.
#include "synthetic_database.h"

#include <mmdb/database.h>
#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

using mmdb::Database;
using mmdb::SearchRequest;
using mmdb::SearchResult;

// A whole search's result, with NoMatch (no current frame and no candidate passes the filter)
// read as the frame -1 and cost +inf that the batch and the merged parts hold for it.
SearchResult orNoMatch(const mmdb::Result<SearchResult>& r) {
  if (r.ok()) return r.value();
  EXPECT_EQ(r.error().code(), mmdb::ErrorCode::NoMatch) << r.error().message();
  return SearchResult{};
}

class SearchBatch : public ::testing::Test {
 protected:
  void SetUp() override {
    mmdb::test::SyntheticSpec spec;
    spec.clips = 8;
    spec.frames_per_clip = 500;
    cooked_ = mmdb::test::makeSyntheticDatabase(spec);
    open(cooked_);
  }
  // half_features false: the search reads the float rows alone (what a CPU without F16C does).
  void open(const mmdb::cook::CookedDatabase& cooked, bool half_features = true) {
    bytes_ = mmdb::test::serializeAligned(cooked);
    mmdb::OpenOptions options;
    options.half_features = half_features;
    auto r = Database::fromMemory(bytes_.data(), bytes_.size(), options);
    ASSERT_TRUE(r.ok()) << r.error().message();
    db_ = std::move(r.value());
    scratch_.assign(mmdb::batchScratchFloats(db_), -1.f);
  }
  // searchBatch() (all frames) or searchBatchRange() over [first, end), without a scratch and
  // with one (seeds, and group bounds kept for the pass): the same status, and the same results
  // bit for bit where they are written. Returns the status.
  mmdb::Status batchBoth(mmdb::Span<const SearchRequest> requests, mmdb::Span<SearchResult> results,
                         uint32_t first = 0, uint32_t end = ~0u) {
    const bool all = first == 0 && end >= db_.frameCount();
    auto run = [&](mmdb::Span<SearchResult> out, mmdb::Span<float> scratch) {
      return all ? mmdb::searchBatch(db_, requests, out, scratch)
                 : mmdb::searchBatchRange(db_, requests, first, end, out, scratch);
    };
    const mmdb::Status plain = run(results, {});
    std::vector<SearchResult> seeded(results.size());
    const mmdb::Status with_scratch = run(seeded, scratch_);
    EXPECT_EQ(plain.code(), with_scratch.code()) << with_scratch.message();
    const bool written = plain.ok() || plain.code() == mmdb::ErrorCode::NoMatch;
    for (size_t i = 0; written && i < results.size(); ++i) {
      EXPECT_EQ(results[i].frame, seeded[i].frame) << "request " << i << " with a scratch";
      EXPECT_EQ(results[i].cost, seeded[i].cost) << "request " << i << " with a scratch";
      EXPECT_EQ(results[i].changed, seeded[i].changed) << "request " << i << " with a scratch";
    }
    return plain;
  }
  // The fixture's database with the cost biases of setSyntheticBiases().
  void openBiased() {
    mmdb::cook::CookedDatabase biased = cooked_;
    mmdb::test::setSyntheticBiases(biased);
    open(biased);
  }
  std::vector<float> row(uint32_t frame) const {
    auto r = db_.featureRow(frame);
    return std::vector<float>(r.begin(), r.end());
  }
  // The search split at `cuts` (sorted global frames), the parts merged in reverse order.
  SearchResult split(const SearchRequest& request, const std::vector<uint32_t>& cuts) const {
    std::vector<uint32_t> bounds{0};
    bounds.insert(bounds.end(), cuts.begin(), cuts.end());
    bounds.push_back(db_.frameCount());
    SearchResult merged;
    merged.frame = request.current_frame;
    bool first = true;
    for (size_t p = bounds.size() - 1; p-- > 0;) {
      auto part = mmdb::searchRange(db_, request, bounds[p], bounds[p + 1]);
      EXPECT_TRUE(part.ok());
      merged = first ? part.value() : mmdb::mergeSearchResults(merged, part.value());
      first = false;
    }
    return merged;
  }

  mmdb::cook::CookedDatabase cooked_;
  mmdb::test::AlignedBytes bytes_;
  Database db_;
  std::vector<float> scratch_;  // batchScratchFloats(db_)

  void agreeWithExhaustiveOn10000Queries();
};

// Game-like: the playing frame's pose columns, another frame's trajectory columns moved by
// noise; with filters, neighbourhoods and no playing frame now and then. With the database's
// half-precision features (where this CPU has them) and without.
TEST_F(SearchBatch, PrunedBatchAndSplitAgreeWithExhaustiveOn10000Queries) {
  for (const bool half : {true, false}) {
    SCOPED_TRACE(half ? "half-precision features" : "float rows alone");
    open(cooked_, half);
    if (!half) {
      ASSERT_TRUE(db_.halfFeatures().empty());
    }
    agreeWithExhaustiveOn10000Queries();
    if (HasFatalFailure()) return;
  }
}

void SearchBatch::agreeWithExhaustiveOn10000Queries() {
  std::mt19937 rng(77);
  std::normal_distribution<float> noise(0.f, 0.3f);
  const uint64_t masks[] = {0, 0, 0, 1, 2, 4};
  constexpr size_t kQueries = 10000, kBatch = 100;  // batches span two chunks of 64
  std::vector<std::vector<float>> queries(kQueries);
  std::vector<SearchRequest> requests(kQueries);
  for (size_t i = 0; i < kQueries; ++i) {
    const uint32_t playing = rng() % db_.frameCount(), other = rng() % db_.frameCount();
    queries[i] = row(playing);
    const std::vector<float> wanted = row(other);
    for (size_t c = 15; c < queries[i].size(); ++c) queries[i][c] = wanted[c] + noise(rng);
    if (i % 10 == 0)
      for (float& v : queries[i]) v += 2.f * noise(rng);  // far from everything
    requests[i].query = queries[i];
    requests[i].current_frame = (i % 9 == 0) ? -1 : int32_t(playing);
    requests[i].neighbourhood_frames =
        (i % 13 == 0) ? int32_t(rng() % 40) : mmdb::kDefaultNeighbourhood;
    // Margins that differ within a batch (each request's own), some past a whole range.
    requests[i].range_end_margin = (i % 4 == 0) ? int32_t(rng() % 60) : (i % 23 == 0) ? 100000 : 0;
    requests[i].filter.required = masks[rng() % 6];
    requests[i].filter.excluded = (i % 17 == 0) ? 4 : 0;
  }
  uint64_t rows_exhaustive = 0, rows_pruned = 0;
  for (const float transition : {0.f, 0.5f}) {
    for (SearchRequest& r : requests) r.transition_cost = transition;
    std::vector<SearchResult> batch(kQueries);
    for (size_t i = 0; i < kQueries; i += kBatch) {
      const size_t n = std::min(kBatch, kQueries - i);
      const mmdb::Status status = batchBoth(mmdb::Span<const SearchRequest>(&requests[i], n),
                                            mmdb::Span<SearchResult>(&batch[i], n));
      ASSERT_TRUE(status.ok() || status.code() == mmdb::ErrorCode::NoMatch) << status.message();
    }
    for (size_t i = 0; i < kQueries; ++i) {
      const SearchResult a = orNoMatch(mmdb::searchExhaustive(db_, requests[i]));
      const SearchResult b = orNoMatch(mmdb::searchPruned(db_, requests[i]));
      ASSERT_EQ(a.frame, b.frame) << "query " << i << " transition " << transition;
      ASSERT_EQ(a.cost, b.cost) << "query " << i << " transition " << transition;
      ASSERT_EQ(a.changed, b.changed);
      ASSERT_EQ(a.frame, batch[i].frame) << "batch, query " << i;
      ASSERT_EQ(a.cost, batch[i].cost) << "batch, query " << i;
      ASSERT_EQ(a.changed, batch[i].changed);
      if (i % 10 == 0) {  // split inside boxes and at box edges
        const uint32_t cut = rng() % db_.frameCount();
        const SearchResult c = split(requests[i], {std::min(cut, 1024u), std::max(cut, 1024u)});
        ASSERT_EQ(a.frame, c.frame) << "split, query " << i;
        ASSERT_EQ(a.cost, c.cost) << "split, query " << i;
        ASSERT_EQ(a.changed, c.changed);
      }
      rows_exhaustive += a.evaluated;
      rows_pruned += b.evaluated;
    }
  }
  EXPECT_LT(rows_pruned * 10, rows_exhaustive);
}

// A database that does not repeat itself (the fixture's clips completed with synthetic motion
// blended from them, no row twice): on 10,000 game-like queries with transition costs 0 and 0.5,
// searchPruned() and searchBatch() give searchExhaustive()'s winner and cost bit for bit.
TEST_F(SearchBatch, NonRepeatingDatabaseAgreesWithExhaustiveOn10000Queries) {
  const mmdb::cook::CookedDatabase completed =
      mmdb::test::completedWithSynthetic(cooked_, 16000, 5);
  ASSERT_EQ(completed.frame_count, 16000u);
  open(completed);
  std::set<std::vector<float>> rows;
  for (uint32_t f = 0; f < db_.frameCount(); ++f) rows.insert(row(f));
  EXPECT_EQ(rows.size(), size_t(db_.frameCount())) << "a row repeats";

  std::mt19937 rng(91);
  std::normal_distribution<float> noise(0.f, 0.3f);
  constexpr size_t kQueries = 10000, kBatch = 64;
  std::vector<std::vector<float>> queries(kQueries);
  std::vector<SearchRequest> requests(kQueries);
  for (size_t i = 0; i < kQueries; ++i) {
    const uint32_t playing = rng() % db_.frameCount(), other = rng() % db_.frameCount();
    queries[i] = row(playing);
    const std::vector<float> wanted = row(other);
    for (size_t c = 15; c < queries[i].size(); ++c) queries[i][c] = wanted[c] + noise(rng);
    requests[i].query = queries[i];
    requests[i].current_frame = (i % 9 == 0) ? -1 : int32_t(playing);
  }
  for (const float transition : {0.f, 0.5f}) {
    for (SearchRequest& r : requests) r.transition_cost = transition;
    std::vector<SearchResult> batch(kQueries);
    for (size_t i = 0; i < kQueries; i += kBatch) {
      const size_t n = std::min(kBatch, kQueries - i);
      const mmdb::Status status = batchBoth(mmdb::Span<const SearchRequest>(&requests[i], n),
                                            mmdb::Span<SearchResult>(&batch[i], n));
      ASSERT_TRUE(status.ok()) << status.message();
    }
    for (size_t i = 0; i < kQueries; ++i) {
      const SearchResult a = mmdb::searchExhaustive(db_, requests[i]).value();
      const SearchResult b = mmdb::searchPruned(db_, requests[i]).value();
      ASSERT_EQ(a.frame, b.frame) << "query " << i << " transition " << transition;
      ASSERT_EQ(a.cost, b.cost) << "query " << i << " transition " << transition;
      ASSERT_EQ(a.frame, batch[i].frame) << "batch, query " << i;
      ASSERT_EQ(a.cost, batch[i].cost) << "batch, query " << i;
    }
  }
}

// Batch sizes around the 8-request vectors and the 64-request chunks, on a database with cost
// biases, each batch mixing requests with and without weights, different filters, transition
// costs 0 and 0.5 and no playing frame: every result is searchExhaustive's, bit for bit.
TEST_F(SearchBatch, EveryBatchSizeAgreesWithExhaustive) {
  openBiased();
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(0.f, 0.3f);
  std::uniform_real_distribution<float> weight(0.2f, 3.f);
  const uint64_t masks[] = {0, 1, 2, 4};
  constexpr size_t kMost = 200;
  std::vector<std::vector<float>> queries(kMost), weights(kMost);
  std::vector<SearchRequest> requests(kMost);
  for (size_t i = 0; i < kMost; ++i) {
    const uint32_t playing = rng() % db_.frameCount(), other = rng() % db_.frameCount();
    queries[i] = row(playing);
    const std::vector<float> wanted = row(other);
    for (size_t c = 15; c < queries[i].size(); ++c) queries[i][c] = wanted[c] + noise(rng);
    if (i % 3 == 1)
      for (uint32_t b = 0; b < db_.featureBlockCount(); ++b) weights[i].push_back(weight(rng));
    requests[i].query = queries[i];
    requests[i].block_weights = weights[i];
    requests[i].current_frame = (i % 7 == 0) ? -1 : int32_t(playing);
    requests[i].transition_cost = (i % 2 == 0) ? 0.f : 0.5f;
    requests[i].filter.required = masks[rng() % 4];
  }
  std::vector<SearchResult> expected(kMost);
  for (size_t i = 0; i < kMost; ++i)
    expected[i] = orNoMatch(mmdb::searchExhaustive(db_, requests[i]));
  for (const size_t size : {1, 7, 8, 9, 63, 64, 65, 200}) {
    for (const bool weighted : {false, true}) {
      std::vector<SearchRequest> part(requests.begin(), requests.begin() + size);
      if (!weighted)
        for (SearchRequest& r : part) r.block_weights = {};
      std::vector<SearchResult> batch(size);
      const mmdb::Status status = batchBoth(part, batch);
      ASSERT_TRUE(status.ok() || status.code() == mmdb::ErrorCode::NoMatch) << status.message();
      for (size_t i = 0; i < size; ++i) {
        const SearchResult a =
            weighted ? expected[i] : orNoMatch(mmdb::searchExhaustive(db_, part[i]));
        ASSERT_EQ(a.frame, batch[i].frame) << "size " << size << " request " << i;
        ASSERT_EQ(a.cost, batch[i].cost) << "size " << size << " request " << i;
        ASSERT_EQ(a.changed, batch[i].changed);
      }
    }
  }
}

// Characters far apart in the database: each query is one frame's row moved by a little noise,
// so each large box passes for few of a batch's requests and their small boxes are tested
// request by request (the batch's sparse path), with and without weights, biases and a
// transition cost.
TEST_F(SearchBatch, BatchesWhoseRequestsPassFewBoxesAgreeWithExhaustive) {
  openBiased();
  std::mt19937 rng(91);
  std::normal_distribution<float> noise(0.f, 0.02f);
  std::uniform_real_distribution<float> weight(0.5f, 2.f);
  constexpr size_t kQueries = 2048, kBatch = 64;
  std::vector<std::vector<float>> queries(kQueries), weights(kQueries);
  std::vector<SearchRequest> requests(kQueries);
  for (size_t i = 0; i < kQueries; ++i) {
    const uint32_t near = rng() % db_.frameCount();
    queries[i] = row(near);
    for (float& v : queries[i]) v += noise(rng);
    if (i % 2 == 1)
      for (uint32_t b = 0; b < db_.featureBlockCount(); ++b) weights[i].push_back(weight(rng));
    requests[i].query = queries[i];
    requests[i].current_frame = (i % 5 == 0) ? -1 : int32_t(rng() % db_.frameCount());
    requests[i].transition_cost = (i % 3 == 0) ? 0.5f : 0.f;
  }
  for (const bool weighted : {false, true}) {
    for (size_t i = 0; i < kQueries; ++i)
      requests[i].block_weights =
          weighted ? mmdb::Span<const float>(weights[i]) : mmdb::Span<const float>();
    std::vector<SearchResult> batch(kQueries);
    for (size_t i = 0; i < kQueries; i += kBatch) {
      const mmdb::Status status = batchBoth(mmdb::Span<const SearchRequest>(&requests[i], kBatch),
                                            mmdb::Span<SearchResult>(&batch[i], kBatch));
      ASSERT_TRUE(status.ok()) << status.message();
    }
    for (size_t i = 0; i < kQueries; ++i) {
      const SearchResult a = mmdb::searchExhaustive(db_, requests[i]).value();
      ASSERT_EQ(a.frame, batch[i].frame) << "request " << i << (weighted ? ", weighted" : "");
      ASSERT_EQ(a.cost, batch[i].cost) << "request " << i << (weighted ? ", weighted" : "");
      ASSERT_EQ(a.changed, batch[i].changed);
    }
  }
}

TEST_F(SearchBatch, TiesGoToTheLowestFrameAndTheCurrentFrameAcrossPartsAndBatches) {
  // Frames 1500 and 2100 hold the same row, and so do 300 and 1200.
  mmdb::cook::CookedDatabase copy = cooked_;
  std::copy(copy.features.begin() + 2100 * 28, copy.features.begin() + 2101 * 28,
            copy.features.begin() + 1500 * 28);
  std::copy(copy.features.begin() + 300 * 28, copy.features.begin() + 301 * 28,
            copy.features.begin() + 1200 * 28);
  mmdb::test::computeBounds(copy);
  open(copy);
  const std::vector<float> q2100 = row(2100), q300 = row(300);
  SearchRequest lowest;
  lowest.query = q2100;
  SearchRequest keep;  // playing 1200: 300 ties and must not win
  keep.query = q300;
  keep.current_frame = 1200;
  SearchRequest keep_low;  // playing 300: 1200 ties and must not win
  keep_low.query = q300;
  keep_low.current_frame = 300;
  const SearchRequest requests[] = {lowest, keep, keep_low};
  const int32_t expected[] = {1500, 1200, 300};
  SearchResult results[3];
  ASSERT_TRUE(batchBoth(requests, results).ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(mmdb::searchExhaustive(db_, requests[i]).value().frame, expected[i]);
    EXPECT_EQ(mmdb::searchPruned(db_, requests[i]).value().frame, expected[i]);
    EXPECT_EQ(results[i].frame, expected[i]);
    EXPECT_EQ(results[i].cost, 0.f);
    for (uint32_t cut : {301u, 1000u, 1201u, 1800u, 2101u})
      EXPECT_EQ(split(requests[i], {cut}).frame, expected[i]) << "cut at " << cut;
  }
  // Parts merged in either order.
  const SearchResult low = mmdb::searchRange(db_, lowest, 0, 1800).value();
  const SearchResult high = mmdb::searchRange(db_, lowest, 1800, db_.frameCount()).value();
  EXPECT_EQ(low.frame, 1500);
  EXPECT_EQ(high.frame, 2100);
  EXPECT_EQ(mmdb::mergeSearchResults(low, high).frame, 1500);
  EXPECT_EQ(mmdb::mergeSearchResults(high, low).frame, 1500);
  // A part with no candidate strictly cheaper returns the current frame.
  const SearchResult none = mmdb::searchRange(db_, keep, 0, 1000).value();
  EXPECT_EQ(none.frame, 1200);
  EXPECT_FALSE(none.changed);
}

// The batch seeds each request from the group whose bound is lowest, before its pass in frame
// order. Here that group (frames 2048 to 2559) holds frame 2100 at the cost d^2, and an earlier
// group holds frame 1510 at exactly the same cost, but not the query inside its box: the seed
// is found first and must give way to the lower frame, and the frame playing keeps its tie.
// Spans of one group (no seeds) and of several give searchRange's results.
TEST_F(SearchBatch, ASeedFoundOutOfOrderGivesWayToTheLowerFrameOfEqualCost) {
  mmdb::cook::CookedDatabase copy = cooked_;
  const std::vector<float> q = row(2100);
  constexpr uint32_t kStride = 28, kColumn = 20;
  constexpr float kD = 0.25f;                      // d^2 = 0.0625 exactly
  for (uint32_t f = 0; f < db_.frameCount(); ++f)  // every row far from the query
    for (uint32_t c = 0; c < q.size(); ++c) copy.features[size_t(f) * kStride + c] = q[c] + 4.f;
  auto place = [&](uint32_t frame, float offset) {
    for (uint32_t c = 0; c < q.size(); ++c) copy.features[size_t(frame) * kStride + c] = q[c];
    copy.features[size_t(frame) * kStride + kColumn] = q[kColumn] + offset;
  };
  place(1510, kD);   // its group's box starts at q + d in column 20: a bound of d^2
  place(2100, -kD);  // with 2101, a box around the query: a bound of 0
  place(2101, kD);
  mmdb::test::computeBounds(copy);
  open(copy);
  for (const uint32_t frame : {1510u, 2100u, 2101u}) {
    bool matchable = false;
    for (const mmdb::MatchRange& r : db_.ranges())
      matchable = matchable || (frame >= r.first_frame && frame < r.first_frame + r.frame_count);
    ASSERT_TRUE(matchable) << "frame " << frame << " is outside the synthetic ranges";
  }
  SearchRequest plain;
  plain.query = q;
  SearchRequest with_transition = plain;
  with_transition.transition_cost = 0.5f;
  SearchRequest playing = plain;  // 2100 plays: 1510 only ties it
  playing.current_frame = 2100;
  SearchRequest near = plain;  // 2099 plays, 2100 is too near it
  near.current_frame = 2099;
  near.neighbourhood_frames = 2;
  SearchRequest tag_1 = plain;  // clip 3 (frame 1510) has tag 2
  tag_1.filter.required = 1;
  SearchRequest not_tag_1 = plain;  // clip 4 (frames 2100 and 2101) has tag 1
  not_tag_1.filter.excluded = 1;
  std::vector<SearchRequest> requests;
  for (int copies = 0; copies < 3; ++copies)
    requests.insert(requests.end(), {plain, with_transition, playing, near, tag_1, not_tag_1});
  const int32_t expected[] = {1510, 1510, 2100, 1510, 2100, 1510};
  const float expected_cost[] = {kD * kD, 0.5f + kD * kD, kD * kD, kD * kD, kD * kD, kD * kD};
  std::vector<SearchResult> results(requests.size());
  ASSERT_TRUE(batchBoth(requests, results).ok());
  for (size_t i = 0; i < requests.size(); ++i) {
    const SearchResult a = mmdb::searchExhaustive(db_, requests[i]).value();
    EXPECT_EQ(a.frame, expected[i % 6]) << "request " << i;
    EXPECT_EQ(a.cost, expected_cost[i % 6]) << "request " << i;
    EXPECT_EQ(results[i].frame, a.frame) << "request " << i;
    EXPECT_EQ(results[i].cost, a.cost) << "request " << i;
    EXPECT_EQ(results[i].changed, a.changed) << "request " << i;
  }
  // Spans: one group, part of one, several, from a group's middle to the end. Without frame
  // 1510 (from 1536 on), the seed is the answer where it is a candidate: not near the frame
  // playing, in a range the filter passes.
  const std::pair<uint32_t, uint32_t> spans[] = {{1024, 1536}, {2048, 2560},
                                                 {1500, 1520}, {1000, 2200},
                                                 {1536, 2560}, {1511, db_.frameCount()},
                                                 {0, 64}};
  for (const auto& [first, end] : spans) {
    std::vector<SearchResult> part(requests.size());
    ASSERT_TRUE(batchBoth(requests, part, first, end).ok());
    for (size_t i = 0; i < requests.size(); ++i) {
      const SearchResult a = mmdb::searchRange(db_, requests[i], first, end).value();
      EXPECT_EQ(part[i].frame, a.frame) << "request " << i << ", frames " << first << " to " << end;
      EXPECT_EQ(part[i].cost, a.cost) << "request " << i << ", frames " << first << " to " << end;
    }
  }
}

// IEEE binary16 bits to float, exactly (every half is a float).
float fromHalf(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  const float sign = (bits & 0x8000) ? -1.f : 1.f;
  if (exponent == 0x1f) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(float(mantissa), -24);
  return sign * std::ldexp(float(mantissa | 0x400), exponent - 25);
}

// Every row's copy is its nearest half (within half a step: 2^-11 of the value, or 2^-25 below
// 2^-14), padding 0, and its error the distance between row and copy, rounded up by 1e-5 of it
// at most; none without the option; and the copy moves with the Database.
TEST_F(SearchBatch, HalfFeaturesAreTheNearestHalvesWithTheirErrorRoundedUp) {
  if (db_.halfFeatures().empty()) {  // a build or CPU without the F16C search: none at all
    EXPECT_TRUE(db_.halfFeatureErrors().empty());
    return;
  }
  const uint32_t frames = db_.frameCount(), stride = db_.featureStride(), n = db_.featureCount();
  ASSERT_EQ(db_.halfFeatures().size(), size_t(frames) * stride);
  ASSERT_EQ(db_.halfFeatureErrors().size(), size_t(frames));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(db_.halfFeatures().data()) % 64, 0u);
  for (uint32_t f = 0; f < frames; ++f) {
    double sum = 0;
    for (uint32_t c = 0; c < stride; ++c) {
      const uint16_t bits = db_.halfFeatures()[size_t(f) * stride + c];
      if (c >= n) {
        ASSERT_EQ(bits, 0) << "frame " << f << " padding column " << c;
        continue;
      }
      const float x = db_.features()[size_t(f) * stride + c], h = fromHalf(bits);
      const float step = std::fabs(x) < 0x1p-14f ? 0x1p-24f : std::fabs(x) * 0x1p-10f;
      ASSERT_LE(std::fabs(x - h), 0.5f * step) << "frame " << f << " column " << c;
      sum += (double(x) - h) * (double(x) - h);
    }
    const float error = db_.halfFeatureErrors()[f];
    ASSERT_GE(double(error), std::sqrt(sum)) << "frame " << f;
    ASSERT_LE(error, std::sqrt(sum) * (1 + 1e-5) + 1e-30) << "frame " << f;
  }
  const uint16_t* copy = db_.halfFeatures().data();
  Database moved = std::move(db_);
  EXPECT_EQ(moved.halfFeatures().data(), copy);
  EXPECT_TRUE(db_.halfFeatures().empty());
  EXPECT_TRUE(db_.halfFeatureErrors().empty());
  open(cooked_, false);
  EXPECT_TRUE(db_.halfFeatures().empty());
  EXPECT_TRUE(db_.halfFeatureErrors().empty());
}

// A row whose half-precision copy rounds away from the query by more than the bounds' margin:
// frame 1510 at 1000.4 in column 20 is found first (cost 1000800.16), then frame 2100 at
// 1000.3 (cost 1000600.09), whose copy is 1000.5 (a cost of 1001000.25, above 1510's). Only
// the copy's error taken off its bound keeps 2100, the winner, from being skipped; with a
// weight of 10 on its block, only that error times the largest weight. Frame 2300 holds 70000,
// beyond the largest half: its error is infinite, and a query there finds it.
TEST_F(SearchBatch, HalfPrecisionRoundingNeverSkipsTheWinner) {
  mmdb::cook::CookedDatabase copy = cooked_;
  constexpr uint32_t kStride = 28, kColumn = 20;
  const uint32_t n = db_.featureCount();
  ASSERT_EQ(db_.featureStride(), kStride);
  for (uint32_t f = 0; f < db_.frameCount(); ++f)  // every other row far from the queries
    for (uint32_t c = 0; c < n; ++c) copy.features[size_t(f) * kStride + c] = 4000.f;
  auto place = [&](uint32_t frame, float value) {
    for (uint32_t c = 0; c < n; ++c) copy.features[size_t(frame) * kStride + c] = 0.f;
    copy.features[size_t(frame) * kStride + kColumn] = value;
  };
  place(1510, 1000.4f);
  place(2100, 1000.3f);
  place(2300, 70000.f);
  mmdb::test::computeBounds(copy);
  open(copy);
  if (!db_.halfFeatures().empty()) {  // else (no F16C search) the float rows alone: the same
    ASSERT_EQ(fromHalf(db_.halfFeatures()[size_t(2100) * kStride + kColumn]), 1000.5f);
    EXPECT_TRUE(std::isinf(db_.halfFeatureErrors()[2300]));
  }
  for (const uint32_t frame : {1510u, 2100u, 2300u}) {
    bool matchable = false;
    for (const mmdb::MatchRange& r : db_.ranges())
      matchable = matchable || (frame >= r.first_frame && frame < r.first_frame + r.frame_count);
    ASSERT_TRUE(matchable) << "frame " << frame << " is outside the synthetic ranges";
  }
  const std::vector<float> zero(n, 0.f);
  std::vector<float> far(n, 0.f);
  far[kColumn] = 70000.f;
  std::vector<float> weights(db_.featureBlockCount(), 1.f);
  for (uint32_t b = 0; b < db_.featureBlockCount(); ++b) {
    const mmdb::FeatureBlockInfo block = db_.featureBlock(b);
    if (kColumn >= block.first_column && kColumn < block.first_column + block.width)
      weights[b] = 10.f;
  }
  SearchRequest plain;
  plain.query = zero;
  SearchRequest weighted = plain;
  weighted.block_weights = weights;
  SearchRequest beyond = plain;
  beyond.query = far;
  const SearchRequest requests[] = {plain, weighted, beyond};
  const int32_t expected[] = {2100, 2100, 2300};
  std::vector<SearchResult> batch(3);
  ASSERT_TRUE(batchBoth(requests, batch).ok());
  for (size_t i = 0; i < 3; ++i) {
    const SearchResult a = mmdb::searchExhaustive(db_, requests[i]).value();
    const SearchResult b = mmdb::searchPruned(db_, requests[i]).value();
    EXPECT_EQ(a.frame, expected[i]) << "request " << i;
    EXPECT_EQ(b.frame, a.frame) << "request " << i;
    EXPECT_EQ(b.cost, a.cost) << "request " << i;
    EXPECT_EQ(batch[i].frame, a.frame) << "request " << i;
    EXPECT_EQ(batch[i].cost, a.cost) << "request " << i;
  }
}

// Rows whose cost ties the best, or is above it by less than a float step of a large transition
// cost (1000: the best's room over it is 1/65536 of it), with and without the ranges' biases and
// a frame playing; and a winner in a range whose bias is 1 lower than that of the range of the
// first best (the quick test is the bias's own): the half-precision rows' quick test rules none
// out that the bound would keep, so every search agrees with the exhaustive one.
TEST_F(SearchBatch, HalfPrecisionQuickTestKeepsRowsAtTheBest) {
  for (const int variant : {0, 1, 2}) {
    mmdb::cook::CookedDatabase copy = cooked_;
    if (variant == 1) mmdb::test::setSyntheticBiases(copy);
    constexpr uint32_t kStride = 28, kColumn = 20;
    const uint32_t n = db_.featureCount();
    for (uint32_t f = 0; f < uint32_t(copy.features.size() / kStride); ++f)
      for (uint32_t c = 0; c < n; ++c) copy.features[size_t(f) * kStride + c] = 3.f;
    auto place = [&](uint32_t frame, float value) {
      for (uint32_t c = 0; c < n; ++c) copy.features[size_t(frame) * kStride + c] = 0.f;
      copy.features[size_t(frame) * kStride + kColumn] = value;
    };
    if (variant < 2) {
      place(900, 0.004f);  // 1.6e-5 above 1000: within a float step of it
      place(1510, 0.f);    // the best, tied by 2100
      place(2100, 0.f);
      place(2101, 0.0005f);
      place(2300, 0.02f);  // 4e-4 above: a few float steps
    } else {
      int32_t first = -1, second = -1;  // the ranges of frames 1510 and 2300
      for (size_t r = 0; r < copy.ranges.size(); ++r) {
        const mmdb::cook::CookedRange& range = copy.ranges[r];
        for (const uint32_t frame : {1510u, 2300u})
          if (frame >= range.first_frame && frame < range.first_frame + range.frame_count)
            (frame == 1510u ? first : second) = int32_t(r);
      }
      ASSERT_TRUE(first >= 0 && second > first);
      for (mmdb::cook::CookedRange& range : copy.ranges) range.bias = 0.f;
      copy.ranges[size_t(first)].bias = 0.5f;
      copy.ranges[size_t(second)].bias = -0.5f;
      place(1510, 0.f);      // 1000.5
      place(2300, 0.7746f);  // about 1000.1: the winner
    }
    mmdb::test::computeBounds(copy);
    open(copy);
    const std::vector<float> zero(n, 0.f);
    std::vector<SearchRequest> requests;
    for (const int32_t current : {-1, 2100, 2300, 700}) {
      SearchRequest r;
      r.query = zero;
      r.transition_cost = 1000.f;
      r.current_frame = current;
      r.neighbourhood_frames = 0;
      requests.push_back(r);
    }
    std::vector<SearchResult> batch(requests.size());
    ASSERT_TRUE(batchBoth(requests, batch).ok());
    for (size_t i = 0; i < requests.size(); ++i) {
      SCOPED_TRACE("request " + std::to_string(i) + ", variant " + std::to_string(variant));
      const SearchResult a = mmdb::searchExhaustive(db_, requests[i]).value();
      const SearchResult b = mmdb::searchPruned(db_, requests[i]).value();
      EXPECT_EQ(b.frame, a.frame);
      EXPECT_EQ(b.cost, a.cost);
      EXPECT_EQ(batch[i].frame, a.frame);
      EXPECT_EQ(batch[i].cost, a.cost);
      if (variant == 2 && requests[i].current_frame < 0) {
        EXPECT_EQ(a.frame, 2300) << a.cost;
      }
    }
  }
}

TEST_F(SearchBatch, EmptyRangesAndInvalidBatches) {
  const std::vector<float> q = row(40);
  SearchRequest request;
  request.query = q;
  request.current_frame = 700;
  const auto empty = mmdb::searchRange(db_, request, 100, 100);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty.value().frame, 700);
  EXPECT_EQ(empty.value().evaluated, 0u);
  EXPECT_FALSE(mmdb::searchRange(db_, request, 200, 100).ok());
  EXPECT_EQ(mmdb::searchRange(db_, request, 0, ~0u).value().frame,
            mmdb::searchExhaustive(db_, request).value().frame);

  std::vector<SearchRequest> requests(3, request);
  std::vector<SearchResult> results(2);
  EXPECT_EQ(batchBoth(requests, results).code(), mmdb::ErrorCode::InvalidArgument);
  results.resize(3);
  requests[1].transition_cost = -1.f;
  const mmdb::Status bad = batchBoth(requests, results);
  EXPECT_EQ(bad.code(), mmdb::ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(bad.message()).find("request 1"), std::string::npos) << bad.message();
  EXPECT_TRUE(
      mmdb::searchBatch(db_, mmdb::Span<const SearchRequest>(), mmdb::Span<SearchResult>()).ok());
  // A scratch too small for the frames searched; one group's floats do for one group's frames.
  requests[1].transition_cost = 0.f;
  std::vector<float> small(mmdb::kBatchChunk);
  const mmdb::Status short_scratch = mmdb::searchBatch(db_, requests, results, small);
  EXPECT_EQ(short_scratch.code(), mmdb::ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(short_scratch.message()).find("batchScratchFloats"), std::string::npos)
      << short_scratch.message();
  EXPECT_EQ(scratch_.size(), mmdb::kBatchChunk * 4);  // 4,000 frames: 4 groups of 1,024
  EXPECT_TRUE(mmdb::searchBatchRange(db_, requests, 1024, 2048, results, small).ok());
  EXPECT_FALSE(mmdb::searchBatchRange(db_, requests, 1000, 2048, results, small).ok());
  EXPECT_EQ(mmdb::batchScratchFloats(Database()), 0u);

  // No current frame and no candidate: a part holds frame -1 for the merge to pass over; the
  // whole search and the batch say NoMatch, the batch naming the request.
  SearchRequest nothing;
  nothing.query = q;
  nothing.filter.required = uint64_t{1} << 40;  // a tag no range has
  const auto part = mmdb::searchRange(db_, nothing, 0, 100);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part.value().frame, -1);
  EXPECT_EQ(mmdb::checkMatch(part.value()).code(), mmdb::ErrorCode::NoMatch);
  EXPECT_TRUE(mmdb::checkMatch(mmdb::searchRange(db_, request, 0, 100).value()).ok());
  EXPECT_EQ(mmdb::searchPruned(db_, nothing).error().code(), mmdb::ErrorCode::NoMatch);
  requests = {request, nothing, request};
  const mmdb::Status none = batchBoth(requests, results);
  EXPECT_EQ(none.code(), mmdb::ErrorCode::NoMatch);
  EXPECT_NE(std::string(none.message()).find("request 1"), std::string::npos) << none.message();
  EXPECT_EQ(results[0].frame, mmdb::searchPruned(db_, request).value().frame);
  EXPECT_EQ(results[1].frame, -1);
}

}  // namespace
