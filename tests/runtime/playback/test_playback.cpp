// Pose sampling, inertialization and forward kinematics with known answers; every invalid field
// of each job is refused.
#include "synthetic_database.h"

#include <mmdb/database.h>
#include <mmdb/playback.h>

#include <gtest/gtest.h>

#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

using mmdb::Database;

// Angle of the rotation between two orientations (atan2: exact near zero, unlike acos).
float angleBetween(const glm::quat& a, const glm::quat& b) {
  const glm::quat d = glm::normalize(a) * glm::inverse(glm::normalize(b));
  return 2.f * std::atan2(glm::length(glm::vec3(d.x, d.y, d.z)), std::abs(d.w));
}

class Playback : public ::testing::Test {
 protected:
  void SetUp() override {
    mmdb::test::SyntheticSpec spec;
    spec.clips = 3;
    spec.frames_per_clip = 60;
    spec.joints = 4;
    cooked_ = mmdb::test::makeSyntheticDatabase(spec);
    bytes_ = mmdb::test::serializeAligned(cooked_);
    auto r = Database::fromMemory(bytes_.data(), bytes_.size());
    ASSERT_TRUE(r.ok()) << r.error().message();
    db_ = std::move(r.value());
    rotations_.resize(4);
    translations_.resize(4);
    velocities_.resize(4);
    angular_.resize(4);
  }
  mmdb::SamplePoseJob job(uint32_t clip, float time) {
    mmdb::SamplePoseJob j;
    j.database = &db_;
    j.clip = clip;
    j.time = time;
    j.rotations = rotations_;
    j.translations = translations_;
    j.velocities = velocities_;
    j.angular_velocities = angular_;
    return j;
  }
  mmdb::cook::CookedDatabase cooked_;
  mmdb::test::AlignedBytes bytes_;
  Database db_;
  std::vector<glm::quat> rotations_;
  std::vector<glm::vec3> translations_, velocities_, angular_;
};

TEST_F(Playback, SamplingAtAKeyGivesTheStoredPose) {
  ASSERT_TRUE(job(1, 10.f / 60).Run().ok());
  for (size_t j = 0; j < 4; ++j) {
    const size_t e = (60 + 10) * 4 + j;
    EXPECT_LT(angleBetween(rotations_[j], cooked_.local_rotations[e]), 1e-3f);
    EXPECT_NEAR(glm::length(translations_[j] - cooked_.local_translations[e]), 0.f, 1e-6f);
    EXPECT_NEAR(glm::length(velocities_[j] - cooked_.local_velocities[e]), 0.f, 1e-6f);
    EXPECT_NEAR(glm::length(angular_[j] - cooked_.local_angular_velocities[e]), 0.f, 1e-6f);
  }
}

TEST_F(Playback, SamplingBetweenKeysBlends) {
  ASSERT_TRUE(job(0, 20.25f / 60).Run().ok());
  for (size_t j = 0; j < 4; ++j) {
    const glm::quat a = cooked_.local_rotations[20 * 4 + j],
                    b = cooked_.local_rotations[21 * 4 + j];
    EXPECT_LT(angleBetween(rotations_[j], glm::slerp(a, b, 0.25f)), 1e-3f);
    const glm::vec3 ta = cooked_.local_translations[20 * 4 + j];
    const glm::vec3 tb = cooked_.local_translations[21 * 4 + j];
    EXPECT_NEAR(glm::length(translations_[j] - (ta + 0.25f * (tb - ta))), 0.f, 1e-5f);
  }
}

// A crowd stepping at the file's rate lands within float rounding of a key: within 1e-4 of one,
// the sample takes the key's own rotation (on the shorter arc from the key before), bit for bit;
// further away, slerp.
TEST_F(Playback, ATimeOnAKeyTakesTheKeysRotation) {
  const mmdb::Span<const mmdb::Float4> stored = db_.localRotations();
  const auto key = [&](size_t frame, size_t j) {
    const mmdb::Float4& q = stored[frame * 4 + j];
    return glm::quat(q.w, q.x, q.y, q.z);
  };
  ASSERT_TRUE(job(0, 20.00005f / 60).Run().ok());
  for (size_t j = 0; j < 4; ++j) EXPECT_EQ(rotations_[j], key(20, j)) << "joint " << j;
  ASSERT_TRUE(job(0, 19.99995f / 60).Run().ok());
  for (size_t j = 0; j < 4; ++j) {
    const glm::quat shorter = glm::dot(key(19, j), key(20, j)) < 0.f ? -key(20, j) : key(20, j);
    EXPECT_EQ(rotations_[j], shorter) << "joint " << j;
  }
  ASSERT_TRUE(job(0, 20.01f / 60).Run().ok());
  for (size_t j = 0; j < 4; ++j) {
    const float alpha = 20.01f / 60 * 60 - 20.f;
    EXPECT_LT(angleBetween(rotations_[j], glm::slerp(key(20, j), key(21, j), alpha)), 1e-5f);
  }
}

