// The compare page of mmcook report across a weight change (coverage and cost on one scale, both
// replays' measure curves on one scale) and the player's switch explanation (the frame that was
// playing with its cost, candidates from other stretches of motion, their trajectories, a table
// that fits), on databases cooked from the bundled sample clip.
#include "cook/cook_database.h"
#include "review/html_report.h"
#include "review/replay.h"
#include "review/replay_player.h"
#include "review/report_data.h"
#include "write/database_writer.h"

#include <gtest/gtest.h>

#include <mmdb/search.h>
#include <mmdb/stick_script.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace mmcook::review {
namespace {

namespace fs = std::filesystem;
using mmdb::cook::ClipSpec;
using mmdb::cook::CookRequest;

class ReportCompare : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mmdb_report_compare_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The bundled walk and turn, and its mirrored copy, with the trajectory direction weight
  // times `direction_weight`.
  mmdb::Database cook(const std::string& name, float direction_weight = 1.f) {
    ClipSpec clip;
    clip.source = std::string(MMDB_TEST_DATA) + "/../../samples/data/walk_turn.bvh";
    clip.mirror = true;
    CookRequest request;
    request.clips = {clip};
    request.settings.weights[mmdb::cook::kBlockTrajectoryDirection] *= direction_weight;
    const std::string path = (dir_ / name).string();
    mmdb::cook::writeFileAtomically(
        path, mmdb::cook::serializeDatabase(mmdb::cook::cookDatabase(request)));
    mmdb::Result<mmdb::Database> db = mmdb::Database::open(path.c_str());
    EXPECT_TRUE(db.ok()) << db.error().message();
    return std::move(db).value();
  }

  fs::path dir_;
};

// The text between `from` (included) and the next `to` after it.
std::string between(const std::string& text, const std::string& from, const std::string& to,
                    size_t start = 0) {
  const size_t at = text.find(from, start);
  if (at == std::string::npos) return {};
  const size_t end = text.find(to, at + from.size());
  return text.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// Every occurrence of `from` .. `to`.
std::vector<std::string> all(const std::string& text, const std::string& from,
                             const std::string& to) {
  std::vector<std::string> out;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1))
    out.push_back(between(text, from, to, at));
  return out;
}

// As the page writes a number (%.4g, null when not finite).
std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", v);
  return text;
}

std::string list(const std::vector<float>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + number(values[i]);
  return out + "]";
}

ReportSettings shortReplay() {
  ReportSettings settings;
  settings.replay.characters = 2;
  settings.replay.seconds = 6;
  return settings;
}

