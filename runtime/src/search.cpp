// Exhaustive and bounds-pruned search. Both accumulate every candidate's cost with rowCost() (or
// blockCosts(), which computes the same floats), so they agree bit for bit; the pruned search
// skips a box only when its bound reaches best, and the bound <= rowCost() holds in float for
// every frame in the box (see boxTerm).
#include "mmdb/search.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace mmdb {
namespace {

// transition + sum of squared differences, left to right. The single definition of a cost.
inline float rowCost(const float* query, const float* row, uint32_t n, float start) noexcept {
  float acc = start;
  for (uint32_t c = 0; c < n; ++c) {
    const float d = query[c] - row[c];
    acc += d * d;
  }
  return acc;
}

// rowCost() of kBlock consecutive rows at once. Each row keeps its own accumulator and the same
// column order, so every cost is bit-identical to rowCost(); interleaving rows only hides the
// latency of the dependent additions.
constexpr uint32_t kBlock = 8;
inline void blockCosts(const float* query, const float* rows, uint32_t stride, uint32_t n,
                       float start, float* out) noexcept {
  float acc[kBlock];
  for (uint32_t k = 0; k < kBlock; ++k) acc[k] = start;
  for (uint32_t c = 0; c < n; ++c) {
    const float q = query[c];
    for (uint32_t k = 0; k < kBlock; ++k) {
      const float d = q - rows[size_t(k) * stride + c];
      acc[k] += d * d;
    }
  }
  for (uint32_t k = 0; k < kBlock; ++k) out[k] = acc[k];
}

// A lower bound of rowCost() for any row inside [lo, hi] per column. Per column the distance
// to the box is at most |query - row| after rounding (float subtraction is monotone and
// symmetric), so each squared term, and each partial sum in the same order, is no larger.
inline float boxTerm(float q, float lo, float hi) noexcept {
  // lo <= hi (open checks every feature lies inside its boxes), so at most one is positive.
  const float d = std::max(std::max(lo - q, q - hi), 0.f);
  return d * d;
}

// Bounds of K consecutive boxes (rows `stride` apart), each summed in column order like
// boxBound of one box would be; interleaved only to overlap the additions.
template <uint32_t K>
inline void boxBounds(const float* query, const float* lo, const float* hi, uint32_t stride,
                      uint32_t n, float start, float* out) noexcept {
  float acc[K];
  for (uint32_t k = 0; k < K; ++k) acc[k] = start;
  for (uint32_t c = 0; c < n; ++c) {
    const float q = query[c];
    for (uint32_t k = 0; k < K; ++k)
      acc[k] += boxTerm(q, lo[size_t(k) * stride + c], hi[size_t(k) * stride + c]);
  }
  for (uint32_t k = 0; k < K; ++k) out[k] = acc[k];
}

// Box bounds computed K boxes at a time, ahead of the scan (a bound does not depend on the
// best cost, so comparing it later with a smaller best is still sound). No allocation.
template <uint32_t K>
struct BoundWindow {
  const float* query;
  const float* lo;
  const float* hi;
  uint32_t stride, n, boxes;
  float start;
  uint32_t first = 0, count = 0;
  float bound[K];

  BoundWindow(const float* query_, const float* lo_, const float* hi_, uint32_t stride_,
              uint32_t n_, uint32_t boxes_, float start_) noexcept
      : query(query_), lo(lo_), hi(hi_), stride(stride_), n(n_), boxes(boxes_), start(start_) {}

  float get(uint32_t box) noexcept {
    if (box - first >= count) fill(box);  // unsigned: also refills when box < first
    return bound[box - first];
  }
  void fill(uint32_t box) noexcept {
    first = box;
    count = std::min(K, boxes - box);
    const size_t row = size_t(box) * stride;
    if (count == K) {
      boxBounds<K>(query, lo + row, hi + row, stride, n, start, bound);
      return;
    }
    for (uint32_t k = 0; k < count; ++k)
      boxBounds<1>(query, lo + row + size_t(k) * stride, hi + row + size_t(k) * stride, stride,
                   n, start, bound + k);
  }
};

struct Scan {
  const float* query;
  const float* features;
  uint32_t n, stride;
  float transition;
  int64_t current;
  int64_t neighbourhood;
  float best_cost;
  int64_t best_frame;
  uint32_t evaluated = 0;

