// Mirroring: joint maps for every pattern family, the reflection of world transforms on a
// skeleton with non-identity bind rotations, mirroring twice, a cooked database whose mirrored
// features are the reflection of the original's, and the tags of a mirrored copy.
#include "cook/cook_database.h"
#include "cook/mirror.h"
#include "core/errors.h"
#include "core/mirror_tags.h"

#include <gtest/gtest.h>

#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string kShared = MMDB_SHARED_DATA;

mmdb::cook::Skeleton chainSkeleton(const std::vector<std::string>& names) {
  mmdb::cook::Skeleton s;
  s.names = names;
  for (size_t j = 0; j < names.size(); ++j) {
    s.parents.push_back(j == 0 ? -1 : 0);
    s.offsets.emplace_back(0, 1, 0);
    s.bind_rotations.emplace_back(1, 0, 0, 0);
  }
  return s;
}

std::vector<std::string> mappedNames(const mmdb::cook::Skeleton& s,
                                     const mmdb::cook::MirrorSettings& settings = {}) {
  const std::vector<int> map = mmdb::cook::mirrorJointMap(s, settings);
  std::vector<std::string> out;
  for (int k : map) out.push_back(s.names[k]);
  return out;
}

TEST(MirrorJointMap, LeftRightWords) {
  const auto s =
      chainSkeleton({"Hips", "LeftUpLeg", "RightUpLeg", "Spine", "RightFoot", "LeftFoot"});
  EXPECT_EQ(mappedNames(s), (std::vector<std::string>{"Hips", "RightUpLeg", "LeftUpLeg", "Spine",
                                                      "LeftFoot", "RightFoot"}));
}

TEST(MirrorJointMap, UnderscoreSuffixesBothCases) {
  const auto s = chainSkeleton({"joint_Root", "Foot_L", "Foot_R", "toe_l", "toe_r", "Chest"});
  EXPECT_EQ(mappedNames(s), (std::vector<std::string>{"joint_Root", "Foot_R", "Foot_L", "toe_r",
                                                      "toe_l", "Chest"}));
}

TEST(MirrorJointMap, SingleLetterPrefixesOnlyWhenTheCounterpartExists) {
  // CMU: LHipJoint/RHipJoint, lhand/rhand; LowerBack and lowerneck have no "R" twin.
  const auto s =
      chainSkeleton({"Hips", "LHipJoint", "RHipJoint", "LowerBack", "lhand", "rhand", "lowerneck"});
  EXPECT_EQ(mappedNames(s), (std::vector<std::string>{"Hips", "RHipJoint", "LHipJoint", "LowerBack",
                                                      "rhand", "lhand", "lowerneck"}));
}

TEST(MirrorJointMap, NamespacesAreKept) {
  const auto s = chainSkeleton({"mixamorig:Hips", "mixamorig:LeftFoot", "mixamorig:RightFoot"});
  EXPECT_EQ(mappedNames(s), (std::vector<std::string>{"mixamorig:Hips", "mixamorig:RightFoot",
                                                      "mixamorig:LeftFoot"}));
}

TEST(MirrorJointMap, PresetPairsCatchWhatPatternsMiss) {
  mmdb::cook::MirrorSettings none;
  none.patterns.clear();
  const auto s = chainSkeleton({"Hips", "LHipJoint", "RHipJoint", "Other"});
  // The CMU presets list LHipJoint/RHipJoint explicitly.
  EXPECT_EQ(mappedNames(s, none),
            (std::vector<std::string>{"Hips", "RHipJoint", "LHipJoint", "Other"}));
}

