// Exhaustive and bounds-pruned search. Every candidate's cost that decides a result is summed by
// rowCost() (or blockCosts(), which computes the same floats), so both searches agree bit for
// bit. The pruned search skips a box or a row only when a lower bound of its cost is already
// >= best: the file's 64- and 16-frame boxes (boxTerm), then the row itself. On x86-64 with AVX2
// and FMA the bounds are summed 8 columns and 8 boxes (or rows, or requests) at a time, in an
// order other than rowCost()'s and with fused multiply-adds, and then shrunk by kShrink, a
// margin larger than the rounding of any such sum, so that they stay below the cost rowCost()
// gives; there (with F16C too) a row is first bounded from its half-precision copy, whose
// error the bound takes off (halfRows()). Costs themselves are never fused (-ffp-contract=off,
// plain multiply then add).
#include "mmdb/search.h"

#include "database/half_features.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>

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

Scan startScan(const Database& db, const SearchRequest& request) noexcept {
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
SearchResult finish(const Scan& s, const SearchRequest& request) noexcept {
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
void prunedScalarOf(const Database& db, const SearchRequest& request, uint32_t lo, uint32_t hi,
                    Scan& scan) noexcept {
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

void prunedScalar(const Database& db, const SearchRequest& request, uint32_t lo, uint32_t hi,
                  Scan& scan) noexcept {
  if (scan.weighted)
    prunedScalarOf<true>(db, request, lo, hi, scan);
  else
    prunedScalarOf<false>(db, request, lo, hi, scan);
}

#if MMDB_SEARCH_AVX2

// A bound summed in another order than rowCost() can exceed it by the rounding of either sum:
// at most about 2 * 65 * 2^-24 relative for up to 64 columns and the transition cost (the bound
// adds exact products with fused multiply-adds, rowCost() rounded ones: one more 2^-24). 2^-16
// is about four times that; the multiply by it rounds by 2^-24 more. Per column the bound's
// distance is no larger than the row's (the same float, or 0 inside the box), so the shrunk sum
// is <= the cost rowCost() gives for any row the bound covers.
constexpr float kShrink = 1.f - 1.f / 65536.f;
// Clamp of a bound: if the sum overflowed, the cost is at least this (lowering a bound is safe).
constexpr float kHugeBound = FLT_MAX / 2;
constexpr uint32_t kMaxVectors = 8;  // up to 64 features on the AVX2 path
#ifdef MMDB_SEARCH_ANY_WIDTH
constexpr bool kAnyWidth = true;
#else
constexpr bool kAnyWidth = false;
#endif

// Columns in vectors of 8: vector v starts at column offset[v] (8 v, the last one n - 8, so that
// no load leaves a row); `keep` zeroes the last vector's lanes counted by the one before.
struct Layout {
  uint32_t vectors = 0;
  uint32_t offset[kMaxVectors] = {};
  alignas(32) int32_t keep[8] = {};
};

inline bool avx2Layout(uint32_t n, Layout& layout) noexcept {
  if (n < 8 || n > 8 * kMaxVectors) return false;
  layout.vectors = (n + 7) / 8;
  for (uint32_t v = 0; v + 1 < layout.vectors; ++v) layout.offset[v] = 8 * v;
  layout.offset[layout.vectors - 1] = n - 8;
  const uint32_t counted = 8 * (layout.vectors - 1);
  for (uint32_t i = 0; i < 8; ++i) layout.keep[i] = (n - 8 + i >= counted) ? -1 : 0;
  return true;
}

bool haveAvx2() noexcept {
  // F16C from CPUID itself: not every compiler's __builtin_cpu_supports() knows its name.
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  return have;
}

// The query and the per-column weights in the layout's vectors (32-byte aligned, one load
// each).
struct alignas(32) PreparedQuery {
  float v[kMaxVectors][8];
  float w[kMaxVectors][8];
};

inline void prepare(const Layout& layout, const Scan& scan, PreparedQuery& out) noexcept {
  for (uint32_t v = 0; v < layout.vectors; ++v) {
    std::memcpy(out.v[v], scan.query + layout.offset[v], 8 * sizeof(float));
    std::memcpy(out.w[v], scan.weight + layout.offset[v], 8 * sizeof(float));
  }
}

// Sum of the 8 lanes of each of a[0..7], as one vector [sum a0, ..., sum a7].
MMDB_AVX2 inline __m256 reduce8(const __m256* a) noexcept {
  const __m256 h1 = _mm256_hadd_ps(a[0], a[1]), h2 = _mm256_hadd_ps(a[2], a[3]);
  const __m256 h3 = _mm256_hadd_ps(a[4], a[5]), h4 = _mm256_hadd_ps(a[6], a[7]);
  const __m256 h12 = _mm256_hadd_ps(h1, h2), h34 = _mm256_hadd_ps(h3, h4);
  return _mm256_add_ps(_mm256_permute2f128_ps(h12, h34, 0x20),
                       _mm256_permute2f128_ps(h12, h34, 0x31));
}

// Eight sums at once, lane k for the pair (q[k], x[k]): with kBox, the box terms of query q[k]
// against the box whose min row is lo[k] and max row hi[k]; without, the squared differences
// of query q[k] and row lo[k]; with kWeighted, each distance times its column's weight first
// (as weightedRowCost() does). Vectors [from, to) are added to acc[k]; kV is the layout's
// vector count (0: layout.vectors, not known at compile time).
template <uint32_t kV, bool kBox, bool kWeighted>
MMDB_AVX2 inline void accumulate8(const Layout& layout, const PreparedQuery* const* q,
                                  const float* const* lo, const float* const* hi, __m256* acc,
                                  uint32_t from, uint32_t to, uint32_t lanes = 8) noexcept {
  const uint32_t vectors = kV ? kV : layout.vectors;
  const __m256 keep =
      _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(layout.keep)));
  for (uint32_t k = 0; k < lanes; ++k) {
    __m256 s = acc[k];
    for (uint32_t v = from; v < to; ++v) {
      const __m256 qv = _mm256_load_ps(q[k]->v[v]);
      __m256 d;
      if (kBox) {  // q - clamp(q, lo, hi): the same float as boxTerm's distance, or its negation
        const __m256 l = _mm256_loadu_ps(lo[k] + layout.offset[v]);
        const __m256 h = _mm256_loadu_ps(hi[k] + layout.offset[v]);
        d = _mm256_sub_ps(qv, _mm256_min_ps(_mm256_max_ps(qv, l), h));
      } else {
        d = _mm256_sub_ps(qv, _mm256_loadu_ps(lo[k] + layout.offset[v]));
      }
      if (kWeighted) d = _mm256_mul_ps(d, _mm256_load_ps(q[k]->w[v]));
      if (v + 1 == vectors) d = _mm256_and_ps(d, keep);
      s = _mm256_fmadd_ps(d, d, s);
    }
    acc[k] = s;
  }
}

template <uint32_t kV, bool kBox, bool kWeighted>
MMDB_AVX2 inline __m256 sums8(const Layout& layout, const PreparedQuery* const* q,
                              const float* const* lo, const float* const* hi) noexcept {
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  accumulate8<kV, kBox, kWeighted>(layout, q, lo, hi, acc, 0, kV ? kV : layout.vectors);
  return reduce8(acc);
}

// (transition + sums) shrunk and clamped: lower bounds of the costs.
MMDB_AVX2 inline __m256 shrink(__m256 transition, __m256 sums) noexcept {
  return _mm256_min_ps(_mm256_mul_ps(_mm256_add_ps(transition, sums), _mm256_set1_ps(kShrink)),
                       _mm256_set1_ps(kHugeBound));
}

// Lower bounds of 8 boxes (lane k: query q[k], box lo[k]/hi[k]) against best[k], of the first
// `lanes` only (the others are 0): the second half of the columns first (for 27 features,
// columns 16 to 26, the trajectory's, which differ most between a game's query and the boxes);
// when every lane's partial bound already reaches its best, the partial bounds are returned
// (still lower bounds, and enough to skip them all).
template <uint32_t kV, bool kWeighted>
MMDB_AVX2 inline __m256 boxBounds8(const Layout& layout, const PreparedQuery* const* q,
                                   const float* const* lo, const float* const* hi,
                                   __m256 transition, __m256 best, uint32_t lanes = 8) noexcept {
  const uint32_t vectors = kV ? kV : layout.vectors, half = vectors / 2;
  __m256 acc[8];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  if (half > 0) {
    accumulate8<kV, true, kWeighted>(layout, q, lo, hi, acc, half, vectors, lanes);
    const __m256 partial = shrink(transition, reduce8(acc));
    const uint32_t used = (1u << lanes) - 1;
    if ((uint32_t(_mm256_movemask_ps(_mm256_cmp_ps(partial, best, _CMP_LT_OQ))) & used) == 0)
      return partial;
  }
  accumulate8<kV, true, kWeighted>(layout, q, lo, hi, acc, 0, half, lanes);
  return shrink(transition, reduce8(acc));
}

// Asks for the feature rows [first, end) ahead of their use: the rows of the boxes that pass
// are scattered over a database larger than the caches, and this overlaps their misses. The
// half-precision rows where the database has them (considerRows() reads those first).
MMDB_AVX2 inline void prefetchRows(const Scan& scan, uint32_t first, uint32_t end) noexcept {
  const char* rows = scan.half ? reinterpret_cast<const char*>(scan.half)
                               : reinterpret_cast<const char*>(scan.features);
  const size_t row_bytes = size_t(scan.stride) * (scan.half ? sizeof(uint16_t) : sizeof(float));
  const char* e = rows + end * row_bytes;
  for (const char* p = rows + first * row_bytes; p < e; p += 64) _mm_prefetch(p, _MM_HINT_T0);
}

// The sums of the 8 rows from f against their half-precision copies: for each, S = D_h^2 shrunk,
// D_h the weighted distance of the query to the row's copy.
template <uint32_t kV, bool kWeighted>
MMDB_AVX2 inline __m256 halfSums8(const Layout& layout, const PreparedQuery& pq, const Scan& scan,
                                  uint32_t f) noexcept {
  const uint32_t vectors = kV ? kV : layout.vectors;
  const __m256 keep =
      _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(layout.keep)));
  __m256 acc[8];
  for (uint32_t k = 0; k < 8; ++k) {
    const uint16_t* row = scan.half + size_t(f + k) * scan.stride;
    __m256 sum = _mm256_setzero_ps();
    for (uint32_t v = 0; v < vectors; ++v) {
      const __m128i bits =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + layout.offset[v]));
      __m256 d = _mm256_sub_ps(_mm256_load_ps(pq.v[v]), _mm256_cvtph_ps(bits));
      if (kWeighted) d = _mm256_mul_ps(d, _mm256_load_ps(pq.w[v]));
      if (v + 1 == vectors) d = _mm256_and_ps(d, keep);
      sum = _mm256_fmadd_ps(d, d, sum);
    }
    acc[k] = sum;
  }
  return _mm256_mul_ps(reduce8(acc), _mm256_set1_ps(kShrink));
}

