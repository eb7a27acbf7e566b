#include "mmdb/gpu/crowd.h"

#include "mmdb/crowd.h"
#include "mmdb/database.h"
#include "mmdb/shaders/kBuildQuerySpv.h"
#include "mmdb/shaders/kFkSpv.h"
#include "mmdb/shaders/kFootLockSpv.h"
#include "mmdb/shaders/kInertializeSpv.h"
#include "mmdb/shaders/kMatchSharedOnlySpv.h"
#include "mmdb/shaders/kMatchSpv.h"
#include "mmdb/shaders/kResolveSpv.h"
#include "mmdb/shaders/kSampleSpv.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace mmdb::gpu {
namespace {

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

bool isPoseStream(uint32_t b) { return b >= kRotations && b <= kAngularVelocities; }
bool isDatabaseStream(uint32_t b) {
  return b <= kParents || b == kBoundsMin || b == kBoundsMax || b == kRootMotion || b == kBiases ||
         b == kContacts;
}
// Uploaded at create (the database's streams and the crowd's foot-lock setup); the rest starts 0.
bool isUploaded(uint32_t b) { return isDatabaseStream(b) || b == kLegs || b == kJointLimits; }

constexpr VkDeviceSize kStagingBytes = 32u << 20;  // upload chunk
constexpr uint32_t kTimestampCount = kPassCount + 1;

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

uint32_t groupsFor(uint64_t threads) { return uint32_t((threads + kGroupSize - 1) / kGroupSize); }

}  // namespace

struct Crowd::Impl {
  VkDevice device = VK_NULL_HANDLE;
  std::array<Buffer, kBindingCount> buffers;
  std::array<VkDeviceSize, kBindingCount> bytes{};  // what each holds (a buffer has 16 at least)
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

constexpr VkPipelineStageFlags kAnyStage =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kAnyAccess = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

// The push constants of a crowd; dt is set per pass.
PassParams paramsFor(const DatabaseView& db, uint32_t count, const CrowdSettings& settings) {
  PassParams p{};
  p.character_count = count;
  p.joint_count = db.joint_count;
  p.feature_count = db.feature_count;
  p.feature_stride = db.feature_stride;
  p.range_count = db.range_count;
  p.clip_count = static_cast<uint32_t>(db.clip_starts.size() - 1);
  p.trajectory_position_column = db.trajectory_position_column;
  p.trajectory_direction_column = db.trajectory_direction_column;
  p.neighbourhood_frames = settings.neighbourhood_frames < 0 ? db.default_neighbourhood_frames
                                                             : settings.neighbourhood_frames;
  p.frame_rate = db.frame_rate;
  p.frame_period = 1.f / db.frame_rate;
  p.dt = 1.f / 60;
  p.search_interval_ticks = settings.search_interval_ticks;
  p.transition_cost = settings.transition_cost;
  p.inertialization_halflife = settings.inertialization_halflife;
  p.inertialization_rate_halflife = settings.inertialization_rate_halflife;
  p.inertialization_threshold = settings.inertialization_threshold;
  p.controller_halflife = settings.controller_halflife;
  p.stagger_phases = settings.stagger_phases;
  p.bounds_size = settings.bounds_pruning && db.bounds_min ? db.bounds_size : 0;
  p.max_drift = settings.max_drift;
  p.policies = (settings.search_when_settled ? kPolicySearchWhenSettled : 0u) |
               (settings.range_end_moves_on ? kPolicyRangeEndMovesOn : 0u) |
               (settings.start_stagger_intervals > 0 ? kPolicyStaggerStarts : 0u) |
               (settings.transition_speed_limit > 0.f ? kPolicySpeedLimit : 0u) |
               (settings.search_at_clip_end ? kPolicyClipEndOnly : 0u) |
               (settings.unrotated_angular_offsets ? kPolicyUnrotatedRates : 0u) |
               (settings.predict_before_update ? kPolicyPredictBeforeUpdate : 0u) |
               (settings.show_next_frame ? kPolicyShowNextFrame : 0u) |
               (settings.reference_arithmetic ? kPolicyReferenceArithmetic : 0u) |
               (std::min(mmdb::continueFrames(settings.continue_window, db.frame_rate), 0xFFFFu)
                << kPolicyContinueShift);
  p.jump_cooldown = settings.jump_cooldown;
  p.range_end_margin = mmdb::continueFrames(settings.range_end_margin, db.frame_rate);
  p.trajectory_times = {db.trajectory_times[0], db.trajectory_times[1], db.trajectory_times[2], 0};
  return p;
}

// A host input's desired velocity and facing: finite and within the crowds' limits.
Status checkInput(const char* what, uint32_t i, const CharacterInput& input) {
  const mmdb::Float4& v = input.desired_velocity;
  const mmdb::Float4& f = input.desired_facing;
  return mmdb::checkStickInput(what, i, glm::vec3(v.x, v.y, v.z), glm::vec3(f.x, f.y, f.z));
}

}  // namespace

