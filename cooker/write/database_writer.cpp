#include "write/database_writer.h"

#include "core/errors.h"
#include "write/flatbuffer_strings.h"
#include "write/sequential_file.h"

#include <mmdb/mmdb_generated.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <new>

namespace mmdb::cook {
namespace {

namespace fb = mmdb::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

fb::Vec4 toVec4(const glm::vec3& v) { return fb::Vec4(v.x, v.y, v.z, 0.0f); }
fb::Vec4 toVec4(const glm::quat& q) { return fb::Vec4(q.x, q.y, q.z, q.w); }

// The arrays a file write makes from the database's own memory (SerializedDatabase), or null
// to write them into the builder.
using DeferredList = std::vector<SerializedDatabase::Deferred>;

// Elements [first, first + count) of a Vec4 stream, as the file holds them.
template <typename T>
void makeVec4s(const void* values, size_t first, size_t count, uint8_t* out) {
  const T* in = static_cast<const T*>(values) + first;
  for (size_t i = 0; i < count; ++i) {
    const fb::Vec4 v = toVec4(in[i]);
    std::memcpy(out + i * sizeof(fb::Vec4), &v, sizeof(fb::Vec4));
  }
}

// The same, of a stream held as one array per clip (RawPoseParts): `values` is the list.
template <typename T>
void makeVec4sOfParts(const void* values, size_t first, size_t count, uint8_t* out) {
  size_t start = 0;  // of the part in the stream
  for (const std::vector<T>& part : *static_cast<const std::vector<std::vector<T>>*>(values)) {
    if (count == 0) return;
    if (first < start + part.size()) {
      const size_t from = first - start, n = std::min(count, part.size() - from);
      makeVec4s<T>(part.data(), from, n, out);
      out += n * sizeof(fb::Vec4);
      first += n;
      count -= n;
    }
    start += part.size();
  }
}

template <typename T>
size_t sizeOfParts(const std::vector<std::vector<T>>& parts) {
  size_t size = 0;
  for (const std::vector<T>& part : parts) size += part.size();
  return size;
}

void makeFloats(const void* values, size_t first, size_t count, uint8_t* out) {
  std::memcpy(out, static_cast<const float*>(values) + first, count * sizeof(float));
}

// Lists a vector whose `elements` the builder has left unwritten, with their offset from the
// buffer's end (the builder builds from the end; the offset from the start is known once it
// finishes).
void deferVector(FlatBufferBuilder& fbb, const void* elements, size_t count, size_t element_bytes,
                 const void* values, SerializedDatabase::MakeElements make,
                 DeferredList& deferred) {
  const auto* at = static_cast<const uint8_t*>(elements);
  const size_t from_end = fbb.GetSize() - size_t(at - fbb.GetCurrentBufferPointer());
  deferred.push_back({from_end, count, element_bytes, values, make});
}

// `count` Vec4s that make(values, ...) gives, written in place in the builder (no temporary copy
// of a stream that may be tens of MB), or with `deferred`, left for the file write to make.
Offset<flatbuffers::Vector<const fb::Vec4*>> vec4VectorOf(FlatBufferBuilder& fbb, size_t count,
                                                          const void* values,
                                                          SerializedDatabase::MakeElements make,
                                                          DeferredList* deferred) {
  // Vec4's size is its alignment, so this aligns as CreateVectorOfStructs would.
  static_assert(sizeof(fb::Vec4) == 16 && alignof(fb::Vec4) == 16);
  fb::Vec4* out = nullptr;
  auto offset = fbb.CreateUninitializedVectorOfStructs(count, &out);
  auto* bytes = reinterpret_cast<uint8_t*>(out);
  if (deferred) {
    deferVector(fbb, bytes, count, sizeof(fb::Vec4), values, make, *deferred);
    return offset;
  }
  // The builder aligns from its buffer's end, so `out` is 16-aligned in the file but not
  // necessarily in memory: makeVec4s copies bytes rather than store a Vec4.
  make(values, 0, count, bytes);
  return offset;
}

template <typename T>
Offset<flatbuffers::Vector<const fb::Vec4*>> vec4Vector(FlatBufferBuilder& fbb,
                                                        const std::vector<T>& values,
                                                        DeferredList* deferred = nullptr) {
  return vec4VectorOf(fbb, values.size(), values.data(), makeVec4s<T>, deferred);
}

// A stream held as one array per clip, or else the database's array.
template <typename T>
Offset<flatbuffers::Vector<const fb::Vec4*>> vec4Stream(FlatBufferBuilder& fbb,
                                                        const std::vector<T>& values,
                                                        const std::vector<std::vector<T>>& parts,
                                                        DeferredList* deferred) {
  if (parts.empty()) return vec4Vector(fbb, values, deferred);
  return vec4VectorOf(fbb, sizeOfParts(parts), &parts, makeVec4sOfParts<T>, deferred);
}

// A float array the GPU reads: its first element lands on a 16-byte boundary.
Offset<flatbuffers::Vector<float>> gpuFloatVector(FlatBufferBuilder& fbb,
                                                  const std::vector<float>& values,
                                                  DeferredList* deferred = nullptr) {
  fbb.ForceVectorAlignment(values.size(), sizeof(float), 16);
  if (!deferred) return fbb.CreateVector(values);
  float* out = nullptr;
  auto offset = fbb.CreateUninitializedVector(values.size(), &out);
  deferVector(fbb, out, values.size(), sizeof(float), values.data(), makeFloats, *deferred);
  return offset;
}

Offset<fb::CookSettings> writeSettings(FlatBufferBuilder& fbb, const CookedSettings& s) {
  auto times = fbb.CreateVector(s.trajectory_times);
  auto weights = fbb.CreateVector(s.block_weights);
  return fb::CreateCookSettings(fbb, s.frame_rate, s.unit_scale, s.root_position_window,
                                s.facing_window, s.savitzky_golay_order, s.contact_speed_threshold,
                                s.contact_median_frames, s.trailing_unmatchable_frames, times,
                                weights);
}

Offset<flatbuffers::Vector<Offset<fb::Source>>> writeSources(
    FlatBufferBuilder& fbb, const std::vector<CookedSource>& sources) {
  std::vector<Offset<fb::Source>> out;
  for (const CookedSource& s : sources) {
    auto path = fbb.CreateString(s.path);
    out.push_back(fb::CreateSource(fbb, path, s.content_hash, s.size_bytes,
                                   static_cast<fb::SourceFormat>(s.format)));
  }
  return fbb.CreateVector(out);
}

Offset<fb::Skeleton> writeSkeleton(FlatBufferBuilder& fbb, const CookedSkeleton& sk) {
  auto names = stringVector(fbb, sk.names);
  auto parents = fbb.CreateVector(sk.parents);
  auto translations = vec4Vector(fbb, sk.bind_translations);
  auto rotations = vec4Vector(fbb, sk.bind_rotations);
  std::vector<Offset<fb::RoleBinding>> roles;
  for (const auto& [role, joint] : sk.roles)
    roles.push_back(fb::CreateRoleBinding(fbb, static_cast<fb::Role>(role), joint));
  auto role_vector = fbb.CreateVector(roles);
  auto preset = fbb.CreateString(sk.preset);
  auto contacts = fbb.CreateVector(sk.contact_joints);
  const fb::Vec4 facing_axis = toVec4(sk.facing_axis);
  return fb::CreateSkeleton(fbb, names, parents, translations, rotations, role_vector, &facing_axis,
                            preset, contacts);
}

Offset<flatbuffers::Vector<Offset<fb::Clip>>> writeClips(FlatBufferBuilder& fbb,
                                                         const std::vector<CookedClip>& clips) {
  std::vector<Offset<fb::Clip>> out;
  for (const CookedClip& c : clips) {
    auto name = fbb.CreateString(c.name);
    auto take = fbb.CreateString(c.take);
    // CreateClip()'s order, with the 2.1 bias written only when it is not 0: a cook without
    // biases gives the bytes it gave before 2.1 (but for the version).
    fb::ClipBuilder clip(fbb);
    clip.add_tag_mask(c.tag_mask);
    if (c.bias != 0) clip.add_bias(c.bias);
    clip.add_take(take);
    clip.add_mirror_of(c.mirror_of);
    clip.add_source_frame_count(c.source_frame_count);
    clip.add_source_first_frame(c.source_first_frame);
    clip.add_source_frame_rate(c.source_frame_rate);
    clip.add_frame_count(c.frame_count);
    clip.add_first_frame(c.first_frame);
    clip.add_source_index(c.source_index);
    clip.add_name(name);
    clip.add_mirrored(c.mirrored);
    out.push_back(clip.Finish());
  }
  return fbb.CreateVector(out);
}

Offset<flatbuffers::Vector<Offset<fb::FeatureBlock>>> writeFeatureBlocks(
    FlatBufferBuilder& fbb, const std::vector<CookedFeatureBlock>& blocks) {
  std::vector<Offset<fb::FeatureBlock>> out;
  for (const CookedFeatureBlock& b : blocks) {
    auto name = fbb.CreateString(b.name);
    out.push_back(fb::CreateFeatureBlock(fbb, name, static_cast<fb::FeatureKind>(b.kind), b.joint,
                                         b.first_column, b.width, b.std, b.weight));
  }
  return fbb.CreateVector(out);
}

// Root frames [first, first + count), as the file holds them.
void makeRootFrames(const void* values, size_t first, size_t count, uint8_t* out) {
  const CookedRootFrame* in = static_cast<const CookedRootFrame*>(values) + first;
  for (size_t i = 0; i < count; ++i) {
    const fb::RootFrame r(toVec4(in[i].position), toVec4(in[i].rotation), toVec4(in[i].velocity),
                          toVec4(in[i].angular_velocity));
    std::memcpy(out + i * sizeof(fb::RootFrame), &r, sizeof(fb::RootFrame));
  }
}

// The root motion, made in place, or with `deferred` left for the file write to make.
Offset<flatbuffers::Vector<const fb::RootFrame*>> writeRootMotion(
    FlatBufferBuilder& fbb, const std::vector<CookedRootFrame>& frames, DeferredList* deferred) {
  // Laid out as CreateVectorOfStructs lays it out: aligned to the struct's 16 bytes, not to its
  // 64-byte size, which an uninitialized vector of 64-byte elements would be. So it is made as a
  // vector of four times as many 16-byte elements whose length is then set to the frames'.
  static_assert(sizeof(fb::RootFrame) == 4 * 16 && alignof(fb::RootFrame) == 16);
  uint8_t* bytes = nullptr;
  const flatbuffers::uoffset_t offset =
      fbb.CreateUninitializedVector(4 * frames.size(), 16, &bytes);
  const auto length = flatbuffers::EndianScalar(static_cast<flatbuffers::uoffset_t>(frames.size()));
  std::memcpy(bytes - sizeof(length), &length, sizeof(length));  // the length just before them
  if (deferred)
    deferVector(fbb, bytes, frames.size(), sizeof(fb::RootFrame), frames.data(), makeRootFrames,
                *deferred);
  else
    makeRootFrames(frames.data(), 0, frames.size(), bytes);
  return Offset<flatbuffers::Vector<const fb::RootFrame*>>(offset);
}

Offset<fb::CodedStream> writeCodedStream(FlatBufferBuilder& fbb, const CookedCodedStream& s) {
  std::vector<fb::PoseTrack> tracks;
  tracks.reserve(s.tracks.size());
  for (const CookedTrack& t : s.tracks)
    tracks.emplace_back(fb::Vec4(t.value.x, t.value.y, t.value.z, t.value.w),
                        static_cast<fb::TrackCoding>(t.coding), t.bits);
  auto track_vector = fbb.CreateVectorOfStructs(tracks);
  auto offsets = fbb.CreateVector(s.segment_offsets);
  const std::span<const uint8_t> bytes = s.bytes();
  auto data = fbb.CreateVector(bytes.data(), bytes.size());
  return fb::CreateCodedStream(fbb, track_vector, offsets, data, s.max_error, s.worst_joint,
                               s.worst_frame);
}

std::string systemReason(int error) { return std::strerror(error); }

}  // namespace

Offset<fb::PoseCoding> writePoseCoding(FlatBufferBuilder& fbb, const CookedPoseCoding& c) {
  std::array<Offset<fb::CodedStream>, kPoseStreamCount> streams{};
  for (int i = 0; i < kPoseStreamCount; ++i)
    if (c.streams[i]) streams[i] = writeCodedStream(fbb, *c.streams[i]);
  return fb::CreatePoseCoding(fbb, c.segment_frames, streams[kStreamRotations],
                              streams[kStreamTranslations], streams[kStreamVelocities],
                              streams[kStreamAngularVelocities], c.position_tolerance,
                              c.shell_distance, c.velocity_tolerance, c.angular_velocity_tolerance);
}

namespace {

// The builder's memory: anonymous pages that the kernel may back with 2 MB pages. A database's
// buffer is tens of MB, and touching it 4 KB page by page costs more than filling it.
class LargePageAllocator : public flatbuffers::Allocator {
 public:
  uint8_t* allocate(size_t size) override {
    void* p =
        ::mmap(nullptr, rounded(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, rounded(size), MADV_HUGEPAGE);  // a hint: refused or ignored is fine
#endif
    return static_cast<uint8_t*>(p);
  }
  void deallocate(uint8_t* p, size_t size) override { ::munmap(p, rounded(size)); }

 private:
  static size_t rounded(size_t size) {
    constexpr size_t kPage = size_t{2} << 20;
    return (std::max<size_t>(size, 1) + kPage - 1) / kPage * kPage;
  }
};

// The database's bytes; with `deferred`, less the raw pose streams', the root motion's and the
// features', which it lists instead.
flatbuffers::DetachedBuffer buildDatabase(const CookedDatabase& db, DeferredList* deferred) {
  // Sized for the whole file up front: growing the builder would copy everything written so far.
  // A coded stream counts its coded bytes; its raw vector is left out (and may be released).
  const CookedPoseCoding& coding = db.pose_coding;
  size_t cells = 0, coded_bytes = 0;
  const RawPoseParts& parts = db.raw_pose_parts;
  const size_t raw_cells[kPoseStreamCount] = {
      db.local_rotations.size() + sizeOfParts(parts.rotations),
      db.local_translations.size() + sizeOfParts(parts.translations),
      db.local_velocities.size() + sizeOfParts(parts.velocities),
      db.local_angular_velocities.size() + sizeOfParts(parts.angular_velocities)};
  for (int s = 0; s < kPoseStreamCount; ++s) {
    if (const auto& stream = coding.streams[size_t(s)])
      coded_bytes += stream->bytes().size() + stream->segment_offsets.size() * sizeof(uint32_t) +
                     stream->tracks.size() * 64 + 256;
    else
      cells += raw_cells[s];
  }
  const size_t floats = db.features.size() + db.bounds_small_min.size() * 2 +
                        db.bounds_large_min.size() * 2 + db.feature_offset.size() * 2;
  const size_t estimate = cells * sizeof(fb::Vec4) + db.root_motion.size() * sizeof(fb::RootFrame) +
                          floats * sizeof(float) + db.contacts.size() * sizeof(uint32_t) +
                          coded_bytes + db.clips.size() * 256 + db.sources.size() * 512 +
                          (64 << 10);
  static LargePageAllocator allocator;  // stateless; outlives every buffer it gave
  // A multiple of 64, so what is aligned in the file is aligned in memory too.
  FlatBufferBuilder fbb((estimate + 63) & ~size_t{63}, &allocator);
  fbb.ForceDefaults(true);  // every field present, so readers never fall back on defaults

  auto cooker_version = fbb.CreateString(kCookerVersion);
  auto settings = writeSettings(fbb, db.settings);
  auto sources = writeSources(fbb, db.sources);
  auto skeleton = writeSkeleton(fbb, db.skeleton);
  auto clips = writeClips(fbb, db.clips);
  auto tag_names = stringVector(fbb, db.tag_names);
  std::vector<fb::MatchRange> range_structs;
  for (const CookedRange& r : db.ranges)
    range_structs.emplace_back(r.first_frame, r.frame_count, r.tag_mask);
  auto ranges = fbb.CreateVectorOfStructs(range_structs);
  // 2.1: range_biases only when some range has a bias (absent reads as 0 everywhere).
  bool any_bias = false;
  for (const CookedRange& r : db.ranges) any_bias = any_bias || r.bias != 0;
  Offset<flatbuffers::Vector<float>> range_biases;
  if (any_bias) {
    std::vector<float> biases;
    for (const CookedRange& r : db.ranges) biases.push_back(r.bias);
    range_biases = fbb.CreateVector(biases);
  }
  // A coded stream leaves its raw vector out (an absent field).
  auto raw = [&](int stream, const auto& values, const auto& parts_of_it) {
    return coding.streams[stream] ? decltype(vec4Vector(fbb, values))()
                                  : vec4Stream(fbb, values, parts_of_it, deferred);
  };
  auto rotations = raw(kStreamRotations, db.local_rotations, parts.rotations);
  auto translations = raw(kStreamTranslations, db.local_translations, parts.translations);
  auto velocities = raw(kStreamVelocities, db.local_velocities, parts.velocities);
  auto angular_velocities =
      raw(kStreamAngularVelocities, db.local_angular_velocities, parts.angular_velocities);
  auto root_motion = writeRootMotion(fbb, db.root_motion, deferred);
  auto contacts = fbb.CreateVector(db.contacts);
  auto features = gpuFloatVector(fbb, db.features, deferred);
  auto feature_offset = fbb.CreateVector(db.feature_offset);
  auto feature_scale = fbb.CreateVector(db.feature_scale);
  auto feature_blocks = writeFeatureBlocks(fbb, db.feature_blocks);
  auto small_min = gpuFloatVector(fbb, db.bounds_small_min);
  auto small_max = gpuFloatVector(fbb, db.bounds_small_max);
  auto large_min = gpuFloatVector(fbb, db.bounds_large_min);
  auto large_max = gpuFloatVector(fbb, db.bounds_large_max);
  auto pose_coding = coding.anyCoded() ? writePoseCoding(fbb, coding) : Offset<fb::PoseCoding>();
  const uint64_t required_features = coding.anyCoded() ? kFeatureCodedPoses : 0;

  const fb::SchemaVersion version(kSchemaMajor, kSchemaMinor);
  auto root = fb::CreateDatabase(
      fbb, &version, cooker_version, settings, sources, skeleton, clips, tag_names, ranges,
      db.frame_rate, db.frame_count, db.joint_count, rotations, translations, velocities,
      angular_velocities, root_motion, contacts, db.feature_count, db.feature_stride, features,
      feature_offset, feature_scale, feature_blocks, db.bounds_small_size, db.bounds_large_size,
      small_min, small_max, large_min, large_max, required_features, pose_coding, range_biases);
  fb::FinishDatabaseBuffer(fbb, root);
  return fbb.Release();
}

}  // namespace

std::vector<uint8_t> serializeDatabase(const CookedDatabase& db) {
  const flatbuffers::DetachedBuffer buffer = serializeDatabaseBuffer(db);
  return {buffer.data(), buffer.data() + buffer.size()};
}

flatbuffers::DetachedBuffer serializeDatabaseBuffer(const CookedDatabase& db) {
  return buildDatabase(db, nullptr);
}

SerializedDatabase serializeForWriting(const CookedDatabase& db) {
  SerializedDatabase out;
  out.buffer_ = buildDatabase(db, &out.deferred_);
  // Offsets from the end, now from the start.
  for (SerializedDatabase::Deferred& d : out.deferred_) d.offset = out.buffer_.size() - d.offset;
  std::sort(out.deferred_.begin(), out.deferred_.end(),
            [](const auto& a, const auto& b) { return a.offset < b.offset; });
  return out;
}

template <typename Sink>
bool SerializedDatabase::emit(Sink& sink) const {
  const std::span<const uint8_t> all(buffer_.data(), buffer_.size());
  if (whole_) return sink.write(all);
  size_t at = 0;
  for (const Deferred& d : deferred_) {
    if (d.offset > at && !sink.write(all.subspan(at, d.offset - at))) return false;
    for (size_t first = 0; first < d.count;) {
      const std::span<uint8_t> room = sink.room((d.count - first) * d.element_bytes);
      size_t n = room.size() / d.element_bytes;
      if (n == 0) {  // less than an element left where it is made: one element, copied
        uint8_t element[sizeof(fb::RootFrame)];  // the largest element
        d.make(d.values, first, 1, element);
        if (!sink.write({element, d.element_bytes})) return false;
        n = 1;
      } else {
        d.make(d.values, first, n, room.data());
        if (!sink.commit(n * d.element_bytes)) return false;
      }
      first += n;
    }
    at = d.offset + d.count * d.element_bytes;
  }
  return at >= all.size() || sink.write(all.subspan(at));
}

namespace {

// emit()'s sink for pieces(): the buffer's bytes as they are, the arrays made into a block of
// at most 1 MiB that each piece then lends.
class PieceSink {
 public:
  explicit PieceSink(const std::function<bool(std::span<const uint8_t>)>& piece) : piece_(piece) {}
  bool write(std::span<const uint8_t> bytes) { return piece_(bytes); }
  std::span<uint8_t> room(size_t most) {
    constexpr size_t kPieceBytes = size_t{1} << 20;
    const size_t n = std::min(most, kPieceBytes);
    if (made_.size() < n) made_.resize(n);
    return {made_.data(), n};
  }
  bool commit(size_t n) { return piece_({made_.data(), n}); }