// Between keys rotations follow glm::slerp on the shorter arc, for any angle between the keys
// (here random keys, some a half turn apart, some on opposite hemispheres) and for a joint count
// that is not a multiple of the four joints computed at once.
TEST(PlaybackSlerp, BetweenKeysRotationsAreGlmSlerps) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 1;
  spec.frames_per_clip = 40;
  spec.joints = 7;
  mmdb::cook::CookedDatabase cooked = mmdb::test::makeSyntheticDatabase(spec);
  uint32_t state = 12345u;
  const auto uniform = [&state] {  // in [-1, 1)
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 23) - 1.f;
  };
  for (size_t e = 0; e < cooked.local_rotations.size(); ++e) {
    glm::quat q(uniform(), uniform(), uniform(), uniform());
    if (e % 5 == 0) q = glm::quat(1.f, 0.f, 0.f, 0.f);
    cooked.local_rotations[e] = glm::normalize(q);
  }
  // Nearly the same key, the same key, the same key negated and a half turn apart, at frames 1-4.
  for (size_t j = 0; j < 7; ++j) {
    const glm::quat k = cooked.local_rotations[j];
    cooked.local_rotations[7 + j] = glm::normalize(k * glm::angleAxis(1e-3f, glm::vec3(0, 1, 0)));
    cooked.local_rotations[14 + j] = cooked.local_rotations[7 + j];
    cooked.local_rotations[21 + j] = -cooked.local_rotations[14 + j];
    cooked.local_rotations[28 + j] =
        cooked.local_rotations[21 + j] * glm::angleAxis(3.14159f, glm::vec3(1, 0, 0));
  }
  const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(cooked);
  auto opened = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  const Database& db = opened.value();
  std::vector<glm::quat> rotations(7);
  std::vector<glm::vec3> translations(7);
  float worst = 0.f, worst_length = 0.f;
  for (uint32_t frame = 0; frame + 1 < 40; ++frame) {
    for (const float alpha : {0.002f, 0.25f, 0.5f, 0.75f, 0.998f}) {
      mmdb::SamplePoseJob job;
      job.database = &db;
      job.clip = 0;
      job.time = (float(frame) + alpha) / db.frameRate();
      job.rotations = rotations;
      job.translations = translations;
      ASSERT_TRUE(job.Run().ok());
      const float used = job.time * db.frameRate() - float(frame);
      for (size_t j = 0; j < 7; ++j) {
        const glm::quat x = cooked.local_rotations[frame * 7 + j];
        glm::quat y = cooked.local_rotations[(frame + 1) * 7 + j];
        if (glm::dot(x, y) < 0.f) y = -y;
        const glm::quat expected = glm::slerp(x, y, used);
        worst = std::fmax(worst, glm::length(glm::vec4(
                                     rotations[j].x - expected.x, rotations[j].y - expected.y,
                                     rotations[j].z - expected.z, rotations[j].w - expected.w)));
        worst_length = std::fmax(worst_length, std::fabs(glm::length(rotations[j]) - 1.f));
      }
    }
  }
  EXPECT_LT(worst, 1e-6f);
  EXPECT_LT(worst_length, 1e-6f);
}

TEST_F(Playback, SamplingNeverCrossesClipEnds) {
  // Past the end of clip 1: its last frame (119), not clip 2's first (120).
  ASSERT_TRUE(job(1, 100.f).Run().ok());
  EXPECT_LT(angleBetween(rotations_[2], cooked_.local_rotations[119 * 4 + 2]), 1e-3f);
  ASSERT_TRUE(job(1, 59.5f / 60).Run().ok());
  EXPECT_LT(angleBetween(rotations_[2], cooked_.local_rotations[119 * 4 + 2]), 1e-3f);
  // Before the start: its first frame.
  ASSERT_TRUE(job(2, -1.f).Run().ok());
  EXPECT_LT(angleBetween(rotations_[1], cooked_.local_rotations[120 * 4 + 1]), 1e-3f);
}

TEST_F(Playback, ClipTimeOfAGlobalFrame) {
  auto t = mmdb::clipTimeOfFrame(db_, 75);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.value().clip, 1u);
  EXPECT_FLOAT_EQ(t.value().time, 15.f / 60);
  EXPECT_FALSE(mmdb::clipTimeOfFrame(db_, 180).ok());
}

// A clock stepped at the frame rate lands on each key (its frame times float(1 / rate)), where
// time + dt alone drifts off them; one stepped at another rate keeps its pace.
TEST(ClipClock, SteppedAtTheFrameRateItStaysOnTheKeys) {
  constexpr float kRate = 60.f, kDt = 1.f / 60;
  float clock = 0.f, naive = 0.f, naive_drift = 0.f;
  for (int n = 1; n <= 1800; ++n) {  // 30 s
    clock = mmdb::advanceClipTime(clock, kDt, kRate);
    naive += kDt;
    ASSERT_EQ(clock, float(n) * (1.f / kRate)) << "step " << n;
    // As near its key as float seconds place it (1.2e-4 of a frame at 16 to 32 s), well within
    // the sampler's reach of a key.
    ASSERT_LE(std::fabs(clock * kRate - float(n)), 2e-4f) << "step " << n << ": off its key";
    naive_drift = std::fmax(naive_drift, std::fabs(naive * kRate - float(n)));
  }
  EXPECT_GT(naive_drift, 1e-3f) << "time + dt alone drifts further than the snap reaches";
}

