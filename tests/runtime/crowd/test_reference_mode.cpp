// The reference controller's rules (CrowdSettings::start_playing, search_interval_seconds,
// settle_search_interval, search_at_clip_end, unrotated_angular_offsets, predict_before_update,
// show_next_frame, reference_arithmetic; referenceController() turns each on), each against a known
// answer that fails when its rule is taken out.
#include "synthetic_database.h"

#include <mmdb/crowd.h>
#include <mmdb/playback.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using mmdb::Crowd;
using mmdb::CrowdSettings;
using mmdb::Database;
using mmdb::SearchReason;

constexpr float kDt = 1.f / 60;

struct TestDatabase {
  TestDatabase() {
    mmdb::test::SyntheticSpec spec;
    spec.clips = 4;
    spec.frames_per_clip = 240;
    bytes = mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(spec));
    auto opened = Database::fromMemory(bytes.data(), bytes.size());
    EXPECT_TRUE(opened.ok()) << opened.error().message();
    if (opened.ok()) db = std::move(opened.value());
  }
  mmdb::test::AlignedBytes bytes;
  Database db;
};

const Database& database() {
  static TestDatabase t;
  return t.db;
}

// One character for `steps` steps, its stick at `velocity(step)` (facing +Z); each step's reason
// and the frame playing when it decided.
struct Decided {
  std::vector<SearchReason> reasons;
  std::vector<uint32_t> frames;  // the frame playing before the step
  std::vector<bool> playing;     // playing before the step
};

template <class Velocity>
Decided decide(const CrowdSettings& settings, int steps, Velocity velocity) {
  Decided out;
  auto made = Crowd::create(database(), 1, settings);
  EXPECT_TRUE(made.ok()) << made.error().message();
  if (!made.ok()) return out;
  Crowd& crowd = made.value();
  for (int step = 0; step < steps; ++step) {
    const mmdb::StickInput input{velocity(step), glm::vec3(0.f, 0.f, 1.f)};
    EXPECT_TRUE(crowd.setInput(0, input).ok());
    out.frames.push_back(crowd.characters()[0].current_frame);
    out.playing.push_back(crowd.characters()[0].playing);
    EXPECT_TRUE(crowd.step(kDt).ok());
    out.reasons.push_back(crowd.decisions()[0].reason);
  }
  return out;
}

glm::vec3 still(int) { return glm::vec3(0.f); }

std::vector<int> stepsWith(const Decided& r, SearchReason reason) {
  std::vector<int> found;
  for (size_t i = 0; i < r.reasons.size(); ++i)
    if (r.reasons[i] == reason) found.push_back(int(i));
  return found;
}

// The reference plays the first frame of the first range from the start and searches first when
// its timer runs out; without the rule the crowd searches at its first step.
TEST(ReferenceMode, StartsPlayingTheFirstRange) {
  const Decided reference = decide(CrowdSettings::referenceController(), 8, still);
  ASSERT_EQ(reference.playing.size(), 8u);
  EXPECT_TRUE(reference.playing[0]) << "playing before the first step";
  EXPECT_EQ(reference.frames[0], database().ranges()[0].first_frame);
  EXPECT_EQ(reference.reasons[0], SearchReason::None);
  EXPECT_TRUE(stepsWith(reference, SearchReason::Start).empty());

  CrowdSettings without = CrowdSettings::referenceController();
  without.start_playing = false;
  const Decided searched = decide(without, 8, still);
  EXPECT_FALSE(searched.playing[0]);
  EXPECT_EQ(searched.reasons[0], SearchReason::Start);
}

