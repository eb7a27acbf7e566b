// The synchronization of a character with its controller (mmdb/synchronization.h): the adjustment
// against answers worked out by hand, and the crowd keeping a character that the data cannot
// steer within its clamp, with its planted toes held.
#include "real_database.h"
#include "synthetic_database.h"

#include <mmdb/crowd.h>
#include <mmdb/motion_measures.h>
#include <mmdb/synchronization.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace {

using mmdb::AdjustmentJob;
using mmdb::Crowd;
using mmdb::CrowdSettings;
using mmdb::Database;
using mmdb::Synchronization;

constexpr float kPi = 3.14159265f;

glm::quat yaw(float angle) { return glm::angleAxis(angle, glm::vec3(0.f, 1.f, 0.f)); }

AdjustmentJob walking(float speed, float dt) {
  AdjustmentJob job;
  job.dt = dt;
  job.root_motion = glm::vec3(0.f, 0.f, speed * dt);
  return job;
}

// A gap the motion can hide closes by 1 - 2^(-dt / half-life) in a step.
TEST(Adjustment, ClosesTheGapByTheDampedShare) {
  AdjustmentJob job = walking(1.5f, 1.f / 60);
  job.sim_position = glm::vec3(0.02f, 0.f, 0.f);
  job.Run();
  const float share = 1.f - std::pow(2.f, -(1.f / 60) / 0.1f);
  EXPECT_NEAR(job.position.x, 0.02f * share, 1e-7f);
  EXPECT_NEAR(job.moved.x, 0.02f * share, 1e-7f);
  EXPECT_EQ(job.position.z, 0.f);
  // Turning: by the rotation half-life's share.
  AdjustmentJob turn = walking(1.5f, 1.f / 60);
  turn.root_turn = 0.5f;  // a turning clip may turn the character by half of 0.5 rad
  turn.sim_rotation = yaw(0.1f);
  turn.Run();
  const float turn_share = 1.f - std::pow(2.f, -(1.f / 60) / 0.2f);
  EXPECT_NEAR(mmdb::yawAngle(turn.rotation), 0.1f * turn_share, 1e-6f);
  EXPECT_NEAR(turn.turned, 0.1f * turn_share, 1e-6f);
}

// At most position_ratio of the step's own motion, and nothing while the clip stands still.
TEST(Adjustment, IsBoundedByTheCharactersOwnMotion) {
  AdjustmentJob job = walking(1.2f, 1.f / 60);
  job.sim_position = glm::vec3(0.1f, 0.f, 0.f);  // the damped step would be 0.0067 m
  job.Run();
  EXPECT_NEAR(glm::length(job.moved), 0.5f * 1.2f / 60, 1e-6f);
  EXPECT_NEAR(job.moved.z, 0.f, 1e-7f);  // along the gap, not the motion
  AdjustmentJob still = walking(0.f, 1.f / 60);
  still.sim_position = glm::vec3(0.1f, 0.f, 0.f);
  still.sim_rotation = yaw(0.3f);
  still.Run();
  EXPECT_EQ(still.moved, glm::vec3(0.f));
  EXPECT_EQ(still.turned, 0.f);
}

// Past max_distance the character is brought back to it where no foot is held, and past
// max_angle turned back onto it.
TEST(Adjustment, ClampsDistanceAndAngle) {
  AdjustmentJob job = walking(0.f, 1.f / 60);
  job.sim_position = glm::vec3(0.3f, 0.f, 0.4f);  // 0.5 m away
  job.sim_rotation = yaw(2.f);
  job.Run();
  EXPECT_NEAR(job.position.x, 0.3f - 0.15f * 0.6f, 1e-6f);
  EXPECT_NEAR(job.position.z, 0.4f - 0.15f * 0.8f, 1e-6f);
  EXPECT_NEAR(mmdb::yawAngle(job.rotation), 2.f - kPi / 2, 1e-5f);
  EXPECT_NEAR(mmdb::yawAngle(job.rotation * glm::inverse(job.sim_rotation)), -kPi / 2, 1e-5f);
  EXPECT_NEAR(job.turned, 2.f - kPi / 2, 1e-5f);
}

