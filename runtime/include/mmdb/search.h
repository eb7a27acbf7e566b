// CPU motion-matching search: the reference the GPU match pass is compared against.
//
// Rules (Holden's reference, docs/runtime.md "Search"):
//  1. The query is featureCount() normalized floats (normalizeQuery() turns raw features into
//     that, buildQuery() in controller.h makes one from the playing row and a trajectory).
//  2. cost(frame) = transition_cost + sum over columns c, in column order, of
//     (query[c] - features[frame][c])^2, accumulated left to right in float.
//  3. The search starts from the frame playing now: best = current_frame with its cost computed
//     WITHOUT the transition cost (or nothing, +inf, when current_frame is -1). A candidate
//     replaces the best only when strictly cheaper, so equal costs go to the lowest global frame
//     among candidates and never away from the playing frame.
//  4. Candidates are the frames of matchable ranges whose tag mask passes the filter, except
//     those with |frame - current_frame| < neighbourhood_frames.
// searchExhaustive() scans every candidate; searchPruned() skips 64- and 16-frame boxes whose
// lower bound (the same sum, over the distance from the query to the box's min/max, which can
// never exceed a frame's cost in float) is already >= best. Both return the same frame and the
// same cost for every query. Neither allocates; both are safe to call from several threads.
#pragma once

#include "mmdb/database.h"
#include "mmdb/result.h"
#include "mmdb/span.h"

#include <cstdint>
#include <limits>

namespace mmdb {

// A range passes when its mask has every bit of `required` and no bit of `excluded`.
struct TagFilter {
  uint64_t required = 0;
  uint64_t excluded = 0;
  constexpr bool passes(uint64_t mask) const noexcept {
    return (mask & required) == required && (mask & excluded) == 0;
  }
};

// Use the file's default neighbourhood: 1/3 s at its rate (20 frames at 60 Hz).
inline constexpr int32_t kDefaultNeighbourhood = -1;

struct SearchRequest {
  Span<const float> query;            // featureCount() normalized floats
  int32_t current_frame = -1;         // global frame playing now, or -1 for none
  float transition_cost = 0;          // added to every candidate; finite, >= 0
  int32_t neighbourhood_frames = kDefaultNeighbourhood;  // >= 0, or kDefaultNeighbourhood
  TagFilter filter;
};

struct SearchResult {
  int32_t frame = -1;  // global: the winner, current_frame when nothing is strictly cheaper
                       // (never -1: that case is ErrorCode::NoMatch)
  float cost = std::numeric_limits<float>::infinity();  // the winner's cost (rule 2)
  bool changed = false;     // frame != current_frame
  uint32_t evaluated = 0;   // candidate rows whose cost was accumulated (for benchmarks)
};

// InvalidArgument when the query size, current frame, transition cost or neighbourhood does not
// fit the database (or it is empty).
Status validateSearch(const Database& db, const SearchRequest& request) noexcept;

// Both validate first and return the error instead of a result when the request is invalid.
// NoMatch when there is no current frame and no candidate (every range filtered out, or none),
// or when the winner's cost is not finite; a result's frame is therefore never -1.
Result<SearchResult> searchExhaustive(const Database& db, const SearchRequest& request) noexcept;
Result<SearchResult> searchPruned(const Database& db, const SearchRequest& request) noexcept;

// raw (featureCount() floats, in the feature units of docs/format.md "Features") ->
// normalized = (raw - featureOffset()) / featureScale(). InvalidArgument on a size mismatch.
Status normalizeQuery(const Database& db, Span<const float> raw, Span<float> normalized) noexcept;
// The inverse: raw = normalized * scale + offset.
Status denormalizeQuery(const Database& db, Span<const float> normalized,
                        Span<float> raw) noexcept;

}  // namespace mmdb
