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
#include "core/errors.h"
#include "core/fnv1a.h"
#include "core/limits.h"
#include "import/importer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <unistd.h>

namespace mm {
namespace {

// Standing hip heights outside this band (metres) mean the unit scale is probably wrong.
constexpr double kPlausibleHipHeightMin = 0.4, kPlausibleHipHeightMax = 2.5;

std::string clipName(const ClipSpec& spec) {
  return spec.name.empty() ? std::filesystem::path(spec.source).stem().string() : spec.name;
}

std::string where(const ClipSpec& spec) {
  std::string w = "clip " + clipName(spec) + " (" + spec.source;
  if (spec.manifest_line > 0) w += ", manifest line " + std::to_string(spec.manifest_line);
  return w + ")";
}

SourceFormat formatOf(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".bvh" ? SourceFormat::Bvh : ext == ".fbx" ? SourceFormat::Fbx : SourceFormat::Other;
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

// FNV-1a 64 of the file's bytes.
CookedSource hashSource(const std::string& path, const std::string& label) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the file to hash it");
  Fnv1a64 hash;
  uint64_t size = 0;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize got = in.gcount();
    hash.add(buffer.data(), static_cast<size_t>(got));
    size += static_cast<uint64_t>(got);
  }
  return {label.empty() ? path : label, hash.value(), size, formatOf(path)};
}

// Imports a clip and keeps the manifest's source frames.
RawClip loadClip(const ClipSpec& spec) {
  RawClip clip = importClipFile(spec.source, spec.take);
  validateSkeleton(clip.skeleton, where(spec));
  // Any importer: the rate and length must be usable before anything is resampled.
  if (!(clip.frame_rate >= kMinFrameRate && clip.frame_rate <= kMaxFrameRate))
    throw InputError(fmt::format("{}: the source runs at {:g} Hz; mmcook reads {:g} to {:g} Hz: "
                                 "re-export it at another rate",
                                 where(spec), clip.frame_rate, kMinFrameRate, kMaxFrameRate));
  const double seconds = (clip.frame_count - 1) / clip.frame_rate;
  if (seconds > kMaxClipSeconds)
    throw InputError(fmt::format("{}: the source lasts {:g} s, over the {:g} s (24 hours) limit "
                                 "of a clip; split it into shorter clips",
                                 where(spec), seconds, kMaxClipSeconds));
  clip.name = clipName(spec);
  const int n = clip.frame_count;
  const int first = spec.source_first_frame;
  const int count = spec.source_frame_count < 0 ? n - first : spec.source_frame_count;
  if (first < 0 || count <= 0 || first + count > n)
    throw InputError(where(spec) + ": source frames [" + std::to_string(first) + ", " +
                     std::to_string(first + count) + ") are not inside the file's " +
                     std::to_string(n) + " frames; fix the clip's frame range");
  if (first != 0 || count != n) {
    const size_t joints = clip.skeleton.names.size();
    clip.rotations = std::vector<glm::quat>(clip.rotations.begin() + first * joints,
                                            clip.rotations.begin() + (first + count) * joints);
    clip.translations = std::vector<glm::vec3>(clip.translations.begin() + first * joints,
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

// Runs work(i) for i in [0, count) on `jobs` threads. Work is taken in index order, and after a
// failure no new index is started, so every index below the first failing one has run: the error
// rethrown (the lowest failing index) is the same for any thread count.
// Physical memory of the machine, or 0 when unknown.
uint64_t physicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

template <typename Work>
void parallelFor(int count, int jobs, Work work) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    for (int i; !failed && (i = next.fetch_add(1)) < count;) {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  const int threads = std::max(1, std::min(jobs, count));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

struct CookedClipWork {
  ClipMotion motion;
  std::optional<ClipMotion> mirror;
  UnitScale unit;
  double source_rate = 0;
  int source_frames = 0;
  std::string take;
  std::vector<std::string> warnings;  // this clip's, in order
};

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
std::optional<std::string> facingWarning(const std::vector<CookedClipWork>& work,
                                         const SkeletonRoles& roles, const Skeleton& skeleton) {
  FacingAgreement total;
  for (const auto& w : work) {
    const FacingAgreement& a = w.motion.facing;
    total.moving_frames += a.moving_frames;
    total.configured_sum += a.configured_sum;
    for (int c = 0; c < FacingAgreement::kCandidates; ++c) total.candidate_sum[c] += a.candidate_sum[c];
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
  return std::string(buf);
}

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

CookedDatabase cookDatabase(const CookRequest& request, CookReport* report_out,
                            const CookProgress& progress) {
  const CookSettings& settings = request.settings;
  if (request.clips.empty()) throw InputError("there are no clips to cook; add at least one");
  checkWeights(settings);
  const ClipStageSettings stage = clipStageSettings(settings);
  CookReport report;

  // The first clip fixes the skeleton, the roles and (when nothing else gives it) the unit.
  const ClipSpec& first_spec = request.clips[0];
  std::optional<RawClip> first = loadClip(first_spec);
  const Skeleton skeleton = first->skeleton;
  const std::string first_where = where(first_spec);
  const SkeletonRoles roles = resolveRoles(skeleton, settings.roles, first_where);
  double inferred_scale = 0;
  if (settings.unit_scale <= 0 && first->declared_unit_scale <= 0 && roles.preset_unit_scale <= 0)
    inferred_scale = inferUnitScale(*first, roles.joint(Role::Hips), roles.joint(Role::LeftToe),
                                    roles.joint(Role::RightToe));
  report.preset = roles.preset;
  report.role_lines = roles.describe(skeleton);
  spdlog::info("skeleton preset: {}", roles.preset.empty() ? "(none, roles given)" : roles.preset);
  for (const auto& line : report.role_lines) spdlog::info("  {}", line);

  // Sources: one per distinct path, in order of first use.
  const int clip_count = static_cast<int>(request.clips.size());
  std::vector<int> source_of(clip_count);
  std::vector<int> hashing_clip;  // per source, the clip that hashes it
  std::vector<std::string> source_paths;
  for (int i = 0; i < clip_count; ++i) {
    const auto it = std::find(source_paths.begin(), source_paths.end(), request.clips[i].source);
    source_of[i] = static_cast<int>(it - source_paths.begin());
    if (it == source_paths.end()) {
      source_paths.push_back(request.clips[i].source);
      hashing_clip.push_back(i);
    }
  }
  std::vector<CookedSource> sources(source_paths.size());

  std::vector<CookedClipWork> work(clip_count);
  // The database's estimated size, summed as clips are imported and before each is resampled:
  // a cook that would exceed the file limit, or the machine's memory, stops here.
  std::atomic<uint64_t> estimated_bytes{0};
  const uint64_t memory = physicalMemoryBytes();
  std::mutex progress_mutex;
  int done = 0;
  const int jobs = request.jobs > 0 ? request.jobs
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Stopwatch stopwatch;
  parallelFor(clip_count, jobs, [&](int i) {
    const ClipSpec& spec = request.clips[i];
    CookedClipWork& w = work[i];
    RawClip raw = i == 0 ? std::move(*first) : loadClip(spec);
    if (i == 0) first.reset();
    if (i > 0) checkSameSkeleton(skeleton, first_where, raw.skeleton, where(spec));
    if (hashing_clip[source_of[i]] == i) sources[source_of[i]] = hashSource(spec.source, spec.source_label);
    const uint64_t frames =
        uint64_t(resampledFrameCount(raw.frame_count, raw.frame_rate, settings.frame_rate)) *
        (spec.mirror ? 2 : 1);
    const uint64_t total =
        estimated_bytes += estimatedDatabaseBytes(frames, raw.skeleton.names.size());
    if (total > kMaxDatabaseBytes)
      throw InputError(fmt::format(
          "{}: with this clip the database would be about {} bytes ({:.2f} GiB), over the {} "
          "bytes (2 GiB) an .mmdb file may hold; split the clips into several databases "
          "(several manifests), or cook at a lower frame_rate",
          where(spec), total, double(total) / (1u << 30), kMaxDatabaseBytes));
    if (memory > 0 && total * kCookMemoryPerFileByte > memory)
      throw InputError(fmt::format(
          "{}: with this clip the cook needs about {} bytes of memory ({:.1f} GiB), more than "
          "this machine's {} bytes; split the clips into several databases (several manifests)",
          where(spec), total * kCookMemoryPerFileByte,
          double(total * kCookMemoryPerFileByte) / (1u << 30), memory));
    w.source_rate = raw.frame_rate;
    w.source_frames = raw.frame_count;
    w.take = raw.take.empty() ? spec.take : raw.take;

    w.unit = chooseUnitScale(settings.unit_scale, raw, roles.preset_unit_scale, inferred_scale);
    scaleClip(raw, w.unit.scale);
    const double hip = standingHipHeight(raw, roles.joint(Role::Hips), roles.joint(Role::LeftToe),
                                         roles.joint(Role::RightToe));
    if (!(hip >= kPlausibleHipHeightMin && hip <= kPlausibleHipHeightMax))
      w.warnings.push_back(where(spec) + ": the standing hip height is " + std::to_string(hip) +
                           " m with a unit scale of " + std::to_string(w.unit.scale) + " (" +
                           w.unit.origin + "); if the character is an adult, set unit_scale to "
                           "about " + std::to_string(w.unit.scale * kStandingHipHeight / hip));
    RawClip clip = resampleClip(std::move(raw), settings.frame_rate);
    if (spec.mirror) {
      RawClip mirrored = mirrorClip(clip, request.mirror);
      mirrored.name = clip.name + "#mirror";
      w.mirror = cookClipMotion(std::move(mirrored), roles, stage);
    }
    w.motion = cookClipMotion(std::move(clip), roles, stage);
    append(w.warnings, w.motion.warnings);
    if (w.mirror) append(w.warnings, w.mirror->warnings);
    if (progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      progress(++done, clip_count);
    }
  });

  // Everything below runs in manifest order on one thread. Warnings are logged as soon as they
  // are known in that order, so a later error does not hide them.
  report.stage_seconds.emplace_back("import and clip stages", stopwatch.lap());
  auto warn = [&report](const std::string& text, const ClipSpec* spec = nullptr) {
    spdlog::warn("{}", text);
    report.warnings.push_back({text, spec ? spec->source_label : std::string(),
                               spec ? clipName(*spec) : std::string()});
  };
  for (int i = 0; i < clip_count; ++i) {
    report.source_frames += work[i].source_frames;
    for (const auto& text : work[i].warnings) warn(text, &request.clips[i]);
  }
  report.unit_scale = work[0].unit.scale;
  report.unit_scale_origin = work[0].unit.origin;
  spdlog::info("unit scale: {} m per source unit ({})", report.unit_scale, report.unit_scale_origin);
  if (auto facing = facingWarning(work, roles, skeleton)) warn(*facing);

  CookedDatabase db;
  db.sources = std::move(sources);
  const size_t joints = skeleton.names.size();
  db.joint_count = static_cast<uint32_t>(joints);
  db.frame_rate = static_cast<float>(settings.frame_rate);
  std::vector<float> raw_features;
  std::vector<ClipTagging> tagging;
  auto add = [&](const ClipMotion& m, int spec_index, const CookedClipWork& w, int mirror_of) {
    const ClipSpec& spec = request.clips[spec_index];
    CookedClip c;
    c.name = m.clip.name;
    c.source_index = source_of[spec_index];
    c.first_frame = db.frame_count;
    c.frame_count = static_cast<uint32_t>(m.clip.frame_count);
    c.source_frame_rate = static_cast<float>(w.source_rate);
    c.source_first_frame = static_cast<uint32_t>(spec.source_first_frame);
    c.source_frame_count = static_cast<uint32_t>(w.source_frames);
    c.mirrored = mirror_of >= 0;
    c.mirror_of = mirror_of;
    c.take = w.take;
    ClipTagging t{c.name, c.first_frame, c.frame_count, spec.tags, spec.ranges};
    if (c.mirrored) t.tags.push_back("mirrored");
    tagging.push_back(std::move(t));
    db.clips.push_back(std::move(c));
    db.frame_count += static_cast<uint32_t>(m.clip.frame_count);
    append(db.local_rotations, m.clip.rotations);
    append(db.local_translations, m.clip.translations);
    append(db.local_velocities, m.velocities);
    append(db.local_angular_velocities, m.angular_velocities);
    append(db.root_motion, m.root);
    append(db.contacts, m.contacts);
    append(raw_features, m.features);
  };
  size_t total_frames = 0;
  for (const auto& w : work)
    total_frames += w.motion.clip.frame_count + (w.mirror ? w.mirror->clip.frame_count : 0);
  for (auto* v : {&db.local_translations, &db.local_velocities, &db.local_angular_velocities})
    v->reserve(total_frames * joints);
  db.local_rotations.reserve(total_frames * joints);
  db.root_motion.reserve(total_frames);
  db.contacts.reserve(total_frames);
  raw_features.reserve(total_frames * kFeatureCount);
  for (int i = 0; i < clip_count; ++i) {
    const int original = static_cast<int>(db.clips.size());
    add(work[i].motion, i, work[i], -1);
    if (work[i].mirror) add(*work[i].mirror, i, work[i], original);
    work[i] = CookedClipWork();  // free as we go
  }

  db.feature_count = kFeatureCount;
  db.feature_stride = kFeatureStride;
  db.feature_blocks = featureBlocks(roles, settings.weights);
  NormalizedFeatures normalized =
      normalizeFeatures(raw_features, kFeatureCount, kFeatureStride, db.feature_blocks);
  db.features = std::move(normalized.features);
  db.feature_offset = std::move(normalized.offset);
  db.feature_scale = std::move(normalized.scale);

  MatchableRanges ranges = buildMatchableRanges(tagging, stage.trailing_unmatchable_frames);
  db.tag_names = std::move(ranges.tag_names);
  db.ranges = std::move(ranges.ranges);
  for (size_t c = 0; c < db.clips.size(); ++c) db.clips[c].tag_mask = ranges.clip_tag_masks[c];
  for (const auto& text : ranges.warnings) warn(text);

  db.bounds_small_size = 16;
  db.bounds_large_size = 64;
  FeatureBounds small = buildFeatureBounds(db.features, kFeatureStride, db.bounds_small_size);
  FeatureBounds large = buildFeatureBounds(db.features, kFeatureStride, db.bounds_large_size);
  db.bounds_small_min = std::move(small.min);
  db.bounds_small_max = std::move(small.max);
  db.bounds_large_min = std::move(large.min);
  db.bounds_large_max = std::move(large.max);

  CookedSkeleton& sk = db.skeleton;
  sk.names = skeleton.names;
  sk.parents = skeleton.parents;
  sk.bind_rotations = skeleton.bind_rotations;
  for (const auto& o : skeleton.offsets) sk.bind_translations.push_back(o * static_cast<float>(report.unit_scale));
  for (int r = 0; r < kRoleCount; ++r) sk.roles.emplace_back(static_cast<Role>(r), roles.joints[r]);
  sk.facing_axis = roles.facing_axis;
  sk.preset = roles.preset;
  sk.contact_joints = {roles.joint(Role::LeftToe), roles.joint(Role::RightToe)};

  CookedSettings& cs = db.settings;
  cs.frame_rate = static_cast<float>(settings.frame_rate);
  cs.unit_scale = static_cast<float>(report.unit_scale);
  cs.root_position_window = static_cast<uint16_t>(stage.root_position_window);
  cs.facing_window = static_cast<uint16_t>(stage.facing_window);
  cs.savitzky_golay_order = static_cast<uint16_t>(stage.order);
  cs.contact_speed_threshold = stage.contact_speed_threshold;
  cs.contact_median_frames = static_cast<uint16_t>(stage.contact_median_frames);
  cs.trailing_unmatchable_frames = static_cast<uint16_t>(stage.trailing_unmatchable_frames);
  cs.trajectory_times.assign(settings.trajectory_times.begin(), settings.trajectory_times.end());
  cs.block_weights.clear();
  for (const auto& b : db.feature_blocks) cs.block_weights.push_back(b.weight);

  report.stage_seconds.emplace_back("assembly", stopwatch.lap());
  if (report_out) *report_out = std::move(report);
  return db;
}

}  // namespace mm
