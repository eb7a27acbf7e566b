#include "cache/clip_file.h"

#include "cache/intermediate_file.h"
#include "cook/features.h"
#include "core/errors.h"
#include "core/large_pages.h"
#include "core/limits.h"
#include "write/flatbuffer_strings.h"

#include <mmclip/mmclip_generated.h>

#include <spdlog/fmt/fmt.h>

#include <cmath>
#include <cstring>

namespace mmdb::cook {
namespace {

namespace fb = mmclip::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

static_assert(sizeof(fb::Vec3) == sizeof(glm::vec3));
static_assert(sizeof(fb::Quat) == sizeof(glm::quat));
static_assert(sizeof(fb::RootFrame) == sizeof(CookedRootFrame));
static_assert(offsetof(CookedRootFrame, rotation) == 12 &&
                  offsetof(CookedRootFrame, velocity) == 28 &&
                  offsetof(CookedRootFrame, angular_velocity) == 40,
              "CookedRootFrame as fb::RootFrame");

}  // namespace

namespace {

// A vector of FlatBuffers structs with the bytes of `values` (same layout, checked above).
template <typename Fb, typename T>
Offset<flatbuffers::Vector<const Fb*>> structVector(FlatBufferBuilder& fbb,
                                                    const std::vector<T>& values) {
  static_assert(sizeof(Fb) == sizeof(T) && alignof(Fb) <= alignof(T));
  // CreateVectorOfStructs aligns to the struct's alignment; CreateUninitializedVectorOfStructs
  // aligns to its size, which for RootFrame (52 bytes) or Vec3 (12) is no power of two: the
  // padding came out wrong and a later 8-byte field could land off its alignment, which the
  // verifier refuses.
  return fbb.CreateVectorOfStructs(reinterpret_cast<const Fb*>(values.data()), values.size());
}

template <typename T, typename Fb>
std::vector<T> fromStructs(const flatbuffers::Vector<const Fb*>* v) {
  std::vector<T> out;
  if (!v || v->size() == 0) return out;
  reserveLarge(out, v->size());
  out.resize(v->size());
  std::memcpy(static_cast<void*>(out.data()), v->Data(), out.size() * sizeof(T));
  return out;
}

template <typename T>
std::vector<T> fromScalars(const flatbuffers::Vector<T>* v) {
  std::vector<T> out;
  if (!v) return out;
  reserveLarge(out, v->size());
  out.assign(v->begin(), v->end());
  return out;
}

std::vector<std::string> fromStrings(const flatbuffers::Vector<Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v)
    for (const auto* s : *v) out.push_back(s ? s->str() : std::string());
  return out;
}

// A motion's four pose streams: most of the file.
struct PoseVectors {
  Offset<flatbuffers::Vector<const fb::Quat*>> rotations;
  Offset<flatbuffers::Vector<const fb::Vec3*>> translations, velocities, angular;
};

PoseVectors writePoseVectors(FlatBufferBuilder& fbb, const ClipMotion& m) {
  PoseVectors v;
  v.rotations = structVector<fb::Quat>(fbb, m.clip.rotations);
  v.translations = structVector<fb::Vec3>(fbb, m.clip.translations);
  v.velocities = structVector<fb::Vec3>(fbb, m.velocities);
  v.angular = structVector<fb::Vec3>(fbb, m.angular_velocities);
  return v;
}

Offset<fb::Motion> writeMotion(FlatBufferBuilder& fbb, const ClipMotion& m, const PoseVectors& p) {
  auto name = fbb.CreateString(m.clip.name);
  auto root = structVector<fb::RootFrame>(fbb, m.root);
  auto contacts = fbb.CreateVector(m.contacts);
  auto features = fbb.CreateVector(m.features);
  auto facing = fbb.CreateVector(m.facing.candidate_sum.data(), m.facing.candidate_sum.size());
  std::vector<Offset<fb::Warning>> warning_tables;
  for (const Warning& w : m.warnings)
    warning_tables.push_back(fb::CreateWarning(
        fbb, fbb.CreateString(w.code), fbb.CreateString(w.text), fbb.CreateString(w.file), w.line));
  auto warnings = fbb.CreateVector(warning_tables);
  return fb::CreateMotion(fbb, name, static_cast<uint32_t>(m.clip.frame_count), p.rotations,
                          p.translations, p.velocities, p.angular, root, contacts, features,
                          static_cast<uint16_t>(kFeatureCount), facing, m.facing.configured_sum,
                          m.facing.moving_frames, warnings);
}

[[noreturn]] void refuse(const std::string& what, const std::string& problem) {
  throw InputError(what + ": " + problem + "; it is not a usable .mmclip of " + kCookerVersion +
                   ": cook the clip again (mmcook cook-clip), or delete the file");
}

bool allFinite(const float* v, size_t n) {
  bool ok = true;
  for (size_t i = 0; i < n; ++i) ok &= std::isfinite(v[i]);
  return ok;
}

// A cooked rotation is unit length to float precision (every stage normalizes); one far from it
// is not what the cook made, and would scale every child of its joint (the runtime refuses it).
bool unitLength(const glm::quat& q) {
  const double length2 =
      double(q.x) * q.x + double(q.y) * q.y + double(q.z) * q.z + double(q.w) * q.w;
  return std::abs(length2 - 1) <= 1e-3;
}

std::string lengthOf(const glm::quat& q) {
  const double length2 =
      double(q.x) * q.x + double(q.y) * q.y + double(q.z) * q.z + double(q.w) * q.w;
  return fmt::format("{:.6g}", std::sqrt(length2));
}

// What the runtime's open and playback rely on, checked as the runtime checks its file: rotations
// of unit length (the local poses' and the root's) and a facing agreement that is a count of the
// clip's frames. Values are finite (checked before).
void checkMotionValues(const ClipMotion& m, const std::vector<std::string>& joint_names,
                       const std::string& where) {
  const size_t joints = joint_names.size();
  for (size_t i = 0; i < m.clip.rotations.size(); ++i)
    if (!unitLength(m.clip.rotations[i]))
      refuse(where, fmt::format("the rotation of joint {} ({}) at frame {} has length {}, not 1",
                                i % joints, joint_names[i % joints], i / joints,
                                lengthOf(m.clip.rotations[i])));
  for (size_t f = 0; f < m.root.size(); ++f)
    if (!unitLength(m.root[f].rotation))
      refuse(where, fmt::format("the root rotation at frame {} has length {}, not 1", f,
                                lengthOf(m.root[f].rotation)));
  // Sums of one cosine per moving frame.
  const FacingAgreement& a = m.facing;
  const double most = double(a.moving_frames) * (1 + 1e-6) + 1e-3;
  bool facing_fits = a.moving_frames >= 0 && a.moving_frames <= m.clip.frame_count &&
                     std::abs(a.configured_sum) <= most;
  for (double sum : a.candidate_sum) facing_fits &= std::abs(sum) <= most;
  if (!facing_fits) refuse(where, "its facing agreement does not fit its frames");
  for (const Warning& w : m.warnings)
    if (w.line < 0) refuse(where, "a warning has a negative line");
}

ClipMotion readMotion(const fb::Motion* m, const std::vector<std::string>& joint_names,
                      const std::string& what, const char* which, PartPoses poses) {
  const std::string where = what + " (" + which + ")";
  const size_t joints = joint_names.size();
  if (!m || !m->name() || !m->rotations() || !m->translations() || !m->velocities() ||
      !m->angular_velocities() || !m->root() || !m->contacts() || !m->features() ||
      !m->facing_candidate_sums() || !m->warnings())
    refuse(where, "a field is missing");
  const uint64_t frames = m->frame_count();
  const uint64_t cells = frames * joints;
  if (cells > kMaxClipSamples)
    refuse(where, fmt::format("its {} frames of {} joints are more than a clip may hold ({} joint "
                              "samples)",
                              frames, joints, kMaxClipSamples));
  const bool with_poses = poses == PartPoses::Read;
  // Without its poses, a part's pose streams are neither read nor checked (their bytes may not
  // even be there: HeadReader leaves them zero).
  const bool poses_fit =
      !with_poses || (m->rotations()->size() == cells && m->translations()->size() == cells &&
                      m->velocities()->size() == cells && m->angular_velocities()->size() == cells);
  if (frames == 0 || !poses_fit || m->root()->size() != frames || m->contacts()->size() != frames ||
      m->feature_count() != kFeatureCount || m->features()->size() != frames * kFeatureCount ||
      m->facing_candidate_sums()->size() != FacingAgreement::kCandidates)
    refuse(where, fmt::format("its arrays do not fit its {} frames of {} joints", frames, joints));
  ClipMotion out;
  out.clip.name = m->name()->str();
  out.clip.frame_count = static_cast<int>(frames);
  if (with_poses) {
    out.clip.rotations = fromStructs<glm::quat>(m->rotations());
    out.clip.translations = fromStructs<glm::vec3>(m->translations());
    out.velocities = fromStructs<glm::vec3>(m->velocities());
    out.angular_velocities = fromStructs<glm::vec3>(m->angular_velocities());
  }
  out.root = fromStructs<CookedRootFrame>(m->root());
  out.contacts = fromScalars(m->contacts());
  out.features = fromScalars(m->features());
  for (int c = 0; c < FacingAgreement::kCandidates; ++c)
    out.facing.candidate_sum[c] = m->facing_candidate_sums()->Get(c);
  out.facing.configured_sum = m->facing_configured_sum();
  out.facing.moving_frames = m->facing_moving_frames();
  for (const fb::Warning* w : *m->warnings()) {
    if (!w || !w->code() || !w->text() || !w->file()) refuse(where, "a warning lacks a field");
    out.warnings.push_back({w->code()->str(), w->text()->str(), w->file()->str(), w->line()});
  }
  const bool finite =
      (!with_poses || (allFinite(&out.clip.rotations[0].x, cells * 4) &&
                       allFinite(&out.clip.translations[0].x, cells * 3) &&
                       allFinite(&out.velocities[0].x, cells * 3) &&
                       allFinite(&out.angular_velocities[0].x, cells * 3))) &&
      allFinite(&out.root[0].position.x, frames * sizeof(CookedRootFrame) / sizeof(float)) &&
      allFinite(out.features.data(), out.features.size());
  if (!finite) refuse(where, "it holds values that are not finite");
  for (uint32_t c : out.contacts)
    if (c > 3) refuse(where, "a contact holds bits beyond the two toes");
  checkMotionValues(out, joint_names, where);
  return out;
}

}  // namespace

