// mmdb::Crowd, the CPU character step, with known answers on synthetic databases: the controller
// reaches the stick, the timer fires every N steps, a range end forces an unseeded search, the
// offsets of a switch decay away, the same steps give the same bytes, and every bad argument is
// refused.
#include "compress/pose_compression.h"
#include "synthetic_database.h"

#include <mmdb/crowd.h>
#include <mmdb/playback.h>
#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <glm/geometric.hpp>
#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using mmdb::Crowd;
using mmdb::CrowdSettings;
using mmdb::Database;
using mmdb::ErrorCode;
using mmdb::SearchReason;

constexpr float kDt = 1.f / 60;

// A synthetic database, opened from aligned memory the fixture keeps.
struct TestDatabase {
  explicit TestDatabase(const mmdb::test::SyntheticSpec& spec, bool coded = false) {
    mmdb::cook::CookedDatabase cooked = mmdb::test::makeSyntheticDatabase(spec);
    if (coded) mmdb::cook::compressPoses(cooked, mmdb::cook::CompressionSettings{}, 1);
    bytes = mmdb::test::serializeAligned(cooked);
    auto opened = Database::fromMemory(bytes.data(), bytes.size());
    EXPECT_TRUE(opened.ok()) << opened.error().message();
    if (opened.ok()) db = std::move(opened.value());
  }
  mmdb::test::AlignedBytes bytes;
  Database db;
};

mmdb::test::SyntheticSpec spec(uint32_t clips, uint32_t frames_per_clip, uint32_t joints) {
  mmdb::test::SyntheticSpec s;
  s.clips = clips;
  s.frames_per_clip = frames_per_clip;
  s.joints = joints;
  return s;
}

// The defaults with every character starting in the first step, as most tests here expect.
CrowdSettings startsAtOnce() {
  CrowdSettings s;
  s.start_stagger_intervals = 0;
  return s;
}

// The synthetic skeletons here have no legs to lock (test_foot_lock.cpp has those).
Crowd create(const Database& db, uint32_t count, CrowdSettings settings = startsAtOnce()) {
  settings.foot_locking = false;
  auto created = Crowd::create(db, count, settings);
  EXPECT_TRUE(created.ok()) << created.error().message();
  return created.ok() ? std::move(created).value() : Crowd();
}

// The stick of a character at a step: turns every 1.5 s, sometimes released.
glm::vec2 scriptedStick(uint32_t character, int step) {
  const int segment = (step + int(character) * 17) / 90;
  const float angle = float((segment * 7 + int(character) * 3) % 12) * (3.14159265f / 6) + 0.1f;
  const float length = ((segment + int(character)) % 4 == 0) ? 0.f : 0.5f;
  return {length * std::sin(angle), length * std::cos(angle)};
}

float angleBetween(const glm::quat& a, const glm::quat& b) {
  const glm::quat d = glm::normalize(a) * glm::inverse(glm::normalize(b));
  return 2.f * std::atan2(glm::length(glm::vec3(d.x, d.y, d.z)), std::abs(d.w));
}

TEST(Crowd, ACharacterReachesTheSticksSpeedAndFacing) {
  TestDatabase t(spec(2, 600, 3));
  CrowdSettings settings = startsAtOnce();
  settings.synchronization.mode = mmdb::Synchronization::None;  // the clips' speed alone
  Crowd crowd = create(t.db, 1, settings);
  ASSERT_TRUE(crowd.setStick(0, 0.6f, 0.8f).ok());
  for (int step = 0; step < 240; ++step) ASSERT_TRUE(crowd.step(kDt).ok());
  const mmdb::CrowdCharacter& c = crowd.characters()[0];
  const glm::vec3 wanted = 1.75f * glm::vec3(0.6f, 0.f, 0.8f);  // max_speed * stick
  EXPECT_LT(glm::length(c.sim.velocity - wanted), 1e-3f);
  const glm::vec3 facing = c.sim.rotation * glm::vec3(0.f, 0.f, 1.f);
  EXPECT_LT(glm::length(facing - glm::vec3(0.6f, 0.f, 0.8f)), 1e-3f);
  // Every frame of the synthetic clips moves its root at 1.2 m/s: so does the achieved path.
  const glm::vec3 before = c.achieved_position;
  ASSERT_TRUE(crowd.step(kDt).ok());
  EXPECT_NEAR(glm::length(crowd.characters()[0].achieved_position - before) / kDt, 1.2f, 1e-3f);
  EXPECT_TRUE(crowd.characters()[0].playing);
}

