// The search's scan: the cost of a row, the bounds of a box, what a scan keeps, and the scalar
// pruned scan (internal). In an unnamed namespace, as in one file: each search file has its own
// copy. Which paths this build has (MMDB_SEARCH_AVX2) is decided here.
#pragma once

#include "mmdb/search.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

// MMDB_SEARCH_SCALAR (tests): the scalar path only. MMDB_SEARCH_ANY_WIDTH (tests): the AVX2
// path with its column count read at run time, as for feature counts other than 27.
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(MMDB_SEARCH_SCALAR)
#define MMDB_SEARCH_AVX2 1
#include <cpuid.h>
#include <immintrin.h>
#define MMDB_AVX2 __attribute__((target("avx2,fma,f16c")))
#else
#define MMDB_SEARCH_AVX2 0
#endif

namespace mmdb {
namespace {

// transition + sum of squared differences, left to right. The single definition of a cost
// (before its bias is added).
inline float rowCost(const float* query, const float* row, uint32_t n, float start) noexcept {
  float acc = start;
  for (uint32_t c = 0; c < n; ++c) {
    const float d = query[c] - row[c];
    acc += d * d;
  }
  return acc;
}

// rowCost() with run-time weights: each difference is multiplied by its column's weight before
// it is squared. A weight of 1 gives rowCost()'s floats exactly.
inline float weightedRowCost(const float* query, const float* row, const float* weight, uint32_t n,
                             float start) noexcept {
  float acc = start;
  for (uint32_t c = 0; c < n; ++c) {
    const float d = (query[c] - row[c]) * weight[c];
    acc += d * d;
  }
  return acc;
}

// rowCost() of kBlock consecutive rows at once. Each row keeps its own accumulator and the same
// column order, so every cost is bit-identical to rowCost(); interleaving rows only hides the
// latency of the dependent additions.
// With kWeighted, weightedRowCost()'s floats.
constexpr uint32_t kBlock = 8;
// Large boxes per group: the batch tests one box over kGroup large boxes for every request.
constexpr uint32_t kGroup = 8;
template <bool kWeighted>
inline void blockCosts(const float* query, const float* rows, uint32_t stride, uint32_t n,
                       float start, const float* weight, float* out) noexcept {
  float acc[kBlock];
  for (uint32_t k = 0; k < kBlock; ++k) acc[k] = start;
  for (uint32_t c = 0; c < n; ++c) {
    const float q = query[c];
    for (uint32_t k = 0; k < kBlock; ++k) {
      float d = q - rows[size_t(k) * stride + c];
      if (kWeighted) d *= weight[c];
      acc[k] += d * d;
    }
  }
  for (uint32_t k = 0; k < kBlock; ++k) out[k] = acc[k];
}

// A lower bound of rowCost() for any row inside [lo, hi] per column. Per column the distance
// to the box is at most |query - row| after rounding (float subtraction is monotone and
// symmetric), so each squared term, and each partial sum in the same order, is no larger. A
// weight keeps that: multiplying two such distances by the same positive float keeps their
// order (rounding is monotone).
template <bool kWeighted>
inline float boxTerm(float q, float lo, float hi, float weight) noexcept {
  // lo <= hi (open checks every feature lies inside its boxes), so at most one is positive.
  float d = std::max(std::max(lo - q, q - hi), 0.f);
  if (kWeighted) d *= weight;
  return d * d;
}

// Bounds of K consecutive boxes (rows `stride` apart), each summed in column order like
// boxBound of one box would be; interleaved only to overlap the additions.
template <uint32_t K, bool kWeighted>
inline void boxBounds(const float* query, const float* lo, const float* hi, const float* weight,
                      uint32_t stride, uint32_t n, float start, float* out) noexcept {
  float acc[K];
  for (uint32_t k = 0; k < K; ++k) acc[k] = start;
  for (uint32_t c = 0; c < n; ++c) {
    const float q = query[c];
    const float w = kWeighted ? weight[c] : 1.f;
    for (uint32_t k = 0; k < K; ++k)
      acc[k] += boxTerm<kWeighted>(q, lo[size_t(k) * stride + c], hi[size_t(k) * stride + c], w);
  }
  for (uint32_t k = 0; k < K; ++k) out[k] = acc[k];
}

// Box bounds computed K boxes at a time, ahead of the scan (a bound does not depend on the
// best cost, so comparing it later with a smaller best is still sound). No allocation.
template <uint32_t K, bool kWeighted>
struct BoundWindow {
  const float* query;
  const float* lo;
  const float* hi;
  const float* weight;
  uint32_t stride, n, boxes;
  float start;
  uint32_t first = 0, count = 0;
  float bound[K];

  BoundWindow(const float* query_, const float* lo_, const float* hi_, const float* weight_,
              uint32_t stride_, uint32_t n_, uint32_t boxes_, float start_) noexcept
      : query(query_),
        lo(lo_),
        hi(hi_),
        weight(weight_),
        stride(stride_),
        n(n_),
        boxes(boxes_),
        start(start_) {}

