// BVH importer: known values for every accepted form, exact messages for every bad input, and the
// real corpus when ../shared/data is present.
#include "core/errors.h"
#include "import/importer.h"

#include <assimp/Importer.hpp>
#include <assimp/scene.h>
#include <gtest/gtest.h>

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const float kHalfSqrt2 = std::sqrt(0.5f);

void expectQuat(const glm::quat& actual, float w, float x, float y, float z) {
  EXPECT_NEAR(actual.w, w, 1e-6f);
  EXPECT_NEAR(actual.x, x, 1e-6f);
  EXPECT_NEAR(actual.y, y, 1e-6f);
  EXPECT_NEAR(actual.z, z, 1e-6f);
}

void expectVec(const glm::vec3& actual, float x, float y, float z) {
  EXPECT_FLOAT_EQ(actual.x, x);
  EXPECT_FLOAT_EQ(actual.y, y);
  EXPECT_FLOAT_EQ(actual.z, z);
}

std::string testData(const std::string& name) { return std::string(MMDB_TEST_DATA) + "/bvh/" + name; }

// A one-joint file whose single frame line is `frame` under the given CHANNELS line.
std::string oneJoint(const std::string& channels, const std::string& frame) {
  return "HIERARCHY\nROOT Hips\n{\n  OFFSET 1 2 3\n  CHANNELS " + channels +
         "\n}\nMOTION\nFrames: 1\nFrame Time: 0.5\n" + frame + "\n";
}

TEST(BvhImport, TwoJointFileFromDisk) {
  const mm::RawClip clip = mm::importBvhFile(testData("two_joints.bvh"));
  EXPECT_EQ(clip.name, "two_joints");
  EXPECT_EQ(clip.source_path, testData("two_joints.bvh"));
  EXPECT_EQ(clip.take, "");
  EXPECT_EQ(clip.declared_unit_scale, 0.0);
  EXPECT_EQ(clip.frame_rate, 30.0);  // 1 / 0.0333333, snapped to the whole rate
  ASSERT_EQ(clip.frame_count, 3);

  const mm::Skeleton& s = clip.skeleton;
  ASSERT_EQ(s.jointCount(), 2);  // the End Site is not a joint
  EXPECT_EQ(s.names, (std::vector<std::string>{"Hips", "Spine"}));
  EXPECT_EQ(s.parents, (std::vector<int>{-1, 0}));
  expectVec(s.offsets[0], 0, 90, 0);
  expectVec(s.offsets[1], 0, 10, 0);
  expectQuat(s.bind_rotations[0], 1, 0, 0, 0);
  expectQuat(s.bind_rotations[1], 1, 0, 0, 0);
  ASSERT_EQ(clip.rotations.size(), 6u);
  ASSERT_EQ(clip.translations.size(), 6u);

  // Frame 0: identity; positions from the channels (root), from OFFSET (Spine).
  expectQuat(clip.rotation(0, 0), 1, 0, 0, 0);
  expectQuat(clip.rotation(0, 1), 1, 0, 0, 0);
  expectVec(clip.translation(0, 0), 1, 2, 3);
  expectVec(clip.translation(0, 1), 0, 10, 0);
  // Frame 1: 90 degrees about Z (root), about X (Spine).
  expectQuat(clip.rotation(1, 0), kHalfSqrt2, 0, 0, kHalfSqrt2);
  expectQuat(clip.rotation(1, 1), kHalfSqrt2, kHalfSqrt2, 0, 0);
  expectVec(clip.translation(1, 0), 4, 5, 6);
  // Frame 2: +90 about Y (root), -90 about Y (Spine); exponent notation in a position.
  expectQuat(clip.rotation(2, 0), kHalfSqrt2, 0, kHalfSqrt2, 0);
  expectQuat(clip.rotation(2, 1), kHalfSqrt2, 0, -kHalfSqrt2, 0);
  expectVec(clip.translation(2, 0), -7.5f, 8.25f, 1e-5f);
  expectVec(clip.translation(2, 1), 0, 10, 0);
}

TEST(BvhImport, CrlfTabsLowercaseKeywordsAndExponents) {
  const mm::RawClip clip = mm::importBvhFile(testData("crlf_tabs.bvh"));
  EXPECT_EQ(clip.name, "crlf_tabs");
  EXPECT_EQ(clip.frame_rate, 120.0);  // 1 / 0.008333 is 120.005: within the printed precision
  ASSERT_EQ(clip.frame_count, 2);
  ASSERT_EQ(clip.skeleton.jointCount(), 2);
  EXPECT_EQ(clip.skeleton.names[1], "Left Leg");  // names may hold spaces
  // The root has position channels only: identity rotation.
  expectQuat(clip.rotation(0, 0), 1, 0, 0, 0);
  expectVec(clip.translation(0, 0), 15, -25, 3);  // 1.5E+01 -2.5e+01 +3
  expectQuat(clip.rotation(0, 1), kHalfSqrt2, kHalfSqrt2, 0, 0);
  expectVec(clip.translation(0, 1), 1, 0, 0);
  const float half = glm::radians(-25.0f) / 2;
  expectQuat(clip.rotation(1, 1), std::cos(half), 0, std::sin(half), 0);
}