TEST(ClipClock, SteppedAtAnotherRateItKeepsItsPace) {
  constexpr float kRate = 60.f, kDt = 1.f / 144;
  float clock = 0.f;
  for (int n = 1; n <= 1440; ++n) {  // 10 s
    const float next = mmdb::advanceClipTime(clock, kDt, kRate);
    ASSERT_LE(std::fabs(next - (clock + kDt)), mmdb::kClipTimeSnap / kRate) << "step " << n;
    clock = next;
  }
  EXPECT_NEAR(clock, 10.f, 1e-4f);
  // A clip time off every key by more than the snap moves by dt alone; a rate that is no rate
  // leaves the clock as time + dt.
  EXPECT_EQ(mmdb::advanceClipTime(0.5f / kRate, 1.f / kRate, kRate), 0.5f / kRate + 1.f / kRate);
  EXPECT_EQ(mmdb::advanceClipTime(0.25f, 0.25f, 0.f), 0.5f);
}

TEST_F(Playback, SampleJobRefusesEveryInvalidField) {
  EXPECT_TRUE(job(0, 0.f).Validate().ok());
  auto j = job(0, 0.f);
  j.database = nullptr;
  EXPECT_FALSE(j.Validate().ok());
  j = job(3, 0.f);
  EXPECT_FALSE(j.Validate().ok());
  j = job(0, NAN);
  EXPECT_FALSE(j.Run().ok());
  std::vector<glm::quat> short_rot(3);
  std::vector<glm::vec3> short_vec(3);
  j = job(0, 0.f);
  j.rotations = short_rot;
  EXPECT_FALSE(j.Run().ok());
  j = job(0, 0.f);
  j.translations = short_vec;
  EXPECT_FALSE(j.Run().ok());
  j = job(0, 0.f);
  j.velocities = short_vec;
  EXPECT_FALSE(j.Run().ok());
  j = job(0, 0.f);
  j.angular_velocities = short_vec;
  EXPECT_EQ(j.Run().code(), mmdb::ErrorCode::InvalidArgument);
  j = job(0, 0.f);
  j.velocities = {};
  j.angular_velocities = {};
  EXPECT_TRUE(j.Run().ok());  // velocities are optional
}

// --- inertialization ---------------------------------------------------------------------------

// A pose moving at constant velocity: x(t) = x0 + v t, q(t) = exp(w t) q0.
struct Motion {
  glm::quat q0;
  glm::vec3 w, x0, v;
  glm::quat rotation(float t) const {
    const float a = glm::length(w) * t;
    return a > 0 ? glm::angleAxis(a, glm::normalize(w)) * q0 : q0;
  }
  glm::vec3 position(float t) const { return x0 + v * t; }
};

struct Offsets {
  std::vector<glm::quat> q{glm::quat(1, 0, 0, 0)};
  std::vector<glm::vec3> w{glm::vec3(0)}, x{glm::vec3(0)}, v{glm::vec3(0)};
};

void transition(Offsets& o, const Motion& src, float src_t, const Motion& dst, float dst_t,
                float since_previous) {
  const glm::quat sq = src.rotation(src_t), dq = dst.rotation(dst_t);
  const glm::vec3 sx = src.position(src_t), dx = dst.position(dst_t);
  mmdb::InertializeTransitionJob job;
  job.time_since_previous = since_previous;
  job.source_rotations = mmdb::Span<const glm::quat>(&sq, 1);
  job.source_angular_velocities = mmdb::Span<const glm::vec3>(&src.w, 1);
  job.source_translations = mmdb::Span<const glm::vec3>(&sx, 1);
  job.source_velocities = mmdb::Span<const glm::vec3>(&src.v, 1);
  job.destination_rotations = mmdb::Span<const glm::quat>(&dq, 1);
  job.destination_angular_velocities = mmdb::Span<const glm::vec3>(&dst.w, 1);
  job.destination_translations = mmdb::Span<const glm::vec3>(&dx, 1);
  job.destination_velocities = mmdb::Span<const glm::vec3>(&dst.v, 1);
  job.offset_rotations = o.q;
  job.offset_angular_velocities = o.w;
  job.offset_translations = o.x;
  job.offset_velocities = o.v;
  ASSERT_TRUE(job.Run().ok());
}

