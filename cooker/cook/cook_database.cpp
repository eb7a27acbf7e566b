#include "cook/cook_database.h"

#include "cook/bounds.h"
#include "cook/clip_stages.h"
#include "cook/features.h"
#include "cook/mirror.h"
#include "cook/normalize.h"
#include "cook/ranges.h"
#include "cook/resample.h"
#include "cook/skeleton_presets.h"
#include "cook/units.h"
#include "core/diagnostic.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "core/heap.h"
#include "core/input_file.h"
#include "core/large_pages.h"
#include "core/limits.h"
#include "core/mirror_tags.h"
#include "core/parallel_for.h"
#include "import/importer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace mmdb::cook {
namespace {

// Standing hip heights outside this band (metres) mean the unit scale is probably wrong.
constexpr double kPlausibleHipHeightMin = 0.4, kPlausibleHipHeightMax = 2.5;

std::string clipName(const ClipSpec& spec) {
  return spec.name.empty() ? std::filesystem::path(spec.source).stem().string() : spec.name;
}

// "clip walk (walk.bvh)", to begin a message about the clip. Its manifest line is the place of
// the message (clipError()); a request made without a manifest names the line in the text.
std::string where(const ClipSpec& spec) {
  std::string w = "clip " + clipName(spec) + " (" + spec.source;
  if (spec.manifest.empty() && spec.manifest_line > 0)
    w += ", manifest line " + std::to_string(spec.manifest_line);
  return w + ")";
}

// "clip walk (walk.bvh, manifest line 3)": a clip named in a message about another clip.
std::string whereWithLine(const ClipSpec& spec) {
  std::string w = "clip " + clipName(spec) + " (" + spec.source;
  if (spec.manifest_line > 0) w += ", manifest line " + std::to_string(spec.manifest_line);
  return w + ")";
}

// An error about the clip, at its [[clip]] line of the manifest when it has one.
InputError clipError(const ClipSpec& spec, const std::string& message) {
  if (!spec.manifest.empty() && spec.manifest_line > 0)
    return InputError(spec.manifest, spec.manifest_line, message);
  return InputError(message);
}

// Runs `work` for the clip: an input error it throws without a place of its own (a source that
// does not open, a skeleton that does not fit) gets the clip's manifest line.
template <class Work>
auto atClip(const ClipSpec& spec, Work&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const InputError& e) {
    if (e.located()) throw;
    throw clipError(spec, e.what());
  }
}

SourceFormat formatOf(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".bvh"   ? SourceFormat::Bvh
         : ext == ".fbx" ? SourceFormat::Fbx
                         : SourceFormat::Other;
}

// Wall seconds since the last lap (or since it was made).
class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// How many of a file's `n` source frames the clip keeps, from spec.source_first_frame on; 0 when
// the manifest's range does not lie inside them.
int64_t keptSourceFrames(const ClipSpec& spec, int64_t n) {
  const int64_t first = spec.source_first_frame;
  const int64_t count = spec.source_frame_count < 0 ? n - first : spec.source_frame_count;
  return first < 0 || count <= 0 || first + count > n ? 0 : count;
}

// Imports a clip and keeps the manifest's source frames.
RawClip loadClip(const ClipSpec& spec) {
  RawClip clip = importClipFile(spec.source, spec.take);
  validateSkeleton(clip.skeleton, where(spec));
  // Any importer: the rate and length must be usable before anything is resampled.
  if (!(clip.frame_rate >= kMinFrameRate && clip.frame_rate <= kMaxFrameRate))
    throw InputError(
        fmt::format("{}: the source runs at {:g} Hz; mmcook reads {:g} to {:g} Hz: "
                    "re-export it at another rate",
                    where(spec), clip.frame_rate, kMinFrameRate, kMaxFrameRate));
  const double seconds = (clip.frame_count - 1) / clip.frame_rate;
  if (seconds > kMaxClipSeconds)
    throw InputError(
        fmt::format("{}: the source lasts {:g} s, over the {:g} s (24 hours) limit "
                    "of a clip; split it into shorter clips",
                    where(spec), seconds, kMaxClipSeconds));
  clip.name = clipName(spec);
  const int n = clip.frame_count;
  const int first = spec.source_first_frame;
  const int count = static_cast<int>(keptSourceFrames(spec, n));
  if (count == 0) {
    const int asked = spec.source_frame_count < 0 ? n - first : spec.source_frame_count;
    throw InputError(where(spec) + ": source frames [" + std::to_string(first) + ", " +
                     std::to_string(first + asked) + ") are not inside the file's " +
                     std::to_string(n) + " frames; fix the clip's frame range");
  }
  if (first != 0 || count != n) {
    const size_t joints = clip.skeleton.names.size();
    clip.rotations = std::vector<glm::quat>(clip.rotations.begin() + first * joints,
                                            clip.rotations.begin() + (first + count) * joints);
    clip.translations =
        std::vector<glm::vec3>(clip.translations.begin() + first * joints,
                               clip.translations.begin() + (first + count) * joints);
    clip.frame_count = count;
  }
  clip.source_first_frame = first;
  return clip;
}

void checkSameSkeleton(const Skeleton& a, const std::string& a_clip, const Skeleton& b,
                       const std::string& b_clip) {
  const size_t n = std::min(a.names.size(), b.names.size());
  for (size_t j = 0; j < n; ++j) {
    if (a.names[j] != b.names[j] || a.parents[j] != b.parents[j]) {
      auto describe = [&](const Skeleton& s) {
        return "'" + s.names[j] + "' (parent " +
               (s.parents[j] < 0 ? std::string("none") : "'" + s.names[s.parents[j]] + "'") + ")";
      };
      throw InputError("all clips of a database must share one skeleton: joint " +
                       std::to_string(j) + " is " + describe(a) + " in " + a_clip + " but " +
                       describe(b) + " in " + b_clip + "; cook them into separate databases");
    }
  }
  if (a.names.size() != b.names.size())
    throw InputError("all clips of a database must share one skeleton: " + a_clip + " has " +
                     std::to_string(a.names.size()) + " joints but " + b_clip + " has " +
                     std::to_string(b.names.size()) + " (first joint only one of them has: '" +
                     (a.names.size() > n ? a.names[n] : b.names[n]) +
                     "'); cook them into separate databases");
}

// Physical memory of the machine, or 0 when unknown.
uint64_t physicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

// Refuses a database that, with `spec`'s clip, would be about `total` bytes: over the file limit
// or over what this machine's memory can cook.
void checkEstimate(const ClipSpec& spec, uint64_t total) {
  if (total > kMaxDatabaseBytes)
    throw InputError(fmt::format(
        "{}: with this clip the database would be about {} bytes ({:.2f} GiB), over the {} "
        "bytes (2 GiB) an .mmdb file may hold; split the clips into several databases "
        "(several manifests), or cook at a lower frame_rate",
        where(spec), total, double(total) / (1u << 30), kMaxDatabaseBytes));
  const uint64_t memory = physicalMemoryBytes();
  if (memory > 0 && total * kCookMemoryPerFileByte > memory)
    throw InputError(fmt::format(
        "{}: with this clip the cook needs about {} bytes of memory ({:.1f} GiB), more than "
        "this machine's {} bytes; split the clips into several databases (several manifests)",
        where(spec), total * kCookMemoryPerFileByte,
        double(total * kCookMemoryPerFileByte) / (1u << 30), memory));
}

