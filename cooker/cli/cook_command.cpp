#include "cli/cook_command.h"

#include "cli/build_outputs.h"
#include "cli/streamed_database.h"

#include "cache/clip_file.h"
#include "cache/clip_store.h"
#include "compress/pose_compression.h"
#include "cook/cook_database.h"
#include "core/cook_settings.h"
#include "core/diagnostic.h"
#include "core/errors.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "manifest/manifest.h"
#include "write/database_writer.h"

#include <mmdb/database.h>

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>

namespace mmdb::cook {
static_assert(kMaxDatabaseBytes == mmdb::kMaxFileBytes, "the cooker's limit is the runtime's");

namespace {

namespace fs = std::filesystem;

bool isManifest(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".toml";
}

// "cooking 12/105 clips" on one line of a terminal; nothing when stderr is a file or a pipe.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO)) {}
  ~ProgressLine() { clear(); }
  CookProgress callback() {
    if (!enabled_) return {};
    return [this](int done, int total) {
      std::lock_guard lock(mutex_);
      std::fprintf(stderr, "\rcooking %d/%d clips\033[K", done, total);
      if (done == total) std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
      shown_ = done != total;
    };
  }
  void clear() {
    std::lock_guard lock(mutex_);
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::mutex mutex_;
};

std::string humanBytes(uint64_t bytes) {
  char buffer[64];
  if (bytes >= (uint64_t{1} << 20))
    std::snprintf(buffer, sizeof(buffer), "%.1f MiB (%llu bytes)", bytes / 1048576.0,
                  static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buffer, sizeof(buffer), "%llu bytes", static_cast<unsigned long long>(bytes));
  return buffer;
}

// Checks the bytes with the runtime's loader before anything is written: a file that fails here
// is a cooker bug, never a user's.
// The verifications open the file only to check it: no half-precision copy for the search.
mmdb::OpenOptions verifyOptions() {
  mmdb::OpenOptions options;
  options.half_features = false;
  return options;
}

void verifyBytes(std::span<const uint8_t> bytes, const CookedDatabase& db) {
  // The loader needs 16-byte aligned bytes, as a mapped file is.
  struct AlignedFree {
    void operator()(uint8_t* p) const { ::operator delete[](p, std::align_val_t{16}); }
  };
  std::unique_ptr<uint8_t[], AlignedFree> copy(
      static_cast<uint8_t*>(::operator new[](bytes.size(), std::align_val_t{16})));
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  auto opened = mmdb::Database::fromMemory(copy.get(), bytes.size(), verifyOptions());
  if (!opened)
    throw std::runtime_error(std::string("verification failed: the runtime refuses the cooked "
                                         "database: ") +
                             mmdb::errorCodeName(opened.error().code()) + ": " +
                             opened.error().message());
  const mmdb::Database& loaded = opened.value();
  if (loaded.frameCount() != db.frame_count || loaded.jointCount() != db.joint_count ||
      loaded.clipCount() != db.clips.size() || loaded.ranges().size() != db.ranges.size() ||
      loaded.featureCount() != db.feature_count)
    throw std::runtime_error("verification failed: the reloaded counts differ from the cook's");
  // Coded streams must decode in the runtime to exactly what the cook measured its error on.
  for (int i = 0; i < kPoseStreamCount; ++i) {
    const auto& coded = db.pose_coding.streams[size_t(i)];
    if (!coded) continue;
    const std::vector<glm::vec4> expected =
        decodeCodedStream(*coded, db.frame_count, db.joint_count, db.pose_coding.segment_frames,
                          i == kStreamRotations);
    std::vector<mmdb::Float4> decoded(expected.size());
    mmdb::PoseBuffers out;
    mmdb::Span<mmdb::Float4>* spans[] = {&out.rotations, &out.translations, &out.velocities,
                                         &out.angular_velocities};
    *spans[i] = decoded;
    const mmdb::Status s = loaded.decodePoses(0, loaded.frameCount(), out);
    if (!s)
      throw std::runtime_error(std::string("verification failed: the runtime cannot decode the "
                                           "cooked poses: ") +
                               s.message());
    if (std::memcmp(decoded.data(), expected.data(), expected.size() * sizeof(glm::vec4)) != 0)
      throw std::runtime_error(
          "verification failed: the runtime decodes other poses than the "
          "cook measured");
  }
}

// Reopens the written file: it must be the bytes we wrote and open in the runtime.
void verifyWrittenFile(const std::string& path, std::span<const uint8_t> bytes) {
  auto opened = mmdb::Database::open(path.c_str(), verifyOptions());
  if (!opened)
    throw std::runtime_error("verification failed: '" + path +
                             "' does not reopen: " + mmdb::errorCodeName(opened.error().code()) +
                             ": " + opened.error().message());
  const auto written = opened.value().bytes();
  if (written.size() != bytes.size() || std::memcmp(written.data(), bytes.data(), bytes.size()))
    throw std::runtime_error("verification failed: '" + path +
                             "' on disk differs from the bytes written");
}

// Where a global frame is, for messages: "clip 'walk' frame 12".
std::string whereIs(const CookedDatabase& db, uint32_t frame) {
  for (const CookedClip& clip : db.clips)
    if (frame >= clip.first_frame && frame - clip.first_frame < clip.frame_count)
      return "clip '" + clip.name + "' frame " + std::to_string(frame - clip.first_frame) +
             " (global " + std::to_string(frame) + ")";
  return "global frame " + std::to_string(frame);
}

void printCompression(const CookedDatabase& db, const CompressionReport& c) {
  if (!c.enabled) {
    std::printf("  poses        raw (compression.pose = \"none\")\n");
    return;
  }
  std::printf("  poses        meshopt, within %g mm (shell %g mm), %g m/s, %g rad/s\n",
              db.pose_coding.position_tolerance * 1000.0, db.pose_coding.shell_distance * 1000.0,
              double(db.pose_coding.velocity_tolerance),
              double(db.pose_coding.angular_velocity_tolerance));
  for (int i = 0; i < kPoseStreamCount; ++i) {
    const StreamCompressionReport& s = c.streams[size_t(i)];
    const std::string joint = s.worst_joint >= 0 && size_t(s.worst_joint) < db.skeleton.names.size()
                                  ? db.skeleton.names[size_t(s.worst_joint)]
                                  : "-";
    std::printf(
        "    %-24s %s -> %s (%.1fx); %d constant, %d coded, %d exact tracks; worst %.3g %s "
        "at joint %s, %s\n",
        s.name.c_str(), humanBytes(s.raw_bytes).c_str(), humanBytes(s.coded_bytes).c_str(),
        s.coded_bytes ? double(s.raw_bytes) / double(s.coded_bytes) : 0.0, s.constant_tracks,
        s.coded_tracks, s.lossless_tracks, s.max_error, c.error_unit[i].c_str(), joint.c_str(),
        whereIs(db, s.worst_frame).c_str());
  }
}

void printSummary(const CookCommandOptions& options, const CookRequest& request,
                  const CookedDatabase& db, const CookReport& report,
                  const CompressionReport& compression, uint64_t file_bytes, double seconds,
                  const std::string& cache) {
  int mirrored = 0;
  for (const CookedClip& clip : db.clips) mirrored += clip.mirrored ? 1 : 0;
  uint64_t matchable = 0;
  for (const CookedRange& range : db.ranges) matchable += range.frame_count;
  const double duration = db.frame_rate > 0 ? db.frame_count / db.frame_rate : 0.0;

  std::printf("cooked %s\n", options.output.c_str());
  std::printf("  clips        %zu (%d mirrored) from %zu sources\n", db.clips.size(), mirrored,
              db.sources.size());
  std::printf("  frames       %u at %g Hz (%.2f s); %lld source frames read\n", db.frame_count,
              db.frame_rate, duration, report.source_frames);
  std::printf("  matchable    %llu frames in %zu ranges\n",
              static_cast<unsigned long long>(matchable), db.ranges.size());
  std::printf("  skeleton     %u joints, preset %s\n", db.joint_count,
              report.preset.empty() ? "(none: roles given)" : report.preset.c_str());
  for (const std::string& line : report.role_lines) std::printf("    %s\n", line.c_str());
  std::printf("  unit scale   %g m per source unit (%s)\n", report.unit_scale,
              report.unit_scale_origin.c_str());
  std::string tags;
  for (const std::string& tag : db.tag_names) tags += (tags.empty() ? "" : ", ") + tag;
  std::printf("  tags         %s\n", tags.empty() ? "(none)" : tags.c_str());
  if (report.store.used && !options.link)
    std::printf(
        "  clip cache   %d of %zu clips from the cache, %d cooked%s%s%s (%s)\n", report.store.hits,
        request.clips.size(), report.store.misses,
        report.store.coded_poses_found ? ", pose coding from the cache" : "",
        report.store.sources_unread
            ? fmt::format(", {} unchanged sources not read", report.store.sources_unread).c_str()
            : "",
        report.store.refused ? fmt::format(", {} entries refused", report.store.refused).c_str()
                             : "",
        cache.c_str());
  std::printf("  warnings     %zu\n", report.warnings.size());
  printCompression(db, compression);
  std::printf("  file size    %s\n", humanBytes(file_bytes).c_str());
  std::printf("  time         %.2f s%s\n", seconds, options.verify ? ", verified" : "");
  std::printf("  from         %s\n", request.manifest_path.empty()
                                         ? "command line (default settings)"
                                         : request.manifest_path.c_str());
}

// Whether two output paths name one file, existing or not ("out.mmdb" and "./out.mmdb").
bool sameFile(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ea, eb;
  const fs::path pa = fs::weakly_canonical(fs::absolute(a, ea), ea);
  const fs::path pb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && pa == pb;
}

}  // namespace

CookRequest quickRequest(const std::vector<std::string>& files) {
  CookRequest request;
  std::map<std::string, std::string> file_by_name;
  for (const std::string& file : files) {
    requireRegularFile(file, "check the path");
    ClipSpec clip;
    clip.name = fs::path(file).stem().string();
    clip.source = file;
    clip.source_label = file;
    const auto [it, inserted] = file_by_name.emplace(clip.name, file);
    if (!inserted)
      throw InputError("'" + it->second + "' and '" + file + "' would both be clip '" + clip.name +
                       "'; rename one, or write a manifest that names each clip");
    request.clips.push_back(std::move(clip));
  }
  return request;
}

// The command line's own mistakes, before anything is read.
void checkCookOptions(const CookCommandOptions& options, bool manifest) {
  if (options.inputs.empty()) throw UsageError("cook needs a manifest or motion files");
  if (manifest && options.inputs.size() > 1)
    throw UsageError(
        "give one manifest (.toml) or motion files, not both or several manifests; "
        "list extra clips in the manifest as [[clip]] tables");
  if (options.jobs < 0) throw UsageError("--jobs must be 0 (all cores) or more");
  if (options.output.empty()) throw UsageError("cook needs an output path: -o OUT.mmdb");
  if (options.link && !manifest)
    throw UsageError("link needs the manifest the clips were cooked from");
  if (options.no_cache && !options.cache.empty())
    throw UsageError("--cache and --no-cache do not go together");
}

// The outputs (database, depfile, report) may not be an input, a device or a FIFO, nor each
// other, and must be writable: checked before the cook, not after it.
void checkCookOutputs(const CookCommandOptions& options, const std::vector<std::string>& inputs) {
  checkOutputPath(options.output, inputs);
  checkWritable(options.output);
  if (!options.depfile.empty() && sameFile(options.depfile, options.output))
    throw UsageError("--depfile and -o name the same file '" + options.output + "'");
  if (!options.depfile.empty())
    checkDepfilePaths(depfileTarget(options.output, options.depfile_target), inputs);
  for (const auto& [extra, option] :
       {std::pair{&options.depfile, "--depfile"}, std::pair{&options.report, "--report"}}) {
    if (extra->empty()) continue;
    checkOutputPath(*extra, inputs, option);
    checkWritable(*extra);
  }
}

namespace {

// Where the clips' parts come from: a link's files, a cache folder, or nowhere (null). `cache`
// receives the cache folder in use, or "".
std::unique_ptr<ClipStore> openClipStore(const CookCommandOptions& options,
                                         const CookRequest& request, bool manifest,
                                         std::string& cache) {
  std::unique_ptr<ClipStore> store;
  if (options.link) {
    std::vector<std::string> names;
    for (const ClipSpec& clip : request.clips)
      names.push_back(clip.name.empty() ? fs::path(clip.source).stem().string() : clip.name);
    std::unique_ptr<ClipCacheFolder> poses;
    if (!options.cache.empty()) {
      poses = std::make_unique<ClipCacheFolder>(options.cache);
      cache = options.cache;
    }
    store = std::make_unique<ClipFileList>(options.clip_files, names, std::move(poses));
  } else if (!options.cache.empty()) {
    store = std::make_unique<ClipCacheFolder>(options.cache);  // unusable: an error
    cache = options.cache;
  } else if (manifest && !options.no_cache && !(cache = defaultClipCacheFolder()).empty()) {
    try {
      store = std::make_unique<ClipCacheFolder>(cache);
    } catch (const InputError& e) {  // the default folder is a convenience, never a failure
      spdlog::debug("no clip cache: {}", e.what());
      cache.clear();
    }
  }
  return store;
}

// --werror with warnings: a failed cook (exit 1) that writes nothing.
struct WarningsAsErrors : InputError {
  using InputError::InputError;
};

// What a cook read, for a failure's file and line.
struct CookInputs {
  std::string manifest;
  std::vector<std::string> files;  // the manifest, the sources, a link's parts
  bool complete = false;           // false: a manifest that did not parse may name more files
};

// The files a cook reads or may read, known before the manifest is checked: the inputs, the
// sources its manifest names (however badly it is written) and a link's parts.
CookInputs inputsBeforeTheCook(const CookCommandOptions& options, bool manifest) {
  CookInputs read;
  read.files = options.inputs;
  read.complete = true;
  if (manifest && !options.inputs.empty()) {
    read.manifest = options.inputs[0];
    ManifestSources sources = listManifestSources(read.manifest);
    read.files.insert(read.files.end(), sources.paths.begin(), sources.paths.end());
    read.complete = sources.complete;
  }
  read.files.insert(read.files.end(), options.clip_files.begin(), options.clip_files.end());
  return read;
}

// Whether a file holds a cook report (of any status): the only kind of file a failed cook's
// report may replace when the manifest did not parse, since its sources are then unknown.
bool holdsCookReport(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[256] = {};
  in.read(head, sizeof head - 1);
  const std::string_view text(head, static_cast<size_t>(in.gcount()));
  return text.starts_with("{") && text.find("\"format\"") != std::string_view::npos &&
         (text.find("\"command\": \"cook\"") != std::string_view::npos ||
          text.find("\"command\": \"link\"") != std::string_view::npos);
}

// The cook itself; `report` and `read` fill as it goes, for the report of a cook that fails.
int cookAndWrite(const CookCommandOptions& options, bool manifest,
                 std::chrono::steady_clock::time_point start, CookReport& report,
                 CookInputs& read) {
  CookRequest request = manifest ? readManifest(options.inputs[0]) : quickRequest(options.inputs);
  request.jobs = options.jobs;
  read.manifest = request.manifest_path;
  std::vector<std::string> inputs = options.inputs;
  for (const ClipSpec& clip : request.clips) inputs.push_back(clip.source);
  inputs.insert(inputs.end(), options.clip_files.begin(), options.clip_files.end());
  read.files = inputs;
  read.complete = true;
  checkCookOutputs(options, inputs);
  std::string cache;
  std::unique_ptr<ClipStore> store = openClipStore(options, request, manifest, cache);

  CookedDatabase db;
  // A raw cook's poses go into the file while the clips cook (a link's parts are not cooked).
  // Nothing reads them again unless there is an output to compare with, --verify or a report's
  // hash: else each clip's poses are released once written.
  std::error_code exists_error;
  const bool release_poses = !fs::exists(options.output, exists_error) && !exists_error &&
                             !options.verify && options.report.empty();
  std::unique_ptr<StreamedDatabaseFile> streamed =
      options.link
          ? nullptr
          : StreamedDatabaseFile::open(options.output, request, request.jobs, release_poses);
  {
    ProgressLine progress(!options.quiet);
    db = cookDatabase(request, &report, progress.callback(), store.get(), PoseOutput::Coded,
                      streamed.get());
  }
  if (options.werror && !report.warnings.empty())
    throw WarningsAsErrors(fmt::format(
        "{} warning{} and --werror: nothing written to {}; fix {} or cook without --werror",
        report.warnings.size(), report.warnings.size() == 1 ? "" : "s", options.output,
        report.warnings.size() == 1 ? "it" : "them"));
  const CompressionReport& compression = report.compression;
  const auto serialize_start = std::chrono::steady_clock::now();
  SerializedDatabase bytes = serializeForWriting(db);
  if (bytes.size() > kMaxDatabaseBytes)  // the cook's estimate stops this earlier; a last guard
    throw InputError(options.output + ": the database is " + std::to_string(bytes.size()) +
                     " bytes, over the " + std::to_string(kMaxDatabaseBytes) +
                     " bytes (2 GiB) an .mmdb file may hold; split the clips into several "
                     "databases (several manifests)");
  if (options.verify) verifyBytes(bytes.whole(), db);
  const auto write_start = std::chrono::steady_clock::now();
  report.stages.push_back(
      {"serialization", std::chrono::duration<double>(write_start - serialize_start).count()});
  // Unchanged bytes leave the file and its time alone, so a build skips what depends on it.
  // (Released poses: there was no file to compare with when the cook began.)
  const bool unchanged =
      !(streamed && streamed->released()) && fileHoldsBytes(options.output, bytes);
  if (!unchanged) {
    if (!streamed) {
      writeFileAtomically(options.output, bytes);
    } else if (!streamed->commit(bytes)) {
      // A clip held other frames than its file declares, after poses were released: rare (the
      // importer warns of such a file); the cook is made again and written after it.
      spdlog::info(
          "a clip holds other frames than its file declares, after the poses of the clips before "
          "it were written and released: cooking again");
      streamed.reset();
      bytes = SerializedDatabase();
      db = cookDatabase(request, &report, {}, store.get(), PoseOutput::Coded);
      bytes = serializeForWriting(db);
      writeFileAtomically(options.output, bytes);
    }
  }
  streamed.reset();  // unchanged: the poses it wrote go with the temporary file
  if (!options.depfile.empty()) {
    // A link depends on its parts, not on the sources they were cooked from.
    std::vector<std::string> depends = options.inputs;
    depends.insert(depends.end(), options.clip_files.begin(), options.clip_files.end());
    const std::string text =
        options.link ? depfileText(depfileTarget(options.output, options.depfile_target), depends)
                     : depfileText(depfileTarget(options.output, options.depfile_target), request);
    writeFileAtomically(options.depfile, std::vector<uint8_t>(text.begin(), text.end()),
                        Durability::Unsynced);
  }
  if (options.verify) {
    try {
      verifyWrittenFile(options.output, bytes.whole());
    } catch (...) {
      std::error_code ec;
      fs::remove(options.output, ec);  // never leave a file that failed its check
      throw;
    }
  }
  const auto end = std::chrono::steady_clock::now();
  report.stages.push_back({"write", std::chrono::duration<double>(end - write_start).count()});
  const double seconds = std::chrono::duration<double>(end - start).count();
  if (!options.report.empty()) {
    CookReportFacts facts;
    facts.link = options.link;
    facts.request = &request;
    facts.db = &db;
    facts.report = &report;
    facts.compression = &compression;
    facts.output = options.output;
    facts.bytes = &bytes;
    facts.unchanged = unchanged;
    facts.verified = options.verify;
    facts.seconds = seconds;
    facts.cache = cache;
    const std::string json = cookReportJson(facts);
    writeFileAtomically(options.report, std::vector<uint8_t>(json.begin(), json.end()));
  }
  spdlog::debug("{} {} ({} bytes)", unchanged ? "unchanged:" : "wrote", options.output,
                bytes.size());
  if (!options.quiet)
    printSummary(options, request, db, report, compression, bytes.size(), seconds, cache);
  return kExitOk;
}

}  // namespace

int runCookCommand(const CookCommandOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const bool manifest = std::count_if(options.inputs.begin(), options.inputs.end(), isManifest) > 0;
  // Every file the run may read, the sources of a manifest that fails its checks included, so
  // that no output (the failure's report above all) is ever written over one of them.
  CookInputs read = inputsBeforeTheCook(options, manifest);
  // The report says how a cook ended, failed or not: its path is checked before anything else.
  if (!options.report.empty()) {
    if (sameFile(options.report, options.output))
      throw UsageError("--report and -o name the same file '" + options.output + "'");
    if (sameFile(options.report, options.depfile))
      throw UsageError("--report and --depfile name the same file '" + options.report + "'");
    checkOutputPath(options.report, read.files, "--report");
    checkWritable(options.report);
  }
  CookReport report;
  const auto fail = [&](const char* code, int exit_code, const char* message) {
    if (options.report.empty()) return;
    try {
      checkOutputPath(options.report, read.files, "--report");  // never over an input
    } catch (const InputError&) {
      return;
    }
    std::error_code exists_error;
    if (!read.complete && fs::exists(options.report, exists_error) &&
        !holdsCookReport(options.report)) {
      spdlog::error("{}", diagnostic("error", options.report, 0,
                                     "not written with the failure: it holds no cook report and "
                                     "the manifest did not parse, so it may be a source; give "
                                     "--report a new path or a report's"));
      return;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string json =
        failedCookReportJson(options.link, options.output, read.manifest, &report,
                             cookFailure(code, exit_code, message, read.files), seconds);
    try {
      writeFileAtomically(options.report, std::vector<uint8_t>(json.begin(), json.end()));
    } catch (const std::exception& e) {  // never leave the last success's report behind
      std::error_code ec;
      fs::remove(options.report, ec);
      spdlog::error(
          "{}", diagnostic("error", "", 0,
                           std::string("cannot write the report of the failed cook: ") + e.what()));
    }
  };
  try {
    checkCookOptions(options, manifest);
    return cookAndWrite(options, manifest, start, report, read);
  } catch (const WarningsAsErrors& e) {
    fail("warnings-as-errors", kExitBadInput, e.what());
    throw;
  } catch (const InputError& e) {
    fail("bad-input", kExitBadInput, e.what());
    throw;
  } catch (const UsageError& e) {
    fail("bad-usage", kExitUsage, e.what());
    throw;
  } catch (const std::exception& e) {
    fail("internal", kExitInternal, e.what());
    throw;
  }
}

int runClipEntriesCommand(const ClipEntriesOptions& options) {
  if (options.folder.empty()) throw UsageError("cook-entries needs an output folder: -o DIR");
  const CookRequest request = readManifest(options.manifest);
  const int count = static_cast<int>(request.clips.size());
  std::error_code ec;
  fs::create_directories(options.folder, ec);
  const auto write = [](const fs::path& path, const std::string& text) {
    const std::vector<uint8_t> bytes(text.begin(), text.end());
    if (!fileHoldsBytes(path.string(), bytes))
      writeFileAtomically(path.string(), bytes, Durability::Unsynced);
  };
  const fs::path folder(options.folder);
  if (options.expect >= 0 && count != options.expect) {
    write(folder / "clips.count", std::to_string(count) + "\n");
    throw InputError(fmt::format(
        "{}: the manifest now has {} clips where the build was made for {}; build again (the "
        "build counts the clips again first)",
        options.manifest, count, options.expect));
  }
  for (int i = 0; i < count; ++i)
    write(folder / (std::to_string(i) + ".entry"), clipEntryText(request, i));
  if (!options.depfile.empty()) {
    // Named by its first output, as Ninja reads it.
    const std::string text =
        depfileText(depfileTarget((folder / "0.entry").string(), options.depfile_target),
                    std::vector<std::string>{options.manifest});
    writeFileAtomically(options.depfile, std::vector<uint8_t>(text.begin(), text.end()),
                        Durability::Unsynced);
  }
  return kExitOk;
}

namespace {

// One clip of a cook-clip run: its part from the output when that is current, else from the
// cache, else cooked; written unless current. Returns the part (for the first clip's context).
ClipPart cookOnePart(const CookRequest& request, int index, const std::string& name,
                     const std::string& output, const ClipContext* context, ClipCacheFolder* cache,
                     const CookClipOptions& options) {
  const ClipSpec& spec = request.clips[size_t(index)];
  const CookedSource source = hashSource(spec.source, spec.source_label);
  const std::string key = clipKey(request, index, source, context);

  // An output cooked from the same inputs is the answer already: nothing to import or write.
  bool current = false;
  std::optional<ClipPart> part;
  std::error_code ec;
  if (fs::is_regular_file(output, ec)) {
    try {
      ClipFile file = readClipFile(output, PartPoses::Skip);
      current = file.key == key;
      if (current) part = std::move(file.part);
    } catch (const InputError&) {  // damaged or from another cooker: cooked again below
    }
  }
  if (!part && cache) {
    bool refused = false;
    part = cache->find(key, index, &refused, PartPoses::Read);
    for (const Warning& w : cache->takeWarnings()) spdlog::warn("{}", warningDiagnostic(w, "", 0));
    if (part) spdlog::debug("clip {}: from the clip cache {}", name, options.cache);
  }
  if (!part) {
    part = cookClipPart(request, index, source, context);
    if (cache) {
      cache->keep(key, index, *part);
      for (const Warning& w : cache->takeWarnings())
        spdlog::warn("{}", warningDiagnostic(w, "", 0));
    }
  }
  // The part's warnings, whether it was cooked now or before (like a cache hit's).
  size_t warnings = 0;
  for (const ClipMotion* m : {&part->motion, part->mirror ? &*part->mirror : nullptr}) {
    if (!m) continue;
    warnings += m->warnings.size();
    for (const Warning& w : m->warnings)
      spdlog::warn("{}", warningDiagnostic(w, spec.manifest, spec.manifest_line));
  }
  if (options.werror && warnings > 0) {
    const std::string message =
        fmt::format("clip {}: {} warning{} and --werror: nothing written to {}", name, warnings,
                    warnings == 1 ? "" : "s", output);
    if (!spec.manifest.empty() && spec.manifest_line > 0)
      throw InputError(spec.manifest, spec.manifest_line, message);
    throw InputError(message);
  }
  if (!current) {
    const ClipFileBytes bytes = serializeClipFile(key, *part);
    const auto pieces = bytes.pieces();
    if (!fileHoldsBytes(output, pieces)) writeFileAtomically(output, pieces, Durability::Unsynced);
  }
  if (!options.quiet)
    std::printf("%s %s (clip %d of %d: %s)\n", current ? "up to date" : "cooked", output.c_str(),
                index, static_cast<int>(request.clips.size()), name.c_str());
  return std::move(*part);
}

}  // namespace

int runCookClipCommand(const CookClipOptions& options) {
  if (options.outputs.empty()) throw UsageError("cook-clip needs an output path: -o OUT.mmclip");
  if (options.indices.empty() == options.clip.empty())
    throw UsageError("cook-clip needs one of --index N (from 0) or --clip NAME");
  if (options.outputs.size() != (options.clip.empty() ? options.indices.size() : 1))
    throw UsageError(fmt::format("cook-clip needs one -o per clip: {} clip{}, {} output{}",
                                 options.clip.empty() ? options.indices.size() : 1,
                                 options.clip.empty() && options.indices.size() != 1 ? "s" : "",
                                 options.outputs.size(), options.outputs.size() == 1 ? "" : "s"));
  if (!options.entries.empty() && options.entries.size() != options.outputs.size())
    throw UsageError(
        fmt::format("cook-clip needs one --entry per clip or none: {} clips, {} entries",
                    options.outputs.size(), options.entries.size()));
  const CookRequest request = readManifest(options.manifest);
  const int count = static_cast<int>(request.clips.size());
  auto nameOf = [&](int i) {
    const ClipSpec& c = request.clips[i];
    return c.name.empty() ? fs::path(c.source).stem().string() : c.name;
  };
  std::vector<int> indices = options.indices;
  if (!options.clip.empty()) {
    int index = -1;
    for (int i = 0; i < count && index < 0; ++i)
      if (nameOf(i) == options.clip) index = i;
    if (index < 0)
      throw InputError(options.manifest + ": no clip is named '" + options.clip +
                       "'; mmcook inspect-source and the manifest's [[clip]] names say which are");
    indices = {index};
  }
  std::set<int> seen;
  for (const int index : indices) {
    if (index < 0 || index >= count)
      throw InputError(fmt::format("{}: --index {} is past the manifest's {} clips (0 to {})",
                                   options.manifest, index, count, count - 1));
    if (!seen.insert(index).second)
      throw UsageError(fmt::format("--index {} is given twice", index));
  }
  // Each output's path made canonical once (sameFile() on every pair would make each one again
  // for every other: hundreds of path walks for an edge of 26 clips).
  const auto canonical = [](const std::string& path) {
    std::error_code ec;
    const fs::path made = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? fs::path() : made;  // empty: matches nothing, as sameFile()
  };
  std::map<fs::path, const std::string*> named;  // each output as it was spelled
  for (const std::string& output : options.outputs) {
    if (output.empty()) throw UsageError("-o names an empty path; give each clip's part a file");
    if (!options.first.empty() && options.first == output)
      throw UsageError("--first and -o name the same file");
    const fs::path path = canonical(output);
    if (!path.empty() && !named.emplace(path, &output).second)
      throw UsageError("-o names the file '" + output + "' twice");
  }

  // Every file the run reads or may read: the first clip's source gives the others their
  // context, and a part may be checked against any clip's entry, so every source counts.
  std::vector<std::string> inputs{options.manifest};
  for (const ClipSpec& clip : request.clips) inputs.push_back(clip.source);
  if (!options.first.empty()) inputs.push_back(options.first);
  inputs.insert(inputs.end(), options.entries.begin(), options.entries.end());
  for (const std::string& output : options.outputs) {
    // A build names parts in a folder of their own: it is made here, not by a step before.
    if (const fs::path folder = fs::path(output).parent_path(); !folder.empty()) {
      std::error_code made;
      fs::create_directories(folder, made);  // a failure is checkWritable's to report
    }
    checkOutputPath(output, inputs);
    checkWritable(output);
  }
  if (!options.depfile.empty()) {
    if (const auto same = named.find(canonical(options.depfile)); same != named.end())
      throw UsageError("--depfile and -o name the same file '" + *same->second + "'");
    checkOutputPath(options.depfile, inputs, "--depfile");
    checkWritable(options.depfile);
    checkDepfilePaths(depfileTarget(options.outputs[0], options.depfile_target), inputs);
  }

  // With entry files, the parts depend on them rather than on the whole manifest.
  std::vector<std::string> depends;
  if (options.entries.empty()) depends.push_back(options.manifest);
  for (size_t k = 0; k < options.entries.size(); ++k) {
    const int index = indices[k];
    const std::string entry = clipEntryText(request, index);
    if (!fileHoldsBytes(options.entries[k],
                        std::span(reinterpret_cast<const uint8_t*>(entry.data()), entry.size())))
      throw InputError(options.entries[k] + ": it does not hold clip " + nameOf(index) +
                       "'s entry as " + options.manifest +
                       " gives it now; write the entries again with mmcook cook-entries");
    depends.push_back(options.entries[k]);
  }
  for (const int index : indices) depends.push_back(request.clips[size_t(index)].source);

  std::unique_ptr<ClipCacheFolder> cache;
  if (!options.cache.empty()) cache = std::make_unique<ClipCacheFolder>(options.cache);

  // A later clip is cooked in the context (skeleton, roles, unit) of the first clip: the first
  // clip's part when it is one of these, else the --first part, else the first clip cooked here.
  std::optional<ClipContext> context;
  std::vector<size_t> order(indices.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_partition(order.begin(), order.end(), [&](size_t k) { return indices[k] == 0; });
  const bool first_here = indices[order[0]] == 0;  // cooked first, it gives the others' context
  if (!first_here && !options.first.empty()) {
    // The part vouches for its source, as in a link: the build re-cooks it when that changes.
    ClipFile file = readClipFile(options.first, PartPoses::Skip);  // the context needs no pose
    const std::string first_key = clipKey(request, 0, file.part.source, nullptr);
    if (file.key != first_key)
      throw InputError(options.first + ": it is not the part of the manifest's first clip " +
                       nameOf(0) + " as it is now (first difference: " +
                       firstKeyDifference(file.key, first_key) + "); cook it again");
    context = clipContext(request, file.part);
    depends.push_back(options.first);
  } else if (!first_here) {
    const ClipSpec& first = request.clips[0];
    const CookedSource first_source = hashSource(first.source, first.source_label);
    context = clipContext(request, cookClipPart(request, 0, first_source, nullptr));
    depends.push_back(first.source);
  }
  for (const size_t k : order) {
    const int index = indices[k];
    ClipPart part = cookOnePart(request, index, nameOf(index), options.outputs[k],
                                index > 0 ? &*context : nullptr, cache.get(), options);
    if (index == 0 && indices.size() > 1) context = clipContext(request, part);
  }
  if (!options.depfile.empty()) {
    // Named by the first output, as Ninja reads it (it records the edge's inputs for each).
    const std::string text =
        depfileText(depfileTarget(options.outputs[0], options.depfile_target), depends);
    writeFileAtomically(options.depfile, std::vector<uint8_t>(text.begin(), text.end()),
                        Durability::Unsynced);
  }
  return kExitOk;
}

}  // namespace mmdb::cook