// What is shown `t` seconds after the switch while playing `m` from `m_t0`.
void shown(const Offsets& o, const Motion& m, float m_t0, float t, glm::quat& q, glm::vec3& x) {
  const glm::quat in_q = m.rotation(m_t0 + t);
  const glm::vec3 in_x = m.position(m_t0 + t);
  mmdb::InertializeJob job;
  job.time_since_switch = t;
  job.rotations = mmdb::Span<const glm::quat>(&in_q, 1);
  job.translations = mmdb::Span<const glm::vec3>(&in_x, 1);
  job.offset_rotations = o.q;
  job.offset_angular_velocities = o.w;
  job.offset_translations = o.x;
  job.offset_velocities = o.v;
  job.out_rotations = mmdb::Span<glm::quat>(&q, 1);
  job.out_translations = mmdb::Span<glm::vec3>(&x, 1);
  ASSERT_TRUE(job.Run().ok());
}

const Motion kSource{glm::angleAxis(0.3f, glm::vec3(0, 1, 0)),
                     {0.f, 0.8f, 0.f},
                     {0.1f, 0.9f, 0.2f},
                     {1.f, 0.f, 0.5f}};
const Motion kDestination{glm::angleAxis(0.1f, glm::normalize(glm::vec3(1, 1, 0))),
                          {0.f, 0.5f, 0.1f},
                          {-0.2f, 0.95f, 0.f},
                          {0.f, 0.2f, 1.5f}};

TEST(Inertialization, KeepsPositionAndVelocityContinuousAtTheSwitch) {
  Offsets o;
  transition(o, kSource, 0.f, kDestination, 0.f, 0.f);
  glm::quat q0, q1;
  glm::vec3 x0, x1;
  shown(o, kDestination, 0.f, 0.f, q0, x0);
  // Position: what shows right after the switch is what showed before it.
  EXPECT_NEAR(glm::length(x0 - kSource.position(0)), 0.f, 1e-6f);
  EXPECT_LT(angleBetween(q0, kSource.rotation(0)), 1e-3f);
  // Velocity: the shown motion leaves at the source's velocity (one-sided second-order
  // difference, since the offset accelerates hard right after the switch).
  const float eps = 1e-3f;
  glm::quat q2;
  glm::vec3 x2;
  shown(o, kDestination, 0.f, eps, q1, x1);
  shown(o, kDestination, 0.f, 2 * eps, q2, x2);
  const glm::vec3 velocity = (-3.f * x0 + 4.f * x1 - x2) / (2 * eps);
  EXPECT_NEAR(glm::length(velocity - kSource.v), 0.f, 1e-2f) << velocity.x << " " << velocity.z;
  // Angular velocity, the same way on rotation vectors relative to the start.
  auto rotvec = [&](const glm::quat& q) {
    const glm::quat d = q * glm::inverse(q0);
    const glm::quat s = d.w < 0 ? -d : d;
    const glm::vec3 v(s.x, s.y, s.z);  // small angles: acos(w) would lose them in float
    const float sin_half = glm::length(v);
    return sin_half > 0 ? v * (2.f * std::atan2(sin_half, s.w) / sin_half) : glm::vec3(0.f);
  };
  const glm::vec3 angular = (4.f * rotvec(q1) - rotvec(q2)) / (2 * eps);
  EXPECT_NEAR(glm::length(angular - kSource.w), 0.f, 0.05f)
      << angular.x << " " << angular.y << " " << angular.z;
}

TEST(Inertialization, ConvergesToTheDestination) {
  Offsets o;
  transition(o, kSource, 0.f, kDestination, 0.f, 0.f);
  glm::quat q;
  glm::vec3 x;
  float previous_error = 1e9f;
  for (float t : {0.1f, 0.2f, 0.4f, 0.8f, 1.6f}) {
    shown(o, kDestination, 0.f, t, q, x);
    const float error = glm::length(x - kDestination.position(t));
    EXPECT_LT(error, previous_error + 1e-6f);
    previous_error = error;
  }
  EXPECT_LT(previous_error, 1e-3f);
  EXPECT_LT(angleBetween(q, kDestination.rotation(1.6f)), 2e-3f);
}

TEST(Inertialization, DecayMatchesTheClosedForm) {
  // x(t) = e^(-y t) (x0 + (v0 + x0 y) t), halflife 0.1 s.
  glm::vec3 x(1.f, -2.f, 0.5f), v(0.3f, 0.f, -1.f);
  const glm::vec3 x0 = x, v0 = v;
  const float y = 2.f * std::log(2.f) / 0.1f, t = 0.13f;
  mmdb::decayOffset(x, v, 0.1f, t);
  const glm::vec3 expected = std::exp(-y * t) * (x0 + (v0 + x0 * y) * t);
  EXPECT_NEAR(glm::length(x - expected), 0.f, 1e-5f);
  // Decaying in two steps equals one step (it is exact).
  glm::vec3 a = x0, va = v0;
  mmdb::decayOffset(a, va, 0.1f, 0.05f);
  mmdb::decayOffset(a, va, 0.1f, 0.08f);
  EXPECT_NEAR(glm::length(a - x), 0.f, 1e-5f);
  EXPECT_NEAR(glm::length(va - v), 0.f, 1e-5f);
}

