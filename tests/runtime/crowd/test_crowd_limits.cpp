// The limits of what mmdb::Crowd and its C interface take where the values enter (the setters,
// create, a step's dt), a step that fails for one character closing the step, a scaled rotation
// keeping its yaw, and Database::open refusing root motion beyond a physical bound.
#include "synthetic_database.h"

#include <mmdb/crowd.h>
#include <mmdb/mmdb_c.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

using mmdb::CharacterState;
using mmdb::Crowd;
using mmdb::CrowdSettings;
using mmdb::Database;
using mmdb::ErrorCode;

constexpr float kDt = 1.f / 60;

struct TestDatabase {
  explicit TestDatabase(const mmdb::cook::CookedDatabase& cooked) {
    bytes = mmdb::test::serializeAligned(cooked);
    auto opened = Database::fromMemory(bytes.data(), bytes.size());
    EXPECT_TRUE(opened.ok()) << opened.error().message();
    if (opened.ok()) db = std::move(opened.value());
  }
  TestDatabase() : TestDatabase(mmdb::test::makeSyntheticDatabase(smallSpec())) {}
  static mmdb::test::SyntheticSpec smallSpec() {
    mmdb::test::SyntheticSpec s;
    s.clips = 3;
    s.frames_per_clip = 120;
    s.joints = 4;
    return s;
  }
  mmdb::test::AlignedBytes bytes;
  Database db;
};

CrowdSettings plain() {
  CrowdSettings s;
  s.start_stagger_intervals = 0;
  s.foot_locking = false;
  return s;
}

Crowd create(const Database& db, uint32_t count, const CrowdSettings& settings = plain()) {
  auto created = Crowd::create(db, count, settings);
  EXPECT_TRUE(created.ok()) << created.error().message();
  return created.ok() ? std::move(created).value() : Crowd();
}

std::string createError(const Database& db, uint32_t count, const CrowdSettings& settings) {
  auto created = Crowd::create(db, count, settings);
  EXPECT_FALSE(created.ok());
  if (created.ok()) return "";
  EXPECT_EQ(created.error().code(), ErrorCode::InvalidArgument);
  return created.error().message();
}

