#include "mmdb/gpu/crowd.h"

#include "mmdb/database.h"
#include "mmdb/shaders/kBuildQuerySpv.h"
#include "mmdb/shaders/kFkSpv.h"
#include "mmdb/shaders/kInertializeSpv.h"
#include "mmdb/shaders/kMatchSharedOnlySpv.h"
#include "mmdb/shaders/kMatchSpv.h"
#include "mmdb/shaders/kResolveSpv.h"
#include "mmdb/shaders/kSampleSpv.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mmdb::gpu {
namespace {

// Binding numbers, as in shaders/common.glsl.
enum Binding : uint32_t {
  kFeatures = 0, kRanges, kRotations, kTranslations, kVelocities, kAngularVelocities, kClipStarts,
  kNormalization, kParents, kCharacters, kInputs, kQueries, kResults, kOffsets, kLocalPoses, kModelPoses,
  kBoundsMin, kBoundsMax, kBindingCount
};

constexpr uint32_t kMaxFeatureStride = 128;     // match.comp's shared query
constexpr VkDeviceSize kStagingBytes = 32u << 20;  // upload chunk
constexpr uint32_t kTimestampCount = kPassCount + 1;

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

}  // namespace

struct Crowd::Impl {
  VkDevice device = VK_NULL_HANDLE;
  std::array<Buffer, kBindingCount> buffers;
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
  void destroy(Buffer& b) {
    if (b.buffer) vkDestroyBuffer(device, b.buffer, nullptr);
    if (b.memory) vkFreeMemory(device, b.memory, nullptr);
    b = Buffer{};
  }
};

namespace {

std::string vkError(const char* what, VkResult r) {
  return std::string(what) + " failed (VkResult " + std::to_string(static_cast<int>(r)) + ")";
}

Result<Buffer> createBuffer(const Context& ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                            VkMemoryPropertyFlags properties) {
  Buffer b;
  b.size = std::max<VkDeviceSize>(size, 16);
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = b.size;
  bci.usage = usage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vkCreateBuffer(ctx.device(), &bci, nullptr, &b.buffer);
  if (r != VK_SUCCESS) return Error{vkError("vkCreateBuffer", r)};
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx.device(), b.buffer, &req);
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = ctx.memoryType(req.memoryTypeBits, properties);
  if (mai.memoryTypeIndex == UINT32_MAX) {
    vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
    return Error{"no Vulkan memory type for a buffer of " + std::to_string(size) + " bytes"};
  }
  r = vkAllocateMemory(ctx.device(), &mai, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
    return Error{vkError("vkAllocateMemory", r) + " for " + std::to_string(size) + " bytes (device memory full?)"};
  }
  vkBindBufferMemory(ctx.device(), b.buffer, b.memory, 0);
  if (properties & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) vkMapMemory(ctx.device(), b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped);
  return b;
}

