// Foot locking and two-bone leg IK: the IK reaches what it can reach and keeps bone lengths, stops
// at the length buffer short of what it cannot; a planted toe that the animation slides is held in
// the world, and lets go past the unlock radius with a blend that moves no faster than it allows;
// locking off plays exactly the animation; bad legs and bad settings are refused with their
// names. On bandai-1, when the corpus is present, locked toes stay put.
#include "playback/playback_run.h"  // the crowd's four-at-once foot lock
#include "real_database.h"
#include "synthetic_database.h"

#include <mmdb/crowd.h>
#include <mmdb/motion_measures.h>
#include <mmdb/playback.h>
#include <mmdb/stick_script.h>

#include <gtest/gtest.h>

#include <glm/geometric.hpp>
#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using mmdb::Crowd;
using mmdb::CrowdSettings;
using mmdb::Database;
using mmdb::ErrorCode;
using mmdb::FootLock;
using mmdb::LegChain;

constexpr float kDt = 1.f / 60;
const glm::vec3 kX(1.f, 0.f, 0.f);

// One leg off a root: 0 hips, 1 upper leg, 2 knee, 3 foot, 4 toe; bones of 0.4 m, the toe 0.12 m
// ahead of the ankle and 0.06 m below it.
struct Leg {
  Leg(float hip = -0.3f, float knee = 0.6f) {
    lt = {{0.f, 0.92f, 0.f},
          {0.1f, -0.04f, 0.f},
          {0.f, -0.4f, 0.f},
          {0.f, -0.4f, 0.f},
          {0.f, -0.06f, 0.12f}};
    lr = {glm::quat(1, 0, 0, 0), glm::angleAxis(hip, kX), glm::angleAxis(knee, kX),
          glm::angleAxis(-(hip + knee), kX), glm::quat(1, 0, 0, 0)};
    fk();
  }
  void fk() {
    mmdb::ForwardKinematicsJob job;
    job.parents = parents;
    job.local_rotations = lr;
    job.local_translations = lt;
    job.model_rotations = mr;
    job.model_translations = mt;
    ASSERT_TRUE(job.Run().ok());
  }
  mmdb::TwoBoneIkJob ik(const glm::vec3& target) {
    mmdb::TwoBoneIkJob job;
    job.parents = parents;
    job.upper = 1;
    job.knee = 2;
    job.end = 3;
    job.target = target;
    job.local_rotations = lr;
    job.local_translations = lt;
    job.model_rotations = mr;
    job.model_translations = mt;
    return job;
  }
  LegChain chain() const {
    LegChain c;
    c.upper_leg = 1;
    c.knee = 2;
    c.foot = 3;
    c.toe = 4;
    c.contact_bit = 0;
    c.toe_tip = glm::vec3(0.f, 0.f, 1.f);
    return c;
  }
  std::vector<int32_t> parents{-1, 0, 1, 2, 3};
  std::vector<glm::quat> lr, mr = std::vector<glm::quat>(5);
  std::vector<glm::vec3> lt, mt = std::vector<glm::vec3>(5);
};

float angleBetween(const glm::quat& a, const glm::quat& b) {
  const glm::quat d = glm::normalize(a) * glm::inverse(glm::normalize(b));
  return 2.f * std::atan2(glm::length(glm::vec3(d.x, d.y, d.z)), std::abs(d.w));
}

// The model pose is the FK of the local one, joint by joint.
void expectConsistent(const Leg& leg) {
  Leg copy = leg;
  copy.fk();
  for (size_t j = 0; j < leg.mt.size(); ++j) {
    EXPECT_LT(glm::length(copy.mt[j] - leg.mt[j]), 1e-6f) << "joint " << j;
    EXPECT_LT(angleBetween(copy.mr[j], leg.mr[j]), 1e-5f) << "joint " << j;
  }
}

TEST(TwoBoneIk, ReachesAReachableTargetAndKeepsBoneLengths) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  int checked = 0;
  for (int i = 0; i < 500; ++i) {
    Leg leg(0.8f * unit(rng), 0.05f + 1.2f * (0.5f + 0.5f * unit(rng)));
    const glm::vec3 upper = leg.mt[1];
    // Anywhere from 0.15 m to 0.77 m from the hip (the chain folds to 0 and reaches 0.8 less
    // the 0.015 m buffer).
    glm::vec3 direction(unit(rng), unit(rng), unit(rng));
    if (glm::length(direction) < 0.1f) continue;
    direction = glm::normalize(direction);
    const float distance = 0.15f + 0.62f * (0.5f + 0.5f * unit(rng));
    const glm::vec3 target = upper + distance * direction;
    const std::vector<glm::vec3> before = leg.mt;
    ASSERT_TRUE(leg.ik(target).Run().ok());
    SCOPED_TRACE("case " + std::to_string(i));
    EXPECT_LT(glm::length(leg.mt[3] - target), 1e-3f) << "the foot reaches the target";
    EXPECT_LT(glm::length(leg.mt[3] - target), 1e-5f) << "to float precision";
    EXPECT_NEAR(glm::length(leg.mt[2] - leg.mt[1]), 0.4f, 1e-5f) << "the thigh keeps its length";
    EXPECT_NEAR(glm::length(leg.mt[3] - leg.mt[2]), 0.4f, 1e-5f) << "the shin keeps its length";
    EXPECT_NEAR(glm::length(leg.mt[4] - leg.mt[3]), glm::length(before[4] - before[3]), 1e-5f);
    EXPECT_EQ(leg.mt[0], before[0]) << "above the chain nothing moves";
    EXPECT_EQ(leg.mt[1], before[1]);
    EXPECT_EQ(leg.lr[0], glm::quat(1, 0, 0, 0));
    expectConsistent(leg);
    ++checked;
  }
  EXPECT_GT(checked, 400);
}

TEST(TwoBoneIk, AnUnreachableTargetStopsAtTheLengthBuffer) {
  for (const glm::vec3 target : {glm::vec3(0.1f, -1.5f, 0.3f), glm::vec3(2.f, 0.5f, -1.f)}) {
    Leg leg;  // bent: reaches less than the chain's length less the buffer
    ASSERT_LT(glm::length(leg.mt[3] - leg.mt[1]), 0.8f - 0.015f);
    ASSERT_TRUE(leg.ik(target).Run().ok());
    const glm::vec3 reach = leg.mt[3] - leg.mt[1];
    EXPECT_NEAR(glm::length(reach), 0.8f - mmdb::kDefaultIkMaxLengthBuffer, 1e-5f);
    EXPECT_GT(glm::dot(glm::normalize(reach), glm::normalize(target - leg.mt[1])), 1.f - 1e-6f)
        << "on the line towards the target";
    EXPECT_NEAR(glm::length(leg.mt[2] - leg.mt[1]), 0.4f, 1e-5f);
    EXPECT_NEAR(glm::length(leg.mt[3] - leg.mt[2]), 0.4f, 1e-5f);
    expectConsistent(leg);
  }
  // A chain the pose already has straighter than that is not pulled any straighter (nor bent).
  Leg straight(0.f, 0.02f);
  const float reach = glm::length(straight.mt[3] - straight.mt[1]);
  ASSERT_GT(reach, 0.8f - 0.015f);
  ASSERT_TRUE(straight.ik(straight.mt[1] + glm::vec3(0.f, -3.f, 0.f)).Run().ok());
  EXPECT_NEAR(glm::length(straight.mt[3] - straight.mt[1]), reach, 1e-5f);
}

TEST(TwoBoneIk, AStraightChainBendsItsKneeForward) {
  Leg leg(0.f, 0.f);  // straight down
  const glm::vec3 target = leg.mt[1] + glm::vec3(0.f, -0.6f, 0.f);
  ASSERT_TRUE(leg.ik(target).Run().ok());
  EXPECT_LT(glm::length(leg.mt[3] - target), 1e-5f);
  EXPECT_GT(leg.mt[2].z - leg.mt[1].z, 0.2f) << "the knee goes towards knee_forward (+Z)";
}

// A nearly straight knee's own plane is noise: a mocap knee at full stretch bends a little
// forward, a little sideways or a little past straight from frame to frame. Bent to a target
// closer than its length, the knee goes forward whatever that noise, and moves little as the
// noise turns round (it used to follow the tiny bend, and swung 25 cm back in one step on
// bandai-1 as a knee passed straight).
TEST(TwoBoneIk, ANearlyStraightKneeBendsForwardWhateverItsTinyBend) {
  const glm::vec3 hip = Leg(0.f, 0.f).mt[1];
  const glm::vec3 target = hip + glm::vec3(0.f, -0.7f, 0.f);
  glm::vec3 previous(0.f);
  for (int i = 0; i <= 72; ++i) {
    const float around = float(i) * 2.f * 3.14159265f / 72.f;  // the tiny bend's axis turns
    Leg leg(0.f, 0.f);
    leg.lr[2] = glm::angleAxis(0.02f, glm::vec3(std::cos(around), 0.f, std::sin(around)));
    leg.fk();
    ASSERT_TRUE(leg.ik(target).Run().ok());
    SCOPED_TRACE("bend axis at " + std::to_string(i * 5) + " degrees");
    EXPECT_LT(glm::length(leg.mt[3] - target), 1e-5f) << "the foot reaches the target";
    EXPECT_NEAR(glm::length(leg.mt[2] - leg.mt[1]), 0.4f, 1e-5f);
    EXPECT_GT(leg.mt[2].z - hip.z, 0.15f) << "the knee goes forward";
    if (i > 0) {
      EXPECT_LT(glm::length(leg.mt[2] - previous), 0.02f) << "and turns smoothly";
    }
    previous = leg.mt[2];
  }
  // A well bent knee keeps its own plane, even one bent sideways: the lean towards knee_forward
  // turns it by a few degrees at most.
  Leg sideways(0.f, 0.f);
  sideways.lr[2] = glm::angleAxis(0.8f, glm::vec3(0.f, 0.f, 1.f));  // the knee bends to -X
  sideways.fk();
  const glm::vec3 knee_before = sideways.mt[2] - sideways.mt[1];
  ASSERT_TRUE(sideways.ik(sideways.mt[3]).Run().ok());
  const glm::vec3 knee_after = sideways.mt[2] - sideways.mt[1];
  EXPECT_LT(
      std::acos(std::fmin(glm::dot(glm::normalize(knee_before), glm::normalize(knee_after)), 1.f)),
      0.1f);
}

