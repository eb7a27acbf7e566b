// BVH importer: one pass over text already in memory. The hierarchy is read by a small
// hand-written tokenizer (iteratively, so no input can overflow the stack); the MOTION numbers by
// a line scanner and std::from_chars, with no allocation per number.
//
// Accepted: any channel order, any subset of the six channels per joint, `End Site`, CRLF, tabs,
// exponents, a leading '+', keywords in any letter case, joint names with spaces. Each frame is
// one line holding exactly one number per channel (blank lines are skipped); a line with another
// count is an error naming that line. The frames present are the truth: more than `Frames:`
// declares, or exactly one fewer (a common exporter off-by-one), is a warning; fewer is an error.
#include "core/errors.h"
#include "import/importer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <unordered_map>

namespace mm {
namespace {

constexpr size_t kMaxDepth = 256;  // deeper than any skeleton: the file is damaged
constexpr int kMaxChannelsPerJoint = 6;
constexpr double kRateSnapTolerance = 1e-4;  // relative; Frame Time is printed with ~7 digits
// frames x joints: far beyond any real clip, and keeps frame counts within int
constexpr size_t kMaxSamples = static_cast<size_t>(std::numeric_limits<int>::max());

const char* const kHintHierarchy = "fix the hierarchy or re-export the file";
const char* const kHintTruncated = "the file is truncated: re-export it";
const char* const kHintFrames =
    "each frame must be one line with one number per channel: fix the line or re-export the file";

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool isSpace(char c) { return isBlank(c) || c == '\n'; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool isWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool equalsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// A token as it may appear in a message: short, printable.
std::string quoted(std::string_view token) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < token.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (token.size() > kMax) out += "...";
  return out + "'";
}

// Reads the text front to back and keeps the 1-based line number for messages.
class Cursor {
 public:
  Cursor(std::string_view text, const std::string& path)
      : p_(text.data()), end_(text.data() + text.size()), path_(path) {
    if (text.size() >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) p_ += 3;  // UTF-8 BOM
  }

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw InputError(fmt::format("{}:{}: {}", path_, line, what));
  }
  [[noreturn]] void fail(const std::string& what) const { fail(line_, what); }

  int line() const { return line_; }
  const std::string& path() const { return path_; }
  bool atEnd() const { return p_ == end_; }

  void skipSpace() {
    for (; p_ < end_ && isSpace(*p_); ++p_)
      if (*p_ == '\n') ++line_;
  }
  void skipBlanks() {
    while (p_ < end_ && isBlank(*p_)) ++p_;
  }

  // Next whitespace-separated token; '{' and '}' are tokens of their own. Empty at the end.
  std::string_view token() {
    skipSpace();
    const char* start = p_;
    if (p_ < end_ && (*p_ == '{' || *p_ == '}')) return {p_++, 1};
    while (p_ < end_ && !isSpace(*p_) && *p_ != '{' && *p_ != '}') ++p_;
    return {start, static_cast<size_t>(p_ - start)};
  }

  // Reads a token and checks it is `keyword` (any letter case).
  void expect(std::string_view keyword, const char* hint = kHintHierarchy) {
    const std::string_view t = token();
    if (t.empty())
      fail(fmt::format("the file ends where '{}' was expected; {}", keyword, kHintTruncated));
    if (!equalsNoCase(t, keyword))
      fail(fmt::format("expected '{}' but found {}; {}", keyword, quoted(t), hint));
  }

  // The rest of the line up to '{', trimmed: a joint name (may hold spaces).
  std::string_view restOfLineName() {
    skipBlanks();
    const char* start = p_;
    while (p_ < end_ && *p_ != '\n' && *p_ != '{') ++p_;
    const char* stop = p_;
    while (stop > start && isBlank(stop[-1])) --stop;
    return {start, static_cast<size_t>(stop - start)};
  }

  // A label such as "Frame Time:" made of words and a colon, blanks between allowed.
  void expectLabel(std::initializer_list<std::string_view> words, std::string_view shown) {
    skipSpace();
    for (std::string_view word : words) {
      skipBlanks();
      if (static_cast<size_t>(end_ - p_) < word.size() ||
          !equalsNoCase(std::string_view(p_, word.size()), word) ||
          (p_ + word.size() < end_ && isWordChar(p_[word.size()])))
        failLabel(shown);
      p_ += word.size();
    }
    skipBlanks();
    if (p_ == end_ || *p_ != ':') failLabel(shown);
    ++p_;
  }

