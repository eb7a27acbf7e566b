// mmdb::Database: a motion-matching database (.mmdb) opened in place.
//
// Open = map (or borrow) the bytes, then check, in order:
//   1. size and the "MMDB" file identifier                       -> NotAnMmdb
//   2. schema version: major 1 or 2, any minor                   -> VersionMismatch
//   3. the buffer and every array the GPU reads are 16-aligned,
//      every array of structs on its struct's boundary          -> Misaligned
//   4. the FlatBuffers verifier                                  -> Corrupt
//   5. semantic checks (see database/checks.cpp: counts, skeleton order, a frame rate in
//      [kMinFrameRate, kMaxFrameRate], clips that cover every frame once, valid source and mirror
//      indices, ranges inside one clip, tag bits that name a tag, feature-block kinds that match
//      their widths, finite poses, root motion, trajectory times, features, offsets, scales and
//      bounds, positive scales, coded pose streams whose tracks, bit widths and segment
//      offsets fit the frames) -> Inconsistent; required_features bits this runtime does not
//      know -> VersionMismatch
// Coded pose streams (schema 2.0) are checked at open for their structure only; their values
// are checked as decodePoses() decodes them.
// Required fields: settings with three trajectory_times, clips, feature_blocks (with both
// trajectory blocks) and, for the clips to name, sources. Optional fields, which every reader
// handles when absent: settings.block_weights, skeleton.roles, skeleton.facing_axis (default
// +Z), skeleton.contact_joints, ranges (nothing matchable), tag_names, and every field a later
// minor version adds (2.1: clip biases and range_biases, 0 when absent; when present,
// range_biases has one finite value per range and every clip bias is finite -> Inconsistent).
// Nothing is copied but halfFeatures(): every other accessor returns a view into the buffer, so
// opening costs what the verifier costs and that copy's making (a fifth more for 100,000 frames,
// half as much again for 1,000,000; OpenOptions::half_features turns it off). Frame numbers are
// global (indices into the database) unless a name says "local" (clip-local).
#pragma once

#include "mmdb/result.h"
#include "mmdb/span.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace mmdb {
namespace fb {
struct Database;  // the FlatBuffers root (mmdb/mmdb_generated.h), for tools that want it
}

// The schema major and minor this runtime was built for (schema/mmdb.fbs's SchemaMajor and
// SchemaMinor, checked when the runtime compiles): it opens kSchemaMajor.x for any x, and
// the majors back to kOldestSchemaMajor (1.x files have raw pose streams only).
inline constexpr uint16_t kSchemaMajor = 2;
inline constexpr uint16_t kSchemaMinor = 2;
inline constexpr uint16_t kOldestSchemaMajor = 1;
// Database.required_features bits this runtime reads: bit 0, coded pose streams; bit 1 (2.2),
// bounds that hold only the frames of matchable ranges (a frame no range holds may lie outside
// its boxes; the search never returns one).
inline constexpr uint64_t kFeatureCodedPoses = 1;
inline constexpr uint64_t kFeatureRangeBounds = 2;
inline constexpr uint64_t kKnownFeatures = kFeatureCodedPoses | kFeatureRangeBounds;
// The most frames in a coded segment (decodePoses decodes one in a stack buffer).
inline constexpr uint32_t kMaxSegmentFrames = 1024;
// Frame rates a database may have, in Hz (what mmcook cooks to).
inline constexpr float kMinFrameRate = 1.f;
inline constexpr float kMaxFrameRate = 1000.f;
// The largest file the runtime opens (2 GiB less 2 bytes): FlatBuffers offsets are 32-bit signed.
inline constexpr size_t kMaxFileBytes = (size_t{1} << 31) - 2;

// One std430 vec4 as stored in the file: a position or direction (w = 0) or a quaternion
// (x, y, z, w). Same layout as mmdb::fb::Vec4.
struct Float4 {
  float x, y, z, w;
};

// The simulation root of one frame (same layout as mmdb::fb::RootFrame, 64 bytes).
struct RootFrame {
  Float4 position;          // world position of the clip on the ground, w = 0
  Float4 rotation;          // pure-yaw quaternion (x, y, z, w)
  Float4 velocity;          // world m/s, w = 0
  Float4 angular_velocity;  // world scaled axis, rad/s, w = 0
};