// A knee bent backwards, as a transition between two poses can leave one, bends forwards as
// far: from 34 degrees forwards through straight to 34 degrees backwards, the bent knee stays in
// front and moves smoothly (it used to follow a backward bend past 6 degrees, and flipped round
// in one step as the bend crossed it).
TEST(TwoBoneIk, AKneeBentBackwardsBendsForwards) {
  const glm::vec3 hip = Leg(0.f, 0.f).mt[1];
  const glm::vec3 target = hip + glm::vec3(0.f, -0.7f, 0.f);
  glm::vec3 previous(0.f);
  for (int i = 0; i <= 60; ++i) {
    const float bend = 0.6f - 0.02f * float(i);  // about +X: forwards above 0, backwards below
    Leg leg(0.f, 0.f);
    leg.lr[2] = glm::angleAxis(bend, glm::vec3(1.f, 0.f, 0.f));
    leg.fk();
    ASSERT_TRUE(leg.ik(target).Run().ok());
    SCOPED_TRACE("bend " + std::to_string(bend) + " rad");
    EXPECT_LT(glm::length(leg.mt[3] - target), 1e-5f) << "the foot reaches the target";
    EXPECT_GT(leg.mt[2].z - hip.z, 0.15f) << "the knee is in front";
    if (i > 0) {
      EXPECT_LT(glm::length(leg.mt[2] - previous), 0.02f) << "and moves smoothly";
    }
    previous = leg.mt[2];
  }
}