  // The value after a label, on the same line.
  std::string_view valueOnLine(std::string_view label) {
    skipBlanks();
    const char* start = p_;
    while (p_ < end_ && !isSpace(*p_)) ++p_;
    if (p_ == start)
      fail(fmt::format("expected a number after '{}'; fix that line or re-export the file", label));
    return {start, static_cast<size_t>(p_ - start)};
  }

  // Nothing but blanks may follow on this line; steps past its end.
  void endOfLine(std::string_view what) {
    skipBlanks();
    if (p_ < end_ && *p_ != '\n') {
      const char* start = p_;
      while (p_ < end_ && !isSpace(*p_)) ++p_;
      fail(fmt::format("unexpected {} after {}; fix that line or re-export the file",
                       quoted({start, static_cast<size_t>(p_ - start)}), what));
    }
    if (p_ < end_) {
      ++p_;
      ++line_;
    }
  }

  const char* pos() const { return p_; }
  const char* end() const { return end_; }

 private:
  [[noreturn]] void failLabel(std::string_view shown) {
    const char* start = p_;
    while (p_ < end_ && *p_ != '\n' && *p_ != '\r') ++p_;
    const std::string_view found(start, static_cast<size_t>(p_ - start));
    if (found.empty() && p_ == end_)
      fail(fmt::format("the file ends where '{}' was expected; {}", shown, kHintTruncated));
    fail(fmt::format("expected '{}' but found {}; fix that line or re-export the file", shown,
                     quoted(found)));
  }

