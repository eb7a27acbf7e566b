// The runtime on its own (no cooker code linked, C++17): open the schema 1.0 regression file,
// find the values it was made with, search it, drive a character and play a pose from it.
#include <mmdb/mmdb.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

const std::string kFile = std::string(MMDB_TEST_DATA) + "/mmdb/mmdb-1.0.mmdb";

TEST(RuntimeAlone, OpensTheSchema1_0FileWithItsExpectedValues) {
  auto r = mmdb::Database::open(kFile.c_str());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const mmdb::Database& d = r.value();
  EXPECT_EQ(d.schemaMajor(), 1);
  EXPECT_EQ(d.schemaMinor(), 0);
  EXPECT_EQ(d.cookerVersion(), "mmcook 1.0.0");
  EXPECT_EQ(d.frameCount(), 144u);
  EXPECT_EQ(d.jointCount(), 3u);
  EXPECT_EQ(d.clipCount(), 3u);
  EXPECT_EQ(d.clip(2).name, "clip_2");
  EXPECT_EQ(d.clip(2).first_frame, 96u);
  EXPECT_EQ(d.jointName(0), "Hips");
  EXPECT_EQ(d.parents()[2], 0);
  EXPECT_EQ(d.tagName(2), "jump");
  EXPECT_FLOAT_EQ(d.frameRate(), 60.f);
  EXPECT_EQ(d.featureCount(), 27);
  EXPECT_EQ(d.featureStride(), 28);
  EXPECT_FLOAT_EQ(d.features()[0], 0.775987804f);
  EXPECT_FLOAT_EQ(d.featureRow(50)[20], -0.644347727f);
  EXPECT_FLOAT_EQ(d.featureOffset()[3], -0.7f);
  EXPECT_FLOAT_EQ(d.featureScale()[3], 0.35f);
  EXPECT_FLOAT_EQ(d.localRotations()[31].y, 0.0323736705f);
  EXPECT_FLOAT_EQ(d.localRotations()[31].w, 0.999449611f);
  EXPECT_FLOAT_EQ(d.rootMotion()[47].position.z, 0.939356685f);
  const mmdb::MatchRange expected[] = {{0, 14, 1}, {14, 14, 5}, {48, 28, 2}, {96, 28, 1}};
  ASSERT_EQ(d.ranges().size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(d.ranges()[i].first_frame, expected[i].first_frame);
    EXPECT_EQ(d.ranges()[i].frame_count, expected[i].frame_count);
    EXPECT_EQ(d.ranges()[i].tag_mask, expected[i].tag_mask);
  }
}

TEST(RuntimeAlone, SearchesControlsAndPlaysTheRegressionFile) {
  auto r = mmdb::Database::open(kFile.c_str());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const mmdb::Database& d = r.value();
  // Row 60 moved by 0.1 in every column: it finds row 60 at 27 * 0.01.
  std::vector<float> q(d.featureRow(60).begin(), d.featureRow(60).end());
  for (float& v : q) v += 0.1f;
  mmdb::SearchRequest request;
  request.query = q;
  request.current_frame = 100;
  auto pruned = mmdb::searchPruned(d, request);
  auto exhaustive = mmdb::searchExhaustive(d, request);
  ASSERT_TRUE(pruned.ok() && exhaustive.ok());
  EXPECT_EQ(pruned.value().frame, 60);
  EXPECT_EQ(exhaustive.value().frame, 60);
  EXPECT_NEAR(pruned.value().cost, 0.27f, 1e-5f);

  // A game frame: controller -> query -> search -> pose.
  mmdb::CharacterState state;
  mmdb::StickInput stick;
  stick.desired_velocity = {0.f, 0.f, 1.f};
  mmdb::ControllerSettings settings;
  mmdb::updateCharacter(state, stick, settings, 0.1f);
  float trajectory[mmdb::kTrajectoryFloats];
  mmdb::predictTrajectory(state, stick, settings, trajectory);
  ASSERT_TRUE(mmdb::buildQuery(d, 60, trajectory, mmdb::Span<float>(q)).ok());
  request.current_frame = 60;
  auto found = mmdb::searchPruned(d, request);
  ASSERT_TRUE(found.ok());
  auto where = mmdb::clipTimeOfFrame(d, uint32_t(found.value().frame));
  ASSERT_TRUE(where.ok());
  std::vector<glm::quat> rotations(d.jointCount());
  std::vector<glm::vec3> translations(d.jointCount());
  mmdb::SamplePoseJob sample;
  sample.database = &d;
  sample.clip = where.value().clip;
  sample.time = where.value().time;
  sample.rotations = rotations;
  sample.translations = translations;
  ASSERT_TRUE(sample.Run().ok());
  std::vector<glm::quat> model_q(d.jointCount());
  std::vector<glm::vec3> model_x(d.jointCount());
  mmdb::ForwardKinematicsJob fk;
  fk.parents = d.parents();
  fk.local_rotations = rotations;
  fk.local_translations = translations;
  fk.model_rotations = model_q;
  fk.model_translations = model_x;
  ASSERT_TRUE(fk.Run().ok());
  EXPECT_NEAR(model_x[0].y, translations[0].y, 1e-6f);
}

}  // namespace
