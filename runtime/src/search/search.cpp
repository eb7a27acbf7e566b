// Exhaustive and bounds-pruned search. Every candidate's cost that decides a result is summed by
// rowCost() (or blockCosts(), which computes the same floats), so both searches agree bit for
// bit. The pruned search skips a box or a row only when a lower bound of its cost is already
// >= best: the file's 64- and 16-frame boxes (boxTerm), then the row itself. On x86-64 with AVX2
// and FMA the bounds are summed 8 columns and 8 boxes (or rows, or requests) at a time, in an
// order other than rowCost()'s and with fused multiply-adds, and then shrunk by kShrink, a
// margin larger than the rounding of any such sum, so that they stay below the cost rowCost()
// gives; there (with F16C too) a row is first bounded from its half-precision copy, whose
// error the bound takes off (halfRows()). Costs themselves are never fused (-ffp-contract=off,
// plain multiply then add). The batched search is in search/batch.cpp,
// the explanation of a search in search/explain.cpp.
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

#if MMDB_SEARCH_AVX2

// Bounds of 8 consecutive boxes for one query, computed ahead as BoundWindow does (without a
// range's bias: the caller adds it).
template <uint32_t kV, bool kWeighted>
struct BoxWindow {
  const Layout* layout;
  const PreparedQuery* query;
  const float* lo;
  const float* hi;
  uint32_t stride, boxes;
  float transition;
  const float* best;  // the scan's best cost: a window may stop at a partial bound above it
  uint32_t lanes;     // boxes per fill, at most 8 (the small boxes of one large box)
  // For the large boxes: the small boxes' min/max rows inside each (`inner` floats), asked for
  // ahead of use when the large box's bound is below best.
  const float* inner_lo = nullptr;
  const float* inner_hi = nullptr;
  size_t inner = 0, inner_total = 0;
  uint32_t first = 0, count = 0;
  alignas(32) float bound[8] = {};

  MMDB_AVX2 float get(uint32_t box) noexcept {
    if (box - first >= count) fill(box);
    return bound[box - first];
  }
  MMDB_AVX2 void fill(uint32_t box) noexcept {
    first = box;
    count = std::min(lanes, boxes - box);
    const PreparedQuery* q[8];
    const float* l[8];
    const float* h[8];
    for (uint32_t k = 0; k < 8; ++k) {
      const size_t b = std::min(box + k, boxes - 1);  // repeats the last box past the end
      q[k] = query;
      l[k] = lo + b * stride;
      h[k] = hi + b * stride;
    }
    _mm256_store_ps(bound, boxBounds8<kV, kWeighted>(*layout, q, l, h, _mm256_set1_ps(transition),
                                                     _mm256_set1_ps(*best), lanes));
    if (!inner_lo) return;
    for (uint32_t k = 0; k < count; ++k) {
      if (bound[k] >= *best) continue;
      const size_t at = std::min(size_t(box + k) * inner, inner_total);
      const size_t bytes = (std::min(at + inner, inner_total) - at) * sizeof(float);
      for (size_t b = 0; b < bytes; b += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(inner_lo + at) + b, _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(inner_hi + at) + b, _MM_HINT_T0);
      }
    }
  }
};

template <uint32_t kV, bool kWeighted>
MMDB_AVX2 void prunedAvx2(const Database& db, const SearchRequest& request, const Layout& layout,
                          uint32_t lo, uint32_t hi, Scan& scan) noexcept {
  PreparedQuery pq;
  prepare(layout, scan, pq);
  const uint32_t small = db.boundsSmallSize(), large = db.boundsLargeSize();
  const uint32_t frames = db.frameCount(), stride = scan.stride;
  BoxWindow<kV, kWeighted> large_bounds{&layout,
                                        &pq,
                                        db.boundsLargeMin().data(),
                                        db.boundsLargeMax().data(),
                                        stride,
                                        (frames + large - 1) / large,
                                        scan.transition,
                                        &scan.best_cost,
                                        8};
  BoxWindow<kV, kWeighted> small_bounds{&layout,
                                        &pq,
                                        db.boundsSmallMin().data(),
                                        db.boundsSmallMax().data(),
                                        stride,
                                        (frames + small - 1) / small,
                                        scan.transition,
                                        &scan.best_cost,
                                        std::max(1u, std::min(8u, large / small))};
  large_bounds.inner_lo = db.boundsSmallMin().data();
  large_bounds.inner_hi = db.boundsSmallMax().data();
  large_bounds.inner = size_t(large / small) * stride;
  large_bounds.inner_total = db.boundsSmallMin().size();
  const Span<const MatchRange> ranges = db.ranges();
  const Span<const float> biases = db.rangeBiases();
  for (uint32_t r = 0; r < ranges.size(); ++r) {
    const MatchRange& range = ranges[r];
    if (!request.filter.passes(range.tag_mask)) continue;
    uint32_t f, end;
    if (!clip(range, lo, hi, f, end)) continue;
    scan.enter(range, biasOf(biases, r));
    while (f < end) {
      const uint32_t lb = f / large;
      const uint32_t large_end = std::min(end, (lb + 1) * large);
      if (scan.prunes(large_bounds.get(lb) + scan.bias, f)) {
        f = large_end;
        continue;
      }
      for (uint32_t g = f; g < large_end;) {  // the rows of the small boxes that pass, ahead
        const uint32_t sb = g / small;
        const uint32_t small_end = std::min(large_end, (sb + 1) * small);
        if (!scan.prunes(small_bounds.get(sb) + scan.bias, g)) prefetchRows(scan, g, small_end);
        g = small_end;
      }
      while (f < large_end) {
        const uint32_t sb = f / small;
        const uint32_t small_end = std::min(large_end, (sb + 1) * small);
        if (!scan.prunes(small_bounds.get(sb) + scan.bias, f))
          considerRows<kV, kWeighted>(layout, pq, scan, f, small_end, frames);
        f = small_end;
      }
    }
  }
}

