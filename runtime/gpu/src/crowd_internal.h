// The GPU crowd's private parts, shared by its source files: the buffers' bindings, a device
// buffer, the crowd's Vulkan objects (Crowd::Impl), and the helpers that make, fill and fence
// buffers.
#pragma once

#include "mmdb/gpu/crowd.h"

#include "mmdb/database.h"

#include <array>

namespace mmdb::gpu {
namespace detail {

// Binding numbers, from shader_interface.h.
enum Binding : uint32_t {
  kFeatures = MMDB_BINDING_FEATURES,
  kRanges = MMDB_BINDING_RANGES,
  kRotations = MMDB_BINDING_ROTATIONS,
  kTranslations = MMDB_BINDING_TRANSLATIONS,
  kVelocities = MMDB_BINDING_VELOCITIES,
  kAngularVelocities = MMDB_BINDING_ANGULAR_VELOCITIES,
  kClipStarts = MMDB_BINDING_CLIP_STARTS,
  kNormalization = MMDB_BINDING_NORMALIZATION,
  kParents = MMDB_BINDING_PARENTS,
  kCharacters = MMDB_BINDING_CHARACTERS,
  kInputs = MMDB_BINDING_INPUTS,
  kQueries = MMDB_BINDING_QUERIES,
  kResults = MMDB_BINDING_RESULTS,
  kOffsets = MMDB_BINDING_OFFSETS,
  kLocalPoses = MMDB_BINDING_LOCAL_POSES,
  kModelPoses = MMDB_BINDING_MODEL_POSES,
  kBoundsMin = MMDB_BINDING_BOUNDS_MIN,
  kBoundsMax = MMDB_BINDING_BOUNDS_MAX,
  kRootMotion = MMDB_BINDING_ROOT_MOTION,
  kBiases = MMDB_BINDING_BIASES,
  kWeights = MMDB_BINDING_WEIGHTS,
  kContacts = MMDB_BINDING_CONTACTS,
  kFeet = MMDB_BINDING_FEET,
  kLegs = MMDB_BINDING_LEGS,
  kJointLimits = MMDB_BINDING_JOINT_LIMITS,
  kUnlocked = MMDB_BINDING_UNLOCKED,
  kBindingCount = MMDB_BINDING_COUNT
};
// The pose streams are in PoseStream order (the upload decodes stream b - kRotations).
static_assert(kTranslations == kRotations + uint32_t(mmdb::PoseStream::Translations) &&
                  kVelocities == kRotations + uint32_t(mmdb::PoseStream::Velocities) &&
                  kAngularVelocities == kRotations + uint32_t(mmdb::PoseStream::AngularVelocities),
              "pose stream bindings");

inline bool isPoseStream(uint32_t b) { return b >= kRotations && b <= kAngularVelocities; }
inline bool isDatabaseStream(uint32_t b) {
  return b <= kParents || b == kBoundsMin || b == kBoundsMax || b == kRootMotion || b == kBiases ||
         b == kContacts;
}
// Uploaded at create (the database's streams and the crowd's foot-lock setup); the rest starts 0.
inline bool isUploaded(uint32_t b) {
  return isDatabaseStream(b) || b == kLegs || b == kJointLimits;
}

constexpr VkDeviceSize kStagingBytes = 32u << 20;  // upload chunk
constexpr uint32_t kTimestampCount = kPassCount + 1;

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

inline uint32_t groupsFor(uint64_t threads) {
  return uint32_t((threads + kGroupSize - 1) / kGroupSize);
}

Error vkError(const char* what, VkResult r);
Result<Buffer> createBuffer(const Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                            VkMemoryPropertyFlags properties);
Result<Buffer> createHostBuffer(const Context& ctx, VkDeviceSize size);
// A coded pose stream -> device buffer, decoded into the staging buffer run by run.
Status uploadDecoded(const Context& ctx, Buffer& staging, const Buffer& dst,
                     const mmdb::Database& db, mmdb::PoseStream stream);
// Host bytes -> device buffer, through a staging buffer in chunks.
Status upload(const Context& ctx, Buffer& staging, const Buffer& dst, const void* data,
              VkDeviceSize bytes);
void computeBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);
// Every compute and transfer stage and access, for the barriers between passes.
constexpr VkPipelineStageFlags kAnyStage =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kAnyAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

// The push constants of a crowd; dt is set per pass.
PassParams paramsFor(const DatabaseView& db, uint32_t count, const CrowdSettings& settings);
// A host input's desired velocity and facing: finite and within the crowds' limits.
Status checkInput(const char* what, uint32_t i, const CharacterInput& input);

}  // namespace detail

struct Crowd::Impl {
  VkDevice device = VK_NULL_HANDLE;
  std::array<detail::Buffer, detail::kBindingCount> buffers;
  std::array<VkDeviceSize, detail::kBindingCount>
      bytes{};  // what each holds (a buffer has 16 at least)
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;
  std::array<VkPipeline, kPassCount> pipelines{};
  VkQueryPool queries = VK_NULL_HANDLE;
  bool timestamps = false;
  double timestamp_period_ns = 0;

  ~Impl() {
    if (!device) return;
    vkDeviceWaitIdle(device);
    for (auto p : pipelines) {
      if (p) vkDestroyPipeline(device, p, nullptr);
    }
    if (queries) vkDestroyQueryPool(device, queries, nullptr);
    if (pool) vkDestroyDescriptorPool(device, pool, nullptr);
    if (pipeline_layout) vkDestroyPipelineLayout(device, pipeline_layout, nullptr);
    if (set_layout) vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
    for (auto& b : buffers) destroy(b);
  }
  void destroy(detail::Buffer& b) {
    if (b.buffer) vkDestroyBuffer(device, b.buffer, nullptr);
    if (b.memory) vkFreeMemory(device, b.memory, nullptr);
    b = detail::Buffer{};
  }
};

}  // namespace mmdb::gpu
