// A character's share of a crowd's per-character arrays (internal).
#pragma once

#include "mmdb/span.h"

#include <cstddef>
#include <vector>

namespace mmdb::detail {

// The `count` elements of character `index` in v.
template <class T>
Span<T> slice(std::vector<T>& v, size_t index, size_t count) {
  return Span<T>(v.data() + index * count, count);
}

}  // namespace mmdb::detail