// Two files that differ only in a block's weight answer every coverage cell with the same frame
// and distance at unit weights, while their costs differ; the compare page colours both maps by
// that distance on one scale and says why next to each map, and plots the replays' distance
// at unit weights on one axis. The same file twice keeps the cost.
TEST_F(ReportCompare, CoverageAndCostCompareAtUnitWeightsAcrossAWeightChange) {
  const mmdb::Database a = cook("a.mmdb");
  const mmdb::Database b = cook("b.mmdb", 3.f);
  ASSERT_EQ(a.featureBlockCount(), b.featureBlockCount());
  const CoveragePose pose = representativePose(a);
  ASSERT_GE(pose.frame, 0);
  const CoverageMap ma = coverageMap(a, pose), mb = coverageMap(b, pose);
  ASSERT_EQ(ma.cells.size(), mb.cells.size());
  size_t cost_differs = 0;
  for (size_t i = 0; i < ma.cells.size(); ++i) {
    const CoverageCell &ca = ma.cells[i], &cb = mb.cells[i];
    ASSERT_GE(ca.unit_frame, 0);
    EXPECT_EQ(ca.unit_frame, cb.unit_frame) << i;
    EXPECT_NEAR(ca.unit_distance, cb.unit_distance, 1e-3f * std::max(1.f, ca.unit_distance)) << i;
    cost_differs += std::abs(ca.cost - cb.cost) > 1e-2f * std::max(1.f, ca.cost) ? 1 : 0;
  }
  EXPECT_GT(cost_differs, ma.cells.size() / 4);  // B's heavier weight costs more

  const ReportDatabase input_a{"a.mmdb", &a}, input_b{"b.mmdb", &b};
  const std::string html = renderReport(input_a, &input_b, shortReplay());
  const std::string coverage = between(html, "<section id=\"coverage\">", "</section>");
  ASSERT_FALSE(coverage.empty());
  EXPECT_NE(coverage.find("<div class=\"legend\" data-measure=\"unit\""), std::string::npos);
  // The note sits in each file's panel, before its maps.
  for (const char* side : {"A", "B"}) {
    const std::string panel = between(
        coverage, std::string("data-db=\"") + side + "\" data-section=\"coverage\"", "</table>");
    const size_t note = panel.find("<p class=\"why unit-weights\">");
    EXPECT_NE(note, std::string::npos) << side;
    EXPECT_LT(note, panel.find("<div class=\"polars\">")) << side;
  }
  // Cell by cell, A's and B's colours are the same (same distance, one scale).
  size_t drawn = 0;
  for (size_t i = 0; i < ma.cells.size(); ++i) {
    const std::string fa = between(coverage, "id=\"cov-A-" + std::to_string(i) + "\"", "data-");
    const std::string fb = between(coverage, "id=\"cov-B-" + std::to_string(i) + "\"", "data-");
    if (fa.empty()) continue;  // standing: one cell a disc
    ++drawn;
    ASSERT_FALSE(fb.empty());
    EXPECT_EQ(fa.substr(fa.find("fill=")), fb.substr(fb.find("fill="))) << i;
  }
  EXPECT_GT(drawn, ma.cells.size() / 2);
  // The replay's cost plots: the distance at unit weights, on one axis, with the note.
  const std::vector<std::string> plots = all(html, "<svg class=\"cost\"", ">");
  ASSERT_EQ(plots.size(), 2u);
  EXPECT_NE(plots[0].find("data-measure=\"unit\""), std::string::npos);
  EXPECT_EQ(between(plots[0], "data-top=", " "), between(plots[1], "data-top=", " "));
  const std::string replay = between(html, "<section id=\"replay\">", "</section>");
  EXPECT_EQ(all(replay, "<p class=\"why unit-weights\">", "</p>").size(), 2u);
  // The candidate tables say their costs are each file's own.
  EXPECT_EQ(all(html, "<p class=\"why candidate-weights\">", "</p>").size(), 2u);

  // The same file twice: costs, no note.
  const std::string same = renderReport(input_a, &input_a, shortReplay());
  EXPECT_NE(same.find("<div class=\"legend\" data-measure=\"cost\""), std::string::npos);
  EXPECT_EQ(same.find("unit-weights"), std::string::npos);
  EXPECT_EQ(same.find("candidate-weights"), std::string::npos);
  EXPECT_NE(same.find("<svg class=\"cost\" data-measure=\"cost\""), std::string::npos);
}