  float get(uint32_t box) noexcept {
    if (box - first >= count) fill(box);  // unsigned: also refills when box < first
    return bound[box - first];
  }
  void fill(uint32_t box) noexcept {
    first = box;
    count = std::min(K, boxes - box);
    const size_t row = size_t(box) * stride;
    if (count == K) {
      boxBounds<K, kWeighted>(query, lo + row, hi + row, weight, stride, n, start, bound);
      return;
    }
    for (uint32_t k = 0; k < count; ++k)
      boxBounds<1, kWeighted>(query, lo + row + size_t(k) * stride, hi + row + size_t(k) * stride,
                              weight, stride, n, start, bound + k);
  }
};

// Columns a search handles (open refuses more).
constexpr uint32_t kMaxColumns = 64;

struct Scan {
  const float* query;
  const float* features;
  uint32_t n, stride;
  // Database::halfFeatures() and its row errors (null when the database has none), and the
  // largest run-time weight, by which a row's error grows with the weights.
  const uint16_t* half = nullptr;
  const float* half_error = nullptr;
  float error_scale = 1.f;
  // halfRows()'s quick test: a distance past which a row's bound is above best_cost, and the
  // best and bias it was found for (NaN: none yet).
  float quick_best = std::numeric_limits<float>::quiet_NaN();
  float quick_bias = 0.f;
  float quick_low = std::numeric_limits<float>::infinity();
  float transition;
  int64_t current;
  int64_t neighbourhood;
  float best_cost;
  int64_t best_frame;
  uint32_t evaluated = 0;
  float bias = 0;                         // the cost bias of the range being scanned
  bool weighted = false;                  // some run-time weight is not 1
  alignas(32) float weight[kMaxColumns];  // per column: its block's run-time weight, else 1

