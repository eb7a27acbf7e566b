// The cook's result in memory, one field per schema field (schema/mmdb.fbs). The writer turns it
// into the file; tests build it by hand to make small databases.
#pragma once

#include "core/cook_settings.h"

#include <mmdb/mmdb_generated.h>

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>
#include <glm/vec4.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mmdb::cook {

// The schema's own version and enums (schema/mmdb.fbs), so the cooker cannot disagree with it.
inline constexpr uint16_t kSchemaMajor = static_cast<uint16_t>(fb::SchemaMajor::Current);
inline constexpr uint16_t kSchemaMinor = static_cast<uint16_t>(fb::SchemaMinor::Current);
inline constexpr uint64_t kFeatureCodedPoses =
    static_cast<uint64_t>(fb::RequiredFeature::CodedPoses);
inline constexpr uint64_t kFeatureRangeBounds =
    static_cast<uint64_t>(fb::RequiredFeature::RangeBounds);
using SourceFormat = fb::SourceFormat;
using Role = fb::Role;
// "mmcook " and the project's version (CMakeLists.txt). It names the cooker in every file and
// every clip-cache key, so a release that changes what the cook computes bumps it.
inline constexpr const char* kCookerVersion = "mmcook " MMDB_VERSION;

struct CookedSource {
  std::string path;
  uint64_t content_hash = 0;  // FNV-1a 64 of the bytes
  uint64_t size_bytes = 0;
  SourceFormat format = SourceFormat::Bvh;
};

struct CookedSkeleton {
  std::vector<std::string> names;
  std::vector<int> parents;
  std::vector<glm::vec3> bind_translations;  // metres
  std::vector<glm::quat> bind_rotations;
  std::vector<std::pair<Role, int>> roles;
  glm::vec3 facing_axis{0, 0, 1};
  std::string preset;
  std::vector<int> contact_joints;  // left toe, right toe
};

struct CookedClip {
  std::string name;
  int source_index = 0;
  uint32_t first_frame = 0;  // global
  uint32_t frame_count = 0;
  float source_frame_rate = 0;
  uint32_t source_first_frame = 0;
  uint32_t source_frame_count = 0;
  bool mirrored = false;
  int mirror_of = -1;
  uint64_t tag_mask = 0;
  std::string take;
  float bias = 0;  // the manifest's clip bias
};

struct CookedRange {
  uint32_t first_frame = 0;
  uint32_t frame_count = 0;
  uint64_t tag_mask = 0;
  float bias = 0;  // the cost bias of its frames: the clip's plus its manifest ranges'
};

// Values match mmdb.fb::FeatureKind.
enum class FeatureKind : int8_t { Position = 0, Velocity, TrajectoryPosition, TrajectoryDirection };

struct CookedFeatureBlock {
  std::string name;
  FeatureKind kind = FeatureKind::Position;
  int joint = -1;
  uint16_t first_column = 0;
  uint16_t width = 0;
  float std = 0;
  float weight = 1;
};

struct CookedRootFrame {
  glm::vec3 position{0};
  glm::quat rotation{1, 0, 0, 0};
  glm::vec3 velocity{0};
  glm::vec3 angular_velocity{0};
};

// What the file records of the settings. The cook fills it from its ClipStageSettings; a database
// made by hand (tests) records the defaults.
struct CookedSettings {
  float frame_rate = float(kDefaultFrameRate);
  float unit_scale = 1;
  uint16_t root_position_window = kDefaultRootPositionWindowFrames;
  uint16_t facing_window = kDefaultFacingWindowFrames;
  uint16_t savitzky_golay_order = kDefaultSavitzkyGolayOrder;
  float contact_speed_threshold = float(kDefaultContactSpeedThreshold);
  uint16_t contact_median_frames = kDefaultContactMedianFrames;
  uint16_t trailing_unmatchable_frames = kDefaultTrailingUnmatchableFrames;
  std::vector<float> trajectory_times{float(kDefaultTrajectoryFrames[0] / kDefaultFrameRate),
                                      float(kDefaultTrajectoryFrames[1] / kDefaultFrameRate),
                                      float(kDefaultTrajectoryFrames[2] / kDefaultFrameRate)};
  std::vector<float> block_weights;  // one per feature block
};