bool finite(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

TEST(CrowdLimits, InputsBeyondTheLimitsAreRefusedWhereTheyEnter) {
  TestDatabase t;
  Crowd crowd = create(t.db, 2);
  mmdb::StickInput input;
  input.desired_velocity = {1e38f, 0.f, 0.f};
  mmdb::Status s = crowd.setInput(1, input);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(s.message(),
               "setInput: character 1's desired velocity (1e+38, 0) m/s is not finite or faster "
               "than 10000 m/s");
  input.desired_velocity = {1e20f, 0.f, 0.f};
  EXPECT_FALSE(crowd.setInput(1, input).ok());
  input.desired_velocity = {8000.f, 0.f, 6000.f};  // 1e4 m/s: the limit itself
  EXPECT_TRUE(crowd.setInput(1, input).ok());
  input.desired_velocity = {0.f, 0.f, 0.f};
  input.desired_facing = {1e20f, 0.f, 0.f};
  EXPECT_STREQ(crowd.setInput(0, input).message(),
               "setInput: character 0's desired facing (1e+20, 0) is not finite or has a "
               "component beyond 10000 (only its direction counts)");

  EXPECT_STREQ(crowd.step(1e20f).message(), "beginStep: dt 1e+20 s must be finite and 0 to 10 s");
  EXPECT_STREQ(crowd.prepareStep(10.5f).message(),
               "prepareStep: dt 10.5 s must be finite and 0 to 10 s");

  CharacterState state;
  state.velocity = {1e38f, 0.f, 0.f};
  EXPECT_STREQ(crowd.setSimulation(0, state).message(),
               "setSimulation: character 0's velocity (1e+38, 0, 0) m/s is not finite or beyond "
               "10000 m/s");
  state = {};
  state.acceleration = {0.f, 0.f, 1e38f};
  EXPECT_STREQ(crowd.setSimulation(0, state).message(),
               "setSimulation: character 0's acceleration (0, 0, 1e+38) m/s^2 is not finite or "
               "beyond 1e+08 m/s^2");
  state = {};
  state.angular_velocity = {0.f, 1e38f, 0.f};
  EXPECT_STREQ(crowd.setSimulation(0, state).message(),
               "setSimulation: character 0's angular velocity (0, 1e+38, 0) rad/s is not finite "
               "or beyond 100000 rad/s");
  state = {};
  state.position = {2e7f, 0.f, 0.f};
  EXPECT_STREQ(crowd.setSimulation(0, state).message(),
               "setSimulation: character 0's position (2e+07, 0, 0) has a coordinate beyond "
               "1e+07 m");
  EXPECT_STREQ(crowd.teleport(1, {0.f, 0.f, -3e38f}, glm::quat(1.f, 0.f, 0.f, 0.f)).message(),
               "teleport: character 1's position (0, 0, -3e+38) has a coordinate beyond 1e+07 m");
  // Nothing refused stopped the crowd.
  EXPECT_TRUE(crowd.step(kDt).ok());
}

TEST(CrowdLimits, SettingsBeyondTheLimitsAreRefusedAtCreate) {
  TestDatabase t;
  CrowdSettings s = plain();
  s.controller_halflife = 1e25f;
  EXPECT_EQ(createError(t.db, 1, s),
            "Crowd::create: controller_halflife 1e+25 s must be finite and 0.001 to 1000 s");
  s = plain();
  s.controller_halflife = 1e-6f;
  EXPECT_EQ(createError(t.db, 1, s),
            "Crowd::create: controller_halflife 1e-06 s must be finite and 0.001 to 1000 s");
  s = plain();
  s.max_speed = 3e38f;
  EXPECT_EQ(createError(t.db, 1, s),
            "Crowd::create: max_speed 3e+38 m/s must be finite and at most 10000 m/s in size");
  s.max_speed = 1e20f;
  EXPECT_FALSE(Crowd::create(t.db, 1, s).ok());
}

// At the limits, in every combination of the extremes, the steps stay finite: the limits keep
// the arithmetic within a float.
TEST(CrowdLimits, StepsAtTheLimitsStayFinite) {
  TestDatabase t;
  for (const float halflife : {mmdb::kMinControllerHalflife, mmdb::kMaxControllerHalflife}) {
    CrowdSettings settings = plain();
    settings.controller_halflife = halflife;
    settings.max_speed = -mmdb::kMaxCrowdSpeed;
    Crowd crowd = create(t.db, 4, settings);
    const float v = mmdb::kMaxCrowdSpeed / std::sqrt(2.f) * 0.999f;
    for (int step = 0; step < 40; ++step) {
      for (uint32_t c = 0; c < 4; ++c) {
        const float sign = (step / 3 + c) % 2 ? 1.f : -1.f;
        if (c == 0) {
          ASSERT_TRUE(crowd.setStick(c, sign * 1.4f, 1.4f).ok());
        } else {
          mmdb::StickInput in;
          in.desired_velocity = {sign * v, 0.f, -sign * v};
          in.desired_facing = {mmdb::kMaxCrowdFacing, 0.f, -sign * mmdb::kMaxCrowdFacing};
          ASSERT_TRUE(crowd.setInput(c, in).ok());
        }
        if (step % 7 == 3) {
          CharacterState state = crowd.characters()[c].sim;
          state.velocity = glm::vec3(-sign, 0.f, sign) * v;
          state.acceleration = glm::vec3(sign, 0.f, -sign) * (mmdb::kMaxCrowdAcceleration * 0.7f);
          state.angular_velocity = glm::vec3(0.f, sign * mmdb::kMaxCrowdAngularVelocity, 0.f);
          state.position = glm::vec3(sign * 0.9e7f, 0.f, -sign * 0.9e7f);
          ASSERT_TRUE(crowd.setSimulation(c, state).ok());
          ASSERT_TRUE(crowd
                          .teleport(c, glm::vec3(-sign * 0.9e7f, 0.f, sign * 0.9e7f),
                                    glm::quat(1.f, 0.f, 0.f, 0.f))
                          .ok());
        }
      }
      const float dt = step % 5 == 0 ? mmdb::kMaxCrowdDt : step % 5 == 1 ? 0.f : kDt;
      const mmdb::Status s = crowd.step(dt);
      ASSERT_TRUE(s.ok()) << "halflife " << halflife << " step " << step << ": " << s.message();
      for (const mmdb::CrowdCharacter& ch : crowd.characters()) {
        EXPECT_TRUE(finite(ch.sim.position) && finite(ch.sim.velocity) &&
                    finite(ch.sim.acceleration) && finite(ch.achieved_position));
      }
    }
  }
}

// A query that turns out not finite anyway (here: the database's features changed after open,
// which no check at open can see) fails its character, not the crowd for good: the step is
// closed and names the character, and once the cause is gone the next step works.
TEST(CrowdLimits, AStepThatFailsForOneCharacterClosesTheStep) {
  TestDatabase t;
  Crowd crowd = create(t.db, 3);
  ASSERT_TRUE(crowd.step(kDt).ok());
  const uint32_t frame = crowd.characters()[1].current_frame;
  float* row = const_cast<float*>(t.db.featureRow(frame).data());
  const std::vector<float> kept(row, row + t.db.featureCount());
  for (uint32_t c = 0; c < t.db.featureCount(); ++c)
    row[c] = std::numeric_limits<float>::quiet_NaN();
  // Only character 1 searches in the next steps (the others may play the frame: they do not
  // search, so build no query).
  ASSERT_TRUE(crowd.forceSearch(1).ok());
  const mmdb::CharacterState before = crowd.characters()[1].sim;
  mmdb::Status s = crowd.step(kDt);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(std::string(s.message()).rfind("step: character 1's query is not finite", 0), 0u)
      << s.message();
  EXPECT_EQ(crowd.characters()[1].sim.position, before.position);  // as before the step
  // Closed: the setters that need no step in progress, and the next step, are taken.
  EXPECT_TRUE(crowd.teleport(1, {1.f, 0.f, 1.f}, glm::quat(1.f, 0.f, 0.f, 0.f)).ok());
  ASSERT_TRUE(crowd.forceSearch(1).ok());
  s = crowd.prepareStep(kDt);
  ASSERT_TRUE(s.ok()) << s.message();
  s = crowd.beginStepRange(0, 3);
  EXPECT_EQ(std::string(s.message()).rfind("step: character 1's query is not finite", 0), 0u)
      << s.message();
  EXPECT_STREQ(crowd.finishBeginStep().message(),
               "finishBeginStep: character 1 failed in beginStepRange (its query is not finite); "
               "the step is closed, nothing played");
  std::copy(kept.begin(), kept.end(), row);  // the cause gone
  ASSERT_TRUE(crowd.forceSearch(1).ok());
  s = crowd.step(kDt);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(crowd.decisions()[1].reason, mmdb::SearchReason::Forced);
}

TEST(CrowdLimits, OpenRefusesRootMotionBeyondAPhysicalBound) {
  mmdb::cook::CookedDatabase cooked = mmdb::test::makeSyntheticDatabase(TestDatabase::smallSpec());
  cooked.root_motion[7].velocity.x = 1e38f;
  const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(cooked);
  auto opened = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code(), ErrorCode::Inconsistent);
  EXPECT_STREQ(opened.error().message(),
               "root_motion[7] (frame 7) has a velocity beyond 1e4 m/s (1e+38)");
  cooked = mmdb::test::makeSyntheticDatabase(TestDatabase::smallSpec());
  cooked.root_motion[9].rotation = glm::quat(1e20f, 0.f, 0.f, 0.f);
  const mmdb::test::AlignedBytes scaled = mmdb::test::serializeAligned(cooked);
  auto refused = Database::fromMemory(scaled.data(), scaled.size());
  ASSERT_FALSE(refused.ok());
  EXPECT_STREQ(refused.error().message(),
               "root_motion[9] (frame 9) has a rotation whose length is not 0.5 to 2 (1e+20)");
}

