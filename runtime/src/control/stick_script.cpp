#include "mmdb/stick_script.h"

#include <glm/geometric.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

namespace mmdb {
namespace {

constexpr double kPi = 3.14159265358979323846;

glm::vec2 headingDirection(double degrees) {
  const double radians = degrees * kPi / 180.0;
  return {static_cast<float>(std::sin(radians)), static_cast<float>(std::cos(radians))};
}

// A file name short enough that an error's reason still fits in Error::kMaxMessage: its last
// characters, which name the file, after "...".
std::string shortName(std::string_view file) {
  constexpr size_t kKept = 120;
  if (file.size() <= kKept) return std::string(file);
  return "..." + std::string(file.substr(file.size() - kKept));
}

// A finite number, the whole token ("+" allowed in front).
bool parseNumber(std::string_view token, double& value) {
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  if (token.empty()) return false;
  const char* end = token.data() + token.size();
  const std::from_chars_result parsed = std::from_chars(token.data(), end, value);
  return parsed.ec == std::errc() && parsed.ptr == end && std::isfinite(value);
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The next whitespace-separated token of `line` from `at`, or an empty view at its end.
std::string_view nextToken(std::string_view line, size_t& at) {
  while (at < line.size() && isSpace(line[at])) ++at;
  const size_t begin = at;
  while (at < line.size() && !isSpace(line[at])) ++at;
  return line.substr(begin, at - begin);
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return text;
}

// What is wrong with a segment, or "" when nothing is.
std::string segmentProblem(const StickSegment& s) {
  char buffer[160];
  if (s.name.empty()) return "has no name";
  if (!(s.seconds > 0.0 && s.seconds <= kMaxStickSegmentSeconds)) {
    std::snprintf(buffer, sizeof(buffer), "lasts %g s: a segment lasts above 0 and at most %g s",
                  s.seconds, kMaxStickSegmentSeconds);
    return buffer;
  }
  for (const double heading : {s.heading_begin, s.heading_end}) {
    if (!std::isfinite(heading) || std::abs(heading) > kMaxStickHeadingDegrees) {
      std::snprintf(buffer, sizeof(buffer), "has heading %g: degrees from -%g to %g", heading,
                    kMaxStickHeadingDegrees, kMaxStickHeadingDegrees);
      return buffer;
    }
  }
  for (const double facing : {s.facing_begin, s.facing_end}) {
    if (s.has_facing && (!std::isfinite(facing) || std::abs(facing) > kMaxStickHeadingDegrees)) {
      std::snprintf(buffer, sizeof(buffer), "has facing %g: degrees from -%g to %g", facing,
                    kMaxStickHeadingDegrees, kMaxStickHeadingDegrees);
      return buffer;
    }
  }
  if (!(s.magnitude >= 0.0f && s.magnitude <= 1.0f)) {
    std::snprintf(buffer, sizeof(buffer), "has magnitude %g: the stick is pushed from 0 to 1",
                  double(s.magnitude));
    return buffer;
  }
  return {};
}

// An angle or a sweep FROM..TO, in degrees of at most kMaxStickHeadingDegrees in size.
bool parseAngles(std::string_view token, double& begin, double& end) {
  const size_t sweep = token.find("..");
  const bool parsed =
      sweep == std::string_view::npos
          ? parseNumber(token, begin)
          : parseNumber(token.substr(0, sweep), begin) && parseNumber(token.substr(sweep + 2), end);
  if (sweep == std::string_view::npos) end = begin;
  return parsed && std::abs(begin) <= kMaxStickHeadingDegrees &&
         std::abs(end) <= kMaxStickHeadingDegrees;
}

// The token after the gait that gives the facing: it begins with this.
constexpr std::string_view kFacingPrefix = "face=";

// One line of a stick file into `segment`; returns what is wrong, or "" when nothing is.
std::string parseLine(std::string_view line, StickSegment& segment) {
  size_t at = 0;
  const std::string_view fields[4] = {nextToken(line, at), nextToken(line, at), nextToken(line, at),
                                      nextToken(line, at)};
  // An optional facing between the gait and the name.
  size_t after_gait = at;
  const std::string_view facing = nextToken(line, after_gait);
  segment.has_facing = facing.substr(0, kFacingPrefix.size()) == kFacingPrefix;
  if (segment.has_facing) at = after_gait;
  const std::string_view name = trimmed(line.substr(at));
  const int found = int(std::count_if(std::begin(fields), std::end(fields),
                                      [](std::string_view f) { return !f.empty(); })) +
                    (segment.has_facing ? 1 : 0) + (name.empty() ? 0 : 1);
  if (segment.has_facing && found < 6)
    return "expected 6 fields, SECONDS HEADING MAGNITUDE walk|run face=FACING NAME, found " +
           std::to_string(found);
  if (found < 5)
    return "expected 5 fields, SECONDS HEADING MAGNITUDE walk|run NAME, found " +
           std::to_string(found);
  const auto quoted = [](std::string_view token) {
    return "'" + std::string(token.substr(0, 40)) + (token.size() > 40 ? "...'" : "'");
  };

  if (!parseNumber(fields[0], segment.seconds) || segment.seconds <= 0.0 ||
      segment.seconds > kMaxStickSegmentSeconds)
    return "seconds " + quoted(fields[0]) + " must be a number above 0 and at most 3600";

  const std::string_view heading = fields[1];
  if (!parseAngles(heading, segment.heading_begin, segment.heading_end))
    return "heading " + quoted(heading) +
           " must be degrees (0 is +Z, 90 is +X) from -36000 to 36000, or a sweep FROM..TO";

  double magnitude = 0.0;
  if (!parseNumber(fields[2], magnitude) || magnitude < 0.0 || magnitude > 1.0)
    return "magnitude " + quoted(fields[2]) + " must be a number from 0 (released) to 1 (pushed)";
  segment.magnitude = float(magnitude);

  if (fields[3] != "walk" && fields[3] != "run")
    return "gait " + quoted(fields[3]) + " must be walk or run";
  segment.run = fields[3] == "run";

  if (segment.has_facing &&
      !parseAngles(facing.substr(kFacingPrefix.size()), segment.facing_begin, segment.facing_end))
    return "facing " + quoted(facing) +
           " must be face=DEGREES (0 is +Z, 90 is +X) from -36000 to 36000, or a sweep "
           "face=FROM..TO";
  segment.name = std::string(name);
  return {};
}

}  // namespace

StickScript StickScript::builtInLocomotion() {
  StickScript script;
  script.segments_ = {
      {"stand", 1.5, 0.0, 0.0, 0.0f, false},
      {"walk forward", 3.0, 0.0, 0.0, 1.0f, false},
      {"walk, turn left", 2.0, 0.0, 90.0, 1.0f, false},
      {"walk, sharp right", 2.0, -90.0, -90.0, 1.0f, false},
      {"run", 3.0, -90.0, -90.0, 1.0f, true},
      {"run, turn left", 2.0, -90.0, 0.0, 1.0f, true},
      {"stop", 2.0, 0.0, 0.0, 0.0f, false},
      {"walk back", 2.0, 180.0, 180.0, 0.6f, false},
      {"stop", 1.5, 180.0, 180.0, 0.0f, false},
  };
  for (const StickSegment& segment : script.segments_) script.duration_ += segment.seconds;
  return script;
}

StickScript StickScript::builtIn() {
  StickScript script = builtInLocomotion();
  // The character faces 180 after the locomotion's last stop: it turns round, then walks
  // backwards and sideways facing +Z.
  constexpr bool kFacing = true;
  const StickSegment more[] = {
      {"turn round, walk forward", 2.0, 0.0, 0.0, 1.0f, false},
      {"walk backwards", 2.5, 180.0, 180.0, 0.6f, false, kFacing, 0.0, 0.0},
      {"strafe left", 2.5, 90.0, 90.0, 0.8f, false, kFacing, 0.0, 0.0},
      {"strafe right", 2.5, -90.0, -90.0, 0.8f, false, kFacing, 0.0, 0.0},
      {"stop", 1.5, 0.0, 0.0, 0.0f, false, kFacing, 0.0, 0.0},
  };
  for (const StickSegment& segment : more) {
    script.segments_.push_back(segment);
    script.duration_ += segment.seconds;
  }
  return script;
}

Result<StickScript> StickScript::fromSegments(std::vector<StickSegment> segments) {
  if (segments.empty())
    return Error(ErrorCode::InvalidArgument, "a stick script needs at least one segment");
  if (segments.size() > kMaxStickSegments)
    return Error::format(ErrorCode::InvalidArgument, "a stick script has at most %zu segments",
                         kMaxStickSegments);
  StickScript script;
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string problem = segmentProblem(segments[i]);
    if (!problem.empty())
      return Error::format(ErrorCode::InvalidArgument, "stick segment %zu ('%s') %s", i + 1,
                           shortName(segments[i].name).c_str(), problem.c_str());
    script.duration_ += segments[i].seconds;
  }
  script.segments_ = std::move(segments);
  return script;
}

Result<StickScript> StickScript::parse(std::string_view text, std::string_view file) {
  const std::string where = shortName(file);
  std::vector<StickSegment> segments;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    // A line ends at LF, CRLF or a CR alone (an old Mac text file): all three are one line end.
    const size_t end = std::min(text.find_first_of("\r\n"), text.size());
    std::string_view line = text.substr(0, end);
    const size_t ending =
        end + 1 < text.size() && text[end] == '\r' && text[end + 1] == '\n' ? 2 : 1;
    text.remove_prefix(std::min(end + ending, text.size()));
    for (const char c : line) {
      const unsigned char byte = static_cast<unsigned char>(c);
      if (byte < 0x20 && c != '\t' && c != '\r')
        return Error::format(ErrorCode::InvalidArgument,
                             "%s:%zu: control character 0x%02x: a stick file is plain text",
                             where.c_str(), line_number, unsigned(byte));
    }
    line = trimmed(line.substr(0, std::min(line.find('#'), line.size())));
    if (line.empty()) continue;
    if (segments.size() == kMaxStickSegments)
      return Error::format(ErrorCode::InvalidArgument, "%s:%zu: more than %zu segments",
                           where.c_str(), line_number, kMaxStickSegments);
    StickSegment segment;
    const std::string problem = parseLine(line, segment);
    if (!problem.empty())
      return Error::format(ErrorCode::InvalidArgument, "%s:%zu: %s", where.c_str(), line_number,
                           problem.c_str());
    segments.push_back(std::move(segment));
  }
  if (segments.empty())
    return Error::format(ErrorCode::InvalidArgument,
                         "%s: no segment; write one per line: SECONDS HEADING MAGNITUDE "
                         "walk|run NAME",
                         where.c_str());
  return fromSegments(std::move(segments));
}

