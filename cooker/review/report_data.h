// What `mmcook report` shows, as numbers: the clip timeline, the feature distributions and the
// coverage map of one database (html_report.h draws them). Plain structs filled from an open
// mmdb::Database; frame numbers are global unless a name says "local" (clip-local).
#pragma once

#include <mmdb/controller.h>
#include <mmdb/database.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mmcook::review {

// A run of a clip's frames, clip-local.
struct LocalSpan {
  uint32_t first_local = 0;
  uint32_t frame_count = 0;
  uint64_t tag_mask = 0;  // the matchable range's tags (0 for an excluded span)
  float bias = 0;         // the cost bias of the range's frames (clip's and range's), 0 excluded
};

struct TimelineClip {
  std::string name;
  std::string take;
  uint32_t first_frame = 0;  // global
  uint32_t frame_count = 0;
  uint64_t tag_mask = 0;
  float bias = 0;  // the clip's cost bias (ClipInfo::bias)
  bool mirrored = false;
  int32_t mirror_of = -1;            // clip index, or -1
  std::vector<LocalSpan> matchable;  // the matchable ranges inside this clip, in order
  std::vector<LocalSpan> excluded;   // the frames no range covers, in order
  uint32_t matchableFrames() const;
};

struct Timeline {
  float frame_rate = 0;
  uint32_t frame_count = 0;
  uint32_t range_count = 0;
  std::vector<std::string> tag_names;  // bit i
  std::vector<TimelineClip> clips;
};

Timeline clipTimeline(const mmdb::Database& db);

// The tag names of a mask, comma-separated ("-" for none).
std::string tagList(const Timeline& timeline, uint64_t mask);

// Normalized features (or features normalized as another database does) of one block, binned.
struct BlockHistogram {
  std::string name;
  mmdb::FeatureKind kind = mmdb::FeatureKind::Position;
  uint16_t first_column = 0;
  uint16_t width = 0;
  float weight = 1;
  float low = 0, high = 0;                    // the bins span [low, high]
  std::vector<std::vector<uint32_t>> counts;  // [column of the block][bin]
  std::vector<float> mean, deviation;         // per column of the block
};

// Per block of `db`, a histogram of each of its columns over every frame, `bins` bins over the
// block's [min, max] (or the given range when low < high).
std::vector<BlockHistogram> featureHistograms(const mmdb::Database& db, uint32_t bins);

// Two databases whose blocks agree (features_comparable()) on one axis: B's raw features are
// normalized with A's offset and scale, and both use the bins of the union of their ranges.
// Returns {A, B}.
struct HistogramPair {
  std::vector<BlockHistogram> a, b;
};
HistogramPair comparedHistograms(const mmdb::Database& a, const mmdb::Database& b, uint32_t bins);

// Why two databases' features cannot be put on one axis (different joint count, blocks, or a
// feature normalization that puts one file's values beyond a float in the other's: an offset of
// 1e38, a scale of 1e-45, which the runtime accepts), or "" when they can.
std::string featuresIncomparable(const mmdb::Database& a, const mmdb::Database& b);

// The coverage map: a grid of what a controller may ask for, each cell the best cost the
// database answers it with.
struct CoverageSettings {
  std::vector<float> speeds = {0.f, 1.f, 1.75f, 2.75f, 4.f};  // m/s (Holden's walk 1.75, run 4)
  uint32_t directions = 8;  // travel directions relative to the facing, from forward, 360 / n apart
  std::vector<float> turn_rates = {-90.f, -45.f, 0.f, 45.f, 90.f};  // degrees/s, + turns left
  uint32_t worst_count = 8;  // cells listed as "clips to capture next"
};

// The trajectory of a steady request: the stick asks for `speed` m/s in direction
// `direction_deg` from the facing (+90 = left, towards +X) while the facing turns at
// `turn_rate_deg` per second; the controller starts in that steady motion at the origin facing
// +Z and runs the spring (mmdb::updateCharacter) along the turning stick. The 12 raw floats of a
// query (mmdb::predictTrajectory's layout) at the given times.
void steadyTrajectory(float speed, float direction_deg, float turn_rate_deg,
                      const mmdb::ControllerSettings& settings,
                      float trajectory[mmdb::kTrajectoryFloats]);

struct CoverageCell {
  float speed = 0;          // m/s
  float direction_deg = 0;  // of travel, from the facing, + left
  float turn_rate_deg = 0;  // per second, + left
  float cost = 0;           // the best cost (+inf when nothing matches)
  int32_t frame = -1;       // global frame that answers it
  // The same query searched with every block's cooked weight taken out (run-time weight
  // 1 / cooked): the frame that answers it at unit weights, and that frame's unitWeightDistance()
  // (no bias, no weight). Two files that differ only in their weights give the same frame and
  // distance, so this compares across a weight change where `cost` does not. +inf and -1 when
  // nothing matches.
  float unit_distance = 0;
  int32_t unit_frame = -1;
};

// The pose the queries carry: the pose columns of one frame.
struct CoveragePose {
  int32_t frame = -1;  // global frame of the database it came from
  std::string clip;
  uint32_t local_frame = 0;
  float root_speed = 0;    // m/s, of that frame's root motion
  std::vector<float> raw;  // raw (denormalized) features of that frame, featureCount() floats
};

// The matchable frame whose pose columns (every block but the trajectory ones) lie closest to
// the database mean: the most typical pose, usually standing or walking. frame -1 when nothing
// is matchable.
CoveragePose representativePose(const mmdb::Database& db);

struct CoverageMap {
  CoverageSettings settings;
  CoveragePose pose;
  std::string pose_from;  // "" when the pose is the database's own, else whose it is
  // Cells ordered turn rate, then speed, then direction: index
  // (t * speeds + s) * directions + d.
  std::vector<CoverageCell> cells;
  std::string error;  // why no cell was searched, or ""
  const CoverageCell& cell(size_t turn, size_t speed, size_t direction) const {
    return cells[(turn * settings.speeds.size() + speed) * settings.directions + direction];
  }
  // Indices of the worst distinct cells, worst first (at speed 0 only direction 0 counts).
  std::vector<size_t> worst() const;
};

// Builds each cell's query with mmdb::buildQuery (trajectory from steadyTrajectory, pose columns
// from `pose`, normalized with `db`'s offset and scale) and searches the whole database with
// mmdb::searchBatch (no frame playing, no transition cost, no tag filter), then again with
// run-time weights 1 / cooked weight for the unit-weight answer. `pose.raw` must be
// db.featureCount() long. A query that is not finite in `db`'s normalization (an extreme feature
// offset or scale) leaves the cells unsearched and says why in `error`. Throws std::runtime_error
// when the runtime refuses a query otherwise.
CoverageMap coverageMap(const mmdb::Database& db, const CoveragePose& pose,
                        const CoverageSettings& settings = {});

// A direction and turn rate in words: "forward", "back-left", ...; "turning left 45 deg/s".
std::string directionName(float direction_deg);
std::string turnName(float turn_rate_deg);

}  // namespace mmcook::review