TEST(MirrorJointMap, FirstPatternWinsAndConflictsAreErrors) {
  // Both patterns pair these names; the order of the patterns decides which pairing is used.
  const auto s = chainSkeleton({"LeftArm_L", "RightArm_L", "LeftArm_R", "RightArm_R"});
  mmdb::cook::MirrorSettings words_first;
  words_first.patterns = {{"Left*", "Right*"}, {"*_L", "*_R"}};
  EXPECT_EQ(mappedNames(s, words_first),
            (std::vector<std::string>{"RightArm_L", "LeftArm_L", "RightArm_R", "LeftArm_R"}));
  mmdb::cook::MirrorSettings suffixes_first;
  suffixes_first.patterns = {{"*_L", "*_R"}, {"Left*", "Right*"}};
  EXPECT_EQ(mappedNames(s, suffixes_first),
            (std::vector<std::string>{"LeftArm_R", "RightArm_R", "LeftArm_L", "RightArm_L"}));
  // RightArm_L finds LeftArm_L by the second pattern, but LeftArm_L pairs with LeftArm_R first.
  const auto bad = chainSkeleton({"Hips", "LeftArm_L", "LeftArm_R", "RightArm_L"});
  try {
    mmdb::cook::mirrorJointMap(bad, suffixes_first);
    ADD_FAILURE() << "no InputError";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "'RightArm_L' pairs with 'LeftArm_L', but 'LeftArm_L' pairs with 'LeftArm_R'"),
              std::string::npos)
        << e.what();
  }
  mmdb::cook::MirrorSettings no_star;
  no_star.patterns = {{"Left", "Right*"}};
  EXPECT_THROW(mmdb::cook::mirrorJointMap(s, no_star), mmdb::cook::InputError);
}

// --- Reflection ---------------------------------------------------------------------------------

struct World {
  std::vector<glm::dquat> r;
  std::vector<glm::dvec3> p;
};

World worldOf(const mmdb::cook::Skeleton& s, const glm::quat* r, const glm::vec3* t) {
  World w;
  for (size_t j = 0; j < s.names.size(); ++j) {
    const int p = s.parents[j];
    const glm::dquat lr(r[j]);
    const glm::dvec3 lt(t[j]);
    w.r.push_back(p < 0 ? lr : w.r[p] * lr);
    w.p.push_back(p < 0 ? lt : w.p[p] + w.r[p] * lt);
  }
  return w;
}

glm::quat randomRotation(std::mt19937& rng, float max_angle) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  glm::vec3 axis(u(rng), u(rng), u(rng));
  if (glm::length(axis) < 1e-3f) axis = glm::vec3(0, 1, 0);
  return glm::angleAxis(max_angle * u(rng), glm::normalize(axis));
}

// Hips -> Spine -> {LeftArm -> LeftHand, RightArm -> RightHand}, Hips -> {LeftLeg, RightLeg},
// every bind rotation random, the bind offsets deliberately not symmetric.
mmdb::cook::RawClip syntheticClip(int frames) {
  std::mt19937 rng(7);
  mmdb::cook::RawClip c;
  mmdb::cook::Skeleton& s = c.skeleton;
  s.names = {"Hips",     "Spine",     "LeftArm", "LeftHand",
             "RightArm", "RightHand", "LeftLeg", "RightLeg"};
  s.parents = {-1, 0, 1, 2, 1, 4, 0, 0};
  s.offsets = {{0.1f, 0.9f, 0.05f},   {0, 0.3f, 0},  {0.2f, 0.1f, 0},   {0.3f, 0, 0.01f},
               {-0.21f, 0.1f, 0.02f}, {-0.3f, 0, 0}, {0.1f, -0.05f, 0}, {-0.1f, -0.04f, 0.01f}};
  for (size_t j = 0; j < s.names.size(); ++j) s.bind_rotations.push_back(randomRotation(rng, 2.0f));
  c.frame_rate = 30;
  c.frame_count = frames;
  for (int f = 0; f < frames; ++f)
    for (size_t j = 0; j < s.names.size(); ++j) {
      c.rotations.push_back(glm::normalize(s.bind_rotations[j] * randomRotation(rng, 1.0f)));
      c.translations.push_back(s.offsets[j] +
                               (j == 0 ? glm::vec3(0.3f * f, 0.01f * f, -0.2f * f) : glm::vec3(0)));
    }
  return c;
}

