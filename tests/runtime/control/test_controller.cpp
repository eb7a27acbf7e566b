// The spring controller against its closed form, and the query it builds.
#include "synthetic_database.h"

#include <mmdb/controller.h>
#include <mmdb/database.h>

#include <gtest/gtest.h>

#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <vector>

namespace {

using mmdb::CharacterState;
using mmdb::ControllerSettings;
using mmdb::StickInput;

const float kY = 2.f * std::log(2.f) / 0.27f;  // y of the default 0.27 s halflife

TEST(Controller, VelocityFollowsTheCriticallyDampedSchedule) {
  // From rest towards 2 m/s along +X: v(t) = 2 (1 - e^(-y t) (1 + y t)).
  const ControllerSettings settings;
  StickInput stick;
  stick.desired_velocity = {2.f, 0.f, 0.f};
  stick.desired_facing = {0.f, 0.f, 1.f};
  for (float t : {0.05f, 0.27f, 0.54f, 1.f, 3.f}) {
    CharacterState state;
    mmdb::updateCharacter(state, stick, settings, t);
    const float expected = 2.f * (1.f - std::exp(-kY * t) * (1.f + kY * t));
    EXPECT_NEAR(state.velocity.x, expected, 1e-5f) << t;
    EXPECT_EQ(state.velocity.y, 0.f);
  }
  // After one halflife the error is e^(-2 ln 2)(1 + 2 ln 2) = 0.597 of the start; after two,
  // (1 + 4 ln 2) / 16 = 0.236: a critically damped spring, no overshoot.
  CharacterState state;
  mmdb::updateCharacter(state, stick, settings, 0.27f);
  EXPECT_NEAR((2.f - state.velocity.x) / 2.f, 0.25f * (1.f + 2.f * std::log(2.f)), 1e-5f);
  for (int i = 0; i < 300; ++i) {
    mmdb::updateCharacter(state, stick, settings, 1.f / 60);
    EXPECT_LE(state.velocity.x, 2.f + 1e-5f);
  }
  EXPECT_NEAR(state.velocity.x, 2.f, 1e-4f);
}

TEST(Controller, OneLongStepEqualsManySmallOnes) {
  const ControllerSettings settings;
  StickInput stick;
  stick.desired_velocity = {1.f, 0.f, -2.f};
  stick.desired_facing = {-1.f, 0.f, 0.f};
  CharacterState a, b;
  a.velocity = b.velocity = {0.f, 0.f, 1.f};
  mmdb::updateCharacter(a, stick, settings, 0.5f);
  for (int i = 0; i < 30; ++i) mmdb::updateCharacter(b, stick, settings, 0.5f / 30);
  EXPECT_NEAR(glm::length(a.position - b.position), 0.f, 1e-4f);
  EXPECT_NEAR(glm::length(a.velocity - b.velocity), 0.f, 1e-4f);
  EXPECT_NEAR(std::abs(glm::dot(a.rotation, b.rotation)), 1.f, 1e-5f);
  // Position is the integral of velocity: compare with a fine trapezoid rule.
  CharacterState c;
  c.velocity = {0.f, 0.f, 1.f};
  glm::vec3 integral(0.f), v_prev = c.velocity;
  for (int i = 0; i < 5000; ++i) {
    mmdb::updateCharacter(c, stick, settings, 0.5f / 5000);
    integral += 0.5f * (v_prev + c.velocity) * (0.5f / 5000);
    v_prev = c.velocity;
  }
  EXPECT_NEAR(glm::length(integral - a.position), 0.f, 1e-3f);
}

TEST(Controller, FacingTurnsOnTheSameSchedule) {
  const ControllerSettings settings;
  StickInput stick;
  stick.desired_facing = {1.f, 0.f, 0.f};  // a quarter turn left of +Z, about +Y
  CharacterState state;
  mmdb::updateCharacter(state, stick, settings, 0.27f);
  const glm::vec3 forward = state.rotation * glm::vec3(0.f, 0.f, 1.f);
  const float remaining = std::atan2(forward.x, forward.z);  // angle turned so far
  const float expected = 1.5707963f * (1.f - std::exp(-kY * 0.27f) * (1.f + kY * 0.27f));
  EXPECT_NEAR(remaining, expected, 1e-4f);
  EXPECT_NEAR(forward.y, 0.f, 1e-6f);  // stays a pure yaw
}

TEST(Controller, TrajectoryIsInTheCharacterFrame) {
  const ControllerSettings settings;
  float t[mmdb::kTrajectoryFloats];
  // At rest, no stick: everything stays at the origin facing +Z.
  CharacterState rest;
  mmdb::predictTrajectory(rest, StickInput{}, settings, t);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(t[i], 0.f, 1e-6f);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(t[6 + 2 * k], 0.f, 1e-6f);
    EXPECT_NEAR(t[6 + 2 * k + 1], 1.f, 1e-6f);
  }
  // Already walking at the stick's velocity while facing +X: straight ahead in its own frame,
  // 1.5 m/s * 1/3, 2/3, 1 s.
  CharacterState walking;
  walking.position = {5.f, 0.f, -3.f};
  walking.velocity = {1.5f, 0.f, 0.f};
  walking.rotation = mmdb::facingRotation({1.f, 0.f, 0.f});
  StickInput stick;
  stick.desired_velocity = {1.5f, 0.f, 0.f};
  stick.desired_facing = {1.f, 0.f, 0.f};
  mmdb::predictTrajectory(walking, stick, settings, t);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(t[2 * k], 0.f, 1e-5f);
    EXPECT_NEAR(t[2 * k + 1], 0.5f * float(k + 1), 1e-5f);
    EXPECT_NEAR(t[6 + 2 * k], 0.f, 1e-5f);
    EXPECT_NEAR(t[6 + 2 * k + 1], 1.f, 1e-5f);
  }
  // Standing, stick to the character's right (-X for a +Z facing): the predicted points move to
  // -x, by the integral of the spring's velocity.
  CharacterState standing;
  stick.desired_velocity = {-1.f, 0.f, 0.f};
  stick.desired_facing = {0.f, 0.f, 1.f};
  mmdb::predictTrajectory(standing, stick, settings, t);
  CharacterState one_second = standing;
  mmdb::updateCharacter(one_second, stick, settings, 1.f);
  EXPECT_NEAR(t[4], one_second.position.x, 1e-6f);
  EXPECT_LT(t[0], 0.f);
  EXPECT_LT(t[2], t[0]);
}

