// CPU motion-matching search: the reference the GPU match pass is compared against.
//
// Rules (Holden's reference, docs/runtime.md "Search"):
//  1. The query is featureCount() normalized floats (normalizeQuery() turns raw features into
//     that, buildQuery() in controller.h makes one from the playing row and a trajectory).
//  2. cost(frame) = (transition_cost + sum over columns c, in column order, of
//     (w[c] * (query[c] - features[frame][c]))^2, accumulated left to right in float) + bias,
//     where w[c] is the run-time weight of c's feature block (SearchRequest::block_weights; 1,
//     and no multiply, when none are given) and bias the cost bias of the frame's matchable range
//     (Database::rangeBias(), cooked from the manifest; 0 in files without biases), added once
//     at the end. A run-time weight w is relative to the cooked weight: the cook divides a
//     block by std / cooked weight, so its normalized differences carry the cooked weight and
//     their squares its square; multiplying the differences by w gives what a cook with weight
//     w * cooked would give (up to float rounding), and the block's squared differences count
//     w^2 times. w = 2 makes a block count as much as a re-cook with twice its weight.
//  3. The search starts from the frame playing now: best = current_frame with its cost computed
//     WITHOUT the transition cost but with its own bias (Database::frameBias(): its matchable
//     range's, else its clip's, so a preferred range stays preferred while it plays), or
//     nothing, +inf, when current_frame is -1. A candidate
//     replaces the best only when strictly cheaper, so equal costs go to the lowest global frame
//     among candidates and never away from the playing frame.
//  4. Candidates are the frames of matchable ranges whose tag mask passes the filter, except
//     those with |frame - current_frame| < neighbourhood_frames and the last range_end_margin
//     frames of each range (a range keeps at least its first frame).
// searchExhaustive() scans every candidate; searchPruned() skips 64- and 16-frame boxes and rows
// whose lower bound is already >= best. A bound is the same sum over the distance from the query
// to the box's min/max (or to the row itself), each distance times its column's weight,
// computed in any order (8 columns or 8 boxes at a time) and shrunk by a relative margin larger
// than any float rounding of its terms, then the bias of the range being scanned is added (a box
// is only ever tested for the frames of one range, so its bound takes that range's bias; float
// addition is monotone, so the bound stays <= the cost). It never exceeds the cost rule 2
// gives. Only rows whose bound is below best get their cost summed, in
// column order. Both return the same frame and the same cost for every query. Neither
// allocates; both are safe to call from several threads.
//
// Splitting a search (a job system): searchRange() searches only the candidates in global frames
// [first_frame, end_frame) but starts, like the whole search, from the current frame's cost, so
// it returns the current frame unless a candidate of its part is strictly cheaper.
// mergeSearchResults() of the parts, in any order and grouping, gives the whole search's result:
// the lower cost wins, equal costs go to the lower frame (two parts never return the current
// frame and a candidate at the same cost, since a candidate is returned only when strictly
// cheaper than the current frame; so the current frame keeps its ties).
//
// searchBatch() answers several requests (one per character) in one pass over the database:
// each box's bounds and each row are read once for all requests whose filters pass. Each result
// is the one searchPruned() gives for its request.
#pragma once

#include "mmdb/database.h"
#include "mmdb/result.h"
#include "mmdb/span.h"

#include <cstddef>
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

// The crowds' transition cost (CrowdSettings::transition_cost; a SearchRequest's is 0 unless set):
// a switch must be cheaper than playing on by this much, in cost units (the median winner costs
// 6.3 on bandai-1 with the default weights). A playability policy (docs/runtime.md).
inline constexpr float kDefaultTransitionCost = 1.0f;

struct SearchRequest {
  Span<const float> query;                               // featureCount() normalized floats
  int32_t current_frame = -1;                            // global frame playing now, or -1 for none
  float transition_cost = 0;                             // added to every candidate; finite, >= 0
  int32_t neighbourhood_frames = kDefaultNeighbourhood;  // >= 0, or kDefaultNeighbourhood
  int32_t range_end_margin = 0;  // >= 0: frames at the end of each range that are no candidate
                                 // (rule 4), so a winner plays at least that long before its range
                                 // ends (CrowdSettings::range_end_margin)
  TagFilter filter;
  // Rule 3 with current_frame >= 0: true starts from the current frame's cost; false only skips
  // its neighbourhood (rule 4) and starts from nothing, so the search must move to a frame at
  // least neighbourhood_frames away (a range end that must move on, not back).
  bool seeded = true;
  // Run-time weights (rule 2): empty for the cooked weights, else featureBlockCount() finite
  // floats > 0, one per feature block in the file's order (featureBlock(i)), relative to the
  // cooked weight (1 = as cooked). Read during the call only.
  Span<const float> block_weights;
};

struct SearchResult {
  int32_t frame = -1;  // global: the winner, current_frame when nothing is strictly cheaper
                       // (never -1: that case is ErrorCode::NoMatch)
  float cost = std::numeric_limits<float>::infinity();  // the winner's cost (rule 2)
  bool changed = false;                                 // frame != current_frame
  uint32_t evaluated = 0;  // candidate rows whose cost was accumulated (for benchmarks)
};

// InvalidArgument when the query size, current frame, transition cost, neighbourhood, range end
// margin or block weights (count, or a weight not finite or not > 0, named by block) do not fit
// the database (or it is empty).
Status validateSearch(const Database& db, const SearchRequest& request) noexcept;

