#include "write/pose_stream_writer.h"

#include "write/direct_io.h"

#include <algorithm>
#include <cerrno>

namespace mmdb::cook {
namespace {

constexpr size_t kElementBytes = 16;  // a Vec4

size_t pageUp(size_t at) {
  return (at + PoseStreamWriter::kPageBytes - 1) / PoseStreamWriter::kPageBytes *
         PoseStreamWriter::kPageBytes;
}
size_t pageDown(size_t at) {
  return at / PoseStreamWriter::kPageBytes * PoseStreamWriter::kPageBytes;
}

}  // namespace

PoseStreamWriter::PoseStreamWriter(int fd, const RawPoseLayout& layout,
                                   std::vector<uint32_t> clip_frames, uint32_t joint_count,
                                   std::function<void(int clip)> copied)
    : fd_(fd),
      layout_(layout),
      clip_frames_(std::move(clip_frames)),
      joints_(joint_count),
      copied_(std::move(copied)) {
  size_t first = 0;
  for (const uint32_t frames : clip_frames_) {
    first_frame_.push_back(first);
    first += frames;
  }
  ready_.assign(clip_frames_.size(), 0);
  poses_.resize(clip_frames_.size());
  // One block being filled per stream, and as many more for the helper to write meanwhile.
  for (int i = 0; i < 2 * kPoseStreamCount; ++i) {
    memory_.push_back(std::make_unique<LargePageBuffer<uint8_t>>(kBlockBytes));
    free_.push_back(memory_.back()->data());
  }
  helper_ = std::thread([this] { writeJobs(); });  // may throw: then nothing is changed
  direct_ = setDirect(fd_, true);  // else through the page cache, which any file system has
}

PoseStreamWriter::~PoseStreamWriter() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (helper_.joinable()) helper_.join();
}

void PoseStreamWriter::clipReady(int clip, const ClipPoses* poses) {
  std::unique_lock lock(order_mutex_);
  if (clip < 0 || size_t(clip) >= ready_.size() || ready_[size_t(clip)]) return;
  ready_[size_t(clip)] = 1;
  if (poses) poses_[size_t(clip)] = *poses;
  if (writing_) return;  // the thread writing takes it when its turn comes
  writing_ = true;
  while (next_ < ready_.size() && ready_[next_]) {
    const size_t c = next_++;
    const ClipPoses p = poses_[c];
    lock.unlock();
    if (p.rotations) {
      write(static_cast<int>(c), p);
      if (copied_ && !failed()) copied_(static_cast<int>(c));
    }
    lock.lock();
  }
  writing_ = false;
}

void PoseStreamWriter::write(int clip, const ClipPoses& poses) {
  if (poses.frames != clip_frames_[size_t(clip)]) {
    const std::lock_guard lock(mutex_);
    failed_ = true;
    changed_.notify_all();
    return;
  }
  const size_t per_frame = size_t(joints_) * kElementBytes;
  const void* values[kPoseStreamCount] = {poses.rotations, poses.translations, poses.velocities,
                                          poses.angular_velocities};
  for (int s = 0; s < kPoseStreamCount; ++s)
    append(s, layout_.offsets[size_t(s)] + first_frame_[size_t(clip)] * per_frame, values[s],
           poses.frames * joints_);
}

void PoseStreamWriter::append(int stream, size_t start, const void* values, size_t count) {
  StreamBlock& block = blocks_[size_t(stream)];
  const SerializedDatabase::MakeElements make = rawStreamMaker(stream);
  size_t first = 0;  // element
  if (!block.data || block.offset + block.filled != start) {
    // A gap (or the first clip): the run before it ends, and the block starts again at the
    // first page boundary inside this clip (streams start 16-aligned, so a page boundary falls
    // between two elements); the elements before it are kept, to be written by finish().
    if (block.data) endRun(block);
    const size_t at = pageUp(start);
    first = std::min(count, (at - start) / kElementBytes);
    if (first > 0) {
      Edge edge{start, std::vector<uint8_t>(first * kElementBytes)};
      make(values, 0, first, edge.bytes.data());
      edges_.push_back(std::move(edge));
    }
    if (first == count) return;
    if (!(block.data = takeBlock())) return;
    block.offset = at;
    block.filled = 0;
  }
  while (first < count) {
    const size_t n = std::min(count - first, (kBlockBytes - block.filled) / kElementBytes);
    make(values, first, n, block.data + block.filled);
    block.filled += n * kElementBytes;
    first += n;
    if (block.filled == kBlockBytes) {
      handOver(block, kBlockBytes);
      if (!(block.data = takeBlock())) return;
      block.offset += kBlockBytes;
      block.filled = 0;
    }
  }
}

void PoseStreamWriter::endRun(StreamBlock& block) {
  const size_t whole = pageDown(block.filled);
  if (block.filled > whole)
    edges_.push_back({block.offset + whole,
                      std::vector<uint8_t>(block.data + whole, block.data + block.filled)});
  handOver(block, whole);
}

int PoseStreamWriter::writeError() {
  const std::lock_guard lock(mutex_);
  return error_;
}

bool PoseStreamWriter::failed() {
  const std::lock_guard lock(mutex_);
  return failed_;
}

void PoseStreamWriter::handOver(StreamBlock& block, size_t bytes) {
  {
    const std::lock_guard lock(mutex_);
    if (bytes > 0 && !failed_)
      jobs_.push_back({block.data, bytes, block.offset});
    else
      free_.push_back(block.data);
  }
  block.data = nullptr;
  changed_.notify_all();
}

uint8_t* PoseStreamWriter::takeBlock() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !free_.empty() || failed_; });
  if (failed_) return nullptr;
  uint8_t* block = free_.back();
  free_.pop_back();
  return block;
}

void PoseStreamWriter::writeJobs() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !jobs_.empty() || stop_; });
    if (jobs_.empty()) return;  // stopped, nothing left
    const Job job = jobs_.front();
    jobs_.pop_front();
    const bool skip = failed_;
    lock.unlock();
    const int error = skip ? 0 : pwriteFallingBack(fd_, {job.data, job.bytes}, job.offset, direct_);
    lock.lock();
    if (error != 0) failed_ = true;
    if (error != 0 && error_ == 0) error_ = error;
    if (!skip && error == 0) written_.push_back({job.offset, job.offset + job.bytes});
    free_.push_back(job.data);
    changed_.notify_all();
  }
}

bool PoseStreamWriter::finish(std::vector<FileRange>& written) {
  {
    // Every clip has come (the cook is over): what the blocks hold, to the last whole page.
    const std::lock_guard order(order_mutex_);
    for (StreamBlock& block : blocks_)
      if (block.data) endRun(block);
  }
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (helper_.joinable()) helper_.join();
  if (direct_ && !setDirect(fd_, false)) {
    failed_ = true;
    if (error_ == 0) error_ = errno;
  }
  direct_ = false;
  if (failed_) return false;
  for (const Edge& edge : edges_) {  // through the page cache, beside what others write there
    if (const int error = pwriteAll(fd_, edge.bytes, edge.offset); error != 0) {
      error_ = error;
      return false;
    }
    written_.push_back({edge.offset, edge.offset + edge.bytes.size()});
  }
  std::sort(written_.begin(), written_.end(),
            [](const FileRange& a, const FileRange& b) { return a.first < b.first; });
  written.clear();
  for (const FileRange& r : written_) {
    if (!written.empty() && written.back().end == r.first)
      written.back().end = r.end;
    else
      written.push_back(r);
  }
  return true;
}

}  // namespace mmdb::cook