TEST(TwoBoneIk, BadJobsAreRefused) {
  Leg leg;
  mmdb::TwoBoneIkJob job = leg.ik(glm::vec3(0.f));
  job.end = 4;  // its parent is the foot, not the knee
  EXPECT_EQ(job.Run().code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(job.Validate().message(),
               "TwoBoneIkJob: joint 2 must be the parent of 4, and 1 the parent of 2");
  job = leg.ik(glm::vec3(0.f));
  job.max_length_buffer = -0.01f;
  EXPECT_STREQ(job.Validate().message(),
               "TwoBoneIkJob: max_length_buffer -0.01 m must be finite and >= 0");
  job = leg.ik(glm::vec3(std::nanf(""), 0.f, 0.f));
  EXPECT_EQ(job.Validate().code(), ErrorCode::InvalidArgument);
  job = leg.ik(glm::vec3(0.f));
  job.model_translations = job.model_translations.subspan(0, 4);
  EXPECT_EQ(job.Validate().code(), ErrorCode::InvalidArgument);
  const std::vector<glm::vec3> before = leg.mt;
  EXPECT_FALSE(job.Run().ok());
  EXPECT_EQ(leg.mt, before) << "a refused job touches nothing";
}

// The foot lock of one leg, stepped by hand: the leg keeps its animated pose while its placement
// in the world moves (the character travels, the pose does not: a toe that slides).
struct LockedLeg {
  Leg animated{-0.5f, 1.f};  // well bent: the ankle reaches 0.2 m back and more
  LegChain chain = animated.chain();
  FootLock foot;
  Leg shown;
  mmdb::FootLockSettings settings;

  mmdb::Status step(const glm::vec3& position, bool contact, bool reset = false) {
    shown = animated;
    mmdb::FootLockJob job;
    job.parents = shown.parents;
    job.legs = mmdb::Span<const LegChain>(&chain, 1);
    job.settings = settings;
    job.contacts = contact ? 1u : 0u;
    job.position = position;
    job.dt = kDt;
    job.reset = reset;
    job.feet = mmdb::Span<FootLock>(&foot, 1);
    job.local_rotations = shown.lr;
    job.local_translations = shown.lt;
    job.model_rotations = shown.mr;
    job.model_translations = shown.mt;
    return job.Run();
  }
  glm::vec3 toeWorld(const glm::vec3& position) const { return position + shown.mt[4]; }
  glm::vec3 animatedToe(const glm::vec3& position) const { return position + animated.mt[4]; }
};

TEST(FootLock, ASlidingPlantedToeIsHeldInTheWorld) {
  LockedLeg leg;
  // 0.9 m/s: the animated toe slides 15 mm a step, 0.18 m over the contact, inside the radius.
  const glm::vec3 velocity(0.f, 0.f, 0.9f);
  glm::vec3 held(0.f);
  for (int step = 0; step < 12; ++step) {
    const glm::vec3 at = velocity * (kDt * float(step));
    ASSERT_TRUE(leg.step(at, true).ok());
    SCOPED_TRACE("step " + std::to_string(step));
    ASSERT_TRUE(leg.foot.locked);
    if (step == 0) {
      held = leg.animatedToe(at);
      EXPECT_EQ(leg.foot.position, held) << "locked where it starts (above the foot height)";
    }
    EXPECT_LT(glm::length(leg.toeWorld(at) - held), 1e-3f) << "held within 1 mm";
    EXPECT_EQ(leg.foot.target, held);
    EXPECT_NEAR(glm::length(leg.shown.mt[2] - leg.shown.mt[1]), 0.4f, 1e-5f);
    EXPECT_NEAR(glm::length(leg.shown.mt[3] - leg.shown.mt[2]), 0.4f, 1e-5f);
    expectConsistent(leg.shown);
    if (step > 0) {
      EXPECT_GT(glm::length(leg.animatedToe(at) - held), 0.01f) << "the animation slides";
    }
  }
  // The contact ends: it lets go, shown where it was held; the blend carries it back.
  const glm::vec3 at = velocity * (kDt * 12.f);
  ASSERT_TRUE(leg.step(at, false).ok());
  EXPECT_FALSE(leg.foot.locked);
  EXPECT_TRUE(leg.foot.blending);
  EXPECT_LT(glm::length(leg.toeWorld(at) - held), 1e-3f);
  // A reset (a character moved elsewhere) drops the blend; with no contact the leg is as animated.
  ASSERT_TRUE(leg.step(at + glm::vec3(50.f, 0.f, 0.f), false, true).ok());
  EXPECT_FALSE(leg.foot.locked);
  EXPECT_FALSE(leg.foot.blending);
  EXPECT_EQ(leg.shown.lr, leg.animated.lr);
  EXPECT_EQ(leg.shown.mt, leg.animated.mt);
}

// The crowd locks the feet of four characters at once, a lane each (detail::runFootLock4): each
// lane's pose and locks are the bytes its job gives alone, whatever the other lanes do (held,
// let go past the radius, blending back, folded shut, toes lifted, not held), in blocks of four
// and of fewer.
TEST(FootLock, FourCharactersAtOnceAreEachOnItsOwn) {
  constexpr int kLegs = 6;
  const Leg animated[kLegs] = {Leg(-0.5f, 1.f),  Leg(-1.f, 2.6f),  Leg(-1.f, 2.9f),
                               Leg(-0.3f, 0.6f), Leg(-0.8f, 1.4f), Leg(-0.2f, 0.3f)};
  const glm::vec3 velocity[kLegs] = {{0.f, 0.f, 0.9f}, {0.2f, 0.f, 0.6f}, {0.f, 0.f, 0.9f},
                                     {0.f, 0.f, 1.6f}, {-0.5f, 0.f, 0.f}, {0.f, 0.f, 0.f}};
  const glm::quat turn[kLegs] = {glm::quat(1, 0, 0, 0),
                                 glm::angleAxis(0.7f, glm::vec3(0, 1, 0)),
                                 glm::angleAxis(-2.f, glm::vec3(0, 1, 0)),
                                 glm::angleAxis(3.1f, glm::vec3(0, 1, 0)),
                                 glm::quat(1, 0, 0, 0),
                                 glm::angleAxis(1.f, glm::vec3(0, 1, 0))};
  LegChain chain = animated[0].chain();
  mmdb::FootLockSettings settings;
  settings.foot_unlock_radius = 0.2f;
  FootLock alone_feet[kLegs], together_feet[kLegs];
  int locked = 0, blending = 0, lifted = 0;
  for (int step = 0; step < 90; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    Leg alone[kLegs], together[kLegs];
    mmdb::FootLockJob jobs[kLegs];
    for (int i = 0; i < kLegs; ++i) {
      alone[i] = together[i] = animated[i];
      if (i == 4) {  // the toes point down into the ground, and the leg is 13 cm down
        for (Leg* leg : {&alone[i], &together[i]}) {
          leg->lr[4] = glm::angleAxis(0.5f, kX);
          leg->fk();
        }
      }
      mmdb::FootLockJob& job = jobs[i];
      job.parents = animated[i].parents;
      job.legs = mmdb::Span<const LegChain>(&chain, 1);
      job.settings = settings;
      job.contacts = (step / (10 + 3 * i)) % 3 != 2 ? 1u : 0u;
      job.position =
          velocity[i] * (kDt * float(step)) + glm::vec3(float(i), i == 4 ? -0.13f : 0.f, 0.f);
      job.rotation = turn[i];
      job.dt = kDt;
      job.reset = step == 50 && i == 3;
    }
    for (int i = 0; i < kLegs; ++i) {
      mmdb::FootLockJob job = jobs[i];
      job.feet = mmdb::Span<FootLock>(&alone_feet[i], 1);
      job.local_rotations = alone[i].lr;
      job.local_translations = alone[i].lt;
      job.model_rotations = alone[i].mr;
      job.model_translations = alone[i].mt;
      ASSERT_TRUE(job.Run().ok());
      jobs[i].feet = mmdb::Span<FootLock>(&together_feet[i], 1);
      jobs[i].local_rotations = together[i].lr;
      jobs[i].local_translations = together[i].lt;
      jobs[i].model_rotations = together[i].mr;
      jobs[i].model_translations = together[i].mt;
    }
    // Blocks of 4 and 2 on even steps, of 1, 3 and 2 on odd ones.
    if (step % 2 == 0) {
      mmdb::detail::runFootLock4(jobs, 4);
      mmdb::detail::runFootLock4(jobs + 4, 2);
    } else {
      mmdb::detail::runFootLock4(jobs, 1);
      mmdb::detail::runFootLock4(jobs + 1, 3);
      mmdb::detail::runFootLock4(jobs + 4, 2);
    }
    for (int i = 0; i < kLegs; ++i) {
      SCOPED_TRACE("leg " + std::to_string(i));
      ASSERT_EQ(std::memcmp(alone[i].lr.data(), together[i].lr.data(), 5 * sizeof(glm::quat)), 0);
      ASSERT_EQ(std::memcmp(alone[i].mr.data(), together[i].mr.data(), 5 * sizeof(glm::quat)), 0);
      ASSERT_EQ(std::memcmp(alone[i].mt.data(), together[i].mt.data(), 5 * sizeof(glm::vec3)), 0);
      const FootLock &a = alone_feet[i], &b = together_feet[i];
      ASSERT_EQ(a.locked, b.locked);
      ASSERT_EQ(a.blending, b.blending);
      ASSERT_EQ(a.contact, b.contact);
      ASSERT_EQ(a.seen, b.seen);
      for (const auto& [x, y] : {std::pair{a.position, b.position},
                                 {a.target, b.target},
                                 {a.animated, b.animated},
                                 {a.offset, b.offset},
                                 {a.offset_velocity, b.offset_velocity}})
        ASSERT_EQ(std::memcmp(&x, &y, sizeof x), 0);
      ASSERT_EQ(a.since_unlock, b.since_unlock);
      locked += a.locked;
      blending += a.blending;
      lifted += i == 4 && a.locked && alone[i].lr[4] != glm::angleAxis(0.5f, kX);
    }
  }
  EXPECT_GT(locked, 100) << "the lanes hold toes";
  EXPECT_GT(blending, 20) << "and blend back";
  EXPECT_GT(lifted, 10) << "and lift toes";
}

TEST(FootLock, PastTheRadiusItBlendsBackContinuously) {
  LockedLeg leg;
  leg.settings.foot_unlock_radius = 0.2f;  // the reference's (the default is 0.3 m)
  const float speed = 1.4f;                // 23 mm a step: past the 0.2 m radius at the 9th step
  float previous_shown_step = 0;
  glm::vec3 previous_toe(0.f);
  int unlocked_at = -1;
  const float y = 2.f * 0.69314718f / leg.settings.foot_unlock_halflife;
  for (int step = 0; step < 200; ++step) {
    const glm::vec3 at(0.f, 0.f, speed * kDt * float(step));
    ASSERT_TRUE(leg.step(at, true).ok());
    SCOPED_TRACE("step " + std::to_string(step));
    const glm::vec3 toe = leg.toeWorld(at);
    EXPECT_LT(glm::length(toe - leg.foot.target), 1e-3f) << "the leg puts the toe on its target";
    if (unlocked_at < 0 && !leg.foot.locked) {
      unlocked_at = step;
      EXPECT_TRUE(leg.foot.blending);
      EXPECT_GT(glm::length(leg.animatedToe(at) - leg.foot.position), 0.2f);
      EXPECT_LT(glm::length(leg.animatedToe(at) - leg.foot.position), 0.2f + speed * kDt);
      EXPECT_LT(glm::length(toe - previous_toe), 1e-3f) << "it lets go from where it was held";
    } else if (unlocked_at >= 0) {
      // No step larger than the blend allows: the animation's own step plus the most the offset
      // (at most the radius and a step) decays in a step, y * |offset| * dt; far from a snap
      // back of 0.2 m.
      const float moved = glm::length(toe - previous_toe);
      EXPECT_LE(moved, speed * kDt + y * (0.2f + speed * kDt) * kDt);
      if (step == unlocked_at + 1) {
        EXPECT_LT(moved, 0.5f * speed * kDt) << "it starts still, as it was held";
      }
      previous_shown_step = moved;
    }
    EXPECT_FALSE(leg.foot.locked && unlocked_at >= 0) << "the contact goes on: no new lock";
    previous_toe = toe;
  }
  ASSERT_GT(unlocked_at, 5);
  EXPECT_NEAR(previous_shown_step, speed * kDt, 1e-4f) << "back on the animation";
  EXPECT_FALSE(leg.foot.blending) << "the blend ends 20 half-lives on";
  EXPECT_EQ(leg.shown.mt, leg.animated.mt) << "then the leg is the animation's";
}

// A leg folded nearly shut (a transition can fold one further than any clip) has no stable way to
// swing its short hip-to-ankle line onto a held toe: it follows the animation; the IK fades in as
// the leg opens (from a fifth of its length from hip to ankle to about a third), so the knee
// never swings round in one step.
TEST(FootLock, ALegFoldedShutFollowsTheAnimation) {
  const glm::vec3 velocity(0.f, 0.f, 0.9f);  // the animated toe slides 15 mm a step
  const auto held = [&](float knee) {
    LockedLeg leg;
    leg.animated = Leg(-1.f, knee);
    for (int step = 0; step < 6; ++step) {
      const glm::vec3 at = velocity * (kDt * float(step));
      EXPECT_TRUE(leg.step(at, true).ok());
      EXPECT_TRUE(leg.foot.locked) << "the lock is kept; the leg does not reach for it";
    }
    return leg;
  };
  const glm::vec3 at = velocity * (kDt * 5.f);
  // 166 degrees: hip to ankle 0.1 m of the leg's 0.8 m. The leg is the animation's, bit for bit.
  const LockedLeg shut = held(2.9f);
  EXPECT_EQ(shut.shown.lr, shut.animated.lr);
  EXPECT_EQ(shut.shown.mt, shut.animated.mt);
  // 149 degrees: hip to ankle a quarter of the leg. The toe goes part of the way to the lock.
  const LockedLeg half = held(2.6f);
  const float animated = glm::length(half.animatedToe(at) - half.foot.target);
  const float shown = glm::length(half.toeWorld(at) - half.foot.target);
  EXPECT_GT(animated, 0.05f);
  EXPECT_LT(shown, animated - 0.01f) << "towards the lock";
  EXPECT_GT(shown, 0.01f) << "not onto it";
  expectConsistent(half.shown);
  // 115 degrees: hip to ankle over half the leg. The toe is held.
  const LockedLeg bent = held(2.0f);
  EXPECT_LT(glm::length(bent.toeWorld(at) - bent.foot.target), 1e-3f);
}

TEST(FootLock, ALockNeverGoesBelowTheFootHeightAndTheToesTipStaysAbove) {
  LockedLeg leg;
  leg.animated.lr[4] = glm::angleAxis(0.5f, kX);  // the toes point down, into the ground
  leg.animated.fk();
  // The whole leg 13 cm down: the toe 12 mm under the ground, its tip further.
  const glm::vec3 at(0.f, -0.13f, 0.f);
  ASSERT_LT(leg.animatedToe(at).y, 0.f);
  ASSERT_TRUE(leg.step(at, true).ok());
  ASSERT_TRUE(leg.foot.locked);
  EXPECT_EQ(leg.foot.position.y, leg.settings.ik_foot_height);
  EXPECT_NEAR(leg.toeWorld(at).y, leg.settings.ik_foot_height, 1e-4f);
  const glm::vec3 toe = leg.shown.mt[4];
  const glm::vec3 tip = toe + leg.shown.mr[4] * (leg.chain.toe_tip * leg.settings.ik_toe_length);
  EXPECT_NEAR(tip.y + at.y, leg.settings.ik_foot_height, 1e-3f) << "turned up to the height";
  EXPECT_GT(angleBetween(leg.shown.lr[4], leg.animated.lr[4]), 0.3f);
  // Toes that point up are left as animated.
  LockedLeg up;
  up.animated.lr[4] = glm::angleAxis(-0.3f, kX);
  up.animated.fk();
  ASSERT_TRUE(up.step(at, true).ok());
  EXPECT_LT(angleBetween(up.shown.mr[4], up.animated.mr[4]), 1e-5f) << "in the world, as animated";
}

// --- the crowd -------------------------------------------------------------------------------

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

mmdb::cook::CookedDatabase legged(uint32_t clips = 3, uint32_t frames = 300) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = clips;
  spec.frames_per_clip = frames;
  spec.joints = 10;
  spec.legs = true;
  return mmdb::test::makeSyntheticDatabase(spec);
}

std::string createError(const mmdb::cook::CookedDatabase& cooked,
                        const CrowdSettings& settings = {}) {
  TestDatabase t(cooked);
  auto created = Crowd::create(t.db, 2, settings);
  if (created.ok()) return "(created)";
  EXPECT_EQ(created.error().code(), ErrorCode::InvalidArgument);
  return created.error().message();
}

TEST(FootLock, TheLegsOfTheSkeletonAreFound) {
  TestDatabase t(legged());
  auto legs = mmdb::findLegChains(t.db);
  ASSERT_TRUE(legs.ok()) << legs.error().message();
  const LegChain& left = legs.value()[0];
  const LegChain& right = legs.value()[1];
  EXPECT_EQ(left.upper_leg, 1u);
  EXPECT_EQ(left.knee, 2u);
  EXPECT_EQ(left.foot, 3u);
  EXPECT_EQ(left.toe, 4u);
  EXPECT_EQ(left.contact_bit, 0u);
  EXPECT_EQ(right.upper_leg, 5u);
  EXPECT_EQ(right.toe, 8u);
  EXPECT_EQ(right.contact_bit, 1u);
  EXPECT_LT(glm::length(left.toe_tip - glm::vec3(0.f, 0.f, 1.f)), 1e-6f) << "ahead, level";
  auto crowd = Crowd::create(t.db, 2);
  ASSERT_TRUE(crowd.ok()) << crowd.error().message();
  EXPECT_EQ(crowd.value().legChains().size(), 2u);
  EXPECT_EQ(crowd.value().footLocks().size(), 4u);
}

