// The skeleton replay of `mmcook report`: a replay's posed skeletons (Replay::poses, kept with
// ReplaySettings::keep_poses) packed for the page, and the player that draws them (a canvas view
// from above and from the side, a time line of the motion measures with every switch marked).
// docs/report.md "Skeleton replay" says what the page shows.
//
// The data is one JSON object per database; its arrays of numbers are little-endian typed arrays
// in base64: poses (packPoses()), ground (Int32 mm through packPredicted()), contacts Uint32, clip
// Int32, locked and switched Uint8, slide and step Uint16 (0.1 mm), gap Uint16 (mm).
#pragma once

#include "review/replay.h"

#include <mmdb/database.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mmcook::review {

// Standard base64 (RFC 4648, padded) of `size` bytes, and its inverse (empty for bad input).
std::string base64(const void* data, size_t size);
std::vector<uint8_t> unbase64(const std::string& text);

// A stream of integers laid out by sample, `row` values a sample, packed exactly and in about
// half a byte a value for smooth motion: each value is predicted from the same position's two
// previous samples (2a - b; the previous value for the second sample; 0 for the first) and the
// residual written as one 4-bit nibble when within -6..7 (two's complement: 0..7, 10..15); else
// the nibble 8 and the residual as an int8 in two nibbles when within -128..127; else the nibble
// 9 and the value itself in 2 * sizeof(T) nibbles. Multi-nibble numbers go lowest nibble first,
// and nibbles fill each byte low half first; an unused last half is 0. unpackPredicted() is the
// inverse (empty for data that does not hold exactly `count` values).
template <typename T>
std::vector<uint8_t> packPredicted(const std::vector<T>& values, size_t row);
template <typename T>
std::vector<T> unpackPredicted(const std::vector<uint8_t>& packed, size_t count, size_t row);

// The poses as the page holds them: ReplayPoses::offsets_mm through packPredicted(), a row
// being one sample of every character's 3 * joints values.
std::vector<uint8_t> packPoses(const ReplayPoses& poses);
std::vector<int16_t> unpackPoses(const std::vector<uint8_t>& packed, uint32_t characters,
                                 uint32_t joints, uint32_t samples);

// What one page holds at most: switches listed (the first ones, in time), and switches with their
// candidates (those of the first characters, character 0's always).
inline constexpr size_t kMaxPlayerSwitches = 20000;
inline constexpr size_t kMaxExplainedSwitches = 2000;

// The y-axis top of each measure lane of the player's time line, per character: the largest
// foot slide (mm), pose step (mm) and gap (m) over the replay. A compared page gives both sides
// the larger of the two (sharedPeaks()), so both replays' curves are on one scale.
struct MeasurePeaks {
  std::vector<float> slide_mm, step_mm, gap_m;  // [character]
};
MeasurePeaks measurePeaks(const ReplayPoses& poses);
// The element-wise largest of several sides' peaks (a character one side lacks: the others').
MeasurePeaks sharedPeaks(const std::vector<MeasurePeaks>& sides);

// How the player's candidate table groups the feature blocks' columns so that it fits a
// 1600-pixel page with two databases side by side: one column per feature kind (position,
// velocity, trajectory position, trajectory direction), each block a line in it, named by its
// joint ("left_foot" for left_foot_position). Every block in exactly one group, in file order.
struct BlockGroup {
  std::string name;
  std::vector<uint32_t> blocks;
  std::vector<std::string> labels;  // per block: its short name in the group
};
std::vector<BlockGroup> candidateColumns(const mmdb::Database& db);

// The raw (denormalized) columns of one trajectory block (a TrajectoryPosition or
// TrajectoryDirection block: x, z at each trajectory time) of a normalized feature row: what
// the player draws of a query and of each candidate. Empty for another block.
std::vector<float> rawTrajectory(const mmdb::Database& db, uint32_t block,
                                 mmdb::Span<const float> normalized);

// The JSON object the player reads for one database's replay: skeleton (joint names, parents,
// contact joints), clip and block names, the block groups of the candidate table, the measure
// lanes' peaks (`peaks`, or the replay's own when null), the packed arrays, and every switch
// with the clip it went to, its candidates, the frame that was playing with its cost, and the
// raw trajectories of the query, the frame playing and the candidates. `label` names the side
// ("A", "B"). Needs replay.poses (samples > 0).
std::string replayPlayerJson(const mmdb::Database& db, const Replay& replay,
                             const std::string& label, const MeasurePeaks* peaks = nullptr);

// Bytes the packed arrays of replayPlayerJson() take in base64, for a page's size estimate.
size_t replayPlayerBytes(const Replay& replay);

// The player's style and script (no network, no external file). The markup: the controls, then
// `panels` side by side. A panel that plays holds replayPlayerPanel(side) and, anywhere on the
// page, <script type="application/json" class="rp-data" data-side="SIDE"> with the side's
// replayPlayerJson(); a panel without one says why.
const char* replayPlayerStyle();
const char* replayPlayerScript();
std::string replayPlayerPanel(size_t side);
std::string replayPlayerMarkup(const std::vector<std::string>& panels);

}  // namespace mmcook::review
