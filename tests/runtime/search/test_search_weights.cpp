// Run-time block weights and cooked cost biases in the CPU search: a weighted search finds what
// a search on a database cooked with those weights finds; exhaustive, pruned, batch and split
// searches stay bit-identical with weights and biases; a bias moves the winner as it should;
// bad weights are refused by name; explainCandidates' parts add up.
#include "real_database.h"
#include "synthetic_database.h"

#include <mmdb/database.h>
#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using mmdb::Database;
using mmdb::SearchRequest;
using mmdb::SearchResult;

struct Opened {
  mmdb::test::AlignedBytes bytes;
  Database db;
};

Opened open(const mmdb::cook::CookedDatabase& cooked) {
  Opened o;
  o.bytes = mmdb::test::serializeAligned(cooked);
  auto r = Database::fromMemory(o.bytes.data(), o.bytes.size());
  EXPECT_TRUE(r.ok()) << r.error().message();
  if (r.ok()) o.db = std::move(r.value());
  return o;
}

mmdb::cook::CookedDatabase synthetic() {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 8;
  spec.frames_per_clip = 500;
  return mmdb::test::makeSyntheticDatabase(spec);
}

SearchResult orNoMatch(const mmdb::Result<SearchResult>& r) {
  if (r.ok()) return r.value();
  EXPECT_EQ(r.error().code(), mmdb::ErrorCode::NoMatch) << r.error().message();
  return SearchResult{};
}

bool closeRelative(float a, float b, float tolerance) {
  return std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b));
}

// Searches with relative weights on `plain` (cooked with the default weights) against searches
// without weights on `weighted` (cooked with default * relative), on the same game queries
// built for each database: the same winner, costs within 1e-5 relative; a different winner only
// where the costs of the two winners tie within that on both databases.
void expectWeightsActLikeACook(const Database& plain, const Database& weighted,
                               const std::vector<float>& relative, uint32_t queries_count,
                               const char* name) {
  std::vector<std::vector<float>> queries_plain, queries_weighted;
  std::vector<int32_t> current_plain, current_weighted;
  mmdb::test::makeGameQueries(plain, queries_count, 5, queries_plain, current_plain);
  mmdb::test::makeGameQueries(weighted, queries_count, 5, queries_weighted, current_weighted);
  ASSERT_EQ(current_plain, current_weighted);
  int different = 0;
  for (uint32_t i = 0; i < queries_count; ++i) {
    SearchRequest a;
    a.query = queries_plain[i];
    a.current_frame = (i % 5 == 0) ? -1 : current_plain[i];
    a.transition_cost = (i % 2) ? 0.5f : 0.f;
    a.block_weights = relative;
    SearchRequest b = a;
    b.query = queries_weighted[i];
    b.block_weights = {};
    const auto ra = mmdb::searchPruned(plain, a);
    const auto rb = mmdb::searchPruned(weighted, b);
    ASSERT_TRUE(ra.ok() && rb.ok()) << name << " query " << i;
    const SearchResult x = ra.value(), y = rb.value();
    ASSERT_TRUE(closeRelative(x.cost, y.cost, 1e-5f))
        << name << " query " << i << ": cost " << x.cost << " with weights, " << y.cost
        << " cooked with them";
    if (x.frame != y.frame) {
      // A tie: each database's cost for the other's winner is as low, within the tolerance.
      ++different;
      std::vector<mmdb::CandidateCost> top(64);
      auto costOf = [&](const Database& db, const SearchRequest& r, int32_t frame, float& cost) {
        const uint32_t n = mmdb::explainCandidates(db, r, top).value();
        for (uint32_t k = 0; k < n; ++k)
          if (top[k].frame == frame) {
            cost = top[k].cost;
            return true;
          }
        return false;
      };
      float x_of_y = 0, y_of_x = 0;
      ASSERT_TRUE(costOf(plain, a, y.frame, x_of_y) && costOf(weighted, b, x.frame, y_of_x))
          << name << " query " << i << ": winners " << x.frame << " and " << y.frame
          << " are not near each other's top 64";
      ASSERT_TRUE(closeRelative(x.cost, x_of_y, 1e-5f) && closeRelative(y.cost, y_of_x, 1e-5f))
          << name << " query " << i << ": winners " << x.frame << " and " << y.frame;
    }
  }
  std::printf("%s: %u queries, %d different winners (all ties within 1e-5)\n", name, queries_count,
              different);
}

