// A raw database's pose streams, written into its file clip by clip while the cook goes on.
#pragma once

#include "core/large_pages.h"
#include "write/database_writer.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace mmdb::cook {

// Puts the clips' raw poses at their place in a database file (rawPoseLayout) while the cook
// goes on, so that the disk writes them while the other clips cook instead of after the whole
// database is made. Clips come in any order; they are written in database order, as soon as
// every clip before them has come, so that each stream is written in large sequential blocks
// (2 MiB, page-aligned) around the page cache (O_DIRECT, where the file system has it) by a
// helper thread. A clip left out (its poses not given) leaves a gap. The partial pages where a
// run of clips starts or ends are kept and written through the page cache by finish(); the rest
// of the file is written after the cook (SerializedDatabase::writeAround).
class PoseStreamWriter {
 public:
  static constexpr size_t kPageBytes = 4096;
  static constexpr size_t kBlockBytes = size_t{2} << 20;

  // `fd`: the new file, open for writing; `clip_frames`: every database clip's frame count, in
  // database order, as the layout was made for (frame_count = their sum). `copied(clip)`, when
  // given, is called once a clip's poses are all copied into the writer's memory, so that the
  // caller may release them (on the thread that copied them; never after a failure).
  PoseStreamWriter(int fd, const RawPoseLayout& layout, std::vector<uint32_t> clip_frames,
                   uint32_t joint_count, std::function<void(int clip)> copied = {});
  ~PoseStreamWriter();  // waits for the writes it started
  PoseStreamWriter(const PoseStreamWriter&) = delete;
  PoseStreamWriter& operator=(const PoseStreamWriter&) = delete;

  struct ClipPoses {  // `frames` x joint_count values each, frame-major
    size_t frames = 0;
    const glm::quat* rotations = nullptr;
    const glm::vec3* translations = nullptr;
    const glm::vec3* velocities = nullptr;
    const glm::vec3* angular_velocities = nullptr;
  };
  // Database clip `clip` has come: its poses, or null to leave its place to the final write.
  // Thread-safe; call once per clip. The values must stay valid and unchanged until the call
  // that makes the last clip come returns (a later call may copy them, on its own thread). A
  // clip whose frame count is not the layout's stops every further write (finish then fails).
  void clipReady(int clip, const ClipPoses* poses);

  // Waits for every write, leaves `fd` without O_DIRECT and writes the partial pages kept. True
  // with the file ranges written (sorted, disjoint; every byte of each clip given); false when a
  // write failed or a clip did not fit the layout: then the whole file must be written again.
  bool finish(std::vector<FileRange>& written);

  int writeError();  // the errno of the first failed write, or 0 (a clip that did not fit)

 private:
  bool failed();  // so far
  struct Job {
    uint8_t* data;
    size_t bytes, offset;
  };
  struct Edge {  // the bytes of a partial page where a run of clips starts or ends
    size_t offset;
    std::vector<uint8_t> bytes;
  };
  struct StreamBlock {  // the block being filled, of one stream
    uint8_t* data = nullptr;
    size_t offset = 0;  // in the file, page-aligned
    size_t filled = 0;
  };
  void write(int clip, const ClipPoses& poses);  // the clips before it are written
  void append(int stream, size_t start, const void* values, size_t count);
  void endRun(StreamBlock& block);                  // its whole pages, and the rest kept
  void handOver(StreamBlock& block, size_t bytes);  // its first `bytes` (whole pages)
  uint8_t* takeBlock();                             // null once failed
  void writeJobs();                                 // the helper thread

  const int fd_;
  const RawPoseLayout layout_;
  const std::vector<uint32_t> clip_frames_;
  std::vector<size_t> first_frame_;  // per clip
  const uint32_t joints_;
  const std::function<void(int)> copied_;
  std::vector<std::unique_ptr<LargePageBuffer<uint8_t>>> memory_;

  // The clips that have come and wait for those before them; the next clip to write; whether a
  // thread is writing clips (then only it touches blocks_).
  std::mutex order_mutex_;
  std::vector<char> ready_;
  std::vector<ClipPoses> poses_;
  size_t next_ = 0;
  bool writing_ = false;
  std::array<StreamBlock, kPoseStreamCount> blocks_;
  std::vector<Edge> edges_;  // the thread writing clips'

  std::mutex mutex_;  // the helper's queue
  std::condition_variable changed_;
  std::vector<uint8_t*> free_;
  std::deque<Job> jobs_;
  std::vector<FileRange> written_;
  bool direct_ = false;  // set before the first write, then the helper's
  bool failed_ = false, stop_ = false;
  int error_ = 0;
  std::thread helper_;
};

}  // namespace mmdb::cook
