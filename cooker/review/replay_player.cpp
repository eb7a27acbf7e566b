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

size_t replayPlayerBytes(const Replay& replay) {
  const ReplayPoses& p = replay.poses;
  return base64Size(packPoses(p)) + base64Size(packPredicted(p.ground_mm, p.characters * 4)) +
         base64Size(p.contacts) + base64Size(p.clip) + base64Size(p.locked) +
         base64Size(p.switched) + 3 * ((p.slide_mm.size() * 2 + 2) / 3 * 4);
}

std::string replayPlayerJson(const mmdb::Database& db, const Replay& replay,
                             const std::string& label) {
  const ReplayPoses& p = replay.poses;
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
  out += "]";
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
  // [[clip, local frame, cost, transition, bias, [block costs]], ...]].
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
    for (size_t k = 0; explain && k < j.candidates.size(); ++k) {
      const mmdb::CandidateCost& c = j.candidates[k];
      int32_t clip, local;
      where(c.frame, clip, local);
      out += (k ? ",[" : "[") + std::to_string(clip) + "," + std::to_string(local) + "," +
             number(c.cost) + "," + number(c.transition) + "," + number(c.bias) + ",[";
      for (uint32_t b = 0; b < c.block_count; ++b) out += (b ? "," : "") + number(c.block_costs[b]);
      out += "]]";
    }
    out += "]]";
  }
  out += "]}";
  return out;
}