void checkWeights(const CookSettings& s) {
  static const char* const kNames[kWeightCount] = {"foot_position", "foot_velocity", "hip_velocity",
                                                   "trajectory_position", "trajectory_direction"};
  for (int w = 0; w < kWeightCount; ++w)
    if (!(s.weights[w] > 0) || !std::isfinite(s.weights[w]))
      throw InputError("weight " + std::string(kNames[w]) + " is " +
                       fmt::format("{:g}", s.weights[w]) +
                       "; weights must be above 0 (use a small weight to make a block matter "
                       "little)");
}

std::string axisText(const glm::vec3& a) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%g, %g, %g]", a.x, a.y, a.z);
  return buf;
}

// docs/cook.md "The facing-axis check": the facing axis must follow the direction of travel.
std::optional<Warning> facingWarning(const std::vector<ClipPart>& work, const SkeletonRoles& roles,
                                     const Skeleton& skeleton) {
  FacingAgreement total;
  for (const auto& w : work) {
    const FacingAgreement& a = w.motion.facing;
    total.moving_frames += a.moving_frames;
    total.configured_sum += a.configured_sum;
    for (int c = 0; c < FacingAgreement::kCandidates; ++c)
      total.candidate_sum[c] += a.candidate_sum[c];
  }
  if (total.moving_frames == 0) return std::nullopt;
  const double frames = static_cast<double>(total.moving_frames);
  if (total.configured_sum / frames >= 0) return std::nullopt;
  int best = 0;
  for (int c = 1; c < FacingAgreement::kCandidates; ++c)
    if (total.candidate_sum[c] > total.candidate_sum[best]) best = c;
  static const char* const kAxisNames[FacingAgreement::kCandidates] = {"+X", "-X", "+Y",
                                                                       "-Y", "+Z", "-Z"};
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "the facing axis %s of joint %s points against the direction of travel on "
                "average over %lld moving frames (mean cosine %.2f); its local %s would follow it "
                "(mean cosine %.2f): set facing_axis = %s under [skeleton] in the manifest",
                axisText(roles.facing_axis).c_str(),
                skeleton.names[roles.joint(Role::Facing)].c_str(), total.moving_frames,
                total.configured_sum / frames, kAxisNames[best], total.candidate_sum[best] / frames,
                axisText(facingCandidateAxis(best)).c_str());
  return Warning{"facing-axis-against-travel", buf, "", 0};
}

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// `from`'s rows of `from_width` values, each widened to `to_width` with zeros.
template <typename T>
void appendRows(std::vector<T>& to, const std::vector<T>& from, size_t from_width,
                size_t to_width) {
  if (from_width == to_width) return append(to, from);
  const size_t rows = from.size() / from_width, at = to.size();
  to.resize(at + rows * to_width);
  for (size_t r = 0; r < rows; ++r)
    std::copy_n(from.begin() + std::ptrdiff_t(r * from_width), from_width,
                to.begin() + std::ptrdiff_t(at + r * to_width));
}

// A string in a key: its length first, so no text inside it can pass for another field.
std::string keyText(const std::string& s) { return std::to_string(s.size()) + ":" + s; }

// The hip-height warning: made where the part is used, since it names the manifest line.
std::optional<Warning> hipHeightWarning(const ClipSpec& spec, const ClipPart& part) {
  const double hip = part.hip_height;
  if (hip >= kPlausibleHipHeightMin && hip <= kPlausibleHipHeightMax) return std::nullopt;
  return Warning{"hip-height-implausible",
                 where(spec) + ": the standing hip height is " + std::to_string(hip) +
                     " m with a unit scale of " + std::to_string(part.unit.scale) + " (" +
                     part.unit.origin +
                     "); if the character is an adult, set unit_scale to about " +
                     std::to_string(part.unit.scale * kStandingHipHeight / hip),
                 "", 0};
}

uint64_t partFrames(const ClipPart& part) {
  return uint64_t(part.motion.clip.frame_count) +
         (part.mirror ? uint64_t(part.mirror->clip.frame_count) : 0);
}

// The first clip's own context, from its imported (unscaled) clip.
ClipContext firstContext(const CookRequest& request, const RawClip& first) {
  const CookSettings& settings = request.settings;
  ClipContext c;
  c.skeleton = first.skeleton;
  c.first_where = whereWithLine(request.clips[0]);
  c.roles = atClip(request.clips[0], [&] {
    return resolveRoles(c.skeleton, settings.roles, where(request.clips[0]));
  });
  if (settings.unit_scale <= 0 && c.roles.preset_unit_scale <= 0) {
    // A later clip that declares no unit shares the first clip's: its declared one, or the one
    // its hips imply.
    if (first.declared_unit_scale > 0) {
      c.inferred_scale = first.declared_unit_scale;
      c.inferred_origin = kUnitFromFirstClipsFile;
    } else {
      c.inferred_scale =
          inferUnitScale(first, c.roles.joint(Role::Hips), c.roles.joint(Role::LeftToe),
                         c.roles.joint(Role::RightToe));
      c.inferred_origin = kUnitFromHipHeight;
    }
  }
  return c;
}

}  // namespace

CookedSource hashSource(const std::string& path, const std::string& label) {
  requireRegularFile(path, "check the clip's source path");  // before open: a FIFO blocks it
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open the file to hash it; check its permissions");
  Fnv1a64 hash;
  uint64_t size = 0;
  std::vector<char> buffer(1 << 16);
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      // Never the hash of the bytes read so far: the cache would take it for the file's.
      const int error = errno;
      ::close(fd);
      throw InputError(
          fmt::format("{}: reading the file to hash it failed after {} bytes: {}; "
                      "check the disk or copy the file again",
                      path, size, std::strerror(error)));
    }
    if (got == 0) break;
    hash.add(buffer.data(), static_cast<size_t>(got));
    size += static_cast<uint64_t>(got);
  }
  ::close(fd);
  return {label.empty() ? path : label, hash.value(), size, formatOf(path)};
}

// Read 256 KiB at a time from each file.
void hashSourcesTogether(const std::vector<const ClipSpec*>& specs, CookedSource* out, bool* ok) {
  constexpr size_t kChunk = size_t{1} << 18;
  const size_t n = std::min(specs.size(), kSourcesHashedTogether);
  std::ifstream in[kSourcesHashedTogether];
  // Each thread's, kept from one group to the next: a fresh 256 KiB block per file cost the
  // kernel more, zeroing its pages, than the hash itself.
  thread_local std::vector<char> buffers(kSourcesHashedTogether * kChunk);
  char* buffer[kSourcesHashedTogether];
  for (size_t i = 0; i < kSourcesHashedTogether; ++i) buffer[i] = buffers.data() + i * kChunk;
  Fnv1a64 hash[kSourcesHashedTogether];
  uint64_t size[kSourcesHashedTogether] = {};
  bool reading[kSourcesHashedTogether] = {};
  for (size_t i = 0; i < n; ++i) {
    ok[i] = false;
    if (!regularFileProblem(specs[i]->source).empty()) continue;  // before open: a FIFO blocks
    in[i].open(specs[i]->source, std::ios::binary);
    if (!in[i]) continue;
    reading[i] = true;
  }
  for (;;) {
    size_t got[kSourcesHashedTogether] = {}, common = kChunk;
    int readers = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!reading[i]) continue;
      in[i].read(buffer[i], static_cast<std::streamsize>(kChunk));
      got[i] = static_cast<size_t>(in[i].gcount());
      common = std::min(common, got[i]);
      ++readers;
    }
    if (readers == 0) break;
    size_t from = 0;  // the bytes every one of four files has, on the four chains at once
    static_assert(kSourcesHashedTogether == 4, "one Fnv1a64::addFour per group");
    if (readers == 4) {
      const unsigned char* data[4];
      for (size_t i = 0; i < 4; ++i) data[i] = reinterpret_cast<unsigned char*>(buffer[i]);
      Fnv1a64::addFour(hash, data, common);
      from = common;
    }
    for (size_t i = 0; i < n; ++i) {
      if (!reading[i]) continue;
      hash[i].add(buffer[i] + from, got[i] - from);
      size[i] += got[i];
      if (got[i] < kChunk) {  // the end of the file, or a failed read
        reading[i] = false;
        if (in[i].bad()) continue;
        const ClipSpec& spec = *specs[i];
        out[i] = {spec.source_label.empty() ? spec.source : spec.source_label, hash[i].value(),
                  size[i], formatOf(spec.source)};
        ok[i] = true;
      }
    }
  }
}

