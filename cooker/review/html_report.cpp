#include "review/html_report.h"

#include "review/diff.h"
#include "review/replay.h"
#include "review/replay_player.h"
#include "review/report_page.h"

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

using html::answeredBy;
using html::costText;
using html::escape;
using html::format;
using html::openColumns;
using html::openPanel;
using html::Page;
using html::Side;

// One line of colours for the columns of a block (x, y, z and the trajectory's x, z pairs).
const char* columnColour(size_t column) {
  static const char* const kColours[] = {"#d9480f", "#2b8a3e", "#1864ab",
                                         "#ae3ec9", "#e67700", "#0b7285"};
  return kColours[column % 6];
}

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
      "them (one scale for both files when two are compared): click the time line to go there, "
      "a mark to see the switch: the frame that was playing with its own cost (what the winner "
      "beat, and by how much), the winner and the next best candidates from other clips or "
      "other stretches of a clip (none within 1/3 s of a better one in the same clip), each "
      "block's part of the cost grouped by feature kind, and the query's trajectory against "
      "theirs, per trajectory block. Space plays and pauses.</p>",
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
  // Both replays' measure curves on one scale: each lane's top is the larger side's.
  std::vector<MeasurePeaks> own_peaks;
  for (const Side& side : sides)
    if (side.replay && side.replay->poses.samples > 0)
      own_peaks.push_back(measurePeaks(side.replay->poses));
  const MeasurePeaks peaks = sharedPeaks(own_peaks);
  const bool weights_differ =
      sides.size() > 1 && html::weightsDiffer(*sides[0].input.db, *sides[1].input.db);
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
    if (weights_differ)
      panel +=
          "<p class=\"why candidate-weights\">The candidates' costs are in this file's weights, "
          "which differ from the other file's: compare a switch's candidates with each other "
          "(their order, each block's share), not with the other file's numbers. The time line's "
          "measures are motion, on one scale for both.</p>";
    panel += replayPlayerPanel(i) + "</div>";
    panels.push_back(std::move(panel));
    data += format("<script type=\"application/json\" class=\"rp-data\" data-side=\"%zu\">", i) +
            replayPlayerJson(*side.input.db, r, side.label, &peaks) + "</script>";
  }
  page += replayPlayerMarkup(panels);
  page += data;
  page += "</section>";
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
    html::changesSection(page, sides, structure);
    same_clips = structure.clips_added.empty() && structure.clips_removed.empty() &&
                 structure.clips_changed.empty() && structure.ranges.empty() &&
                 structure.tags_added.empty() && structure.tags_removed.empty() &&
                 structure.frames_a == structure.frames_b;
  }
  timelineSection(page, sides, same_clips);
  featuresSection(page, sides, incomparable);
  html::coverageSection(page, sides, incomparable);
  skeletonSection(page, sides, replay_settings);
  html::replaySection(
      page, sides,
      settings.script_name.empty() ? "The built-in stick script" : settings.script_name, script,
      settings.replay);
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
