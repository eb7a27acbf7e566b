// A file written from its start to its end in one pass, as the database write does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace mmdb::cook {

// Writes consecutive bytes to `fd` (a new file open for writing), for one of two ways:
//
// - Large files (`expected_bytes` of at least kDirectMinimumBytes) go to the disk straight from
//   8 MiB blocks of this writer's memory (Linux O_DIRECT), bypassing the page cache: the kernel
//   neither copies them into the cache nor allocates its pages, which for a raw cook's file of
//   hundreds of MB was most of the write's CPU time. A helper thread writes one block while the
//   caller fills the next, so the disk and the caller run side by side. The last partial block
//   goes through the page cache (O_DIRECT writes whole aligned blocks).
// - Otherwise, and wherever the file system refuses O_DIRECT, through the page cache, handing
//   each 8 MiB to the disk as soon as it is written (sync_file_range), so that the disk writes
//   while the rest is still being copied and the final fsync waits only for the last few MB.
//
// Either way the caller still fsyncs the file; the bytes on disk are the same.
class SequentialFile {
 public:
  static constexpr size_t kBlockBytes = size_t{8} << 20;
  static constexpr size_t kDirectMinimumBytes = 2 * kBlockBytes;
  static constexpr size_t kPageBytes = 4096;  // the alignment of a start around the cache

  // Writes from `start` on (page-aligned, for the way around the page cache); the file position
  // is neither used nor moved.
  SequentialFile(int fd, size_t expected_bytes, size_t start = 0);
  ~SequentialFile();
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;

  // Appends `bytes`; false on failure, with errno set.
  bool write(std::span<const uint8_t> bytes);
  // Memory for the next bytes of the file, to be made in place: at least 1 and at most `most`
  // bytes (most > 0), of which commit(n) appends the first n. Around the page cache it is the
  // block being filled, so what is made there is never copied again; through it, a staging
  // buffer.
  std::span<uint8_t> room(size_t most);
  bool commit(size_t n);  // false on failure, with errno set
  // Writes what is still held; false on failure, with errno set. Call once, after the last write.
  bool finish();

  // Whether the blocks go around the page cache (for tests and reports).
  bool direct() const { return direct_ != nullptr; }

 private:
  class DirectBlocks;
  bool writeBuffered(std::span<const uint8_t> bytes);

  int fd_;
  size_t start_;
  size_t written_ = 0, handed_ = 0;  // buffered: bytes written, and of those handed to the disk
  std::vector<uint8_t> staging_;     // buffered: room()'s memory
  std::unique_ptr<DirectBlocks> direct_;
};

}  // namespace mmdb::cook