TEST(BvhImport, ChannelOrderDecidesTheProduct) {
  // Z then X: R = Rz(90) * Rx(90).
  const mm::RawClip zx = mm::parseBvh(
      oneJoint("3 Zrotation Xrotation Yrotation", "90 90 0"), "zxy.bvh");
  expectQuat(zx.rotation(0, 0), 0.5f, 0.5f, 0.5f, 0.5f);
  // X then Z with the same angles: R = Rx(90) * Rz(90).
  const mm::RawClip xz = mm::parseBvh(
      oneJoint("3 Xrotation Yrotation Zrotation", "90 0 90"), "xyz.bvh");
  expectQuat(xz.rotation(0, 0), 0.5f, 0.5f, -0.5f, 0.5f);
}

TEST(BvhImport, GeneralAnglesMatchAxisAngleProduct) {
  const mm::RawClip clip = mm::parseBvh(
      oneJoint("3 Yrotation Zrotation Xrotation", "-33.5 71.25 160"), "yzx.bvh");
  const glm::quat expected = glm::angleAxis(glm::radians(-33.5f), glm::vec3(0, 1, 0)) *
                             glm::angleAxis(glm::radians(71.25f), glm::vec3(0, 0, 1)) *
                             glm::angleAxis(glm::radians(160.0f), glm::vec3(1, 0, 0));
  expectQuat(clip.rotation(0, 0), expected.w, expected.x, expected.y, expected.z);
}

TEST(BvhImport, AnySubsetOfChannels) {
  // One position axis and one rotation axis; the other axes come from OFFSET 1 2 3.
  const mm::RawClip clip = mm::parseBvh(oneJoint("2 Yposition Xrotation", "7 90"), "subset.bvh");
  expectVec(clip.translation(0, 0), 1, 7, 3);
  expectQuat(clip.rotation(0, 0), kHalfSqrt2, kHalfSqrt2, 0, 0);
  // Rotation first, positions after, in any order.
  const mm::RawClip mixed = mm::parseBvh(
      oneJoint("6 Zrotation Zposition Xposition Yrotation Yposition Xrotation", "90 3 1 0 2 0"),
      "mixed.bvh");
  expectVec(mixed.translation(0, 0), 1, 2, 3);
  expectQuat(mixed.rotation(0, 0), kHalfSqrt2, 0, 0, kHalfSqrt2);
}

TEST(BvhImport, JointsWithoutChannelsKeepTheirOffset) {
  const std::string text =
      "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n"
      "JOINT B\n{\nOFFSET 4 5 6\nCHANNELS 0\n}\n}\n"
      "MOTION\nFrames: 1\nFrame Time: 0.1\n90\n";
  const mm::RawClip clip = mm::parseBvh(text, "fixed.bvh");
  ASSERT_EQ(clip.skeleton.jointCount(), 2);
  expectVec(clip.translation(0, 1), 4, 5, 6);
  expectQuat(clip.rotation(0, 1), 1, 0, 0, 0);
  EXPECT_DOUBLE_EQ(clip.frame_rate, 10.0);
}

TEST(BvhImport, TreeParentsPrecedeChildren) {
  const std::string text =
      "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\nCHANNELS 1 Yrotation\n"
      "JOINT A\n{\nOFFSET 1 0 0\nCHANNELS 1 Yrotation\n"
      "  JOINT A1\n{\nOFFSET 1 0 0\nCHANNELS 1 Yrotation\nEnd Site\n{\nOFFSET 1 0 0\n}\n}\n}\n"
      "JOINT B\n{\nOFFSET -1 0 0\nCHANNELS 1 Yrotation\nEnd Site\n{\nOFFSET -1 0 0\n}\n}\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.25\n0 0 0 0\n10 20 30 40\n";
  const mm::RawClip clip = mm::parseBvh(text, "/some/dir/tree.bvh");
  EXPECT_EQ(clip.name, "tree");
  EXPECT_EQ(clip.skeleton.names, (std::vector<std::string>{"R", "A", "A1", "B"}));
  EXPECT_EQ(clip.skeleton.parents, (std::vector<int>{-1, 0, 1, 0}));
  const float half = glm::radians(40.0f) / 2;
  expectQuat(clip.rotation(1, 3), std::cos(half), 0, std::sin(half), 0);
}

TEST(BvhImport, BracesOnTheNameLineBlankLinesAndBom) {
  const std::string text =
      "\xEF\xBB\xBFHIERARCHY\nROOT Hips {\n  OFFSET 0 0 0\n  CHANNELS 1 Zrotation\n"
      "  End Site { OFFSET 0 1 0 }\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n\n90\n\n  \n-90\n\n";
  const mm::RawClip clip = mm::parseBvh(text, "braces.bvh");
  EXPECT_EQ(clip.skeleton.names[0], "Hips");
  ASSERT_EQ(clip.frame_count, 2);
  expectQuat(clip.rotation(1, 0), kHalfSqrt2, 0, 0, -kHalfSqrt2);
}