Result<Buffer> createHostBuffer(const Context& ctx, VkDeviceSize size) {
  return createBuffer(ctx, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
}

// A coded pose stream -> device buffer: runs of frames decoded straight into the mapped staging
// buffer, then copied, so a coded stream takes no more copies than a raw one.
Result<bool> uploadDecoded(const Context& ctx, Buffer& staging, const Buffer& dst,
                           const mmdb::Database& db, mmdb::PoseStream stream) {
  const uint32_t frames = db.frameCount();
  const VkDeviceSize row = VkDeviceSize(db.jointCount()) * sizeof(Float4);
  const uint32_t per_chunk = uint32_t(std::min<VkDeviceSize>(frames, staging.size / row));
  if (per_chunk == 0) return Error{"a frame of the pose streams does not fit the staging buffer"};
  for (uint32_t first = 0; first < frames;) {
    const uint32_t count = std::min(per_chunk, frames - first);
    const mmdb::Span<mmdb::Float4> out(static_cast<mmdb::Float4*>(staging.mapped),
                                       size_t(count) * db.jointCount());
    mmdb::PoseBuffers buffers;
    switch (stream) {
      case mmdb::PoseStream::Rotations: buffers.rotations = out; break;
      case mmdb::PoseStream::Translations: buffers.translations = out; break;
      case mmdb::PoseStream::Velocities: buffers.velocities = out; break;
      case mmdb::PoseStream::AngularVelocities: buffers.angular_velocities = out; break;
    }
    if (mmdb::Status s = db.decodePoses(first, count, buffers); !s)
      return Error{std::string("decoding the pose streams: ") + mmdb::errorCodeName(s.code()) +
                   ": " + s.message()};
    const VkDeviceSize offset = VkDeviceSize(first) * row;
    VkResult r = ctx.submitAndWait([&](VkCommandBuffer cmd) {
      VkBufferCopy copy{0, offset, VkDeviceSize(count) * row};
      vkCmdCopyBuffer(cmd, staging.buffer, dst.buffer, 1, &copy);
    });
    if (r != VK_SUCCESS) return Error{vkError("uploading the database", r)};
    first += count;
  }
  return true;
}

// Host bytes -> device buffer at `offset`, through a staging buffer in chunks.
VkResult upload(const Context& ctx, Buffer& staging, const Buffer& dst, const void* data, VkDeviceSize bytes) {
  const auto* src = static_cast<const uint8_t*>(data);
  for (VkDeviceSize done = 0; done < bytes;) {
    VkDeviceSize chunk = std::min(bytes - done, staging.size);
    std::memcpy(staging.mapped, src + done, chunk);
    VkResult r = ctx.submitAndWait([&](VkCommandBuffer cmd) {
      VkBufferCopy copy{0, done, chunk};
      vkCmdCopyBuffer(cmd, staging.buffer, dst.buffer, 1, &copy);
    });
    if (r != VK_SUCCESS) return r;
    done += chunk;
  }
  return VK_SUCCESS;
}

void computeBarrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

constexpr VkPipelineStageFlags kAnyStage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kAnyAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

}  // namespace

Result<DatabaseView> DatabaseView::fromDatabase(const mmdb::Database& db) {
  if (!db.valid() || db.frameCount() == 0 || db.jointCount() == 0) {
    return Error{"the database is empty (not opened, or no frames or joints)"};
  }
  DatabaseView v;
  v.frame_count = db.frameCount();
  v.joint_count = db.jointCount();
  v.feature_count = db.featureCount();
  v.feature_stride = db.featureStride();
  v.frame_rate = db.frameRate();
  if (v.feature_stride % 4 != 0 || v.feature_stride > kMaxFeatureStride || v.feature_count > v.feature_stride) {
    return Error{"feature rows of " + std::to_string(v.feature_count) + " floats at stride " +
                 std::to_string(v.feature_stride) + ": the GPU passes need a stride that is a multiple of 4 and at most " +
                 std::to_string(kMaxFeatureStride) + "; re-cook with fewer features"};
  }
  static_assert(sizeof(mmdb::Float4) == sizeof(Float4) && sizeof(mmdb::MatchRange) == 16, "file layouts");
  v.features = db.features().data();
  v.ranges = db.ranges().data();
  v.range_count = static_cast<uint32_t>(db.ranges().size());
  v.rotations = reinterpret_cast<const Float4*>(db.localRotations().data());
  v.translations = reinterpret_cast<const Float4*>(db.localTranslations().data());
  v.velocities = reinterpret_cast<const Float4*>(db.localVelocities().data());
  v.angular_velocities = reinterpret_cast<const Float4*>(db.localAngularVelocities().data());
  if (db.posesCoded()) v.database = &db;  // coded streams' pointers stay null
  v.feature_offset = db.featureOffset().data();
  v.feature_scale = db.featureScale().data();
  v.parents.assign(db.parents().begin(), db.parents().end());
  const uint32_t box = db.boundsSmallSize();
  if (box >= 2 && db.boundsSmallMin().size() == size_t((v.frame_count + box - 1) / box) * v.feature_stride &&
      db.boundsSmallMax().size() == db.boundsSmallMin().size()) {
    v.bounds_size = box;
    v.bounds_rows = (v.frame_count + box - 1) / box;
    v.bounds_min = db.boundsSmallMin().data();
    v.bounds_max = db.boundsSmallMax().data();
  }
  uint32_t expected = 0;
  for (uint32_t i = 0; i < db.clipCount(); ++i) {
    const mmdb::ClipInfo clip = db.clip(i);
    if (clip.first_frame != expected || clip.frame_count == 0) {
      return Error{"clip '" + std::string(clip.name) + "' does not start where the previous one ends (global frame " +
                   std::to_string(expected) + "): the GPU passes need clips that tile the frames"};
    }
    v.clip_starts.push_back(clip.first_frame);
    expected += clip.frame_count;
  }
  if (expected != v.frame_count) return Error{"the clips do not cover the database's frames"};
  v.clip_starts.push_back(v.frame_count);
  const int32_t pos = db.findFeatureBlock(mmdb::FeatureKind::TrajectoryPosition);
  const int32_t dir = db.findFeatureBlock(mmdb::FeatureKind::TrajectoryDirection);
  if (pos < 0 || dir < 0 || db.featureBlock(uint32_t(pos)).width != 6 || db.featureBlock(uint32_t(dir)).width != 6) {
    return Error{"the GPU query needs a trajectory position and a trajectory direction block of 3 (x, z) samples each"};
  }
  v.trajectory_position_column = db.featureBlock(uint32_t(pos)).first_column;
  v.trajectory_direction_column = db.featureBlock(uint32_t(dir)).first_column;
  if (db.trajectoryTimes().size() == 3) {
    for (int i = 0; i < 3; ++i) v.trajectory_times[i] = db.trajectoryTimes()[i];
  }
  return v;
}

