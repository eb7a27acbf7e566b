// FNV-1a 64: the content hash the file records for each source, and that mmcook's report gives
// for its output. Fed in pieces, so a file can be hashed as it is read.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mmdb::cook {

class Fnv1a64 {
 public:
  void add(const void* data, size_t size) noexcept {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      hash_ ^= bytes[i];
      hash_ *= 1099511628211ull;
    }
  }
  uint64_t value() const noexcept { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

}  // namespace mmdb::cook
