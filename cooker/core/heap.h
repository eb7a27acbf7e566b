// How the cook uses the system's memory.
//
// Giving freed memory back: glibc keeps what a program frees in its heaps for later
// allocations: blocks under its mmap threshold (which rises to the largest block freed, up to
// 32 MB) and every small one, resident all the same. A stage that frees tens of MB while it
// allocates as much in other blocks (the clips' parts as they are concatenated) would hold both;
// trimming returns the freed whole pages of every thread's heap.
//
// Large pages for the heap: the cook writes each per-clip array once and frees it, so much of its
// system time is page faults, one per 4 KB page touched. With glibc's heap on transparent huge
// pages (which a system gives on request by default), one fault maps 2 MB: on a 105-clip cook,
// 60 % fewer faults and about half the system time, for a peak a few % higher. glibc reads that
// setting (the glibc.malloc.hugetlb tunable, glibc 2.35 and later) from the environment only when
// a program starts, so a command line that wants it starts itself again with it set.
#pragma once

#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace mmdb::cook {

inline void releaseFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// Replaces the process with a new run of the same program and arguments, the environment's
// GLIBC_TUNABLES extended with glibc.malloc.hugetlb=1, when that is useful and possible. Returns
// (doing nothing) when the environment already sets that tunable (the restarted run, or a user's
// own choice), the system never gives transparent huge pages, the program runs under a sanitizer
// (it has its own allocator), it is not built for glibc on Linux, or the restart fails.
void restartWithLargePageHeap(char** argv);

// The GLIBC_TUNABLES a restart sets, from the current value (null when unset): the current
// tunables with glibc.malloc.hugetlb=1 added, or "" when they already set it (no restart).
std::string largePageTunables(const char* current);

}  // namespace mmdb::cook
