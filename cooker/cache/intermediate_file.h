// What the cook's intermediate files (.mmclip, .mmposes) share: each is a FlatBuffers buffer
// followed by an 8-byte little-endian checksum of it, and is read once, mapped.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mmdb::cook {

// The checksum of `size` bytes: four independent multiply-rotate lanes over 8-byte words (several
// GB/s, unlike a byte-wise hash), then the tail bytes and a final mix. It catches a flipped bit
// in the data, which a FlatBuffers verifier cannot see.
uint64_t intermediateChecksum(const uint8_t* data, size_t size);

// The trailer that follows the buffer: 24 bytes, little-endian: where the buffer's bulk region
// starts (the end of the buffer, which a reader may skip: a clip's pose streams), the checksum of
// the buffer before it and the checksum of the bulk.
inline constexpr size_t kTrailerBytes = 24;

// Appends the trailer of `buffer`, whose bulk starts at `bulk_start` (buffer.size(): no bulk).
void appendTrailer(std::vector<uint8_t>& buffer, size_t bulk_start);
// The trailer of `buffer` alone, for a writer that writes the buffer where it is.
std::array<uint8_t, kTrailerBytes> trailerOf(std::span<const uint8_t> buffer, size_t bulk_start);

// An intermediate file's bytes: the builder's buffer and its trailer, kept apart so that the
// buffer is written where the builder made it (a copy into one array, grown by the trailer, would
// fault in as many fresh pages again, twice).
struct IntermediateBytes {
  flatbuffers::DetachedBuffer buffer;
  std::array<uint8_t, kTrailerBytes> trailer{};

  // The builder's finished buffer, sealed with its trailer; its bulk starts at `bulk_start`.
  static IntermediateBytes seal(flatbuffers::FlatBufferBuilder& fbb, size_t bulk_start);
  size_t size() const { return buffer.size() + trailer.size(); }
  // The file's bytes in order: the buffer, then the trailer.
  std::array<std::span<const uint8_t>, 2> pieces() const {
    return {std::span<const uint8_t>(buffer.data(), buffer.size()),
            std::span<const uint8_t>(trailer)};
  }
  std::vector<uint8_t> whole() const;  // both in one array
};

// Whether the file data[0, size) ends in a trailer that fits it, and whether the checksum of the
// part before the bulk holds, and that of the bulk too when `with_bulk`.
bool checksumsHold(const uint8_t* data, size_t size, bool with_bulk);

// Seals a file again after its buffer was changed: both checksums from the bytes as they are, the
// bulk where it was. For tests and fuzzers that make damaged files which pass the checksums.
void resealIntermediate(std::vector<uint8_t>& file);

// Why an intermediate file of format major.minor, made by the cooker named `cooker` (null when the
// file names none), is not for this cooker, which reads format `expected_major`: "it is .mmclip
// format 1.0; this cooker reads 2.x", "it was cooked by 'mmcook 1.0.0'", or "" when it is.
std::string versionProblem(const char* extension, uint16_t expected_major, uint16_t major,
                           uint16_t minor, const char* cooker);

// Reads intermediate files without their bulk, into one buffer that is reused from file to file
// (no mapping, no fresh memory per file). The buffer holds a file as laid out on disk, but with
// the bulk left zero, so that a FlatBuffers verifier sees the bulk's vectors as empty and reads
// nothing there. One reader per thread.
class HeadReader {
 public:
  // The file at `path` with its bulk zero; valid until the next read. Throws InputError naming
  // the path when it is not a regular file (ending with `what_to_do`) or cannot be read; a file
  // too short for a trailer, or whose trailer puts the bulk outside it, comes back with nothing
  // but its first bytes (a reader refuses it).
  std::span<const uint8_t> read(const std::string& path, const std::string& what_to_do);

 private:
  std::vector<uint8_t> buffer_;  // zero but for [0, written_)
  size_t head_ = 0;              // the bytes of the last read before its trailer's place
  size_t trailer_at_ = 0;
};

class MappedFile {
 public:
  // Maps the regular file at `path`; with `populate`, every page is read in at once (the file is
  // read once: no copy of it), else as it is touched (a reader that skips the bulk). Throws
  // InputError naming the path when it is not a regular file (the message ends with `what_to_do`),
  // or cannot be opened, sized or mapped. An empty file maps to size() == 0.
  MappedFile(const std::string& path, const std::string& what_to_do, bool populate = true);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace mmdb::cook