// The reference's 0.1 s timer counts down by 1/60 in float: after six steps 3.7e-9 is left, so it
// searches every 7th step at 60 Hz (the first at step 7). Whole-step ticks search every 6th.
TEST(ReferenceMode, ItsFloatTimerSearchesEverySeventhStep) {
  float timer = 0.1f;
  for (int i = 0; i < 6; ++i) timer -= kDt;
  EXPECT_GT(timer, 0.f) << "float's remainder after six steps";

  // Each periodic search comes 7 steps after the search before it, whatever its reason (a
  // range end restarts the timer too); the first 7 steps after the start.
  const auto gaps = [](const Decided& r) {
    std::vector<int> periodic_gaps;
    int last = 0;
    for (size_t i = 0; i < r.reasons.size(); ++i) {
      if (r.reasons[i] == SearchReason::None) continue;
      if (r.reasons[i] == SearchReason::Periodic) periodic_gaps.push_back(int(i) - last);
      last = int(i);
    }
    return periodic_gaps;
  };
  const Decided reference = decide(CrowdSettings::referenceController(), 60, still);
  EXPECT_EQ(stepsWith(reference, SearchReason::Periodic)[0], 7);
  const std::vector<int> sevens = gaps(reference);
  EXPECT_GE(sevens.size(), 6u);
  EXPECT_EQ(sevens, std::vector<int>(sevens.size(), 7));
  CrowdSettings ticks = CrowdSettings::referenceController();
  ticks.search_interval_seconds = 0.f;  // search_interval_ticks = 6
  const Decided whole = decide(ticks, 60, still);
  const std::vector<int> sixes = gaps(whole);
  EXPECT_GE(sixes.size(), 6u);
  EXPECT_EQ(sixes, std::vector<int>(sixes.size(), 6));
}

// The stick jumps (1.5 m/s in a step, 90 m/s^2) and settles in the next step. The reference forces
// a search on settling at most once per 0.1 s, the first 0.1 s after the start: the settles at
// steps 2 (too early) and 20 (two steps after the one at 18) force none; 18 and 31 do.
TEST(ReferenceMode, TheStickSettlingForcesASearchAtMostOncePerInterval) {
  const auto jumps = [](int step) {
    // Sharp changes at steps 1, 17, 19 and 30; each settles a step later.
    const bool fast = (step >= 1 && step < 17) || (step >= 19 && step < 30);
    return glm::vec3(0.f, 0.f, fast ? 1.5f : 0.f);
  };
  CrowdSettings settings = CrowdSettings::referenceController();
  settings.search_interval_seconds = 100.f;  // no periodic search in the way
  const Decided reference = decide(settings, 40, jumps);
  EXPECT_EQ(stepsWith(reference, SearchReason::Forced), (std::vector<int>{18, 31}));
  settings.settle_search_interval = 0.f;
  const Decided any = decide(settings, 40, jumps);
  EXPECT_EQ(stepsWith(any, SearchReason::Forced), (std::vector<int>{2, 18, 20, 31}));
}

// The reference's ranges are whole clips: it must move only from a clip's last frame. The first
// range here ends mid-clip (clip 0's matchable part is split by a tagged range) and every clip's
// last 20 frames are not matchable: the crowd plays on past both to the clip's last frame.
TEST(ReferenceMode, TheSearchThatMustMoveComesAtTheClipsEnd) {
  CrowdSettings settings = CrowdSettings::referenceController();
  settings.search_interval_seconds = 100.f;
  settings.search_when_settled = false;
  const mmdb::MatchRange first = database().ranges()[0];
  const mmdb::ClipInfo clip = database().clip(0);
  ASSERT_LT(first.first_frame + first.frame_count, clip.first_frame + clip.frame_count - 20)
      << "a range that ends before its clip";
  const Decided reference = decide(settings, 300, still);
  const std::vector<int> ends = stepsWith(reference, SearchReason::RangeEnd);
  ASSERT_FALSE(ends.empty());
  EXPECT_EQ(reference.frames[size_t(ends[0])], clip.first_frame + clip.frame_count - 1);

  settings.search_at_clip_end = false;
  const Decided ranges = decide(settings, 300, still);
  const std::vector<int> range_ends = stepsWith(ranges, SearchReason::RangeEnd);
  ASSERT_FALSE(range_ends.empty());
  EXPECT_EQ(ranges.frames[size_t(range_ends[0])], first.first_frame + first.frame_count - 1);
}

