#include "database/file_mapping.h"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <string>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace mmdb::detail {
namespace {

Error tooSmall(const char* path, size_t size) {
  return Error::format(ErrorCode::NotAnMmdb, "%s: %zu bytes is too small for an .mmdb file", path,
                       size);
}

}  // namespace

#if defined(_WIN32)

namespace {

Error windowsError(const char* what, const char* path) {
  const DWORD code = GetLastError();
  char reason[160] = "";
  FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0,
                 reason, sizeof(reason), nullptr);
  for (char* c = reason; *c; ++c) {  // FormatMessage ends its text with a line break
    if (*c == '\r' || *c == '\n') *c = '\0';
  }
  return Error::format(ErrorCode::IoError, "cannot %s %s: %s (Windows error %lu)", what, path,
                       reason, static_cast<unsigned long>(code));
}

}  // namespace

Result<FileMapping> mapWholeFile(const char* path, size_t min_size) noexcept {
  const int wide_length = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, nullptr, 0);
  if (wide_length <= 0) return Error::format(ErrorCode::InvalidArgument, "%s: not UTF-8", path);
  std::wstring wide(static_cast<size_t>(wide_length), L'\0');
  MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide.data(), wide_length);
  const DWORD attributes = GetFileAttributesW(wide.c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) return windowsError("open", path);
  if (attributes & FILE_ATTRIBUTE_DIRECTORY)
    return Error::format(ErrorCode::IoError, "cannot read %s: not a regular file (a folder)", path);
  // FILE_SHARE_DELETE: a cooker may rename a new file over this one while it is mapped.
  HANDLE file = CreateFileW(wide.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE,
                            nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (file == INVALID_HANDLE_VALUE) return windowsError("open", path);
  if (GetFileType(file) != FILE_TYPE_DISK) {
    CloseHandle(file);
    return Error::format(ErrorCode::IoError,
                         "cannot read %s: not a regular file (a device or pipe)", path);
  }
  LARGE_INTEGER length{};
  if (!GetFileSizeEx(file, &length)) {
    const Error e = windowsError("read", path);
    CloseHandle(file);
    return e;
  }
  const size_t size = static_cast<size_t>(length.QuadPart);
  if (size < min_size) {
    CloseHandle(file);
    return tooSmall(path, size);
  }
  HANDLE mapping = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
  if (!mapping) {
    const Error e = windowsError("map", path);
    CloseHandle(file);
    return e;
  }
  const void* view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
  const Error e = view ? Error() : windowsError("map", path);
  CloseHandle(mapping);  // the view keeps the mapping, and the mapping the file
  CloseHandle(file);
  if (!view) return e;
  return FileMapping{static_cast<const uint8_t*>(view), size};
}

void unmapWholeFile(const uint8_t* bytes, size_t) noexcept {
  if (bytes) UnmapViewOfFile(bytes);
}

#else

Result<FileMapping> mapWholeFile(const char* path, size_t min_size) noexcept {
  // The type first: opening a FIFO for reading would block until a writer comes.
  struct stat st {};
  if (::stat(path, &st) != 0)
    return Error::format(ErrorCode::IoError, "cannot open %s: %s", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return Error::format(ErrorCode::IoError,
                         "cannot read %s: not a regular file (a folder, device or pipe)", path);
  // O_NONBLOCK: should the path become a FIFO after the check, open still returns at once.
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Error::format(ErrorCode::IoError, "cannot open %s: %s", path, std::strerror(errno));
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    return Error::format(ErrorCode::IoError, "cannot read %s: %s", path,
                         S_ISREG(st.st_mode) ? std::strerror(err) : "not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < min_size) {
    ::close(fd);
    return tooSmall(path, size);
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED)
    return Error::format(ErrorCode::IoError, "cannot map %s: %s", path, std::strerror(err));
  return FileMapping{static_cast<const uint8_t*>(map), size};
}

void unmapWholeFile(const uint8_t* bytes, size_t size) noexcept {
  if (bytes) munmap(const_cast<uint8_t*>(bytes), size);
}

#endif

}  // namespace mmdb::detail
