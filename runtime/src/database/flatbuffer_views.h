// The verified file's FlatBuffers vectors and strings as the public header's spans and strings,
// for the open checks (database/checks.cpp), the open (database.cpp) and the accessors
// (accessors.cpp) (internal).
#pragma once

#include "mmdb/database.h"
#include "mmdb/mmdb_generated.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mmdb::detail {

template <class T>
size_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

template <class Out, class T>
Span<const Out> view(const flatbuffers::Vector<T>* v) {
  if (!v || v->size() == 0) return {};
  return {reinterpret_cast<const Out*>(v->Data()), v->size()};
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

inline std::string_view str(const flatbuffers::String* s) {
  return s ? std::string_view(s->c_str(), s->size()) : std::string_view();
}

}  // namespace mmdb::detail
