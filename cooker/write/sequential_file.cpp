#include "write/sequential_file.h"

#include "core/large_pages.h"
#include "write/direct_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

namespace mmdb::cook {

// Two blocks of page-aligned memory (O_DIRECT needs the memory, the offset and the length
// aligned to the device's blocks; pages and 8 MiB are multiples of any of them): the helper
// thread writes one at its place in the file while the caller fills the other.
class SequentialFile::DirectBlocks {
 public:
  // Null where the file system refuses O_DIRECT (tmpfs, some network and FUSE file systems) or a
  // thread cannot be started: the caller writes through the page cache instead.
  static std::unique_ptr<DirectBlocks> open(int fd, size_t start) {
    if (!setDirect(fd, true)) return nullptr;
    std::unique_ptr<DirectBlocks> blocks(new DirectBlocks(fd, start));
    try {
      blocks->helper_ = std::thread([b = blocks.get()] { b->writeBlocks(); });
    } catch (const std::system_error&) {
      setDirect(fd, false);
      return nullptr;
    }
    return blocks;
  }

  ~DirectBlocks() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    helper_.join();  // after the block it is writing, if any: the memory outlives it
  }

  bool write(std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
      const size_t n = std::min(bytes.size(), kBlockBytes - filled_);
      std::memcpy(blocks_[current_].data() + filled_, bytes.data(), n);
      if (!commit(n)) return false;
      bytes = bytes.subspan(n);
    }
    return true;
  }

  // The rest of the block being filled (never empty: a full block is handed over at once).
  std::span<uint8_t> room(size_t most) {
    return {blocks_[current_].data() + filled_, std::min(most, kBlockBytes - filled_)};
  }

  bool commit(size_t n) {
    filled_ += n;
    return filled_ < kBlockBytes || handOver();
  }

  // The partial last block through the page cache, where its length need not be aligned.
  bool finish() {
    if (!waitForHelper()) return false;
    if (!setDirect(fd_, false)) return false;
    if (filled_ == 0) return true;
    const int error = pwriteAll(fd_, {blocks_[current_].data(), filled_}, offset_);
    errno = error;
    return error == 0;
  }

 private:
  DirectBlocks(int fd, size_t start)
      : fd_(fd),
        blocks_{LargePageBuffer<uint8_t>(kBlockBytes), LargePageBuffer<uint8_t>(kBlockBytes)},
        offset_(start) {}

  // Gives the full current block to the helper, once it is done with the other one.
  bool handOver() {
    if (!waitForHelper()) return false;
    {
      const std::lock_guard lock(mutex_);
      job_ = blocks_[current_].data();
      job_offset_ = offset_;
      busy_ = true;
    }
    changed_.notify_all();
    offset_ += kBlockBytes;
    current_ ^= 1;
    filled_ = 0;
    return true;
  }

  bool waitForHelper() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !busy_; });
    if (error_ == 0) return true;
    errno = error_;
    return false;
  }

  void writeBlocks() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return busy_ || stop_; });
      if (!busy_) return;  // stopped, nothing left
      const uint8_t* data = job_;
      const size_t offset = job_offset_;
      lock.unlock();
      const int error = writeBlock(data, offset);
      lock.lock();
      if (error != 0 && error_ == 0) error_ = error;
      busy_ = false;
      changed_.notify_all();
    }
  }

  // 0, or the errno of the failure.
  int writeBlock(const uint8_t* data, size_t offset) {
    return pwriteFallingBack(fd_, {data, kBlockBytes}, offset, still_direct_);
  }

  const int fd_;
  LargePageBuffer<uint8_t> blocks_[2];
  int current_ = 0;           // the block being filled
  size_t filled_ = 0;         // of it
  size_t offset_ = 0;         // its place in the file
  bool still_direct_ = true;  // the helper's: false once a refused write dropped O_DIRECT

  std::mutex mutex_;
  std::condition_variable changed_;
  const uint8_t* job_ = nullptr;  // the block the helper writes, while busy_
  size_t job_offset_ = 0;
  bool busy_ = false, stop_ = false;
  int error_ = 0;  // the first failure's errno; every later call fails with it
  std::thread helper_;
};

SequentialFile::SequentialFile(int fd, size_t expected_bytes, size_t start)
    : fd_(fd), start_(start) {
  if (expected_bytes >= kDirectMinimumBytes && start % kPageBytes == 0)
    direct_ = DirectBlocks::open(fd, start);
}

SequentialFile::~SequentialFile() = default;

bool SequentialFile::write(std::span<const uint8_t> bytes) {
  return direct_ ? direct_->write(bytes) : writeBuffered(bytes);
}

bool SequentialFile::finish() { return direct_ ? direct_->finish() : true; }

std::span<uint8_t> SequentialFile::room(size_t most) {
  if (direct_) return direct_->room(most);
  constexpr size_t kStagingBytes = size_t{1} << 20;
  if (staging_.empty()) staging_.resize(kStagingBytes);
  return {staging_.data(), std::min(most, staging_.size())};
}

bool SequentialFile::commit(size_t n) {
  return direct_ ? direct_->commit(n) : writeBuffered({staging_.data(), n});
}

bool SequentialFile::writeBuffered(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const size_t n = std::min(bytes.size(), kBlockBytes - (written_ - handed_));
    if (const int error = pwriteAll(fd_, bytes.first(n), start_ + written_); error != 0) {
      errno = error;
      return false;
    }
    written_ += n;
    bytes = bytes.subspan(n);
    if (written_ - handed_ == kBlockBytes) {
#if defined(__linux__)
      ::sync_file_range(fd_, off_t(start_ + handed_), off_t(written_ - handed_),
                        SYNC_FILE_RANGE_WRITE);
#endif
      handed_ = written_;
    }
  }
  return true;
}

}  // namespace mmdb::cook