// A locked toe holds the way back to max_distance, to hard_distance: there the clamp moves the
// character whatever its feet.
TEST(Adjustment, LockedToesHoldTheWayBackUntilTheHardClamp) {
  AdjustmentJob job = walking(0.f, 1.f / 60);
  job.settings.hard_distance = 0.3f;
  job.sim_position = glm::vec3(0.25f, 0.f, 0.f);  // past max_distance, within hard_distance
  job.locked_legs = 2;
  job.toes[1] = glm::vec3(-0.1f, 0.f, 0.f);
  job.locks[1] = glm::vec3(-0.1f, 0.f, 0.f);  // on its lock: foot_reach 0.1 m to go
  job.Run();
  EXPECT_NEAR(job.position.x, 0.1f, 1e-5f) << "as far as the toe may go";
  EXPECT_LE(job.position.x, 0.1f + 1e-6f);
  job.position = glm::vec3(0.f);
  job.sim_position = glm::vec3(0.6f, 0.f, 0.f);  // past hard_distance
  job.Run();
  EXPECT_NEAR(job.position.x, 0.6f - 0.3f, 1e-6f) << "the hard clamp, feet or not";
}

// A locked toe: the adjustment stops where the animated toe would be foot_reach from its lock,
// and moves it back towards the lock freely.
TEST(Adjustment, KeepsLockedToesWithinReach) {
  AdjustmentJob job = walking(6.f, 1.f / 60);  // allows 0.05 m a step
  job.settings.position_halflife = 1e-4f;      // the whole gap at once
  job.sim_position = glm::vec3(0.05f, 0.f, 0.f);
  job.locked_legs = 1;
  job.toes[0] = glm::vec3(0.1f, 0.f, 0.f);
  job.locks[0] = glm::vec3(0.1f - 0.08f, 0.f, 0.f);  // the animated toe is 0.08 m from its lock
  job.Run();
  // It may go 0.02 m further (foot_reach 0.1), to 1/65536 of the step.
  EXPECT_LE(job.position.x, 0.02f + 1e-6f);
  EXPECT_GE(job.position.x, 0.02f - 1e-5f);
  // Towards the lock it goes the whole way.
  job.position = glm::vec3(0.f);
  job.locks[0] = glm::vec3(0.1f + 0.08f, 0.f, 0.f);
  job.Run();
  EXPECT_NEAR(job.position.x, 0.05f, 1e-6f);
}

TEST(Synchronization, BadSettingsNameTheSetting) {
  mmdb::SynchronizationSettings s;
  EXPECT_TRUE(mmdb::validateSynchronization("", s).ok());
  s.mode = static_cast<Synchronization>(3);
  EXPECT_EQ(std::string(mmdb::validateSynchronization("X: ", s).message()),
            "X: synchronization mode 3 is unknown: 0 none, 1 the character follows the "
            "controller, 2 the controller follows the character");
  s = {};
  s.rotation_halflife = 0.f;
  EXPECT_EQ(std::string(mmdb::validateSynchronization("", s).message()),
            "synchronization rotation_halflife 0 must be finite and > 0");
  s = {};
  s.max_distance = NAN;
  EXPECT_EQ(std::string(mmdb::validateSynchronization("", s).message()),
            "synchronization max_distance nan must be finite and >= 0");
  s = {};
  s.position_ratio = -1.f;
  EXPECT_FALSE(mmdb::validateSynchronization("", s).ok());
  s = {};
  s.foot_reach = INFINITY;
  EXPECT_FALSE(mmdb::validateSynchronization("", s).ok());
}

TEST(Synchronization, BadWarpingSettingsNameTheSetting) {
  mmdb::SynchronizationSettings s;
  s.stride_min = 1.5f;
  EXPECT_EQ(std::string(mmdb::validateSynchronization("", s).message()),
            "synchronization stride_min 1.5 must be finite and >= 0 and at most 1");
  s = {};
  s.stride_max = 0.5f;
  EXPECT_EQ(std::string(mmdb::validateSynchronization("", s).message()),
            "synchronization stride_max 0.5 must be finite and >= 1 and at most 4");
  s = {};
  s.warp_angle = 2.f;
  EXPECT_EQ(std::string(mmdb::validateSynchronization("", s).message()),
            "synchronization warp_angle 2 must be finite and >= 0 and at most pi/2");
  s = {};
  s.warp_halflife = 0.f;
  EXPECT_EQ(std::string(mmdb::validateSynchronization("", s).message()),
            "synchronization warp_halflife 0 must be finite and > 0");
}

