// Search on a database cooked from real motion capture (bandai-1), when the corpus is present:
// pruned and exhaustive agree on 10,000 game queries, and rows find themselves.
#include "real_database.h"

#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

namespace {

TEST(SearchReal, PrunedAgreesWithExhaustiveOnBandai) {
  std::string why;
  const mmtest::RealDatabase* real = mmtest::bandaiDatabase(&why);
  if (!real) GTEST_SKIP() << why;
  const mmdb::Database& db = real->db;
  std::vector<std::vector<float>> queries;
  std::vector<int32_t> current;
  mmtest::makeGameQueries(db, 10000, 99, queries, current);
  uint64_t rows_exhaustive = 0, rows_pruned = 0;
  int changed = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    mmdb::SearchRequest request;
    request.query = queries[i];
    request.current_frame = (i % 5 == 0) ? -1 : current[i];
    request.transition_cost = (i % 3 == 0) ? 0.1f : 0.f;
    const auto a = mmdb::searchExhaustive(db, request);
    const auto b = mmdb::searchPruned(db, request);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a.value().frame, b.value().frame) << "query " << i;
    ASSERT_EQ(a.value().cost, b.value().cost) << "query " << i;
    rows_exhaustive += a.value().evaluated;
    rows_pruned += b.value().evaluated;
    changed += a.value().changed;
  }
  std::printf("bandai-1: %u frames; rows evaluated per query: exhaustive %.0f, pruned %.0f; "
              "%d of %zu searches switched\n",
              db.frameCount(), double(rows_exhaustive) / queries.size(),
              double(rows_pruned) / queries.size(), changed, queries.size());
  EXPECT_LT(rows_pruned * 5, rows_exhaustive);
}

TEST(SearchReal, MatchableRowsFindThemselves) {
  std::string why;
  const mmtest::RealDatabase* real = mmtest::bandaiDatabase(&why);
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
