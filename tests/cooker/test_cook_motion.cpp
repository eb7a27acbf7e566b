// Root motion, stripping, velocities, contacts and features of synthetic clips whose answers are
// known in closed form: a straight walk and a walk around a circle.
#include "cook/clip_stages.h"
#include "cook/features.h"
#include "cook/pose_math.h"
#include "cook/root_motion.h"
#include "cook/skeleton_presets.h"
#include "core/errors.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mmdb::cook {
namespace {

constexpr double kRate = 60;
constexpr int kJoints = 6;  // Hips, Spine2, LeftFoot, LeftToeBase, RightFoot, RightToeBase
const glm::vec3 kToeOffset(0, -0.05f, 0.1f);

RawClip emptyClip(int frames) {
  RawClip c;
  c.name = "synthetic";
  c.source_path = "synthetic.bvh";
  c.skeleton.names = {"Hips", "Spine2", "LeftFoot", "LeftToeBase", "RightFoot", "RightToeBase"};
  c.skeleton.parents = {-1, 0, 0, 2, 0, 4};
  c.skeleton.offsets = {{0, 0.9f, 0}, {0, 0.3f, 0},      {0.1f, -0.8f, 0},
                        kToeOffset,   {-0.1f, -0.8f, 0}, kToeOffset};
  c.skeleton.bind_rotations.assign(kJoints, glm::quat(1, 0, 0, 0));
  c.frame_rate = kRate;
  c.frame_count = frames;
  c.rotations.assign(frames * kJoints, glm::quat(1, 0, 0, 0));
  c.translations.resize(frames * kJoints);
  for (int f = 0; f < frames; ++f)
    for (int j = 0; j < kJoints; ++j) c.translations[f * kJoints + j] = c.skeleton.offsets[j];
  return c;
}

SkeletonRoles roles(const RawClip& c) { return resolveRoles(c.skeleton, {}, c.name); }

// ---- straight walk ---------------------------------------------------------------------------
// Hips move along +Z at v. Each foot stands still for 30 frames, then swings 30 frames at 2v:
// left stands on frames 60k .. 60k+30, right half a cycle later.
constexpr float kSpeed = 1.2f;
constexpr int kWalkFrames = 241;

float footZ(int frame) {
  const int k = frame / 60, phase = frame % 60;
  const float base = kSpeed * k;
  return phase <= 30 ? base : base + 2 * kSpeed * (phase - 30) / 60.0f;
}

RawClip straightWalk() {
  RawClip c = emptyClip(kWalkFrames);
  for (int f = 0; f < kWalkFrames; ++f) {
    const float hip_z = kSpeed * f / 60.0f;
    glm::vec3* t = &c.translations[f * kJoints];
    t[0] = {0, 0.9f, hip_z};
    t[2] = {0.1f, -0.8f, footZ(f) - hip_z};
    t[4] = {-0.1f, -0.8f, footZ(f + 30) - 0.5f * kSpeed - hip_z};
  }
  return c;
}

TEST(CookMotion, StraightWalkRootFollowsTheHipsExactly) {
  const RawClip clip = straightWalk();
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  ASSERT_EQ(m.root.size(), static_cast<size_t>(kWalkFrames));
  for (int f = 0; f < kWalkFrames; ++f) {
    const CookedRootFrame& r = m.root[f];
    // Savitzky-Golay keeps a straight line, ends included.
    EXPECT_NEAR(r.position.x, 0, 1e-5) << f;
    EXPECT_EQ(r.position.y, 0) << f;
    EXPECT_NEAR(r.position.z, kSpeed * f / 60.0, 2e-5) << f;
    EXPECT_EQ(r.rotation, glm::quat(1, 0, 0, 0)) << f;
    EXPECT_NEAR(r.velocity.z, kSpeed, 2e-4) << f;
    EXPECT_NEAR(r.velocity.x, 0, 2e-4) << f;
    EXPECT_EQ(r.angular_velocity, glm::vec3(0)) << f;
  }
}

TEST(CookMotion, StraightWalkIsStrippedToPlayInPlace) {
  const RawClip clip = straightWalk();
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  for (int f = 0; f < kWalkFrames; ++f) {
    EXPECT_NEAR(m.clip.translations[f * kJoints].z, 0, 2e-5) << f;
    EXPECT_NEAR(m.clip.translations[f * kJoints].y, 0.9f, 1e-6) << f;
    // The hips no longer move locally.
    EXPECT_NEAR(glm::length(m.velocities[f * kJoints]), 0, 3e-3) << f;
  }
}

TEST(CookMotion, StraightWalkFeatures) {
  const RawClip clip = straightWalk();
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  for (int f = 0; f < kWalkFrames; ++f) {
    const float* row = &m.features[f * kFeatureCount];
    const float hip_z = kSpeed * f / 60.0f;
    // Foot positions relative to the root.
    EXPECT_NEAR(row[0], 0.1f, 1e-5);
    EXPECT_NEAR(row[1], 0.1f, 1e-5);
    EXPECT_NEAR(row[2], footZ(f) - hip_z, 3e-5) << f;
    EXPECT_NEAR(row[3], -0.1f, 1e-5);
    EXPECT_NEAR(row[5], footZ(f + 30) - 0.5f * kSpeed - hip_z, 3e-5) << f;
    // Foot velocities: 0 standing, 2v swinging (away from the phase changes).
    const int phase = f % 60;
    if (f > 0 && f < kWalkFrames - 1 && phase != 0 && phase != 30) {
      EXPECT_NEAR(row[8], phase < 30 ? 0 : 2 * kSpeed, 3e-3) << f;
    }
    // Hip velocity is the root's.
    EXPECT_NEAR(row[12], 0, 1e-4);
    EXPECT_NEAR(row[14], kSpeed, 3e-3) << f;
    // Trajectory: (0, v t) at 1/3, 2/3, 1 s, clamped to the last frame near the end.
    for (int s = 0; s < 3; ++s) {
      const int ahead = std::min(f + 20 * (s + 1), kWalkFrames - 1) - f;
      EXPECT_NEAR(row[15 + 2 * s], 0, 1e-5) << f;
      EXPECT_NEAR(row[16 + 2 * s], kSpeed * ahead / 60.0f, 3e-5) << f << " " << s;
      EXPECT_EQ(row[21 + 2 * s], 0) << f;
      EXPECT_EQ(row[22 + 2 * s], 1) << f;
    }
  }
}

TEST(CookMotion, StraightWalkContactsAlternate) {
  const RawClip clip = straightWalk();
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  // The raw test (toe speed < 0.15) is true on frames 60k+1 .. 60k+29 for the left toe (the two
  // phase-change frames have central differences of v); the 6-frame median extends each run by
  // one frame at its end: 60k+1 .. 60k+30. Right toe: half a cycle later.
  for (int f = 3; f < kWalkFrames - 3; ++f) {
    const int left = f % 60, right = (f + 30) % 60;
    EXPECT_EQ((m.contacts[f] & 1u) != 0, left >= 1 && left <= 30) << f;
    EXPECT_EQ((m.contacts[f] & 2u) != 0, right >= 1 && right <= 30) << f;
  }
}

// The left foot spins about the vertical at w = 20 rad/s with its toe r = 7.6 mm off the axis,
// while the body stands still: the toe's world speed is exactly w r = 0.152 m/s, just above the
// 0.15 m/s threshold, so it is never in contact. A central difference of its world positions
// would read the chord, r sin(w dt) / dt = 0.1492 m/s, and call it in contact on every frame;
// the contacts take the speed from forward kinematics of the velocities, as the reference does.
TEST(CookMotion, ContactsUseForwardKinematicsVelocities) {
  constexpr float kSpin = 20.0f, kRadius = 0.0076f;
  RawClip clip = emptyClip(120);
  clip.skeleton.offsets[3] = {kRadius, 0, 0};
  for (int f = 0; f < clip.frame_count; ++f) {
    clip.rotations[f * kJoints + 2] = glm::angleAxis(kSpin * float(f / kRate), glm::vec3(0, 1, 0));
    clip.translations[f * kJoints + 3] = clip.skeleton.offsets[3];
  }
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  ASSERT_EQ(m.contacts.size(), 120u);
  for (int f = 0; f < clip.frame_count; ++f) {
    EXPECT_EQ(m.contacts[f] & 1u, 0u) << "left toe, frame " << f;
    EXPECT_EQ(m.contacts[f] & 2u, 2u) << "right toe, frame " << f;
  }
  // The chord speed really is under the threshold: the two methods disagree on this clip.
  EXPECT_LT(kRadius * std::sin(kSpin / kRate) * kRate, 0.15);
  EXPECT_GT(kRadius * kSpin, 0.15);
}

TEST(CookMotion, FacingCheckPrefersTheAxisThatFollowsTravel) {
  const RawClip clip = straightWalk();
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  EXPECT_EQ(m.facing.moving_frames, kWalkFrames);
  EXPECT_NEAR(m.facing.configured_sum, kWalkFrames, 1e-3);
  EXPECT_NEAR(m.facing.candidate_sum[4], kWalkFrames, 1e-3);   // +Z
  EXPECT_NEAR(m.facing.candidate_sum[5], -kWalkFrames, 1e-3);  // -Z
  EXPECT_NEAR(m.facing.candidate_sum[0], 0, 1e-3);             // +X is sideways
}

// ---- circle ----------------------------------------------------------------------------------
// The hips turn at w about +Y and move forward at w r along the facing: position
// (r (1 - cos wt), 0.9, r sin wt), yaw w t. The feet hang from the hips.
constexpr double kOmega = 2.0, kRadius = 0.8;
constexpr int kCircleFrames = 481;

RawClip circleWalk() {
  RawClip c = emptyClip(kCircleFrames);
  for (int f = 0; f < kCircleFrames; ++f) {
    const double a = kOmega * f / kRate;
    c.translations[f * kJoints] =
        glm::vec3(kRadius * (1 - std::cos(a)), 0.9, kRadius * std::sin(a));
    c.rotations[f * kJoints] = yawRotation(static_cast<float>(a));
  }
  return c;
}

// Interior response of the cubic Savitzky-Golay filter of 2m+1 frames to cos(w t), from the
// closed-form weights c_k = (3(3m^2+3m-1) - 15k^2) / ((4m^2-1)(2m+3)).
double savitzkyGolayGain(int m, double omega_step) {
  double h = 0;
  for (int k = -m; k <= m; ++k)
    h += (3.0 * (3 * m * m + 3 * m - 1) - 15.0 * k * k) / ((4.0 * m * m - 1) * (2 * m + 3)) *
         std::cos(omega_step * k);
  return h;
}

TEST(CookMotion, CircleRootTurnsAtTheTurnRate) {
  const RawClip clip = circleWalk();
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  const double step = kOmega / kRate, h = savitzkyGolayGain(15, step);
  const double r = kRadius * h;  // the smoothed circle is a little smaller
  for (int f = 61; f < kCircleFrames - 61; ++f) {
    const double a = kOmega * f / kRate;
    const CookedRootFrame& root = m.root[f];
    EXPECT_NEAR(root.position.x, kRadius - r * std::cos(a), 3e-6) << f;
    EXPECT_NEAR(root.position.z, r * std::sin(a), 3e-6) << f;
    const glm::vec3 facing = root.rotation * glm::vec3(0, 0, 1);
    EXPECT_NEAR(facing.x, std::sin(a), 2e-6) << f;
    EXPECT_NEAR(facing.z, std::cos(a), 2e-6) << f;
    EXPECT_NEAR(glm::length(root.rotation), 1.0f, 1e-7);
    EXPECT_EQ(root.rotation.x, 0);
    EXPECT_EQ(root.rotation.z, 0);
    EXPECT_NEAR(root.angular_velocity.y, kOmega, 1e-4) << f;
    EXPECT_NEAR(root.angular_velocity.x, 0, 1e-7);
    // Central difference of a circle: chord over two steps.
    EXPECT_NEAR(glm::length(root.velocity), r * std::sin(step) / (1 / kRate), 3e-5) << f;
  }
}

TEST(CookMotion, CircleFeaturesLieOnTheChord) {
  const RawClip clip = circleWalk();
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  const double step = kOmega / kRate, h = savitzkyGolayGain(15, step), r = kRadius * h;
  for (int f = 31; f < kCircleFrames - 31 - 60; ++f) {
    const float* row = &m.features[f * kFeatureCount];
    for (int s = 0; s < 3; ++s) {
      const double a = kOmega * (s + 1) / 3.0;  // turned by w t after t = 1/3, 2/3, 1 s
      EXPECT_NEAR(row[15 + 2 * s], r * (1 - std::cos(a)), 5e-6) << f << " " << s;
      EXPECT_NEAR(row[16 + 2 * s], r * std::sin(a), 5e-6) << f << " " << s;
      EXPECT_NEAR(row[21 + 2 * s], std::sin(a), 5e-6) << f << " " << s;
      EXPECT_NEAR(row[22 + 2 * s], std::cos(a), 5e-6) << f << " " << s;
    }
    // The hips sit r (1 - h) outside the smoothed circle and ride it: the root's chord speed
    // plus the turn acting on that lever.
    const double hip_speed = r * std::sin(step) * kRate + kOmega * kRadius * (1 - h);
    EXPECT_NEAR(row[12], 0, 3e-5) << f;
    EXPECT_NEAR(row[14], hip_speed, 3e-5) << f;
  }
}

// The root motion poses the root position joint's chain alone: the same floats as the whole pose.
TEST(CookMotion, OneJointsWorldPositionsAreThoseOfTheWholePose) {
  const RawClip clip = circleWalk();
  const std::vector<glm::vec3> world = worldPositions(clip);
  for (int j = 0; j < kJoints; ++j) {
    const std::vector<glm::vec3> one = worldPositionsOfJoint(clip, j);
    ASSERT_EQ(one.size(), size_t(kCircleFrames));
    for (int f = 0; f < kCircleFrames; ++f)
      ASSERT_TRUE(one[size_t(f)] == world[size_t(f * kJoints + j)])
          << "joint " << j << " frame " << f;
  }
}

TEST(CookMotion, StrippingThenRootTransformGivesTheWorldBack) {
  const RawClip clip = circleWalk();
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  const std::vector<glm::vec3> world = worldPositions(clip);
  std::vector<glm::quat> r(kJoints);
  std::vector<glm::vec3> p(kJoints);
  for (int f = 0; f < kCircleFrames; f += 7) {
    forwardKinematics(m.clip.skeleton.parents, &m.clip.rotations[f * kJoints],
                      &m.clip.translations[f * kJoints], r.data(), p.data(), m.root[f].rotation,
                      m.root[f].position);
    for (int j = 0; j < kJoints; ++j)
      EXPECT_NEAR(glm::length(p[j] - world[f * kJoints + j]), 0, 1e-5) << f << " " << j;
  }
}

// ---- short clips -----------------------------------------------------------------------------

// The same walk with a root bone above the hips: `moving` false keeps it at the world origin (as
// Bandai's joint_Root), true makes it follow the hips on the ground and turn (as engines export
// one). Every joint keeps its world pose.
RawClip withRootBone(const RawClip& hips_first, bool moving) {
  RawClip c = hips_first;
  c.skeleton.names.insert(c.skeleton.names.begin(), "Root");
  c.skeleton.parents = {-1, 0, 1, 1, 3, 1, 5};
  c.skeleton.offsets.insert(c.skeleton.offsets.begin(), glm::vec3(0));
  c.skeleton.bind_rotations.insert(c.skeleton.bind_rotations.begin(), glm::quat(1, 0, 0, 0));
  c.rotations.clear();
  c.translations.clear();
  for (int f = 0; f < c.frame_count; ++f) {
    const glm::vec3 hips = hips_first.translations[f * kJoints];
    const glm::quat root_r = moving ? glm::angleAxis(0.3f * std::sin(f / 20.0f), glm::vec3(0, 1, 0))
                                    : glm::quat(1, 0, 0, 0);
    const glm::vec3 root_t = moving ? glm::vec3(hips.x + 0.05f, 0, hips.z - 0.1f) : glm::vec3(0);
    c.rotations.push_back(root_r);
    c.translations.push_back(root_t);
    for (int j = 0; j < kJoints; ++j) {
      glm::quat r = hips_first.rotations[f * kJoints + j];
      glm::vec3 t = hips_first.translations[f * kJoints + j];
      if (j == 0) {  // the hips, now below the root
        r = glm::inverse(root_r) * r;
        t = glm::inverse(root_r) * (t - root_t);
      }
      c.rotations.push_back(r);
      c.translations.push_back(t);
    }
  }
  return c;
}

// A root bone plays the simulation root in the pose streams: joint 0 is the identity, every other
// joint keeps its pose relative to the simulation root, and the features and contacts are the
// hips-first skeleton's.
TEST(CookMotion, ARootBoneAboveTheHipsPlaysTheSimulationRoot) {
  const RawClip plain = circleWalk();
  const ClipMotion expected =
      cookClipMotion(plain, roles(plain), clipStageSettings(CookSettings{}));
  for (const bool moving : {false, true}) {
    SCOPED_TRACE(moving ? "a root bone that follows the character" : "a root bone at the origin");
    const RawClip clip = withRootBone(plain, moving);
    const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
    ASSERT_EQ(m.features.size(), expected.features.size());
    for (size_t i = 0; i < m.features.size(); ++i)
      // Velocities are differentiated in the stripped frame, whose lever arms differ: they agree
      // to the central differences' O(dt^2), a few mm/s here.
      ASSERT_NEAR(m.features[i], expected.features[i], 1e-2) << "feature " << i % kFeatureCount;
    EXPECT_EQ(m.contacts, expected.contacts);
    const int n = kJoints + 1;
    for (int f = 0; f < plain.frame_count; ++f) {
      EXPECT_EQ(m.clip.rotations[f * n], glm::quat(1, 0, 0, 0));
      EXPECT_EQ(m.clip.translations[f * n], glm::vec3(0));
      EXPECT_EQ(m.velocities[f * n], glm::vec3(0));
      std::vector<glm::quat> wr(n), er(kJoints);
      std::vector<glm::vec3> wp(n), ep(kJoints);
      forwardKinematics(clip.skeleton.parents, &m.clip.rotations[f * n],
                        &m.clip.translations[f * n], wr.data(), wp.data());
      forwardKinematics(plain.skeleton.parents, &expected.clip.rotations[f * kJoints],
                        &expected.clip.translations[f * kJoints], er.data(), ep.data());
      for (int j = 0; j < kJoints; ++j)
        ASSERT_LT(glm::length(wp[j + 1] - ep[j]), 1e-4f) << "frame " << f << " joint " << j;
      // The hips' local velocity is the hips-first skeleton's.
      ASSERT_LT(glm::length(m.velocities[f * n + 1] - expected.velocities[f * kJoints]), 2e-3f)
          << "frame " << f;
    }
  }
}

TEST(CookMotion, ShortClipShrinksWindowsAndWarns) {
  RawClip clip = straightWalk();
  clip.frame_count = 20;
  clip.rotations.resize(20 * kJoints);
  clip.translations.resize(20 * kJoints);
  const ClipMotion m = cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
  ASSERT_EQ(m.warnings.size(), 2u);
  EXPECT_NE(m.warnings[0].text.find("root position window of 31 frames; using 19"),
            std::string::npos)
      << m.warnings[0].text;
  EXPECT_NE(m.warnings[1].text.find("facing window of 61"), std::string::npos);
  EXPECT_EQ(m.warnings[0].code, "filter-window-shortened");
  EXPECT_NEAR(m.root[10].position.z, kSpeed * 10 / 60.0, 2e-5);
}

TEST(CookMotion, SettingsBecomeFramesAtTheDatabaseRate) {
  CookSettings s;
  s.frame_rate = 30;
  const ClipStageSettings c = clipStageSettings(s);
  EXPECT_EQ(c.root_position_window, 15);
  EXPECT_EQ(c.facing_window, 31);
  EXPECT_EQ(c.contact_median_frames, 3);
  EXPECT_EQ(c.trailing_unmatchable_frames, 10);
  EXPECT_EQ(c.trajectory_frames, (std::array<int, 3>{10, 20, 30}));
  const ClipStageSettings d = clipStageSettings(CookSettings{});
  EXPECT_EQ(d.root_position_window, 31);
  EXPECT_EQ(d.facing_window, 61);
  EXPECT_EQ(d.contact_median_frames, 6);
  EXPECT_EQ(d.trailing_unmatchable_frames, 20);
  EXPECT_EQ(d.trajectory_frames, (std::array<int, 3>{20, 40, 60}));
}

}  // namespace
}  // namespace mmdb::cook