const char* replayPlayerStyle() {
  return R"(
.rp-controls{display:flex;flex-wrap:wrap;align-items:center;gap:8px;margin:6px 0}
.rp-controls button{min-width:34px}
#rp-scrub{flex:1;min-width:240px}
.rp-side{min-width:0}
.rp-view{background:#f1f3f5;border:1px solid #dee2e6;display:block;width:720px;max-width:100%;
height:auto}
.rp-crowd{display:flex;flex-wrap:wrap;gap:3px;margin:4px 0}
.rp-crowd canvas{background:#f8f9fa;border:1px solid #dee2e6;cursor:pointer}
.rp-crowd canvas.on{border-color:#1864ab}
.rp-line{position:relative;width:720px;max-width:100%}
.rp-measures{display:block;border:1px solid #dee2e6;cursor:crosshair;width:100%;height:auto;
box-sizing:border-box}
.rp-switch{position:absolute;top:0;width:5px;height:14px;margin-left:-2px;padding:0;border:0;
background:#e8590c;cursor:pointer}
.rp-switch.now{background:#c92a2a;height:18px}
.rp-cands{font-size:12px;min-height:3em;overflow-x:auto;max-width:100%}
.rp-cand th{font-weight:normal;vertical-align:bottom;max-width:76px}
.rp-cands td.win{font-weight:bold}
)";
}

std::string replayPlayerPanel(size_t side) {
  return "<canvas class=\"rp-view\" width=\"720\" height=\"360\" data-side=\"" +
         std::to_string(side) +
         "\"></canvas><div class=\"rp-crowd\"></div><div class=\"rp-line\"><canvas "
         "class=\"rp-measures\" width=\"720\" height=\"150\"></canvas><div "
         "class=\"rp-marks\"></div></div><div class=\"rp-cands\"></div>";
}

std::string replayPlayerMarkup(const std::vector<std::string>& panels) {
  std::string out =
      "<div id=\"rp\" class=\"rp\" data-sample=\"0\"><div class=\"rp-controls\">"
      "<button id=\"rp-play\" title=\"play or pause (space)\">&#9654;</button>"
      "<button id=\"rp-back\" title=\"one step back\">&#9664;|</button>"
      "<button id=\"rp-fwd\" title=\"one step on\">|&#9654;</button>"
      "<input id=\"rp-scrub\" type=\"range\" min=\"0\" max=\"0\" value=\"0\" step=\"1\">"
      "<span id=\"rp-time\">0.00 s</span>"
      "<label>speed <select id=\"rp-speed\"><option value=\"0.25\">0.25x</option>"
      "<option value=\"0.5\">0.5x</option><option value=\"1\" selected>1x</option>"
      "<option value=\"2\">2x</option></select></label>"
      "<label>character <select id=\"rp-char\"></select></label></div>";
  out += "<div class=\"columns\" style=\"--n:" + std::to_string(panels.size()) + "\">";
  for (const std::string& panel : panels) out += panel;
  return out + "</div></div>";
}

// The player. Every side plays the same step on one clock, so two databases stay in step.
const char* replayPlayerScript() {
  return R"JS(
(function () {
  var root = document.getElementById('rp');
  if (!root) return;
  var REASONS = ['none', 'start', 'end of range', 'stick change', 'periodic'];
  function bytes(b64) {
    var s = atob(b64), out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; ++i) out[i] = s.charCodeAt(i);
    return out.buffer;
  }
  // A predicted stream (packPredicted): `row` values a sample, each the prediction from the
  // same position's two previous samples plus a nibble of -6..7 or nibble 8 and an int8 in two
  // more, or nibble 9 and the value itself in `bits` / 4 nibbles.
  function unpack(buffer, count, row, bits) {
    var src = new Uint8Array(buffer), q = 0;
    var out = bits == 16 ? new Int16Array(count) : new Int32Array(count);
    function nibble() {
      var b = src[q >> 1], v = q & 1 ? b >> 4 : b & 15;
      ++q;
      return v;
    }
    for (var i = 0; i < count; ++i) {
      var v = nibble();
      if (v == 9) {
        var x = 0;
        for (var k = 0; k < bits; k += 4) x |= nibble() << k;
        out[i] = x;
        continue;
      }
      var r = v > 9 ? v - 16 : v;
      if (v == 8) {
        r = nibble();
        r |= nibble() << 4;
        if (r > 127) r -= 256;
      }
      var p = i >= 2 * row ? 2 * out[i - row] - out[i - 2 * row] : i >= row ? out[i - row] : 0;
      out[i] = p + r;
    }
    return out;
  }
  var sides = [];
  document.querySelectorAll('script.rp-data').forEach(function (el) {
    var d = JSON.parse(el.textContent), i = el.getAttribute('data-side');
    var row = d.characters * d.joints * 3;
    d.offsets = unpack(bytes(d.poses), row * d.samples, row, 16);
    delete d.poses;
    d.ground = unpack(bytes(d.ground), d.characters * 4 * d.samples, d.characters * 4, 32);
    d.contacts = new Uint32Array(bytes(d.contacts));
    d.clip = new Int32Array(bytes(d.clip));
    d.locked = new Uint8Array(bytes(d.locked));
    d.switched = new Uint8Array(bytes(d.switched));
    d.slide = new Uint16Array(bytes(d.slide));
    d.step = new Uint16Array(bytes(d.step));
    d.gap = new Uint16Array(bytes(d.gap));
    d.el = document.querySelector('.rp-view[data-side="' + i + '"]').parentNode;
    d.view = d.el.querySelector('.rp-view');
    d.measures = d.el.querySelector('.rp-measures');
    d.marks = d.el.querySelector('.rp-marks');
    d.cands = d.el.querySelector('.rp-cands');
    d.crowd = [];
    d.sampleSeconds = d.dt * d.stride;
    sides.push(d);
  });
  if (!sides.length) return;
  var samples = 0, characters = 1e9;
  sides.forEach(function (d) {
    characters = Math.min(characters, d.characters);
  });
  // The clock counts the first database's samples; another one (a longer stride) shows the
  // sample nearest in time.
  samples = sides[0].samples;
  var sampleSeconds = sides[0].sampleSeconds;
  function sideSample(d) {
    return Math.min(d.samples - 1, Math.round(state.sample * sides[0].stride / d.stride));
  }
  var state = {sample: 0, t: 0, playing: false, speed: 1, character: 0, last: 0};
  var scrub = document.getElementById('rp-scrub');
  var play = document.getElementById('rp-play');
  var timeText = document.getElementById('rp-time');
  var pick = document.getElementById('rp-char');
  scrub.max = String(samples - 1);
  for (var c = 0; c < characters; ++c) {
    var o = document.createElement('option');
    o.value = String(c);
    o.textContent = String(c);
    pick.appendChild(o);
  }

  function el(d, s, c) { return s * d.characters + c; }
  function jointAt(d, s, c, j) {
    var k = (el(d, s, c) * d.joints + j) * 3;
    return [d.offsets[k] / 1000, d.offsets[k + 1] / 1000, d.offsets[k + 2] / 1000];
  }
  function groundAt(d, s, c) {
    var k = el(d, s, c) * 4;
    return [d.ground[k] / 1000, d.ground[k + 1] / 1000, d.ground[k + 2] / 1000,
            d.ground[k + 3] / 1000];
  }
  function clipName(d, clip) { return clip >= 0 && clip < d.clips.length ? d.clips[clip] : '-'; }

  // A skeleton in a 2D projection: project(p) gives [x, y] on the canvas for an offset p.
  function skeleton(g, d, s, c, project, width, toes) {
    var pts = [];
    for (var j = 0; j < d.joints; ++j) pts.push(project(jointAt(d, s, c, j)));
    g.lineWidth = width;
    g.strokeStyle = '#343a40';
    g.beginPath();
    for (var j = 0; j < d.joints; ++j) {
      var p = d.parents[j];
      if (p < 0) continue;
      g.moveTo(pts[p][0], pts[p][1]);
      g.lineTo(pts[j][0], pts[j][1]);
    }
    g.stroke();
    if (!toes) return;
    var contacts = d.contacts[el(d, s, c)], locked = d.locked[el(d, s, c)];
    d.contactJoints.forEach(function (j, i) {
      if (j < 0 || j >= d.joints) return;
      var planted = (contacts >> i) & 1, held = (locked >> (i < 2 ? i : 9)) & 1;
      g.beginPath();
      g.arc(pts[j][0], pts[j][1], planted ? 6 : 4, 0, 2 * Math.PI);
      g.fillStyle = planted ? '#2b8a3e' : '#ced4da';
      g.fill();
      if (held) {
        g.lineWidth = 2;
        g.strokeStyle = '#c92a2a';
        g.strokeRect(pts[j][0] - 8, pts[j][1] - 8, 16, 16);
      }
    });
  }

  function drawView(d) {
    var g = d.view.getContext('2d'), w = d.view.width, h = d.view.height, s = sideSample(d);
    g.clearRect(0, 0, w, h);
    if (s >= d.samples) return;
    var c = state.character, at = groundAt(d, s, c);
    var half = w / 2, scale = 110;
    // Above (left half): forward (+z) up, +x to the left, the character at the centre.
    var cx = half / 2, cy = h / 2;
    function top(x, z) { return [cx - (x - at[0]) * scale, cy - (z - at[1]) * scale]; }
    g.save();
    g.beginPath();
    g.rect(0, 0, half, h);
    g.clip();
    g.strokeStyle = '#dee2e6';
    g.lineWidth = 1;
    for (var gx = Math.floor(at[0] - 4); gx <= at[0] + 4; ++gx) {
      var a = top(gx, at[1] - 4), b = top(gx, at[1] + 4);
      g.beginPath(); g.moveTo(a[0], a[1]); g.lineTo(b[0], b[1]); g.stroke();
    }
    for (var gz = Math.floor(at[1] - 4); gz <= at[1] + 4; ++gz) {
      var a = top(at[0] - 4, gz), b = top(at[0] + 4, gz);
      g.beginPath(); g.moveTo(a[0], a[1]); g.lineTo(b[0], b[1]); g.stroke();
    }
    // The paths over the last and next 2 s: desired dashed grey, achieved blue.
    var span = Math.round(2 / d.sampleSeconds);
    var from = Math.max(0, s - span), to = Math.min(d.samples - 1, s + span);
    [[2, '#868e96', [6, 4], 3], [0, '#1864ab', [], 2]].forEach(function (style) {
      g.setLineDash(style[2]);
      g.strokeStyle = style[1];
      g.lineWidth = style[3];
      g.beginPath();
      for (var k = from; k <= to; ++k) {
        var p = groundAt(d, k, c), q = top(p[style[0]], p[style[0] + 1]);
        if (k === from) g.moveTo(q[0], q[1]); else g.lineTo(q[0], q[1]);
      }
      g.stroke();
    });
    g.setLineDash([]);
    var want = top(at[2], at[3]);
    g.fillStyle = '#868e96';
    g.beginPath(); g.arc(want[0], want[1], 4, 0, 2 * Math.PI); g.fill();
    skeleton(g, d, s, c, function (p) { return top(at[0] + p[0], at[1] + p[2]); }, 2, true);
    g.restore();
    // From the side (right half): +z to the right, up up, the ground at the bottom.
    var sx = half + half / 2, sy = h - 30, side = 150;
    g.strokeStyle = '#adb5bd';
    g.beginPath(); g.moveTo(half, sy); g.lineTo(w, sy); g.stroke();
    g.strokeStyle = '#dee2e6';
    g.beginPath(); g.moveTo(half, 0); g.lineTo(half, h); g.stroke();
    skeleton(g, d, s, c, function (p) { return [sx + p[2] * side, sy - p[1] * side]; }, 3, true);
    g.fillStyle = '#343a40';
    g.font = '12px system-ui,sans-serif';
    var clip = d.clip[el(d, s, c)];
    g.fillText(d.label + ' character ' + c + ' at ' + ((s * d.stride + 1) * d.dt).toFixed(2) +
               ' s: ' + clipName(d, clip), 6, 14);
    g.fillText('above (forward up)', 6, h - 6);
    g.fillText('side (forward right)', half + 6, h - 6);
  }

  function drawCrowd(d) {
    var s = sideSample(d);
    d.crowd.forEach(function (cv, c) {
      var g = cv.getContext('2d');
      g.clearRect(0, 0, cv.width, cv.height);
      cv.className = c === state.character ? 'on' : '';
      skeleton(g, d, s, c, function (p) {
        return [cv.width / 2 + p[2] * 34, cv.height - 6 - p[1] * 34];
      }, 1.2, true);
    });
  }

  // The measures of the selected character over time, the switches above them.
  var LANES = [['slide', 0.1, 'foot slide (mm/step)', '#e8590c'],
               ['step', 0.1, 'pose step (mm/step)', '#5f3dc4'],
               ['gap', 0.001, 'desired-achieved gap (m)', '#0b7285']];
  function drawMeasures(d) {
    var g = d.measures.getContext('2d'), w = d.measures.width, h = d.measures.height;
    var c = state.character, top = 16, lane = (h - top) / LANES.length;
    g.clearRect(0, 0, w, h);
    g.font = '10px system-ui,sans-serif';
    LANES.forEach(function (L, i) {
      var values = d[L[0]], peak = 1e-9;
      for (var s = 0; s < d.samples; ++s) peak = Math.max(peak, values[el(d, s, c)]);
      var y0 = top + lane * (i + 1) - 2;
      g.strokeStyle = L[3];
      g.lineWidth = 1;
      g.beginPath();
      for (var s = 0; s < d.samples; ++s) {
        var x = w * s / Math.max(1, d.samples - 1), y = y0 - (lane - 12) * values[el(d, s, c)] / peak;
        if (s === 0) g.moveTo(x, y); else g.lineTo(x, y);
      }
      g.stroke();
      g.fillStyle = L[3];
      g.fillText(L[2] + ', max ' + (peak * L[1]).toPrecision(3), 4, y0 - lane + 22);
    });
    var x = w * sideSample(d) / Math.max(1, d.samples - 1);
    g.strokeStyle = '#c92a2a';
    g.beginPath(); g.moveTo(x, 0); g.lineTo(x, h); g.stroke();
  }

  function switchesOf(d) {
    return d.switches.filter(function (j) { return j[1] === state.character; });
  }
  function sampleOf(d, time) { return Math.max(0, Math.round(time / d.sampleSeconds)); }

  function placeMarks(d) {
    d.marks.innerHTML = '';
    var w = d.measures.clientWidth || d.measures.width, labelled = -1e9;
    switchesOf(d).forEach(function (j) {
      var b = document.createElement('button');
      var s = Math.min(sampleOf(sides[0], j[0]), samples - 1);
      b.className = 'rp-switch';
      b.setAttribute('data-sample', String(s));
      b.title = j[0].toFixed(2) + ' s, ' + (REASONS[j[6]] || '') + ': to ' + clipName(d, j[2]) +
                ' frame ' + j[3] + ', cost ' + j[5].toPrecision(3);
      b.style.left = (100 * s / Math.max(1, samples - 1)) + '%';
      b.addEventListener('click', function () { seek(s); pause(); });
      d.marks.appendChild(b);
    });
  }

  function showCandidates(d) {
    var now = (state.sample * sides[0].stride + 1) * d.dt, last = null;
    switchesOf(d).forEach(function (j) { if (j[0] <= now + 1e-6) last = j; });
    d.marks.querySelectorAll('.rp-switch').forEach(function (b) {
      b.classList.toggle('now', !!last && +b.getAttribute('data-sample') ===
                                     Math.min(sampleOf(sides[0], last[0]), samples - 1));
    });
    if (!last) { d.cands.innerHTML = '<p class="note">No switch yet.</p>'; return; }
    var html = '<p><b>Switch at ' + last[0].toFixed(2) + ' s</b> (' + (REASONS[last[6]] || '') +
               '): ' + esc(clipName(d, last[4])) + ' &rarr; <b>' + esc(clipName(d, last[2])) +
               '</b> frame ' + last[3] + ', cost ' + last[5].toPrecision(3) + '</p>';
    if (!last[7].length && state.character >= d.explainedCharacters) {
      html += '<p class="note">Candidates are kept for characters 0 to ' +
              (d.explainedCharacters - 1) + ' only: the page holds at most about 2000 ' +
              'switches with their candidates.</p>';
    }
    if (last[7].length) {
      html += '<table class="rp-cand"><tr><th></th><th>clip</th><th class="num">frame</th>' +
              '<th class="num">cost</th><th class="num">transition</th><th class="num">bias</th>';
      d.blocks.forEach(function (b, i) {
        html += '<th class="num" title="weight ' + d.weights[i] + '">' +
                esc(b).replace(/_/g, '_<wbr>') + '</th>';
      });
      html += '</tr>';
      last[7].forEach(function (k, r) {
        html += '<tr><td class="' + (r ? '' : 'win') + '">' + (r ? r + 1 : 'winner') + '</td><td>' +
                esc(clipName(d, k[0])) + '</td><td class="num">' + k[1] + '</td><td class="num">' +
                fmt(k[2]) + '</td><td class="num">' + fmt(k[3]) + '</td><td class="num">' +
                fmt(k[4]) + '</td>';
        k[5].forEach(function (v) { html += '<td class="num">' + fmt(v) + '</td>'; });
        html += '</tr>';
      });
      html += '</table>';
    }
    d.cands.innerHTML = html;
  }
  function fmt(v) { return v === null ? '-' : (+v).toPrecision(3); }
  function esc(t) {
    return String(t).replace(/[&<>"]/g, function (ch) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[ch];
    });
  }

  function draw() {
    root.setAttribute('data-sample', String(state.sample));
    scrub.value = String(state.sample);
    timeText.textContent = ((state.sample * sides[0].stride + 1) * sides[0].dt).toFixed(2) + ' s';
    sides.forEach(function (d) {
      drawView(d);
      drawCrowd(d);
      drawMeasures(d);
      showCandidates(d);
    });
  }
  function seek(s) {
    state.sample = Math.max(0, Math.min(samples - 1, s | 0));
    state.t = state.sample * sampleSeconds;
    draw();
  }
  function pause() { state.playing = false; play.innerHTML = '&#9654;'; }
  function frame(now) {
    if (!state.playing) return;
    var elapsed = Math.min(0.1, (now - state.last) / 1000);
    state.last = now;
    state.t += elapsed * state.speed;
    if (state.t > (samples - 1) * sampleSeconds) state.t = 0;
    var s = Math.floor(state.t / sampleSeconds);
    if (s !== state.sample) { state.sample = s; draw(); }
    requestAnimationFrame(frame);
  }
  function toggle() {
    if (state.playing) { pause(); return; }
    state.playing = true;
    play.innerHTML = '&#10074;&#10074;';
    state.last = performance.now();
    requestAnimationFrame(frame);
  }
  function select(c) {
    state.character = c;
    pick.value = String(c);
    sides.forEach(placeMarks);
    draw();
  }
  sides.forEach(function (d) {
    var box = d.el.querySelector('.rp-crowd');
    for (var c = 0; c < characters; ++c) {
      var cv = document.createElement('canvas');
      cv.width = 64;
      cv.height = 72;
      cv.title = 'character ' + c;
      (function (c) { cv.addEventListener('click', function () { select(c); }); })(c);
      box.appendChild(cv);
      d.crowd.push(cv);
    }
    d.measures.addEventListener('click', function (e) {
      var r = d.measures.getBoundingClientRect();
      seek(Math.round((samples - 1) * (e.clientX - r.left) / r.width));
      pause();
    });
  });
  play.addEventListener('click', toggle);
  document.getElementById('rp-back').addEventListener('click', function () {
    pause(); seek(state.sample - 1);
  });
  document.getElementById('rp-fwd').addEventListener('click', function () {
    pause(); seek(state.sample + 1);
  });
  scrub.addEventListener('input', function () { seek(+scrub.value); });
  document.getElementById('rp-speed').addEventListener('change', function (e) {
    state.speed = +e.target.value;
  });
  pick.addEventListener('change', function () { select(+pick.value); });
  document.addEventListener('keydown', function (e) {
    var tag = e.target && e.target.tagName;
    if (e.key !== ' ' || tag === 'INPUT' || tag === 'SELECT' || tag === 'BUTTON') return;
    var r = root.getBoundingClientRect();
    if (r.bottom < 0 || r.top > window.innerHeight) return;
    e.preventDefault();
    toggle();
  });
  window.mmReplay = {seek: seek, play: toggle, pause: pause, state: state, sides: sides};
  select(0);
})();
)JS";
}

}  // namespace mmcook::review