TEST(MirrorClip, RootYawAndTranslationReflectWithIdentityBind) {
  mmdb::cook::RawClip c;
  c.skeleton = chainSkeleton({"Hips"});
  c.frame_count = 1;
  c.rotations = {glm::angleAxis(0.5f, glm::vec3(0, 1, 0))};
  c.translations = {{1, 2, 3}};
  const mmdb::cook::RawClip m = mmdb::cook::mirrorClip(c, {});
  const glm::quat expected = glm::angleAxis(-0.5f, glm::vec3(0, 1, 0));
  EXPECT_NEAR(std::abs(glm::dot(m.rotations[0], expected)), 1.0f, 1e-6f);
  EXPECT_NEAR(m.translations[0].x, -1, 1e-6);
  EXPECT_NEAR(m.translations[0].y, 2, 1e-6);
  EXPECT_NEAR(m.translations[0].z, 3, 1e-6);
}

TEST(MirrorClip, WorldPositionsAreTheSwappedReflection) {
  const mmdb::cook::RawClip c = syntheticClip(6);
  const mmdb::cook::RawClip m = mmdb::cook::mirrorClip(c, {});
  const std::vector<int> map = mmdb::cook::mirrorJointMap(c.skeleton, {});
  EXPECT_EQ(map, (std::vector<int>{0, 1, 4, 5, 2, 3, 7, 6}));
  EXPECT_EQ(m.skeleton.names, c.skeleton.names);
  const size_t n = c.skeleton.names.size();
  const World bind =
      worldOf(c.skeleton, c.skeleton.bind_rotations.data(), c.skeleton.offsets.data());
  for (int f = 0; f < c.frame_count; ++f) {
    const World a = worldOf(c.skeleton, &c.rotations[f * n], &c.translations[f * n]);
    const World b = worldOf(m.skeleton, &m.rotations[f * n], &m.translations[f * n]);
    for (size_t j = 0; j < n; ++j) {
      const glm::dvec3 expected(-a.p[map[j]].x, a.p[map[j]].y, a.p[map[j]].z);
      EXPECT_LT(glm::length(b.p[j] - expected), 1e-5)
          << "frame " << f << " joint " << c.skeleton.names[j];
      // What a skinned mesh sees: the deformation R * B^-1 is the reflected counterpart's.
      const glm::dquat da = a.r[map[j]] * glm::conjugate(bind.r[map[j]]);
      const glm::dquat db = b.r[j] * glm::conjugate(bind.r[j]);
      const glm::dquat reflected(da.w, da.x, -da.y, -da.z);
      EXPECT_NEAR(std::abs(glm::dot(db, reflected)), 1.0, 1e-5) << "frame " << f << " joint " << j;
    }
  }
}

