// Decoding the pose streams: raw ones are copied, coded ones (schema 2.0) go through
// meshoptimizer's vertex codec and filters, segment by segment, checked as they land.
#include "mmdb/database.h"

#include "database/pose_streams.h"

#include <meshoptimizer.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mmdb {
namespace {

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

size_t vertexBytes(fb::TrackCoding coding, bool rotation) {
  switch (coding) {
    case fb::TrackCoding::Constant:
      return 0;
    case fb::TrackCoding::Quaternion:
      return 8;
    case fb::TrackCoding::Exponent:
      return 16;  // a vector's fourth component only fixes the exponent
    case fb::TrackCoding::Lossless:
      return rotation ? 16 : 12;
  }
  return 0;
}

struct Range {
  uint32_t first = 0;  // global
  uint32_t count = 0;
};

// Writes frames [lo, hi) of one decoded segment (filtered in place in `scratch`, whose element 0
// is global frame segment_first) to out, checking each value. Returns false on a bad value.
bool scatter(const uint8_t* scratch, fb::TrackCoding coding, bool rotation, uint32_t segment_first,
             uint32_t lo, uint32_t hi, Float4* out, size_t stride, uint32_t* bad_frame) {
  const size_t vertex = vertexBytes(coding, rotation);
  for (uint32_t f = lo; f < hi; ++f) {
    const uint8_t* p = scratch + size_t(f - segment_first) * vertex;
    Float4 v{0, 0, 0, 0};
    if (coding == fb::TrackCoding::Quaternion) {
      int16_t s[4];
      std::memcpy(s, p, sizeof(s));
      constexpr float kScale = 1.f / 32767.f;
      v = {s[0] * kScale, s[1] * kScale, s[2] * kScale, s[3] * kScale};
    } else {
      std::memcpy(&v, p, rotation ? 16 : 12);
    }
    const bool finite =
        std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) && std::isfinite(v.w);
    const float length2 = v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    // A coded rotation is unit length to a few bits; far from it, the data is not what was coded.
    if (!finite || (rotation && !(length2 > 0.5f && length2 < 1.5f))) {
      *bad_frame = f;
      return false;
    }
    // A filtered rotation is a few 1e-5 off unit length, which FK would turn into a scale of
    // every child offset; the cook measured its error on the normalized one (same operations).
    if (rotation && coding != fb::TrackCoding::Lossless) {
      const float inverse = 1.f / std::sqrt(length2);
      v = {v.x * inverse, v.y * inverse, v.z * inverse, v.w * inverse};
    }
    *out = v;
    out += stride;
  }
  return true;
}

Status decodeCoded(const fb::Database& db, PoseStream stream, const fb::CodedStream& c, Range range,
                   Float4* out) {
  const bool rotation = stream == PoseStream::Rotations;
  const uint32_t joints = db.joint_count(), frames = db.frame_count();
  const uint32_t segment_frames = db.pose_coding()->segment_frames();  // 1..kMaxSegmentFrames
  const uint32_t segments = (frames + segment_frames - 1) / segment_frames;
  const flatbuffers::Vector<uint32_t>& offsets = *c.segment_offsets();
  // Absent data is allowed when every track is constant (open checked the offsets against it).
  const uint8_t* data = c.data() ? c.data()->Data() : nullptr;
  alignas(16) uint8_t scratch[kMaxSegmentFrames * 16];
  const uint32_t end = range.first + range.count;
  // Segment by segment, so the rows being written stay in cache across the joints.
  for (uint32_t seg = range.first / segment_frames; seg * segment_frames < end; ++seg) {
    const uint32_t seg_first = seg * segment_frames;
    const uint32_t n = std::min(segment_frames, frames - seg_first);
    const uint32_t lo = std::max(range.first, seg_first), hi = std::min(end, seg_first + n);
    for (uint32_t j = 0; j < joints; ++j) {
      const fb::PoseTrack* t = c.tracks()->Get(j);
      Float4* dst = out + size_t(lo - range.first) * joints + j;
      if (t->coding() == fb::TrackCoding::Constant) {
        const Float4 v{t->value().x(), t->value().y(), t->value().z(), t->value().w()};
        for (uint32_t f = lo; f < hi; ++f, dst += joints) *dst = v;
        continue;
      }
      const size_t vertex = vertexBytes(t->coding(), rotation);
      const uint32_t begin = offsets.Get(j * segments + seg);
      const uint32_t stop = offsets.Get(j * segments + seg + 1);  // checked at open: begin < stop
      if (meshopt_decodeVertexBuffer(scratch, n, vertex, data + begin, stop - begin) != 0)
        return Error::format(ErrorCode::Corrupt,
                             "%s: joint %u, global frames [%u, %u) do not decode (damaged data): "
                             "re-cook or re-copy the file",
                             poseStreamName(stream), j, seg_first, seg_first + n);
      if (t->coding() == fb::TrackCoding::Quaternion)
        meshopt_decodeFilterQuat(scratch, n, 8);
      else if (t->coding() == fb::TrackCoding::Exponent)
        meshopt_decodeFilterExp(scratch, n, vertex);
      uint32_t bad = 0;
      if (!scatter(scratch, t->coding(), rotation, seg_first, lo, hi, dst, joints, &bad))
        return Error::format(ErrorCode::Inconsistent,
                             "%s: joint %u, global frame %u decodes to %s: re-cook the file",
                             poseStreamName(stream), j, bad,
                             rotation ? "a non-finite or non-unit rotation" : "NaN or infinity");
    }
  }
  return {};
}

}  // namespace