TEST(Crowd, PeriodicSearchesComeEveryNthStep) {
  TestDatabase t(spec(2, 600, 2));
  CrowdSettings settings = CrowdSettings::reference();  // no cooldown delays the timer
  settings.stagger_phases = 0;
  Crowd crowd = create(t.db, 1, settings);
  std::vector<int> periodic;
  for (int step = 0; step < 40; ++step) {
    ASSERT_TRUE(crowd.step(kDt).ok());
    const mmdb::Decision& d = crowd.decisions()[0];
    if (step == 0) {
      EXPECT_EQ(d.reason, SearchReason::Start);
    }
    if (d.reason == SearchReason::Periodic) periodic.push_back(step);
  }
  EXPECT_EQ(periodic, (std::vector<int>{6, 12, 18, 24, 30, 36}));
  EXPECT_EQ(crowd.characters()[0].search_count, 7u);

  // Another interval; a forced search restarts the timer and is seeded with the frame playing.
  settings.search_interval_ticks = 10;
  Crowd other = create(t.db, 1, settings);
  periodic.clear();
  for (int step = 0; step < 45; ++step) {
    if (step == 15) {
      ASSERT_TRUE(other.forceSearch(0).ok());
    }
    const uint32_t playing = other.characters()[0].current_frame;
    ASSERT_TRUE(other.beginStep(kDt).ok());
    const SearchReason reason = other.decisions()[0].reason;
    if (step == 15) {
      EXPECT_EQ(reason, SearchReason::Forced);
      ASSERT_EQ(other.requests().size(), 1u);
      EXPECT_EQ(other.requests()[0].current_frame, int32_t(playing));
    }
    ASSERT_TRUE(other.search().ok());
    ASSERT_TRUE(other.endStep().ok());
    if (reason == SearchReason::Periodic) periodic.push_back(step);
  }
  EXPECT_EQ(periodic, (std::vector<int>{10, 25, 35}));
}

TEST(Crowd, StaggeredTimersSpreadTheFirstPeriodicSearches) {
  TestDatabase t(spec(4, 600, 2));
  Crowd crowd = create(t.db, 60);  // 6 steps, 6 phases
  std::vector<int> first(60, -1);
  for (int step = 0; step < 20; ++step) {
    ASSERT_TRUE(crowd.step(kDt).ok());
    for (uint32_t c = 0; c < 60; ++c) {
      const SearchReason reason = crowd.decisions()[c].reason;
      if (step == 0) {
        EXPECT_EQ(reason, SearchReason::Start);
      }
      if (reason == SearchReason::RangeEnd) first[c] = -2;  // restarted by a range end
      if (reason == SearchReason::Periodic && first[c] == -1) first[c] = step;
    }
  }
  for (uint32_t c = 0; c < 60; ++c) {
    if (first[c] != -2) {
      EXPECT_EQ(first[c], 6 + int(c % 6)) << "character " << c;
    }
  }
}

// start_stagger_intervals 1: character c starts at step c % 6 (an interval of 6 steps, 6 phases),
// shows the first frame of the first range until then (Playing::playing false), and its
// periodic searches come every interval from its start: the same steps as without staggering.
TEST(Crowd, StaggeredStartsSpreadTheStartsOverAnInterval) {
  TestDatabase t(spec(4, 600, 3));
  CrowdSettings settings = CrowdSettings::reference();  // no cooldown or range margin in the way
  settings.start_stagger_intervals = 1;
  Crowd staggered = create(t.db, 60, settings);
  settings.start_stagger_intervals = 0;
  Crowd at_once = create(t.db, 60, settings);
  const uint32_t joints = t.db.jointCount();
  // The pose of the first frame of the first range, by a crowd that plays it from creation.
  CrowdSettings from_start = settings;
  from_start.start_playing = true;
  Crowd playing_it = create(t.db, 1, from_start);
  const std::vector<glm::vec3> waiting(playing_it.modelTranslations().begin(),
                                       playing_it.modelTranslations().begin() + joints);
  float spread = 0.f;
  for (uint32_t j = 0; j < joints; ++j) spread = std::fmax(spread, glm::length(waiting[j]));
  ASSERT_GT(spread, 0.1f) << "a pose with joints away from the root";
  for (int step = 0; step < 20; ++step) {
    ASSERT_TRUE(staggered.step(kDt).ok());
    ASSERT_TRUE(at_once.step(kDt).ok());
    size_t starts = 0;
    for (uint32_t c = 0; c < 60; ++c) {
      SCOPED_TRACE("step " + std::to_string(step) + " character " + std::to_string(c));
      const SearchReason reason = staggered.decisions()[c].reason;
      const int start = int(c % 6);
      starts += reason == SearchReason::Start;
      EXPECT_EQ(reason == SearchReason::Start, step == start);
      const bool due = step > start && (step - start) % 6 == 0;
      EXPECT_EQ(reason == SearchReason::Periodic, due) << "every 6 steps from the start";
      EXPECT_EQ(at_once.decisions()[c].reason == SearchReason::Periodic, due)
          << "the periodic searches come at the same steps either way";
      mmdb::Playing playing;
      ASSERT_TRUE(staggered.playing(c, playing).ok());
      EXPECT_EQ(playing.playing, step >= start);
      if (step < start) {
        // Waiting: the first frame of the first range, as a character playing it from its
        // start shows it (no collapsed skeleton).
        for (uint32_t j = 0; j < joints; ++j)
          EXPECT_LT(glm::length(staggered.modelTranslations()[c * joints + j] - waiting[j]), 1e-6f)
              << "joint " << j;
      }
    }
    EXPECT_EQ(starts, step < 6 ? 10u : 0u) << "step " << step;
    EXPECT_EQ(staggered.requests().size(), 10u) << "step " << step << ": 10 searches every step";
    EXPECT_EQ(at_once.requests().size(), step == 0 ? 60u : step < 6 ? 0u : 10u);
  }
}