Crowd::Crowd(const Context& context) : ctx_(context), impl_(new Impl()) {}
Crowd::~Crowd() = default;

Result<std::unique_ptr<Crowd>> Crowd::create(const Context& ctx, const DatabaseView& db, uint32_t count,
                                             const CrowdSettings& settings) {
  if (count == 0) return Error{"a crowd needs at least one character"};
  std::unique_ptr<Crowd> crowd(new Crowd(ctx));
  Impl& im = *crowd->impl_;
  im.device = ctx.device();
  crowd->count_ = count;
  crowd->settings_ = settings;

  PassParams& p = crowd->params_;
  p.character_count = count;
  p.joint_count = db.joint_count;
  p.feature_count = db.feature_count;
  p.feature_stride = db.feature_stride;
  p.range_count = db.range_count;
  p.clip_count = static_cast<uint32_t>(db.clip_starts.size() - 1);
  p.trajectory_position_column = db.trajectory_position_column;
  p.trajectory_direction_column = db.trajectory_direction_column;
  p.ignore_surrounding = settings.ignore_surrounding ? settings.ignore_surrounding
                                                     : static_cast<uint32_t>(std::lround(db.frame_rate / 3.0f));
  p.frame_rate = db.frame_rate;
  p.search_interval = settings.search_interval;
  p.transition_cost = settings.transition_cost;
  p.inertialization_halflife = settings.inertialization_halflife;
  p.inertialization_threshold = settings.inertialization_threshold;
  p.controller_halflife = settings.controller_halflife;
  p.stagger_phases = settings.stagger_phases;
  p.bounds_size = settings.bounds_pruning && db.bounds_min ? db.bounds_size : 0;
  p.trajectory_times = {db.trajectory_times[0], db.trajectory_times[1], db.trajectory_times[2], 0};

  // Buffers: the database streams, then the per-character state.
  const VkDeviceSize poses = VkDeviceSize(db.frame_count) * db.joint_count * sizeof(Float4);
  std::vector<float> normalization(db.feature_offset, db.feature_offset + db.feature_count);
  normalization.insert(normalization.end(), db.feature_scale, db.feature_scale + db.feature_count);
  struct Source {
    const void* data;
    VkDeviceSize bytes;
  };
  std::array<Source, kBindingCount> sources{};
  sources[kFeatures] = {db.features, VkDeviceSize(db.frame_count) * db.feature_stride * sizeof(float)};
  sources[kRanges] = {db.ranges, VkDeviceSize(db.range_count) * 16};
  sources[kRotations] = {db.rotations, poses};
  sources[kTranslations] = {db.translations, poses};
  sources[kVelocities] = {db.velocities, poses};
  sources[kAngularVelocities] = {db.angular_velocities, poses};
  sources[kClipStarts] = {db.clip_starts.data(), db.clip_starts.size() * sizeof(uint32_t)};
  sources[kNormalization] = {normalization.data(), normalization.size() * sizeof(float)};
  sources[kParents] = {db.parents.data(), db.parents.size() * sizeof(int32_t)};
  const VkDeviceSize bounds_bytes = p.bounds_size ? VkDeviceSize(db.bounds_rows) * db.feature_stride * sizeof(float) : 0;
  sources[kBoundsMin] = {db.bounds_min, bounds_bytes};
  sources[kBoundsMax] = {db.bounds_max, bounds_bytes};
  const VkDeviceSize per_joint = VkDeviceSize(count) * db.joint_count;
  std::array<VkDeviceSize, kBindingCount> sizes{};
  auto isDatabaseStream = [](uint32_t b) { return b <= kParents || b == kBoundsMin || b == kBoundsMax; };
  for (uint32_t b = 0; b < kBindingCount; ++b) {
    if (isDatabaseStream(b)) sizes[b] = sources[b].bytes;
  }
  sizes[kCharacters] = count * sizeof(CharacterState);
  sizes[kInputs] = count * sizeof(CharacterInput);
  sizes[kQueries] = VkDeviceSize(count) * db.feature_stride * sizeof(float);
  sizes[kResults] = count * sizeof(MatchResult);
  sizes[kOffsets] = per_joint * sizeof(JointOffset);
  sizes[kLocalPoses] = per_joint * sizeof(JointPose);
  sizes[kModelPoses] = per_joint * sizeof(ModelJoint);

  auto staging = createHostBuffer(ctx, kStagingBytes);
  if (!staging) return staging.error();
  struct StagingGuard {
    Impl& im;
    Buffer& b;
    ~StagingGuard() { im.destroy(b); }
  } guard{im, staging.value()};
  for (uint32_t b = 0; b < kBindingCount; ++b) {
    auto buffer = createBuffer(ctx, sizes[b],
                               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (!buffer) return buffer.error();
    im.buffers[b] = buffer.value();
    const bool pose = b >= kRotations && b <= kAngularVelocities;
    if (isDatabaseStream(b) && pose && !sources[b].data && db.database) {
      auto done = uploadDecoded(ctx, staging.value(), im.buffers[b], *db.database,
                                mmdb::PoseStream(b - kRotations));
      if (!done) return done.error();
      crowd->database_bytes_ += sources[b].bytes;
    } else if (isDatabaseStream(b)) {
      VkResult r = upload(ctx, staging.value(), im.buffers[b], sources[b].data, sources[b].bytes);
      if (r != VK_SUCCESS) return Error{vkError("uploading the database", r)};
      crowd->database_bytes_ += sources[b].bytes;
    } else {
      VkResult r = ctx.submitAndWait([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, im.buffers[b].buffer, 0, VK_WHOLE_SIZE, 0); });
      if (r != VK_SUCCESS) return Error{vkError("clearing a buffer", r)};
    }
  }

  // Descriptors and pipelines, once.
  std::array<VkDescriptorSetLayoutBinding, kBindingCount> bindings{};
  for (uint32_t b = 0; b < kBindingCount; ++b) {
    bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo dslci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dslci.bindingCount = kBindingCount;
  dslci.pBindings = bindings.data();
  if (vkCreateDescriptorSetLayout(im.device, &dslci, nullptr, &im.set_layout) != VK_SUCCESS)
    return Error{"vkCreateDescriptorSetLayout failed"};
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PassParams)};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &im.set_layout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &push;
  if (vkCreatePipelineLayout(im.device, &plci, nullptr, &im.pipeline_layout) != VK_SUCCESS)
    return Error{"vkCreatePipelineLayout failed"};
  VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kBindingCount};
  VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpci.maxSets = 1;
  dpci.poolSizeCount = 1;
  dpci.pPoolSizes = &pool_size;
  if (vkCreateDescriptorPool(im.device, &dpci, nullptr, &im.pool) != VK_SUCCESS)
    return Error{"vkCreateDescriptorPool failed"};
  VkDescriptorSetAllocateInfo dsai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dsai.descriptorPool = im.pool;
  dsai.descriptorSetCount = 1;
  dsai.pSetLayouts = &im.set_layout;
  VkResult r = vkAllocateDescriptorSets(im.device, &dsai, &im.set);
  if (r != VK_SUCCESS) return Error{vkError("vkAllocateDescriptorSets", r)};
  std::array<VkDescriptorBufferInfo, kBindingCount> infos{};
  std::array<VkWriteDescriptorSet, kBindingCount> writes{};
  for (uint32_t b = 0; b < kBindingCount; ++b) {
    infos[b] = {im.buffers[b].buffer, 0, VK_WHOLE_SIZE};
    writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[b].dstSet = im.set;
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
  }
  vkUpdateDescriptorSets(im.device, kBindingCount, writes.data(), 0, nullptr);

  const bool subgroups = ctx.info().subgroup_arithmetic && !settings.shared_memory_reduction;
  struct Code {
    const uint32_t* words;
    size_t bytes;
  };
  const std::array<Code, kPassCount> code{{
      {kBuildQuerySpv, sizeof(kBuildQuerySpv)},
      {subgroups ? kMatchSpv : kMatchSharedOnlySpv, subgroups ? sizeof(kMatchSpv) : sizeof(kMatchSharedOnlySpv)},
      {kResolveSpv, sizeof(kResolveSpv)},
      {kSampleSpv, sizeof(kSampleSpv)},
      {kInertializeSpv, sizeof(kInertializeSpv)},
      {kFkSpv, sizeof(kFkSpv)},
  }};
  for (uint32_t i = 0; i < kPassCount; ++i) {
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = code[i].bytes;
    smci.pCode = code[i].words;
    VkShaderModule module = VK_NULL_HANDLE;
    r = vkCreateShaderModule(im.device, &smci, nullptr, &module);
    if (r != VK_SUCCESS) return Error{vkError("vkCreateShaderModule", r)};
    VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpci.stage.module = module;
    cpci.stage.pName = "main";
    cpci.layout = im.pipeline_layout;
    r = vkCreateComputePipelines(im.device, VK_NULL_HANDLE, 1, &cpci, nullptr, &im.pipelines[i]);
    vkDestroyShaderModule(im.device, module, nullptr);
    if (r != VK_SUCCESS) return Error{vkError("vkCreateComputePipelines", r)};
  }

  if (settings.timestamps && ctx.info().timestamp_period_ns > 0) {
    VkQueryPoolCreateInfo qpci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpci.queryCount = kTimestampCount;
    if (vkCreateQueryPool(im.device, &qpci, nullptr, &im.queries) == VK_SUCCESS) {
      im.timestamps = true;
      im.timestamp_period_ns = ctx.info().timestamp_period_ns;
    }
  }

  // Initial state: nothing playing, at the origin facing +Z, no offsets.
  crowd->inputs_.assign(count, CharacterInput{});
  if (crowd->writeCharacters(std::vector<CharacterState>(count)) != VK_SUCCESS) {
    return Error{"uploading the initial character state failed"};
  }
  return crowd;
}