std::vector<float> relativeWeights(const Database& plain, const Database& weighted) {
  std::vector<float> relative;
  for (uint32_t b = 0; b < plain.featureBlockCount(); ++b)
    relative.push_back(weighted.featureBlock(b).weight / plain.featureBlock(b).weight);
  return relative;
}

TEST(SearchWeights, WeightsActLikeACookWithThemOnASyntheticDatabase) {
  const mmdb::cook::CookedDatabase base = synthetic();
  std::vector<float> defaults;
  for (const auto& b : base.feature_blocks) defaults.push_back(b.weight);
  // The same motion through the cook's normalize stage twice: default weights, and others.
  const Opened plain = open(mmdb::test::reweighted(base, defaults));
  for (const std::vector<float>& factors :
       {std::vector<float>{2.f, 2.f, 0.5f, 0.5f, 1.f, 3.f, 0.25f},
        std::vector<float>{0.1f, 0.1f, 1.f, 1.f, 4.f, 1.f, 1.f}}) {
    std::vector<float> weights = defaults;
    for (size_t b = 0; b < weights.size(); ++b) weights[b] *= factors[b];
    const Opened weighted = open(mmdb::test::reweighted(base, weights));
    expectWeightsActLikeACook(plain.db, weighted.db, relativeWeights(plain.db, weighted.db), 10000,
                              "synthetic");
  }
}

// Real motion, on the search path this machine takes (the scalar and any-width builds of this
// file leave it out: it cooks the corpus twice).
#if !defined(MMDB_SEARCH_SCALAR) && !defined(MMDB_SEARCH_ANY_WIDTH)
TEST(SearchWeights, WeightsActLikeACookWithThemOnBandai) {
  std::string why;
  const mmdb::test::RealDatabase* plain = mmdb::test::bandaiDatabase(&why);
  if (!plain) GTEST_SKIP() << why;
  // foot_position, foot_velocity, hip_velocity, trajectory_position, trajectory_direction.
  const std::array<float, 5> weights{1.5f, 0.5f, 2.f, 1.f, 0.75f};
  const mmdb::test::RealDatabase* weighted = mmdb::test::bandaiDatabaseWeighted(weights, &why);
  ASSERT_NE(weighted, nullptr) << why;
  expectWeightsActLikeACook(plain->db, weighted->db, relativeWeights(plain->db, weighted->db),
                            10000, "bandai-1");
}
#endif

class SearchWeightsAndBiases : public ::testing::Test {
 protected:
  void SetUp() override {
    cooked_ = synthetic();
    mmdb::test::setSyntheticBiases(cooked_);
    opened_ = open(cooked_);
  }
  const Database& db() const { return opened_.db; }

  mmdb::cook::CookedDatabase cooked_;
  Opened opened_;
};

TEST_F(SearchWeightsAndBiases, TheFileHoldsTheBiases) {
  ASSERT_EQ(db().rangeBiases().size(), db().ranges().size());
  for (uint32_t r = 0; r < db().ranges().size(); ++r)
    EXPECT_EQ(db().rangeBias(r), cooked_.ranges[r].bias);
  for (uint32_t c = 0; c < db().clipCount(); ++c)
    EXPECT_EQ(db().clip(c).bias, cooked_.clips[c].bias);
  // A matchable frame has its range's bias, a trailing one its clip's.
  const mmdb::MatchRange first = db().ranges()[0];
  EXPECT_EQ(db().frameBias(first.first_frame), db().rangeBias(0));
  const mmdb::ClipInfo clip2 = db().clip(2);
  EXPECT_EQ(db().frameBias(clip2.first_frame + clip2.frame_count - 1), clip2.bias);
  EXPECT_EQ(clip2.bias, 0.25f);
}

