// The batched search: many requests over the same frames, each box's bounds for up to 64 requests
// at once on the AVX2 path (one request after another elsewhere).
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

}  // namespace mmdb
