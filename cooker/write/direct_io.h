// The system calls the database writes share: whole writes at an offset, O_DIRECT on and off.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>

namespace mmdb::cook {

// Writes all of `bytes` at `offset`; 0, or the errno of the failure.
inline int pwriteAll(int fd, std::span<const uint8_t> bytes, size_t offset) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Sets or clears O_DIRECT on `fd`; false (errno set) where the file system refuses it.
inline bool setDirect(int fd, bool on) {
#if defined(O_DIRECT)
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return false;
  return ::fcntl(fd, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0;
#else
  (void)fd;
  if (!on) return true;
  errno = EINVAL;
  return false;
#endif
}

// pwriteAll, and where `direct` (O_DIRECT is on) and the write is refused with EINVAL (some file
// systems accept O_DIRECT at fcntl and check alignment only at the write): O_DIRECT off, `direct`
// false, and the same write again through the page cache, as every later one.
inline int pwriteFallingBack(int fd, std::span<const uint8_t> bytes, size_t offset, bool& direct) {
  int error = pwriteAll(fd, bytes, offset);
  if (error == EINVAL && direct) {
    direct = false;
    error = setDirect(fd, false) ? pwriteAll(fd, bytes, offset) : errno;
  }
  return error;
}

}  // namespace mmdb::cook
