#include "review/replay_player.h"

#include <string>
#include <vector>

namespace mmcook::review {

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
.rp-cands{font-size:12px;min-height:3em;max-width:100%;display:flex;flex-wrap:wrap;gap:8px;
align-items:flex-start}
.rp-cands>p{flex-basis:100%;margin:4px 0}
.rp-cand{table-layout:auto;max-width:100%}
.rp-cand th{font-weight:normal;vertical-align:bottom}
.rp-cand td,.rp-cand th{padding:1px 4px;vertical-align:top}
.rp-cand td.blocks{white-space:nowrap;line-height:1.25}
.rp-cand th .note{font-size:11px;color:#868e96}
.rp-cand td.where{overflow-wrap:anywhere;max-width:190px}
.rp-cand tr.win td{font-weight:bold}
.rp-cand tr.playing td{font-style:italic;background:#f1f3f5}
.rp-traj{border:1px solid #dee2e6;background:#f8f9fa}
.rp-traj text{font:10px system-ui,sans-serif;fill:#495057}
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
    d.trajectories = new Int16Array(bytes(d.trajectories));
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
      // One scale for every side: the page's shared peak of this lane for this character.
      var values = d[L[0]], peak = 1e-9, shared = d.peaks && d.peaks[L[0]];
      if (shared && c < shared.length && shared[c] !== null) {
        peak = Math.max(peak, shared[c] / L[1]);
      } else {
        for (var s = 0; s < d.samples; ++s) peak = Math.max(peak, values[el(d, s, c)]);
      }
      var y0 = top + lane * (i + 1) - 2;
      g.strokeStyle = L[3];
      g.lineWidth = 1;
      g.beginPath();
      for (var s = 0; s < d.samples; ++s) {
        var x = w * s / Math.max(1, d.samples - 1);
        var y = y0 - (lane - 12) * Math.min(1, values[el(d, s, c)] / peak);
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
    if (last[7].length) html += candidateTable(d, last) + trajectoryPlot(d, last);
    d.cands.innerHTML = html;
  }
  // Compact: 3 significant digits, no exponent for everyday costs, no trailing zeros.
  function fmt(v) {
    if (v === null || v === undefined) return '-';
    v = +v;
    if (v === 0) return '0';
    var a = Math.abs(v);
    if (a >= 1000 || a < 0.001) return v.toExponential(1).replace('e+', 'e');
    return String(+v.toPrecision(3));
  }
  // The winner, the frame that was playing (what the winner beat) and the next best candidates
  // of other stretches of motion; each block's part of the cost in one column per feature kind.
  function candidateTable(d, j) {
    var win = j[7][0], playing = j[8] || null, seeded = j[9] !== 0;
    var html = '';
    if (playing) {
      var margin = playing[2] - win[2];
      html += '<p class="rp-beat">' + (margin >= 0 || seeded
          ? 'The winner beat the frame playing (' + esc(clipName(d, playing[0])) + ' frame ' +
            playing[1] + ', cost ' + fmt(playing[2]) + ') by <b>' + fmt(margin) + '</b>.'
          : 'The frame playing (' + esc(clipName(d, playing[0])) + ' frame ' + playing[1] +
            ', cost ' + fmt(playing[2]) + ') had to move on (' + (REASONS[j[6]] || '') +
            '): the search skipped it.') + '</p>';
    }
    html += '<table class="rp-cand"><tr><th></th><th>clip, frame</th><th class="num">cost</th>' +
            '<th class="num" title="transition cost + bias">trans., bias</th>';
    d.groups.forEach(function (g) {
      var names = g[1].map(function (b) { return d.blocks[b] + ' (weight ' + d.weights[b] + ')'; });
      // The group's blocks, one a line, in the order of the numbers under them.
      var lines = g[1].length > 1 ? '<br><span class="note">' + g[2].map(esc).join('<br>') +
                                        '</span>' : '';
      html += '<th class="num" title="' + esc(names.join(', ')) + '">' + esc(g[0]) + lines + '</th>';
    });
    html += '</tr>';
    function row(k, label, cls) {
      html += '<tr class="' + cls + '"><td>' + label + '</td><td class="where">' +
              esc(clipName(d, k[0])) + ' <span class="note">' + k[1] + '</span></td>' +
              '<td class="num">' + fmt(k[2]) + '</td><td class="num">' + fmt(k[3]) + ', ' +
              fmt(k[4]) + '</td>';
      d.groups.forEach(function (g) {
        html += '<td class="num blocks">';
        g[1].forEach(function (b, i) {
          html += (i ? '<br>' : '') + fmt(k[5][b]);
        });
        html += '</td>';
      });
      html += '</tr>';
    }
    j[7].forEach(function (k, r) { row(k, r ? String(r + 1) : 'winner', r ? '' : 'win'); });
    if (playing) row(playing, 'playing', 'playing');
    return html + '</table>';
  }
  // The query's trajectory and the candidates' (the trajectory blocks as the search compares
  // them, raw, in the character's frame: forward up, left to the left), one plot per block.
  var TRAJ_COLOURS = ['#c92a2a', '#1864ab', '#2b8a3e', '#e67700', '#ae3ec9'];
  function trajectoryPlot(d, j) {
    var at0 = j[10], html = '';
    if (at0 === undefined || at0 < 0) return html;
    var count = 1 + (j[8] ? 1 : 0) + j[7].length;
    d.trajectoryBlocks.forEach(function (b, t) {
      var width = d.trajectoryWidths[t], direction = /direction/.test(d.blocks[b]), size = 180;
      function values(r) {
        var out = [], from = at0 + r * width;
        for (var i = 0; i < width; ++i) out.push(d.trajectories[from + i] / 1000);
        return out;
      }
      var rows = [['query', values(0), '#212529', 2.5]], r = 1;
      if (j[8]) rows.push(['playing', values(r++), '#868e96', 1.5]);
      for (var k = 0; k < j[7].length; ++k)
        rows.push([k === 0 ? 'winner' : String(k + 1), values(r++), TRAJ_COLOURS[k % 5],
                   k === 0 ? 2 : 1]);
      at0 += count * width;
      var scale;
      var reach = 0.2;
      rows.forEach(function (r) {
        for (var i = 0; i + 1 < r[1].length; i += 2)
          reach = Math.max(reach, Math.abs(r[1][i]) * (direction ? 1.2 : 1),
                           Math.abs(r[1][i + 1]) * (direction ? 1.2 : 1));
      });
      scale = (size / 2 - 12) / reach;
      function at(x, z) { return [(size / 2 - x * scale).toFixed(1), (size / 2 - z * scale).toFixed(1)]; }
      html += '<svg class="rp-traj" data-block="' + b + '" width="' + size + '" height="' + (size + 28) +
              '"><text x="4" y="11">' + esc(d.blocks[b]) + '</text>';
      html += '<circle cx="' + size / 2 + '" cy="' + size / 2 + '" r="2" fill="#495057"/>';
      rows.forEach(function (r) {
        var v = r[1], pts = direction ? [] : [at(0, 0).join(',')];
        if (direction) {
          // Each time's facing as a line from the centre, longer for later times.
          for (var i = 0; i + 1 < v.length; i += 2) {
            var f = (i / 2 + 1) / (v.length / 2), e = at(v[i] * f, v[i + 1] * f);
            html += '<line x1="' + size / 2 + '" y1="' + size / 2 + '" x2="' + e[0] + '" y2="' +
                    e[1] + '" stroke="' + r[2] + '" stroke-width="' + r[3] + '"><title>' + r[0] +
                    '</title></line>';
          }
          return;
        }
        for (var i = 0; i + 1 < v.length; i += 2) pts.push(at(v[i], v[i + 1]).join(','));
        html += '<polyline points="' + pts.join(' ') + '" fill="none" stroke="' + r[2] +
                '" stroke-width="' + r[3] + '"' + (r[0] === 'playing' ? ' stroke-dasharray="4 3"' : '') +
                '><title>' + r[0] + '</title></polyline>';
      });
      html += '<text x="4" y="' + (size + 10) + '">black: query; grey: playing;</text><text x="4" y="' +
              (size + 23) + '">red: winner; then 2, 3, 4</text></svg>';
    });
    return html;
  }
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