// Over k intervals: character c starts at step c % 6 + 6 * ((c / 6) % k), so each step starts
// 60 / (6k) characters, and the periodic searches keep the steps they have without staggering.
TEST(Crowd, StaggeredStartsOverSeveralIntervalsKeepThePeriodicSteps) {
  TestDatabase t(spec(4, 600, 3));
  for (const uint32_t k : {2u, 5u}) {
    SCOPED_TRACE("intervals " + std::to_string(k));
    CrowdSettings settings = CrowdSettings::reference();
    settings.start_stagger_intervals = k;
    Crowd crowd = create(t.db, 60, settings);
    for (int step = 0; step < 40; ++step) {
      ASSERT_TRUE(crowd.step(kDt).ok());
      size_t starts = 0;
      for (uint32_t c = 0; c < 60; ++c) {
        const int start = int(c % 6 + 6 * ((c / 6) % k));
        EXPECT_EQ(mmdb::startDelayTicks(c, 6, 6, k), uint32_t(start));
        const SearchReason reason = crowd.decisions()[c].reason;
        starts += reason == SearchReason::Start;
        EXPECT_EQ(reason == SearchReason::Start, step == start) << "character " << c;
        EXPECT_EQ(reason == SearchReason::Periodic, step > start && (step - start) % 6 == 0)
            << "step " << step << " character " << c;
      }
      EXPECT_EQ(starts, step < int(6 * k) ? 60 / (6 * k) : 0u) << "step " << step;
    }
  }
  EXPECT_EQ(mmdb::startDelayTicks(7, 6, 6, 0), 0u) << "off";
  EXPECT_EQ(mmdb::startDelayTicks(7, 6, 0, 3), 6u) << "no phases: whole intervals";
  EXPECT_EQ(mmdb::startDelayTicks(7, 6, 4, 2), 10u) << "6 * 3 / 4 + 6 * (7 / 4 % 2)";
}

// The defaults stagger the starts over two intervals, so that a crowd created at once does not
// pay every character's start in its first step; reference() starts them all at once.
TEST(Crowd, TheDefaultsStaggerTheStartsOverTwoIntervals) {
  EXPECT_EQ(CrowdSettings{}.start_stagger_intervals, 2u);
  EXPECT_EQ(CrowdSettings::reference().start_stagger_intervals, 0u);
  TestDatabase t(spec(4, 600, 3));
  CrowdSettings settings;
  settings.foot_locking = false;
  auto created = Crowd::create(t.db, 120, settings);
  ASSERT_TRUE(created.ok()) << created.error().message();
  Crowd& crowd = created.value();
  uint32_t started = 0;
  for (int step = 0; step < 12; ++step) {
    ASSERT_TRUE(crowd.step(kDt).ok());
    uint32_t starts = 0;
    for (uint32_t c = 0; c < 120; ++c) starts += crowd.decisions()[c].reason == SearchReason::Start;
    EXPECT_EQ(starts, 10u) << "step " << step << ": a twelfth of the crowd";
    started += starts;
  }
  EXPECT_EQ(started, 120u);
  for (uint32_t c = 0; c < 120; ++c) {
    mmdb::Playing playing;
    ASSERT_TRUE(crowd.playing(c, playing).ok());
    EXPECT_TRUE(playing.playing) << "character " << c;
  }
}

TEST(Crowd, TheLastFrameOfARangeForcesAnUnseededSearch) {
  TestDatabase t(spec(2, 300, 2));
  // The reference's range end (test_crowd_policies.cpp has the one that moves on).
  CrowdSettings settings = CrowdSettings::reference();
  settings.transition_cost = 1e6f;  // seeded searches keep the frame playing
  Crowd crowd = create(t.db, 1, settings);
  // Only the "jump" range: the second half of clip 0's matchable frames.
  const uint64_t jump = t.db.tagMask("jump");
  ASSERT_NE(jump, 0u);
  ASSERT_TRUE(crowd.setTagFilter(0, jump, 0).ok());
  uint32_t range_first = 0, range_last = 0;
  for (const mmdb::MatchRange& r : t.db.ranges()) {
    if (r.tag_mask & jump) {
      range_first = r.first_frame;
      range_last = r.first_frame + r.frame_count - 1;
    }
  }
  int range_ends = 0;
  for (int step = 0; step < 400; ++step) {
    const mmdb::CrowdCharacter before = crowd.characters()[0];
    ASSERT_TRUE(crowd.beginStep(kDt).ok());
    const SearchReason reason = crowd.decisions()[0].reason;
    if (before.playing && before.current_frame == range_last) {
      ASSERT_EQ(reason, SearchReason::RangeEnd) << "step " << step;
      ASSERT_EQ(crowd.requests().size(), 1u);
      EXPECT_EQ(crowd.requests()[0].current_frame, -1);
      ++range_ends;
    }
    ASSERT_TRUE(crowd.search().ok());
    ASSERT_TRUE(crowd.endStep().ok());
    const mmdb::Decision& d = crowd.decisions()[0];
    if (reason == SearchReason::Start || reason == SearchReason::RangeEnd) {
      // Unseeded: the winner is one of the frames the filter lets through.
      ASSERT_NE(d.frame, mmdb::kNoFrame);
      EXPECT_GE(d.frame, range_first);
      EXPECT_LE(d.frame, range_last);
    }
  }
  EXPECT_GE(range_ends, 1);
}