// The split decay: the offset from rest with one half-life, the rate from no offset with another.
TEST(Inertialization, SplitDecayIsTheSumOfTheTwoClosedForms) {
  const glm::vec3 x0(1.f, -2.f, 0.5f), v0(0.3f, 0.f, -1.f);
  const float h = 0.2f, h_rate = 0.1f, t = 0.13f;
  const float y = 2.f * std::log(2.f) / h, y_rate = 2.f * std::log(2.f) / h_rate;
  glm::vec3 x = x0, v = v0;
  mmdb::decayOffsetSplit(x, v, h, h_rate, t);
  // x(t) = e^(-y t) (1 + y t) x0 + e^(-y' t) t v0; v(t) its derivative.
  const glm::vec3 expected_x =
      std::exp(-y * t) * (1.f + y * t) * x0 + std::exp(-y_rate * t) * t * v0;
  const glm::vec3 expected_v =
      -std::exp(-y * t) * y * y * t * x0 + std::exp(-y_rate * t) * (1.f - y_rate * t) * v0;
  EXPECT_NEAR(glm::length(x - expected_x), 0.f, 1e-5f);
  EXPECT_NEAR(glm::length(v - expected_v), 0.f, 1e-5f);
  // At the switch nothing changes: the transition stays continuous in position and rate.
  glm::vec3 x_now = x0, v_now = v0;
  mmdb::decayOffsetSplit(x_now, v_now, h, h_rate, 0.f);
  EXPECT_EQ(x_now, x0);
  EXPECT_EQ(v_now, v0);
  // Equal half-lives are decayOffset, bit for bit (reference() poses do not move).
  glm::vec3 a = x0, va = v0, b = x0, vb = v0;
  mmdb::decayOffsetSplit(a, va, 0.1f, 0.1f, t);
  mmdb::decayOffset(b, vb, 0.1f, t);
  EXPECT_EQ(a, b);
  EXPECT_EQ(va, vb);
  // An offset from rest moves at most y |x0| / e: half as fast with twice the half-life.
  const auto peakRate = [&](float halflife) {
    float peak = 0.f;
    for (int i = 0; i <= 2000; ++i) {
      glm::vec3 p = x0, r(0.f);
      mmdb::decayOffsetSplit(p, r, halflife, 0.1f, float(i) * 5e-4f);
      peak = std::fmax(peak, glm::length(r));
    }
    return peak;
  };
  const float bound = 2.f * std::log(2.f) / 0.1f * glm::length(x0) / std::exp(1.f);
  EXPECT_NEAR(peakRate(0.1f), bound, 1e-3f * bound);
  EXPECT_NEAR(peakRate(0.2f), bound / 2.f, 1e-3f * bound);
}

// A large rotation offset with a rate across its axis (a source twisting its arm, switched to an
// arm 150 degrees away): decayed apart, the offset turns at exactly the angular velocity it
// reports, and at the switch that is the rate given. One spring on the rotation vector (the
// reference's form) turns at another rate than it reports, far from the one given.
TEST(Inertialization, SplitRotationDecayTurnsAtTheRateItReports) {
  const glm::quat offset = glm::angleAxis(2.6f, glm::normalize(glm::vec3(0.3f, 1.f, 0.2f)));
  const glm::vec3 rate(20.f, 0.f, -5.f);  // rad/s, mostly across the offset's axis
  const auto turning = [&](float halflife, float rate_halflife, float t, glm::vec3& reported) {
    const float eps = 1e-3f;
    glm::vec3 w0 = rate, w1 = rate;
    const glm::quat a = mmdb::decayRotationSplit(offset, w0, halflife, rate_halflife, t);
    const glm::quat b = mmdb::decayRotationSplit(offset, w1, halflife, rate_halflife, t + eps);
    reported = w0;
    glm::quat d = b * glm::inverse(a);
    if (d.w < 0.f) d = -d;
    const float angle = 2.f * std::acos(std::fmin(d.w, 1.f));
    const glm::vec3 axis = glm::length(glm::vec3(d.x, d.y, d.z)) > 1e-9f
                               ? glm::normalize(glm::vec3(d.x, d.y, d.z))
                               : glm::vec3(0.f);
    return axis * (angle / eps);  // the angular velocity, by finite difference
  };
  glm::vec3 reported;
  const glm::vec3 at_switch = turning(0.15f, 0.1f, 0.f, reported);
  EXPECT_EQ(reported, rate);
  EXPECT_LT(glm::length(at_switch - rate), 0.02f * glm::length(rate));
  for (const float t : {0.02f, 0.05f, 0.1f, 0.2f}) {
    const glm::vec3 measured = turning(0.15f, 0.1f, t, reported);
    EXPECT_LT(glm::length(measured - reported), 0.02f * glm::length(rate) + 1e-3f) << t;
  }
  glm::vec3 w = rate;
  EXPECT_LT(angleBetween(mmdb::decayRotationSplit(offset, w, 0.15f, 0.1f, 0.f), offset), 1e-5f);
  // The reference's form: the same offset and rate, one half-life.
  const glm::vec3 summed = turning(0.1f, 0.1f, 0.f, reported);
  EXPECT_EQ(reported, rate);
  EXPECT_GT(glm::length(summed - rate), 0.3f * glm::length(rate));
}

