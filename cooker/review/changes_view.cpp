#include "review/report_page.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mmcook::review::html {
namespace {

std::string numberText(double v) { return std::isnan(v) ? std::string("-") : format("%g", v); }

}  // namespace

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

}  // namespace mmcook::review::html