Result<DatabaseView> DatabaseView::fromDatabase(const mmdb::Database& db) {
  if (!db.valid() || db.frameCount() == 0 || db.jointCount() == 0) {
    return Error(ErrorCode::InvalidArgument,
                 "the database is empty (not opened, or no frames or joints)");
  }
  DatabaseView v;
  v.frame_count = db.frameCount();
  v.joint_count = db.jointCount();
  v.feature_count = db.featureCount();
  v.feature_stride = db.featureStride();
  v.frame_rate = db.frameRate();
  v.default_neighbourhood_frames = db.defaultNeighbourhoodFrames();
  if (v.feature_stride % 4 != 0 || v.feature_stride > kMaxFeatureStride ||
      v.feature_count > v.feature_stride) {
    return Error::format(
        ErrorCode::InvalidArgument,
        "feature rows of %u floats at stride %u: the GPU passes need a stride that is a multiple "
        "of 4 and at most %u; re-cook with fewer features",
        v.feature_count, v.feature_stride, kMaxFeatureStride);
  }
  if (db.rootMotion().size() != v.frame_count) {
    return Error(ErrorCode::InvalidArgument, "the GPU passes need the root motion of every frame");
  }
  v.features = db.features().data();
  v.ranges = db.ranges().data();
  v.range_count = static_cast<uint32_t>(db.ranges().size());
  v.rotations = db.localRotations().data();
  v.translations = db.localTranslations().data();
  v.velocities = db.localVelocities().data();
  v.angular_velocities = db.localAngularVelocities().data();
  v.root_motion = db.rootMotion().data();
  if (db.posesCoded()) v.database = &db;  // coded streams' pointers stay null
  v.feature_offset = db.featureOffset().data();
  v.feature_scale = db.featureScale().data();
  v.parents.assign(db.parents().begin(), db.parents().end());
  for (uint32_t r = 0; r < v.range_count; ++r) v.biases.push_back(db.rangeBias(r));
  for (uint32_t c = 0; c < db.clipCount(); ++c) v.biases.push_back(db.clip(c).bias);
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b) {
    const mmdb::FeatureBlockInfo block = db.featureBlock(b);
    v.blocks.push_back({std::string(block.name), block.first_column, block.width});
  }
  const uint32_t box = db.boundsSmallSize();
  if (box >= 2 &&
      db.boundsSmallMin().size() == size_t((v.frame_count + box - 1) / box) * v.feature_stride &&
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
      return Error::format(
          ErrorCode::InvalidArgument,
          "clip '%.*s' does not start where the previous one ends (global frame %u): the GPU "
          "passes need clips that tile the frames",
          int(clip.name.size()), clip.name.data(), expected);
    }
    v.clip_starts.push_back(clip.first_frame);
    v.clip_tags.push_back(clip.tag_mask);
    expected += clip.frame_count;
  }
  v.mirrored_tag = mmdb::mirroredTagMask(db);

  if (expected != v.frame_count)
    return Error(ErrorCode::InvalidArgument, "the clips do not cover the database's frames");
  v.clip_starts.push_back(v.frame_count);
  const int32_t pos = db.findFeatureBlock(mmdb::FeatureKind::TrajectoryPosition);
  const int32_t dir = db.findFeatureBlock(mmdb::FeatureKind::TrajectoryDirection);
  if (pos < 0 || dir < 0 || db.featureBlock(uint32_t(pos)).width != 6 ||
      db.featureBlock(uint32_t(dir)).width != 6) {
    return Error(ErrorCode::InvalidArgument,
                 "the GPU query needs a trajectory position and a trajectory direction block of 3 "
                 "(x, z) samples each");
  }
  v.trajectory_position_column = db.featureBlock(uint32_t(pos)).first_column;
  v.trajectory_direction_column = db.featureBlock(uint32_t(dir)).first_column;
  if (db.trajectoryTimes().size() == 3) {
    for (int i = 0; i < 3; ++i) v.trajectory_times[i] = db.trajectoryTimes()[i];
  }
  if (db.contacts().size() == v.frame_count) v.contacts = db.contacts().data();
  Result<std::vector<float>> steps = mmdb::clipJointSteps(db);  // coded streams decoded in windows
  if (!steps) return steps.error();
  v.clip_joint_steps = std::move(steps.value());
  mmdb::Result<std::array<mmdb::LegChain, mmdb::kLegCount>> legs = mmdb::findLegChains(db);
  if (legs) {
    v.legs = legs.value();
  } else {
    v.legs_status = legs.error();
  }
  return v;
}

Crowd::Crowd(const Context& context) : ctx_(context), impl_(new Impl()) {}
Crowd::~Crowd() = default;

