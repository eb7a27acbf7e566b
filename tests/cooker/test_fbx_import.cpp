// Assimp import (FBX and others): known answers on scenes built here and written as glTF, the
// Debian assimp test models, broken files, and the shared corpus (Geno, CMU FBX) when present.
#include "cache/clip_store.h"
#include "cook/cook_database.h"
#include "cook/skeleton_presets.h"
#include "core/errors.h"
#include "import/importer.h"

#include <assimp/Exporter.hpp>
#include <assimp/scene.h>
#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__) && __has_include(<sanitizer/lsan_interface.h>)
#include <sanitizer/lsan_interface.h>
#define MMDB_TEST_LSAN 1
#else
#define MMDB_TEST_LSAN 0
#endif

#include <glm/gtc/quaternion.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string kShared = MMDB_SHARED_DATA;
const std::string kAssimpModels = "/usr/share/assimp/models/FBX";

// A fresh folder under the system temp folder, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("mmdb_fbx_" + std::string(info->test_suite_name()) + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string expectInputError(const std::function<void()>& f) {
  try {
    f();
  } catch (const mmdb::cook::InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

std::vector<glm::vec3> worldPositions(const mmdb::cook::Skeleton& s, const glm::quat* r,
                                      const glm::vec3* t) {
  std::vector<glm::vec3> p(s.names.size());
  std::vector<glm::quat> wr(s.names.size());
  for (size_t j = 0; j < s.names.size(); ++j) {
    const int parent = s.parents[j];
    wr[j] = parent < 0 ? r[j] : wr[parent] * r[j];
    p[j] = parent < 0 ? t[j] : p[parent] + wr[parent] * t[j];
  }
  return p;
}

std::vector<glm::vec3> bindWorldPositions(const mmdb::cook::Skeleton& s) {
  return worldPositions(s, s.bind_rotations.data(), s.offsets.data());
}

// Angle of the rotation between a and b, accurate for small angles (unlike acos of a dot).
float angleBetween(const glm::quat& a, const glm::quat& b) {
  const glm::quat d = glm::conjugate(a) * b;
  return 2.0f * std::atan2(glm::length(glm::vec3(d.x, d.y, d.z)), std::abs(d.w));
}

// --- Scenes built here --------------------------------------------------------------------------

aiNode* addChild(aiNode* parent, const char* name, const aiVector3D& offset) {
  auto* node = new aiNode(name);
  node->mParent = parent;
  aiMatrix4x4::Translation(offset, node->mTransformation);
  parent->addChildren(1, &node);
  return node;
}

aiNodeAnim* makeChannel(const char* node, std::vector<aiVectorKey> positions,
                        std::vector<aiQuatKey> rotations) {
  auto* ch = new aiNodeAnim();
  ch->mNodeName = node;
  ch->mNumPositionKeys = static_cast<unsigned>(positions.size());
  ch->mPositionKeys = new aiVectorKey[positions.size()];
  std::copy(positions.begin(), positions.end(), ch->mPositionKeys);
  ch->mNumRotationKeys = static_cast<unsigned>(rotations.size());
  ch->mRotationKeys = new aiQuatKey[rotations.size()];
  std::copy(rotations.begin(), rotations.end(), ch->mRotationKeys);
  ch->mNumScalingKeys = 1;
  ch->mScalingKeys = new aiVectorKey[1]{{0.0, aiVector3D(1, 1, 1)}};
  return ch;
}

// RootNode -> Armature (static, scale `armature_scale`) -> Hips -> LeftUpLeg, RightUpLeg,
// Spine -> Head, plus an unanimated "Prop" beside Armature. Keys at 30 ticks per second: Hips
// moves +150 units along Z and turns 90 deg about Y over one second; LeftUpLeg turns about X with
// keys at other times than Hips'; RightUpLeg and Head have constant channels; Spine has none and
// is bent 30 deg about Z in its bind pose.
aiScene* makeWalkScene(float armature_scale) {
  auto* s = new aiScene();
  s->mRootNode = new aiNode("RootNode");
  aiNode* armature = addChild(s->mRootNode, "Armature", aiVector3D(0, 0, 0));
  aiMatrix4x4::Scaling(aiVector3D(armature_scale), armature->mTransformation);
  addChild(s->mRootNode, "Prop", aiVector3D(5, 0, 0));
  aiNode* hips = addChild(armature, "Hips", aiVector3D(0, 90, 0));
  addChild(hips, "LeftUpLeg", aiVector3D(10, 0, 0));
  addChild(hips, "RightUpLeg", aiVector3D(-10, 0, 0));
  aiNode* spine = addChild(hips, "Spine", aiVector3D(0, 10, 0));
  const float h = std::sqrt(0.5f);
  const float c30 = std::cos(glm::radians(15.0f)), s30 = std::sin(glm::radians(15.0f));
  spine->mTransformation =
      aiMatrix4x4(aiVector3D(1, 1, 1), aiQuaternion(c30, 0, 0, s30), aiVector3D(0, 10, 0));
  addChild(spine, "Head", aiVector3D(0, 50, 0));

  s->mNumAnimations = 1;
  s->mAnimations = new aiAnimation*[1];
  auto* a = new aiAnimation();
  s->mAnimations[0] = a;
  a->mName = "Walk";
  a->mTicksPerSecond = 30;
  a->mDuration = 30;
  a->mNumChannels = 4;
  a->mChannels = new aiNodeAnim*[4];
  a->mChannels[0] =
      makeChannel("Hips", {{0.0, aiVector3D(0, 90, 0)}, {30.0, aiVector3D(0, 90, 150)}},
                  {{0.0, aiQuaternion(1, 0, 0, 0)}, {30.0, aiQuaternion(h, 0, h, 0)}});
  a->mChannels[1] = makeChannel("LeftUpLeg", {{0.0, aiVector3D(10, 0, 0)}},
                                {{0.0, aiQuaternion(1, 0, 0, 0)},
                                 {10.0, aiQuaternion(h, h, 0, 0)},
                                 {30.0, aiQuaternion(1, 0, 0, 0)}});
  a->mChannels[2] =
      makeChannel("RightUpLeg", {{0.0, aiVector3D(-10, 0, 0)}}, {{0.0, aiQuaternion(1, 0, 0, 0)}});
  a->mChannels[3] =
      makeChannel("Head", {{0.0, aiVector3D(0, 50, 0)}}, {{0.0, aiQuaternion(1, 0, 0, 0)}});
  return s;
}

std::string writeGltf(const aiScene* scene, const std::string& path) {
  Assimp::Exporter exporter;
  EXPECT_EQ(exporter.Export(scene, "gltf2", path), AI_SUCCESS) << exporter.GetErrorString();
  return path;
}

TEST(AxisConversion, YUpIsIdentity) {
  EXPECT_EQ(mmdb::cook::axisConversionToYUp(1, 1, 2, 1, 0, 1), glm::dmat3(1.0));
}

TEST(AxisConversion, ZUpTurnsZIntoYAndMinusYIntoZ) {
  // 3ds Max: Z up, -Y front, X right.
  const glm::dmat3 m = mmdb::cook::axisConversionToYUp(2, 1, 1, -1, 0, 1);
  EXPECT_EQ(m * glm::dvec3(0, 0, 1), glm::dvec3(0, 1, 0));
  EXPECT_EQ(m * glm::dvec3(0, -1, 0), glm::dvec3(0, 0, 1));
  EXPECT_EQ(m * glm::dvec3(1, 0, 0), glm::dvec3(1, 0, 0));
  EXPECT_DOUBLE_EQ(glm::determinant(m), 1.0);
}

TEST(AxisConversion, LeftHandedFileIsAReflectionAndBadAxesAreIgnored) {
  EXPECT_DOUBLE_EQ(glm::determinant(mmdb::cook::axisConversionToYUp(1, 1, 2, -1, 0, 1)), -1.0);
  EXPECT_EQ(mmdb::cook::axisConversionToYUp(1, 1, 1, 1, 0, 1), glm::dmat3(1.0));
  EXPECT_EQ(mmdb::cook::axisConversionToYUp(3, 1, 2, 1, 0, 1), glm::dmat3(1.0));
}

TEST(AssimpImport, SamplesKeysAtTheSourceRateWithInterpolation) {
  TempDir dir;
  std::unique_ptr<aiScene> scene(makeWalkScene(0.01f));
  const std::string path = writeGltf(scene.get(), dir.file("walk.gltf"));
  const mmdb::cook::RawClip clip = mmdb::cook::importAssimpFile(path, "");

  // Static one-child Armature composed away; the unanimated Prop left out; Spine kept as the
  // parent of an animated joint.
  ASSERT_EQ(clip.skeleton.names,
            (std::vector<std::string>{"Hips", "LeftUpLeg", "RightUpLeg", "Spine", "Head"}));
  EXPECT_EQ(clip.skeleton.parents, (std::vector<int>{-1, 0, 0, 0, 3}));
  EXPECT_EQ(clip.take, "Walk");
  EXPECT_EQ(clip.name, "walk");
  // Two keys per channel at most: no spacing to read a rate from, so 30 fps over one second.
  EXPECT_DOUBLE_EQ(clip.frame_rate, 30.0);
  ASSERT_EQ(clip.frame_count, 31);
  EXPECT_NEAR(clip.declared_unit_scale, 0.01, 1e-9);  // glTF metres times the armature's 0.01
  ASSERT_EQ(clip.rotations.size(), 31u * 5);

  // Halfway: Hips at z = 75, turned 45 degrees about Y.
  const glm::vec3 mid = clip.translation(15, 0);
  EXPECT_NEAR(mid.x, 0, 1e-4);
  EXPECT_NEAR(mid.y, 90, 1e-4);
  EXPECT_NEAR(mid.z, 75, 1e-4);
  const glm::quat expected_mid = glm::angleAxis(glm::radians(45.0f), glm::vec3(0, 1, 0));
  EXPECT_LT(angleBetween(clip.rotation(15, 0), expected_mid), 1e-4f);
  const glm::vec3 end = clip.translation(30, 0);
  EXPECT_NEAR(end.z, 150, 1e-4);

  // LeftUpLeg's own key times: 90 deg about X at 1/3 s (frame 10), 45 deg at frame 5 and frame 20.
  EXPECT_LT(
      angleBetween(clip.rotation(10, 1), glm::angleAxis(glm::radians(90.0f), glm::vec3(1, 0, 0))),
      1e-4f);
  EXPECT_LT(
      angleBetween(clip.rotation(5, 1), glm::angleAxis(glm::radians(45.0f), glm::vec3(1, 0, 0))),
      1e-4f);
  EXPECT_LT(
      angleBetween(clip.rotation(20, 1), glm::angleAxis(glm::radians(45.0f), glm::vec3(1, 0, 0))),
      1e-4f);
  // Spine has no channel: it holds its bind transform.
  const glm::quat spine_bind = glm::angleAxis(glm::radians(30.0f), glm::vec3(0, 0, 1));
  EXPECT_LT(angleBetween(clip.skeleton.bind_rotations[3], spine_bind), 1e-5f);
  for (int f = 0; f < clip.frame_count; ++f) {
    EXPECT_NEAR(clip.translation(f, 3).y, 10, 1e-4);
    EXPECT_LT(angleBetween(clip.rotation(f, 3), spine_bind), 1e-5f);
  }
}

TEST(AssimpImport, ScaleAboveTheSkeletonBecomesTheUnit) {
  TempDir dir;
  std::unique_ptr<aiScene> scene(makeWalkScene(0.01f));  // an armature in centimetres
  const mmdb::cook::RawClip clip =
      mmdb::cook::importAssimpFile(writeGltf(scene.get(), dir.file("cm.gltf")), "");
  EXPECT_NEAR(clip.declared_unit_scale, 0.01, 1e-9);
  // Values stay in the armature's units.
  EXPECT_NEAR(clip.skeleton.offsets[0].y, 90, 1e-3);
  EXPECT_NEAR(clip.skeleton.offsets[1].x, 10, 1e-3);
  EXPECT_NEAR(clip.translation(30, 0).z, 150, 1e-3);
}

// A request whose roles fit makeWalkScene's skeleton (it matches no preset); no clips yet.
mmdb::cook::CookRequest walkSceneRequest() {
  mmdb::cook::CookRequest r;
  mmdb::cook::RoleSettings& roles = r.settings.roles;
  roles.hips = roles.facing = "Hips";
  roles.left_foot = roles.left_toe = "LeftUpLeg";
  roles.right_foot = roles.right_toe = "RightUpLeg";
  roles.root_position = "Spine";
  return r;
}

// A clip that declares no unit, after a first clip that declares one, in a database whose
// manifest and preset give none: it takes the first clip's unit (it used to get a scale of 0).
TEST(AssimpImport, AClipWithoutAUnitTakesTheFirstClipsDeclaredUnit) {
  TempDir dir;
  std::unique_ptr<aiScene> cm(makeWalkScene(0.01f));
  std::unique_ptr<aiScene> plain(makeWalkScene(1.0f));
  const std::string cm_file = writeGltf(cm.get(), dir.file("cm.gltf"));
  const std::string plain_file = writeGltf(plain.get(), dir.file("plain.gltf"));
  ASSERT_GT(mmdb::cook::importAssimpFile(cm_file, "").declared_unit_scale, 0);
  ASSERT_EQ(mmdb::cook::importAssimpFile(plain_file, "").declared_unit_scale, 0);
  mmdb::cook::CookRequest r = walkSceneRequest();
  for (const std::string& file : {cm_file, plain_file}) {
    mmdb::cook::ClipSpec c;
    c.source = file;
    r.clips.push_back(c);
  }
  mmdb::cook::CookReport report;
  const mmdb::cook::CookedDatabase db = mmdb::cook::cookDatabase(r, &report);
  EXPECT_NEAR(report.unit_scale, 0.01, 1e-9);
  EXPECT_EQ(report.unit_scale_origin, "file");
  ASSERT_EQ(db.clips.size(), 2u);
  ASSERT_EQ(db.clips[0].frame_count, db.clips[1].frame_count);
  const uint32_t n = db.clips[0].frame_count;
  EXPECT_GT(std::abs(db.root_motion[n - 1].position.z), 1.0f);  // 150 cm of travel
  for (uint32_t f = 0; f < n; ++f)
    EXPECT_NEAR(db.root_motion[n + f].position.z, db.root_motion[f].position.z, 1e-5) << f;
}

TEST(AssimpImport, ImplausibleDeclaredScaleIsDropped) {
  TempDir dir;
  std::unique_ptr<aiScene> scene(makeWalkScene(1.0f));
  // glTF is in metres, so this 60-unit skeleton would be 60 m tall: not a character.
  const mmdb::cook::RawClip clip =
      mmdb::cook::importAssimpFile(writeGltf(scene.get(), dir.file("huge.gltf")), "");
  EXPECT_EQ(clip.declared_unit_scale, 0.0);
  const mmdb::cook::SourceInfo info = mmdb::cook::inspectSourceFile(dir.file("huge.gltf"));
  bool noted = false;
  for (const auto& n : info.notes) noted = noted || n.find("ignoring it") != std::string::npos;
  EXPECT_TRUE(noted);
  // A warning of the clip, with its code and file: the cook counts it, and a cook that takes the
  // clip from the cache reports it again.
  ASSERT_EQ(clip.warnings.size(), 1u);
  EXPECT_EQ(clip.warnings[0].code, "unit-scale-ignored");
  EXPECT_EQ(clip.warnings[0].file, dir.file("huge.gltf"));
  mmdb::cook::CookRequest r = walkSceneRequest();
  r.settings.unit_scale = 0.01;
  mmdb::cook::ClipSpec c;
  c.source = dir.file("huge.gltf");
  r.clips.push_back(c);
  mmdb::cook::ClipCacheFolder cache(dir.file("cache"));
  for (int pass = 0; pass < 2; ++pass) {
    mmdb::cook::CookReport report;
    mmdb::cook::cookDatabase(r, &report, {}, &cache);
    EXPECT_EQ(report.store.hits, pass);
    int unit_warnings = 0;
    for (const auto& w : report.warnings) unit_warnings += w.code == "unit-scale-ignored";
    EXPECT_EQ(unit_warnings, 1) << pass;
  }
}

TEST(AssimpImport, PivotHelperNodesAreComposedIntoTheirJoint) {
  // What Assimp makes of an FBX joint with pivots when it keeps them: a chain of helper nodes
  // above the joint, some animated themselves.
  auto* s = new aiScene();
  std::unique_ptr<aiScene> owner(s);
  s->mRootNode = new aiNode("RootNode");
  aiNode* translation =
      addChild(s->mRootNode, "Hips_$AssimpFbx$_Translation", aiVector3D(0, 90, 0));
  aiNode* pre = addChild(translation, "Hips_$AssimpFbx$_PreRotation", aiVector3D(0, 0, 0));
  const float h = std::sqrt(0.5f);
  pre->mTransformation =
      aiMatrix4x4(aiVector3D(1, 1, 1), aiQuaternion(h, h, 0, 0), aiVector3D(0, 0, 0));
  aiNode* hips = addChild(pre, "Hips", aiVector3D(0, 0, 0));
  addChild(hips, "Spine", aiVector3D(0, 10, 0));
  s->mNumAnimations = 1;
  s->mAnimations = new aiAnimation*[1];
  auto* a = new aiAnimation();
  s->mAnimations[0] = a;
  a->mName = "Take";
  a->mTicksPerSecond = 30;
  a->mNumChannels = 3;
  a->mChannels = new aiNodeAnim*[3];
  a->mChannels[2] =
      makeChannel("Spine", {{0.0, aiVector3D(0, 10, 0)}}, {{0.0, aiQuaternion(1, 0, 0, 0)}});
  a->mChannels[0] = makeChannel("Hips_$AssimpFbx$_Translation",
                                {{0.0, aiVector3D(0, 90, 0)}, {30.0, aiVector3D(30, 90, 0)}},
                                {{0.0, aiQuaternion(1, 0, 0, 0)}});
  a->mChannels[1] =
      makeChannel("Hips", {{0.0, aiVector3D(0, 0, 0)}},
                  {{0.0, aiQuaternion(1, 0, 0, 0)}, {30.0, aiQuaternion(h, 0, 0, h)}});
  TempDir dir;
  const mmdb::cook::RawClip clip =
      mmdb::cook::importAssimpFile(writeGltf(s, dir.file("pivots.gltf")), "");
  ASSERT_EQ(clip.skeleton.names, (std::vector<std::string>{"Hips", "Spine"}));
  EXPECT_EQ(clip.skeleton.parents, (std::vector<int>{-1, 0}));
  // The translation helper's motion moves Hips; the pre-rotation composes with Hips' own.
  EXPECT_LT(glm::length(clip.translation(30, 0) - glm::vec3(30, 90, 0)), 1e-4f);
  const glm::quat pre_rotation = glm::angleAxis(glm::radians(90.0f), glm::vec3(1, 0, 0));
  EXPECT_LT(angleBetween(clip.rotation(0, 0), pre_rotation), 1e-5f);
  EXPECT_LT(angleBetween(clip.rotation(30, 0),
                         pre_rotation * glm::angleAxis(glm::radians(90.0f), glm::vec3(0, 0, 1))),
            1e-5f);
  EXPECT_LT(glm::length(clip.skeleton.offsets[1] - glm::vec3(0, 10, 0)), 1e-5f);
}

TEST(AssimpImport, EveryTakeOfAFileHasTheSameSkeleton) {
  std::unique_ptr<aiScene> scene(makeWalkScene(0.01f));
  // A second take that animates the hips only.
  auto** both = new aiAnimation* [2] { scene->mAnimations[0], new aiAnimation() };
  delete[] scene->mAnimations;
  scene->mAnimations = both;
  scene->mNumAnimations = 2;
  aiAnimation* idle = both[1];
  idle->mName = "Idle";
  idle->mTicksPerSecond = 30;
  idle->mDuration = 15;
  idle->mNumChannels = 1;
  idle->mChannels = new aiNodeAnim* [1] {
    makeChannel("Hips", {{0.0, aiVector3D(0, 90, 0)}, {15.0, aiVector3D(0, 91, 0)}},
                {{0.0, aiQuaternion(1, 0, 0, 0)}})
  };
  TempDir dir;
  const std::string path = writeGltf(scene.get(), dir.file("two_takes.gltf"));
  const mmdb::cook::RawClip walk = mmdb::cook::importAssimpFile(path, "Walk");
  const mmdb::cook::RawClip still = mmdb::cook::importAssimpFile(path, "Idle");
  EXPECT_EQ(still.take, "Idle");
  EXPECT_EQ(still.skeleton.names, walk.skeleton.names);
  EXPECT_EQ(still.skeleton.parents, walk.skeleton.parents);
  ASSERT_EQ(still.frame_count, 16);
  // LeftUpLeg is not animated by Idle: it holds its bind pose.
  const int leg = still.skeleton.find("LeftUpLeg");
  ASSERT_GE(leg, 0);
  for (int f = 0; f < still.frame_count; ++f)
    EXPECT_LT(angleBetween(still.rotation(f, leg), glm::quat(1, 0, 0, 0)), 1e-5f);
  EXPECT_NEAR(still.translation(15, 0).y, 91, 1e-4);
  const mmdb::cook::SourceInfo info = mmdb::cook::inspectSourceFile(path);
  ASSERT_EQ(info.takes.size(), 2u);
  EXPECT_EQ(info.takes[1].name, "Idle");
  EXPECT_EQ(info.takes[1].frame_count, 16);
}

TEST(AssimpImport, TakeByNameIndexOrSuffixAndUnknownTakeListsTakes) {
  TempDir dir;
  std::unique_ptr<aiScene> scene(makeWalkScene(1.0f));
  const std::string path = writeGltf(scene.get(), dir.file("walk.gltf"));
  EXPECT_EQ(mmdb::cook::importAssimpFile(path, "Walk").take, "Walk");
  EXPECT_EQ(mmdb::cook::importAssimpFile(path, "0").take, "Walk");
  const std::string msg = expectInputError([&] { mmdb::cook::importAssimpFile(path, "Run"); });
  EXPECT_NE(msg.find("walk.gltf"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no take 'Run'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("0: 'Walk'"), std::string::npos) << msg;
  EXPECT_NE(expectInputError([&] { mmdb::cook::importAssimpFile(path, "1"); }).find("0: 'Walk'"),
            std::string::npos);
}

TEST(AssimpImport, InspectListsTakesJointsAndUnit) {
  TempDir dir;
  std::unique_ptr<aiScene> scene(makeWalkScene(0.01f));
  const std::string path = writeGltf(scene.get(), dir.file("walk.gltf"));
  const mmdb::cook::SourceInfo info = mmdb::cook::inspectSourceFile(path);
  EXPECT_EQ(info.format, "GLTF");
  ASSERT_EQ(info.takes.size(), 1u);
  EXPECT_EQ(info.takes[0].name, "Walk");
  EXPECT_DOUBLE_EQ(info.takes[0].frame_rate, 30.0);
  EXPECT_EQ(info.takes[0].frame_count, 31);
  EXPECT_DOUBLE_EQ(info.takes[0].duration_s, 1.0);
  EXPECT_EQ(info.skeleton.names,
            (std::vector<std::string>{"Hips", "LeftUpLeg", "RightUpLeg", "Spine", "Head"}));
  EXPECT_EQ(info.skeleton.parents, (std::vector<int>{-1, 0, 0, 0, 3}));
  EXPECT_NEAR(info.declared_unit_scale, 0.01, 1e-9);
}

TEST(AssimpImport, MissingAndCorruptFilesNameTheFileAndTheReason) {
  TempDir dir;
  const std::string missing = dir.file("nope.fbx");
  EXPECT_NE(expectInputError([&] {
              mmdb::cook::importClipFile(missing, "");
            }).find("nope.fbx: file not found"),
            std::string::npos);

  const std::string garbage = dir.file("garbage.fbx");
  std::ofstream(garbage) << "this is not an FBX file\n";
  const std::string msg = expectInputError([&] { mmdb::cook::importClipFile(garbage, ""); });
  EXPECT_NE(msg.find("Assimp cannot read garbage.fbx: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("re-export"), std::string::npos) << msg;
}

// RAW files leave null entries among a node's children; the importer skips them.
TEST(AssimpImport, RawTestModelsWithNullChildrenDoNotCrash) {
  const std::string raw = "/usr/share/assimp/models/RAW";
  if (!fs::exists(raw)) GTEST_SKIP() << "assimp-testmodels not installed (" << raw << ")";
  for (const char* name : {"WithColor.raw", "WithTexture.raw"}) {
    const std::string path = raw + "/" + name;
#if MMDB_TEST_LSAN
    __lsan::ScopedDisabler assimp_raw_leaks;  // Assimp 5.2's RAW reader leaks its nodes
#endif
    const mmdb::cook::SourceInfo info =
        mmdb::cook::inspectSourceFile(path);  // no animation, no skeleton
    EXPECT_TRUE(info.takes.empty()) << name;
    const std::string msg = expectInputError([&] { mmdb::cook::importClipFile(path, ""); });
    EXPECT_NE(msg.find(std::string(name) + " has no animation"), std::string::npos) << msg;
  }
}

// Key times far beyond a day, infinite or negative are refused before any frame is allocated.
TEST(AssimpImport, KeyTimesBeyondTheLimitsAreRefused) {
  TempDir dir;
  struct Case {
    double first, last;
    const char* message;
  };
  const Case cases[] = {
      {0.0, 3e8, "lasts 1e+07 s"},  // a 1 KB file asking for 3e8 frames
      {0.0, 1e9 * 30, "over the 86400 s (24 hours) limit of a clip"},
      {0.0, 3e38, ""},  // may overflow to inf in the glTF file: refused either way
      {-1e9, 30.0, "over the 86400 s (24 hours) limit of a clip"},
      // The glTF writer may not keep an infinity; whatever is read back is refused.
      {0.0, std::numeric_limits<double>::infinity(), ""},
  };
  for (const Case& c : cases) {
    std::unique_ptr<aiScene> scene(makeWalkScene(1.0f));
    aiNodeAnim* hips = scene->mAnimations[0]->mChannels[0];
    hips->mPositionKeys[0].mTime = c.first;
    hips->mPositionKeys[hips->mNumPositionKeys - 1].mTime = c.last;
    const std::string path = writeGltf(scene.get(), dir.file("far.gltf"));
    const std::string msg = expectInputError([&] { mmdb::cook::importClipFile(path, ""); });
    EXPECT_NE(msg.find(c.message), std::string::npos) << c.last << ": " << msg;
    if (!*c.message) continue;
    EXPECT_NE(msg.find("far.gltf: take 'Walk'"), std::string::npos) << msg;
    const std::string inspected = expectInputError([&] { mmdb::cook::inspectSourceFile(path); });
    EXPECT_NE(inspected.find(c.message), std::string::npos) << inspected;
  }
}

TEST(AssimpImport, TruncatedFbxGivesAssimpsReason) {
  const std::string source = kAssimpModels + "/huesitos.fbx";
  if (!fs::exists(source)) GTEST_SKIP() << "assimp-testmodels not installed (" << source << ")";
  TempDir dir;
  const std::string cut = dir.file("huesitos_cut.fbx");
  fs::copy_file(source, cut);
  fs::resize_file(cut, fs::file_size(cut) / 3);
  const std::string msg = expectInputError([&] { mmdb::cook::importClipFile(cut, ""); });
  EXPECT_NE(msg.find(cut + ": Assimp cannot read huesitos_cut.fbx: FBX-"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("truncated or corrupt"), std::string::npos) << msg;
  EXPECT_NE(expectInputError([&] { mmdb::cook::inspectSourceFile(cut); }).find("huesitos_cut.fbx"),
            std::string::npos);
}

TEST(AssimpImport, DebianTestModelsImportOrFailWithAReason) {
  if (!fs::exists(kAssimpModels))
    GTEST_SKIP() << "assimp-testmodels not installed (" << kAssimpModels << ")";
  // Animated skeletons import.
  {
    const mmdb::cook::RawClip clip =
        mmdb::cook::importClipFile(kAssimpModels + "/animation_with_skeleton.fbx", "");
    // The Armature has two bone chains below it, so it stays the root joint.
    EXPECT_EQ(clip.skeleton.jointCount(), 15);
    EXPECT_EQ(clip.skeleton.names[0], "Armature");
    EXPECT_EQ(clip.take, "Armature|ArmatureAction");
    EXPECT_DOUBLE_EQ(clip.frame_rate, 24.0);
    EXPECT_EQ(clip.frame_count, 21);
  }
  {
    const mmdb::cook::RawClip clip =
        mmdb::cook::importClipFile(kAssimpModels + "/huesitos.fbx", "Action");
    EXPECT_EQ(clip.skeleton.jointCount(), 9);
    EXPECT_EQ(clip.skeleton.names[0], "Bone");  // the static Armature is composed away
    EXPECT_DOUBLE_EQ(clip.frame_rate, 25.0);
    EXPECT_EQ(clip.frame_count, 40);
    EXPECT_NEAR(clip.declared_unit_scale, 1.0, 1e-6);  // centimetres times the armature's 100
    for (const auto& name : clip.skeleton.names)
      EXPECT_EQ(name.find("$AssimpFbx$"), std::string::npos) << name;
  }
  // Meshes without animation: a clear "no animation".
  for (const char* name : {"box.fbx", "spider.fbx", "phong_cube.fbx", "cubes_with_names.fbx"}) {
    const std::string msg =
        expectInputError([&] { mmdb::cook::importClipFile(kAssimpModels + "/" + name, ""); });
    EXPECT_NE(msg.find(std::string(name) + " has no animation"), std::string::npos) << msg;
    const mmdb::cook::SourceInfo info = mmdb::cook::inspectSourceFile(kAssimpModels + "/" + name);
    EXPECT_TRUE(info.takes.empty());
    EXPECT_EQ(info.skeleton.jointCount(), 0);
  }
  // A file Assimp 5.2 itself cannot tokenize.
  const std::string msg = expectInputError(
      [&] { mmdb::cook::importClipFile(kAssimpModels + "/transparentTest.fbx", ""); });
  EXPECT_NE(msg.find("Assimp cannot read transparentTest.fbx: FBX-Tokenize"), std::string::npos)
      << msg;
}

TEST(ImportDispatch, BvhGoesToTheBvhImporterWithOneTake) {
  TempDir dir;
  const std::string path = dir.file("two.bvh");
  std::ofstream(path)
      << "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition "
         "Zposition Zrotation Xrotation Yrotation\n End Site\n {\n  OFFSET 0 1 0\n }\n}\n"
         "MOTION\nFrames: 2\nFrame Time: 0.5\n0 1 2 0 0 0\n3 4 5 0 0 0\n";
  const mmdb::cook::RawClip clip = mmdb::cook::importClipFile(path, "");
  EXPECT_EQ(clip.frame_count, 2);
  EXPECT_EQ(mmdb::cook::importClipFile(path, "0").frame_count, 2);
  EXPECT_NE(expectInputError([&] { mmdb::cook::importClipFile(path, "Walk"); }).find("single take"),
            std::string::npos);
  const mmdb::cook::SourceInfo info = mmdb::cook::inspectSourceFile(path);
  EXPECT_EQ(info.format, "BVH");
  ASSERT_EQ(info.takes.size(), 1u);
  EXPECT_EQ(info.takes[0].frame_count, 2);
  EXPECT_DOUBLE_EQ(info.takes[0].frame_rate, 2.0);
  EXPECT_DOUBLE_EQ(info.takes[0].duration_s, 0.5);
  EXPECT_EQ(info.skeleton.names, std::vector<std::string>{"Hips"});
}

TEST(SkeletonPresets, MixamoNamesPickTheMixamoPreset) {
  mmdb::cook::Skeleton s;
  const std::vector<std::string> names = {
      "mixamorig:Hips",     "mixamorig:Spine",       "mixamorig:Spine1",
      "mixamorig:Spine2",   "mixamorig:LeftUpLeg",   "mixamorig:LeftLeg",
      "mixamorig:LeftFoot", "mixamorig:LeftToeBase", "mixamorig:RightUpLeg",
      "mixamorig:RightLeg", "mixamorig:RightFoot",   "mixamorig:RightToeBase"};
  const std::vector<int> parents = {-1, 0, 1, 2, 0, 4, 5, 6, 0, 8, 9, 10};
  for (size_t j = 0; j < names.size(); ++j) {
    s.names.push_back(names[j]);
    s.parents.push_back(parents[j]);
    s.offsets.emplace_back(0, 10, 0);
    s.bind_rotations.emplace_back(1, 0, 0, 0);
  }
  const mmdb::cook::SkeletonRoles roles = mmdb::cook::resolveRoles(s, {}, "mixamo clip");
  EXPECT_EQ(roles.preset, "mixamo");
  EXPECT_EQ(roles.joint(mmdb::cook::Role::LeftToe), 7);
  EXPECT_EQ(roles.joint(mmdb::cook::Role::RightFoot), 10);
  EXPECT_EQ(roles.joint(mmdb::cook::Role::RootPosition), 3);
  EXPECT_DOUBLE_EQ(roles.preset_unit_scale, 0.01);
  EXPECT_EQ(roles.facing_axis, glm::vec3(0, 0, 1));
}

TEST(SkeletonPresets, CmuFbxNamesPickTheMotionBuilderCmuPreset) {
  const std::string path = kShared + "/cmu-fbx/07_01_cmu.fbx";
  if (!fs::exists(path)) GTEST_SKIP() << "no motion corpus at " << path;
  const mmdb::cook::SourceInfo info = mmdb::cook::inspectSourceFile(path);
  const mmdb::cook::SkeletonRoles roles = mmdb::cook::resolveRoles(info.skeleton, {}, "07_01");
  EXPECT_EQ(roles.preset, "cmu-motionbuilder");
  EXPECT_EQ(info.skeleton.names[roles.joint(mmdb::cook::Role::LeftToe)], "LeftToeBase");
}

// --- Through mmcook ----------------------------------------------------------------------------

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs a shell command with its output in a log of `dir`.
RunResult runCommand(const std::string& command, const TempDir& dir) {
  const std::string log = dir.file("command.log");
  const int status = std::system((command + " > '" + log + "' 2>&1").c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  r.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return r;
}

RunResult runMmcook(const std::string& args, const TempDir& dir) {
  return runCommand("'" + std::string(MMCOOK_PATH) + "' " + args, dir);
}

TEST(Mmcook, CorruptFbxExitsWithBadInput) {
  TempDir dir;
  const std::string garbage = dir.file("broken.fbx");
  std::ofstream(garbage) << "Kaydara FBX Binary  \0 cut short";
  const RunResult r = runMmcook("cook '" + garbage + "' -o '" + dir.file("out.mmdb") + "'", dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Assimp cannot read broken.fbx"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("out.mmdb")));
  EXPECT_EQ(runMmcook("inspect-source '" + garbage + "'", dir).exit_code, 1);
}

TEST(Mmcook, TruncatedTestModelExitsWithBadInput) {
  const std::string source = kAssimpModels + "/animation_with_skeleton.fbx";
  if (!fs::exists(source)) GTEST_SKIP() << "assimp-testmodels not installed (" << source << ")";
  TempDir dir;
  const std::string cut = dir.file("cut.fbx");
  fs::copy_file(source, cut);
  fs::resize_file(cut, fs::file_size(cut) / 2);
  const RunResult r = runMmcook("cook '" + cut + "' -o '" + dir.file("out.mmdb") + "'", dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Assimp cannot read cut.fbx: FBX-"), std::string::npos) << r.output;
}

TEST(Mmcook, InspectSourceShowsTakesJointsAndNotes) {
  TempDir dir;
  std::unique_ptr<aiScene> scene(makeWalkScene(0.01f));
  const std::string path = writeGltf(scene.get(), dir.file("walk.gltf"));
  const RunResult r = runMmcook("inspect-source '" + path + "'", dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("'Walk'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("31 frames at 30 Hz"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("LeftUpLeg"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0.01 m per unit"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("note        static node 'Armature' above the skeleton"),
            std::string::npos)
      << r.output;
}

#if MMCOOK_ASSIMP_ON_DEMAND
// mmcook does not link Assimp: it loads the importer module at the first file that needs it,
// names the module it loaded with -v, and names what is wrong when the module is missing or is
// not its own, exit 1.
TEST(Mmcook, LoadsTheImporterModuleOnlyForAFileThatNeedsIt) {
  TempDir dir;
  const std::string bvh = std::string(MMDB_TEST_DATA) + "/../../samples/data/walk_turn.bvh";
  const RunResult unneeded = runMmcook("-v inspect-source '" + bvh + "'", dir);
  ASSERT_EQ(unneeded.exit_code, 0) << unneeded.output;
  EXPECT_EQ(unneeded.output.find("importer"), std::string::npos) << unneeded.output;
  const RunResult linked = runCommand("ldd '" + std::string(MMCOOK_PATH) + "'", dir);
  ASSERT_EQ(linked.exit_code, 0) << linked.output;
  EXPECT_NE(linked.output.find("libstdc++"), std::string::npos) << linked.output;
  EXPECT_EQ(linked.output.find("assimp"), std::string::npos) << linked.output;

  std::unique_ptr<aiScene> scene(makeWalkScene(0.01f));
  const std::string path = writeGltf(scene.get(), dir.file("walk.gltf"));
  const RunResult loaded = runMmcook("-v inspect-source '" + path + "'", dir);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  EXPECT_NE(loaded.output.find("FBX and glTF importer: "), std::string::npos) << loaded.output;
  EXPECT_NE(loaded.output.find("mmcook_assimp"), std::string::npos) << loaded.output;
  EXPECT_NE(loaded.output.find("'Walk'"), std::string::npos) << loaded.output;

  ::setenv("MMCOOK_ASSIMP_MODULE", dir.file("nowhere/mmcook_assimp.so").c_str(), 1);
  const RunResult missing = runMmcook("cook '" + path + "' -o '" + dir.file("out.mmdb") + "'", dir);
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find(path +
                                ": cannot import: the FBX and glTF importer module "
                                "mmcook_assimp.so is not installed (looked for " +
                                dir.file("nowhere/mmcook_assimp.so") +
                                "); reinstall mmcook, or cook BVH files"),
            std::string::npos)
      << missing.output;
  EXPECT_FALSE(fs::exists(dir.file("out.mmdb")));
  // Another library in its place: not this mmcook's module.
  Dl_info libm{};
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(static_cast<double (*)(double)>(&::cos)), &libm), 0);
  ::setenv("MMCOOK_ASSIMP_MODULE", libm.dli_fname, 1);
  const RunResult other = runMmcook("inspect-source '" + path + "'", dir);
  ::unsetenv("MMCOOK_ASSIMP_MODULE");
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_NE(other.output.find(std::string(libm.dli_fname) +
                              " is not this mmcook's importer module (no entry, this is mmcook "),
            std::string::npos)
      << other.output;
}
#endif

// --- Shared corpus ------------------------------------------------------------------------------

TEST(SharedCorpus, GenoBvhAndFbxHaveTheSameSkeletonAndPose) {
  const std::string bvh = kShared + "/geno/Geno_bind.bvh";
  const std::string fbx = kShared + "/geno/Geno_bind.fbx";
  if (!fs::exists(bvh) || !fs::exists(fbx))
    GTEST_SKIP() << "no motion corpus at " << kShared << "/geno";
  const mmdb::cook::RawClip b = mmdb::cook::importClipFile(bvh, "");
  const mmdb::cook::SourceInfo f = mmdb::cook::inspectSourceFile(fbx);
  // The bind file has no take: its pose is the skeleton's bind pose.
  EXPECT_TRUE(f.takes.empty());
  EXPECT_NE(expectInputError([&] { mmdb::cook::importClipFile(fbx, ""); }).find("no animation"),
            std::string::npos);

  const double bvh_unit = 0.01;  // the Geno BVH is in centimetres
  EXPECT_NEAR(f.declared_unit_scale, 0.01, 1e-9);
  ASSERT_EQ(b.skeleton.names, f.skeleton.names);
  EXPECT_EQ(b.skeleton.parents, f.skeleton.parents);
  for (int j = 0; j < b.skeleton.jointCount(); ++j) {
    const glm::vec3 d = b.skeleton.offsets[j] * float(bvh_unit) -
                        f.skeleton.offsets[j] * float(f.declared_unit_scale);
    EXPECT_LT(glm::length(d), 1e-4f) << b.skeleton.names[j];
  }
  const auto bvh_world = worldPositions(b.skeleton, &b.rotations[0], &b.translations[0]);
  const auto fbx_world = bindWorldPositions(f.skeleton);
  for (int j = 0; j < b.skeleton.jointCount(); ++j) {
    const glm::vec3 d =
        bvh_world[j] * float(bvh_unit) - fbx_world[j] * float(f.declared_unit_scale);
    EXPECT_LT(glm::length(d), 1e-4f) << b.skeleton.names[j];
  }
}

TEST(SharedCorpus, GenoCharacterSkeletonMatchesTheBindFile) {
  const std::string character = kShared + "/geno/Geno.fbx";
  const std::string bind = kShared + "/geno/Geno_bind.fbx";
  if (!fs::exists(character) || !fs::exists(bind))
    GTEST_SKIP() << "no motion corpus at " << kShared << "/geno";
  const mmdb::cook::SourceInfo c = mmdb::cook::inspectSourceFile(character);
  const mmdb::cook::SourceInfo b = mmdb::cook::inspectSourceFile(bind);
  EXPECT_EQ(c.skeleton.names, b.skeleton.names);
  EXPECT_EQ(c.skeleton.parents, b.skeleton.parents);
}

TEST(SharedCorpus, CmuFbxWalkMovesAtWalkingSpeed) {
  const std::string path = kShared + "/cmu-fbx/07_01_cmu.fbx";
  if (!fs::exists(path)) GTEST_SKIP() << "no motion corpus at " << path;
  const mmdb::cook::RawClip clip = mmdb::cook::importClipFile(path, "");
  EXPECT_EQ(clip.take, "07_01|07_01");
  EXPECT_DOUBLE_EQ(clip.frame_rate, 120.0);
  EXPECT_EQ(clip.frame_count, 317);
  ASSERT_EQ(clip.skeleton.names[0], "Hips");  // the Blender armature object is composed away
  for (const char* name :
       {"LeftFoot", "RightFoot", "LeftToeBase", "RightToeBase", "Spine1", "LHipJoint"})
    EXPECT_GE(clip.skeleton.find(name), 0) << name;
  // The armature's x100 over centimetres claims metres, but the values are raw CMU units.
  EXPECT_EQ(clip.declared_unit_scale, 0.0);
  const double unit = 2.54 / 45.0;
  // Standing hip height about 0.9 m in CMU units.
  EXPECT_NEAR(clip.translation(0, 0).y * unit, 0.9, 0.1);
  double distance = 0, moving_time = 0;
  for (int f = 1; f < clip.frame_count; ++f) {
    const glm::vec3 d = clip.translation(f, 0) - clip.translation(f - 1, 0);
    const double step = std::hypot(d.x, d.z) * unit;
    if (step * clip.frame_rate > 0.2) {
      distance += step;
      moving_time += 1.0 / clip.frame_rate;
    }
  }
  ASSERT_GT(moving_time, 1.0);
  const double speed = distance / moving_time;
  EXPECT_GT(speed, 0.8);
  EXPECT_LT(speed, 2.0);
}

TEST(SharedCorpus, CmuFbxWalkCooksAtWalkingSpeed) {
  const std::string path = kShared + "/cmu-fbx/07_01_cmu.fbx";
  if (!fs::exists(path)) GTEST_SKIP() << "no motion corpus at " << path;
  mmdb::cook::CookRequest request;
  mmdb::cook::ClipSpec spec;
  spec.source = path;
  spec.source_label = path;
  request.clips.push_back(spec);
  request.jobs = 1;
  mmdb::cook::CookReport report;
  const mmdb::cook::CookedDatabase db = mmdb::cook::cookDatabase(request, &report);
  // The CMU FBX names are the MotionBuilder-friendly CMU ones; the file's own scale is dropped.
  EXPECT_EQ(report.preset, "cmu-motionbuilder");
  EXPECT_EQ(report.unit_scale_origin, "preset");
  EXPECT_NEAR(report.unit_scale, 2.54 / 45.0, 1e-9);
  double speed_sum = 0;
  int moving = 0;
  for (const auto& root : db.root_motion) {
    const double speed = glm::length(root.velocity);
    if (speed > 0.2) speed_sum += speed, ++moving;
  }
  ASSERT_GT(moving, 60);
  EXPECT_GT(speed_sum / moving, 0.8);
  EXPECT_LT(speed_sum / moving, 2.0);
}

TEST(SharedCorpus, EveryCmuFbxImports) {
  const std::string dir = kShared + "/cmu-fbx";
  if (!fs::exists(dir)) GTEST_SKIP() << "no motion corpus at " << dir;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".fbx") continue;
    ++files;
    const mmdb::cook::RawClip clip = mmdb::cook::importClipFile(entry.path().string(), "");
    EXPECT_EQ(clip.skeleton.jointCount(), 31) << entry.path();
    EXPECT_GT(clip.frame_count, 100) << entry.path();
    EXPECT_EQ(clip.rotations.size(), size_t(clip.frame_count) * 31) << entry.path();
  }
  EXPECT_GT(files, 0);
}

}  // namespace