bool Database::poseStreamCoded(PoseStream stream) const noexcept {
  return root_ && codedStream(*root_, stream) != nullptr;
}

bool Database::posesCoded() const noexcept {
  for (uint32_t i = 0; i < kPoseStreamCount; ++i)
    if (poseStreamCoded(PoseStream(i))) return true;
  return false;
}

size_t Database::poseStreamBytes(PoseStream stream) const noexcept {
  if (!root_) return 0;
  if (const fb::CodedStream* c = codedStream(*root_, stream))
    return c->tracks()->size() * sizeof(fb::PoseTrack) +
           c->segment_offsets()->size() * sizeof(uint32_t) + (c->data() ? c->data()->size() : 0);
  const auto* raw = rawStream(*root_, stream);
  return raw ? raw->size() * sizeof(fb::Vec4) : 0;
}

PoseView Database::rawPoses() const noexcept {
  if (!root_ || posesCoded()) return {};
  PoseView v;
  v.first_frame = 0;
  v.frame_count = frameCount();
  v.rotations = localRotations();
  v.translations = localTranslations();
  v.velocities = localVelocities();
  v.angular_velocities = localAngularVelocities();
  return v;
}

Status Database::decodePoses(uint32_t first_frame, uint32_t frame_count,
                             const PoseBuffers& out) const noexcept {
  if (!root_) return Error(ErrorCode::InvalidArgument, "decodePoses: the database is not open");
  if (uint64_t(first_frame) + frame_count > frameCount())
    return Error::format(ErrorCode::InvalidArgument,
                         "decodePoses: global frames [%u, %llu) are outside the database's "
                         "[0, %u)",
                         first_frame, (unsigned long long)(uint64_t(first_frame) + frame_count),
                         frameCount());
  const size_t joints = jointCount();
  const size_t elements = size_t(frame_count) * joints;
  const Span<Float4> spans[kPoseStreamCount] = {out.rotations, out.translations, out.velocities,
                                                out.angular_velocities};
  for (uint32_t i = 0; i < kPoseStreamCount; ++i) {
    const Span<Float4>& span = spans[i];
    if (span.empty()) continue;
    if (span.size() != elements)
      return Error::format(ErrorCode::InvalidArgument,
                           "decodePoses: the %s span has %zu elements, expected %zu (%u frames * "
                           "%zu joints)",
                           poseStreamName(PoseStream(i)), span.size(), elements, frame_count,
                           joints);
    if (!aligned16(span.data()))
      return Error::format(ErrorCode::InvalidArgument,
                           "decodePoses: the %s span does not start on a 16-byte boundary",
                           poseStreamName(PoseStream(i)));
  }
  if (frame_count == 0) return {};
  for (uint32_t i = 0; i < kPoseStreamCount; ++i) {
    if (spans[i].empty()) continue;
    const PoseStream stream = PoseStream(i);
    if (const fb::CodedStream* c = codedStream(*root_, stream)) {
      if (Status s = decodeCoded(*root_, stream, *c, {first_frame, frame_count}, spans[i].data());
          !s)
        return s;
    } else {
      const auto* raw = rawStream(*root_, stream);
      std::memcpy(spans[i].data(), raw->Data() + size_t(first_frame) * joints * sizeof(Float4),
                  elements * sizeof(Float4));
    }
  }
  return {};
}

}  // namespace mmdb
