#include "write/database_writer.h"

#include "core/errors.h"
#include "write/direct_io.h"
#include "write/flatbuffer_strings.h"
#include "write/sequential_file.h"

#include <mmdb/mmdb_generated.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <new>
#include <optional>
#include <stdexcept>

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

// Stream `Stream` of the raw pose parts, and its element type.
template <int Stream>
const auto& partsOf(const RawPoseParts& p) {
  if constexpr (Stream == kStreamRotations) return p.rotations;
  if constexpr (Stream == kStreamTranslations) return p.translations;
  if constexpr (Stream == kStreamVelocities) return p.velocities;
  if constexpr (Stream == kStreamAngularVelocities) return p.angular_velocities;
}

// The same, of a stream held as one array per clip: `values` is the RawPoseParts. A part that
// was released (written during the cook) cannot be made again.
template <int Stream>
void makeVec4sOfParts(const void* values, size_t first, size_t count, uint8_t* out) {
  const RawPoseParts& p = *static_cast<const RawPoseParts*>(values);
  const auto& parts = partsOf<Stream>(p);
  using T = typename std::decay_t<decltype(parts)>::value_type::value_type;
  size_t start = 0;  // of the part in the stream
  for (size_t c = 0; c < parts.size() && count > 0; ++c) {
    const size_t size = p.first[c + 1] - p.first[c];
    if (first < start + size) {
      if (parts[c].size() != size)
        throw std::logic_error("the raw poses of database clip " + std::to_string(c) +
                               " were released after they were written; only that write can "
                               "make the file");
      const size_t from = first - start, n = std::min(count, size - from);
      makeVec4s<T>(parts[c].data(), from, n, out);
      out += n * sizeof(fb::Vec4);
      first += n;
      count -= n;
    }
    start += size;
  }
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

// FlatBuffers 2.0 pads no empty vector (PreAlign returns at once for 0 bytes), so the data of
// an empty vector, where a reader's data() points, lands on whatever 4-byte boundary the builder
// is at, and a reader that checks the alignment of its arrays refuses it. Pads first, so that an
// empty vector's data lands on `alignment` in the file, as a full one's does.
void alignIfEmpty(FlatBufferBuilder& fbb, size_t count, size_t alignment) {
  if (count == 0) fbb.Align(alignment);
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
  alignIfEmpty(fbb, count, alignof(fb::Vec4));
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

// A float array the GPU reads: its first element lands on a 16-byte boundary.
Offset<flatbuffers::Vector<float>> gpuFloatVector(FlatBufferBuilder& fbb,
                                                  const std::vector<float>& values,
                                                  DeferredList* deferred = nullptr) {
  fbb.ForceVectorAlignment(values.size(), sizeof(float), 16);
  alignIfEmpty(fbb, values.size(), 16);
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
  alignIfEmpty(fbb, frames.size(), alignof(fb::RootFrame));
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

void makeBytes(const void* values, size_t first, size_t count, uint8_t* out) {
  std::memcpy(out, static_cast<const uint8_t*>(values) + first, count);
}

// With `deferred`, the coded bytes (most of a coded file) are left for the file write to copy
// from the stream, as the raw arrays are.
Offset<fb::CodedStream> writeCodedStream(FlatBufferBuilder& fbb, const CookedCodedStream& s,
                                         DeferredList* deferred) {
  std::vector<fb::PoseTrack> tracks;
  tracks.reserve(s.tracks.size());
  for (const CookedTrack& t : s.tracks)
    tracks.emplace_back(fb::Vec4(t.value.x, t.value.y, t.value.z, t.value.w),
                        static_cast<fb::TrackCoding>(t.coding), t.bits);
  alignIfEmpty(fbb, tracks.size(), alignof(fb::PoseTrack));
  auto track_vector = fbb.CreateVectorOfStructs(tracks);
  auto offsets = fbb.CreateVector(s.segment_offsets);
  const std::span<const uint8_t> bytes = s.bytes();
  Offset<flatbuffers::Vector<uint8_t>> data;
  if (deferred && !bytes.empty()) {
    // Laid out as CreateVector lays out bytes.
    uint8_t* out = nullptr;
    data = fbb.CreateUninitializedVector(bytes.size(), 1, &out);
    deferVector(fbb, out, bytes.size(), 1, bytes.data(), makeBytes, *deferred);
  } else {
    data = fbb.CreateVector(bytes.data(), bytes.size());
  }
  return fb::CreateCodedStream(fbb, track_vector, offsets, data, s.max_error, s.worst_joint,
                               s.worst_frame);
}

std::string systemReason(int error) { return std::strerror(error); }

Offset<fb::PoseCoding> poseCodingTable(FlatBufferBuilder& fbb, const CookedPoseCoding& c,
                                       DeferredList* deferred) {
  std::array<Offset<fb::CodedStream>, kPoseStreamCount> streams{};
  for (int i = 0; i < kPoseStreamCount; ++i)
    if (c.streams[i]) streams[i] = writeCodedStream(fbb, *c.streams[i], deferred);
  return fb::CreatePoseCoding(fbb, c.segment_frames, streams[kStreamRotations],
                              streams[kStreamTranslations], streams[kStreamVelocities],
                              streams[kStreamAngularVelocities], c.position_tolerance,
                              c.shell_distance, c.velocity_tolerance, c.angular_velocity_tolerance);
}

}  // namespace

Offset<fb::PoseCoding> writePoseCoding(FlatBufferBuilder& fbb, const CookedPoseCoding& c) {
  return poseCodingTable(fbb, c, nullptr);
}

namespace {

// The builder's memory, mapped on its own: sized for the whole file, of which a write that
// leaves the large vectors to the file (serializeForWriting) touches a few MB. It stays on 4 KB
// pages: one touched byte of a 2 MB page would fault in and zero the whole page, next to every
// vector left unwritten (core/large_pages.h). A dry build (rawPoseLayout) maps hundreds of MB
// that it never writes: no swap is reserved for them.
class MappedAllocator : public flatbuffers::Allocator {
 public:
  enum class Swap { Reserve, DoNotReserve };
  explicit MappedAllocator(Swap swap = Swap::Reserve)
      : flags_(MAP_PRIVATE | MAP_ANONYMOUS | (swap == Swap::Reserve ? 0 : MAP_NORESERVE)) {}
  uint8_t* allocate(size_t size) override {
    void* p = ::mmap(nullptr, std::max<size_t>(size, 1), PROT_READ | PROT_WRITE, flags_, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<uint8_t*>(p);
  }
  void deallocate(uint8_t* p, size_t size) override { ::munmap(p, std::max<size_t>(size, 1)); }

 private:
  int flags_;
};

// The fields of the database's root table other than the raw pose streams.
struct RootFields {
  Offset<flatbuffers::String> cooker_version;
  Offset<fb::CookSettings> settings;
  Offset<flatbuffers::Vector<Offset<fb::Source>>> sources;
  Offset<fb::Skeleton> skeleton;
  Offset<flatbuffers::Vector<Offset<fb::Clip>>> clips;
  Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> tag_names;
  Offset<flatbuffers::Vector<const fb::MatchRange*>> ranges;
  Offset<flatbuffers::Vector<const fb::RootFrame*>> root_motion;
  Offset<flatbuffers::Vector<uint32_t>> contacts;
  Offset<flatbuffers::Vector<float>> features, feature_offset, feature_scale;
  Offset<flatbuffers::Vector<Offset<fb::FeatureBlock>>> feature_blocks;
  Offset<flatbuffers::Vector<float>> small_min, small_max, large_min, large_max;
  Offset<fb::PoseCoding> pose_coding;
  Offset<flatbuffers::Vector<float>> range_biases;
  uint64_t required_features = 0;
};

// A raw pose stream for the builder: `count` Vec4s that make(values, ...) gives, or absent.
struct RawStream {
  bool present = false;
  size_t count = 0;
  const void* values = nullptr;
  SerializedDatabase::MakeElements make = nullptr;
};
using RawStreams = std::array<RawStream, kPoseStreamCount>;

// The raw pose streams, then the root table, and the file's end. Built last, they come first in
// the file, right after the root table: where they lie then depends only on the frame and joint
// counts and on which root fields are present, so a write can place them before the rest of the
// database exists (rawPoseLayout). They are built in reverse so that the file holds them in
// stream order.
void finishDatabase(FlatBufferBuilder& fbb, const CookedDatabase& db, const RootFields& f,
                    const RawStreams& raw, DeferredList* deferred) {
  std::array<Offset<flatbuffers::Vector<const fb::Vec4*>>, kPoseStreamCount> streams{};
  for (int s = kPoseStreamCount - 1; s >= 0; --s) {
    const RawStream& r = raw[size_t(s)];
    if (r.present) streams[size_t(s)] = vec4VectorOf(fbb, r.count, r.values, r.make, deferred);
    if (r.present && deferred) deferred->back().stream = s;
  }
  const fb::SchemaVersion version(kSchemaMajor, kSchemaMinor);
  auto root = fb::CreateDatabase(
      fbb, &version, f.cooker_version, f.settings, f.sources, f.skeleton, f.clips, f.tag_names,
      f.ranges, db.frame_rate, db.frame_count, db.joint_count, streams[kStreamRotations],
      streams[kStreamTranslations], streams[kStreamVelocities], streams[kStreamAngularVelocities],
      f.root_motion, f.contacts, db.feature_count, db.feature_stride, f.features, f.feature_offset,
      f.feature_scale, f.feature_blocks, db.bounds_small_size, db.bounds_large_size, f.small_min,
      f.small_max, f.large_min, f.large_max, f.required_features, f.pose_coding, f.range_biases);
  fb::FinishDatabaseBuffer(fbb, root);
}

// A raw stream of `db` held as one array per clip, or else as the database's array.
template <int Stream, typename T>
RawStream rawStream(const CookedDatabase& db, const std::vector<T>& values) {
  if (db.pose_coding.streams[Stream]) return {};  // left out (an absent field)
  const RawPoseParts& p = db.raw_pose_parts;
  const auto& parts = partsOf<Stream>(p);
  if (parts.empty()) return {true, values.size(), values.data(), makeVec4s<T>};
  return {true, p.first.back(), &p, makeVec4sOfParts<Stream>};
}

// Whether some frame lies outside its small or large box (NaN counts as outside): the bounds
// then hold the matchable frames only, and the file says so (RangeBounds), so that a reader
// that checks every frame refuses it by name. Bounds of another size than the features' are
// left to the reader to report.
bool boundsLeaveFramesOut(const CookedDatabase& db) {
  const size_t stride = db.feature_stride, small = db.bounds_small_size;
  const size_t large = db.bounds_large_size;
  if (stride == 0 || small == 0 || large == 0) return false;
  const size_t frames = db.features.size() / stride;
  const size_t small_len = (frames + small - 1) / small * stride;
  const size_t large_len = (frames + large - 1) / large * stride;
  if (db.bounds_small_min.size() != small_len || db.bounds_small_max.size() != small_len ||
      db.bounds_large_min.size() != large_len || db.bounds_large_max.size() != large_len)
    return false;
  for (size_t f = 0; f < frames; ++f) {
    const float* row = &db.features[f * stride];
    const size_t s = f / small * stride, l = f / large * stride;
    for (size_t c = 0; c < stride; ++c) {
      const float v = row[c];
      if (!(db.bounds_small_min[s + c] <= v && v <= db.bounds_small_max[s + c] &&
            db.bounds_large_min[l + c] <= v && v <= db.bounds_large_max[l + c]))
        return true;
    }
  }
  return false;
}

// The database's bytes; with `deferred`, less the raw pose streams', the root motion's and the
// features', which it lists instead.
flatbuffers::DetachedBuffer buildDatabase(const CookedDatabase& db, DeferredList* deferred) {
  // Sized for the whole file up front: growing the builder would copy everything written so far.
  // A coded stream counts its coded bytes; its raw vector is left out (and may be released).
  const CookedPoseCoding& coding = db.pose_coding;
  const RawStreams raw = {rawStream<kStreamRotations>(db, db.local_rotations),
                          rawStream<kStreamTranslations>(db, db.local_translations),
                          rawStream<kStreamVelocities>(db, db.local_velocities),
                          rawStream<kStreamAngularVelocities>(db, db.local_angular_velocities)};
  size_t cells = 0, coded_bytes = 0;
  for (int s = 0; s < kPoseStreamCount; ++s) {
    if (const auto& stream = coding.streams[size_t(s)])
      coded_bytes += stream->bytes().size() + stream->segment_offsets.size() * sizeof(uint32_t) +
                     stream->tracks.size() * 64 + 256;
    else
      cells += raw[size_t(s)].count;
  }
  const size_t floats = db.features.size() + db.bounds_small_min.size() * 2 +
                        db.bounds_large_min.size() * 2 + db.feature_offset.size() * 2;
  const size_t estimate = cells * sizeof(fb::Vec4) + db.root_motion.size() * sizeof(fb::RootFrame) +
                          floats * sizeof(float) + db.contacts.size() * sizeof(uint32_t) +
                          coded_bytes + db.clips.size() * 256 + db.sources.size() * 512 +
                          (64 << 10);
  static MappedAllocator allocator;  // outlives every buffer it gave
  // A multiple of 64, so what is aligned in the file is aligned in memory too.
  FlatBufferBuilder fbb((estimate + 63) & ~size_t{63}, &allocator);
  fbb.ForceDefaults(true);  // every field present, so readers never fall back on defaults

  RootFields f;
  f.cooker_version = fbb.CreateString(kCookerVersion);
  f.settings = writeSettings(fbb, db.settings);
  f.sources = writeSources(fbb, db.sources);
  f.skeleton = writeSkeleton(fbb, db.skeleton);
  f.clips = writeClips(fbb, db.clips);
  f.tag_names = stringVector(fbb, db.tag_names);
  std::vector<fb::MatchRange> range_structs;
  for (const CookedRange& r : db.ranges)
    range_structs.emplace_back(r.first_frame, r.frame_count, r.tag_mask);
  alignIfEmpty(fbb, range_structs.size(), alignof(fb::MatchRange));
  f.ranges = fbb.CreateVectorOfStructs(range_structs);
  // 2.1: range_biases only when some range has a bias (absent reads as 0 everywhere).
  if (anyRangeBias(db)) {
    std::vector<float> biases;
    for (const CookedRange& r : db.ranges) biases.push_back(r.bias);
    f.range_biases = fbb.CreateVector(biases);
  }
  f.root_motion = writeRootMotion(fbb, db.root_motion, deferred);
  f.contacts = fbb.CreateVector(db.contacts);
  f.features = gpuFloatVector(fbb, db.features, deferred);
  f.feature_offset = fbb.CreateVector(db.feature_offset);
  f.feature_scale = fbb.CreateVector(db.feature_scale);
  f.feature_blocks = writeFeatureBlocks(fbb, db.feature_blocks);
  f.small_min = gpuFloatVector(fbb, db.bounds_small_min);
  f.small_max = gpuFloatVector(fbb, db.bounds_small_max);
  f.large_min = gpuFloatVector(fbb, db.bounds_large_min);
  f.large_max = gpuFloatVector(fbb, db.bounds_large_max);
  if (coding.anyCoded()) f.pose_coding = poseCodingTable(fbb, coding, deferred);
  f.required_features = (coding.anyCoded() ? kFeatureCodedPoses : 0) |
                        (boundsLeaveFramesOut(db) ? kFeatureRangeBounds : 0);
  finishDatabase(fbb, db, f, raw, deferred);
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

bool anyRangeBias(const CookedDatabase& db) {
  for (const CookedRange& r : db.ranges)
    if (r.bias != 0) return true;
  return false;
}

RawPoseLayout rawPoseLayout(uint32_t frame_count, uint32_t joint_count, bool range_biases) {
  const size_t count = size_t(frame_count) * joint_count;
  MappedAllocator allocator(MappedAllocator::Swap::DoNotReserve);
  FlatBufferBuilder fbb(kPoseStreamCount * (count * sizeof(fb::Vec4) + 64) + (64 << 10),
                        &allocator);
  fbb.ForceDefaults(true);
  // The root table's other fields only need to be present: one empty vector stands for all.
  const uint32_t any = fbb.CreateVector(std::vector<float>()).o;
  RootFields f;
  f.cooker_version.o = f.settings.o = f.sources.o = f.skeleton.o = f.clips.o = f.tag_names.o =
      f.ranges.o = f.root_motion.o = f.contacts.o = f.features.o = f.feature_offset.o =
          f.feature_scale.o = f.feature_blocks.o = f.small_min.o = f.small_max.o = f.large_min.o =
              f.large_max.o = any;
  if (range_biases) f.range_biases.o = any;
  RawStreams raw;
  for (RawStream& r : raw) r = {true, count, nullptr, nullptr};
  CookedDatabase shape;
  shape.frame_count = frame_count;
  shape.joint_count = joint_count;
  DeferredList deferred;
  finishDatabase(fbb, shape, f, raw, &deferred);
  RawPoseLayout layout;
  for (const SerializedDatabase::Deferred& d : deferred)
    layout.offsets[size_t(d.stream)] = fbb.GetSize() - d.offset;
  return layout;
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
      if constexpr (requires { sink.skip(size_t{}, size_t{}); }) {
        // Elements the file already holds (writeAround): not even made.
        if (const size_t skipped =
                sink.skip((d.count - first) * d.element_bytes, d.element_bytes)) {
          first += skipped / d.element_bytes;
          continue;
        }
      }
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

namespace {

// emit()'s sink for writeAround(): each byte at its offset unless a written range holds it.
// The written ranges are page-aligned, so every piece between them starts on a page: a long one
// goes around the page cache as a SequentialFile of its own, a short one through it.
class AroundSink {
 public:
  AroundSink(int fd, const std::vector<FileRange>& written, size_t size)
      : fd_(fd), written_(written), size_(size) {}

  bool write(std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
      const size_t n = std::min(bytes.size(), stretch());
      if (!held_ && !put(bytes.first(n))) return false;
      if (!advance(n)) return false;
      bytes = bytes.subspan(n);
    }
    return true;
  }
  // Up to the end of the piece or of the range held, so that nothing made there is thrown away.
  std::span<uint8_t> room(size_t most) {
    const size_t n = std::min(most, stretch());
    if (piece_ && !held_) return piece_->room(n);
    constexpr size_t kRoomBytes = size_t{1} << 20;
    if (made_.size() < std::min(n, kRoomBytes)) made_.resize(std::min(n, kRoomBytes));
    return {made_.data(), std::min(n, kRoomBytes)};
  }
  bool commit(size_t n) {
    if (piece_ && !held_) {
      if (!piece_->commit(n)) return false;
    } else if (!held_ && !put({made_.data(), n})) {
      return false;
    }
    return advance(n);
  }
  // Whole `unit`s of the next `most` bytes that a written range holds: passed over.
  size_t skip(size_t most, size_t unit) {
    stretch();
    if (!held_) return 0;
    const size_t n = std::min(most, end_ - at_) / unit * unit;
    at_ += n;
    if (at_ == end_) open_ = false;
    return n;
  }
  bool finish() { return !piece_ || closePiece(); }

 private:
  // The bytes from at_ to the end of what it is in (a written range, or the piece to write),
  // finding that first.
  size_t stretch() {
    if (!open_) {
      while (next_ < written_.size() && written_[next_].end <= at_) ++next_;
      const FileRange* r = next_ < written_.size() ? &written_[next_] : nullptr;
      held_ = r && r->first <= at_;
      end_ = held_ ? r->end : r ? r->first : size_;
      if (!held_ && end_ - at_ >= SequentialFile::kDirectMinimumBytes)
        piece_.emplace(fd_, end_ - at_, at_);
      open_ = true;
    }
    return end_ - at_;
  }
  bool advance(size_t n) {
    at_ += n;
    if (at_ < end_) return true;
    open_ = false;
    return !piece_ || closePiece();
  }
  bool closePiece() {
    const bool ok = piece_->finish();
    piece_.reset();
    return ok;
  }
  // A short piece's bytes at at_, through the page cache, handed to the disk every 8 MiB so that
  // the final fsync waits for little.
  bool put(std::span<const uint8_t> bytes) {
    if (piece_) return piece_->write(bytes);
    if (const int error = pwriteAll(fd_, bytes, at_); error != 0) {
      errno = error;
      return false;
    }
    constexpr size_t kHandOverBytes = size_t{8} << 20;
    if (at_ + bytes.size() - handed_ >= kHandOverBytes) {
#if defined(__linux__)
      ::sync_file_range(fd_, off_t(handed_), off_t(at_ + bytes.size() - handed_),
                        SYNC_FILE_RANGE_WRITE);
#endif
      handed_ = at_ + bytes.size();
    }
    return true;
  }

  const int fd_;
  const std::vector<FileRange>& written_;
  const size_t size_;
  size_t next_ = 0, at_ = 0, handed_ = 0;
  bool open_ = false;  // end_, held_ and piece_ are those of the stretch at_ is in
  bool held_ = false;
  size_t end_ = 0;
  std::optional<SequentialFile> piece_;
  std::vector<uint8_t> made_;
};

}  // namespace

bool SerializedDatabase::writeAround(int fd, const std::vector<FileRange>& written) const {
  AroundSink sink(fd, written, size());
  return emit(sink) && sink.finish();
}

SerializedDatabase::MakeElements rawStreamMaker(int stream) {
  return stream == kStreamRotations ? makeVec4s<glm::quat> : makeVec4s<glm::vec3>;
}

bool SerializedDatabase::rawStreamAt(int stream, size_t* offset, size_t* count) const {
  for (const Deferred& d : deferred_)
    if (d.stream == stream) {
      *offset = d.offset;
      *count = d.count;
      return true;
    }
  return false;
}

std::span<const uint8_t> SerializedDatabase::whole() {
  if (!whole_)
    for (const Deferred& d : deferred_)
      if (d.count > 0) d.make(d.values, 0, d.count, buffer_.data() + d.offset);
  whole_ = true;
  return {buffer_.data(), buffer_.size()};
}

std::string temporaryHostName() {
  std::string name;
  if (const char* given = std::getenv("MMCOOK_HOST_NAME"); given && *given) {
    name = given;
  } else {
    char buffer[256] = {};
    if (::gethostname(buffer, sizeof buffer - 1) == 0) name = buffer;
  }
  if (name.size() > 64) name.resize(64);
  for (char& c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'))
      c = '-';
  return name.empty() ? "host" : name;
}

namespace {

// "<path>.tmp.<host>.<pid>.<n>": the host keeps machines that share a folder apart (a pid is
// only unique on one machine).
std::string temporaryName(const std::string& path, unsigned n) {
  static const std::string host = temporaryHostName();
  return path + ".tmp." + host + "." + std::to_string(::getpid()) + "." + std::to_string(n);
}

// Creates a new file beside `path` that no one else uses; mode 0666 less the umask, like any
// file the user creates.
int createTemporaryBeside(const std::string& path, std::string& temp_path) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp_path = temporaryName(path, counter++);
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

// Removes `<path>.tmp.<host>.<pid>.<n>` files that a cook on this machine, killed before it could
// rename or remove them, left behind: <host> is this machine's and process <pid> no longer runs.
// A temporary of a live process, of another machine, or of any other form is kept.
void removeStaleTemporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  const std::string prefix = target.filename().string() + ".tmp." + temporaryHostName() + ".";
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // "<pid>.<n>"
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || dot + 1 == rest.size() ||
        rest.find('.', dot + 1) != std::string::npos ||
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

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    failWrite(path, "it is a folder", EISDIR);
  fd_ = openUnnamedBeside(path);
  unnamed_ = fd_ >= 0;
  if (!unnamed_) fd_ = openTemporaryBeside(path, temp_path_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicFile::fail(const std::string& step, int error) {
  ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
  failWrite(path_, step, error);
}

void AtomicFile::commit(Durability durability) {
  const bool sync = durability == Durability::Synced;
  if (sync && ::fsync(fd_) != 0) fail("flushing the temporary file failed", errno);
  if (unnamed_) {
    // A name for the rename: linkat cannot replace an existing file, rename can.
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
      temp_path_ = temporaryName(path_, counter++);
      if (linkUnnamed(fd_, temp_path_)) break;
      const int error = errno;
      temp_path_.clear();
      if (error != EEXIST) fail("linking the temporary file failed", error);
    }
    if (temp_path_.empty()) fail("linking the temporary file failed", EEXIST);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("closing the temporary file failed", errno);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    fail("renaming the temporary file over it failed", errno);
  temp_path_.clear();
  if (sync) syncFolderOf(path_);
}

namespace {

// The temporary file beside `path`, `size` bytes that write(SequentialFile&) gives, put in place.
template <typename Write>
void writeAtomically(const std::string& path, size_t size, Write write,
                     Durability durability = Durability::Synced) {
  AtomicFile out(path);
  SequentialFile file(out.fd(), size);
  if (!write(file) || !file.finish()) out.fail("writing the temporary file failed", errno);
  out.commit(durability);
}

}  // namespace

void writeFileAtomically(const std::string& path, std::span<const uint8_t> bytes,
                         Durability durability) {
  writeFileAtomically(path, std::span<const std::span<const uint8_t>>(&bytes, 1), durability);
}

void writeFileAtomically(const std::string& path, std::span<const std::span<const uint8_t>> pieces,
                         Durability durability) {
  size_t size = 0;
  for (const std::span<const uint8_t> piece : pieces) size += piece.size();
  writeAtomically(
      path, size,
      [&](SequentialFile& file) {
        for (const std::span<const uint8_t> piece : pieces)
          if (!file.write(piece)) return false;
        return true;
      },
      durability);
}

void writeFileAtomically(const std::string& path, const SerializedDatabase& bytes) {
  writeAtomically(path, bytes.size(), [&](SequentialFile& file) { return bytes.writeTo(file); });
}

}  // namespace mmdb::cook
