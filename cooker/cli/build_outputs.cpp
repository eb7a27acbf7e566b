#include "cli/build_outputs.h"

#include "cli/json_writer.h"
#include "core/errors.h"
#include "core/fnv1a.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace mmdb::cook {
namespace {

namespace fs = std::filesystem;

// Ninja's depfile parser (1.11, as Make's) reads a path as a run of letters, digits, bytes from
// 0x80 and + , / _ : . ~ ( ) { } % = @ [ ] ! -, with "\ " for a space, "\#" for '#', "$$" for '$'
// and a backslash before any other character kept as it is. Any other character ends the path,
// escaped or not (a quote, ';', '*', a tab: Ninja reads two wrong paths), and a newline ends the
// line.
bool plainInDepfile(unsigned char c) {
  return std::isalnum(c) || c >= 0x80 || std::strchr("+,/_:.~(){}%=@[]!-", c) != nullptr;
}

std::string characterName(unsigned char c) {
  if (c == '\n') return "a newline";
  if (c == '\t') return "a tab";
  char name[32];
  if (c < 0x20 || c == 0x7f)
    std::snprintf(name, sizeof name, "a control character (0x%02x)", unsigned(c));
  else
    std::snprintf(name, sizeof name, "'%c'", c);
  return name;
}

// Why a depfile cannot carry `path` so that Ninja reads it back, or "".
std::string depfileProblem(const std::string& path) {
  for (size_t i = 0; i < path.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(path[i]);
    if (plainInDepfile(c) || c == ' ' || c == '#' || c == '$') continue;
    if (c == '\\') {
      // "\:" reads as ':', and backslashes that end the path escape the space after them.
      if (i + 1 == path.size()) return "a backslash at its end";
      if (path[i + 1] == ':') return "a backslash before ':'";
      continue;
    }
    return characterName(c);
  }
  return "";
}

std::string escapeDepfilePath(const std::string& path) {
  std::string out;
  size_t backslashes = 0;  // the run just before
  for (char c : path) {
    if (c == ' ') {
      // 2N+1 backslashes and a space read as N backslashes and a space.
      out.append(backslashes + 1, '\\');
    } else if (c == '#') {
      out += '\\';  // "\#" reads as '#', the backslashes before it as they are
    } else if (c == '$') {
      out += '$';
    }
    backslashes = c == '\\' ? backslashes + 1 : 0;
    out += c;
  }
  return out;
}

std::string absolute(const std::string& path) {
  std::error_code ec;
  const fs::path full = fs::absolute(path, ec);
  return ec ? path : full.lexically_normal().string();
}

}  // namespace

std::string depfileTarget(const std::string& output, const std::string& given) {
  return given.empty() ? absolute(output) : given;
}

std::string depfileText(const std::string& output, const CookRequest& request) {
  std::vector<std::string> inputs;
  if (!request.manifest_path.empty()) inputs.push_back(request.manifest_path);
  for (const ClipSpec& clip : request.clips) inputs.push_back(clip.source);
  return depfileText(output, inputs);
}

void checkDepfilePath(const std::string& path) {
  const std::string problem = depfileProblem(path);
  if (!problem.empty())
    throw InputError("--depfile: the path '" + path + "' holds " + problem +
                     ", which a depfile cannot carry (Ninja and Make would read other paths); "
                     "rename the folder or file, or cook without --depfile");
}

std::vector<std::string> depfilePaths(const std::string& output,
                                      const std::vector<std::string>& given) {
  std::vector<std::string> paths{output};
  std::set<std::string> seen;
  const auto add = [&](const std::string& path) {
    const std::string full = absolute(path);
    if (seen.insert(full).second) paths.push_back(full);
  };
  for (const std::string& path : given) add(path);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);  // a new mmcook re-cooks
  if (!ec) add(self.string());
  return paths;
}

void checkDepfilePaths(const std::string& output, const std::vector<std::string>& inputs) {
  for (const std::string& path : depfilePaths(output, inputs)) checkDepfilePath(path);
}

std::string depfileText(const std::string& output, const std::vector<std::string>& given) {
  const std::vector<std::string> paths = depfilePaths(output, given);
  for (const std::string& path : paths) checkDepfilePath(path);
  std::string text = escapeDepfilePath(paths[0]) + ":";
  for (size_t i = 1; i < paths.size(); ++i) text += " \\\n  " + escapeDepfilePath(paths[i]);
  return text + "\n";
}