#endif  // MMDB_SEARCH_AVX2

}  // namespace

#if MMDB_SEARCH_AVX2
bool detail::halfFeaturesSupported() noexcept { return haveAvx2(); }

MMDB_AVX2 void detail::makeHalfFeatures(const float* features, uint32_t frames, uint32_t stride,
                                        uint32_t n, uint16_t* rows, float* errors) noexcept {
  // Each row's n columns (at most kMaxColumns: open refuses more) converted 8 at a time from a
  // copy padded with zeros, whose halves are 0; the columns past them are 0 too.
  const uint32_t used = std::min(n, kMaxColumns), converted = (used + 7) / 8 * 8;
  const uint32_t kept = std::min(converted, stride);
  alignas(32) float in[kMaxColumns] = {};
  alignas(16) uint16_t out[kMaxColumns];
  for (uint32_t f = 0; f < frames; ++f) {
    std::memcpy(in, features + size_t(f) * stride, used * sizeof(float));
    // The differences are exact (a half is a float near its value) and their squares summed in
    // float: at most 64 terms, within 80 * 2^-24 of the sum, which the 2^-16 added covers; the
    // root then goes up a float step. A value past the largest half, or not finite, makes the
    // sum infinite or NaN.
    __m256 sum = _mm256_setzero_ps();
    for (uint32_t c = 0; c < converted; c += 8) {
      const __m256 x = _mm256_load_ps(in + c);
      const __m128i bits = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
      _mm_store_si128(reinterpret_cast<__m128i*>(out + c), bits);
      const __m256 d = _mm256_sub_ps(x, _mm256_cvtph_ps(bits));
      sum = _mm256_fmadd_ps(d, d, sum);
    }
    uint16_t* row = rows + size_t(f) * stride;
    std::memcpy(row, out, kept * sizeof(uint16_t));
    std::fill(row + kept, row + stride, uint16_t(0));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sum);
    float total = 0.f;
    for (const float v : lanes) total += v;
    errors[f] = std::isnan(total) ? std::numeric_limits<float>::infinity()
                                  : std::nextafter(std::sqrt(total * (1.f + 0x1p-16f)),
                                                   std::numeric_limits<float>::infinity());
  }
}
#else
bool detail::halfFeaturesSupported() noexcept { return false; }
void detail::makeHalfFeatures(const float*, uint32_t, uint32_t, uint32_t, uint16_t*,
                              float*) noexcept {}
#endif

namespace {

// The pruned scan of [lo, hi) into `scan`, on the fastest path this machine has.
void pruned(const Database& db, const SearchRequest& request, uint32_t lo, uint32_t hi,
            Scan& scan) noexcept {
#if MMDB_SEARCH_AVX2
  Layout layout;
  if (haveAvx2() && avx2Layout(scan.n, layout)) {
    const bool four = layout.vectors == 4 && !kAnyWidth;
    if (scan.weighted)
      four ? prunedAvx2<4, true>(db, request, layout, lo, hi, scan)
           : prunedAvx2<0, true>(db, request, layout, lo, hi, scan);
    else
      four ? prunedAvx2<4, false>(db, request, layout, lo, hi, scan)
           : prunedAvx2<0, false>(db, request, layout, lo, hi, scan);
    return;
  }
#endif
  prunedScalar(db, request, lo, hi, scan);
}

}  // namespace

