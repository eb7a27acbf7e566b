#include "review/report_page.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mmcook::review::html {
namespace {

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

// The cost of what character 0 plays over time, or with `unit` the feature distance at unit
// weights of it (ReplayTrace::unit_distance), on a y-axis from 0 to `top`.
void costPlot(Page& page, const Replay& r, double seconds, float top, bool unit) {
  constexpr double kWidth = 340, kHeight = 130, kLeft = 34, kBottom = 16;
  const double w = kWidth - kLeft - 16, h = kHeight - kBottom - 6;
  const auto sx = [&](double t) { return kLeft + w * t / std::max(seconds, 1e-9); };
  const auto sy = [&](float c) {
    return 6 + h * (1.0 - std::clamp(double(std::isfinite(c) ? c : top) / top, 0.0, 1.0));
  };
  page += format(
      "<svg class=\"cost\" data-measure=\"%s\" data-top=\"%g\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\">",
      unit ? "unit" : "cost", double(top), kWidth, kHeight, kWidth, kHeight);
  const std::vector<float>& values = unit ? r.trace.unit_distance : r.trace.cost;
  for (const ReplayJump& j : r.jumps)
    if (j.character == 0)
      page += format("<line x1=\"%.1f\" y1=\"6\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ffd8a8\"/>",
                     sx(j.time), sx(j.time), 6 + h);
  std::string points;
  for (size_t i = 0; i < r.trace.time.size() && i < values.size(); ++i)
    points += format("%.1f,%.1f ", sx(r.trace.time[i]), sy(values[i]));
  page += format(
      "<polyline points=\"%s\" fill=\"none\" stroke=\"#c92a2a\" stroke-width=\"1.2\">"
      "<title>%s of the frame character 0 plays, after each step</title></polyline>",
      points.c_str(), unit ? "feature distance at unit weights" : "cost");
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

}  // namespace

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
  // Two files whose weights differ plot the distance at unit weights: their costs are on
  // different scales. Either way one y-axis for both.
  const bool unit = sides.size() > 1 && weightsDiffer(*sides[0].input.db, *sides[1].input.db) &&
                    featuresIncomparable(*sides[0].input.db, *sides[1].input.db).empty();
  PathBox box;
  float top = 0;
  for (const Side& side : sides)
    if (side.replay) {
      for (const glm::vec2& p : side.replay->trace.desired) box.grow(p);
      for (const glm::vec2& p : side.replay->trace.achieved) box.grow(p);
      for (float c : unit ? side.replay->trace.unit_distance : side.replay->trace.cost)
        if (std::isfinite(c)) top = std::max(top, c);
    }
  if (!(top > 0)) top = 1;
  std::string plot_note;  // next to each file's plots
  if (unit)
    plot_note =
        "<p class=\"why unit-weights\">A's and B's block weights differ, so their costs are on "
        "different scales: the plot right of the path shows the feature distance at unit weights "
        "of "
        "what character 0 plays (every block's weight taken out, the same motion the same "
        "value in both), on one axis. The tables' costs are each file's own: compare them within "
        "a file.</p>";
  else if (sides.size() > 1 && weightsDiffer(*sides[0].input.db, *sides[1].input.db))
    plot_note =
        "<p class=\"why unit-weights\">A's and B's feature blocks differ: neither their costs nor "
        "their distances are on one scale, and the plot right of the path has the axis of both "
        "files' largest cost. Compare within a file.</p>";
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
        "<tr><td>feature distance of the winners at unit weights: mean</td><td "
        "class=\"num\">%.3g</td></tr>"
        "<tr><td>trajectory error (m): mean, p95</td><td class=\"num\">%.3f, %.3f</td></tr>"
        "</table>",
        static_cast<unsigned long long>(st.decisions), jumps0,
        static_cast<unsigned long long>(st.decisions), static_cast<unsigned long long>(st.jumps),
        jumps0, st.decisions_per_second, st.mean_cost, st.p95_cost, st.mean_unit_distance,
        st.mean_trajectory_error, st.p95_trajectory_error);
    motionTable(page, side, r);
    page += plot_note;
    page += "<div class=\"polars\">";
    pathPlot(page, side, r, box);
    costPlot(page, r, settings.seconds, top, unit);
    page += "</div>";
    clipUsage(page, side, r);
    page += "</div>";
  }
  page += "</div></section>";
}

}  // namespace mmcook::review::html
