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
      hash_ *= kPrime;
    }
  }
  uint64_t value() const noexcept { return hash_; }

  // add(data[i], size) to h[i] for four hashes at once. The chains are independent, so four
  // multiplies are in flight where one chain waits for each of its own: on one thread, about
  // three times the bytes per second of add().
  static void addFour(Fnv1a64* h, const unsigned char* const* data, size_t size) noexcept {
    uint64_t a = h[0].hash_, b = h[1].hash_, c = h[2].hash_, d = h[3].hash_;
    for (size_t i = 0; i < size; ++i) {
      a = (a ^ data[0][i]) * kPrime;
      b = (b ^ data[1][i]) * kPrime;
      c = (c ^ data[2][i]) * kPrime;
      d = (d ^ data[3][i]) * kPrime;
    }
    h[0].hash_ = a, h[1].hash_ = b, h[2].hash_ = c, h[3].hash_ = d;
  }

 private:
  static constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t hash_ = 14695981039346656037ull;
};

}  // namespace mmdb::cook