  bool nearCurrent(int64_t frame) const noexcept {
    return current >= 0 && std::llabs(frame - current) < neighbourhood;
  }
  void consider(uint32_t frame) noexcept {
    if (nearCurrent(frame)) return;
    ++evaluated;
    const float cost = rowCost(query, features + size_t(frame) * stride, n, transition);
    if (cost < best_cost) {
      best_cost = cost;
      best_frame = frame;
    }
  }
  // Frames [first, end) in increasing order, kBlock rows at a time where they fit.
  void considerRun(uint32_t first, uint32_t end) noexcept {
    uint32_t f = first;
    float costs[kBlock];
    for (; f + kBlock <= end; f += kBlock) {
      blockCosts(query, features + size_t(f) * stride, stride, n, transition, costs);
      for (uint32_t k = 0; k < kBlock; ++k) {
        if (nearCurrent(f + k)) continue;
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
  s.best_frame = request.current_frame;
  s.best_cost = std::numeric_limits<float>::infinity();
  if (request.current_frame >= 0)
    s.best_cost = rowCost(s.query, s.features + size_t(request.current_frame) * s.stride, s.n, 0.f);
  return s;
}

Result<SearchResult> finish(const Scan& s, const SearchRequest& request) noexcept {
  if (s.best_frame < 0)
    return Error(ErrorCode::NoMatch,
                 "search: no candidate frame (no matchable range passes the tag filter, or every "
                 "candidate's cost is NaN) and no current frame");
  if (!std::isfinite(s.best_cost))
    return Error::format(ErrorCode::NoMatch,
                         "search: the best cost (frame %lld) is not finite: the database's "
                         "features hold NaN or inf (was the mapped file changed after open?)",
                         (long long)s.best_frame);
  SearchResult r;
  r.frame = int32_t(s.best_frame);
  r.cost = s.best_cost;
  r.changed = s.best_frame != request.current_frame;
  r.evaluated = s.evaluated;
  return r;
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
  return {};
}

Result<SearchResult> searchExhaustive(const Database& db, const SearchRequest& request) noexcept {
  if (Status s = validateSearch(db, request); !s) return s;
  Scan scan = startScan(db, request);
  for (const MatchRange& range : db.ranges()) {
    if (!request.filter.passes(range.tag_mask)) continue;
    scan.considerRun(range.first_frame, range.first_frame + range.frame_count);
  }
  return finish(scan, request);
}

Result<SearchResult> searchPruned(const Database& db, const SearchRequest& request) noexcept {
  if (Status s = validateSearch(db, request); !s) return s;
  Scan scan = startScan(db, request);
  const uint32_t n = scan.n, stride = scan.stride;
  const uint32_t small = db.boundsSmallSize(), large = db.boundsLargeSize();
  const uint32_t frames = db.frameCount();
  BoundWindow<8> large_bounds(scan.query, db.boundsLargeMin().data(), db.boundsLargeMax().data(),
                              stride, n, (frames + large - 1) / large, scan.transition);
  BoundWindow<4> small_bounds(scan.query, db.boundsSmallMin().data(), db.boundsSmallMax().data(),
                              stride, n, (frames + small - 1) / small, scan.transition);

  // Ranges are sorted, so frames are visited in increasing order as in the exhaustive scan: a
  // skipped frame could only tie a best found earlier, which has the lower index.
  for (const MatchRange& range : db.ranges()) {
    if (!request.filter.passes(range.tag_mask)) continue;
    const uint32_t end = range.first_frame + range.frame_count;
    uint32_t f = range.first_frame;
    while (f < end) {
      const uint32_t lb = f / large;
      const uint32_t large_end = std::min(end, (lb + 1) * large);
      if (large_bounds.get(lb) >= scan.best_cost) {
        f = large_end;
        continue;
      }
      while (f < large_end) {
        const uint32_t sb = f / small;
        const uint32_t small_end = std::min(large_end, (sb + 1) * small);
        if (small_bounds.get(sb) < scan.best_cost) scan.considerRun(f, small_end);
        f = small_end;
      }
    }
  }
  return finish(scan, request);
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