// A 90 degree yaw scaled up (its squares overflow) or down (they underflow) keeps its yaw.
TEST(CrowdLimits, AScaledRotationKeepsItsYaw) {
  TestDatabase t;
  Crowd crowd = create(t.db, 3);
  const float h = std::sqrt(0.5f);
  for (const float scale : {1e20f, 3e38f, 1e-30f}) {
    const glm::quat rotation(scale, 0.f, scale, 0.f);  // w, x, y, z
    ASSERT_TRUE(crowd.teleport(0, {0.f, 0.f, 0.f}, rotation).ok());
    ASSERT_TRUE(crowd.place(1, {0.f, 0.f, 0.f}, rotation).ok());
    CharacterState state;
    state.rotation = rotation;
    ASSERT_TRUE(crowd.setSimulation(2, state).ok());
    for (uint32_t c = 0; c < 2; ++c) {
      const glm::quat q = crowd.characters()[c].achieved_rotation;
      EXPECT_NEAR(q.w, h, 1e-6f) << scale;
      EXPECT_NEAR(q.y, h, 1e-6f) << scale;
    }
    EXPECT_NEAR(crowd.characters()[2].sim.rotation.y, h, 1e-6f) << scale;
  }
  ASSERT_TRUE(crowd.step(kDt).ok());
  const glm::quat q = crowd.characters()[0].achieved_rotation;
  EXPECT_GT(std::abs(q.y), 0.6f);  // still about a quarter turn, not the identity
}

