// The whole cook, in two halves (docs/cook.md "Order of the stages"):
//  - per clip (cookClipPart): import, units, resample, mirror, root motion, velocities, contacts
//    and raw features. Pure: a clip's part depends only on the inputs its key names (clipKey),
//    so a ClipStore may keep it and give it back instead of cooking it again;
//  - per database (in cookDatabase, after every part): normalization, tags, ranges, bounds and,
//    for PoseOutput::Coded, the pose coding. The coding depends only on the parts and the
//    [compression] settings (poseCodingKey), so a ClipStore may keep it too.
// Deterministic: the result does not depend on request.jobs, nor on which parts came from a store.
#pragma once

#include "compress/pose_compression.h"
#include "cook/clip_stages.h"
#include "cook/skeleton_presets.h"
#include "cook/units.h"
#include "core/cook_settings.h"
#include "core/cooked_database.h"
#include "core/raw_clip.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mmdb::cook {

// A warning of the cook, as logged, with the clip it is about when it is about one.
struct CookWarning {
  std::string code;       // stable: docs/cook-report.md "Warning codes"
  std::string text;       // the whole message
  std::string file;       // the file it is about (a source as opened), or ""
  int line = 0;           // the line in `file`, or 0
  std::string source;     // the clip's source as the manifest names it, or ""
  std::string clip;       // the clip's name, or ""
  int manifest_line = 0;  // the clip's [[clip]] line in the manifest, or 0
};

// Where the clips' parts came from, when the cook had a store.
struct ClipStoreCounts {
  bool used = false;
  int hits = 0;     // parts the store gave back: nothing imported
  int misses = 0;   // parts cooked (and handed to the store)
  int refused = 0;  // entries the store held but refused (corrupt, foreign, other version)
  bool coded_poses_found = false;  // the pose coding came from the store: nothing was coded
  int sources_unread = 0;          // sources whose hash the store remembered: not read
};

// One role of the skeleton and the joint that plays it.
struct RoleJoint {
  std::string role;   // as the manifest spells it: "hips", "left_foot", ...
  std::string joint;  // the joint's name
  int index = 0;      // the joint's index in the database's skeleton
};

// The wall time of one part of the cook. `id` is stable: "source-hashes", "clips", "assembly",
// "pose-compression", "serialization", "write" (docs/cook-report.md).
struct CookStage {
  std::string id;
  double seconds = 0;
  bool from_store = false;  // "clips" and "pose-compression": the store gave every part
};

// What a cook did and found. A cook that fails leaves in it what it found until then (the
// warnings, for one).
struct CookReport {
  std::string preset;                   // role preset picked ("" when all roles were given)
  std::vector<std::string> role_lines;  // "left_foot: LeftFoot (joint 4)", ...
  std::vector<RoleJoint> roles;         // the same, as fields
  double unit_scale = 0;                // metres per source unit that was applied
  std::string unit_scale_origin;      // "manifest", "file", "preset" or "inferred from hip height"
  long long source_frames = 0;        // frames read from the sources
  std::vector<CookWarning> warnings;  // also logged as they happen
  std::vector<CookStage> stages;      // in order
  ClipStoreCounts store;
  CompressionReport compression;  // PoseOutput::Coded
};

// One clip of the manifest after every per-clip stage: what a .mmclip file holds.
struct ClipPart {
  CookedSource source;     // hash, size and format (the path is the manifest's)
  Skeleton skeleton;       // as imported: offsets in source units
  double source_rate = 0;  // Hz
  int source_frames = 0;   // source frames read, after the manifest's frame range
  std::string take;
  UnitScale unit;
  double hip_height = 0;      // standing, metres
  double inferred_scale = 0;  // the database's first clip: ClipContext::inferred_scale
  ClipMotion motion;          // motion.clip holds name, frame_count, rotations and translations
  std::optional<ClipMotion> mirror;
};

