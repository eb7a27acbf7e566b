// Cook stages one at a time, each against an answer worked out by hand or in closed form.
#include "cook/bounds.h"
#include "cook/contacts.h"
#include "cook/normalize.h"
#include "cook/pose_math.h"
#include "cook/ranges.h"
#include "cook/resample.h"
#include "cook/savitzky_golay.h"
#include "cook/skeleton_presets.h"
#include "cook/units.h"
#include "cook/velocities.h"
#include "core/errors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace mmdb::cook {
namespace {

Skeleton makeSkeleton(const std::vector<std::string>& names, const std::vector<int>& parents) {
  Skeleton s;
  s.names = names;
  s.parents = parents;
  s.offsets.assign(names.size(), glm::vec3(0));
  s.bind_rotations.assign(names.size(), glm::quat(1, 0, 0, 0));
  return s;
}

Skeleton genoLike() {
  return makeSkeleton({"Hips", "Spine2", "LeftFoot", "LeftToeBase", "RightFoot", "RightToeBase"},
                      {-1, 0, 0, 2, 0, 4});
}

float yawOf(const glm::quat& q) {
  const glm::vec3 z = q * glm::vec3(0, 0, 1);
  return std::atan2(z.x, z.z);
}

std::string errorText(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

// ---- presets ---------------------------------------------------------------------------------

TEST(CookPresets, DetectsGenoBandaiAndCmuNaming) {
  RoleSettings none;
  const SkeletonRoles geno = resolveRoles(genoLike(), none, "clip");
  EXPECT_EQ(geno.preset, "geno");
  EXPECT_EQ(geno.joint(Role::RootPosition), 1);
  EXPECT_EQ(geno.joint(Role::LeftToe), 3);
  EXPECT_EQ(geno.joint(Role::RightFoot), 4);
  EXPECT_EQ(geno.facing_axis, glm::vec3(0, 0, 1));
  EXPECT_DOUBLE_EQ(geno.preset_unit_scale, 0.01);

  const Skeleton bandai =
      makeSkeleton({"joint_Root", "Hips", "Spine", "Chest", "UpperLeg_L", "LowerLeg_L", "Foot_L",
                    "Toes_L", "UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R"},
                   {-1, 0, 1, 2, 1, 4, 5, 6, 1, 8, 9, 10});
  const SkeletonRoles b = resolveRoles(bandai, none, "clip");
  EXPECT_EQ(b.preset, "bandai");
  EXPECT_EQ(b.joint(Role::Hips), 1);
  EXPECT_EQ(b.joint(Role::RootPosition), 3);
  EXPECT_EQ(b.joint(Role::RightToe), 11);

  const Skeleton cmu = makeSkeleton(
      {"Hips", "LeftAnkle", "LeftToe", "RightAnkle", "RightToe", "lowerback", "Chest", "Chest2"},
      {-1, 0, 1, 0, 3, 0, 5, 6});
  const SkeletonRoles c = resolveRoles(cmu, none, "clip");
  EXPECT_EQ(c.preset, "cmu");
  EXPECT_NEAR(c.preset_unit_scale, 2.54 / 45, 1e-12);
  EXPECT_EQ(c.describe(cmu)[1], "left_foot: LeftAnkle (joint 1)");
}

TEST(CookPresets, OverridesApplyPerRole) {
  RoleSettings s;
  s.root_position = "Hips";
  s.facing_axis = glm::vec3(0, 2, 0);
  const SkeletonRoles r = resolveRoles(genoLike(), s, "clip");
  EXPECT_EQ(r.preset, "geno");
  EXPECT_EQ(r.joint(Role::RootPosition), 0);
  EXPECT_EQ(r.facing_axis, glm::vec3(0, 1, 0));
}

TEST(CookPresets, EveryRoleGivenNeedsNoPreset) {
  const Skeleton s = makeSkeleton({"pelvis", "lf", "lt", "rf", "rt"}, {-1, 0, 1, 0, 3});
  RoleSettings r;
  r.hips = r.root_position = r.facing = "pelvis";
  r.left_foot = "lf";
  r.left_toe = "lt";
  r.right_foot = "rf";
  r.right_toe = "rt";
  const SkeletonRoles roles = resolveRoles(s, r, "clip");
  EXPECT_EQ(roles.preset, "");
  EXPECT_EQ(roles.joint(Role::RightToe), 4);
}

TEST(CookPresets, MissingRoleJointNamesRoleJointAndSkeleton) {
  RoleSettings s;
  s.left_toe = "NoSuchToe";
  const std::string e = errorText([&] { resolveRoles(genoLike(), s, "clip walk1"); });
  EXPECT_NE(e.find("clip walk1"), std::string::npos) << e;
  EXPECT_NE(e.find("left_toe"), std::string::npos) << e;
  EXPECT_NE(e.find("NoSuchToe"), std::string::npos) << e;
  EXPECT_NE(e.find("Hips, Spine2, LeftFoot, LeftToeBase, RightFoot, RightToeBase"),
            std::string::npos)
      << e;
}

TEST(CookPresets, ExplicitPresetThatDoesNotFitNamesTheJoint) {
  RoleSettings s;
  s.preset = "lafan1";
  const std::string e = errorText([&] { resolveRoles(genoLike(), s, "clip"); });
  EXPECT_NE(e.find("role left_toe names joint 'LeftToe'"), std::string::npos) << e;
  EXPECT_NE(e.find("preset lafan1"), std::string::npos) << e;
  s.preset = "nonsense";
  EXPECT_NE(errorText([&] { resolveRoles(genoLike(), s, "clip"); }).find("lafan1, geno, bandai"),
            std::string::npos);
}

TEST(CookPresets, UnknownSkeletonListsPresetsAndJoints) {
  const Skeleton s = makeSkeleton({"root", "a", "b"}, {-1, 0, 1});
  const std::string e = errorText([&] { resolveRoles(s, {}, "clip x"); });
  EXPECT_NE(e.find("no skeleton preset fits"), std::string::npos) << e;
  EXPECT_NE(e.find("bandai (no Hips)"), std::string::npos) << e;
  EXPECT_NE(e.find("root, a, b"), std::string::npos) << e;
}

TEST(CookPresets, TableIsExtensibleAndFindable) {
  ASSERT_NE(findPreset("bandai"), nullptr);
  EXPECT_EQ(findPreset("bandai")->joints[static_cast<int>(Role::LeftToe)], "Toes_L");
  EXPECT_EQ(findPreset("nope"), nullptr);
  EXPECT_EQ(findPreset("lafan1")->facing_axis, glm::vec3(0, 1, 0));
}

// ---- units -----------------------------------------------------------------------------------

RawClip standingClip(float hip_height, float toe_left, float toe_right) {
  RawClip c;
  c.name = "stand";
  c.skeleton = genoLike();
  c.frame_rate = 30;
  c.frame_count = 1;
  c.rotations.assign(6, glm::quat(1, 0, 0, 0));
  c.translations = {{0, hip_height, 0},        {0, 30, 0},
                    {10, -hip_height + 8, 0},  {0, toe_left - 8, 5},
                    {-10, -hip_height + 8, 0}, {0, toe_right - 8, 5}};
  return c;
}

TEST(CookUnits, InfersScaleFromStandingHipHeight) {
  const RawClip c = standingClip(95, 5, 7);  // hips 90 units above the lower toe
  EXPECT_NEAR(standingHipHeight(c, 0, 3, 5), 90.0, 1e-5);
  EXPECT_NEAR(inferUnitScale(c, 0, 3, 5), 0.01, 1e-9);
  const RawClip upside = standingClip(-10, 5, 7);
  EXPECT_NE(errorText([&] { inferUnitScale(upside, 0, 3, 5); }).find("unit_scale"),
            std::string::npos);
}

TEST(CookUnits, ScaleComesFromManifestThenFileThenPresetThenInference) {
  RawClip c = standingClip(95, 5, 7);
  EXPECT_EQ(chooseUnitScale(2, c, 3, 4).origin, "manifest");
  EXPECT_EQ(chooseUnitScale(0, c, 3, 4).scale, 3);
  EXPECT_EQ(chooseUnitScale(0, c, 0, 4).origin, "inferred from hip height");
  c.declared_unit_scale = 0.5;
  EXPECT_EQ(chooseUnitScale(0, c, 3, 4).scale, 0.5);
  EXPECT_EQ(chooseUnitScale(0, c, 3, 4).origin, "file");
  c.skeleton.offsets[1] = {0, 30, 0};
  scaleClip(c, 0.01);
  EXPECT_NEAR(c.skeleton.offsets[1].y, 0.3f, 1e-7);
  EXPECT_NEAR(c.translations[0].y, 0.95f, 1e-7);
}

// ---- resampling ------------------------------------------------------------------------------

RawClip yawClip(double rate, const std::vector<float>& yaws) {
  RawClip c;
  c.name = "yaw";
  c.skeleton = makeSkeleton({"Hips"}, {-1});
  c.frame_rate = rate;
  c.frame_count = static_cast<int>(yaws.size());
  for (size_t f = 0; f < yaws.size(); ++f) {
    c.rotations.push_back(yawRotation(yaws[f]));
    c.translations.push_back(glm::vec3(f, 2.0f * f, -1.0f * f));
  }
  return c;
}

TEST(CookResample, FrameCountFormula) {
  EXPECT_EQ(resampledFrameCount(31, 30, 60), 61);    // ~2x
  EXPECT_EQ(resampledFrameCount(121, 120, 60), 61);  // ~0.5x
  EXPECT_EQ(resampledFrameCount(10, 120, 60), 5);
  EXPECT_EQ(resampledFrameCount(6, 50, 60), 7);
  EXPECT_EQ(resampledFrameCount(1, 30, 60), 1);
}

TEST(CookResample, ThirtyToSixtyInterpolatesHalfway) {
  const RawClip in = yawClip(30, {0.0f, 0.2f, 0.4f, 0.6f});
  const RawClip out = resampleClip(in, 60);
  ASSERT_EQ(out.frame_count, 7);
  EXPECT_EQ(out.frame_rate, 60);
  for (int f = 0; f < 7; ++f) {
    EXPECT_NEAR(yawOf(out.rotations[f]), 0.1f * f, 1e-6) << f;
    EXPECT_NEAR(out.translations[f].x, 0.5f * f, 1e-6) << f;
    EXPECT_NEAR(out.translations[f].y, 1.0f * f, 1e-6) << f;
  }
  // Source frames land exactly.
  EXPECT_EQ(out.rotations[2], in.rotations[1]);
  EXPECT_EQ(out.translations[6], in.translations[3]);
}

TEST(CookResample, SlerpTakesTheShortWayRound) {
  RawClip in = yawClip(30, {0.0f, 0.4f});
  in.rotations[1] = -in.rotations[1];  // same rotation, other hemisphere
  const RawClip out = resampleClip(in, 60);
  ASSERT_EQ(out.frame_count, 3);
  EXPECT_NEAR(yawOf(out.rotations[1]), 0.2f, 1e-6);
  EXPECT_NEAR(std::abs(out.rotations[1].w), std::cos(0.1f), 1e-6);
}

TEST(CookResample, HundredTwentyToSixtyKeepsEveryOtherFrame) {
  std::vector<float> yaws;
  for (int f = 0; f < 10; ++f) yaws.push_back(0.05f * f);
  const RawClip in = yawClip(120, yaws);
  const RawClip out = resampleClip(in, 60);
  ASSERT_EQ(out.frame_count, 5);
  for (int f = 0; f < 5; ++f) {
    EXPECT_EQ(out.rotations[f], in.rotations[2 * f]);
    EXPECT_EQ(out.translations[f], in.translations[2 * f]);
  }
}

TEST(CookResample, FiftyToSixtyLerpsAtFractionalTimes) {
  const RawClip in = yawClip(50, {0, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f});
  const RawClip out = resampleClip(in, 60);
  ASSERT_EQ(out.frame_count, 7);
  for (int f = 0; f < 7; ++f) {
    const double s = f * 50.0 / 60.0;  // source frame position
    EXPECT_NEAR(out.translations[f].x, s, 1e-5) << f;
    EXPECT_NEAR(yawOf(out.rotations[f]), 0.1 * s, 1e-6) << f;
  }
}

TEST(CookResample, RejectsMissingRate) {
  RawClip in = yawClip(0, {0, 0});
  EXPECT_NE(errorText([&] { resampleClip(in, 60); }).find("frame rate"), std::string::npos);
}

// ---- Savitzky-Golay --------------------------------------------------------------------------

TEST(CookSavitzkyGolay, WindowsAreNearestOddFrameCounts) {
  EXPECT_EQ(oddWindowFrames(31.0 / 60.0, 60), 31);
  EXPECT_EQ(oddWindowFrames(61.0 / 60.0, 60), 61);
  EXPECT_EQ(oddWindowFrames(31.0 / 60.0, 30), 15);  // 15.5 frames
  EXPECT_EQ(oddWindowFrames(61.0 / 60.0, 120), 121);
}

TEST(CookSavitzkyGolay, CubicsPassThroughUnchangedEndsIncluded) {
  std::vector<glm::vec3> x(100);
  for (int f = 0; f < 100; ++f) {
    const double t = f / 60.0;
    x[f] = glm::vec3(1 + 2 * t - 0.5 * t * t + 0.1 * t * t * t, 3 - t, t * t);
  }
  for (int window : {5, 31, 61}) {
    const std::vector<glm::vec3> y = SavitzkyGolayFilter(window, 3).apply(x);
    for (int f = 0; f < 100; ++f) {
      EXPECT_NEAR(y[f].x, x[f].x, 2e-5) << window << " " << f;
      EXPECT_NEAR(y[f].y, x[f].y, 2e-5) << window << " " << f;
      EXPECT_NEAR(y[f].z, x[f].z, 2e-5) << window << " " << f;
    }
  }
}

TEST(CookSavitzkyGolay, CentreWeightsMatchTheClosedForm) {
  // Cubic (= quadratic) smoothing over 2m+1 points: c_k = (3(3m^2+3m-1) - 15k^2) /
  // ((4m^2-1)(2m+3)).
  for (int m : {2, 15, 30}) {
    const SavitzkyGolayFilter filter(2 * m + 1, 3);
    const std::vector<double>& w = filter.weights(m);
    for (int k = -m; k <= m; ++k) {
      const double c =
          (3.0 * (3 * m * m + 3 * m - 1) - 15.0 * k * k) / ((4.0 * m * m - 1) * (2 * m + 3));
      EXPECT_NEAR(w[k + m], c, 1e-12) << m << " " << k;
    }
  }
}

// The root motion's filters, built once per thread: each window and order has its own, with a
// fresh filter's weights, and a second call gives the same one.
TEST(CookSavitzkyGolay, SharedFiltersAreThoseOfTheirWindowAndOrder) {
  for (const auto& [window, order] : {std::pair(31, 2), std::pair(31, 3), std::pair(61, 3)}) {
    const SavitzkyGolayFilter& shared = sharedSavitzkyGolayFilter(window, order);
    const SavitzkyGolayFilter fresh(window, order);
    EXPECT_EQ(shared.window(), window);
    for (int at = 0; at < window; ++at)
      EXPECT_EQ(shared.weights(at), fresh.weights(at)) << window << " " << order << " " << at;
    EXPECT_EQ(&sharedSavitzkyGolayFilter(window, order), &shared);
  }
}

// ---- velocities ------------------------------------------------------------------------------

TEST(CookVelocities, CentralDifferencesWithReferenceEnds) {
  const double rate = 60;
  std::vector<glm::vec3> x;
  for (int f = 0; f < 10; ++f) {
    const float t = static_cast<float>(f / rate);
    x.push_back({t * t, 3 * t, 0});
  }
  const std::vector<glm::vec3> v = linearVelocities(x, 1, rate);
  for (int f = 0; f < 10; ++f) {
    EXPECT_NEAR(v[f].x, 2 * f / rate, 1e-4) << f;  // exact for a parabola, ends included
    EXPECT_NEAR(v[f].y, 3, 1e-4) << f;
  }
  // Ends follow v[0] = v[1] - (v[3] - v[2]), not a plain one-sided difference.
  std::vector<glm::vec3> c = {{0, 0, 0}, {1, 0, 0}, {3, 0, 0}, {4, 0, 0}, {8, 0, 0}};
  const std::vector<glm::vec3> cv = linearVelocities(c, 1, 1);
  EXPECT_FLOAT_EQ(cv[1].x, 1.5f);
  EXPECT_FLOAT_EQ(cv[2].x, 1.5f);
  EXPECT_FLOAT_EQ(cv[3].x, 2.5f);
  EXPECT_FLOAT_EQ(cv[0].x, 1.5f - (2.5f - 1.5f));
  EXPECT_FLOAT_EQ(cv[4].x, 2.5f + (2.5f - 1.5f));
}

TEST(CookVelocities, StridedSeriesAndSpin) {
  // Two elements per frame: element 1 spins about X at 2 rad/s, element 0 is still.
  std::vector<glm::quat> q;
  for (int f = 0; f < 8; ++f) {
    q.push_back(glm::quat(1, 0, 0, 0));
    q.push_back(glm::angleAxis(2.0f * f / 60.0f, glm::vec3(1, 0, 0)));
  }
  const std::vector<glm::vec3> w = angularVelocities(q, 2, 60);
  for (int f = 0; f < 8; ++f) {
    EXPECT_NEAR(glm::length(w[2 * f]), 0, 1e-6);
    EXPECT_NEAR(w[2 * f + 1].x, 2, 1e-4);
    EXPECT_NEAR(w[2 * f + 1].y, 0, 1e-6);
  }
}

// ---- contacts --------------------------------------------------------------------------------

TEST(CookContacts, MedianOfSixIsTheUpperMedian) {
  // Window [i-3, i+2] with the ends repeated; 1 when at least 3 of the 6 are 1 (worked by hand).
  const std::vector<uint8_t> in = {1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0};
  const std::vector<uint8_t> want = {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
  EXPECT_EQ(medianFilterBinary(in, 6), want);
  // Odd size 3: window [i-1, i+1], 2 of 3.
  const std::vector<uint8_t> want3 = {1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0};
  EXPECT_EQ(medianFilterBinary(in, 3), want3);
}

TEST(CookContacts, SlowToesAreInContact) {
  // Left toe still for 30 frames then moving at 1 m/s; right toe always moving at 0.1 m/s.
  ToeSpeeds speeds;
  for (int f = 0; f < 60; ++f) {
    speeds[0].push_back(f < 30 ? 0.0f : 1.0f);
    speeds[1].push_back(0.1f);
  }
  ContactDetector detect;
  detect.speed_threshold = 0.15f;
  detect.median_frames = 6;
  const std::vector<uint32_t> m = detect.run(speeds);
  // Raw: left slow on 0..29; the median of 6 keeps a long run and extends it by one frame at its
  // end (frames 27..32 hold three slow ones).
  for (int f = 0; f < 60; ++f) {
    EXPECT_EQ(m[f] & 1u, f <= 30 ? 1u : 0u) << f;
    EXPECT_EQ(m[f] & 2u, 2u) << f;
  }
}

// ---- normalization ---------------------------------------------------------------------------

std::vector<CookedFeatureBlock> twoBlocks(float wa, float wb) {
  return {{"a", FeatureKind::Position, 0, 0, 2, 0, wa},
          {"b", FeatureKind::Velocity, 0, 2, 1, 0, wb}};
}

TEST(CookNormalize, BlockStdIsTheMeanOfColumnStds) {
  // Columns: {1, 3} (mean 2, std 1), {0, 4} (mean 2, std 2), {10, 14} (mean 12, std 2).
  const std::vector<float> raw = {1, 0, 10, 3, 4, 14};
  std::vector<CookedFeatureBlock> blocks = twoBlocks(2, 0.5f);
  const NormalizedFeatures n = normalizeFeatures(raw, 3, 4, blocks);
  EXPECT_FLOAT_EQ(blocks[0].std, 1.5f);
  EXPECT_FLOAT_EQ(blocks[1].std, 2.0f);
  EXPECT_EQ(n.offset, (std::vector<float>{2, 2, 12}));
  EXPECT_EQ(n.scale, (std::vector<float>{0.75f, 0.75f, 4}));
  const std::vector<float> want = {-1 / 0.75f, -2 / 0.75f, -0.5f, 0, 1 / 0.75f, 2 / 0.75f, 0.5f, 0};
  ASSERT_EQ(n.features.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(n.features[i], want[i]) << i;
}

TEST(CookNormalize, ZeroSpreadAndZeroWeightAreErrorsNamingTheBlock) {
  const std::vector<float> flat = {1, 0, 10, 3, 4, 10};
  std::vector<CookedFeatureBlock> blocks = twoBlocks(1, 1);
  const std::string e = errorText([&] { normalizeFeatures(flat, 3, 4, blocks); });
  EXPECT_NE(e.find("feature block b never changes"), std::string::npos) << e;
  std::vector<CookedFeatureBlock> zero = twoBlocks(0, 1);
  const std::string z = errorText([&] { normalizeFeatures({1, 0, 10, 3, 4, 14}, 3, 4, zero); });
  EXPECT_NE(z.find("feature block a has weight 0"), std::string::npos) << z;
}

TEST(CookNormalize, RowsGiveTheSameBitsAsPackedValuesForAnyThreadCount) {
  // 27 columns of uneven scale and offset over 1,001 frames, as the database's features are.
  const int columns = 27, stride = 28, frames = 1001;
  std::vector<float> packed(size_t(frames) * columns), rows(size_t(frames) * stride, 0.0f);
  for (int f = 0; f < frames; ++f)
    for (int k = 0; k < columns; ++k) {
      const float v = std::sin(0.37f * f + 1.3f * k) * float(1 + k) + 0.01f * f + float(k);
      packed[size_t(f) * columns + k] = v;
      rows[size_t(f) * stride + k] = v;
    }
  for (int f = 0; f < frames; ++f) rows[size_t(f) * stride + columns] = 123.0f;  // padding
  auto blocks = [] {
    return std::vector<CookedFeatureBlock>{{"p", FeatureKind::Position, 0, 0, 12, 0, 1.5f},
                                           {"v", FeatureKind::Velocity, 0, 12, 15, 0, 0.75f}};
  };
  std::vector<CookedFeatureBlock> want_blocks = blocks();
  const NormalizedFeatures want = normalizeFeatures(packed, columns, stride, want_blocks);
  for (int jobs : {1, 2, 3, 27, 40}) {
    std::vector<CookedFeatureBlock> got_blocks = blocks();
    const NormalizedFeatures got = normalizeFeatureRows(rows, columns, stride, got_blocks, jobs);
    ASSERT_EQ(got.features.size(), want.features.size()) << jobs;
    EXPECT_EQ(std::memcmp(got.features.data(), want.features.data(),
                          want.features.size() * sizeof(float)),
              0)
        << jobs;
    EXPECT_EQ(got.offset, want.offset) << jobs;
    EXPECT_EQ(got.scale, want.scale) << jobs;
    for (size_t b = 0; b < want_blocks.size(); ++b)
      EXPECT_EQ(got_blocks[b].std, want_blocks[b].std);
    for (int f = 0; f < frames; ++f) EXPECT_EQ(got.features[size_t(f) * stride + columns], 0.0f);
  }
  EXPECT_NE(errorText([&] {
              auto b = blocks();
              normalizeFeatureRows({}, columns, stride, b, 2);
            }).find("no frames"),
            std::string::npos);
}

// ---- ranges and tags -------------------------------------------------------------------------

TEST(CookRanges, SubRangesTagAndCutClips) {
  ClipTagging a{"a", 0, 100, {"locomotion"}, {{10, 20, {"jump"}, false}, {50, 10, {}, true}}};
  ClipTagging b{"b", 100, 30, {"idle"}, {}};
  ClipTagging c{"c", 130, 15, {}, {}};
  const MatchableRanges r = buildMatchableRanges({a, b, c}, 20);
  EXPECT_EQ(r.tag_names, (std::vector<std::string>{"locomotion", "jump", "idle"}));
  EXPECT_EQ(r.clip_tag_masks, (std::vector<uint64_t>{1, 4, 0}));
  const std::vector<CookedRange> want = {
      {0, 10, 1}, {10, 20, 3}, {30, 20, 1}, {60, 20, 1}, {100, 10, 4}};
  ASSERT_EQ(r.ranges.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.ranges[i].first_frame, want[i].first_frame) << i;
    EXPECT_EQ(r.ranges[i].frame_count, want[i].frame_count) << i;
    EXPECT_EQ(r.ranges[i].tag_mask, want[i].tag_mask) << i;
  }
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].text.find("clip c has no matchable frame"), std::string::npos);
  EXPECT_EQ(r.warnings[0].code, "no-matchable-frames");
}

// A frame's bias is its clip's plus every sub-range's that holds it; ranges split where it
// changes, and a clip without biases keeps its ranges whole.
TEST(CookRanges, BiasesAddUpAndSplitRanges) {
  ClipTagging a{"a", 0, 100, {}, {{10, 20, {}, false, -0.5}, {20, 20, {"turn"}, false, 0.25}}, 0.5};
  ClipTagging b{"b", 100, 50, {}, {}, 0};
  const MatchableRanges r = buildMatchableRanges({a, b}, 20);
  struct Want {
    uint32_t first, count;
    uint64_t mask;
    float bias;
  };
  const std::vector<Want> want = {{0, 10, 0, 0.5f},   {10, 10, 0, 0.f},  {20, 10, 1, 0.25f},
                                  {30, 10, 1, 0.75f}, {40, 40, 0, 0.5f}, {100, 30, 0, 0.f}};
  ASSERT_EQ(r.ranges.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.ranges[i].first_frame, want[i].first) << i;
    EXPECT_EQ(r.ranges[i].frame_count, want[i].count) << i;
    EXPECT_EQ(r.ranges[i].tag_mask, want[i].mask) << i;
    EXPECT_EQ(r.ranges[i].bias, want[i].bias) << i;
  }
  ClipTagging huge{"huge", 0, 100, {}, {{0, 10, {}, false, 3e38}}, 3e38};
  const std::string e = errorText([&] { buildMatchableRanges({huge}, 20); });
  EXPECT_NE(e.find("clip huge: the cost bias of frames [0, 10)"), std::string::npos) << e;
}

