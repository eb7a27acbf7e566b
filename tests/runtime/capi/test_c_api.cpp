// The C interface (mmdb/mmdb_c.h) against the C++ crowd: a C11 client (c_api_client.c) runs a
// crowd on a database file and gives the same world poses and the same "what is playing",
// bit for bit, as mmdb::Crowd on the same sticks; its settings are CrowdSettings' field for
// field; every bad argument is a status with a message, never a crash.
#include "c_api_client.h"
#include "synthetic_database.h"

#include <mmdb/crowd.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// A legged synthetic database written to a file (the C interface opens files).
class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    mmdb::test::SyntheticSpec spec;
    spec.clips = 4;
    spec.frames_per_clip = 300;
    spec.joints = 10;
    spec.legs = true;
    const mmdb::test::AlignedBytes bytes =
        mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(spec));
    path_ = (fs::temp_directory_path() / ("mmdb_c_api_" + std::to_string(::getpid()) + ".mmdb"))
                .string();
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  void TearDown() override { fs::remove(path_); }
  std::string path_;
};

// The C client steps whole (0) or split into three ranges of each part (3).
class CApiRun : public CApi, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(CApiRun, AC11ClientPlaysTheSameCrowdAsCxx) {
  constexpr uint32_t kCharacters = 5, kSteps = 240;
  std::vector<float> sticks(2 * kCharacters * kSteps);
  for (uint32_t s = 0; s < kSteps; ++s)
    for (uint32_t c = 0; c < kCharacters; ++c) {
      const float angle = 0.9f * float(((s / 70) * 5 + c) % 7);
      const float length = ((s / 70 + c) % 3 == 0) ? 0.f : 0.7f;
      sticks[2 * (s * kCharacters + c)] = length * std::sin(angle);
      sticks[2 * (s * kCharacters + c) + 1] = length * std::cos(angle);
    }

  auto db = mmdb::Database::open(path_.c_str());
  ASSERT_TRUE(db.ok()) << db.error().message();
  const uint32_t joints = db.value().jointCount();
  std::vector<float> c_positions(size_t(kSteps) * kCharacters * joints * 3);
  std::vector<mmdb_playing> c_playing(size_t(kSteps) * kCharacters);
  char error[512] = "";
  ASSERT_EQ(c_client_run(path_.c_str(), kCharacters, kSteps, GetParam(), sticks.data(),
                         c_positions.data(), c_playing.data(), error, sizeof error),
            0)
      << error;

  auto created = mmdb::Crowd::create(db.value(), kCharacters);
  ASSERT_TRUE(created.ok()) << created.error().message();
  mmdb::Crowd& crowd = created.value();
  uint32_t switched = 0, locked = 0;
  for (uint32_t s = 0; s < kSteps; ++s) {
    for (uint32_t c = 0; c < kCharacters; ++c)
      ASSERT_TRUE(
          crowd
              .setStick(c, sticks[2 * (s * kCharacters + c)], sticks[2 * (s * kCharacters + c) + 1])
              .ok());
    ASSERT_TRUE(crowd.step(1.f / 60).ok());
    for (uint32_t c = 0; c < kCharacters; ++c) {
      const size_t at = size_t(s) * kCharacters + c;
      const mmdb::CrowdCharacter& ch = crowd.characters()[c];
      for (uint32_t j = 0; j < joints; ++j) {
        const glm::vec3 world =
            ch.achieved_position + ch.achieved_rotation * crowd.modelTranslations()[c * joints + j];
        for (int k = 0; k < 3; ++k)
          ASSERT_EQ(c_positions[(at * joints + j) * 3 + size_t(k)], world[k])
              << "step " << s << " character " << c << " joint " << j;
      }
      mmdb::Playing p;
      ASSERT_TRUE(crowd.playing(c, p).ok());
      const mmdb_playing& q = c_playing[at];
      EXPECT_EQ(q.playing, p.playing ? 1 : 0);
      EXPECT_EQ(q.clip, p.clip);
      EXPECT_EQ(q.frame, p.frame);
      EXPECT_EQ(q.clip_frame, p.clip_frame);
      EXPECT_EQ(q.clip_time, p.clip_time);
      EXPECT_EQ(q.range, p.range);
      EXPECT_EQ(q.tags, p.tags);
      EXPECT_EQ(q.tags_entered, p.tags_entered);
      EXPECT_EQ(q.tags_left, p.tags_left);
      EXPECT_EQ(q.contacts, p.contacts);
      EXPECT_EQ(q.locked_feet, p.locked_feet);
      EXPECT_EQ(q.blending_feet, p.blending_feet);
      EXPECT_EQ(q.search_reason, uint32_t(p.decision.reason));
      EXPECT_EQ(q.switched, p.decision.switched ? 1 : 0);
      EXPECT_EQ(q.continued, p.decision.continued ? 1 : 0);
      EXPECT_EQ(q.held, p.decision.held ? 1 : 0);
      EXPECT_EQ(q.winner, p.decision.frame);
      EXPECT_EQ(q.winner_cost, p.decision.cost);
      EXPECT_EQ(q.frame_playing, p.decision.playing);
      switched += q.switched;
      locked += q.locked_feet != 0;
    }
  }
  EXPECT_GT(switched, 10u) << "the run switches";
  EXPECT_GT(locked, 100u) << "and holds feet";
}

