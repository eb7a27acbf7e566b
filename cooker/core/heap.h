// Giving freed memory back to the system. glibc keeps what a program frees in its heaps for
// later allocations: blocks under its mmap threshold (which rises to the largest block freed,
// up to 32 MB) and every small one, resident all the same. A stage that frees tens of MB while
// it allocates as much in other blocks (the clips' parts as they are concatenated) would hold
// both; trimming returns the freed whole pages of every thread's heap.
#pragma once

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace mmdb::cook {

inline void releaseFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace mmdb::cook