// Exhaustive, pruned, batch and split searches agree bit for bit with weights, with biases and
// with both, on 10,000 queries (half of them near the database, half wilder), batches mixing
// requests with and without weights.
TEST_F(SearchWeightsAndBiases, AllSearchesAgreeBitForBit) {
  const Opened plain = open(synthetic());
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> noise(-0.3f, 0.3f), weight(0.05f, 4.f);
  const uint64_t masks[] = {0, 1, 2, 4};
  constexpr uint32_t kQueries = 10000, kBatch = 50;
  std::vector<std::vector<float>> queries(kQueries), weights(kQueries);
  std::vector<SearchRequest> requests(kQueries);
  for (const Database* db : {&db(), &plain.db}) {
    for (uint32_t i = 0; i < kQueries; ++i) {
      auto row = db->featureRow(rng() % db->frameCount());
      queries[i].assign(row.begin(), row.end());
      for (float& v : queries[i]) v += ((i % 4 == 0) ? 3.f : 1.f) * noise(rng);
      weights[i].clear();
      if (i % 3 != 0)
        for (uint32_t b = 0; b < db->featureBlockCount(); ++b) weights[i].push_back(weight(rng));
      SearchRequest& r = requests[i];
      r = {};
      r.query = queries[i];
      r.block_weights = weights[i];
      r.current_frame = (i % 4 == 1) ? -1 : int32_t(rng() % db->frameCount());
      r.transition_cost = (i % 5 == 0) ? 0.25f * float(rng() % 4) : 0.f;
      r.filter.required = masks[rng() % 4];
    }
    std::vector<SearchResult> batch(kQueries), seeded(kQueries);
    std::vector<float> scratch(mmdb::batchScratchFloats(*db));
    for (uint32_t i = 0; i < kQueries; i += kBatch) {
      const mmdb::Status s = mmdb::searchBatch(*db, {&requests[i], kBatch}, {&batch[i], kBatch});
      ASSERT_TRUE(s.ok() || s.code() == mmdb::ErrorCode::NoMatch) << s.message();
      const mmdb::Status with_scratch =
          mmdb::searchBatch(*db, {&requests[i], kBatch}, {&seeded[i], kBatch}, scratch);
      ASSERT_EQ(with_scratch.code(), s.code()) << with_scratch.message();
    }
    const uint32_t third = db->frameCount() / 3;
    for (uint32_t i = 0; i < kQueries; ++i) {
      const SearchResult a = orNoMatch(mmdb::searchExhaustive(*db, requests[i]));
      const SearchResult b = orNoMatch(mmdb::searchPruned(*db, requests[i]));
      ASSERT_EQ(a.frame, b.frame) << "query " << i;
      ASSERT_EQ(a.cost, b.cost) << "query " << i;  // bit-identical
      ASSERT_EQ(a.frame, batch[i].frame) << "batch, query " << i;
      ASSERT_EQ(a.cost, batch[i].cost) << "batch, query " << i;
      ASSERT_EQ(a.frame, seeded[i].frame) << "batch with a scratch, query " << i;
      ASSERT_EQ(a.cost, seeded[i].cost) << "batch with a scratch, query " << i;
      if (i % 10 == 0) {
        SearchResult merged = mmdb::searchRange(*db, requests[i], third, 2 * third + 5).value();
        merged =
            mmdb::mergeSearchResults(merged, mmdb::searchRange(*db, requests[i], 0, third).value());
        merged = mmdb::mergeSearchResults(
            merged, mmdb::searchRange(*db, requests[i], 2 * third + 5, ~0u).value());
        ASSERT_EQ(a.frame, merged.frame) << "split, query " << i;
        ASSERT_EQ(a.cost, merged.cost) << "split, query " << i;
      }
    }
  }
}

// Weights of 1 give the unweighted search's floats exactly.
TEST_F(SearchWeightsAndBiases, WeightsOfOneChangeNothing) {
  std::vector<float> ones(db().featureBlockCount(), 1.f);
  for (uint32_t i = 0; i < 500; ++i) {
    auto row = db().featureRow((i * 37) % db().frameCount());
    std::vector<float> q(row.begin(), row.end());
    q[i % q.size()] += 0.7f;
    SearchRequest a;
    a.query = q;
    a.current_frame = int32_t((i * 101) % db().frameCount());
    SearchRequest b = a;
    b.block_weights = ones;
    const SearchResult x = mmdb::searchPruned(db(), a).value();
    const SearchResult y = mmdb::searchPruned(db(), b).value();
    ASSERT_EQ(x.frame, y.frame);
    ASSERT_EQ(x.cost, y.cost);
  }
}

// A weight scales its block's part of the cost by its square.
TEST_F(SearchWeightsAndBiases, AWeightScalesItsBlockBySquare) {
  std::vector<mmdb::CandidateCost> plain(1), weighted(1);
  auto row = db().featureRow(db().ranges()[1].first_frame + 3);
  std::vector<float> q(row.begin(), row.end());
  for (float& v : q) v += 0.5f;
  SearchRequest r;
  r.query = q;
  ASSERT_TRUE(mmdb::explainCandidates(db(), r, plain).ok());
  std::vector<float> w(db().featureBlockCount(), 1.f);
  w[2] = 3.f;
  r.block_weights = w;
  r.current_frame = plain[0].frame;  // the same frame, explained with the weights
  ASSERT_TRUE(mmdb::explainCandidates(db(), r, weighted).ok());
  ASSERT_EQ(weighted[0].frame, plain[0].frame);
  EXPECT_NEAR(weighted[0].block_costs[2], 9.f * plain[0].block_costs[2],
              1e-5f * weighted[0].block_costs[2]);
  EXPECT_EQ(weighted[0].block_costs[0], plain[0].block_costs[0]);
}