// A rig like Bandai's BVH: no bind rotations, bones along their joint's local X, the standing
// pose in the motion (the hips turned a quarter about Z). Its rest pose is not symmetric across
// X = 0, so reflected deformations alone give mirrored frames half a turn from the original's;
// the fitted frames keep the original's convention, the bones where the frames say, and the
// positions exactly reflected.
TEST(MirrorClip, ARigWithoutASymmetricRestKeepsItsFrameConvention) {
  mmdb::cook::RawClip c;
  mmdb::cook::Skeleton& s = c.skeleton;
  s.names = {"Root", "Hips", "Spine", "UpLeg_L", "Knee_L", "UpLeg_R", "Knee_R"};
  s.parents = {-1, 0, 1, 1, 3, 1, 5};
  s.offsets = {{0, 0, 0},        {0, 0.9f, 0}, {0.2f, 0, 0},     {0, -0.1f, 0},
               {0.4f, 0, 0.01f}, {0, 0.1f, 0}, {-0.4f, 0, 0.01f}};
  s.bind_rotations.assign(s.names.size(), glm::quat(1, 0, 0, 0));
  c.frame_rate = 30;
  c.frame_count = 20;
  const glm::quat stand = glm::angleAxis(1.5f, glm::vec3(0, 0, 1));
  for (int f = 0; f < c.frame_count; ++f) {
    const float swing = 0.4f * std::sin(0.6f * f);
    const glm::quat hips = stand;  // walking along +Z: its mirror walks there too
    // The left thigh's frame is turned half round (its bone, +X, points down), the right's not
    // (its bone is -X), as Bandai's legs are.
    const glm::quat legs[2] = {glm::angleAxis(3.14159265f + swing, glm::vec3(0, 0, 1)),
                               glm::angleAxis(-swing, glm::vec3(0, 0, 1))};
    const glm::quat knee = glm::angleAxis(0.3f + 0.2f * swing, glm::vec3(0, 1, 0));
    const glm::quat frame[] = {
        glm::quat(1, 0, 0, 0), hips, glm::quat(1, 0, 0, 0), legs[0], knee, legs[1],
        glm::conjugate(knee)};
    for (size_t j = 0; j < s.names.size(); ++j) {
      c.rotations.push_back(frame[j]);
      c.translations.push_back(s.offsets[j] + (j == 1 ? glm::vec3(0, 0, 0.05f * f) : glm::vec3(0)));
    }
  }
  const mmdb::cook::RawClip m = mmdb::cook::mirrorClip(c, {});
  const std::vector<int> map = mmdb::cook::mirrorJointMap(s, {});
  const size_t n = s.names.size();
  for (int f = 0; f < c.frame_count; ++f) {
    const World a = worldOf(s, &c.rotations[f * n], &c.translations[f * n]);
    const World b = worldOf(s, &m.rotations[f * n], &m.translations[f * n]);
    for (size_t j = 0; j < n; ++j) {
      const glm::dvec3 expected(-a.p[map[j]].x, a.p[map[j]].y, a.p[map[j]].z);
      EXPECT_LT(glm::length(b.p[j] - expected), 1e-5) << "frame " << f << " joint " << j;
      if (j != 1) {  // the bones keep the skeleton's offsets
        EXPECT_LT(glm::length(m.translations[f * n + j] - s.offsets[j]), 1e-4f)
            << "frame " << f << " joint " << s.names[j];
      }
    }
    // The hips and legs stay in the original's convention (the motion is symmetric: the
    // mirrored left leg does what the original left leg does), not half a turn from it.
    for (size_t j : {size_t(1), size_t(3), size_t(4)}) {
      const float angle =
          2.f * std::acos(std::min(1.f, std::abs(glm::dot(glm::normalize(m.rotations[f * n + j]),
                                                          c.rotations[f * n + j]))));
      EXPECT_LT(angle, 0.2f) << "frame " << f << " joint " << s.names[j];
    }
  }
}

TEST(MirrorClip, MirroringTwiceGivesTheOriginal) {
  const mmdb::cook::RawClip c = syntheticClip(5);
  const mmdb::cook::RawClip twice = mmdb::cook::mirrorClip(mmdb::cook::mirrorClip(c, {}), {});
  ASSERT_EQ(twice.rotations.size(), c.rotations.size());
  for (size_t i = 0; i < c.rotations.size(); ++i) {
    EXPECT_NEAR(std::abs(glm::dot(twice.rotations[i], c.rotations[i])), 1.0f, 1e-5f) << i;
    EXPECT_LT(glm::length(twice.translations[i] - c.translations[i]), 1e-5f) << i;
  }
}

// --- Through the cook ---------------------------------------------------------------------------

