#include "compress/exponent_filter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mmdb::cook {
namespace {

// The exponent std::frexp gives v: |v| lies in [2^(e-1), 2^e), and 0 has 0.
int frexpExponent(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof(u));
  const int biased = int((u >> 23) & 0xffu);
  if (biased != 0 && biased != 0xff) return biased - 126;
  int e = 0;
  std::frexp(v, &e);  // zero and subnormals (rare enough to leave to the library)
  return e;
}

}  // namespace

void encodeExponentFilter(uint8_t* out, const float* values, size_t count, int components,
                          int bits) {
  int cached_exp = 0;
  double cached_scale = 1.0;
  for (size_t i = 0; i < count; ++i) {
    const float* v = values + i * size_t(components);
    uint8_t* d = out + i * size_t(components) * 4;
    // The largest exponent of the vector (a zero counts as 0), less the mantissa's bits: every
    // component then fits the signed mantissa.
    int exp = -100;
    for (int c = 0; c < components; ++c) exp = std::max(exp, frexpExponent(v[c]));
    exp -= bits - 1;
    if (i == 0 || exp != cached_exp) {
      cached_exp = exp;
      cached_scale = std::ldexp(1.0, -exp);
    }
    for (int c = 0; c < components; ++c) {
      // v * 2^-exp is exact in double, so the conversion rounds once, as ldexp does in float.
      const float scaled = float(double(v[c]) * cached_scale);
      const int mantissa = int(scaled + (v[c] >= 0 ? 0.5f : -0.5f));
      const uint32_t coded = (uint32_t(mantissa) & 0xffffffu) | (uint32_t(exp) << 24);
      std::memcpy(d + size_t(c) * 4, &coded, sizeof(coded));
    }
  }
}

}  // namespace mmdb::cook