// What the database's first clip fixes for every clip: the skeleton, the roles and the unit of a
// clip whose file declares none when neither the manifest nor the preset gives one: the first
// clip's declared unit, or else the one its standing hip height implies.
struct ClipContext {
  Skeleton skeleton;
  SkeletonRoles roles;
  double inferred_scale = 0;
  std::string inferred_origin;  // kUnitFromFirstClipsFile or "inferred from hip height"
  std::string first_where;      // "clip walk (walk.bvh, manifest line 3)"
};
// Throws InputError when the roles do not resolve on the first clip's skeleton.
ClipContext clipContext(const CookRequest& request, const ClipPart& first);

// Every input that clip `index`'s part depends on, as text: the cooker's version, the source's
// content hash and size, the clip's manifest entry, the per-clip settings and, for a clip after the
// first, the context (roles, units) of the first clip. Weights, tags, ranges and the trailing
// unmatchable time are not in it: a change to those re-links without re-cooking any clip.
std::string clipKey(const CookRequest& request, int index, const CookedSource& source,
                    const ClipContext* context);

// What clip `index`'s part depends on in the manifest alone, as text: the source's path and the
// key's manifest lines (clipKey without the source's content or the first clip's context). A
// build keeps it in a file per clip (mmcook cook-entries) and makes the clip's edge depend on that
// file, not on the whole manifest: a weight edit changes no clip's entry.
std::string clipEntryText(const CookRequest& request, int index);

// Every input the database's pose coding depends on, as text: the cooker's version, the
// [compression] settings and, in order, a hash of each clip's key (the clips' poses, one after
// another, are the streams it codes). Weights, tags and ranges are not in it.
std::string poseCodingKey(const CookRequest& request, const std::vector<std::string>& clip_keys);

// FNV-1a 64 hash, size and format of a source file; `label` is the path to record.
CookedSource hashSource(const std::string& path, const std::string& label);
// hashSource() of up to kSourcesHashedTogether clips' sources at once (Fnv1a64::addFour), read
// side by side: out[i] for specs[i] when ok[i]. A file that cannot be opened or read is left out
// (ok[i] false), for the caller to report, e.g. with hashSource()'s error or its importer's.
inline constexpr size_t kSourcesHashedTogether = 4;
void hashSourcesTogether(const std::vector<const ClipSpec*>& specs, CookedSource* out, bool* ok);

// Cooks clip `index` from its source. `context` is null for the first clip (index 0), which
// makes its own. Throws InputError for anything a user can fix.
ClipPart cookClipPart(const CookRequest& request, int index, const CookedSource& source,
                      const ClipContext* context);

// Whether a part is needed with its four pose streams (rotations, translations, velocities,
// angular velocities) or only with the rest (root motion, contacts, features, ...).
enum class PartPoses { Read, Skip };

// A database's pose coding as a store keeps it, with the counts it codes.
struct StoredPoseCoding {
  uint32_t frame_count = 0;
  uint32_t joint_count = 0;
  CookedPoseCoding coding;
};

