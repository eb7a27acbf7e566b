// mmcook report's data (timeline, histograms, coverage map) with known answers on synthetic
// databases, and the writer's failure paths.
#include "cook/cook_database.h"
#include "core/errors.h"
#include "review/diff.h"
#include "review/html_report.h"
#include "review/replay.h"
#include "review/replay_player.h"
#include "review/report_data.h"
#include "synthetic_bvh.h"
#include "synthetic_request.h"
#include "write/database_writer.h"

#include <gtest/gtest.h>

#include <glm/trigonometric.hpp>

#include <mmdb/controller.h>
#include <mmdb/search.h>
#include <mmdb/stick_script.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace mmcook::review {
namespace {

namespace fs = std::filesystem;
using mmdb::cook::ClipSpec;
using mmdb::cook::CookRequest;

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mmdb_report_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  // Cooks `request` into dir_/name and opens it.
  mmdb::Database cook(const CookRequest& request, const std::string& name) {
    const std::string path = (dir_ / name).string();
    mmdb::cook::writeFileAtomically(
        path, mmdb::cook::serializeDatabase(mmdb::cook::cookDatabase(request)));
    mmdb::Result<mmdb::Database> db = mmdb::Database::open(path.c_str());
    EXPECT_TRUE(db.ok()) << db.error().message();
    return std::move(db).value();
  }

  // One straight walk along +Z at 1.2 m/s, 8 s. Its heading wobbles by 4 degrees over 4 s, as a
  // real walk's does: a facing that never changes has no spread to normalize.
  CookRequest straightWalk(bool extra_joint = false) {
    std::vector<mmdb::test::BvhFrame> frames = mmdb::test::walkFrames(241, 1.2f);
    for (size_t f = 0; f < frames.size(); ++f)
      frames[f].yaw_deg = 4.f * float(std::sin(2 * M_PI * double(f) / 120));
    ClipSpec walk;
    walk.source = write("walk.bvh", mmdb::test::bvhText(frames, extra_joint));
    CookRequest r;
    r.clips = {walk};
    return r;
  }

  // The files in dir_, by name.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

TEST_F(Report, TimelineSplitsEachClipIntoMatchableAndExcludedFrames) {
  const mmdb::Database db = cook(mmdb::test::walkTurnAndPart(dir_), "three.mmdb");
  const Timeline t = clipTimeline(db);
  ASSERT_EQ(t.clips.size(), db.clipCount());
  ASSERT_EQ(t.clips.size(), 4u);  // walk, turn, turn's mirror, walk_part
  EXPECT_EQ(t.frame_count, db.frameCount());
  EXPECT_EQ(t.range_count, db.ranges().size());
  uint32_t matchable = 0, ranges = 0;
  for (const TimelineClip& c : t.clips) {
    uint32_t covered = 0, cursor = 0;
    // Matchable and excluded spans tile the clip, in order, without overlap.
    std::vector<LocalSpan> spans = c.matchable;
    spans.insert(spans.end(), c.excluded.begin(), c.excluded.end());
    std::sort(spans.begin(), spans.end(),
              [](const LocalSpan& x, const LocalSpan& y) { return x.first_local < y.first_local; });
    for (const LocalSpan& s : spans) {
      EXPECT_EQ(s.first_local, cursor) << c.name;
      cursor += s.frame_count;
      covered += s.frame_count;
    }
    EXPECT_EQ(covered, c.frame_count) << c.name;
    matchable += c.matchableFrames();
    ranges += uint32_t(c.matchable.size());
  }
  uint32_t range_frames = 0;
  for (const mmdb::MatchRange& r : db.ranges()) range_frames += r.frame_count;
  EXPECT_EQ(matchable, range_frames);
  EXPECT_EQ(ranges, db.ranges().size());

  const auto mirror = std::find_if(t.clips.begin(), t.clips.end(),
                                   [](const TimelineClip& c) { return c.mirrored; });
  ASSERT_NE(mirror, t.clips.end());
  ASSERT_GE(mirror->mirror_of, 0);
  EXPECT_EQ(t.clips[size_t(mirror->mirror_of)].name, "turn");
  EXPECT_EQ(tagList(t, mirror->tag_mask), "locomotion, turn, mirrored");
  // walk_part's manifest cuts its first 10 source frames out: they come first, excluded.
  const auto part = std::find_if(t.clips.begin(), t.clips.end(),
                                 [](const TimelineClip& c) { return c.name == "walk_part"; });
  ASSERT_NE(part, t.clips.end());
  ASSERT_FALSE(part->excluded.empty());
  EXPECT_EQ(part->excluded.front().first_local, 0u);
  EXPECT_GT(part->excluded.front().frame_count, 0u);
  // Every clip's trailing frames are excluded (1/3 s).
  for (const TimelineClip& c : t.clips) {
    ASSERT_FALSE(c.excluded.empty()) << c.name;
    EXPECT_EQ(c.excluded.back().first_local + c.excluded.back().frame_count, c.frame_count);
  }
}

// Cost biases show on the timeline: each matchable span carries its frames' bias (the clip's
// plus its range's), the tooltips say it, biased spans are outlined, and the clip's row gives
// the span of biases.
TEST_F(Report, TheTimelineShowsEachRangesBias) {
  CookRequest request = straightWalk();
  request.clips[0].bias = 0.25;
  mmdb::cook::SubRangeSpec fast;
  fast.first_frame = 30;
  fast.frame_count = 60;
  fast.bias = -0.5;
  fast.tags = {"fast"};
  request.clips[0].ranges.push_back(fast);
  const mmdb::Database db = cook(request, "biased.mmdb");
  const Timeline t = clipTimeline(db);
  ASSERT_EQ(t.clips.size(), 1u);
  EXPECT_EQ(t.clips[0].bias, 0.25f);
  size_t preferred = 0, clip_only = 0;
  for (const LocalSpan& s : t.clips[0].matchable) {
    EXPECT_EQ(s.bias, db.frameBias(t.clips[0].first_frame + s.first_local));
    if (s.bias == -0.25f) {
      ++preferred;
      EXPECT_EQ(s.first_local, 30u);
      EXPECT_EQ(tagList(t, s.tag_mask), "fast");
    } else {
      EXPECT_EQ(s.bias, 0.25f);
      ++clip_only;
    }
  }
  EXPECT_EQ(preferred, 1u);
  EXPECT_GE(clip_only, 1u);
  for (const LocalSpan& s : t.clips[0].excluded) EXPECT_EQ(s.bias, 0.f);

  const std::string out = (dir_ / "report.html").string();
  writeReport({(dir_ / "biased.mmdb").string(), "", out, ""});
  std::stringstream page;
  page << std::ifstream(out).rdbuf();
  const std::string html = page.str();
  EXPECT_NE(html.find("<rect class=\"range preferred\""), std::string::npos);
  EXPECT_NE(html.find("tags fast, bias -0.25</title>"), std::string::npos);
  EXPECT_NE(html.find("bias +0.25</title>"), std::string::npos);
  EXPECT_NE(html.find("bias -0.25 to +0.25"), std::string::npos);
  EXPECT_NE(html.find("tags -; bias +0.25</title>"), std::string::npos) << "the clip's tooltip";
}

TEST_F(Report, HistogramsCountEveryFrameOfEveryColumnAroundTheMean) {
  const mmdb::Database db = cook(mmdb::test::walkTurnAndPart(dir_), "three.mmdb");
  const std::vector<BlockHistogram> hists = featureHistograms(db, 24);
  ASSERT_EQ(hists.size(), db.featureBlockCount());
  uint32_t columns = 0;
  for (const BlockHistogram& h : hists) {
    ASSERT_EQ(h.counts.size(), h.width) << h.name;
    columns += h.width;
    for (size_t c = 0; c < h.counts.size(); ++c) {
      uint32_t total = 0;
      for (uint32_t n : h.counts[c]) total += n;
      EXPECT_EQ(total, db.frameCount()) << h.name << " column " << c;
      // Normalization subtracts the mean over all frames.
      EXPECT_NEAR(h.mean[c], 0.f, 1e-3f) << h.name << " column " << c;
    }
    EXPECT_LT(h.low, h.high);
  }
  EXPECT_EQ(columns, db.featureCount());
}

TEST_F(Report, ComparedHistogramsPutBothOnTheFirstDatabasesAxis) {
  const mmdb::Database a = cook(mmdb::test::walkTurnAndPart(dir_), "three.mmdb");
  const mmdb::Database walk = cook(straightWalk(), "walk.mmdb");
  ASSERT_EQ(featuresIncomparable(a, walk), "");
  // A against itself: the same bins as A alone.
  const HistogramPair self = comparedHistograms(a, a, 24);
  const std::vector<BlockHistogram> alone = featureHistograms(a, 24);
  for (size_t b = 0; b < alone.size(); ++b) {
    EXPECT_EQ(self.a[b].counts, alone[b].counts) << alone[b].name;
    EXPECT_EQ(self.a[b].low, alone[b].low);
  }
  // A walk on the turns' axis: same bins for both, and the walk's mean is not A's.
  const HistogramPair pair = comparedHistograms(a, walk, 24);
  for (size_t b = 0; b < pair.a.size(); ++b) {
    EXPECT_EQ(pair.a[b].low, pair.b[b].low);
    EXPECT_EQ(pair.a[b].high, pair.b[b].high);
    EXPECT_LE(pair.a[b].low, alone[b].low);
  }

  const mmdb::Database tailed = cook(straightWalk(true), "tailed.mmdb");
  const std::string why = featuresIncomparable(a, tailed);
  EXPECT_NE(why.find("6 joints and B's 7"), std::string::npos) << why;
}

TEST_F(Report, SteadyTrajectoryWithoutTurnIsTheControllersPrediction) {
  const mmdb::ControllerSettings settings;
  for (float direction : {0.f, 90.f, 225.f}) {
    float steady[mmdb::kTrajectoryFloats];
    steadyTrajectory(1.75f, direction, 0.f, settings, steady);
    mmdb::CharacterState state;
    const float a = direction * 3.14159265f / 180;
    state.velocity = glm::vec3(std::sin(a), 0, std::cos(a)) * 1.75f;
    mmdb::StickInput stick;
    stick.desired_velocity = state.velocity;
    float predicted[mmdb::kTrajectoryFloats];
    mmdb::predictTrajectory(state, stick, settings, predicted);
    for (int i = 0; i < mmdb::kTrajectoryFloats; ++i)
      EXPECT_NEAR(steady[i], predicted[i], 1e-4f) << "direction " << direction << " float " << i;
  }
  // Straight ahead at 1.75 m/s: 1.75 m after 1 s, still facing +Z.
  float t[mmdb::kTrajectoryFloats];
  steadyTrajectory(1.75f, 0.f, 0.f, settings, t);
  EXPECT_NEAR(t[4], 0.f, 1e-5f);
  EXPECT_NEAR(t[5], 1.75f, 1e-4f);
  EXPECT_NEAR(t[10], 0.f, 1e-5f);
  EXPECT_NEAR(t[11], 1.f, 1e-5f);
  // Turning left (+) at 90 deg/s: the facing swings towards +X, the path bends the same way,
  // and the spring lags behind the stick's quarter turn.
  steadyTrajectory(1.75f, 0.f, 90.f, settings, t);
  const float facing_angle = std::atan2(t[10], t[11]) * 180 / 3.14159265f;
  EXPECT_GT(facing_angle, 45.f);
  EXPECT_LT(facing_angle, 90.f);
  EXPECT_GT(t[4], 0.1f);
  steadyTrajectory(1.75f, 0.f, -90.f, settings, t);
  EXPECT_LT(t[10], -0.5f);
  // Standing still, not turning: nothing moves.
  steadyTrajectory(0.f, 0.f, 0.f, settings, t);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t[i], 0.f);
}