// A switch from a pose turned a quarter about +Y: the rates the offset starts with keep the shown
// angular velocity (the offset rotation applied to the destination's, (1,0,0) - (-1,0,0)), or, as
// the reference subtracts them, are the difference as it is ((1,0,0) - (0,0,1)).
TEST(ReferenceMode, AngularVelocityOffsetsAreSubtractedUnrotated) {
  const glm::quat source(1.f, 0.f, 0.f, 0.f);
  const glm::quat destination = glm::angleAxis(1.5707964f, glm::vec3(0.f, 1.f, 0.f));
  const glm::vec3 source_rate(1.f, 0.f, 0.f), destination_rate(0.f, 0.f, 1.f), zero(0.f);
  for (const bool unrotated : {false, true}) {
    glm::quat offset(1.f, 0.f, 0.f, 0.f);
    glm::vec3 offset_rate(0.f), offset_translation(0.f), offset_velocity(0.f);
    mmdb::InertializeTransitionJob job;
    job.source_rotations = {&source, 1};
    job.source_angular_velocities = {&source_rate, 1};
    job.source_translations = {&zero, 1};
    job.source_velocities = {&zero, 1};
    job.destination_rotations = {&destination, 1};
    job.destination_angular_velocities = {&destination_rate, 1};
    job.destination_translations = {&zero, 1};
    job.destination_velocities = {&zero, 1};
    job.offset_rotations = {&offset, 1};
    job.offset_angular_velocities = {&offset_rate, 1};
    job.offset_translations = {&offset_translation, 1};
    job.offset_velocities = {&offset_velocity, 1};
    job.unrotated_rates = unrotated;
    ASSERT_TRUE(job.Run().ok());
    const glm::vec3 expected = unrotated ? glm::vec3(1.f, 0.f, -1.f) : glm::vec3(2.f, 0.f, 0.f);
    EXPECT_NEAR(offset_rate.x, expected.x, 1e-5f) << unrotated;
    EXPECT_NEAR(offset_rate.y, expected.y, 1e-5f) << unrotated;
    EXPECT_NEAR(offset_rate.z, expected.z, 1e-5f) << unrotated;
  }
  EXPECT_TRUE(CrowdSettings::referenceController().unrotated_angular_offsets);
  EXPECT_FALSE(CrowdSettings{}.unrotated_angular_offsets);
}

TEST(ReferenceMode, BadSettingsNameTheSetting) {
  for (const float bad : {-0.1f, INFINITY, NAN}) {
    CrowdSettings settings = CrowdSettings::referenceController();
    settings.search_interval_seconds = bad;
    auto made = Crowd::create(database(), 1, settings);
    ASSERT_FALSE(made.ok());
    EXPECT_NE(std::string(made.error().message()).find("search_interval_seconds"),
              std::string::npos)
        << made.error().message();
    settings = CrowdSettings::referenceController();
    settings.settle_search_interval = bad;
    made = Crowd::create(database(), 1, settings);
    ASSERT_FALSE(made.ok());
    EXPECT_NE(std::string(made.error().message()).find("settle_search_interval"), std::string::npos)
        << made.error().message();
  }
}

// The reference's springs by hand (Holden's spring.h): y from the half-life plus 1e-5 s, the
// approximate exponential, the rotation's angle from acos.
constexpr float kLn2 = 0.69314718056f;
float referenceY(float halflife) { return (4.f * kLn2) / (halflife + 1e-5f) / 2.f; }
float referenceNegExp(float x) { return 1.f / (1.f + x + 0.48f * x * x + 0.235f * x * x * x); }

