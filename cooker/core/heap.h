// How the cook uses the system's memory.
//
// Giving freed memory back: glibc keeps what a program frees in its heaps for later
// allocations: blocks under its mmap threshold (which rises to the largest block freed, up to
// 32 MB) and every small one, resident all the same. A stage that frees tens of MB while it
// allocates as much in other blocks (the clips' parts as they are concatenated) would hold both;
// trimming returns the freed whole pages of every thread's heap.
//
// The heap stays on 4 KB pages. With glibc's heap on transparent huge pages
// (glibc.malloc.hugetlb=1) a single-thread cook faulted 3 to 5 times less often but spent as
// much system time or up to twice as much, on a virtual machine, zeroing whole 2 MB pages each
// time the trimmed heap grew again. Only the few large buffers written once are advised onto
// them (core/large_pages.h).
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