namespace mmdb::cook {
namespace {

TEST(CookMotion, ClipsTooShortForTheFilterAreErrorsNamingThem) {
  RawClip clip = straightWalk();
  clip.frame_count = 4;
  clip.rotations.resize(4 * kJoints);
  clip.translations.resize(4 * kJoints);
  try {
    cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("clip synthetic (synthetic.bvh) has 4 frames"),
              std::string::npos)
        << e.what();
  }
  clip = straightWalk();
  clip.frame_count = 6;
  clip.rotations.resize(6 * kJoints);
  clip.translations.resize(6 * kJoints);
  ClipStageSettings high_order = clipStageSettings(CookSettings{});
  high_order.order = 5;
  try {
    cookClipMotion(clip, roles(clip), high_order);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("order 5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mmdb::cook

namespace mmdb::cook {
namespace {

TEST(CookMotion, NonFiniteSourceValuesAreErrorsNamingClipAndFrame) {
  RawClip clip = straightWalk();
  clip.translations[100 * kJoints + 2].x = std::nanf("");  // the left foot at frame 100
  try {
    cookClipMotion(clip, roles(clip), clipStageSettings(CookSettings{}));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "clip synthetic (synthetic.bvh), frame 100 (clip-local, at 60 Hz), joint LeftFoot"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mmdb::cook