ClipContext clipContext(const CookRequest& request, const ClipPart& first) {
  ClipContext c;
  c.skeleton = first.skeleton;
  c.first_where = whereWithLine(request.clips.at(0));
  c.roles = atClip(request.clips.at(0), [&] {
    return resolveRoles(c.skeleton, request.settings.roles, where(request.clips.at(0)));
  });
  c.inferred_scale = first.inferred_scale;
  if (c.inferred_scale > 0)
    c.inferred_origin = first.unit.origin == "file" ? kUnitFromFirstClipsFile : kUnitFromHipHeight;
  return c;
}

std::string clipKey(const CookRequest& request, int index, const CookedSource& source,
                    const ClipContext* context) {
  const CookSettings& s = request.settings;
  const ClipSpec& spec = request.clips.at(static_cast<size_t>(index));
  const ClipStageSettings stage = clipStageSettings(s);
  std::string k;
  auto line = [&k](const std::string& text) { (k += text) += '\n'; };
  line("mmclip key 2");  // 2: parts of format 3 (warnings with codes)
  line("cooker " + keyText(kCookerVersion));
  line(fmt::format("source {:016x} {} {}", source.content_hash, source.size_bytes,
                   static_cast<int>(source.format)));
  line("name " + keyText(clipName(spec)));
  line("take " + keyText(spec.take));
  line(fmt::format("source frames {} {}", spec.source_first_frame, spec.source_frame_count));
  line(fmt::format("mirror {}", spec.mirror ? 1 : 0));
  if (spec.mirror)
    for (const auto& [left, right] : request.mirror.patterns)
      line("mirror pattern " + keyText(left) + " " + keyText(right));
  line(fmt::format("rate {:a}", stage.frame_rate));
  line(fmt::format("windows {} {} order {}", stage.root_position_window, stage.facing_window,
                   stage.order));
  line(fmt::format("contacts {:a} {}", double(stage.contact_speed_threshold),
                   stage.contact_median_frames));
  line(fmt::format("trajectory {} {} {}", stage.trajectory_frames[0], stage.trajectory_frames[1],
                   stage.trajectory_frames[2]));
  line(fmt::format("unit scale {:a}", s.unit_scale));
  if (!context) {  // the first clip makes the context from its own skeleton and these settings
    const RoleSettings& r = s.roles;
    line("first clip");
    for (const std::string* role : {&r.preset, &r.hips, &r.left_foot, &r.right_foot, &r.left_toe,
                                    &r.right_toe, &r.root_position, &r.facing})
      line("role " + keyText(*role));
    if (r.facing_axis)
      line(fmt::format("facing axis {:a} {:a} {:a}", r.facing_axis->x, r.facing_axis->y,
                       r.facing_axis->z));
  } else {
    const SkeletonRoles& r = context->roles;
    line("after the first clip");
    line("preset " + keyText(r.preset));
    std::string joints = "roles";
    for (int j : r.joints) joints += " " + std::to_string(j);
    line(joints);
    line(fmt::format("facing axis {:a} {:a} {:a}", r.facing_axis.x, r.facing_axis.y,
                     r.facing_axis.z));
    line(fmt::format("preset unit scale {:a} inferred {:a} ", r.preset_unit_scale,
                     context->inferred_scale) +
         keyText(context->inferred_origin));
  }
  return k;
}

std::string clipEntryText(const CookRequest& request, int index) {
  const ClipSpec& spec = request.clips.at(static_cast<size_t>(index));
  return "mmclip entry 1\nsource path " + keyText(spec.source) + "\n" +
         clipKey(request, index, CookedSource{}, nullptr);
}

std::string poseCodingKey(const CookRequest& request, const std::vector<std::string>& clip_keys) {
  const CompressionSettings& c = request.settings.compression;
  std::string k;
  auto line = [&k](const std::string& text) { (k += text) += '\n'; };
  line("mmposes key 1");
  line("cooker " + keyText(kCookerVersion));
  line(fmt::format("tolerances {:a} {:a} {:a} {:a} segment {}", c.position_tolerance,
                   c.shell_distance, c.velocity_tolerance, c.angular_velocity_tolerance,
                   c.segment_frames));
  line(fmt::format("clips {}", clip_keys.size()));
  for (const std::string& key : clip_keys) {
    Fnv1a64 hash;
    hash.add(key.data(), key.size());
    line(fmt::format("{:016x} {}", hash.value(), key.size()));
  }
  return k;
}

namespace {

ClipPart cookClipPartHere(const CookRequest& request, int index, const CookedSource& source,
                          const ClipContext* context) {
  const CookSettings& settings = request.settings;
  const ClipSpec& spec = request.clips.at(static_cast<size_t>(index));
  const ClipStageSettings stage = clipStageSettings(settings);
  RawClip raw = loadClip(spec);
  // The import's warnings are the part's (a cached part shows them again), not the mirror's.
  std::vector<Warning> import_warnings = std::move(raw.warnings);
  raw.warnings.clear();
  std::optional<ClipContext> own;
  ClipPart part;
  if (!context) {
    own = firstContext(request, raw);
    context = &*own;
    part.inferred_scale = own->inferred_scale;
  } else {
    checkSameSkeleton(context->skeleton, context->first_where, raw.skeleton, where(spec));
  }
  const SkeletonRoles& roles = context->roles;
  part.source = source;
  part.skeleton = raw.skeleton;
  // Stop before resampling a clip that alone would be too much.
  const uint64_t frames =
      uint64_t(resampledFrameCount(raw.frame_count, raw.frame_rate, settings.frame_rate)) *
      (spec.mirror ? 2 : 1);
  checkEstimate(spec, estimatedDatabaseBytes(frames, raw.skeleton.names.size()));
  part.source_rate = raw.frame_rate;
  part.source_frames = raw.frame_count;
  part.take = raw.take.empty() ? spec.take : raw.take;

  part.unit = chooseUnitScale(settings.unit_scale, raw, roles.preset_unit_scale,
                              context->inferred_scale, context->inferred_origin);
  scaleClip(raw, part.unit.scale);
  part.hip_height = standingHipHeight(raw, roles.joint(Role::Hips), roles.joint(Role::LeftToe),
                                      roles.joint(Role::RightToe));
  RawClip clip = resampleClip(std::move(raw), settings.frame_rate);
  if (spec.mirror) {
    RawClip mirrored = mirrorClip(clip, request.mirror);
    mirrored.name = clip.name + "#mirror";
    part.mirror = cookClipMotion(std::move(mirrored), roles, stage);
  }
  part.motion = cookClipMotion(std::move(clip), roles, stage);
  part.motion.warnings.insert(part.motion.warnings.begin(), import_warnings.begin(),
                              import_warnings.end());
  return part;
}

}  // namespace

