// Sampling a clip's pose at a time, and the clock of a clip.
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
namespace {

// Within this fraction of a key, a sample takes the key's rotation (on the shorter arc from the
// key before): the reach of a crowd's clock snap (advanceClipTime). Float seconds place a key
// only so near its frame (at 60 Hz, past 16 s, the nearest float and its product with the rate
// are up to 1.2e-4 of a frame off), and slerp would turn the rotation by at most a thousandth of
// the step between the keys. The GPU's sample pass does the same.
constexpr float kOnKey = kClipTimeSnap;

// The rotations of `count` joints between keys x and y at alpha in (kOnKey, 1 - kOnKey):
// glm::slerp's, on the shorter arc, four joints at once (defined with the four-lane helpers).
void slerpKeys(const Float4* x, const Float4* y, float alpha, glm::quat* out, size_t count);

// glm::slerp's (1 - a) x + a y weighed on the sphere: with theta the angle between x and y (y
// turned to the shorter arc), x sin((1 - a) theta) / sin(theta) + y sin(a theta) / sin(theta).
// Each ratio is taken as k sinc(k theta) / sinc(theta) (theta is at most pi / 2), which needs
// no library call and goes smoothly to glm's plain lerp for keys within float epsilon. Within
// 3e-7 of glm::slerp (the test's random keys).
void slerpKeys(const Float4* x, const Float4* y, float alpha, glm::quat* out, size_t count) {
  static_assert(sizeof(Float4) == 4 * sizeof(float) && sizeof(glm::quat) == 4 * sizeof(float),
                "x, y, z, w in a row");
  const F4 a = splat(alpha), rest = splat(1.f - alpha);
  for (size_t j = 0; j < count; j += 4) {
    const size_t n = std::min<size_t>(4, count - j);
    Float4 xs[4] = {{0, 0, 0, 1}, {0, 0, 0, 1}, {0, 0, 0, 1}, {0, 0, 0, 1}},
           ys[4] = {xs[0], xs[1], xs[2], xs[3]};
    std::copy(x + j, x + j + n, xs);
    std::copy(y + j, y + j + n, ys);
    F4 x0 = load(&xs[0].x), x1 = load(&xs[1].x), x2 = load(&xs[2].x), x3 = load(&xs[3].x);
    F4 y0 = load(&ys[0].x), y1 = load(&ys[1].x), y2 = load(&ys[2].x), y3 = load(&ys[3].x);
    transpose(x0, x1, x2, x3);  // lanes of x, y, z, w
    transpose(y0, y1, y2, y3);
    F4 c = (x0 * y0 + x1 * y1) + (x2 * y2 + x3 * y3);
    const int flip = above(splat(0.f), c);
    const F4 sign = select(flip, splat(-1.f), splat(1.f));
    c = minOf(c * sign, splat(1.f));
    const F4 theta = arcCosine(c), theta2 = theta * theta;
    const F4 inverse = splat(1.f) / sinOver(theta2);
    const F4 wx = rest * sinOver(rest * rest * theta2) * inverse;
    const F4 wy = a * sinOver(a * a * theta2) * inverse * sign;
    const Q4 q{wx * x3 + wy * y3, wx * x0 + wy * y0, wx * x1 + wy * y1, wx * x2 + wy * y2};
    scatterQuats(q, out + j, n);
  }
}

}  // namespace

// --- sampling ----------------------------------------------------------------------------------