// The bound of a row whose distance less its error is `low` (>= 0): (transition + low^2)
// shrunk, then the scan's bias. Non-decreasing in low, as each of its float operations is.
MMDB_AVX2 inline __m256 halfBoundOf(const Scan& scan, __m256 low) noexcept {
  return _mm256_add_ps(shrink(_mm256_set1_ps(scan.transition), _mm256_mul_ps(low, low)),
                       _mm256_set1_ps(scan.bias));
}

// Lower bounds of the costs of 8 rows from their sums S (halfSums8()) and their errors times
// the largest weight (error_scale): the distance to the row's copy, less that error, is at most
// the distance to the row itself (triangle inequality: weighting scales each column's error by
// at most that weight). So halfBoundOf(max(sqrt(S) - error, 0)), computed low (S shrunk before
// its square root, the bound shrunk again as every bound is), bounds the row's cost. An error of
// +infinity (a value with no finite copy) gives a bound of the transition alone (NaN, from
// infinity less infinity, is taken as 0 too), which rules nothing out wrongly.
MMDB_AVX2 inline __m256 halfBounds(const Scan& scan, __m256 sums, __m256 error) noexcept {
  const __m256 distance = _mm256_sqrt_ps(sums);
  return halfBoundOf(scan, _mm256_max_ps(_mm256_sub_ps(distance, error), _mm256_setzero_ps()));
}

// halfRows()'s quick test for the scan's best and bias: a float L >= 2^-60 whose halfBoundOf() is
// above the best (found from sqrt((best - bias) / kShrink - transition), checked with the bound's
// own operations), or +infinity (no quick test) where none is found.
MMDB_AVX2 inline void refreshQuickTest(Scan& scan) noexcept {
  scan.quick_best = scan.best_cost;
  scan.quick_bias = scan.bias;
  scan.quick_low = std::numeric_limits<float>::infinity();
  const float room = (scan.best_cost - scan.bias) / kShrink - scan.transition;
  if (!(room < std::numeric_limits<float>::infinity())) return;
  float low = std::fmax(std::sqrt(std::fmax(room, 0.f)) * (1.f + 0x1p-10f), 0x1p-60f);
  for (int tries = 0; tries < 4; ++tries, low *= 2.f) {
    alignas(32) float bound[8];
    _mm256_store_ps(bound, halfBoundOf(scan, _mm256_set1_ps(low)));
    if (bound[0] > scan.best_cost) {
      scan.quick_low = low;
      return;
    }
  }
}

