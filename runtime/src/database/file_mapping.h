// A whole file mapped read-only: the only part of the runtime that calls the operating system's
// file and mapping functions (POSIX open/fstat/mmap, or Windows CreateFileW/CreateFileMappingW/
// MapViewOfFile), so Database::open is the same code everywhere.
#pragma once

#include "mmdb/result.h"

#include <cstddef>
#include <cstdint>

namespace mmdb::detail {

struct FileMapping {
  const uint8_t* bytes = nullptr;  // page-aligned, so 16-byte aligned as the format needs
  size_t size = 0;
};

// Maps the file at `path` (UTF-8) read-only. The type is checked before the file is opened for
// reading, so a FIFO never blocks. Errors, each naming the path: IoError when the file cannot be
// opened, is not a regular file, or cannot be mapped; NotAnMmdb when it is under `min_size` bytes.
Result<FileMapping> mapWholeFile(const char* path, size_t min_size) noexcept;

// Releases a mapping made by mapWholeFile.
void unmapWholeFile(const uint8_t* bytes, size_t size) noexcept;

}  // namespace mmdb::detail