INSTANTIATE_TEST_SUITE_P(WholeAndSplit, CApiRun, ::testing::Values(0u, 3u));

TEST_F(CApi, EveryBadArgumentIsAStatusWithAMessage) {
  char error[512] = "";
  EXPECT_EQ(c_client_bad_arguments(path_.c_str(), error, sizeof error), 0) << error;
}

// The roles' joints and the contact joints through C are the C++ database's, and the names are
// the manifest's. The legged database names every role; a database without legs names only the
// hips, root, facing and left foot, and C reads -1 for the others.
TEST_F(CApi, RolesNameTheDatabasesJoints) {
  mmdb::test::SyntheticSpec legless;
  legless.joints = 6;
  const mmdb::test::AlignedBytes bytes =
      mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(legless));
  const std::string legless_path = path_ + ".legless.mmdb";
  std::ofstream(legless_path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  const char* const expected_names[] = {"hips",      "left_foot",     "right_foot", "left_toe",
                                        "right_toe", "root_position", "facing"};
  for (const std::string& path : {path_, legless_path}) {
    SCOPED_TRACE(path);
    auto db = mmdb::Database::open(path.c_str());
    ASSERT_TRUE(db.ok()) << db.error().message();
    int32_t roles[MMDB_ROLE_COUNT];
    const char* names[MMDB_ROLE_COUNT] = {};
    int32_t contacts[8];
    uint32_t contact_count = 0;
    char error[512] = "";
    ASSERT_EQ(c_client_roles(path.c_str(), roles, names, contacts, 8, &contact_count, error,
                             sizeof error),
              0)
        << error;
    for (uint32_t r = 0; r < MMDB_ROLE_COUNT; ++r) {
      EXPECT_EQ(roles[r], db.value().roleJoint(mmdb::Role(r))) << "role " << r;
      EXPECT_STREQ(names[r], expected_names[r]);
    }
    ASSERT_EQ(contact_count, db.value().contactJoints().size());
    for (uint32_t i = 0; i < contact_count; ++i)
      EXPECT_EQ(contacts[i], db.value().contactJoints()[i]);
    if (path == path_) {  // the legged skeleton: the toes are 4 and 8, its contact joints
      EXPECT_EQ(roles[MMDB_ROLE_LEFT_TOE], 4);
      EXPECT_EQ(roles[MMDB_ROLE_RIGHT_TOE], 8);
      EXPECT_EQ(roles[MMDB_ROLE_LEFT_FOOT], 3);
      EXPECT_EQ(roles[MMDB_ROLE_HIPS], 0);
      ASSERT_EQ(contact_count, 2u);
      EXPECT_EQ(contacts[0], 4);
      EXPECT_EQ(contacts[1], 8);
    } else {
      EXPECT_EQ(roles[MMDB_ROLE_LEFT_TOE], -1);
      EXPECT_EQ(roles[MMDB_ROLE_RIGHT_FOOT], -1);
      EXPECT_EQ(roles[MMDB_ROLE_LEFT_FOOT], 2);
    }
  }
  fs::remove(legless_path);
}