void Crowd::setStick(uint32_t i, float x, float z) {
  CharacterInput& in = inputs_.at(i);
  float length = std::sqrt(x * x + z * z);
  if (length > 1.0f) {
    x /= length;
    z /= length;
  }
  in.desired_velocity = {x * settings_.max_speed, 0, z * settings_.max_speed, 0};
  in.desired_facing = length > 0.01f ? Float4{x, 0, z, 0} : Float4{};
}

void Crowd::setInput(uint32_t i, const CharacterInput& input) { inputs_.at(i) = input; }

void Crowd::setInputs(const CharacterInput* inputs, size_t count) {
  std::copy(inputs, inputs + std::min<size_t>(count, count_), inputs_.begin());
}

void Crowd::setTagFilter(uint32_t i, uint64_t required, uint64_t excluded) {
  CharacterInput& in = inputs_.at(i);
  in.required_tags_lo = uint32_t(required);
  in.required_tags_hi = uint32_t(required >> 32);
  in.excluded_tags_lo = uint32_t(excluded);
  in.excluded_tags_hi = uint32_t(excluded >> 32);
}

void Crowd::forceSearch(uint32_t i) { inputs_.at(i).force_search = 1; }

void Crowd::recordPass(VkCommandBuffer cmd, Pass pass, float dt) {
  Impl& im = *impl_;
  PassParams p = params_;
  p.dt = dt;
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, im.pipelines[uint32_t(pass)]);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, im.pipeline_layout, 0, 1, &im.set, 0, nullptr);
  vkCmdPushConstants(cmd, im.pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PassParams), &p);
  const uint32_t per_character = (count_ + 63) / 64;
  const uint32_t per_joint = uint32_t((uint64_t(count_) * p.joint_count + 63) / 64);
  switch (pass) {
    case Pass::Match: vkCmdDispatch(cmd, count_, 1, 1); break;
    case Pass::Sample:
    case Pass::Inertialize: vkCmdDispatch(cmd, per_joint, 1, 1); break;
    default: vkCmdDispatch(cmd, per_character, 1, 1); break;
  }
  computeBarrier(cmd, kAnyStage, VK_ACCESS_SHADER_WRITE_BIT, kAnyStage, kAnyAccess);
}