// --- Warping: known answers ---

mmdb::SynchronizationSettings warping(float stride_min, float stride_max, float angle) {
  mmdb::SynchronizationSettings s;
  s.stride_min = stride_min;
  s.stride_max = stride_max;
  s.warp_angle = angle;
  s.warp_halflife = 1e-3f;  // reaches its aim in one step of 1/60 s
  return s;
}

void expectNear(const glm::vec3& a, const glm::vec3& b, const char* what) {
  EXPECT_NEAR(a.x, b.x, 1e-5f) << what;
  EXPECT_NEAR(a.y, b.y, 1e-5f) << what;
  EXPECT_NEAR(a.z, b.z, 1e-5f) << what;
}

mmdb::SynchronizationSettings withoutWarping() {
  mmdb::SynchronizationSettings s;
  s.stride_min = 1.f;
  s.stride_max = 1.f;
  s.warp_angle = 0.f;
  return s;
}

TEST(Warping, OffIsTheIdentity) {
  EXPECT_TRUE(mmdb::warpingOn(mmdb::SynchronizationSettings{})) << "on by default";
  mmdb::SynchronizationSettings s = withoutWarping();
  EXPECT_FALSE(mmdb::warpingOn(s));
  mmdb::GroundWarp warp;
  warp.xx = 0.5f;  // any state
  mmdb::stepGroundWarp(s, 1.f / 60, {0, 0, 1}, {3, 0, 0}, warp);
  EXPECT_TRUE(warp.identity());
  s = warping(0.f, 2.f, 1.f);
  s.mode = Synchronization::None;
  EXPECT_FALSE(mmdb::warpingOn(s)) << "only while the character follows its controller";
}

// A walk at 1 m/s asked for 0.25 m/s: the stride shrinks to a quarter along the way the clip goes;
// across it nothing changes, and heights never do.
TEST(Warping, StrideScalesAlongTheWayTheClipGoes) {
  mmdb::GroundWarp warp;
  mmdb::stepGroundWarp(warping(0.f, 1.f, 0.f), 1.f / 60, {0, 0, 1}, {0, 0, 0.25f}, warp);
  expectNear(warp.apply({0, 0, 1}), {0, 0, 0.25f}, "along");
  expectNear(warp.apply({1, 0.7f, 0}), {1, 0.7f, 0}, "across and up");
  // Asked to stand, within stride_min 0.5: half the stride.
  warp = {};
  mmdb::stepGroundWarp(warping(0.5f, 1.f, 0.f), 1.f / 60, {0, 0, 1}, {0, 0, 0}, warp);
  expectNear(warp.apply({0, 0, 1}), {0, 0, 0.5f}, "bounded");
  // A clip going along +X at 2 m/s asked for 3 m/s, within stride_max 1.25.
  warp = {};
  mmdb::stepGroundWarp(warping(0.f, 1.25f, 0.f), 1.f / 60, {2, 0, 0}, {3, 0, 0}, warp);
  expectNear(warp.apply({1, 0, 0}), {1.25f, 0, 0}, "lengthened");
  expectNear(warp.apply({0, 0, 1}), {0, 0, 1}, "across");
}

// A forward walk asked to go right (+X): turned by at most warp_angle, then the stride brought to
// the speed along the turned way: at 45 degrees, cos 45 of the clip's.
TEST(Warping, OrientationTurnsTheWayTheClipGoes) {
  mmdb::GroundWarp warp;
  mmdb::stepGroundWarp(warping(0.f, 4.f, kPi / 4), 1.f / 60, {0, 0, 1}, {1, 0, 0}, warp);
  expectNear(warp.apply({0, 0, 1}), {0.5f, 0, 0.5f}, "turned and shortened");
  // Within the angle, the whole way: a 30 degree turn to the left (-X) at the same speed.
  warp = {};
  const glm::vec3 left(-std::sin(kPi / 6), 0, std::cos(kPi / 6));
  mmdb::stepGroundWarp(warping(0.f, 4.f, kPi / 4), 1.f / 60, {0, 0, 1}, left, warp);
  expectNear(warp.apply({0, 0, 1}), left, "turned");
  expectNear(warp.apply({1, 0, 0}), {std::cos(kPi / 6), 0, std::sin(kPi / 6)}, "a rotation");
}