 private:
  const std::function<bool(std::span<const uint8_t>)>& piece_;
  std::vector<uint8_t> made_;
};

}  // namespace

bool SerializedDatabase::pieces(const std::function<bool(std::span<const uint8_t>)>& piece) const {
  PieceSink sink(piece);
  return emit(sink);
}

bool SerializedDatabase::writeTo(SequentialFile& file) const { return emit(file); }

std::span<const uint8_t> SerializedDatabase::whole() {
  if (!whole_)
    for (const Deferred& d : deferred_)
      if (d.count > 0) d.make(d.values, 0, d.count, buffer_.data() + d.offset);
  whole_ = true;
  return {buffer_.data(), buffer_.size()};
}

namespace {

// Creates a new file beside `path` that no one else uses; mode 0666 less the umask, like any
// file the user creates.
int createTemporaryBeside(const std::string& path, std::string& temp_path) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp_path = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

[[noreturn]] void failWrite(const std::string& path, const std::string& step, int error) {
  throw InputError("cannot write '" + path + "': " + step + ": " + systemReason(error) +
                   "; check that the folder exists, is writable and has free space, or choose "
                   "another output path with -o");
}

// Makes the rename itself durable; a failure here does not lose data, so it is not an error.
void syncFolderOf(const std::string& path) {
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

int openTemporaryBeside(const std::string& path, std::string& temp_path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    failWrite(path, "it is a folder", EISDIR);
  const int fd = createTemporaryBeside(path, temp_path);
  if (fd < 0) failWrite(path, "cannot create a temporary file beside it", errno);
  return fd;
}

// An unnamed file in the folder of `path` (Linux O_TMPFILE): it has no name until it is linked
// into place, so a cook killed while writing it leaves nothing behind. -1 where the file system
// does not support it.
int openUnnamedBeside(const std::string& path) {
#ifdef O_TMPFILE
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  return ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#else
  (void)path;
  return -1;
#endif
}

// Gives the unnamed file `fd` the name `temp_path` (through /proc, which needs no privilege).
bool linkUnnamed(int fd, const std::string& temp_path) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, temp_path.c_str(), AT_SYMLINK_FOLLOW) == 0;
}

// Removes `<path>.tmp.<pid>.<n>` files that a cook killed before it could rename or remove them
// left behind, when process <pid> no longer runs. A temporary of a live process is kept.
void removeStaleTemporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // "<pid>.<n>"
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos ||
        rest.find_first_not_of("0123456789.") != std::string::npos)
      continue;
    const long pid = std::strtol(rest.c_str(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or unsure
    std::error_code ignored;
    if (fs::is_regular_file(it->symlink_status(ignored))) fs::remove(it->path(), ignored);
  }
}

}  // namespace