void Crowd::recordInputs(VkCommandBuffer cmd) {
  // Inputs travel inside the command buffer (vkCmdUpdateBuffer takes at most 64 KiB per call).
  computeBarrier(cmd, kAnyStage, kAnyAccess, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  const VkDeviceSize bytes = inputs_.size() * sizeof(CharacterInput);
  for (VkDeviceSize done = 0; done < bytes; done += 65536) {
    vkCmdUpdateBuffer(cmd, impl_->buffers[kInputs].buffer, done, std::min<VkDeviceSize>(65536, bytes - done),
                      reinterpret_cast<const uint8_t*>(inputs_.data()) + done);
  }
  computeBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
}

void Crowd::step(VkCommandBuffer cmd, float dt) {
  Impl& im = *impl_;
  if (im.timestamps) {
    vkCmdResetQueryPool(cmd, im.queries, 0, kTimestampCount);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, im.queries, 0);
  }
  recordInputs(cmd);
  for (auto& in : inputs_) in.force_search = 0;
  for (uint32_t i = 0; i < kPassCount; ++i) {
    recordPass(cmd, Pass(i), dt);
    if (im.timestamps) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, im.queries, i + 1);
  }
}

VkResult Crowd::stepAndWait(float dt) {
  return ctx_.submitAndWait([&](VkCommandBuffer cmd) { step(cmd, dt); });
}