namespace {

void nullOr(JsonWriter& json, std::string_view name, const std::string& text) {
  json.key(name);
  if (text.empty())
    json.null();
  else
    json.value(text);
}

void nullOr(JsonWriter& json, std::string_view name, int number) {
  json.key(name);
  if (number <= 0)
    json.null();
  else
    json.value(number);
}

void writeHead(JsonWriter& json, bool link, bool ok) {
  json.field("format", kCookReportFormat);
  json.field("command", std::string(link ? "link" : "cook"));
  json.field("status", std::string(ok ? "ok" : "failed"));
}

void writeWarnings(JsonWriter& json, const std::vector<CookWarning>& warnings,
                   const std::string& manifest) {
  json.field("warning_count", uint64_t{warnings.size()});
  json.key("warnings").beginArray();
  for (const CookWarning& w : warnings) {
    json.beginObject().field("code", w.code).field("message", w.text);
    nullOr(json, "file", w.file);
    nullOr(json, "line", w.line);
    nullOr(json, "clip", w.clip);
    nullOr(json, "source", w.source);
    nullOr(json, "manifest", w.manifest_line > 0 ? manifest : std::string());
    nullOr(json, "manifest_line", w.manifest_line);
    json.endObject();
  }
  json.endArray();
}

}  // namespace

std::string cookReportJson(const CookReportFacts& f) {
  const CookedDatabase& db = *f.db;
  const CookReport& report = *f.report;
  int mirrored = 0;
  for (const CookedClip& clip : db.clips) mirrored += clip.mirrored ? 1 : 0;
  uint64_t matchable = 0;
  for (const CookedRange& range : db.ranges) matchable += range.frame_count;
  char hash[17];
  Fnv1a64 output_hash;
  f.bytes->pieces([&](std::span<const uint8_t> piece) {
    output_hash.add(piece.data(), piece.size());
    return true;
  });
  std::snprintf(hash, sizeof(hash), "%016" PRIx64, output_hash.value());

  std::ostringstream text;
  {
    JsonWriter json(text);
    json.beginObject();
    writeHead(json, f.link, true);
    json.key("error").null();
    json.field("output", f.output).field("output_bytes", uint64_t{f.bytes->size()});
    json.field("output_fnv1a64", std::string(hash)).field("unchanged", f.unchanged);
    json.field("verified", f.verified);
    nullOr(json, "manifest", f.request->manifest_path);
    json.field("clips", uint64_t{db.clips.size()}).field("mirrored_clips", mirrored);
    json.field("sources", uint64_t{db.sources.size()});
    json.field("frames", db.frame_count).field("frame_rate", db.frame_rate);
    json.field("source_frames_read", int64_t{report.source_frames});
    json.field("matchable_frames", matchable).field("ranges", uint64_t{db.ranges.size()});
    json.field("joints", db.joint_count);
    nullOr(json, "preset", report.preset);
    json.key("roles").beginArray();
    for (const RoleJoint& r : report.roles)
      json.beginObject()
          .field("role", r.role)
          .field("joint", r.joint)
          .field("index", r.index)
          .endObject();
    json.endArray();
    json.field("unit_scale", report.unit_scale)
        .field("unit_scale_origin", report.unit_scale_origin);
    json.key("tags").beginArray();
    for (const std::string& tag : db.tag_names) json.value(tag);
    json.endArray();
    writeWarnings(json, report.warnings, f.request->manifest_path);
    if (const CompressionReport* c = f.compression) {
      json.key("compression").beginObject();
      json.field("pose", std::string(c->enabled ? "meshopt" : "none"));
      if (c->enabled) {
        const CookedPoseCoding& pc = db.pose_coding;
        json.field("position_tolerance_m", double(pc.position_tolerance));
        json.field("shell_distance_m", double(pc.shell_distance));
        json.field("velocity_tolerance_m_per_s", double(pc.velocity_tolerance));
        json.field("angular_velocity_tolerance_rad_per_s", double(pc.angular_velocity_tolerance));
        json.field("segment_frames", pc.segment_frames);
      }
      json.key("streams").beginArray();
      for (int i = 0; i < kPoseStreamCount; ++i) {
        const StreamCompressionReport& s = c->streams[size_t(i)];
        json.beginObject().field("name", s.name).field("raw_bytes", s.raw_bytes);
        json.field("coded_bytes", c->enabled ? s.coded_bytes : s.raw_bytes);
        if (c->enabled) {
          json.field("ratio", s.coded_bytes ? double(s.raw_bytes) / double(s.coded_bytes) : 0.0);
          json.field("constant_tracks", s.constant_tracks).field("coded_tracks", s.coded_tracks);
          json.field("exact_tracks", s.lossless_tracks);
          json.field("max_error", s.max_error).field("error_unit", c->error_unit[i]);
          json.key("worst_joint");
          if (s.worst_joint >= 0 && size_t(s.worst_joint) < db.skeleton.names.size())
            json.value(db.skeleton.names[size_t(s.worst_joint)]);
          else
            json.null();
          json.field("worst_frame", s.worst_frame);
        }
        json.endObject();
      }
      json.endArray();
      json.endObject();
    }
    json.key("stages").beginArray();
    for (const CookStage& stage : report.stages)
      json.beginObject()
          .field("stage", stage.id)
          .field("seconds", stage.seconds)
          .field("from_store", stage.from_store)
          .endObject();
    json.endArray();
    // A link's parts are the files it was given, not a cache's entries.
    json.key("clip_cache");
    if (!report.store.used || f.link) {
      json.null();
    } else {
      json.beginObject();
      nullOr(json, "folder", f.cache);
      json.field("hits", report.store.hits).field("misses", report.store.misses);
      json.field("refused", report.store.refused);
      json.field("coded_poses_found", report.store.coded_poses_found);
      json.field("sources_unread", report.store.sources_unread).endObject();
    }
    json.key("parts");
    if (!f.link)
      json.null();
    else
      json.beginObject()
          .field("files", uint64_t{f.request->clips.size()})
          .field("coded_poses_found", report.store.coded_poses_found)
          .endObject();
    json.field("seconds", f.seconds);
    json.endObject();
  }
  return text.str();
}

