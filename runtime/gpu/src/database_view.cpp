// DatabaseView::fromDatabase: what the GPU crowd uploads, read from an open database.
#include "crowd_internal.h"

#include "mmdb/crowd.h"

#include <algorithm>
#include <cstring>

namespace mmdb::gpu {

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

}  // namespace mmdb::gpu
