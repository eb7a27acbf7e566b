// Pose sampling, inertialization and forward kinematics on the CPU.
#include "mmdb/playback.h"

#include "playback/playback_run.h"
#include "playback/rotation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>

// MMDB_PLAYBACK_SCALAR: the plain floats' path on any machine (a test compiles it so).
#if !defined(MMDB_PLAYBACK_SCALAR) && \
    (defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2))
#define MMDB_PLAYBACK_SSE2 1
#include <emmintrin.h>
#else
#define MMDB_PLAYBACK_SSE2 0
#endif

namespace mmdb {
namespace {

using detail::fromScaledAxis;
using detail::quatAbs;
using detail::springY;
using detail::toScaledAxis;

glm::quat toQuat(const Float4& q) { return glm::quat(q.w, q.x, q.y, q.z); }
glm::vec3 toVec3(const Float4& v) { return glm::vec3(v.x, v.y, v.z); }

// Within this fraction of a key, a sample takes the key's rotation (on the shorter arc from the
// key before): the reach of a crowd's clock snap (advanceClipTime). Float seconds place a key
// only so near its frame (at 60 Hz, past 16 s, the nearest float and its product with the rate
// are up to 1.2e-4 of a frame off), and slerp would turn the rotation by at most a thousandth of
// the step between the keys. The GPU's sample pass does the same.
constexpr float kOnKey = kClipTimeSnap;

// The rotations of `count` joints between keys x and y at alpha in (kOnKey, 1 - kOnKey):
// glm::slerp's, on the shorter arc, four joints at once (defined with the four-lane helpers).
void slerpKeys(const Float4* x, const Float4* y, float alpha, glm::quat* out, size_t count);

template <class A, class B>
bool sameSize(const A& a, const B& b) {
  return a.size() == b.size();
}

Status sizeError(const char* job, const char* what, size_t actual, size_t expected) {
  return Error::format(ErrorCode::InvalidArgument, "%s: %s has %zu elements, expected %zu", job,
                       what, actual, expected);
}

// A job's rate half-life: its own, or 0 for the job's halflife.
float rateHalflife(float halflife, float rate_halflife) {
  return rate_halflife > 0.f ? rate_halflife : halflife;
}

bool validHalflife(float h) { return std::isfinite(h) && h > 0; }
bool validTime(float t) { return std::isfinite(t) && t >= 0; }

}  // namespace

void decayOffset(glm::vec3& x, glm::vec3& v, float halflife, float t) noexcept {
  const float y = springY(halflife);
  const glm::vec3 j = v + x * y;
  const float e = std::exp(-y * t);
  x = e * (x + j * t);
  v = e * (v - j * y * t);
}

void decayOffsetSplit(glm::vec3& x, glm::vec3& v, float halflife, float rate_halflife,
                      float t) noexcept {
  if (rate_halflife == halflife) return decayOffset(x, v, halflife, t);
  glm::vec3 x_part = x, v_part(0.f);  // the offset, still
  glm::vec3 x_rate(0.f), v_rate = v;  // its rate, from nothing
  decayOffset(x_part, v_part, halflife, t);
  decayOffset(x_rate, v_rate, rate_halflife, t);
  x = x_part + x_rate;
  v = v_part + v_rate;
}

glm::quat decayRotationSplit(const glm::quat& offset, glm::vec3& angular_velocity, float halflife,
                             float rate_halflife, float t) noexcept {
  if (rate_halflife == halflife) {  // one spring on the rotation vector, as the reference
    glm::vec3 x = toScaledAxis(quatAbs(offset));
    decayOffset(x, angular_velocity, halflife, t);
    return fromScaledAxis(x);
  }
  // Each part turns about a fixed axis (the offset's, the rate's), so its rotation vector's rate
  // is its angular velocity exactly.
  glm::vec3 x_part = toScaledAxis(quatAbs(offset)), v_part(0.f);
  glm::vec3 x_rate(0.f), v_rate = angular_velocity;
  decayOffset(x_part, v_part, halflife, t);
  decayOffset(x_rate, v_rate, rate_halflife, t);
  const glm::quat rate = fromScaledAxis(x_rate);
  angular_velocity = v_rate + rate * v_part;
  return glm::normalize(rate * fromScaledAxis(x_part));
}

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

// --- inertialization ---------------------------------------------------------------------------

Status InertializeTransitionJob::Validate() const noexcept {
  constexpr const char* job = "InertializeTransitionJob";
  if (!validHalflife(halflife) || !(rate_halflife >= 0.f) || !std::isfinite(rate_halflife))
    return Error(ErrorCode::InvalidArgument,
                 "InertializeTransitionJob: halflife must be > 0 and rate_halflife >= 0");
  if (!validTime(time_since_previous))
    return Error(ErrorCode::InvalidArgument,
                 "InertializeTransitionJob: time_since_previous must be finite and >= 0");
  const size_t n = offset_rotations.size();
  struct Named {
    const char* name;
    size_t size;
  };
  const Named all[] = {{"source_rotations", source_rotations.size()},
                       {"source_angular_velocities", source_angular_velocities.size()},
                       {"source_translations", source_translations.size()},
                       {"source_velocities", source_velocities.size()},
                       {"destination_rotations", destination_rotations.size()},
                       {"destination_angular_velocities", destination_angular_velocities.size()},
                       {"destination_translations", destination_translations.size()},
                       {"destination_velocities", destination_velocities.size()},
                       {"offset_angular_velocities", offset_angular_velocities.size()},
                       {"offset_translations", offset_translations.size()},
                       {"offset_velocities", offset_velocities.size()}};
  for (const Named& a : all)
    if (a.size != n) return sizeError(job, a.name, a.size, n);
  return {};
}

Status InertializeTransitionJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  detail::runInertializeTransition(*this);
  return {};
}

Status InertializeJob::Validate() const noexcept {
  constexpr const char* job = "InertializeJob";
  if (!validHalflife(halflife) || !(rate_halflife >= 0.f) || !std::isfinite(rate_halflife))
    return Error(ErrorCode::InvalidArgument,
                 "InertializeJob: halflife must be > 0 and rate_halflife >= 0");
  if (!validTime(time_since_switch))
    return Error(ErrorCode::InvalidArgument,
                 "InertializeJob: time_since_switch must be finite and >= 0");
  const size_t n = rotations.size();
  struct Named {
    const char* name;
    size_t size;
  };
  const Named all[] = {{"translations", translations.size()},
                       {"offset_rotations", offset_rotations.size()},
                       {"offset_angular_velocities", offset_angular_velocities.size()},
                       {"offset_translations", offset_translations.size()},
                       {"offset_velocities", offset_velocities.size()},
                       {"out_rotations", out_rotations.size()},
                       {"out_translations", out_translations.size()}};
  for (const Named& a : all)
    if (a.size != n) return sizeError(job, a.name, a.size, n);
  return {};
}

Status InertializeJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  detail::runInertialize(*this);
  return {};
}