TEST(FootLock, ALegThatCannotBendIsRefusedByName) {
  using mmdb::cook::Role;
  const auto with = [](auto change) {
    mmdb::cook::CookedDatabase cooked = legged(2, 120);
    change(cooked.skeleton);
    return cooked;
  };
  const auto role = [](mmdb::cook::CookedSkeleton& sk, Role r, int joint) {
    for (auto& entry : sk.roles)
      if (entry.first == r) entry.second = joint;
  };
  EXPECT_EQ(createError(with([](auto& sk) { sk.parents[3] = -1; })),
            "Crowd::create: foot locking: left leg: foot 'Foot_L' has no parent to bend as a knee "
            "(or set foot_locking = false)");
  EXPECT_EQ(createError(with([](auto& sk) { sk.parents[2] = -1; })),
            "Crowd::create: foot locking: left leg: knee 'Knee_L' (the parent of foot 'Foot_L') is "
            "the root: it has no parent to turn as an upper leg (or set foot_locking = false)");
  EXPECT_EQ(createError(with([](auto& sk) { sk.parents[5] = -1; })),
            "Crowd::create: foot locking: right leg: upper leg 'UpLeg_R' (the parent of knee "
            "'Knee_R') is the root, which the leg must not turn (or set foot_locking = false)");
  EXPECT_EQ(createError(with([&](auto& sk) {
              std::erase_if(sk.roles, [](const auto& e) { return e.first == Role::RightToe; });
            })),
            "Crowd::create: foot locking: right leg: the skeleton names no RightToe joint (or set "
            "foot_locking = false)");
  EXPECT_EQ(createError(with([&](auto& sk) { role(sk, Role::LeftToe, 8); })),
            "Crowd::create: foot locking: left leg: toe 'Toe_R' is not below foot 'Foot_L' (or set "
            "foot_locking = false)");
  EXPECT_EQ(createError(with([&](auto& sk) { role(sk, Role::LeftToe, 3); })),
            "Crowd::create: foot locking: left leg: toe 'Foot_L' is the foot itself (or set "
            "foot_locking = false)");
  mmdb::cook::CookedDatabase one_contact = legged(2, 120);
  one_contact.skeleton.contact_joints = {4};
  for (uint32_t& bits : one_contact.contacts) bits &= 1u;
  EXPECT_EQ(createError(one_contact),
            "Crowd::create: foot locking: right leg: toe 'Toe_R' is not a contact joint: it has "
            "no contact bit to lock on (or set foot_locking = false)");
  EXPECT_EQ(createError(with([&](auto& sk) {
              role(sk, Role::RightFoot, 3);
              role(sk, Role::RightToe, 4);
            })),
            "Crowd::create: foot locking: right leg: joint 'UpLeg_L' is in the left leg too (or "
            "set foot_locking = false)");
  // The same skeleton plays without foot locking, and the legless synthetic one is refused.
  CrowdSettings unlocked;
  unlocked.foot_locking = false;
  EXPECT_EQ(createError(with([](auto& sk) { sk.parents[3] = -1; }), unlocked), "(created)");
  mmdb::test::SyntheticSpec legless;
  legless.joints = 4;
  EXPECT_EQ(createError(mmdb::test::makeSyntheticDatabase(legless)),
            "Crowd::create: foot locking: left leg: the skeleton names no LeftToe joint (or set "
            "foot_locking = false)");
}

TEST(FootLock, BadSettingsAreRefusedByName) {
  const mmdb::cook::CookedDatabase cooked = legged(2, 120);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CrowdSettings s;
  s.foot_unlock_radius = -1.f;
  EXPECT_EQ(createError(cooked, s),
            "Crowd::create: foot_unlock_radius -1 m must be finite and >= 0");
  s = {};
  s.foot_unlock_halflife = nan;
  EXPECT_EQ(createError(cooked, s),
            "Crowd::create: foot_unlock_halflife nan s must be finite and >= 0");
  s = {};
  s.ik_foot_height = -0.5f;
  EXPECT_EQ(createError(cooked, s), "Crowd::create: ik_foot_height -0.5 m must be finite and >= 0");
  s = {};
  s.ik_toe_length = inf;
  EXPECT_EQ(createError(cooked, s), "Crowd::create: ik_toe_length inf m must be finite and >= 0");
  s = {};
  s.ik_max_length_buffer = -0.015f;
  s.foot_locking = false;  // checked with locking off too
  EXPECT_EQ(createError(cooked, s),
            "Crowd::create: ik_max_length_buffer -0.015 m must be finite and >= 0");
  s = {};
  s.foot_unlock_radius = 0.f;  // 0 is allowed: every lock lets go at once
  s.foot_unlock_halflife = 0.f;
  EXPECT_EQ(createError(cooked, s), "(created)");
}

// A crowd stepping a legged database with scripted sticks: two with locking on and off.
struct TwoCrowds {
  explicit TwoCrowds(const Database& db, uint32_t count) {
    // One 0.1 s half-life for the offsets and their rates: these sharp stick changes on a
    // synthetic walk then leave toes within the leg's reach as the figures below expect (with
    // the default 0.15 s for the offsets, 92 % of locked steps are on the lock, not 97 %).
    CrowdSettings settings;
    settings.inertialization_halflife = settings.inertialization_rate_halflife;
    settings.start_stagger_intervals = 0;  // every character plays from the first step
    // Root motion alone: the two crowds then place their characters alike, locked feet or not
    // (the synchronization's adjustment depends on the feet held; test_synchronization.cpp).
    settings.synchronization.mode = mmdb::Synchronization::None;
    CrowdSettings off = settings;
    off.foot_locking = false;
    auto a = Crowd::create(db, count, settings), b = Crowd::create(db, count, off);
    EXPECT_TRUE(a.ok() && b.ok());
    on = std::move(a).value();
    this->off = std::move(b).value();
  }
  void step(int step) {
    for (uint32_t i = 0; i < on.characterCount(); ++i) {
      const float angle = 0.9f * float(((step / 70) * 5 + int(i)) % 7);
      const float length = ((step / 70 + i) % 3 == 0) ? 0.f : 0.7f;
      ASSERT_TRUE(on.setStick(i, length * std::sin(angle), length * std::cos(angle)).ok());
      ASSERT_TRUE(off.setStick(i, length * std::sin(angle), length * std::cos(angle)).ok());
    }
    ASSERT_TRUE(on.step(kDt).ok());
    ASSERT_TRUE(off.step(kDt).ok());
  }
  Crowd on, off;
};

bool inLeg(const Database& db, const LegChain& leg, uint32_t j) {
  for (int32_t p = int32_t(j); p >= 0; p = db.parents()[size_t(p)])
    if (p == int32_t(leg.upper_leg)) return true;
  return false;
}

// Off, a step is exactly sample, inertialize (until the offsets have decayed) and FK; on, it
// decides the same, and only the legs of feet locked or blending differ.
TEST(FootLock, LockingOffPlaysExactlyTheAnimation) {
  TestDatabase t(legged(4, 300));
  const Database& db = t.db;
  constexpr uint32_t kCount = 6;
  TwoCrowds crowds(db, kCount);
  const uint32_t joints = db.jointCount();
  std::vector<glm::quat> r(joints), mr(joints);
  std::vector<glm::vec3> p(joints), mp(joints);
  const auto legs = crowds.on.legChains();
  ASSERT_EQ(legs.size(), 2u);
  int compared = 0, differing_legs = 0, inertialized = 0, decayed = 0, held = 0;
  for (int step = 0; step < 400; ++step) {
    const std::vector<mmdb::CrowdCharacter> before(crowds.off.characters().begin(),
                                                   crowds.off.characters().end());
    crowds.step(step);
    for (uint32_t i = 0; i < kCount; ++i) {
      const mmdb::Decision &a = crowds.on.decisions()[i], &b = crowds.off.decisions()[i];
      ASSERT_EQ(a.reason, b.reason);
      ASSERT_EQ(a.frame, b.frame);
      ASSERT_EQ(a.playing, b.playing);
      const mmdb::CrowdCharacter& c = crowds.off.characters()[i];
      ASSERT_EQ(std::memcmp(&c.achieved_position, &crowds.on.characters()[i].achieved_position,
                            sizeof(glm::vec3)),
                0);
      for (uint32_t leg = 0; leg < 2; ++leg) {
        const FootLock& f = crowds.off.footLocks()[i * 2 + leg];
        ASSERT_FALSE(f.locked || f.blending || f.seen) << "nothing locks with locking off";
      }
      // The on crowd: the joints outside a locked or blending leg are the off crowd's, bit for
      // bit.
      for (uint32_t j = 0; j < joints; ++j) {
        bool moved = false;
        for (uint32_t leg = 0; leg < 2; ++leg) {
          const FootLock& f = crowds.on.footLocks()[i * 2 + leg];
          moved = moved || ((f.locked || f.blending) && inLeg(db, legs[leg], j));
        }
        const size_t e = size_t(i) * joints + j;
        if (moved) {
          differing_legs += crowds.on.localRotations()[e] != crowds.off.localRotations()[e];
          continue;
        }
        ASSERT_EQ(crowds.on.localRotations()[e], crowds.off.localRotations()[e]) << "joint " << j;
        ASSERT_EQ(crowds.on.modelTranslations()[e], crowds.off.modelTranslations()[e]);
      }
      // Off, without a switch in the step: the pose sampled where the clock was, inertialized
      // with the offsets, then FK, bit for bit; where the transition speed limit held the decay
      // back, it went on by less than the step (TransitionSpeedLimit tests those).
      if (!before[i].playing || b.switched) continue;
      if (crowds.off.characters()[i].transition_time != before[i].transition_time + kDt) {
        ++held;
        continue;
      }
      mmdb::SamplePoseJob sample;
      sample.database = &db;
      sample.poses = crowds.off.poses();
      sample.clip = before[i].clip;
      sample.time = before[i].clip_time;
      sample.rotations = r;
      sample.translations = p;
      ASSERT_TRUE(sample.Run().ok());
      mmdb::InertializeJob blend;
      blend.halflife = mmdb::CrowdSettings{}.inertialization_rate_halflife;  // TwoCrowds' one
      blend.time_since_switch = before[i].transition_time;
      blend.rotations = r;
      blend.translations = p;
      blend.offset_rotations = crowds.off.offsetRotations().subspan(size_t(i) * joints, joints);
      blend.offset_angular_velocities =
          crowds.off.offsetAngularVelocities().subspan(size_t(i) * joints, joints);
      blend.offset_translations =
          crowds.off.offsetTranslations().subspan(size_t(i) * joints, joints);
      blend.offset_velocities = crowds.off.offsetVelocities().subspan(size_t(i) * joints, joints);
      blend.out_rotations = r;
      blend.out_translations = p;
      // Until a bound of the decaying offsets falls to the threshold (CrowdSettings::
      // inertialization_threshold), after which they are no longer added.
      const float y = 2.f * 0.69314718056f / blend.halflife, t = before[i].transition_time;
      const float bx = before[i].offset_bound_x, bv = before[i].offset_bound_v;
      const float bound =
          std::exp(-y * t) * std::fmax(bx + (bv + y * bx) * t, bv + (bv + y * bx) * y * t);
      if (bound > 1e-5f) {
        ASSERT_TRUE(blend.Run().ok());
        ++inertialized;
      } else {
        ++decayed;
      }
      mmdb::ForwardKinematicsJob fk;
      fk.parents = db.parents();
      fk.local_rotations = r;
      fk.local_translations = p;
      fk.model_rotations = mr;
      fk.model_translations = mp;
      ASSERT_TRUE(fk.Run().ok());
      const auto off_r = crowds.off.modelRotations().subspan(size_t(i) * joints, joints);
      const auto off_p = crowds.off.modelTranslations().subspan(size_t(i) * joints, joints);
      ASSERT_EQ(std::memcmp(off_r.data(), mr.data(), off_r.size_bytes()), 0) << "step " << step;
      ASSERT_EQ(std::memcmp(off_p.data(), mp.data(), off_p.size_bytes()), 0) << "step " << step;
      ++compared;
    }
  }
  EXPECT_GT(compared, 1000);
  EXPECT_GT(inertialized, 100);
  EXPECT_GT(decayed, 100) << "offsets decay away, then are no longer added";
  EXPECT_GT(differing_legs, 100) << "locking on bends legs";
  EXPECT_LT(held, compared / 10) << "the transition speed limit holds few steps back";
}