// InertializeJob works on four joints at once, with a series for the sines and cosines of
// half-angles up to 90 degrees and the library's beyond: every joint of skeletons of 1 to 9
// joints (whole groups of four and the joints left over) against the per-joint closed forms,
// with offsets up to a half turn, rates up to 200 rad/s (which decay to half-angles past 90
// degrees), one spring and the split decay.
TEST(Inertialization, FourJointsAtOnceGiveThePerJointClosedForms) {
  uint32_t seed = 12345;
  const auto uniform = [&seed](float lo, float hi) {
    seed = seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * float(seed >> 8) / float(1u << 24);
  };
  const auto vector = [&](float length) {
    const glm::vec3 v(uniform(-1.f, 1.f), uniform(-1.f, 1.f), uniform(-1.f, 1.f));
    return glm::length(v) > 1e-3f ? glm::normalize(v) * length : glm::vec3(0.f, length, 0.f);
  };
  int far_lanes = 0;
  for (const float rate_halflife : {0.f, 0.05f}) {
    for (size_t n = 1; n <= 9; ++n) {
      for (int round = 0; round < 20; ++round) {
        std::vector<glm::quat> rotations(n), offsets(n), out(n);
        std::vector<glm::vec3> translations(n), angular(n), offset_x(n), offset_v(n), out_x(n);
        for (size_t j = 0; j < n; ++j) {
          rotations[j] = glm::angleAxis(uniform(0.f, 3.1f), vector(1.f));
          offsets[j] = glm::angleAxis(j == 0 ? 0.f : uniform(0.f, 3.14f), vector(1.f));
          angular[j] = vector(round % 4 == 0 ? uniform(0.f, 200.f) : uniform(0.f, 10.f));
          translations[j] = vector(uniform(0.f, 0.5f));
          offset_x[j] = vector(uniform(0.f, 0.3f));
          offset_v[j] = vector(uniform(0.f, 3.f));
        }
        mmdb::InertializeJob job;
        job.halflife = 0.15f;
        job.rate_halflife = rate_halflife;
        job.time_since_switch = uniform(0.f, 0.4f);
        job.rotations = rotations;
        job.translations = translations;
        job.offset_rotations = offsets;
        job.offset_angular_velocities = angular;
        job.offset_translations = offset_x;
        job.offset_velocities = offset_v;
        job.out_rotations = out;
        job.out_translations = out_x;
        ASSERT_TRUE(job.Run().ok());
        for (size_t j = 0; j < n; ++j) {
          glm::vec3 w = angular[j], x = offset_x[j], v = offset_v[j];
          const float h = job.halflife, t = job.time_since_switch;
          const float h_rate = rate_halflife > 0.f ? rate_halflife : h;
          const glm::quat offset = mmdb::decayRotationSplit(offsets[j], w, h, h_rate, t);
          const glm::vec3 decayed_rate =
              angular[j] * (t * std::exp(-2.f * 0.6931472f / h_rate * t));
          if (glm::length(decayed_rate) > 3.1416f) ++far_lanes;
          mmdb::decayOffsetSplit(x, v, h, h_rate, t);
          const glm::quat expected = glm::normalize(offset * rotations[j]);
          EXPECT_LT(angleBetween(out[j], expected), 2e-6f)
              << n << " joints, joint " << j << ", round " << round;
          EXPECT_NEAR(glm::length(out[j]), 1.f, 1e-6f);
          EXPECT_LT(glm::length(out_x[j] - (translations[j] + x)), 1e-6f);
        }
      }
    }
  }
  EXPECT_GT(far_lanes, 10);  // the library's sines and cosines were taken too
}

TEST(Inertialization, ASwitchDuringASwitchFoldsTheRemainingOffsetIn) {
  Offsets o;
  transition(o, kSource, 0.f, kDestination, 0.f, 0.f);
  // 0.05 s later, switch again to a third motion.
  const float tau = 0.05f;
  glm::quat before_q;
  glm::vec3 before_x;
  shown(o, kDestination, 0.f, tau, before_q, before_x);
  const Motion third{glm::angleAxis(-0.4f, glm::vec3(0, 1, 0)),
                     {0.f, -0.3f, 0.f},
                     {0.3f, 1.f, -0.1f},
                     {-1.f, 0.f, 0.f}};
  transition(o, kDestination, tau, third, 0.f, tau);
  glm::quat after_q;
  glm::vec3 after_x;
  shown(o, third, 0.f, 0.f, after_q, after_x);
  EXPECT_NEAR(glm::length(after_x - before_x), 0.f, 1e-5f);
  EXPECT_LT(angleBetween(after_q, before_q), 1e-3f);
  // And velocity: the shown motion before the switch vs after it.
  const float eps = 1e-3f;
  glm::quat q_minus, q_plus;
  glm::vec3 x_minus, x_plus;
  Offsets first;
  transition(first, kSource, 0.f, kDestination, 0.f, 0.f);
  shown(first, kDestination, 0.f, tau - eps, q_minus, x_minus);
  shown(o, third, 0.f, eps, q_plus, x_plus);
  const glm::vec3 v_before = (before_x - x_minus) / eps, v_after = (x_plus - after_x) / eps;
  EXPECT_NEAR(glm::length(v_before - v_after), 0.f, 5e-2f);
}