ClipPart cookClipPart(const CookRequest& request, int index, const CookedSource& source,
                      const ClipContext* context) {
  const ClipSpec& spec = request.clips.at(static_cast<size_t>(index));
  return atClip(spec, [&] { return cookClipPartHere(request, index, source, context); });
}

namespace {

// The sources of a request: one per distinct path, in order of first use.
struct SourceTable {
  std::vector<int> source_of;     // per clip
  std::vector<int> hashing_clip;  // per source, the clip that hashes it
  std::vector<CookedSource> sources;
  std::vector<char> hashed;  // per source: hashed ahead of the clips
};

SourceTable distinctSources(const CookRequest& request) {
  SourceTable t;
  std::vector<std::string> paths;
  for (const ClipSpec& spec : request.clips) {
    const auto it = std::find(paths.begin(), paths.end(), spec.source);
    t.source_of.push_back(static_cast<int>(it - paths.begin()));
    if (it == paths.end()) {
      paths.push_back(spec.source);
      t.hashing_clip.push_back(static_cast<int>(t.source_of.size()) - 1);
    }
  }
  t.sources.resize(paths.size());
  t.hashed.assign(paths.size(), 0);
  return t;
}

// work(group) for groups of up to kSourcesHashedTogether source indices, the groups in parallel:
// the sources a thread hashes side by side. A group's chains run together only over the bytes
// that all of its files have, so the groups are made of files of similar sizes (in manifest
// order, a third of a corpus's bytes were hashed on one chain). A file that cannot be measured
// counts as empty; its hash fails where it is read, as it would have.
template <typename Work>
void forSourceGroups(const CookRequest& request, const SourceTable& t, int jobs, Work work) {
  const size_t count = t.sources.size(), k = kSourcesHashedTogether;
  std::vector<std::pair<uintmax_t, size_t>> by_size(count);  // (size, source)
  for (size_t s = 0; s < count; ++s) {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(request.clips[t.hashing_clip[s]].source, ec);
    by_size[s] = {ec ? 0 : size, s};
  }
  std::sort(by_size.begin(), by_size.end());
  parallelFor(0, static_cast<int>((count + k - 1) / k), jobs, [&](int g) {
    std::vector<size_t> group;
    for (size_t i = static_cast<size_t>(g) * k; i < std::min(count, (g + 1) * k); ++i)
      group.push_back(by_size[i].second);
    work(group);
  });
}

// Without a store, the sources ahead of the clips, side by side (hashSourcesTogether), where each
// clip would hash its own on one chain. What cannot be read here is left to its clip.
void hashSourcesAhead(const CookRequest& request, int jobs, SourceTable& t) {
  forSourceGroups(request, t, jobs, [&](const std::vector<size_t>& group) {
    std::vector<const ClipSpec*> specs;
    for (size_t s : group) specs.push_back(&request.clips[t.hashing_clip[s]]);
    CookedSource hashed[kSourcesHashedTogether];
    bool ok[kSourcesHashedTogether] = {};
    hashSourcesTogether(specs, hashed, ok);
    for (size_t i = 0; i < group.size(); ++i) {
      if (ok[i]) t.sources[group[i]] = hashed[i];
      t.hashed[group[i]] = ok[i];
    }
  });
}

// A store finds parts by their key, which holds the source's hash: hash every source first (or
// take it from the part, when the store's parts vouch for their sources), the others side by side
// as the store may read them (hashSourceFiles).
void hashSourcesForStore(const CookRequest& request, ClipStore& store, int jobs, SourceTable& t,
                         ClipStoreCounts& counts) {
  std::atomic<int> unread{0};
  forSourceGroups(request, t, jobs, [&](const std::vector<size_t>& group) {
    std::vector<const ClipSpec*> specs;
    std::vector<size_t> read;  // the sources of specs
    for (size_t s : group) {
      const ClipSpec& spec = request.clips[t.hashing_clip[s]];
      if (std::optional<CookedSource> recorded = store.recordedSource(t.hashing_clip[s])) {
        t.sources[s] = *recorded;
        t.sources[s].path = spec.source_label.empty() ? spec.source : spec.source_label;
      } else {
        specs.push_back(&spec);
        read.push_back(s);
      }
    }
    CookedSource hashed[kSourcesHashedTogether];
    bool was_unread[kSourcesHashedTogether] = {};
    store.hashSourceFiles(specs, hashed, was_unread);
    for (size_t k = 0; k < read.size(); ++k) {
      t.sources[read[k]] = hashed[k];
      if (was_unread[k]) ++unread;
    }
  });
  counts.sources_unread = unread;
}

// Every clip's part, from the store or cooked, and the first clip's context. The first clip is
// obtained alone: it fixes the skeleton, the roles and (when nothing else gives it) the unit,
// which the other clips' keys name. Without a store, a source that could not be hashed ahead is
// hashed after its clip is cooked, so a bad file gets the importer's message.
struct ObtainedParts {
  std::vector<ClipPart> parts;
  ClipContext context;
  std::vector<std::string> keys;  // with a store: each clip's key
};

// The database's streams, appended while the clips cook. A clip's share goes in as soon as it and
// every clip before it are obtained, on the thread that obtained the last of them, and its arrays
// are freed at once: the streams grow in database order, as the assembly would grow them (the
// same bytes for any job count); the copies run beside the other clips' stages instead of after
// the last one; and the memory a clip frees is taken again by the clips cooking after it, where
// every clip's arrays used to stay alive beside the streams until the assembly copied them.
class StreamAppender {
 public:
  // Where the streams go: the assembly's own vectors, which it completes.
  struct Targets {
    std::vector<glm::quat>* rotations;
    std::vector<glm::vec3>* translations;
    std::vector<glm::vec3>* velocities;
    std::vector<glm::vec3>* angular_velocities;
    std::vector<float>* feature_rows;  // at kFeatureStride
    std::vector<CookedRootFrame>* root;
    std::vector<uint32_t>* contacts;
  };

  StreamAppender(std::vector<ClipPart>& parts, Targets to) : parts_(parts), to_(to) {}

  // Before the first ready(). `declared`: the frames the sources declare, a clip then its mirror,
  // when they are known. The four pose streams are appended only with `poses` and declared
  // frames: they are reserved whole, on large pages, before the first clip goes in (their growth
  // would copy hundreds of MB); the other streams are small enough to grow.
  void start(bool poses, size_t joints, const std::optional<std::vector<uint32_t>>& declared) {
    ready_.assign(parts_.size(), 0);
    joints_ = joints;
    uint64_t frames = 0;
    if (declared)
      for (const uint32_t f : *declared) frames += f;
    poses_ = poses && declared && frames > 0;
    if (frames == 0) return;
    if (poses_) {
      const size_t values = size_t(frames) * joints;
      reserveLarge(*to_.rotations, values);
      reserveLarge(*to_.translations, values);
      reserveLarge(*to_.velocities, values);
      reserveLarge(*to_.angular_velocities, values);
    }
    to_.feature_rows->reserve(size_t(frames) * kFeatureStride);
    to_.root->reserve(frames);
    to_.contacts->reserve(frames);
  }

