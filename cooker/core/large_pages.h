// Large buffers (a database's streams are tens of MB) are touched for the first time page by
// page; on Linux each 4 KB page costs a fault, which on a virtual machine costs more than
// filling the page. Asking for transparent huge pages on a fresh buffer cuts the faults 512-fold.
// A hint only: ignored where the system does not have them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace mmdb::cook {

// Advises 2 MB pages for the whole 2 MB-aligned pages inside [data, data + bytes).
inline void adviseLargePages(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kLarge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kLarge - 1) & ~(kLarge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kLarge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// reserve(n), with large pages advised before the memory is first touched.
template <typename T>
void reserveLarge(std::vector<T>& v, size_t n) {
  v.reserve(n);
  adviseLargePages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace mmdb::cook
