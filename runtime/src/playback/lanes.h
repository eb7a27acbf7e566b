// Four floats, vectors and quaternions at once, a lane each, for the playback jobs that run on
// four joints or four poses together: SSE2 where the compiler has it, plain floats elsewhere
// (internal). In an unnamed namespace, as in one file: each of the playback files that includes
// it has its own copy.
#pragma once

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
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

inline V4 operator*(F4 k, const V4& a) { return {k * a.x, k * a.y, k * a.z}; }
inline V4 operator+(const V4& a, const V4& b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }

// The Hamilton product a * b, as glm computes it.
inline Q4 operator*(const Q4& a, const Q4& b) {
  return {
      a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
      a.w * b.y + a.y * b.w + a.z * b.x - a.x * b.z, a.w * b.z + a.z * b.w + a.x * b.y - a.y * b.x};
}

// glm::cross and glm's quaternion * vector, in glm's order of operations.
inline V4 cross(const V4& a, const V4& b) {
  return {a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y};
}
inline V4 rotate(const Q4& q, const V4& v) {
  const V4 axis{q.x, q.y, q.z};
  const V4 uv = cross(axis, v);
  const V4 uuv = cross(axis, uv);
  const F4 two = splat(2.f);
  return {v.x + (uv.x * q.w + uuv.x) * two, v.y + (uv.y * q.w + uuv.y) * two,
          v.z + (uv.z * q.w + uuv.z) * two};
}

// Each lane's quaternion at unit length as glm::normalize computes it (its dot product's order,
// the identity for a length of 0): the same bits.
inline Q4 normalized(const Q4& q) {
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
inline V4 gatherVectors(const glm::vec3* v, size_t count) {
  if (count == 4)
    return {make(v[0].x, v[1].x, v[2].x, v[3].x), make(v[0].y, v[1].y, v[2].y, v[3].y),
            make(v[0].z, v[1].z, v[2].z, v[3].z)};
  glm::vec3 padded[4] = {};
  std::copy(v, v + count, padded);
  return gatherVectors(padded, 4);
}

// Four joints' quaternions, a lane each (the joints past `count` the identity). glm keeps a
// quaternion as x, y, z, w: four of them are a 4 x 4 matrix to transpose.
inline Q4 gatherQuats(const glm::quat* q, size_t count) {
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
inline void scatterQuats(const Q4& q, glm::quat* out, size_t count) {
  F4 x = q.x, y = q.y, z = q.z, w = q.w;
  transpose(x, y, z, w);
  float rows[4][4];
  store(rows[0], x), store(rows[1], y), store(rows[2], z), store(rows[3], w);
  for (size_t i = 0; i < count; ++i)
    out[i] = glm::quat(rows[i][3], rows[i][0], rows[i][1], rows[i][2]);
}
inline void scatterVectors(const V4& v, glm::vec3* out, size_t count) {
  float x[4], y[4], z[4];
  store(x, v.x), store(y, v.y), store(z, v.z);
  for (size_t i = 0; i < count; ++i) out[i] = glm::vec3(x[i], y[i], z[i]);
}
inline void scatter(const Q4& q, const V4& v, glm::quat* quats, glm::vec3* vectors, size_t count) {
  scatterQuats(q, quats, count);
  scatterVectors(v, vectors, count);
}

// The leg IK runs on four poses of one skeleton at once, a lane each (the crowd's characters four
// at a time, a single job in lane 0), in glm's order of operations lane by lane: each lane's
// floats are those of its pose alone. Branches are lane masks (bit i: lane i); a lane outside a
// mask computes what it may, and none of it is kept.
constexpr int kAllLanes = 15;

inline V4 splat(const glm::vec3& v) { return {splat(v.x), splat(v.y), splat(v.z)}; }
inline V4 operator-(const V4& a, const V4& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline V4 operator-(const V4& a) { return {-a.x, -a.y, -a.z}; }
inline V4 operator/(const V4& a, F4 k) { return {a.x / k, a.y / k, a.z / k}; }
inline F4 dot(const V4& a, const V4& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline F4 length(const V4& a) { return sqrt(dot(a, a)); }
inline V4 normalized(const V4& a) {  // glm::normalize: a * (1 / sqrt(dot(a, a)))
  const F4 inverse = splat(1.f) / sqrt(dot(a, a));
  return {a.x * inverse, a.y * inverse, a.z * inverse};
}
inline V4 select(int lanes, const V4& yes, const V4& no) {
  return {select(lanes, yes.x, no.x), select(lanes, yes.y, no.y), select(lanes, yes.z, no.z)};
}
inline Q4 select(int lanes, const Q4& yes, const Q4& no) {
  return {select(lanes, yes.w, no.w), select(lanes, yes.x, no.x), select(lanes, yes.y, no.y),
          select(lanes, yes.z, no.z)};
}
inline Q4 identity4() { return {splat(1.f), splat(0.f), splat(0.f), splat(0.f)}; }
inline Q4 halfTurn(const V4& axis) { return {splat(0.f), axis.x, axis.y, axis.z}; }
// glm::inverse: the conjugate over the squared length.
inline Q4 inverse(const Q4& q) {
  const F4 d = (q.w * q.w + q.x * q.x) + (q.y * q.y + q.z * q.z);
  return {q.w / d, -q.x / d, -q.y / d, -q.z / d};
}
// Lane i of each.
inline glm::vec3 lane(const V4& v, int i) {
  float x[4], y[4], z[4];
  store(x, v.x), store(y, v.y), store(z, v.z);
  return {x[i], y[i], z[i]};
}
inline glm::quat lane(const Q4& q, int i) {
  float w[4], x[4], y[4], z[4];
  store(w, q.w), store(x, q.x), store(y, q.y), store(z, q.z);
  return {w[i], x[i], y[i], z[i]};
}
inline V4 vectors4(const glm::vec3* v) { return gatherVectors(v, 4); }
inline Q4 quats4(const glm::quat* q) { return gatherQuats(q, 4); }

// The shortest rotation taking direction a to direction b (identity when either vanishes).
inline Q4 rotationBetween(const V4& a, const V4& b) {
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
inline Q4 turnAbout(const V4& u, const V4& v, const V4& axis) {
  const F4 c = dot(u, v);
  const V4 w = cross(u, v);
  return select(less(c, splat(-1.f + 1e-6f)), halfTurn(axis),
                normalized(Q4{splat(1.f) + c, w.x, w.y, w.z}));
}

}  // namespace
}  // namespace mmdb
