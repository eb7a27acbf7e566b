// mmdb::Span<T>: a non-owning view of contiguous elements (std::span is C++20; the runtime's
// public headers are C++17). Views handed out by mmdb::Database point into the mapped file.
#pragma once

#include <cstddef>
#include <type_traits>

namespace mmdb {

template <class T>
class Span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;

  constexpr Span() noexcept = default;
  constexpr Span(T* data, size_t size) noexcept : data_(data), size_(size) {}
  template <size_t N>
  constexpr Span(T (&array)[N]) noexcept : data_(array), size_(N) {}
  // Span<const T> from Span<T>.
  template <class U, class = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
  constexpr Span(const Span<U>& other) noexcept : data_(other.data()), size_(other.size()) {}
  // From containers with data() and size() (std::vector, std::array).
  template <class C, class = std::enable_if_t<
                         !std::is_same_v<std::decay_t<C>, Span> &&
                         std::is_convertible_v<decltype(std::declval<C&>().data()), T*>>>
  constexpr Span(C& container) noexcept : data_(container.data()), size_(container.size()) {}

  constexpr T* data() const noexcept { return data_; }
  constexpr size_t size() const noexcept { return size_; }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  // Unchecked, like std::span.
  constexpr T& operator[](size_t i) const noexcept { return data_[i]; }
  constexpr T* begin() const noexcept { return data_; }
  constexpr T* end() const noexcept { return data_ + size_; }
  // Elements [offset, offset + count); the caller keeps it in range.
  constexpr Span subspan(size_t offset, size_t count) const noexcept {
    return Span(data_ + offset, count);
  }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace mmdb