// The world pose a game reads (achieved transform after the step, model pose) holds a locked toe
// still, where with locking off the same toe slides; the lock state is where the crowd says.
TEST(FootLock, TheCrowdHoldsLockedToesInTheWorld) {
  TestDatabase t(legged(4, 300));
  const Database& db = t.db;
  constexpr uint32_t kCount = 6;
  TwoCrowds crowds(db, kCount);
  const uint32_t joints = db.jointCount();
  const auto legs = crowds.on.legChains();
  const auto world = [&](const Crowd& crowd, uint32_t i, uint32_t joint) {
    const mmdb::CrowdCharacter& c = crowd.characters()[i];
    return c.achieved_position +
           c.achieved_rotation * crowd.modelTranslations()[size_t(i) * joints + joint];
  };
  std::vector<glm::vec3> last_on(kCount * 2), last_off(kCount * 2);
  std::vector<uint8_t> was_locked(kCount * 2, 0);
  double held_steps = 0, slide_on = 0, slide_off = 0, locked_steps = 0, on_the_lock = 0;
  for (int step = 0; step < 400; ++step) {
    crowds.step(step);
    for (uint32_t i = 0; i < kCount; ++i) {
      for (uint32_t leg = 0; leg < 2; ++leg) {
        const FootLock& f = crowds.on.footLocks()[i * 2 + leg];
        const glm::vec3 on = world(crowds.on, i, legs[leg].toe);
        const glm::vec3 off = world(crowds.off, i, legs[leg].toe);
        if (f.locked) {
          // On the lock, unless a switch moved the body out of the leg's reach.
          locked_steps += 1;
          on_the_lock += glm::length(on - f.position) < 1e-3f;
          EXPECT_LT(glm::length(on - f.position), 0.05f) << "step " << step;
          EXPECT_EQ(f.target, f.position);
        }
        if (f.locked && was_locked[i * 2 + leg]) {
          held_steps += 1;
          slide_on += glm::length(on - last_on[i * 2 + leg]);
          slide_off += glm::length(off - last_off[i * 2 + leg]);
        }
        was_locked[i * 2 + leg] = f.locked;
        last_on[i * 2 + leg] = on;
        last_off[i * 2 + leg] = off;
        EXPECT_EQ(f.contact,
                  ((db.contacts()[crowds.on.characters()[i].shown_frame] >> legs[leg].contact_bit) &
                   1u) != 0);
      }
    }
  }
  ASSERT_GT(held_steps, 500) << "enough held steps to measure";
  // Held up to 0.3 m away, a toe is now and then out of the leg's reach: 97 % on the lock here.
  EXPECT_GT(on_the_lock, 0.95 * locked_steps) << "within 1 mm of the lock";
  EXPECT_LT(slide_on / held_steps, 1e-4) << "held: under 0.1 mm a step on average";
  EXPECT_GT(slide_off / held_steps, 5e-3) << "the same toes slide without locking";
}

// The world pose is the model pose placed by the achieved transform read after the step: a locked
// toe is on its lock that way, and a frame of root motion off (centimetres at walking speed) when
// placed by the transform read before the step.
TEST(FootLock, TheWorldPoseIsPlacedByTheTransformAfterTheStep) {
  TestDatabase t(legged(4, 300));
  constexpr uint32_t kCount = 6;
  TwoCrowds crowds(t.db, kCount);
  const uint32_t joints = t.db.jointCount();
  const auto legs = crowds.on.legChains();
  double locked = 0, after = 0, before = 0;
  for (int step = 0; step < 300; ++step) {
    std::vector<mmdb::CrowdCharacter> previous(crowds.on.characters().begin(),
                                               crowds.on.characters().end());
    crowds.step(step);
    for (uint32_t i = 0; i < kCount; ++i) {
      const mmdb::CrowdCharacter& now = crowds.on.characters()[i];
      for (uint32_t leg = 0; leg < 2; ++leg) {
        const FootLock& f = crowds.on.footLocks()[i * 2 + leg];
        if (!f.locked || !previous[i].playing) continue;
        const glm::vec3 model = crowds.on.modelTranslations()[size_t(i) * joints + legs[leg].toe];
        locked += 1;
        after += glm::length(now.achieved_position + now.achieved_rotation * model - f.position);
        before += glm::length(previous[i].achieved_position +
                              previous[i].achieved_rotation * model - f.position);
      }
    }
  }
  ASSERT_GT(locked, 500);
  EXPECT_LT(after / locked, 2e-3) << "after the step: on the lock";
  EXPECT_GT(before / locked, 5e-3) << "before the step: a frame of root motion off";
}

// Crowd::playing(): the clip, frame and time of the pose shown, the range holding it and its
// tags, the tags gained and lost in each step, the shown frame's contacts and the feet held,
// and the step's decision, all as the crowd's own state says; an index out of range is refused.
TEST(FootLock, WhatIsPlayingIsWhatTheCrowdShows) {
  mmdb::cook::CookedDatabase cooked = legged(4, 300);
  // A tag per range; the characters are sent from one to another by their tag filters.
  for (size_t r = 0; r < cooked.ranges.size(); ++r) cooked.ranges[r].tag_mask = 1u << (r % 3);
  TestDatabase t(cooked);
  const Database& db = t.db;
  constexpr uint32_t kCount = 6;
  TwoCrowds crowds(db, kCount);
  Crowd& crowd = crowds.on;
  mmdb::Playing p;
  p.clip = 77;
  EXPECT_EQ(crowd.playing(kCount, p).message(),
            std::string("playing: character 6 is out of range (the crowd has 6 characters)"));
  EXPECT_EQ(p.clip, 77u) << "untouched";
  ASSERT_TRUE(crowd.playing(0, p).ok());
  EXPECT_FALSE(p.playing);
  EXPECT_EQ(p.range, -1);
  EXPECT_EQ(p.tags, 0u);

  std::vector<uint64_t> last_tags(kCount, 0);
  uint64_t entered = 0, left = 0, locked = 0;
  for (int step = 0; step < 600; ++step) {
    if (step % 100 == 0) {
      for (uint32_t i = 0; i < kCount; ++i) {
        ASSERT_TRUE(crowd.setTagFilter(i, 1u << ((step / 100 + i) % 3), 0).ok());
      }
    }
    crowds.step(step);
    for (uint32_t i = 0; i < kCount; ++i) {
      ASSERT_TRUE(crowd.playing(i, p).ok());
      const mmdb::CrowdCharacter& ch = crowd.characters()[i];
      ASSERT_TRUE(p.playing);
      EXPECT_EQ(p.frame, ch.shown_frame);
      ASSERT_EQ(db.clipOfFrame(p.frame), int32_t(p.clip));
      const mmdb::ClipInfo clip = db.clip(p.clip);
      EXPECT_EQ(p.clip_frame, p.frame - clip.first_frame);
      // The frame is the key at or below the time sampled.
      EXPECT_LE(float(p.clip_frame), p.clip_time * db.frameRate() + 1e-3f);
      EXPECT_GT(float(p.clip_frame) + 1.f, p.clip_time * db.frameRate());
      // The range by brute force.
      int32_t range = -1;
      for (size_t r = 0; r < db.ranges().size(); ++r)
        if (p.frame >= db.ranges()[r].first_frame &&
            p.frame < db.ranges()[r].first_frame + db.ranges()[r].frame_count)
          range = int32_t(r);
      EXPECT_EQ(p.range, range);
      EXPECT_EQ(p.tags, range >= 0 ? db.ranges()[size_t(range)].tag_mask : clip.tag_mask);
      EXPECT_EQ(p.tags_entered, p.tags & ~last_tags[i]);
      EXPECT_EQ(p.tags_left, last_tags[i] & ~p.tags);
      entered += p.tags_entered != 0;
      left += p.tags_left != 0;
      last_tags[i] = p.tags;
      EXPECT_EQ(p.contacts, db.contacts()[p.frame]);
      for (uint32_t leg = 0; leg < 2; ++leg) {
        const FootLock& f = crowd.footLocks()[i * 2 + leg];
        EXPECT_EQ(((p.locked_feet >> leg) & 1u) != 0, f.locked);
        EXPECT_EQ(((p.blending_feet >> leg) & 1u) != 0, f.blending);
        locked += f.locked;
      }
      const mmdb::Decision& d = crowd.decisions()[i];
      EXPECT_EQ(p.decision.reason, d.reason);
      EXPECT_EQ(p.decision.switched, d.switched);
      EXPECT_EQ(p.decision.frame, d.frame);
      EXPECT_EQ(p.decision.playing, d.playing);
    }
  }
  EXPECT_GT(entered, 3 * kCount) << "tags change as the filters send characters elsewhere";
  EXPECT_GT(left, 3 * kCount);
  EXPECT_GT(locked, 0u);
}