TEST_F(SearchWeightsAndBiases, BadWeightsAreRefusedByBlock) {
  auto row = db().featureRow(0);
  std::vector<float> q(row.begin(), row.end());
  SearchRequest r;
  r.query = q;
  std::vector<float> w(db().featureBlockCount(), 1.f);
  auto refused = [&](const std::vector<float>& weights, const char* expected) {
    r.block_weights = weights;
    const auto found = mmdb::searchPruned(db(), r);
    if (found.ok()) return std::string("accepted");
    EXPECT_EQ(found.error().code(), mmdb::ErrorCode::InvalidArgument);
    const std::string message = found.error().message();
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    // Every entry point validates the same way.
    std::vector<mmdb::CandidateCost> out(1);
    EXPECT_FALSE(mmdb::explainCandidates(db(), r, out).ok());
    EXPECT_FALSE(mmdb::searchExhaustive(db(), r).ok());
    EXPECT_FALSE(mmdb::searchRange(db(), r, 0, 100).ok());
    SearchResult result;
    EXPECT_FALSE(mmdb::searchBatch(db(), {&r, 1}, {&result, 1}).ok());
    return message;
  };
  w[6] = 0.f;
  EXPECT_NE(refused(w, "trajectory_direction"), "accepted");
  w[6] = -1.f;
  EXPECT_NE(refused(w, "trajectory_direction"), "accepted");
  w[6] = 1.f;
  w[0] = NAN;
  EXPECT_NE(refused(w, "left_foot_position"), "accepted");
  w[0] = INFINITY;
  EXPECT_NE(refused(w, "left_foot_position"), "accepted");
  EXPECT_NE(refused(std::vector<float>(3, 1.f), "3 block weights"), "accepted");
  EXPECT_NE(refused(std::vector<float>(8, 1.f), "8 block weights"), "accepted");
}

// explainCandidates: out[0] is the search's winner and cost; each entry's blocks, transition and
// bias add up to its cost.
TEST_F(SearchWeightsAndBiases, ExplainedPartsAddUp) {
  std::vector<float> w{1.5f, 0.5f, 2.f, 1.f, 1.f, 0.3f, 2.5f};
  std::vector<mmdb::CandidateCost> out(8);
  for (uint32_t i = 0; i < 200; ++i) {
    auto row = db().featureRow((i * 53) % db().frameCount());
    std::vector<float> q(row.begin(), row.end());
    for (uint32_t c = 0; c < q.size(); ++c) q[c] += 0.1f * float((c + i) % 5) - 0.2f;
    SearchRequest r;
    r.query = q;
    r.block_weights = (i % 2) ? mmdb::Span<const float>(w) : mmdb::Span<const float>();
    r.current_frame = (i % 3) ? int32_t((i * 97) % db().frameCount()) : -1;
    r.transition_cost = (i % 4) * 0.1f;
    const uint32_t n = mmdb::explainCandidates(db(), r, out).value();
    const SearchResult found = mmdb::searchExhaustive(db(), r).value();
    ASSERT_EQ(out[0].frame, found.frame);
    ASSERT_EQ(out[0].cost, found.cost);
    for (uint32_t k = 0; k < n; ++k) {
      double sum = double(out[k].transition) + out[k].bias;
      for (uint32_t b = 0; b < out[k].block_count; ++b) sum += out[k].block_costs[b];
      ASSERT_NEAR(sum, out[k].cost, 1e-5 * std::max(1.0, std::fabs(sum))) << i << " " << k;
      ASSERT_EQ(out[k].bias, db().frameBias(uint32_t(out[k].frame)));
    }
  }
}

