// The AVX2 path's layout of a row, its prepared query and the kernels the pruned and the batched
// searches share: bounds 8 columns, 8 boxes or 8 rows at a time, and the half-precision row test
// (internal). In an unnamed namespace, as in one file.
#pragma once

#include "search/scan.h"

#if MMDB_SEARCH_AVX2

namespace mmdb {
namespace {

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

inline bool haveAvx2() noexcept {
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

}  // namespace
}  // namespace mmdb

#endif  // MMDB_SEARCH_AVX2
