#include "cache/intermediate_file.h"

#include "core/cooked_database.h"
#include "core/errors.h"
#include "core/input_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mmdb::cook {

uint64_t intermediateChecksum(const uint8_t* data, size_t size) {
  constexpr uint64_t k1 = 0x9e3779b97f4a7c15ull, k2 = 0xc2b2ae3d27d4eb4full;
  auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  uint64_t lane[4] = {k1, k2, k1 ^ k2, size};
  size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, data + i + 8 * l, 8);
      lane[l] = rotl(lane[l] ^ (w * k1), 31) * k2;
    }
  uint64_t h = size;
  for (uint64_t v : lane) h = rotl(h ^ v, 27) * k1 + k2;
  for (; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

namespace {

uint64_t readWord(const uint8_t* p) {
  uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= uint64_t(p[b]) << (8 * b);
  return v;
}

}  // namespace

std::array<uint8_t, kTrailerBytes> trailerOf(std::span<const uint8_t> buffer, size_t bulk_start) {
  const uint64_t words[3] = {
      bulk_start, intermediateChecksum(buffer.data(), bulk_start),
      intermediateChecksum(buffer.data() + bulk_start, buffer.size() - bulk_start)};
  std::array<uint8_t, kTrailerBytes> trailer{};
  for (size_t w = 0; w < 3; ++w)
    for (int b = 0; b < 8; ++b) trailer[8 * w + b] = static_cast<uint8_t>(words[w] >> (8 * b));
  return trailer;
}

void appendTrailer(std::vector<uint8_t>& buffer, size_t bulk_start) {
  const std::array<uint8_t, kTrailerBytes> trailer = trailerOf(buffer, bulk_start);
  buffer.insert(buffer.end(), trailer.begin(), trailer.end());
}

bool checksumsHold(const uint8_t* data, size_t size, bool with_bulk) {
  if (size < kTrailerBytes) return false;
  const size_t body = size - kTrailerBytes;
  const uint64_t bulk_start = readWord(data + body);
  if (bulk_start > body) return false;
  if (readWord(data + body + 8) != intermediateChecksum(data, bulk_start)) return false;
  return !with_bulk ||
         readWord(data + body + 16) == intermediateChecksum(data + bulk_start, body - bulk_start);
}

IntermediateBytes IntermediateBytes::seal(flatbuffers::FlatBufferBuilder& fbb, size_t bulk_start) {
  IntermediateBytes bytes;
  bytes.buffer = fbb.Release();
  bytes.trailer =
      trailerOf(std::span<const uint8_t>(bytes.buffer.data(), bytes.buffer.size()), bulk_start);
  return bytes;
}

std::vector<uint8_t> IntermediateBytes::whole() const {
  std::vector<uint8_t> bytes;
  bytes.reserve(size());
  for (const std::span<const uint8_t> piece : pieces())
    bytes.insert(bytes.end(), piece.begin(), piece.end());
  return bytes;
}

void resealIntermediate(std::vector<uint8_t>& file) {
  if (file.size() < kTrailerBytes) return;
  const size_t body = file.size() - kTrailerBytes;
  const size_t bulk_start = std::min<uint64_t>(readWord(file.data() + body), body);
  file.resize(body);
  appendTrailer(file, bulk_start);
}

std::string versionProblem(const char* extension, uint16_t expected_major, uint16_t major,
                           uint16_t minor, const char* cooker) {
  if (major != expected_major)
    return "it is " + std::string(extension) + " format " + std::to_string(major) + "." +
           std::to_string(minor) + "; this cooker reads " + std::to_string(expected_major) + ".x";
  if (!cooker) return "it was cooked by an unnamed cooker";
  if (std::string(cooker) != kCookerVersion)
    return "it was cooked by '" + std::string(cooker) + "'";
  return "";
}

namespace {

void readFully(int fd, uint8_t* out, size_t bytes, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd, out + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw InputError(
          path + ": cannot read the file: " + (n < 0 ? std::strerror(errno) : "it ended early"));
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::span<const uint8_t> HeadReader::read(const std::string& path, const std::string& what_to_do) {
  // Zero what the last read wrote: the bulk of this one must read as zero.
  std::fill(buffer_.begin(), buffer_.begin() + std::min(head_, buffer_.size()), uint8_t{0});
  if (trailer_at_ + kTrailerBytes <= buffer_.size())
    std::fill_n(buffer_.begin() + trailer_at_, kTrailerBytes, uint8_t{0});
  head_ = trailer_at_ = 0;

  requireRegularFile(path, what_to_do);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw InputError(path + ": cannot open the file: " + std::strerror(errno) +
                     "; check its permissions");
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw InputError(path + ": cannot read the file's size: " + std::strerror(errno));
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < 16 + kTrailerBytes) {  // too short for anything: its first bytes, for the message
    if (buffer_.size() < size) buffer_.resize(size);
    readFully(fd, buffer_.data(), size, 0, path);
    head_ = size;
    return {buffer_.data(), size};
  }
  const size_t body = size - kTrailerBytes;
  uint8_t trailer[kTrailerBytes];
  readFully(fd, trailer, kTrailerBytes, body, path);
  uint64_t bulk_start = 0;
  for (int b = 0; b < 8; ++b) bulk_start |= uint64_t(trailer[b]) << (8 * b);
  if (buffer_.size() < size) buffer_.resize(size);
  head_ = static_cast<size_t>(std::min<uint64_t>(std::max<uint64_t>(bulk_start, 16), body));
  readFully(fd, buffer_.data(), head_, 0, path);
  std::copy(trailer, trailer + kTrailerBytes, buffer_.begin() + body);
  trailer_at_ = body;
  return {buffer_.data(), size};
}

MappedFile::MappedFile(const std::string& path, const std::string& what_to_do, bool populate) {
  requireRegularFile(path, what_to_do);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw InputError(path + ": cannot open the file: " + std::strerror(errno) +
                     "; check its permissions");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw InputError(path + ": cannot read the file's size: " + std::strerror(error));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {  // mmap refuses a length of zero; the reader refuses the file
    ::close(fd);
    return;
  }
  void* mapped =
      ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  const int error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED)
    throw InputError(path + ": cannot map the file: " + std::strerror(error));
  data_ = static_cast<const uint8_t*>(mapped);
  size_ = size;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace mmdb::cook
