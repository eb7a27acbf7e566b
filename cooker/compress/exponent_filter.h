// The exponential filter of meshoptimizer's vertex codec (EXT_meshopt_compression's
// EXPONENTIAL): each value of a vector becomes a 24-bit signed mantissa and an 8-bit signed
// exponent, the exponent shared by the vector's components. The cook codes every trial coding of
// every track with it, and meshoptimizer's encoder spends most of its time in two library calls
// per value (frexp and ldexp); this one reads the exponent from the float's bits and scales with
// one multiplication, giving the same bytes as meshopt_encodeFilterExp (meshoptimizer 0.18).
// The tests compare the two on values of every magnitude, signs and zeros included.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mmdb::cook {

// Codes `count` vectors of `components` (1..4) floats with a `bits`-bit mantissa (1..24): bytes
// 4 * k .. 4 * k + 3 of `out` code values[k], as a uint32 in the machine's byte order. Finite
// values only.
void encodeExponentFilter(uint8_t* out, const float* values, size_t count, int components,
                          int bits);

}  // namespace mmdb::cook
