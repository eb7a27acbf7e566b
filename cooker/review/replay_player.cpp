#include "review/replay_player.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

namespace mmcook::review {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// A JSON string, safe inside a <script> element ('<' written as \u003c).
std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || c == '<' || c == '>' || c == '&') {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", unsigned(u));
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", value);
  return buffer;
}

template <class T>
std::string packed(const std::vector<T>& values) {
  return "\"" + base64(values.data(), values.size() * sizeof(T)) + "\"";
}

// Measures in fixed point, clamped to uint16.
std::vector<uint16_t> fixed(const std::vector<float>& values, float unit) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = std::isfinite(values[i]) ? values[i] / unit : 65535.f;
    out[i] = uint16_t(std::clamp(std::lround(v), 0L, 65535L));
  }
  return out;
}

template <class T>
size_t base64Size(const std::vector<T>& values) {
  return (values.size() * sizeof(T) + 2) / 3 * 4;
}

}  // namespace

template <typename T>
std::vector<uint8_t> packPredicted(const std::vector<T>& values, size_t row) {
  constexpr unsigned kNibbles = sizeof(T) * 2;  // an escaped value's nibbles
  std::vector<uint8_t> out;
  out.reserve(values.size() / 2 + 16);
  size_t nibble = 0;
  const auto put = [&](unsigned v) {
    if (nibble % 2 == 0)
      out.push_back(uint8_t(v));
    else
      out.back() = uint8_t(out.back() | v << 4);
    ++nibble;
  };
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t predicted = i >= 2 * row ? 2 * int64_t(values[i - row]) - values[i - 2 * row]
                              : i >= row   ? int64_t(values[i - row])
                                           : 0;
    const int64_t residual = int64_t(values[i]) - predicted;
    if (residual >= -6 && residual <= 7) {
      put(unsigned(residual) & 0xF);
      continue;
    }
    if (residual >= -128 && residual <= 127) {
      put(8);
      put(unsigned(residual) & 0xF);
      put((unsigned(residual) >> 4) & 0xF);
      continue;
    }
    put(9);
    using Unsigned = std::make_unsigned_t<T>;
    const Unsigned bits = Unsigned(values[i]);
    for (unsigned k = 0; k < kNibbles; ++k) put(unsigned(bits >> (4 * k)) & 0xF);
  }
  return out;
}

template <typename T>
std::vector<T> unpackPredicted(const std::vector<uint8_t>& packed, size_t count, size_t row) {
  constexpr unsigned kNibbles = sizeof(T) * 2;
  std::vector<T> out(count);
  const size_t nibbles = packed.size() * 2;
  size_t nibble = 0;
  const auto get = [&]() {
    const unsigned v = nibble % 2 ? packed[nibble / 2] >> 4 : packed[nibble / 2] & 0xF;
    ++nibble;
    return v;
  };
  for (size_t i = 0; i < count; ++i) {
    if (nibble >= nibbles) return {};
    const unsigned v = get();
    if (v == 9) {
      if (nibble + kNibbles > nibbles) return {};
      std::make_unsigned_t<T> bits = 0;
      for (unsigned k = 0; k < kNibbles; ++k) bits |= std::make_unsigned_t<T>(get()) << (4 * k);
      out[i] = T(bits);
      continue;
    }
    const int64_t predicted = i >= 2 * row ? 2 * int64_t(out[i - row]) - out[i - 2 * row]
                              : i >= row   ? int64_t(out[i - row])
                                           : 0;
    int64_t residual = v > 9 ? int64_t(v) - 16 : int64_t(v);
    if (v == 8) {
      if (nibble + 2 > nibbles) return {};
      const unsigned low = get();
      residual = int8_t(uint8_t(low | get() << 4));
    }
    const int64_t value = predicted + residual;
    if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) return {};
    out[i] = T(value);
  }
  // Every byte used, and an unused last half byte left 0.
  const bool exact = (nibble + 1) / 2 == packed.size() && (nibble % 2 == 0 || packed.back() < 16);
  return exact ? out : std::vector<T>();
}

template std::vector<uint8_t> packPredicted(const std::vector<int16_t>&, size_t);
template std::vector<uint8_t> packPredicted(const std::vector<int32_t>&, size_t);
template std::vector<int16_t> unpackPredicted(const std::vector<uint8_t>&, size_t, size_t);
template std::vector<int32_t> unpackPredicted(const std::vector<uint8_t>&, size_t, size_t);

