// The half-precision copy of a database's features (Database::halfFeatures()), made at open by
// the search's code, which alone reads it.
#pragma once

#include <cstdint>

namespace mmdb::detail {

// Whether this build and CPU run the search's half-precision row test (AVX2, FMA and F16C).
bool halfFeaturesSupported() noexcept;

// Rows [frames][stride] of `features` (the first n columns used) into `rows`, the same layout
// in binary16 bits (round to nearest even; the columns from n on 0), and per row into
// `errors[frame]` the Euclidean distance between the row and its copy, rounded up: +infinity
// when a value or its copy is not finite. Only where halfFeaturesSupported().
void makeHalfFeatures(const float* features, uint32_t frames, uint32_t stride, uint32_t n,
                      uint16_t* rows, float* errors) noexcept;

}  // namespace mmdb::detail
