// What a database holds, read in place from its verified FlatBuffers file.
#include "mmdb/database.h"

#include "mmdb/mmdb_generated.h"

#include "database/flatbuffer_views.h"

#include <cmath>
#include <string_view>

namespace mmdb {

namespace {

using detail::count;
using detail::str;
using detail::view;

}  // namespace

uint16_t Database::schemaMajor() const noexcept { return root_ ? root_->version()->major() : 0; }
uint16_t Database::schemaMinor() const noexcept { return root_ ? root_->version()->minor() : 0; }
std::string_view Database::cookerVersion() const noexcept {
  return root_ ? str(root_->cooker_version()) : std::string_view();
}
float Database::frameRate() const noexcept { return root_ ? root_->frame_rate() : 0.f; }
uint32_t Database::frameCount() const noexcept { return root_ ? root_->frame_count() : 0; }
uint32_t Database::jointCount() const noexcept { return root_ ? root_->joint_count() : 0; }

Span<const Float4> Database::localRotations() const noexcept {
  return root_ ? view<Float4>(root_->local_rotations()) : Span<const Float4>();
}
Span<const Float4> Database::localTranslations() const noexcept {
  return root_ ? view<Float4>(root_->local_translations()) : Span<const Float4>();
}
Span<const Float4> Database::localVelocities() const noexcept {
  return root_ ? view<Float4>(root_->local_velocities()) : Span<const Float4>();
}
Span<const Float4> Database::localAngularVelocities() const noexcept {
  return root_ ? view<Float4>(root_->local_angular_velocities()) : Span<const Float4>();
}
Span<const RootFrame> Database::rootMotion() const noexcept {
  return root_ ? view<RootFrame>(root_->root_motion()) : Span<const RootFrame>();
}
Span<const uint32_t> Database::contacts() const noexcept {
  return root_ ? view<uint32_t>(root_->contacts()) : Span<const uint32_t>();
}

uint16_t Database::featureCount() const noexcept { return root_ ? root_->feature_count() : 0; }
uint16_t Database::featureStride() const noexcept { return root_ ? root_->feature_stride() : 0; }
Span<const float> Database::features() const noexcept {
  return root_ ? view<float>(root_->features()) : Span<const float>();
}
Span<const float> Database::featureOffset() const noexcept {
  return root_ ? view<float>(root_->feature_offset()) : Span<const float>();
}
Span<const float> Database::featureScale() const noexcept {
  return root_ ? view<float>(root_->feature_scale()) : Span<const float>();
}
uint32_t Database::featureBlockCount() const noexcept {
  return root_ ? uint32_t(count(root_->feature_blocks())) : 0;
}
FeatureBlockInfo Database::featureBlock(uint32_t index) const noexcept {
  FeatureBlockInfo info;
  if (index >= featureBlockCount()) return info;
  const fb::FeatureBlock* b = root_->feature_blocks()->Get(index);
  info.name = str(b->name());
  info.kind = static_cast<FeatureKind>(b->kind());
  info.joint = b->joint();
  info.first_column = b->first_column();
  info.width = b->width();
  info.std = b->std();
  info.weight = b->weight();
  return info;
}
int32_t Database::findFeatureBlock(FeatureKind kind) const noexcept {
  for (uint32_t i = 0; i < featureBlockCount(); ++i)
    if (static_cast<FeatureKind>(root_->feature_blocks()->Get(i)->kind()) == kind)
      return int32_t(i);
  return -1;
}

uint16_t Database::boundsSmallSize() const noexcept {
  return root_ ? root_->bounds_small_size() : 0;
}
uint16_t Database::boundsLargeSize() const noexcept {
  return root_ ? root_->bounds_large_size() : 0;
}
Span<const float> Database::boundsSmallMin() const noexcept {
  return root_ ? view<float>(root_->bounds_small_min()) : Span<const float>();
}
Span<const float> Database::boundsSmallMax() const noexcept {
  return root_ ? view<float>(root_->bounds_small_max()) : Span<const float>();
}
Span<const float> Database::boundsLargeMin() const noexcept {
  return root_ ? view<float>(root_->bounds_large_min()) : Span<const float>();
}
Span<const float> Database::boundsLargeMax() const noexcept {
  return root_ ? view<float>(root_->bounds_large_max()) : Span<const float>();
}

uint32_t Database::clipCount() const noexcept {
  return root_ ? uint32_t(count(root_->clips())) : 0;
}
ClipInfo Database::clip(uint32_t index) const noexcept {
  ClipInfo info;
  if (index >= clipCount()) return info;
  const fb::Clip* c = root_->clips()->Get(index);
  info.name = str(c->name());
  info.take = str(c->take());
  info.first_frame = c->first_frame();
  info.frame_count = c->frame_count();
  info.tag_mask = c->tag_mask();
  info.source_index = c->source_index();
  info.mirror_of = c->mirror_of();
  info.mirrored = c->mirrored();
  info.source_frame_rate = c->source_frame_rate();
  info.bias = c->bias();
  return info;
}
int32_t Database::clipOfFrame(uint32_t frame) const noexcept {
  // Clips are sorted and disjoint (checked at open): binary search on first_frame.
  uint32_t lo = 0, hi = clipCount();
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (root_->clips()->Get(mid)->first_frame() <= frame)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return -1;
  const fb::Clip* c = root_->clips()->Get(lo - 1);
  return frame - c->first_frame() < c->frame_count() ? int32_t(lo - 1) : -1;
}
int32_t Database::findClip(std::string_view name) const noexcept {
  for (uint32_t i = 0; i < clipCount(); ++i)
    if (str(root_->clips()->Get(i)->name()) == name) return int32_t(i);
  return -1;
}

Span<const MatchRange> Database::ranges() const noexcept {
  return root_ ? view<MatchRange>(root_->ranges()) : Span<const MatchRange>();
}
Span<const float> Database::rangeBiases() const noexcept {
  return root_ ? view<float>(root_->range_biases()) : Span<const float>();
}
float Database::rangeBias(uint32_t range) const noexcept {
  const Span<const float> biases = rangeBiases();
  return range < biases.size() ? biases[range] : 0.f;
}
int32_t rangeOfFrame(Span<const MatchRange> ranges, uint32_t frame) noexcept {
  // The last range starting at or before the frame holds it, if it reaches that far.
  uint32_t lo = 0, hi = uint32_t(ranges.size());
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (ranges[mid].first_frame <= frame)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > 0 && frame - ranges[lo - 1].first_frame < ranges[lo - 1].frame_count ? int32_t(lo - 1)
                                                                                   : -1;
}

float Database::frameBias(uint32_t frame) const noexcept {
  if (!root_) return 0.f;
  // Ranges are sorted and disjoint (checked at open).
  const int32_t range = rangeOfFrame(ranges(), frame);
  if (range >= 0) return rangeBias(uint32_t(range));
  const int32_t clip = clipOfFrame(frame);
  return clip >= 0 ? root_->clips()->Get(uint32_t(clip))->bias() : 0.f;
}
uint32_t Database::tagCount() const noexcept {
  return root_ ? uint32_t(count(root_->tag_names())) : 0;
}
std::string_view Database::tagName(uint32_t bit) const noexcept {
  return bit < tagCount() ? str(root_->tag_names()->Get(bit)) : std::string_view();
}
uint64_t Database::tagMask(std::string_view name) const noexcept {
  for (uint32_t i = 0; i < tagCount() && i < 64; ++i)
    if (str(root_->tag_names()->Get(i)) == name) return 1ull << i;
  return 0;
}

std::string_view Database::jointName(uint32_t joint) const noexcept {
  return joint < jointCount() ? str(root_->skeleton()->names()->Get(joint)) : std::string_view();
}
int32_t Database::findJoint(std::string_view name) const noexcept {
  for (uint32_t j = 0; j < jointCount(); ++j)
    if (str(root_->skeleton()->names()->Get(j)) == name) return int32_t(j);
  return -1;
}
Span<const int32_t> Database::parents() const noexcept {
  return root_ ? view<int32_t>(root_->skeleton()->parents()) : Span<const int32_t>();
}
Span<const Float4> Database::bindTranslations() const noexcept {
  return root_ ? view<Float4>(root_->skeleton()->bind_translations()) : Span<const Float4>();
}
Span<const Float4> Database::bindRotations() const noexcept {
  return root_ ? view<Float4>(root_->skeleton()->bind_rotations()) : Span<const Float4>();
}
int32_t Database::roleJoint(Role role) const noexcept {
  if (!root_ || !root_->skeleton()->roles()) return -1;
  for (const fb::RoleBinding* r : *root_->skeleton()->roles())
    if (static_cast<Role>(r->role()) == role) return r->joint();
  return -1;
}
Span<const int32_t> Database::contactJoints() const noexcept {
  return root_ ? view<int32_t>(root_->skeleton()->contact_joints()) : Span<const int32_t>();
}
Float4 Database::facingAxis() const noexcept {
  const fb::Vec4* a = root_ ? root_->skeleton()->facing_axis() : nullptr;
  return a ? Float4{a->x(), a->y(), a->z(), a->w()} : Float4{0, 0, 1, 0};
}

Span<const float> Database::trajectoryTimes() const noexcept {
  if (!root_ || !root_->settings()) return {};
  return view<float>(root_->settings()->trajectory_times());
}
int32_t Database::defaultNeighbourhoodFrames() const noexcept {
  return root_ ? int32_t(std::lround(root_->frame_rate() / 3.0)) : 0;
}

}  // namespace mmdb
