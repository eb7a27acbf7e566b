#include "cache/pose_file.h"

#include "cache/intermediate_file.h"
#include "core/errors.h"
#include "core/large_pages.h"
#include "core/limits.h"
#include "write/database_writer.h"

#include <mmposes/mmposes_generated.h>

#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <cstdint>
#include <memory>

namespace mmdb::cook {
namespace {

using flatbuffers::FlatBufferBuilder;

[[noreturn]] void refuse(const std::string& what, const std::string& problem) {
  throw InputError(what + ": " + problem + "; it is not a usable .mmposes of " + kCookerVersion +
                   ": delete the file (the next cook codes the poses again)");
}

// The widths the pose coding uses (compress/pose_compression.cpp) and the schema allows.
bool bitsFit(TrackCoding coding, int bits) {
  switch (coding) {
    case TrackCoding::Constant:
    case TrackCoding::Lossless:
      return bits == 0;
    case TrackCoding::Quaternion:
      return bits >= 4 && bits <= 16;
    case TrackCoding::Exponent:
      return bits >= 1 && bits <= 24;
  }
  return false;
}

CookedCodedStream readStream(const fb::CodedStream* s, const StoredPoseCoding& file,
                             const std::shared_ptr<const void>& keeper, const std::string& what,
                             const char* name) {
  const std::string where = what + " (" + name + ")";
  if (!s || !s->tracks() || !s->segment_offsets() || !s->data())
    refuse(where, "the stream or one of its fields is missing");
  // The verifier checks a vector's length, not that its 16-byte structs are 16-byte aligned in
  // memory, which reading them needs (a writer aligns them; damage or a buffer off 16 need not).
  if (reinterpret_cast<uintptr_t>(s->tracks()->data()) % alignof(fb::PoseTrack) != 0)
    refuse(where, fmt::format("its tracks are not {}-byte aligned", alignof(fb::PoseTrack)));
  const uint32_t segment_frames = file.coding.segment_frames;
  const uint64_t segments = (uint64_t(file.frame_count) + segment_frames - 1) / segment_frames;
  const uint64_t offsets = uint64_t(file.joint_count) * segments + 1;
  if (s->tracks()->size() != file.joint_count || s->segment_offsets()->size() != offsets)
    refuse(where, fmt::format("its tracks or segment offsets do not fit {} frames of {} joints",
                              file.frame_count, file.joint_count));
  CookedCodedStream out;
  out.tracks.reserve(file.joint_count);
  for (const fb::PoseTrack* t : *s->tracks()) {
    CookedTrack track;
    track.value = glm::vec4(t->value().x(), t->value().y(), t->value().z(), t->value().w());
    track.coding = t->coding();
    track.bits = t->bits();
    if (int(track.coding) < int(TrackCoding::MIN) || int(track.coding) > int(TrackCoding::MAX) ||
        !bitsFit(track.coding, track.bits) || !std::isfinite(track.value.x) ||
        !std::isfinite(track.value.y) || !std::isfinite(track.value.z) ||
        !std::isfinite(track.value.w))
      refuse(where, fmt::format("track {} has an unknown coding, a width out of range or a "
                                "value that is not finite",
                                out.tracks.size()));
    out.tracks.push_back(track);
  }
  // Copied from raw pointers, so each array is one memmove with no zero fill first: the data is
  // most of the file.
  const uint32_t* segment_offsets = s->segment_offsets()->data();
  out.segment_offsets.assign(segment_offsets, segment_offsets + offsets);
  const std::span<const uint8_t> data(s->data()->data(), s->data()->size());
  if (keeper) {  // left where it is: the database is written from there
    out.borrowed = data;
    out.keeper = keeper;
  } else {
    out.data.assign(data.begin(), data.end());
  }
  if (out.segment_offsets.front() != 0 || out.segment_offsets.back() != data.size())
    refuse(where, "its segment offsets do not span its data");
  for (uint64_t j = 0; j < file.joint_count; ++j) {
    const bool constant = out.tracks[j].coding == TrackCoding::Constant;
    for (uint64_t seg = 0; seg < segments; ++seg) {
      const uint32_t begin = out.segment_offsets[j * segments + seg];
      const uint32_t end = out.segment_offsets[j * segments + seg + 1];
      if (end < begin || (constant ? end != begin : end == begin))
        refuse(where, fmt::format("joint {}'s segment {} does not fit its coding", j, seg));
    }
  }
  out.max_error = s->max_error();
  out.worst_joint = s->worst_joint();
  out.worst_frame = s->worst_frame();
  if (!std::isfinite(out.max_error) || out.max_error < 0 || out.worst_joint < -1 ||
      out.worst_joint >= int64_t(file.joint_count) || out.worst_frame >= file.frame_count)
    refuse(where, "its measured error or where it was measured is out of range");
  return out;
}

}  // namespace

IntermediateBytes serializePoseFile(const std::string& key_text, uint32_t frame_count,
                                    uint32_t joint_count, const CookedPoseCoding& coding) {
  size_t coded = 0;
  for (const auto& s : coding.streams)
    if (s) coded += s->bytes().size() + s->segment_offsets.size() * 4 + s->tracks.size() * 32;
  FlatBufferBuilder fbb(1024 + key_text.size() + coded);
  auto version = fbb.CreateString(kCookerVersion);
  auto key = fbb.CreateString(key_text);
  auto table = writePoseCoding(fbb, coding);
  mmposes::fb::PosesBuilder poses(fbb);
  poses.add_format_major(kPoseFileFormatMajor);
  poses.add_format_minor(kPoseFileFormatMinor);
  poses.add_cooker_version(version);
  poses.add_key(key);
  poses.add_frame_count(frame_count);
  poses.add_joint_count(joint_count);
  poses.add_coding(table);
  fbb.Finish(poses.Finish(), mmposes::fb::PosesIdentifier());
  return IntermediateBytes::seal(fbb, fbb.GetSize());  // no bulk: a reader needs all of it
}

PoseFile parsePoseFile(const uint8_t* data, size_t size, const std::string& what,
                       std::shared_ptr<const void> keeper) {
  if (size < 8 + kTrailerBytes ||
      !flatbuffers::BufferHasIdentifier(data, mmposes::fb::PosesIdentifier()))
    refuse(what, "it is not an .mmposes file (no MMPS identifier)");
  if (!checksumsHold(data, size, true))
    refuse(what, "its checksum does not match: the file is damaged");
  flatbuffers::Verifier verifier(data, size - kTrailerBytes, flatbuffers::Verifier::Options{});
  if (!mmposes::fb::VerifyPosesBuffer(verifier))
    refuse(what, "its FlatBuffers structure is damaged");
  const mmposes::fb::Poses* p = mmposes::fb::GetPoses(data);
  const std::string version =
      versionProblem(".mmposes", kPoseFileFormatMajor, p->format_major(), p->format_minor(),
                     p->cooker_version() ? p->cooker_version()->c_str() : nullptr);
  if (!version.empty()) refuse(what, version);
  const fb::PoseCoding* c = p->coding();
  if (!p->key() || !c) refuse(what, "a field is missing");
  PoseFile out;
  out.key = p->key()->str();
  StoredPoseCoding& st = out.stored;
  st.frame_count = p->frame_count();
  st.joint_count = p->joint_count();
  st.coding.segment_frames = c->segment_frames();
  st.coding.position_tolerance = c->position_tolerance();
  st.coding.shell_distance = c->shell_distance();
  st.coding.velocity_tolerance = c->velocity_tolerance();
  st.coding.angular_velocity_tolerance = c->angular_velocity_tolerance();
  if (st.frame_count == 0 || st.joint_count == 0 ||
      uint64_t(st.frame_count) * st.joint_count > kMaxDatabaseBytes ||
      st.coding.segment_frames < 1 || st.coding.segment_frames > uint32_t(kMaxSegmentFrames))
    refuse(what, "its frame count, joint count or segment length is out of range");
  st.coding.streams[kStreamRotations] = readStream(c->rotations(), st, keeper, what, "rotations");
  st.coding.streams[kStreamTranslations] =
      readStream(c->translations(), st, keeper, what, "translations");
  st.coding.streams[kStreamVelocities] =
      readStream(c->velocities(), st, keeper, what, "velocities");
  st.coding.streams[kStreamAngularVelocities] =
      readStream(c->angular_velocities(), st, keeper, what, "angular velocities");
  return out;
}

PoseFile readPoseFile(const std::string& path) {
  auto file = std::make_shared<const MappedFile>(path, "give the path of an .mmposes file");
  if (file->size() > kMaxDatabaseBytes) refuse(path, "it is larger than any database can be");
  return parsePoseFile(file->data(), file->size(), path, file);
}

}  // namespace mmdb::cook