using TrackCoding = fb::TrackCoding;

struct CookedTrack {
  glm::vec4 value{0};  // Constant: the value (quaternion x, y, z, w, or a vector with w = 0)
  TrackCoding coding = TrackCoding::Lossless;
  uint8_t bits = 0;
};

// One coded pose stream (schema CodedStream).
struct CookedCodedStream {
  std::vector<CookedTrack> tracks;        // joint_count
  std::vector<uint32_t> segment_offsets;  // joint_count * segments + 1
  std::vector<uint8_t> data;              // the coded bytes, unless they are borrowed
  // Coded bytes held elsewhere instead of `data`: a cached coding's file, mapped, which `keeper`
  // keeps alive. The cook writes them to the database straight from there.
  std::span<const uint8_t> borrowed;
  std::shared_ptr<const void> keeper;
  float max_error = 0;
  int worst_joint = -1;
  uint32_t worst_frame = 0;

  std::span<const uint8_t> bytes() const {
    return keeper ? borrowed : std::span<const uint8_t>(data);
  }
};

// The four pose streams in file order; an index into CookedPoseCoding::streams.
enum PoseStreamId : int {
  kStreamRotations = 0,
  kStreamTranslations,
  kStreamVelocities,
  kStreamAngularVelocities,
  kPoseStreamCount
};

struct CookedPoseCoding {
  uint32_t segment_frames = 0;
  // A coded stream replaces the raw one in the file; an empty optional leaves it raw.
  std::array<std::optional<CookedCodedStream>, kPoseStreamCount> streams;
  float position_tolerance = 0;
  float shell_distance = 0;
  float velocity_tolerance = 0;
  float angular_velocity_tolerance = 0;

  bool anyCoded() const {
    for (const auto& s : streams)
      if (s) return true;
    return false;
  }
};

// Pose streams held as one array per clip, in clip order: each stream is the concatenation of
// its arrays (whose sizes add up to frame_count * joint_count).
struct RawPoseParts {
  std::vector<std::vector<glm::quat>> rotations;
  std::vector<std::vector<glm::vec3>> translations, velocities, angular_velocities;
  // Where part c lies in each stream: values [first[c], first[c + 1]) (one more than the parts).
  // A part with no values there although it spans some was written into the file while the
  // clips cooked and then released (cli/streamed_database.h): only the write that wrote it can
  // make that file, and anything else that needs those values fails.
  std::vector<size_t> first;
};

struct CookedDatabase {
  CookedSettings settings;
  std::vector<CookedSource> sources;
  CookedSkeleton skeleton;
  std::vector<CookedClip> clips;
  std::vector<std::string> tag_names;
  std::vector<CookedRange> ranges;

  float frame_rate = 60;
  uint32_t frame_count = 0;
  uint32_t joint_count = 0;

  // [frame * joint_count + joint]
  std::vector<glm::quat> local_rotations;
  std::vector<glm::vec3> local_translations;
  std::vector<glm::vec3> local_velocities;
  std::vector<glm::vec3> local_angular_velocities;
  std::vector<CookedRootFrame> root_motion;  // [frame]
  std::vector<uint32_t> contacts;            // [frame], bit i = skeleton.contact_joints[i]

  uint16_t feature_count = 27;
  uint16_t feature_stride = 28;
  std::vector<float> features;        // frame_count * feature_stride, normalized, padding 0
  std::vector<float> feature_offset;  // feature_count
  std::vector<float> feature_scale;   // feature_count
  std::vector<CookedFeatureBlock> feature_blocks;

  uint16_t bounds_small_size = 16;
  uint16_t bounds_large_size = 128;
  std::vector<float> bounds_small_min, bounds_small_max;  // boxes * feature_stride
  std::vector<float> bounds_large_min, bounds_large_max;

  // Written instead of the raw pose streams it codes (the raw ones stay here, for reports).
  CookedPoseCoding pose_coding;

  // The raw pose streams of a database cooked to be written with them (mmcook, pose = "none"):
  // each clip's own arrays, in clip order, while the four streams above stay empty. Concatenated,
  // they would be a second copy of every stream, touched and filled only to be written out.
  RawPoseParts raw_pose_parts;
};

}  // namespace mmdb::cook