// A run of global frames the search may return (same layout as mmdb::fb::MatchRange).
struct MatchRange {
  uint32_t first_frame;  // global
  uint32_t frame_count;
  uint64_t tag_mask;  // bit i = Database::tagName(i)
};

// The range of `ranges` (sorted and disjoint, as Database::ranges()) that holds a global frame,
// or -1 when none does.
int32_t rangeOfFrame(Span<const MatchRange> ranges, uint32_t frame) noexcept;

// Values match mmdb::fb::FeatureKind.
enum class FeatureKind : int8_t { Position = 0, Velocity, TrajectoryPosition, TrajectoryDirection };
// schema/mmdb.fbs's Role, value for value (database.cpp checks it when it compiles).
enum class Role : int8_t { Hips = 0, LeftFoot, RightFoot, LeftToe, RightToe, RootPosition, Facing };

struct ClipInfo {
  std::string_view name;
  std::string_view take;     // animation name for multi-take sources, else ""
  uint32_t first_frame = 0;  // global
  uint32_t frame_count = 0;
  uint64_t tag_mask = 0;
  int32_t source_index = 0;  // into the file's sources
  int32_t mirror_of = -1;    // the clip this one mirrors, or -1
  bool mirrored = false;
  float source_frame_rate = 0;
  float bias = 0;  // the manifest's cost bias for the clip (0 before schema 2.1)
};

struct FeatureBlockInfo {
  std::string_view name;  // "left_foot_position", ...
  FeatureKind kind = FeatureKind::Position;
  int32_t joint = -1;  // -1 for trajectory blocks
  uint16_t first_column = 0;
  uint16_t width = 0;
  float std = 0;  // raw units
  float weight = 1;
};

enum class PoseStream : uint8_t { Rotations = 0, Translations, Velocities, AngularVelocities };
inline constexpr uint32_t kPoseStreamCount = 4;

// Pose streams in the uniform frame-major layout: element [(f - first_frame) * joints + j] is
// global frame f of joint j. Either the file itself (Database::rawPoses()) or memory that
// Database::decodePoses() filled. An empty span: that stream is not there.
struct PoseView {
  uint32_t first_frame = 0;  // global frame of the first row
  uint32_t frame_count = 0;
  Span<const Float4> rotations;           // quaternions (x, y, z, w)
  Span<const Float4> translations;        // m, w = 0
  Span<const Float4> velocities;          // m/s, w = 0
  Span<const Float4> angular_velocities;  // rad/s scaled axis, w = 0

  // The global frames [first, first + count) lie inside the view.
  bool covers(uint32_t first, uint32_t count) const noexcept {
    return first >= first_frame && uint64_t(first) + count <= uint64_t(first_frame) + frame_count;
  }
};

// Where Database::decodePoses() writes: caller-owned memory, each span frame_count *
// jointCount() elements and starting on a 16-byte boundary; an empty span skips its stream.
struct PoseBuffers {
  Span<Float4> rotations;
  Span<Float4> translations;
  Span<Float4> velocities;
  Span<Float4> angular_velocities;
};

enum class LogLevel { Info, Warning, Error };
// Called with what open found; the runtime never logs on its own.
using LogCallback = void (*)(void* user, LogLevel level, const char* message);

struct OpenOptions {
  LogCallback log = nullptr;
  void* log_user = nullptr;
  uint32_t max_verifier_depth = 32;         // nesting of tables and vectors
  uint32_t max_verifier_tables = 1u << 24;  // tables verified (clips, sources, blocks, ...)
  // Make the half-precision copy of the features that the CPU search reads first
  // (Database::halfFeatures()). Off, open allocates nothing and the search reads the float rows
  // alone: the same results, slower on a database larger than the caches.
  bool half_features = true;
};

namespace detail {
struct AlignedFree {  // frees what database.cpp's aligned allocation returned
  void operator()(void* p) const noexcept;
};
}  // namespace detail