Result<StickScript> StickScript::load(const char* path) {
  if (!path) return Error(ErrorCode::InvalidArgument, "no stick file given");
  const std::string where = shortName(path);
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status))
    return Error::format(ErrorCode::IoError, "%s: no such stick file", where.c_str());
  if (!std::filesystem::is_regular_file(status))
    return Error::format(ErrorCode::IoError, "%s: not a regular file", where.c_str());
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return Error::format(ErrorCode::IoError, "%s: cannot be sized", where.c_str());
  if (size > kMaxStickFileBytes)
    return Error::format(ErrorCode::IoError, "%s: %ju bytes; a stick file holds at most %zu",
                         where.c_str(), size, kMaxStickFileBytes);
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in || !in.read(text.data(), std::streamsize(text.size())))
    return Error::format(ErrorCode::IoError, "%s: cannot be read", where.c_str());
  return parse(text, path);
}

ScriptedStick StickScript::at(double t) const noexcept {
  if (segments_.empty()) return {};
  double local = std::fmod(t, duration_);
  if (local < 0.0) local += duration_;
  for (const StickSegment& segment : segments_) {
    if (local < segment.seconds) {
      const double alpha = local / segment.seconds;
      const double heading =
          segment.heading_begin + (segment.heading_end - segment.heading_begin) * alpha;
      ScriptedStick stick{headingDirection(heading), segment.magnitude, segment.run, segment.name};
      if (segment.has_facing) {
        stick.has_facing = true;
        stick.facing = headingDirection(segment.facing_begin +
                                        (segment.facing_end - segment.facing_begin) * alpha);
      }
      return stick;
    }
    local -= segment.seconds;
  }
  // Only reached through rounding at the very end of the loop.
  const StickSegment& last = segments_.back();
  ScriptedStick stick{headingDirection(last.heading_end), last.magnitude, last.run, last.name};
  if (last.has_facing) {
    stick.has_facing = true;
    stick.facing = headingDirection(last.facing_end);
  }
  return stick;
}