// Asked to go back the way it came, a walk is not turned (left and right are a coin's toss): the
// map is the same whichever side the wanted velocity leans to, and shortens the stride only.
TEST(Warping, NeverTurnsForAVelocityBehind) {
  const mmdb::SynchronizationSettings s = warping(0.25f, 1.f, kPi / 2);
  mmdb::GroundWarp back, left, right;
  mmdb::stepGroundWarp(s, 1.f / 60, {0, 0, 1}, {0, 0, -1}, back);
  expectNear(back.apply({0, 0, 1}), {0, 0, 0.25f}, "stride_min, not turned");
  expectNear(back.apply({1, 0, 0}), {1, 0, 0}, "across");
  mmdb::stepGroundWarp(s, 1.f / 60, {0, 0, 1}, {-1e-3f, 0, -1}, left);
  mmdb::stepGroundWarp(s, 1.f / 60, {0, 0, 1}, {1e-3f, 0, -1}, right);
  expectNear(left.apply({1, 0, 0}), right.apply({1, 0, 0}), "continuous behind");
  // Turned in full up to 135 degrees off.
  mmdb::GroundWarp aside;
  mmdb::stepGroundWarp(s, 1.f / 60, {0, 0, 1}, {-1, 0, -1}, aside);
  expectNear(aside.apply({0, 0, 1}), {-1, 0, 0}, "a quarter turn");
  expectNear(aside.apply({1, 0, 0}), {0, 0, 1}, "a rotation");
}

// The map eases towards its aim by 1 - 2^(-dt / warp_halflife), and back to the identity while
// the clip's root is nearly still (0.05 m/s or less).
TEST(Warping, EasesTowardsItsAim) {
  mmdb::SynchronizationSettings s = warping(0.f, 1.f, 0.f);
  s.warp_halflife = 0.1f;
  mmdb::GroundWarp warp;
  mmdb::stepGroundWarp(s, 0.1f, {0, 0, 1}, {0, 0, 0}, warp);
  EXPECT_NEAR(warp.zz, 0.5f, 1e-6f) << "half way from 1 to 0";
  EXPECT_NEAR(warp.xx, 1.f, 1e-6f);
  mmdb::stepGroundWarp(s, 0.1f, {0, 0, 0.05f}, {0, 0, 0}, warp);
  EXPECT_NEAR(warp.zz, 0.75f, 1e-6f) << "half way back to the identity";
}

struct TestDatabase {
  explicit TestDatabase(const mmdb::cook::CookedDatabase& cooked) {
    bytes = mmdb::test::serializeAligned(cooked);
    auto opened = Database::fromMemory(bytes.data(), bytes.size());
    EXPECT_TRUE(opened.ok()) << opened.error().message();
    if (opened.ok()) db = std::move(opened.value());
  }
  mmdb::test::AlignedBytes bytes;
  Database db;
};

struct CrowdRun {
  mmdb::MotionMeasures measures;
  float farthest = 0;  // the largest ground distance from a character to its simulation root
  float widest = 0;    // ... and turn from its facing, rad
};