class Database {
 public:
  // Maps the file (POSIX mmap, or CreateFileMappingW and MapViewOfFile on Windows) and verifies
  // it. The mapping lives as long as the Database.
  // Anything but a regular file (a folder, a device, a FIFO) is refused before it is opened.
  //
  // The mapped file must not change while the Database lives. Checks run once, at open: a file
  // truncated afterwards makes any access to the lost pages raise SIGBUS (in any accessor, even
  // featureCount()), and one rewritten in place is read as it is now, unchecked (a search over
  // NaN features then fails with ErrorCode::NoMatch). To replace a database that may be open,
  // write the new file beside it and rename() it over the old one, as mmcook does: the mapping
  // keeps the old file's pages, and the next open() sees the new file.
  static Result<Database> open(const char* path, const OpenOptions& options = {});
  // Verifies caller-owned bytes in place; they must stay alive and unchanged, and start on a
  // 16-byte boundary, for as long as the Database is used. A null `bytes` is InvalidArgument.
  static Result<Database> fromMemory(const void* bytes, size_t size,
                                     const OpenOptions& options = {});

  Database() = default;  // empty: frameCount() == 0, every view empty
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  bool valid() const noexcept { return root_ != nullptr; }
  // The whole file, for uploading or hashing.
  Span<const uint8_t> bytes() const noexcept { return {bytes_, size_}; }
  const fb::Database* flatbuffer() const noexcept { return root_; }

  uint16_t schemaMajor() const noexcept;
  uint16_t schemaMinor() const noexcept;
  std::string_view cookerVersion() const noexcept;

  float frameRate() const noexcept;
  uint32_t frameCount() const noexcept;
  uint32_t jointCount() const noexcept;

  // Pose streams, element [frame * jointCount() + joint], local to the parent; the root joint is
  // relative to the simulation root. Views into the file; empty for a stream the file codes
  // (poseStreamCoded()): read those through decodePoses().
  Span<const Float4> localRotations() const noexcept;
  Span<const Float4> localTranslations() const noexcept;
  Span<const Float4> localVelocities() const noexcept;
  Span<const Float4> localAngularVelocities() const noexcept;
  // Whether a pose stream is coded (schema 2.0 PoseCoding) rather than raw in the file.
  bool poseStreamCoded(PoseStream stream) const noexcept;
  bool posesCoded() const noexcept;  // any of the four
  // Bytes the stream takes in the file (raw vector, or coded tracks, offsets and data).
  size_t poseStreamBytes(PoseStream stream) const noexcept;
  // Every frame of the four streams as views into the file, with no copy: the memory the
  // sampling jobs read. Empty (frame_count 0) when a stream is coded: decode them instead.
  PoseView rawPoses() const noexcept;
  // Decodes global frames [first_frame, first_frame + frame_count) of each stream whose span in
  // `out` is not empty, into that span, in the layout of PoseView; a raw stream is copied. No
  // allocation; any thread may decode any range at the same time. Errors, with nothing promised
  // about what was written: InvalidArgument (frames outside the database, a span of another
  // size or not 16-byte aligned), Corrupt (a coded segment that does not decode to its size),
  // Inconsistent (a value that decodes to NaN or infinity, a rotation far from unit length).
  Status decodePoses(uint32_t first_frame, uint32_t frame_count,
                     const PoseBuffers& out) const noexcept;

  Span<const RootFrame> rootMotion() const noexcept;  // [frame]
  Span<const uint32_t> contacts() const noexcept;     // [frame], bit i = contactJoints()[i]

