#include "cli/inspect.h"

#include "cli/json_writer.h"
#include "core/errors.h"
#include "import/importer.h"
#include "review/replay.h"

#include <mmdb/database.h>
#include <mmdb/mmdb_generated.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

namespace mmdb::cook {
namespace {

namespace fb = mmdb::fb;

std::string format(const char* fmt, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

template <typename T>
uint32_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

// The elements of an optional vector: none when the field is absent. Every optional field of
// the file (database.h lists them) is read through this or a null check.
template <typename T>
struct Items {
  using Iterator = typename flatbuffers::Vector<T>::const_iterator;
  const flatbuffers::Vector<T>* v;
  Iterator begin() const { return v ? v->begin() : Iterator(); }
  Iterator end() const { return v ? v->end() : Iterator(); }
};
template <typename T>
Items<T> items(const flatbuffers::Vector<T>* v) {
  return {v};
}

std::vector<std::string> tagNames(const fb::Database& db, uint64_t mask) {
  std::vector<std::string> out;
  for (uint32_t bit = 0; bit < 64; ++bit)
    if (mask & (uint64_t{1} << bit))
      out.push_back(bit < count(db.tag_names()) ? str(db.tag_names()->Get(bit))
                                                : "bit" + std::to_string(bit));
  return out;
}

std::string joinedTags(const fb::Database& db, uint64_t mask) {
  std::string out;
  for (const std::string& tag : tagNames(db, mask)) out += (out.empty() ? "" : ", ") + tag;
  return out.empty() ? "-" : out;
}

const char* formatName(fb::SourceFormat format) {
  switch (format) {
    case fb::SourceFormat::Bvh:
      return "bvh";
    case fb::SourceFormat::Fbx:
      return "fbx";
    default:
      return "other";
  }
}

const char* kindName(fb::FeatureKind kind) {
  switch (kind) {
    case fb::FeatureKind::Position:
      return "position";
    case fb::FeatureKind::Velocity:
      return "velocity";
    case fb::FeatureKind::TrajectoryPosition:
      return "trajectory_position";
    case fb::FeatureKind::TrajectoryDirection:
      return "trajectory_direction";
  }
  return "unknown";
}

const char* roleName(fb::Role role) {
  switch (role) {
    case fb::Role::Hips:
      return "hips";
    case fb::Role::LeftFoot:
      return "left_foot";
    case fb::Role::RightFoot:
      return "right_foot";
    case fb::Role::LeftToe:
      return "left_toe";
    case fb::Role::RightToe:
      return "right_toe";
    case fb::Role::RootPosition:
      return "root_position";
    case fb::Role::Facing:
      return "facing";
  }
  return "unknown";
}

std::string jointName(const fb::Database& db, int joint) {
  const auto* names = db.skeleton() ? db.skeleton()->names() : nullptr;
  return joint >= 0 && static_cast<uint32_t>(joint) < count(names) ? str(names->Get(joint)) : "-";
}

// The facing axis, or its default (+Z) when the file has none.
fb::Vec4 facingAxis(const fb::Skeleton& sk) {
  return sk.facing_axis() ? *sk.facing_axis() : fb::Vec4(0, 0, 1, 0);
}

struct Section {
  const char* name;
  uint32_t count;
  size_t element_bytes;
  size_t bytes() const { return size_t(count) * element_bytes; }
};

// A pose stream: raw Vec4s, or, when coded, its tracks, segment offsets and data as bytes.
Section poseSection(const char* raw_name, const char* coded_name,
                    const flatbuffers::Vector<const fb::Vec4*>* raw, const fb::CodedStream* coded) {
  if (!coded) return {raw_name, count(raw), sizeof(fb::Vec4)};
  const size_t bytes = size_t(count(coded->tracks())) * sizeof(fb::PoseTrack) +
                       size_t(count(coded->segment_offsets())) * sizeof(uint32_t) +
                       count(coded->data());
  return {coded_name, uint32_t(bytes), 1};
}

// The arrays that make up the bulk of a file, in schema order.
std::vector<Section> sections(const fb::Database& db) {
  const fb::PoseCoding* c = db.pose_coding();
  return {
      poseSection("local_rotations", "local_rotations (coded)", db.local_rotations(),
                  c ? c->rotations() : nullptr),
      poseSection("local_translations", "local_translations (coded)", db.local_translations(),
                  c ? c->translations() : nullptr),
      poseSection("local_velocities", "local_velocities (coded)", db.local_velocities(),
                  c ? c->velocities() : nullptr),
      poseSection("local_angular_velocities", "local_angular_velocities (coded)",
                  db.local_angular_velocities(), c ? c->angular_velocities() : nullptr),
      {"root_motion", count(db.root_motion()), sizeof(fb::RootFrame)},
      {"contacts", count(db.contacts()), sizeof(uint32_t)},
      {"features", count(db.features()), sizeof(float)},
      {"feature_offset", count(db.feature_offset()), sizeof(float)},
      {"feature_scale", count(db.feature_scale()), sizeof(float)},
      {"bounds_small_min", count(db.bounds_small_min()), sizeof(float)},
      {"bounds_small_max", count(db.bounds_small_max()), sizeof(float)},
      {"bounds_large_min", count(db.bounds_large_min()), sizeof(float)},
      {"bounds_large_max", count(db.bounds_large_max()), sizeof(float)},
      {"ranges", count(db.ranges()), sizeof(fb::MatchRange)},
      {"skeleton.bind_translations", db.skeleton() ? count(db.skeleton()->bind_translations()) : 0,
       sizeof(fb::Vec4)},
      {"skeleton.bind_rotations", db.skeleton() ? count(db.skeleton()->bind_rotations()) : 0,
       sizeof(fb::Vec4)},
  };
}

// How the pose streams are stored: per stream, the tracks of each coding and what the cook
// measured. Null streams are raw.
struct PoseStreamSummary {
  const char* name;
  const char* error_unit;
  const fb::CodedStream* coded;
  uint32_t codings[4] = {0, 0, 0, 0};  // Constant, Quaternion, Exponent, Lossless
};

std::vector<PoseStreamSummary> poseStreams(const fb::Database& db) {
  const fb::PoseCoding* c = db.pose_coding();
  std::vector<PoseStreamSummary> out = {
      {"local_rotations", "m", c ? c->rotations() : nullptr},
      {"local_translations", "m", c ? c->translations() : nullptr},
      {"local_velocities", "m/s", c ? c->velocities() : nullptr},
      {"local_angular_velocities", "rad/s", c ? c->angular_velocities() : nullptr}};
  for (PoseStreamSummary& p : out)
    if (p.coded)
      for (uint32_t j = 0; j < count(p.coded->tracks()); ++j) {
        const unsigned coding = unsigned(p.coded->tracks()->Get(j)->coding());
        if (coding < 4) ++p.codings[coding];
      }
  return out;
}

double durationSeconds(uint32_t frames, float rate) {
  return rate > 0 ? double(frames) / rate : 0.0;
}

// The sections of `inspect`, in the order printed.
void printSkeleton(const fb::Database& db, std::ostream& out) {
  const fb::Skeleton& sk = *db.skeleton();
  out << "skeleton    preset " << (str(sk.preset()).empty() ? "(none)" : str(sk.preset()))
      << format(", facing axis (%g, %g, %g)%s\n", facingAxis(sk).x(), facingAxis(sk).y(),
                facingAxis(sk).z(), sk.facing_axis() ? "" : " (absent: default)");
  for (const fb::RoleBinding* role : items(sk.roles()))
    out << format("  %-14s %s (joint %d)\n", roleName(role->role()),
                  jointName(db, role->joint()).c_str(), role->joint());
  out << "  contacts      ";
  for (uint32_t i = 0; i < count(sk.contact_joints()); ++i)
    out << (i ? ", " : "")
        << format("bit %u = %s", i, jointName(db, sk.contact_joints()->Get(i)).c_str());
  out << "\n";
}

void printSources(const fb::Database& db, std::ostream& out) {
  out << format("sources     %u\n", count(db.sources()));
  for (uint32_t i = 0; i < count(db.sources()); ++i) {
    const fb::Source* src = db.sources()->Get(i);
    out << format("  [%u] %s  %s, %" PRIu64 " bytes, fnv1a64 %016" PRIx64 "\n", i,
                  str(src->path()).c_str(), formatName(src->format()), src->size_bytes(),
                  src->content_hash());
  }
}

void printClips(const fb::Database& db, std::ostream& out) {
  out << format("clips       %u (global frames first..last)\n", count(db.clips()));
  for (uint32_t i = 0; i < count(db.clips()); ++i) {
    const fb::Clip* c = db.clips()->Get(i);
    const uint32_t last = c->first_frame() + (c->frame_count() ? c->frame_count() - 1 : 0);
    out << format("  [%u] %-24s %7u..%-7u (%u frames, %.2f s)  source %d", i,
                  str(c->name()).c_str(), c->first_frame(), last, c->frame_count(),
                  durationSeconds(c->frame_count(), db.frame_rate()), c->source_index());
    if (!str(c->take()).empty()) out << " take '" << str(c->take()) << "'";
    out << format(
        ", source frames %u..%u at %g Hz", c->source_first_frame(),
        c->source_first_frame() + c->source_frame_count() - (c->source_frame_count() ? 1 : 0),
        c->source_frame_rate());
    if (c->mirrored()) out << format(", mirror of clip %d", c->mirror_of());
    if (c->bias() != 0) out << format(", bias %g", c->bias());
    out << "  tags: " << joinedTags(db, c->tag_mask()) << "\n";
  }
}

void printTagNames(const fb::Database& db, std::ostream& out) {
  out << "tags        ";
  for (uint32_t i = 0; i < count(db.tag_names()); ++i)
    out << (i ? ", " : "") << format("bit %u = %s", i, str(db.tag_names()->Get(i)).c_str());
  out << (count(db.tag_names()) ? "\n" : "(none)\n");
}

// A range's cost bias (2.1; 0 when the file stores none).
float rangeBias(const fb::Database& db, uint32_t range) {
  return range < count(db.range_biases()) ? db.range_biases()->Get(range) : 0.f;
}

void printRanges(const fb::Database& db, std::ostream& out) {
  uint64_t matchable = 0;
  for (const fb::MatchRange* r : items(db.ranges())) matchable += r->frame_count();
  out << format("matchable   %" PRIu64 " of %u frames in %u ranges (global frames first..last)\n",
                matchable, db.frame_count(), count(db.ranges()));
  for (uint32_t i = 0; i < count(db.ranges()); ++i) {
    const fb::MatchRange* r = db.ranges()->Get(i);
    const float bias = rangeBias(db, i);
    out << format("  %7u..%-7u (%u frames)  ", r->first_frame(),
                  r->first_frame() + r->frame_count() - 1, r->frame_count());
    if (bias != 0) out << format("bias %g  ", bias);
    out << "tags: " << joinedTags(db, r->tag_mask()) << "\n";
  }
}

void printFeatureBlocks(const fb::Database& db, std::ostream& out) {
  out << "feature blocks (columns, std in raw units, weight)\n";
  for (const fb::FeatureBlock* b : items(db.feature_blocks()))
    out << format("  %-24s %-20s joint %-3d columns %2u..%-2u std %-10.6g weight %g\n",
                  str(b->name()).c_str(), kindName(b->kind()), b->joint(), b->first_column(),
                  b->first_column() + b->width() - 1, b->std(), b->weight());
}

void printPoseCoding(const fb::Database& db, std::ostream& out) {
  if (const fb::PoseCoding* pc = db.pose_coding()) {
    out << format(
        "poses       coded in segments of %u frames, within %g mm (shell %g mm), %g m/s, "
        "%g rad/s\n",
        pc->segment_frames(), pc->position_tolerance() * 1000.0, pc->shell_distance() * 1000.0,
        pc->velocity_tolerance(), pc->angular_velocity_tolerance());
    for (const PoseStreamSummary& p : poseStreams(db)) {
      if (!p.coded) {
        out << format("  %-26s raw\n", p.name);
        continue;
      }
      out << format(
          "  %-26s %u constant, %u quaternion, %u exponent, %u lossless tracks; worst "
          "%g %s at joint %s, global frame %u\n",
          p.name, p.codings[0], p.codings[1], p.codings[2], p.codings[3], p.coded->max_error(),
          p.error_unit, jointName(db, p.coded->worst_joint()).c_str(), p.coded->worst_frame());
    }
  } else {
    out << "poses       raw\n";
  }
}

void printSections(const fb::Database& db, std::ostream& out) {
  out << "sections (bytes)\n";
  for (const Section& section : sections(db))
    out << format("  %-28s %10zu  (%u x %zu)\n", section.name, section.bytes(), section.count,
                  section.element_bytes);
}

// The names (schema/mmdb.fbs RequiredFeature) of the required_features bits a file sets.
std::vector<std::string> requiredFeatureNames(const fb::Database& db) {
  std::vector<std::string> names;
  for (const fb::RequiredFeature bit : fb::EnumValuesRequiredFeature())
    if (db.required_features() & static_cast<uint64_t>(bit))
      names.emplace_back(fb::EnumNameRequiredFeature(bit));
  return names;
}

void printText(const std::string& path, const mmdb::Database& database, std::ostream& out) {
  const fb::Database& db = *database.flatbuffer();
  // Settings and skeleton are required at open; their vectors and the rest may be absent.
  const fb::CookSettings& s = *db.settings();
  out << "file        " << path << " (" << database.bytes().size() << " bytes)\n";
  out << format("schema      %u.%u\n", db.version()->major(), db.version()->minor());
  out << "cooker      " << str(db.cooker_version()) << "\n";
  std::string required;
  for (const std::string& name : requiredFeatureNames(db))
    required += (required.empty() ? "" : ", ") + name;
  out << "requires    " << (required.empty() ? "none" : required) << "\n";
  out << format("frames      %u at %g Hz (%.2f s), global frames 0..%u\n", db.frame_count(),
                db.frame_rate(), durationSeconds(db.frame_count(), db.frame_rate()),
                db.frame_count() ? db.frame_count() - 1 : 0);
  out << format("joints      %u\n", db.joint_count());
  out << format("features    %u per frame, rows %u floats apart\n", db.feature_count(),
                db.feature_stride());
  out << format(
      "settings    unit scale %g m, root position window %u frames, facing window %u "
      "frames, order %u,\n            contact speed %g m/s, contact median %u frames, "
      "trailing unmatchable %u frames,\n            trajectory times",
      s.unit_scale(), s.root_position_window(), s.facing_window(), s.savitzky_golay_order(),
      s.contact_speed_threshold(), s.contact_median_frames(), s.trailing_unmatchable_frames());
  for (float t : items(s.trajectory_times())) out << format(" %g", t);
  out << " s\n";
  printSkeleton(db, out);
  printSources(db, out);
  printClips(db, out);
  printTagNames(db, out);
  printRanges(db, out);
  printFeatureBlocks(db, out);
  printPoseCoding(db, out);
  printSections(db, out);
}

void writeTags(JsonWriter& json, const fb::Database& db, uint64_t mask) {
  json.key("tags").beginArray();
  for (const std::string& tag : tagNames(db, mask)) json.value(tag);
  json.endArray();
}

// The sections of `inspect --json`: one function per key of the top object.
void writeSettings(JsonWriter& json, const fb::Database& db) {
  const fb::CookSettings& s = *db.settings();
  json.key("settings").beginObject();
  json.field("frame_rate", s.frame_rate()).field("unit_scale", s.unit_scale());
  json.field("root_position_window", unsigned{s.root_position_window()});
  json.field("facing_window", unsigned{s.facing_window()});
  json.field("savitzky_golay_order", unsigned{s.savitzky_golay_order()});
  json.field("contact_speed_threshold", s.contact_speed_threshold());
  json.field("contact_median_frames", unsigned{s.contact_median_frames()});
  json.field("trailing_unmatchable_frames", unsigned{s.trailing_unmatchable_frames()});
  json.key("trajectory_times").beginArray();
  for (float t : items(s.trajectory_times())) json.value(t);
  json.endArray();
  json.key("block_weights").beginArray();
  for (float w : items(s.block_weights())) json.value(w);
  json.endArray();
  json.endObject();
}

void writeSkeleton(JsonWriter& json, const fb::Database& db) {
  const fb::Skeleton& sk = *db.skeleton();
  json.key("skeleton").beginObject();
  json.field("preset", str(sk.preset()));
  json.key("joints").beginArray();
  for (uint32_t j = 0; j < count(sk.names()); ++j)
    json.beginObject()
        .field("name", str(sk.names()->Get(j)))
        .field("parent", j < count(sk.parents()) ? sk.parents()->Get(j) : -1)
        .endObject();
  json.endArray();
  json.key("roles").beginObject();
  for (const fb::RoleBinding* role : items(sk.roles()))
    json.key(roleName(role->role()))
        .beginObject()
        .field("joint", role->joint())
        .field("name", jointName(db, role->joint()))
        .endObject();
  json.endObject();
  json.key("facing_axis")
      .beginArray()
      .value(facingAxis(sk).x())
      .value(facingAxis(sk).y())
      .value(facingAxis(sk).z())
      .endArray();
  json.key("contact_joints").beginArray();
  for (int32_t j : items(sk.contact_joints())) json.value(jointName(db, j));
  json.endArray();
  json.endObject();
}

void writeSources(JsonWriter& json, const fb::Database& db) {
  json.key("sources").beginArray();
  for (const fb::Source* src : items(db.sources()))
    json.beginObject()
        .field("path", str(src->path()))
        .field("format", formatName(src->format()))
        .field("size_bytes", src->size_bytes())
        .field("content_hash", format("%016" PRIx64, src->content_hash()))
        .endObject();
  json.endArray();
}

void writeClips(JsonWriter& json, const fb::Database& db) {
  json.key("clips").beginArray();
  for (const fb::Clip* c : items(db.clips())) {
    json.beginObject()
        .field("name", str(c->name()))
        .field("first_frame", c->first_frame())
        .field("frame_count", c->frame_count())
        .field("source_index", c->source_index())
        .field("take", str(c->take()))
        .field("source_frame_rate", c->source_frame_rate())
        .field("source_first_frame", c->source_first_frame())
        .field("source_frame_count", c->source_frame_count())
        .field("mirrored", c->mirrored())
        .field("mirror_of", c->mirror_of())
        .field("bias", c->bias());
    writeTags(json, db, c->tag_mask());
    json.endObject();
  }
  json.endArray();
}

void writeTagNames(JsonWriter& json, const fb::Database& db) {
  json.key("tag_names").beginArray();
  for (const auto* tag : items(db.tag_names())) json.value(str(tag));
  json.endArray();
}

void writeRanges(JsonWriter& json, const fb::Database& db) {
  json.key("ranges").beginArray();
  for (uint32_t i = 0; i < count(db.ranges()); ++i) {
    const fb::MatchRange* r = db.ranges()->Get(i);
    json.beginObject()
        .field("first_frame", r->first_frame())
        .field("frame_count", r->frame_count())
        .field("bias", rangeBias(db, i));
    writeTags(json, db, r->tag_mask());
    json.endObject();
  }
  json.endArray();
}

void writeFeatureBlocks(JsonWriter& json, const fb::Database& db) {
  json.key("feature_blocks").beginArray();
  for (const fb::FeatureBlock* b : items(db.feature_blocks()))
    json.beginObject()
        .field("name", str(b->name()))
        .field("kind", kindName(b->kind()))
        .field("joint", b->joint())
        .field("first_column", unsigned{b->first_column()})
        .field("width", unsigned{b->width()})
        .field("std", b->std())
        .field("weight", b->weight())
        .endObject();
  json.endArray();
}

void writePoseCoding(JsonWriter& json, const fb::Database& db) {
  json.key("pose_coding");
  if (const fb::PoseCoding* pc = db.pose_coding()) {
    json.beginObject().field("segment_frames", pc->segment_frames());
    json.field("position_tolerance", pc->position_tolerance());
    json.field("shell_distance", pc->shell_distance());
    json.field("velocity_tolerance", pc->velocity_tolerance());
    json.field("angular_velocity_tolerance", pc->angular_velocity_tolerance());
    json.key("streams").beginArray();
    for (const PoseStreamSummary& p : poseStreams(db)) {
      json.beginObject().field("name", std::string(p.name)).field("coded", p.coded != nullptr);
      if (p.coded) {
        json.field("constant_tracks", p.codings[0]).field("quaternion_tracks", p.codings[1]);
        json.field("exponent_tracks", p.codings[2]).field("lossless_tracks", p.codings[3]);
        json.field("max_error", p.coded->max_error());
        json.field("worst_joint", jointName(db, p.coded->worst_joint()));
        json.field("worst_frame", p.coded->worst_frame());
      }
      json.endObject();
    }
    json.endArray().endObject();
  } else {
    json.null();
  }
}

void writeSections(JsonWriter& json, const fb::Database& db) {
  json.key("sections").beginObject();
  for (const Section& section : sections(db))
    json.key(section.name)
        .beginObject()
        .field("count", section.count)
        .field("bytes", uint64_t{section.bytes()})
        .endObject();
  json.endObject();
}

void printJson(const std::string& path, const mmdb::Database& database, std::ostream& out) {
  const fb::Database& db = *database.flatbuffer();
  JsonWriter json(out);
  json.beginObject();
  json.field("file", path).field("file_size", uint64_t{database.bytes().size()});
  json.key("schema_version").beginObject();
  json.field("major", unsigned{db.version()->major()})
      .field("minor", unsigned{db.version()->minor()});
  json.endObject();
  json.field("cooker_version", str(db.cooker_version()));
  json.key("required_features").beginArray();
  for (const std::string& name : requiredFeatureNames(db)) json.value(name);
  json.endArray();
  json.field("frame_rate", db.frame_rate()).field("frame_count", db.frame_count());
  json.field("duration_s", durationSeconds(db.frame_count(), db.frame_rate()));
  json.field("joint_count", db.joint_count());
  json.field("feature_count", unsigned{db.feature_count()});
  json.field("feature_stride", unsigned{db.feature_stride()});
  writeSettings(json, db);
  writeSkeleton(json, db);
  writeSources(json, db);
  writeClips(json, db);
  writeTagNames(json, db);
  writeRanges(json, db);
  writeFeatureBlocks(json, db);
  writePoseCoding(json, db);
  writeSections(json, db);
  json.endObject();
}

}  // namespace

void inspectDatabase(const std::string& path, bool json, std::ostream& out) {
  mmdb::OpenOptions options;
  options.half_features = false;  // nothing here searches
  mmdb::Result<mmdb::Database> opened = mmdb::Database::open(path.c_str(), options);
  if (!opened)
    throw InputError("cannot inspect '" + path + "': " +
                     mmdb::errorCodeName(opened.error().code()) + ": " + opened.error().message());
  // Coded poses decode when they play, not at open: a damaged segment would open and fail later.
  if (const mmdb::Status poses = mmcook::review::checkPoses(opened.value()); !poses)
    throw InputError("cannot inspect '" + path + "': its poses do not decode: " +
                     mmdb::errorCodeName(poses.code()) + ": " + poses.message());
  if (json)
    printJson(path, opened.value(), out);
  else
    printText(path, opened.value(), out);
}

void inspectSource(const std::string& path, std::ostream& out) {
  const SourceInfo info = inspectSourceFile(path);
  out << "file        " << info.path << " (" << info.format << ")\n";
  if (info.declared_unit_scale > 0)
    out << format("unit scale  %g m per unit (declared by the file)\n", info.declared_unit_scale);
  else
    out << "unit scale  not declared (set by a preset, the manifest or inferred at cook time)\n";
  for (const std::string& note : info.notes) out << "note        " << note << "\n";
  if (info.takes.empty())
    out << "note        no animation take: this file cannot be cooked as a clip\n";
  out << format("takes       %zu (source frames first..last)\n", info.takes.size());
  for (size_t i = 0; i < info.takes.size(); ++i) {
    const SourceTake& take = info.takes[i];
    out << format("  [%zu] '%s'  %d frames at %g Hz (0..%d), %.2f s\n", i, take.name.c_str(),
                  take.frame_count, take.frame_rate,
                  take.frame_count > 0 ? take.frame_count - 1 : 0, take.duration_s);
  }
  const Skeleton& sk = info.skeleton;
  out << format("joints      %d (index, name, parent, bind offset in source units)\n",
                sk.jointCount());
  for (int j = 0; j < sk.jointCount(); ++j) {
    int depth = 0;
    for (int p = sk.parents[j]; p >= 0 && depth < 64; p = sk.parents[p]) ++depth;
    const glm::vec3 o = j < static_cast<int>(sk.offsets.size()) ? sk.offsets[j] : glm::vec3(0);
    out << format("  %3d %*s%-*s parent %3d  offset (%g, %g, %g)\n", j, depth * 2, "",
                  std::max(1, 28 - depth * 2), sk.names[j].c_str(), sk.parents[j], o.x, o.y, o.z);
  }
}

}  // namespace mmdb::cook
