// Search on a database cooked from real motion capture (bandai-1), when the corpus is present:
// pruned, batched and split searches agree with the exhaustive one on 10,000 game queries, and
// rows find themselves.
#include "real_database.h"

#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

// Each of 10,000 game queries with transition costs 0 and 0.5: searchPruned, searchBatch (64
// at a time, without and with a scratch) and, for every tenth, a search split in three parts and
// merged, all bit-identical to searchExhaustive.
TEST(SearchReal, PrunedAndBatchAgreeWithExhaustiveOnBandai) {
  std::string why;
  const mmdb::test::RealDatabase* real = mmdb::test::bandaiDatabase(&why);
  if (!real) GTEST_SKIP() << why;
  const mmdb::Database& db = real->db;
  std::vector<std::vector<float>> queries;
  std::vector<int32_t> current;
  mmdb::test::makeGameQueries(db, 10000, 99, queries, current);
  uint64_t rows_exhaustive = 0, rows_pruned = 0;
  int changed = 0;
  std::vector<mmdb::SearchRequest> requests(queries.size());
  std::vector<mmdb::SearchResult> batch(queries.size()), seeded(queries.size());
  std::vector<float> scratch(mmdb::batchScratchFloats(db));
  const uint32_t third = db.frameCount() / 3;
  for (const float transition : {0.f, 0.5f}) {
    for (size_t i = 0; i < queries.size(); ++i) {
      requests[i] = {};
      requests[i].query = queries[i];
      requests[i].current_frame = (i % 5 == 0) ? -1 : current[i];
      requests[i].transition_cost = transition;
    }
    for (size_t i = 0; i < requests.size(); i += 64) {
      const size_t n = std::min<size_t>(64, requests.size() - i);
      ASSERT_TRUE(mmdb::searchBatch(db, mmdb::Span<const mmdb::SearchRequest>(&requests[i], n),
                                    mmdb::Span<mmdb::SearchResult>(&batch[i], n))
                      .ok());
      ASSERT_TRUE(mmdb::searchBatch(db, mmdb::Span<const mmdb::SearchRequest>(&requests[i], n),
                                    mmdb::Span<mmdb::SearchResult>(&seeded[i], n), scratch)
                      .ok());
    }
    for (size_t i = 0; i < queries.size(); ++i) {
      const auto a = mmdb::searchExhaustive(db, requests[i]);
      const auto b = mmdb::searchPruned(db, requests[i]);
      ASSERT_TRUE(a.ok() && b.ok());
      ASSERT_EQ(a.value().frame, b.value().frame) << "query " << i << " transition " << transition;
      ASSERT_EQ(a.value().cost, b.value().cost) << "query " << i << " transition " << transition;
      ASSERT_EQ(a.value().frame, batch[i].frame) << "batch, query " << i;
      ASSERT_EQ(a.value().cost, batch[i].cost) << "batch, query " << i;
      ASSERT_EQ(a.value().frame, seeded[i].frame) << "batch with a scratch, query " << i;
      ASSERT_EQ(a.value().cost, seeded[i].cost) << "batch with a scratch, query " << i;
      if (i % 10 == 0) {
        mmdb::SearchResult merged = mmdb::searchRange(db, requests[i], 0, third + 7).value();
        merged = mmdb::mergeSearchResults(
            merged, mmdb::searchRange(db, requests[i], 2 * third, db.frameCount()).value());
        merged = mmdb::mergeSearchResults(
            merged, mmdb::searchRange(db, requests[i], third + 7, 2 * third).value());
        ASSERT_EQ(a.value().frame, merged.frame) << "split, query " << i;
        ASSERT_EQ(a.value().cost, merged.cost) << "split, query " << i;
      }
      rows_exhaustive += a.value().evaluated;
      rows_pruned += b.value().evaluated;
      changed += a.value().changed;
    }
  }
  std::printf(
      "bandai-1: %u frames; rows costed per query: exhaustive %.0f, pruned %.0f; "
      "%d of %zu searches switched\n",
      db.frameCount(), double(rows_exhaustive) / (2 * queries.size()),
      double(rows_pruned) / (2 * queries.size()), changed, 2 * queries.size());
  EXPECT_LT(rows_pruned * 5, rows_exhaustive);
}

TEST(SearchReal, MatchableRowsFindThemselves) {
  std::string why;
  const mmdb::test::RealDatabase* real = mmdb::test::bandaiDatabase(&why);
  if (!real) GTEST_SKIP() << why;
  const mmdb::Database& db = real->db;
  int checked = 0;
  for (const mmdb::MatchRange& r : db.ranges()) {
    const uint32_t f = r.first_frame + r.frame_count / 2;
    std::vector<float> q(db.featureRow(f).begin(), db.featureRow(f).end());
    mmdb::SearchRequest request;
    request.query = q;
    const auto found = mmdb::searchPruned(db, request);
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(found.value().cost, 0.f);
    // A duplicate row (identical frames) may win with a lower index; it must be identical.
    const auto row = db.featureRow(uint32_t(found.value().frame));
    for (size_t c = 0; c < q.size(); ++c) ASSERT_EQ(row[c], q[c]);
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