  // Features, normalized: row f is features()[f * featureStride() ...], featureCount() used.
  uint16_t featureCount() const noexcept;
  uint16_t featureStride() const noexcept;
  Span<const float> features() const noexcept;
  Span<const float> featureRow(uint32_t frame) const noexcept {
    return features().subspan(size_t(frame) * featureStride(), featureCount());
  }
  // The features again in IEEE half precision (binary16 bits, the same layout as features():
  // row f at [f * featureStride()], padding 0), and per row the Euclidean distance between the
  // row and its copy, rounded up (+infinity where a value has no finite half: beyond 65504, or
  // not finite). The CPU search bounds a row's cost from its copy (one cache line for up to 32
  // columns, half the float row's bytes) and reads the float row only where that bound does not
  // rule it out: the triangle inequality keeps the bound below the cost, so every result is
  // what the float rows alone give. Made at open, in memory the Database owns
  // (frameCount() * (2 * featureStride() + 4) bytes: 17 MB for 250,000 frames of 32), on a
  // CPU with AVX2, FMA and F16C and unless OpenOptions::half_features is false; empty
  // otherwise, and then the search reads the float rows.
  Span<const uint16_t> halfFeatures() const noexcept { return half_features_; }
  Span<const float> halfFeatureErrors() const noexcept { return half_errors_; }
  Span<const float> featureOffset() const noexcept;  // featureCount()
  Span<const float> featureScale() const noexcept;   // featureCount(), all > 0
  uint32_t featureBlockCount() const noexcept;
  FeatureBlockInfo featureBlock(uint32_t index) const noexcept;
  // First block of a kind, or -1.
  int32_t findFeatureBlock(FeatureKind kind) const noexcept;

  // Per-column min/max of the normalized features over boxes of boundsSmallSize() and
  // boundsLargeSize() frames; box b covers [b * size, min((b + 1) * size, frameCount())),
  // rows featureStride() apart.
  uint16_t boundsSmallSize() const noexcept;
  uint16_t boundsLargeSize() const noexcept;
  Span<const float> boundsSmallMin() const noexcept;
  Span<const float> boundsSmallMax() const noexcept;
  Span<const float> boundsLargeMin() const noexcept;
  Span<const float> boundsLargeMax() const noexcept;

  // Clips, sorted by first frame, not overlapping.
  uint32_t clipCount() const noexcept;
  ClipInfo clip(uint32_t index) const noexcept;
  // The clip that holds a global frame, or -1.
  int32_t clipOfFrame(uint32_t frame) const noexcept;
  // The clip with this name, or -1.
  int32_t findClip(std::string_view name) const noexcept;

  // Matchable ranges, sorted, inside the frames.
  Span<const MatchRange> ranges() const noexcept;
  // Schema 2.1: per range, the cost bias the search adds to its frames (docs/runtime.md
  // "Search"). Empty when the file stores none (an older file, or a cook without biases): every
  // bias is then 0.
  Span<const float> rangeBiases() const noexcept;
  float rangeBias(uint32_t range) const noexcept;  // 0 when there is no such bias
  // The bias of a global frame: its matchable range's, else (a clip's unmatchable tail, an
  // excluded part) its clip's; 0 outside the frames.
  float frameBias(uint32_t frame) const noexcept;
  uint32_t tagCount() const noexcept;
  std::string_view tagName(uint32_t bit) const noexcept;
  // The mask bit of a tag name (1 << index), or 0 when the file has no such tag.
  uint64_t tagMask(std::string_view name) const noexcept;

  // Skeleton: parents[j] < j (or -1 for a root).
  std::string_view jointName(uint32_t joint) const noexcept;
  int32_t findJoint(std::string_view name) const noexcept;  // or -1
  Span<const int32_t> parents() const noexcept;
  Span<const Float4> bindTranslations() const noexcept;
  Span<const Float4> bindRotations() const noexcept;
  int32_t roleJoint(Role role) const noexcept;  // or -1
  Span<const int32_t> contactJoints() const noexcept;
  Float4 facingAxis() const noexcept;

  // Cook settings kept in the file.
  Span<const float> trajectoryTimes() const noexcept;  // seconds ahead (1/3, 2/3, 1)
  // Frames the search skips around the playing frame by default: 1/3 s at the file's rate.
  int32_t defaultNeighbourhoodFrames() const noexcept;

 private:
  Database(const uint8_t* bytes, size_t size, bool mapped) noexcept;
  static Result<Database> adopt(Database&& db, const OpenOptions& options);
  void makeHalfFeatures(const OpenOptions& options) noexcept;
  void release() noexcept;

  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // unmap on destruction
  const fb::Database* root_ = nullptr;
  // halfFeatures() and halfFeatureErrors(), in one 64-byte-aligned allocation.
  std::unique_ptr<uint8_t, detail::AlignedFree> half_storage_;
  Span<const uint16_t> half_features_;
  Span<const float> half_errors_;
};

}  // namespace mmdb
