// The checks of a file at open: its version before the FlatBuffers verifier, then where its
// arrays start and what its values mean (database/checks.h).
#include "database/checks.h"

#include "mmdb/controller.h"

#include "database/flatbuffer_views.h"
#include "database/pose_streams.h"

#include <cmath>
#include <cstring>

namespace mmdb {

namespace {

using detail::count;
using detail::str;
using detail::view;

constexpr size_t kTrajectoryTimeCount = size_t(kTrajectorySamples);

// --- semantic checks; each returns an Inconsistent error naming what is wrong ---------------

Status checkCount(const char* what, size_t actual, uint64_t expected) {
  if (actual == expected) return {};
  return Error::format(ErrorCode::Inconsistent, "%s has %zu elements, expected %llu", what, actual,
                       static_cast<unsigned long long>(expected));
}

Status checkFinite(const char* what, const flatbuffers::Vector<float>* v) {
  for (size_t i = 0; i < count(v); ++i) {
    if (!std::isfinite(v->Get(static_cast<flatbuffers::uoffset_t>(i))))
      return Error::format(ErrorCode::Inconsistent, "%s[%zu] is not finite (NaN or inf)", what, i);
  }
  return {};
}

// Every float of a vector of structs (Vec4, RootFrame) must be finite.
template <class Struct>
Status checkFiniteStructs(const char* what, const flatbuffers::Vector<const Struct*>* v) {
  constexpr size_t kFloats = sizeof(Struct) / sizeof(float);
  for (size_t i = 0; i < count(v); ++i) {
    float values[kFloats];
    std::memcpy(values, v->Get(static_cast<flatbuffers::uoffset_t>(i)), sizeof(values));
    for (size_t k = 0; k < kFloats; ++k)
      if (!std::isfinite(values[k]))
        return Error::format(ErrorCode::Inconsistent, "%s[%zu] is not finite (NaN or inf)", what,
                             i);
  }
  return {};
}

// Root motion a step integrates must stay physical, so that a crowd's arithmetic stays finite:
// positions within 1e7 m, speeds within 1e4 m/s, turns within 1e5 rad/s (the crowds' limits,
// mmdb/crowd.h), rotations of length 0.5 to 2 (a cooker writes unit ones).
Status checkRootMotionBounds(const flatbuffers::Vector<const fb::RootFrame*>* v) {
  for (size_t i = 0; i < count(v); ++i) {
    RootFrame r;
    std::memcpy(&r, v->Get(static_cast<flatbuffers::uoffset_t>(i)), sizeof(r));
    const auto most = [](const Float4& f) {
      return std::fmax(std::fmax(std::fabs(f.x), std::fabs(f.y)), std::fabs(f.z));
    };
    const double length2 =
        double(r.rotation.x) * r.rotation.x + double(r.rotation.y) * r.rotation.y +
        double(r.rotation.z) * r.rotation.z + double(r.rotation.w) * r.rotation.w;
    const char* what = nullptr;
    double value = 0;
    if (most(r.position) > 1e7f) {
      what = "position beyond 1e7 m";
      value = most(r.position);
    } else if (most(r.velocity) > 1e4f) {
      what = "velocity beyond 1e4 m/s";
      value = most(r.velocity);
    } else if (most(r.angular_velocity) > 1e5f) {
      what = "angular velocity beyond 1e5 rad/s";
      value = most(r.angular_velocity);
    } else if (!(length2 >= 0.25 && length2 <= 4.)) {
      what = "rotation whose length is not 0.5 to 2";
      value = std::sqrt(length2);
    }
    if (what)
      return Error::format(ErrorCode::Inconsistent, "root_motion[%zu] (frame %zu) has a %s (%g)", i,
                           i, what, value);
  }
  return {};
}

}  // namespace

// The coded stream of a pose stream, or null when it is raw.
const fb::CodedStream* codedStream(const fb::Database& db, PoseStream stream) noexcept {
  const fb::PoseCoding* c = db.pose_coding();
  if (!c) return nullptr;
  switch (stream) {
    case PoseStream::Rotations:
      return c->rotations();
    case PoseStream::Translations:
      return c->translations();
    case PoseStream::Velocities:
      return c->velocities();
    case PoseStream::AngularVelocities:
      return c->angular_velocities();
  }
  return nullptr;
}

const flatbuffers::Vector<const fb::Vec4*>* rawStream(const fb::Database& db,
                                                      PoseStream stream) noexcept {
  switch (stream) {
    case PoseStream::Rotations:
      return db.local_rotations();
    case PoseStream::Translations:
      return db.local_translations();
    case PoseStream::Velocities:
      return db.local_velocities();
    case PoseStream::AngularVelocities:
      return db.local_angular_velocities();
  }
  return nullptr;
}

const char* poseStreamName(PoseStream stream) noexcept {
  static const char* const kNames[] = {"local_rotations", "local_translations", "local_velocities",
                                       "local_angular_velocities"};
  return kNames[size_t(stream)];
}

namespace {

// The structure of a coded stream: every track readable, every segment inside the data. Its
// values are checked when they are decoded.
Status checkCodedStream(const fb::Database& db, PoseStream stream, const fb::CodedStream& c,
                        uint32_t segment_frames) {
  const char* name = poseStreamName(stream);
  const bool rotation = stream == PoseStream::Rotations;
  const uint32_t joints = db.joint_count();
  Status s;
  if (!(s = checkCount(name, count(c.tracks()), joints))) return s;
  const uint64_t segments = (uint64_t(db.frame_count()) + segment_frames - 1) / segment_frames;
  if (!(s = checkCount(name, count(c.segment_offsets()), joints * segments + 1))) return s;
  const flatbuffers::Vector<uint32_t>& offsets = *c.segment_offsets();
  if (offsets.Get(0) != 0 || offsets.Get(offsets.size() - 1) != count(c.data()))
    return Error::format(ErrorCode::Inconsistent,
                         "%s: segment offsets run from %u to %u, not over its %zu bytes of data",
                         name, offsets.Get(0), offsets.Get(offsets.size() - 1), count(c.data()));
  for (uint32_t j = 0; j < joints; ++j) {
    const fb::PoseTrack* t = c.tracks()->Get(j);
    const auto coding = t->coding();
    const unsigned bits = t->bits();
    bool ok = false;
    switch (coding) {
      case fb::TrackCoding::Constant:
        ok = true;
        break;
      case fb::TrackCoding::Quaternion:
        ok = rotation && bits >= 4 && bits <= 16;
        break;
      case fb::TrackCoding::Exponent:
        ok = bits >= 1 && bits <= 24;
        break;
      case fb::TrackCoding::Lossless:
        ok = true;
        break;
    }
    if (!ok)
      return Error::format(ErrorCode::Inconsistent,
                           "%s: joint %u has coding %d with %u bits, which this stream cannot have",
                           name, j, int(coding), bits);
    const fb::Vec4& v = t->value();
    if (!(std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z()) &&
          std::isfinite(v.w())))
      return Error::format(ErrorCode::Inconsistent, "%s: joint %u's constant is not finite", name,
                           j);
    const bool constant = coding == fb::TrackCoding::Constant;
    for (uint64_t seg = 0; seg < segments; ++seg) {
      const uint64_t i = j * segments + seg;
      const uint32_t begin = offsets.Get(uint32_t(i)), end = offsets.Get(uint32_t(i + 1));
      if (end < begin || (constant ? end != begin : end == begin))
        return Error::format(ErrorCode::Inconsistent,
                             "%s: joint %u, segment %llu spans bytes [%u, %u): offsets must not "
                             "fall, and only a constant track has empty segments",
                             name, j, (unsigned long long)seg, begin, end);
    }
  }
  return {};
}

Status checkStreams(const fb::Database& db) {
  const uint64_t frames = db.frame_count();
  const uint64_t joints = db.joint_count();
  if (!(db.frame_rate() >= kMinFrameRate && db.frame_rate() <= kMaxFrameRate))
    return Error::format(ErrorCode::Inconsistent, "frame_rate %g is outside [%g, %g] Hz",
                         double(db.frame_rate()), double(kMinFrameRate), double(kMaxFrameRate));
  if (frames == 0) return Error(ErrorCode::Inconsistent, "the database has no frames");
  if (joints == 0) return Error(ErrorCode::Inconsistent, "the database has no joints");
  const uint64_t poses = frames * joints;
  Status s;
  const fb::PoseCoding* coding = db.pose_coding();
  bool any_coded = false;
  if (coding) {
    if (db.version()->major() < 2)
      return Error::format(ErrorCode::Inconsistent,
                           "the file has coded pose streams but schema %u.%u, which has none",
                           unsigned(db.version()->major()), unsigned(db.version()->minor()));
    if (coding->segment_frames() == 0 || coding->segment_frames() > kMaxSegmentFrames)
      return Error::format(ErrorCode::Inconsistent,
                           "pose_coding.segment_frames is %u, outside [1, %u]",
                           coding->segment_frames(), kMaxSegmentFrames);
  }
  for (uint32_t i = 0; i < kPoseStreamCount; ++i) {
    const PoseStream stream = PoseStream(i);
    const char* name = poseStreamName(stream);
    const fb::CodedStream* coded = codedStream(db, stream);
    if (coded) {
      any_coded = true;
      if (rawStream(db, stream))
        return Error::format(ErrorCode::Inconsistent,
                             "%s is both raw and coded: a file has one or the other", name);
      if (!(s = checkCodedStream(db, stream, *coded, coding->segment_frames()))) return s;
    } else {
      if (!(s = checkCount(name, count(rawStream(db, stream)), poses))) return s;
      if (!(s = checkFiniteStructs(name, rawStream(db, stream)))) return s;
    }
  }
  if (any_coded != ((db.required_features() & kFeatureCodedPoses) != 0))
    return Error(ErrorCode::Inconsistent,
                 any_coded ? "pose streams are coded but required_features does not say so"
                           : "required_features names coded pose streams, but none is coded");
  if (!(s = checkCount("root_motion", count(db.root_motion()), frames))) return s;
  if (!(s = checkCount("contacts", count(db.contacts()), frames))) return s;
  if (!(s = checkFiniteStructs("root_motion", db.root_motion()))) return s;
  if (!(s = checkRootMotionBounds(db.root_motion()))) return s;
  return {};
}

// settings and its trajectory times are required: the controller and the query read them.
// block_weights is informative only and may be absent.
Status checkSettings(const fb::Database& db) {
  const fb::CookSettings* settings = db.settings();
  if (!settings) return Error(ErrorCode::Inconsistent, "settings is absent");
  const flatbuffers::Vector<float>* times = settings->trajectory_times();
  if (count(times) != kTrajectoryTimeCount)
    return Error::format(ErrorCode::Inconsistent,
                         "settings.trajectory_times has %zu elements, expected %zu", count(times),
                         kTrajectoryTimeCount);
  float previous = 0;
  for (uint32_t i = 0; i < times->size(); ++i) {
    const float t = times->Get(i);
    if (!(std::isfinite(t) && t > previous))
      return Error::format(ErrorCode::Inconsistent,
                           "settings.trajectory_times[%u] = %g: times must be finite, positive "
                           "and increasing",
                           i, double(t));
    previous = t;
  }
  Status s;
  if (!(s = checkFinite("settings.block_weights", settings->block_weights()))) return s;
  return {};
}

Status checkSkeleton(const fb::Database& db) {
  const fb::Skeleton* sk = db.skeleton();
  if (!sk) return Error(ErrorCode::Inconsistent, "the database has no skeleton");
  const uint32_t joints = db.joint_count();
  Status s;
  if (!(s = checkCount("skeleton.names", count(sk->names()), joints))) return s;
  if (!(s = checkCount("skeleton.parents", count(sk->parents()), joints))) return s;
  if (!(s = checkCount("skeleton.bind_translations", count(sk->bind_translations()), joints)))
    return s;
  if (!(s = checkCount("skeleton.bind_rotations", count(sk->bind_rotations()), joints))) return s;
  for (uint32_t j = 0; j < joints; ++j) {
    const int32_t p = sk->parents()->Get(j);
    if (p < -1 || p >= static_cast<int32_t>(j))
      return Error::format(ErrorCode::Inconsistent,
                           "joint %u (%s) has parent %d: a parent must precede its child", j,
                           sk->names()->Get(j)->c_str(), p);
  }
  if (sk->roles()) {
    for (const fb::RoleBinding* r : *sk->roles()) {
      if (r->joint() < -1 || r->joint() >= static_cast<int32_t>(joints))
        return Error::format(ErrorCode::Inconsistent, "role %d names joint %d of %u",
                             int(r->role()), r->joint(), joints);
    }
  }
  for (size_t i = 0; i < count(sk->contact_joints()); ++i) {
    const int32_t j = sk->contact_joints()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (j < 0 || j >= static_cast<int32_t>(joints))
      return Error::format(ErrorCode::Inconsistent, "contact joint %zu is %d, of %u joints", i, j,
                           joints);
  }
  if (count(sk->contact_joints()) > 32)
    return Error(ErrorCode::Inconsistent, "more than 32 contact joints for a 32-bit mask");
  const size_t contact_joints = count(sk->contact_joints());
  const uint32_t contact_bits = contact_joints >= 32 ? ~0u : (1u << contact_joints) - 1;
  for (size_t f = 0; f < count(db.contacts()); ++f)
    if (db.contacts()->Get(static_cast<flatbuffers::uoffset_t>(f)) & ~contact_bits)
      return Error::format(ErrorCode::Inconsistent,
                           "contacts[%zu] has bits beyond the %zu skeleton.contact_joints", f,
                           contact_joints);
  if (!(s = checkFiniteStructs("skeleton.bind_translations", sk->bind_translations()))) return s;
  if (!(s = checkFiniteStructs("skeleton.bind_rotations", sk->bind_rotations()))) return s;
  if (const fb::Vec4* axis = sk->facing_axis()) {
    if (!(std::isfinite(axis->x()) && std::isfinite(axis->y()) && std::isfinite(axis->z())))
      return Error(ErrorCode::Inconsistent, "skeleton.facing_axis is not finite (NaN or inf)");
  }
  return {};
}

// The bits of a tag mask beyond the tag names, or 0.
uint64_t unnamedTagBits(const fb::Database& db, uint64_t mask) {
  const size_t tags = count(db.tag_names());
  return tags >= 64 ? 0 : mask & ~((uint64_t{1} << tags) - 1);
}

// Clips are required and cover every frame: each frame belongs to exactly one clip.
Status checkClips(const fb::Database& db) {
  const uint64_t frames = db.frame_count();
  const size_t clips = count(db.clips());
  if (clips == 0) return Error(ErrorCode::Inconsistent, "clips is absent or empty");
  const size_t sources = count(db.sources());
  uint64_t previous_end = 0;
  for (size_t i = 0; i < clips; ++i) {
    const fb::Clip* c = db.clips()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const char* name = c->name() ? c->name()->c_str() : "";
    if (c->source_index() < 0 || size_t(c->source_index()) >= sources)
      return Error::format(ErrorCode::Inconsistent,
                           "clip %zu (%.64s): source_index %d is outside the %zu sources", i, name,
                           c->source_index(), sources);
    if (c->mirror_of() < -1 || c->mirror_of() >= int64_t(clips) || c->mirror_of() == int64_t(i))
      return Error::format(ErrorCode::Inconsistent,
                           "clip %zu (%.64s): mirror_of %d is not -1 or another of the %zu clips",
                           i, name, c->mirror_of(), clips);
    if (const uint64_t bits = unnamedTagBits(db, c->tag_mask()))
      return Error::format(ErrorCode::Inconsistent,
                           "clip %zu (%.64s): tag_mask has bits 0x%llx beyond the %zu tag_names", i,
                           name, (unsigned long long)bits, count(db.tag_names()));
    if (!(std::isfinite(c->source_frame_rate()) && c->source_frame_rate() >= 0))
      return Error::format(ErrorCode::Inconsistent,
                           "clip %zu (%.64s): source_frame_rate %g is not a finite rate", i, name,
                           double(c->source_frame_rate()));
    const uint64_t first = c->first_frame(), end = first + c->frame_count();
    if (c->frame_count() == 0 || end > frames)
      return Error::format(ErrorCode::Inconsistent,
                           "clip %zu (%s) covers global frames [%llu, %llu), outside [0, %llu)", i,
                           c->name() ? c->name()->c_str() : "", (unsigned long long)first,
                           (unsigned long long)end, (unsigned long long)frames);
    if (first < previous_end)
      return Error::format(ErrorCode::Inconsistent,
                           "clip %zu (%s) starts at global frame %llu, before the previous clip "
                           "ends (%llu): clips must be sorted and not overlap",
                           i, c->name() ? c->name()->c_str() : "", (unsigned long long)first,
                           (unsigned long long)previous_end);
    if (first != previous_end)
      return Error::format(ErrorCode::Inconsistent,
                           "clip %zu (%.64s) starts at global frame %llu, but the previous clip "
                           "ends at %llu: global frames %llu to %llu belong to no clip",
                           i, name, (unsigned long long)first, (unsigned long long)previous_end,
                           (unsigned long long)previous_end, (unsigned long long)first);
    previous_end = end;
  }
  if (previous_end != frames)
    return Error::format(ErrorCode::Inconsistent,
                         "the clips end at global frame %llu of %llu: the frames after it belong "
                         "to no clip",
                         (unsigned long long)previous_end, (unsigned long long)frames);
  return {};
}

// The clip that holds a global frame (clips checked sorted and contiguous), or -1.
int32_t clipHolding(const fb::Database& db, uint32_t frame) {
  uint32_t lo = 0, hi = uint32_t(count(db.clips()));
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (db.clips()->Get(mid)->first_frame() <= frame)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return -1;
  const fb::Clip* c = db.clips()->Get(lo - 1);
  return frame - c->first_frame() < c->frame_count() ? int32_t(lo - 1) : -1;
}

Status checkRanges(const fb::Database& db) {
  const uint64_t frames = db.frame_count();
  uint64_t previous_end = 0;
  for (size_t i = 0; i < count(db.ranges()); ++i) {
    const fb::MatchRange* r = db.ranges()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const uint64_t first = r->first_frame(), end = first + r->frame_count();
    if (end > frames)
      return Error::format(
          ErrorCode::Inconsistent, "range %zu covers global frames [%llu, %llu), outside [0, %llu)",
          i, (unsigned long long)first, (unsigned long long)end, (unsigned long long)frames);
    if (first < previous_end)
      return Error::format(ErrorCode::Inconsistent,
                           "range %zu starts at global frame %llu, before the previous range ends "
                           "(%llu): ranges must be sorted and not overlap",
                           i, (unsigned long long)first, (unsigned long long)previous_end);
    if (r->frame_count() == 0)
      return Error::format(ErrorCode::Inconsistent, "range %zu is empty", i);
    const int32_t clip = clipHolding(db, r->first_frame());
    if (clip < 0 || end > uint64_t(db.clips()->Get(uint32_t(clip))->first_frame()) +
                              db.clips()->Get(uint32_t(clip))->frame_count())
      return Error::format(ErrorCode::Inconsistent,
                           "range %zu covers global frames [%llu, %llu), which are not inside "
                           "one clip",
                           i, (unsigned long long)first, (unsigned long long)end);
    if (const uint64_t bits = unnamedTagBits(db, r->tag_mask()))
      return Error::format(ErrorCode::Inconsistent,
                           "range %zu: tag_mask has bits 0x%llx beyond the %zu tag_names", i,
                           (unsigned long long)bits, count(db.tag_names()));
    previous_end = end;
  }
  // 2.1 cost biases: absent, or one finite value per range; clip biases finite.
  if (db.range_biases()) {
    Status s = checkCount("range_biases", count(db.range_biases()), count(db.ranges()));
    if (!s || !(s = checkFinite("range_biases", db.range_biases()))) return s;
  }
  for (size_t i = 0; i < count(db.clips()); ++i)
    if (!std::isfinite(db.clips()->Get(static_cast<flatbuffers::uoffset_t>(i))->bias()))
      return Error::format(ErrorCode::Inconsistent, "clip %zu: bias is not finite (NaN or inf)", i);
  return {};
}

Status checkFeatureLayout(const fb::Database& db) {
  const uint32_t n = db.feature_count(), stride = db.feature_stride();
  if (n == 0) return Error(ErrorCode::Inconsistent, "feature_count is 0");
  if (stride < n || stride % 4 != 0)
    return Error::format(ErrorCode::Inconsistent,
                         "feature_stride %u must be >= feature_count %u and a multiple of 4",
                         stride, n);
  Status s;
  if (!(s = checkCount("features", count(db.features()), uint64_t(db.frame_count()) * stride)))
    return s;
  if (!(s = checkCount("feature_offset", count(db.feature_offset()), n))) return s;
  if (!(s = checkCount("feature_scale", count(db.feature_scale()), n))) return s;
  uint64_t covered = 0;  // one bit per column, features are at most 64 wide here
  if (n > 64) return Error::format(ErrorCode::Inconsistent, "feature_count %u exceeds 64", n);
  if (count(db.feature_blocks()) == 0)
    return Error(ErrorCode::Inconsistent, "feature_blocks is absent or empty");
  bool has_trajectory[2] = {false, false};
  for (size_t i = 0; i < count(db.feature_blocks()); ++i) {
    const fb::FeatureBlock* b = db.feature_blocks()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const char* name = b->name() ? b->name()->c_str() : "";
    const bool pose =
        b->kind() == fb::FeatureKind::Position || b->kind() == fb::FeatureKind::Velocity;
    const bool trajectory = b->kind() == fb::FeatureKind::TrajectoryPosition ||
                            b->kind() == fb::FeatureKind::TrajectoryDirection;
    const uint32_t expected_width = pose ? 3u : uint32_t(2 * kTrajectoryTimeCount);
    if ((!pose && !trajectory) || b->width() != expected_width)
      return Error::format(ErrorCode::Inconsistent,
                           "feature block %zu (%.64s): kind %d with width %u (position and "
                           "velocity blocks are 3 wide, trajectory blocks %u)",
                           i, name, int(b->kind()), unsigned(b->width()),
                           unsigned(2 * kTrajectoryTimeCount));
    if (pose && b->joint() < 0)
      return Error::format(ErrorCode::Inconsistent,
                           "feature block %zu (%.64s) is a pose block without a joint", i, name);
    if (trajectory) has_trajectory[b->kind() == fb::FeatureKind::TrajectoryDirection] = true;
    if (!(std::isfinite(b->std()) && std::isfinite(b->weight())))
      return Error::format(ErrorCode::Inconsistent,
                           "feature block %zu (%.64s): std or weight is not finite", i, name);
    const uint32_t first = b->first_column(), end = first + b->width();
    if (b->width() == 0 || end > n)
      return Error::format(ErrorCode::Inconsistent,
                           "feature block %zu (%s) covers columns [%u, %u), outside [0, %u)", i,
                           b->name() ? b->name()->c_str() : "", first, end, n);
    const uint64_t bits = (end == 64 ? ~0ull : ((1ull << end) - 1)) & ~((1ull << first) - 1);
    if (covered & bits)
      return Error::format(ErrorCode::Inconsistent, "feature block %zu (%s) overlaps another", i,
                           b->name() ? b->name()->c_str() : "");
    covered |= bits;
    if (b->joint() < -1 || b->joint() >= static_cast<int32_t>(db.joint_count()))
      return Error::format(ErrorCode::Inconsistent, "feature block %zu reads joint %d of %u", i,
                           b->joint(), db.joint_count());
  }
  if (!has_trajectory[0] || !has_trajectory[1])
    return Error(ErrorCode::Inconsistent,
                 "feature_blocks has no trajectory position or no trajectory direction block");
  return {};
}

Status checkBounds(const fb::Database& db) {
  const uint32_t frames = db.frame_count(), stride = db.feature_stride();
  const uint32_t small = db.bounds_small_size(), large = db.bounds_large_size();
  if (small == 0 || large == 0)
    return Error(ErrorCode::Inconsistent, "bounds box sizes must be positive");
  const uint64_t small_len = uint64_t((frames + small - 1) / small) * stride;
  const uint64_t large_len = uint64_t((frames + large - 1) / large) * stride;
  Status s;
  if (!(s = checkCount("bounds_small_min", count(db.bounds_small_min()), small_len))) return s;
  if (!(s = checkCount("bounds_small_max", count(db.bounds_small_max()), small_len))) return s;
  if (!(s = checkCount("bounds_large_min", count(db.bounds_large_min()), large_len))) return s;
  if (!(s = checkCount("bounds_large_max", count(db.bounds_large_max()), large_len))) return s;
  return {};
}

Status checkValues(const fb::Database& db) {
  Status s;
  if (!(s = checkFinite("features", db.features()))) return s;
  if (!(s = checkFinite("feature_offset", db.feature_offset()))) return s;
  if (!(s = checkFinite("feature_scale", db.feature_scale()))) return s;
  if (!(s = checkFinite("bounds_small_min", db.bounds_small_min()))) return s;
  if (!(s = checkFinite("bounds_small_max", db.bounds_small_max()))) return s;
  if (!(s = checkFinite("bounds_large_min", db.bounds_large_min()))) return s;
  if (!(s = checkFinite("bounds_large_max", db.bounds_large_max()))) return s;
  for (uint32_t i = 0; i < db.feature_scale()->size(); ++i) {
    if (!(db.feature_scale()->Get(i) > 0))
      return Error::format(ErrorCode::Inconsistent, "feature_scale[%u] = %g is not positive", i,
                           double(db.feature_scale()->Get(i)));
  }
  return {};
}

}  // namespace