  // Clip `spec` is obtained (thread-safe, once per clip).
  void ready(int spec) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_[size_t(spec)] = 1;
    if (appending_) return;  // the thread appending takes it when it gets there
    appending_ = true;
    while (!stopped_ && next_ < ready_.size() && ready_[next_]) {
      const size_t k = next_;
      lock.unlock();
      const bool fits = appendPart(parts_[k]);
      lock.lock();
      if (fits)
        ++next_;
      else
        stopped_ = true;
    }
    appending_ = false;
  }

  // Once the cook's threads are done: the clips (in manifest order) whose shares are in the
  // streams, and whether their poses are too.
  size_t appended() const { return next_; }
  bool appendsPoses() const { return poses_; }

  // Empties the streams: the parts are obtained again.
  void abandon() {
    stopped_ = true;
    next_ = 0;
    for (auto* v : {to_.translations, to_.velocities, to_.angular_velocities})
      std::vector<glm::vec3>().swap(*v);
    std::vector<glm::quat>().swap(*to_.rotations);
    std::vector<float>().swap(*to_.feature_rows);
    std::vector<CookedRootFrame>().swap(*to_.root);
    std::vector<uint32_t>().swap(*to_.contacts);
  }

 private:
  // Appends a part's clip and mirror, then frees their arrays. False, with nothing appended, when
  // its poses would not fit the reserved streams (a file that holds more frames than it
  // declares): this clip and every later one are left to the assembly.
  bool appendPart(ClipPart& part) {
    ClipMotion* const motions[] = {&part.motion, part.mirror ? &*part.mirror : nullptr};
    if (poses_) {
      size_t values = 0;
      for (const ClipMotion* m : motions)
        if (m) values += size_t(m->clip.frame_count) * joints_;
      if (to_.rotations->size() + values > to_.rotations->capacity()) return false;
    }
    for (ClipMotion* m : motions) {
      if (!m) continue;
      if (poses_) {
        moveAppend(*to_.rotations, m->clip.rotations);
        moveAppend(*to_.translations, m->clip.translations);
        moveAppend(*to_.velocities, m->velocities);
        moveAppend(*to_.angular_velocities, m->angular_velocities);
      }
      appendRows(*to_.feature_rows, m->features, kFeatureCount, kFeatureStride);
      std::vector<float>().swap(m->features);
      moveAppend(*to_.root, m->root);
      moveAppend(*to_.contacts, m->contacts);
    }
    return true;
  }

  template <typename T>
  static void moveAppend(std::vector<T>& to, std::vector<T>& from) {
    cook::append(to, from);
    std::vector<T>().swap(from);
  }

  std::vector<ClipPart>& parts_;
  Targets to_;
  size_t joints_ = 0;
  bool poses_ = false;
  std::mutex mutex_;
  std::vector<uint8_t> ready_;
  size_t next_ = 0;
  bool appending_ = false, stopped_ = false;
};

class PartGetter {
 public:
  PartGetter(const CookRequest& request, ClipStore* store, const CookProgress& progress,
             SourceTable& sources, ObtainedParts& out, PartSink* sink = nullptr)
      : request_(request), store_(store), progress_(progress), t_(sources), out_(out), sink_(sink) {
    const size_t clip_count = request.clips.size();
    out.parts.resize(clip_count);
    if (store) out.keys.resize(clip_count);
  }

  // Clip i's part; without its pose streams for PartPoses::Skip (which a store may then not
  // even read). Thread-safe for distinct clips, once clip 0 is done.
  void obtain(int i, PartPoses poses) {
    const ClipSpec& spec = request_.clips[i];
    const CookedSource& source = t_.sources[t_.source_of[i]];
    ClipPart& part = out_.parts[i];
    const ClipContext* context = i == 0 ? nullptr : &out_.context;
    bool found = false;
    if (store_) {
      if (out_.keys[i].empty()) out_.keys[i] = clipKey(request_, i, source, context);
      bool was_refused = false;
      if (auto kept = store_->find(out_.keys[i], i, &was_refused, poses)) {
        part = std::move(*kept);
        found = true;
      }
      if (was_refused) ++refused_;
    }
    if (found) {
      ++hits_;
      if (context)
        atClip(spec, [&] {
          checkSameSkeleton(context->skeleton, context->first_where, part.skeleton, where(spec));
        });
    } else {
      part = cookClipPart(request_, i, store_ ? source : CookedSource{}, context);
      const int s = t_.source_of[i];
      if (!store_ && t_.hashing_clip[s] == i && !t_.hashed[s])
        t_.sources[s] = hashSource(spec.source, spec.source_label);
      if (store_) {
        ++misses_;
        store_->keep(out_.keys[i], i, part);
      }
      if (poses == PartPoses::Skip) dropPoses(part);
    }
    if (sink_) sink_->partObtained(i, part, !found);
    checkEstimate(spec, estimated_bytes_ +=
                        estimatedDatabaseBytes(partFrames(part), part.skeleton.names.size()));
    if (progress_) {
      std::lock_guard<std::mutex> lock(progress_mutex_);
      progress_(++done_, static_cast<int>(request_.clips.size()));
    }
    if (appender_) appender_->ready(i);  // last: it may free the part's arrays at once
  }

  // With a store, after clip 0: every clip's key, so that the pose coding can be looked up before
  // the other parts are read.
  void makeKeys() {
    for (size_t i = 1; i < out_.keys.size(); ++i)
      out_.keys[i] =
          clipKey(request_, static_cast<int>(i), t_.sources[t_.source_of[i]], &out_.context);
  }

  // Clips obtained from now on go into the appender's streams as they come.
  void appendTo(StreamAppender* appender) { appender_ = appender; }

  void count(ClipStoreCounts& counts) const {
    counts.hits = hits_;
    counts.misses = misses_;
    counts.refused += refused_;
  }

  static void dropPoses(ClipPart& part) {
    for (ClipMotion* m : {&part.motion, part.mirror ? &*part.mirror : nullptr}) {
      if (!m) continue;
      std::vector<glm::quat>().swap(m->clip.rotations);
      std::vector<glm::vec3>().swap(m->clip.translations);
      std::vector<glm::vec3>().swap(m->velocities);
      std::vector<glm::vec3>().swap(m->angular_velocities);
    }
  }

 private:
  const CookRequest& request_;
  ClipStore* store_;
  const CookProgress progress_;  // a copy: the fallback pass gives a temporary
  SourceTable& t_;
  ObtainedParts& out_;
  PartSink* sink_;
  StreamAppender* appender_ = nullptr;
  std::atomic<int> hits_{0}, misses_{0}, refused_{0};
  std::atomic<uint64_t> estimated_bytes_{0};
  std::mutex progress_mutex_;
  int done_ = 0;
};

// Logs and records the warnings, in manifest order, as soon as they are known, so a later error
// does not hide them.
class WarningLog {
 public:
  explicit WarningLog(CookReport& report) : report_(report) {}
  void operator()(const Warning& w, const ClipSpec* spec = nullptr) const {
    spdlog::warn("{}", spec ? warningDiagnostic(w, spec->manifest, spec->manifest_line)
                            : warningDiagnostic(w, "", 0));
    CookWarning cw{w.code, w.text, w.file, w.line, "", "", 0};
    if (spec) {
      cw.source = spec->source_label;
      cw.clip = clipName(*spec);
      cw.manifest_line = spec->manifest_line;
    }
    report_.warnings.push_back(std::move(cw));
  }

