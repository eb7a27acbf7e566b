#include "review/report_page.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mmcook::review::html {
namespace {

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

// What a map's colours show: each cell's best cost in its own file's weights, or, when two
// files' weights differ, the best distance at unit weights (CoverageCell::unit_distance), which
// is on one scale for both.
struct Measure {
  bool unit = false;
  float of(const CoverageCell& c) const { return unit ? c.unit_distance : c.cost; }
  int32_t frame(const CoverageCell& c) const { return unit ? c.unit_frame : c.frame; }
  const char* name() const { return unit ? "best distance at unit weights" : "best cost"; }
};

std::string cellWords(const CoverageCell& c) {
  if (c.speed == 0) return format("standing, %s", turnName(c.turn_rate_deg).c_str());
  return format("%.2g m/s %s, %s", double(c.speed), directionName(c.direction_deg).c_str(),
                turnName(c.turn_rate_deg).c_str());
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
              const CostScale& scale, const Measure& measure, const CoverageMap* other) {
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
                          costText(measure.of(other->cells[index])).c_str());
      // In unit weights, the cost in the file's own weights follows (it ranks within the file).
      std::string own;
      if (measure.unit)
        own = format("; cost in this file's weights %s (%s)", costText(c.cost).c_str(),
                     escape(answeredBy(*side.input.db, c.frame)).c_str());
      page += format(
          "%s id=\"cov-%s-%zu\" class=\"cov-cell\" fill=\"%s\" data-cost=\"%g\" "
          "data-unit=\"%g\"><title>%s: %s %s (%s)%s%s</title>%s",
          shape.c_str(), side.label.c_str(), index, costColour(scale.at(measure.of(c))).c_str(),
          std::isfinite(c.cost) ? double(c.cost) : -1.0,
          std::isfinite(c.unit_distance) ? double(c.unit_distance) : -1.0,
          escape(cellWords(c)).c_str(), measure.name(), costText(measure.of(c)).c_str(),
          escape(answeredBy(*side.input.db, measure.frame(c))).c_str(), compared.c_str(),
          own.c_str(), disc ? "</circle>" : "</path>");
    }
  page += format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\">fwd</text>",
                 cx, cy - kRadius - 2);
  page += format(
      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\">L</text><text x=\"%.1f\" "
      "y=\"%.1f\" font-size=\"9\">R</text>",
      cx - kRadius - 10, cy + 3, cx + kRadius + 3, cy + 3);
  page += "</svg>";
}

void coveragePanel(Page& page, const Side& side, const CostScale& scale, const Measure& measure,
                   const Side* other, size_t sides) {
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
  if (measure.unit)
    page +=
        "<p class=\"why unit-weights\">Coloured by the best distance at unit weights, not the "
        "cost: A's and B's block weights differ, so their costs are on different scales (a "
        "heavier weight makes the same answer cost more). Each cell is searched again with every "
        "block's weight taken out, and its colour and the tooltip's other-file value are the "
        "winner's squared feature distance with each block counted once: the same motion gives "
        "the same distance in both files. The tooltip also gives the cost in this file's "
        "weights.</p>";
  page += "<div class=\"polars\">";
  const CoverageMap* compared = other && other->coverage ? &*other->coverage : nullptr;
  for (size_t t = 0; t < map.settings.turn_rates.size(); ++t)
    polarMap(page, side, map, t, scale, measure, compared);
  page += format(
      "</div><h3>Clips to capture next</h3><table class=\"worst\"><tr><th>request</th>"
      "<th class=\"num\">best cost</th><th>answered by</th>%s</tr>",
      measure.unit ? "<th class=\"num\">distance at unit weights</th>" : "");
  for (size_t i : map.worst()) {
    const CoverageCell& c = map.cells[i];
    page += format(
        "<tr data-cell=\"cov-%s-%zu\"><td>%s</td><td class=\"num\">%s</td><td>%s</td>%s"
        "</tr>",
        side.label.c_str(), i, escape(cellWords(c)).c_str(), costText(c.cost).c_str(),
        escape(answeredBy(db, c.frame)).c_str(),
        measure.unit
            ? format("<td class=\"num\">%s</td>", costText(c.unit_distance).c_str()).c_str()
            : "");
  }
  page += "</table></div>";
}

}  // namespace

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
  // Two files whose weights differ are coloured at unit weights, on one scale.
  Measure measure;
  measure.unit = sides.size() > 1 && incomparable.empty() &&
                 weightsDiffer(*sides[0].input.db, *sides[1].input.db);
  float low = std::numeric_limits<float>::infinity(), high = -low;
  for (const Side& side : sides)
    if (side.coverage)
      for (const CoverageCell& c : side.coverage->cells)
        if (std::isfinite(measure.of(c))) {
          low = std::min(low, std::log10(std::max(measure.of(c), 1e-4f)));
          high = std::max(high, std::log10(std::max(measure.of(c), 1e-4f)));
        }
  CostScale scale;
  if (low <= high) scale = {low, high};
  page +=
      format("<div class=\"legend\" data-measure=\"%s\" data-low=\"%g\" data-high=\"%g\">%s <span>",
             measure.unit ? "unit" : "cost", double(scale.low), double(scale.high),
             measure.name()) +
      costText(std::pow(10.f, scale.low)) + "</span><svg width=\"160\" height=\"12\">";
  for (int i = 0; i < 16; ++i)
    page += format("<rect x=\"%d\" y=\"0\" width=\"10\" height=\"12\" fill=\"%s\"/>", i * 10,
                   costColour(i / 15.f).c_str());
  page += "</svg><span>" + costText(std::pow(10.f, scale.high)) + "</span></div>";
  openColumns(page, sides.size());
  for (size_t i = 0; i < sides.size(); ++i) {
    const Side* other = sides.size() > 1 && incomparable.empty() ? &sides[1 - i] : nullptr;
    coveragePanel(page, sides[i], scale, measure, other, sides.size());
  }
  page += "</div></section>";
}

}  // namespace mmcook::review::html