TEST(ReferenceArithmetic, TheControllersSpringsUseTheReferencesExponential) {
  mmdb::ControllerSettings exact, reference;
  reference.reference_arithmetic = true;
  mmdb::CharacterState start;
  start.velocity = glm::vec3(0.3f, 0.f, 0.2f);
  start.acceleration = glm::vec3(0.5f, 0.f, -0.2f);
  const mmdb::StickInput stick{glm::vec3(1.5f, 0.f, 0.f), glm::vec3(0.f, 0.f, 1.f)};
  const float dt = 1.f / 3;
  const float y = referenceY(reference.position_halflife), e = referenceNegExp(y * dt);
  const glm::vec3 j0 = start.velocity - stick.desired_velocity;
  const glm::vec3 j1 = start.acceleration + j0 * y;
  const glm::vec3 position = e * (-j1 / (y * y) + (-j0 - j1 * dt) / y) + j1 / (y * y) + j0 / y +
                             stick.desired_velocity * dt + start.position;
  const glm::vec3 velocity = e * (j0 + j1 * dt) + stick.desired_velocity;
  mmdb::CharacterState approximate = start, exactly = start;
  mmdb::updateCharacter(approximate, stick, reference, dt);
  mmdb::updateCharacter(exactly, stick, exact, dt);
  EXPECT_NEAR(glm::length(approximate.position - position), 0.f, 1e-6f);
  EXPECT_NEAR(glm::length(approximate.velocity - velocity), 0.f, 1e-6f);
  // The exponential is 4.5 % off at y dt = 3.5: the exact spring lands elsewhere.
  EXPECT_GT(glm::length(exactly.position - position), 1e-3f);
}

// A 1e-3 rad turn left to its target: float's w = cos(5e-4) gives acos an angle 2 % short, and the
// reference's spring moves by that angle, not the exact one.
TEST(ReferenceArithmetic, TheRotationsAngleComesFromAcos) {
  mmdb::ControllerSettings reference;
  reference.reference_arithmetic = true;
  mmdb::CharacterState start;
  start.rotation = glm::angleAxis(1e-3f, glm::vec3(0.f, 1.f, 0.f));
  const mmdb::StickInput stick{glm::vec3(0.f), glm::vec3(0.f, 0.f, 1.f)};  // target: identity
  const float dt = kDt;
  const float y = referenceY(reference.rotation_halflife), e = referenceNegExp(y * dt);
  const float angle = 2.f * std::acos(start.rotation.w);  // what the reference sees
  const float turned = e * (angle + angle * y * dt);      // j0 + j1 dt with no angular velocity
  mmdb::CharacterState approximate = start;
  mmdb::updateCharacter(approximate, stick, reference, dt);
  EXPECT_NEAR(2.f * std::asin(approximate.rotation.y), turned, 1e-9f);
  EXPECT_GT(std::fabs(turned - e * 1e-3f * (1.f + y * dt)), 1e-6f);
}

// The reference steps its trajectory's positions from sample to sample (and jumps the rotations
// from now); with its exponential the two differ, with the exact one they agree.
TEST(ReferenceArithmetic, TheTrajectorysPositionsStepFromSampleToSample) {
  mmdb::ControllerSettings reference;
  reference.reference_arithmetic = true;
  mmdb::CharacterState start;
  start.velocity = glm::vec3(0.f, 0.f, 1.f);
  const mmdb::StickInput stick{glm::vec3(2.f, 0.f, 0.f), glm::vec3(1.f, 0.f, 0.f)};
  float trajectory[mmdb::kTrajectoryFloats];
  mmdb::predictTrajectory(start, stick, reference, trajectory);
  mmdb::CharacterState stepped = start;
  float time = 0.f;
  for (int k = 0; k < mmdb::kTrajectorySamples; ++k) {
    mmdb::updateCharacter(stepped, stick, reference, reference.times[k] - time);
    time = reference.times[k];
    mmdb::CharacterState jumped = start;
    mmdb::updateCharacter(jumped, stick, reference, reference.times[k]);
    EXPECT_NEAR(trajectory[2 * k], stepped.position.x, 1e-5f) << k;
    EXPECT_NEAR(trajectory[2 * k + 1], stepped.position.z, 1e-5f) << k;
    const glm::vec3 facing = jumped.rotation * glm::vec3(0.f, 0.f, 1.f);
    EXPECT_NEAR(trajectory[2 * mmdb::kTrajectorySamples + 2 * k], facing.x, 1e-5f) << k;
    if (k == mmdb::kTrajectorySamples - 1) {
      EXPECT_GT(glm::length(stepped.position - jumped.position), 1e-3f);
    }
  }
}