 private:
  CookReport& report_;
};

// What the parts say about the whole cook: skeleton, roles, unit, and every clip's warnings.
void reportParts(const CookRequest& request, const std::vector<ClipPart>& parts,
                 const ClipContext& context, const WarningLog& warn, CookReport& report) {
  report.preset = context.roles.preset;
  report.role_lines = context.roles.describe(context.skeleton);
  for (int r = 0; r < kRoleCount; ++r) {
    const int joint = context.roles.joints[size_t(r)];
    report.roles.push_back(
        {roleName(static_cast<Role>(r)), context.skeleton.names[size_t(joint)], joint});
  }
  spdlog::info("skeleton preset: {}",
               report.preset.empty() ? "(none, roles given)" : report.preset);
  for (const auto& line : report.role_lines) spdlog::info("  {}", line);
  for (size_t i = 0; i < parts.size(); ++i) {
    const ClipSpec& spec = request.clips[i];
    report.source_frames += parts[i].source_frames;
    if (auto hip = hipHeightWarning(spec, parts[i])) warn(*hip, &spec);
    for (const Warning& w : parts[i].motion.warnings) warn(w, &spec);
    if (parts[i].mirror)
      for (const Warning& w : parts[i].mirror->warnings) warn(w, &spec);
  }
  report.unit_scale = parts[0].unit.scale;
  report.unit_scale_origin = parts[0].unit.origin;
  spdlog::info("unit scale: {} m per source unit ({})", report.unit_scale,
               report.unit_scale_origin);
  if (auto facing = facingWarning(parts, context.roles, context.skeleton)) warn(*facing);
}

// The parts one after another (each clip, then its mirrored copy), freeing each part as it goes:
// the database's clips and streams, and what the link still needs.
struct Concatenated {
  std::vector<float> feature_rows;  // raw, at the stride of the normalized rows
  std::vector<ClipTagging> tagging;
};

// One stream of the database and where each part keeps its share of it.
struct StreamCopy {
  std::function<void(ClipMotion&)> append_and_free;  // appends m's share, then frees it
  size_t from = 0;  // the first motion (database clip) not yet in the stream
};

// With `pose_parts`, the pose streams are moved into db.raw_pose_parts, not concatenated. The
// shares of the first `appended` parts are in the streams already (StreamAppender), their poses
// too with `appended_poses`: the streams go on from there.
void concatenateParts(const CookRequest& request, const std::vector<int>& source_of,
                      std::vector<ClipPart>& parts, bool with_poses, bool pose_parts,
                      size_t appended, bool appended_poses, Concatenated& out, CookedDatabase& db,
                      int jobs) {
  // The clips first (small, in manifest order), then each stream on its own thread: a stream's
  // parts are appended in the same order, so the bytes are the same for any job count.
  std::vector<ClipMotion*> motions;  // in database order
  auto add = [&](ClipMotion& m, int spec_index, const ClipPart& part, int mirror_of) {
    const ClipSpec& spec = request.clips[spec_index];
    CookedClip c;
    c.name = m.clip.name;
    c.source_index = source_of[spec_index];
    c.first_frame = db.frame_count;
    c.frame_count = static_cast<uint32_t>(m.clip.frame_count);
    c.source_frame_rate = static_cast<float>(part.source_rate);
    c.source_first_frame = static_cast<uint32_t>(spec.source_first_frame);
    c.source_frame_count = static_cast<uint32_t>(part.source_frames);
    c.mirrored = mirror_of >= 0;
    c.mirror_of = mirror_of;
    c.take = part.take;
    c.bias = static_cast<float>(spec.bias);
    ClipTagging t{c.name,      c.first_frame, c.frame_count,         spec.tags,
                  spec.ranges, spec.bias,     request.manifest_path, request.settings.frame_rate};
    if (c.mirrored) {  // left and right swap in its tags and its ranges' (docs/cook.md "Mirror")
      t.tags = mirroredTags(spec.tags, request.mirror.tag_pairs);
      for (SubRangeSpec& range : t.ranges)
        range.tags = mirroredTags(range.tags, request.mirror.tag_pairs);
      t.tags.push_back("mirrored");
    }
    out.tagging.push_back(std::move(t));
    db.clips.push_back(std::move(c));
    db.frame_count += static_cast<uint32_t>(m.clip.frame_count);
    motions.push_back(&m);
  };
  size_t appended_motions = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const int original = static_cast<int>(db.clips.size());
    add(parts[i].motion, static_cast<int>(i), parts[i], -1);
    if (parts[i].mirror) add(*parts[i].mirror, static_cast<int>(i), parts[i], original);
    if (i + 1 == appended) appended_motions = motions.size();
  }
  const size_t pose_from = appended_poses ? appended_motions : 0;
  const size_t total_frames = db.frame_count;
  const size_t joints = db.joint_count;

  // The freed parts go back to the system every few MB, or they would stay resident beside the
  // streams they are copied into (core/heap.h). What is freed after the last time stays for the
  // pose compression to reuse.
  constexpr uint64_t kReleaseBytes = uint64_t{12} << 20;
  // `to` is reserved for `per_frame` values a frame; a part with fewer (`from_per_frame`) has each
  // frame padded with zeros. The pose streams of a coded cook ask for 2 MB pages: the pose coding
  // reads them over and over, and on 4 KB pages its TLB misses cost more user time than their
  // first touch saves. The other streams are read a few times in order (core/large_pages.h).
  enum class Pages { Large, Small };
  auto copier = [&](size_t from, auto& to, size_t per_frame, auto share, Pages pages = Pages::Small,
                    size_t from_per_frame = 0) {
    StreamCopy copy;
    copy.from = from;
    copy.append_and_free = [&to, per_frame, share, pages, from_per_frame, total_frames,
                            first = true, freed = uint64_t{0}](ClipMotion& m) mutable {
      if (first && pages == Pages::Large) reserveLarge(to, total_frames * per_frame);
      if (first && pages == Pages::Small) to.reserve(total_frames * per_frame);
      first = false;
      auto& from = share(m);
      appendRows(to, from, from_per_frame ? from_per_frame : per_frame, per_frame);
      freed += uint64_t(from.capacity()) * sizeof(from[0]);
      std::decay_t<decltype(from)>().swap(from);
      if (freed >= kReleaseBytes) {
        releaseFreedMemory();
        freed = 0;
      }
    };
    return copy;
  };
  if (with_poses && pose_parts) {
    RawPoseParts& to = db.raw_pose_parts;
    to.first.push_back(0);
    for (ClipMotion* m : motions) {
      to.first.push_back(to.first.back() + size_t(m->clip.frame_count) * joints);
      to.rotations.push_back(std::move(m->clip.rotations));
      to.translations.push_back(std::move(m->clip.translations));
      to.velocities.push_back(std::move(m->velocities));
      to.angular_velocities.push_back(std::move(m->angular_velocities));
    }
  }
  // The largest streams first, so that the threads finish together.
  std::vector<StreamCopy> streams;
  if (with_poses && !pose_parts) {
    for (size_t i = pose_from; i < motions.size(); ++i) {  // a PartSink may release them only
      const ClipMotion* m = motions[i];                    // for pose_parts
      if (m->clip.rotations.size() != size_t(m->clip.frame_count) * joints)
        throw std::logic_error("clip " + m->clip.name + ": poses released before the assembly");
    }
    streams.push_back(copier(
        pose_from, db.local_rotations, joints,
        [](ClipMotion & m) -> auto& { return m.clip.rotations; }, Pages::Large));
    streams.push_back(copier(
        pose_from, db.local_translations, joints,
        [](ClipMotion & m) -> auto& { return m.clip.translations; }, Pages::Large));
    streams.push_back(copier(
        pose_from, db.local_velocities, joints,
        [](ClipMotion & m) -> auto& { return m.velocities; }, Pages::Large));
    streams.push_back(copier(
        pose_from, db.local_angular_velocities, joints,
        [](ClipMotion & m) -> auto& { return m.angular_velocities; }, Pages::Large));
  }
  // The raw rows where the normalized ones go (normalizeFeatureRows writes over them).
  streams.push_back(copier(
      appended_motions, out.feature_rows, kFeatureStride,
      [](ClipMotion & m) -> auto& { return m.features; }, Pages::Small, kFeatureCount));
  streams.push_back(copier(
      appended_motions, db.root_motion, 1, [](ClipMotion & m) -> auto& { return m.root; }));
  streams.push_back(copier(
      appended_motions, db.contacts, 1, [](ClipMotion & m) -> auto& { return m.contacts; }));
  // Only the streams with parts left to append.
  streams.erase(std::remove_if(streams.begin(), streams.end(),
                               [&](const StreamCopy& c) { return c.from == motions.size(); }),
                streams.end());
  parallelFor(0, static_cast<int>(streams.size()), jobs, [&](int s) {
    StreamCopy& copy = streams[size_t(s)];
    for (size_t i = copy.from; i < motions.size(); ++i) copy.append_and_free(*motions[i]);
  });
  for (ClipPart& part : parts) part = ClipPart();
}