  uint32_t margin = 0;         // SearchRequest::range_end_margin
  uint32_t cut = 0xFFFFFFFFu;  // frames of the range being scanned from here on are skipped
  // Rule 4: whether `frame`, of the range being scanned, is no candidate.
  bool skips(int64_t frame) const noexcept {
    return frame >= int64_t(cut) || (current >= 0 && std::llabs(frame - current) < neighbourhood);
  }
  // The range about to be scanned: its bias, and where its candidates end (a range keeps at
  // least its first frame, so a filter that passes a range always has a candidate).
  void enter(const MatchRange& range, float range_bias) noexcept {
    bias = range_bias;
    cut = range.first_frame + (range.frame_count > margin ? range.frame_count - margin
                                                          : std::min(range.frame_count, 1u));
  }
  // The best so far becomes (frame, cost) when that is cheaper, or as cheap with a lower frame
  // (frames visited out of order) unless the best is the current frame, which keeps its ties.
  void improve(uint32_t frame, float cost) noexcept {
    if (cost < best_cost ||
        (cost == best_cost && best_frame != current && int64_t(frame) < best_frame)) {
      best_cost = cost;
      best_frame = frame;
    }
  }
  // Whether a lower bound of the costs of frames >= first rules them all out.
  bool prunes(float bound, uint32_t first) const noexcept {
    return bound > best_cost ||
           (bound == best_cost && (best_frame == current || int64_t(first) >= best_frame));
  }
  // A row's sum from `start` (rule 2 of search.h), weighted or not.
  float rowSum(uint32_t frame, float start) const noexcept {
    const float* row = features + size_t(frame) * stride;
    return weighted ? weightedRowCost(query, row, weight, n, start) : rowCost(query, row, n, start);
  }
  // A candidate's cost: the row's sum from the transition cost, then its range's bias.
  float cost(uint32_t frame) const noexcept { return rowSum(frame, transition) + bias; }
  // blockCosts() of kBlock rows from `frame`, each with the bias added.
  void costs8(uint32_t frame, float* out) const noexcept {
    const float* rows = features + size_t(frame) * stride;
    if (weighted)
      blockCosts<true>(query, rows, stride, n, transition, weight, out);
    else
      blockCosts<false>(query, rows, stride, n, transition, weight, out);
    for (uint32_t k = 0; k < kBlock; ++k) out[k] += bias;
  }
  void consider(uint32_t frame) noexcept {
    if (skips(frame)) return;
    ++evaluated;
    improve(frame, cost(frame));
  }
  // Frames [first, end) in increasing order, kBlock rows at a time where they fit.
  void considerRun(uint32_t first, uint32_t end) noexcept {
    uint32_t f = first;
    float costs[kBlock];
    for (; f + kBlock <= end; f += kBlock) {
      costs8(f, costs);
      for (uint32_t k = 0; k < kBlock; ++k) {
        if (skips(f + k)) continue;
        ++evaluated;
        if (costs[k] < best_cost) {
          best_cost = costs[k];
          best_frame = f + k;
        }
      }
    }
    for (; f < end; ++f) consider(f);
  }
};

inline Scan startScan(const Database& db, const SearchRequest& request) noexcept {
  Scan s;
  s.query = request.query.data();
  s.features = db.features().data();
  s.n = db.featureCount();
  s.stride = db.featureStride();
  s.transition = request.transition_cost;
  s.current = request.current_frame;
  s.neighbourhood = request.neighbourhood_frames == kDefaultNeighbourhood
                        ? db.defaultNeighbourhoodFrames()
                        : request.neighbourhood_frames;
  s.margin = uint32_t(request.range_end_margin);
  s.best_frame = request.seeded ? request.current_frame : -1;
  s.best_cost = std::numeric_limits<float>::infinity();
  s.weighted = !request.block_weights.empty();
  for (uint32_t c = 0; c < kMaxColumns; ++c) s.weight[c] = 1.f;
  for (size_t b = 0; s.weighted && b < request.block_weights.size(); ++b) {
    const FeatureBlockInfo block = db.featureBlock(uint32_t(b));
    for (uint32_t c = block.first_column; c < block.first_column + block.width; ++c)
      s.weight[c] = request.block_weights[b];
  }
  if (!db.halfFeatures().empty()) {
    s.half = db.halfFeatures().data();
    s.half_error = db.halfFeatureErrors().data();
    s.error_scale = 0.f;
    for (uint32_t c = 0; c < s.n; ++c) s.error_scale = std::fmax(s.error_scale, s.weight[c]);
  }
  if (request.current_frame >= 0 && request.seeded) {
    // The frame playing carries its own bias, so that a biased range stays as preferred (or as
    // avoided) while it plays as when it was chosen.
    const uint32_t current = uint32_t(request.current_frame);
    s.best_cost = s.rowSum(current, 0.f) + db.frameBias(current);
  }
  return s;
}

// The result of a scan over some of the candidates: frame -1 when that part had none.
inline SearchResult finish(const Scan& s, const SearchRequest& request) noexcept {
  SearchResult r;
  r.frame = int32_t(s.best_frame);
  r.cost = s.best_cost;
  r.changed = s.best_frame != request.current_frame;
  r.evaluated = s.evaluated;
  return r;
}

// Range r's cost bias from the file's biases (empty: every bias is 0), read once per search.
inline float biasOf(Span<const float> biases, uint32_t r) noexcept {
  return biases.empty() ? 0.f : biases[r];
}

// Frames [first, end) of `range` clipped to [lo, hi); false when nothing is left.
inline bool clip(const MatchRange& range, uint32_t lo, uint32_t hi, uint32_t& first,
                 uint32_t& end) noexcept {
  first = std::max(range.first_frame, lo);
  end = std::min(range.first_frame + range.frame_count, hi);
  return first < end;
}

// The scalar pruned scan of candidates in [lo, hi): the file's boxes, bounds in column order.
// A bound is compared with the best only for frames of the range being scanned, so it adds that
// range's bias: float addition is monotone, so bound + bias <= sum + bias for the same bias.
template <bool kWeighted>
inline void prunedScalarOf(const Database& db, const SearchRequest& request, uint32_t lo,
                           uint32_t hi, Scan& scan) noexcept {
  const uint32_t n = scan.n, stride = scan.stride;
  const uint32_t small = db.boundsSmallSize(), large = db.boundsLargeSize();
  const uint32_t frames = db.frameCount();
  BoundWindow<8, kWeighted> large_bounds(scan.query, db.boundsLargeMin().data(),
                                         db.boundsLargeMax().data(), scan.weight, stride, n,
                                         (frames + large - 1) / large, scan.transition);
  BoundWindow<4, kWeighted> small_bounds(scan.query, db.boundsSmallMin().data(),
                                         db.boundsSmallMax().data(), scan.weight, stride, n,
                                         (frames + small - 1) / small, scan.transition);

  // Ranges are sorted, so frames are visited in increasing order as in the exhaustive scan: a
  // skipped frame could only tie a best found earlier, which has the lower index.
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
      if (large_bounds.get(lb) + scan.bias >= scan.best_cost) {
        f = large_end;
        continue;
      }
      while (f < large_end) {
        const uint32_t sb = f / small;
        const uint32_t small_end = std::min(large_end, (sb + 1) * small);
        if (small_bounds.get(sb) + scan.bias < scan.best_cost) scan.considerRun(f, small_end);
        f = small_end;
      }
    }
  }
}

inline void prunedScalar(const Database& db, const SearchRequest& request, uint32_t lo, uint32_t hi,
                         Scan& scan) noexcept {
  if (scan.weighted)
    prunedScalarOf<true>(db, request, lo, hi, scan);
  else
    prunedScalarOf<false>(db, request, lo, hi, scan);
}

}  // namespace
}  // namespace mmdb