Result<std::unique_ptr<Crowd>> Crowd::create(const Context& ctx, const DatabaseView& db,
                                             uint32_t count, const CrowdSettings& settings) {
  if (count == 0) return Error(ErrorCode::InvalidArgument, "a crowd needs at least one character");
  if (Status s = mmdb::checkCrowdSize("gpu::Crowd::create", count); !s) return s;
  if (Status s = mmdb::checkControllerSettings("gpu::Crowd::create", settings.max_speed,
                                               settings.controller_halflife);
      !s)
    return s;
  if (!(settings.max_drift >= 0)) {
    return Error::format(ErrorCode::InvalidArgument, "max_drift %g m must be >= 0",
                         double(settings.max_drift));
  }
  for (const auto& [name, value] :
       {std::pair<const char*, float>{"inertialization_halflife",
                                      settings.inertialization_halflife},
        {"inertialization_rate_halflife", settings.inertialization_rate_halflife}})
    if (!(std::isfinite(value) && value > 0.f))
      return Error::format(ErrorCode::InvalidArgument, "%s %g s must be finite and > 0", name,
                           double(value));
  const struct {
    const char* name;
    float value;
  } policies[] = {{"transition_speed_limit", settings.transition_speed_limit},
                  {"continue_window", settings.continue_window},
                  {"jump_cooldown", settings.jump_cooldown},
                  {"range_end_margin", settings.range_end_margin},
                  {"settle_velocity_change", settings.settle_velocity_change},
                  {"settle_rotation_change", settings.settle_rotation_change},
                  {"search_interval_seconds", settings.search_interval_seconds},
                  {"settle_search_interval", settings.settle_search_interval}};
  for (const auto& p : policies)
    if (!(std::isfinite(p.value) && p.value >= 0.f))
      return Error::format(ErrorCode::InvalidArgument, "%s %g must be finite and >= 0", p.name,
                           double(p.value));
  if (Status s = mmdb::checkStartStagger("", settings.search_interval_ticks,
                                         settings.start_stagger_intervals);
      !s)
    return s;
  if (db.clip_starts.empty() || db.biases.size() != db.range_count + db.clip_starts.size() - 1) {
    return Error::format(ErrorCode::InvalidArgument,
                         "the view holds %zu cost biases for %u ranges and %zu clips (one each; "
                         "DatabaseView::fromDatabase fills them)",
                         db.biases.size(), db.range_count,
                         db.clip_starts.empty() ? size_t(0) : db.clip_starts.size() - 1);
  }
  if (settings.reference_arithmetic && settings.transition_speed_limit > 0.f)
    return Error::format(ErrorCode::InvalidArgument,
                         "reference_arithmetic decays a transition's offsets step by step, which "
                         "transition_speed_limit %g cannot hold back: set it to 0",
                         double(settings.transition_speed_limit));
  if (Status s = mmdb::validateSynchronization("", settings.synchronization); !s) return s;
  mmdb::FootLockSettings foot;
  foot.foot_unlock_radius = settings.foot_unlock_radius;
  foot.foot_unlock_halflife = settings.foot_unlock_halflife;
  foot.ik_foot_height = settings.ik_foot_height;
  foot.ik_toe_length = settings.ik_toe_length;
  foot.ik_max_length_buffer = settings.ik_max_length_buffer;
  if (Status s = mmdb::validateFootLockSettings(foot); !s) return s;
  if (settings.foot_locking && !db.legs_status) {
    return Error::format(ErrorCode::InvalidArgument,
                         "foot locking: %.180s (or set foot_locking = false)",
                         db.legs_status.message());
  }
  if (settings.foot_locking && !db.contacts) {
    return Error(ErrorCode::InvalidArgument,
                 "foot locking: the view has no contact bits (DatabaseView::fromDatabase fills "
                 "them), or set foot_locking = false");
  }
  if (settings.transition_speed_limit > 0.f && db.clip_joint_steps.size() != db.joint_count) {
    return Error::format(ErrorCode::InvalidArgument,
                         "transition speed limit: the view holds %zu clip joint steps for %u "
                         "joints (DatabaseView::fromDatabase fills them), or set "
                         "transition_speed_limit = 0",
                         db.clip_joint_steps.size(), db.joint_count);
  }
  std::unique_ptr<Crowd> crowd(new Crowd(ctx));
  crowd->impl_->device = ctx.device();
  crowd->count_ = count;
  crowd->settings_ = settings;
  crowd->params_ = paramsFor(db, count, settings);
  if (Status s = crowd->sizeBuffers(db); !s) return s;
  if (Status s = crowd->uploadDatabase(db); !s) return s;
  if (Status s = crowd->createDescriptors(); !s) return s;
  if (Status s = crowd->createPipelines(); !s) return s;
  crowd->createTimestampQueries();
  crowd->inputs_.assign(count, CharacterInput{});
  crowd->teleports_.assign(count, Teleport{});
  const auto* ranges = static_cast<const mmdb::MatchRange*>(db.ranges);
  crowd->ranges_.assign(ranges, ranges + (ranges ? db.range_count : 0u));
  crowd->clip_starts_ = db.clip_starts;
  crowd->clip_tags_ = db.clip_tags;
  crowd->event_tags_ = settings.mirrored_tag_events ? ~0ull : ~db.mirrored_tag;
  crowd->clip_tags_.resize(db.clip_starts.size() - 1, 0);  // a view filled by hand may lack them
  if (db.contacts) crowd->contacts_.assign(db.contacts, db.contacts + db.frame_count);
  crowd->simulations_.assign(count, Simulation{});
  crowd->blocks_ = db.blocks;
  crowd->column_weights_.assign(size_t(count) * db.feature_stride, 1.f);
  std::vector<CrowdCharacter> characters(count, initialCharacter());
  for (uint32_t c = 0; c < count; ++c) {  // a staggered start waits for its timer, as on the CPU
    characters[c].search_timer =
        int32_t(mmdb::startDelayTicks(c, settings.search_interval_ticks, settings.stagger_phases,
                                      settings.start_stagger_intervals));
    characters[c].settle_clock = settings.settle_search_interval;
  }
  // start_playing: the first frame of the first range from creation, as on the CPU.
  if (settings.start_playing && db.range_count > 0) {
    mmdb::MatchRange range;
    std::memcpy(&range, db.ranges, sizeof range);
    uint32_t clip = 0;
    while (clip + 2 < db.clip_starts.size() && db.clip_starts[clip + 1] <= range.first_frame)
      ++clip;
    const uint32_t first = db.clip_starts[clip];
    for (uint32_t c = 0; c < count; ++c) {
      CrowdCharacter& ch = characters[c];
      ch.flags |= kCharacterPlaying;
      ch.clip_first = first;
      ch.clip_count = db.clip_starts[clip + 1] - first;
      ch.clip_time = float(range.first_frame - first) / db.frame_rate;
      ch.current_frame = range.first_frame;
      ch.last_winner = range.first_frame;
      ch.search_timer =
          int32_t(settings.search_interval_ticks +
                  mmdb::staggerTicks(c, settings.search_interval_ticks, settings.stagger_phases));
      ch.search_clock = settings.search_interval_seconds;
    }
  }
  if (Status s = crowd->writeCharacters(characters); !s) return s;
  return crowd;
}