ClipFileBytes serializeClipFile(const std::string& key, const ClipPart& part) {
  FlatBufferBuilder fbb(1024 + part.motion.clip.rotations.size() * 64 * (part.mirror ? 2 : 1));
  // The pose streams first: a builder fills its buffer from the end, so they become the buffer's
  // bulk, its last bytes, which a reader that needs no poses neither checksums nor reads.
  const PoseVectors motion_poses = writePoseVectors(fbb, part.motion);
  PoseVectors mirror_poses;
  if (part.mirror) mirror_poses = writePoseVectors(fbb, *part.mirror);
  const size_t bulk_bytes = fbb.GetSize();
  auto version = fbb.CreateString(kCookerVersion);
  auto key_offset = fbb.CreateString(key);
  auto take = fbb.CreateString(part.take);
  auto origin = fbb.CreateString(part.unit.origin);
  const Skeleton& s = part.skeleton;
  auto skeleton = fb::CreateSkeleton(fbb, stringVector(fbb, s.names), fbb.CreateVector(s.parents),
                                     structVector<fb::Vec3>(fbb, s.offsets),
                                     structVector<fb::Quat>(fbb, s.bind_rotations));
  auto motion = writeMotion(fbb, part.motion, motion_poses);
  Offset<fb::Motion> mirror =
      part.mirror ? writeMotion(fbb, *part.mirror, mirror_poses) : Offset<fb::Motion>();
  fb::ClipBuilder clip(fbb);
  clip.add_format_major(kClipFormatMajor);
  clip.add_format_minor(kClipFormatMinor);
  clip.add_cooker_version(version);
  clip.add_key(key_offset);
  clip.add_source_hash(part.source.content_hash);
  clip.add_source_size(part.source.size_bytes);
  clip.add_source_format(static_cast<int8_t>(part.source.format));
  clip.add_source_frame_rate(part.source_rate);
  clip.add_source_frame_count(part.source_frames);
  clip.add_take(take);
  clip.add_unit_scale(part.unit.scale);
  clip.add_unit_scale_origin(origin);
  clip.add_standing_hip_height(part.hip_height);
  clip.add_inferred_unit_scale(part.inferred_scale);
  clip.add_skeleton(skeleton);
  clip.add_motion(motion);
  if (part.mirror) clip.add_mirror(mirror);
  fbb.Finish(clip.Finish(), fb::ClipIdentifier());
  return IntermediateBytes::seal(fbb, fbb.GetSize() - bulk_bytes);
}