// "end" runs a range to the clip's last frame, whatever the clip's length.
TEST(CookRanges, ARangeToTheEndEndsWithTheClip) {
  SubRangeSpec tail{70, 0, {"tail"}, false};
  tail.to_end = true;
  ClipTagging a{"a", 0, 100, {}, {tail}};
  const MatchableRanges r = buildMatchableRanges({a}, 0);
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.ranges[1].first_frame, 70u);
  EXPECT_EQ(r.ranges[1].frame_count, 30u);
  EXPECT_EQ(r.ranges[1].tag_mask, 1u);
}

TEST(CookRanges, RangeOutsideTheClipAndTooManyTagsAreErrors) {
  ClipTagging a{"walk", 0, 100, {}, {{90, 20, {"x"}, false}}};
  const std::string e = errorText([&] { buildMatchableRanges({a}, 20); });
  EXPECT_NE(e.find("clip walk"), std::string::npos) << e;
  EXPECT_NE(e.find("[90, 110)"), std::string::npos) << e;
  // In the manifest's terms, at the range's line: seconds when it gave seconds.
  SubRangeSpec late{300, 240, {"x"}, false};
  late.manifest_line = 14;
  late.first_seconds = 5.0;
  late.end_seconds = 9.0;
  ClipTagging six{"walk", 0, 390, {}, {late}, 0, "loco.toml", 60};
  EXPECT_EQ(errorText([&] { buildMatchableRanges({six}, 20); }),
            "loco.toml:14: clip walk: range seconds [5, 9] ends past the clip's end at 6.5 s (390 "
            "frames at 60 Hz); end it by 6.5 or write seconds = [5, \"end\"]");
  six.ranges[0].first_frame = 400;
  six.ranges[0].first_seconds = 400 / 60.0;
  six.ranges[0].to_end = true;
  EXPECT_NE(errorText([&] {
              buildMatchableRanges({six}, 20);
            }).find("starts at or past the clip's end at 6.5 s"),
            std::string::npos);
  ClipTagging frames{"walk", 0, 100, {}, {{90, 20, {"x"}, false}}, 0, "loco.toml", 60};
  frames.ranges[0].manifest_line = 9;
  EXPECT_EQ(errorText([&] { buildMatchableRanges({frames}, 20); }),
            "loco.toml:9: clip walk: range frames [90, 110) does not lie inside the clip's 100 "
            "frames (clip-local, at the database rate); end it by 100 or write frames = [90, "
            "\"end\"]");
  ClipTagging many{"many", 0, 100, {}, {}};
  for (int t = 0; t < 65; ++t) many.tags.push_back("t" + std::to_string(t));
  EXPECT_NE(errorText([&] { buildMatchableRanges({many}, 20); }).find("65th"), std::string::npos);
}