// Normalization, matchable ranges and tags, and the search's bounds boxes.
void linkFeatures(const CookRequest& request, Concatenated& joined, const SkeletonRoles& roles,
                  const CookSettings& settings, const ClipStageSettings& stage,
                  const WarningLog& warn, int jobs, CookedDatabase& db) {
  db.feature_count = kFeatureCount;
  db.feature_stride = kFeatureStride;
  db.feature_blocks = featureBlocks(roles, settings.weights);
  NormalizedFeatures normalized = normalizeFeatureRows(
      std::move(joined.feature_rows), kFeatureCount, kFeatureStride, db.feature_blocks, jobs);
  db.features = std::move(normalized.features);
  db.feature_offset = std::move(normalized.offset);
  db.feature_scale = std::move(normalized.scale);

  MatchableRanges ranges = buildMatchableRanges(joined.tagging, stage.trailing_unmatchable_frames);
  db.tag_names = std::move(ranges.tag_names);
  db.ranges = std::move(ranges.ranges);
  for (size_t c = 0; c < db.clips.size(); ++c) db.clips[c].tag_mask = ranges.clip_tag_masks[c];
  // A range warning is about a database clip: reported with the manifest's clip it comes from.
  std::vector<const ClipSpec*> spec_of;  // per database clip
  for (const ClipSpec& spec : request.clips)
    spec_of.insert(spec_of.end(), spec.mirror ? 2 : 1, &spec);
  for (size_t i = 0; i < ranges.warnings.size(); ++i)
    warn(ranges.warnings[i],
         spec_of.size() == db.clips.size() ? spec_of.at(ranges.warning_clips.at(i)) : nullptr);

  // Large boxes of 128 frames: against 64, a game's single searches take a sixth less time at
  // 60 Hz and a third less at 240 Hz (fewer large boxes to test), batches of 64 game queries
  // 7 % less at 60 Hz and up to 8 % more at 240 Hz, the crowd's search at 60 Hz 7 % less.
  // The boxes span matchable frames only: at 60 Hz the unmatchable tails of bandai-1's clips
  // widen them enough that the crowd's search is a fifth slower (BENCHMARKS.md).
  db.bounds_small_size = 16;
  db.bounds_large_size = 128;
  buildDatabaseBounds(db, jobs);
}

void describeSkeleton(const Skeleton& skeleton, const SkeletonRoles& roles, double unit_scale,
                      CookedSkeleton& sk) {
  sk.names = skeleton.names;
  sk.parents = skeleton.parents;
  sk.bind_rotations = skeleton.bind_rotations;
  for (const auto& o : skeleton.offsets)
    sk.bind_translations.push_back(o * static_cast<float>(unit_scale));
  for (int r = 0; r < kRoleCount; ++r) sk.roles.emplace_back(static_cast<Role>(r), roles.joints[r]);
  sk.facing_axis = roles.facing_axis;
  sk.preset = roles.preset;
  sk.contact_joints = {roles.joint(Role::LeftToe), roles.joint(Role::RightToe)};
}

void recordSettings(const CookSettings& settings, const ClipStageSettings& stage, double unit_scale,
                    CookedDatabase& db) {
  CookedSettings& cs = db.settings;
  cs.frame_rate = static_cast<float>(settings.frame_rate);
  cs.unit_scale = static_cast<float>(unit_scale);
  cs.root_position_window = static_cast<uint16_t>(stage.root_position_window);
  cs.facing_window = static_cast<uint16_t>(stage.facing_window);
  cs.savitzky_golay_order = static_cast<uint16_t>(stage.order);
  cs.contact_speed_threshold = stage.contact_speed_threshold;
  cs.contact_median_frames = static_cast<uint16_t>(stage.contact_median_frames);
  cs.trailing_unmatchable_frames = static_cast<uint16_t>(stage.trailing_unmatchable_frames);
  cs.trajectory_times.assign(settings.trajectory_times.begin(), settings.trajectory_times.end());
  cs.block_weights.clear();
  for (const auto& b : db.feature_blocks) cs.block_weights.push_back(b.weight);
}

// What the store keeps of the database's pose coding: the key it is kept under, and the coding
// when the store has it.
struct KeptPoses {
  std::string key;
  std::optional<StoredPoseCoding> stored;
  std::vector<Warning> warnings;  // a kept coding that did not fit
};