double StickScript::characterOffset(uint32_t index) const noexcept {
  constexpr double kGoldenFraction = 0.6180339887498949;
  return std::fmod(index * kGoldenFraction, 1.0) * duration_;
}

glm::vec2 desiredVelocity(const ScriptedStick& stick, const LocomotionSpeeds& speeds) noexcept {
  const float speed = stick.run ? speeds.run : speeds.walk;
  return stick.direction * (stick.magnitude * speed);
}

StickInput stickInput(const ScriptedStick& stick, const LocomotionSpeeds& speeds) noexcept {
  const glm::vec2 velocity = desiredVelocity(stick, speeds);
  StickInput input;
  input.desired_velocity = {velocity.x, 0.0f, velocity.y};
  constexpr float kReleased = 0.01f;
  if (stick.has_facing)
    input.desired_facing = glm::vec3(stick.facing.x, 0.0f, stick.facing.y);
  else
    input.desired_facing = stick.magnitude > kReleased
                               ? glm::vec3(stick.direction.x, 0.0f, stick.direction.y)
                               : glm::vec3(0.0f);
  return input;
}

bool stickChangedSharply(const ScriptedStick& previous, const ScriptedStick& current) noexcept {
  constexpr float kMagnitudeChange = 0.3f;
  constexpr float kPushed = 0.1f;
  const float cos_30_degrees = static_cast<float>(std::cos(30.0 * kPi / 180.0));
  if (std::abs(current.magnitude - previous.magnitude) > kMagnitudeChange) return true;
  if (current.run != previous.run) return true;
  const bool both_pushed = previous.magnitude > kPushed && current.magnitude > kPushed;
  if (both_pushed && glm::dot(previous.direction, current.direction) < cos_30_degrees) return true;
  // The facing each asks for: its own, else along the stick when pushed, else none.
  const auto asks_facing = [&](const ScriptedStick& s) {
    return s.has_facing || s.magnitude > kPushed;
  };
  const auto facing = [](const ScriptedStick& s) { return s.has_facing ? s.facing : s.direction; };
  return asks_facing(previous) && asks_facing(current) &&
         glm::dot(facing(previous), facing(current)) < cos_30_degrees;
}

LocomotionSpeeds speedsForDatabase(const Database& db, float* top_speed) {
  std::vector<float> speeds;
  const Span<const RootFrame> roots = db.rootMotion();
  for (const MatchRange& range : db.ranges()) {
    for (uint32_t f = range.first_frame; f < range.first_frame + range.frame_count; ++f)
      speeds.push_back(std::hypot(roots[f].velocity.x, roots[f].velocity.z));
  }
  LocomotionSpeeds result;
  if (top_speed) *top_speed = 0.0f;
  if (speeds.empty()) return result;
  const auto percentile = speeds.begin() + std::ptrdiff_t(0.95 * double(speeds.size() - 1));
  std::nth_element(speeds.begin(), percentile, speeds.end());
  if (top_speed) *top_speed = *percentile;
  constexpr float kSlowest = 0.2f;  // m/s: the stick still asks for some motion
  result.run = std::clamp(*percentile, kSlowest, result.run);
  result.walk = std::min(result.walk, 0.6f * result.run);
  return result;
}

}  // namespace mmdb