std::vector<uint8_t> packPoses(const ReplayPoses& p) {
  return packPredicted(p.offsets_mm, size_t(p.characters) * p.joints * 3);
}

std::vector<int16_t> unpackPoses(const std::vector<uint8_t>& packed, uint32_t characters,
                                 uint32_t joints, uint32_t samples) {
  const size_t row = size_t(characters) * joints * 3;
  return unpackPredicted<int16_t>(packed, row * samples, row);
}

std::string base64(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const uint32_t v = uint32_t(bytes[i]) << 16 | uint32_t(bytes[i + 1]) << 8 | bytes[i + 2];
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < size) {
    const bool two = i + 1 < size;
    const uint32_t v = uint32_t(bytes[i]) << 16 | (two ? uint32_t(bytes[i + 1]) << 8 : 0u);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += two ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::vector<uint8_t> unbase64(const std::string& text) {
  if (text.size() % 4 != 0) return {};
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      uint32_t d = 0;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
      } else {
        const char* at = std::strchr(kAlphabet, c);
        if (c == '\0' || !at || pad) return {};
        d = uint32_t(at - kAlphabet);
      }
      v = v << 6 | d;
    }
    out.push_back(uint8_t(v >> 16));
    if (pad < 2) out.push_back(uint8_t(v >> 8));
    if (pad < 1) out.push_back(uint8_t(v));
  }
  return out;
}

MeasurePeaks measurePeaks(const ReplayPoses& p) {
  MeasurePeaks out;
  out.slide_mm.assign(p.characters, 0.f);
  out.step_mm.assign(p.characters, 0.f);
  out.gap_m.assign(p.characters, 0.f);
  const auto grow = [](float& peak, const std::vector<float>& values, size_t at) {
    if (at < values.size() && std::isfinite(values[at])) peak = std::max(peak, values[at]);
  };
  for (uint32_t s = 0; s < p.samples; ++s)
    for (uint32_t c = 0; c < p.characters; ++c) {
      grow(out.slide_mm[c], p.slide_mm, p.at(s, c));
      grow(out.step_mm[c], p.pose_step_mm, p.at(s, c));
      grow(out.gap_m[c], p.gap_m, p.at(s, c));
    }
  return out;
}

MeasurePeaks sharedPeaks(const std::vector<MeasurePeaks>& sides) {
  MeasurePeaks out;
  const auto merge = [](std::vector<float>& into, const std::vector<float>& from) {
    if (into.size() < from.size()) into.resize(from.size(), 0.f);
    for (size_t c = 0; c < from.size(); ++c) into[c] = std::max(into[c], from[c]);
  };
  for (const MeasurePeaks& p : sides) {
    merge(out.slide_mm, p.slide_mm);
    merge(out.step_mm, p.step_mm);
    merge(out.gap_m, p.gap_m);
  }
  return out;
}

std::vector<BlockGroup> candidateColumns(const mmdb::Database& db) {
  static const char* const kNames[] = {"position", "velocity", "trajectory position",
                                       "trajectory direction"};
  static const char* const kSuffixes[] = {"_position", "_velocity", "", ""};
  std::vector<BlockGroup> groups;
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b) {
    const mmdb::FeatureBlockInfo info = db.featureBlock(b);
    const size_t kind = std::min(size_t(info.kind), size_t(3));
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const BlockGroup& g) { return g.name == kNames[kind]; });
    if (group == groups.end())
      group = groups.insert(groups.end(), BlockGroup{kNames[kind], {}, {}});
    std::string label(info.name);
    const std::string suffix = kSuffixes[kind];
    if (!suffix.empty() && label.size() > suffix.size() &&
        label.compare(label.size() - suffix.size(), suffix.size(), suffix) == 0)
      label.resize(label.size() - suffix.size());
    group->blocks.push_back(b);
    group->labels.push_back(label);
  }
  return groups;
}

std::vector<float> rawTrajectory(const mmdb::Database& db, uint32_t block,
                                 mmdb::Span<const float> normalized) {
  if (block >= db.featureBlockCount()) return {};
  const mmdb::FeatureBlockInfo info = db.featureBlock(block);
  if (info.kind != mmdb::FeatureKind::TrajectoryPosition &&
      info.kind != mmdb::FeatureKind::TrajectoryDirection)
    return {};
  const mmdb::Span<const float> offset = db.featureOffset(), scale = db.featureScale();
  std::vector<float> raw;
  for (uint32_t c = info.first_column; c < uint32_t(info.first_column) + info.width; ++c)
    if (c < normalized.size() && c < offset.size() && c < scale.size())
      raw.push_back(normalized[c] * scale[c] + offset[c]);
  return raw;
}

