// Foot locking and two-bone leg IK: the IK reaches what it can reach and keeps bone lengths, stops
// at the length buffer short of what it cannot; a planted toe that the animation slides is held in
// the world, and lets go past the unlock radius with a blend that moves no faster than it allows.
#include <mmdb/playback.h>

#include <gtest/gtest.h>

#include <glm/geometric.hpp>
#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

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

TEST(FootLock, PastTheRadiusItBlendsBackContinuously) {
  LockedLeg leg;
  const float speed = 1.4f;  // 23 mm a step: past the 0.2 m radius at the 9th step
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

}  // namespace