namespace {

// The inertialization works on four joints at once, the crowd's forward kinematics and foot locks
// on four characters: F4 is four floats, one a lane, with SSE2 where the compiler has it and plain
// floats elsewhere (the same operations, lane by lane).
#if MMDB_PLAYBACK_SSE2
struct F4 {
  __m128 v;
};
inline F4 splat(float f) { return {_mm_set1_ps(f)}; }
inline F4 make(float a, float b, float c, float d) { return {_mm_setr_ps(a, b, c, d)}; }
inline void transpose(F4& a, F4& b, F4& c, F4& d) { _MM_TRANSPOSE4_PS(a.v, b.v, c.v, d.v); }
inline F4 load(const float* p) { return {_mm_loadu_ps(p)}; }
inline void store(float* p, F4 a) { _mm_storeu_ps(p, a.v); }
inline F4 operator+(F4 a, F4 b) { return {_mm_add_ps(a.v, b.v)}; }
inline F4 operator-(F4 a, F4 b) { return {_mm_sub_ps(a.v, b.v)}; }
inline F4 operator*(F4 a, F4 b) { return {_mm_mul_ps(a.v, b.v)}; }
inline F4 operator/(F4 a, F4 b) { return {_mm_div_ps(a.v, b.v)}; }
inline F4 sqrt(F4 a) { return {_mm_sqrt_ps(a.v)}; }
// Lanes where a > b (a NaN in a counts as above); lanes where a <= b.
inline int above(F4 a, F4 b) { return _mm_movemask_ps(_mm_cmpnle_ps(a.v, b.v)); }
inline int atMost(F4 a, F4 b) { return _mm_movemask_ps(_mm_cmple_ps(a.v, b.v)); }
inline F4 select(int lanes, F4 yes, F4 no) {  // yes where the lane's bit is set
  const __m128i bits = _mm_and_si128(_mm_set1_epi32(lanes), _mm_setr_epi32(1, 2, 4, 8));
  const __m128 mask = _mm_castsi128_ps(_mm_cmpeq_epi32(bits, _mm_setzero_si128()));
  return {_mm_or_ps(_mm_andnot_ps(mask, yes.v), _mm_and_ps(mask, no.v))};
}
// Lanes where a > b and where a < b (false with a NaN), as C++'s comparisons.
inline int greater(F4 a, F4 b) { return _mm_movemask_ps(_mm_cmpgt_ps(a.v, b.v)); }
inline int less(F4 a, F4 b) { return _mm_movemask_ps(_mm_cmplt_ps(a.v, b.v)); }
// a > b ? a : b and a < b ? a : b, lane by lane.
inline F4 maxOf(F4 a, F4 b) { return {_mm_max_ps(a.v, b.v)}; }
inline F4 minOf(F4 a, F4 b) { return {_mm_min_ps(a.v, b.v)}; }
inline F4 operator-(F4 a) { return {_mm_xor_ps(a.v, _mm_set1_ps(-0.f))}; }
inline F4 abs(F4 a) { return {_mm_andnot_ps(_mm_set1_ps(-0.f), a.v)}; }
#else
struct F4 {
  float v[4];
};
template <class Op>
inline F4 lanes(F4 a, F4 b, Op op) {
  F4 r;
  for (int i = 0; i < 4; ++i) r.v[i] = op(a.v[i], b.v[i]);
  return r;
}
inline F4 splat(float f) { return {{f, f, f, f}}; }
inline F4 make(float a, float b, float c, float d) { return {{a, b, c, d}}; }
inline void transpose(F4& a, F4& b, F4& c, F4& d) {
  F4* rows[4] = {&a, &b, &c, &d};
  for (int i = 0; i < 4; ++i)
    for (int k = i + 1; k < 4; ++k) std::swap(rows[i]->v[k], rows[k]->v[i]);
}
inline F4 load(const float* p) { return {{p[0], p[1], p[2], p[3]}}; }
inline void store(float* p, F4 a) { std::copy(a.v, a.v + 4, p); }
inline F4 operator+(F4 a, F4 b) {
  return lanes(a, b, [](float x, float y) { return x + y; });
}
inline F4 operator-(F4 a, F4 b) {
  return lanes(a, b, [](float x, float y) { return x - y; });
}
inline F4 operator*(F4 a, F4 b) {
  return lanes(a, b, [](float x, float y) { return x * y; });
}
inline F4 operator/(F4 a, F4 b) {
  return lanes(a, b, [](float x, float y) { return x / y; });
}
inline F4 sqrt(F4 a) {
  return {{std::sqrt(a.v[0]), std::sqrt(a.v[1]), std::sqrt(a.v[2]), std::sqrt(a.v[3])}};
}
inline int above(F4 a, F4 b) {
  int m = 0;
  for (int i = 0; i < 4; ++i) m |= (!(a.v[i] <= b.v[i]) ? 1 : 0) << i;
  return m;
}
inline int atMost(F4 a, F4 b) { return ~above(a, b) & 15; }
inline F4 select(int lanes, F4 yes, F4 no) {
  F4 r;
  for (int i = 0; i < 4; ++i) r.v[i] = ((lanes >> i) & 1) ? yes.v[i] : no.v[i];
  return r;
}
inline int greater(F4 a, F4 b) {
  int m = 0;
  for (int i = 0; i < 4; ++i) m |= (a.v[i] > b.v[i] ? 1 : 0) << i;
  return m;
}
inline int less(F4 a, F4 b) { return greater(b, a); }
inline F4 maxOf(F4 a, F4 b) {
  return lanes(a, b, [](float x, float y) { return x > y ? x : y; });
}
inline F4 minOf(F4 a, F4 b) {
  return lanes(a, b, [](float x, float y) { return x < y ? x : y; });
}
inline F4 operator-(F4 a) { return {{-a.v[0], -a.v[1], -a.v[2], -a.v[3]}}; }
inline F4 abs(F4 a) {
  return {{std::fabs(a.v[0]), std::fabs(a.v[1]), std::fabs(a.v[2]), std::fabs(a.v[3])}};
}
#endif

const glm::quat kIdentityQuat(1.f, 0.f, 0.f, 0.f);

struct V4 {  // four vectors, a lane each
  F4 x, y, z;
};
struct Q4 {  // four quaternions, a lane each
  F4 w, x, y, z;
};

V4 operator*(F4 k, const V4& a) { return {k * a.x, k * a.y, k * a.z}; }
V4 operator+(const V4& a, const V4& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }

// The Hamilton product a * b, as glm computes it.
Q4 operator*(const Q4& a, const Q4& b) {
  return {
      a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
      a.w * b.y + a.y * b.w + a.z * b.x - a.x * b.z, a.w * b.z + a.z * b.w + a.x * b.y - a.y * b.x};
}

// glm::cross and glm's quaternion * vector, in glm's order of operations.
V4 cross(const V4& a, const V4& b) {
  return {a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y};
}
V4 rotate(const Q4& q, const V4& v) {
  const V4 axis{q.x, q.y, q.z};
  const V4 uv = cross(axis, v);
  const V4 uuv = cross(axis, uv);
  const F4 two = splat(2.f);
  return {v.x + (uv.x * q.w + uuv.x) * two, v.y + (uv.y * q.w + uuv.y) * two,
          v.z + (uv.z * q.w + uuv.z) * two};
}

// Each lane's quaternion at unit length as glm::normalize computes it (its dot product's order,
// the identity for a length of 0): the same bits.
Q4 normalized(const Q4& q) {
  const F4 length = sqrt((q.w * q.w + q.x * q.x) + (q.y * q.y + q.z * q.z));
  const F4 inverse = splat(1.f) / length;
  const int none = atMost(length, splat(0.f));
  const F4 zero = splat(0.f);
  return {select(none, splat(1.f), q.w * inverse), select(none, zero, q.x * inverse),
          select(none, zero, q.y * inverse), select(none, zero, q.z * inverse)};
}

// Half-angles up to this (squared) take the series below; beyond it, std::sin and std::cos.
constexpr float kSeriesHalfAngle2 = 2.4674011f;  // (pi / 2)^2

// The polynomial in x with these coefficients, the highest power's first (Horner's rule).
inline F4 polynomial(F4 x, std::initializer_list<float> highest_first) {
  const float* k = highest_first.begin();
  F4 p = splat(*k);
  for (++k; k != highest_first.end(); ++k) p = p * x + splat(*k);
  return p;
}

// sin(u) / u from u^2, for |u| up to pi / 2: its Taylor series, within 5e-10 there.
inline F4 sinOver(F4 u2) {
  return polynomial(u2, {1.f / 6227020800.f, -1.f / 39916800.f, 1.f / 362880.f, -1.f / 5040.f,
                         1.f / 120.f, -1.f / 6.f, 1.f});
}

// acos(c) for c in [0, 1]: sqrt(1 - c) times a polynomial of degree 7 (Abramowitz and Stegun
// 4.4.46, within 2e-8). 1 - c is exact for c >= 1/2, so small angles keep their precision.
inline F4 arcCosine(F4 c) {
  return sqrt(splat(1.f) - c) *
         polynomial(c, {-0.0012624911f, 0.0066700901f, -0.0170881256f, 0.0308918810f,
                        -0.0501743046f, 0.0889789874f, -0.2145988016f, 1.5707963050f});
}

// Rotation vectors -> unit quaternions, as fromScaledAxis: (cos h, r sin(h) / (2 h)) with h half
// the angle. Up to h = pi / 2 (every offset rotation, taken the shorter way round, and almost
// every decayed rate) cos h and sin(h) / h are their Taylor series in h^2 to within 5e-10, which
// needs no square root and no division and is smooth through 0; a lane beyond takes the library's.
inline Q4 fromScaledAxes(const V4& r) {
  const F4 h2 = splat(0.25f) * (r.x * r.x + r.y * r.y + r.z * r.z);
  const F4 c = polynomial(h2, {-1.f / 87178291200.f, 1.f / 479001600.f, -1.f / 3628800.f,
                               1.f / 40320.f, -1.f / 720.f, 1.f / 24.f, -1.f / 2.f, 1.f});
  const F4 s = splat(0.5f) * sinOver(h2);
  Q4 q{c, s * r.x, s * r.y, s * r.z};
  if (const int far = above(h2, splat(kSeriesHalfAngle2))) {
    float w[4], x[4], y[4], z[4], rx[4], ry[4], rz[4];
    store(w, q.w), store(x, q.x), store(y, q.y), store(z, q.z);
    store(rx, r.x), store(ry, r.y), store(rz, r.z);
    for (int i = 0; i < 4; ++i) {
      if (!((far >> i) & 1)) continue;
      const glm::quat one = fromScaledAxis(glm::vec3(rx[i], ry[i], rz[i]));
      w[i] = one.w, x[i] = one.x, y[i] = one.y, z[i] = one.z;
    }
    q = {load(w), load(x), load(y), load(z)};
  }
  return q;
}

// atan(x) / x from x^2 for x in [0, 1]: a polynomial of degree 7 in x^2 (Abramowitz and Stegun
// 4.4.49, within 1e-7 radians).
inline F4 atanOver(F4 x2) {
  return polynomial(x2, {-0.0040540580f, 0.0218612288f, -0.0559098861f, 0.0964200441f,
                         -0.1390853351f, 0.1994653599f, -0.3332985605f, 0.9999993329f});
}

// Unit quaternions with w >= 0 -> rotation vectors, as toScaledAxis: v 2 atan2(|v|, w) / |v|.
// Where |v| <= w that factor is 2 atan(x) / x / w with x = |v| / w, which nothing small divides;
// elsewhere (|v| > 1 / sqrt(2)), 2 (pi / 2 - atan(w / |v|)) / |v|. A zero quaternion gives 0.
inline V4 toScaledAxes(const Q4& q) {
  const F4 s = sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
  const int near = atMost(s, q.w);
  const F4 over_w = splat(1.f) / select(near, q.w, splat(1.f));
  const F4 over_s = splat(1.f) / select(near, splat(1.f), s);
  const F4 x = s * over_w, y = q.w * over_s;
  const F4 factor = select(near, splat(2.f) * atanOver(x * x) * over_w,
                           splat(2.f) * (splat(1.5707963268f) - y * atanOver(y * y)) * over_s);
  const int zero = atMost(q.w, splat(0.f)) & atMost(s, splat(0.f));
  const F4 f = select(zero, splat(0.f), factor);
  return {q.x * f, q.y * f, q.z * f};
}

// The rotation with w >= 0 (quatAbs).
inline Q4 positive(const Q4& q) {
  const int negative = above(splat(0.f), q.w);
  const F4 sign = select(negative, splat(-1.f), splat(1.f));
  return {q.w * sign, q.x * sign, q.y * sign, q.z * sign};
}

// Four joints' vectors, a lane each (the joints past `count` zero).
V4 gatherVectors(const glm::vec3* v, size_t count) {
  if (count == 4)
    return {make(v[0].x, v[1].x, v[2].x, v[3].x), make(v[0].y, v[1].y, v[2].y, v[3].y),
            make(v[0].z, v[1].z, v[2].z, v[3].z)};
  glm::vec3 padded[4] = {};
  std::copy(v, v + count, padded);
  return gatherVectors(padded, 4);
}

// Four joints' quaternions, a lane each (the joints past `count` the identity). glm keeps a
// quaternion as x, y, z, w: four of them are a 4 x 4 matrix to transpose.
Q4 gatherQuats(const glm::quat* q, size_t count) {
  if (count == 4) {
    const float* f = &q[0].x;
    F4 x = load(f), y = load(f + 4), z = load(f + 8), w = load(f + 12);
    transpose(x, y, z, w);
    return {w, x, y, z};
  }
  glm::quat padded[4] = {kIdentityQuat, kIdentityQuat, kIdentityQuat, kIdentityQuat};
  std::copy(q, q + count, padded);
  return gatherQuats(padded, 4);
}

// The first `count` lanes of four quaternions, and of four vectors, into arrays.
void scatterQuats(const Q4& q, glm::quat* out, size_t count) {
  F4 x = q.x, y = q.y, z = q.z, w = q.w;
  transpose(x, y, z, w);
  float rows[4][4];
  store(rows[0], x), store(rows[1], y), store(rows[2], z), store(rows[3], w);
  for (size_t i = 0; i < count; ++i)
    out[i] = glm::quat(rows[i][3], rows[i][0], rows[i][1], rows[i][2]);
}
void scatterVectors(const V4& v, glm::vec3* out, size_t count) {
  float x[4], y[4], z[4];
  store(x, v.x), store(y, v.y), store(z, v.z);
  for (size_t i = 0; i < count; ++i) out[i] = glm::vec3(x[i], y[i], z[i]);
}
void scatter(const Q4& q, const V4& v, glm::quat* quats, glm::vec3* vectors, size_t count) {
  scatterQuats(q, quats, count);
  scatterVectors(v, vectors, count);
}

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

// Each spring's offset after t seconds is e (x + (v + y x) t) = x e (1 + y t) + v e t: two
// weights for every joint. With one spring a joint the rotation offset is the rotation vector
// of the offset and its rate so weighed; with the split decay (decayRotationSplit) the rate's
// rotation, from its own spring, is composed onto the offset's.
void detail::runInertialize(const InertializeJob& job, const glm::vec3* offset_vectors) noexcept {
  const float t = job.time_since_switch;
  const float y = springY(job.halflife);
  const float e = std::exp(-y * t);
  const bool split = rateHalflife(job.halflife, job.rate_halflife) != job.halflife;
  const float e_rate = split ? std::exp(-springY(job.rate_halflife) * t) : e;
  const F4 offset_weight = splat(e * (1.f + y * t));
  const F4 rate_weight = splat(e_rate * t);
  const size_t n = job.rotations.size();
  for (size_t j = 0; j < n; j += 4) {
    const size_t count = std::min<size_t>(4, n - j);
    const V4 offset =
        offset_vectors
            ? gatherVectors(offset_vectors + j, count)
            : toScaledAxes(positive(gatherQuats(job.offset_rotations.data() + j, count)));
    const V4 rate = gatherVectors(job.offset_angular_velocities.data() + j, count);
    const Q4 rotation_offset =
        split ? fromScaledAxes(rate_weight * rate) * fromScaledAxes(offset_weight * offset)
              : fromScaledAxes(offset_weight * offset + rate_weight * rate);
    const Q4 rotation = normalized(rotation_offset * gatherQuats(job.rotations.data() + j, count));
    const V4 translation =
        gatherVectors(job.translations.data() + j, count) +
        offset_weight * gatherVectors(job.offset_translations.data() + j, count) +
        rate_weight * gatherVectors(job.offset_velocities.data() + j, count);
    scatter(rotation, translation, job.out_rotations.data() + j, job.out_translations.data() + j,
            count);
  }
}

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

// --- foot locking and leg IK -------------------------------------------------------------------

namespace mmdb {
namespace {

constexpr float kBlendHalflives = 20.f;  // a foot's blend back ends this many half-lives on
// How much the plane a knee bends in leans towards knee_forward: as much as a knee's own plane
// weighs when bent by asin(0.1), about 6 degrees from straight.
constexpr float kKneeHint = 0.1f;
// A leg whose hip-to-ankle distance is at most kFoldedReach of its length (a transition can fold
// one further than any clip) follows the animation; the IK fades in up to kFullIkReach.
constexpr float kFoldedReach = 0.2f;
constexpr float kFullIkReach = 0.35f;

const glm::quat kIdentity(1.f, 0.f, 0.f, 0.f);

bool finiteVec(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// Whether joint j is `root` or below it (parents precede their children).
bool inSubtree(Span<const int32_t> parents, uint32_t j, uint32_t root) {
  int32_t p = int32_t(j);
  while (p > int32_t(root)) p = parents[size_t(p)];
  return p == int32_t(root);
}

// The leg IK runs on four poses of one skeleton at once, a lane each (the crowd's characters four
// at a time, a single job in lane 0), in glm's order of operations lane by lane: each lane's
// floats are those of its pose alone. Branches are lane masks (bit i: lane i); a lane outside a
// mask computes what it may, and none of it is kept.
constexpr int kAllLanes = 15;

V4 splat(const glm::vec3& v) { return {splat(v.x), splat(v.y), splat(v.z)}; }
V4 operator-(const V4& a, const V4& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
V4 operator-(const V4& a) { return {-a.x, -a.y, -a.z}; }
V4 operator/(const V4& a, F4 k) { return {a.x / k, a.y / k, a.z / k}; }
F4 dot(const V4& a, const V4& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
F4 length(const V4& a) { return sqrt(dot(a, a)); }
V4 normalized(const V4& a) {  // glm::normalize: a * (1 / sqrt(dot(a, a)))
  const F4 inverse = splat(1.f) / sqrt(dot(a, a));
  return {a.x * inverse, a.y * inverse, a.z * inverse};
}
V4 select(int lanes, const V4& yes, const V4& no) {
  return {select(lanes, yes.x, no.x), select(lanes, yes.y, no.y), select(lanes, yes.z, no.z)};
}
Q4 select(int lanes, const Q4& yes, const Q4& no) {
  return {select(lanes, yes.w, no.w), select(lanes, yes.x, no.x), select(lanes, yes.y, no.y),
          select(lanes, yes.z, no.z)};
}
Q4 identity4() { return {splat(1.f), splat(0.f), splat(0.f), splat(0.f)}; }
Q4 halfTurn(const V4& axis) { return {splat(0.f), axis.x, axis.y, axis.z}; }
// glm::inverse: the conjugate over the squared length.
Q4 inverse(const Q4& q) {
  const F4 d = (q.w * q.w + q.x * q.x) + (q.y * q.y + q.z * q.z);
  return {q.w / d, -q.x / d, -q.y / d, -q.z / d};
}
// Lane i of each.
glm::vec3 lane(const V4& v, int i) {
  float x[4], y[4], z[4];
  store(x, v.x), store(y, v.y), store(z, v.z);
  return {x[i], y[i], z[i]};
}
glm::quat lane(const Q4& q, int i) {
  float w[4], x[4], y[4], z[4];
  store(w, q.w), store(x, q.x), store(y, q.y), store(z, q.z);
  return {w[i], x[i], y[i], z[i]};
}
V4 vectors4(const glm::vec3* v) { return gatherVectors(v, 4); }
Q4 quats4(const glm::quat* q) { return gatherQuats(q, 4); }

// The shortest rotation taking direction a to direction b (identity when either vanishes).
Q4 rotationBetween(const V4& a, const V4& b) {
  const F4 la = length(a), lb = length(b);
  const int vanish = ~(greater(la, splat(1e-9f)) & greater(lb, splat(1e-9f))) & kAllLanes;
  const V4 u = a / la, v = b / lb;
  const F4 c = dot(u, v);
  const V4 w = cross(u, v);
  Q4 q = normalized(Q4{splat(1.f) + c, w.x, w.y, w.z});
  if (const int half = less(c, splat(-1.f + 1e-6f)) & ~vanish) {
    // A half turn, about any axis across u.
    const int small_x = less(abs(u.x), splat(0.9f));
    const V4 other{select(small_x, splat(1.f), splat(0.f)), select(small_x, splat(0.f), splat(1.f)),
                   splat(0.f)};
    q = select(half, halfTurn(normalized(cross(u, other))), q);
  }
  return select(vanish, identity4(), q);
}

// The rotation about `axis` (unit) taking unit u to unit v, both across it: the shortest one,
// and a half turn about `axis` when they are opposite.
Q4 turnAbout(const V4& u, const V4& v, const V4& axis) {
  const F4 c = dot(u, v);
  const V4 w = cross(u, v);
  return select(less(c, splat(-1.f + 1e-6f)), halfTurn(axis),
                normalized(Q4{splat(1.f) + c, w.x, w.y, w.z}));
}

// Four poses' buffers for the leg IK, a lane each. Lanes past the jobs' count point at the last
// and are never written.
struct LegPoses {
  Span<const int32_t> parents;
  glm::quat* local_rotations[4];
  const glm::vec3* local_translations[4];
  glm::quat* model_rotations[4];
  glm::vec3* model_translations[4];

  template <class Job>
  LegPoses(const Job* jobs, size_t count) : parents(jobs[0].parents) {
    for (size_t i = 0; i < 4; ++i) {
      const Job& job = jobs[std::min(i, count - 1)];
      local_rotations[i] = job.local_rotations.data();
      local_translations[i] = job.local_translations.data();
      model_rotations[i] = job.model_rotations.data();
      model_translations[i] = job.model_translations.data();
    }
  }

  V4 position(uint32_t j) const {
    const glm::vec3 v[4] = {model_translations[0][j], model_translations[1][j],
                            model_translations[2][j], model_translations[3][j]};
    return vectors4(v);
  }
  Q4 rotation(uint32_t j) const {
    const glm::quat q[4] = {model_rotations[0][j], model_rotations[1][j], model_rotations[2][j],
                            model_rotations[3][j]};
    return quats4(q);
  }
  Q4 parentRotation(uint32_t j) const {
    const int32_t p = parents[j];
    return p < 0 ? identity4() : rotation(uint32_t(p));
  }
  void setLocalRotation(uint32_t j, const Q4& q, int lanes) const {
    for (int i = 0; i < 4; ++i)
      if ((lanes >> i) & 1) local_rotations[i][j] = lane(q, i);
  }
  // Gives joint j this model rotation (its parent's kept), by its local rotation.
  void setModelRotation(uint32_t j, const Q4& model, int lanes) const {
    setLocalRotation(j, normalized(inverse(parentRotation(j)) * model), lanes);
  }

  // The model pose of `root` and of every joint below it, from the local pose (as
  // ForwardKinematicsJob computes it, with the roots at the origin), in `lanes`.
  void refresh(uint32_t root, int lanes) const {
    // Bit k: joint root + k is `root` or below it, for the first 64 joints from root (a parent
    // precedes its child, so its bit is known); further joints walk their parents.
    uint64_t below = 1;
    for (size_t j = root; j < parents.size(); ++j) {
      const size_t k = j - root;
      if (k >= 64) {
        if (!inSubtree(parents, uint32_t(j), root)) continue;
      } else if (k > 0) {
        const int32_t parent = parents[j];
        if (parent < int32_t(root) || ((below >> (uint32_t(parent) - root)) & 1u) == 0) continue;
        below |= uint64_t(1) << k;
      }
      const int32_t p = parents[j];
      const Q4 parent_rotation = p < 0 ? identity4() : rotation(uint32_t(p));
      const V4 parent_position = p < 0 ? splat(glm::vec3(0.f)) : position(uint32_t(p));
      const glm::quat local_r[4] = {local_rotations[0][j], local_rotations[1][j],
                                    local_rotations[2][j], local_rotations[3][j]};
      const glm::vec3 local_t[4] = {local_translations[0][j], local_translations[1][j],
                                    local_translations[2][j], local_translations[3][j]};
      const V4 t = parent_position + rotate(parent_rotation, vectors4(local_t));
      const Q4 r = normalized(parent_rotation * quats4(local_r));
      for (int i = 0; i < 4; ++i) {
        if (!((lanes >> i) & 1)) continue;
        model_translations[i][j] = lane(t, i);
        model_rotations[i][j] = lane(r, i);
      }
    }
  }

  // Two-bone IK (TwoBoneIkJob::Run without the checks) in `lanes`.
  void bend(uint32_t upper, uint32_t knee, uint32_t end, const V4& target, const V4& knee_forward,
            float max_length_buffer, int lanes) const {
    const V4 a = position(upper), b = position(knee), c = position(end);
    const V4 ab = b - a, bc = c - b;
    const F4 lab = length(ab), lbc = length(bc);
    lanes &= greater(lab, splat(1e-6f)) & greater(lbc, splat(1e-6f));  // else no bone to turn
    if (!lanes) return;
    // How far the chain reaches: towards the target, at most its length less the buffer (or as
    // far as the pose given already reaches, when that is further: never straighter than the
    // animation, never snapping straight) and at least as close as it folds.
    const F4 zero = splat(0.f), one = splat(1.f);
    const F4 longest = maxOf(maxOf(lab + lbc - splat(max_length_buffer), zero), length(c - a));
    const F4 shortest = abs(lab - lbc);
    const F4 reach = maxOf(minOf(length(target - a), longest), shortest);
    // The knee's inner angle now and the one that reaches (the law of cosines).
    const F4 cos_now = minOf(maxOf(dot(-ab, bc) / (lab * lbc), -one), one);
    const F4 cos_wanted =
        minOf(maxOf((lab * lab + lbc * lbc - reach * reach) / (splat(2.f) * lab * lbc), -one), one);
    // The plane to bend in, by its normal: the pose's own (ab x bc, as long as the sine of the
    // knee's angle) plus kKneeHint of the one towards knee_forward. Both are across the hip-to-
    // ankle line. A well bent knee keeps its plane within a few degrees; a nearly straight one,
    // whose own plane turns about wildly from step to step (and flips as the knee passes
    // straight), bends towards knee_forward, so that its knee never swings round in one step.
    const V4 ac = c - a;
    const V4 own = cross(ab, bc) / (lab * lbc);
    V4 axis = own;
    const V4 hint = cross(knee_forward, ac);
    const F4 hint_length = length(hint);
    const int hinted = greater(hint_length, splat(1e-6f) * length(knee_forward) * length(ac));
    if (hinted) {
      // A knee bent backwards (no knee does, but a transition between two poses can pass
      // through it) bends as far forwards instead: its plane's backward part is mirrored, so the
      // plane never flips as the bend crosses the hint's lean (the knee swung round in one step).
      const F4 backwards = dot(own, hint) / hint_length;
      axis = select(hinted & less(backwards, zero),
                    axis - (splat(2.f) * backwards / hint_length) * hint, axis);
      axis = select(hinted, axis + (splat(kKneeHint) / hint_length) * hint, axis);
    }
    if (const int none = ~greater(length(axis), splat(1e-6f)) & lanes) {
      const int small_x = less(abs(ab.x), splat(0.9f) * lab);
      const V4 other{select(small_x, one, zero), select(small_x, zero, one), zero};
      axis = select(none, cross(ab, other), axis);
    }
    axis = normalized(axis);
    // The chain first turns about the hip-to-ankle line (the ankle stays) until its own plane is
    // that one; a straight chain has no plane to turn.
    const int planar = greater(length(own), splat(1e-6f)) & greater(length(ac), splat(1e-6f));
    const Q4 swivel = select(planar, turnAbout(normalized(own), axis, normalized(ac)), identity4());
    const V4 b_swivelled = a + rotate(swivel, ab);
    const V4 bc_swivelled = rotate(swivel, bc);
    // The knee turns by (inner angle now - wanted), both in [0, pi], about the plane's normal: its
    // cosine and sine from the two cosines, and the half-angle rotation as normalize(sin * axis,
    // 1 + cos) (no acos, whose precision a GPU leaves loose).
    const F4 sin_now = sqrt(maxOf(one - cos_now * cos_now, zero));
    const F4 sin_wanted = sqrt(maxOf(one - cos_wanted * cos_wanted, zero));
    const F4 cos_turn = cos_now * cos_wanted + sin_now * sin_wanted;
    const F4 sin_turn = sin_now * cos_wanted - cos_now * sin_wanted;
    const Q4 knee_turn = select(
        greater(one + cos_turn, splat(1e-6f)),
        normalized(Q4{one + cos_turn, axis.x * sin_turn, axis.y * sin_turn, axis.z * sin_turn}),
        halfTurn(axis));
    const V4 bent = b_swivelled + rotate(knee_turn, bc_swivelled);  // the end once bent
    const Q4 swing = rotationBetween(bent - a, target - a);
    const Q4 upper_model = normalized(swing * (swivel * rotation(upper)));
    const Q4 knee_model = normalized(swing * (knee_turn * (swivel * rotation(knee))));
    setModelRotation(upper, upper_model, lanes);
    setLocalRotation(knee, normalized(inverse(upper_model) * knee_model), lanes);
    refresh(upper, lanes);
  }
};

Status checkPose(const char* job, Span<const int32_t> parents, size_t rotations,
                 size_t translations, size_t model_rotations, size_t model_translations) {
  const size_t n = parents.size();
  if (rotations != n) return sizeError(job, "local_rotations", rotations, n);
  if (translations != n) return sizeError(job, "local_translations", translations, n);
  if (model_rotations != n) return sizeError(job, "model_rotations", model_rotations, n);
  if (model_translations != n) return sizeError(job, "model_translations", model_translations, n);
  for (size_t j = 0; j < n; ++j)
    if (parents[j] < -1 || parents[j] >= int64_t(j))
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: joint %zu has parent %d; a parent must precede its child", job, j,
                           parents[j]);
  return {};
}

}  // namespace

// --- the switch's offsets, four joints at once ---------------------------------------------------

namespace {

// A critically damped spring's offset x and rate v after t seconds (decayOffset), with its
// y and e = exp(-y t) given (the same for every joint).
inline void decay(V4& x, V4& v, F4 y, F4 e, F4 t) {
  const V4 j = v + y * x;
  x = e * (x + t * j);
  v = e * (v - (y * t) * j);
}

}  // namespace

// InertializeTransitionJob::Run()'s work: per joint, the offsets showing (decayed to now, as
// decayRotationSplit() and decayOffsetSplit() decay them) carried onto the switch, four joints
// at once, with the rotations' arc tangents, sines and cosines from polynomials (within about
// 1e-6 of the library's); each spring's exponential once for all joints.
void detail::runInertializeTransition(const InertializeTransitionJob& job,
                                      glm::vec3* offset_vectors) noexcept {
  const float t = job.time_since_previous;
  const float halflife = job.halflife, rate = rateHalflife(job.halflife, job.rate_halflife);
  const bool split = rate != halflife;
  const float y_offset = springY(halflife), y_rate = springY(rate);
  const F4 time = splat(t), y = splat(y_offset), e = splat(std::exp(-y_offset * t));
  const F4 yr = splat(y_rate), er = split ? splat(std::exp(-y_rate * t)) : e;
  const V4 zero{splat(0.f), splat(0.f), splat(0.f)};
  const size_t n = job.offset_rotations.size();
  for (size_t j = 0; j < n; j += 4) {
    const size_t count = std::min<size_t>(4, n - j);
    // What was showing: the previous offsets decayed to now.
    V4 angular = gatherVectors(job.offset_angular_velocities.data() + j, count);
    const V4 scaled = toScaledAxes(positive(gatherQuats(job.offset_rotations.data() + j, count)));
    Q4 previous;
    V4 translation = gatherVectors(job.offset_translations.data() + j, count);
    V4 velocity = gatherVectors(job.offset_velocities.data() + j, count);
    if (!split) {
      V4 x = scaled;
      decay(x, angular, y, e, time);
      previous = fromScaledAxes(x);
      decay(translation, velocity, y, e, time);
    } else {
      // The offset and its rate each on its own spring, the rate's rotation composed onto the
      // offset's (decayRotationSplit).
      V4 x_part = scaled, v_part = zero, x_rate = zero, v_rate = angular;
      decay(x_part, v_part, y, e, time);
      decay(x_rate, v_rate, yr, er, time);
      const Q4 turn = fromScaledAxes(x_rate);
      angular = v_rate + rotate(turn, v_part);
      previous = normalized(turn * fromScaledAxes(x_part));
      V4 tx_part = translation, tv_part = zero, tx_rate = zero, tv_rate = velocity;
      decay(tx_part, tv_part, y, e, time);
      decay(tx_rate, tv_rate, yr, er, time);
      translation = tx_part + tx_rate;
      velocity = tv_part + tv_rate;
    }
    const Q4 source = gatherQuats(job.source_rotations.data() + j, count);
    const Q4 destination = gatherQuats(job.destination_rotations.data() + j, count);
    const Q4 offset = normalized(positive(previous * source * inverse(destination)));
    // Angular velocity shown = offset velocity + offset rotation applied to the pose's velocity
    // (as InertializeJob shows it), so keep that sum unchanged across the switch.
    const V4 source_angular = gatherVectors(job.source_angular_velocities.data() + j, count);
    const V4 destination_angular =
        gatherVectors(job.destination_angular_velocities.data() + j, count);
    const V4 offset_angular = job.unrotated_rates ? (angular + source_angular) - destination_angular
                                                  : (angular + rotate(previous, source_angular)) -
                                                        rotate(offset, destination_angular);
    scatterQuats(offset, job.offset_rotations.data() + j, count);
    scatterVectors(offset_angular, job.offset_angular_velocities.data() + j, count);
    scatterVectors((gatherVectors(job.source_translations.data() + j, count) + translation) -
                       gatherVectors(job.destination_translations.data() + j, count),
                   job.offset_translations.data() + j, count);
    scatterVectors((gatherVectors(job.source_velocities.data() + j, count) + velocity) -
                       gatherVectors(job.destination_velocities.data() + j, count),
                   job.offset_velocities.data() + j, count);
    if (offset_vectors) scatterVectors(toScaledAxes(offset), offset_vectors + j, count);
  }
}

Status TwoBoneIkJob::Validate() const noexcept {
  constexpr const char* job = "TwoBoneIkJob";
  if (Status s = checkPose(job, parents, local_rotations.size(), local_translations.size(),
                           model_rotations.size(), model_translations.size());
      !s)
    return s;
  const size_t n = parents.size();
  if (upper >= n || knee >= n || end >= n)
    return Error::format(ErrorCode::InvalidArgument,
                         "TwoBoneIkJob: joints %u, %u, %u of a skeleton of %zu", upper, knee, end,
                         n);
  if (parents[end] != int32_t(knee) || parents[knee] != int32_t(upper))
    return Error::format(ErrorCode::InvalidArgument,
                         "TwoBoneIkJob: joint %u must be the parent of %u, and %u the parent of %u",
                         knee, end, upper, knee);
  if (!finiteVec(target) || !finiteVec(knee_forward))
    return Error(ErrorCode::InvalidArgument,
                 "TwoBoneIkJob: target and knee_forward must be finite");
  if (!validTime(max_length_buffer))
    return Error::format(ErrorCode::InvalidArgument,
                         "TwoBoneIkJob: max_length_buffer %g m must be finite and >= 0",
                         double(max_length_buffer));
  return {};
}

Status TwoBoneIkJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  const LegPoses pose(this, 1);
  pose.bend(upper, knee, end, splat(target), splat(knee_forward), max_length_buffer, 1);
  return {};
}

Status validateFootLockSettings(const FootLockSettings& settings) noexcept {
  const struct {
    const char* name;
    float value;
    const char* unit;
  } checked[] = {{"foot_unlock_radius", settings.foot_unlock_radius, " m"},
                 {"foot_unlock_halflife", settings.foot_unlock_halflife, " s"},
                 {"ik_foot_height", settings.ik_foot_height, " m"},
                 {"ik_toe_length", settings.ik_toe_length, " m"},
                 {"ik_max_length_buffer", settings.ik_max_length_buffer, " m"}};
  for (const auto& c : checked)
    if (!validTime(c.value))
      return Error::format(ErrorCode::InvalidArgument, "%s %g%s must be finite and >= 0", c.name,
                           double(c.value), c.unit);
  return {};
}

Result<std::array<LegChain, kLegCount>> findLegChains(const Database& db) noexcept {
  if (!db.valid() || db.jointCount() == 0)
    return Error(ErrorCode::InvalidArgument, "the database has no skeleton");
  const Span<const int32_t> parents = db.parents();
  const uint32_t n = db.jointCount();
  const auto name = [&](uint32_t j) {
    const std::string_view s = db.jointName(j);
    return s;
  };
#define MMDB_JOINT(j) int(std::min<size_t>(name(j).size(), 64)), name(j).data()
  static const char* const kSide[kLegCount] = {"left leg", "right leg"};
  static const Role kFoot[kLegCount] = {Role::LeftFoot, Role::RightFoot};
  static const Role kToe[kLegCount] = {Role::LeftToe, Role::RightToe};
  static const char* const kFootName[kLegCount] = {"LeftFoot", "RightFoot"};
  static const char* const kToeName[kLegCount] = {"LeftToe", "RightToe"};

  // The bind pose in model space, for the toes' tips.
  std::array<LegChain, kLegCount> legs{};
  for (uint32_t s = 0; s < kLegCount; ++s) {
    const char* side = kSide[s];
    const int32_t foot = db.roleJoint(kFoot[s]);
    if (foot < 0 || uint32_t(foot) >= n)
      return Error::format(ErrorCode::InvalidArgument, "%s: the skeleton names no %s joint", side,
                           kFootName[s]);
    const int32_t toe = db.roleJoint(kToe[s]);
    if (toe < 0 || uint32_t(toe) >= n)
      return Error::format(ErrorCode::InvalidArgument, "%s: the skeleton names no %s joint", side,
                           kToeName[s]);
    if (toe == foot)
      return Error::format(ErrorCode::InvalidArgument, "%s: toe '%.*s' is the foot itself", side,
                           MMDB_JOINT(uint32_t(toe)));
    int32_t above = parents[size_t(toe)];
    while (above >= 0 && above != foot) above = parents[size_t(above)];
    if (above != foot)
      return Error::format(ErrorCode::InvalidArgument, "%s: toe '%.*s' is not below foot '%.*s'",
                           side, MMDB_JOINT(uint32_t(toe)), MMDB_JOINT(uint32_t(foot)));
    const Span<const int32_t> contact_joints = db.contactJoints();
    uint32_t bit = 0;
    while (bit < contact_joints.size() && contact_joints[bit] != toe) ++bit;
    if (bit == contact_joints.size() || bit >= 32 || db.contacts().size() != db.frameCount())
      return Error::format(
          ErrorCode::InvalidArgument,
          "%s: toe '%.*s' is not a contact joint: it has no contact bit to lock on", side,
          MMDB_JOINT(uint32_t(toe)));
    const int32_t knee = parents[size_t(foot)];
    if (knee < 0)
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: foot '%.*s' has no parent to bend as a knee", side,
                           MMDB_JOINT(uint32_t(foot)));
    const int32_t upper = parents[size_t(knee)];
    if (upper < 0)
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: knee '%.*s' (the parent of foot '%.*s') is the root: it has no "
                           "parent to turn as an upper leg",
                           side, MMDB_JOINT(uint32_t(knee)), MMDB_JOINT(uint32_t(foot)));
    if (parents[size_t(upper)] < 0)
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: upper leg '%.*s' (the parent of knee '%.*s') is the root, which "
                           "the leg must not turn",
                           side, MMDB_JOINT(uint32_t(upper)), MMDB_JOINT(uint32_t(knee)));
    legs[s].upper_leg = uint32_t(upper);
    legs[s].knee = uint32_t(knee);
    legs[s].foot = uint32_t(foot);
    legs[s].toe = uint32_t(toe);
    legs[s].contact_bit = bit;
  }
  const LegChain& left = legs[0];
  const LegChain& right = legs[1];
  for (const uint32_t j : {right.upper_leg, right.knee, right.foot, right.toe})
    if (j == left.upper_leg || j == left.knee || j == left.foot || j == left.toe)
      return Error::format(ErrorCode::InvalidArgument,
                           "right leg: joint '%.*s' is in the left leg too", MMDB_JOINT(j));
#undef MMDB_JOINT