// A walking, swaying, turning biped in centimetres with Geno's joint names, 60 fps.
std::string writeWalkBvh(const fs::path& path, int frames) {
  std::ostringstream h;
  auto leg = [&](const char* side, float x) {
    h << "  JOINT " << side << "UpLeg\n  {\n   OFFSET " << x
      << " -5 0\n   CHANNELS 3 Zrotation Xrotation Yrotation\n"
      << "   JOINT " << side
      << "Leg\n   {\n    OFFSET 0 -42 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
      << "    JOINT " << side
      << "Foot\n    {\n     OFFSET 0 -40 0\n     CHANNELS 3 Zrotation Xrotation Yrotation\n"
      << "     JOINT " << side
      << "ToeBase\n     {\n      OFFSET 0 -6 12\n      CHANNELS 3 Zrotation Xrotation Yrotation\n"
      << "      End Site\n      {\n       OFFSET 0 0 5\n      }\n     }\n    }\n   }\n  }\n";
  };
  h << "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
       "Zrotation Xrotation Yrotation\n"
    << " JOINT Spine\n {\n  OFFSET 0 10 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
    << "  JOINT Spine1\n  {\n   OFFSET 0 10 0\n   CHANNELS 3 Zrotation Xrotation Yrotation\n"
    << "   JOINT Spine2\n   {\n    OFFSET 0 10 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n"
    << "    End Site\n    {\n     OFFSET 0 20 0\n    }\n   }\n  }\n }\n";
  leg("Left", 10);
  leg("Right", -10);
  h << "}\nMOTION\nFrames: " << frames << "\nFrame Time: " << 1.0 / 60.0 << "\n";
  const double pi = 3.14159265358979;
  for (int f = 0; f < frames; ++f) {
    const double t = f / 60.0;
    const double step = std::sin(2 * pi * 1.0 * t);
    const double yaw = 25 * std::sin(2 * pi * 0.2 * t + 0.4);
    h << 40 * std::sin(2 * pi * 0.15 * t) + 3 * std::sin(2 * pi * t) << ' '
      << 92 + 2 * std::sin(4 * pi * t) << ' ' << 130 * t << ' ' << 3 * std::sin(2 * pi * t) << ' '
      << 2 * std::cos(4 * pi * t) << ' ' << yaw;
    h << " 2 3 " << 4 * std::sin(2 * pi * 0.5 * t) << " 1 2 3 0 1 2";  // Spine, Spine1, Spine2
    for (int side = 0; side < 2; ++side) {
      const double s = side == 0 ? step : -step;
      h << ' ' << 2 + side << ' ' << 30 * s << ' ' << 5 * s;  // UpLeg
      h << ' ' << 0 << ' ' << 25 + 25 * std::sin(2 * pi * t + (side ? pi : 0) + 1) << ' '
        << 0;                                                     // Leg
      h << ' ' << 1 << ' ' << -10 * s << ' ' << 2;                // Foot
      h << ' ' << 0 << ' ' << 10 * std::max(0.0, s) << ' ' << 0;  // ToeBase
    }
    h << '\n';
  }
  std::ofstream(path) << h.str();
  return path.string();
}

void expectMirroredFeatures(const std::string& source, const std::string& what) {
  mmdb::cook::CookRequest request;
  mmdb::cook::ClipSpec spec;
  spec.source = source;
  spec.source_label = source;
  spec.mirror = true;
  request.clips.push_back(spec);
  request.jobs = 1;
  const mmdb::cook::CookedDatabase db = mmdb::cook::cookDatabase(request);
  ASSERT_EQ(db.clips.size(), 2u) << what;
  ASSERT_TRUE(db.clips[1].mirrored);
  EXPECT_EQ(db.clips[1].mirror_of, 0);
  ASSERT_EQ(db.clips[0].frame_count, db.clips[1].frame_count);
  ASSERT_EQ(db.feature_count, 27);
  const uint32_t n = db.clips[0].frame_count;
  const uint32_t stride = db.feature_stride;
  auto raw = [&](uint32_t frame, int column) {
    return db.features[frame * stride + column] * db.feature_scale[column] +
           db.feature_offset[column];
  };
  // Columns: left foot position 0-2, right 3-5, left foot velocity 6-8, right 9-11, hip velocity
  // 12-14, trajectory positions (x, z) 15-20, trajectory directions (x, z) 21-26.
  std::vector<int> counterpart(27), sign(27, 1);
  for (int c = 0; c < 27; ++c) counterpart[c] = c;
  for (int c = 0; c < 3; ++c) {
    counterpart[c] = c + 3, counterpart[c + 3] = c;
    counterpart[c + 6] = c + 9, counterpart[c + 9] = c + 6;
  }
  for (int c : {0, 3, 6, 9, 12, 15, 17, 19, 21, 23, 25}) sign[c] = -1;
  float worst = 0;
  for (uint32_t f = 0; f < n; ++f)
    for (int c = 0; c < 27; ++c) {
      const float expected = sign[c] * raw(f, counterpart[c]);
      const float actual = raw(n + f, c);
      worst = std::max(worst, std::abs(actual - expected));
      ASSERT_NEAR(actual, expected, 1e-4f) << what << ": frame " << f << " column " << c;
    }
  // Contacts swap left and right.
  for (uint32_t f = 0; f < n; ++f) {
    const uint32_t a = db.contacts[f], b = db.contacts[n + f];
    EXPECT_EQ(b, ((a & 1u) << 1) | ((a >> 1) & 1u)) << what << ": frame " << f;
  }
  ::testing::Test::RecordProperty("worst_feature_error", std::to_string(worst));
}