TEST(Crowd, TheOffsetsOfASwitchDecayToZero) {
  TestDatabase t(spec(2, 600, 4));
  CrowdSettings settings;
  settings.search_interval_ticks = 1000000;  // no periodic search after the first
  settings.transition_speed_limit = 0.f;     // the decay alone (TransitionSpeedLimit has it on)
  Crowd crowd = create(t.db, 1, settings);
  for (int step = 0; step < 10; ++step) ASSERT_TRUE(crowd.step(kDt).ok());

  // A forced search answered by the caller: a switch to frame 100 of clip 1.
  const uint32_t target = t.db.clip(1).first_frame + 100;
  ASSERT_TRUE(crowd.forceSearch(0).ok());
  ASSERT_TRUE(crowd.beginStep(kDt).ok());
  ASSERT_EQ(crowd.results().size(), 1u);
  crowd.results()[0].frame = int32_t(target);
  crowd.results()[0].cost = 0.f;
  ASSERT_TRUE(crowd.endStep().ok());
  ASSERT_TRUE(crowd.decisions()[0].switched);
  EXPECT_EQ(crowd.decisions()[0].frame, target);
  EXPECT_EQ(crowd.characters()[0].since_switch, kDt);

  const uint32_t joints = t.db.jointCount();
  std::vector<glm::quat> rotations(joints);
  std::vector<glm::vec3> translations(joints);
  float first = 0, last = 0;
  for (int step = 0; step < 120; ++step) {
    const mmdb::CrowdCharacter before = crowd.characters()[0];
    ASSERT_TRUE(crowd.step(kDt).ok());
    ASSERT_EQ(crowd.decisions()[0].reason, SearchReason::None);
    mmdb::SamplePoseJob job;
    job.database = &t.db;
    job.clip = before.clip;
    job.time = before.clip_time;
    job.rotations = rotations;
    job.translations = translations;
    ASSERT_TRUE(job.Run().ok());
    float worst = 0;
    for (uint32_t j = 0; j < joints; ++j) {
      worst = std::max(worst, angleBetween(crowd.localRotations()[j], rotations[j]));
      worst = std::max(worst, glm::length(crowd.localTranslations()[j] - translations[j]));
    }
    if (step == 0) first = worst;
    last = worst;
  }
  EXPECT_GT(first, 1e-3f) << "the switch captured offsets";
  EXPECT_LT(last, 1e-5f) << "after 2 s (13 of the slower half-life) they are gone";
}

// The transition speed limit on a switch whose decay, added to the destination's own motion,
// moves joints faster than the clips ever do (the switch of TheOffsetsOfASwitchDecayToZero): with
// the limit the transition's clock goes on by less than a step where the whole step would move a
// joint past its limit, every step then keeps within it (or, when no share of the step does, took
// the one moving least), the decisions are the same, and the offsets still decay away.
TEST(TransitionSpeedLimit, HoldsTheDecayBackWhereItWouldOutrunTheClips) {
  TestDatabase t(spec(2, 600, 4));
  CrowdSettings settings;
  settings.search_interval_ticks = 1000000;  // no periodic search after the first
  CrowdSettings off = settings;
  off.transition_speed_limit = 0.f;
  Crowd limited = create(t.db, 1, settings), free = create(t.db, 1, off);
  auto steps = mmdb::clipJointSteps(t.db);
  ASSERT_TRUE(steps.ok()) << steps.error().message();
  const uint32_t joints = t.db.jointCount();
  ASSERT_EQ(steps.value().size(), joints);
  // The largest of a pose's joint moves since `previous`, over the limit's share of each.
  const auto ratio = [&](const Crowd& crowd, const std::vector<glm::vec3>& previous) {
    float worst = 0;
    for (uint32_t j = 0; j < joints; ++j) {
      const float most = settings.transition_speed_limit *
                         std::max(steps.value()[j], mmdb::kMinJointStep) * kDt * t.db.frameRate();
      worst = std::max(worst, glm::length(crowd.modelTranslations()[j] - previous[j]) / most);
    }
    return worst;
  };
  const auto pose = [&](const Crowd& crowd) {
    return std::vector<glm::vec3>(crowd.modelTranslations().begin(),
                                  crowd.modelTranslations().end());
  };
  for (int step = 0; step < 10; ++step) {
    ASSERT_TRUE(limited.step(kDt).ok());
    ASSERT_TRUE(free.step(kDt).ok());
  }
  ASSERT_EQ(pose(limited), pose(free)) << "nothing to limit before a switch";

  // A forced search answered by the caller: a switch to frame 100 of clip 1, in both.
  const uint32_t target = t.db.clip(1).first_frame + 100;
  std::vector<glm::vec3> last_limited = pose(limited), last_free = pose(free);
  for (Crowd* crowd : {&limited, &free}) {
    ASSERT_TRUE(crowd->forceSearch(0).ok());
    ASSERT_TRUE(crowd->beginStep(kDt).ok());
    crowd->results()[0].frame = int32_t(target);
    crowd->results()[0].cost = 0.f;
    ASSERT_TRUE(crowd->endStep().ok());
    ASSERT_TRUE(crowd->decisions()[0].switched);
  }
  ASSERT_EQ(pose(limited), pose(free)) << "the switch's own step shows the source";
  float worst_free = 0, worst_limited = 0;
  int held = 0;
  for (int step = 0; step < 180; ++step) {
    last_limited = pose(limited);
    last_free = pose(free);
    const float before = limited.characters()[0].transition_time;
    ASSERT_TRUE(limited.step(kDt).ok());
    ASSERT_TRUE(free.step(kDt).ok());
    ASSERT_EQ(limited.decisions()[0].reason, free.decisions()[0].reason);
    ASSERT_EQ(limited.decisions()[0].frame, free.decisions()[0].frame);
    ASSERT_EQ(limited.characters()[0].since_switch, free.characters()[0].since_switch);
    const float went_on = limited.characters()[0].transition_time - before;
    const float r = ratio(limited, last_limited);
    worst_free = std::max(worst_free, ratio(free, last_free));
    worst_limited = std::max(worst_limited, r);
    if (went_on < kDt * 0.999f) {
      ++held;
      EXPECT_GE(went_on, -1e-6f) << "step " << step << ": the clock never goes back";
    } else {
      EXPECT_LE(r, 1.f + 1e-4f) << "step " << step << ": a whole step within the limit";
    }
  }
  std::printf("[ limit    ] worst step over the limit: %.2f free, %.2f limited; %d steps held\n",
              worst_free, worst_limited, held);
  EXPECT_GT(worst_free, 1.2f) << "the decay outruns the clips here";
  EXPECT_LE(worst_limited, 1.f + 1e-4f);
  EXPECT_GT(held, 0);
  // 3 s on, both poses are the animation's.
  for (uint32_t j = 0; j < joints; ++j)
    EXPECT_LT(glm::length(limited.modelTranslations()[j] - free.modelTranslations()[j]), 1e-4f);
  EXPECT_LT(limited.characters()[0].transition_time, free.characters()[0].since_switch);
}