VkResult Crowd::passAndWait(Pass pass, float dt) {
  return ctx_.submitAndWait([&](VkCommandBuffer cmd) {
    computeBarrier(cmd, kAnyStage, kAnyAccess, kAnyStage, kAnyAccess);
    if (pass == Pass::BuildQuery || pass == Pass::Match) recordInputs(cmd);  // the passes that read them
    recordPass(cmd, pass, dt);
  });
}

namespace {

template <class T>
std::vector<T> readBuffer(const Context& ctx, VkBuffer buffer, size_t count) {
  auto host = createHostBuffer(ctx, count * sizeof(T));
  if (!host) return {};
  Buffer& b = host.value();
  VkResult r = ctx.submitAndWait([&](VkCommandBuffer cmd) {
    computeBarrier(cmd, kAnyStage, kAnyAccess, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    VkBufferCopy copy{0, 0, count * sizeof(T)};
    vkCmdCopyBuffer(cmd, buffer, b.buffer, 1, &copy);
  });
  std::vector<T> out;
  if (r == VK_SUCCESS) {
    out.resize(count);
    std::memcpy(out.data(), b.mapped, count * sizeof(T));
  }
  vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
  vkFreeMemory(ctx.device(), b.memory, nullptr);
  return out;
}

template <class T>
VkResult writeBuffer(const Context& ctx, VkBuffer buffer, VkDeviceSize capacity, const std::vector<T>& data) {
  const VkDeviceSize bytes = data.size() * sizeof(T);
  if (bytes != capacity && !(capacity == 16 && bytes == 0)) return VK_ERROR_UNKNOWN;
  auto host = createHostBuffer(ctx, bytes);
  if (!host) return VK_ERROR_OUT_OF_HOST_MEMORY;
  Buffer& b = host.value();
  std::memcpy(b.mapped, data.data(), bytes);
  VkResult r = ctx.submitAndWait([&](VkCommandBuffer cmd) {
    computeBarrier(cmd, kAnyStage, kAnyAccess, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy copy{0, 0, bytes};
    vkCmdCopyBuffer(cmd, b.buffer, buffer, 1, &copy);
    computeBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, kAnyStage, kAnyAccess);
  });
  vkDestroyBuffer(ctx.device(), b.buffer, nullptr);
  vkFreeMemory(ctx.device(), b.memory, nullptr);
  return r;
}

}  // namespace

std::vector<CharacterState> Crowd::readCharacters() const {
  return readBuffer<CharacterState>(ctx_, impl_->buffers[kCharacters].buffer, count_);
}
std::vector<MatchResult> Crowd::readResults() const {
  return readBuffer<MatchResult>(ctx_, impl_->buffers[kResults].buffer, count_);
}
std::vector<float> Crowd::readQueries() const {
  return readBuffer<float>(ctx_, impl_->buffers[kQueries].buffer, size_t(count_) * params_.feature_stride);
}
std::vector<JointPose> Crowd::readLocalPoses() const {
  return readBuffer<JointPose>(ctx_, impl_->buffers[kLocalPoses].buffer, size_t(count_) * params_.joint_count);
}
std::vector<ModelJoint> Crowd::readModelPoses() const {
  return readBuffer<ModelJoint>(ctx_, impl_->buffers[kModelPoses].buffer, size_t(count_) * params_.joint_count);
}
std::vector<JointOffset> Crowd::readOffsets() const {
  return readBuffer<JointOffset>(ctx_, impl_->buffers[kOffsets].buffer, size_t(count_) * params_.joint_count);
}

std::vector<Decision> Crowd::readDecisions() const {
  std::vector<CharacterState> states = readCharacters();
  std::vector<Decision> out(states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    const CharacterState& s = states[i];
    out[i].switched = (s.flags & kCharacterSwitched) != 0;
    out[i].frame = s.last_winner;
    out[i].cost = s.last_cost;
    out[i].playing = s.current_frame;
  }
  std::vector<MatchResult> results = readResults();
  for (size_t i = 0; i < results.size() && i < out.size(); ++i) {
    out[i].reason = (states[i].flags & kCharacterSearched) ? SearchReason(results[i].reason) : SearchReason::None;
  }
  return out;
}

PassTimings Crowd::readTimings() const {
  PassTimings t;
  if (!impl_->timestamps) return t;
  std::array<uint64_t, kTimestampCount> stamps{};
  VkResult r = vkGetQueryPoolResults(impl_->device, impl_->queries, 0, kTimestampCount, sizeof(stamps), stamps.data(),
                                     sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (r != VK_SUCCESS) return t;
  for (uint32_t i = 0; i < kPassCount; ++i) {
    t.ms[i] = double(stamps[i + 1] - stamps[i]) * impl_->timestamp_period_ns * 1e-6;
  }
  t.total_ms = double(stamps[kPassCount] - stamps[0]) * impl_->timestamp_period_ns * 1e-6;
  t.valid = true;
  return t;
}

VkResult Crowd::writeCharacters(const std::vector<CharacterState>& v) {
  return writeBuffer(ctx_, impl_->buffers[kCharacters].buffer, impl_->buffers[kCharacters].size, v);
}
VkResult Crowd::writeResults(const std::vector<MatchResult>& v) {
  return writeBuffer(ctx_, impl_->buffers[kResults].buffer, impl_->buffers[kResults].size, v);
}
VkResult Crowd::writeQueries(const std::vector<float>& v) {
  return writeBuffer(ctx_, impl_->buffers[kQueries].buffer, impl_->buffers[kQueries].size, v);
}
VkResult Crowd::writeLocalPoses(const std::vector<JointPose>& v) {
  return writeBuffer(ctx_, impl_->buffers[kLocalPoses].buffer, impl_->buffers[kLocalPoses].size, v);
}
VkResult Crowd::writeOffsets(const std::vector<JointOffset>& v) {
  return writeBuffer(ctx_, impl_->buffers[kOffsets].buffer, impl_->buffers[kOffsets].size, v);
}

}  // namespace mmdb::gpu