// The switch's offsets, computed four joints at once, agree with the per-joint formulas
// (decayRotationSplit and decayOffsetSplit carried onto the switch) on random offsets, poses and
// velocities, with and without a rate half-life of its own, for 7 joints (not a multiple of 4),
// some offsets near a half turn and some rotations with w < 0.
TEST(Inertialization, TransitionOffsetsMatchThePerJointFormulas) {
  uint32_t state = 99u;
  const auto uniform = [&state] {  // in [-1, 1)
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 23) - 1.f;
  };
  const auto vec = [&](float scale) { return scale * glm::vec3(uniform(), uniform(), uniform()); };
  const auto quat = [&] {
    return glm::normalize(glm::quat(uniform(), uniform(), uniform(), uniform()));
  };
  constexpr size_t kJoints = 7;
  for (int trial = 0; trial < 200; ++trial) {
    const bool split = trial % 2 == 1;
    const float halflife = 0.1f, rate_halflife = split ? 0.25f : 0.f;
    const float since = trial % 7 == 0 ? 0.f : 0.3f * (uniform() + 1.f);
    std::vector<glm::quat> sr(kJoints), dr(kJoints), q(kJoints);
    std::vector<glm::vec3> sw(kJoints), st(kJoints), sv(kJoints), dw(kJoints), dt(kJoints),
        dv(kJoints), w(kJoints), x(kJoints), v(kJoints);
    for (size_t j = 0; j < kJoints; ++j) {
      sr[j] = quat(), dr[j] = quat();
      sw[j] = vec(4.f), st[j] = vec(0.5f), sv[j] = vec(2.f);
      dw[j] = vec(4.f), dt[j] = vec(0.5f), dv[j] = vec(2.f);
      q[j] = j == 3 ? glm::angleAxis(3.14f, glm::normalize(vec(1.f))) : quat();
      w[j] = vec(3.f), x[j] = vec(0.2f), v[j] = vec(1.f);
    }
    // The per-joint formulas.
    std::vector<glm::quat> want_q(kJoints);
    std::vector<glm::vec3> want_w(kJoints), want_x(kJoints), want_v(kJoints);
    const float rate = split ? rate_halflife : halflife;
    for (size_t j = 0; j < kJoints; ++j) {
      glm::vec3 angular = w[j];
      const glm::quat previous = mmdb::decayRotationSplit(q[j], angular, halflife, rate, since);
      glm::vec3 translation = x[j], velocity = v[j];
      mmdb::decayOffsetSplit(translation, velocity, halflife, rate, since);
      glm::quat offset = glm::normalize(previous * sr[j] * glm::inverse(dr[j]));
      if (offset.w < 0.f) offset = -offset;
      want_q[j] = offset;
      want_w[j] = (angular + previous * sw[j]) - offset * dw[j];
      want_x[j] = (st[j] + translation) - dt[j];
      want_v[j] = (sv[j] + velocity) - dv[j];
    }
    mmdb::InertializeTransitionJob job;
    job.halflife = halflife;
    job.rate_halflife = rate_halflife;
    job.time_since_previous = since;
    job.source_rotations = sr;
    job.source_angular_velocities = sw;
    job.source_translations = st;
    job.source_velocities = sv;
    job.destination_rotations = dr;
    job.destination_angular_velocities = dw;
    job.destination_translations = dt;
    job.destination_velocities = dv;
    job.offset_rotations = q;
    job.offset_angular_velocities = w;
    job.offset_translations = x;
    job.offset_velocities = v;
    ASSERT_TRUE(job.Run().ok());
    for (size_t j = 0; j < kJoints; ++j) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", joint " + std::to_string(j));
      EXPECT_GE(q[j].w, 0.f);
      EXPECT_LT(glm::length(glm::vec4(q[j].x - want_q[j].x, q[j].y - want_q[j].y,
                                      q[j].z - want_q[j].z, q[j].w - want_q[j].w)),
                2e-6f);
      EXPECT_LT(glm::length(w[j] - want_w[j]), 2e-5f);
      EXPECT_LT(glm::length(x[j] - want_x[j]), 1e-6f);
      EXPECT_LT(glm::length(v[j] - want_v[j]), 1e-5f);
    }
  }
}