// A device-local buffer per binding: the database streams, then the per-character state.
Status Crowd::sizeBuffers(const DatabaseView& db) {
  const VkDeviceSize frames = db.frame_count;
  const VkDeviceSize poses = frames * db.joint_count * sizeof(mmdb::Float4);
  const VkDeviceSize bounds =
      params_.bounds_size ? VkDeviceSize(db.bounds_rows) * db.feature_stride * sizeof(float) : 0;
  const VkDeviceSize per_joint = VkDeviceSize(count_) * db.joint_count;
  std::array<VkDeviceSize, kBindingCount> sizes{};
  sizes[kFeatures] = frames * db.feature_stride * sizeof(float);
  sizes[kRanges] = VkDeviceSize(db.range_count) * sizeof(mmdb::MatchRange);
  sizes[kRotations] = sizes[kTranslations] = sizes[kVelocities] = sizes[kAngularVelocities] = poses;
  sizes[kClipStarts] = db.clip_starts.size() * sizeof(uint32_t);
  sizes[kNormalization] = 2 * VkDeviceSize(db.feature_count) * sizeof(float);
  sizes[kParents] = db.parents.size() * sizeof(int32_t);
  sizes[kBoundsMin] = sizes[kBoundsMax] = bounds;
  sizes[kRootMotion] = frames * sizeof(mmdb::RootFrame);
  sizes[kBiases] = db.biases.size() * sizeof(float);
  sizes[kWeights] = VkDeviceSize(count_) * db.feature_stride * sizeof(float);
  sizes[kCharacters] = count_ * sizeof(CrowdCharacter);
  sizes[kInputs] = count_ * sizeof(CharacterInput);
  sizes[kQueries] = VkDeviceSize(count_) * db.feature_stride * sizeof(float);
  sizes[kResults] = count_ * sizeof(MatchResult);
  sizes[kOffsets] = per_joint * sizeof(JointOffset);
  sizes[kLocalPoses] = per_joint * sizeof(JointPose);
  sizes[kModelPoses] = per_joint * sizeof(ModelJoint);
  sizes[kContacts] = db.contacts ? frames * sizeof(uint32_t) : 0;
  sizes[kFeet] = count_ * sizeof(CharacterFeet);
  sizes[kLegs] = sizeof(FootLockSetup);
  sizes[kJointLimits] = VkDeviceSize(db.joint_count) * sizeof(float);
  sizes[kUnlocked] = settings_.transition_speed_limit > 0.f ? per_joint * sizeof(mmdb::Float4) : 0;
  for (uint32_t b = 0; b < kBindingCount; ++b) {
    Result<Buffer> buffer =
        createBuffer(ctx_, sizes[b],
                     VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                         VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                     VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (!buffer) return buffer.error();
    impl_->buffers[b] = buffer.value();
    if (isDatabaseStream(b)) database_bytes_ += sizes[b];
  }
  impl_->bytes = sizes;
  return Status();
}

// Each database stream once through a staging buffer (coded pose streams decoded into it); the
// per-character buffers cleared.
Status Crowd::uploadDatabase(const DatabaseView& db) {
  std::vector<float> normalization(db.feature_offset, db.feature_offset + db.feature_count);
  normalization.insert(normalization.end(), db.feature_scale, db.feature_scale + db.feature_count);
  std::array<const void*, kBindingCount> sources{};
  sources[kFeatures] = db.features;
  sources[kRanges] = db.ranges;
  sources[kRotations] = db.rotations;
  sources[kTranslations] = db.translations;
  sources[kVelocities] = db.velocities;
  sources[kAngularVelocities] = db.angular_velocities;
  sources[kClipStarts] = db.clip_starts.data();
  sources[kNormalization] = normalization.data();
  sources[kParents] = db.parents.data();
  sources[kBoundsMin] = db.bounds_min;
  sources[kBoundsMax] = db.bounds_max;
  sources[kRootMotion] = db.root_motion;
  sources[kBiases] = db.biases.data();
  sources[kContacts] = db.contacts;
  FootLockSetup setup{};
  for (uint32_t s = 0; s < mmdb::kLegCount; ++s) {
    const mmdb::LegChain& leg = db.legs[s];
    setup.legs[s].upper_leg = leg.upper_leg;
    setup.legs[s].knee = leg.knee;
    setup.legs[s].foot = leg.foot;
    setup.legs[s].toe = leg.toe;
    setup.legs[s].contact_bit = leg.contact_bit;
    setup.legs[s].toe_tip = {leg.toe_tip.x, leg.toe_tip.y, leg.toe_tip.z, 0};
  }
  setup.foot_locking = settings_.foot_locking ? 1u : 0u;
  setup.foot_unlock_radius = settings_.foot_unlock_radius;
  setup.foot_unlock_halflife = settings_.foot_unlock_halflife;
  setup.ik_foot_height = settings_.ik_foot_height;
  setup.ik_toe_length = settings_.ik_toe_length;
  setup.ik_max_length_buffer = settings_.ik_max_length_buffer;
  const mmdb::SynchronizationSettings& sync = settings_.synchronization;
  setup.sync_mode = static_cast<uint32_t>(sync.mode);
  setup.sync_position_halflife = sync.position_halflife;
  setup.sync_rotation_halflife = sync.rotation_halflife;
  setup.sync_position_ratio = sync.position_ratio;
  setup.sync_rotation_ratio = sync.rotation_ratio;
  setup.sync_max_distance = sync.max_distance;
  setup.sync_max_angle = sync.max_angle;
  setup.sync_foot_reach = sync.foot_reach;
  setup.sync_hard_distance = sync.hard_distance;
  setup.sync_rate_min = sync.rate_min;
  setup.sync_rate_max = sync.rate_max;
  setup.sync_stride_min = sync.stride_min;
  setup.sync_stride_max = sync.stride_max;
  setup.sync_warp_angle = sync.warp_angle;
  setup.sync_warp_halflife = sync.warp_halflife;
  setup.search_interval_seconds = settings_.search_interval_seconds;
  setup.settle_search_interval = settings_.settle_search_interval;
  static_assert(sizeof(mmdb::SynchronizationSettings) == 15 * sizeof(float),
                "a synchronization setting the fk pass does not get");
  sources[kLegs] = &setup;
  // The transition speed limit's, as mmdb::Crowd keeps them: 1 / (the most a joint may move in
  // a frame)^2; zeros when it is off (the fk pass then reads none).
  std::vector<float> limits =
      mmdb::transitionStepLimits(db.clip_joint_steps, settings_.transition_speed_limit);
  limits.resize(db.joint_count, 0.f);  // a view without steps: the limit is off
  sources[kJointLimits] = limits.data();

  Result<Buffer> staging = createHostBuffer(ctx_, kStagingBytes);
  if (!staging) return staging.error();
  struct StagingGuard {
    Impl& impl;
    Buffer& buffer;
    ~StagingGuard() { impl.destroy(buffer); }
  } guard{*impl_, staging.value()};
  for (uint32_t b = 0; b < kBindingCount; ++b) {
    const Buffer& buffer = impl_->buffers[b];
    Status done;
    if (!isUploaded(b)) {
      done = ctx_.submitAndWait(
          [&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, buffer.buffer, 0, VK_WHOLE_SIZE, 0); });
    } else if (isPoseStream(b) && !sources[b] && db.database) {
      done = uploadDecoded(ctx_, staging.value(), buffer, *db.database,
                           mmdb::PoseStream(b - kRotations));
    } else {
      done = upload(ctx_, staging.value(), buffer, sources[b], impl_->bytes[b]);
    }
    if (!done) return done;
  }
  return Status();
}

