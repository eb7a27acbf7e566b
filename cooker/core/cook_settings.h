// What a cook is asked to do: the settings (every default is the reference's) and the clips.
// The manifest reader fills these; the quick command-line form uses the defaults.
#pragma once

#include "core/mirror_tags.h"

#include <glm/vec3.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mmdb::cook {

// The manifest's five feature weights, in column order. The file has seven blocks (left and
// right foot are separate blocks for position and for velocity); both feet share a weight.
enum FeatureBlockId : int {
  kBlockFootPosition = 0,  // left and right foot positions
  kBlockFootVelocity,      // left and right foot velocities
  kBlockHipVelocity,
  kBlockTrajectoryPosition,
  kBlockTrajectoryDirection,
  kWeightCount
};

// Skeleton roles; an empty string means "from the preset or auto-detected".
struct RoleSettings {
  std::string preset;  // "" = auto-detect; else a preset name ("lafan1", "cmu", "bandai")
  std::string hips;
  std::string left_foot, right_foot;
  std::string left_toe, right_toe;
  std::string root_position;             // simulation-root position joint (reference: Spine2)
  std::string facing;                    // facing joint (reference: Hips)
  std::optional<glm::vec3> facing_axis;  // local axis of the facing joint
};

// The longest segment of a coded pose stream: the runtime decodes a segment in a stack buffer.
inline constexpr int kMaxSegmentFrames = 1024;

// [compression]: how the pose streams are stored. Features, bounds and root motion stay raw:
// the search and the GPU read them in place.
struct CompressionSettings {
  enum class Pose { Meshopt, None };
  Pose pose = Pose::Meshopt;
  // Every joint's model-space position, and its shell points (shell_distance along each local
  // axis), stays within position_tolerance of the raw pose after forward kinematics, every frame.
  double position_tolerance = 0.0001;        // m (0.1 mm)
  double shell_distance = 0.03;              // m
  double velocity_tolerance = 0.001;         // m/s, per joint
  double angular_velocity_tolerance = 0.01;  // rad/s, per joint
  int segment_frames = 1024;                 // global frames per independently decodable segment
};

// The cook's defaults, the reference's: written here once. CookSettings starts from them; the
// stages get their frame counts from a CookSettings (clipStageSettings), and docs/manifest.md's
// reference is checked against them by a test. The reference states its windows in frames at
// 60 Hz; the manifest states them in seconds, so they mean the same time at any rate.
inline constexpr double kDefaultFrameRate = 60.0;
inline constexpr std::array<float, kWeightCount> kDefaultWeights{0.75f, 1.0f, 1.0f, 1.0f, 1.5f};
inline constexpr int kDefaultRootPositionWindowFrames = 31;  // Savitzky-Golay, at kDefaultFrameRate
inline constexpr int kDefaultFacingWindowFrames = 61;
inline constexpr int kDefaultSavitzkyGolayOrder = 3;
inline constexpr double kDefaultContactSpeedThreshold = 0.15;  // m/s
inline constexpr int kDefaultContactMedianFrames = 6;
inline constexpr int kDefaultTrailingUnmatchableFrames = 20;
inline constexpr std::array<int, 3> kDefaultTrajectoryFrames{20, 40, 60};

struct CookSettings {
  double frame_rate = kDefaultFrameRate;
  double unit_scale = 0.0;  // metres per source unit; 0 = from the file, the preset or inferred
  RoleSettings roles;
  std::array<float, kWeightCount> weights = kDefaultWeights;
  double root_position_window_s = kDefaultRootPositionWindowFrames / kDefaultFrameRate;
  double facing_window_s = kDefaultFacingWindowFrames / kDefaultFrameRate;
  int savitzky_golay_order = kDefaultSavitzkyGolayOrder;
  double contact_speed_threshold = kDefaultContactSpeedThreshold;
  double contact_median_s = kDefaultContactMedianFrames / kDefaultFrameRate;
  double trailing_unmatchable_s = kDefaultTrailingUnmatchableFrames / kDefaultFrameRate;
  std::array<double, 3> trajectory_times{kDefaultTrajectoryFrames[0] / kDefaultFrameRate,
                                         kDefaultTrajectoryFrames[1] / kDefaultFrameRate,
                                         kDefaultTrajectoryFrames[2] / kDefaultFrameRate};
  CompressionSettings compression;
};
// The seconds above are the reference's own numbers, bit for bit.
static_assert(kDefaultContactMedianFrames / kDefaultFrameRate == 0.1 &&
              kDefaultTrailingUnmatchableFrames / kDefaultFrameRate == 1.0 / 3.0 &&
              kDefaultTrajectoryFrames[1] / kDefaultFrameRate == 2.0 / 3.0);

// A part of a clip (clip-local frames at the database rate, [first, first + count)) that adds
// tags or a cost bias, or is cut out of matching.
struct SubRangeSpec {
  int first_frame = 0;
  int frame_count = 0;  // unused with to_end
  std::vector<std::string> tags;
  bool exclude = false;
  double bias = 0;  // added to the search cost of its frames (with the clip's and other ranges')
  bool to_end = false;  // [first_frame, the clip's end): the manifest said "end"
  // For messages: its manifest line (0 when from code), and the seconds the manifest gave (-1
  // when it gave frames; the end -1 with to_end).
  int manifest_line = 0;
  double first_seconds = -1, end_seconds = -1;
};

struct ClipSpec {
  std::string name;             // "" = the file's stem
  std::string source;           // resolved path
  std::string source_label;     // path as the user wrote it (stored in the file)
  std::string take;             // FBX animation name or index as text; "" = the first
  int source_first_frame = 0;   // source frames [first, first + count)
  int source_frame_count = -1;  // -1 = to the end
  std::vector<std::string> tags;
  bool mirror = false;
  double bias = 0;  // added to the search cost of every frame of the clip
  std::vector<SubRangeSpec> ranges;
  int manifest_line = 0;  // for messages; 0 when from the command line
  std::string manifest;   // for messages: the manifest as given, "" when from the command line
};

struct MirrorSettings {
  // Pairs of patterns with one '*' each, e.g. {"Left*", "Right*"}; tried in order.
  std::vector<std::pair<std::string, std::string>> patterns{
      {"Left*", "Right*"}, {"*_L", "*_R"}, {"*_l", "*_r"}, {"L*", "R*"}, {"l*", "r*"}};
  // Words a mirrored copy's tags swap (mirroredTag()), e.g. {"left", "right"}: "strafe-left"
  // becomes "strafe-right". Empty: a mirrored copy keeps its clip's tags. The link's, not a clip's:
  // not in the clip key.
  TagPairs tag_pairs{{"left", "right"}};
};

struct CookRequest {
  std::string manifest_path;  // "" for the quick form
  CookSettings settings;
  MirrorSettings mirror;
  std::vector<ClipSpec> clips;
  int jobs = 0;  // 0 = all cores
};

}  // namespace mmdb::cook