// The rows of 8 whose bound the quick test cannot rule out (bit k: row k), without a square
// root. With L the quick test's distance, c >= error + L and S >= c^2 (each rounded up by
// multiplying by 1 + 2^-22, past any rounding down of an operation) give sqrt(S) >= c, so the
// rounded square root is >= c too (c is a float), its difference with the error >= L, and the
// bound >= halfBoundOf(L) > best: the row is pruned. A c^2 of infinity rules nothing out (an
// infinite error).
MMDB_AVX2 inline uint32_t quickKeeps(const Scan& scan, __m256 sums, __m256 error) noexcept {
  const __m256 up = _mm256_set1_ps(1.f + 0x1p-22f);
  const __m256 c = _mm256_mul_ps(_mm256_add_ps(error, _mm256_set1_ps(scan.quick_low)), up);
  const __m256 limit = _mm256_mul_ps(_mm256_mul_ps(c, c), up);
  const __m256 ruled_out = _mm256_and_ps(
      _mm256_cmp_ps(sums, limit, _CMP_GE_OQ),
      _mm256_cmp_ps(limit, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ));
  return uint32_t(~_mm256_movemask_ps(ruled_out)) & 0xFFu;
}

// considerRows() on the half-precision rows, 16 from f (count <= 16, f + 16 <= the frame
// count): their sums (both halves in flight together); where the quick test rules every row
// out, nothing more; else their bounds, and of the rows whose bound is not above the best (one
// compare for all; a NaN bound stays in), those the best does not prune have their float rows
// asked for together and are costed in frame order.
template <uint32_t kV, bool kWeighted>
MMDB_AVX2 inline void halfRows(const Layout& layout, const PreparedQuery& pq, Scan& scan,
                               uint32_t f, uint32_t count) noexcept {
  const __m256 sums_low = halfSums8<kV, kWeighted>(layout, pq, scan, f);
  const __m256 sums_high = halfSums8<kV, kWeighted>(layout, pq, scan, f + 8);
  const __m256 scale = _mm256_set1_ps(scan.error_scale);
  const __m256 error_low = _mm256_mul_ps(_mm256_loadu_ps(scan.half_error + f), scale);
  const __m256 error_high = _mm256_mul_ps(_mm256_loadu_ps(scan.half_error + f + 8), scale);
  if (!(scan.quick_best == scan.best_cost && scan.quick_bias == scan.bias)) refreshQuickTest(scan);
  const uint32_t rows = (1u << count) - 1;
  if (!((quickKeeps(scan, sums_low, error_low) | quickKeeps(scan, sums_high, error_high) << 8) &
        rows))
    return;
  const __m256 low = halfBounds(scan, sums_low, error_low);
  const __m256 high = halfBounds(scan, sums_high, error_high);
  const __m256 best = _mm256_set1_ps(scan.best_cost);
  uint32_t maybe = uint32_t(_mm256_movemask_ps(_mm256_cmp_ps(low, best, _CMP_NGT_UQ))) |
                   uint32_t(_mm256_movemask_ps(_mm256_cmp_ps(high, best, _CMP_NGT_UQ))) << 8;
  maybe &= rows;
  if (!maybe) return;
  alignas(32) float bound[16];
  _mm256_store_ps(bound, low);
  _mm256_store_ps(bound + 8, high);
  uint32_t below = 0;
  for (uint32_t m = maybe; m; m &= m - 1) {
    const uint32_t k = uint32_t(__builtin_ctz(m));
    if (scan.prunes(bound[k], f + k)) continue;
    below |= 1u << k;
    const char* row = reinterpret_cast<const char*>(scan.features + size_t(f + k) * scan.stride);
    for (uint32_t b = 0; b < scan.stride * sizeof(float); b += 64)
      _mm_prefetch(row + b, _MM_HINT_T0);
  }
  for (; below; below &= below - 1) {
    const uint32_t k = uint32_t(__builtin_ctz(below));
    if (!scan.prunes(bound[k], f + k)) scan.consider(f + k);  // the best may have moved
  }
}

// Rows [f, f + count) (count <= 8) of one query from their float rows: their bounds 8 at a
// time, then rowCost() for those whose bound is below the best so far, in increasing frame
// order. The scan's bias is added to both (after the shrink: adding the same float keeps
// bound <= cost).
template <uint32_t kV, bool kWeighted>
MMDB_AVX2 inline void floatRows(const Layout& layout, const PreparedQuery& pq, Scan& scan,
                                uint32_t f, uint32_t count) noexcept {
  const PreparedQuery* q[8];
  const float* rows[8];
  for (uint32_t k = 0; k < 8; ++k) {
    q[k] = &pq;
    rows[k] = scan.features + size_t(f + k) * scan.stride;
  }
  alignas(32) float bound[8];
  _mm256_store_ps(bound, _mm256_add_ps(shrink(_mm256_set1_ps(scan.transition),
                                              sums8<kV, false, kWeighted>(layout, q, rows, rows)),
                                       _mm256_set1_ps(scan.bias)));
  uint32_t below = 0;
  for (uint32_t k = 0; k < count; ++k) below += !scan.prunes(bound[k], f + k);
  if (below < 2) {  // one row at most: its cost alone
    for (uint32_t k = 0; k < count; ++k)
      if (!scan.prunes(bound[k], f + k)) scan.consider(f + k);
    return;
  }
  // Several: the costs of all 8 rows at once (the same floats rowCost() gives, 8 additions in
  // flight instead of one), then taken in frame order as consider() would.
  float costs[kBlock];
  scan.costs8(f, costs);
  for (uint32_t k = 0; k < count; ++k) {
    if (scan.prunes(bound[k], f + k) || scan.skips(f + k)) continue;
    ++scan.evaluated;
    scan.improve(f + k, costs[k]);
  }
}

// Rows [f, end) of one query (those of a small box), in increasing frame order: from their
// half-precision copies 16 at a time where the database has them, else from their float rows
// 8 at a time; where a whole load would pass the last frame, one by one.
template <uint32_t kV, bool kWeighted>
MMDB_AVX2 inline void considerRows(const Layout& layout, const PreparedQuery& pq, Scan& scan,
                                   uint32_t f, uint32_t end, uint32_t frames) noexcept {
  const uint32_t chunk = scan.half ? 16 : 8;
  for (; f < end; f += chunk) {
    const uint32_t count = std::min(chunk, end - f);
    if (f + chunk > frames) {
      for (uint32_t k = 0; k < count; ++k) scan.consider(f + k);
    } else if (scan.half) {
      halfRows<kV, kWeighted>(layout, pq, scan, f, count);
    } else {
      floatRows<kV, kWeighted>(layout, pq, scan, f, count);
    }
  }
}

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

// The batch's queries transposed: column c of lane i at q[c][i], so that a box's min and max
// of a column, broadcast once, meet 8 requests per vector: no horizontal sums and no gathering
// of query pointers per box. Lane i is request i, or (packed) request[i]: the requests still
// searching a group or a large box, side by side, so that a box test of few of them takes few
// vectors.
template <bool kWeighted, uint32_t kColumns>
struct alignas(32) BatchLanes {
  float q[kColumns][kBatchChunk];
  float w[kWeighted ? kColumns : 1][kBatchChunk];
  float transition[kBatchChunk];
  float best[kBatchChunk];  // the requests' best costs, kept up to date by the batch
  alignas(32) int32_t request[kBatchChunk];
  uint32_t count = 0;
};