// The trajectory of the first search is predicted from the simulation root as it was before the
// step moved it (still at rest), not after.
TEST(ReferenceMode, ItPredictsFromTheSimulationBeforeItsUpdate) {
  const Database& db = database();
  const mmdb::StickInput stick{glm::vec3(1.5f, 0.f, 0.f), glm::vec3(1.f, 0.f, 0.f)};
  for (const bool before : {false, true}) {
    CrowdSettings settings = CrowdSettings::reference();
    settings.predict_before_update = before;
    auto made = Crowd::create(db, 1, settings);
    ASSERT_TRUE(made.ok()) << made.error().message();
    Crowd& crowd = made.value();
    ASSERT_TRUE(crowd.setInput(0, stick).ok());
    const mmdb::CharacterState at_rest = crowd.characters()[0].sim;
    ASSERT_TRUE(crowd.beginStep(kDt).ok());
    ASSERT_EQ(crowd.requests().size(), 1u);
    mmdb::CharacterState expected = at_rest;
    if (!before) expected = crowd.characters()[0].sim;  // already updated
    mmdb::ControllerSettings controller;
    controller.position_halflife = controller.rotation_halflife = settings.controller_halflife;
    float trajectory[mmdb::kTrajectoryFloats];
    mmdb::predictTrajectory(expected, stick, controller, trajectory);
    mmdb::expressInCharacterFrame(expected, glm::vec3(0.f), glm::quat(1.f, 0.f, 0.f, 0.f),
                                  settings.max_drift, trajectory);
    const int32_t block = db.findFeatureBlock(mmdb::FeatureKind::TrajectoryPosition);
    ASSERT_GE(block, 0);
    const uint32_t column = db.featureBlock(uint32_t(block)).first_column;
    const float queried = crowd.requests()[0].query[column + 4] * db.featureScale()[column + 4] +
                          db.featureOffset()[column + 4];
    EXPECT_NEAR(queried, trajectory[4], 1e-4f) << before;
    ASSERT_TRUE(crowd.search().ok());
    ASSERT_TRUE(crowd.endStep().ok());
  }
}

// The reference moves its frame on before it samples: the step that switches shows the winner's
// next frame. Playback and decisions stay those of the frame itself.
TEST(ReferenceMode, ItShowsTheFrameAfterTheOneItPlays) {
  for (const bool next : {false, true}) {
    CrowdSettings settings = CrowdSettings::reference();
    settings.show_next_frame = next;
    auto made = Crowd::create(database(), 1, settings);
    ASSERT_TRUE(made.ok()) << made.error().message();
    Crowd& crowd = made.value();
    ASSERT_TRUE(crowd.setInput(0, {glm::vec3(0.f, 0.f, 1.f), glm::vec3(0.f, 0.f, 1.f)}).ok());
    ASSERT_TRUE(crowd.step(kDt).ok());
    const uint32_t winner = crowd.decisions()[0].frame;
    mmdb::Playing shown;
    ASSERT_TRUE(crowd.playing(0, shown).ok());
    EXPECT_EQ(shown.frame, winner + (next ? 1u : 0u)) << next;
    EXPECT_EQ(crowd.characters()[0].shown_frame, shown.frame);
  }
}