// One descriptor set of storage buffers, one push-constant range, shared by every pass.
Status Crowd::createDescriptors() {
  Impl& im = *impl_;
  std::array<VkDescriptorSetLayoutBinding, kBindingCount> bindings{};
  for (uint32_t b = 0; b < kBindingCount; ++b) {
    bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo set_layout_info{
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_layout_info.bindingCount = kBindingCount;
  set_layout_info.pBindings = bindings.data();
  VkResult r = vkCreateDescriptorSetLayout(im.device, &set_layout_info, nullptr, &im.set_layout);
  if (r != VK_SUCCESS) return vkError("vkCreateDescriptorSetLayout", r);

  VkPushConstantRange push_constants{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PassParams)};
  VkPipelineLayoutCreateInfo pipeline_layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pipeline_layout_info.setLayoutCount = 1;
  pipeline_layout_info.pSetLayouts = &im.set_layout;
  pipeline_layout_info.pushConstantRangeCount = 1;
  pipeline_layout_info.pPushConstantRanges = &push_constants;
  r = vkCreatePipelineLayout(im.device, &pipeline_layout_info, nullptr, &im.pipeline_layout);
  if (r != VK_SUCCESS) return vkError("vkCreatePipelineLayout", r);

  VkDescriptorPoolSize pool_size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kBindingCount};
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = 1;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &pool_size;
  r = vkCreateDescriptorPool(im.device, &pool_info, nullptr, &im.pool);
  if (r != VK_SUCCESS) return vkError("vkCreateDescriptorPool", r);

  VkDescriptorSetAllocateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  set_info.descriptorPool = im.pool;
  set_info.descriptorSetCount = 1;
  set_info.pSetLayouts = &im.set_layout;
  r = vkAllocateDescriptorSets(im.device, &set_info, &im.set);
  if (r != VK_SUCCESS) return vkError("vkAllocateDescriptorSets", r);

  std::array<VkDescriptorBufferInfo, kBindingCount> buffer_infos{};
  std::array<VkWriteDescriptorSet, kBindingCount> writes{};
  for (uint32_t b = 0; b < kBindingCount; ++b) {
    buffer_infos[b] = {im.buffers[b].buffer, 0, VK_WHOLE_SIZE};
    writes[b] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[b].dstSet = im.set;
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &buffer_infos[b];
  }
  vkUpdateDescriptorSets(im.device, kBindingCount, writes.data(), 0, nullptr);
  return Status();
}

