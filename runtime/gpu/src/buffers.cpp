// The GPU crowd's device buffers: made, filled from the host (decoding coded pose streams on the
// way) and fenced between passes.
#include "crowd_internal.h"

#include <algorithm>
#include <cstring>

namespace mmdb::gpu::detail {

Error vkError(const char* what, VkResult r) {
  return Error::format(ErrorCode::DeviceError, "%s failed (VkResult %d)", what,
                       static_cast<int>(r));
}

Result<Buffer> createBuffer(const Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                            VkMemoryPropertyFlags properties) {
  Buffer b;
  b.size = std::max<VkDeviceSize>(size, 16);
  VkBufferCreateInfo buffer_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  buffer_info.size = b.size;
  buffer_info.usage = usage;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(ctx.device(), &buffer_info, nullptr, &b.buffer);
  if (r != VK_SUCCESS) return vkError("vkCreateBuffer", r);
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(ctx.device(), b.buffer, &requirements);
  VkMemoryAllocateInfo allocation{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  allocation.allocationSize = requirements.size;
  allocation.memoryTypeIndex = ctx.memoryType(requirements.memoryTypeBits, properties);
  if (allocation.memoryTypeIndex == UINT32_MAX) {
    vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
    return Error::format(ErrorCode::DeviceError, "no Vulkan memory type for a buffer of %llu bytes",
                         static_cast<unsigned long long>(size));
  }
  r = vkAllocateMemory(ctx.device(), &allocation, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
    return Error::format(
        ErrorCode::DeviceError,
        "vkAllocateMemory failed (VkResult %d) for %llu bytes (device memory full?)",
        static_cast<int>(r), static_cast<unsigned long long>(size));
  }
  vkBindBufferMemory(ctx.device(), b.buffer, b.memory, 0);
  if (properties & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
    vkMapMemory(ctx.device(), b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped);
  return b;
}

Result<Buffer> createHostBuffer(const Context& ctx, VkDeviceSize size) {
  return createBuffer(ctx, size,
                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
}

// A coded pose stream -> device buffer: runs of frames decoded straight into the mapped staging
// buffer, then copied, so a coded stream takes no more copies than a raw one.
Status uploadDecoded(const Context& ctx, Buffer& staging, const Buffer& dst,
                     const mmdb::Database& db, mmdb::PoseStream stream) {
  const uint32_t frames = db.frameCount();
  const VkDeviceSize row = VkDeviceSize(db.jointCount()) * sizeof(mmdb::Float4);
  const uint32_t per_chunk = uint32_t(std::min<VkDeviceSize>(frames, staging.size / row));
  if (per_chunk == 0) {
    return Error(ErrorCode::InvalidArgument,
                 "a frame of the pose streams does not fit the staging buffer");
  }
  for (uint32_t first = 0; first < frames;) {
    const uint32_t count = std::min(per_chunk, frames - first);
    const mmdb::Span<mmdb::Float4> out(static_cast<mmdb::Float4*>(staging.mapped),
                                       size_t(count) * db.jointCount());
    mmdb::PoseBuffers buffers;
    switch (stream) {
      case mmdb::PoseStream::Rotations:
        buffers.rotations = out;
        break;
      case mmdb::PoseStream::Translations:
        buffers.translations = out;
        break;
      case mmdb::PoseStream::Velocities:
        buffers.velocities = out;
        break;
      case mmdb::PoseStream::AngularVelocities:
        buffers.angular_velocities = out;
        break;
    }
    if (Status s = db.decodePoses(first, count, buffers); !s) {
      return Error::format(s.code(), "decoding the pose streams: %.200s", s.message());
    }
    const VkDeviceSize offset = VkDeviceSize(first) * row;
    Status copied = ctx.submitAndWait([&](VkCommandBuffer cmd) {
      VkBufferCopy copy{0, offset, VkDeviceSize(count) * row};
      vkCmdCopyBuffer(cmd, staging.buffer, dst.buffer, 1, &copy);
    });
    if (!copied) return copied;
    first += count;
  }
  return Status();
}

// Host bytes -> device buffer, through a staging buffer in chunks.
Status upload(const Context& ctx, Buffer& staging, const Buffer& dst, const void* data,
              VkDeviceSize bytes) {
  const auto* src = static_cast<const uint8_t*>(data);
  for (VkDeviceSize done = 0; done < bytes;) {
    VkDeviceSize chunk = std::min(bytes - done, staging.size);
    std::memcpy(staging.mapped, src + done, chunk);
    Status copied = ctx.submitAndWait([&](VkCommandBuffer cmd) {
      VkBufferCopy copy{0, done, chunk};
      vkCmdCopyBuffer(cmd, staging.buffer, dst.buffer, 1, &copy);
    });
    if (!copied) return copied;
    done += chunk;
  }
  return Status();
}

void computeBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

}  // namespace mmdb::gpu::detail