TEST(MirrorCook, MirroredFeaturesAreTheReflectionOfTheOriginals) {
  const fs::path dir = fs::temp_directory_path() / "mmdb_mirror_cook";
  fs::create_directories(dir);
  const std::string bvh = writeWalkBvh(dir / "walk.bvh", 300);
  expectMirroredFeatures(bvh, "synthetic walk");
  fs::remove_all(dir);
}

TEST(MirrorCook, BandaiWalkMirrorsExactly) {
  const std::string path = kShared + "/bandai-1/dataset-1_walk_normal_001.bvh";
  if (!fs::exists(path)) GTEST_SKIP() << "no motion corpus at " << path;
  expectMirroredFeatures(path, "bandai walk");
}

TEST(MirrorCook, CmuFbxWalkMirrorsExactly) {
  const std::string path = kShared + "/cmu-fbx/07_01_cmu.fbx";
  if (!fs::exists(path)) GTEST_SKIP() << "no motion corpus at " << path;
  expectMirroredFeatures(path, "CMU FBX walk");
}

// A mirrored copy's tags: left and right words swap, as whole tags or as name parts.
std::string mirrored(const std::string& tag,
                     const mmdb::cook::TagPairs& pairs = mmdb::cook::MirrorSettings{}.tag_pairs) {
  return mmdb::cook::mirroredTag(tag, pairs);
}

TEST(MirrorTags, TheDefaultSwapsLeftAndRight) {
  EXPECT_EQ(mmdb::cook::MirrorSettings{}.tag_pairs, (mmdb::cook::TagPairs{{"left", "right"}}));
  EXPECT_EQ(mirrored("left"), "right");
  EXPECT_EQ(mirrored("right"), "left");
}

TEST(MirrorTags, NamePartsBetweenDashesUnderscoresAndDotsSwap) {
  EXPECT_EQ(mirrored("strafe-left"), "strafe-right");
  EXPECT_EQ(mirrored("strafe-right"), "strafe-left");
  EXPECT_EQ(mirrored("turn_left_90"), "turn_right_90");
  EXPECT_EQ(mirrored("turn_right_90"), "turn_left_90");
  EXPECT_EQ(mirrored("left.foot"), "right.foot");
  EXPECT_EQ(mirrored("foot.right"), "foot.left");
  EXPECT_EQ(mirrored("left-to-right"), "right-to-left");  // every part on its own
  EXPECT_EQ(mirrored("step.left_right-left"), "step.right_left-right");
  // Separators stay where they are, empty parts included.
  EXPECT_EQ(mirrored("-left"), "-right");
  EXPECT_EQ(mirrored("left."), "right.");
  EXPECT_EQ(mirrored("a__left..b"), "a__right..b");
}