// The player's time line draws both replays' measures on one scale: each side's data carries
// the same peaks, the larger of the two sides' own for each lane and character.
TEST_F(ReportCompare, BothReplaysMeasureCurvesShareOneScale) {
  const mmdb::Database a = cook("a.mmdb");
  const mmdb::Database b = cook("b.mmdb", 0.2f);
  const ReportSettings settings = shortReplay();
  ReplaySettings kept = settings.replay;
  kept.keep_poses = true;
  const mmdb::Result<Replay> ra = replay(a, mmdb::StickScript::builtIn(), kept);
  const mmdb::Result<Replay> rb = replay(b, mmdb::StickScript::builtIn(), kept);
  ASSERT_TRUE(ra && rb);
  const MeasurePeaks pa = measurePeaks(ra->poses), pb = measurePeaks(rb->poses);
  const MeasurePeaks shared = sharedPeaks({pa, pb});
  ASSERT_EQ(shared.slide_mm.size(), 2u);
  size_t differ = 0;
  for (size_t c = 0; c < 2; ++c) {
    EXPECT_EQ(shared.slide_mm[c], std::max(pa.slide_mm[c], pb.slide_mm[c]));
    EXPECT_EQ(shared.step_mm[c], std::max(pa.step_mm[c], pb.step_mm[c]));
    EXPECT_EQ(shared.gap_m[c], std::max(pa.gap_m[c], pb.gap_m[c]));
    EXPECT_GT(shared.step_mm[c], 0.f);
    differ += pa.step_mm[c] != pb.step_mm[c] || pa.gap_m[c] != pb.gap_m[c] ? 1 : 0;
  }
  EXPECT_GT(differ, 0u);  // each side's own scale would differ
  // A peak is the largest of the lane: no sample above it.
  for (uint32_t s = 0; s < ra->poses.samples; ++s)
    EXPECT_LE(ra->poses.gap_m[ra->poses.at(s, 1)], pa.gap_m[1]);

  const ReportDatabase input_a{"a.mmdb", &a}, input_b{"b.mmdb", &b};
  const std::string html = renderReport(input_a, &input_b, settings);
  const std::vector<std::string> peaks = all(html, "\"peaks\":{", "}");
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_EQ(peaks[0], peaks[1]);
  EXPECT_EQ(peaks[0], "\"peaks\":{\"slide\":" + list(shared.slide_mm) +
                          ",\"step\":" + list(shared.step_mm) + ",\"gap\":" + list(shared.gap_m));
  // The player scales a lane by the shared peak.
  EXPECT_NE(std::string(replayPlayerScript()).find("d.peaks[L[0]]"), std::string::npos);
  // One file alone: its own peaks.
  const std::string alone = replayPlayerJson(a, ra.value(), "A");
  EXPECT_NE(alone.find("\"peaks\":{\"slide\":" + list(pa.slide_mm)), std::string::npos);
}

// The candidate table has one column per feature kind, each block a line in it: every block
// once, the trajectory blocks in columns of their own, no horizontal scroll.
TEST_F(ReportCompare, TheCandidateTableGroupsBlocksByKindAndDoesNotScroll) {
  const mmdb::Database db = cook("a.mmdb");
  const std::vector<BlockGroup> groups = candidateColumns(db);
  std::vector<uint32_t> seen;
  for (const BlockGroup& g : groups) {
    ASSERT_EQ(g.blocks.size(), g.labels.size());
    for (size_t k = 0; k < g.blocks.size(); ++k) {
      seen.push_back(g.blocks[k]);
      EXPECT_EQ(std::string(db.featureBlock(g.blocks[k]).name).rfind(g.labels[k], 0), 0u);
    }
  }
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), db.featureBlockCount());
  for (uint32_t b = 0; b < seen.size(); ++b) EXPECT_EQ(seen[b], b);
  // 7 blocks in 4 columns (position, velocity, trajectory position, trajectory direction).
  EXPECT_LT(groups.size(), size_t(db.featureBlockCount()));
  EXPECT_LE(groups.size(), 4u);
  ASSERT_EQ(groups.back().name, "trajectory direction");
  EXPECT_EQ(groups.back().blocks.size(), 1u);
  EXPECT_EQ(groups.front().labels.front(), "left_foot");
  const std::string style = replayPlayerStyle();
  EXPECT_EQ(style.find("overflow-x"), std::string::npos);
  EXPECT_NE(style.find(".rp-cand td.blocks"), std::string::npos);
}

