// A raw cook's database file, opened before the cook: each clip's poses go into it as soon as
// the clip is cooked, the rest once the whole database is made.
#pragma once

#include "cook/cook_database.h"
#include "write/database_writer.h"
#include "write/pose_stream_writer.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mmdb::cook {

// The cook's PartSink (cookDatabase) for a database whose poses are written raw
// (compression pose = "none"). Of a large cook, the poses are most of the file; written at the
// end, they made the write a quarter of the cook's wall time at -j 2, the disk working alone.
// Here a PoseStreamWriter writes each clip's poses at their place while the other clips cook:
// their places come from the frame counts the BVH headers declare (declaredClipFrames). Whatever
// did not fit that layout (a clip that held other frames than declared, or a layout the finished
// database does not have) is written with the rest, so the file is the same either way.
//
// With `release_poses`, each clip's pose arrays are released as soon as the writer has copied
// them: the cook then holds a few clips' poses instead of all of them (on 1,000 clips, 480 MB
// that the kernel had to fault in and zero). Only for a cook that needs no other copy of its
// bytes (no existing output to compare with, no --verify, no report hash). If the layout then
// fails to hold, commit() cannot write the file and says so: the cook must be made again.
class StreamedDatabaseFile : public PartSink {
 public:
  // Smaller databases are written whole after the cook, as writeFileAtomically does.
  static constexpr size_t kMinimumPoseBytes = size_t{16} << 20;

  // The temporary file beside `path` (AtomicFile), when `request` can stream: raw poses and
  // every clip's frames declared; else null. Throws InputError as AtomicFile does.
  static std::unique_ptr<StreamedDatabaseFile> open(const std::string& path,
                                                    const CookRequest& request, int jobs,
                                                    bool release_poses);

  StreamedDatabaseFile(const std::string& path, std::vector<uint32_t> clip_frames,
                       std::vector<int> first_clip_of_spec, bool range_biases, bool release_poses);

  // A cooked part's poses go to the writer; a part from the store leaves its place to commit().
  void partObtained(int index, ClipPart& part, bool cooked) override;

  // Writes what the file does not hold yet of `bytes` (all of it when the layout did not hold)
  // and puts the file in place, as writeFileAtomically does (InputError on failure). Without a
  // commit, nothing is left behind. False, writing nothing, when the layout did not hold and
  // poses were released: `bytes` can no longer be made whole.
  bool commit(const SerializedDatabase& bytes);

  // Whether any clip's poses were released: the database cannot be compared or made whole.
  bool released() const { return released_ > 0; }

 private:
  void start(uint32_t joint_count);

  AtomicFile file_;
  const std::vector<uint32_t> clip_frames_;  // per database clip
  const std::vector<int> first_clip_of_spec_;
  const bool range_biases_;
  const bool release_poses_;
  uint64_t frame_count_ = 0;
  std::once_flag started_;
  uint32_t joint_count_ = 0;
  RawPoseLayout layout_;
  std::vector<ClipMotion*> motions_;          // per database clip, once given: what to release
  std::unique_ptr<PoseStreamWriter> writer_;  // after file_: destroyed (joined) first
  std::atomic<int> streamed_{0}, released_{0};
};

}  // namespace mmdb::cook