size_t replayPlayerBytes(const Replay& replay) {
  const ReplayPoses& p = replay.poses;
  return base64Size(packPoses(p)) + base64Size(packPredicted(p.ground_mm, p.characters * 4)) +
         base64Size(p.contacts) + base64Size(p.clip) + base64Size(p.locked) +
         base64Size(p.switched) + 3 * ((p.slide_mm.size() * 2 + 2) / 3 * 4);
}

std::string replayPlayerJson(const mmdb::Database& db, const Replay& replay,
                             const std::string& label, const MeasurePeaks* peaks) {
  const ReplayPoses& p = replay.poses;
  const MeasurePeaks own = measurePeaks(p);
  const MeasurePeaks& top = peaks ? *peaks : own;
  std::string out = "{\"label\":" + jsonString(label);
  out += ",\"dt\":" + number(kReplayStepSeconds);
  out += ",\"stride\":" + std::to_string(p.stride);
  out += ",\"samples\":" + std::to_string(p.samples);
  out += ",\"characters\":" + std::to_string(p.characters);
  out += ",\"joints\":" + std::to_string(p.joints);
  out += ",\"names\":[";
  for (uint32_t j = 0; j < db.jointCount(); ++j)
    out += (j ? "," : "") + jsonString(db.jointName(j));
  out += "],\"parents\":[";
  const mmdb::Span<const int32_t> parents = db.parents();
  for (size_t j = 0; j < parents.size(); ++j) out += (j ? "," : "") + std::to_string(parents[j]);
  out += "],\"contactJoints\":[";
  const mmdb::Span<const int32_t> contacts = db.contactJoints();
  for (size_t j = 0; j < contacts.size(); ++j) out += (j ? "," : "") + std::to_string(contacts[j]);
  out += "],\"clips\":[";
  for (uint32_t c = 0; c < db.clipCount(); ++c) out += (c ? "," : "") + jsonString(db.clip(c).name);
  out += "],\"blocks\":[";
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b)
    out += (b ? "," : "") + jsonString(db.featureBlock(b).name);
  out += "],\"weights\":[";
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b)
    out += (b ? "," : "") + number(db.featureBlock(b).weight);
  out += "],\"groups\":[";
  const std::vector<BlockGroup> groups = candidateColumns(db);
  for (size_t g = 0; g < groups.size(); ++g) {
    out += (g ? ",[" : "[") + jsonString(groups[g].name) + ",[";
    for (size_t k = 0; k < groups[g].blocks.size(); ++k)
      out += (k ? "," : "") + std::to_string(groups[g].blocks[k]);
    out += "],[";
    for (size_t k = 0; k < groups[g].labels.size(); ++k)
      out += (k ? "," : "") + jsonString(groups[g].labels[k]);
    out += "]]";
  }
  out += "],\"peaks\":{";
  const auto peakList = [&](const char* name, const std::vector<float>& values) {
    out += std::string("\"") + name + "\":[";
    for (size_t c = 0; c < values.size(); ++c) out += (c ? "," : "") + number(values[c]);
    out += "]";
  };
  peakList("slide", top.slide_mm);
  out += ",";
  peakList("step", top.step_mm);
  out += ",";
  peakList("gap", top.gap_m);
  out += "}";
  std::vector<uint32_t> trajectory_blocks;
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b)
    if (!rawTrajectory(db, b, db.featureRow(0)).empty()) trajectory_blocks.push_back(b);
  out += ",\"poses\":" + packed(packPoses(p));
  out += ",\"ground\":" + packed(packPredicted(p.ground_mm, size_t(p.characters) * 4));
  out += ",\"contacts\":" + packed(p.contacts);
  out += ",\"clip\":" + packed(p.clip);
  out += ",\"locked\":" + packed(p.locked);
  out += ",\"switched\":" + packed(p.switched);
  out += ",\"slide\":" + packed(fixed(p.slide_mm, 0.1f));
  out += ",\"step\":" + packed(fixed(p.pose_step_mm, 0.1f));
  out += ",\"gap\":" + packed(fixed(p.gap_m, 0.001f));
  // Switches: [time, character, to clip, to local frame, from clip (-1), cost, reason,
  // [[clip, local frame, cost, transition, bias, [block costs]], ...] (the candidates),
  // [the frame playing, as a candidate] or null, seeded (0 or 1), the index in "trajectories"
  // of its trajectories or -1]. Explained switches only carry candidates and what follows them.
  // "trajectories": Int16 thousandths (replayMillimetres() of the raw value: mm for positions),
  // per explained switch, per block of "trajectoryBlocks", the raw columns of the query, of the
  // frame playing (when there is one) and of each candidate, in that order, each row
  // "trajectoryWidths" values.
  std::vector<int16_t> trajectories;
  const auto keep = [&](const std::vector<float>& raw) {
    for (float v : raw) trajectories.push_back(replayMillimetres(v));
  };
  const auto where = [&](int32_t frame, int32_t& clip, int32_t& local) {
    clip = -1;
    local = -1;
    if (frame < 0 || uint32_t(frame) >= db.frameCount()) return;
    clip = int32_t(db.clipOfFrame(uint32_t(frame)));
    local = frame - int32_t(db.clip(uint32_t(clip)).first_frame);
  };
  // The page's limits: the first kMaxPlayerSwitches switches, and the candidates of the switches
  // of the first characters whose switches together stay within kMaxExplainedSwitches (always
  // character 0's).
  std::vector<size_t> per_character(p.characters, 0);
  for (const ReplayJump& j : replay.jumps)
    if (j.character < p.characters) ++per_character[j.character];
  uint32_t explained = 0;
  for (size_t total = 0; explained < p.characters; ++explained) {
    total += per_character[explained];
    if (explained > 0 && total > kMaxExplainedSwitches) break;
  }
  const size_t shown = std::min(replay.jumps.size(), kMaxPlayerSwitches);
  out += ",\"explainedCharacters\":" + std::to_string(explained);
  out += ",\"switchCount\":" + std::to_string(replay.jumps.size());
  out += ",\"switches\":[";
  bool first = true;
  for (size_t s = 0; s < shown; ++s) {
    const ReplayJump& j = replay.jumps[s];
    const bool explain = j.character < explained;
    int32_t to_clip, to_local, from_clip, from_local;
    where(j.to_frame, to_clip, to_local);
    where(j.from_frame, from_clip, from_local);
    out += first ? "[" : ",[";
    first = false;
    out += number(j.time) + "," + std::to_string(j.character) + "," + std::to_string(to_clip) +
           "," + std::to_string(to_local) + "," + std::to_string(from_clip) + "," + number(j.cost) +
           "," + std::to_string(unsigned(j.reason)) + ",[";
    const auto candidate = [&](const mmdb::CandidateCost& c) {
      int32_t clip, local;
      where(c.frame, clip, local);
      out += "[" + std::to_string(clip) + "," + std::to_string(local) + "," + number(c.cost) + "," +
             number(c.transition) + "," + number(c.bias) + ",[";
      for (uint32_t b = 0; b < c.block_count; ++b) out += (b ? "," : "") + number(c.block_costs[b]);
      out += "]]";
    };
    for (size_t k = 0; explain && k < j.candidates.size(); ++k) {
      if (k) out += ",";
      candidate(j.candidates[k]);
    }
    out += "]";
    if (explain) {
      out += ",";
      if (j.playing.frame >= 0)
        candidate(j.playing);
      else
        out += "null";
      out += j.seeded ? ",1," : ",0,";
      const bool has_query = j.query.size() == db.featureCount() && !trajectory_blocks.empty();
      out += has_query ? std::to_string(trajectories.size()) : std::string("-1");
      for (size_t t = 0; has_query && t < trajectory_blocks.size(); ++t) {
        const uint32_t b = trajectory_blocks[t];
        keep(rawTrajectory(db, b, mmdb::Span<const float>(j.query.data(), j.query.size())));
        if (j.playing.frame >= 0)
          keep(rawTrajectory(db, b, db.featureRow(uint32_t(j.playing.frame))));
        for (const mmdb::CandidateCost& c : j.candidates)
          keep(rawTrajectory(db, b, db.featureRow(uint32_t(c.frame))));
      }
    }
    out += "]";
  }
  out += "],\"trajectoryBlocks\":[";
  for (size_t t = 0; t < trajectory_blocks.size(); ++t)
    out += (t ? "," : "") + std::to_string(trajectory_blocks[t]);
  out += "],\"trajectoryWidths\":[";
  for (size_t t = 0; t < trajectory_blocks.size(); ++t)
    out += (t ? "," : "") + std::to_string(db.featureBlock(trajectory_blocks[t]).width);
  out += "],\"trajectories\":" + packed(trajectories);
  out += "}";
  return out;
}

}  // namespace mmcook::review