Status SamplePoseJob::Validate() const noexcept {
  constexpr const char* job = "SamplePoseJob";
  if (!database || !database->valid())
    return Error(ErrorCode::InvalidArgument, "SamplePoseJob: no database");
  if (clip >= database->clipCount())
    return Error::format(ErrorCode::InvalidArgument, "SamplePoseJob: clip %u of %u", clip,
                         database->clipCount());
  if (!std::isfinite(time))
    return Error(ErrorCode::InvalidArgument, "SamplePoseJob: time is not finite");
  const size_t joints = database->jointCount();
  const PoseView view = poses.frame_count ? poses : database->rawPoses();
  if (view.frame_count == 0)
    return Error(ErrorCode::InvalidArgument,
                 "SamplePoseJob: the database's pose streams are coded; decode them with "
                 "Database::decodePoses() and pass them as poses");
  const ClipInfo c = database->clip(clip);
  if (!view.covers(c.first_frame, c.frame_count))
    return Error::format(
        ErrorCode::InvalidArgument,
        "SamplePoseJob: poses hold global frames [%u, %llu), not all of clip %u's "
        "[%u, %llu)",
        view.first_frame, (unsigned long long)(uint64_t(view.first_frame) + view.frame_count), clip,
        c.first_frame, (unsigned long long)(uint64_t(c.first_frame) + c.frame_count));
  const size_t elements = size_t(view.frame_count) * joints;
  if (view.rotations.size() != elements)
    return sizeError(job, "poses.rotations", view.rotations.size(), elements);
  if (view.translations.size() != elements)
    return sizeError(job, "poses.translations", view.translations.size(), elements);
  if (!velocities.empty() && view.velocities.size() != elements)
    return sizeError(job, "poses.velocities", view.velocities.size(), elements);
  if (!angular_velocities.empty() && view.angular_velocities.size() != elements)
    return sizeError(job, "poses.angular_velocities", view.angular_velocities.size(), elements);
  if (rotations.size() != joints) return sizeError(job, "rotations", rotations.size(), joints);
  if (translations.size() != joints)
    return sizeError(job, "translations", translations.size(), joints);
  if (!velocities.empty() && velocities.size() != joints)
    return sizeError(job, "velocities", velocities.size(), joints);
  if (!angular_velocities.empty() && angular_velocities.size() != joints)
    return sizeError(job, "angular_velocities", angular_velocities.size(), joints);
  return {};
}

Status SamplePoseJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  detail::runSamplePose(*this);
  return {};
}

void detail::runSamplePose(const SamplePoseJob& job) noexcept {
  const ClipInfo c = job.database->clip(job.clip);
  runSamplePose(job, c.first_frame, c.frame_count);
}

void detail::runSamplePose(const SamplePoseJob& job, uint32_t first_frame,
                           uint32_t frame_count) noexcept {
  const Database& db = *job.database;
  const float last = float(frame_count - 1);
  const float key = std::fmin(std::fmax(job.time * db.frameRate(), 0.f), last);
  const uint32_t k0 = uint32_t(key);
  const uint32_t k1 = k0 + 1 < frame_count ? k0 + 1 : k0;
  const float alpha = key - float(k0);
  const size_t joints = db.jointCount();
  const PoseView view = job.poses.frame_count ? job.poses : db.rawPoses();
  const size_t row = size_t(first_frame) - view.first_frame;
  const size_t a = (row + k0) * joints;
  const size_t b = (row + k1) * joints;
  const Float4* rot = view.rotations.data();
  const Float4* pos = view.translations.data();
  if (alpha <= kOnKey) {
    for (size_t j = 0; j < joints; ++j) job.rotations[j] = toQuat(rot[a + j]);
  } else if (alpha >= 1.f - kOnKey) {
    for (size_t j = 0; j < joints; ++j) {
      const glm::quat x = toQuat(rot[a + j]), y = toQuat(rot[b + j]);
      job.rotations[j] = glm::dot(x, y) < 0.f ? -y : y;
    }
  } else {
    slerpKeys(rot + a, rot + b, alpha, job.rotations.data(), joints);
  }
  for (size_t j = 0; j < joints; ++j)
    job.translations[j] = glm::mix(toVec3(pos[a + j]), toVec3(pos[b + j]), alpha);
  if (!job.velocities.empty()) {
    const Float4* vel = view.velocities.data();
    for (size_t j = 0; j < joints; ++j)
      job.velocities[j] = glm::mix(toVec3(vel[a + j]), toVec3(vel[b + j]), alpha);
  }
  if (!job.angular_velocities.empty()) {
    const Float4* ang = view.angular_velocities.data();
    for (size_t j = 0; j < joints; ++j)
      job.angular_velocities[j] = glm::mix(toVec3(ang[a + j]), toVec3(ang[b + j]), alpha);
  }
}

float advanceClipTime(float time, float dt, float frame_rate) noexcept {
  time += dt;
  if (!(frame_rate > 0.f)) return time;
  // The GPU's fk pass computes the same floats (no fused multiply-add): both crowds keep one
  // clock.
  const float key = time * frame_rate;
  const float nearest = std::floor(key + 0.5f);
  return std::fabs(key - nearest) <= kClipTimeSnap ? nearest * (1.f / frame_rate) : time;
}

Result<ClipTime> clipTimeOfFrame(const Database& db, uint32_t global_frame) noexcept {
  const int32_t clip = db.valid() ? db.clipOfFrame(global_frame) : -1;
  if (clip < 0)
    return Error::format(ErrorCode::InvalidArgument, "global frame %u is in no clip", global_frame);
  ClipTime t;
  t.clip = uint32_t(clip);
  t.time = float(global_frame - db.clip(t.clip).first_frame) / db.frameRate();
  return t;
}

}  // namespace mmdb
