// The GPU crowd's host side of a step: the characters' inputs, moves and settings set between
// steps, and the passes recorded into a command buffer.
#include "crowd_internal.h"

#include "mmdb/crowd.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mmdb::gpu {

using namespace detail;  // the crowd's private parts (crowd_internal.h)

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

}  // namespace mmdb::gpu
