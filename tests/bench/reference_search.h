// The baseline the runtime's pruned search is measured against: a search in the style of Daniel
// Holden's reference motion-matching database (written here from its description, not from its
// code). It walks the candidates in frame order; at each 64-frame box and then each 16-frame
// box it sums the box's bound column by column and stops as soon as the partial sum reaches the
// best cost so far (skipping the box), and it sums each row's cost the same way, abandoning the
// row as soon as its partial sum reaches the best. Costs of rows that complete are summed in
// column order from the transition cost, so its winners and costs are those of
// mmdb::searchExhaustive (same rules: current frame first, strictly cheaper, neighbourhood,
// tag filter).
#pragma once

#include <mmdb/database.h>
#include <mmdb/search.h>

namespace mmdb::test {

mmdb::SearchResult referenceSearch(const mmdb::Database& db, const mmdb::SearchRequest& request);

}  // namespace mmdb::test
