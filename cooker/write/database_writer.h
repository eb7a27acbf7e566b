// CookedDatabase -> .mmdb bytes (schema/mmdb.fbs), and the atomic write of those bytes.
#pragma once

#include "core/cooked_database.h"

#include <flatbuffers/flatbuffers.h>

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace mmdb::cook {

class SequentialFile;

struct FileRange {  // bytes [first, end) of a file
  size_t first = 0, end = 0;
};

// Serializes every field of `db` into a FlatBuffers buffer with the "MMDB" identifier.
// Deterministic: the same database gives the same bytes (every field is written, even when it
// equals its default; nothing depends on time or memory addresses). Arrays the GPU reads
// (Vec4 streams, root motion, features and bounds) start at 16-byte offsets from the buffer start.
// Vectors are written padded to four floats (w = 0); quaternions as x, y, z, w.
std::vector<uint8_t> serializeDatabase(const CookedDatabase& db);
// The same bytes left in the builder's buffer (no copy into a vector; the buffer asks for 2 MB
// pages where the system has them). mmcook writes serializeForWriting()'s instead.
flatbuffers::DetachedBuffer serializeDatabaseBuffer(const CookedDatabase& db);

// A database serialized for a file write: the bytes of serializeDatabase without a second copy
// of its largest arrays, the raw pose streams, the root motion and the features. The builder's
// buffer leaves their bytes unwritten, so its pages for them are never touched (on a raw cook of
// a large corpus, hundreds of MB that the kernel would zero and the cook fill), and pieces() and
// writeTo() make them from the database's own arrays as the file is written or compared. The
// database must outlive this and stay unchanged.
class SerializedDatabase {
 public:
  size_t size() const { return buffer_.size(); }
  // Calls piece(bytes) for consecutive pieces that are, in order, the whole file, until one call
  // returns false (then false). A piece made from an array is at most 1 MiB and lasts until the
  // call returns.
  bool pieces(const std::function<bool(std::span<const uint8_t>)>& piece) const;
  // The whole file in memory, for the checks that read it whole: makes the arrays' bytes in the
  // buffer (once).
  std::span<const uint8_t> whole();
  // The whole file into `file`, the arrays made straight into its memory (SequentialFile::room)
  // rather than into pieces that are then copied; false on failure, with errno set.
  bool writeTo(SequentialFile& file) const;
  // The whole file into `fd` but for the ranges `written` (sorted, disjoint) that it already
  // holds, each piece at its offset through the page cache (a PoseStreamWriter wrote the
  // ranges); false on failure, with errno set.
  bool writeAround(int fd, const std::vector<FileRange>& written) const;

  using MakeElements = void (*)(const void* values, size_t first, size_t count, uint8_t* out);
  struct Deferred {  // an array whose bytes the buffer leaves unwritten
    size_t offset;   // of its first element, in the file
    size_t count;
    size_t element_bytes;
    const void* values;  // the database's array
    MakeElements make;   // writes elements [first, first + count) as the file holds them
    int stream = -1;     // a raw pose stream's index (kStreamRotations, ...), or -1
  };
  // Where raw pose stream `stream` (kStreamRotations, ...) starts in the file, with `count`
  // elements; false when the file does not hold it raw.
  bool rawStreamAt(int stream, size_t* offset, size_t* count) const;

 private:
  friend SerializedDatabase serializeForWriting(const CookedDatabase& db);

  // Makes elements [first, first + count) of raw pose stream `stream` (kStreamRotations, ...) from
  // its values in one array (glm::quat for the rotations, glm::vec3 for the others), 16 bytes
  // each, as the file holds them.
  SerializedDatabase::MakeElements rawStreamMaker(int stream);

  // Whether the file holds range biases (schema 2.1): some range's bias is not 0.
  bool anyRangeBias(const CookedDatabase& db);

  // Where the raw pose streams lie in the file of a database with raw (not coded) poses:
  // offsets[s] is the file offset of stream s's first element (kStreamRotations, ...), 16-byte
  // aligned; each holds frame_count x joint_count Vec4s, frame-major. They follow the root table,
  // so the offsets depend only on these counts and on whether the file holds range biases: a write
  // can put each clip's poses in place before the rest of the database is known.
  struct RawPoseLayout {
    std::array<size_t, kPoseStreamCount> offsets{};
  };
  RawPoseLayout rawPoseLayout(uint32_t frame_count, uint32_t joint_count, bool range_biases);
  // The file into `sink`, which has SequentialFile's write, room and commit: the buffer's bytes
  // as they are, the deferred arrays made in the sink's room (pieces() and writeTo()).
  template <typename Sink>
  bool emit(Sink& sink) const;
  flatbuffers::DetachedBuffer buffer_;
  std::vector<Deferred> deferred_;  // by offset
  bool whole_ = false;
};
SerializedDatabase serializeForWriting(const CookedDatabase& db);

// Makes elements [first, first + count) of raw pose stream `stream` (kStreamRotations, ...) from
// its values in one array (glm::quat for the rotations, glm::vec3 for the others), 16 bytes
// each, as the file holds them.
SerializedDatabase::MakeElements rawStreamMaker(int stream);

// Whether the file holds range biases (schema 2.1): some range's bias is not 0.
bool anyRangeBias(const CookedDatabase& db);

// Where the raw pose streams lie in the file of a database with raw (not coded) poses:
// offsets[s] is the file offset of stream s's first element (kStreamRotations, ...), 16-byte
// aligned; each holds frame_count x joint_count Vec4s, frame-major. They follow the root table,
// so the offsets depend only on these counts and on whether the file holds range biases: a write
// can put each clip's poses in place before the rest of the database is known.
struct RawPoseLayout {
  std::array<size_t, kPoseStreamCount> offsets{};
};
RawPoseLayout rawPoseLayout(uint32_t frame_count, uint32_t joint_count, bool range_biases);

// The schema's PoseCoding table of `coding`, as the database holds it (the clip cache keeps it
// too, in an .mmposes file).
flatbuffers::Offset<fb::PoseCoding> writePoseCoding(flatbuffers::FlatBufferBuilder& fbb,
                                                    const CookedPoseCoding& coding);

// Writes `bytes` to `path` through a temporary file in the same folder, flushed to disk and then
// renamed over `path`, so a reader sees the old file or the new one, never a partial one. The
// temporary file is unnamed while it is written (O_TMPFILE, where the file system has it), so a
// cook killed meanwhile leaves nothing; it gets a name only for the rename.
// Throws InputError naming the path, the system's reason and what to do; on failure an existing
// file at `path` is untouched and no temporary file is left behind.
// Synced: the bytes and the rename are on the disk when the write returns, so a crash leaves the
// old file or the new one. Unsynced: atomic for other processes alone (the rename), for what a
// build makes again from its inputs (depfiles, clip entries and parts), as a compiler writes
// its object files: an fsync costs more than a clip edge's cook on some disks.
enum class Durability { Synced, Unsynced };

void writeFileAtomically(const std::string& path, std::span<const uint8_t> bytes,
                         Durability durability = Durability::Synced);
inline void writeFileAtomically(const std::string& path, const std::vector<uint8_t>& bytes,
                                Durability durability = Durability::Synced) {
  writeFileAtomically(path, std::span<const uint8_t>(bytes), durability);
}
// The same, writing the database's pieces one after another.
void writeFileAtomically(const std::string& path, const SerializedDatabase& bytes);
// The same, writing `pieces` one after another.
void writeFileAtomically(const std::string& path, std::span<const std::span<const uint8_t>> pieces,
                         Durability durability = Durability::Synced);

// writeFileAtomically in steps, for a write that starts before all its bytes are known: the
// temporary file is created at construction (InputError as writeFileAtomically), written through
// fd(), and put in place by commit(). Destroyed without a commit, it leaves nothing behind.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  int fd() const { return fd_; }
  // Flushes the file to disk (Synced) and renames it over the path; InputError on failure, which
  // leaves an existing file at the path untouched.
  void commit(Durability durability = Durability::Synced);
  // Removes the temporary file and throws writeFileAtomically's InputError for `step` (such as
  // "writing the temporary file failed") and `error` (an errno).
  [[noreturn]] void fail(const std::string& step, int error);

 private:
  std::string path_, temp_path_;  // temp_path_: while the temporary file has a name
  int fd_ = -1;
  bool unnamed_ = false;
};

// Checks, before a long cook, that writeFileAtomically(path, ...) can create its temporary file
// (the folder exists and is writable, `path` is not a folder). Throws the same InputError it
// would; leaves nothing behind. Also removes the `<path>.tmp.<host>.<pid>.<n>` files of cooks
// on this machine that were killed (<host> is temporaryHostName(), process <pid> no longer
// runs); another machine's temporaries, in a folder several machines share, are left alone.
void checkWritable(const std::string& path);

// This machine's name as temporary file names carry it: MMCOOK_HOST_NAME when set and not empty
// (for containers or machines that share a host name), else the host name; every character but
// ASCII letters, digits and '-' becomes '-', at most 64 characters ("host" when none is known).
std::string temporaryHostName();

}  // namespace mmdb::cook