// A synchronization setting that does not fit: no crowd, and the status names the setting.
TEST_F(CApi, ABadSynchronizationSettingMakesNoCrowd) {
  mmdb_database* db = nullptr;
  ASSERT_EQ(mmdb_database_open(path_.c_str(), &db), MMDB_OK) << mmdb_last_error();
  mmdb_crowd_settings bad;
  mmdb_crowd_settings_default(&bad);
  bad.synchronization = 7;
  mmdb_crowd* none = nullptr;
  EXPECT_EQ(mmdb_crowd_create(db, 2, &bad, &none), MMDB_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
  EXPECT_NE(std::string(mmdb_last_error()).find("synchronization mode 7 is unknown"),
            std::string::npos)
      << mmdb_last_error();
  for (float value : {-0.1f, INFINITY, NAN}) {
    mmdb_crowd_settings_default(&bad);
    bad.sync_position_halflife = value;
    EXPECT_EQ(mmdb_crowd_create(db, 2, &bad, &none), MMDB_INVALID_ARGUMENT);
    EXPECT_NE(std::string(mmdb_last_error()).find("synchronization position_halflife"),
              std::string::npos)
        << mmdb_last_error();
  }
  mmdb_crowd_settings_default(&bad);
  bad.sync_warp_angle = 2.f;
  EXPECT_EQ(mmdb_crowd_create(db, 2, &bad, &none), MMDB_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(mmdb_last_error()).find("warp_angle 2 must be finite and >= 0 and at most pi/2"),
      std::string::npos)
      << mmdb_last_error();
  mmdb_crowd_settings_default(&bad);
  bad.sync_max_angle = 4.f;
  EXPECT_EQ(mmdb_crowd_create(db, 2, &bad, &none), MMDB_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(mmdb_last_error()).find("max_angle 4 must be finite and >= 0 and at most pi"),
      std::string::npos)
      << mmdb_last_error();
  EXPECT_EQ(none, nullptr);
  mmdb_database_close(db);
}

// The C settings are CrowdSettings field for field, defaults, reference() and
// referenceController() alike, and go back unchanged.
TEST(CApiSettings, AreTheCrowdSettings) {
  for (int reference = 0; reference < 3; ++reference) {
    const mmdb::CrowdSettings s = reference == 2   ? mmdb::CrowdSettings::referenceController()
                                  : reference == 1 ? mmdb::CrowdSettings::reference()
                                                   : mmdb::CrowdSettings{};
    mmdb_crowd_settings c;
    std::memset(&c, 0xAB, sizeof c);
    if (reference == 2)
      mmdb_crowd_settings_reference_controller(&c);
    else if (reference == 1)
      mmdb_crowd_settings_reference(&c);
    else
      mmdb_crowd_settings_default(&c);
    EXPECT_EQ(c.search_interval_ticks, s.search_interval_ticks);
    EXPECT_EQ(c.stagger_phases, s.stagger_phases);
    EXPECT_EQ(c.start_stagger_intervals, s.start_stagger_intervals);
    EXPECT_EQ(c.transition_cost, s.transition_cost);
    EXPECT_EQ(c.neighbourhood_frames, s.neighbourhood_frames);
    EXPECT_EQ(c.max_drift, s.max_drift);
    EXPECT_EQ(c.inertialization_halflife, s.inertialization_halflife);
    EXPECT_EQ(c.inertialization_rate_halflife, s.inertialization_rate_halflife);
    EXPECT_EQ(c.inertialization_threshold, s.inertialization_threshold);
    EXPECT_EQ(c.transition_speed_limit, s.transition_speed_limit);
    EXPECT_EQ(c.controller_halflife, s.controller_halflife);
    EXPECT_EQ(c.max_speed, s.max_speed);
    EXPECT_EQ(c.bounds_pruning, s.bounds_pruning ? 1 : 0);
    EXPECT_EQ(c.continue_window, s.continue_window);
    EXPECT_EQ(c.jump_cooldown, s.jump_cooldown);
    EXPECT_EQ(c.search_when_settled, s.search_when_settled ? 1 : 0);
    EXPECT_EQ(c.settle_velocity_change, s.settle_velocity_change);
    EXPECT_EQ(c.settle_rotation_change, s.settle_rotation_change);
    EXPECT_EQ(c.range_end_margin, s.range_end_margin);
    EXPECT_EQ(c.range_end_moves_on, s.range_end_moves_on ? 1 : 0);
    EXPECT_EQ(c.start_playing, s.start_playing ? 1 : 0);
    EXPECT_EQ(c.search_interval_seconds, s.search_interval_seconds);
    EXPECT_EQ(c.settle_search_interval, s.settle_search_interval);
    EXPECT_EQ(c.search_at_clip_end, s.search_at_clip_end ? 1 : 0);
    EXPECT_EQ(c.unrotated_angular_offsets, s.unrotated_angular_offsets ? 1 : 0);
    EXPECT_EQ(c.predict_before_update, s.predict_before_update ? 1 : 0);
    EXPECT_EQ(c.show_next_frame, s.show_next_frame ? 1 : 0);
    EXPECT_EQ(c.reference_arithmetic, s.reference_arithmetic ? 1 : 0);
    EXPECT_EQ(c.mirrored_tag_events, s.mirrored_tag_events ? 1 : 0);
    EXPECT_EQ(c.foot_locking, s.foot_locking ? 1 : 0);
    EXPECT_EQ(c.foot_unlock_radius, s.foot_unlock_radius);
    EXPECT_EQ(c.foot_unlock_halflife, s.foot_unlock_halflife);
    EXPECT_EQ(c.ik_foot_height, s.ik_foot_height);
    EXPECT_EQ(c.ik_toe_length, s.ik_toe_length);
    EXPECT_EQ(c.ik_max_length_buffer, s.ik_max_length_buffer);
    EXPECT_EQ(c.step_workers, s.step_workers);
    EXPECT_EQ(c.synchronization, uint32_t(s.synchronization.mode));
    EXPECT_EQ(c.sync_position_halflife, s.synchronization.position_halflife);
    EXPECT_EQ(c.sync_rotation_halflife, s.synchronization.rotation_halflife);
    EXPECT_EQ(c.sync_position_ratio, s.synchronization.position_ratio);
    EXPECT_EQ(c.sync_rotation_ratio, s.synchronization.rotation_ratio);
    EXPECT_EQ(c.sync_max_distance, s.synchronization.max_distance);
    EXPECT_EQ(c.sync_max_angle, s.synchronization.max_angle);
    EXPECT_EQ(c.sync_foot_reach, s.synchronization.foot_reach);
    EXPECT_EQ(c.sync_hard_distance, s.synchronization.hard_distance);
    EXPECT_EQ(c.sync_rate_min, s.synchronization.rate_min);
    EXPECT_EQ(c.sync_rate_max, s.synchronization.rate_max);
    EXPECT_EQ(c.sync_stride_min, s.synchronization.stride_min);
    EXPECT_EQ(c.sync_stride_max, s.synchronization.stride_max);
    EXPECT_EQ(c.sync_warp_angle, s.synchronization.warp_angle);
    EXPECT_EQ(c.sync_warp_halflife, s.synchronization.warp_halflife);
  }
  EXPECT_EQ(uint32_t(mmdb::Synchronization::CharacterFollows), MMDB_SYNC_CHARACTER_FOLLOWS);
  EXPECT_EQ(uint32_t(mmdb::Synchronization::ControllerFollows), MMDB_SYNC_CONTROLLER_FOLLOWS);

  EXPECT_EQ(sizeof(mmdb_crowd_settings), 51 * 4u) << "a field added to one is added to the other";
  EXPECT_STREQ(mmdb_status_name(MMDB_CORRUPT), "Corrupt");
  EXPECT_EQ(int(MMDB_NO_MATCH), int(mmdb::ErrorCode::NoMatch));
  EXPECT_EQ(int(MMDB_DEVICE_ERROR), int(mmdb::ErrorCode::DeviceError));
}

}  // namespace