TEST_F(Report, AStraightWalkCoversWalkingForwardButNotTurningRunningOrStanding) {
  const mmdb::Database db = cook(straightWalk(), "walk.mmdb");
  const CoveragePose pose = representativePose(db);
  ASSERT_GE(pose.frame, 0);
  EXPECT_EQ(pose.clip, "walk");
  EXPECT_NEAR(pose.root_speed, 1.2f, 0.1f);
  ASSERT_EQ(pose.raw.size(), db.featureCount());

  CoverageSettings settings;
  settings.speeds = {0.f, 1.2f, 4.f};
  settings.directions = 4;  // forward, left, backward, right
  settings.turn_rates = {-90.f, 0.f, 90.f};
  const CoverageMap map = coverageMap(db, pose, settings);
  ASSERT_EQ(map.cells.size(), 3u * 3u * 4u);
  for (const CoverageCell& c : map.cells) {
    EXPECT_TRUE(std::isfinite(c.cost));
    EXPECT_GE(c.frame, 0);
  }
  // Turn rate index 1 is straight; speed 1 is the walk's; direction 0 forward.
  const CoverageCell& walk = map.cell(1, 1, 0);
  EXPECT_EQ(walk.speed, 1.2f);
  EXPECT_EQ(walk.direction_deg, 0.f);
  EXPECT_EQ(walk.turn_rate_deg, 0.f);
  // The walk answers its own motion: the cheapest cell of the map, and by far.
  for (size_t i = 0; i < map.cells.size(); ++i)
    if (&map.cells[i] != &walk) {
      EXPECT_GT(map.cells[i].cost, walk.cost) << i;
    }
  EXPECT_GT(map.cell(0, 1, 0).cost, 4 * walk.cost);  // turning right
  EXPECT_GT(map.cell(2, 1, 0).cost, 4 * walk.cost);  // turning left
  EXPECT_GT(map.cell(1, 2, 0).cost, 4 * walk.cost);  // running
  EXPECT_GT(map.cell(1, 0, 0).cost, 4 * walk.cost);  // standing
  EXPECT_GT(map.cell(1, 1, 2).cost, 4 * walk.cost);  // walking backward
  // The worst cells, worst first; standing counts once per turn rate; the walk is not there.
  const std::vector<size_t> worst = map.worst();
  ASSERT_EQ(worst.size(), settings.worst_count);
  for (size_t i = 1; i < worst.size(); ++i)
    EXPECT_GE(map.cells[worst[i - 1]].cost, map.cells[worst[i]].cost);
  for (size_t i : worst) {
    EXPECT_NE(&map.cells[i], &walk);
    EXPECT_TRUE(map.cells[i].speed > 0 || map.cells[i].direction_deg == 0);
  }
  // Running backwards is farther from a 1.2 m/s walk than walking backwards.
  EXPECT_GT(map.cell(1, 2, 2).cost, map.cell(1, 1, 2).cost);
}

TEST_F(Report, DirectionAndTurnNames) {
  EXPECT_EQ(directionName(0), "forward");
  EXPECT_EQ(directionName(90), "left");
  EXPECT_EQ(directionName(-90), "right");
  EXPECT_EQ(directionName(135), "back-left");
  EXPECT_EQ(directionName(30), "30 deg from forward");
  EXPECT_EQ(turnName(0), "not turning");
  EXPECT_EQ(turnName(45), "turning left 45 deg/s");
  EXPECT_EQ(turnName(-90), "turning right 90 deg/s");
}