TEST(CrowdLimits, BlockWeightsAndSticksThatWouldDoNothingAreRefused) {
  TestDatabase t;
  Crowd crowd = create(t.db, 2);
  std::vector<float> weights(t.db.featureBlockCount(), 1.f);
  weights[0] = 1e19f;
  mmdb::Status s = crowd.setBlockWeights(0, weights);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(s.message(),
               "setBlockWeights: character 0: block weight 0 is 1e+19, over 1e+06 (a cost so "
               "weighted overflows)");
  weights[0] = 3e38f;
  EXPECT_FALSE(crowd.setBlockWeights(0, weights).ok());
  EXPECT_TRUE(crowd.blockWeights(0).empty());
  for (float& w : weights) w = mmdb::kMaxBlockWeight;  // the limit: every character starts
  ASSERT_TRUE(crowd.setBlockWeights(0, weights).ok());
  ASSERT_TRUE(crowd.step(kDt).ok());
  EXPECT_TRUE(crowd.characters()[0].playing);
  EXPECT_NE(crowd.decisions()[0].frame, mmdb::kNoFrame);

  s = crowd.setStick(1, 1e20f, 0.f);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(s.message(),
               "setStick: character 1's stick (1e+20, 0) is not finite or longer than 2 (a stick "
               "is at most 1 long; up to 2 it is scaled to 1)");
  ASSERT_TRUE(crowd.setStick(1, 1.f, 1.f).ok());  // a square gate's corner: scaled to 1
  const glm::vec3 v = crowd.inputs()[1].desired_velocity;
  EXPECT_NEAR(std::hypot(v.x, v.z), crowd.settings().max_speed, 1e-5f);
}

// The C interface returns the same refusals, and a failed step leaves the crowd usable.
class CrowdLimitsC : public ::testing::Test {
 protected:
  void SetUp() override {
    const mmdb::test::AlignedBytes bytes =
        mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(TestDatabase::smallSpec()));
    path_ = (std::filesystem::temp_directory_path() /
             ("mmdb_limits_" + std::to_string(::getpid()) + ".mmdb"))
                .string();
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(CrowdLimitsC, RefusesWhatTheCrowdRefuses) {
  mmdb_database* db = nullptr;
  ASSERT_EQ(mmdb_database_open(path_.c_str(), &db), MMDB_OK) << mmdb_last_error();
  mmdb_crowd_settings settings;
  mmdb_crowd_settings_default(&settings);
  settings.foot_locking = 0;
  settings.controller_halflife = 1e25f;
  mmdb_crowd* crowd = nullptr;
  EXPECT_EQ(mmdb_crowd_create(db, 2, &settings, &crowd), MMDB_INVALID_ARGUMENT);
  EXPECT_STREQ(mmdb_last_error(),
               "Crowd::create: controller_halflife 1e+25 s must be finite and 0.001 to 1000 s");
  settings.controller_halflife = 0.27f;
  ASSERT_EQ(mmdb_crowd_create(db, 2, &settings, &crowd), MMDB_OK) << mmdb_last_error();
  const float velocity[3] = {1e38f, 0.f, 0.f}, facing[3] = {0.f, 0.f, 1.f};
  EXPECT_EQ(mmdb_crowd_set_input(crowd, 0, velocity, facing), MMDB_INVALID_ARGUMENT);
  EXPECT_EQ(mmdb_crowd_set_stick(crowd, 0, 1e20f, 0.f), MMDB_INVALID_ARGUMENT);
  EXPECT_EQ(mmdb_crowd_step(crowd, 1e20f), MMDB_INVALID_ARGUMENT);
  EXPECT_STREQ(mmdb_last_error(), "beginStep: dt 1e+20 s must be finite and 0 to 10 s");
  const float position[3] = {0.f, 0.f, 0.f}, rotation[4] = {0.f, 1e20f, 0.f, 1e20f};
  EXPECT_EQ(mmdb_crowd_teleport(crowd, 0, position, rotation), MMDB_OK) << mmdb_last_error();
  EXPECT_EQ(mmdb_crowd_step(crowd, kDt), MMDB_OK) << mmdb_last_error();
  float placed[4];
  ASSERT_EQ(mmdb_crowd_transform(crowd, 0, nullptr, placed), MMDB_OK);
  EXPECT_GT(std::abs(placed[1]), 0.6f);  // the quarter turn kept
  mmdb_crowd_destroy(crowd);
  EXPECT_EQ(mmdb_database_close(db), MMDB_OK);
}

}  // namespace