TEST(Inertialization, JobsRefuseInvalidFields) {
  Offsets o;
  const glm::quat q(1, 0, 0, 0);
  const glm::vec3 z(0);
  mmdb::InertializeTransitionJob t;
  t.source_rotations = mmdb::Span<const glm::quat>(&q, 1);
  t.source_angular_velocities = t.source_translations = t.source_velocities =
      mmdb::Span<const glm::vec3>(&z, 1);
  t.destination_rotations = t.source_rotations;
  t.destination_angular_velocities = t.destination_translations = t.destination_velocities =
      t.source_velocities;
  t.offset_rotations = o.q;
  t.offset_angular_velocities = o.w;
  t.offset_translations = o.x;
  t.offset_velocities = o.v;
  EXPECT_TRUE(t.Validate().ok());
  auto bad = t;
  bad.halflife = 0.f;
  EXPECT_FALSE(bad.Validate().ok());
  for (const float rate : {-1.f, NAN, INFINITY}) {
    bad = t;
    bad.rate_halflife = rate;
    EXPECT_FALSE(bad.Validate().ok()) << rate;
  }
  bad = t;
  bad.time_since_previous = -1.f;
  EXPECT_FALSE(bad.Validate().ok());
  bad = t;
  bad.source_velocities = {};
  EXPECT_FALSE(bad.Validate().ok());
  bad = t;
  bad.destination_rotations = {};
  EXPECT_FALSE(bad.Run().ok());

  glm::quat out_q;
  glm::vec3 out_x;
  mmdb::InertializeJob i;
  i.rotations = mmdb::Span<const glm::quat>(&q, 1);
  i.translations = mmdb::Span<const glm::vec3>(&z, 1);
  i.offset_rotations = o.q;
  i.offset_angular_velocities = o.w;
  i.offset_translations = o.x;
  i.offset_velocities = o.v;
  i.out_rotations = mmdb::Span<glm::quat>(&out_q, 1);
  i.out_translations = mmdb::Span<glm::vec3>(&out_x, 1);
  EXPECT_TRUE(i.Validate().ok());
  auto ibad = i;
  ibad.time_since_switch = NAN;
  EXPECT_FALSE(ibad.Validate().ok());
  ibad = i;
  ibad.halflife = -0.1f;
  EXPECT_FALSE(ibad.Validate().ok());
  ibad = i;
  ibad.rate_halflife = -0.1f;
  EXPECT_FALSE(ibad.Validate().ok());
  ibad = i;
  ibad.out_translations = {};
  EXPECT_FALSE(ibad.Run().ok());
  ibad = i;
  ibad.offset_velocities = {};
  EXPECT_FALSE(ibad.Run().ok());
}

// --- forward kinematics ------------------------------------------------------------------------

TEST(ForwardKinematics, ChainsParentTransforms) {
  const int32_t parents[] = {-1, 0, 1};
  const glm::quat quarter = glm::angleAxis(1.5707963f, glm::vec3(0, 1, 0));  // +Z -> +X
  const glm::quat local_q[] = {quarter, quarter, glm::quat(1, 0, 0, 0)};
  const glm::vec3 local_x[] = {{0, 1, 0}, {0, 0, 1}, {0, 0, 2}};
  glm::quat model_q[3];
  glm::vec3 model_x[3];
  mmdb::ForwardKinematicsJob job;
  job.parents = parents;
  job.local_rotations = local_q;
  job.local_translations = local_x;
  job.root_position = {10, 0, 0};
  job.model_rotations = model_q;
  job.model_translations = model_x;
  ASSERT_TRUE(job.Run().ok());
  EXPECT_NEAR(glm::length(model_x[0] - glm::vec3(10, 1, 0)), 0.f, 1e-6f);
  // Joint 1: (0, 0, 1) turned a quarter -> (1, 0, 0).
  EXPECT_NEAR(glm::length(model_x[1] - glm::vec3(11, 1, 0)), 0.f, 1e-6f);
  // Joint 2: (0, 0, 2) turned a half -> (0, 0, -2).
  EXPECT_NEAR(glm::length(model_x[2] - glm::vec3(11, 1, -2)), 0.f, 1e-5f);
  EXPECT_LT(angleBetween(model_q[2], quarter * quarter), 1e-3f);
  // Every invalid field.
  auto bad = job;
  const int32_t bad_parents[] = {-1, 2, 1};
  bad.parents = bad_parents;
  EXPECT_FALSE(bad.Run().ok());
  bad = job;
  bad.local_rotations = {};
  EXPECT_FALSE(bad.Validate().ok());
  bad = job;
  bad.local_translations = {};
  EXPECT_FALSE(bad.Validate().ok());
  bad = job;
  bad.model_rotations = {};
  EXPECT_FALSE(bad.Validate().ok());
  bad = job;
  bad.model_translations = {};
  EXPECT_FALSE(bad.Validate().ok());
}

}  // namespace