ClipFile parseClipFile(const uint8_t* data, size_t size, const std::string& what, PartPoses poses) {
  if (size < 8 + kTrailerBytes || !flatbuffers::BufferHasIdentifier(data, fb::ClipIdentifier()))
    refuse(what, "it is not an .mmclip file (no MMCL identifier)");
  if (!checksumsHold(data, size, poses == PartPoses::Read))
    refuse(what, "its checksum does not match: the file is damaged");
  flatbuffers::Verifier verifier(data, size - kTrailerBytes, flatbuffers::Verifier::Options{});
  if (!fb::VerifyClipBuffer(verifier)) refuse(what, "its FlatBuffers structure is damaged");
  const fb::Clip* c = fb::GetClip(data);
  const std::string version =
      versionProblem(".mmclip", kClipFormatMajor, c->format_major(), c->format_minor(),
                     c->cooker_version() ? c->cooker_version()->c_str() : nullptr);
  if (!version.empty()) refuse(what, version);
  if (!c->key() || !c->take() || !c->unit_scale_origin() || !c->skeleton())
    refuse(what, "a field is missing");

  ClipFile out;
  out.key = c->key()->str();
  ClipPart& p = out.part;
  const fb::Skeleton* s = c->skeleton();
  p.skeleton.names = fromStrings(s->names());
  p.skeleton.parents = fromScalars(s->parents());
  p.skeleton.offsets = fromStructs<glm::vec3>(s->offsets());
  p.skeleton.bind_rotations = fromStructs<glm::quat>(s->bind_rotations());
  validateSkeleton(p.skeleton, what);
  const size_t joints = p.skeleton.names.size();
  if (!allFinite(&p.skeleton.offsets[0].x, joints * 3) ||
      !allFinite(&p.skeleton.bind_rotations[0].x, joints * 4))
    refuse(what, "its skeleton holds values that are not finite");
  for (size_t j = 0; j < joints; ++j)
    if (!unitLength(p.skeleton.bind_rotations[j]))
      refuse(what, fmt::format("the bind rotation of joint {} ({}) has length {}, not 1", j,
                               p.skeleton.names[j], lengthOf(p.skeleton.bind_rotations[j])));

  p.source.content_hash = c->source_hash();
  p.source.size_bytes = c->source_size();
  const int format = c->source_format();
  if (format < static_cast<int>(SourceFormat::Bvh) ||
      format > static_cast<int>(SourceFormat::Other))
    refuse(what, "its source format is unknown");
  p.source.format = static_cast<SourceFormat>(format);
  p.source_rate = c->source_frame_rate();
  p.source_frames = c->source_frame_count();
  p.take = c->take()->str();
  p.unit.scale = c->unit_scale();
  p.unit.origin = c->unit_scale_origin()->str();
  p.hip_height = c->standing_hip_height();
  p.inferred_scale = c->inferred_unit_scale();
  if (!(p.source_rate >= kMinFrameRate && p.source_rate <= kMaxFrameRate) || p.source_frames < 1 ||
      !(p.unit.scale > 0) || !std::isfinite(p.unit.scale) || !std::isfinite(p.hip_height) ||
      !std::isfinite(p.inferred_scale) || p.inferred_scale < 0)
    refuse(what, "its source rate, frame count or unit is out of range");
  p.motion = readMotion(c->motion(), p.skeleton.names, what, "motion", poses);
  if (c->mirror()) {
    p.mirror = readMotion(c->mirror(), p.skeleton.names, what, "mirrored motion", poses);
    if (p.mirror->clip.frame_count != p.motion.clip.frame_count)
      refuse(what, fmt::format("its mirrored motion has {} frames, its motion {}",
                               p.mirror->clip.frame_count, p.motion.clip.frame_count));
  }
  return out;
}