namespace {

// Split steps: a request searched twice, or a search once the end has begun, is refused.
TEST(CrowdLimits, SearchRangeRefusesAnOverlapAndASearchAfterTheEndBegan) {
  TestDatabase t;
  Crowd crowd = create(t.db, 4);
  ASSERT_TRUE(crowd.prepareStep(kDt).ok());
  ASSERT_TRUE(crowd.beginStepRange(0, 4).ok());
  ASSERT_TRUE(crowd.finishBeginStep().ok());
  ASSERT_EQ(crowd.requests().size(), 4u);  // every character starts
  ASSERT_TRUE(crowd.searchRange(0, 2, 0).ok());
  mmdb::Status s = crowd.searchRange(1, 3, 0);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(s.message(),
               "searchRange: request 1 of [1, 1 + 3) was searched by another range of this step; "
               "the ranges must not overlap");
  ASSERT_TRUE(crowd.searchRange(2, 2, 0).ok());  // nothing of the refused range was kept
  ASSERT_TRUE(crowd.endStepRange(0, 2, 0).ok());
  EXPECT_STREQ(crowd.searchRange(2, 1, 0).message(),
               "searchRange: requests [2, 2 + 1): the step's end has begun (endStepRange); every "
               "search comes before it");
  ASSERT_TRUE(crowd.endStepRange(2, 2, 0).ok());
  ASSERT_TRUE(crowd.finishStep().ok());
  // The next step searches afresh.
  EXPECT_TRUE(crowd.step(kDt).ok());
}

TEST_F(CrowdLimitsC, SearchRangeRefusesAnOverlapAndASearchAfterTheEndBegan) {
  mmdb_database* db = nullptr;
  ASSERT_EQ(mmdb_database_open(path_.c_str(), &db), MMDB_OK) << mmdb_last_error();
  mmdb_crowd_settings settings;
  mmdb_crowd_settings_default(&settings);
  settings.foot_locking = 0;
  settings.start_stagger_intervals = 0;
  mmdb_crowd* crowd = nullptr;
  ASSERT_EQ(mmdb_crowd_create(db, 3, &settings, &crowd), MMDB_OK) << mmdb_last_error();
  ASSERT_EQ(mmdb_crowd_prepare_step(crowd, kDt), MMDB_OK);
  ASSERT_EQ(mmdb_crowd_begin_step_range(crowd, 0, 3), MMDB_OK);
  ASSERT_EQ(mmdb_crowd_finish_begin_step(crowd), MMDB_OK);
  const uint32_t n = mmdb_crowd_search_count(crowd);
  ASSERT_EQ(n, 3u);
  ASSERT_EQ(mmdb_crowd_search_range(crowd, 0, n, 0), MMDB_OK);
  EXPECT_EQ(mmdb_crowd_search_range(crowd, 0, n, 0), MMDB_INVALID_ARGUMENT);
  EXPECT_STREQ(mmdb_last_error(),
               "searchRange: request 0 of [0, 0 + 3) was searched by another range of this step; "
               "the ranges must not overlap");
  ASSERT_EQ(mmdb_crowd_end_step_range(crowd, 0, 3, 0), MMDB_OK);
  EXPECT_EQ(mmdb_crowd_search_range(crowd, 0, 0, 0), MMDB_INVALID_ARGUMENT);
  ASSERT_EQ(mmdb_crowd_finish_step(crowd), MMDB_OK);
  EXPECT_EQ(mmdb_crowd_step(crowd, kDt), MMDB_OK) << mmdb_last_error();
  mmdb_crowd_destroy(crowd);
  EXPECT_EQ(mmdb_database_close(db), MMDB_OK);
}

// A crowd past the documented count is refused at once, before anything is allocated.
TEST(CrowdLimits, ACountPastTheLimitIsRefusedAtOnce) {
  TestDatabase t;
  EXPECT_EQ(createError(t.db, 50000000, plain()),
            "Crowd::create: 50000000 characters are more than a crowd holds (at most 1000000)");
  EXPECT_EQ(createError(t.db, mmdb::kMaxCrowdCharacters + 1, plain()),
            "Crowd::create: 1000001 characters are more than a crowd holds (at most 1000000)");
}

}  // namespace