  // The tip of the toes: from the toe joint along the ground direction from the foot to the toe
  // in the bind pose, in the toe joint's frame. The bind pose is walked up each chain alone (no
  // allocation): model = product of the bind rotations above.
  const Span<const Float4> bind_t = db.bindTranslations();
  const Span<const Float4> bind_r = db.bindRotations();
  const auto bindModel = [&](uint32_t j, glm::quat& rotation, glm::vec3& position) {
    rotation = kIdentity;
    position = glm::vec3(0.f);
    // Compose from j up to the root: model(j) = model(parent) * local(j).
    for (int32_t k = int32_t(j); k >= 0; k = parents[size_t(k)]) {
      const glm::quat r = toQuat(bind_r[size_t(k)]);
      position = toVec3(bind_t[size_t(k)]) + r * position;
      rotation = r * rotation;
    }
  };
  for (LegChain& leg : legs) {
    glm::quat foot_r, toe_r;
    glm::vec3 foot_p, toe_p;
    bindModel(leg.foot, foot_r, foot_p);
    bindModel(leg.toe, toe_r, toe_p);
    glm::vec3 ahead = toe_p - foot_p;
    ahead.y = 0.f;
    const float length = glm::length(ahead);
    ahead = length > 1e-6f ? ahead / length : glm::vec3(0.f, 0.f, 1.f);
    const glm::vec3 tip = glm::inverse(glm::normalize(toe_r)) * ahead;
    leg.toe_tip =
        finiteVec(tip) && glm::length(tip) > 0.5f ? glm::normalize(tip) : glm::vec3(0.f, 0.f, 1.f);
  }
  return legs;
}