// Both validate first and return the error instead of a result when the request is invalid.
// NoMatch when there is no current frame and no candidate (every range filtered out, or none),
// or when the winner's cost is not finite; a result's frame is therefore never -1.
Result<SearchResult> searchExhaustive(const Database& db, const SearchRequest& request) noexcept;
Result<SearchResult> searchPruned(const Database& db, const SearchRequest& request) noexcept;

// The candidates of [first_frame, end_frame) only (end_frame past frameCount() means all of
// them). InvalidArgument as above, or when first_frame > end_frame. A part may hold no
// candidate: its frame is then -1 and its cost +inf, which mergeSearchResults() passes over.
// Check the merged result of all parts with checkMatch(), as the whole searches do.
Result<SearchResult> searchRange(const Database& db, const SearchRequest& request,
                                 uint32_t first_frame, uint32_t end_frame) noexcept;

// The result of a search over two parts, from the results of the two (same request).
// `evaluated` is the sum of both.
SearchResult mergeSearchResults(const SearchResult& a, const SearchResult& b) noexcept;

// NoMatch when a (merged) result has no frame or a cost that is not finite: the error
// searchExhaustive() and searchPruned() return instead of such a result.
Status checkMatch(const SearchResult& result) noexcept;

// results[i] = searchPruned(db, requests[i]) for every i, found in one pass (up to
// kBatchChunk requests at a time; larger batches are done chunk after chunk). No allocation:
// the chunk's queries (transposed) and each request's state are on the stack, about 85 KB, or
// 100 KB when some request has run-time weights; a thread or fiber that calls it needs that
// much stack to spare.
// With `scratch` (batchScratchFloats(db) floats, owned by the caller and used by one call at a
// time) it first finds each request a good candidate and keeps every group box's bound for the
// pass, which then prunes more: about a fifth faster on a game's queries (docs/runtime.md).
// The results are the same with or without it.
// InvalidArgument (naming the first bad request) when a request is invalid, the spans differ
// in size or a scratch is given but too small; then no result is written. NoMatch naming the
// first request that searchPruned() would answer with NoMatch; every result is written (that
// one with frame -1).
inline constexpr size_t kBatchChunk = 64;
Status searchBatch(const Database& db, Span<const SearchRequest> requests,
                   Span<SearchResult> results) noexcept;
Status searchBatch(const Database& db, Span<const SearchRequest> requests,
                   Span<SearchResult> results, Span<float> scratch) noexcept;
// The floats of a scratch that serves searchBatch() and searchBatchRange() on `db`, whatever
// the frames: kBatchChunk per group of 8 large boxes (256 bytes per 1,024 frames with the
// cook's boxes of 128 frames; 0 for a database that is not open).
size_t batchScratchFloats(const Database& db) noexcept;
// The batch over candidates in [first_frame, end_frame) only: merge each request's parts with
// mergeSearchResults() and check each merged result with checkMatch(). Parts searched at the
// same time need a scratch each.
Status searchBatchRange(const Database& db, Span<const SearchRequest> requests,
                        uint32_t first_frame, uint32_t end_frame,
                        Span<SearchResult> results) noexcept;
Status searchBatchRange(const Database& db, Span<const SearchRequest> requests,
                        uint32_t first_frame, uint32_t end_frame, Span<SearchResult> results,
                        Span<float> scratch) noexcept;

// Why a frame won: a candidate's cost, taken apart by feature block.
inline constexpr uint32_t kMaxExplainedBlocks = 16;
struct CandidateCost {
  int32_t frame = -1;    // global
  bool current = false;  // the frame playing now (the seed: no transition cost)
  float cost = 0;        // exactly what the searches compute for this frame (rule 2)
  float transition = 0;  // the transition cost inside `cost` (0 for the frame playing)
  float bias = 0;        // the cost bias inside `cost` (its range's; the frame playing's own)
  // Per feature block, in the file's order (featureBlock(i)): the sum of the squared weighted
  // differences of its columns. With `transition` and `bias` they add up to `cost` up to float
  // rounding (the search sums all columns in one accumulator, a block here sums its own).
  uint32_t block_count = 0;
  float block_costs[kMaxExplainedBlocks] = {};
};

// The out.size() cheapest candidates of a search, best first, ranked as the search ranks them:
// lower cost first; at equal cost the frame playing, then the lower frame. out[0] is the winner
// searchExhaustive() returns, with its cost. Writes min(out.size(), candidates + 1 for the frame
// playing) entries and returns how many. For tools and debuggers: it scans every candidate.
// InvalidArgument for an invalid request (as validateSearch), an empty `out`, more entries than
// the database's matchable frames, or a file with more than kMaxExplainedBlocks blocks;
// NoMatch when there is nothing to rank.
Result<uint32_t> explainCandidates(const Database& db, const SearchRequest& request,
                                   Span<CandidateCost> out) noexcept;

// raw (featureCount() floats, in the feature units of docs/format.md "Features") ->
// normalized = (raw - featureOffset()) / featureScale(). InvalidArgument on a size mismatch.
Status normalizeQuery(const Database& db, Span<const float> raw, Span<float> normalized) noexcept;
// The inverse: raw = normalized * scale + offset.
Status denormalizeQuery(const Database& db, Span<const float> normalized, Span<float> raw) noexcept;

}  // namespace mmdb