// The reference's inertializer decays the offsets in place each frame with its spring: step after
// step, the crowd's stored offsets are the last step's decayed by one step of it (without the
// rule they stay the switch's, decayed in closed form when shown).
TEST(ReferenceArithmetic, TheOffsetsDecayStepByStep) {
  CrowdSettings settings = CrowdSettings::referenceController();
  ASSERT_TRUE(settings.reference_arithmetic);
  auto made = Crowd::create(database(), 1, settings);
  ASSERT_TRUE(made.ok()) << made.error().message();
  Crowd& crowd = made.value();
  const uint32_t joints = crowd.jointCount();
  bool checked = false;
  for (int step = 0; step < 120 && !checked; ++step) {
    // Walking forward, then sharply right: a switch with offsets to decay.
    const glm::vec3 velocity = step < 40 ? glm::vec3(0.f, 0.f, 1.5f) : glm::vec3(1.5f, 0.f, 0.f);
    ASSERT_TRUE(crowd.setInput(0, {velocity, glm::normalize(velocity)}).ok());
    ASSERT_TRUE(crowd.step(kDt).ok());
    if (step < 40 || !crowd.decisions()[0].switched) continue;
    // The offsets as the switch left them (decayed once, to the next frame shown)...
    std::vector<glm::vec3> x(crowd.offsetTranslations().begin(),
                             crowd.offsetTranslations().begin() + joints);
    std::vector<glm::vec3> v(crowd.offsetVelocities().begin(),
                             crowd.offsetVelocities().begin() + joints);
    std::vector<glm::quat> q(crowd.offsetRotations().begin(),
                             crowd.offsetRotations().begin() + joints);
    std::vector<glm::vec3> w(crowd.offsetAngularVelocities().begin(),
                             crowd.offsetAngularVelocities().begin() + joints);
    ASSERT_TRUE(crowd.step(kDt).ok());
    if (crowd.decisions()[0].switched) continue;
    // ... one step of the reference's decay_spring_damper later.
    const float y = referenceY(settings.inertialization_halflife), e = referenceNegExp(y * kDt);
    float largest = 0.f, moved = 0.f;
    for (uint32_t j = 0; j < joints; ++j) {
      const glm::vec3 k1 = v[j] + x[j] * y;
      const glm::vec3 translation = e * (x[j] + k1 * kDt);
      largest = std::fmax(largest, glm::length(translation - crowd.offsetTranslations()[j]));
      moved = std::fmax(moved, glm::length(x[j] - crowd.offsetTranslations()[j]));
      const glm::vec3 half(q[j].x, q[j].y, q[j].z);
      const float length = glm::length(half);
      const glm::vec3 r0 =
          length < 1e-8f ? 2.f * half
                         : 2.f * std::acos(std::fmin(std::fmax(q[j].w, -1.f), 1.f)) * half / length;
      const glm::vec3 r1 = w[j] + r0 * y;
      const glm::vec3 r = e * (r0 + r1 * kDt);
      const float angle = glm::length(r);
      const glm::quat rotation =
          angle < 1e-8f ? glm::quat(1.f, 0.f, 0.f, 0.f) : glm::angleAxis(angle, r / angle);
      const glm::quat shown = crowd.offsetRotations()[j];
      largest = std::fmax(largest, 1.f - std::fabs(glm::dot(rotation, shown)));
    }
    EXPECT_LT(largest, 1e-5f);
    EXPECT_GT(moved, 1e-4f) << "the offsets must have decayed";
    checked = true;
  }
  EXPECT_TRUE(checked) << "no switch to check";
}

TEST(ReferenceArithmetic, ItCannotHoldATransitionBack) {
  CrowdSettings settings = CrowdSettings::referenceController();
  settings.transition_speed_limit = 1.4f;
  auto made = Crowd::create(database(), 1, settings);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(std::string(made.error().message()).find("transition_speed_limit"), std::string::npos)
      << made.error().message();
  EXPECT_NE(std::string(made.error().message()).find("reference_arithmetic"), std::string::npos);
}

}  // namespace
