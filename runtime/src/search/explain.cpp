// Why a search chose its frame: the cost of every candidate, ranked; and a query in and out of
// the database's normalization.
#include "mmdb/search.h"

#include "database/half_features.h"
#include "search/avx2.h"
#include "search/scan.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace mmdb {

namespace {

// Whether `a` ranks before `b` in a search: cheaper, or as cheap and the frame playing, or as
// cheap and a lower frame.
bool ranksBefore(const CandidateCost& a, const CandidateCost& b) noexcept {
  if (a.cost != b.cost) return a.cost < b.cost;
  if (a.current != b.current) return a.current;
  return a.frame < b.frame;
}

// A frame's cost taken apart; `scan` gives the query, the weights and the candidate's bias
// (for the frame playing, its own bias).
CandidateCost explainRow(const Database& db, const Scan& scan, uint32_t frame, bool current,
                         float bias) noexcept {
  const uint32_t n = db.featureCount();
  const float* row = db.features().data() + size_t(frame) * db.featureStride();
  CandidateCost c;
  c.frame = int32_t(frame);
  c.current = current;
  c.transition = current ? 0.f : scan.transition;
  c.bias = bias;
  c.cost = scan.rowSum(frame, c.transition) + bias;
  c.block_count = db.featureBlockCount();
  for (uint32_t b = 0; b < c.block_count; ++b) {
    const FeatureBlockInfo block = db.featureBlock(b);
    const uint32_t first = block.first_column;
    c.block_costs[b] = weightedRowCost(scan.query + first, row + first, scan.weight + first,
                                       std::min<uint32_t>(block.width, n - first), 0.f);
  }
  return c;
}

}  // namespace

Result<uint32_t> explainCandidates(const Database& db, const SearchRequest& request,
                                   Span<CandidateCost> out) noexcept {
  if (Status s = validateSearch(db, request); !s) return s;
  uint64_t matchable = 0;
  for (const MatchRange& range : db.ranges()) matchable += range.frame_count;
  if (out.empty() || out.size() > matchable)
    return Error::format(ErrorCode::InvalidArgument,
                         "explainCandidates: asked for %zu candidates; the database has %llu "
                         "matchable frames (ask for 1 to that many)",
                         out.size(), static_cast<unsigned long long>(matchable));
  if (db.featureBlockCount() > kMaxExplainedBlocks)
    return Error::format(ErrorCode::InvalidArgument,
                         "explainCandidates: the file has %u feature blocks, more than %u",
                         db.featureBlockCount(), kMaxExplainedBlocks);
  Scan scan = startScan(db, request);
  // The best out.size() so far, as a heap whose top is the worst of them.
  size_t kept = 0;
  auto offer = [&](const CandidateCost& c) {
    if (std::isnan(c.cost)) return;  // never a winner (a file changed after open)
    if (kept < out.size()) {
      out[kept++] = c;
      std::push_heap(out.begin(), out.begin() + kept, ranksBefore);
    } else if (ranksBefore(c, out[0])) {
      std::pop_heap(out.begin(), out.begin() + kept, ranksBefore);
      out[kept - 1] = c;
      std::push_heap(out.begin(), out.begin() + kept, ranksBefore);
    }
  };
  if (request.current_frame >= 0 && request.seeded) {
    const uint32_t current = uint32_t(request.current_frame);
    offer(explainRow(db, scan, current, true, db.frameBias(current)));
  }
  const Span<const MatchRange> ranges = db.ranges();
  const Span<const float> biases = db.rangeBiases();
  for (uint32_t r = 0; r < ranges.size(); ++r) {
    const MatchRange& range = ranges[r];
    if (!request.filter.passes(range.tag_mask)) continue;
    scan.enter(range, biasOf(biases, r));
    for (uint32_t f = range.first_frame; f < range.first_frame + range.frame_count; ++f) {
      // The frame playing is the seed; the search never returns it as a candidate either.
      if (scan.skips(f) || int64_t(f) == scan.current) continue;
      offer(explainRow(db, scan, f, false, biasOf(biases, r)));
    }
  }
  if (kept == 0)
    return Error(ErrorCode::NoMatch, "explainCandidates: no frame playing and no candidate");
  std::sort_heap(out.begin(), out.begin() + kept, ranksBefore);
  return uint32_t(kept);
}

Status normalizeQuery(const Database& db, Span<const float> raw, Span<float> normalized) noexcept {
  const size_t n = db.featureCount();
  if (!db.valid() || raw.size() != n || normalized.size() != n)
    return Error::format(ErrorCode::InvalidArgument,
                         "normalizeQuery: %zu raw and %zu normalized floats for %zu features",
                         raw.size(), normalized.size(), n);
  const Span<const float> offset = db.featureOffset(), scale = db.featureScale();
  for (size_t c = 0; c < n; ++c) normalized[c] = (raw[c] - offset[c]) / scale[c];
  return {};
}

Status denormalizeQuery(const Database& db, Span<const float> normalized,
                        Span<float> raw) noexcept {
  const size_t n = db.featureCount();
  if (!db.valid() || raw.size() != n || normalized.size() != n)
    return Error::format(ErrorCode::InvalidArgument,
                         "denormalizeQuery: %zu normalized and %zu raw floats for %zu features",
                         normalized.size(), raw.size(), n);
  const Span<const float> offset = db.featureOffset(), scale = db.featureScale();
  for (size_t c = 0; c < n; ++c) raw[c] = normalized[c] * scale[c] + offset[c];
  return {};
}

}  // namespace mmdb
