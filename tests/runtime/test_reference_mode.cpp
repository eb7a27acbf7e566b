// The reference controller's rules (CrowdSettings::start_playing, search_interval_seconds,
// settle_search_interval, search_at_clip_end; referenceController() turns each on), each against
// a known answer that fails when its rule is taken out.
#include "synthetic_database.h"

#include <mmdb/crowd.h>
#include <mmdb/playback.h>

#include <gtest/gtest.h>

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

}  // namespace