// Two crowds stepped the same give the same bytes; without pruning, the same decisions.
TEST(Crowd, TheSameStepsGiveTheSameBytes) {
  TestDatabase t(spec(6, 240, 5));
  constexpr uint32_t kCount = 16;
  Crowd a = create(t.db, kCount), b = create(t.db, kCount);
  CrowdSettings exhaustive = startsAtOnce();
  exhaustive.bounds_pruning = false;
  Crowd c = create(t.db, kCount, exhaustive);
  uint64_t searches = 0, switches = 0;
  for (int step = 0; step < 300; ++step) {
    for (uint32_t i = 0; i < kCount; ++i) {
      const glm::vec2 stick = scriptedStick(i, step);
      for (Crowd* crowd : {&a, &b, &c}) ASSERT_TRUE(crowd->setStick(i, stick.x, stick.y).ok());
      if (step > 0 && glm::length(stick - scriptedStick(i, step - 1)) > 0.3f) {
        for (Crowd* crowd : {&a, &b, &c}) ASSERT_TRUE(crowd->forceSearch(i).ok());
      }
    }
    for (Crowd* crowd : {&a, &b, &c}) ASSERT_TRUE(crowd->step(kDt).ok());
    for (uint32_t i = 0; i < kCount; ++i) {
      const mmdb::Decision &da = a.decisions()[i], &db = b.decisions()[i], &dc = c.decisions()[i];
      ASSERT_EQ(da.reason, db.reason);
      ASSERT_EQ(da.reason, dc.reason);
      ASSERT_EQ(da.frame, db.frame);
      ASSERT_EQ(da.frame, dc.frame) << "pruned and exhaustive disagree";
      ASSERT_EQ(std::memcmp(&da.cost, &dc.cost, sizeof(float)), 0);
      ASSERT_EQ(da.playing, dc.playing);
      searches += da.reason != SearchReason::None;
      switches += da.switched;
    }
    const auto same = [](auto x, auto y) {
      return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size_bytes()) == 0;
    };
    ASSERT_TRUE(same(a.modelRotations(), b.modelRotations()));
    ASSERT_TRUE(same(a.modelTranslations(), b.modelTranslations()));
    ASSERT_TRUE(same(a.localRotations(), c.localRotations()));
    ASSERT_TRUE(same(a.offsetRotations(), b.offsetRotations()));
    ASSERT_TRUE(same(a.offsetVelocities(), c.offsetVelocities()));
  }
  for (uint32_t i = 0; i < kCount; ++i) {
    const mmdb::CrowdCharacter &x = a.characters()[i], &y = b.characters()[i];
    EXPECT_EQ(std::memcmp(&x.sim, &y.sim, sizeof(x.sim)), 0);
    EXPECT_EQ(std::memcmp(&x.achieved_position, &y.achieved_position, sizeof(glm::vec3)), 0);
    EXPECT_EQ(x.clip_time, y.clip_time);
    EXPECT_EQ(x.search_count, y.search_count);
  }
  // A search every 6 steps, less those the jump cooldown after each switch holds back.
  EXPECT_GT(searches, uint64_t(kCount) * 300 / 12);
  EXPECT_GT(switches, 20u);
}