// ---- bounds ----------------------------------------------------------------------------------

TEST(CookBounds, BoxesHoldTheirRowsAndTouchThem) {
  const int stride = 4, frames = 40;
  std::vector<float> features(frames * stride);
  for (int i = 0; i < frames * stride; ++i) features[i] = std::sin(0.7f * i) * (i % 5);
  for (int size : {16, 64}) {
    const FeatureBounds b = buildFeatureBounds(features, stride, size);
    for (int jobs : {2, 3, 8}) {  // runs of boxes, more threads than boxes, a short last box
      const FeatureBounds t = buildFeatureBounds(features, stride, size, {}, jobs);
      EXPECT_EQ(t.min, b.min) << jobs;
      EXPECT_EQ(t.max, b.max) << jobs;
    }
    const int boxes = (frames + size - 1) / size;
    ASSERT_EQ(b.min.size(), static_cast<size_t>(boxes * stride));
    for (int box = 0; box < boxes; ++box)
      for (int k = 0; k < stride; ++k) {
        float lo = 1e30f, hi = -1e30f;
        for (int f = box * size; f < std::min(frames, (box + 1) * size); ++f) {
          lo = std::min(lo, features[f * stride + k]);
          hi = std::max(hi, features[f * stride + k]);
        }
        EXPECT_EQ(b.min[box * stride + k], lo);
        EXPECT_EQ(b.max[box * stride + k], hi);
      }
  }
}