// Every array read in place starts on its element's boundary. The FlatBuffers verifier checks a
// vector's length prefix (4 bytes) but not where a vector of wider structs begins, so a damaged
// file could place an 8- or 16-byte struct on a 4-byte boundary.
Status detail::checkAlignment(const fb::Database& db) {
  struct Array {
    const char* name;
    const void* data;
    size_t alignment;
  };
  auto data = [](auto* v) -> const void* {
    return v ? static_cast<const void*>(v->Data()) : nullptr;
  };
  const fb::Skeleton* skeleton = db.skeleton();
  const fb::PoseCoding* coding = db.pose_coding();
  auto tracks = [&](const fb::CodedStream* c) { return c ? data(c->tracks()) : nullptr; };
  const Array arrays[] = {
      {"local_rotations", data(db.local_rotations()), 16},
      {"local_translations", data(db.local_translations()), 16},
      {"local_velocities", data(db.local_velocities()), 16},
      {"local_angular_velocities", data(db.local_angular_velocities()), 16},
      {"root_motion", data(db.root_motion()), 16},
      {"features", data(db.features()), 16},
      {"bounds_small_min", data(db.bounds_small_min()), 16},
      {"bounds_small_max", data(db.bounds_small_max()), 16},
      {"bounds_large_min", data(db.bounds_large_min()), 16},
      {"bounds_large_max", data(db.bounds_large_max()), 16},
      {"ranges", data(db.ranges()), alignof(fb::MatchRange)},
      {"skeleton.bind_translations", skeleton ? data(skeleton->bind_translations()) : nullptr,
       alignof(fb::Vec4)},
      {"skeleton.bind_rotations", skeleton ? data(skeleton->bind_rotations()) : nullptr,
       alignof(fb::Vec4)},
      {"pose_coding.rotations.tracks", coding ? tracks(coding->rotations()) : nullptr,
       alignof(fb::PoseTrack)},
      {"pose_coding.translations.tracks", coding ? tracks(coding->translations()) : nullptr,
       alignof(fb::PoseTrack)},
      {"pose_coding.velocities.tracks", coding ? tracks(coding->velocities()) : nullptr,
       alignof(fb::PoseTrack)},
      {"pose_coding.angular_velocities.tracks",
       coding ? tracks(coding->angular_velocities()) : nullptr, alignof(fb::PoseTrack)},
  };
  for (const Array& a : arrays) {
    if (a.data && reinterpret_cast<uintptr_t>(a.data) % a.alignment != 0)
      return Error::format(ErrorCode::Misaligned,
                           "%s is not %zu-byte aligned in the file: re-cook it with mmcook", a.name,
                           a.alignment);
  }
  return {};
}