// A compute pipeline per pass, from the SPIR-V built into the library.
Status Crowd::createPipelines() {
  Impl& im = *impl_;
  const bool subgroups = ctx_.info().subgroup_arithmetic && !settings_.shared_memory_reduction;
  struct Code {
    const uint32_t* words;
    size_t bytes;
  };
  const std::array<Code, kPassCount> code{{
      {kBuildQuerySpv, sizeof(kBuildQuerySpv)},
      {subgroups ? kMatchSpv : kMatchSharedOnlySpv,
       subgroups ? sizeof(kMatchSpv) : sizeof(kMatchSharedOnlySpv)},
      {kResolveSpv, sizeof(kResolveSpv)},
      {kSampleSpv, sizeof(kSampleSpv)},
      {kInertializeSpv, sizeof(kInertializeSpv)},
      {kFkSpv, sizeof(kFkSpv)},
      {kFootLockSpv, sizeof(kFootLockSpv)},
  }};
  for (uint32_t i = 0; i < kPassCount; ++i) {
    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = code[i].bytes;
    module_info.pCode = code[i].words;
    VkShaderModule module = VK_NULL_HANDLE;
    VkResult r = vkCreateShaderModule(im.device, &module_info, nullptr, &module);
    if (r != VK_SUCCESS) return vkError("vkCreateShaderModule", r);
    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = "main";
    pipeline_info.layout = im.pipeline_layout;
    r = vkCreateComputePipelines(im.device, VK_NULL_HANDLE, 1, &pipeline_info, nullptr,
                                 &im.pipelines[i]);
    vkDestroyShaderModule(im.device, module, nullptr);
    if (r != VK_SUCCESS) return vkError("vkCreateComputePipelines", r);
  }
  return Status();
}

// Per-pass GPU times when asked for and the queue has timestamps; a crowd works without them.
void Crowd::createTimestampQueries() {
  if (!settings_.timestamps || ctx_.info().timestamp_period_ns <= 0) return;
  VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  query_info.queryCount = kTimestampCount;
  if (vkCreateQueryPool(impl_->device, &query_info, nullptr, &impl_->queries) == VK_SUCCESS) {
    impl_->timestamps = true;
    impl_->timestamp_period_ns = ctx_.info().timestamp_period_ns;
  }
}

Status Crowd::checkCharacter(uint32_t character, const char* what) const {
  if (character < count_) return Status();
  return Error::format(ErrorCode::InvalidArgument,
                       "%s: character %u is out of range (the crowd has %u characters)", what,
                       character, count_);
}

Status Crowd::setStick(uint32_t i, float x, float z) {
  if (Status s = checkCharacter(i, "setStick"); !s) return s;
  if (Status s = mmdb::checkStick("setStick", i, x, z); !s) return s;
  CharacterInput& in = inputs_[i];
  const float length = std::sqrt(x * x + z * z);
  in.desired_velocity = {x * settings_.max_speed, 0, z * settings_.max_speed, 0};
  in.desired_facing = length > 0.01f ? mmdb::Float4{x, 0, z, 0} : mmdb::Float4{0, 0, 0, 0};
  return Status();
}