// Box terms of columns [from, to) for the K * 8 lanes from `lane`, added to acc[] (in any
// order: kShrink covers it). Column after column, every vector's in turn: the box's min and
// max are broadcast once per column, and the vectors' sums are independent chains of fused
// multiply-adds, which overlap.
template <uint32_t K, bool kWeighted, uint32_t kC>
MMDB_AVX2 inline void columnTerms(const BatchLanes<kWeighted, kC>& b, uint32_t lane,
                                  const float* lo, const float* hi, uint32_t from, uint32_t to,
                                  __m256* acc) noexcept {
  for (uint32_t c = from; c < to; ++c) {
    const __m256 l = _mm256_set1_ps(lo[c]), h = _mm256_set1_ps(hi[c]);
    for (uint32_t k = 0; k < K; ++k) {
      const __m256 q = _mm256_load_ps(&b.q[c][lane + 8 * k]);
      // q - clamp(q, lo, hi): boxTerm's distance or its negation
      __m256 d = _mm256_sub_ps(q, _mm256_min_ps(_mm256_max_ps(q, l), h));
      if (kWeighted) d = _mm256_mul_ps(d, _mm256_load_ps(&b.w[c][lane + 8 * k]));
      acc[k] = _mm256_fmadd_ps(d, d, acc[k]);
    }
  }
}

// The lanes of `active` (bits for the K * 8 lanes from `lane`) whose bound (transition + acc[]
// shrunk, plus `bias`) is below their best.
template <uint32_t K, bool kWeighted, uint32_t kC>
MMDB_AVX2 inline uint32_t lanesBelow(const BatchLanes<kWeighted, kC>& b, uint32_t lane,
                                     const __m256* acc, __m256 bias, uint32_t active) noexcept {
  uint32_t below = 0;
  for (uint32_t k = 0; k < K; ++k) {
    const __m256 bound =
        _mm256_add_ps(shrink(_mm256_load_ps(b.transition + lane + 8 * k), acc[k]), bias);
    below |= uint32_t(_mm256_movemask_ps(
                 _mm256_cmp_ps(bound, _mm256_load_ps(b.best + lane + 8 * k), _CMP_LT_OQ)))
             << (8 * k);
  }
  return below & active;
}

// The vectors of 8 lanes up to the last lane of a block's `active` (not 0).
inline uint32_t vectorsOf(uint32_t active) noexcept { return (32 - __builtin_clz(active) + 7) / 8; }

// boxesBelowBest() of the K * 8 lanes from `lane`. The second half of the columns first (for
// 27 features, 16 to 26, the trajectory's, which differ most between a game's query and a
// box): when no lane's partial bound is below its best, the rest is skipped.
template <uint32_t K, uint32_t kN, bool kWeighted, uint32_t kC>
MMDB_AVX2 inline uint32_t blockBelow(const BatchLanes<kWeighted, kC>& b, uint32_t n, uint32_t lane,
                                     uint32_t active, const float* lo, const float* hi,
                                     __m256 bias) noexcept {
  const uint32_t columns = kN ? kN : n, split = 8 * (((columns + 7) / 8) / 2);
  __m256 acc[K];
  for (__m256& a : acc) a = _mm256_setzero_ps();
  columnTerms<K, kWeighted>(b, lane, lo, hi, split, columns, acc);
  if (split > 0) {
    // The rest only up to the last vector with a lane still below its best.
    active = lanesBelow<K, kWeighted>(b, lane, acc, bias, active);
    if (!active) return 0;
    const uint32_t rest = vectorsOf(active);
    if (K >= 4 && rest == 4)
      columnTerms<K >= 4 ? 4 : 1, kWeighted>(b, lane, lo, hi, 0, split, acc);
    else if (K >= 3 && rest == 3)
      columnTerms<K >= 3 ? 3 : 1, kWeighted>(b, lane, lo, hi, 0, split, acc);
    else if (K >= 2 && rest == 2)
      columnTerms<K >= 2 ? 2 : 1, kWeighted>(b, lane, lo, hi, 0, split, acc);
    else
      columnTerms<1, kWeighted>(b, lane, lo, hi, 0, split, acc);
  }
  return lanesBelow<K, kWeighted>(b, lane, acc, bias, active);
}

// The lanes of `mask` whose bound for the box at box_lo/box_hi, plus the bias of the range
// being scanned, is below their `best` (each request's best, or its threshold() in a seeded
// batch), up to 32 lanes at a time (only the vectors up to the last active lane).
template <uint32_t kN, bool kWeighted, uint32_t kC>
MMDB_AVX2 inline uint64_t boxesBelowBest(const BatchLanes<kWeighted, kC>& b, uint32_t n,
                                         uint64_t mask, const float* box_lo, const float* box_hi,
                                         float bias) noexcept {
  const __m256 bias_v = _mm256_set1_ps(bias);
  uint64_t passed = 0;
  for (uint32_t lane = 0; lane < kBatchChunk; lane += 32) {
    const uint32_t active = uint32_t(mask >> lane);
    if (!active) continue;
    uint32_t below;
    switch (vectorsOf(active)) {
      case 1:
        below = blockBelow<1, kN, kWeighted>(b, n, lane, active, box_lo, box_hi, bias_v);
        break;
      case 2:
        below = blockBelow<2, kN, kWeighted>(b, n, lane, active, box_lo, box_hi, bias_v);
        break;
      case 3:
        below = blockBelow<3, kN, kWeighted>(b, n, lane, active, box_lo, box_hi, bias_v);
        break;
      default:
        below = blockBelow<4, kN, kWeighted>(b, n, lane, active, box_lo, box_hi, bias_v);
    }
    passed |= uint64_t(below) << lane;
  }
  return passed;
}

