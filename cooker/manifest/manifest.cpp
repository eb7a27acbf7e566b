// The manifest reader. toml++ parses; this file checks every key against the schema below and
// turns it into a CookRequest. The schema is documented in docs/manifest.md.
#include "manifest/manifest.h"

#include "core/errors.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "core/mirror_tags.h"

#include <glm/geometric.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <sstream>

namespace mmdb::cook {
namespace {

namespace fs = std::filesystem;
using Keys = std::span<const std::string_view>;

constexpr std::string_view kTopKeys[]{"database", "skeleton",    "weights", "filters",
                                      "contacts", "compression", "mirror",  "clip"};
constexpr std::string_view kDatabaseKeys[]{"frame_rate", "unit_scale", "trailing_unmatchable",
                                           "trajectory_times"};
constexpr std::string_view kSkeletonKeys[]{"preset",        "hips",     "left_foot",
                                           "right_foot",    "left_toe", "right_toe",
                                           "root_position", "facing",   "facing_axis"};
constexpr std::string_view kWeightKeys[]{"foot_position", "foot_velocity", "hip_velocity",
                                         "trajectory_position", "trajectory_direction"};
constexpr std::string_view kFilterKeys[]{"root_position_window", "facing_window", "order"};
constexpr std::string_view kContactKeys[]{"speed_threshold", "median"};
constexpr std::string_view kMirrorKeys[]{"patterns", "tag_pairs"};
constexpr std::string_view kCompressionKeys[]{"pose",
                                              "position_tolerance",
                                              "shell_distance",
                                              "velocity_tolerance",
                                              "angular_velocity_tolerance",
                                              "segment_frames"};
constexpr std::string_view kClipKeys[]{"source", "name",   "take", "frames",
                                       "tags",   "mirror", "bias", "range"};
constexpr std::string_view kRangeKeys[]{"frames", "seconds", "tags", "exclude", "bias"};
// A cost bias, in the search's cost units (a typical cost is a few units).
constexpr double kMaxBias = 1e6;

constexpr int kMaxTags = 64;  // a tag is one bit of a 64-bit mask
// Weights are stored as floats: below this a weight would be 0 or denormal.
constexpr double kMinWeight = 1e-6;
constexpr int kMaxSavitzkyGolayOrder = 4;  // below the smallest window a short clip gets (5)

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string joined(Keys keys) {
  std::string out;
  for (std::string_view k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

std::string typeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

// A TOML number as a double. toml++'s value<double>() refuses an integer it cannot represent
// exactly (beyond 2^53), so integers are converted here, rounding like any float literal.
double toDouble(const toml::node& node) {
  if (const auto* i = node.as_integer()) return static_cast<double>(i->get());
  if (const auto* f = node.as_floating_point()) return f->get();
  return std::numeric_limits<double>::quiet_NaN();
}

std::string formatNumber(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

bool isTagName(std::string_view tag) {
  if (tag.empty() || tag.size() > 64) return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

class ManifestParser {
 public:
  ManifestParser(const std::string& path, const SourceCheck& check) : path_(path), check_(check) {
    folder_ = fs::path(path).parent_path();
  }

  CookRequest parse(std::string_view text) {
    toml::table root;
    try {
      root = toml::parse(text, path_);
    } catch (const toml::parse_error& e) {
      failAt(static_cast<int>(e.source().begin.line),
             "TOML syntax error: " + std::string(e.description()) +
                 "; see docs/manifest.md for the format");
    }
    request_.manifest_path = path_;
    checkKeys(root, "", kTopKeys, 1);
    readDatabase(root);
    readSkeleton(root);
    readWeights(root);
    readFilters(root);
    readContacts(root);
    readCompression(root);
    readMirror(root);
    readClips(root);
    return std::move(request_);
  }

 private:
  [[noreturn]] void failAt(int line, const std::string& message) const {
    throw InputError(path_, std::max(line, 1), message);
  }
  [[noreturn]] void fail(const toml::node& node, const std::string& message) const {
    failAt(static_cast<int>(node.source().begin.line), message);
  }

  // Rejects any key not in `known`, naming it in full ("weights.foot_postion") with the nearest
  // known key when one is close.
  void checkKeys(const toml::table& table, const std::string& prefix, Keys known,
                 int fallback_line) const {
    for (const auto& [key, node] : table) {
      const std::string_view name = key.str();
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      std::string message = "unknown key '" + prefix + std::string(name) + "'";
      std::string_view nearest;
      size_t best = 3;
      for (std::string_view k : known) {
        const size_t d = editDistance(name, k);
        if (d < best) best = d, nearest = k;
      }
      if (!nearest.empty()) message += " (did you mean '" + prefix + std::string(nearest) + "'?)";
      const std::string where =
          prefix.empty() ? "at the top level" : "in [" + prefix.substr(0, prefix.size() - 1) + "]";
      message += "; known keys " + where + ": " + joined(known);
      const int line = static_cast<int>(key.source().begin.line);
      failAt(line > 0 ? line : fallback_line, message);
    }
  }

  const toml::table* subtable(const toml::table& parent, std::string_view key, Keys known) const {
    const toml::node* node = parent.get(key);
    if (!node) return nullptr;
    const toml::table* table = node->as_table();
    if (!table)
      fail(*node, "'" + std::string(key) + "' must be a table ([" + std::string(key) + "]), got " +
                      typeName(*node));
    checkKeys(*table, std::string(key) + ".", known, static_cast<int>(node->source().begin.line));
    return table;
  }

  std::optional<double> number(const toml::table& table, std::string_view key,
                               const std::string& prefix) const {
    const toml::node* node = table.get(key);
    if (!node) return std::nullopt;
    if (!node->is_number())
      fail(*node, "'" + prefix + std::string(key) + "' must be a number, got " + typeName(*node));
    const double value = toDouble(*node);
    if (!std::isfinite(value))
      fail(*node, "'" + prefix + std::string(key) + "' must be a finite number, got " +
                      formatNumber(value));
    return value;
  }

  // A number in (min, max] when min_exclusive, else [min, max].
  std::optional<double> rangedNumber(const toml::table& table, std::string_view key,
                                     const std::string& prefix, double min, bool min_exclusive,
                                     double max, const std::string& unit_hint) const {
    const std::optional<double> value = number(table, key, prefix);
    if (!value) return value;
    const bool low = min_exclusive ? *value <= min : *value < min;
    if (low || *value > max) {
      std::string bound =
          min_exclusive ? "greater than " + formatNumber(min) : "at least " + formatNumber(min);
      fail(*table.get(key), "'" + prefix + std::string(key) + "' must be " + bound +
                                " and at most " + formatNumber(max) + " (" + unit_hint + "), got " +
                                formatNumber(*value));
    }
    return value;
  }

  std::optional<int64_t> integer(const toml::table& table, std::string_view key,
                                 const std::string& prefix) const {
    const toml::node* node = table.get(key);
    if (!node) return std::nullopt;
    if (!node->is_integer())
      fail(*node, "'" + prefix + std::string(key) + "' must be an integer, got " + typeName(*node));
    return *node->value<int64_t>();
  }

  std::optional<std::string> string(const toml::table& table, std::string_view key,
                                    const std::string& prefix, bool allow_empty) const {
    const toml::node* node = table.get(key);
    if (!node) return std::nullopt;
    if (!node->is_string())
      fail(*node, "'" + prefix + std::string(key) + "' must be a string, got " + typeName(*node));
    std::string value = *node->value<std::string>();
    if (!allow_empty && value.empty())
      fail(*node, "'" + prefix + std::string(key) + "' must not be empty");
    return value;
  }

  std::optional<bool> boolean(const toml::table& table, std::string_view key,
                              const std::string& prefix) const {
    const toml::node* node = table.get(key);
    if (!node) return std::nullopt;
    if (!node->is_boolean())
      fail(*node,
           "'" + prefix + std::string(key) + "' must be true or false, got " + typeName(*node));
    return *node->value<bool>();
  }

  const toml::array* array(const toml::table& table, std::string_view key,
                           const std::string& prefix) const {
    const toml::node* node = table.get(key);
    if (!node) return nullptr;
    if (!node->is_array())
      fail(*node, "'" + prefix + std::string(key) + "' must be an array, got " + typeName(*node));
    return node->as_array();
  }

  std::vector<double> numbers(const toml::table& table, std::string_view key,
                              const std::string& prefix, size_t count) const {
    const toml::array* values = array(table, key, prefix);
    if (!values) return {};
    const std::string name = "'" + prefix + std::string(key) + "'";
    if (values->size() != count)
      fail(*table.get(key), name + " must have " + std::to_string(count) + " numbers, got " +
                                std::to_string(values->size()));
    std::vector<double> out;
    for (const toml::node& element : *values) {
      if (!element.is_number() || !std::isfinite(toDouble(element)))
        fail(*table.get(key),
             name + " must hold finite numbers only, got " +
                 (element.is_number() ? formatNumber(toDouble(element)) : typeName(element)));
      out.push_back(toDouble(element));
    }
    return out;
  }

  // frames = [first, end]: integers, 0 <= first < end.
  std::pair<int, int> frameRange(const toml::table& table, std::string_view key,
                                 const std::string& prefix) const {
    const toml::array* values = array(table, key, prefix);
    const toml::node& node = *table.get(key);
    const std::string name = "'" + prefix + std::string(key) + "'";
    const std::string form = name + " must be [first, end] (frames first to end - 1)";
    if (values->size() != 2)
      fail(node, form + ", got " + std::to_string(values->size()) + " values");
    std::array<int64_t, 2> v{};
    for (size_t i = 0; i < 2; ++i) {
      if (!(*values)[i].is_integer())
        fail(node, form + " with integers, got " + typeName((*values)[i]));
      v[i] = *(*values)[i].value<int64_t>();
    }
    constexpr int64_t kMaxFrame = 100'000'000;
    if (v[0] < 0 || v[1] <= v[0] || v[1] > kMaxFrame)
      fail(node, form + " with 0 <= first < end <= " + std::to_string(kMaxFrame) + ", got [" +
                     std::to_string(v[0]) + ", " + std::to_string(v[1]) + "]");
    return {static_cast<int>(v[0]), static_cast<int>(v[1])};
  }

  std::vector<std::string> tags(const toml::table& table, const std::string& prefix) {
    const toml::array* values = array(table, "tags", prefix);
    if (!values) return {};
    std::vector<std::string> out;
    for (const toml::node& element : *values) {
      const std::string* tag = element.is_string() ? &element.as_string()->get() : nullptr;
      if (!tag || !isTagName(*tag))
        fail(*table.get("tags"), "'" + prefix +
                                     "tags' must hold tag names (letters, digits, "
                                     "'_', '-', '.'; 1 to 64 characters), got " +
                                     (tag ? "'" + *tag + "'" : typeName(element)));
      if (std::find(out.begin(), out.end(), *tag) == out.end()) out.push_back(*tag);
      all_tags_.insert(*tag);
    }
    if (static_cast<int>(all_tags_.size()) > kMaxTags)
      fail(*table.get("tags"), "more than " + std::to_string(kMaxTags) +
                                   " different tags; a tag mask has 64 bits, use fewer tags");
    return out;
  }

  void readDatabase(const toml::table& root) {
    const toml::table* t = subtable(root, "database", kDatabaseKeys);
    if (!t) return;
    CookSettings& s = request_.settings;
    const std::string p = "database.";
    if (auto v = rangedNumber(*t, "frame_rate", p, kMinFrameRate, false, kMaxFrameRate,
                              "frames per second"))
      s.frame_rate = *v;
    if (auto v = rangedNumber(*t, "unit_scale", p, 0, true, 1000, "metres per source unit"))
      s.unit_scale = *v;
    if (auto v = rangedNumber(*t, "trailing_unmatchable", p, 0, false, 60, "seconds"))
      s.trailing_unmatchable_s = *v;
    const std::vector<double> times = numbers(*t, "trajectory_times", p, 3);
    if (!times.empty()) {
      if (!(times[0] > 0 && times[0] < times[1] && times[1] < times[2] && times[2] <= 10))
        fail(*t->get("trajectory_times"),
             "'database.trajectory_times' must be three increasing times in seconds, above 0 "
             "and at most 10, e.g. [0.3333, 0.6667, 1.0]");
      std::copy(times.begin(), times.end(), s.trajectory_times.begin());
    }
  }

  void readSkeleton(const toml::table& root) {
    const toml::table* t = subtable(root, "skeleton", kSkeletonKeys);
    if (!t) return;
    RoleSettings& r = request_.settings.roles;
    const std::string p = "skeleton.";
    const std::pair<std::string_view, std::string*> names[] = {{"preset", &r.preset},
                                                               {"hips", &r.hips},
                                                               {"left_foot", &r.left_foot},
                                                               {"right_foot", &r.right_foot},
                                                               {"left_toe", &r.left_toe},
                                                               {"right_toe", &r.right_toe},
                                                               {"root_position", &r.root_position},
                                                               {"facing", &r.facing}};
    for (const auto& [key, field] : names)
      if (auto v = string(*t, key, p, false)) *field = *v;
    const std::vector<double> axis = numbers(*t, "facing_axis", p, 3);
    if (!axis.empty()) {
      const glm::vec3 v(static_cast<float>(axis[0]), static_cast<float>(axis[1]),
                        static_cast<float>(axis[2]));
      if (!(glm::dot(v, v) > 1e-12f))
        fail(*t->get("facing_axis"),
             "'skeleton.facing_axis' must not be zero; give the facing "
             "joint's local axis that points forward, e.g. [0, 0, 1]");
      r.facing_axis = v;
    }
  }

  void readWeights(const toml::table& root) {
    const toml::table* t = subtable(root, "weights", kWeightKeys);
    if (!t) return;
    const FeatureBlockId ids[] = {kBlockFootPosition, kBlockFootVelocity, kBlockHipVelocity,
                                  kBlockTrajectoryPosition, kBlockTrajectoryDirection};
    size_t i = 0;
    for (std::string_view key : kWeightKeys) {
      if (auto v = rangedNumber(*t, key, "weights.", kMinWeight, false, 1000,
                                "to make a block matter less use a small weight such as 0.01"))
        request_.settings.weights[ids[i]] = static_cast<float>(*v);
      ++i;
    }
  }

  void readFilters(const toml::table& root) {
    const toml::table* t = subtable(root, "filters", kFilterKeys);
    if (!t) return;
    CookSettings& s = request_.settings;
    const std::string p = "filters.";
    if (auto v = rangedNumber(*t, "root_position_window", p, 0, true, 10, "seconds"))
      s.root_position_window_s = *v;
    if (auto v = rangedNumber(*t, "facing_window", p, 0, true, 10, "seconds"))
      s.facing_window_s = *v;
    if (auto v = integer(*t, "order", p)) {
      if (*v < 0 || *v > kMaxSavitzkyGolayOrder)
        fail(*t->get("order"), "'filters.order' (Savitzky-Golay polynomial order) must be 0 to " +
                                   std::to_string(kMaxSavitzkyGolayOrder) + ", got " +
                                   std::to_string(*v));
      s.savitzky_golay_order = static_cast<int>(*v);
    }
  }

  void readContacts(const toml::table& root) {
    const toml::table* t = subtable(root, "contacts", kContactKeys);
    if (!t) return;
    CookSettings& s = request_.settings;
    if (auto v =
            rangedNumber(*t, "speed_threshold", "contacts.", 0, true, 100, "metres per second"))
      s.contact_speed_threshold = *v;
    if (auto v = rangedNumber(*t, "median", "contacts.", 0, false, 10, "seconds"))
      s.contact_median_s = *v;
  }

  void readCompression(const toml::table& root) {
    const toml::table* t = subtable(root, "compression", kCompressionKeys);
    if (!t) return;
    CompressionSettings& c = request_.settings.compression;
    const std::string p = "compression.";
    if (auto v = string(*t, "pose", p, false)) {
      if (*v == "meshopt")
        c.pose = CompressionSettings::Pose::Meshopt;
      else if (*v == "none")
        c.pose = CompressionSettings::Pose::None;
      else
        fail(*t->get("pose"),
             "'compression.pose' must be \"meshopt\" or \"none\", got \"" + *v + "\"");
    }
    if (auto v = rangedNumber(*t, "position_tolerance", p, 0, true, 1, "metres"))
      c.position_tolerance = *v;
    if (auto v = rangedNumber(*t, "shell_distance", p, 0, false, 10, "metres"))
      c.shell_distance = *v;
    if (auto v = rangedNumber(*t, "velocity_tolerance", p, 0, true, 100, "metres per second"))
      c.velocity_tolerance = *v;
    if (auto v =
            rangedNumber(*t, "angular_velocity_tolerance", p, 0, true, 100, "radians per second"))
      c.angular_velocity_tolerance = *v;
    if (auto v = integer(*t, "segment_frames", p)) {
      if (*v < 1 || *v > 1024)
        fail(*t->get("segment_frames"),
             "'compression.segment_frames' must be 1 to 1024, got " + std::to_string(*v));
      c.segment_frames = static_cast<int>(*v);
    }
  }

  void readMirror(const toml::table& root) {
    const toml::table* t = subtable(root, "mirror", kMirrorKeys);
    if (!t) return;
    if (const toml::array* patterns = array(*t, "patterns", "mirror."))
      request_.mirror.patterns = mirrorPatterns(*t->get("patterns"), *patterns);
    if (const toml::array* pairs = array(*t, "tag_pairs", "mirror.")) {
      tag_pairs_line_ = static_cast<int>(t->get("tag_pairs")->source().begin.line);
      request_.mirror.tag_pairs = tagPairs(*t->get("tag_pairs"), *pairs);
    }
  }

  std::vector<std::pair<std::string, std::string>> mirrorPatterns(
      const toml::node& node, const toml::array& patterns) const {
    const std::string form =
        "'mirror.patterns' must be pairs of name patterns with one '*' each, e.g. "
        "[[\"Left*\", \"Right*\"], [\"*_L\", \"*_R\"]]";
    std::vector<std::pair<std::string, std::string>> out;
    for (const toml::node& element : patterns) {
      const toml::array* pair = element.as_array();
      if (!pair || pair->size() != 2 || !(*pair)[0].is_string() || !(*pair)[1].is_string())
        fail(node, form);
      const std::string left = *(*pair)[0].value<std::string>();
      const std::string right = *(*pair)[1].value<std::string>();
      for (const std::string& pattern : {left, right})
        if (std::count(pattern.begin(), pattern.end(), '*') != 1 || pattern.size() < 2)
          fail(node, form + "; '" + pattern + "' needs exactly one '*' and a name part");
      if (left == right) fail(node, form + "; a pair must differ, got '" + left + "' twice");
      out.emplace_back(left, right);
    }
    return out;
  }

  // [mirror] tag_pairs: pairs of two different words, each in one pair at most (case aside).
  TagPairs tagPairs(const toml::node& node, const toml::array& pairs) const {
    const std::string form =
        "'mirror.tag_pairs' must be pairs of words that a mirrored copy's tags swap, e.g. "
        "[[\"left\", \"right\"]]";
    TagPairs out;
    std::vector<int> lines;  // of each pair in `out`
    for (const toml::node& element : pairs) {
      // An element's own line, for a list written over several lines.
      const toml::node& at = element.source().begin.line > 0 ? element : node;
      const toml::array* pair = element.as_array();
      if (!pair) {
        const std::string* text = element.is_string() ? &element.as_string()->get() : nullptr;
        fail(at, form + "; each pair is an array of two words in brackets of its own, got " +
                     typeName(element) + (text ? " ('" + *text + "')" : ""));
      }
      if (pair->size() != 2)
        fail(at, form + "; a pair holds two words, got " + std::to_string(pair->size()));
      std::array<std::string, 2> words;
      for (size_t i = 0; i < 2; ++i) {
        const toml::node& word = (*pair)[i];
        if (!word.is_string()) fail(at, form + "; a word is a string, got " + typeName(word));
        words[i] = *word.value<std::string>();
        if (words[i].empty()) fail(at, form + "; a word must not be empty");
        if (!isTagPairWord(words[i]))
          fail(at, form + "; '" + words[i] +
                       "' is not one word: a word is 1 to 64 letters and digits, and is matched "
                       "against each part of a tag that '-', '_' and '.' separate");
      }
      if (sameTagPairWord(words[0], words[1]))
        fail(at, form + "; a pair must be two different words, got '" + words[0] + "' and '" +
                     words[1] + "'");
      const int line = static_cast<int>(at.source().begin.line);
      for (size_t p = 0; p < out.size(); ++p)
        for (const std::string& word : words)
          for (const std::string& other : {out[p].first, out[p].second})
            if (sameTagPairWord(word, other))
              fail(at, form + "; '" + word + "' is already in the pair [\"" + out[p].first +
                           "\", \"" + out[p].second + "\"]" +
                           (lines[p] != line ? " on line " + std::to_string(lines[p]) : "") +
                           ": a word may be in one pair only");
      out.emplace_back(words[0], words[1]);
      lines.push_back(line);
    }
    return out;
  }

  void readClips(const toml::table& root) {
    const toml::node* node = root.get("clip");
    if (!node) failAt(1, "no clips: add a [[clip]] table with source = \"file.bvh\" for each clip");
    const toml::array* clips = node->as_array();
    if (!clips || !clips->is_array_of_tables())
      fail(*node,
           "'clip' must be an array of tables: write [[clip]] (double brackets) above each "
           "clip");
    if (clips->empty())
      fail(*node, "no clips: add a [[clip]] table with source = \"file.bvh\" for each clip");
    // Names of the database's clips, mirrored copies ("walk#mirror") included: line, mirrored.
    std::map<std::string, std::pair<int, bool>> owners;
    for (const toml::node& element : *clips) {
      ClipSpec clip = readClip(*element.as_table());
      auto claim = [&](const std::string& name, bool mirrored) {
        const auto [it, inserted] =
            owners.emplace(name, std::make_pair(clip.manifest_line, mirrored));
        if (inserted) return;
        const bool mirror_involved = mirrored || it->second.second;
        failAt(clip.manifest_line,
               "clip name '" + name + "'" + (mirrored ? " of the mirrored copy" : "") +
                   " is already used by " +
                   (it->second.second ? "the mirrored copy of the clip" : "the clip") +
                   " on line " + std::to_string(it->second.first) +
                   "; give one of them another name with name = \"...\"" +
                   (mirror_involved ? " (a mirrored copy of clip 'x' is named 'x#mirror')" : ""));
      };
      claim(clip.name, false);
      if (clip.mirror) claim(clip.name + "#mirror", true);
      request_.clips.push_back(std::move(clip));
    }
  }

  ClipSpec readClip(const toml::table& t) {
    ClipSpec clip;
    clip.manifest_line = static_cast<int>(t.source().begin.line);
    clip.manifest = path_;
    const std::string p = "clip.";
    checkKeys(t, p, kClipKeys, clip.manifest_line);
    const std::optional<std::string> source = string(t, "source", p, false);
    if (!source)
      failAt(clip.manifest_line,
             "clip has no 'source'; add source = \"file.bvh\" (relative to "
             "the manifest's folder)");
    clip.source_label = *source;
    clip.source = resolveSource(*source, *t.get("source"));
    clip.name = string(t, "name", p, false).value_or(fs::path(*source).stem().string());
    clip.take = string(t, "take", p, true).value_or("");
    if (t.get("frames")) {
      const auto [first, end] = frameRange(t, "frames", p);
      clip.source_first_frame = first;
      clip.source_frame_count = end - first;
    }
    clip.tags = tags(t, p);
    clip.mirror = boolean(t, "mirror", p).value_or(false);
    clip.bias = bias(t, p);
    if (const toml::node* ranges = t.get("range")) {
      const toml::array* list = ranges->as_array();
      if (!list || !list->is_array_of_tables())
        fail(*ranges,
             "'clip.range' must be an array of tables: write [[clip.range]] below its "
             "[[clip]]");
      for (const toml::node& range : *list) clip.ranges.push_back(readRange(*range.as_table()));
    }
    if (clip.mirror) addMirroredTags(t, clip);
    return clip;
  }

  // The tags the mirrored copy brings into the database: the clip's and its ranges' with
  // [mirror] tag_pairs swapped, and "mirrored". Each must be a tag name, and with every other
  // tag they must fit the 64 bits of a tag mask.
  void addMirroredTags(const toml::table& t, const ClipSpec& clip) {
    const std::string copy = "'" + clip.name + "#mirror'";
    const std::string pairs =
        "[mirror] tag_pairs" +
        (tag_pairs_line_ > 0 ? " (line " + std::to_string(tag_pairs_line_) + ")" : "");
    auto add = [&](const std::string& tag, const toml::node& node) {
      const std::string mirrored = mirroredTag(tag, request_.mirror.tag_pairs);
      if (!isTagName(mirrored))
        fail(node, "tag '" + tag + "' becomes '" + mirrored + "' on the mirrored copy " + copy +
                       " by " + pairs + ", longer than 64 characters; shorten the tag");
      if (!all_tags_.insert(mirrored).second || static_cast<int>(all_tags_.size()) <= kMaxTags)
        return;
      fail(node, "more than " + std::to_string(kMaxTags) + " different tags, counting '" +
                     mirrored + "' that the mirrored copy " + copy + " has for '" + tag + "' by " +
                     pairs + "; a tag mask has 64 bits: use fewer tags, or swap fewer words");
    };
    if (const toml::node* node = t.get("tags"))
      for (const std::string& tag : clip.tags) add(tag, *node);
    if (const toml::node* node = t.get("range"))
      for (size_t i = 0; i < clip.ranges.size(); ++i)
        if (const toml::node* tags = (*node->as_array())[i].as_table()->get("tags"))
          for (const std::string& tag : clip.ranges[i].tags) add(tag, *tags);
    if (all_tags_.insert("mirrored").second && static_cast<int>(all_tags_.size()) > kMaxTags)
      fail(*t.get("mirror"), "more than " + std::to_string(kMaxTags) +
                                 " different tags, counting 'mirrored', the tag of every mirrored "
                                 "copy; a tag mask has 64 bits, use fewer tags");
  }

  SubRangeSpec readRange(const toml::table& t) {
    const std::string p = "clip.range.";
    const int line = static_cast<int>(t.source().begin.line);
    checkKeys(t, p, kRangeKeys, line);
    SubRangeSpec range;
    range.manifest_line = line;
    const bool has_frames = t.contains("frames");
    const bool has_seconds = t.contains("seconds");
    if (has_frames == has_seconds)
      failAt(line,
             "a [[clip.range]] needs exactly one of 'frames = [first, end]' (frames at the "
             "database rate, from the clip's start) or 'seconds = [start, end]'");
    const RangeBounds b = rangeBounds(t, has_frames ? "frames" : "seconds", p, has_frames);
    range.to_end = b.to_end;
    if (has_frames) {
      range.first_frame = static_cast<int>(b.first);
      range.frame_count = b.to_end ? 0 : static_cast<int>(b.end - b.first);
    } else {
      const double rate = request_.settings.frame_rate;  // [database] is read before clips
      range.first_seconds = b.first;
      range.end_seconds = b.to_end ? -1 : b.end;
      range.first_frame = static_cast<int>(std::lround(b.first * rate));
      range.frame_count =
          b.to_end ? 0
                   : std::max(1, static_cast<int>(std::lround(b.end * rate)) - range.first_frame);
    }
    range.tags = tags(t, p);
    range.exclude = boolean(t, "exclude", p).value_or(false);
    range.bias = bias(t, p);
    if (range.tags.empty() && !range.exclude && range.bias == 0)
      failAt(line,
             "a [[clip.range]] does nothing without tags = [...], bias = ... or exclude = true");
    return range;
  }

  // A range's [first, end]: frames (integers, 0 <= first < end <= kMaxFrame) or seconds (0 <=
  // start < end <= 1e6); the end may be "end", the clip's end.
  struct RangeBounds {
    double first = 0, end = 0;
    bool to_end = false;
  };
  RangeBounds rangeBounds(const toml::table& t, std::string_view key, const std::string& prefix,
                          bool frames) const {
    const toml::array* values = array(t, key, prefix);
    const toml::node& node = *t.get(key);
    const std::string name = "'" + prefix + std::string(key) + "'";
    const std::string form =
        name + (frames ? " must be [first, end] (frames first to end - 1, integers; end may be "
                         "\"end\", the clip's end)"
                       : " must be [start, end] (seconds; end may be \"end\", the clip's end)");
    if (!values || values->size() != 2)
      fail(node, form + ", got " + std::to_string(values ? values->size() : 0) + " values");
    RangeBounds b;
    const toml::node& second = (*values)[1];
    b.to_end = second.is_string() && *second.value<std::string>() == "end";
    for (size_t i = 0; i < (b.to_end ? 1u : 2u); ++i) {
      const toml::node& v = (*values)[i];
      const bool ok = frames ? v.is_integer() : v.is_number() && std::isfinite(toDouble(v));
      if (!ok)
        fail(node, form + ", got " + (v.is_number() ? formatNumber(toDouble(v)) : typeName(v)));
      (i == 0 ? b.first : b.end) = toDouble(v);
    }
    constexpr double kMaxFrame = 100'000'000, kMaxSeconds = 1e6;
    const double most = frames ? kMaxFrame : kMaxSeconds;
    const std::string got = "[" + formatNumber(b.first) + ", " +
                            (b.to_end ? std::string("\"end\"") : formatNumber(b.end)) + "]";
    if (!(b.first >= 0 && b.first < most && (b.to_end || (b.end > b.first && b.end <= most))))
      fail(node, form + " with 0 <= " + (frames ? "first" : "start") +
                     " < end <= " + (frames ? "100000000" : "1000000") + ", got " + got);
    return b;
  }

  // A cost bias: finite, at most kMaxBias either way; 0 when absent.
  double bias(const toml::table& t, const std::string& prefix) const {
    return rangedNumber(t, "bias", prefix, -kMaxBias, false, kMaxBias,
                        "added to the search cost; negative prefers the frames")
        .value_or(0.0);
  }

  std::string resolveSource(const std::string& source, const toml::node& node) const {
    fs::path resolved(source);
    if (resolved.is_relative()) resolved = folder_ / resolved;
    resolved = resolved.lexically_normal();
    bool missing = false;
    const std::string problem = check_ ? check_(resolved.string(), missing)
                                       : regularFileProblem(resolved.string(), &missing);
    if (missing)
      fail(node, "clip source '" + source + "' not found (looked for '" + resolved.string() +
                     "'); fix the path, which is relative to the manifest's folder");
    if (!problem.empty())
      fail(node, "clip source '" + source + "' ('" + resolved.string() + "') cannot be read: " +
                     problem + "; give a motion file such as a .bvh or .fbx");
    return resolved.string();
  }

  std::string path_;
  const SourceCheck& check_;
  fs::path folder_;
  CookRequest request_;
  std::set<std::string> all_tags_;  // the database's, mirrored copies' included
  int tag_pairs_line_ = 0;          // of [mirror] tag_pairs, 0 when the manifest has none
};

}  // namespace

CookRequest parseManifest(std::string_view text, const std::string& path,
                          const SourceCheck& check) {
  return ManifestParser(path, check).parse(text);
}

CookRequest readManifest(const std::string& path) {
  requireRegularFile(path, "check the path");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError("cannot read manifest '" + path + "': " + std::strerror(errno) +
                     "; check the path");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError("cannot read manifest '" + path + "': " + std::strerror(errno));
  return parseManifest(text.str(), path);
}

ManifestSources listManifestSources(const std::string& path) {
  ManifestSources out;
  if (!regularFileProblem(path).empty()) return out;  // a FIFO would block; readManifest says why
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return out;
  toml::table root;
  try {
    root = toml::parse(text.str(), path);
  } catch (const toml::parse_error&) {
    return out;  // a syntax error: which files it names is unknown
  }
  out.complete = true;
  const toml::array* clips = root["clip"].as_array();
  if (!clips) return out;
  const fs::path folder = fs::path(path).parent_path();
  for (const toml::node& element : *clips) {
    const toml::table* clip = element.as_table();
    const toml::node* source = clip ? clip->get("source") : nullptr;
    if (!source) continue;
    if (const auto* name = source->as_string()) {
      fs::path resolved(name->get());
      if (resolved.is_relative()) resolved = folder / resolved;
      out.paths.push_back(resolved.lexically_normal().string());
    } else {
      out.complete = false;  // a mistyped source: the check of the manifest says so
    }
  }
  return out;
}

std::vector<std::string> manifestKeys() {
  std::vector<std::string> out;
  auto add = [&](std::string_view table, Keys keys) {
    for (std::string_view k : keys) out.push_back(std::string(table) + "." + std::string(k));
  };
  add("database", kDatabaseKeys);
  add("skeleton", kSkeletonKeys);
  add("weights", kWeightKeys);
  add("filters", kFilterKeys);
  add("contacts", kContactKeys);
  add("compression", kCompressionKeys);
  add("mirror", kMirrorKeys);
  add("clip", kClipKeys);
  add("clip.range", kRangeKeys);
  return out;
}

}  // namespace mmdb::cook
