// Exhaustive and bounds-pruned search. Both accumulate every candidate's cost with rowCost(), so
// they agree bit for bit; the pruned search skips a box only when boxBound() >= best, and
// boxBound() <= rowCost() holds in float for every frame in the box (see boxBound).
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

// A lower bound of rowCost() for any row inside [lo, hi] per column. Per column the distance
// to the box is at most |query - row| after rounding (float subtraction is monotone and
// symmetric), so each squared term, and each partial sum in the same order, is no larger.
inline float boxBound(const float* query, const float* lo, const float* hi, uint32_t n,
                      float start) noexcept {
  float acc = start;
  for (uint32_t c = 0; c < n; ++c) {
    const float q = query[c];
    const float d = q > hi[c] ? q - hi[c] : (q < lo[c] ? lo[c] - q : 0.f);
    acc += d * d;
  }
  return acc;
}

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

SearchResult finish(const Scan& s, const SearchRequest& request) noexcept {
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
    const uint32_t end = range.first_frame + range.frame_count;
    for (uint32_t f = range.first_frame; f < end; ++f) scan.consider(f);
  }
  return finish(scan, request);
}

Result<SearchResult> searchPruned(const Database& db, const SearchRequest& request) noexcept {
  if (Status s = validateSearch(db, request); !s) return s;
  Scan scan = startScan(db, request);
  const uint32_t n = scan.n, stride = scan.stride;
  const uint32_t small = db.boundsSmallSize(), large = db.boundsLargeSize();
  const float* small_min = db.boundsSmallMin().data();
  const float* small_max = db.boundsSmallMax().data();
  const float* large_min = db.boundsLargeMin().data();
  const float* large_max = db.boundsLargeMax().data();

  // Ranges are sorted, so frames are visited in increasing order as in the exhaustive scan: a
  // skipped frame could only tie a best found earlier, which has the lower index.
  for (const MatchRange& range : db.ranges()) {
    if (!request.filter.passes(range.tag_mask)) continue;
    const uint32_t end = range.first_frame + range.frame_count;
    uint32_t f = range.first_frame;
    while (f < end) {
      const uint32_t lb = f / large;
      const uint32_t large_end = std::min(end, (lb + 1) * large);
      const size_t lrow = size_t(lb) * stride;
      if (boxBound(scan.query, large_min + lrow, large_max + lrow, n, scan.transition) >=
          scan.best_cost) {
        f = large_end;
        continue;
      }
      while (f < large_end) {
        const uint32_t sb = f / small;
        const uint32_t small_end = std::min(large_end, (sb + 1) * small);
        const size_t srow = size_t(sb) * stride;
        if (boxBound(scan.query, small_min + srow, small_max + srow, n, scan.transition) >=
            scan.best_cost) {
          f = small_end;
          continue;
        }
        for (; f < small_end; ++f) scan.consider(f);
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