  const char* p_;
  const char* end_;
  int line_ = 1;
  const std::string& path_;
};

// A number token in the hierarchy or header; the whole token must be the number.
template <typename T>
bool parseWhole(std::string_view token, T& value) {
  const char* first = token.data();
  const char* last = first + token.size();
  if (first < last && *first == '+' && first + 1 < last && first[1] != '-') ++first;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  return ec == std::errc() && ptr == last;
}

float parseOffsetComponent(Cursor& in) {
  const std::string_view t = in.token();
  if (t.empty()) in.fail(fmt::format("the file ends inside an OFFSET; {}", kHintTruncated));
  double v = 0;
  if (!parseWhole(t, v) || !std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
    in.fail(fmt::format("OFFSET needs three numbers but found {}; {}", quoted(t), kHintHierarchy));
  return static_cast<float>(v);
}

glm::vec3 parseOffset(Cursor& in) {
  in.expect("OFFSET");
  glm::vec3 offset;
  for (int axis = 0; axis < 3; ++axis) offset[axis] = parseOffsetComponent(in);
  return offset;
}

// Where a joint's channels sit in a frame line. Axes 0..2 = X, Y, Z.
struct JointChannels {
  int rotation_count = 0;
  int rotation_axis[3] = {0, 0, 0};
  int rotation_column[3] = {0, 0, 0};
  int position_column[3] = {-1, -1, -1};
};

struct Hierarchy {
  Skeleton skeleton;
  std::vector<JointChannels> channels;
  int channel_count = 0;
  int root_line = 0;
};

// "Xrotation" -> {axis 0, rotation}; false when the name is not a channel.
bool parseChannelName(std::string_view name, int& axis, bool& rotation) {
  if (name.size() != 9) return false;
  const char a = lower(name[0]);
  if (a < 'x' || a > 'z') return false;
  axis = a - 'x';
  const std::string_view kind = name.substr(1);
  if (equalsNoCase(kind, "rotation")) {
    rotation = true;
    return true;
  }
  if (equalsNoCase(kind, "position")) {
    rotation = false;
    return true;
  }
  return false;
}

JointChannels parseChannels(Cursor& in, int& next_column) {
  in.expect("CHANNELS");
  const std::string_view count_token = in.token();
  int count = -1;
  if (count_token.empty()) in.fail(fmt::format("the file ends inside CHANNELS; {}", kHintTruncated));
  if (!parseWhole(count_token, count) || count < 0 || count > kMaxChannelsPerJoint)
    in.fail(fmt::format("CHANNELS needs a count from 0 to 6 but found {}; {}", quoted(count_token),
                        kHintHierarchy));
  JointChannels jc;
  bool seen[2][3] = {};
  for (int c = 0; c < count; ++c) {
    const std::string_view name = in.token();
    if (name.empty()) in.fail(fmt::format("the file ends inside CHANNELS; {}", kHintTruncated));
    int axis = 0;
    bool rotation = false;
    if (!parseChannelName(name, axis, rotation))
      in.fail(fmt::format(
          "expected a channel name (Xposition, Yposition, Zposition, Xrotation, Yrotation, "
          "Zrotation) but found {}; CHANNELS declares {}: {}",
          quoted(name), count, kHintHierarchy));
    if (seen[rotation][axis])
      in.fail(fmt::format("channel {} appears twice in one CHANNELS line; {}", quoted(name),
                          kHintHierarchy));
    seen[rotation][axis] = true;
    if (rotation) {
      jc.rotation_axis[jc.rotation_count] = axis;
      jc.rotation_column[jc.rotation_count++] = next_column++;
    } else {
      jc.position_column[axis] = next_column++;
    }
  }
  return jc;
}

class HierarchyParser {
 public:
  explicit HierarchyParser(Cursor& in) : in_(in) {}

  Hierarchy parse() {
    in_.expect("HIERARCHY", "a BVH file starts with HIERARCHY: check that this is a BVH file");
    in_.expect("ROOT");
    out_.root_line = in_.line();
    openJoint(-1);
    while (!stack_.empty()) {
      const std::string_view t = in_.token();
      if (t.empty())
        in_.fail(fmt::format("the file ends inside joint '{}'; {}",
                             out_.skeleton.names[stack_.back()], kHintTruncated));
      if (equalsNoCase(t, "JOINT")) {
        openJoint(stack_.back());
      } else if (equalsNoCase(t, "End")) {
        skipEndSite();
      } else if (t == "}") {
        stack_.pop_back();
      } else {
        in_.fail(fmt::format("expected 'JOINT', 'End Site' or '}}' but found {}; {}", quoted(t),
                             kHintHierarchy));
      }
    }
    return std::move(out_);
  }

 private:
  void openJoint(int parent) {
    const int line = in_.line();
    const std::string name(in_.restOfLineName());
    if (name.empty())
      in_.fail(fmt::format("a {} has no name; {}", parent < 0 ? "ROOT" : "JOINT", kHintHierarchy));
    if (stack_.size() >= kMaxDepth)
      in_.fail(fmt::format("joints nest deeper than {} levels, more than any skeleton; the file is "
                           "damaged: re-export it",
                           kMaxDepth));
    const auto [it, inserted] = first_line_.emplace(name, line);
    if (!inserted)
      in_.fail(line, fmt::format("duplicate joint name '{}' (first at line {}); rename one of them "
                                 "so every joint is unique, then re-export",
                                 name, it->second));
    in_.expect("{");
    const glm::vec3 offset = parseOffset(in_);
    out_.channels.push_back(parseChannels(in_, out_.channel_count));
    Skeleton& s = out_.skeleton;
    stack_.push_back(s.jointCount());
    s.names.push_back(name);
    s.parents.push_back(parent);
    s.offsets.push_back(offset);
    s.bind_rotations.emplace_back(1.0f, 0.0f, 0.0f, 0.0f);
  }

  // `End Site { OFFSET x y z }`: the tip of a chain, not a joint.
  void skipEndSite() {
    std::string_view t = in_.token();
    if (equalsNoCase(t, "Site")) t = in_.token();
    if (t != "{")
      in_.fail(fmt::format("expected '{{' after 'End Site' but found {}; {}", quoted(t),
                           t.empty() ? kHintTruncated : kHintHierarchy));
    parseOffset(in_);
    in_.expect("}");
  }

  Cursor& in_;
  Hierarchy out_;
  std::vector<int> stack_;  // open joints, innermost last
  std::unordered_map<std::string, int> first_line_;
};

struct MotionHeader {
  int64_t declared_frames = 0;
  int frames_line = 0;
  double frame_rate = 0;
};

MotionHeader parseMotionHeader(Cursor& in) {
  const std::string_view t = in.token();
  if (equalsNoCase(t, "ROOT"))
    in.fail("a second ROOT: only one skeleton per file is supported; export one character per "
            "file");
  if (t.empty()) in.fail(fmt::format("the file ends before MOTION; {}", kHintTruncated));
  if (!equalsNoCase(t, "MOTION"))
    in.fail(fmt::format("expected 'MOTION' after the hierarchy but found {}; {}", quoted(t),
                        kHintHierarchy));
  MotionHeader h;
  in.expectLabel({"Frames"}, "Frames:");
  h.frames_line = in.line();
  const std::string_view frames = in.valueOnLine("Frames:");
  if (!parseWhole(frames, h.declared_frames) || h.declared_frames < 0)
    in.fail(fmt::format("'Frames:' needs a whole number of frames but found {}; fix the 'Frames:' "
                        "line or re-export the file",
                        quoted(frames)));
  in.endOfLine("the frame count");
  in.expectLabel({"Frame", "Time"}, "Frame Time:");
  const std::string_view time_token = in.valueOnLine("Frame Time:");
  double frame_time = 0;
  if (!parseWhole(time_token, frame_time) || !(frame_time > 0) || !std::isfinite(frame_time) ||
      !std::isfinite(1.0 / frame_time))
    in.fail(fmt::format("'Frame Time:' must be a positive number of seconds but found {}; fix "
                        "that line or re-export the file",
                        quoted(time_token)));
  in.endOfLine("the frame time");
  h.frame_rate = 1.0 / frame_time;
  // 0.0333333 means 30 fps: snap a rate within the printed precision of a whole number.
  const double whole = std::round(h.frame_rate);
  if (whole >= 1 && std::fabs(h.frame_rate - whole) <= kRateSnapTolerance * whole)
    h.frame_rate = whole;
  return h;
}

// Scans the frame lines and turns each into local rotations and translations.
class MotionReader {
 public:
  MotionReader(Cursor& in, const Hierarchy& h, RawClip& clip)
      : in_(in), h_(h), clip_(clip), values_(static_cast<size_t>(h.channel_count)) {}

  int read(int64_t declared_frames) {
    const char* p = in_.pos();
    const char* end = in_.end();
    int line = in_.line();
    reserve(declared_frames, static_cast<size_t>(end - p));
    const int channels = h_.channel_count;
    int frames = 0;
    for (;;) {
      while (p < end && isBlank(*p)) ++p;
      if (p == end) break;
      if (*p == '\n') {  // blank line
        ++p;
        ++line;
        continue;
      }
      int count = 0;
      for (;;) {
        while (p < end && isBlank(*p)) ++p;
        if (p == end || *p == '\n') break;
        if (count == channels) tooManyNumbers(p, end, line, frames, count);
        p = parseNumber(p, end, line, frames, values_[static_cast<size_t>(count++)]);
      }
      if (count < channels) {
        if (p == end)
          in_.fail(line, fmt::format("the file ends inside frame {} ({} of {} numbers); {}",
                                     frames, count, channels, kHintTruncated));
        in_.fail(line, fmt::format("frame {} has {} numbers but the hierarchy has {} channels; {}",
                                   frames, count, channels, kHintFrames));
      }
      storeFrame();
      ++frames;
      if (p < end) {
        ++p;
        ++line;
      }
    }
    return frames;
  }

 private:
  // Never trust the declared count alone: a frame takes at least two bytes per channel.
  void reserve(int64_t declared_frames, size_t bytes_left) {
    const size_t joints = h_.skeleton.names.size();
    const size_t most = bytes_left / (2 * static_cast<size_t>(h_.channel_count)) + 1;
    const size_t frames = std::min(static_cast<size_t>(declared_frames), most);
    clip_.rotations.reserve(std::min(frames * joints, kMaxSamples));
    clip_.translations.reserve(std::min(frames * joints, kMaxSamples));
  }

  const char* parseNumber(const char* p, const char* end, int line, int frame, float& out) {
    const char* first = p;
    if (*first == '+' && first + 1 < end && first[1] != '-') ++first;
    double v = 0;
    auto [ptr, ec] = std::from_chars(first, end, v);
    if (ec == std::errc::result_out_of_range && isUnderflow(first, ptr)) {
      v = 0;  // far below any motion's precision
      ec = std::errc();
    }
    auto token = [&] { return quoted({p, static_cast<size_t>(tokenEnd(p, end) - p)}); };
    if (ec == std::errc::invalid_argument || (ptr < end && !isSpace(*ptr)))
      in_.fail(line, fmt::format("frame {} holds {}, which is not a number; fix the line or "
                                 "re-export the file",
                                 frame, token()));
    if (ec != std::errc() || !std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
      in_.fail(line, fmt::format("frame {} holds {}, which is not a finite number; fix the line or "
                                 "re-export the file",
                                 frame, token()));
    out = static_cast<float>(v);
    return ptr;
  }

  static const char* tokenEnd(const char* p, const char* end) {
    while (p < end && !isSpace(*p)) ++p;
    return p;
  }

  // An out-of-range number with a negative exponent is a tiny one, not an overflow.
  static bool isUnderflow(const char* first, const char* last) {
    const char* e = std::find_if(first, last, [](char c) { return c == 'e' || c == 'E'; });
    return e + 1 < last && e[1] == '-';
  }

  [[noreturn]] void tooManyNumbers(const char* p, const char* end, int line, int frame, int count) {
    for (;;) {  // count the rest of the line for the message
      while (p < end && isBlank(*p)) ++p;
      if (p == end || *p == '\n') break;
      ++count;
      while (p < end && !isSpace(*p)) ++p;
    }
    in_.fail(line, fmt::format("frame {} has {} numbers but the hierarchy has {} channels; {}",
                               frame, count, h_.channel_count, kHintFrames));
  }

  void storeFrame() {
    const size_t joints = h_.skeleton.names.size();
    if (clip_.rotations.size() + joints > kMaxSamples)
      in_.fail("the clip holds more frames times joints than a cook can handle; split the file");
    const size_t base = clip_.rotations.size();
    clip_.rotations.resize(base + joints);
    clip_.translations.resize(base + joints);
    constexpr float kHalfDegreeInRadians = 3.14159265358979323846f / 360.0f;
    for (size_t j = 0; j < joints; ++j) {
      const JointChannels& jc = h_.channels[j];
      glm::quat q(1.0f, 0.0f, 0.0f, 0.0f);
      for (int r = 0; r < jc.rotation_count; ++r) {  // listed order: R = R0 * R1 * R2
        const float half = values_[static_cast<size_t>(jc.rotation_column[r])] * kHalfDegreeInRadians;
        glm::quat axis_rotation(std::cos(half), 0.0f, 0.0f, 0.0f);
        axis_rotation[jc.rotation_axis[r]] = std::sin(half);
        q = q * axis_rotation;
      }
      glm::vec3 t = h_.skeleton.offsets[j];
      for (int axis = 0; axis < 3; ++axis)
        if (jc.position_column[axis] >= 0) t[axis] = values_[static_cast<size_t>(jc.position_column[axis])];
      clip_.rotations[base + j] = q;
      clip_.translations[base + j] = t;
    }
  }

  Cursor& in_;
  const Hierarchy& h_;
  RawClip& clip_;
  std::vector<float> values_;  // one frame line
};

void checkFrameCount(const Cursor& in, const MotionHeader& h, int frames) {
  const std::string& path = in.path();
  if (frames == 0)
    in.fail(h.frames_line, fmt::format("the file holds no frames (it declares {}); re-export it "
                                       "with its motion",
                                       h.declared_frames));
  if (frames > h.declared_frames) {
    spdlog::warn("{}:{}: declares {} frames but holds {}; reading all {}", path, h.frames_line,
                 h.declared_frames, frames, frames);
  } else if (frames + 1 == h.declared_frames) {
    spdlog::warn("{}:{}: declares {} frames but holds {} (a common exporter off-by-one); reading "
                 "the {} present",
                 path, h.frames_line, h.declared_frames, frames, frames);
  } else if (frames < h.declared_frames) {
    in.fail(h.frames_line, fmt::format("declares {} frames but holds {}; re-export the file or fix "
                                       "the 'Frames:' line",
                                       h.declared_frames, frames));
  }
}

// The file's bytes, mapped read-only for the parse.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
      throw InputError(fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode))
      throw InputError(fmt::format("{}: not a regular file; give the path of a .bvh file", path));
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0) throw InputError(fmt::format("{}: the file is empty; re-export it", path));
    void* data = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, 0);
    if (data == MAP_FAILED)
      throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    data_ = static_cast<const char*>(data);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view text() const { return {data_, size_}; }

 private:
  int fd_ = -1;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

RawClip parseBvh(std::string_view text, const std::string& path) {
  Cursor in(text, path);
  Hierarchy hierarchy = HierarchyParser(in).parse();
  if (hierarchy.channel_count == 0)
    in.fail(hierarchy.root_line, "no joint has CHANNELS, so there is no motion to read; re-export the file with its "
            "channels");
  const MotionHeader header = parseMotionHeader(in);

  RawClip clip;
  clip.name = std::filesystem::path(path).stem().string();
  clip.source_path = path;
  clip.frame_rate = header.frame_rate;
  clip.frame_count = MotionReader(in, hierarchy, clip).read(header.declared_frames);
  checkFrameCount(in, header, clip.frame_count);
  clip.skeleton = std::move(hierarchy.skeleton);
  validateSkeleton(clip.skeleton, path);
  return clip;
}

RawClip importBvhFile(const std::string& path) {
  const MappedFile file(path);
  return parseBvh(file.text(), path);
}

}  // namespace mm