// Every clip's part, and, for a cook that codes its poses from a store, the store's coding of
// them. The coding is looked up between the first part and the others (its key names every
// clip's key, and the first clip fixes the others'), so that a hit reads no other part's poses.
KeptPoses obtainParts(const CookRequest& request, ClipStore* store, int jobs,
                      const CookProgress& progress, bool code_poses, SourceTable& t,
                      ObtainedParts& out, ClipStoreCounts& counts, PartSink* sink,
                      StreamAppender& appender) {
  const int clip_count = static_cast<int>(request.clips.size());
  PartGetter getter(request, store, progress, t, out, sink);
  getter.obtain(0, PartPoses::Read);
  out.context = clipContext(request, out.parts[0]);
  KeptPoses kept;
  if (store && code_poses) {
    getter.makeKeys();
    kept.key = poseCodingKey(request, out.keys);
    bool refused = false;
    kept.stored = store->findPoses(kept.key, &refused);
    if (refused) ++counts.refused;
  }
  const PartPoses poses = kept.stored ? PartPoses::Skip : PartPoses::Read;
  if (kept.stored) PartGetter::dropPoses(out.parts[0]);
  // Poses to code are concatenated as the clips come, into streams reserved from the frames the
  // sources declare (read here, after the first clip: a cook that finds its coding needs none).
  const bool append_poses = code_poses && !kept.stored;
  appender.start(append_poses, out.context.skeleton.names.size(),
                 append_poses ? declaredClipFrames(request, jobs) : std::nullopt);
  appender.ready(0);
  getter.appendTo(&appender);
  parallelFor(1, clip_count, jobs, [&](int i) { getter.obtain(i, poses); });
  getter.count(counts);
  if (kept.stored) {
    uint64_t frames = 0;
    for (const ClipPart& part : out.parts) frames += partFrames(part);
    const size_t joints = out.context.skeleton.names.size();
    if (kept.stored->frame_count != frames || kept.stored->joint_count != joints) {
      // Only a damaged store gets here: the coding's key names these very parts.
      kept.warnings.push_back(
          {"cache-entry-refused",
           fmt::format("clip cache: the pose coding kept for these clips codes {} frames of {} "
                       "joints, not {} of {}; coding the poses again",
                       kept.stored->frame_count, kept.stored->joint_count, frames, joints),
           "", 0});
      kept.stored.reset();
      ++counts.refused;
      // Every part again, with its poses, for the assembly to concatenate; the counts stay those
      // of the first pass.
      appender.abandon();
      PartGetter again(request, store, {}, t, out);
      again.obtain(0, PartPoses::Read);
      parallelFor(1, clip_count, jobs, [&](int i) { again.obtain(i, PartPoses::Read); });
    }
  }
  counts.coded_poses_found = kept.stored.has_value();
  return kept;
}

// The pose coding: the store's, or made now (and offered to the store).
void codePoses(const CompressionSettings& compression, int jobs, ClipStore* store, KeptPoses& kept,
               CookedDatabase& db, CookReport& report) {
  if (kept.stored) {
    db.pose_coding = std::move(kept.stored->coding);
    report.compression = compressionReport(db.pose_coding, db.frame_count, db.joint_count);
    return;
  }
  compressPoses(db, compression, jobs, &report.compression, RawPoses::Release);
  if (store) store->keepPoses(kept.key, db.frame_count, db.joint_count, db.pose_coding);
}

}  // namespace

std::optional<std::vector<uint32_t>> declaredClipFrames(const CookRequest& request, int jobs) {
  const size_t count = request.clips.size();
  std::vector<uint32_t> frames(count);
  std::atomic<bool> known{true};
  if (jobs <= 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  parallelFor(0, static_cast<int>(count), jobs, [&](int i) {
    const ClipSpec& spec = request.clips[size_t(i)];
    std::optional<BvhMotionHeader> header;
    if (known && formatOf(spec.source) == SourceFormat::Bvh)
      header = readBvhMotionHeader(spec.source);
    // loadClip's frame range, then the resampling.
    const int64_t taken = header ? keptSourceFrames(spec, header->declared_frames) : 0;
    if (taken == 0 || taken > std::numeric_limits<int>::max()) {
      known = false;
      return;
    }
    frames[size_t(i)] = static_cast<uint32_t>(resampledFrameCount(
        static_cast<int>(taken), header->frame_rate, request.settings.frame_rate));
  });
  if (!known) return std::nullopt;
  std::vector<uint32_t> out;
  for (size_t i = 0; i < count; ++i) {
    out.push_back(frames[i]);
    if (request.clips[i].mirror) out.push_back(frames[i]);
  }
  return out;
}

CookedDatabase cookDatabase(const CookRequest& request, CookReport* report_out,
                            const CookProgress& progress, ClipStore* store, PoseOutput poses,
                            PartSink* sink) {
  const CookSettings& settings = request.settings;
  if (request.clips.empty()) throw InputError("there are no clips to cook; add at least one");
  checkWeights(settings);
  const bool code_poses =
      poses == PoseOutput::Coded && settings.compression.pose != CompressionSettings::Pose::None;
  if (code_poses) checkCompressionSettings(settings.compression);
  const ClipStageSettings stage = clipStageSettings(settings);
  const int jobs = request.jobs > 0
                       ? request.jobs
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CookReport own_report;
  CookReport& report = report_out ? *report_out : own_report;  // filled as the cook goes
  report = CookReport{};
  report.store.used = store != nullptr;
  Stopwatch stopwatch;

  SourceTable sources = distinctSources(request);
  if (store) {
    hashSourcesForStore(request, *store, jobs, sources, report.store);
    report.stages.push_back({"source-hashes", stopwatch.lap()});
  } else {
    hashSourcesAhead(request, jobs, sources);
    report.stages.push_back({"source-hashes", stopwatch.lap()});
  }
  ObtainedParts obtained;
  CookedDatabase db;
  Concatenated joined;
  StreamAppender appender(obtained.parts, {&db.local_rotations, &db.local_translations,
                                           &db.local_velocities, &db.local_angular_velocities,
                                           &joined.feature_rows, &db.root_motion, &db.contacts});
  KeptPoses kept = obtainParts(request, store, jobs, progress, code_poses, sources, obtained,
                               report.store, sink, appender);
  report.stages.push_back(
      {"clips", stopwatch.lap(), store && report.store.hits == int(request.clips.size())});

  // The link runs in manifest order on one thread.
  const WarningLog warn(report);
  reportParts(request, obtained.parts, obtained.context, warn, report);
  if (store)  // once per cause, not once per clip
    for (const auto& [cause, clips] : store->missCauses())
      spdlog::debug("clip cache: {} clip{} cooked again: {}", clips, clips == 1 ? "" : "s", cause);
  for (const Warning& w : kept.warnings) warn(w);
  if (store)
    for (const Warning& w : store->takeWarnings()) warn(w);
  db.sources = std::move(sources.sources);
  db.joint_count = static_cast<uint32_t>(obtained.context.skeleton.names.size());
  db.frame_rate = static_cast<float>(settings.frame_rate);
  // Raw poses for the file alone stay in the clips' arrays: the writer reads them there. (The
  // pose coding reads concatenated streams: through the clips' arrays it measured up to 10 %
  // slower on small corpora.)
  const bool pose_parts = poses == PoseOutput::Coded && !code_poses;
  concatenateParts(request, sources.source_of, obtained.parts, !kept.stored.has_value(), pose_parts,
                   appender.appended(), appender.appendsPoses(), joined, db, jobs);
  linkFeatures(request, joined, obtained.context.roles, settings, stage, warn, jobs, db);
  describeSkeleton(obtained.context.skeleton, obtained.context.roles, report.unit_scale,
                   db.skeleton);
  recordSettings(settings, stage, report.unit_scale, db);

  report.stages.push_back({"assembly", stopwatch.lap()});
  if (code_poses) {
    codePoses(settings.compression, jobs, store, kept, db, report);
    report.stages.push_back({"pose-compression", report.compression.seconds = stopwatch.lap(),
                             report.store.coded_poses_found});
    if (store)  // a coding it could not keep
      for (const Warning& w : store->takeWarnings()) warn(w);
  } else if (poses == PoseOutput::Coded) {  // pose = "none": the raw streams' sizes
    report.compression = compressionReport(db.pose_coding, db.frame_count, db.joint_count);
  }
  return db;
}

}  // namespace mmdb::cook