// A box spans its matchable frames only: frames no range holds (a clip's unmatchable tail, far
// from the rest) do not widen it; a box without a matchable frame spans all of its own.
TEST(CookBounds, BoxesSpanMatchableFramesOnly) {
  const int stride = 4, frames = 40, size = 8;
  std::vector<float> features(frames * stride);
  for (int f = 0; f < frames; ++f)
    for (int k = 0; k < stride; ++k) features[f * stride + k] = float(f) + 0.25f * float(k);
  // Ranges [2, 10) and [12, 14): frames 0-1, 10-11 and 14-39 are unmatchable.
  const std::vector<CookedRange> ranges = {{2, 8, 0, 0}, {12, 2, 0, 0}};
  const std::vector<uint8_t> matchable = matchableFrames(ranges, frames);
  ASSERT_EQ(matchable.size(), size_t(frames));
  EXPECT_EQ(std::count(matchable.begin(), matchable.end(), uint8_t(1)), 10);
  EXPECT_EQ(matchable[1], 0);
  EXPECT_EQ(matchable[2], 1);
  EXPECT_EQ(matchable[13], 1);
  EXPECT_EQ(matchable[14], 0);
  const FeatureBounds b = buildFeatureBounds(features, stride, size, matchable);
  for (int jobs : {2, 5, 8}) {
    const FeatureBounds t = buildFeatureBounds(features, stride, size, matchable, jobs);
    EXPECT_EQ(t.min, b.min) << jobs;
    EXPECT_EQ(t.max, b.max) << jobs;
  }
  // Box 0 (frames 0-7): frames 2 to 7. Box 1 (8-15): 8, 9, 12 and 13. Boxes 2 to 4 (16-39)
  // hold no matchable frame: all of their own.
  const float first[5] = {2, 8, 16, 24, 32}, last[5] = {7, 13, 23, 31, 39};
  for (int box = 0; box < 5; ++box)
    for (int k = 0; k < stride; ++k) {
      EXPECT_EQ(b.min[box * stride + k], first[box] + 0.25f * float(k)) << box;
      EXPECT_EQ(b.max[box * stride + k], last[box] + 0.25f * float(k)) << box;
    }
  // Without `matchable`, every frame counts.
  const FeatureBounds all = buildFeatureBounds(features, stride, size);
  EXPECT_EQ(all.min[0], 0.f);
  EXPECT_EQ(all.max[stride], 15.f);
}

}  // namespace
}  // namespace mmdb::cook