TEST(MirrorTags, LowerCapitalizedAndUpperCaseKeepTheirCase) {
  EXPECT_EQ(mirrored("Left"), "Right");
  EXPECT_EQ(mirrored("LEFT"), "RIGHT");
  EXPECT_EQ(mirrored("Strafe-Right"), "Strafe-Left");
  EXPECT_EQ(mirrored("TURN_RIGHT_90"), "TURN_LEFT_90");
  EXPECT_EQ(mirrored("walk.Left.LEFT.left"), "walk.Right.RIGHT.right");
  // Another mix of cases is not the word.
  EXPECT_EQ(mirrored("lEFT"), "lEFT");
  EXPECT_EQ(mirrored("LeFt"), "LeFt");
  // The pair's own case does not matter: its words match in the three spellings.
  EXPECT_EQ(mirrored("strafe-left", {{"LEFT", "Right"}}), "strafe-right");
  EXPECT_EQ(mirrored("Strafe-RIGHT", {{"LEFT", "Right"}}), "Strafe-LEFT");
}

TEST(MirrorTags, NoSwapInsideOtherWords) {
  for (const char* tag : {"leftover", "outright", "lefty", "bright", "leftright", "left2", "aleft",
                          "locomotion", "mirrored", "turn", "LEFTOVER", "Rightward"})
    EXPECT_EQ(mirrored(tag), tag);
}

TEST(MirrorTags, PairsOfTheirOwnSwapBothWays) {
  const mmdb::cook::TagPairs pairs{{"cw", "ccw"}, {"L", "R"}, {"fwd", "back"}};
  EXPECT_EQ(mirrored("turn-cw", pairs), "turn-ccw");
  EXPECT_EQ(mirrored("turn-CCW", pairs), "turn-CW");
  EXPECT_EQ(mirrored("step_l", pairs), "step_r");
  EXPECT_EQ(mirrored("step_R", pairs), "step_L");
  EXPECT_EQ(mirrored("Fwd.cw", pairs), "Back.ccw");
  EXPECT_EQ(mirrored("strafe-left", pairs), "strafe-left");  // the default is replaced
  EXPECT_EQ(mirrored("lr", pairs), "lr");
}

TEST(MirrorTags, NoPairsSwapNothing) {
  for (const char* tag : {"left", "strafe-right", "turn_LEFT_90"})
    EXPECT_EQ(mirrored(tag, {}), tag);
}

TEST(MirrorTags, ListsKeepTheirOrderAndATagOnce) {
  const mmdb::cook::TagPairs pairs = mmdb::cook::MirrorSettings{}.tag_pairs;
  EXPECT_EQ(mmdb::cook::mirroredTags({"strafe-left", "locomotion", "strafe-right"}, pairs),
            (std::vector<std::string>{"strafe-right", "locomotion", "strafe-left"}));
  EXPECT_TRUE(mmdb::cook::mirroredTags({}, pairs).empty());
  // "Left" (Capitalized) and "LEFT" (upper case) both become "R": kept once.
  EXPECT_EQ(mmdb::cook::mirroredTags({"Left", "LEFT", "x"}, {{"left", "r"}}),
            (std::vector<std::string>{"R", "x"}));
}

TEST(MirrorTags, PairWordsAreLettersAndDigits) {
  for (const char* word : {"left", "L", "Right", "cw90", "90"})
    EXPECT_TRUE(mmdb::cook::isTagPairWord(word)) << word;
  for (const char* word : {"", "strafe-left", "left_", "a.b", "left right", "gauche!"})
    EXPECT_FALSE(mmdb::cook::isTagPairWord(word)) << word;
  EXPECT_TRUE(mmdb::cook::isTagPairWord(std::string(64, 'a')));
  EXPECT_FALSE(mmdb::cook::isTagPairWord(std::string(65, 'a')));
  EXPECT_TRUE(mmdb::cook::sameTagPairWord("Left", "lEFT"));
  EXPECT_FALSE(mmdb::cook::sameTagPairWord("left", "lefts"));
}

}  // namespace
