// Errors as values. Nothing in the runtime throws across its API or aborts on bad data: a
// function that can fail returns a Status (an Error whose code is None on success) or a
// Result<T> (a value or an Error). The message is stored inline, so an error never allocates.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <utility>

namespace mmdb {

enum class ErrorCode {
  None = 0,         // success
  IoError,          // the file could not be opened, sized or mapped
  NotAnMmdb,        // too small, or the "MMDB" identifier is missing
  VersionMismatch,  // another schema major version: re-cook the file
  Misaligned,       // the buffer or an array in it is not on its boundary (16 bytes for GPU arrays)
  Corrupt,          // the FlatBuffers verifier refused the buffer
  Inconsistent,     // it parses, but counts, ranges, layout or values disagree
  InvalidArgument,  // a job or call was given inputs that do not fit the database
  NoMatch,          // a search found no frame: no candidate passed the filter, or every cost
                    // was NaN or inf (the mapped file changed after open)
  DeviceError,      // mmdb::gpu: no usable Vulkan device, or a Vulkan call failed (device lost,
                    // out of device memory)
};

// Short name of a code ("Corrupt", ...).
const char* errorCodeName(ErrorCode code) noexcept;

class Error {
 public:
  static constexpr size_t kMaxMessage = 240;

  Error() noexcept { message_[0] = '\0'; }
  Error(ErrorCode code, const char* message) noexcept : code_(code) {
    std::snprintf(message_, sizeof(message_), "%s", message ? message : "");
  }
  // printf-style message, truncated to kMaxMessage characters.
  template <class... Args>
  static Error format(ErrorCode code, const char* fmt, Args... args) noexcept {
    Error e;
    e.code_ = code;
    if constexpr (sizeof...(Args) == 0) {
      std::snprintf(e.message_, sizeof(e.message_), "%s", fmt);
    } else {
      std::snprintf(e.message_, sizeof(e.message_), fmt, args...);
    }
    return e;
  }

  ErrorCode code() const noexcept { return code_; }
  const char* message() const noexcept { return message_; }
  bool ok() const noexcept { return code_ == ErrorCode::None; }
  explicit operator bool() const noexcept { return ok(); }

 private:
  ErrorCode code_ = ErrorCode::None;
  char message_[kMaxMessage + 1];
};

// Success is an Error with code None.
using Status = Error;

template <class T>
class Result {
 public:
  Result(T&& value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(const T& value) : value_(value) {}        // NOLINT: implicit by design
  Result(const Error& error) : error_(error) {}    // NOLINT: implicit by design

  bool ok() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  // Valid only when ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  // Code None when ok().
  const Error& error() const noexcept { return error_; }

 private:
  std::optional<T> value_;
  Error error_;
};

}  // namespace mmdb