void checkWritable(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    failWrite(path, "it is a folder", EISDIR);
  if (const int unnamed = openUnnamedBeside(path); unnamed >= 0) {
    ::close(unnamed);  // nothing was named, so nothing can be left behind
  } else {
    std::string temp_path;
    const int fd = openTemporaryBeside(path, temp_path);
    ::close(fd);
    ::unlink(temp_path.c_str());
  }
  removeStaleTemporaries(path);
}

namespace {

// writeFileAtomically, with `write(fd)` writing the bytes (false on failure, with errno set).
void writeThroughTemporary(const std::string& path, const std::function<bool(int)>& write) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    failWrite(path, "it is a folder", EISDIR);
  std::string temp_path;
  int fd = openUnnamedBeside(path);
  const bool unnamed = fd >= 0;
  if (!unnamed) fd = openTemporaryBeside(path, temp_path);

  const auto abandon = [&](const std::string& step, int error) {
    ::close(fd);
    if (!temp_path.empty()) ::unlink(temp_path.c_str());
    failWrite(path, step, error);
  };
  if (!write(fd)) abandon("writing the temporary file failed", errno);
  if (::fsync(fd) != 0) abandon("flushing the temporary file failed", errno);
  if (unnamed) {
    // A name for the rename: linkat cannot replace an existing file, rename can.
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
      temp_path = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
      if (linkUnnamed(fd, temp_path)) break;
      const int error = errno;
      temp_path.clear();
      if (error != EEXIST) abandon("linking the temporary file failed", error);
    }
    if (temp_path.empty()) abandon("linking the temporary file failed", EEXIST);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp_path.c_str());
    failWrite(path, "closing the temporary file failed", error);
  }
  if (::rename(temp_path.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_path.c_str());
    failWrite(path, "renaming the temporary file over it failed", error);
  }
  syncFolderOf(path);
}

}  // namespace

void writeFileAtomically(const std::string& path, std::span<const uint8_t> bytes) {
  writeThroughTemporary(path, [&](int fd) {
    SequentialFile file(fd, bytes.size());
    return file.write(bytes) && file.finish();
  });
}

void writeFileAtomically(const std::string& path, const SerializedDatabase& bytes) {
  writeThroughTemporary(path, [&](int fd) {
    SequentialFile file(fd, bytes.size());
    return bytes.writeTo(file) && file.finish();
  });
}

}  // namespace mmdb::cook
