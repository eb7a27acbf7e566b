// Four frames side by side for the pose coding's model-space check. Each operation is the float
// operation glm's scalar code does, in the same order, so every lane has the bits the scalar
// code would give that frame: the check decides which codings are kept, and a different
// rounding would change the file.
#pragma once

#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mmdb::cook {

constexpr int kFrameLanes = 4;

struct Lanes {
#if defined(__SSE2__)
  __m128 v;
  static Lanes load(const float* x) { return {_mm_loadu_ps(x)}; }
  static Lanes splat(float x) { return {_mm_set1_ps(x)}; }
  void store(float* x) const { _mm_storeu_ps(x, v); }
  friend Lanes operator+(Lanes a, Lanes b) { return {_mm_add_ps(a.v, b.v)}; }
  friend Lanes operator-(Lanes a, Lanes b) { return {_mm_sub_ps(a.v, b.v)}; }
  friend Lanes operator*(Lanes a, Lanes b) { return {_mm_mul_ps(a.v, b.v)}; }
  friend Lanes operator-(Lanes a) { return {_mm_xor_ps(a.v, _mm_set1_ps(-0.f))}; }
  friend Lanes sqrt(Lanes a) { return {_mm_sqrt_ps(a.v)}; }
#else
  float v[kFrameLanes];
  static Lanes load(const float* x) {
    Lanes r;
    for (int l = 0; l < kFrameLanes; ++l) r.v[l] = x[l];
    return r;
  }
  static Lanes splat(float x) { return {{x, x, x, x}}; }
  void store(float* x) const {
    for (int l = 0; l < kFrameLanes; ++l) x[l] = v[l];
  }
  template <typename Op>
  static Lanes each(Lanes a, Lanes b, Op op) {
    Lanes r;
    for (int l = 0; l < kFrameLanes; ++l) r.v[l] = op(a.v[l], b.v[l]);
    return r;
  }
  friend Lanes operator+(Lanes a, Lanes b) {
    return each(a, b, [](float x, float y) { return x + y; });
  }
  friend Lanes operator-(Lanes a, Lanes b) {
    return each(a, b, [](float x, float y) { return x - y; });
  }
  friend Lanes operator*(Lanes a, Lanes b) {
    return each(a, b, [](float x, float y) { return x * y; });
  }
  friend Lanes operator-(Lanes a) {
    return each(a, a, [](float x, float) { return -x; });
  }
  friend Lanes sqrt(Lanes a) {
    return each(a, a, [](float x, float) { return std::sqrt(x); });
  }
#endif
};

struct LaneVec3 {
  Lanes x, y, z;
};
struct LaneQuat {
  Lanes x, y, z, w;
};

inline LaneVec3 operator+(const LaneVec3& a, const LaneVec3& b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
inline LaneVec3 operator-(const LaneVec3& a, const LaneVec3& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}

// glm::length: sqrt of the dot product, summed x, y, z.
inline Lanes length(const LaneVec3& a) { return sqrt(a.x * a.x + a.y * a.y + a.z * a.z); }

// glm's p * q.
inline LaneQuat operator*(const LaneQuat& p, const LaneQuat& q) {
  return {
      p.w * q.x + p.x * q.w + p.y * q.z - p.z * q.y, p.w * q.y + p.y * q.w + p.z * q.x - p.x * q.z,
      p.w * q.z + p.z * q.w + p.x * q.y - p.y * q.x, p.w * q.w - p.x * q.x - p.y * q.y - p.z * q.z};
}

// glm's cross(a, b).
inline LaneVec3 cross(const LaneVec3& a, const LaneVec3& b) {
  return {a.y * b.z - b.y * a.z, a.z * b.x - b.z * a.x, a.x * b.y - b.x * a.y};
}

// glm's q * v.
inline LaneVec3 operator*(const LaneQuat& q, const LaneVec3& v) {
  const LaneVec3 u{q.x, q.y, q.z};
  const LaneVec3 uv = cross(u, v), uuv = cross(u, uv);
  const Lanes two = Lanes::splat(2.f);
  return {v.x + (uv.x * q.w + uuv.x) * two, v.y + (uv.y * q.w + uuv.y) * two,
          v.z + (uv.z * q.w + uuv.z) * two};
}

// q * v for v = `length` along local axis `Axis`, with glm's bits for finite values (a zero's
// sign aside): its two cross products and sum, less the terms that multiply v's zero
// components. Without fast-math the compiler keeps x * 0, and the check turns every joint's
// three axes in every frame.
template <int Axis>
LaneVec3 rotateAxis(const LaneQuat& q, Lanes length) {
  static_assert(Axis >= 0 && Axis < 3);
  const Lanes u[3] = {q.x, q.y, q.z};
  constexpr int a = Axis, b = (Axis + 1) % 3, c = (Axis + 2) % 3;
  Lanes uv[3], uuv[3], r[3];
  uv[b] = u[c] * length;
  uv[c] = -(length * u[b]);
  uuv[a] = u[b] * uv[c] - uv[b] * u[c];
  uuv[b] = -(uv[c] * u[a]);
  uuv[c] = u[a] * uv[b];
  const Lanes two = Lanes::splat(2.f);
  r[a] = length + uuv[a] * two;
  r[b] = (uv[b] * q.w + uuv[b]) * two;
  r[c] = (uv[c] * q.w + uuv[c]) * two;
  return {r[0], r[1], r[2]};
}

}  // namespace mmdb::cook
