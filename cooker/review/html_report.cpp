#include "review/html_report.h"

#include "review/diff.h"
#include "review/replay.h"
#include "review/replay_player.h"

#include "core/cooked_database.h"
#include "core/errors.h"
#include "write/database_writer.h"

#include <mmdb/stick_script.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

namespace mmcook::review {
namespace {

constexpr float kPi = 3.14159265358979f;

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int size = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string out(size_t(std::max(size, 0)), '\0');
  std::vsnprintf(out.data(), out.size() + 1, fmt, again);
  va_end(again);
  return out;
}

// Text for HTML content and attribute values.
std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

std::string costText(float cost) {
  return std::isfinite(cost) ? format("%.3g", double(cost)) : std::string("no match");
}

// One line of colours for the columns of a block (x, y, z and the trajectory's x, z pairs).
const char* columnColour(size_t column) {
  static const char* const kColours[] = {"#d9480f", "#2b8a3e", "#1864ab",
                                         "#ae3ec9", "#e67700", "#0b7285"};
  return kColours[column % 6];
}

// Low cost green, through yellow, to red; grey for no match. `t` in [0, 1].
std::string costColour(float t) {
  if (!std::isfinite(t)) return "#868e96";
  t = std::clamp(t, 0.f, 1.f);
  const float hue = 130.f * (1.f - t);
  return format("hsl(%.0f,70%%,%.0f%%)", double(hue), double(45.f + 10.f * (1.f - t)));
}

// The cost scale shared by every coverage map on the page: log of the cost between the best
// and the worst finite costs.
struct CostScale {
  float low = 0, high = 1;
  float at(float cost) const {
    if (!std::isfinite(cost)) return std::numeric_limits<float>::infinity();
    const float l = std::log10(std::max(cost, 1e-4f));
    return high > low ? (l - low) / (high - low) : 0.f;
  }
};

const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#212529;background:#f8f9fa}
header{background:#343a40;color:#f8f9fa;padding:12px 24px}
header h1{margin:0 0 4px;font-size:20px}
header a{color:#a5d8ff;margin-right:14px}
section{background:#fff;margin:16px 24px;padding:12px 18px;border:1px solid #dee2e6;border-radius:6px}
h2{margin:4px 0 8px;font-size:17px}
h3{margin:6px 0;font-size:15px}
h4{margin:10px 0 4px;font-size:14px}
.columns{display:grid;grid-template-columns:repeat(var(--n),minmax(0,1fr));gap:18px}
.db{min-width:0}
.note{color:#495057;font-size:13px}
.why{background:#fff4e6;border-left:4px solid #f08c00;padding:6px 10px;margin:6px 0}
table{border-collapse:collapse;font-size:13px}
td,th{border-bottom:1px solid #e9ecef;padding:2px 8px;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
svg text{font:11px system-ui,sans-serif;fill:#343a40}
svg.timeline{max-width:100%;height:auto}
.clip-row:hover .clip-bar{stroke:#000}
.range{fill:#40c057}
.excluded{fill:#dee2e6}
.mirrored .range{fill:#4dabf7}
.hists{display:flex;flex-wrap:wrap;gap:10px}
.block-hist{margin:0;border:1px solid #e9ecef;border-radius:4px;padding:4px}
.block-hist figcaption{font-size:12px}
.polars{display:flex;flex-wrap:wrap;gap:6px}
.cov-cell{stroke:#fff;stroke-width:.6}
.cov-cell.hot{stroke:#000;stroke-width:2.5}
tr.hot{background:#fff3bf}
.legend{display:flex;align-items:center;gap:6px;font-size:12px}
)";

// Hovering a listed cell outlines it in its map, and the other way round.
const char* kScript = R"(
(function () {
  function pair(el) {
    var id = el.getAttribute('data-cell') || el.id;
    return [document.getElementById(id), document.querySelector('tr[data-cell="' + id + '"]')];
  }
  document.querySelectorAll('tr[data-cell], .cov-cell').forEach(function (el) {
    el.addEventListener('mouseenter', function () {
      pair(el).forEach(function (x) { if (x) x.classList.add('hot'); });
    });
    el.addEventListener('mouseleave', function () {
      pair(el).forEach(function (x) { if (x) x.classList.remove('hot'); });
    });
  });
})();
)";

struct Page {
  std::string html;
  void operator+=(const std::string& s) { html += s; }
  void operator+=(const char* s) { html += s; }
};

// Both databases of the page and what is derived from each.
struct Side {
  std::string label;  // "A" or "B"
  ReportDatabase input;
  Timeline timeline;
  std::vector<BlockHistogram> histograms;
  std::optional<CoverageMap> coverage;
  std::string coverage_error;  // why there is no map
  std::optional<Replay> replay;
  std::string replay_error;                    // why there is no replay
  std::vector<mmdb::ClipSlide> straight = {};  // each clip's own feet played straight, clip order
};

void openColumns(Page& page, size_t n) {
  page += format("<div class=\"columns\" style=\"--n:%zu\">", n);
}

void openPanel(Page& page, const Side& side, const std::string& section, size_t sides) {
  page += format("<div class=\"db\" data-db=\"%s\" data-section=\"%s\">", side.label.c_str(),
                 section.c_str());
  if (sides > 1)
    page += format("<h3>%s: %s</h3>", side.label.c_str(), escape(side.input.path).c_str());
}

// ---- Clip timeline -------------------------------------------------------------------------

// A cost bias as the manifest writes it, signed ("+0.25", "-0.1", "0").
std::string biasText(float bias) {
  if (bias == 0.f) return "0";
  char text[32];
  std::snprintf(text, sizeof(text), "%+.3g", double(bias));
  return text;
}

void timelinePanel(Page& page, const Side& side, uint32_t longest, size_t sides) {
  const Timeline& t = side.timeline;
  openPanel(page, side, "timeline", sides);
  uint32_t matchable = 0, mirrored = 0;
  for (const TimelineClip& c : t.clips) {
    matchable += c.matchableFrames();
    mirrored += c.mirrored ? 1 : 0;
  }
  page += format(
      "<p class=\"summary\" data-clips=\"%zu\" data-frames=\"%u\" data-ranges=\"%u\">"
      "clips: %zu (%u mirrored); frames: %u at %g Hz (%.1f s); matchable ranges: %u, covering %u "
      "frames (%.0f%%).</p>",
      t.clips.size(), t.frame_count, t.range_count, t.clips.size(), mirrored, t.frame_count,
      double(t.frame_rate), t.frame_rate > 0 ? t.frame_count / double(t.frame_rate) : 0.0,
      t.range_count, matchable, t.frame_count ? 100.0 * matchable / t.frame_count : 0.0);

  constexpr int kLabel = 190, kBar = 420, kRow = 20, kTop = 22;
  const int width = kLabel + kBar + 220;
  const int height = kTop + kRow * int(t.clips.size()) + 6;
  page += format("<svg class=\"timeline\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">", width,
                 height, width, height);
  // Seconds along the top, clip-local.
  const double seconds = t.frame_rate > 0 ? longest / double(t.frame_rate) : 0;
  const double step = seconds > 60 ? 10 : seconds > 20 ? 5 : seconds > 6 ? 1 : 0.5;
  for (double s = 0; seconds > 0 && s <= seconds + 1e-9; s += step) {
    const double x = kLabel + kBar * s / seconds;
    page += format(
        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e9ecef\"/>"
        "<text x=\"%.1f\" y=\"12\" text-anchor=\"middle\">%gs</text>",
        x, kTop - 4, x, height, x, s);
  }
  for (size_t i = 0; i < t.clips.size(); ++i) {
    const TimelineClip& c = t.clips[i];
    const int y = kTop + kRow * int(i);
    const auto px = [&](uint32_t local) { return kLabel + double(kBar) * local / longest; };
    std::string label = c.name + (c.take.empty() ? "" : " [" + c.take + "]");
    std::string mirror = c.mirrored && c.mirror_of >= 0 && size_t(c.mirror_of) < t.clips.size()
                             ? "mirror of " + t.clips[size_t(c.mirror_of)].name
                             : std::string(c.mirrored ? "mirrored" : "");
    page += format("<g class=\"clip-row%s\" data-clip=\"%s\" data-frames=\"%u\">",
                   c.mirrored ? " mirrored" : "", escape(c.name).c_str(), c.frame_count);
    page += format(
        "<title>%s: global frames %u-%u (%u frames, %.2f s), %u matchable; tags %s; bias %s%s%s"
        "</title>",
        escape(label).c_str(), c.first_frame, c.first_frame + c.frame_count - 1, c.frame_count,
        t.frame_rate > 0 ? c.frame_count / double(t.frame_rate) : 0.0, c.matchableFrames(),
        escape(tagList(t, c.tag_mask)).c_str(), biasText(c.bias).c_str(),
        mirror.empty() ? "" : "; ", escape(mirror).c_str());
    std::string shown = label.size() > 28 ? label.substr(0, 27) + "\xe2\x80\xa6" : label;
    page += format("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>",
                   kLabel - 6 - (c.mirrored ? 12 : 0), y + 13, escape(shown).c_str());
    if (c.mirrored)
      page += format("<text x=\"%d\" y=\"%d\" fill=\"#1864ab\">\xe2\x86\x94</text>", kLabel - 14,
                     y + 13);
    page += format(
        "<rect class=\"clip-bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"none\" "
        "stroke=\"#adb5bd\"/>",
        kLabel, y + 2, px(c.frame_count) - kLabel);
    for (const LocalSpan& s : c.excluded)
      page += format(
          "<rect class=\"excluded\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\"><title>"
          "excluded: local frames %u-%u</title></rect>",
          px(s.first_local), y + 2,
          std::max(0.5, px(s.first_local + s.frame_count) - px(s.first_local)), s.first_local,
          s.first_local + s.frame_count - 1);
    // A biased range is outlined: green where the search prefers it, red where it avoids it.
    bool biased = c.bias != 0.f;
    for (const LocalSpan& s : c.matchable) {
      biased = biased || s.bias != 0.f;
      page += format(
          "<rect class=\"range%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\"%s>"
          "<title>matchable: local frames %u-%u, tags %s, bias %s</title></rect>",
          s.bias < 0.f   ? " preferred"
          : s.bias > 0.f ? " avoided"
                         : "",
          px(s.first_local), y + 2,
          std::max(0.5, px(s.first_local + s.frame_count) - px(s.first_local)),
          s.bias < 0.f   ? " stroke=\"#2b8a3e\" stroke-width=\"2\""
          : s.bias > 0.f ? " stroke=\"#c92a2a\" stroke-width=\"2\""
                         : "",
          s.first_local, s.first_local + s.frame_count - 1, escape(tagList(t, s.tag_mask)).c_str(),
          biasText(s.bias).c_str());
    }
    std::string tags = tagList(t, c.tag_mask);
    if (biased) {
      float low = c.bias, high = c.bias;
      for (const LocalSpan& s : c.matchable)
        low = std::min(low, s.bias), high = std::max(high, s.bias);
      tags += low == high ? "  bias " + biasText(low)
                          : "  bias " + biasText(low) + " to " + biasText(high);
    }
    if (!mirror.empty()) tags += "  (" + mirror + ")";
    page += format("<text x=\"%.1f\" y=\"%d\">%u f  %s</text></g>", px(c.frame_count) + 6, y + 13,
                   c.frame_count, escape(tags).c_str());
  }
  page += "</svg></div>";
}

// `same`: two databases whose clips, ranges and tags do not differ; the section folds to one line
// (open it to see both).
void timelineSection(Page& page, const std::vector<Side>& sides, bool same) {
  page += "<section id=\"timeline\">";
  if (same)
    page += format(
        "<details class=\"same\"><summary><h2 style=\"display:inline\">Clip timeline</h2>: the "
        "same in A and B (%zu clip%s, %u frames); open to see it</summary>",
        sides[0].timeline.clips.size(), sides[0].timeline.clips.size() == 1 ? "" : "s",
        sides[0].timeline.frame_count);
  else
    page += "<h2>Clip timeline</h2>";
  page +=
      "<p class=\"note\">One row per clip, in clip-local seconds: <span style=\"color:#2b8a3e\">"
      "matchable ranges</span> (blue on mirrored copies, marked \xe2\x86\x94), <span "
      "style=\"color:#868e96\">excluded frames</span> (no range covers them: a clip's "
      "trailing frames, cut ranges), the clip's tags and what it mirrors. Hover a bar for "
      "its global frames.</p>";
  uint32_t longest = 1;
  for (const Side& s : sides)
    for (const TimelineClip& c : s.timeline.clips) longest = std::max(longest, c.frame_count);
  openColumns(page, sides.size());
  for (const Side& s : sides) timelinePanel(page, s, longest, sides.size());
  page += same ? "</div></details></section>" : "</div></section>";
}

// ---- Feature distributions -----------------------------------------------------------------

void histogramFigure(Page& page, const BlockHistogram& h) {
  constexpr int kWidth = 250, kHeight = 110, kLeft = 6, kBottom = 18;
  uint32_t peak = 1, total = 0;
  for (const auto& column : h.counts)
    for (uint32_t n : column) peak = std::max(peak, n);
  if (!h.counts.empty())
    for (uint32_t n : h.counts[0]) total += n;
  page += format(
      "<figure class=\"block-hist\" data-block=\"%s\"><figcaption><b>%s</b> "
      "(columns %u-%u, weight %g)</figcaption>",
      escape(h.name).c_str(), escape(h.name).c_str(), unsigned(h.first_column),
      unsigned(h.first_column + h.width - 1), double(h.weight));
  page += format("<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">", kWidth, kHeight, kWidth,
                 kHeight);
  const double plot_w = kWidth - 2 * kLeft, plot_h = kHeight - kBottom - 4;
  const auto x_of = [&](double v) { return kLeft + plot_w * (v - h.low) / (h.high - h.low); };
  if (h.low < 0 && h.high > 0)
    page += format(
        "<line x1=\"%.1f\" y1=\"2\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ced4da\" "
        "stroke-dasharray=\"3 2\"/>",
        x_of(0), x_of(0), 4 + plot_h);
  for (size_t c = 0; c < h.counts.size(); ++c) {
    const auto& bins = h.counts[c];
    std::string points;
    for (size_t b = 0; b < bins.size(); ++b) {
      const double x0 = kLeft + plot_w * b / bins.size(),
                   x1 = kLeft + plot_w * (b + 1) / bins.size();
      const double y = 4 + plot_h * (1.0 - double(bins[b]) / peak);
      points += format("%.1f,%.1f %.1f,%.1f ", x0, y, x1, y);
    }
    page += format(
        "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.4\">"
        "<title>%s column %zu: mean %.3g, deviation %.3g over %u frames</title>"
        "</polyline>",
        points.c_str(), columnColour(c), escape(h.name).c_str(), c, double(h.mean[c]),
        double(h.deviation[c]), total);
  }
  page += format("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#868e96\"/>", kLeft,
                 4 + plot_h, kWidth - kLeft, 4 + plot_h);
  page += format(
      "<text x=\"%d\" y=\"%d\">%.3g</text><text x=\"%d\" y=\"%d\" "
      "text-anchor=\"end\">%.3g</text>",
      kLeft, kHeight - 3, double(h.low), kWidth - kLeft, kHeight - 3, double(h.high));
  page += "</svg></figure>";
}

void featuresSection(Page& page, const std::vector<Side>& sides, const std::string& incomparable) {
  page += "<section id=\"features\"><h2>Feature distributions</h2>";
  page +=
      "<p class=\"note\">Per feature block, a histogram of each of its columns' normalized "
      "values over every frame (one line per column: x, y, z, or the trajectory's x, z "
      "pairs). A block's columns have a spread near its weight; a long tail or a spike "
      "shows frames the search will rarely or always pick.</p>";
  if (sides.size() > 1) {
    if (incomparable.empty())
      page +=
          "<p class=\"note\">Both on A's axis: B's raw features are normalized with A's "
          "offset and scale, so the same x means the same motion.</p>";
    else
      page += "<p class=\"why\">Not on one axis: " + escape(incomparable) +
              ". Each database is shown with its own normalization.</p>";
  }
  openColumns(page, sides.size());
  for (const Side& s : sides) {
    openPanel(page, s, "features", sides.size());
    page += format(
        "<p class=\"summary\" data-blocks=\"%zu\">%zu blocks, %u features per frame.</p>"
        "<div class=\"hists\">",
        s.histograms.size(), s.histograms.size(), unsigned(s.input.db->featureCount()));
    for (const BlockHistogram& h : s.histograms) histogramFigure(page, h);
    page += "</div></div>";
  }
  page += "</div></section>";
}

// ---- Coverage map --------------------------------------------------------------------------

std::string cellWords(const CoverageCell& c) {
  if (c.speed == 0) return format("standing, %s", turnName(c.turn_rate_deg).c_str());
  return format("%.2g m/s %s, %s", double(c.speed), directionName(c.direction_deg).c_str(),
                turnName(c.turn_rate_deg).c_str());
}

std::string answeredBy(const mmdb::Database& db, int32_t frame) {
  if (frame < 0) return "-";
  const int32_t clip = db.clipOfFrame(uint32_t(frame));
  if (clip < 0) return format("frame %d", frame);
  const mmdb::ClipInfo info = db.clip(uint32_t(clip));
  return format("%.*s, local frame %u", int(info.name.size()), info.name.data(),
                uint32_t(frame) - info.first_frame);
}

// An annular sector of the polar map: radii r0 < r1, screen angles a0 < a1 (radians, 0 = up,
// positive to the left, as seen from above with the character facing up).
std::string sectorPath(double cx, double cy, double r0, double r1, double a0, double a1) {
  const auto pt = [&](double r, double a) {
    return format("%.2f,%.2f", cx - r * std::sin(a), cy - r * std::cos(a));
  };
  if (r0 <= 0)
    return format("M%.2f,%.2f L%s A%.2f,%.2f 0 0 0 %s Z", cx, cy, pt(r1, a0).c_str(), r1, r1,
                  pt(r1, a1).c_str());
  return format("M%s A%.2f,%.2f 0 0 0 %s L%s A%.2f,%.2f 0 0 1 %s Z", pt(r1, a0).c_str(), r1, r1,
                pt(r1, a1).c_str(), pt(r0, a1).c_str(), r0, r0, pt(r0, a0).c_str());
}

void polarMap(Page& page, const Side& side, const CoverageMap& map, size_t turn,
              const CostScale& scale, const CoverageMap* other) {
  constexpr double kSize = 168, kRadius = 70;
  const double cx = kSize / 2, cy = kSize / 2 + 14;
  const CoverageSettings& s = map.settings;
  page += format("<svg class=\"polar\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">",
                 kSize, kSize + 20, kSize, kSize + 20);
  page += format("<text x=\"%.0f\" y=\"11\" text-anchor=\"middle\">%s</text>", cx,
                 escape(turnName(s.turn_rates[turn])).c_str());
  const size_t rings = s.speeds.size();
  for (size_t sp = 0; sp < rings; ++sp)
    for (uint32_t d = 0; d < s.directions; ++d) {
      const bool disc = s.speeds[sp] == 0;
      if (disc && d > 0) continue;  // standing: one cell, whatever the direction
      const size_t index = (turn * rings + sp) * s.directions + d;
      const CoverageCell& c = map.cells[index];
      const double r0 = kRadius * sp / rings, r1 = kRadius * (sp + 1) / rings;
      const double half = kPi / s.directions;
      const double a = 2 * kPi * d / s.directions;
      std::string shape =
          disc ? format("<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\"", cx, cy, r1)
               : "<path d=\"" + sectorPath(cx, cy, r0, r1, a - half, a + half) + "\"";
      std::string compared;
      if (other && other->cells.size() == map.cells.size())
        compared = format("; %s: %s", side.label == "A" ? "B" : "A",
                          costText(other->cells[index].cost).c_str());
      page += format(
          "%s id=\"cov-%s-%zu\" class=\"cov-cell\" fill=\"%s\" data-cost=\"%g\"><title>%s: best "
          "cost %s (%s)%s</title>%s",
          shape.c_str(), side.label.c_str(), index, costColour(scale.at(c.cost)).c_str(),
          std::isfinite(c.cost) ? double(c.cost) : -1.0, escape(cellWords(c)).c_str(),
          costText(c.cost).c_str(), escape(answeredBy(*side.input.db, c.frame)).c_str(),
          compared.c_str(), disc ? "</circle>" : "</path>");
    }
  page += format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\">fwd</text>",
                 cx, cy - kRadius - 2);
  page += format(
      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\">L</text><text x=\"%.1f\" "
      "y=\"%.1f\" font-size=\"9\">R</text>",
      cx - kRadius - 10, cy + 3, cx + kRadius + 3, cy + 3);
  page += "</svg>";
}

void coveragePanel(Page& page, const Side& side, const CostScale& scale, const Side* other,
                   size_t sides) {
  openPanel(page, side, "coverage", sides);
  if (!side.coverage) {
    page += "<p class=\"why\">No coverage map: " + escape(side.coverage_error) + "</p></div>";
    return;
  }
  const CoverageMap& map = *side.coverage;
  const mmdb::Database& db = *side.input.db;
  page += format(
      "<p class=\"summary\" data-cells=\"%zu\">Pose of every query: %s, local frame %u "
      "(global %d, root speed %.2f m/s)%s.</p>",
      map.cells.size(), escape(map.pose.clip).c_str(), map.pose.local_frame, map.pose.frame,
      double(map.pose.root_speed),
      map.pose_from.empty() ? "" : (" of " + escape(map.pose_from)).c_str());
  page += "<div class=\"polars\">";
  const CoverageMap* compared = other && other->coverage ? &*other->coverage : nullptr;
  for (size_t t = 0; t < map.settings.turn_rates.size(); ++t)
    polarMap(page, side, map, t, scale, compared);
  page +=
      "</div><h3>Clips to capture next</h3><table class=\"worst\"><tr><th>request</th>"
      "<th class=\"num\">best cost</th><th>answered by</th></tr>";
  for (size_t i : map.worst()) {
    const CoverageCell& c = map.cells[i];
    page += format(
        "<tr data-cell=\"cov-%s-%zu\"><td>%s</td><td class=\"num\">%s</td><td>%s</td>"
        "</tr>",
        side.label.c_str(), i, escape(cellWords(c)).c_str(), costText(c.cost).c_str(),
        escape(answeredBy(db, c.frame)).c_str());
  }
  page += "</table></div>";
}

void coverageSection(Page& page, const std::vector<Side>& sides, const std::string& incomparable) {
  page += "<section id=\"coverage\"><h2>Coverage map</h2>";
  const CoverageSettings& s = sides[0].coverage ? sides[0].coverage->settings : CoverageSettings{};
  std::string speeds;
  for (float v : s.speeds) speeds += (speeds.empty() ? "" : ", ") + format("%g", double(v));
  std::string turns;
  for (float v : s.turn_rates) turns += (turns.empty() ? "" : ", ") + format("%g", double(v));
  page += format(
      "<p class=\"note\">What a controller can ask for, and how well the database answers. "
      "Each disc is one turn rate (deg/s: %s; positive turns left); its rings are the desired "
      "speeds (m/s: %s; the centre is standing) and its %u sectors the direction of travel "
      "relative to the facing (forward up, left to the left). Each cell's steady request is "
      "turned into a query by the controller's spring (the trajectory part) and the pose part "
      "of one representative frame (named below: the matchable frame whose pose features are "
      "closest to the database mean), and searched over every matchable frame with no "
      "transition cost. The colour is the best cost, green (low) to red (high) on one log scale "
      "for the whole page; grey cells have no match. Red cells are holes: the table lists the "
      "worst as clips to capture next.</p>",
      turns.c_str(), speeds.c_str(), s.directions);
  if (sides.size() > 1) {
    if (incomparable.empty())
      page +=
          "<p class=\"note\">Compared cell by cell: both databases are asked the same "
          "queries, with A's representative pose; each cell's tooltip gives the other "
          "database's cost.</p>";
    else
      page += "<p class=\"why\">Not compared cell by cell: " + escape(incomparable) +
              ". Each database is asked with its own representative pose.</p>";
  }
  float low = std::numeric_limits<float>::infinity(), high = -low;
  for (const Side& side : sides)
    if (side.coverage)
      for (const CoverageCell& c : side.coverage->cells)
        if (std::isfinite(c.cost)) {
          low = std::min(low, std::log10(std::max(c.cost, 1e-4f)));
          high = std::max(high, std::log10(std::max(c.cost, 1e-4f)));
        }
  CostScale scale;
  if (low <= high) scale = {low, high};
  page += "<div class=\"legend\">best cost <span>" + costText(std::pow(10.f, scale.low)) +
          "</span><svg width=\"160\" height=\"12\">";
  for (int i = 0; i < 16; ++i)
    page += format("<rect x=\"%d\" y=\"0\" width=\"10\" height=\"12\" fill=\"%s\"/>", i * 10,
                   costColour(i / 15.f).c_str());
  page += "</svg><span>" + costText(std::pow(10.f, scale.high)) + "</span></div>";
  openColumns(page, sides.size());
  for (size_t i = 0; i < sides.size(); ++i) {
    const Side* other = sides.size() > 1 && incomparable.empty() ? &sides[1 - i] : nullptr;
    coveragePanel(page, sides[i], scale, other, sides.size());
  }
  page += "</div></section>";
}

// ---- Replay --------------------------------------------------------------------------------

const char* reasonName(mmdb::SearchReason reason) {
  switch (reason) {
    case mmdb::SearchReason::None:
      return "none";
    case mmdb::SearchReason::Start:
      return "start";
    case mmdb::SearchReason::RangeEnd:
      return "end of range";
    case mmdb::SearchReason::Forced:
      return "stick change";
    case mmdb::SearchReason::Periodic:
      return "periodic";
  }
  return "unknown";
}

// The ground-plane box that holds both paths of every replay on the page.
struct PathBox {
  float min_x = 0, max_x = 0, min_z = 0, max_z = 0;
  void grow(const glm::vec2& p) {
    min_x = std::min(min_x, p.x);
    max_x = std::max(max_x, p.x);
    min_z = std::min(min_z, p.y);
    max_z = std::max(max_z, p.y);
  }
};

// Character 0's paths, seen from above with +Z up and +X (the character's left at the start)
// to the left, one scale for both axes.
void pathPlot(Page& page, const Side& side, const Replay& r, const PathBox& box) {
  constexpr double kSize = 340, kMargin = 26;
  const double span = std::max({double(box.max_x - box.min_x), double(box.max_z - box.min_z), 1.0});
  const double unit = (kSize - 2 * kMargin) / span;
  const auto sx = [&](float x) { return kMargin + (box.max_x - x) * unit; };
  const auto sy = [&](float z) { return kSize - kMargin - (z - box.min_z) * unit; };
  const auto line = [&](const std::vector<glm::vec2>& points) {
    std::string out;
    for (size_t i = 0; i < points.size(); i += 2)  // every other step: the plot's resolution
      out += format("%.1f,%.1f ", sx(points[i].x), sy(points[i].y));
    return out;
  };
  page += format("<svg class=\"path\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">",
                 kSize, kSize, kSize, kSize);
  page += format("<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f9fa\"/>", kSize,
                 kSize);
  page += format(
      "<text x=\"6\" y=\"%.0f\">1 m</text><line x1=\"32\" y1=\"%.0f\" x2=\"%.1f\" "
      "y2=\"%.0f\" stroke=\"#495057\"/>",
      kSize - 4, kSize - 8, 32 + unit, kSize - 8);
  page += format(
      "<polyline points=\"%s\" fill=\"none\" stroke=\"#adb5bd\" stroke-width=\"3\" "
      "stroke-dasharray=\"6 3\"><title>desired: the controller's simulation root"
      "</title></polyline>",
      line(r.trace.desired).c_str());
  page += format(
      "<polyline points=\"%s\" fill=\"none\" stroke=\"#1864ab\" stroke-width=\"1.6\">"
      "<title>achieved: the root motion played</title></polyline>",
      line(r.trace.achieved).c_str());
  double labelled = -1e9;
  const mmdb::Database& db = *side.input.db;
  for (const ReplayJump& j : r.jumps) {
    if (j.character != 0 || r.trace.achieved.empty()) continue;
    const size_t step = std::min(size_t(std::max(0.0, std::round(j.time / kReplayStepSeconds))),
                                 r.trace.achieved.size() - 1);
    const glm::vec2 p = r.trace.achieved[step];
    page += format(
        "<circle class=\"jump\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#e8590c\">"
        "<title>%.2f s, %s: %s -> %s, cost %s</title></circle>",
        sx(p.x), sy(p.y), j.time, reasonName(j.reason),
        escape(answeredBy(db, j.from_frame)).c_str(), escape(answeredBy(db, j.to_frame)).c_str(),
        costText(j.cost).c_str());
    if (j.time - labelled >= 2.0) {
      page += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\">%.1fs</text>", sx(p.x) + 4,
                     sy(p.y) - 3, j.time);
      labelled = j.time;
    }
  }
  page += "</svg>";
}

void costPlot(Page& page, const Replay& r, double seconds, float top) {
  constexpr double kWidth = 340, kHeight = 130, kLeft = 34, kBottom = 16;
  const double w = kWidth - kLeft - 16, h = kHeight - kBottom - 6;
  const auto sx = [&](double t) { return kLeft + w * t / std::max(seconds, 1e-9); };
  const auto sy = [&](float c) {
    return 6 + h * (1.0 - std::clamp(double(std::isfinite(c) ? c : top) / top, 0.0, 1.0));
  };
  page += format("<svg class=\"cost\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">",
                 kWidth, kHeight, kWidth, kHeight);
  for (const ReplayJump& j : r.jumps)
    if (j.character == 0)
      page += format("<line x1=\"%.1f\" y1=\"6\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ffd8a8\"/>",
                     sx(j.time), sx(j.time), 6 + h);
  std::string points;
  for (size_t i = 0; i < r.trace.time.size(); ++i)
    points += format("%.1f,%.1f ", sx(r.trace.time[i]), sy(r.trace.cost[i]));
  page += format(
      "<polyline points=\"%s\" fill=\"none\" stroke=\"#c92a2a\" stroke-width=\"1.2\">"
      "<title>cost of the frame character 0 plays, after each step</title></polyline>",
      points.c_str());
  page += format("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#868e96\"/>",
                 kLeft, 6 + h, kLeft + w, 6 + h);
  page += format(
      "<text x=\"%.0f\" y=\"12\" text-anchor=\"end\">%.3g</text><text x=\"%.0f\" "
      "y=\"%.1f\" text-anchor=\"end\">0</text>",
      kLeft - 3, double(top), kLeft - 3, 6 + h);
  for (double t = 0; t <= seconds + 1e-9; t += seconds > 30 ? 10 : 5)
    page += format("<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%gs</text>", sx(t),
                   kHeight - 3, t);
  page += "</svg>";
}

void clipUsage(Page& page, const Side& side, const Replay& r) {
  uint64_t total = 0;
  for (uint64_t n : r.stats.clip_frames) total += n;
  std::vector<size_t> order;
  for (size_t i = 0; i < r.stats.clip_frames.size(); ++i)
    if (r.stats.clip_frames[i] > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return r.stats.clip_frames[x] > r.stats.clip_frames[y];
  });
  const size_t never = r.stats.clip_frames.size() - order.size();
  constexpr size_t kShown = 12;
  page += format(
      "<table class=\"usage\" data-clips-played=\"%zu\"><tr><th>clip</th>"
      "<th class=\"num\">played</th><th></th></tr>",
      order.size());
  for (size_t k = 0; k < order.size() && k < kShown; ++k) {
    const size_t i = order[k];
    const double share = total ? double(r.stats.clip_frames[i]) / double(total) : 0.0;
    page += format(
        "<tr><td>%s</td><td class=\"num\">%.1f%%</td><td><svg width=\"120\" "
        "height=\"10\"><rect width=\"%.1f\" height=\"10\" fill=\"#4dabf7\"/></svg>"
        "</td></tr>",
        escape(side.input.db->clip(uint32_t(i)).name).c_str(), 100 * share, 120 * share);
  }
  page += "</table>";
  if (order.size() > kShown)
    page += format("<p class=\"note\">%zu more clips played less.</p>", order.size() - kShown);
  // The clips never played, named: candidates to re-tag, bias or cut.
  if (never == 0) {
    page += format("<p class=\"note\">Every clip played (%zu).</p>", r.stats.clip_frames.size());
    return;
  }
  constexpr size_t kNamed = 500;
  page += format(
      "<details class=\"never-played\" data-never=\"%zu\"><summary>%zu of %zu clips never "
      "played</summary><p>",
      never, never, r.stats.clip_frames.size());
  size_t named = 0;
  for (size_t i = 0; i < r.stats.clip_frames.size(); ++i) {
    if (r.stats.clip_frames[i] > 0) continue;
    if (named == kNamed) {
      page += format(" and %zu more", never - named);
      break;
    }
    page += format("%s<span class=\"clip-name\">%s</span>", named ? ", " : "",
                   escape(side.input.db->clip(uint32_t(i)).name).c_str());
    ++named;
  }
  page += "</p></details>";
}

// What a player sees in the replay (mmdb::MotionMeter, docs/review.md "Motion measures"): one
// row per measure, its --fail-on keys in the tooltip; then the clips where feet slide most.
void motionTable(Page& page, const Side& side, const Replay& r) {
  const mmdb::MotionMeasures& m = r.stats.motion;
  const mmdb::MotionMeasureSettings limits;  // the replay's meter measures with the defaults
  const mmdb::Database& db = *side.input.db;
  const auto count = [](uint64_t n) { return static_cast<unsigned long long>(n); };
  const auto joint = [&](int32_t j) {
    return j >= 0 && uint32_t(j) < db.jointCount() ? escape(db.jointName(uint32_t(j)))
                                                   : std::string("-");
  };
  const auto rate = [&](uint64_t n) {
    return m.character_seconds > 0 ? double(n) / m.character_seconds : 0.0;
  };
  const auto row = [&](const char* keys, const std::string& what, const std::string& value) {
    page += format("<tr title=\"--fail-on %s\"><td>%s</td><td class=\"num\">%s</td></tr>", keys,
                   what.c_str(), value.c_str());
  };
  const double drift_limit = double(limits.phase_drift_limit) * 1000.0;
  const std::string window = format("within %g s of a switch", double(limits.transition_window));
  const auto& reasons = m.switches_by_reason;
  page += "<h4>Motion measures</h4>";
  page += format(
      "<table class=\"motion\" data-phases=\"%llu\" data-switches=\"%llu\">"
      "<tr><th>all characters (docs/review.md, &quot;Motion measures&quot;)</th>"
      "<th class=\"num\"></th></tr>",
      count(m.phase_drift_mm.count), count(m.switches));
  row("foot-slide-p50, foot-slide-p90, foot-slide-max",
      "planted toe slide per step (mm): p50, p90, max",
      format("%.2f, %.2f, %.1f", m.planted_slide_mm.p50, m.planted_slide_mm.p90,
             m.planted_slide_mm.max));
  row("phase-drift-share", format("contact phases drifting over %g mm", drift_limit),
      format("%llu of %llu (%.1f%%)", count(m.phases_over_limit), count(m.phase_drift_mm.count),
             100.0 * m.phase_share_over_limit));
  row("phase-drift-p50, phase-drift-p90, phase-drift-max",
      "a phase's drift, planted to lifted (mm): p50, p90, max",
      format("%.1f, %.1f, %.1f", m.phase_drift_mm.p50, m.phase_drift_mm.p90, m.phase_drift_mm.max));
  row("pose-step-max-at-switch, pose-step-max-elsewhere",
      "largest joint step (mm): " + window + "; elsewhere",
      format("%.1f; %.1f", m.max_joint_step_mm[mmdb::kAtSwitch],
             m.max_joint_step_mm[mmdb::kElsewhere]));
  row("pose-step-ratio-at-switch, pose-step-ratio-elsewhere",
      "joint step over the clips' largest: " + window + "; elsewhere",
      format("%.2f (%s); %.2f (%s)", m.max_step_ratio[mmdb::kAtSwitch],
             joint(m.worst_joint[mmdb::kAtSwitch]).c_str(), m.max_step_ratio[mmdb::kElsewhere],
             joint(m.worst_joint[mmdb::kElsewhere]).c_str()));
  row("acceleration-max-at-switch, acceleration-max-elsewhere",
      "largest joint acceleration (m/s&sup2;): " + window + "; elsewhere",
      format("%.0f; %.0f", m.max_acceleration[mmdb::kAtSwitch],
             m.max_acceleration[mmdb::kElsewhere]));
  row("switch-rate, switch-rate-range-end, switch-rate-stick-changed, switch-rate-periodic",
      "switches per character-second (end of range, stick change, periodic)",
      format("%.2f (%.2f, %.2f, %.2f)", m.switch_rate,
             rate(reasons[size_t(mmdb::SearchReason::RangeEnd)]),
             rate(reasons[size_t(mmdb::SearchReason::Forced)]),
             rate(reasons[size_t(mmdb::SearchReason::Periodic)])));
  row("continuation-rate, hold-rate",
      "per character-second: continuations; steps a search waited for the cooldown",
      format("%.2f; %.2f", rate(m.continuations), rate(m.held)));
  row("controller-distance-p50, controller-distance-p95, controller-distance-max",
      "distance to the controller (m): p50, p95, max",
      format("%.3f, %.3f, %.3f", m.controller_distance_m.p50, m.controller_distance_m.p95,
             m.controller_distance_m.max));
  row("adjustment-rate, adjustment-turn-rate",
      "adjustment towards the controller per character-second: m; degrees",
      format("%.3f; %.1f", m.adjustment_m_per_s, m.adjustment_deg_per_s));
  row("response-p50, response-p90, response-max", "sharp turns answered in (s): p50, p90, max",
      format("%.2f, %.2f, %.2f", m.response_s.p50, m.response_s.p90, m.response_s.max));
  row("responses-missed", "sharp turns not answered",
      format("%llu of %llu", count(m.responses_missed), count(m.sharp_turns)));
  page += "</table>";

  // A clip is named for slide that is its own: its own phases (no switch from plant to lift)
  // drift over the limit in the replay, and so do its phases played straight from its frames.
  // Phases a switch ran through are the transitions', counted apart; own phases that slide in
  // play while the clip played straight does not are the runtime's (its synchronization moves
  // the feet), listed apart.
  constexpr size_t kShown = 10;
  std::vector<const mmdb::ClipSlide*> sliding;
  std::string clean_straight;
  size_t clean_count = 0;
  uint64_t across = 0, across_over = 0, own = 0;
  for (const mmdb::ClipSlide& c : r.stats.slides) {
    own += c.phases;
    across += c.across_phases;
    across_over += c.across_over_limit;
    if (c.over_limit == 0) continue;
    const bool known = c.clip < side.straight.size();
    if (!known || side.straight[c.clip].over_limit > 0) {
      sliding.push_back(&c);
    } else if (++clean_count <= kShown) {
      clean_straight += (clean_straight.empty() ? "" : ", ") + escape(db.clip(c.clip).name);
    }
  }
  if (clean_count > kShown) clean_straight += format(" and %zu more", clean_count - kShown);
  const size_t shown = std::min(sliding.size(), kShown);
  page += "<h4>Clips where feet slide most</h4>";
  if (r.stats.slides.empty()) {
    page +=
        "<p class=\"note\">No contact phase was recorded: no toe planted and lifted while the "
        "replay ran.</p>";
    return;
  }
  page += format(
      "<p class=\"note slide-split\" data-own=\"%llu\" data-across=\"%llu\" "
      "data-across-over=\"%llu\">A clip is named for slide that is its own: its own contact "
      "phases (no switch from 0.6 s before the toe planted to the last step it stayed planted) "
      "drift over the limit in the replay and played straight (its frames alone, no switch, no "
      "runtime "
      "adjustment: what the clip brings). %llu phases were a clip's own; %llu ran across a "
      "switch (%llu of them over %g mm): that slide is the transitions', not the clips'.</p>",
      count(own), count(across), count(across_over), count(own), count(across), count(across_over),
      drift_limit);
  if (!clean_straight.empty())
    page += format(
        "<p class=\"note clean-straight\" data-clips=\"%zu\">Clean played straight, sliding in "
        "play without a switch: %s. Their own phases drift over %g mm in the replay but not "
        "from their frames: the runtime's synchronization moved those feet, not the clips.</p>",
        clean_count, clean_straight.c_str(), drift_limit);
  if (sliding.empty()) {
    page += format(
        "<p class=\"note no-sliding-clip\">No clip slides on its own: no clip's own contact "
        "phases drift over %g mm both in the replay and played straight.</p>",
        drift_limit);
    return;
  }
  page += format(
      "<table class=\"slides\" data-clips=\"%zu\"><tr><th>clip</th><th class=\"num\">own "
      "phases</th><th class=\"num\">over %g mm</th><th class=\"num\">mean drift (mm)</th>"
      "<th class=\"num\">max drift (mm)</th><th class=\"num\">straight: over %g mm</th>"
      "<th class=\"num\">straight: mean (mm)</th><th class=\"num\">across a switch: over "
      "%g mm</th><th class=\"num\">across: mean (mm)</th></tr>",
      shown, drift_limit, drift_limit, drift_limit);
  for (size_t i = 0; i < shown; ++i) {
    const mmdb::ClipSlide& c = *sliding[i];
    const mmdb::ClipSlide* straight =
        c.clip < side.straight.size() ? &side.straight[c.clip] : nullptr;
    page += format(
        "<tr data-clip=\"%u\"><td>%s</td><td class=\"num\">%llu</td><td "
        "class=\"num\">%llu</td><td class=\"num\">%.1f</td><td class=\"num\">%.1f</td>",
        c.clip, escape(db.clip(c.clip).name).c_str(), count(c.phases), count(c.over_limit),
        c.mean_drift_mm, c.max_drift_mm);
    if (straight && straight->phases > 0)
      page += format("<td class=\"num\">%llu of %llu</td><td class=\"num\">%.1f</td>",
                     count(straight->over_limit), count(straight->phases), straight->mean_drift_mm);
    else
      page += "<td class=\"num\">no phase</td><td class=\"num\">-</td>";
    page += format("<td class=\"num\">%llu of %llu</td><td class=\"num\">%s</td></tr>",
                   count(c.across_over_limit), count(c.across_phases),
                   c.across_phases ? format("%.1f", c.across_mean_drift_mm).c_str() : "-");
  }
  page += "</table>";
  if (sliding.size() > kShown)
    page += format("<p class=\"note\">%zu more clips whose own phases drift over %g mm.</p>",
                   sliding.size() - kShown, drift_limit);
}

void replaySection(Page& page, const std::vector<Side>& sides, const std::string& script_name,
                   const mmdb::StickScript& script, const ReplaySettings& settings) {
  page += "<section id=\"replay\"><h2>Replay</h2>";
  std::string segments;
  for (const mmdb::StickSegment& s : script.segments())
    segments += (segments.empty() ? "" : ", ") + s.name;
  page += format(
      "<p class=\"note\">%s (%.1f s: %s) played for %.0f s by %u characters through the "
      "runtime's CPU crowd, as mmdb_sample plays it (a search every 0.1 s, and when the stick "
      "changes sharply or a range ends; the crowd's defaults otherwise; docs/review.md), "
      "<b class=\"replay-feet\" data-feet=\"%s\">%s</b>. Under the numbers, what a player sees "
      "(feet that slide, poses that jump, switches, answers to sharp turns; hover a row for its "
      "mmcook diff --fail-on keys) and the clips where feet slide most. Left: character 0 seen "
      "from above (forward up, left to the left), the path it was asked for (dashed: the "
      "controller's simulation root) against the path it took (the root motion played), with "
      "its jumps (hover for the time, the frames and the cost). Right: the cost of what it "
      "plays over time, jumps in orange; every character's clip usage below.</p>",
      escape(script_name).c_str(), script.duration(), escape(segments).c_str(), settings.seconds,
      settings.characters, settings.feet == ReplayFeet::Locked ? "locked" : "clips",
      settings.feet == ReplayFeet::Locked
          ? "foot locking on, as a game runs it (--replay-feet clips: the clips' own feet)"
          : "foot locking off: the clips' own feet (--replay-feet clips)");
  for (const Side& side : sides)
    if (side.replay && !side.replay->locking_unavailable.empty())
      page += format(
          "<p class=\"why locking-unavailable\">%s%sfoot locking cannot bend this skeleton's legs "
          "(%s), so the replay shows the clips' own feet.</p>",
          sides.size() > 1 ? escape(side.label).c_str() : "", sides.size() > 1 ? ": " : "",
          escape(side.replay->locking_unavailable).c_str());
  PathBox box;
  float top = 0;
  for (const Side& side : sides)
    if (side.replay) {
      for (const glm::vec2& p : side.replay->trace.desired) box.grow(p);
      for (const glm::vec2& p : side.replay->trace.achieved) box.grow(p);
      for (float c : side.replay->trace.cost)
        if (std::isfinite(c)) top = std::max(top, c);
    }
  if (!(top > 0)) top = 1;
  openColumns(page, sides.size());
  for (const Side& side : sides) {
    openPanel(page, side, "replay", sides.size());
    if (!side.replay) {
      page += "<p class=\"why\">No replay: " + escape(side.replay_error) + "</p></div>";
      continue;
    }
    const Replay& r = *side.replay;
    size_t jumps0 = 0;
    for (const ReplayJump& j : r.jumps) jumps0 += j.character == 0 ? 1 : 0;
    const ReplayStats& st = r.stats;
    page += format(
        "<table class=\"summary\" data-decisions=\"%llu\" data-jumps=\"%zu\">"
        "<tr><td>searches (all characters)</td><td class=\"num\">%llu</td></tr>"
        "<tr><td>jumps (all characters; character 0)</td><td class=\"num\">%llu; %zu</td></tr>"
        "<tr><td>searches per second (this machine)</td><td class=\"num\">%.0f</td></tr>"
        "<tr><td>cost of the winners: mean, p95</td><td class=\"num\">%.3g, %.3g</td></tr>"
        "<tr><td>trajectory error (m): mean, p95</td><td class=\"num\">%.3f, %.3f</td></tr>"
        "</table>",
        static_cast<unsigned long long>(st.decisions), jumps0,
        static_cast<unsigned long long>(st.decisions), static_cast<unsigned long long>(st.jumps),
        jumps0, st.decisions_per_second, st.mean_cost, st.p95_cost, st.mean_trajectory_error,
        st.p95_trajectory_error);
    motionTable(page, side, r);
    page += "<div class=\"polars\">";
    pathPlot(page, side, r, box);
    costPlot(page, r, settings.seconds, top);
    page += "</div>";
    clipUsage(page, side, r);
    page += "</div>";
  }
  page += "</div></section>";
}

// Whether two databases animate different skeletons: other joints, names or parents (roles may
// differ; the joints they name are still the same).
bool skeletonsDiffer(const mmdb::Database& a, const mmdb::Database& b) {
  if (a.jointCount() != b.jointCount()) return true;
  for (uint32_t j = 0; j < a.jointCount(); ++j)
    if (a.jointName(j) != b.jointName(j) || a.parents()[j] != b.parents()[j]) return true;
  return false;
}

// The skeleton replay: the replay's posed skeletons played back (replay_player.h).
void skeletonSection(Page& page, const std::vector<Side>& sides, const ReplaySettings& settings) {
  page += "<section id=\"skeleton\"><h2>Skeleton replay</h2>";
  page += format(
      "<p class=\"note\">The replay below played back: every character's pose as the runtime's "
      "crowd returns it after each step (the joints a game reads), placed where the character "
      "stands. The selected character large, from above (forward up; the dashed grey path is "
      "the controller's desired path, the blue one the path it took, over 2 s either side) and "
      "from the side; all %u characters small below (click one to select it). Toes: green when "
      "planted (the pose's contact), grey in the air; a red square when foot locking holds it "
      "(%s). Under the view, the "
      "character's measures over time (foot slide of planted toes, the largest joint move in a "
      "step, the gap between desired and achieved positions) with every switch marked above "
      "them: click the time line to go there, a mark to see the switch's winner and the next "
      "candidates with each block's cost. Space plays and pauses.</p>",
      settings.characters,
      settings.feet == ReplayFeet::Locked
          ? "the replay runs with foot locking on, as a game runs the crowd; mmcook report "
            "--replay-feet clips shows the clips' own feet"
          : "never here: the replay runs with --replay-feet clips, foot locking off, so the "
            "clips' own feet show");
  if (sides.size() > 1 && skeletonsDiffer(*sides[0].input.db, *sides[1].input.db)) {
    // Two skeletons side by side would look comparable and are not: the structure (What
    // changed) and the replay's measures (below) are what compares.
    const uint32_t ja = sides[0].input.db->jointCount(), jb = sides[1].input.db->jointCount();
    page += format(
        "<p class=\"why skeletons-differ\">A and B animate different skeletons (%s): their "
        "poses are not played. What changed lists the joints that differ; the replay below "
        "compares their measures.</p></section>",
        ja == jb ? format("both %u joints, named or parented differently", ja).c_str()
                 : format("A has %u joints, B %u", ja, jb).c_str());
    return;
  }
  std::vector<std::string> panels;
  std::string data;
  for (size_t i = 0; i < sides.size(); ++i) {
    const Side& side = sides[i];
    std::string panel = format(
        "<div class=\"rp-side db\" data-db=\"%s\" data-section=\"skeleton\">", side.label.c_str());
    if (sides.size() > 1)
      panel += format("<h3>%s: %s</h3>", side.label.c_str(), escape(side.input.path).c_str());
    if (!side.replay || side.replay->poses.samples == 0) {
      panel += "<p class=\"why\">No skeleton replay: " +
               escape(side.replay ? std::string("the replay kept no pose") : side.replay_error) +
               "</p></div>";
      panels.push_back(std::move(panel));
      continue;
    }
    const Replay& r = *side.replay;
    const ReplayPoses& p = r.poses;
    if (side.input.db->contactJoints().empty())
      panel +=
          "<p class=\"why\">The database has no contact joints: no toe is marked planted and "
          "foot slide stays 0. Re-cook it with the feet's contact roles to see them.</p>";
    if (p.stride > 1)
      panel += format(
          "<p class=\"why\">A long replay: the page keeps every %u%s step (%u of %llu) so that "
          "its poses stay under %.0f MB; measures are the largest over each kept interval.</p>",
          p.stride,
          p.stride == 2   ? "nd"
          : p.stride == 3 ? "rd"
                          : "th",
          p.samples, static_cast<unsigned long long>(r.stats.steps),
          double(settings.max_pose_bytes) / 1e6);
    panel += format(
        "<p class=\"summary\" data-samples=\"%u\" data-switches=\"%zu\" "
        "data-bytes=\"%zu\">%u characters of %u joints, %u poses each (every %s), "
        "%zu switches; %.2f MB embedded.</p>",
        p.samples, r.jumps.size(), replayPlayerBytes(r), p.characters, p.joints, p.samples,
        p.stride == 1 ? "step" : format("%u steps", p.stride).c_str(), r.jumps.size(),
        double(replayPlayerBytes(r)) / 1e6);
    if (r.jumps.size() > kMaxPlayerSwitches)
      panel += format(
          "<p class=\"why\">%zu switches: the page marks the first %zu (in time); the measures "
          "and the poses cover the whole replay.</p>",
          r.jumps.size(), kMaxPlayerSwitches);
    panel += replayPlayerPanel(i) + "</div>";
    panels.push_back(std::move(panel));
    data += format("<script type=\"application/json\" class=\"rp-data\" data-side=\"%zu\">", i) +
            replayPlayerJson(*side.input.db, r, side.label) + "</script>";
  }
  page += replayPlayerMarkup(panels);
  page += data;
  page += "</section>";
}

// ---- What changed (two databases) ----------------------------------------------------------

std::string numberText(double v) { return std::isnan(v) ? std::string("-") : format("%g", v); }

void changesSection(Page& page, const std::vector<Side>& sides, const StructureDiff& d) {
  page += "<section id=\"changes\"><h2>What changed from A to B</h2>";
  page += format(
      "<p class=\"note\">A is %s, B is %s (as in <code>mmcook diff A B</code>). First what "
      "the files store (<code>mmcook diff</code>'s structure), then what the replay measured "
      "on each, the biggest changes first.</p>",
      escape(sides[0].input.path).c_str(), escape(sides[1].input.path).c_str());
  bool weights = false;
  for (const NumberChange& c : d.settings) weights |= c.name.rfind("weight.", 0) == 0;
  if (weights)
    page +=
        "<p class=\"why weights-differ\">Block weights differ: A's and B's costs are on "
        "different scales. Compare the costs within one database, not across the two; the "
        "winners' feature distance at unit weights (every block's weight taken out) compares "
        "across them.</p>";
  page += format("<div class=\"structure\" data-changes=\"%zu\">", d.changeCount());
  if (!d.changed()) {
    page += format(
        "<p class=\"same\">Same structure: settings, weights, skeleton, clips, ranges and tags "
        "(%u clips, %u frames).</p>",
        d.clips_a, d.frames_a);
  }
  if (!d.settings.empty()) {
    page +=
        "<h4>Settings and weights</h4><table class=\"settings\"><tr><th>setting</th>"
        "<th class=\"num\">A</th><th class=\"num\">B</th></tr>";
    for (const NumberChange& c : d.settings)
      page += format(
          "<tr data-setting=\"%s\"><td>%s</td><td class=\"num\">%s</td>"
          "<td class=\"num\">%s</td></tr>",
          escape(c.name).c_str(), escape(c.name).c_str(), numberText(c.a).c_str(),
          numberText(c.b).c_str());
    page += "</table>";
  }
  if (!d.skeleton.empty()) {
    page += "<h4>Skeleton</h4><ul>";
    for (const std::string& line : d.skeleton) page += "<li>" + escape(line) + "</li>";
    page += "</ul>";
  }
  if (!d.blocks.empty()) {
    page +=
        "<h4>Feature blocks</h4><table class=\"blocks\"><tr><th>block</th><th "
        "class=\"num\">weight A</th><th class=\"num\">weight B</th><th "
        "class=\"num\">spread A</th><th class=\"num\">spread B</th></tr>";
    for (const BlockChange& b : d.blocks)
      page += format(
          "<tr><td>%s%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td "
          "class=\"num\">%s</td><td class=\"num\">%s</td></tr>",
          escape(b.name).c_str(),
          !b.in_a   ? " (B only)"
          : !b.in_b ? " (A only)"
                    : "",
          b.in_a ? numberText(b.weight_a).c_str() : "-",
          b.in_b ? numberText(b.weight_b).c_str() : "-",
          b.in_a ? format("%.3g", b.std_a).c_str() : "-",
          b.in_b ? format("%.3g", b.std_b).c_str() : "-");
    page += "</table>";
  }
  const auto list = [&](const char* what, const char* cls, const std::vector<std::string>& names) {
    if (names.empty()) return;
    page += format("<h4>%s (%zu)</h4><p class=\"%s\">", what, names.size(), cls);
    for (size_t i = 0; i < names.size(); ++i) page += (i ? ", " : "") + escape(names[i]);
    page += "</p>";
  };
  list("Clips added in B", "clips-added", d.clips_added);
  list("Clips removed from A", "clips-removed", d.clips_removed);
  if (!d.clips_changed.empty()) {
    page +=
        format("<h4>Clips changed (%zu)</h4><ul class=\"clips-changed\">", d.clips_changed.size());
    for (const ClipChange& c : d.clips_changed) {
      std::string what;
      for (const std::string& x : c.changes) what += (what.empty() ? "" : "; ") + x;
      page += "<li><b>" + escape(c.name) + "</b>: " + escape(what) + "</li>";
    }
    page += "</ul>";
  }
  if (!d.ranges.empty()) {
    page += format("<h4>Matchable ranges changed (%zu clips)</h4><ul>", d.ranges.size());
    for (const ClipRanges& r : d.ranges) {
      std::string a, b;
      for (const std::string& x : r.a) a += (a.empty() ? "" : ", ") + x;
      for (const std::string& x : r.b) b += (b.empty() ? "" : ", ") + x;
      page += "<li><b>" + escape(r.clip) + "</b>: A " + escape(a.empty() ? "none" : a) + "; B " +
              escape(b.empty() ? "none" : b) + "</li>";
    }
    page += "</ul>";
  }
  list("Tags added in B", "tags-added", d.tags_added);
  list("Tags removed from A", "tags-removed", d.tags_removed);
  page += "</div>";

  // The measures of both replays, the biggest relative change first.
  page += "<h4>The replay's measures, A against B</h4>";
  if (!sides[0].replay || !sides[1].replay) {
    page += "<p class=\"why\">Not both databases replayed: see the Replay section.</p>";
    page += "</section>";
    return;
  }
  const ReplayStats& a = sides[0].replay->stats;
  const ReplayStats& b = sides[1].replay->stats;
  struct Row {
    std::string name;
    double a, b;
    bool cost;  // on the weights' scale
  };
  // Every measure of the replay: the winners' cost and distance, then each motion measure by its
  // mmcook diff --fail-on key (docs/review.md "Data checks"). Searches per second measure the
  // machine, not the data: left out.
  std::vector<Row> rows = {
      {"cost of the winners, mean", a.mean_cost, b.mean_cost, true},
      {"cost of the winners, p95", a.p95_cost, b.p95_cost, true},
      {"feature distance of the winners at unit weights, mean", a.mean_unit_distance,
       b.mean_unit_distance, false},
      {"searches", double(a.decisions), double(b.decisions), false},
      {"jumps", double(a.jumps), double(b.jumps), false},
  };
  const auto unit = [](MeasureUnit u) -> const char* {
    switch (u) {
      case MeasureUnit::Mm:
        return " (mm)";
      case MeasureUnit::M:
        return " (m)";
      case MeasureUnit::S:
        return " (s)";
      case MeasureUnit::Percent:
        return " (%)";
      case MeasureUnit::PerSecond:
        return " (per character-second)";
      case MeasureUnit::Acceleration:
        return " (m/s&sup2;)";
      case MeasureUnit::Speed:
        return " (m/s)";
      case MeasureUnit::TurnRate:
        return " (degrees/s)";
      case MeasureUnit::Ratio:
      case MeasureUnit::Count:
        break;
    }
    return "";
  };
  for (const MotionKey& k : motionKeys())
    rows.push_back({std::string(k.key) + unit(k.unit), k.of(a.motion), k.of(b.motion), false});
  std::vector<Row> moved;
  std::string still;
  size_t still_count = 0;
  for (const Row& r : rows) {
    if (measureMoved(r.a, r.b)) {
      moved.push_back(r);
    } else {
      still += (still.empty() ? "" : ", ") + r.name;
      ++still_count;
    }
  }
  // The biggest change first, a measure new in B (A = 0) before any ratio. Costs on different
  // scales change with the weights, not the motion: they go last.
  const auto key = [&](const Row& r) {
    if (weights && r.cost) return -1.0;
    const MeasureChange c = measureChange(r.a, r.b);
    return c.has_relative ? std::abs(c.relative) : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(moved.begin(), moved.end(),
                   [&](const Row& x, const Row& y) { return key(x) > key(y); });
  page += format(
      "<table class=\"measures-ab\" data-moved=\"%zu\" data-measures=\"%zu\"><tr><th>measure "
      "(moved)</th><th class=\"num\">A</th><th class=\"num\">B</th><th class=\"num\">change</th>"
      "</tr>",
      moved.size(), rows.size());
  for (const Row& r : moved) {
    const MeasureChange c = measureChange(r.a, r.b);
    const double shown = c.has_relative ? c.relative : (c.absolute > 0 ? 1.0 : -1.0);
    page += format(
        "<tr><td>%s%s</td><td class=\"num\">%.4g</td><td class=\"num\">%.4g</td><td "
        "class=\"num\" style=\"color:%s\">%s</td></tr>",
        r.name.c_str(), r.cost && weights ? " (different scales)" : "", r.a, r.b,
        std::abs(shown) < 0.05 ? "#868e96"
        : shown > 0            ? "#c92a2a"
                               : "#2b8a3e",
        escape(changeText(r.a, r.b)).c_str());
  }
  page += "</table>";
  page += format("<p class=\"note change-rule\">%s.", escape(kChangeRule).c_str());
  if (still_count > 0)
    page += format(" The same in A and B (%zu): %s.", still_count, still.c_str());
  page += "</p></section>";
}

mmdb::Database openOrThrow(const std::string& path, const char* role) {
  mmdb::Result<mmdb::Database> opened = mmdb::Database::open(path.c_str());
  if (!opened)
    throw mmdb::cook::InputError(format(
        "cannot report on %s '%s': %s: %s; check the path, or re-cook the file with mmcook cook",
        role, path.c_str(), mmdb::errorCodeName(opened.error().code()), opened.error().message()));
  return std::move(opened).value();
}

}  // namespace

std::string renderReport(const ReportDatabase& a, const ReportDatabase* b,
                         const ReportSettings& settings) {
  std::vector<Side> sides;
  sides.push_back({"A", a, {}, {}, {}, {}, {}, {}});
  if (b) sides.push_back({"B", *b, {}, {}, {}, {}, {}, {}});
  const std::string incomparable = b ? featuresIncomparable(*a.db, *b->db) : "";

  for (Side& s : sides) s.timeline = clipTimeline(*s.input.db);
  if (b && incomparable.empty()) {
    HistogramPair pair = comparedHistograms(*a.db, *b->db, settings.histogram_bins);
    sides[0].histograms = std::move(pair.a);
    sides[1].histograms = std::move(pair.b);
  } else {
    for (Side& s : sides) s.histograms = featureHistograms(*s.input.db, settings.histogram_bins);
  }
  const CoveragePose pose_a = representativePose(*a.db);
  for (Side& s : sides) {
    const bool shared = &s != &sides[0] && incomparable.empty();
    const CoveragePose pose = shared ? pose_a : representativePose(*s.input.db);
    if (pose.frame < 0) {
      s.coverage_error = "the database has no matchable frame";
      continue;
    }
    s.coverage = coverageMap(*s.input.db, pose, settings.coverage);
    if (!s.coverage->error.empty()) {
      s.coverage_error = s.coverage->error;
      s.coverage.reset();
      continue;
    }
    if (shared) s.coverage->pose_from = "A";
  }
  const mmdb::StickScript built_in = mmdb::StickScript::builtIn();
  const mmdb::StickScript& script = settings.script ? *settings.script : built_in;
  ReplaySettings replay_settings = settings.replay;
  // The posed skeletons are for the skeleton replay, which two different skeletons leave out.
  replay_settings.keep_poses = !b || !skeletonsDiffer(*a.db, *b->db);
  for (Side& s : sides) {
    mmdb::Result<Replay> played = replay(*s.input.db, script, replay_settings);
    if (played) {
      s.replay = std::move(played).value();
      // Each clip's own feet from its frames, the baseline its replayed slide is read against.
      mmdb::Result<std::vector<mmdb::ClipSlide>> straight = straightClipSlides(
          *s.input.db, double(mmdb::MotionMeasureSettings{}.phase_drift_limit) * 1000.0);
      if (straight) s.straight = std::move(straight).value();
    } else
      s.replay_error =
          format("%s: %s", mmdb::errorCodeName(played.error().code()), played.error().message());
  }

  Page page;
  std::string title = a.path + (b ? " vs " + b->path : "");
  page += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  // Nothing may come from the network: the page is one file that opens from disk.
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">";
  page += "<title>mmcook report: " + escape(title) + "</title><style>" + kStyle +
          replayPlayerStyle() + "</style></head><body>";
  page += "<header><h1>mmcook report</h1>";
  for (const Side& s : sides) {
    const mmdb::Database& db = *s.input.db;
    page += format(
        "<div class=\"file\" data-db=\"%s\">%s%s: %u joints, %u frames, %.1f MB, "
        "schema %u.%u, cooked by %s</div>",
        s.label.c_str(), b ? (s.label + ": ").c_str() : "", escape(s.input.path).c_str(),
        db.jointCount(), db.frameCount(), db.bytes().size() / 1e6, unsigned(db.schemaMajor()),
        unsigned(db.schemaMinor()), escape(db.cookerVersion()).c_str());
  }
  page += "<nav>";
  if (b) page += "<a href=\"#changes\">What changed</a>";
  page +=
      "<a href=\"#timeline\">Clip timeline</a><a href=\"#features\">Feature "
      "distributions</a><a href=\"#coverage\">Coverage map</a><a "
      "href=\"#skeleton\">Skeleton replay</a><a href=\"#replay\">Replay</a></nav></header>";
  bool same_clips = false;
  if (b) {
    const StructureDiff structure = compareStructure(*a.db, *b->db);
    changesSection(page, sides, structure);
    same_clips = structure.clips_added.empty() && structure.clips_removed.empty() &&
                 structure.clips_changed.empty() && structure.ranges.empty() &&
                 structure.tags_added.empty() && structure.tags_removed.empty() &&
                 structure.frames_a == structure.frames_b;
  }
  timelineSection(page, sides, same_clips);
  featuresSection(page, sides, incomparable);
  coverageSection(page, sides, incomparable);
  skeletonSection(page, sides, replay_settings);
  replaySection(page, sides,
                settings.script_name.empty() ? "The built-in stick script" : settings.script_name,
                script, settings.replay);
  page += format("<footer class=\"note\" style=\"margin:0 24px 16px\">Written by %s.</footer>",
                 escape(mmdb::cook::kCookerVersion).c_str());
  page += std::string("<script>") + kScript + replayPlayerScript() + "</script></body></html>\n";
  return std::move(page.html);
}

void writeReport(const ReportOptions& options) {
  if (options.characters < 1 || options.characters > int64_t{kMaxReplayCharacters})
    throw mmdb::cook::UsageError(format("--characters wants a whole number from 1 to %u, got %lld",
                                        kMaxReplayCharacters,
                                        static_cast<long long>(options.characters)));
  if (!(options.seconds >= 1.0 && options.seconds <= kMaxReplaySeconds))
    throw mmdb::cook::UsageError(format("--seconds wants a number of seconds from 1 to %g, got %g",
                                        kMaxReplaySeconds, options.seconds));
  if (options.replay_feet != "locked" && options.replay_feet != "clips")
    throw mmdb::cook::UsageError(format(
        "--replay-feet wants locked (foot locking on, as a game runs) or clips (the clips' own "
        "feet), got '%s'",
        options.replay_feet.c_str()));
  // One order for `mmcook diff A B` and `mmcook report B --compare A`: A is the older file (the
  // one compared against), B the newer one, reported on.
  const bool compared = !options.compare.empty();
  const mmdb::Database a = compared ? openOrThrow(options.compare, "--compare database")
                                    : openOrThrow(options.database, "database");
  std::optional<mmdb::Database> b;
  if (compared) b = openOrThrow(options.database, "database");
  std::optional<mmdb::StickScript> script;
  ReportSettings settings;
  settings.replay.characters = uint32_t(options.characters);
  settings.replay.seconds = options.seconds;
  settings.replay.feet = options.replay_feet == "clips" ? ReplayFeet::Clips : ReplayFeet::Locked;
  if (!options.stick.empty()) {
    mmdb::Result<mmdb::StickScript> loaded = mmdb::StickScript::load(options.stick.c_str());
    if (!loaded)
      throw mmdb::cook::InputError(format("cannot read the stick file '%s': %s",
                                          options.stick.c_str(), loaded.error().message()));
    script = std::move(loaded).value();
    settings.script = &*script;
    settings.script_name = "The stick file " + options.stick;
  }
  mmdb::cook::checkWritable(options.output);
  const ReportDatabase input_a{compared ? options.compare : options.database, &a};
  const ReportDatabase input_b{options.database, b ? &*b : nullptr};
  const std::string html = renderReport(input_a, b ? &input_b : nullptr, settings);
  mmdb::cook::writeFileAtomically(
      options.output,
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(html.data()), html.size()));
}

}  // namespace mmcook::review
