// BVH importer: one pass over text already in memory (importBvhFile maps the file). The hierarchy
// is read by a small hand-written tokenizer, iteratively, so no input can overflow the stack.
// Frame lines are scanned 64 bytes at a time for their line end and number starts; each number is
// read by a branch-free short-decimal path, or by std::from_chars when it is long or odd. Nothing
// is allocated per number or per frame beyond the clip's own arrays.
//
// Accepted: any channel order, any subset of the six channels per joint, `End Site`, CRLF, tabs,
// exponents, a leading '+', keywords in any letter case, joint names with spaces, a UTF-8 BOM.
// Each frame is one line holding exactly one number per channel (blank lines are skipped); a line
// with another count is an error naming that line. The frames present are the truth: more than
// `Frames:` declares, or exactly one fewer (a common exporter off-by-one), is a warning; fewer is
// an error. A frame rate within 0.01 % of a whole number is that number (0.0333333 s is 30 fps).
// Numbers too small for a double (1e-400) read as 0.
#include "core/errors.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "import/importer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <unordered_map>

namespace mmdb::cook {
namespace {

constexpr size_t kMaxDepth = 256;  // deeper than any skeleton: the file is damaged
constexpr int kMaxChannelsPerJoint = 6;
constexpr double kRateSnapTolerance = 1e-4;  // relative; Frame Time is printed with ~7 digits
// Frames x joints (core/limits.h): past it the file is refused rather than exhausting memory.
constexpr size_t kMaxSamples = kMaxClipSamples;
// Reserved up front at most (450 MB); a larger clip grows as its frames are actually read, so
// joints without channels cannot turn a few bytes into a huge reservation.
constexpr size_t kMaxReservedSamples = size_t{1} << 24;

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

// A token as it may appear in a message: a few printable characters of it, never more.
std::string quoted(std::string_view token) {
  constexpr size_t kMax = 16;
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
    throw InputError(path_, line, what);
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

// Eight characters, as a little-endian word: the first character is the lowest byte.
uint64_t loadEight(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

// How many of the word's bytes, from the lowest, are decimal digits (0 to 8).
int digitRunLength(uint64_t word) {
  // A byte's high bit ends up set when it is below '0' (borrow) or above '9' (+0x46 reaches
  // 0x80). Bytes before the first non-digit neither borrow nor carry, so its flag is exact.
  const uint64_t non_digit =
      ((word - 0x3030303030303030) | (word + 0x4646464646464646)) & 0x8080808080808080;
  return non_digit ? std::countr_zero(non_digit) / 8 : 8;
}

// The value of the word's lowest `run` bytes (1 to 8 digits), most significant first.
uint64_t digitRunValue(uint64_t word, int run) {
  // The run's digits in the top bytes, zeros below: as a number, leading zeros.
  uint64_t digits = (word - 0x3030303030303030) << (8 * (8 - run));
  digits = (digits * 10 + (digits >> 8)) & 0x00FF00FF00FF00FF;      // pairs: 0..99
  digits = (digits * 100 + (digits >> 16)) & 0x0000FFFF0000FFFF;    // quads: 0..9999
  digits = (digits * 10000 + (digits >> 32)) & 0x00000000FFFFFFFF;  // eight: 0..99999999
  return digits;
}

// Reads a run of up to eight decimal digits from `p` without a branch per digit; `p` must have
// eight readable bytes. Appends the run to `mantissa` and returns its length (0 to 8).
int readDigitRun(const char* p, uint64_t& mantissa) {
  static constexpr uint64_t kScale[] = {1,      10,      100,      1000,     10000,
                                        100000, 1000000, 10000000, 100000000};
  const uint64_t word = loadEight(p);
  const int run = digitRunLength(word);
  if (run > 0) mantissa = mantissa * kScale[run] + digitRunValue(word, run);
  return run;
}

// The common number, "-130.536": at most seven digits around an optional '.', all within the
// eight bytes after the sign, read as one word with the '.' squeezed out. `s` (after the sign)
// must have nine readable bytes. Returns the end of the digits, or nullptr for any other shape.
const char* readShortDigits(const char* s, uint64_t& mantissa, int& exponent) {
  uint64_t word = loadEight(s);
  const int whole = digitRunLength(word);
  if (whole == 8) return nullptr;
  int total = whole;
  const bool dot = s[whole] == '.';
  if (dot) {
    const uint64_t below_dot = (uint64_t{1} << (8 * whole)) - 1;
    word = (word & below_dot) | ((word >> 8) & ~below_dot);
    total = digitRunLength(word);  // at most 7: the top byte is now zero
    if (total == 7 && static_cast<unsigned>(s[8] - '0') < 10) return nullptr;
  }
  if (total == 0) return nullptr;
  mantissa = digitRunValue(word, total);
  exponent = whole - total;
  return s + total + dot;
}

// Reads a run of decimal digits into `mantissa`, counting them in `count`. False when more than
// 19 digits (the mantissa could overflow).
[[gnu::always_inline]] inline bool readDigits(const char*& s, const char* end, uint64_t& mantissa,
                                              int& count) {
  while (end - s >= 8) {
    const int run = readDigitRun(s, mantissa);
    s += run;
    count += run;
    if (count > 19) return false;
    if (run < 8) return true;
  }
  for (; s < end && static_cast<unsigned>(*s - '0') < 10; ++s) {
    if (++count > 19) return false;
    mantissa = mantissa * 10 + static_cast<unsigned>(*s - '0');
  }
  return true;
}

// Mocap numbers are short decimals ("-130.536", "5.1072e-06"). When the digits fit in 2^53 and
// the power of ten in 10^22, the value is the digits (exact in a double) times a power of ten;
// multiplying by 10^-k instead of dividing by 10^k (the divide's latency held up the whole parse)
// leaves the double within 2^-52 of the exact value, so the float we keep is the nearest float or,
// at worst, its neighbour. Anything else returns nullptr and goes to std::from_chars.
// Returns the end of the number.
const char* parseShortDecimal(const char* p, const char* end, double& out) {
  // Powers of ten from 10^-22 to 10^22, positive then negated: one multiply applies both.
  static constexpr auto kScale = [] {
    std::array<std::array<double, 45>, 2> scale{};
    double up = 1, down = 1;
    scale[0][22] = 1;
    for (int e = 1; e <= 22; ++e) {
      up *= 10;  // exact up to 10^22
      down = 1 / up;
      scale[0][22 + e] = up;
      scale[0][22 - e] = down;
    }
    for (int e = 0; e < 45; ++e) scale[1][e] = -scale[0][e];
    return scale;
  }();
  constexpr uint64_t kMantissaLimit = uint64_t{1} << 53;
  if (p == end) return nullptr;
  // Signs are as often '-' as not: no branch on them.
  const bool negative = *p == '-';
  const char* s = p + (negative | (*p == '+'));
  uint64_t mantissa = 0;
  int exponent = 0;
  if (const char* digits_end = end - s >= 9 ? readShortDigits(s, mantissa, exponent) : nullptr) {
    s = digits_end;
  } else {
    mantissa = 0;
    int count = 0;
    if (!readDigits(s, end, mantissa, count)) return nullptr;
    if (s < end && *s == '.') {
      ++s;
      const int whole_digits = count;
      if (!readDigits(s, end, mantissa, count)) return nullptr;
      exponent = whole_digits - count;
    }
    if (count == 0) return nullptr;
  }
  if (s < end && (*s == 'e' || *s == 'E')) {
    ++s;
    const bool negative_exponent = s < end && *s == '-';
    if (s < end && (*s == '-' || *s == '+')) ++s;
    const char* exponent_start = s;
    int e = 0;
    for (; s < end && static_cast<unsigned>(*s - '0') < 10; ++s)
      if (e < 10000) e = e * 10 + (*s - '0');
    if (s == exponent_start) return nullptr;
    exponent += negative_exponent ? -e : e;
  }
  if (mantissa > kMantissaLimit || exponent < -22 || exponent > 22) return nullptr;
  out = static_cast<double>(mantissa) * kScale[negative][exponent + 22];
  return s;
}

// sin and cos of `x` radians: quadrant reduction in double, then short polynomials on
// [-pi/4, pi/4] (the Cephes single-precision coefficients). Within a few float ulps of
// std::sin/std::cos, and several times faster than two libm calls per rotation channel.
void sinCos(float x, float& sin_out, float& cos_out) {
  constexpr double kTwoOverPi = 0.63661977236758134308;
  constexpr double kHalfPi = 1.57079632679489661923;
  if (!(std::fabs(x) < 1e6f)) {  // never for motion; keeps the quadrant in range
    sin_out = std::sin(x);
    cos_out = std::cos(x);
    return;
  }
  static constexpr float kSign[] = {1.0f, -1.0f};
  const double scaled = static_cast<double>(x) * kTwoOverPi;
  const int64_t quadrant = static_cast<int64_t>(scaled + std::copysign(0.5, scaled));
  const float r =
      static_cast<float>(static_cast<double>(x) - static_cast<double>(quadrant) * kHalfPi);
  const float r2 = r * r;
  const float s =
      r + r * r2 * (-1.6666654611e-1f + r2 * (8.3321608736e-3f + r2 * -1.9515295891e-4f));
  const float c =
      1.0f - 0.5f * r2 +
      r2 * r2 *
          (4.166664568298827e-2f + r2 * (-1.388731625493765e-3f + r2 * 2.443315711809948e-5f));
  // Quadrant q: sin(x) = sin(r + q pi/2), without branches (q is as random as the angles).
  const bool odd = quadrant & 1;
  sin_out = (odd ? c : s) * kSign[(quadrant >> 1) & 1];
  cos_out = (odd ? s : c) * kSign[((quadrant + 1) >> 1) & 1];
}

// sinCos over n angles (n a multiple of 4), four at a time where SSE2 is there: the same
// polynomials, with the quadrant reduction done in float (pi/2 in three parts, exact products
// for |x| < 8192; larger angles take the scalar path).
void sinCosBatch(const float* x, float* sin_out, float* cos_out, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128 two_over_pi = _mm_set1_ps(0.63661977236758134308f);
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  for (; i < n; i += 4) {
    const __m128 v = _mm_loadu_ps(x + i);
    if (_mm_movemask_ps(_mm_cmpge_ps(_mm_and_ps(v, abs_mask), _mm_set1_ps(8192.0f))) != 0) {
      for (size_t k = i; k < i + 4; ++k) sinCos(x[k], sin_out[k], cos_out[k]);
      continue;
    }
    const __m128i quadrant = _mm_cvtps_epi32(_mm_mul_ps(v, two_over_pi));  // round to nearest
    const __m128 q = _mm_cvtepi32_ps(quadrant);
    __m128 r = _mm_sub_ps(v, _mm_mul_ps(q, _mm_set1_ps(1.5703125f)));
    r = _mm_sub_ps(r, _mm_mul_ps(q, _mm_set1_ps(4.837512969970703125e-4f)));
    r = _mm_sub_ps(r, _mm_mul_ps(q, _mm_set1_ps(7.54978995489188216e-8f)));
    const __m128 r2 = _mm_mul_ps(r, r);
    __m128 sp =
        _mm_add_ps(_mm_mul_ps(r2, _mm_set1_ps(-1.9515295891e-4f)), _mm_set1_ps(8.3321608736e-3f));
    sp = _mm_add_ps(_mm_mul_ps(sp, r2), _mm_set1_ps(-1.6666654611e-1f));
    const __m128 sr = _mm_add_ps(r, _mm_mul_ps(_mm_mul_ps(r, r2), sp));
    __m128 cp = _mm_add_ps(_mm_mul_ps(r2, _mm_set1_ps(2.443315711809948e-5f)),
                           _mm_set1_ps(-1.388731625493765e-3f));
    cp = _mm_add_ps(_mm_mul_ps(cp, r2), _mm_set1_ps(4.166664568298827e-2f));
    const __m128 cr = _mm_add_ps(_mm_sub_ps(_mm_set1_ps(1.0f), _mm_mul_ps(_mm_set1_ps(0.5f), r2)),
                                 _mm_mul_ps(_mm_mul_ps(r2, r2), cp));
    // Odd quadrants swap sine and cosine; bit 1 of q (of q + 1) negates the sine (the cosine).
    const __m128 odd = _mm_castsi128_ps(
        _mm_cmpeq_epi32(_mm_and_si128(quadrant, _mm_set1_epi32(1)), _mm_set1_epi32(1)));
    const __m128 sin_sign =
        _mm_castsi128_ps(_mm_slli_epi32(_mm_and_si128(quadrant, _mm_set1_epi32(2)), 30));
    const __m128 cos_sign = _mm_castsi128_ps(_mm_slli_epi32(
        _mm_and_si128(_mm_add_epi32(quadrant, _mm_set1_epi32(1)), _mm_set1_epi32(2)), 30));
    const __m128 sin_v = _mm_or_ps(_mm_and_ps(odd, cr), _mm_andnot_ps(odd, sr));
    const __m128 cos_v = _mm_or_ps(_mm_and_ps(odd, sr), _mm_andnot_ps(odd, cr));
    _mm_storeu_ps(sin_out + i, _mm_xor_ps(sin_v, sin_sign));
    _mm_storeu_ps(cos_out + i, _mm_xor_ps(cos_v, cos_sign));
  }
#endif
  for (; i < n; ++i) sinCos(x[i], sin_out[i], cos_out[i]);
}

// q * (cos + sin * axis): the general product with the zero terms left out.
glm::quat timesAxisRotation(const glm::quat& q, int axis, float s, float c) {
  switch (axis) {
    case 0:
      return {q.w * c - q.x * s, q.x * c + q.w * s, q.y * c + q.z * s, q.z * c - q.y * s};
    case 1:
      return {q.w * c - q.y * s, q.x * c - q.z * s, q.y * c + q.w * s, q.z * c + q.x * s};
    default:
      return {q.w * c - q.z * s, q.x * c + q.y * s, q.y * c - q.x * s, q.z * c + q.w * s};
  }
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
  if (count_token.empty())
    in.fail(fmt::format("the file ends inside CHANNELS; {}", kHintTruncated));
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
    // Not a BVH file at all: say so without quoting what it holds.
    const std::string_view first = in_.token();
    if (first.empty())
      in_.fail(fmt::format("the file ends where 'HIERARCHY' was expected; {}", kHintTruncated));
    if (!equalsNoCase(first, "HIERARCHY"))
      in_.fail(
          "the file does not start with 'HIERARCHY', so it is not a BVH file (or it is "
          "damaged); check the path, or re-export the file as BVH");
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
      in_.fail(
          fmt::format("joints nest deeper than {} levels, more than any skeleton; the file is "
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
    in.fail(
        "a second ROOT: only one skeleton per file is supported; export one character per "
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
    in.fail(
        fmt::format("'Frames:' needs a whole number of frames but found {}; fix the 'Frames:' "
                    "line or re-export the file",
                    quoted(frames)));
  in.endOfLine("the frame count");
  in.expectLabel({"Frame", "Time"}, "Frame Time:");
  const std::string_view time_token = in.valueOnLine("Frame Time:");
  double frame_time = 0;
  if (!parseWhole(time_token, frame_time) || !(frame_time > 0) || !std::isfinite(frame_time) ||
      !std::isfinite(1.0 / frame_time))
    in.fail(
        fmt::format("'Frame Time:' must be a positive number of seconds but found {}; fix "
                    "that line or re-export the file",
                    quoted(time_token)));
  if (frame_time < 1 / kMaxFrameRate - 1e-12 || frame_time > 1 / kMinFrameRate)
    in.fail(
        fmt::format("'Frame Time:' is {:g} s, a rate of {:g} Hz; mmcook reads {:g} to {:g} Hz "
                    "(a Frame Time of {:g} to {:g} s): fix that line or re-export the file",
                    frame_time, 1.0 / frame_time, kMinFrameRate, kMaxFrameRate, 1 / kMaxFrameRate,
                    1 / kMinFrameRate));
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
      : in_(in),
        h_(h),
        clip_(clip),
        values_(static_cast<size_t>(h.channel_count)),
        starts_(static_cast<size_t>(h.channel_count)),
        rotation_columns_(rotationColumns(h)),
        half_((rotation_columns_.size() + 3) / 4 * 4),
        sin_(half_.size()),
        cos_(half_.size()) {}

  int read(int64_t declared_frames) {
    const char* p = in_.pos();
    const char* end = in_.end();
    int line = in_.line();
    reserve(declared_frames, static_cast<size_t>(end - p));
    const int channels = h_.channel_count;
    int frames = 0;
    for (; p < end; ++line) {
      const char* eol = end;
      const int count = scanLine(p, end, eol);
      if (count > 0) {  // else a blank line
        if (count != channels) badCount(count, eol == end, line, frames);
        // Token starts are known: the numbers parse independently of each other.
        for (int c = 0; c < channels; ++c)
          parseNumber(starts_[static_cast<size_t>(c)], end, line, frames,
                      values_[static_cast<size_t>(c)]);
        storeFrame(line);
        ++frames;
      }
      p = eol == end ? end : eol + 1;
    }
    return frames;
  }

 private:
  // Never trust the declared count alone: a frame takes at least two bytes per channel.
  void reserve(int64_t declared_frames, size_t bytes_left) {
    const size_t joints = h_.skeleton.names.size();
    const size_t most = bytes_left / (2 * static_cast<size_t>(h_.channel_count)) + 1;
    const size_t frames = std::min(static_cast<size_t>(declared_frames), most);
    clip_.rotations.reserve(std::min(frames * joints, kMaxReservedSamples));
    clip_.translations.reserve(std::min(frames * joints, kMaxReservedSamples));
  }

  void parseNumber(const char* p, const char* end, int line, int frame, float& out) {
    double v = 0;
    const char* stop = parseShortDecimal(p, end, v);
    if (stop && (stop == end || isSpace(*stop))) [[likely]]
      out = static_cast<float>(v);
    else
      out = parseOtherNumber(p, end, line, frame);
  }

  // Long, odd or bad numbers: std::from_chars, then the checks.
  [[gnu::noinline]] float parseOtherNumber(const char* p, const char* end, int line, int frame) {
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
    return static_cast<float>(v);
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

  [[noreturn]] void badCount(int count, bool at_end, int line, int frame) {
    const int channels = h_.channel_count;
    if (count < channels && at_end)
      in_.fail(line, fmt::format("the file ends inside frame {} ({} of {} numbers); {}", frame,
                                 count, channels, kHintTruncated));
    in_.fail(line, fmt::format("frame {} has {} numbers but the hierarchy has {} channels; {}",
                               frame, count, channels, kHintFrames));
  }

  // Finds the end of the line that starts at `begin` (its '\n', or `end`) and where each of its
  // numbers starts, 64 bytes at a time. Keeps the first channel_count starts; returns how many.
  int scanLine(const char* begin, const char* end, const char*& eol) {
    const int channels = h_.channel_count;
    int count = 0;
    uint64_t previous_separator = 1;
    for (const char* block = begin;; block += 64) {
      uint64_t separator = 0, newline = 0;
      classify(block, end, separator, newline);
      if (newline) separator |= ~uint64_t{0} << std::countr_zero(newline);  // past the line
      uint64_t starts = ~separator & ((separator << 1) | previous_separator);
      previous_separator = separator >> 63;
      for (; starts; starts &= starts - 1, ++count)
        if (count < channels)
          starts_[static_cast<size_t>(count)] = block + std::countr_zero(starts);
      if (newline) {
        eol = std::min(block + std::countr_zero(newline), end);
        return count;
      }
    }
  }

  // For the 64 bytes at `block`: bit i of `separator` when block[i] separates numbers (space,
  // tab, CR, VT, FF, '\n'), of `newline` when it is '\n'. Bytes at or past `end` count as '\n'.
  static void classify(const char* block, const char* end, uint64_t& separator, uint64_t& newline) {
    if (end - block < 64) {  // the file's last bytes: classify a padded copy
      char padded[64];
      std::memset(padded, '\n', sizeof padded);
      std::memcpy(padded, block, static_cast<size_t>(end - block));
      classify(padded, padded + sizeof padded, separator, newline);
      return;
    }
#if defined(__SSE2__)
    for (int part = 0; part < 4; ++part) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * part));
      const __m128i space = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(' '));
      // '\t', '\n', '\v', '\f', '\r' are 9..13: byte - 9 <= 4, unsigned.
      const __m128i shifted = _mm_sub_epi8(bytes, _mm_set1_epi8(9));
      const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(shifted, _mm_set1_epi8(4)), shifted);
      const auto sep = static_cast<uint16_t>(_mm_movemask_epi8(_mm_or_si128(space, control)));
      const auto nl =
          static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n'))));
      separator |= uint64_t{sep} << (16 * part);
      newline |= uint64_t{nl} << (16 * part);
    }
#else
    for (int i = 0; i < 64; ++i) {
      separator |= uint64_t{isSpace(block[i])} << i;
      newline |= uint64_t{block[i] == '\n'} << i;
    }
#endif
  }

  void storeFrame(int line) {
    const size_t joints = h_.skeleton.names.size();
    if (clip_.rotations.size() + joints > kMaxSamples)
      in_.fail(line,
               fmt::format("the clip holds more than {} joint samples (frames x joints), more "
                           "than a cook can hold; split the file into shorter clips",
                           kMaxSamples));
    // Sines and cosines first, in one independent run, then the products that need them.
    constexpr float kHalfDegreeInRadians = 3.14159265358979323846f / 360.0f;
    for (size_t i = 0; i < rotation_columns_.size(); ++i)
      half_[i] = values_[rotation_columns_[i]] * kHalfDegreeInRadians;
    sinCosBatch(half_.data(), sin_.data(), cos_.data(), half_.size());
    const size_t base = clip_.rotations.size();
    clip_.rotations.resize(base + joints);
    clip_.translations.resize(base + joints);
    size_t i = 0;
    for (size_t j = 0; j < joints; ++j) {
      const JointChannels& jc = h_.channels[j];
      glm::quat q(1.0f, 0.0f, 0.0f, 0.0f);
      for (int r = 0; r < jc.rotation_count; ++r, ++i)  // listed order: R = R0 * R1 * R2
        q = timesAxisRotation(q, jc.rotation_axis[r], sin_[i], cos_[i]);
      glm::vec3 t = h_.skeleton.offsets[j];
      for (int axis = 0; axis < 3; ++axis)
        if (jc.position_column[axis] >= 0)
          t[axis] = values_[static_cast<size_t>(jc.position_column[axis])];
      clip_.rotations[base + j] = q;
      clip_.translations[base + j] = t;
    }
  }

  // The rotation channels' columns, joint by joint in listed order.
  static std::vector<size_t> rotationColumns(const Hierarchy& h) {
    std::vector<size_t> columns;
    for (const JointChannels& jc : h.channels)
      for (int r = 0; r < jc.rotation_count; ++r)
        columns.push_back(static_cast<size_t>(jc.rotation_column[r]));
    return columns;
  }

  Cursor& in_;
  const Hierarchy& h_;
  RawClip& clip_;
  std::vector<float> values_;        // one frame line
  std::vector<const char*> starts_;  // where its numbers start
  std::vector<size_t> rotation_columns_;
  std::vector<float> half_, sin_, cos_;  // half angles per rotation channel, padded to 4
};

// A frame count other than the header's: an error, or a warning into `warnings` where every
// frame can still be read.
void checkFrameCount(const Cursor& in, const MotionHeader& h, int frames,
                     std::vector<Warning>& warnings) {
  const std::string& path = in.path();
  if (frames == 0)
    in.fail(h.frames_line, fmt::format("the file holds no frames (it declares {}); re-export it "
                                       "with its motion",
                                       h.declared_frames));
  auto warn = [&](std::string text) {
    warnings.push_back({"bvh-frame-count", fmt::format("{}:{}: {}", path, h.frames_line, text),
                        path, h.frames_line});
  };
  if (frames > h.declared_frames) {
    warn(fmt::format("declares {} frames but holds {}; reading all {}", h.declared_frames, frames,
                     frames));
  } else if (frames + 1 == h.declared_frames) {
    warn(fmt::format(
        "declares {} frames but holds {} (a common exporter off-by-one); reading the {} present",
        h.declared_frames, frames, frames));
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
    requireRegularFile(path, "check the path");  // before open: a FIFO blocks it
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0)
      throw InputError(
          fmt::format("{}: cannot open: {}; check the path", path, std::strerror(errno)));
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
  // Lines that end in CR alone (classic Mac OS) would make the whole file one line.
  if (text.find('\r') != std::string_view::npos && text.find('\n') == std::string_view::npos)
    in.fail(
        "the lines end with CR alone (classic Mac OS line ends); convert them to LF or CR LF "
        "line ends, e.g. with tr '\\r' '\\n', or re-export the file");
  Hierarchy hierarchy = HierarchyParser(in).parse();
  if (hierarchy.channel_count == 0)
    in.fail(hierarchy.root_line,
            "no joint has CHANNELS, so there is no motion to read; re-export the file with its "
            "channels");
  const MotionHeader header = parseMotionHeader(in);

  RawClip clip;
  clip.name = std::filesystem::path(path).stem().string();
  clip.source_path = path;
  clip.frame_rate = header.frame_rate;
  clip.frame_count = MotionReader(in, hierarchy, clip).read(header.declared_frames);
  checkFrameCount(in, header, clip.frame_count, clip.warnings);
  clip.skeleton = std::move(hierarchy.skeleton);
  validateSkeleton(clip.skeleton, path);
  return clip;
}

std::optional<BvhMotionHeader> readBvhMotionHeader(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  // The hierarchy and the header lie at the start: 16 KiB holds most, 256 KiB hundreds of joints.
  // One buffer per thread, kept: a fresh one per file would be zeroed each time.
  thread_local std::string head;
  std::optional<BvhMotionHeader> out;
  size_t got = 0;
  for (const size_t want : {size_t{16} << 10, size_t{256} << 10}) {
    if (head.size() < want) head.resize(want);
    while (got < want) {
      const ssize_t n = ::pread(fd, head.data() + got, want - got, off_t(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    try {
      Cursor in(std::string_view(head.data(), got), path);
      const Hierarchy hierarchy = HierarchyParser(in).parse();
      if (hierarchy.channel_count > 0) {
        const MotionHeader h = parseMotionHeader(in);
        out = BvhMotionHeader{h.declared_frames, h.frame_rate};
      }
      break;
    } catch (const InputError&) {
      if (got < want) break;  // the whole file, and wrong: the import says how
    }
  }
  ::close(fd);
  return out;
}

RawClip importBvhFile(const std::string& path) {
  const MappedFile file(path);
  return parseBvh(file.text(), path);
}

}  // namespace mmdb::cook
