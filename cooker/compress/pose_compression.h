// The pose-compression stage: picks, per joint and pose stream, a constant or a meshoptimizer
// coding whose bit widths come from the error budget (CompressionSettings), checks the result by
// forward kinematics against the raw pose over every frame, and codes the tracks in segments of
// frames. docs/cook.md "Pose compression" says how the widths are chosen.
#pragma once

#include "core/cook_settings.h"
#include "core/cooked_database.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace mmdb::cook {

struct StreamCompressionReport {
  std::string name;          // "local_rotations", ...
  uint64_t raw_bytes = 0;    // the raw vector's bytes
  uint64_t coded_bytes = 0;  // tracks, segment offsets and data
  int constant_tracks = 0;
  int coded_tracks = 0;  // Quaternion or Exponent
  int lossless_tracks = 0;
  double max_error = 0;  // as CookedCodedStream::max_error
  int worst_joint = -1;
  uint32_t worst_frame = 0;  // global
};

struct CompressionReport {
  bool enabled = false;
  std::array<StreamCompressionReport, kPoseStreamCount> streams;
  std::string error_unit[kPoseStreamCount]{"m", "m", "m/s", "rad/s"};
  double seconds = 0;
};

// What compressPoses does with a raw pose stream once it is coded. The writer leaves a coded
// stream's raw vector out of the file, so a cook releases them: the velocities are coded (and
// released) first, then the rotations and translations, read in place with the decoded tracks
// the model-space check needs, so the cook never holds a pose stream twice.
enum class RawPoses { Keep, Release };

// Throws InputError naming the [compression] key of a setting out of range.
void checkCompressionSettings(const CompressionSettings& settings);

// The report of a coding (sizes, track counts, measured errors) of `frames` x `joints` poses;
// `seconds` is 0 and `enabled` false when no stream is coded.
CompressionReport compressionReport(const CookedPoseCoding& coding, size_t frames, size_t joints);

// Codes db's four pose streams into db.pose_coding (or clears it for Pose::None) and fills
// *report. Deterministic: the same bytes for any `jobs` (0 = all cores). Throws InputError for
// a setting out of range, naming the key.
void compressPoses(CookedDatabase& db, const CompressionSettings& settings, int jobs,
                   CompressionReport* report = nullptr, RawPoses raw = RawPoses::Keep);

// Decodes one coded stream of `db` back to frame-major vec4s (w = 0 for vectors), as the
// runtime does: for tests and tools that check the cook's own numbers.
std::vector<glm::vec4> decodeCodedStream(const CookedCodedStream& stream, uint32_t frame_count,
                                         uint32_t joint_count, uint32_t segment_frames,
                                         bool rotations);

}  // namespace mmdb::cook