// A hand-made database: frame b (clip 3) is a copy of frame a (clip 1), so a query equal to
// their row ties them at cost 0, and the lower frame, a, wins. Biases then decide.
class BiasWinner : public ::testing::Test {
 protected:
  void SetUp() override {
    cooked_ = synthetic();
    a_ = cooked_.clips[1].first_frame + 100;
    b_ = cooked_.clips[3].first_frame + 100;
    const uint32_t stride = cooked_.feature_stride;
    std::copy_n(cooked_.features.begin() + size_t(a_) * stride, stride,
                cooked_.features.begin() + size_t(b_) * stride);
    mmdb::test::computeBounds(cooked_);
    query_.assign(cooked_.features.begin() + size_t(a_) * stride,
                  cooked_.features.begin() + size_t(a_) * stride + cooked_.feature_count);
  }
  // The range holding a global frame.
  size_t rangeOf(uint32_t frame) const {
    for (size_t r = 0; r < cooked_.ranges.size(); ++r)
      if (frame - cooked_.ranges[r].first_frame < cooked_.ranges[r].frame_count) return r;
    ADD_FAILURE() << "frame " << frame << " is not matchable";
    return 0;
  }
  SearchResult search(int32_t current, const mmdb::cook::CookedDatabase& cooked) {
    opened_ = open(cooked);
    SearchRequest r;
    r.query = query_;
    r.current_frame = current;
    const SearchResult e = mmdb::searchExhaustive(opened_.db, r).value();
    const SearchResult p = mmdb::searchPruned(opened_.db, r).value();
    EXPECT_EQ(e.frame, p.frame);
    EXPECT_EQ(e.cost, p.cost);
    return p;
  }

  mmdb::cook::CookedDatabase cooked_;
  Opened opened_;
  uint32_t a_ = 0, b_ = 0;
  std::vector<float> query_;
};

TEST_F(BiasWinner, ANegativeBiasPrefersARange) {
  SearchResult r = search(-1, cooked_);
  EXPECT_EQ(r.frame, int32_t(a_));
  EXPECT_EQ(r.cost, 0.f);
  mmdb::cook::CookedDatabase biased = cooked_;
  biased.ranges[rangeOf(b_)].bias = -0.2f;
  r = search(-1, biased);
  EXPECT_EQ(r.frame, int32_t(b_));
  EXPECT_EQ(r.cost, -0.2f);
}

TEST_F(BiasWinner, APositiveBiasAvoidsARange) {
  mmdb::cook::CookedDatabase biased = cooked_;
  biased.ranges[rangeOf(a_)].bias = 0.2f;
  const SearchResult r = search(-1, biased);
  EXPECT_EQ(r.frame, int32_t(b_));
  EXPECT_EQ(r.cost, 0.f);
}

// The frame playing carries its range's bias: playing a (its range preferred by -0.5), its copy
// b (preferred by only -0.1) does not win. Were the playing frame's bias left out, a would cost
// 0 and b -0.1, and the search would leave a range it prefers more.
TEST_F(BiasWinner, TheFramePlayingKeepsItsBias) {
  mmdb::cook::CookedDatabase biased = cooked_;
  biased.ranges[rangeOf(a_)].bias = -0.5f;
  biased.ranges[rangeOf(b_)].bias = -0.1f;
  SearchResult r = search(int32_t(a_), biased);
  EXPECT_EQ(r.frame, int32_t(a_));
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.cost, -0.5f);
  // Playing b, a's stronger preference wins.
  r = search(int32_t(b_), biased);
  EXPECT_EQ(r.frame, int32_t(a_));
  EXPECT_EQ(r.cost, -0.5f);
}

// A bias added to every range of the search moves no winner: all costs shift alike.
TEST_F(SearchWeightsAndBiases, AUniformBiasMovesNoWinner) {
  mmdb::cook::CookedDatabase uniform = synthetic();
  for (auto& c : uniform.clips) c.bias = 0.75f;
  for (auto& r : uniform.ranges) r.bias = 0.75f;
  const Opened plain = open(synthetic()), shifted = open(uniform);
  for (uint32_t i = 0; i < 300; ++i) {
    auto row = plain.db.featureRow((i * 41) % plain.db.frameCount());
    std::vector<float> q(row.begin(), row.end());
    q[(i * 7) % q.size()] += 1.f;
    SearchRequest r;
    r.query = q;
    r.current_frame = int32_t((i * 13) % plain.db.frameCount());
    const SearchResult x = mmdb::searchPruned(plain.db, r).value();
    const SearchResult y = mmdb::searchPruned(shifted.db, r).value();
    ASSERT_EQ(x.frame, y.frame) << i;
    ASSERT_EQ(x.cost + 0.75f, y.cost) << i;
  }
}

}  // namespace
