// The stick-script replay (cooker/review/replay.h) on small cooked databases: its search rules,
// its statistics recomputed from what it recorded, and its determinism.
#include "cook/cook_database.h"
#include "review/replay.h"
#include "synthetic_request.h"
#include "write/database_writer.h"

#include <mmdb/database.h>
#include <mmdb/stick_script.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

namespace mmcook::review {
namespace {

namespace fs = std::filesystem;

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mmdb_replay_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    bytes_ =
        mmdb::cook::serializeDatabase(mmdb::cook::cookDatabase(mmdb::test::walkTurnAndPart(dir_)));
    mmdb::Result<mmdb::Database> opened = mmdb::Database::fromMemory(bytes_.data(), bytes_.size());
    ASSERT_TRUE(opened) << opened.error().message();
    db_ = std::move(opened.value());
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::vector<uint8_t> bytes_;
  mmdb::Database db_;
};

mmdb::StickScript parsed(const char* text) {
  mmdb::Result<mmdb::StickScript> script = mmdb::StickScript::parse(text, "test.stick");
  EXPECT_TRUE(script) << script.error().message();
  return script ? std::move(script.value()) : mmdb::StickScript::builtIn();
}

TEST_F(ReplayTest, SameInputsGiveTheSameReplay) {
  ReplaySettings settings;
  settings.characters = 5;
  settings.seconds = 6.0;
  settings.keep_decisions = true;
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  const mmdb::Result<Replay> a = replay(db_, script, settings);
  const mmdb::Result<Replay> b = replay(db_, script, settings);
  ASSERT_TRUE(a) << a.error().message();
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(a->stats.decisions, b->stats.decisions);
  EXPECT_EQ(a->stats.mean_cost, b->stats.mean_cost);
  EXPECT_EQ(a->stats.p95_cost, b->stats.p95_cost);
  EXPECT_EQ(a->stats.mean_trajectory_error, b->stats.mean_trajectory_error);
  EXPECT_EQ(a->stats.p95_trajectory_error, b->stats.p95_trajectory_error);
  EXPECT_EQ(a->stats.clip_frames, b->stats.clip_frames);
  ASSERT_EQ(a->jumps.size(), b->jumps.size());
  for (size_t i = 0; i < a->jumps.size(); ++i) {
    EXPECT_EQ(a->jumps[i].to_frame, b->jumps[i].to_frame) << i;
    EXPECT_EQ(a->jumps[i].cost, b->jumps[i].cost) << i;
  }
  ASSERT_EQ(a->decisions.size(), b->decisions.size());
  for (size_t i = 0; i < a->decisions.size(); ++i)
    EXPECT_EQ(a->decisions[i].query, b->decisions[i].query);
  EXPECT_EQ(a->trace.achieved, b->trace.achieved);
  EXPECT_EQ(a->trace.cost, b->trace.cost);
  EXPECT_GT(a->stats.decisions_per_second, 0.0);
}

// Every step of every character plays a frame (the first search starts them at step 0), one trace
// entry per step, and the statistics are those of the decisions it kept.
TEST_F(ReplayTest, StatisticsAreThoseOfItsDecisions) {
  ReplaySettings settings;
  settings.characters = 3;
  settings.seconds = 5.0;
  settings.keep_decisions = true;
  const mmdb::Result<Replay> r = replay(db_, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->stats.steps, 300u);
  ASSERT_EQ(r->trace.time.size(), 300u);
  EXPECT_EQ(r->trace.desired.size(), 300u);
  EXPECT_DOUBLE_EQ(r->trace.time.front(), 1.0 / 60.0);
  EXPECT_DOUBLE_EQ(r->trace.time.back(), 5.0);
  ASSERT_EQ(r->stats.clip_frames.size(), db_.clipCount());
  EXPECT_EQ(std::accumulate(r->stats.clip_frames.begin(), r->stats.clip_frames.end(), uint64_t{0}),
            3u * 300u);

  ASSERT_EQ(r->decisions.size(), r->stats.decisions);
  std::vector<double> costs;
  uint64_t jumps = 0;
  for (const ReplayDecision& d : r->decisions) {
    costs.push_back(d.cost);
    EXPECT_EQ(d.query.size(), db_.featureCount());
    if (d.frame != d.playing_frame) ++jumps;
  }
  EXPECT_EQ(jumps, r->jumps.size());
  EXPECT_EQ(jumps, r->stats.jumps);
  const double mean = std::accumulate(costs.begin(), costs.end(), 0.0) / double(costs.size());
  EXPECT_NEAR(r->stats.mean_cost, mean, 1e-9 * std::max(1.0, mean));
  std::sort(costs.begin(), costs.end());
  EXPECT_EQ(r->stats.p95_cost, costs[size_t(0.95 * double(costs.size() - 1))]);
  // Each character starts, at step 0, from nothing.
  for (uint32_t c = 0; c < 3; ++c) {
    EXPECT_EQ(r->jumps[c].character, c);
    EXPECT_EQ(r->jumps[c].time, 0.0);
    EXPECT_EQ(r->jumps[c].from_frame, -1);
    EXPECT_EQ(r->jumps[c].reason, mmdb::SearchReason::Start);
  }
}

// The sample's search rules, with the crowd's policies off: periodic searches 6 steps apart, a
// forced search exactly at each step where the stick turned sharply (unless a range end comes
// first), nothing else. One loop of the built-in script and one step of the next: walking,
// running, walking backwards and sideways. (The policies have their tests in the runtime's.)
TEST_F(ReplayTest, SearchesWhenTheSampleDoes) {
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  ReplaySettings settings;
  settings.reference_policies = true;
  settings.characters = 1;
  settings.seconds = script.duration() + 1.0 / 60.0;
  settings.keep_decisions = true;
  const mmdb::Result<Replay> r = replay(db_, script, settings);
  ASSERT_TRUE(r) << r.error().message();
  std::vector<uint32_t> sharp;
  const uint32_t steps = uint32_t(std::lround(settings.seconds * 60.0));
  for (uint32_t step = 1; step < steps; ++step)
    if (mmdb::stickChangedSharply(script.at((step - 1) / 60.0), script.at(step / 60.0)))
      sharp.push_back(step);
  EXPECT_EQ(sharp.size(), 11u);
  std::vector<uint32_t> forced;
  uint32_t previous = 0;
  for (const ReplayDecision& d : r->decisions) {
    switch (d.reason) {
      case mmdb::SearchReason::Start:
        EXPECT_EQ(d.step, 0u);
        break;
      case mmdb::SearchReason::Periodic:
        EXPECT_EQ(d.step - previous, kReplaySearchIntervalSteps) << d.step;
        break;
      case mmdb::SearchReason::Forced:
        forced.push_back(d.step);
        break;
      case mmdb::SearchReason::RangeEnd: {
        // The frame playing is the last of a matchable range or of its clip.
        ASSERT_GE(d.playing_frame, 0);
        const uint32_t f = uint32_t(d.playing_frame);
        bool last = false;
        for (const mmdb::MatchRange& range : db_.ranges())
          last = last || f + 1 == range.first_frame + range.frame_count;
        const mmdb::ClipInfo clip = db_.clip(uint32_t(db_.clipOfFrame(f)));
        EXPECT_TRUE(last || f + 1 == clip.first_frame + clip.frame_count) << f;
        break;
      }
      default:
        ADD_FAILURE() << "reason " << int(d.reason);
    }
    previous = d.step;
  }
  for (const uint32_t step : forced)
    EXPECT_NE(std::find(sharp.begin(), sharp.end(), step), sharp.end()) << step;
  // A range end may take a sharp turn's step; most are forced, walking backwards and sideways
  // (after the first 19 s) too.
  EXPECT_GE(forced.size(), 8u);
  const auto backwards_and_sideways =
      std::count_if(forced.begin(), forced.end(), [](uint32_t step) { return step >= 19u * 60u; });
  EXPECT_GE(backwards_and_sideways, 3);
}

// builtIn() begins with builtInLocomotion(), the sample's script before it walked backwards and
// sideways: character 0 (offset 0 in both) decides the same over those 19 s, decision for
// decision, so runs made with the old script can still be compared with.
TEST_F(ReplayTest, TheLocomotionScriptDecidesAsTheBuiltInOverItsLength) {
  ReplaySettings settings;
  settings.characters = 1;
  settings.seconds = 19.0;
  settings.keep_decisions = true;
  const mmdb::Result<Replay> a = replay(db_, mmdb::StickScript::builtInLocomotion(), settings);
  const mmdb::Result<Replay> b = replay(db_, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(a) << a.error().message();
  ASSERT_TRUE(b) << b.error().message();
  ASSERT_EQ(a->decisions.size(), b->decisions.size());
  // A search every 0.1 s, less those the jump cooldown holds back after each switch.
  EXPECT_GE(a->decisions.size(), 19u * 60u / kReplaySearchIntervalSteps / 3);
  for (size_t i = 0; i < a->decisions.size(); ++i) {
    EXPECT_EQ(a->decisions[i].step, b->decisions[i].step) << i;
    EXPECT_EQ(a->decisions[i].frame, b->decisions[i].frame) << i;
    EXPECT_EQ(a->decisions[i].reason, b->decisions[i].reason) << i;
    EXPECT_EQ(a->decisions[i].query, b->decisions[i].query) << i;
  }
  EXPECT_EQ(a->trace.achieved, b->trace.achieved);
  // One step more and the built-in script turns round where the locomotion starts over.
  settings.seconds = 19.0 + 1.0 / 60.0;
  const mmdb::Result<Replay> c = replay(db_, mmdb::StickScript::builtInLocomotion(), settings);
  const mmdb::Result<Replay> d = replay(db_, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(c && d);
  EXPECT_NE(c->trace.desired.back(), d->trace.desired.back());
}

// With one stick that never changes, the controller's prediction of where it will be is where it
// then is (the spring is exact), so the trajectory error is the distance between the trace's
// desired and achieved positions at the three trajectory times ahead, averaged.
TEST_F(ReplayTest, TrajectoryErrorIsDesiredAgainstAchievedOverTheHorizon) {
  ReplaySettings settings;
  settings.characters = 1;
  settings.seconds = 8.0;
  const mmdb::StickScript script = parsed("10 30 0.8 walk steady\n");
  const mmdb::Result<Replay> r = replay(db_, script, settings);
  ASSERT_TRUE(r) << r.error().message();
  const ReplayTrace& t = r->trace;
  const std::vector<int> horizons{20, 40, 60};
  std::vector<double> errors;
  for (size_t s = 0; s + 60 < t.time.size(); ++s) {
    double sum = 0.0;
    for (const int n : horizons) sum += glm::length(t.desired[s + n] - t.achieved[s + n]);
    errors.push_back(sum / 3.0);
  }
  ASSERT_EQ(r->stats.trajectory_samples, errors.size());
  const double mean = std::accumulate(errors.begin(), errors.end(), 0.0) / double(errors.size());
  EXPECT_NEAR(r->stats.mean_trajectory_error, mean, 1e-4);
  EXPECT_NEAR(r->stats.p95_trajectory_error, percentile95(errors), 1e-4);
  EXPECT_GT(r->stats.mean_trajectory_error, 0.0);
  EXPECT_GE(r->stats.p95_trajectory_error, r->stats.mean_trajectory_error * 0.5);
}

// The meter the replay runs counts what the replay decided: every search, every jump as a
// switch, a continuation or a character's first frame (which is no switch), one trajectory error
// per step whose last horizon the replay reaches, and every contact phase in its clip's slides.
TEST_F(ReplayTest, ItsMotionMeasuresAgreeWithItsDecisions) {
  ReplaySettings settings;
  settings.characters = 3;
  settings.seconds = 8.0;
  const mmdb::Result<Replay> r = replay(db_, mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(r) << r.error().message();
  const mmdb::MotionMeasures& m = r->stats.motion;
  EXPECT_EQ(m.characters, 3u);
  EXPECT_EQ(m.steps, 480u);
  EXPECT_EQ(m.searches, r->stats.decisions);
  EXPECT_EQ(m.switches + m.continuations + 3, r->stats.jumps);
  EXPECT_GT(m.switches, 0u);
  EXPECT_EQ(std::accumulate(m.switches_by_reason.begin(), m.switches_by_reason.end(), uint64_t{0}),
            m.switches);
  EXPECT_EQ(m.switches_by_reason[size_t(mmdb::SearchReason::Start)], 0u);
  // A switch is a jump of its search's reason.
  std::array<uint64_t, 5> jumps{};
  for (const ReplayJump& j : r->jumps) ++jumps[size_t(j.reason)];
  for (size_t reason = 0; reason < jumps.size(); ++reason)
    EXPECT_LE(m.switches_by_reason[reason], jumps[reason]) << reason;
  EXPECT_EQ(m.trajectory_error_m.count, 3u * (480u - 60u));
  EXPECT_EQ(r->stats.trajectory_samples, m.trajectory_error_m.count);
  // Every phase is a clip's own or across a switch, once.
  uint64_t phases = 0, over = 0, across = 0, across_over = 0;
  for (const mmdb::ClipSlide& slide : r->stats.slides) {
    EXPECT_LT(slide.clip, db_.clipCount());
    EXPECT_GT(slide.phases + slide.across_phases, 0u);
    EXPECT_LE(slide.over_limit, slide.phases);
    EXPECT_LE(slide.across_over_limit, slide.across_phases);
    phases += slide.phases + slide.across_phases;
    over += slide.over_limit + slide.across_over_limit;
    across += slide.across_phases;
    across_over += slide.across_over_limit;
  }
  EXPECT_EQ(phases, m.phase_drift_mm.count);
  EXPECT_EQ(over, m.phases_over_limit);
  EXPECT_EQ(across, m.phases_across_switch);
  EXPECT_EQ(across_over, m.phases_across_switch_over_limit);
  EXPECT_GT(across, 0u);  // switches ran through some
}

TEST_F(ReplayTest, SettingsOutOfRangeAreRefused) {
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  const auto message = [&](uint32_t characters, double seconds) {
    ReplaySettings settings;
    settings.characters = characters;
    settings.seconds = seconds;
    const mmdb::Result<Replay> r = replay(db_, script, settings);
    EXPECT_FALSE(r);
    EXPECT_EQ(r.error().code(), mmdb::ErrorCode::InvalidArgument);
    return std::string(r.error().message());
  };
  EXPECT_EQ(message(0, 1.0), "replay: 0 characters; replay 1 to 256");
  EXPECT_EQ(message(257, 1.0), "replay: 257 characters; replay 1 to 256");
  EXPECT_EQ(message(1, 0.0), "replay: 0 s; replay from one step (1/60 s) to 600 s");
  EXPECT_EQ(message(1, 601.0), "replay: 601 s; replay from one step (1/60 s) to 600 s");
  EXPECT_EQ(message(1, std::nan("")), "replay: nan s; replay from one step (1/60 s) to 600 s");
}

// Feature weights change what the search picks: the same stick on a re-weighted cook decides
// differently.
TEST_F(ReplayTest, AReweightedDatabaseDecidesDifferently) {
  mmdb::cook::CookRequest request = mmdb::test::walkTurnAndPart(dir_);
  request.settings.weights = {0.75f, 1.0f, 1.0f, 1.0f, 0.01f};
  const std::vector<uint8_t> bytes =
      mmdb::cook::serializeDatabase(mmdb::cook::cookDatabase(request));
  const mmdb::Result<mmdb::Database> other = mmdb::Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(other) << other.error().message();
  ReplaySettings settings;
  settings.characters = 4;
  settings.seconds = 10.0;
  const mmdb::Result<Replay> a = replay(db_, mmdb::StickScript::builtIn(), settings);
  const mmdb::Result<Replay> b = replay(other.value(), mmdb::StickScript::builtIn(), settings);
  ASSERT_TRUE(a && b);
  bool differ = a->jumps.size() != b->jumps.size();
  for (size_t i = 0; !differ && i < a->jumps.size(); ++i)
    differ = a->jumps[i].to_frame != b->jumps[i].to_frame;
  EXPECT_TRUE(differ);
  EXPECT_NE(a->stats.mean_cost, b->stats.mean_cost);
}

}  // namespace
}  // namespace mmcook::review