// Rows r[0..7] of 8 floats each, transposed: out[j] holds element j of every row.
MMDB_AVX2 inline void transpose8(const __m256* r, __m256* out) noexcept {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  out[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  out[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  out[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  out[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  out[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  out[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  out[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  out[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// The requests of `mask` packed side by side into `to` (its request[] says whose), from their
// own queries (pq, one request's columns in a row) and `from`'s transition costs (lane =
// request): 8 requests at a time, each vector of the layout transposed into 8 columns, where a
// gather per column measured slower.
template <bool kWeighted, uint32_t kC>
MMDB_AVX2 void packFromQueries(const Layout& layout, const PreparedQuery* pq,
                               const BatchLanes<kWeighted, kC>& from, uint64_t mask,
                               BatchLanes<kWeighted, kC>& to) noexcept {
  uint32_t m = 0;
  for (; mask; mask &= mask - 1) to.request[m++] = int32_t(__builtin_ctzll(mask));
  to.count = m;
  for (uint32_t j = m; j % 8; ++j) to.request[j] = to.request[0];
  for (uint32_t g = 0; 8 * g < m; ++g) {
    const PreparedQuery* q[8];
    for (uint32_t k = 0; k < 8; ++k) q[k] = &pq[to.request[8 * g + k]];
    for (uint32_t v = 0; v < layout.vectors; ++v) {
      // The last vector overlaps the one before (it ends at the last column): only its
      // columns from 8 v on are new.
      const uint32_t at = layout.offset[v], skip = 8 * v - at;
      __m256 rows[8], cols[8];
      for (uint32_t k = 0; k < 8; ++k) rows[k] = _mm256_load_ps(q[k]->v[v]);
      transpose8(rows, cols);
      for (uint32_t j = skip; j < 8; ++j) _mm256_store_ps(&to.q[at + j][8 * g], cols[j]);
      if (kWeighted) {
        for (uint32_t k = 0; k < 8; ++k) rows[k] = _mm256_load_ps(q[k]->w[v]);
        transpose8(rows, cols);
        for (uint32_t j = skip; j < 8; ++j) _mm256_store_ps(&to.w[at + j][8 * g], cols[j]);
      }
    }
    for (uint32_t k = 0; k < 8; ++k)
      to.transition[8 * g + k] = from.transition[to.request[8 * g + k]];
  }
}

// A packed set's best costs from the requests' (`all`, lane = request).
template <bool kWeighted, uint32_t kC>
MMDB_AVX2 inline void refreshBest(const BatchLanes<kWeighted, kC>& all,
                                  BatchLanes<kWeighted, kC>& packed) noexcept {
  for (uint32_t v = 0; 8 * v < packed.count; ++v) {
    const __m256i index =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(packed.request + 8 * v));
    _mm256_store_ps(packed.best + 8 * v, _mm256_i32gather_ps(all.best, index, 4));
  }
}

// The requests of a packed set's lanes in `lanes`.
inline uint64_t requestsOf(const int32_t* request, uint64_t lanes) noexcept {
  uint64_t r = 0;
  for (; lanes; lanes &= lanes - 1) r |= uint64_t(1) << request[__builtin_ctzll(lanes)];
  return r;
}

// The vectors of 8 lanes a transposed box test of `mask` takes.
inline uint32_t spreadOf(uint64_t mask) noexcept {
  uint32_t spread = 0;
  for (uint32_t lane = 0; lane < kBatchChunk; lane += 32)
    if (uint32_t(mask >> lane)) spread += vectorsOf(uint32_t(mask >> lane));
  return spread;
}
// Whether the lanes of `mask` are few for those vectors: two lanes a vector or fewer. Each such
// lane's small boxes are then tested on their own (boxBounds8: up to 8 boxes of one query at
// once), which measured faster than the transposed test there, and slower with more lanes.
inline bool sparse(uint64_t mask) noexcept {
  return uint32_t(__builtin_popcountll(mask)) <= 2 * spreadOf(mask);
}

// For each request of `requests` (bit i: request i), the small boxes [first, first + count)
// (count <= 64) tested query by query: bit i of out[b] is set when request i's bound of box
// first + b, plus `bias`, is below its best. The bounds of the transposed test, summed in
// another order.
template <uint32_t kV, bool kWeighted, uint32_t kC>
MMDB_AVX2 void smallBoxesOfEach(const Layout& layout, uint64_t requests, const PreparedQuery* pq,
                                const BatchLanes<kWeighted, kC>& all, const float* small_min,
                                const float* small_max, uint32_t stride, uint32_t first,
                                uint32_t count, float bias, uint64_t* out) noexcept {
  for (uint32_t b = 0; b < count; ++b) out[b] = 0;
  for (; requests; requests &= requests - 1) {
    const uint32_t i = uint32_t(__builtin_ctzll(requests));
    const float best = all.best[i];
    for (uint32_t b = 0; b < count; b += 8) {
      const uint32_t boxes = std::min(8u, count - b);
      const PreparedQuery* q[8];
      const float* l[8];
      const float* h[8];
      for (uint32_t k = 0; k < 8; ++k) {
        const size_t box = first + b + std::min(k, boxes - 1);  // repeats the last box
        q[k] = &pq[i];
        l[k] = small_min + box * stride;
        h[k] = small_max + box * stride;
      }
      // The early exit's threshold need not be exact: whatever it returns is a lower bound.
      alignas(32) float bound[8];
      _mm256_store_ps(bound, _mm256_add_ps(boxBounds8<kV, kWeighted>(
                                               layout, q, l, h, _mm256_set1_ps(all.transition[i]),
                                               _mm256_set1_ps(best - bias), boxes),
                                           _mm256_set1_ps(bias)));
      for (uint32_t k = 0; k < boxes; ++k)
        if (bound[k] < best) out[b + k] |= uint64_t(1) << i;
    }
  }
}

// The box over the large boxes of `group` (each column's min and max), at the layout's columns.
MMDB_AVX2 inline void groupBox(const Database& db, const Layout& layout, uint32_t group,
                               float* group_min, float* group_max) noexcept {
  const uint32_t stride = db.featureStride(), large = db.boundsLargeSize();
  const uint32_t large_boxes = (db.frameCount() + large - 1) / large;
  const float* large_min = db.boundsLargeMin().data();
  const float* large_max = db.boundsLargeMax().data();
  const uint32_t last = std::min((group + 1) * kGroup, large_boxes);
  for (uint32_t v = 0; v < layout.vectors; ++v) {
    const uint32_t c = layout.offset[v];
    const size_t first_box = size_t(group) * kGroup * stride;
    __m256 mn = _mm256_loadu_ps(large_min + first_box + c);
    __m256 mx = _mm256_loadu_ps(large_max + first_box + c);
    for (uint32_t b = group * kGroup + 1; b < last; ++b) {
      mn = _mm256_min_ps(mn, _mm256_loadu_ps(large_min + size_t(b) * stride + c));
      mx = _mm256_max_ps(mx, _mm256_loadu_ps(large_max + size_t(b) * stride + c));
    }
    _mm256_storeu_ps(group_min + c, mn);
    _mm256_storeu_ps(group_max + c, mx);
  }
}

// The first of the `count` consecutive boxes from `first` (count <= 8) whose bound for one
// query is lowest.
template <uint32_t kV, bool kWeighted>
MMDB_AVX2 inline uint32_t lowestBox(const Layout& layout, const PreparedQuery& pq, float transition,
                                    const float* box_min, const float* box_max, uint32_t stride,
                                    uint32_t first, uint32_t count) noexcept {
  const PreparedQuery* q[8];
  const float* l[8];
  const float* h[8];
  for (uint32_t k = 0; k < 8; ++k) {
    const size_t box = first + std::min(k, count - 1);
    q[k] = &pq;
    l[k] = box_min + box * stride;
    h[k] = box_max + box * stride;
  }
  // The whole bound, every column: sums8(), not boxBounds8(), which is inlined into the single
  // search's box windows only while it has few callers (with one more, that search measured
  // about 40 % slower).
  alignas(32) float bound[8];
  _mm256_store_ps(bound,
                  shrink(_mm256_set1_ps(transition), sums8<kV, true, kWeighted>(layout, q, l, h)));
  uint32_t lowest = 0;
  for (uint32_t k = 1; k < count; ++k)
    if (bound[k] < bound[lowest]) lowest = k;
  return first + lowest;
}

// Before the pass over [lo, hi): the bound of every group box for every request, stored for the
// pass (group_bounds[(group - first group) * kBatchChunk + request], without a range's bias),
// and a first best for each request. A request's best decides what the pass prunes, and the one
// it starts with (the frame playing, if any) is about 3 times the final cost on a game's queries,
// while the group with the lowest bound holds the winner about 4 times in 10 (bandai-1 at
// 240 Hz). So each request follows the lowest bound down, group, large box, small box, and
// costs that small box's rows where they are its candidates. These frames come out of order:
// Scan::improve() and Scan::prunes() keep the tie rule for them, and the pass compares bounds
// with threshold(best).
// Out of line: it runs once per batch, and the pass of a batch without seeds keeps its code.
template <uint32_t kV, uint32_t kN, bool kWeighted, uint32_t kC>
MMDB_AVX2 __attribute__((noinline)) void seedFromLowestGroups(
    const Database& db, const SearchRequest* requests, Scan* scans, uint32_t count,
    const Layout& layout, uint32_t lo, uint32_t hi, const BatchLanes<kWeighted, kC>& all,
    const PreparedQuery* pq, float* group_bounds) noexcept {
  const uint32_t n = kN ? kN : db.featureCount(), stride = db.featureStride();
  const uint32_t small = db.boundsSmallSize(), large = db.boundsLargeSize();
  const uint32_t frames = db.frameCount(), large_boxes = (frames + large - 1) / large;
  const uint32_t first_group = lo / large / kGroup, last_group = (hi - 1) / large / kGroup;
  const uint32_t vectors = (count + 7) / 8;
  __m256 lowest[kBatchChunk / 8];
  __m256i lowest_group[kBatchChunk / 8];
  for (uint32_t v = 0; v < vectors; ++v) {
    lowest[v] = _mm256_set1_ps(std::numeric_limits<float>::infinity());
    lowest_group[v] = _mm256_set1_epi32(int32_t(first_group));
  }
  alignas(32) float group_min[8 * kMaxVectors] = {}, group_max[8 * kMaxVectors] = {};
  for (uint32_t g = first_group; g <= last_group; ++g) {
    groupBox(db, layout, g, group_min, group_max);
    float* out = group_bounds + size_t(g - first_group) * kBatchChunk;
    const __m256 group = _mm256_castsi256_ps(_mm256_set1_epi32(int32_t(g)));
    for (uint32_t v0 = 0; v0 < vectors; v0 += 4) {
      __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                       _mm256_setzero_ps()};
      switch (std::min(4u, vectors - v0)) {
        case 1:
          columnTerms<1, kWeighted>(all, 8 * v0, group_min, group_max, 0, n, acc);
          break;
        case 2:
          columnTerms<2, kWeighted>(all, 8 * v0, group_min, group_max, 0, n, acc);
          break;
        case 3:
          columnTerms<3, kWeighted>(all, 8 * v0, group_min, group_max, 0, n, acc);
          break;
        default:
          columnTerms<4, kWeighted>(all, 8 * v0, group_min, group_max, 0, n, acc);
      }
      for (uint32_t k = 0; k < 4 && v0 + k < vectors; ++k) {
        const uint32_t v = v0 + k;
        const __m256 bound = shrink(_mm256_load_ps(all.transition + 8 * v), acc[k]);
        _mm256_storeu_ps(out + 8 * v, bound);
        const __m256 below = _mm256_cmp_ps(bound, lowest[v], _CMP_LT_OQ);
        lowest[v] = _mm256_blendv_ps(lowest[v], bound, below);
        lowest_group[v] = _mm256_castps_si256(
            _mm256_blendv_ps(_mm256_castsi256_ps(lowest_group[v]), group, below));
      }
    }
  }
  alignas(32) int32_t chosen[kBatchChunk];
  for (uint32_t v = 0; v < vectors; ++v)
    _mm256_store_si256(reinterpret_cast<__m256i*>(chosen + 8 * v), lowest_group[v]);
  const float* large_min = db.boundsLargeMin().data();
  const float* large_max = db.boundsLargeMax().data();
  const float* small_min = db.boundsSmallMin().data();
  const float* small_max = db.boundsSmallMax().data();
  const Span<const MatchRange> ranges = db.ranges();
  const Span<const float> biases = db.rangeBiases();
  for (uint32_t i = 0; i < count; ++i) {
    Scan& scan = scans[i];
    const uint32_t g = uint32_t(chosen[i]);
    const uint32_t first_large = g * kGroup;
    const uint32_t larges = std::min(first_large + kGroup, large_boxes) - first_large;
    const uint32_t lb = lowestBox<kV, kWeighted>(layout, pq[i], scan.transition, large_min,
                                                 large_max, stride, first_large, larges);
    const uint32_t first_small = lb * large / small;
    const uint32_t end_small = (std::min((lb + 1) * large, frames) + small - 1) / small;
    const uint32_t smalls = std::min(8u, end_small - first_small);
    const uint32_t sb = lowestBox<kV, kWeighted>(layout, pq[i], scan.transition, small_min,
                                                 small_max, stride, first_small, smalls);
    const uint32_t end = std::min({(sb + 1) * small, frames, hi});
    for (uint32_t f = std::max(sb * small, lo); f < end; ++f) {
      // The range holding f (ranges are sorted and do not overlap), if any.
      const MatchRange* range = std::upper_bound(
          ranges.begin(), ranges.end(), f,
          [](uint32_t frame, const MatchRange& r) { return frame < r.first_frame; });
      if (range == ranges.begin()) continue;
      --range;
      if (f - range->first_frame >= range->frame_count) continue;
      if (!requests[i].filter.passes(range->tag_mask)) continue;
      scan.enter(*range, biasOf(biases, uint32_t(range - ranges.begin())));
      if (scan.skips(f)) continue;
      ++scan.evaluated;
      scan.improve(f, scan.rowSum(f, scan.transition) + scan.bias);
    }
  }
}

// What a seeded pass compares a request's bounds with: the next float above its best, so that
// `<` lets through a bound equal to a best that may lie at a later frame (a seed) and tie an
// earlier one. A box that passes this way is decided by its rows (Scan::prunes, Scan::improve).
// std::nextafter() towards +inf, inline: the pass takes it after every small box it costs.
inline float threshold(float best) noexcept {
  if (!(best < std::numeric_limits<float>::infinity())) return best;
  if (best == 0.f) return std::numeric_limits<float>::denorm_min();
  uint32_t bits;
  std::memcpy(&bits, &best, sizeof bits);
  bits = best > 0.f ? bits + 1 : bits - 1;  // sign and magnitude: towards +inf
  std::memcpy(&best, &bits, sizeof bits);
  return best;
}

// One pass for up to 64 requests, after their seeds (seedFromLowestGroups): per range, the
// requests whose filter passes; per group of kGroup large boxes, then per large box, then per
// small box, the bounds of those still searching it, all of them against the same box
// (BatchLanes), packed side by side; per group of rows, each request that reached it. A request
// skips only boxes whose bound is above its best (or equal to it, with a best at a lower frame:
// Scan::prunes), so its result is its own search's.
// With kWeighted (some request has weights), every request's rows and boxes are weighted: a
// request without weights has weights of 1, which give its unweighted floats exactly.
// kN: the column count when known at compile time (0: read at run time).
template <uint32_t kV, uint32_t kN, bool kWeighted>
MMDB_AVX2 void batchAvx2(const Database& db, const SearchRequest* requests, Scan* scans,
                         uint32_t count, const Layout& layout, uint32_t lo, uint32_t hi,
                         float* group_bounds) noexcept {
  PreparedQuery pq[kBatchChunk];
  // Sized for the layout's columns (32 for the 27 features), not the most a file may have: the
  // two sets of lanes are most of the batch's stack.
  constexpr uint32_t kC = kV ? 8 * kV : kMaxColumns;
  BatchLanes<kWeighted, kC> all, in_group_lanes;
  const uint32_t n = db.featureCount();
  for (uint32_t c = 0; c < n; ++c) {
    for (uint32_t i = 0; i < kBatchChunk; ++i) {
      all.q[c][i] = i < count ? scans[i].query[c] : 0.f;
      if (kWeighted) all.w[c][i] = i < count ? scans[i].weight[c] : 1.f;
    }
  }
  for (uint32_t i = 0; i < kBatchChunk; ++i) {
    all.transition[i] = i < count ? scans[i].transition : 0.f;
    all.best[i] = i < count ? scans[i].best_cost : -std::numeric_limits<float>::infinity();
    all.request[i] = int32_t(i);
  }
  all.count = count;
  for (uint32_t i = 0; i < count; ++i) prepare(layout, scans[i], pq[i]);
  const uint32_t small = db.boundsSmallSize(), large = db.boundsLargeSize();
  const uint32_t frames = db.frameCount(), stride = db.featureStride();
  const float* large_min = db.boundsLargeMin().data();
  const float* large_max = db.boundsLargeMax().data();
  const float* small_min = db.boundsSmallMin().data();
  const float* small_max = db.boundsSmallMax().data();
  // Seeds, and the group bounds they leave for the pass, where the caller gave their memory.
  // Without it the pass tests each group itself.
  // Unseeded, a request's frames are visited in increasing order, so a bound equal to its best
  // can only tie a best of a lower frame, or the current frame, which keeps its ties: `<` on
  // the best itself is exact then.
  const uint32_t first_group = lo / large / kGroup;
  const bool seeded = group_bounds && lo < hi;
  if (seeded) {
    seedFromLowestGroups<kV, kN, kWeighted>(db, requests, scans, count, layout, lo, hi, all, pq,
                                            group_bounds);
  }
  auto bestOf = [seeded](const Scan& scan) {
    return seeded ? threshold(scan.best_cost) : scan.best_cost;
  };
  for (uint32_t i = 0; i < count; ++i) all.best[i] = bestOf(scans[i]);
  uint32_t group_index = ~0u;
  alignas(32) float group_min[8 * kMaxVectors] = {}, group_max[8 * kMaxVectors] = {};

  const Span<const MatchRange> ranges = db.ranges();
  const Span<const float> biases = db.rangeBiases();
  for (uint32_t r = 0; r < ranges.size(); ++r) {
    const MatchRange& range = ranges[r];
    uint32_t f, end;
    if (!clip(range, lo, hi, f, end)) continue;
    uint64_t in_range = 0;
    for (uint32_t i = 0; i < count; ++i)
      if (requests[i].filter.passes(range.tag_mask)) in_range |= uint64_t(1) << i;
    if (!in_range) continue;
    const float bias = biasOf(biases, r);
    for (uint32_t i = 0; i < count; ++i) scans[i].enter(range, bias);
    uint64_t in_group = 0;  // lanes of in_group_lanes when packed, else of all
    bool packed = false;
    uint32_t group_end = 0;
    while (f < end) {
      const uint32_t lb = f / large;
      const uint32_t large_end = std::min(end, (lb + 1) * large);
      if (f >= group_end) {
        // A new group of kGroup large boxes: one box over them, whose bound for every request
        // of the range the seeding left (or tested here: its min/max computed once for the
        // whole batch). Those it passes are packed for the large boxes' tests.
        const uint32_t group = lb / kGroup;
        group_end = std::min(end, (group + 1) * kGroup * large);
        uint64_t passed = 0;
        if (seeded) {
          const float* bound = group_bounds + size_t(group - first_group) * kBatchChunk;
          const __m256 bias_v = _mm256_set1_ps(bias);
          for (uint32_t v = 0; 8 * v < count; ++v) {
            const __m256 below =
                _mm256_cmp_ps(_mm256_add_ps(_mm256_loadu_ps(bound + 8 * v), bias_v),
                              _mm256_load_ps(all.best + 8 * v), _CMP_LT_OQ);
            passed |= uint64_t(uint32_t(_mm256_movemask_ps(below))) << (8 * v);
          }
          passed &= in_range;
        } else {
          if (group != group_index) {
            group_index = group;
            groupBox(db, layout, group, group_min, group_max);
          }
          passed = boxesBelowBest<kN, kWeighted>(all, n, in_range, group_min, group_max, bias);
        }
        if (!passed) {
          f = group_end;
          continue;
        }
        // Packed only when that saves vectors: packing (gathers) costs about as much as a box
        // test. On a database whose group boxes are loose nearly every request passes and
        // nothing is packed; where few pass, the large boxes' and small boxes' tests take few
        // vectors.
        const uint32_t m = uint32_t(__builtin_popcountll(passed));
        packed = (m + 7) / 8 + 2 <= spreadOf(passed);
        if (packed) {
          packFromQueries(layout, pq, all, passed, in_group_lanes);
          in_group = m == 64 ? ~uint64_t(0) : (uint64_t(1) << m) - 1;
        } else {
          in_group = passed;
        }
      }
      if (packed) refreshBest(all, in_group_lanes);
      const BatchLanes<kWeighted, kC>& in_large_lanes = packed ? in_group_lanes : all;
      const uint64_t large_lanes = boxesBelowBest<kN, kWeighted>(
          in_large_lanes, n, in_group, large_min + size_t(lb) * stride,
          large_max + size_t(lb) * stride, bias);
      if (!large_lanes) {
        f = large_end;
        continue;
      }
      // The small boxes' tests first (on the lanes that passed the large box), then their rows
      // (asked for ahead). Packing these lanes again measured slower: they are only 4 tests.
      const uint64_t in_large = large_lanes;
      uint64_t in_small_box[64];
      uint32_t boxes_here = 0;
      const uint32_t first_small = f / small, smalls = (large_end - 1) / small + 1 - first_small;
      if (smalls <= 64 && sparse(in_large)) {
        // Few lanes for the vectors they take: each request's own small boxes, up to 8 at once
        // as searchPruned() tests them, where each lane of the transposed test costs its
        // vector's work.
        smallBoxesOfEach<kV, kWeighted>(layout, requestsOf(in_large_lanes.request, in_large), pq,
                                        all, small_min, small_max, stride, first_small, smalls,
                                        bias, in_small_box);
        for (uint32_t b = 0; b < smalls; ++b)
          if (in_small_box[b])
            prefetchRows(scans[0], std::max(f, (first_small + b) * small),
                         std::min(large_end, (first_small + b + 1) * small));
      } else {
        for (uint32_t g = f; g < large_end; ++boxes_here) {
          const uint32_t sb = g / small;
          const uint32_t small_end = std::min(large_end, (sb + 1) * small);
          const uint64_t in_small =
              requestsOf(in_large_lanes.request,
                         boxesBelowBest<kN, kWeighted>(in_large_lanes, n, in_large,
                                                       small_min + size_t(sb) * stride,
                                                       small_max + size_t(sb) * stride, bias));
          if (boxes_here < 64) in_small_box[boxes_here] = in_small;
          if (in_small) prefetchRows(scans[0], g, small_end);
          g = small_end;
        }
      }
      for (uint32_t box = 0; f < large_end; ++box) {
        const uint32_t sb = f / small;
        const uint32_t small_end = std::min(large_end, (sb + 1) * small);
        uint64_t in_small;
        if (box < 64) {
          in_small = in_small_box[box];
        } else {
          if (packed) refreshBest(all, in_group_lanes);
          in_small = requestsOf(in_large_lanes.request,
                                boxesBelowBest<kN, kWeighted>(
                                    in_large_lanes, n, in_large, small_min + size_t(sb) * stride,
                                    small_max + size_t(sb) * stride, bias));
        }
        for (uint64_t m = in_small; m; m &= m - 1) {
          const uint32_t i = uint32_t(__builtin_ctzll(m));
          considerRows<kV, kWeighted>(layout, pq[i], scans[i], f, small_end, frames);
          all.best[i] = bestOf(scans[i]);
        }
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

Status validateBatch(const Database& db, Span<const SearchRequest> requests,
                     Span<SearchResult> results) noexcept {
  if (requests.size() != results.size())
    return Error::format(ErrorCode::InvalidArgument,
                         "searchBatch: %zu requests but room for %zu results", requests.size(),
                         results.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    if (Status s = validateSearch(db, requests[i]); !s)
      return Error::format(ErrorCode::InvalidArgument, "searchBatch: request %zu: %.180s", i,
                           s.message());
  }
  return {};
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

size_t batchScratchFloats(const Database& db) noexcept {
  if (!db.valid() || db.frameCount() == 0) return 0;
  const uint32_t large = db.boundsLargeSize();
  return size_t((db.frameCount() + large * kGroup - 1) / (large * kGroup)) * kBatchChunk;
}

Status searchBatchRange(const Database& db, Span<const SearchRequest> requests,
                        uint32_t first_frame, uint32_t end_frame, Span<SearchResult> results,
                        Span<float> scratch) noexcept {
  if (Status s = validateBatch(db, requests, results); !s) return s;
  if (first_frame > end_frame)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchBatchRange: first frame %u is after end frame %u", first_frame,
                         end_frame);
  const uint32_t hi = std::min(end_frame, db.frameCount());
  // The span's groups: the scratch holds each one's bounds for a chunk's requests.
  const uint32_t group_frames = db.boundsLargeSize() * kGroup;
  const size_t groups =
      first_frame < hi ? (hi - 1) / group_frames + 1 - first_frame / group_frames : 0;
  if (!scratch.empty() && scratch.size() < groups * kBatchChunk)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchBatch: the scratch holds %zu floats, frames %u to %u need %zu "
                         "(batchScratchFloats() gives enough for any frames)",
                         scratch.size(), first_frame, hi, groups * kBatchChunk);
#if MMDB_SEARCH_AVX2
  Layout layout;
  if (haveAvx2() && avx2Layout(db.featureCount(), layout)) {
    float* group_bounds = scratch.empty() ? nullptr : scratch.data();
    Scan scans[kBatchChunk];
    for (size_t done = 0; done < requests.size(); done += kBatchChunk) {
      const uint32_t count = uint32_t(std::min(kBatchChunk, requests.size() - done));
      bool weighted = false;
      for (uint32_t i = 0; i < count; ++i) {
        scans[i] = startScan(db, requests[done + i]);
        weighted = weighted || scans[i].weighted;
      }
      const SearchRequest* part = requests.data() + done;
      const bool four = layout.vectors == 4 && !kAnyWidth;
      const bool game = four && db.featureCount() == 27;  // the usual feature set
      const uint32_t lo = first_frame;
      if (weighted)
        game   ? batchAvx2<4, 27, true>(db, part, scans, count, layout, lo, hi, group_bounds)
        : four ? batchAvx2<4, 0, true>(db, part, scans, count, layout, lo, hi, group_bounds)
               : batchAvx2<0, 0, true>(db, part, scans, count, layout, lo, hi, group_bounds);
      else
        game   ? batchAvx2<4, 27, false>(db, part, scans, count, layout, lo, hi, group_bounds)
        : four ? batchAvx2<4, 0, false>(db, part, scans, count, layout, lo, hi, group_bounds)
               : batchAvx2<0, 0, false>(db, part, scans, count, layout, lo, hi, group_bounds);
      for (uint32_t i = 0; i < count; ++i) results[done + i] = finish(scans[i], requests[done + i]);
    }
    return {};
  }
#endif
  for (size_t i = 0; i < requests.size(); ++i) {
    Scan scan = startScan(db, requests[i]);
    prunedScalar(db, requests[i], first_frame, hi, scan);
    results[i] = finish(scan, requests[i]);
  }
  return {};
}

Status searchBatchRange(const Database& db, Span<const SearchRequest> requests,
                        uint32_t first_frame, uint32_t end_frame,
                        Span<SearchResult> results) noexcept {
  return searchBatchRange(db, requests, first_frame, end_frame, results, Span<float>());
}

Status searchBatch(const Database& db, Span<const SearchRequest> requests,
                   Span<SearchResult> results, Span<float> scratch) noexcept {
  if (Status s = searchBatchRange(db, requests, 0, db.frameCount(), results, scratch); !s) return s;
  for (size_t i = 0; i < results.size(); ++i) {
    if (Status s = checkMatch(results[i]); !s)
      return Error::format(ErrorCode::NoMatch, "request %zu: %.200s", i, s.message());
  }
  return {};
}

Status searchBatch(const Database& db, Span<const SearchRequest> requests,
                   Span<SearchResult> results) noexcept {
  return searchBatch(db, requests, results, Span<float>());
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