// Candidates within the spacing of a better one in the same clip are left out: the winner's own
// neighbouring frames do not fill the list.
TEST_F(ReportCompare, CandidatesSkipTheWinnersNeighbours) {
  const mmdb::Database db = cook("a.mmdb");
  ASSERT_GE(db.clipCount(), 2u);
  const int32_t first = int32_t(db.clip(0).first_frame);
  const int32_t other = int32_t(db.clip(1).first_frame) + 40;
  const int32_t spacing = candidateSpacing(db);
  EXPECT_EQ(spacing, db.defaultNeighbourhoodFrames());
  std::vector<mmdb::CandidateCost> ranked;
  for (int32_t f : {first + 100, first + 99, first + 101, first + 102, other, other + 1,
                    first + 100 + spacing + 1, first + 100 - spacing, other + spacing + 5}) {
    mmdb::CandidateCost c;
    c.frame = f;
    c.cost = float(ranked.size());
    ranked.push_back(c);
  }
  const std::vector<mmdb::CandidateCost> kept =
      distinctCandidates(db, mmdb::Span<const mmdb::CandidateCost>(ranked.data(), ranked.size()),
                         kReplayCandidates, spacing);
  std::vector<int32_t> frames;
  for (const mmdb::CandidateCost& c : kept) frames.push_back(c.frame);
  EXPECT_EQ(frames, (std::vector<int32_t>{first + 100, other, first + 100 + spacing + 1,
                                          other + spacing + 5}));
  // Fewer asked: the first ones.
  EXPECT_EQ(
      distinctCandidates(db, mmdb::Span<const mmdb::CandidateCost>(ranked.data(), 2), 4, spacing)
          .size(),
      1u);
}