Status Crowd::setInput(uint32_t i, const CharacterInput& input) {
  if (Status s = checkCharacter(i, "setInput"); !s) return s;
  if (Status s = checkInput("setInput", i, input); !s) return s;
  inputs_[i] = input;
  return Status();
}

Status Crowd::setInputs(const CharacterInput* inputs, size_t count) {
  if (count > count_) {
    return Error::format(ErrorCode::InvalidArgument,
                         "setInputs: %zu inputs for a crowd of %u characters", count, count_);
  }
  for (size_t i = 0; i < count; ++i)
    if (Status s = checkInput("setInputs", uint32_t(i), inputs[i]); !s) return s;
  std::copy(inputs, inputs + count, inputs_.begin());
  return Status();
}

Status Crowd::setTagFilter(uint32_t i, uint64_t required, uint64_t excluded) {
  if (Status s = checkCharacter(i, "setTagFilter"); !s) return s;
  CharacterInput& in = inputs_[i];
  in.required_tags_lo = uint32_t(required);
  in.required_tags_hi = uint32_t(required >> 32);
  in.excluded_tags_lo = uint32_t(excluded);
  in.excluded_tags_hi = uint32_t(excluded >> 32);
  return Status();
}

Status Crowd::setBlockWeights(uint32_t i, const float* weights, size_t count) {
  if (Status s = checkCharacter(i, "setBlockWeights"); !s) return s;
  if (count != 0 && count != blocks_.size()) {
    return Error::format(ErrorCode::InvalidArgument,
                         "setBlockWeights: %zu block weights for the database's %zu feature blocks "
                         "(give one per block, in the file's block order, or none)",
                         count, blocks_.size());
  }
  for (size_t b = 0; b < count; ++b) {
    if (!(std::isfinite(weights[b]) && weights[b] > 0)) {
      return Error::format(ErrorCode::InvalidArgument,
                           "setBlockWeights: block weight %zu (%.64s) is %g; a weight must be "
                           "finite and > 0 (1 = as cooked)",
                           b, blocks_[b].name.c_str(), double(weights[b]));
    }
    if (!(weights[b] <= mmdb::kMaxBlockWeight))
      return Error::format(ErrorCode::InvalidArgument,
                           "setBlockWeights: character %u: block weight %zu is %g, over %g (a "
                           "cost so weighted overflows)",
                           i, b, double(weights[b]), double(mmdb::kMaxBlockWeight));
  }
  const size_t stride = params_.feature_stride;
  float* columns = column_weights_.data() + size_t(i) * stride;
  std::fill(columns, columns + stride, 1.f);
  for (size_t b = 0; b < count; ++b)
    std::fill(columns + blocks_[b].first_column,
              columns + blocks_[b].first_column + blocks_[b].width, weights[b]);
  weights_changed_ = true;
  return Status();
}

Status Crowd::forceSearch(uint32_t i) {
  if (Status s = checkCharacter(i, "forceSearch"); !s) return s;
  inputs_[i].force_search = 1;
  return Status();
}

Status Crowd::teleport(uint32_t i, const Float4& position, const Float4& rotation) {
  return moveCharacter(i, position, rotation, kTeleportMove, "teleport");
}

Status Crowd::place(uint32_t i, const Float4& position, const Float4& rotation) {
  return moveCharacter(i, position, rotation, kTeleportPlace, "place");
}

Status Crowd::setSimulation(uint32_t i, const mmdb::CharacterState& state) {
  if (Status s = checkCharacter(i, "setSimulation"); !s) return s;
  const auto finite = [](const glm::vec3& v) {
    return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
  };
  if (!finite(state.velocity) || !finite(state.acceleration) || !finite(state.angular_velocity))
    return Error::format(ErrorCode::InvalidArgument,
                         "setSimulation: character %u's state is not finite", i);
  glm::quat yaw;
  if (Status s = mmdb::checkSimulation("setSimulation", i, state, yaw); !s) return s;
  simulations_[i].set = true;
  simulations_[i].state = state;
  simulations_[i].state.rotation = yaw;
  return Status();
}

Status Crowd::moveCharacter(uint32_t i, const Float4& position, const Float4& rotation,
                            uint32_t kind, const char* what) {
  if (Status s = checkCharacter(i, what); !s) return s;
  if (kind == kTeleportMove && simulations_[i].set)
    return Error::format(ErrorCode::InvalidArgument,
                         "teleport: character %u has a simulation root set for the next step; "
                         "teleport first, then setSimulation",
                         i);
  glm::quat yaw;
  if (Status s =
          mmdb::checkPlacement(what, i, {position.x, position.y, position.z},
                               glm::quat(rotation.w, rotation.x, rotation.y, rotation.z), yaw);
      !s)
    return s;
  teleports_[i] = {kind, {position.x, position.y, position.z, 0.f}, {0.f, yaw.y, 0.f, yaw.w}};
  return Status();
}