TEST_F(Report, WritesOneSelfContainedPage) {
  cook(mmdb::test::walkTurnAndPart(dir_), "three.mmdb");
  cook(straightWalk(true), "tailed.mmdb");
  const std::string out = (dir_ / "report.html").string();
  writeReport({(dir_ / "three.mmdb").string(), (dir_ / "tailed.mmdb").string(), out, ""});
  // three.mmdb is reported on (B), compared against tailed.mmdb (A).
  std::stringstream page;
  page << std::ifstream(out).rdbuf();
  const std::string html = page.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* id : {"id=\"timeline\"", "id=\"features\"", "id=\"coverage\"", "id=\"replay\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  // Both replays' motion measures, one table each.
  size_t tables = 0;
  for (size_t at = html.find("<table class=\"motion\""); at != std::string::npos;
       at = html.find("<table class=\"motion\"", at + 1))
    ++tables;
  EXPECT_EQ(tables, 2u);
  EXPECT_NE(html.find("planted toe slide per step (mm): p50, p90, max"), std::string::npos);
  // Nothing to fetch: no external reference of any kind.
  for (const char* ref : {"http://", "https://", " src=", "<link", "@import", "url("})
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  // One order with mmcook diff: the file compared against (--compare, the older) is A, the one
  // reported on B; the page leads with what changed from A to B.
  EXPECT_LT(html.find("A: " + (dir_ / "tailed.mmdb").string()),
            html.find("B: " + (dir_ / "three.mmdb").string()));
  EXPECT_LT(html.find("<section id=\"changes\"><h2>What changed from A to B</h2>"),
            html.find("<section id=\"timeline\">"));
  EXPECT_NE(html.find("<h4>Clips added in B (3)</h4>"), std::string::npos);
  // The skeletons differ: the features and the coverage map say why they are not compared.
  EXPECT_NE(html.find("Not on one axis: A&#39;s skeleton has 7 joints and B&#39;s 6"),
            std::string::npos);
  EXPECT_NE(html.find("Not compared cell by cell"), std::string::npos);
  // Different skeletons play no poses: structure and measures only, with a message.
  EXPECT_NE(html.find("<p class=\"why skeletons-differ\">A and B animate different skeletons "
                      "(A has 7 joints, B 6): their poses are not played."),
            std::string::npos);
  EXPECT_EQ(html.find("class=\"rp-data\""), std::string::npos);
  EXPECT_EQ(html.find("<canvas"), std::string::npos);
  EXPECT_EQ(files(), (std::vector<std::string>{"circle.bvh", "report.html", "tailed.mmdb",
                                               "three.mmdb", "walk.bvh"}));
}

// The clip usage names the clips no character played: every clip of the database is either in
// the usage table or in that list, never both.
TEST_F(Report, TheClipsNeverPlayedAreNamed) {
  const mmdb::Database db = cook(mmdb::test::walkTurnAndPart(dir_), "three.mmdb");
  const std::string out = (dir_ / "report.html").string();
  writeReport({(dir_ / "three.mmdb").string(), "", out, ""});
  std::stringstream page;
  page << std::ifstream(out).rdbuf();
  const std::string html = page.str();
  const std::string usage_tag = "<table class=\"usage\" data-clips-played=\"";
  const std::string list_tag = "<details class=\"never-played\" data-never=\"";
  const size_t usage = html.find(usage_tag);
  ASSERT_NE(usage, std::string::npos);
  const size_t played = std::stoul(html.substr(usage + usage_tag.size()));
  const size_t table_end = html.find("</table>", usage);
  const std::string table = html.substr(usage, table_end - usage);
  ASSERT_LE(played, db.clipCount());
  ASSERT_GE(played, 1u);
  const size_t list = html.find(list_tag);
  if (played == db.clipCount()) {
    EXPECT_EQ(list, std::string::npos);
    EXPECT_NE(html.find("Every clip played (4)."), std::string::npos);
    return;
  }
  ASSERT_NE(list, std::string::npos);
  EXPECT_EQ(std::stoul(html.substr(list + list_tag.size())), db.clipCount() - played);
  const std::string names = html.substr(list, html.find("</details>", list) - list);
  size_t listed = 0;
  for (uint32_t i = 0; i < db.clipCount(); ++i) {
    const std::string name(db.clip(i).name);
    const bool in_list =
        names.find("<span class=\"clip-name\">" + name + "</span>") != std::string::npos;
    const bool in_table = table.find("<td>" + name + "</td>") != std::string::npos;
    EXPECT_NE(in_list, in_table) << name;
    listed += in_list;
  }
  EXPECT_EQ(listed, db.clipCount() - played);
}

std::string format(const char* fmt, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

// The replay section shows what the replay's meter measured, for each database, and the clips
// where feet slide most. The sample's walk_turn.bvh is motion capture: its toes plant.
TEST_F(Report, TheReplayShowsItsMotionMeasuresAndWhereFeetSlide) {
  ClipSpec clip;
  clip.source = std::string(MMDB_TEST_DATA) + "/../../samples/data/walk_turn.bvh";
  CookRequest request;
  request.clips = {clip};
  const mmdb::Database db = cook(request, "walk_turn.mmdb");
  ReportSettings settings;
  settings.replay.characters = 2;
  settings.replay.seconds = 8;
  const ReportDatabase input{"walk_turn.mmdb", &db};
  const std::string html = renderReport(input, nullptr, settings);
  const mmdb::Result<Replay> r = replay(db, mmdb::StickScript::builtIn(), settings.replay);
  ASSERT_TRUE(r) << r.error().message();
  const mmdb::MotionMeasures& m = r->stats.motion;
  ASSERT_GT(m.phase_drift_mm.count, 0u);
  const auto count = [](uint64_t n) { return static_cast<unsigned long long>(n); };
  const auto shown = [&](const std::string& text) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  };
  shown(format("<table class=\"motion\" data-phases=\"%llu\" data-switches=\"%llu\">",
               count(m.phase_drift_mm.count), count(m.switches)));
  shown(
      format("<td>planted toe slide per step (mm): p50, p90, max</td><td class=\"num\">%.2f, "
             "%.2f, %.1f</td>",
             m.planted_slide_mm.p50, m.planted_slide_mm.p90, m.planted_slide_mm.max));
  shown(format(
      "<td>contact phases drifting over 21 mm</td><td class=\"num\">%llu of %llu "
      "(%.1f%%)</td>",
      count(m.phases_over_limit), count(m.phase_drift_mm.count), 100.0 * m.phase_share_over_limit));
  shown(
      format("<td>largest joint step (mm): within 0.6 s of a switch; elsewhere</td><td "
             "class=\"num\">%.1f; %.1f</td>",
             m.max_joint_step_mm[mmdb::kAtSwitch], m.max_joint_step_mm[mmdb::kElsewhere]));
  shown(
      format("<td>switches per character-second (end of range, stick change, periodic)</td><td "
             "class=\"num\">%.2f (",
             m.switch_rate));
  shown(format("<td>sharp turns not answered</td><td class=\"num\">%llu of %llu</td>",
               count(m.responses_missed), count(m.sharp_turns)));
  shown(format(
      "<td>distance to the controller (m): p50, p95, max</td><td class=\"num\">%.3f, "
      "%.3f, %.3f</td>",
      m.controller_distance_m.p50, m.controller_distance_m.p95, m.controller_distance_m.max));
  EXPECT_GT(m.controller_distance_m.count, 0u);
  shown(
      format("<td>adjustment towards the controller per character-second: m; degrees</td><td "
             "class=\"num\">%.3f; %.1f</td>",
             m.adjustment_m_per_s, m.adjustment_deg_per_s));
  // One clip, all its phases.
  ASSERT_EQ(r->stats.slides.size(), 1u);
  const mmdb::ClipSlide& slide = r->stats.slides[0];
  EXPECT_EQ(slide.phases + slide.across_phases, m.phase_drift_mm.count);
  EXPECT_EQ(slide.across_phases, m.phases_across_switch);
  EXPECT_EQ(slide.over_limit + slide.across_over_limit, m.phases_over_limit);
  shown(format("<p class=\"note slide-split\" data-own=\"%llu\" data-across=\"%llu\"",
               count(slide.phases), count(slide.across_phases)));
  if (slide.over_limit > 0) {
    shown("<h4>Clips where feet slide most</h4><p class=\"note slide-split\"");
    shown(format(
        "<tr data-clip=\"0\"><td>walk_turn</td><td class=\"num\">%llu</td><td "
        "class=\"num\">%llu</td><td class=\"num\">%.1f</td><td class=\"num\">%.1f</td>",
        count(slide.phases), count(slide.over_limit), slide.mean_drift_mm, slide.max_drift_mm));
  } else {
    shown("<p class=\"note no-sliding-clip\">");
  }

  // Compared: each database has its own tables.
  const std::string both = renderReport(input, &input, settings);
  size_t tables = 0;
  for (size_t at = both.find("<table class=\"motion\""); at != std::string::npos;
       at = both.find("<table class=\"motion\"", at + 1))
    ++tables;
  EXPECT_EQ(tables, 2u);
}

TEST_F(Report, PoseQuantizationIsWithinHalfAMillimetreAndClamps) {
  for (float m = -32.7f; m <= 32.7f; m += 0.0013f)
    ASSERT_LE(std::abs(replayMillimetres(m) / 1000.0 - double(m)), 0.0005 + 1e-9) << m;
  EXPECT_EQ(replayMillimetres(40.f), 32767);
  EXPECT_EQ(replayMillimetres(-40.f), -32767);
  EXPECT_EQ(replayMillimetres(std::nanf("")), 0);
  EXPECT_EQ(replayMillimetres(0.0004f), 0);
  EXPECT_EQ(replayMillimetres(-0.0016f), -2);
}

TEST_F(Report, Base64RoundTripsEveryLength) {
  EXPECT_EQ(base64("", 0), "");
  EXPECT_EQ(base64("f", 1), "Zg==");
  EXPECT_EQ(base64("fo", 2), "Zm8=");
  EXPECT_EQ(base64("foo", 3), "Zm9v");
  EXPECT_EQ(base64("foobar", 6), "Zm9vYmFy");
  std::vector<uint8_t> bytes;
  for (int n = 0; n < 70; ++n) {
    EXPECT_EQ(unbase64(base64(bytes.data(), bytes.size())), bytes) << n;
    bytes.push_back(uint8_t(n * 37 + 11));
  }
  EXPECT_TRUE(unbase64("Zm9").empty());
  EXPECT_TRUE(unbase64("Z=9v").empty());
}

// A page holds the first kMaxPlayerSwitches switches, and candidates for the switches of the first
// characters within kMaxExplainedSwitches (character 0's always).
TEST_F(Report, ThePlayersSwitchesAndCandidatesAreBounded) {
  const mmdb::Database db = cook(straightWalk(), "walk.mmdb");
  Replay r;
  r.poses.characters = 3;
  r.poses.joints = db.jointCount();
  r.poses.samples = 1;
  r.poses.offsets_mm.assign(3 * db.jointCount() * 3, 0);
  const auto jumps = [&](uint32_t character, size_t n) {
    for (size_t k = 0; k < n; ++k) {
      ReplayJump j{0.0, character, -1, 0, 1.f, mmdb::SearchReason::Start};
      j.candidates.resize(2);
      r.jumps.push_back(j);
    }
  };
  const auto count = [](const std::string& json, const std::string& what) {
    size_t n = 0;
    for (size_t at = json.find(what); at != std::string::npos; at = json.find(what, at + 1)) ++n;
    return n;
  };
  jumps(0, 1500);
  jumps(1, 400);
  jumps(2, 200);
  std::string json = replayPlayerJson(db, r, "A");
  EXPECT_NE(json.find("\"explainedCharacters\":2,\"switchCount\":2100,"), std::string::npos);
  EXPECT_EQ(count(json, ",[[-1,-1,"), 1900u);  // each explained switch's first candidate
  r.jumps.clear();
  jumps(0, kMaxPlayerSwitches + 10);
  json = replayPlayerJson(db, r, "A");
  EXPECT_NE(json.find("\"explainedCharacters\":1,"), std::string::npos);
  EXPECT_EQ(count(json, ",[[-1,-1,"), kMaxPlayerSwitches);
}

TEST_F(Report, PredictedStreamsAreExactAndSmoothMotionTakesHalfAByte) {
  // Two values a sample. The first: 0, 5, 10 (on the line: residual 0), 13 (2 under it). The
  // second jumps across int16's range, so each of its samples but the second is the value itself.
  const std::vector<int16_t> values{0, -32768, 5, -32768, 10, 32767, 13, 32767};
  const std::vector<uint8_t> packed = packPredicted(values, 2);
  // Nibbles: 0, 9 0 0 0 8 | 5, 0 | 0, 9 f f f 7 | e, 9 f f f 7: 20, in 10 bytes.
  const std::vector<uint8_t> expected{0x90, 0x00, 0x80, 0x05, 0x90, 0xFF, 0x7F, 0x9E, 0xFF, 0x7F};
  EXPECT_EQ(packed, expected);
  EXPECT_EQ(unpackPredicted<int16_t>(packed, values.size(), 2), values);
  EXPECT_TRUE(unpackPredicted<int16_t>(packed, values.size() + 1, 2).empty());
  EXPECT_TRUE(unpackPredicted<int16_t>(std::vector<uint8_t>(packed.begin(), packed.end() - 1), 8, 2)
                  .empty());
  // Residuals past a nibble's -6..7 and within an int8: nibble 8 and two more (100 = 0x64, -7 =
  // 0xf9): 0, 8 4 6, 8 4 6, 8 9 f.
  const std::vector<int16_t> bytes{0, 100, 300, 493};
  const std::vector<uint8_t> byte_expected{0x80, 0x64, 0x48, 0x86, 0xF9};
  EXPECT_EQ(packPredicted(bytes, 1), byte_expected);
  EXPECT_EQ(unpackPredicted<int16_t>(byte_expected, 4, 1), bytes);
  // An odd count of nibbles leaves the last half byte 0; anything else there is not a stream.
  const std::vector<int16_t> three{1, 2, 3};
  std::vector<uint8_t> odd = packPredicted(three, 1);
  ASSERT_EQ(odd.size(), 2u);
  EXPECT_EQ(unpackPredicted<int16_t>(odd, 3, 1), three);
  odd.back() |= 0x30;
  EXPECT_TRUE(unpackPredicted<int16_t>(odd, 3, 1).empty());
  // A residual that would leave the type is not a stream either: 32767 then a nibble of +7.
  // (32767 itself, 32767 on the line, then +7 on 32767.)
  EXPECT_TRUE(unpackPredicted<int16_t>({0xF9, 0xFF, 0x07, 0x07}, 3, 1).empty());

  // int32 at its limits and a smooth path: exact, and the path in half a byte a value.
  std::vector<int32_t> wide;
  for (int i = 0; i < 1000; ++i) {
    const double t = i / 60.0;
    wide.push_back(int32_t(std::lround(1000.0 * std::sin(t) + 1500.0 * t)));
    wide.push_back(i % 97 == 0 ? (i % 2 ? INT32_MIN : INT32_MAX) : int32_t(std::lround(4.0 * t)));
  }
  const std::vector<uint8_t> stream = packPredicted(wide, 2);
  EXPECT_EQ(unpackPredicted<int32_t>(stream, wide.size(), 2), wide);
  EXPECT_LT(stream.size(), wide.size() / 2 + 200);
}

// The packed array named `key` of a player's JSON, decoded.
std::vector<uint8_t> packedArray(const std::string& json, const std::string& key) {
  const std::string start = "\"" + key + "\":\"";
  const size_t at = json.find(start);
  if (at == std::string::npos) return {};
  const size_t from = at + start.size();
  return unbase64(json.substr(from, json.find('"', from) - from));
}

// The skeleton replay keeps every character's posed joints after every step, in millimetres
// around where the character stands, without changing what the replay decides; the page embeds
// exactly those numbers.
TEST_F(Report, TheSkeletonReplayKeepsEveryCharactersPoseAndTheCandidatesOfEachJump) {
  ClipSpec clip;
  clip.source = std::string(MMDB_TEST_DATA) + "/../../samples/data/walk_turn.bvh";
  CookRequest request;
  request.clips = {clip};
  const mmdb::Database db = cook(request, "walk_turn.mmdb");
  ReplaySettings settings;
  settings.characters = 3;
  settings.seconds = 4;
  const mmdb::Result<Replay> plain = replay(db, mmdb::StickScript::builtIn(), settings);
  settings.keep_poses = true;
  const mmdb::Result<Replay> kept = replay(db, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(plain && kept);
  EXPECT_EQ(plain->stats.decisions, kept->stats.decisions);
  EXPECT_EQ(plain->jumps.size(), kept->jumps.size());
  EXPECT_EQ(plain->stats.motion.planted_slide_mm.max, kept->stats.motion.planted_slide_mm.max);
  EXPECT_EQ(plain->poses.samples, 0u);

  const ReplayPoses& p = kept->poses;
  const size_t steps = 240, elements = steps * 3;
  ASSERT_EQ(p.stride, 1u);
  ASSERT_EQ(p.samples, steps);
  EXPECT_EQ(p.joints, db.jointCount());
  EXPECT_EQ(p.offsets_mm.size(), elements * db.jointCount() * 3);
  for (const auto size : {p.contacts.size(), p.locked.size(), p.slide_mm.size(), p.gap_m.size(),
                          p.pose_step_mm.size(), p.switched.size(), p.clip.size()})
    EXPECT_EQ(size, elements);
  EXPECT_EQ(p.ground_mm.size(), elements * 4);
  // Planted toes stand on the ground, and the skeleton stands around its root: a joint's offset
  // from where the character stands is under 2 m.
  ASSERT_FALSE(db.contactJoints().empty());
  size_t planted = 0;
  for (uint32_t s = 10; s < p.samples; ++s)
    for (uint32_t c = 0; c < p.characters; ++c) {
      for (uint32_t j = 0; j < p.joints; ++j)
        for (int k = 0; k < 3; ++k)
          ASSERT_LT(std::abs(p.offsets_mm[(p.at(s, c) * p.joints + j) * 3 + k]), 2000);
      for (size_t t = 0; t < db.contactJoints().size(); ++t)
        if (p.contacts[p.at(s, c)] >> t & 1) {
          const int32_t toe = db.contactJoints()[t];
          EXPECT_LT(std::abs(p.offsets_mm[(p.at(s, c) * p.joints + uint32_t(toe)) * 3 + 1]), 150);
          ++planted;
        }
    }
  EXPECT_GT(planted, elements / 4);
  // Switches: each jump keeps its candidates, the winner first with the jump's cost.
  ASSERT_FALSE(kept->jumps.empty());
  for (const ReplayJump& j : kept->jumps) {
    ASSERT_FALSE(j.candidates.empty());
    EXPECT_LE(j.candidates.size(), kReplayCandidates);
    EXPECT_EQ(j.candidates[0].frame, j.to_frame);
    EXPECT_NEAR(j.candidates[0].cost, j.cost, 1e-3f * std::max(1.f, j.cost));
  }
  size_t switched = 0;
  for (uint8_t s : p.switched) switched += s;
  EXPECT_GE(switched, 3u);  // each character's first pose, at least

  // The page's data: the same numbers, and its size as replayPlayerBytes() says.
  const std::string json = replayPlayerJson(db, kept.value(), "A");
  const std::vector<uint8_t> packed = packedArray(json, "poses");
  EXPECT_EQ(packed, packPoses(p));
  EXPECT_EQ(unpackPoses(packed, p.characters, p.joints, p.samples), p.offsets_mm);
  // Mostly residuals of a nibble: under a third of int16's size.
  EXPECT_LT(packed.size(), p.offsets_mm.size() * 2 / 3);
  EXPECT_GE(packed.size(), p.offsets_mm.size() / 2);
  const std::vector<uint8_t> ground = packedArray(json, "ground");
  EXPECT_EQ(unpackPredicted<int32_t>(ground, p.ground_mm.size(), size_t(p.characters) * 4),
            p.ground_mm);
  EXPECT_LT(ground.size(), p.ground_mm.size());  // under a byte a value, not 4
  EXPECT_EQ(packedArray(json, "slide").size(), elements * 2);
  EXPECT_GT(json.size(), replayPlayerBytes(kept.value()));
  EXPECT_LT(json.size(), replayPlayerBytes(kept.value()) + 20000);
  EXPECT_EQ(json.find("</"), std::string::npos);

  // A replay longer than the budget keeps every stride-th step, within the budget.
  settings.max_pose_bytes = 100000;
  const mmdb::Result<Replay> thin = replay(db, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(thin);
  const size_t per_step = 3 * db.jointCount() * 3 * 2;
  EXPECT_EQ(thin->poses.stride, (steps + 100000 / per_step - 1) / (100000 / per_step));
  EXPECT_EQ(thin->poses.samples, (steps + thin->poses.stride - 1) / thin->poses.stride);
  EXPECT_LE(thin->poses.offsets_mm.size() * 2, 100000u);
  EXPECT_GT(thin->poses.stride, 1u);

  // The page: a skeleton section with one player's data per database.
  ReportSettings report;
  report.replay = settings;
  report.replay.max_pose_bytes = ReplaySettings{}.max_pose_bytes;
  const ReportDatabase input{"walk_turn.mmdb", &db};
  const std::string html = renderReport(input, &input, report);
  EXPECT_NE(html.find("<section id=\"skeleton\"><h2>Skeleton replay</h2>"), std::string::npos);
  size_t players = 0;
  for (size_t at = html.find("class=\"rp-data\""); at != std::string::npos;
       at = html.find("class=\"rp-data\"", at + 1))
    ++players;
  EXPECT_EQ(players, 2u);
  EXPECT_NE(
      html.find(format("data-samples=\"%u\" data-switches=\"%zu\"", p.samples, kept->jumps.size())),
      std::string::npos);
}

// A straight walk at `speed` m/s whose planted feet stay where they plant in the world, or, with
// `slide` m/s, creep forward at that speed while planted (a clip that slides). The heading wobbles
// by 4 degrees over 4 s (a facing that never changes has no spread to normalize); the feet's
// channels are their world positions less the hips', turned back by that yaw, so the wobble moves
// no planted foot.
std::vector<mmdb::test::BvhFrame> plantedWalk(int count, float speed, float slide) {
  const auto foot = [&](int f) {  // world z, cm: planted for frames 0..15 of each 30
    const int k = f / 30, phase = f % 30;
    const float base = 100 * speed * k, crept = 100 * slide * 15 / 30.f;
    if (phase <= 15) return base + 100 * slide * float(phase) / 30.f;
    return base + crept + (100 * speed - crept) * float(phase - 15) / 15.f;
  };
  std::vector<mmdb::test::BvhFrame> frames;
  for (int f = 0; f < count; ++f) {
    const float hz = 100 * speed * float(f) / 30.f;
    const float yaw = 4.f * float(std::sin(2 * M_PI * double(f) / 120));
    const float c = std::cos(glm::radians(yaw)), s = std::sin(glm::radians(yaw));
    const auto local = [&](float x, float z) {  // R_y(-yaw) (world - hips)
      const float dz = z - hz;
      return glm::vec3(x * c - dz * s, -80.f, x * s + dz * c);
    };
    frames.push_back({{0, 90, hz}, yaw, local(10, foot(f)), local(-10, foot(f + 15) - 50 * speed)});
  }
  return frames;
}

// A clip whose own feet are clean is never named where feet slide, however much its phases
// slide across the switches of a crowd playing it: played straight from its frames it slides
// nothing, its phases across a switch are counted apart from its own, and any own phase that
// slides in play is the runtime's, said so. A clip that slides on its own is named, with its
// straight baseline.
TEST_F(Report, ACleanClipSlidingOnlyAcrossSwitchesIsNotNamed) {
  ClipSpec clean, sliding;
  clean.source = write("clean.bvh", mmdb::test::bvhText(plantedWalk(301, 1.2f, 0.f)));
  sliding.source = write("sliding.bvh", mmdb::test::bvhText(plantedWalk(301, 1.2f, 0.12f)));
  CookRequest request;
  request.clips = {clean, sliding};
  const mmdb::Database db = cook(request, "two.mmdb");
  ASSERT_EQ(db.clipCount(), 2u);
  ASSERT_FALSE(db.contactJoints().empty());
  ASSERT_EQ(db.clip(0).name, "clean");

  // Played straight, from the file's frames.
  const mmdb::Result<std::vector<mmdb::ClipSlide>> straight = straightClipSlides(db, 21.0);
  ASSERT_TRUE(straight) << straight.error().message();
  ASSERT_EQ(straight->size(), 2u);
  const mmdb::ClipSlide& clean_straight = straight.value()[0];
  EXPECT_GE(clean_straight.phases, 10u);
  EXPECT_EQ(clean_straight.over_limit, 0u);
  EXPECT_LT(clean_straight.max_drift_mm, 8.0);  // the wobbling yaw turns the toe about the foot
  EXPECT_EQ(clean_straight.across_phases, 0u);
  const mmdb::ClipSlide& sliding_straight = straight.value()[1];
  EXPECT_GE(sliding_straight.phases, 10u);
  EXPECT_EQ(sliding_straight.over_limit, sliding_straight.phases);
  EXPECT_GT(sliding_straight.mean_drift_mm, 40.0);  // 0.12 m/s for about half a second
  EXPECT_LT(sliding_straight.mean_drift_mm, 80.0);

  // Played by a crowd that switches, with the clips' own feet (foot locking would hold them). The
  // stick asks for what the clips do, straight ahead at two speeds, so that the runtime's
  // synchronization has little to take up: what slides is the clips' and the switches'.
  std::vector<mmdb::StickSegment> segments(2);
  segments[0].name = "slower";
  segments[0].seconds = 4;
  segments[0].magnitude = 0.8f;
  segments[1].name = "faster";
  segments[1].seconds = 4;
  segments[1].magnitude = 1.f;
  const mmdb::Result<mmdb::StickScript> script = mmdb::StickScript::fromSegments(segments);
  ASSERT_TRUE(script) << script.error().message();
  ReportSettings settings;
  settings.replay.characters = 6;
  settings.replay.seconds = 20;
  settings.replay.feet = ReplayFeet::Clips;
  settings.script = &script.value();
  const mmdb::Result<Replay> r = replay(db, script.value(), settings.replay);
  ASSERT_TRUE(r) << r.error().message();
  const mmdb::MotionMeasures& m = r->stats.motion;
  ASSERT_GT(m.switches, 10u);
  const mmdb::ClipSlide* clean_played = nullptr;
  uint64_t own = 0, across = 0, across_over = 0;
  for (const mmdb::ClipSlide& c : r->stats.slides) {
    if (c.clip == 0) clean_played = &c;
    own += c.phases;
    across += c.across_phases;
    across_over += c.across_over_limit;
  }
  EXPECT_EQ(own + across, m.phase_drift_mm.count);
  EXPECT_EQ(across, m.phases_across_switch);
  EXPECT_EQ(across_over, m.phases_across_switch_over_limit);
  ASSERT_NE(clean_played, nullptr);
  EXPECT_GT(clean_played->phases + clean_played->across_phases, 10u);
  // Its phases across a switch are there, apart: the transitions slide it far over the limit.
  EXPECT_GT(clean_played->across_phases, clean_played->phases);
  EXPECT_GT(clean_played->across_over_limit, 0u);
  EXPECT_GT(clean_played->across_mean_drift_mm, 21.0);
  EXPECT_GT(across_over, 0u);

  const ReportDatabase input{"two.mmdb", &db};
  const std::string html = renderReport(input, nullptr, settings);
  const size_t split = html.find("<p class=\"note slide-split\"");
  ASSERT_NE(split, std::string::npos);
  EXPECT_EQ(html.find(format("data-own=\"%llu\" data-across=\"%llu\" data-across-over=\"%llu\"",
                             static_cast<unsigned long long>(own),
                             static_cast<unsigned long long>(across),
                             static_cast<unsigned long long>(across_over))),
            split + std::string("<p class=\"note slide-split\" ").size());
  const std::string slides = html.substr(split, html.find("</section>", split) - split);
  // The clean clip is never named where feet slide: played straight it slides nothing. Where its
  // own phases slide in play (the runtime's synchronization), it is listed as clean played
  // straight.
  EXPECT_EQ(slides.find("<tr data-clip=\"0\">"), std::string::npos) << slides;
  EXPECT_EQ(slides.find("<tr data-clip=\"0\"><td>clean</td>"), std::string::npos);
  EXPECT_EQ(slides.find("<p class=\"note clean-straight\"") != std::string::npos,
            clean_played->over_limit > 0)
      << slides;
  // The clip that slides on its own is named, with what it does played straight, wherever its
  // own phases slide in play.
  const mmdb::ClipSlide* sliding_played = nullptr;
  for (const mmdb::ClipSlide& c : r->stats.slides)
    if (c.clip == 1) sliding_played = &c;
  const size_t row = slides.find("<tr data-clip=\"1\"><td>sliding</td>");
  EXPECT_EQ(row != std::string::npos, sliding_played && sliding_played->over_limit > 0) << slides;
  if (row != std::string::npos) {
    EXPECT_NE(slides.find(format("<td class=\"num\">%llu of %llu</td><td class=\"num\">%.1f</td>",
                                 static_cast<unsigned long long>(sliding_straight.over_limit),
                                 static_cast<unsigned long long>(sliding_straight.phases),
                                 sliding_straight.mean_drift_mm),
                          row),
              std::string::npos);
  }
  EXPECT_NE(html.find("data-feet=\"clips\""), std::string::npos);
}

// The replay runs as a game runs the crowd, foot locking on, unless --replay-feet clips asks for
// the clips' own feet: locked toes are then recorded (the skeleton replay's red squares), and
// with the clips' feet never.
TEST_F(Report, TheReplayLocksFeetUnlessAskedForTheClips) {
  ClipSpec clip;
  clip.source = std::string(MMDB_TEST_DATA) + "/../../samples/data/walk_turn.bvh";
  CookRequest request;
  request.clips = {clip};
  const mmdb::Database db = cook(request, "walk_turn.mmdb");
  ReplaySettings settings;
  EXPECT_EQ(settings.feet, ReplayFeet::Locked);  // the default
  settings.characters = 2;
  settings.seconds = 6;
  settings.keep_poses = true;
  const auto locked = [](const Replay& r) {
    size_t n = 0;
    for (const uint8_t bits : r.poses.locked) n += bits != 0 ? 1 : 0;
    return n;
  };
  const mmdb::Result<Replay> with_locks = replay(db, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(with_locks) << with_locks.error().message();
  EXPECT_GT(locked(with_locks.value()), with_locks->poses.locked.size() / 10);
  settings.feet = ReplayFeet::Clips;
  const mmdb::Result<Replay> clips = replay(db, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(clips) << clips.error().message();
  EXPECT_EQ(locked(clips.value()), 0u);
  EXPECT_EQ(with_locks->locking_unavailable, "");
  // A skeleton without knees cannot be bent to a held toe: its replay shows the clips' feet and
  // says why.
  const mmdb::Database kneeless = cook(straightWalk(), "kneeless.mmdb");
  settings.feet = ReplayFeet::Locked;
  const mmdb::Result<Replay> unbent = replay(kneeless, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(unbent) << unbent.error().message();
  EXPECT_NE(unbent->locking_unavailable, "");
  EXPECT_EQ(locked(unbent.value()), 0u);
  {
    ReportSettings kneeless_page;
    kneeless_page.replay.characters = 1;
    kneeless_page.replay.seconds = 2;
    const ReportDatabase input{"kneeless.mmdb", &kneeless};
    std::string why;  // as the page escapes it
    for (const char c : unbent->locking_unavailable) why += c == '\'' ? "&#39;" : std::string(1, c);
    EXPECT_NE(renderReport(input, nullptr, kneeless_page)
                  .find("<p class=\"why locking-unavailable\">foot locking cannot bend this "
                        "skeleton's legs (" +
                        why + ")"),
              std::string::npos)
        << unbent->locking_unavailable;
  }
  settings.feet = ReplayFeet::Clips;
  // Held toes slide less than the clips' own.
  EXPECT_LT(with_locks->stats.motion.phase_drift_mm.mean, clips->stats.motion.phase_drift_mm.mean);

  // The page says which, and writeReport takes the option.
  ReportSettings page_settings;
  page_settings.replay.characters = 1;
  page_settings.replay.seconds = 2;
  const ReportDatabase input{"walk_turn.mmdb", &db};
  EXPECT_NE(renderReport(input, nullptr, page_settings).find("data-feet=\"locked\""),
            std::string::npos);
  ReportOptions options;
  options.database = (dir_ / "walk_turn.mmdb").string();
  options.output = (dir_ / "out.html").string();
  options.replay_feet = "held";
  try {
    writeReport(options);
    ADD_FAILURE() << "no error for --replay-feet held";
  } catch (const mmdb::cook::UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--replay-feet wants locked (foot locking on, as a game runs) or clips (the "
                 "clips' own feet), got 'held'");
  }
  options.replay_feet = "clips";
  options.characters = 1;
  options.seconds = 2;
  writeReport(options);
  std::ifstream written(options.output);
  const std::string page((std::istreambuf_iterator<char>(written)), {});
  EXPECT_NE(page.find("data-feet=\"clips\""), std::string::npos);
}

// A change is (B - A) / |A|, on the page and in mmcook diff: a foot slide of 39.5 mm that grows to
// 50.5 mm is +27.8 % (not +22 %, over the larger), a cost that nearly triples +182 %, and a
// regression may go past +100 %. Where A is 0 there is no ratio: "new" and B - A.
TEST(MeasureChange, IsBMinusAOverTheMagnitudeOfA) {
  EXPECT_EQ(changeText(39.5, 50.5), "+27.8%");
  EXPECT_NEAR(measureChange(39.5, 50.5).relative, 11.0 / 39.5, 1e-12);
  EXPECT_EQ(changeText(98.8, 279.0), "+182.4%");
  EXPECT_EQ(changeText(1158, 774), "-33.2%");
  EXPECT_EQ(changeText(10, 35), "+250.0%");
  EXPECT_EQ(changeText(-2, -1), "+50.0%");  // over |A|: a rise is +, whatever A's sign
  EXPECT_EQ(changeText(-2, -3), "-50.0%");
  EXPECT_EQ(changeText(0, 2.5), "new (+2.5)");
  EXPECT_EQ(changeText(0, -4), "new (-4)");
  EXPECT_FALSE(measureChange(0, 2.5).has_relative);
  EXPECT_EQ(measureChange(0, 2.5).absolute, 2.5);
  EXPECT_EQ(changeText(0, 0), "0");
  EXPECT_EQ(changeText(3, 3), "+0.0%");
  EXPECT_EQ(changeText(std::nan(""), 3), "-");
  // Moved: beyond a rounding.
  EXPECT_TRUE(measureMoved(1158, 774));
  EXPECT_TRUE(measureMoved(0, 1e-9));
  EXPECT_FALSE(measureMoved(0, 0));
  EXPECT_FALSE(measureMoved(100, 100 + 1e-5));
  EXPECT_TRUE(measureMoved(100, 100.01));
}

// What changed lists every measure of the replay that moved, each motion measure by its --fail-on
// key, with its change over |A|; the ones that did not move are named under the table, with the
// rule, once.
TEST_F(Report, WhatChangedListsEveryMeasureThatMoved) {
  const CookRequest old_request = straightWalk();
  CookRequest new_request = straightWalk();
  new_request.settings.weights[mmdb::cook::kBlockTrajectoryDirection] *= 0.2f;
  const mmdb::Database a = cook(old_request, "old.mmdb");
  const mmdb::Database b = cook(new_request, "new.mmdb");
  ReportSettings settings;
  settings.replay.characters = 2;
  settings.replay.seconds = 6;
  const ReportDatabase input_a{"old.mmdb", &a}, input_b{"new.mmdb", &b};
  const std::string html = renderReport(input_a, &input_b, settings);
  const mmdb::Result<Replay> ra = replay(a, mmdb::StickScript::builtIn(), settings.replay);
  const mmdb::Result<Replay> rb = replay(b, mmdb::StickScript::builtIn(), settings.replay);
  ASSERT_TRUE(ra && rb);
  const size_t table = html.find("<table class=\"measures-ab\"");
  ASSERT_NE(table, std::string::npos);
  const size_t end = html.find("</table>", table);
  const std::string rows = html.substr(table, end - table);
  const size_t rule = html.find("<p class=\"note change-rule\">", end);
  ASSERT_NE(rule, std::string::npos);
  const std::string still = html.substr(rule, html.find("</p>", rule) - rule);
  size_t moved = 0, listed = 0;
  for (const MotionKey& k : motionKeys()) {
    const double va = k.of(ra->stats.motion), vb = k.of(rb->stats.motion);
    const std::string name =
        std::string("<tr><td>") + k.key +
        (k.unit == MeasureUnit::Ratio || k.unit == MeasureUnit::Count ? "</td>" : " (");
    const std::string cells =
        format("<td class=\"num\">%.4g</td><td class=\"num\">%.4g</td>", va, vb);
    if (measureMoved(va, vb)) {
      ++moved;
      const size_t at = rows.find(name);
      ASSERT_NE(at, std::string::npos) << k.key << " moved from " << va << " to " << vb;
      EXPECT_NE(rows.find(cells + "<td class=\"num\" style=\"color:", at), std::string::npos)
          << k.key;
      EXPECT_NE(rows.find(">" + changeText(va, vb) + "</td></tr>", at), std::string::npos) << k.key;
    } else {
      EXPECT_EQ(rows.find(name), std::string::npos) << k.key << " did not move";
      EXPECT_NE(still.find(k.key), std::string::npos) << k.key;
    }
    ++listed;
  }
  EXPECT_GT(moved, 3u);  // a fifth of the direction weight changes what the crowd plays
  EXPECT_NE(html.find(format("data-measures=\"%zu\"", listed + 5)), std::string::npos);
  // The rule, once on the page.
  const std::string rule_text = "change = (B - A) / |A|; where A is 0, &quot;new&quot; and B - A";
  EXPECT_NE(still.find(rule_text), std::string::npos) << still;
  EXPECT_EQ(html.find(rule_text, html.find(rule_text) + 1), std::string::npos);
}

// Compared, the page leads with the structure mmcook diff finds: a weight change is listed, with
// the note that costs are on different scales, and the replay's measures follow, the cost last.
TEST_F(Report, TheComparePageLeadsWithAWeightChangeAndItsNote) {
  const CookRequest old_request = straightWalk();
  CookRequest new_request = straightWalk();
  new_request.settings.weights[mmdb::cook::kBlockTrajectoryDirection] *= 0.2f;
  const mmdb::Database a = cook(old_request, "old.mmdb");
  const mmdb::Database b = cook(new_request, "new.mmdb");
  ReportSettings settings;
  settings.replay.characters = 2;
  settings.replay.seconds = 3;
  const ReportDatabase input_a{"old.mmdb", &a}, input_b{"new.mmdb", &b};
  const std::string html = renderReport(input_a, &input_b, settings);
  const size_t changes = html.find("<section id=\"changes\">");
  ASSERT_NE(changes, std::string::npos);
  EXPECT_LT(changes, html.find("<section id=\"timeline\">"));
  EXPECT_NE(html.find("<p class=\"why weights-differ\">Block weights differ"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"structure\" data-changes=\"1\">"), std::string::npos);
  const size_t row = html.find("<tr data-setting=\"weight.trajectory_direction\">");
  ASSERT_NE(row, std::string::npos);
  EXPECT_NE(html.find(format("<td class=\"num\">%g</td><td class=\"num\">%g</td>",
                             double(a.featureBlock(a.featureBlockCount() - 1).weight),
                             double(b.featureBlock(b.featureBlockCount() - 1).weight)),
                      row),
            std::string::npos);
  // The measures of both, the cost last and marked.
  const size_t table = html.find("<table class=\"measures-ab\"");
  const size_t end = html.find("</table>", table);
  ASSERT_NE(table, std::string::npos);
  const size_t cost = html.find("cost of the winners, mean (different scales)", table);
  EXPECT_LT(cost, end);
  // Only the other cost after it.
  for (size_t at = html.find("<tr>", cost); at < end; at = html.find("<tr>", at + 1))
    EXPECT_NE(html.substr(at, html.find("</tr>", at) - at).find("(different scales)"),
              std::string::npos);
  EXPECT_LT(html.find("feature distance of the winners at unit weights, mean", table), cost);
  // That distance takes the weights out: between the same two frames it is A's in B, while the
  // costs' feature parts differ by the weight squared in the changed block.
  ASSERT_EQ(a.frameCount(), b.frameCount());
  for (uint32_t from : {0u, 20u}) {
    for (uint32_t to : {5u, 40u, a.frameCount() - 1}) {
      mmdb::SearchRequest qa, qb;
      qa.query = a.featureRow(from);
      qb.query = b.featureRow(from);
      const double da = unitWeightDistance(a, qa, int32_t(to));
      const double db = unitWeightDistance(b, qb, int32_t(to));
      EXPECT_GT(da, 0.0);
      EXPECT_NEAR(db, da, 1e-4 * da) << from << " -> " << to;
      // Run-time weights scale the search's sum, not the query: the distance stays.
      std::vector<float> twice(a.featureBlockCount(), 2.f);
      qa.block_weights = mmdb::Span<const float>(twice.data(), twice.size());
      EXPECT_NEAR(unitWeightDistance(a, qa, int32_t(to)), da, 1e-4 * da);
    }
  }
  // By hand for one pair: ((query - feature) / weight)^2 over every column.
  {
    mmdb::SearchRequest q;
    q.query = a.featureRow(3);
    double expected = 0.0;
    for (uint32_t block = 0; block < a.featureBlockCount(); ++block) {
      const mmdb::FeatureBlockInfo info = a.featureBlock(block);
      for (uint32_t c = info.first_column; c < info.first_column + info.width; ++c) {
        const double d = (a.featureRow(3)[c] - a.featureRow(30)[c]) / info.weight;
        expected += d * d;
      }
    }
    EXPECT_NEAR(unitWeightDistance(a, q, 30), expected, 1e-6 * expected);
    EXPECT_EQ(unitWeightDistance(a, q, 3), 0.0);
    EXPECT_EQ(unitWeightDistance(a, q, -1), 0.0);
  }
  // A database without contact joints says so in the skeleton replay, and still plays.
  EXPECT_EQ(html.find("The database has no contact joints") != std::string::npos,
            a.contactJoints().empty());
  EXPECT_NE(html.find("class=\"rp-data\" data-side=\"1\""), std::string::npos);
  // The same file twice: one line for the structure, no note.
  const std::string same = renderReport(input_a, &input_a, settings);
  EXPECT_NE(same.find("<p class=\"same\">Same structure"), std::string::npos)
      << same.substr(same.find("<section id=\"changes\">"), 2500);
  EXPECT_EQ(same.find("weights-differ"), std::string::npos);
  // Clips, ranges and tags that do not differ fold the timeline to one line.
  EXPECT_NE(html.find("<section id=\"timeline\"><details class=\"same\"><summary><h2 "
                      "style=\"display:inline\">Clip timeline</h2>: the same in A and B (1 clip,"),
            std::string::npos);
}

TEST_F(Report, ABadDatabaseIsNamedAndLeavesNoPage) {
  cook(straightWalk(), "walk.mmdb");
  const std::string bad = write("bad.mmdb", "this is not a motion-matching database");
  const std::string out = (dir_ / "report.html").string();
  write("report.html", "the previous report");
  for (const ReportOptions& options :
       {ReportOptions{bad, "", out, ""}, ReportOptions{(dir_ / "walk.mmdb").string(), bad, out, ""},
        ReportOptions{(dir_ / "missing.mmdb").string(), "", out, ""}}) {
    try {
      writeReport(options);
      ADD_FAILURE() << "no error for " << options.database << " / " << options.compare;
    } catch (const mmdb::cook::InputError& e) {
      const std::string& named = options.compare.empty() ? options.database : options.compare;
      EXPECT_NE(std::string(e.what()).find("'" + named + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(options.compare.empty() ? "cannot report on database"
                                                                   : "--compare database"),
                std::string::npos)
          << e.what();
    }
  }
  // A stick file that does not parse: named, with its line.
  const std::string stick = write("bad.stick", "1.0 0 2 walk pushed too far\n");
  try {
    writeReport({(dir_ / "walk.mmdb").string(), "", out, stick});
    ADD_FAILURE() << "no error for " << stick;
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the stick file '" + stick + "'"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(":1:"), std::string::npos) << e.what();
  }
  std::stringstream kept;
  kept << std::ifstream(out).rdbuf();
  EXPECT_EQ(kept.str(), "the previous report");
  EXPECT_EQ(files(), (std::vector<std::string>{"bad.mmdb", "bad.stick", "report.html", "walk.bvh",
                                               "walk.mmdb"}));
}

TEST_F(Report, AnUnwritablePathIsAClearErrorAndLeavesNothing) {
  cook(straightWalk(), "walk.mmdb");
  const std::string db = (dir_ / "walk.mmdb").string();
  // A folder that does not exist, a path under a regular file, a path that is a folder.
  fs::create_directories(dir_ / "folder.html");
  for (const std::string& out :
       {(dir_ / "no" / "such" / "report.html").string(),
        (dir_ / "walk.mmdb" / "report.html").string(), (dir_ / "folder.html").string()}) {
    try {
      writeReport({db, "", out, ""});
      ADD_FAILURE() << "no error for " << out;
    } catch (const mmdb::cook::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(out), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(files(), (std::vector<std::string>{"folder.html", "walk.bvh", "walk.mmdb"}));
  EXPECT_TRUE(fs::is_empty(dir_ / "folder.html"));
}

}  // namespace
}  // namespace mmcook::review