Status FootLockJob::Validate() const noexcept {
  constexpr const char* job = "FootLockJob";
  if (Status s = checkPose(job, parents, local_rotations.size(), local_translations.size(),
                           model_rotations.size(), model_translations.size());
      !s)
    return s;
  if (feet.size() != legs.size()) return sizeError(job, "feet", feet.size(), legs.size());
  const size_t n = parents.size();
  for (size_t s = 0; s < legs.size(); ++s) {
    const LegChain& leg = legs[s];
    bool below = false;  // the toe is below the foot
    if (leg.toe < n && leg.foot < n)
      for (int32_t p = parents[leg.toe]; p >= 0 && !below; p = parents[size_t(p)])
        below = p == int32_t(leg.foot);
    if (leg.upper_leg >= n || leg.knee >= n || !below || parents[leg.foot] != int32_t(leg.knee) ||
        parents[leg.knee] != int32_t(leg.upper_leg) || leg.contact_bit >= 32 ||
        !finiteVec(leg.toe_tip))
      return Error::format(ErrorCode::InvalidArgument,
                           "FootLockJob: leg %zu (upper leg %u, knee %u, foot %u, toe %u, bit %u) "
                           "is not a chain of the skeleton",
                           s, leg.upper_leg, leg.knee, leg.foot, leg.toe, leg.contact_bit);
  }
  if (Status s = validateFootLockSettings(settings); !s)
    return Error::format(ErrorCode::InvalidArgument, "FootLockJob: %.200s", s.message());
  if (!validTime(dt))
    return Error(ErrorCode::InvalidArgument, "FootLockJob: dt must be finite and >= 0");
  if (!finiteVec(position) || !std::isfinite(rotation.w) || !std::isfinite(rotation.x) ||
      !std::isfinite(rotation.y) || !std::isfinite(rotation.z))
    return Error(ErrorCode::InvalidArgument, "FootLockJob: the placement must be finite");
  return {};
}