namespace {

// The pruned search is exact only if every frame it may return lies inside its boxes' min and
// max: every frame, or with RangeBounds (2.2) every frame of a matchable range.
Status checkBoundsContain(const fb::Database& db) {
  const uint32_t frames = db.frame_count(), n = db.feature_count(), stride = db.feature_stride();
  const uint32_t small = db.bounds_small_size(), large = db.bounds_large_size();
  const float* x = db.features()->data();
  const float* smin = db.bounds_small_min()->data();
  const float* smax = db.bounds_small_max()->data();
  const float* lmin = db.bounds_large_min()->data();
  const float* lmax = db.bounds_large_max()->data();
  const auto check = [&](uint32_t first, uint32_t end) -> Status {
    for (uint32_t f = first; f < end; ++f) {
      const float* row = x + size_t(f) * stride;
      const size_t s = size_t(f / small) * stride, l = size_t(f / large) * stride;
      bool inside = true;
      for (uint32_t c = 0; c < n; ++c) {
        const float v = row[c];
        inside &= (smin[s + c] <= v) & (v <= smax[s + c]) & (lmin[l + c] <= v) & (v <= lmax[l + c]);
      }
      if (!inside)
        return Error::format(ErrorCode::Inconsistent,
                             "features of global frame %u lie outside their bounds boxes (small "
                             "box %u, large box %u): re-cook the file",
                             f, f / small, f / large);
    }
    return {};
  };
  if (!(db.required_features() & kFeatureRangeBounds)) return check(0, frames);
  // checkRanges() has put every range inside the frames.
  for (uint32_t i = 0; i < count(db.ranges()); ++i) {
    const fb::MatchRange* r = db.ranges()->Get(i);
    if (Status s = check(r->first_frame(), r->first_frame() + r->frame_count()); !s) return s;
  }
  return {};
}

}  // namespace