TEST(Controller, BuildQueryCopiesThePoseAndNormalizesTheTrajectory) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 2;
  spec.frames_per_clip = 100;
  const mmdb::cook::CookedDatabase cooked = mmdb::test::makeSyntheticDatabase(spec);
  const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(cooked);
  auto db = mmdb::Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(db.ok());
  float trajectory[12];
  for (int i = 0; i < 12; ++i) trajectory[i] = 0.1f * float(i) - 0.4f;
  std::vector<float> query(27);
  ASSERT_TRUE(mmdb::buildQuery(db.value(), 42, trajectory, mmdb::Span<float>(query)).ok());
  for (int c = 0; c < 15; ++c) EXPECT_EQ(query[c], cooked.features[42 * 28 + c]);
  for (int c = 15; c < 27; ++c)
    EXPECT_FLOAT_EQ(query[c],
                    (trajectory[c - 15] - cooked.feature_offset[c]) / cooked.feature_scale[c]);
  // Nothing playing: pose part is the mean (0 normalized).
  ASSERT_TRUE(mmdb::buildQuery(db.value(), -1, trajectory, mmdb::Span<float>(query)).ok());
  for (int c = 0; c < 15; ++c) EXPECT_EQ(query[c], 0.f);
  // Wrong sizes and frames are errors.
  std::vector<float> small(26);
  EXPECT_FALSE(mmdb::buildQuery(db.value(), 0, trajectory, mmdb::Span<float>(small)).ok());
  EXPECT_FALSE(mmdb::buildQuery(db.value(), 200, trajectory, mmdb::Span<float>(query)).ok());
  EXPECT_FALSE(mmdb::buildQuery(db.value(), -2, trajectory, mmdb::Span<float>(query)).ok());
}

}  // namespace
