// The GPU crowd made: its settings checked, its buffers sized and filled, its descriptors and
// pipelines created.
#include "crowd_internal.h"

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
namespace detail {

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

}  // namespace detail

using namespace detail;  // the crowd's private parts (crowd_internal.h)

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
  if (Status s = mmdb::checkReferenceArithmetic("", settings.reference_arithmetic,
                                                settings.transition_speed_limit);
      !s)
    return s;
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

}  // namespace mmdb::gpu