TEST(BvhImport, LastFrameWithoutNewline) {
  const mm::RawClip clip = mm::parseBvh(
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.5\n1\n2",
      "nonl.bvh");
  EXPECT_EQ(clip.frame_count, 2);
}

TEST(BvhImport, MoreFramesThanDeclaredReadsThemAll) {
  const mm::RawClip clip = mm::parseBvh(
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.5\n1\n2\n3\n4\n",
      "more.bvh");
  EXPECT_EQ(clip.frame_count, 4);
  EXPECT_EQ(clip.rotations.size(), 4u);
}

TEST(BvhImport, OneFrameFewerThanDeclaredIsAccepted) {
  const mm::RawClip clip = mm::parseBvh(
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
      "MOTION\nFrames: 4\nFrame Time: 0.5\n1\n2\n3\n",
      "offbyone.bvh");
  EXPECT_EQ(clip.frame_count, 3);
}

// ---------------------------------------------------------------------------------------------
// Real files, when the shared corpus is present.

fs::path sharedData() { return fs::path(MMDB_SHARED_DATA); }

std::vector<fs::path> bvhFilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".bvh") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(BvhImportCorpus, BandaiAllFiles) {
  const fs::path dir = sharedData() / "bandai-1";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no shared corpus at " << dir << "; skipping";
  const auto files = bvhFilesIn(dir);
  ASSERT_EQ(files.size(), 105u);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const mm::RawClip clip = mm::importBvhFile(file.string());
    EXPECT_EQ(clip.frame_rate, 30.0);
    EXPECT_EQ(clip.skeleton.names[0], "joint_Root");
    EXPECT_EQ(clip.skeleton.names[1], "Hips");
    EXPECT_EQ(clip.skeleton.jointCount(), 22);
    EXPECT_GT(clip.frame_count, 10);
    EXPECT_GE(clip.skeleton.find("Foot_L"), 0);
    EXPECT_GE(clip.skeleton.find("Toes_R"), 0);
    EXPECT_EQ(clip.rotations.size(), static_cast<size_t>(clip.frame_count) * 22);
  }
}

TEST(BvhImportCorpus, CmuSubject131) {
  const fs::path dir = sharedData() / "cmu-bvh";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no shared corpus at " << dir << "; skipping";
  for (const fs::path& file : bvhFilesIn(dir)) {
    SCOPED_TRACE(file.string());
    const mm::RawClip clip = mm::importBvhFile(file.string());
    EXPECT_EQ(clip.frame_rate, 120.0);
    EXPECT_EQ(clip.skeleton.jointCount(), 31);
    EXPECT_EQ(clip.skeleton.names[0], "Hips");
    EXPECT_GE(clip.skeleton.find("LeftAnkle"), 0);
    EXPECT_GT(clip.frame_count, 900);
  }
  // 131_01 declares and holds 994 frames; the first values of its first line are the root's.
  const mm::RawClip clip = mm::importBvhFile((dir / "131_01.bvh").string());
  EXPECT_EQ(clip.frame_count, 994);
  expectVec(clip.translation(0, 0), 5.23f, 16.9002f, -33.8986f);
}

TEST(BvhImportCorpus, AgreesWithAssimp) {
  const fs::path file = sharedData() / "bandai-1" / "dataset-1_walk_active_001.bvh";
  if (!fs::exists(file)) GTEST_SKIP() << "no shared corpus file " << file << "; skipping";
  const mm::RawClip clip = mm::importBvhFile(file.string());
  Assimp::Importer importer;
  const aiScene* scene = importer.ReadFile(file.string(), 0);
  ASSERT_NE(scene, nullptr) << importer.GetErrorString();
  ASSERT_EQ(scene->mNumAnimations, 1u);
  const aiAnimation* anim = scene->mAnimations[0];
  EXPECT_EQ(static_cast<int>(anim->mNumChannels), clip.skeleton.jointCount());
  ASSERT_GT(anim->mNumChannels, 0u);
  EXPECT_EQ(static_cast<int>(anim->mChannels[0]->mNumRotationKeys), clip.frame_count);
  EXPECT_NEAR(anim->mTicksPerSecond, clip.frame_rate, 1e-3);
  // Same rotation for the hips on a middle frame (Assimp keys are w, x, y, z; sign may differ).
  const int frame = clip.frame_count / 2;
  for (unsigned c = 0; c < anim->mNumChannels; ++c) {
    const aiNodeAnim* channel = anim->mChannels[c];
    const int joint = clip.skeleton.find(channel->mNodeName.C_Str());
    ASSERT_GE(joint, 0) << channel->mNodeName.C_Str();
    const aiQuaternion& a = channel->mRotationKeys[frame].mValue;
    const glm::quat& q = clip.rotation(frame, joint);
    const float dot = a.w * q.w + a.x * q.x + a.y * q.y + a.z * q.z;
    EXPECT_NEAR(std::fabs(dot), 1.0f, 1e-4f) << channel->mNodeName.C_Str();
  }
}

}  // namespace