Status validateSearch(const Database& db, const SearchRequest& request) noexcept {
  if (!db.valid() || db.frameCount() == 0)
    return Error(ErrorCode::InvalidArgument, "search: the database is empty (not opened)");
  if (request.query.size() != db.featureCount() || !request.query.data())
    return Error::format(ErrorCode::InvalidArgument,
                         "search: the query has %zu floats, the database has %u features",
                         request.query.size(), unsigned(db.featureCount()));
  for (size_t c = 0; c < request.query.size(); ++c)
    if (!std::isfinite(request.query[c]))
      return Error::format(ErrorCode::InvalidArgument, "search: query[%zu] is not finite", c);
  if (request.current_frame < -1 || request.current_frame >= int64_t(db.frameCount()))
    return Error::format(ErrorCode::InvalidArgument,
                         "search: current frame %d is outside [-1, %u) (global frames)",
                         request.current_frame, db.frameCount());
  if (!std::isfinite(request.transition_cost) || request.transition_cost < 0)
    return Error::format(ErrorCode::InvalidArgument,
                         "search: transition cost %g must be finite and >= 0",
                         double(request.transition_cost));
  if (request.neighbourhood_frames < 0 && request.neighbourhood_frames != kDefaultNeighbourhood)
    return Error::format(ErrorCode::InvalidArgument,
                         "search: neighbourhood %d frames must be >= 0 (or kDefaultNeighbourhood)",
                         request.neighbourhood_frames);
  if (request.range_end_margin < 0)
    return Error::format(ErrorCode::InvalidArgument,
                         "search: range end margin %d frames must be >= 0",
                         request.range_end_margin);
  if (request.block_weights.empty()) return {};
  if (request.block_weights.size() != db.featureBlockCount() || !request.block_weights.data())
    return Error::format(ErrorCode::InvalidArgument,
                         "search: %zu block weights for the database's %u feature blocks (give "
                         "one per block, in the file's block order, or none)",
                         request.block_weights.size(), db.featureBlockCount());
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b) {
    const float w = request.block_weights[b];
    if (!(std::isfinite(w) && w > 0))
      return Error::format(ErrorCode::InvalidArgument,
                           "search: block weight %u (%.*s) is %g; a weight must be finite and "
                           "> 0 (1 = as cooked)",
                           b, int(std::min<size_t>(db.featureBlock(b).name.size(), 64)),
                           db.featureBlock(b).name.data(), double(w));
  }
  return {};
}

Result<SearchResult> searchExhaustive(const Database& db, const SearchRequest& request) noexcept {
  if (Status s = validateSearch(db, request); !s) return s;
  Scan scan = startScan(db, request);
  const Span<const MatchRange> ranges = db.ranges();
  const Span<const float> biases = db.rangeBiases();
  for (uint32_t r = 0; r < ranges.size(); ++r) {
    if (!request.filter.passes(ranges[r].tag_mask)) continue;
    scan.enter(ranges[r], biasOf(biases, r));
    scan.considerRun(ranges[r].first_frame, ranges[r].first_frame + ranges[r].frame_count);
  }
  const SearchResult r = finish(scan, request);
  if (Status s = checkMatch(r); !s) return s;
  return r;
}

Result<SearchResult> searchPruned(const Database& db, const SearchRequest& request) noexcept {
  if (Status s = validateSearch(db, request); !s) return s;
  Scan scan = startScan(db, request);
  pruned(db, request, 0, db.frameCount(), scan);
  const SearchResult r = finish(scan, request);
  if (Status s = checkMatch(r); !s) return s;
  return r;
}

Result<SearchResult> searchRange(const Database& db, const SearchRequest& request,
                                 uint32_t first_frame, uint32_t end_frame) noexcept {
  if (Status s = validateSearch(db, request); !s) return s;
  if (first_frame > end_frame)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchRange: first frame %u is after end frame %u", first_frame,
                         end_frame);
  Scan scan = startScan(db, request);
  pruned(db, request, first_frame, std::min(end_frame, db.frameCount()), scan);
  return finish(scan, request);
}

SearchResult mergeSearchResults(const SearchResult& a, const SearchResult& b) noexcept {
  const bool take_b =
      b.cost < a.cost || (b.cost == a.cost && b.frame >= 0 && (a.frame < 0 || b.frame < a.frame));
  SearchResult r = take_b ? b : a;
  r.evaluated = a.evaluated + b.evaluated;
  return r;
}

Status checkMatch(const SearchResult& result) noexcept {
  if (result.frame < 0)
    return Error(ErrorCode::NoMatch,
                 "search: no candidate frame (no matchable range passes the tag filter, or every "
                 "candidate's cost is NaN) and no current frame");
  if (!std::isfinite(result.cost))
    return Error::format(ErrorCode::NoMatch,
                         "search: the best cost (frame %d) is not finite: the database's "
                         "features hold NaN or inf (was the mapped file changed after open?)",
                         result.frame);
  return {};
}

}  // namespace mmdb