CookFailure cookFailure(std::string code, int exit_code, std::string message,
                        const std::vector<std::string>& inputs) {
  CookFailure f{std::move(code), exit_code, std::move(message), "", 0};
  for (const std::string& input : inputs) {
    if (input.empty() || f.message.compare(0, input.size(), input) != 0 ||
        f.message.size() <= input.size() || f.message[input.size()] != ':' ||
        input.size() <= f.file.size())
      continue;
    f.file = input;
    f.line = 0;
    size_t i = input.size() + 1;
    int line = 0;
    while (i < f.message.size() && std::isdigit(static_cast<unsigned char>(f.message[i])) &&
           line < 100000000)
      line = line * 10 + (f.message[i++] - '0');
    if (i < f.message.size() && f.message[i] == ':' && i > input.size() + 1) f.line = line;
  }
  return f;
}

std::string failedCookReportJson(bool link, const std::string& output, const std::string& manifest,
                                 const CookReport* partial, const CookFailure& failure,
                                 double seconds) {
  std::ostringstream text;
  {
    JsonWriter json(text);
    json.beginObject();
    writeHead(json, link, false);
    json.key("error").beginObject().field("code", failure.code);
    json.field("exit_code", failure.exit_code).field("message", failure.message);
    nullOr(json, "file", failure.file);
    nullOr(json, "line", failure.line);
    json.endObject();
    json.field("output", output);
    nullOr(json, "manifest", manifest);
    writeWarnings(json, partial ? partial->warnings : std::vector<CookWarning>{}, manifest);
    json.field("seconds", seconds);
    json.endObject();
  }
  return text.str();
}

namespace {

// True when `path` is a regular file of `size` bytes that equal, in order, the pieces that
// pieces(compare) hands to compare; the pieces stop at the first difference.
template <typename Pieces>
bool fileHolds(const std::string& path, size_t size, Pieces pieces) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != size || ec) return false;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chunk(std::min(size, size_t{1} << 20));  // a small file zeroes no 1 MB
  return pieces([&](std::span<const uint8_t> piece) {
    for (size_t offset = 0; offset < piece.size();) {
      const size_t n = std::min(chunk.size(), piece.size() - offset);
      if (!in.read(chunk.data(), static_cast<std::streamsize>(n)) ||
          std::memcmp(chunk.data(), piece.data() + offset, n) != 0)
        return false;
      offset += n;
    }
    return true;
  });
}

}  // namespace

bool fileHoldsBytes(const std::string& path, std::span<const uint8_t> bytes) {
  return fileHoldsBytes(path, std::span<const std::span<const uint8_t>>(&bytes, 1));
}

bool fileHoldsBytes(const std::string& path, std::span<const std::span<const uint8_t>> pieces) {
  size_t size = 0;
  for (const std::span<const uint8_t> piece : pieces) size += piece.size();
  return fileHolds(path, size, [&](const auto& compare) {
    for (const std::span<const uint8_t> piece : pieces)
      if (!compare(piece)) return false;
    return true;
  });
}

bool fileHoldsBytes(const std::string& path, const SerializedDatabase& bytes) {
  return fileHolds(path, bytes.size(), [&](const auto& compare) { return bytes.pieces(compare); });
}

}  // namespace mmdb::cook
