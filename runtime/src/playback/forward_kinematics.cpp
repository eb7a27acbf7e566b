// Forward kinematics: a pose's model space from its local one, a pose at a time or four at once.
#include "mmdb/playback.h"

#include "playback/job_checks.h"
#include "playback/lanes.h"
#include "playback/playback_run.h"
#include "playback/rotation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>

namespace mmdb {

// --- forward kinematics ------------------------------------------------------------------------

Status ForwardKinematicsJob::Validate() const noexcept {
  constexpr const char* job = "ForwardKinematicsJob";
  const size_t n = parents.size();
  if (local_rotations.size() != n)
    return sizeError(job, "local_rotations", local_rotations.size(), n);
  if (local_translations.size() != n)
    return sizeError(job, "local_translations", local_translations.size(), n);
  if (model_rotations.size() != n)
    return sizeError(job, "model_rotations", model_rotations.size(), n);
  if (model_translations.size() != n)
    return sizeError(job, "model_translations", model_translations.size(), n);
  for (size_t j = 0; j < n; ++j)
    if (parents[j] < -1 || parents[j] >= int64_t(j))
      return Error::format(ErrorCode::InvalidArgument,
                           "ForwardKinematicsJob: joint %zu has parent %d; a parent must precede "
                           "its child",
                           j, parents[j]);
  return {};
}

Status ForwardKinematicsJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  detail::runForwardKinematics(*this);
  return {};
}

void detail::runForwardKinematics(const ForwardKinematicsJob& job) noexcept {
  const int32_t* parents = job.parents.data();
  glm::quat* model_rotations = job.model_rotations.data();
  glm::vec3* model_translations = job.model_translations.data();
  for (size_t j = 0; j < job.parents.size(); ++j) {
    const int32_t p = parents[j];
    const glm::quat parent_rotation = p < 0 ? job.root_rotation : model_rotations[size_t(p)];
    const glm::vec3 parent_position = p < 0 ? job.root_position : model_translations[size_t(p)];
    model_translations[j] = parent_position + parent_rotation * job.local_translations[j];
    model_rotations[j] = glm::normalize(parent_rotation * job.local_rotations[j]);
  }
}

size_t detail::forwardKinematics4ScratchFloats(size_t joints) noexcept { return joints * 28; }

// Four characters' joints side by side, a lane each: every joint's model rotation and position
// kept as lanes (in `scratch`) for its children, and written out to each character's pose.
void detail::runForwardKinematics4(const ForwardKinematicsJob* jobs, size_t count,
                                   float* scratch) noexcept {
  const size_t n = jobs[0].parents.size();
  const int32_t* parents = jobs[0].parents.data();
  const ForwardKinematicsJob* lane[4];
  for (size_t i = 0; i < 4; ++i) lane[i] = &jobs[std::min(i, count - 1)];  // repeats the last
  const Q4 root_rotation =
      gatherQuats(std::array<glm::quat, 4>{lane[0]->root_rotation, lane[1]->root_rotation,
                                           lane[2]->root_rotation, lane[3]->root_rotation}
                      .data(),
                  4);
  const V4 root_position =
      gatherVectors(std::array<glm::vec3, 4>{lane[0]->root_position, lane[1]->root_position,
                                             lane[2]->root_position, lane[3]->root_position}
                        .data(),
                    4);
  for (size_t j = 0; j < n; ++j) {
    const int32_t p = parents[j];
    Q4 parent_rotation = root_rotation;
    V4 parent_position = root_position;
    if (p >= 0) {
      const float* parent = scratch + size_t(p) * 28;
      parent_rotation = {load(parent), load(parent + 4), load(parent + 8), load(parent + 12)};
      parent_position = {load(parent + 16), load(parent + 20), load(parent + 24)};
    }
    const glm::quat local_r[4] = {lane[0]->local_rotations[j], lane[1]->local_rotations[j],
                                  lane[2]->local_rotations[j], lane[3]->local_rotations[j]};
    const glm::vec3 local_t[4] = {lane[0]->local_translations[j], lane[1]->local_translations[j],
                                  lane[2]->local_translations[j], lane[3]->local_translations[j]};
    const V4 position = parent_position + rotate(parent_rotation, gatherVectors(local_t, 4));
    const Q4 rotation = normalized(parent_rotation * gatherQuats(local_r, 4));
    float* out = scratch + j * 28;
    store(out, rotation.w), store(out + 4, rotation.x), store(out + 8, rotation.y);
    store(out + 12, rotation.z), store(out + 16, position.x), store(out + 20, position.y);
    store(out + 24, position.z);
    for (size_t i = 0; i < count; ++i) {
      jobs[i].model_rotations[j] = glm::quat(out[i], out[4 + i], out[8 + i], out[12 + i]);
      jobs[i].model_translations[j] = glm::vec3(out[16 + i], out[20 + i], out[24 + i]);
    }
  }
}

}  // namespace mmdb