// Stepped at the frame rate, every character's clock stays on the keys: through its switches,
// and through the 20 s of one clip's first range without a periodic search, where time + dt
// alone drifts further off them than float seconds place a key. Its pose is sampled from a key,
// never slerped a hair away from one.
TEST(Crowd, ClocksSteppedAtTheFrameRateStayOnTheKeys) {
  TestDatabase t(spec(6, 240, 5));
  TestDatabase long_clip(spec(1, 2400, 5));  // its first range ends at about 19.8 s
  constexpr uint32_t kCount = 16;
  Crowd switching = create(t.db, kCount);
  CrowdSettings no_searches = startsAtOnce();
  no_searches.search_interval_ticks = 1u << 20;  // after the start, none in the test's steps
  Crowd playing_on = create(long_clip.db, kCount, no_searches);
  const float rate = t.db.frameRate();
  ASSERT_EQ(rate, long_clip.db.frameRate());
  uint64_t switches = 0;
  float latest = 0.f;  // the latest clip time the long clip's crowd reached
  for (int step = 0; step < 1800; ++step) {
    for (uint32_t i = 0; i < kCount; ++i) {
      const glm::vec2 stick = scriptedStick(i, step);
      ASSERT_TRUE(switching.setStick(i, stick.x, stick.y).ok());
    }
    ASSERT_TRUE(switching.step(kDt).ok());
    ASSERT_TRUE(playing_on.step(kDt).ok());
    for (const Crowd* crowd : {&switching, &playing_on}) {
      for (uint32_t i = 0; i < kCount; ++i) {
        const float at = crowd->characters()[i].clip_time * rate;
        // Float seconds place a key between 16 and 32 s only to 1.2e-4 of a frame.
        ASSERT_LE(std::fabs(at - std::round(at)), 1.5e-4f)
            << "character " << i << ", step " << step;
        switches += crowd->decisions()[i].switched;
      }
    }
    latest = std::fmax(latest, playing_on.characters()[0].clip_time);
  }
  EXPECT_GT(switches, 20u);
  EXPECT_GT(latest, 19.f) << "the long clip played on without a switch";
}

// The crowd's search is searchBatch() with a scratch (seeded from each group's lowest bound), also
// in a crowd moved from the one create() made and moved again: the same winners, and the same
// rows costed, which a search without the scratch's seeds costs otherwise.
TEST(Crowd, SearchesWithItsScratchAfterAMove) {
  TestDatabase t(spec(12, 400, 4));
  constexpr uint32_t kCount = 48;
  Crowd crowd = create(t.db, kCount);
  std::vector<float> scratch(mmdb::batchScratchFloats(t.db));
  std::vector<mmdb::SearchResult> seeded, unseeded;
  bool seeds_differ = false;
  uint64_t compared = 0;
  for (int step = 0; step < 120; ++step) {
    if (step == 60) {
      Crowd moved = std::move(crowd);
      crowd = std::move(moved);
    }
    for (uint32_t i = 0; i < kCount; ++i) {
      const glm::vec2 stick = scriptedStick(i, step);
      ASSERT_TRUE(crowd.setStick(i, stick.x, stick.y).ok());
    }
    ASSERT_TRUE(crowd.beginStep(kDt).ok());
    ASSERT_TRUE(crowd.search().ok());
    const auto requests = crowd.requests();
    seeded.assign(requests.size(), mmdb::SearchResult{});
    unseeded.assign(requests.size(), mmdb::SearchResult{});
    ASSERT_TRUE(mmdb::searchBatch(t.db, requests, mmdb::Span<mmdb::SearchResult>(seeded),
                                  mmdb::Span<float>(scratch))
                    .ok());
    ASSERT_TRUE(mmdb::searchBatch(t.db, requests, mmdb::Span<mmdb::SearchResult>(unseeded)).ok());
    for (size_t k = 0; k < requests.size(); ++k) {
      const mmdb::SearchResult& mine = crowd.results()[k];
      ASSERT_EQ(mine.frame, seeded[k].frame) << "step " << step << ", request " << k;
      ASSERT_EQ(mine.evaluated, seeded[k].evaluated) << "step " << step << ", request " << k;
      ASSERT_EQ(mine.frame, unseeded[k].frame);
      seeds_differ = seeds_differ || unseeded[k].evaluated != seeded[k].evaluated;
      ++compared;
    }
    ASSERT_TRUE(crowd.endStep().ok());
  }
  EXPECT_GT(compared, uint64_t(kCount) * 120 / 12);
  EXPECT_TRUE(seeds_differ) << "the seeds change no count here: the test cannot tell them apart";
}