ClipFile readClipFile(const std::string& path, PartPoses poses) {
  const std::string what_to_do = "give the path of an .mmclip file";
  if (poses == PartPoses::Skip) {  // the part before the pose streams, into a reused buffer
    thread_local HeadReader reader;
    const std::span<const uint8_t> bytes = reader.read(path, what_to_do);
    if (bytes.size() > kMaxDatabaseBytes) refuse(path, "it is larger than any clip part can be");
    return parseClipFile(bytes.data(), bytes.size(), path, poses);
  }
  const MappedFile file(path, what_to_do);
  if (file.size() > kMaxDatabaseBytes) refuse(path, "it is larger than any clip part can be");
  return parseClipFile(file.data(), file.size(), path, poses);
}

std::pair<std::string, std::string> firstDifferingLines(const std::string& a,
                                                        const std::string& b) {
  size_t ia = 0, ib = 0;
  while (ia < a.size() || ib < b.size()) {
    const size_t ea = std::min(a.find('\n', ia), a.size());
    const size_t eb = std::min(b.find('\n', ib), b.size());
    std::string la = a.substr(ia, ea - ia), lb = b.substr(ib, eb - ib);
    if (la != lb) return {std::move(la), std::move(lb)};
    ia = ea + 1;
    ib = eb + 1;
  }
  return {};
}

std::string firstKeyDifference(const std::string& a, const std::string& b) {
  const auto [la, lb] = firstDifferingLines(a, b);
  return la == lb ? "none" : "'" + la + "' against '" + lb + "'";
}

}  // namespace mmdb::cook