// `characters` characters for `steps` steps of 1/60 s with the default settings but `mode`, each
// asked in turn to go sideways, backwards and to stand (none of which the databases below hold),
// at `speed` m/s.
CrowdRun runAgainstTheData(const Database& db, Synchronization mode, uint32_t characters, int steps,
                           float speed, const mmdb::SynchronizationSettings* sync = nullptr) {
  CrowdRun run;
  const float dt = 1.f / 60;
  CrowdSettings settings;
  if (sync) settings.synchronization = *sync;
  settings.synchronization.mode = mode;
  auto made = Crowd::create(db, characters, settings);
  EXPECT_TRUE(made.ok()) << made.error().message();
  if (!made.ok()) return run;
  Crowd& crowd = made.value();
  auto meter = mmdb::MotionMeter::create(crowd);
  EXPECT_TRUE(meter.ok());
  for (int step = 0; step < steps; ++step) {
    for (uint32_t c = 0; c < characters; ++c) {
      const int phase = (step / 150 + int(c)) % 4;
      const float x = phase == 0 ? 1.f : phase == 1 ? -0.6f : 0.f;
      const float z = phase == 2 ? -0.8f : 0.f;
      EXPECT_TRUE(
          crowd
              .setInput(c, mmdb::StickInput{glm::vec3(x, 0.f, z) * speed, glm::vec3(0.f, 0.f, 1.f)})
              .ok());
    }
    EXPECT_TRUE(crowd.step(dt).ok());
    EXPECT_TRUE(meter.value().record(crowd, dt).ok());
    for (const mmdb::CrowdCharacter& ch : crowd.characters()) {
      if (!ch.playing) continue;
      const glm::vec3 gap = ch.achieved_position - ch.sim.position;
      run.farthest = std::fmax(run.farthest, std::sqrt(gap.x * gap.x + gap.z * gap.z));
      run.widest = std::fmax(run.widest, std::fabs(mmdb::yawAngle(ch.achieved_rotation *
                                                                  glm::inverse(ch.sim.rotation))));
    }
  }
  run.measures = meter.value().total();
  return run;
}

// Walking clips only (no standing, no sideways steps), a stick that asks for both: without
// synchronization the character drifts metres from its controller; following it, the character
// stays within the clamp, and its planted toes slide no more than the clips' own do (these
// synthetic toes slide in the clips); the controller following the character sits on it.
TEST(Synchronization, ACharacterTheDataCannotSteerStaysOnItsController) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 6;
  spec.frames_per_clip = 300;
  spec.joints = 10;
  spec.legs = true;
  TestDatabase t(mmdb::test::makeSyntheticDatabase(spec));
  CrowdRun runs[3];
  for (const Synchronization mode : {Synchronization::None, Synchronization::CharacterFollows,
                                     Synchronization::ControllerFollows}) {
    CrowdRun& run = runs[uint32_t(mode)];
    run = runAgainstTheData(t.db, mode, 8, 1200, 1.5f);
    const mmdb::MotionMeasures& m = run.measures;
    const std::string name = "mode " + std::to_string(uint32_t(mode));
    // The meter's distance is the one seen here, its adjustments those of CharacterFollows.
    EXPECT_NEAR(m.controller_distance_m.max, run.farthest, 1e-5) << name;
    EXPECT_GT(m.controller_distance_m.count, 0u) << name;
    if (mode == Synchronization::CharacterFollows) {
      EXPECT_GT(m.adjustment_m_per_s, 0.0) << name;
      EXPECT_GT(m.adjustment_deg_per_s, 0.0) << name;
    } else {
      EXPECT_EQ(m.adjustment_m_per_s, 0.0) << name;
      EXPECT_EQ(m.adjustment_deg_per_s, 0.0) << name;
    }
  }
  EXPECT_GT(runs[0].farthest, 1.f) << "root motion alone drifts from the controller";
  EXPECT_LE(runs[1].farthest, 0.15f + 1e-4f);
  EXPECT_LE(runs[1].widest, kPi / 2 + 1e-4f);
  EXPECT_LE(runs[2].farthest, 1e-5f);
  const mmdb::MotionMeasures& none = runs[0].measures;
  const mmdb::MotionMeasures& follows = runs[1].measures;
  EXPECT_LE(follows.planted_slide_mm.p50, none.planted_slide_mm.p50 + 0.1);
  EXPECT_LE(follows.phase_share_over_limit, none.phase_share_over_limit * 1.5 + 0.02);
  EXPECT_LT(follows.trajectory_error_m.mean, none.trajectory_error_m.mean * 0.2);
}