// At a switch the replay keeps the frame that was playing, costed as the search costs its seed:
// never cheaper than a seeded search's winner; the candidates are distinct stretches; the page
// embeds them with the raw trajectories of the query, the frame playing and each candidate.
TEST_F(ReportCompare, ASwitchExplainsWhatTheWinnerBeatAndDrawsTrajectories) {
  const mmdb::Database db = cook("a.mmdb");
  ReplaySettings settings;
  settings.characters = 2;
  settings.seconds = 8;
  settings.keep_poses = true;
  const mmdb::Result<Replay> r = replay(db, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(r);
  const int32_t spacing = candidateSpacing(db);
  size_t with_playing = 0, several = 0;
  for (const ReplayJump& j : r->jumps) {
    ASSERT_FALSE(j.candidates.empty());
    EXPECT_EQ(j.candidates[0].frame, j.to_frame);
    EXPECT_EQ(j.query.size(), db.featureCount());
    for (size_t x = 0; x < j.candidates.size(); ++x)
      for (size_t y = x + 1; y < j.candidates.size(); ++y) {
        const bool same_clip = db.clipOfFrame(uint32_t(j.candidates[x].frame)) ==
                               db.clipOfFrame(uint32_t(j.candidates[y].frame));
        EXPECT_FALSE(same_clip &&
                     std::abs(j.candidates[x].frame - j.candidates[y].frame) <= spacing)
            << j.time << ": " << j.candidates[x].frame << ", " << j.candidates[y].frame;
        EXPECT_LE(j.candidates[x].cost, j.candidates[y].cost);
      }
    several += j.candidates.size() > 1 ? 1 : 0;
    if (j.from_frame < 0) {
      EXPECT_EQ(j.playing.frame, -1);
      continue;
    }
    ASSERT_GE(j.playing.frame, 0) << j.time;
    EXPECT_TRUE(j.playing.current);
    EXPECT_EQ(j.playing.transition, 0.f);
    ++with_playing;
    if (j.seeded) {
      EXPECT_GE(j.playing.cost, j.cost) << j.time;
    }
    // Its blocks add up to its cost.
    float sum = j.playing.transition + j.playing.bias;
    for (uint32_t b = 0; b < j.playing.block_count; ++b) sum += j.playing.block_costs[b];
    EXPECT_NEAR(sum, j.playing.cost, 1e-3f * std::max(1.f, j.playing.cost));
  }
  EXPECT_GT(with_playing, 0u);
  EXPECT_GT(several, 0u);

  // The trajectories are raw: a straight walk's first frames go forward (+z), ahead in time.
  int32_t trajectory_block = -1;
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b)
    if (db.featureBlock(b).kind == mmdb::FeatureKind::TrajectoryPosition)
      trajectory_block = int32_t(b);
  ASSERT_GE(trajectory_block, 0);
  EXPECT_TRUE(rawTrajectory(db, 0, db.featureRow(0)).empty());  // a pose block
  // Raw: normalized * scale + offset, metres from the character; the walk's most travelled frame
  // goes further at each time ahead.
  const uint32_t t0 = db.featureBlock(uint32_t(trajectory_block)).first_column;
  float furthest = 0;
  std::vector<float> ahead;
  for (uint32_t f = 0; f < db.frameCount(); ++f) {
    const std::vector<float> raw = rawTrajectory(db, uint32_t(trajectory_block), db.featureRow(f));
    ASSERT_EQ(raw.size(), 6u);
    for (uint32_t c = 0; c < 6; ++c)
      ASSERT_NEAR(raw[c],
                  db.featureRow(f)[t0 + c] * db.featureScale()[t0 + c] + db.featureOffset()[t0 + c],
                  1e-5f);
    const float reach = std::hypot(raw[4], raw[5]);
    if (reach > furthest) furthest = reach, ahead = raw;
  }
  EXPECT_GT(furthest, 0.5f);  // a walk, 1 s ahead
  EXPECT_GT(std::hypot(ahead[2], ahead[3]), std::hypot(ahead[0], ahead[1]));
  EXPECT_GT(std::hypot(ahead[4], ahead[5]), std::hypot(ahead[2], ahead[3]));

  // The page's switches carry the frame playing, then the query's and each one's trajectories.
  const std::string json = replayPlayerJson(db, r.value(), "A");
  const ReplayJump* shown = nullptr;
  for (const ReplayJump& j : r->jumps)
    if (j.character == 0 && j.from_frame >= 0 && j.playing.frame >= 0) {
      shown = &j;
      break;
    }
  ASSERT_NE(shown, nullptr);
  const int32_t playing_clip = db.clipOfFrame(uint32_t(shown->playing.frame));
  const std::string playing_row =
      "[" + std::to_string(playing_clip) + "," +
      std::to_string(shown->playing.frame - int32_t(db.clip(uint32_t(playing_clip)).first_frame)) +
      "," + number(shown->playing.cost) + ",0,";
  const size_t row = json.find("]]," + playing_row);
  ASSERT_NE(row, std::string::npos) << playing_row;
  // After the row: whether the search was seeded, and where its trajectories start.
  int seeded = -1;
  long offset = -1;
  ASSERT_EQ(std::sscanf(json.c_str() + json.find("]]", row + 3) + 2, ",%d,%ld]", &seeded, &offset),
            2);
  EXPECT_EQ(seeded, shown->seeded ? 1 : 0);
  ASSERT_GE(offset, 0);
  // The trajectory blocks, in file order; the rows of each: query, frame playing, candidates.
  std::vector<uint32_t> blocks;
  std::string listed = "\"trajectoryBlocks\":[";
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b)
    if (!rawTrajectory(db, b, db.featureRow(0)).empty()) {
      listed += (blocks.empty() ? "" : ",") + std::to_string(b);
      blocks.push_back(b);
    }
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_NE(json.find(listed + "],\"trajectoryWidths\":[6,6]"), std::string::npos);
  const std::string start = "\"trajectories\":\"";
  const size_t at = json.find(start) + start.size();
  const std::vector<uint8_t> bytes = unbase64(json.substr(at, json.find('"', at) - at));
  std::vector<int16_t> values(bytes.size() / 2);
  std::memcpy(values.data(), bytes.data(), values.size() * 2);
  size_t k = size_t(offset);
  for (uint32_t b : blocks) {
    std::vector<std::vector<float>> rows = {
        rawTrajectory(db, b, mmdb::Span<const float>(shown->query.data(), shown->query.size())),
        rawTrajectory(db, b, db.featureRow(uint32_t(shown->playing.frame)))};
    for (const mmdb::CandidateCost& c : shown->candidates)
      rows.push_back(rawTrajectory(db, b, db.featureRow(uint32_t(c.frame))));
    for (const std::vector<float>& raw : rows)
      for (float v : raw) {
        ASSERT_LT(k, values.size());
        EXPECT_EQ(values[k++], replayMillimetres(v)) << b;
      }
  }
  const std::string script = replayPlayerScript();
  EXPECT_NE(script.find("class=\"rp-traj\""), std::string::npos);
  EXPECT_NE(script.find("rp-beat"), std::string::npos);
  EXPECT_EQ(json.find("</"), std::string::npos);
}

}  // namespace
}  // namespace mmcook::review