Status FootLockJob::Run() const noexcept {
  if (Status s = Validate(); !s) return s;
  detail::runFootLock4(this, 1);
  return {};
}

void detail::runFootLock4(const FootLockJob* jobs, size_t count) noexcept {
  const FootLockJob& first = jobs[0];
  const LegPoses pose(jobs, count);
  const FootLockSettings& settings = first.settings;
  const float halflife = settings.foot_unlock_halflife;
  // Each lane's placement in the world (lanes past `count` the last job's).
  glm::quat to_model_of[4];
  glm::vec3 position_of[4];
  glm::quat rotation_of[4];
  for (size_t i = 0; i < 4; ++i) {
    const FootLockJob& job = jobs[std::min(i, count - 1)];
    to_model_of[i] = glm::inverse(job.rotation);
    position_of[i] = job.position;
    rotation_of[i] = job.rotation;
  }
  const V4 position = vectors4(position_of);
  const Q4 rotation = quats4(rotation_of);
  const Q4 to_model = quats4(to_model_of);
  const int real_lanes = (1 << count) - 1;
  for (size_t s = 0; s < first.legs.size(); ++s) {
    const LegChain& leg = first.legs[s];
    // Where each lane's toe goes on from the last step: held, blending back, or as animated.
    int held = 0;  // the lanes whose toe is held or blends back: their legs bend
    glm::vec3 target_of[4];
    for (size_t i = 0; i < 4; ++i) target_of[i] = position_of[i];
    for (size_t i = 0; i < count; ++i) {
      const FootLockJob& one = jobs[i];
      FootLock& f = one.feet[s];
      if (one.hold_only) {
        if (!f.locked) continue;
        target_of[i] = f.position;
        held |= 1 << i;
        continue;
      }
      if (one.reset) f = FootLock{};
      const bool contact = ((one.contacts >> leg.contact_bit) & 1u) != 0;
      // The animated toe, where warping maps it (as animated without warping).
      const bool warped = !one.warp.identity();
      const glm::vec3 animated =
          one.position + one.rotation * one.warp.apply(one.model_translations[leg.toe]);
      const glm::vec3 velocity =
          f.seen && one.dt > 0.f ? (animated - f.animated) / one.dt : glm::vec3(0.f);
      if (f.blending) f.since_unlock += one.dt;
      glm::vec3 target = animated;
      if (f.locked) {
        target = f.position;
      } else if (f.blending) {
        glm::vec3 x = f.offset, v = f.offset_velocity;
        decayOffset(x, v, halflife, f.since_unlock);
        target = animated + x;
      }
      if (f.locked &&
          (!contact || glm::length(animated - f.position) > settings.foot_unlock_radius)) {
        // Let go: blend from the lock, still, to the animation.
        f.locked = false;
        f.blending = true;
        f.since_unlock = 0.f;
        f.offset = f.position - animated;
        f.offset_velocity = -velocity;
        target = f.position;
      } else if (!f.locked && contact && !f.contact) {
        // A contact starts: hold the toe where it is shown, not below the foot height.
        f.locked = true;
        f.blending = false;
        f.position = glm::vec3(target.x, std::fmax(target.y, settings.ik_foot_height), target.z);
        target = f.position;
      }
      if (f.blending && f.since_unlock >= kBlendHalflives * halflife) {
        f.blending = false;
        target = animated;
      }
      f.contact = contact;
      f.animated = animated;
      f.seen = true;
      f.target = target;
      target_of[i] = target;
      // Held, blending back or warped: the leg bends; else it is left as animated.
      if (f.locked || f.blending || warped) held |= 1 << i;
    }
    if (!held) continue;

    // A leg folded nearly shut has no stable way to swing its short hip-to-ankle line onto a
    // target (its knee swung round in one step): it follows the animation, the IK fading in as
    // the leg opens.
    const V4 hip = pose.position(leg.upper_leg);
    const V4 knee = pose.position(leg.knee);
    const V4 ankle = pose.position(leg.foot);
    const F4 leg_length = length(knee - hip) + length(ankle - knee);
    const F4 open =
        select(greater(leg_length, splat(0.f)), length(ankle - hip) / leg_length, splat(1.f));
    const F4 weight =
        minOf(maxOf((open - splat(kFoldedReach)) / splat(kFullIkReach - kFoldedReach), splat(0.f)),
              splat(1.f));
    const int lanes = held & greater(weight, splat(0.f)) & real_lanes;
    if (!lanes) continue;

    // The leg to the target, in model space: the ankle where the animated foot-to-toe vector
    // puts the toe on the target, then the foot as animated, turned for the toe to reach.
    const V4 toe_animated = pose.position(leg.toe);
    V4 toe_target = rotate(to_model, vectors4(target_of) - position);
    toe_target = select(less(weight, splat(1.f)),
                        toe_animated + weight * (toe_target - toe_animated), toe_target);
    const V4 foot_to_toe = toe_animated - ankle;
    const Q4 foot_animated = pose.rotation(leg.foot);
    pose.bend(leg.upper_leg, leg.knee, leg.foot, toe_target - foot_to_toe,
              splat(glm::vec3(0.f, 0.f, 1.f)), settings.ik_max_length_buffer, lanes);
    const Q4 aim = rotationBetween(foot_to_toe, toe_target - pose.position(leg.foot));
    pose.setModelRotation(leg.foot, normalized(aim * foot_animated), lanes);
    pose.refresh(leg.foot, lanes);
    // The tip of the toes no lower than the foot height: the toe joint turns up towards it.
    if (!(settings.ik_toe_length > 0.f)) continue;
    const V4 toe = pose.position(leg.toe);
    const V4 tip =
        toe + rotate(pose.rotation(leg.toe), splat(leg.toe_tip * settings.ik_toe_length));
    const V4 tip_world = position + rotate(rotation, tip);
    const F4 height = splat(settings.ik_foot_height);
    const int low = lanes & less(tip_world.y, height);
    if (!low) continue;
    const V4 lifted = rotate(to_model, V4{tip_world.x, height, tip_world.z} - position);
    const Q4 lift = rotationBetween(tip - toe, lifted - toe);
    pose.setModelRotation(leg.toe, normalized(lift * pose.rotation(leg.toe)), low);
    pose.refresh(leg.toe, low);
  }
}

}  // namespace mmdb