// Warping the same walks (the defaults): the root motion goes where the controller asks (shorter
// strides to stand, turned to step aside), so the character keeps far closer to its controller
// than the adjustment alone keeps it, and its planted toes slide no more.
TEST(Synchronization, WarpingBringsTheCharacterCloserWithItsFeetPlanted) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 6;
  spec.frames_per_clip = 300;
  spec.joints = 10;
  spec.legs = true;
  TestDatabase t(mmdb::test::makeSyntheticDatabase(spec));
  const mmdb::SynchronizationSettings off = withoutWarping();
  const CrowdRun plain =
      runAgainstTheData(t.db, Synchronization::CharacterFollows, 8, 1200, 1.5f, &off);
  const CrowdRun warped = runAgainstTheData(t.db, Synchronization::CharacterFollows, 8, 1200, 1.5f);
  const mmdb::MotionMeasures& w = warped.measures;
  const mmdb::MotionMeasures& p = plain.measures;
  std::printf(
      "[ warping  ] controller distance mean %.3f m (adjusted only %.3f), adjusted %.3f m/s "
      "(%.3f), toes slide p90 %.2f mm (%.2f), phases over 21 mm %.1f %% (%.1f %%), "
      "trajectory error %.3f m (%.3f)\n",
      w.controller_distance_m.mean, p.controller_distance_m.mean, w.adjustment_m_per_s,
      p.adjustment_m_per_s, w.planted_slide_mm.p90, p.planted_slide_mm.p90,
      100 * w.phase_share_over_limit, 100 * p.phase_share_over_limit, w.trajectory_error_m.mean,
      p.trajectory_error_m.mean);
  EXPECT_LE(warped.farthest, 0.15f + 1e-4f);
  EXPECT_LT(w.adjustment_m_per_s, 0.8 * p.adjustment_m_per_s) << "less dragged";
  EXPECT_LT(w.planted_slide_mm.p90, 0.9 * p.planted_slide_mm.p90);
  EXPECT_LT(w.phase_share_over_limit, 0.75 * p.phase_share_over_limit);
  EXPECT_LE(w.trajectory_error_m.mean, p.trajectory_error_m.mean + 0.01);
}

// The same on real motion: bandai-1's forward clips (walk, run, dash, mirrored), asked to go
// sideways, backwards and to stand. The targets of a default crowd: within the clamp, planted
// toes still (p90 at most 2 mm a step, at most 5 % of contact phases over 21 mm).
TEST(Synchronization, ForwardOnlyBandaiStaysOnItsControllerWithItsFeetPlanted) {
  std::string why;
  const mmdb::test::RealDatabase* real = mmdb::test::bandaiForwardDatabase(&why);
  if (!real) GTEST_SKIP() << why;
  const CrowdRun none = runAgainstTheData(real->db, Synchronization::None, 16, 1200, 1.5f);
  const CrowdRun run =
      runAgainstTheData(real->db, Synchronization::CharacterFollows, 16, 1200, 1.5f);
  const mmdb::SynchronizationSettings off = withoutWarping();
  const CrowdRun unwarped =
      runAgainstTheData(real->db, Synchronization::CharacterFollows, 16, 1200, 1.5f, &off);
  std::printf(
      "[ sync     ] without warping: controller distance p50 %.3f, toes slide p90 %.2f mm, "
      "phases over 21 mm %.1f %%\n",
      unwarped.measures.controller_distance_m.p50, unwarped.measures.planted_slide_mm.p90,
      100 * unwarped.measures.phase_share_over_limit);
  const mmdb::MotionMeasures& m = run.measures;
  std::printf(
      "[ sync     ] bandai-1 forward clips, 16 characters, 20 s: controller distance p50 %.3f "
      "p95 %.3f max %.3f m (none: p95 %.2f m), adjusted %.3f m/s %.1f deg/s; toes slide p90 "
      "%.2f mm (none %.2f), phases over 21 mm %.1f %% (none %.1f %%); switches %.2f /s; "
      "trajectory error %.3f m (none %.3f)\n",
      m.controller_distance_m.p50, m.controller_distance_m.p95, m.controller_distance_m.max,
      none.measures.controller_distance_m.p95, m.adjustment_m_per_s, m.adjustment_deg_per_s,
      m.planted_slide_mm.p90, none.measures.planted_slide_mm.p90, 100 * m.phase_share_over_limit,
      100 * none.measures.phase_share_over_limit, m.switch_rate, m.trajectory_error_m.mean,
      none.measures.trajectory_error_m.mean);
  EXPECT_GT(none.farthest, 1.f);
  EXPECT_LE(run.farthest, 0.15f + 1e-4f);
  EXPECT_LE(run.widest, kPi / 2 + 1e-4f);
  EXPECT_LT(m.trajectory_error_m.mean, 0.25);
}

}  // namespace