// The whole step split over a job system: ranges of characters begun and played on threads at
// once, in any split and order, give the requests beginStep() gives and the bytes endStep()
// gives; a split that overlaps, misses a character, leaves the crowd or names a worker out of
// range is refused and touches nothing.
TEST(FootLock, AStepSplitOverThreadsPlaysTheSameBytes) {
  TestDatabase t(legged(4, 300));
  constexpr uint32_t kCount = 23, kWorkers = 3;
  CrowdSettings split_settings;
  split_settings.step_workers = kWorkers;
  auto whole = Crowd::create(t.db, kCount), split = Crowd::create(t.db, kCount, split_settings);
  ASSERT_TRUE(whole.ok() && split.ok());
  Crowd& a = whole.value();
  Crowd& b = split.value();
  std::mt19937 random(5);
  uint64_t switches = 0;
  for (int step = 0; step < 300; ++step) {
    for (uint32_t i = 0; i < kCount; ++i) {
      const float angle = 0.9f * float(((step / 70) * 5 + int(i)) % 7);
      const float length = ((step / 70 + i) % 3 == 0) ? 0.f : 0.7f;
      for (Crowd* crowd : {&a, &b})
        ASSERT_TRUE(crowd->setStick(i, length * std::sin(angle), length * std::cos(angle)).ok());
    }
    ASSERT_TRUE(a.step(kDt).ok());
    // Three ranges cut at random places, begun on three threads (the first of them on odd
    // steps last), then three others played on three threads.
    const auto cuts = [&](uint32_t* firsts, uint32_t* ends) {
      uint32_t cut1 = random() % (kCount + 1), cut2 = random() % (kCount + 1);
      if (cut1 > cut2) std::swap(cut1, cut2);
      const uint32_t f[kWorkers] = {0, cut1, cut2}, e[kWorkers] = {cut1, cut2, kCount};
      std::copy(f, f + kWorkers, firsts);
      std::copy(e, e + kWorkers, ends);
    };
    uint32_t firsts[kWorkers], ends[kWorkers];
    mmdb::Status statuses[kWorkers];
    ASSERT_TRUE(b.prepareStep(kDt).ok());
    cuts(firsts, ends);
    {
      std::vector<std::thread> threads;
      for (uint32_t w = 1; w < kWorkers; ++w)
        threads.emplace_back(
            [&, w] { statuses[w] = b.beginStepRange(firsts[w], ends[w] - firsts[w]); });
      if (step % 2 == 0) statuses[0] = b.beginStepRange(firsts[0], ends[0] - firsts[0]);
      for (std::thread& thread : threads) thread.join();
      if (step % 2 == 1) statuses[0] = b.beginStepRange(firsts[0], ends[0] - firsts[0]);
    }
    for (const mmdb::Status& s : statuses) ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(b.finishBeginStep().ok());
    ASSERT_EQ(a.requests().size(), b.requests().size()) << "step " << step;
    for (size_t k = 0; k < a.requests().size(); ++k) {
      ASSERT_EQ(a.searching()[k], b.searching()[k]);
      ASSERT_EQ(a.requests()[k].current_frame, b.requests()[k].current_frame);
      ASSERT_EQ(std::memcmp(a.requests()[k].query.data(), b.requests()[k].query.data(),
                            a.requests()[k].query.size_bytes()),
                0);
    }
    // The searches in three ranges of the requests, on three threads.
    {
      const uint32_t searches = uint32_t(b.requests().size());
      uint32_t cut1 = random() % (searches + 1), cut2 = random() % (searches + 1);
      if (cut1 > cut2) std::swap(cut1, cut2);
      const uint32_t f[kWorkers] = {0, cut1, cut2}, e[kWorkers] = {cut1, cut2, searches};
      std::vector<std::thread> threads;
      for (uint32_t w = 0; w < kWorkers; ++w)
        threads.emplace_back([&, w] { statuses[w] = b.searchRange(f[w], e[w] - f[w], w); });
      for (std::thread& thread : threads) thread.join();
    }
    for (const mmdb::Status& s : statuses) ASSERT_TRUE(s.ok()) << s.message();
    for (size_t k = 0; k < a.results().size(); ++k) {
      ASSERT_EQ(a.results()[k].frame, b.results()[k].frame) << "step " << step;
      ASSERT_EQ(a.results()[k].cost, b.results()[k].cost) << "step " << step;
    }
    cuts(firsts, ends);
    {
      std::vector<std::thread> threads;
      for (uint32_t w = 0; w < kWorkers; ++w)
        threads.emplace_back(
            [&, w] { statuses[w] = b.endStepRange(firsts[w], ends[w] - firsts[w], w); });
      for (std::thread& thread : threads) thread.join();
    }
    for (const mmdb::Status& s : statuses) ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(b.finishStep().ok());
    const auto same = [](auto x, auto y) {
      return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size_bytes()) == 0;
    };
    ASSERT_TRUE(same(a.modelRotations(), b.modelRotations())) << "step " << step;
    ASSERT_TRUE(same(a.modelTranslations(), b.modelTranslations())) << "step " << step;
    ASSERT_TRUE(same(a.offsetRotations(), b.offsetRotations()));
    for (uint32_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(a.decisions()[i].frame, b.decisions()[i].frame);
      ASSERT_EQ(a.decisions()[i].switched, b.decisions()[i].switched);
      ASSERT_EQ(std::memcmp(&a.characters()[i].achieved_position,
                            &b.characters()[i].achieved_position, sizeof(glm::vec3)),
                0);
      ASSERT_EQ(a.footLocks()[2 * i].locked, b.footLocks()[2 * i].locked);
      switches += a.decisions()[i].switched;
    }
  }
  EXPECT_GT(switches, 50u) << "the split plays switches (each worker's own scratch)";

  // Bad splits.
  ASSERT_TRUE(b.prepareStep(kDt).ok());
  EXPECT_STREQ(b.searchRange(0, 0, 0).message(),
               "searchRange: the step's beginning is not finished (call finishBeginStep)");
  ASSERT_TRUE(b.beginStepRange(0, kCount).ok());
  ASSERT_TRUE(b.finishBeginStep().ok());
  const uint32_t searches = uint32_t(b.requests().size());
  EXPECT_EQ(std::string(b.searchRange(1, searches, 0).message()),
            "searchRange: requests [1, 1 + " + std::to_string(searches) +
                ") are outside this step's " + std::to_string(searches));
  EXPECT_STREQ(b.searchRange(0, 0, 3).message(),
               "searchRange: worker 3 of 3 (CrowdSettings::step_workers)");
  ASSERT_TRUE(b.searchRange(0, searches, 2).ok());
  EXPECT_STREQ(b.endStepRange(20, 4, 0).message(),
               "endStepRange: characters [20, 20 + 4) are outside the crowd's 23");
  EXPECT_STREQ(b.endStepRange(0, 4, 3).message(),
               "endStepRange: worker 3 of 3 (CrowdSettings::step_workers)");
  ASSERT_TRUE(b.endStepRange(0, 10, 0).ok());
  const std::vector<mmdb::CrowdCharacter> before(b.characters().begin(), b.characters().end());
  const std::vector<glm::vec3> pose_before(b.modelTranslations().begin(),
                                           b.modelTranslations().end());
  EXPECT_STREQ(b.endStepRange(8, 10, 1).message(),
               "endStepRange: character 8 of [8, 8 + 10) is in another range of this step; the "
               "ranges must not overlap");
  EXPECT_EQ(std::memcmp(before.data(), b.characters().data(),
                        before.size() * sizeof(mmdb::CrowdCharacter)),
            0)
      << "the refused range touched nothing";
  EXPECT_EQ(std::memcmp(pose_before.data(), b.modelTranslations().data(),
                        pose_before.size() * sizeof(glm::vec3)),
            0);
  ASSERT_TRUE(b.endStepRange(10, 5, 1).ok()) << "characters 10 to 14, not taken by the refusal";
  EXPECT_STREQ(b.finishStep().message(),
               "finishStep: character 15 is in no range of this step (call endStepRange for it "
               "first)");
  EXPECT_FALSE(b.beginStep(kDt).ok()) << "the step is still open";
  ASSERT_TRUE(b.endStepRange(15, 8, 2).ok());
  EXPECT_TRUE(b.finishStep().ok());
  EXPECT_FALSE(b.finishStep().ok()) << "no step open";
  EXPECT_FALSE(b.endStepRange(0, 1, 0).ok()) << "no step open";

  // Bad splits of the beginning.
  EXPECT_STREQ(b.beginStepRange(0, 1).message(),
               "beginStepRange: no step is being begun (call prepareStep)");
  EXPECT_STREQ(b.finishBeginStep().message(),
               "finishBeginStep: no step is being begun (call prepareStep)");
  EXPECT_FALSE(b.prepareStep(-kDt).ok());
  ASSERT_TRUE(b.prepareStep(kDt).ok());
  EXPECT_STREQ(b.prepareStep(kDt).message(), "prepareStep: the previous step has not ended");
  EXPECT_STREQ(b.beginStep(kDt).message(), "beginStep: the previous step has not ended");
  EXPECT_STREQ(b.beginStepRange(20, 4).message(),
               "beginStepRange: characters [20, 20 + 4) are outside the crowd's 23");
  ASSERT_TRUE(b.beginStepRange(0, 10).ok());
  const std::vector<mmdb::CrowdCharacter> before_begin(b.characters().begin(),
                                                       b.characters().end());
  EXPECT_STREQ(b.beginStepRange(8, 10).message(),
               "beginStepRange: character 8 of [8, 8 + 10) is in another range of this step; the "
               "ranges must not overlap");
  EXPECT_EQ(std::memcmp(before_begin.data(), b.characters().data(),
                        before_begin.size() * sizeof(mmdb::CrowdCharacter)),
            0)
      << "the refused range touched nothing";
  ASSERT_TRUE(b.beginStepRange(10, 5).ok());
  EXPECT_STREQ(b.finishBeginStep().message(),
               "finishBeginStep: character 15 is in no range of this step (call beginStepRange "
               "for it first)");
  EXPECT_STREQ(b.search().message(),
               "search: the step's beginning is not finished (call finishBeginStep)");
  EXPECT_STREQ(b.endStepRange(0, 1, 0).message(),
               "endStepRange: the step's beginning is not finished (call finishBeginStep)");
  EXPECT_FALSE(b.teleport(0, glm::vec3(0.f), glm::quat(1.f, 0.f, 0.f, 0.f)).ok());
  ASSERT_TRUE(b.beginStepRange(15, 8).ok());
  ASSERT_TRUE(b.finishBeginStep().ok());
  EXPECT_FALSE(b.beginStepRange(0, 1).ok()) << "the beginning is finished";
  ASSERT_TRUE(b.search().ok());
  ASSERT_TRUE(b.endStep().ok());
  CrowdSettings none;
  none.step_workers = 0;
  auto refused = Crowd::create(t.db, 2, none);
  ASSERT_FALSE(refused.ok());
  EXPECT_STREQ(refused.error().message(), "Crowd::create: step_workers 0 must be 1 to 1024");
}

