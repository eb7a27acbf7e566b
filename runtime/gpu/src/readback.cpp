// The GPU crowd's buffers read back and written by the host (tests, tools, a game that reads
// what plays), and its pass timings.
#include "crowd_internal.h"

#include <algorithm>
#include <cstring>

namespace mmdb::gpu {

using namespace detail;  // the crowd's private parts (crowd_internal.h)

namespace {

template <class T>
Result<std::vector<T>> readBuffer(const Context& ctx, VkBuffer buffer, size_t count) {
  Result<Buffer> host = createHostBuffer(ctx, count * sizeof(T));
  if (!host) return host.error();
  Buffer& b = host.value();
  Status copied = ctx.submitAndWait([&](VkCommandBuffer cmd) {
    computeBarrier(cmd, kAnyStage, kAnyAccess, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy copy{0, 0, count * sizeof(T)};
    vkCmdCopyBuffer(cmd, buffer, b.buffer, 1, &copy);
  });
  std::vector<T> out;
  if (copied) {
    out.resize(count);
    std::memcpy(out.data(), b.mapped, count * sizeof(T));
  }
  vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
  vkFreeMemory(ctx.device(), b.memory, nullptr);
  if (!copied) return copied;
  return out;
}

template <class T>
Status writeBuffer(const Context& ctx, VkBuffer buffer, size_t expected, const std::vector<T>& data,
                   const char* what) {
  if (data.size() != expected) {
    return Error::format(ErrorCode::InvalidArgument, "%s: %zu elements, the buffer holds %zu", what,
                         data.size(), expected);
  }
  const VkDeviceSize bytes = data.size() * sizeof(T);
  if (bytes == 0) return Status();
  Result<Buffer> host = createHostBuffer(ctx, bytes);
  if (!host) return host.error();
  Buffer& b = host.value();
  std::memcpy(b.mapped, data.data(), bytes);
  Status copied = ctx.submitAndWait([&](VkCommandBuffer cmd) {
    computeBarrier(cmd, kAnyStage, kAnyAccess, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy copy{0, 0, bytes};
    vkCmdCopyBuffer(cmd, b.buffer, buffer, 1, &copy);
    computeBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, kAnyStage,
                   kAnyAccess);
  });
  vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
  vkFreeMemory(ctx.device(), b.memory, nullptr);
  return copied;
}

}  // namespace

Result<std::vector<CrowdCharacter>> Crowd::readCharacters() const {
  return readBuffer<CrowdCharacter>(ctx_, impl_->buffers[kCharacters].buffer, count_);
}
Result<std::vector<MatchResult>> Crowd::readResults() const {
  return readBuffer<MatchResult>(ctx_, impl_->buffers[kResults].buffer, count_);
}
Result<std::vector<float>> Crowd::readQueries() const {
  return readBuffer<float>(ctx_, impl_->buffers[kQueries].buffer,
                           size_t(count_) * params_.feature_stride);
}
Result<std::vector<JointPose>> Crowd::readLocalPoses() const {
  return readBuffer<JointPose>(ctx_, impl_->buffers[kLocalPoses].buffer,
                               size_t(count_) * params_.joint_count);
}
Result<std::vector<ModelJoint>> Crowd::readModelPoses() const {
  return readBuffer<ModelJoint>(ctx_, impl_->buffers[kModelPoses].buffer,
                                size_t(count_) * params_.joint_count);
}
Result<std::vector<JointOffset>> Crowd::readOffsets() const {
  return readBuffer<JointOffset>(ctx_, impl_->buffers[kOffsets].buffer,
                                 size_t(count_) * params_.joint_count);
}

Result<std::vector<CharacterFeet>> Crowd::readFootLocks() const {
  return readBuffer<CharacterFeet>(ctx_, impl_->buffers[kFeet].buffer, count_);
}

Result<std::vector<mmdb::Playing>> Crowd::readPlaying() const {
  Result<std::vector<Decision>> decisions = readDecisions();
  if (!decisions) return decisions.error();
  Result<std::vector<CharacterFeet>> feet = readFootLocks();
  if (!feet) return feet.error();
  const uint32_t frames = clip_starts_.back();
  // A frame's tags: its matchable range's, else its clip's own (mmdb::Crowd's rule).
  const auto tagsOf = [&](uint32_t frame, int32_t& range) -> uint64_t {
    range = mmdb::rangeOfFrame(mmdb::Span<const mmdb::MatchRange>(ranges_.data(), ranges_.size()),
                               frame);
    if (range >= 0) return ranges_[size_t(range)].tag_mask;
    const size_t clip =
        size_t(std::upper_bound(clip_starts_.begin(), clip_starts_.end() - 1, frame) -
               clip_starts_.begin()) -
        1;
    return clip_tags_[clip];
  };
  std::vector<mmdb::Playing> out(count_);
  for (uint32_t c = 0; c < count_; ++c) {
    const CharacterFeet& f = feet.value()[c];
    mmdb::Playing& p = out[c];
    p.decision = decisions.value()[c];
    uint64_t before = 0;
    int32_t unused = -1;
    if (f.previous_shown_frame < frames) before = tagsOf(f.previous_shown_frame, unused);
    if (f.shown_playing != 0u && f.shown_frame < frames) {
      p.playing = true;
      p.frame = f.shown_frame;
      p.clip = uint32_t(std::upper_bound(clip_starts_.begin(), clip_starts_.end() - 1, p.frame) -
                        clip_starts_.begin()) -
               1u;
      p.clip_frame = p.frame - clip_starts_[p.clip];
      p.clip_time = f.shown_time;
      p.tags = tagsOf(p.frame, p.range);
      p.contacts = contacts_.empty() ? 0u : contacts_[p.frame];
    }
    p.tags_entered = p.tags & ~before & event_tags_;
    p.tags_left = before & ~p.tags & event_tags_;
    for (uint32_t leg = 0; leg < 2; ++leg) {
      if (f.foot[leg].flags & kFootLocked) p.locked_feet |= 1u << leg;
      if (f.foot[leg].flags & kFootBlending) p.blending_feet |= 1u << leg;
    }
  }
  return out;
}

Result<std::vector<Decision>> Crowd::readDecisions() const {
  Result<std::vector<CrowdCharacter>> characters = readCharacters();
  if (!characters) return characters.error();
  Result<std::vector<MatchResult>> results = readResults();
  if (!results) return results.error();
  std::vector<Decision> out(count_);
  for (size_t i = 0; i < out.size(); ++i) {
    const CrowdCharacter& c = characters.value()[i];
    out[i].reason = (c.flags & kCharacterSearched) ? SearchReason(results.value()[i].reason)
                                                   : SearchReason::None;
    out[i].switched = (c.flags & kCharacterSwitched) != 0;
    out[i].continued = (c.flags & kCharacterContinued) != 0;
    out[i].held = (c.flags & kCharacterHeld) != 0;
    out[i].frame = c.last_winner;
    out[i].cost = c.last_cost;
    out[i].playing = c.current_frame;
  }
  return out;
}

PassTimings Crowd::readTimings() const {
  PassTimings t;
  if (!impl_->timestamps) return t;
  std::array<uint64_t, kTimestampCount> stamps{};
  VkResult r =
      vkGetQueryPoolResults(impl_->device, impl_->queries, 0, kTimestampCount, sizeof(stamps),
                            stamps.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (r != VK_SUCCESS) return t;
  for (uint32_t i = 0; i < kPassCount; ++i) {
    t.ms[i] = double(stamps[i + 1] - stamps[i]) * impl_->timestamp_period_ns * 1e-6;
  }
  t.total_ms = double(stamps[kPassCount] - stamps[0]) * impl_->timestamp_period_ns * 1e-6;
  t.valid = true;
  return t;
}

Status Crowd::writeCharacters(const std::vector<CrowdCharacter>& v) {
  return writeBuffer(ctx_, impl_->buffers[kCharacters].buffer, count_, v, "writeCharacters");
}
Status Crowd::writeResults(const std::vector<MatchResult>& v) {
  return writeBuffer(ctx_, impl_->buffers[kResults].buffer, count_, v, "writeResults");
}
Status Crowd::writeQueries(const std::vector<float>& v) {
  return writeBuffer(ctx_, impl_->buffers[kQueries].buffer, size_t(count_) * params_.feature_stride,
                     v, "writeQueries");
}
Status Crowd::writeLocalPoses(const std::vector<JointPose>& v) {
  return writeBuffer(ctx_, impl_->buffers[kLocalPoses].buffer, size_t(count_) * params_.joint_count,
                     v, "writeLocalPoses");
}
Status Crowd::writeFootLocks(const std::vector<CharacterFeet>& v) {
  return writeBuffer(ctx_, impl_->buffers[kFeet].buffer, count_, v, "writeFootLocks");
}
Status Crowd::writeOffsets(const std::vector<JointOffset>& v) {
  return writeBuffer(ctx_, impl_->buffers[kOffsets].buffer, size_t(count_) * params_.joint_count, v,
                     "writeOffsets");
}

}  // namespace mmdb::gpu
