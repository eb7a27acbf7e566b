// Large buffers (a database's streams are tens of MB) are touched for the first time page by
// page; on Linux each 4 KB page costs a fault. Asking for transparent huge pages on a fresh buffer
// cuts the faults 512-fold, and the TLB misses of a buffer read over and over. A hint only:
// ignored where the system does not have them.
//
// Only buffers read many times after they are filled ask for them (the pose coding's streams and
// its working block, the write's reused blocks). On a virtual machine the first touch of a fresh
// 2 MB page cost about four times as much per byte as 4 KB faults (likely the host backing the
// whole page), so a buffer filled once and read once or twice costs less on 4 KB pages; and the
// assembly's other streams and the serialized buffer are filled after the parallel stages, where
// that time adds to the wall time (docs/cook.md, "Write").
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
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

// Room for `count` values, mapped on its own with large pages advised and left unwritten: a page
// takes memory only once written, and the whole block goes back to the system when it is
// destroyed (where a freed vector may stay in the allocator's heap).
template <typename T>
class LargePageBuffer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit LargePageBuffer(size_t count) : bytes_(count * sizeof(T)) {
    if (bytes_ == 0) return;
#if defined(__linux__)
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    adviseLargePages(p, bytes_);
    data_ = static_cast<T*>(p);
#else
    data_ = static_cast<T*>(::operator new(bytes_));
#endif
  }
  ~LargePageBuffer() {
    if (!data_) return;
#if defined(__linux__)
    ::munmap(data_, bytes_);
#else
    ::operator delete(data_);
#endif
  }
  LargePageBuffer(const LargePageBuffer&) = delete;
  LargePageBuffer& operator=(const LargePageBuffer&) = delete;

  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace mmdb::cook