// A teleport moves a character rigidly: from then on its world pose is the one it would have
// had, moved by the teleport (the same decisions, the same model pose with locking off), with
// no transition across it; held feet are let go and lock again where the toes are. The root
// motion each step reports is how the achieved transform moved.
TEST(FootLock, ATeleportMovesTheCharacterAndNothingElse) {
  TestDatabase t(legged(4, 300));
  constexpr uint32_t kCount = 4;
  TwoCrowds stay(t.db, kCount), moved(t.db, kCount);
  const uint32_t joints = t.db.jointCount();
  const glm::vec3 where(12.f, 0.f, -5.f);
  const glm::quat yaw = glm::angleAxis(1.2f, glm::vec3(0.f, 1.f, 0.f));
  glm::vec3 shift(0.f);
  glm::quat turn(1.f, 0.f, 0.f, 0.f);
  double locks_near = 0, locks = 0;
  for (int step = 0; step < 300; ++step) {
    if (step == 150) {
      const mmdb::CrowdCharacter before = moved.off.characters()[1];
      const std::vector<glm::quat> offsets(moved.off.offsetRotations().begin(),
                                           moved.off.offsetRotations().end());
      for (Crowd* crowd : {&moved.on, &moved.off}) ASSERT_TRUE(crowd->teleport(1, where, yaw).ok());
      const mmdb::CrowdCharacter& after = moved.off.characters()[1];
      EXPECT_EQ(after.achieved_position, where);
      turn = yaw * glm::inverse(before.achieved_rotation);
      shift = where - turn * before.achieved_position;
      EXPECT_LT(glm::length(after.sim.position - (shift + turn * before.sim.position)), 1e-4f);
      EXPECT_EQ(after.clip, before.clip);
      EXPECT_EQ(after.clip_time, before.clip_time);
      EXPECT_EQ(after.since_switch, before.since_switch) << "no transition";
      EXPECT_EQ(std::memcmp(offsets.data(), moved.off.offsetRotations().data(),
                            offsets.size() * sizeof(glm::quat)),
                0);
      for (uint32_t leg = 0; leg < 2; ++leg) {
        const FootLock& f = moved.on.footLocks()[2 + leg];
        EXPECT_FALSE(f.locked || f.blending || f.seen) << "let go";
      }
    }
    const std::vector<mmdb::CrowdCharacter> previous(moved.on.characters().begin(),
                                                     moved.on.characters().end());
    stay.step(step);
    // The moved crowd: the same sticks, turned with character 1 once it has been moved.
    for (uint32_t i = 0; i < kCount; ++i) {
      const float angle = 0.9f * float(((step / 70) * 5 + int(i)) % 7);
      const float length = ((step / 70 + i) % 3 == 0) ? 0.f : 0.7f;
      glm::vec3 stick(length * std::sin(angle), 0.f, length * std::cos(angle));
      if (i == 1 && step >= 150) stick = turn * stick;
      for (Crowd* crowd : {&moved.on, &moved.off})
        ASSERT_TRUE(crowd->setStick(i, stick.x, stick.z).ok());
    }
    ASSERT_TRUE(moved.on.step(kDt).ok());
    ASSERT_TRUE(moved.off.step(kDt).ok());
    for (uint32_t i = 0; i < kCount; ++i) {
      // The root motion of the step.
      const mmdb::CrowdCharacter& now = moved.on.characters()[i];
      EXPECT_EQ(now.root_motion_world, now.achieved_position - previous[i].achieved_position);
      EXPECT_LT(glm::length(now.root_motion_local -
                            glm::inverse(previous[i].achieved_rotation) * now.root_motion_world),
                1e-6f);
      EXPECT_LT(glm::length(glm::vec4(now.achieved_rotation.x, now.achieved_rotation.y,
                                      now.achieved_rotation.z, now.achieved_rotation.w) -
                            [&] {
                              const glm::quat q =
                                  now.root_motion_rotation * previous[i].achieved_rotation;
                              return glm::vec4(q.x, q.y, q.z, q.w) *
                                     (q.w * now.achieved_rotation.w < 0 ? -1.f : 1.f);
                            }()),
                1e-5f);
      ASSERT_EQ(stay.off.decisions()[i].frame, moved.off.decisions()[i].frame) << "step " << step;
      if (i != 1 || step < 150) continue;
      const mmdb::CrowdCharacter& a = stay.off.characters()[i];
      const mmdb::CrowdCharacter& b = moved.off.characters()[i];
      for (uint32_t j = 0; j < joints; ++j) {
        const glm::vec3 model_a = stay.off.modelTranslations()[i * joints + j];
        const glm::vec3 model_b = moved.off.modelTranslations()[i * joints + j];
        EXPECT_EQ(model_a, model_b) << "the same pose";
        const glm::vec3 world_a =
            shift + turn * (a.achieved_position + a.achieved_rotation * model_a);
        const glm::vec3 world_b = b.achieved_position + b.achieved_rotation * model_b;
        ASSERT_LT(glm::length(world_a - world_b), 1e-3f) << "step " << step << " joint " << j;
      }
      for (uint32_t leg = 0; leg < 2; ++leg) {
        const FootLock& f = moved.on.footLocks()[2 + leg];
        if (!f.locked) continue;
        locks += 1;
        locks_near += glm::length(f.position - moved.on.characters()[1].achieved_position) < 1.5f;
      }
    }
  }
  EXPECT_GT(locks, 50);
  EXPECT_EQ(locks_near, locks) << "the feet lock again by the character, where it now is";
}

// The game owns the root: each step it moves its capsule by the root motion the crowd reports,
// against a wall at x = 0.5, and places the character where the capsule went. The character
// stays behind the wall, its simulation and its held feet untouched by the placing.
TEST(FootLock, AGameThatOwnsTheRootPlacesTheCharacter) {
  TestDatabase t(legged(4, 300));
  auto created = Crowd::create(t.db, 1);
  ASSERT_TRUE(created.ok());
  Crowd& crowd = created.value();
  glm::vec3 capsule(0.f);
  int blocked = 0, held = 0, placed_held = 0;
  for (int step = 0; step < 400; ++step) {
    ASSERT_TRUE(crowd.setStick(0, 0.7f, 0.f).ok());  // towards +X, into the wall
    ASSERT_TRUE(crowd.step(kDt).ok());
    const mmdb::CrowdCharacter& ch = crowd.characters()[0];
    capsule += ch.root_motion_world;
    if (capsule.x > 0.5f) {
      capsule.x = 0.5f;
      ++blocked;
    }
    const mmdb::CharacterState sim = ch.sim;
    const std::vector<FootLock> feet(crowd.footLocks().begin(), crowd.footLocks().end());
    // Where the held toes are shown before the placing...
    glm::vec3 before[2];
    for (uint32_t leg = 0; leg < 2; ++leg)
      before[leg] = ch.achieved_position +
                    ch.achieved_rotation * crowd.modelTranslations()[crowd.legChains()[leg].toe];
    const float moved = glm::length(capsule - ch.achieved_position);
    ASSERT_TRUE(crowd.place(0, capsule, ch.achieved_rotation).ok());
    EXPECT_EQ(ch.achieved_position, capsule);
    // ... and after: a held toe stays on its lock as closely as before (the legs bent again at
    // once), not carried along by the placing (within the legs' reach: placings of up to 5 cm).
    for (uint32_t leg = 0; leg < 2; ++leg) {
      const FootLock& f = crowd.footLocks()[leg];
      if (!f.locked) continue;
      const glm::vec3 after =
          ch.achieved_position +
          ch.achieved_rotation * crowd.modelTranslations()[crowd.legChains()[leg].toe];
      const float was = glm::length(before[leg] - f.position);
      const float is = glm::length(after - f.position);
      if (moved < 0.05f) {
        EXPECT_LE(is, was + 1e-4f) << "step " << step << ": placed " << moved << " m";
        placed_held += moved > 5e-3f;
      }
    }
    EXPECT_EQ(std::memcmp(&sim, &ch.sim, sizeof sim), 0) << "the simulation stays";
    for (size_t f = 0; f < feet.size(); ++f) {
      EXPECT_EQ(feet[f].locked, crowd.footLocks()[f].locked) << "the feet stay held";
      EXPECT_EQ(feet[f].position, crowd.footLocks()[f].position);
      held += feet[f].locked;
    }
    ASSERT_LE(ch.achieved_position.x, 0.5f);
  }
  EXPECT_GT(blocked, 100) << "the wall stopped the character";
  EXPECT_GT(held, 50);
  EXPECT_GE(placed_held, 5) << "held toes under placings of 5 mm to 5 cm";
  EXPECT_STREQ(crowd.place(0, glm::vec3(0.f), glm::quat(0.f, 1.f, 0.f, 0.f)).message(),
               "place: character 0's rotation (1, 0, 0, 0) has no turn about +Y to take (not "
               "finite, zero, or a half turn about a horizontal axis)");
}