void Crowd::recordPass(VkCommandBuffer cmd, Pass pass, float dt) {
  Impl& im = *impl_;
  if (pass == Pass::FootLock && !settings_.foot_locking) return;  // the pose stays fk's
  PassParams p = params_;
  p.dt = dt;
  const mmdb::SettleLimits limits =
      mmdb::settleLimits(settings_.settle_velocity_change, settings_.settle_rotation_change, dt);
  p.settle_velocity_squared = limits.velocity_squared;
  p.settle_cos_limit = limits.cos_limit;
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, im.pipelines[uint32_t(pass)]);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, im.pipeline_layout, 0, 1, &im.set, 0,
                          nullptr);
  vkCmdPushConstants(cmd, im.pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PassParams),
                     &p);
  const uint32_t per_character = groupsFor(count_);
  const uint32_t per_joint = groupsFor(uint64_t(count_) * p.joint_count);
  switch (pass) {
    case Pass::Match:
      vkCmdDispatch(cmd, count_, 1, 1);
      break;  // a workgroup per character
    case Pass::Sample:
    case Pass::Inertialize:
      vkCmdDispatch(cmd, per_joint, 1, 1);
      break;
    default:
      vkCmdDispatch(cmd, per_character, 1, 1);
      break;
  }
  computeBarrier(cmd, kAnyStage, VK_ACCESS_SHADER_WRITE_BIT, kAnyStage, kAnyAccess);
}

void Crowd::recordInputs(VkCommandBuffer cmd) {
  // Inputs travel inside the command buffer (vkCmdUpdateBuffer takes at most 64 KiB per call).
  computeBarrier(cmd, kAnyStage, kAnyAccess, VK_PIPELINE_STAGE_TRANSFER_BIT,
                 VK_ACCESS_TRANSFER_WRITE_BIT);
  for (size_t i = 0; i < inputs_.size(); ++i) {  // the teleports asked for since the last step
    CharacterInput& in = inputs_[i];
    in.teleport = teleports_[i].kind;
    in.teleport_position = teleports_[i].position;
    in.teleport_rotation = teleports_[i].rotation;
    const Simulation& sim = simulations_[i];
    in.set_simulation = sim.set ? 1u : 0u;
    const auto to4 = [](const glm::vec3& v) { return Float4{v.x, v.y, v.z, 0.f}; };
    in.sim_position = to4(sim.state.position);
    in.sim_velocity = to4(sim.state.velocity);
    in.sim_acceleration = to4(sim.state.acceleration);
    in.sim_rotation = {sim.state.rotation.x, sim.state.rotation.y, sim.state.rotation.z,
                       sim.state.rotation.w};
    in.sim_angular_velocity = to4(sim.state.angular_velocity);
  }
  const VkDeviceSize bytes = inputs_.size() * sizeof(CharacterInput);
  for (VkDeviceSize done = 0; done < bytes; done += 65536) {
    vkCmdUpdateBuffer(cmd, impl_->buffers[kInputs].buffer, done,
                      std::min<VkDeviceSize>(65536, bytes - done),
                      reinterpret_cast<const uint8_t*>(inputs_.data()) + done);
  }
  // Run-time weights only when they changed (1 everywhere before the first step).
  if (weights_changed_) {
    const VkDeviceSize weight_bytes = column_weights_.size() * sizeof(float);
    for (VkDeviceSize done = 0; done < weight_bytes; done += 65536) {
      vkCmdUpdateBuffer(cmd, impl_->buffers[kWeights].buffer, done,
                        std::min<VkDeviceSize>(65536, weight_bytes - done),
                        reinterpret_cast<const uint8_t*>(column_weights_.data()) + done);
    }
    weights_changed_ = false;
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
  for (Teleport& t : teleports_) t.kind = kTeleportNone;
  for (Simulation& s : simulations_) s.set = false;
  for (uint32_t i = 0; i < kPassCount; ++i) {
    recordPass(cmd, Pass(i), dt);
    if (im.timestamps)
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, im.queries, i + 1);
  }
}

Status Crowd::stepAndWait(float dt) {
  if (Status s = mmdb::checkCrowdDt("stepAndWait", dt); !s) return s;
  return ctx_.submitAndWait([&](VkCommandBuffer cmd) { step(cmd, dt); });
}

Status Crowd::passAndWait(Pass pass, float dt) {
  if (Status s = mmdb::checkCrowdDt("passAndWait", dt); !s) return s;
  return ctx_.submitAndWait([&](VkCommandBuffer cmd) {
    computeBarrier(cmd, kAnyStage, kAnyAccess, kAnyStage, kAnyAccess);
    if (pass == Pass::BuildQuery || pass == Pass::Match)
      recordInputs(cmd);             // the passes that read them
    if (pass == Pass::BuildQuery) {  // the pass that teleports and sets simulations
      for (Teleport& t : teleports_) t.kind = kTeleportNone;
      for (Simulation& s : simulations_) s.set = false;
    }
    recordPass(cmd, pass, dt);
  });
}

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
