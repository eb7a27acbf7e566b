#include "cli/diff_command.h"

#include "cli/json_writer.h"
#include "core/errors.h"
#include "review/diff.h"
#include "review/replay.h"

#include <mmdb/database.h>
#include <mmdb/stick_script.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace mmdb::cook {
namespace {

using mmcook::review::ClipUsage;
using mmcook::review::DecisionDifference;
using mmcook::review::DecisionSide;
using mmcook::review::MotionKey;
using mmcook::review::ReplayDiff;
using mmcook::review::ReplayStats;
using mmcook::review::StructureDiff;
using Unit = mmcook::review::MeasureUnit;

constexpr size_t kListedClips = 10;  // clip-usage lines in the text

std::string format(const char* fmt, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

// Opens a file and decodes every pose of it: a coded pose stream decodes when it plays, not at
// open, and a damaged one would leave that file's replay to fail.
mmdb::Database openChecked(const std::string& path, const char* which) {
  mmdb::Result<mmdb::Database> opened = mmdb::Database::open(path.c_str());
  if (!opened)
    throw InputError(
        std::string("cannot diff: ") + which + " '" + path +
        "' does not open as a database: " + mmdb::errorCodeName(opened.error().code()) + ": " +
        opened.error().message() + " (pass a file that mmcook cooked, or re-cook it)");
  if (const mmdb::Status poses = mmcook::review::checkPoses(opened.value()); !poses)
    throw InputError(std::string("cannot diff: ") + which + " '" + path +
                     "' cannot be played: its poses do not decode: " +
                     mmdb::errorCodeName(poses.code()) + ": " + poses.message());
  return std::move(opened.value());
}

const char* reasonName(mmdb::SearchReason reason) {
  switch (reason) {
    case mmdb::SearchReason::Start:
      return "start";
    case mmdb::SearchReason::RangeEnd:
      return "range_end";
    case mmdb::SearchReason::Forced:
      return "stick_changed";
    case mmdb::SearchReason::Periodic:
      return "periodic";
    default:
      return "none";
  }
}

// What was compared and what the replay found; the replay is absent when it was skipped.
struct DiffResult {
  const DiffCommandOptions* options = nullptr;
  const mmdb::StickScript* script = nullptr;
  const mmdb::Database* db_a = nullptr;  // for the names of clips and joints
  const mmdb::Database* db_b = nullptr;
  StructureDiff structure;
  std::optional<ReplayDiff> replay;
  std::string replay_skipped;  // why, when it was
  // "A" or "B" when that file alone cannot be replayed: a difference, since the other plays.
  std::string unreplayable;
  bool differ() const {
    return structure.changed() || !unreplayable.empty() || (replay && replay->decisionsDiffer());
  }
};

std::string stickName(const DiffResult& r) {
  return r.options->stick.empty() ? std::string("built-in") : r.options->stick;
}

// ---------------------------------------------------------------------------------------------
// Text

std::string number(double v) { return std::isnan(v) ? std::string("(none)") : format("%g", v); }

std::string clipFrame(const std::string& clip, int32_t local) {
  return clip.empty() ? std::string("nothing") : clip + ":" + std::to_string(local);
}

std::string blockParts(const std::vector<std::string>& names, const std::vector<float>& costs) {
  std::string out;
  for (size_t i = 0; i < costs.size(); ++i)
    out += (i ? ", " : "") + (i < names.size() ? names[i] : "block" + std::to_string(i)) +
           format(" %.4g", double(costs[i]));
  return out;
}

void printSide(const char* which, const char* other, const DecisionSide& s,
               const std::vector<std::string>& blocks, std::ostream& out) {
  if (!s.searched) {
    out << "      " << which << ": no search at this step\n";
    return;
  }
  out << "      " << which << ": " << reasonName(s.reason) << " search, playing "
      << clipFrame(s.playing_clip, s.playing_local) << ", picked "
      << clipFrame(s.winner_clip, s.winner_local) << format(", cost %.4g\n", double(s.cost))
      << "         " << blockParts(blocks, s.block_costs) << "\n";
  if (s.other_found)
    out << "         " << other
        << "'s pick scored here: " << format("cost %.4g", double(s.other_cost))
        << (s.other_matchable ? "" : " (not matchable here)") << ": "
        << blockParts(blocks, s.other_block_costs) << "\n";
  else
    out << "         " << other << "'s pick is not in this file\n";
}

void printStructure(const StructureDiff& s, std::ostream& out) {
  if (!s.changed()) {
    out << "structure: no change\n";
    return;
  }
  out << "structure: " << s.changeCount() << (s.changeCount() == 1 ? " change\n" : " changes\n");
  if (!s.settings.empty()) {
    out << "  settings (A -> B)\n";
    for (const auto& c : s.settings)
      out << format("    %-36s %s -> %s\n", c.name.c_str(), number(c.a).c_str(),
                    number(c.b).c_str());
  }
  if (!s.skeleton.empty()) {
    out << "  skeleton\n";
    for (const std::string& line : s.skeleton) out << "    " << line << "\n";
  }
  if (!s.blocks.empty()) {
    out << "  feature blocks (std in raw units, A -> B)\n";
    for (const auto& b : s.blocks) {
      if (!b.in_a || !b.in_b)
        out << format("    %-36s only in %s\n", b.name.c_str(), b.in_a ? "A" : "B");
      else
        out << format("    %-36s std %.6g -> %.6g\n", b.name.c_str(), b.std_a, b.std_b);
    }
  }
  if (!s.clips_added.empty() || !s.clips_removed.empty() || !s.clips_changed.empty()) {
    out << format("  clips: %u -> %u\n", s.clips_a, s.clips_b);
    for (const std::string& name : s.clips_added) out << "    added    " << name << "\n";
    for (const std::string& name : s.clips_removed) out << "    removed  " << name << "\n";
    for (const auto& c : s.clips_changed) {
      out << "    changed  " << c.name << ": ";
      for (size_t i = 0; i < c.changes.size(); ++i) out << (i ? "; " : "") << c.changes[i];
      out << "\n";
    }
  }
  if (!s.ranges.empty()) {
    out << format(
        "  matchable ranges (clip-local frames): %llu -> %llu frames in %u -> %u ranges\n",
        static_cast<unsigned long long>(s.matchable_a),
        static_cast<unsigned long long>(s.matchable_b), s.ranges_a, s.ranges_b);
    for (const auto& r : s.ranges) {
      const auto list = [](const std::vector<std::string>& ranges) {
        std::string text;
        for (const std::string& range : ranges) text += (text.empty() ? "" : ", ") + range;
        return text.empty() ? std::string("none") : text;
      };
      out << "    " << r.clip << "\n      A: " << list(r.a) << "\n      B: " << list(r.b) << "\n";
    }
  }
  if (!s.tags_added.empty() || !s.tags_removed.empty()) {
    out << "  tags\n";
    for (const std::string& t : s.tags_added) out << "    added    " << t << "\n";
    for (const std::string& t : s.tags_removed) out << "    removed  " << t << "\n";
  }
}

// A line of A, B, B - A and the change ((B - A) / |A|, mmcook::review::changeText).
void printStatLine(const char* name, double a, double b, std::ostream& out) {
  out << format("  %-26s %14.6g %14.6g %12s %12s\n", name, a, b, format("%+.4g", b - a).c_str(),
                mmcook::review::changeText(a, b).c_str());
}

// ---------------------------------------------------------------------------------------------
// The motion measures: what `diff` shows side by side and `--fail-on` checks (docs/review.md
// "Data checks"), in this order. A value is in its key's unit, and so is a threshold written
// without a unit.

// One unit a threshold may be written in, and how many of the key's unit it is.
struct Suffix {
  const char* text;
  double factor;
};

struct UnitInfo {
  const char* column;    // the text output's unit column
  const char* after;     // after a value in a message
  const char* accepted;  // what --fail-on takes, for its errors
  std::vector<Suffix> suffixes;
};

const UnitInfo& unitInfo(Unit unit) {
  static const UnitInfo kMm{"mm",
                            " mm",
                            "a number in mm, or with mm, cm or m after it",
                            {{"mm", 1.0}, {"cm", 10.0}, {"m", 1000.0}}};
  static const UnitInfo kM{"m",
                           " m",
                           "a number in m, or with m, cm or mm after it",
                           {{"m", 1.0}, {"cm", 0.01}, {"mm", 0.001}}};
  static const UnitInfo kS{
      "s", " s", "a number in s, or with s or ms after it", {{"s", 1.0}, {"ms", 0.001}}};
  static const UnitInfo kPercent{"%", "%", "a percentage, with or without %", {{"%", 1.0}}};
  static const UnitInfo kPerSecond{
      "/char-s", " per character-second", "a plain number, per character-second", {}};
  static const UnitInfo kAcceleration{"m/s^2", " m/s^2", "a plain number, in m/s^2", {}};
  static const UnitInfo kRatio{"ratio", "", "a plain number (a ratio)", {}};
  static const UnitInfo kCount{"count", "", "a plain number (a count)", {}};
  static const UnitInfo kSpeed{"m/s",
                               " m/s",
                               "a number in m/s, or with m/s or cm/s after it",
                               {{"m/s", 1.0}, {"cm/s", 0.01}}};
  static const UnitInfo kTurnRate{"deg/s", " deg/s", "a plain number, in degrees per second", {}};
  switch (unit) {
    case Unit::Speed:
      return kSpeed;
    case Unit::TurnRate:
      return kTurnRate;
    case Unit::Mm:
      return kMm;
    case Unit::M:
      return kM;
    case Unit::S:
      return kS;
    case Unit::Percent:
      return kPercent;
    case Unit::PerSecond:
      return kPerSecond;
    case Unit::Acceleration:
      return kAcceleration;
    case Unit::Ratio:
      return kRatio;
    case Unit::Count:
      break;
  }
  return kCount;
}

using Measures = mmdb::MotionMeasures;

std::string jsonKey(const char* key) {
  std::string k = key;
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

std::string knownKeys() {
  std::string known;
  for (const MotionKey& k : mmcook::review::motionKeys())
    known += std::string(known.empty() ? "" : ", ") + k.key;
  return known;
}

// The number of single-character edits between two words.
size_t editDistance(const std::string& a, const std::string& b) {
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

// The key `typed` was probably meant to be: its JSON spelling, or the closest key a few edits
// away; null when none is close.
const MotionKey* closestKey(const std::string& typed) {
  std::string dashed = typed;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  std::transform(dashed.begin(), dashed.end(), dashed.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  const MotionKey* best = nullptr;
  size_t best_distance = 0;
  for (const MotionKey& k : mmcook::review::motionKeys()) {
    const size_t d = editDistance(dashed, k.key);
    if (!best || d < best_distance) {
      best = &k;
      best_distance = d;
    }
  }
  return best && best_distance <= std::max<size_t>(2, typed.size() / 4) ? best : nullptr;
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return std::string();
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// The length of the unsigned decimal number `text` starts with (digits, an optional fraction, an
// optional exponent), 0 when it does not start with one.
size_t numberLength(const std::string& text) {
  size_t i = 0, digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const size_t exponent = j;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j > exponent) i = j;
  }
  return i;
}

struct Threshold {
  const MotionKey* key;
  double limit;       // in the key's unit
  std::string given;  // the entry as written, KEY=VALUE, for the message
};

const char* kFailOnForm = "KEY=VALUE[,KEY=VALUE...], e.g. foot-slide-p90=5mm,switch-rate=3";

// --fail-on's thresholds, all checked before anything is opened: throws UsageError naming the
// option and the entry for a list that is not KEY=VALUE pairs, an unknown key, a key given
// twice, a value that is not a finite number >= 0 or a unit the key does not take.
std::vector<Threshold> parseFailOn(const std::string& text) {
  std::vector<Threshold> out;
  if (trimmed(text).empty())
    throw UsageError(std::string("--fail-on: no threshold given; write ") + kFailOnForm);
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string entry = trimmed(text.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty())
      throw UsageError("--fail-on: an empty entry in '" + text + "'; write " + kFailOnForm);
    const size_t eq = entry.find('=');
    const std::string key = trimmed(entry.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : trimmed(entry.substr(eq + 1));
    if (eq == std::string::npos || key.empty() || value.empty())
      throw UsageError("--fail-on: '" + entry + "' is not KEY=VALUE; write " + kFailOnForm);
    const MotionKey* found = nullptr;
    for (const MotionKey& k : mmcook::review::motionKeys())
      if (key == k.key) found = &k;
    if (!found) {
      const MotionKey* close = closestKey(key);
      throw UsageError("--fail-on: '" + entry + "': unknown measure '" + key + "'" +
                       (close ? std::string(" (did you mean '") + close->key + "'?)" : "") +
                       "; the measures: " + knownKeys());
    }
    for (const Threshold& t : out)
      if (t.key == found)
        throw UsageError("--fail-on: '" + entry + "': " + key + " is given twice");
    const UnitInfo& unit = unitInfo(found->unit);
    const size_t length = numberLength(value);
    const double number = length ? std::strtod(value.substr(0, length).c_str(), nullptr) : 0.0;
    if (length == 0 || !std::isfinite(number))
      throw UsageError("--fail-on: '" + entry + "': the value must be a finite number >= 0; " +
                       key + " takes " + unit.accepted);
    const std::string suffix = trimmed(value.substr(length));
    double factor = suffix.empty() ? 1.0 : 0.0;
    for (const Suffix& s : unit.suffixes)
      if (suffix == s.text) factor = s.factor;
    if (!(factor > 0))
      throw UsageError("--fail-on: '" + entry + "': '" + suffix + "' is not a unit of " + key +
                       ", which takes " + unit.accepted);
    out.push_back({found, number * factor, entry});
  }
  return out;
}

// The motion measures side by side, in motionKeys()' order, named by their --fail-on keys.
void printMotion(const Measures& a, const Measures& b, std::ostream& out) {
  out << "  motion measures (docs/review.md \"Motion measures\"; the keys of --fail-on)\n";
  out << format("    %-26s %-7s %14s %14s %12s %12s\n", "", "", "A", "B", "B - A", "change");
  for (const MotionKey& k : mmcook::review::motionKeys()) {
    const double va = k.of(a), vb = k.of(b);
    out << format("    %-26s %-7s %14.6g %14.6g %12s %12s\n", k.key, unitInfo(k.unit).column, va,
                  vb, format("%+.4g", vb - va).c_str(), mmcook::review::changeText(va, vb).c_str());
  }
  const auto count = [](uint64_t n) { return static_cast<unsigned long long>(n); };
  out << format(
      "    over %llu / %llu contact phases, %llu / %llu sharp turns, %llu / %llu switches in "
      "%g / %g character-seconds\n",
      count(a.phase_drift_mm.count), count(b.phase_drift_mm.count), count(a.sharp_turns),
      count(b.sharp_turns), count(a.switches), count(b.switches), a.character_seconds,
      b.character_seconds);
}

void printReplay(const DiffResult& r, std::ostream& out) {
  const DiffCommandOptions& o = *r.options;
  out << format("replay: %lld character%s, %g s at 60 Hz, stick script %s (%g s, looping)\n",
                static_cast<long long>(o.characters), o.characters == 1 ? "" : "s", o.seconds,
                stickName(r).c_str(), r.script->duration());
  if (!r.replay) {
    out << "  skipped: " << r.replay_skipped << "\n";
    return;
  }
  const ReplayDiff& d = *r.replay;
  out << format("  %-26s %14s %14s %12s %12s\n", "", "A", "B", "B - A", "change");
  out << "  (" << mmcook::review::kChangeRule << ")\n";
  printStatLine("decisions", double(d.a.decisions), double(d.b.decisions), out);
  printStatLine("jumps", double(d.a.jumps), double(d.b.jumps), out);
  printStatLine("decisions/s (this machine)", d.a.decisions_per_second, d.b.decisions_per_second,
                out);
  printStatLine("mean cost", d.a.mean_cost, d.b.mean_cost, out);
  printStatLine("p95 cost", d.a.p95_cost, d.b.p95_cost, out);
  printStatLine("unit-weight distance mean", d.a.mean_unit_distance, d.b.mean_unit_distance, out);
  printStatLine("mean trajectory error (m)", d.a.mean_trajectory_error, d.b.mean_trajectory_error,
                out);
  printStatLine("p95 trajectory error (m)", d.a.p95_trajectory_error, d.b.p95_trajectory_error,
                out);
  printMotion(d.a.motion, d.b.motion, out);
  const size_t listed = std::min(d.clips.size(), kListedClips);
  int width = 24;  // the clip names' column, as wide as the longest listed
  for (size_t i = 0; i < listed; ++i) width = std::max(width, int(d.clips[i].name.size()));
  out << "  clip usage (share of frames played, largest change first)\n";
  out << format("    %-*s %8s %8s %12s\n", width, "clip", "A", "B", "B - A");
  for (size_t i = 0; i < listed; ++i) {
    const ClipUsage& c = d.clips[i];
    const std::string a = c.in_a ? format("%.1f%%", 100.0 * c.share_a) : std::string("(none)");
    const std::string b = c.in_b ? format("%.1f%%", 100.0 * c.share_b) : std::string("(none)");
    out << format("    %-*s %8s %8s %+8.1f pts\n", width, c.name.c_str(), a.c_str(), b.c_str(),
                  100.0 * (c.share_b - c.share_a));
  }
  if (d.clips.size() > kListedClips)
    out << "    and " << d.clips.size() - kListedClips << " more clips\n";
  if (!d.decisionsDiffer()) {
    out << "  decisions: the same in both (every search picked the same clip and frame)\n";
    return;
  }
  out << format("  decisions: differ for %u of %lld characters; the first (clip:local frame):\n",
                d.characters_differing, static_cast<long long>(o.characters));
  for (const DecisionDifference& diff : d.first_differences) {
    out << format("    %.3f s, character %u\n", diff.time, diff.character);
    printSide("A", "B", diff.a, d.blocks_a, out);
    printSide("B", "A", diff.b, d.blocks_b, out);
  }
}

void printText(const DiffResult& r, std::ostream& out) {
  const StructureDiff& s = r.structure;
  out << format("A  %s: %u frames, %u clips, %u joints, cooker %s\n", r.options->a.c_str(),
                s.frames_a, s.clips_a, s.joints_a, s.cooker_a.c_str());
  out << format("B  %s: %u frames, %u clips, %u joints, cooker %s\n", r.options->b.c_str(),
                s.frames_b, s.clips_b, s.joints_b, s.cooker_b.c_str());
  printStructure(s, out);
  printReplay(r, out);
  if (!r.differ()) {
    out << "result: no change\n";
    return;
  }
  std::vector<std::string> what;
  if (s.changed()) what.push_back("structure");
  if (r.replay && r.replay->decisionsDiffer()) what.push_back("decisions");
  if (!r.unreplayable.empty())
    what.push_back(r.unreplayable + " cannot be replayed and " +
                   (r.unreplayable == "A" ? "B" : "A") + " can");
  out << "result: differ (" << what[0];
  for (size_t i = 1; i < what.size(); ++i) out << " and " << what[i];
  out << ")\n";
}

// ---------------------------------------------------------------------------------------------
// JSON (docs/review.md lists the keys)

void writeFile(JsonWriter& json, const char* key, const std::string& path,
               const std::string& cooker, uint32_t frames, uint32_t clips, uint32_t joints,
               uint64_t matchable, uint32_t ranges) {
  json.key(key).beginObject();
  json.field("file", path).field("cooker_version", cooker).field("frame_count", frames);
  json.field("clip_count", clips).field("joint_count", joints);
  json.field("matchable_frames", matchable).field("range_count", ranges);
  json.endObject();
}

void writeStrings(JsonWriter& json, const char* key, const std::vector<std::string>& items) {
  json.key(key).beginArray();
  for (const std::string& item : items) json.value(item);
  json.endArray();
}

void writeStructure(JsonWriter& json, const StructureDiff& s) {
  json.key("structure").beginObject();
  json.field("changed", s.changed()).field("change_count", uint64_t{s.changeCount()});
  json.key("settings").beginArray();
  for (const auto& c : s.settings)
    json.beginObject().field("name", c.name).field("a", c.a).field("b", c.b).endObject();
  json.endArray();
  writeStrings(json, "skeleton", s.skeleton);
  json.key("feature_blocks").beginArray();
  for (const auto& b : s.blocks) {
    json.beginObject().field("name", b.name).field("in_a", b.in_a).field("in_b", b.in_b);
    json.key("std_a");
    b.in_a ? json.value(b.std_a) : json.null();
    json.key("std_b");
    b.in_b ? json.value(b.std_b) : json.null();
    json.endObject();
  }
  json.endArray();
  json.key("clips").beginObject();
  writeStrings(json, "added", s.clips_added);
  writeStrings(json, "removed", s.clips_removed);
  json.key("changed").beginArray();
  for (const auto& c : s.clips_changed) {
    json.beginObject().field("name", c.name);
    writeStrings(json, "changes", c.changes);
    json.endObject();
  }
  json.endArray().endObject();
  json.key("ranges").beginArray();
  for (const auto& r : s.ranges) {
    json.beginObject().field("clip", r.clip);
    writeStrings(json, "a", r.a);
    writeStrings(json, "b", r.b);
    json.endObject();
  }
  json.endArray();
  json.key("tags").beginObject();
  writeStrings(json, "added", s.tags_added);
  writeStrings(json, "removed", s.tags_removed);
  json.endObject();
  json.endObject();
}

// The JSON's motion measures of one file: `motion` (motionKeys(), values in their units),
// `motion_detail` (what they were counted over) and `clips_sliding`.
void writeMotion(JsonWriter& json, const ReplayStats& s, const mmdb::Database& db) {
  const Measures& m = s.motion;
  json.key("motion").beginObject();
  for (const MotionKey& k : mmcook::review::motionKeys()) json.field(jsonKey(k.key), k.of(m));
  json.endObject();
  const auto joint = [&](const char* key, int32_t j) {
    json.key(key);
    if (j < 0 || uint32_t(j) >= db.jointCount())
      json.null();
    else
      json.value(db.jointName(uint32_t(j)));
  };
  json.key("motion_detail").beginObject();
  json.field("character_seconds", m.character_seconds).field("searches", m.searches);
  json.field("switches", m.switches).field("continuations", m.continuations);
  json.field("held", m.held).field("contact_phases", m.phase_drift_mm.count);
  json.field("phases_over_limit", m.phases_over_limit).field("sharp_turns", m.sharp_turns);
  json.field("phases_across_switch", m.phases_across_switch);
  json.field("phases_across_switch_over_limit", m.phases_across_switch_over_limit);
  json.field("responses_answered", m.response_s.count);
  joint("worst_joint_at_switch", m.worst_joint[mmdb::kAtSwitch]);
  joint("worst_joint_elsewhere", m.worst_joint[mmdb::kElsewhere]);
  json.endObject();
  json.key("clips_sliding").beginArray();  // the clips where planted feet drift most, worst first
  for (size_t i = 0; i < s.slides.size() && i < kListedClips; ++i) {
    const mmdb::ClipSlide& c = s.slides[i];
    json.beginObject().field("name", db.clip(c.clip).name).field("clip", c.clip);
    json.field("phases", c.phases).field("over_limit", c.over_limit);
    json.field("mean_drift_mm", c.mean_drift_mm).field("max_drift_mm", c.max_drift_mm);
    json.field("across_phases", c.across_phases).field("across_over_limit", c.across_over_limit);
    json.field("across_mean_drift_mm", c.across_mean_drift_mm);
    json.field("across_max_drift_mm", c.across_max_drift_mm);
    json.endObject();
  }
  json.endArray();
}

void writeStats(JsonWriter& json, const char* key, const ReplayStats& s, const mmdb::Database& db) {
  json.key(key).beginObject();
  json.field("decisions", s.decisions).field("decisions_per_second", s.decisions_per_second);
  json.field("jumps", s.jumps);
  json.field("mean_cost", s.mean_cost).field("p95_cost", s.p95_cost);
  json.field("mean_unit_distance", s.mean_unit_distance);
  json.field("mean_trajectory_error", s.mean_trajectory_error);
  json.field("p95_trajectory_error", s.p95_trajectory_error);
  json.field("trajectory_samples", s.trajectory_samples);
  writeMotion(json, s, db);
  json.endObject();
}

void writeBlockCosts(JsonWriter& json, const char* key, const std::vector<std::string>& names,
                     const std::vector<float>& costs) {
  json.key(key).beginObject();
  for (size_t i = 0; i < costs.size(); ++i)
    json.field(i < names.size() ? names[i] : "block" + std::to_string(i), costs[i]);
  json.endObject();
}

void writeClipFrame(JsonWriter& json, const char* key, const std::string& clip, int32_t local) {
  json.key(key);
  if (clip.empty()) {
    json.null();
    return;
  }
  json.beginObject().field("clip", clip).field("frame", local).endObject();
}

void writeSide(JsonWriter& json, const char* key, const DecisionSide& s,
               const std::vector<std::string>& blocks) {
  json.key(key);
  if (!s.searched) {
    json.null();
    return;
  }
  json.beginObject().field("reason", reasonName(s.reason));
  writeClipFrame(json, "playing", s.playing_clip, s.playing_local);
  writeClipFrame(json, "winner", s.winner_clip, s.winner_local);
  json.field("winner_global_frame", s.winner_global).field("cost", s.cost);
  json.field("transition_cost", s.transition).field("bias", s.bias);
  writeBlockCosts(json, "block_costs", blocks, s.block_costs);
  json.key("other_winner");
  if (s.other_found) {
    json.beginObject().field("cost", s.other_cost).field("matchable", s.other_matchable);
    json.field("transition_cost", s.other_transition);
    writeBlockCosts(json, "block_costs", blocks, s.other_block_costs);
    json.endObject();
  } else {
    json.null();
  }
  json.endObject();
}

void writeReplay(JsonWriter& json, const DiffResult& r) {
  json.key("replay").beginObject();
  json.field("characters", r.options->characters).field("seconds", r.options->seconds);
  json.field("stick", stickName(r)).field("stick_seconds", r.script->duration());
  json.key("skipped");
  r.replay ? json.null() : json.value(r.replay_skipped);
  json.key("unreplayable");
  r.unreplayable.empty() ? json.null() : json.value(r.unreplayable);
  if (r.replay) {
    const ReplayDiff& d = *r.replay;
    json.field("steps", d.steps);
    writeStats(json, "a", d.a, *r.db_a);
    writeStats(json, "b", d.b, *r.db_b);
    json.key("clip_usage").beginArray();
    for (const ClipUsage& c : d.clips) {
      json.beginObject().field("name", c.name).field("in_a", c.in_a).field("in_b", c.in_b);
      json.field("frames_a", c.frames_a).field("frames_b", c.frames_b);
      json.field("share_a", c.share_a).field("share_b", c.share_b);
      json.endObject();
    }
    json.endArray();
    json.field("decisions_differ", d.decisionsDiffer());
    json.field("characters_differing", d.characters_differing);
    json.key("first_differences").beginArray();
    for (const DecisionDifference& diff : d.first_differences) {
      json.beginObject().field("time", diff.time).field("step", diff.step);
      json.field("character", diff.character);
      writeSide(json, "a", diff.a, d.blocks_a);
      writeSide(json, "b", diff.b, d.blocks_b);
      json.endObject();
    }
    json.endArray();
  }
  json.endObject();
}

void printJson(const DiffResult& r, std::ostream& out) {
  const StructureDiff& s = r.structure;
  JsonWriter json(out);
  json.beginObject();
  writeFile(json, "a", r.options->a, s.cooker_a, s.frames_a, s.clips_a, s.joints_a, s.matchable_a,
            s.ranges_a);
  writeFile(json, "b", r.options->b, s.cooker_b, s.frames_b, s.clips_b, s.joints_b, s.matchable_b,
            s.ranges_b);
  json.field("differ", r.differ());
  writeStructure(json, s);
  writeReplay(json, r);
  json.endObject();
}

}  // namespace

int runDiffCommand(const DiffCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.characters < 1 || options.characters > int64_t{mmcook::review::kMaxReplayCharacters})
    throw UsageError(format("--characters wants a whole number from 1 to %u, got %lld",
                            mmcook::review::kMaxReplayCharacters,
                            static_cast<long long>(options.characters)));
  if (!(options.seconds >= 1.0 && options.seconds <= mmcook::review::kMaxReplaySeconds))
    throw UsageError(format("--seconds wants a number of seconds from 1 to %g, got %g",
                            mmcook::review::kMaxReplaySeconds, options.seconds));

  const std::vector<Threshold> thresholds =
      options.fail_on_given ? parseFailOn(options.fail_on) : std::vector<Threshold>();
  mmdb::StickScript script = mmdb::StickScript::builtIn();
  if (!options.stick.empty()) {
    mmdb::Result<mmdb::StickScript> loaded = mmdb::StickScript::load(options.stick.c_str());
    if (!loaded) throw InputError(std::string("bad stick file: ") + loaded.error().message());
    script = std::move(loaded.value());
  }
  const mmdb::Database a = openChecked(options.a, "A");
  const mmdb::Database b = openChecked(options.b, "B");

  DiffResult result;
  result.options = &options;
  result.script = &script;
  result.db_a = &a;
  result.db_b = &b;
  result.structure = mmcook::review::compareStructure(a, b);
  if (result.structure.jointCountsDiffer()) {
    result.replay_skipped = format(
        "A has %u joints and B has %u: they animate different skeletons, so their decisions "
        "cannot be compared; the structure above is the whole comparison",
        result.structure.joints_a, result.structure.joints_b);
  } else {
    mmcook::review::ReplaySettings settings;
    settings.characters = uint32_t(options.characters);
    settings.seconds = options.seconds;
    settings.keep_decisions = true;
    // The clips' own feet: the data checks measure the database's motion, which foot locking
    // would hold still.
    settings.feet = mmcook::review::ReplayFeet::Clips;
    mmdb::Result<mmcook::review::Replay> ra = mmcook::review::replay(a, script, settings);
    mmdb::Result<mmcook::review::Replay> rb = mmcook::review::replay(b, script, settings);
    if (!ra || !rb) {
      const bool a_failed = !ra;
      // One file that plays and one that does not differ; two that do not play, as far as the
      // replay tells, do not.
      if (!ra != !rb) result.unreplayable = a_failed ? "A" : "B";
      const mmdb::Error& error = a_failed ? ra.error() : rb.error();
      result.replay_skipped = format("%s (%s) cannot be replayed: %s: %s", a_failed ? "A" : "B",
                                     (a_failed ? options.a : options.b).c_str(),
                                     mmdb::errorCodeName(error.code()), error.message());
    } else {
      mmdb::Result<ReplayDiff> compared =
          mmcook::review::compareReplays(a, ra.value(), b, rb.value(), kDiffListedDecisions);
      if (!compared)
        throw std::runtime_error(std::string("comparing the replays: ") +
                                 compared.error().message());
      result.replay = std::move(compared.value());
    }
  }
  if (options.json)
    printJson(result, out);
  else
    printText(result, out);
  if (!thresholds.empty() && !result.replay)
    throw InputError("--fail-on: B's replay did not run, so there is nothing to check: " +
                     result.replay_skipped);
  bool exceeded = false;
  out.flush();
  for (const Threshold& t : thresholds) {
    const double value = t.key->of(result.replay->b.motion);
    if (value <= t.limit) continue;
    exceeded = true;
    const char* after = unitInfo(t.key->unit).after;
    err << format("mmcook diff: --fail-on %s: B's %s is %.4g%s, over %g%s\n", t.given.c_str(),
                  t.key->key, value, after, t.limit, after);
  }
  if (exceeded) return kExitChanged;
  return options.fail_on_change && result.differ() ? kExitChanged : kExitOk;
}

}  // namespace mmdb::cook