// A file whose poses are coded: the crowd decodes them once and plays what a caller's own
// decoded view plays.
TEST(Crowd, ACodedFileIsDecodedOnceAndPlaysAsTheDecodedView) {
  TestDatabase t(spec(3, 200, 4), /*coded=*/true);
  ASSERT_TRUE(t.db.posesCoded());
  std::vector<mmdb::Float4> s[mmdb::kPoseStreamCount];
  for (auto& v : s) v.resize(size_t(t.db.frameCount()) * t.db.jointCount());
  ASSERT_TRUE(t.db.decodePoses(0, t.db.frameCount(), {s[0], s[1], s[2], s[3]}).ok());
  const mmdb::PoseView view{0, t.db.frameCount(), s[0], s[1], s[2], s[3]};
  Crowd own = create(t.db, 4);
  CrowdSettings unlocked = startsAtOnce();
  unlocked.foot_locking = false;
  auto created = Crowd::create(t.db, 4, unlocked, view);
  ASSERT_TRUE(created.ok()) << created.error().message();
  Crowd given = std::move(created).value();
  for (int step = 0; step < 120; ++step) {
    for (uint32_t i = 0; i < 4; ++i) {
      const glm::vec2 stick = scriptedStick(i, step);
      ASSERT_TRUE(own.setStick(i, stick.x, stick.y).ok());
      ASSERT_TRUE(given.setStick(i, stick.x, stick.y).ok());
    }
    ASSERT_TRUE(own.step(kDt).ok());
    ASSERT_TRUE(given.step(kDt).ok());
    ASSERT_EQ(std::memcmp(own.modelTranslations().data(), given.modelTranslations().data(),
                          own.modelTranslations().size_bytes()),
              0);
  }
}

// Run-time weights per character reach that character's requests, and only its; bad ones are
// refused by block and leave the weights as they were.
// One DecodedPoses shared by two crowds: neither holds poses of its own, both play what a crowd
// that decodes for itself plays; a raw file's DecodedPoses is the file's view and holds nothing.
TEST(Crowd, CrowdsShareOneDecodedPoseSet) {
  TestDatabase t(spec(3, 200, 4), /*coded=*/true);
  auto decoded = mmdb::DecodedPoses::decode(t.db);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message();
  const mmdb::DecodedPoses shared = std::move(decoded).value();  // moved: the view stays valid
  EXPECT_EQ(shared.bytes(), size_t(t.db.frameCount()) * t.db.jointCount() * 16 * 4);
  CrowdSettings unlocked = startsAtOnce();
  unlocked.foot_locking = false;
  Crowd own = create(t.db, 4);
  EXPECT_EQ(own.ownedPoseBytes(), shared.bytes()) << "a crowd alone decodes its own";
  auto a = Crowd::create(t.db, 4, unlocked, shared.view());
  auto b = Crowd::create(t.db, 4, unlocked, shared.view());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().ownedPoseBytes(), 0u);
  EXPECT_EQ(b.value().ownedPoseBytes(), 0u);
  for (int step = 0; step < 120; ++step) {
    for (uint32_t i = 0; i < 4; ++i) {
      const glm::vec2 stick = scriptedStick(i, step);
      for (Crowd* crowd : {&own, &a.value(), &b.value()})
        ASSERT_TRUE(crowd->setStick(i, stick.x, stick.y).ok());
    }
    for (Crowd* crowd : {&own, &a.value(), &b.value()}) ASSERT_TRUE(crowd->step(kDt).ok());
    for (const Crowd* crowd : {&a.value(), &b.value()})
      ASSERT_EQ(std::memcmp(own.modelTranslations().data(), crowd->modelTranslations().data(),
                            own.modelTranslations().size_bytes()),
                0);
  }

  TestDatabase raw(spec(2, 100, 3));
  auto raw_poses = mmdb::DecodedPoses::decode(raw.db);
  ASSERT_TRUE(raw_poses.ok());
  EXPECT_EQ(raw_poses.value().bytes(), 0u);
  EXPECT_EQ(raw_poses.value().view().rotations.data(), raw.db.rawPoses().rotations.data());
  EXPECT_FALSE(mmdb::DecodedPoses::decode(Database()).ok());
}

TEST(Crowd, BlockWeightsArePerCharacter) {
  TestDatabase t(spec(3, 200, 2));
  Crowd crowd = create(t.db, 3);
  const std::vector<float> w{1.f, 1.f, 2.f, 2.f, 0.5f, 1.f, 3.f};
  ASSERT_EQ(w.size(), t.db.featureBlockCount());
  ASSERT_TRUE(crowd.setBlockWeights(1, w).ok());
  EXPECT_TRUE(crowd.blockWeights(0).empty());
  ASSERT_EQ(crowd.blockWeights(1).size(), w.size());
  EXPECT_EQ(crowd.blockWeights(1)[6], 3.f);
  ASSERT_TRUE(crowd.beginStep(kDt).ok());  // every character starts with a search
  ASSERT_EQ(crowd.requests().size(), 3u);
  EXPECT_TRUE(crowd.requests()[0].block_weights.empty());
  ASSERT_EQ(crowd.requests()[1].block_weights.size(), w.size());
  EXPECT_EQ(crowd.requests()[1].block_weights[2], 2.f);
  ASSERT_TRUE(crowd.search().ok());
  // The weighted character's result is the weighted search's.
  const mmdb::SearchResult expected = mmdb::searchExhaustive(t.db, crowd.requests()[1]).value();
  EXPECT_EQ(crowd.results()[1].frame, expected.frame);
  EXPECT_EQ(crowd.results()[1].cost, expected.cost);
  ASSERT_TRUE(crowd.endStep().ok());

  std::vector<float> bad = w;
  bad[4] = -1.f;
  const mmdb::Status refused = crowd.setBlockWeights(1, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(refused.message()).find("hip_velocity"), std::string::npos)
      << refused.message();
  EXPECT_EQ(crowd.blockWeights(1)[4], 0.5f);
  const std::vector<float> two(2, 1.f);
  EXPECT_FALSE(crowd.setBlockWeights(0, two).ok());
  EXPECT_FALSE(crowd.setBlockWeights(3, w).ok());
  ASSERT_TRUE(crowd.setBlockWeights(1, {}).ok());
  EXPECT_TRUE(crowd.blockWeights(1).empty());
}