// Keeps clip parts between cooks (a cache folder, or the .mmclip files given to a link).
// Called from the cooking threads, so an implementation must be thread-safe.
class ClipStore {
 public:
  virtual ~ClipStore() = default;
  // The part kept under `key` for clip `index`, or nullopt. May throw InputError when a missing
  // part is an error (a link without the clip's file). `refused` is set when an entry was there
  // but could not be used.
  // For PartPoses::Skip the part's pose streams may be left out (the cook has their coding).
  virtual std::optional<ClipPart> find(const std::string& key, int index, bool* refused,
                                       PartPoses poses = PartPoses::Read) = 0;
  // Offers a freshly cooked part. May throw InputError.
  virtual void keep(const std::string& key, int index, const ClipPart& part) = 0;
  // The source of clip `index` as its part recorded it (hash, size, format), for a store whose
  // parts vouch for their sources: the cook then reads no source, and trusts whatever made the
  // parts (a build that re-runs cook-clip when a source changes) for their freshness. nullopt:
  // the cook hashes the source. May throw InputError.
  virtual std::optional<CookedSource> recordedSource(int /*index*/) { return std::nullopt; }
  // The hash, size and format of the source file at `path`, as hashSource gives them. A store may
  // remember them for a file that has not changed since; then it sets `unread`. The default reads
  // the file. Throws InputError as hashSource does.
  virtual CookedSource hashSourceFile(const std::string& path, const std::string& label,
                                      bool* /*unread*/) {
    return hashSource(path, label);
  }
  // hashSourceFile() of up to kSourcesHashedTogether sources, into out[i] and unread[i], in order;
  // a store may read them side by side (hashSourcesTogether). The default hashes one after
  // another.
  virtual void hashSourceFiles(const std::vector<const ClipSpec*>& specs, CookedSource* out,
                               bool* unread) {
    for (size_t i = 0; i < specs.size(); ++i)
      out[i] = hashSourceFile(specs[i]->source, specs[i]->source_label, &unread[i]);
  }
  // The pose coding kept under `key` (poseCodingKey), or nullopt; `refused` as for find. A store
  // that keeps none (the default) finds none.
  virtual std::optional<StoredPoseCoding> findPoses(const std::string& /*key*/, bool* /*refused*/) {
    return std::nullopt;
  }
  // Offers a fresh pose coding. Never throws: a store that cannot keep it only makes the next
  // cook slower.
  virtual void keepPoses(const std::string& /*key*/, uint32_t /*frames*/, uint32_t /*joints*/,
                         const CookedPoseCoding& /*coding*/) {}
  // What the store warned of since the last call (entries it refused or could not keep), for
  // the cook to report; in an order that does not depend on the threads.
  virtual std::vector<Warning> takeWarnings() { return {}; }
  // Why parts were not found (cause, clips), for `-v`; empty for a store that does not know.
  virtual std::vector<std::pair<std::string, int>> missCauses() const { return {}; }
};

// Called from the cooking threads with (clips done, clip count); may be empty.
using CookProgress = std::function<void(int done, int total)>;

// What the cook leaves in the pose streams:
//  - Raw: the raw streams, for tools and tests that read them (compressPoses may code them later);
//  - Coded: the coding that request.settings.compression asks for (none for pose = "none"),
//    from the store when it keeps one for these parts and settings, else coded and offered to
//    it. The raw streams of a coded database are released (or never assembled); with pose =
//    "none" they stay in the clips' own arrays (CookedDatabase::raw_pose_parts), which the writer
//    reads, and the four concatenated streams stay empty. What mmcook writes.
enum class PoseOutput { Raw, Coded };

// Told of each clip's part as soon as the cook has it (`cooked`: cooked now, not given back by
// the store), from the cooking threads, in any order: for a write that puts the clips' poses in
// the file while the other clips cook. The part stays as the cook left it until the last of
// these calls returns, so that a call may read the parts of earlier ones; but for a cook whose
// raw poses stay in the clips' arrays (PoseOutput::Coded with compression pose = "none"), a sink
// may release a part's four pose arrays (CookedDatabase::raw_pose_parts then says where they
// were). Must be thread-safe, and must not throw: a part it cannot take is written later.
class PartSink {
 public:
  virtual ~PartSink() = default;
  virtual void partObtained(int index, ClipPart& part, bool cooked) = 0;
};

// Every database clip's frame count as the sources' headers declare it, in database order (a
// clip, then its mirror), read without importing anything: for a write that lays out the
// database before the clips are cooked. nullopt when a source does not tell (not BVH, or a
// header that cannot be read); `jobs` 0 for all cores. A clip may still cook to another count (a
// file that holds more frames than it declares), which that write must check.
std::optional<std::vector<uint32_t>> declaredClipFrames(const CookRequest& request, int jobs);

// Throws InputError for anything a user can fix (file, clip, frame or joint named).
CookedDatabase cookDatabase(const CookRequest& request, CookReport* report = nullptr,
                            const CookProgress& progress = {}, ClipStore* store = nullptr,
                            PoseOutput poses = PoseOutput::Raw, PartSink* sink = nullptr);

}  // namespace mmdb::cook