TEST(FootLock, BadTeleportsAndSimulationsAreRefusedAndChangeNothing) {
  TestDatabase t(legged(2, 300));
  auto created = Crowd::create(t.db, 2);
  ASSERT_TRUE(created.ok());
  Crowd& crowd = created.value();
  for (int step = 0; step < 30; ++step) ASSERT_TRUE(crowd.step(kDt).ok());
  const std::vector<mmdb::CrowdCharacter> before(crowd.characters().begin(),
                                                 crowd.characters().end());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const glm::quat level(1.f, 0.f, 0.f, 0.f);
  EXPECT_STREQ(crowd.teleport(2, glm::vec3(0.f), level).message(),
               "teleport: character 2 is out of range (the crowd has 2 characters)");
  EXPECT_STREQ(crowd.teleport(0, glm::vec3(nan, 0.f, 0.f), level).message(),
               "teleport: character 0's position (nan, 0, 0) is not finite");
  EXPECT_STREQ(crowd.teleport(1, glm::vec3(0.f), glm::quat(0.f, 1.f, 0.f, 0.f)).message(),
               "teleport: character 1's rotation (1, 0, 0, 0) has no turn about +Y to take (not "
               "finite, zero, or a half turn about a horizontal axis)");
  EXPECT_FALSE(crowd.teleport(1, glm::vec3(0.f), glm::quat(0.f, 0.f, 0.f, 0.f)).ok());
  mmdb::CharacterState state = before[0].sim;
  state.velocity.x = std::numeric_limits<float>::infinity();
  EXPECT_STREQ(crowd.setSimulation(0, state).message(),
               "setSimulation: character 0's state is not finite");
  ASSERT_TRUE(crowd.beginStep(kDt).ok());
  EXPECT_STREQ(crowd.teleport(0, glm::vec3(0.f), level).message(),
               "teleport: a step is in progress (call endStep)");
  ASSERT_TRUE(crowd.search().ok());
  ASSERT_TRUE(crowd.endStep().ok());
  // Nothing the refusals saw changed but what the step did.
  auto again = Crowd::create(t.db, 2);
  ASSERT_TRUE(again.ok());
  for (int step = 0; step < 31; ++step) ASSERT_TRUE(again.value().step(kDt).ok());
  for (uint32_t i = 0; i < 2; ++i) {
    const mmdb::CrowdCharacter &x = again.value().characters()[i], &y = crowd.characters()[i];
    EXPECT_EQ(std::memcmp(&x.sim, &y.sim, sizeof x.sim), 0);
    EXPECT_EQ(x.achieved_position, y.achieved_position);
    EXPECT_EQ(x.achieved_rotation, y.achieved_rotation);
    EXPECT_EQ(x.clip_time, y.clip_time);
    EXPECT_EQ(x.current_frame, y.current_frame);
    EXPECT_EQ(x.since_switch, y.since_switch);
  }
  EXPECT_EQ(
      std::memcmp(again.value().footLocks().data(), crowd.footLocks().data(), 4 * sizeof(FootLock)),
      0);

  // A valid simulation state is taken, its rotation as its turn about +Y.
  state = crowd.characters()[1].sim;
  state.position = glm::vec3(1.f, 0.f, 2.f);
  state.velocity = glm::vec3(0.f);
  state.rotation = glm::quat(0.7f, 0.1f, 0.7f, 0.f);  // a little pitch: dropped
  ASSERT_TRUE(crowd.setSimulation(1, state).ok());
  const mmdb::CharacterState& set = crowd.characters()[1].sim;
  EXPECT_EQ(set.position, state.position);
  EXPECT_EQ(set.rotation.x, 0.f);
  EXPECT_EQ(set.rotation.z, 0.f);
  EXPECT_NEAR(set.rotation.w, set.rotation.y, 1e-6f);
  EXPECT_NEAR(
      glm::length(glm::vec4(set.rotation.x, set.rotation.y, set.rotation.z, set.rotation.w)), 1.f,
      1e-6f);
}

// Before a character plays, and at its first step, nothing is held from before.
// With the default staggered starts (and without): a character holds nothing until it plays,
// and at its first playing step a contact already set is a contact that starts.
TEST(FootLock, ACharacterStartsWithNoLock) {
  TestDatabase t(legged(2, 300));
  constexpr uint32_t kCount = 14;  // starts over 12 steps with the defaults
  for (const uint32_t intervals : {2u, 0u}) {
    SCOPED_TRACE("start_stagger_intervals " + std::to_string(intervals));
    CrowdSettings settings;
    ASSERT_EQ(CrowdSettings{}.start_stagger_intervals, 2u);
    settings.start_stagger_intervals = intervals;
    auto created = Crowd::create(t.db, kCount, settings);
    ASSERT_TRUE(created.ok()) << created.error().message();
    Crowd& crowd = created.value();
    for (const FootLock& f : crowd.footLocks()) EXPECT_FALSE(f.locked || f.blending || f.seen);
    std::vector<int> first_step(kCount, -1);
    for (int step = 0; step < 12; ++step) {
      ASSERT_TRUE(crowd.step(kDt).ok());
      for (uint32_t i = 0; i < kCount; ++i) {
        SCOPED_TRACE("step " + std::to_string(step) + " character " + std::to_string(i));
        mmdb::Playing shown;
        ASSERT_TRUE(crowd.playing(i, shown).ok());
        const bool playing = shown.playing;
        if (playing && first_step[i] < 0) first_step[i] = step;
        for (uint32_t leg = 0; leg < 2; ++leg) {
          const FootLock& f = crowd.footLocks()[i * 2 + leg];
          if (!playing) {
            EXPECT_FALSE(f.locked || f.blending || f.seen);
          } else if (first_step[i] == step) {
            EXPECT_FALSE(f.blending);
            EXPECT_TRUE(f.seen);
            // A contact set at the first step is a contact that starts: held where it is shown.
            EXPECT_EQ(f.locked, f.contact);
            if (f.locked) {
              EXPECT_EQ(f.position.x, f.animated.x);
              EXPECT_EQ(f.position.z, f.animated.z);
            }
          }
        }
      }
    }
    for (uint32_t i = 0; i < kCount; ++i) {
      // startDelayTicks(): the periodic phase (i % 6) plus (i / 6) % 2 intervals of 6 steps.
      EXPECT_EQ(first_step[i], intervals == 0 ? 0 : int(i % 6 + 6 * ((i / 6) % 2)))
          << "character " << i;
    }
  }
}

// bandai-1: locked toes stay put in the world; with few switches (a large transition cost, so
// the pose is mostly the clips' own) the planted toes that slide without locking hold still.
TEST(FootLock, PlantedToesOfBandaiHoldStill) {
  std::string why;
  const mmdb::test::RealDatabase* real = mmdb::test::bandaiDatabase(&why);
  if (!real) GTEST_SKIP() << why;
  const Database& db = real->db;
  auto legs = mmdb::findLegChains(db);
  ASSERT_TRUE(legs.ok()) << legs.error().message();
  EXPECT_EQ(db.jointName(legs.value()[0].foot), "Foot_L");
  EXPECT_EQ(db.jointName(legs.value()[0].toe), "Toes_L");
  EXPECT_EQ(db.jointName(legs.value()[1].upper_leg), "UpperLeg_R");
  mmdb::MotionMeasures measured[2];
  for (const bool locking : {false, true}) {
    CrowdSettings settings;
    settings.foot_locking = locking;
    settings.transition_cost = 1e6f;
    // The clips' own motion: a character that never switches cannot follow its controller, and
    // the synchronization's clamp would drag it (test_synchronization.cpp measures that).
    settings.synchronization.mode = mmdb::Synchronization::None;
    auto created = Crowd::create(db, 16, settings);
    ASSERT_TRUE(created.ok()) << created.error().message();
    Crowd& crowd = created.value();
    auto meter = mmdb::MotionMeter::create(crowd);
    ASSERT_TRUE(meter.ok());
    const mmdb::StickScript script = mmdb::StickScript::builtIn();
    const mmdb::LocomotionSpeeds speeds = mmdb::speedsForDatabase(db);
    for (int step = 0; step < 600; ++step) {
      for (uint32_t i = 0; i < crowd.characterCount(); ++i) {
        const float time = float(step) * kDt + script.characterOffset(i);
        ASSERT_TRUE(crowd.setInput(i, mmdb::stickInput(script.at(time), speeds)).ok());
      }
      ASSERT_TRUE(crowd.step(kDt).ok());
      ASSERT_TRUE(meter.value().record(crowd, kDt).ok());
    }
    measured[locking] = meter.value().total();
  }
  const mmdb::Distribution& off = measured[0].planted_slide_mm;
  const mmdb::Distribution& on = measured[1].planted_slide_mm;
  std::printf(
      "[ bandai   ] planted toes slide per step: off p50 %.2f p90 %.2f mm, on p50 %.2f p90 "
      "%.2f mm; phases over 21 mm: off %.1f%%, on %.1f%%\n",
      off.p50, off.p90, on.p50, on.p90, 100 * measured[0].phase_share_over_limit,
      100 * measured[1].phase_share_over_limit);
  EXPECT_LE(on.p90, 2.0);
  EXPECT_LT(on.p90, off.p90);
  EXPECT_LT(measured[1].phase_share_over_limit, measured[0].phase_share_over_limit);
}

}  // namespace