Status detail::checkSemantics(const fb::Database& db) {
  Status s;
  if (!(s = checkStreams(db))) return s;
  if (!(s = checkSettings(db))) return s;
  if (!(s = checkSkeleton(db))) return s;
  if (!(s = checkClips(db))) return s;
  if (!(s = checkRanges(db))) return s;
  if (!(s = checkFeatureLayout(db))) return s;
  if (!(s = checkBounds(db))) return s;
  if (!(s = checkValues(db))) return s;
  if (!(s = checkBoundsContain(db))) return s;
  return {};
}

namespace {

// An unaligned little-endian read (the offsets come from an untrusted buffer).
template <class T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

}  // namespace

// Reads the version without trusting the buffer: it must be checked before the verifier so a
// file from another major gets the re-cook message rather than "corrupt".
Status detail::checkVersion(const uint8_t* bytes, size_t size) {
  // Root table offset, then the vtable; the version is field 0 (a 4-byte struct).
  const uint32_t root = load<uint32_t>(bytes);
  if (uint64_t(root) + 4 > size) return Error(ErrorCode::Corrupt, "root table outside the file");
  const int32_t vt_rel = load<int32_t>(bytes + root);
  const int64_t vt = int64_t(root) - vt_rel;
  if (vt < 0 || uint64_t(vt) + 4 > size)
    return Error(ErrorCode::Corrupt, "vtable outside the file");
  const uint16_t vt_size = load<uint16_t>(bytes + vt);
  const uint16_t table_size = load<uint16_t>(bytes + vt + 2);
  if (uint64_t(vt) + vt_size > size || uint64_t(root) + table_size > size)
    return Error(ErrorCode::Corrupt, "vtable outside the file");
  uint16_t major = 0, minor = 0;
  if (vt_size >= 6) {
    const uint16_t field = load<uint16_t>(bytes + vt + 4);
    if (field != 0) {
      if (uint32_t(field) + 4 > table_size)
        return Error(ErrorCode::Corrupt, "schema version outside the root table");
      major = load<uint16_t>(bytes + root + field);
      minor = load<uint16_t>(bytes + root + field + 2);
    }
  }
  if (major < kOldestSchemaMajor || major > kSchemaMajor)
    return Error::format(ErrorCode::VersionMismatch,
                         "file has schema %u.%u, this runtime reads %u.x to %u.x; re-cook it with "
                         "a matching mmcook",
                         unsigned(major), unsigned(minor), unsigned(kOldestSchemaMajor),
                         unsigned(kSchemaMajor));
  return {};
}

}  // namespace mmdb
