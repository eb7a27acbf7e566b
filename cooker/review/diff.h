// What changed between two cooked databases (`mmcook diff`, docs/review.md): the structure the
// files store (settings, feature weights and spreads, clips, matchable ranges, tags, skeleton),
// and what a replay of one stick script decided on each (replay.h).
//
// Clips are matched by name, feature blocks by name, tags by name; a frame is compared across the
// two files as (clip name, clip-local frame), since global frames move when clips are added.
#pragma once

#include "review/replay.h"

#include <mmdb/database.h>
#include <mmdb/motion_measures.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mmcook::review {

// A measure's change from A to B, as `mmcook diff` and the report show it: (B - A) / |A|, so
// 39.5 -> 50.5 is +27.8 % and a doubling +100 % (a regression can go past it). Where A is 0 there
// is no ratio: has_relative is false and the change is B - A alone.
struct MeasureChange {
  double absolute = 0.0;  // B - A
  double relative = 0.0;  // (B - A) / |A|; 0 where A is 0
  bool has_relative = false;
};
MeasureChange measureChange(double a, double b);

// The change in words: "+27.8%"; where A is 0, "0" when B is 0 too, else "new" and B - A
// ("new (+2.5)"); "-" when A or B is not a number.
std::string changeText(double a, double b);

// The rule, stated once where changes are shown.
inline constexpr const char* kChangeRule =
    "change = (B - A) / |A|; where A is 0, \"new\" and B - A";

// A measure moved: A and B differ by more than a rounding, 1e-6 of the larger of the two (and
// more than 1e-12).
bool measureMoved(double a, double b);

// The unit a motion measure is in (`mmcook diff --fail-on` reads thresholds in it).
enum class MeasureUnit {
  Mm,
  M,
  S,
  Percent,
  PerSecond,
  Acceleration,
  Ratio,
  Count,
  Speed,
  TurnRate
};

// A motion measure by its `mmcook diff --fail-on` key (the JSON spells it with '_'), its unit and
// how it is read from mmdb::MotionMeasures.
struct MotionKey {
  const char* key;
  MeasureUnit unit;
  double (*of)(const mmdb::MotionMeasures&);
};

// Every motion measure `mmcook diff` prints and checks, in its order (docs/review.md "Data
// checks").
const std::vector<MotionKey>& motionKeys();

// A number that differs: A's value and B's (NaN when that file has none).
struct NumberChange {
  std::string name;  // "frame_rate", "trajectory_times[0]", ...
  double a = 0.0;
  double b = 0.0;
};

// A feature block whose weight or spread differs, or that only one file has.
struct BlockChange {
  std::string name;  // "left_foot_position", ...
  bool in_a = true, in_b = true;
  double weight_a = 0.0, weight_b = 0.0;
  double std_a = 0.0, std_b = 0.0;  // raw units
};

// A clip both files have (same name) whose source or cook differs; each entry of `changes` says
// what, with both values ("source content hash 0123... -> 4567...").
struct ClipChange {
  std::string name;
  std::vector<std::string> changes;
};

// A clip's matchable ranges in one file, clip-local: "0..99 [locomotion]".
struct ClipRanges {
  std::string clip;
  std::vector<std::string> a, b;  // each range of the clip in A and in B
};

struct StructureDiff {
  // The files' facts that are reported but are not a change of content.
  std::string cooker_a, cooker_b;
  uint32_t joints_a = 0, joints_b = 0;
  uint32_t frames_a = 0, frames_b = 0;
  uint32_t clips_a = 0, clips_b = 0;
  uint64_t matchable_a = 0, matchable_b = 0;
  uint32_t ranges_a = 0, ranges_b = 0;

  std::vector<NumberChange> settings;  // cook settings, then feature count and joint count
  std::vector<std::string> skeleton;   // joints, parents or roles that differ, one line each
  std::vector<BlockChange> blocks;     // feature blocks: weight, std, presence
  std::vector<std::string> clips_added, clips_removed;  // in B only, in A only
  std::vector<ClipChange> clips_changed;
  std::vector<ClipRanges> ranges;                     // clips in both whose matchable ranges differ
  std::vector<std::string> tags_added, tags_removed;  // tag names in B only, in A only

  bool jointCountsDiffer() const { return joints_a != joints_b; }
  // Any difference in what the files hold (the cooker version alone is not one).
  bool changed() const;
  size_t changeCount() const;
};

// Compares what the two opened files store.
StructureDiff compareStructure(const mmdb::Database& a, const mmdb::Database& b);

// How much of the replay one clip played in each file.
struct ClipUsage {
  std::string name;
  bool in_a = true, in_b = true;
  uint64_t frames_a = 0, frames_b = 0;  // steps played, all characters
  double share_a = 0.0, share_b = 0.0;  // of all steps played, 0..1
};

// One file's side of a decision: what it searched and picked, and why, block by block.
struct DecisionSide {
  bool searched = false;  // false: this file did not search at that step
  mmdb::SearchReason reason = mmdb::SearchReason::None;
  std::string playing_clip;  // "" before the first search
  int32_t playing_local = -1;
  std::string winner_clip;
  int32_t winner_local = -1;
  int32_t winner_global = -1;
  float cost = 0.0f;               // the winner's cost
  std::vector<float> block_costs;  // its parts, one per feature block (explainCandidates) ...
  float transition = 0.0f;         // ... the transition cost inside it (0 for the frame playing)
  float bias = 0.0f;               // ... and the cost bias
  // The other file's winner, looked up here by clip name and clip-local frame, scored against
  // this file's query: its cost and parts (the same sum the search computes), or none when this
  // file has no such frame.
  bool other_found = false;
  bool other_matchable = false;  // inside one of this file's matchable ranges
  float other_cost = 0.0f;       // with the transition cost when it is not the frame playing
  float other_transition = 0.0f;
  std::vector<float> other_block_costs;
};

// The first decision of one character where the files differ: a different winner (by clip name
// and clip-local frame), a different reason, or a search in one file only.
struct DecisionDifference {
  double time = 0.0;  // s, at the start of the step
  uint32_t step = 0;
  uint32_t character = 0;
  DecisionSide a, b;
};

struct ReplayDiff {
  ReplayStats a, b;
  uint64_t steps = 0;
  std::vector<ClipUsage> clips;  // every clip of either file, largest change of share first
  std::vector<std::string> blocks_a, blocks_b;  // feature block names, for the block costs
  uint32_t characters_differing = 0;            // characters with at least one differing decision
  std::vector<DecisionDifference> first_differences;  // per differing character, earliest first
  bool decisionsDiffer() const { return characters_differing > 0; }
};

// Compares two replays of the same script and settings (made with keep_decisions), listing the
// first differing decision of up to `listed` characters, earliest first.
mmdb::Result<ReplayDiff> compareReplays(const mmdb::Database& db_a, const Replay& a,
                                        const mmdb::Database& db_b, const Replay& b, size_t listed);

}  // namespace mmcook::review