TEST(Crowd, BadArgumentsAreRefused) {
  TestDatabase t(spec(2, 120, 2));
  const auto invalid = [](const mmdb::Status& s) {
    return !s.ok() && s.code() == ErrorCode::InvalidArgument;
  };
  const auto refused = [&](CrowdSettings settings) {
    settings.foot_locking = false;  // refused for what the test sets, not for the legs
    auto r = Crowd::create(t.db, 2, settings);
    return !r.ok() && r.error().code() == ErrorCode::InvalidArgument;
  };
  EXPECT_FALSE(Crowd::create(t.db, 0).ok());
  EXPECT_FALSE(Crowd::create(Database(), 2).ok());
  CrowdSettings s;
  s.max_drift = -1.f;
  EXPECT_TRUE(refused(s));
  s = {};
  s.transition_cost = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(refused(s));
  s = {};
  s.transition_cost = -1.f;
  EXPECT_TRUE(refused(s));
  s = {};
  s.inertialization_halflife = 0.f;
  EXPECT_TRUE(refused(s));
  s = {};
  s.controller_halflife = -0.1f;
  EXPECT_TRUE(refused(s));
  s = {};
  s.max_speed = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(refused(s));
  s = {};
  s.search_interval_ticks = (1u << 30) + 1;
  EXPECT_TRUE(refused(s));
  s = {};
  s.start_stagger_intervals = 17;
  EXPECT_TRUE(refused(s));
  s.start_stagger_intervals = 16;
  EXPECT_FALSE(refused(s));
  s.search_interval_ticks = 1u << 27;  // 16 intervals of it: 2^31 steps
  EXPECT_TRUE(refused(s));
  s.foot_locking = false;
  EXPECT_NE(std::strstr(Crowd::create(t.db, 2, s).error().message(), "start_stagger_intervals 16"),
            nullptr);
  std::vector<mmdb::Float4> short_stream(4);
  const mmdb::PoseView too_small{0, 1, short_stream, short_stream, short_stream, short_stream};
  CrowdSettings unlocked;
  unlocked.foot_locking = false;
  auto r = Crowd::create(t.db, 2, unlocked, too_small);
  EXPECT_TRUE(!r.ok() && r.error().code() == ErrorCode::InvalidArgument);

  Crowd crowd = create(t.db, 2);
  EXPECT_TRUE(invalid(crowd.setStick(2, 0.f, 1.f)));
  EXPECT_NE(std::strstr(crowd.setStick(2, 0.f, 1.f).message(), "character 2"), nullptr);
  EXPECT_TRUE(invalid(crowd.setStick(0, std::nanf(""), 1.f)));
  mmdb::StickInput nan_input;
  nan_input.desired_velocity.x = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(invalid(crowd.setInput(0, nan_input)));
  EXPECT_TRUE(invalid(crowd.setInput(5, mmdb::StickInput{})));
  EXPECT_TRUE(invalid(crowd.setTagFilter(2, 1, 0)));
  EXPECT_TRUE(invalid(crowd.forceSearch(7)));
  EXPECT_TRUE(invalid(crowd.step(-kDt)));
  EXPECT_TRUE(invalid(crowd.step(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(invalid(crowd.search()));
  EXPECT_TRUE(invalid(crowd.endStep()));
  ASSERT_TRUE(crowd.beginStep(kDt).ok());
  EXPECT_TRUE(invalid(crowd.beginStep(kDt)));
  ASSERT_EQ(crowd.results().size(), 2u);  // both start
  crowd.results()[1].frame = int32_t(t.db.frameCount());
  EXPECT_TRUE(invalid(crowd.endStep()));
  crowd.results()[1].frame = 0;
  EXPECT_TRUE(crowd.endStep().ok());
  EXPECT_TRUE(crowd.step(kDt).ok());
  EXPECT_TRUE(invalid(Crowd().step(kDt)));
  // A moved-from crowd is empty; the one it moved to steps on.
  Crowd moved = std::move(crowd);
  EXPECT_EQ(crowd.characterCount(), 0u);  // NOLINT(bugprone-use-after-move): on purpose
  EXPECT_TRUE(invalid(crowd.step(kDt)));
  EXPECT_TRUE(invalid(crowd.forceSearch(0)));
  EXPECT_TRUE(moved.step(kDt).ok());
  EXPECT_GE(moved.characters()[0].search_count, 1u);
}

}  // namespace
