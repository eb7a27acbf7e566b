// The crowd's playability policies (continuing rule, jump cooldown, the search when the stick
// settles, a range end that moves on) and the motion measures, on a database cooked from the
// sample's procedural walk, played by the sample's built-in stick script.
#include "cook/cook_database.h"
#include "real_database.h"
#include "synthetic_database.h"

#include <mmdb/crowd.h>
#include <mmdb/motion_measures.h>
#include <mmdb/stick_script.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

using mmdb::test::AlignedBytes;

constexpr float kStep = 1.0f / 60;

// samples/data/walk_turn.bvh, and its mirror, cooked with the default settings.
struct WalkDatabase {
  AlignedBytes bytes;
  mmdb::Database db;
};

const WalkDatabase& walkDatabase() {
  static std::unique_ptr<WalkDatabase> made = [] {
    mmdb::cook::CookRequest request;
    mmdb::cook::ClipSpec clip;
    clip.source = std::string(MMDB_SOURCE_DIR) + "/samples/data/walk_turn.bvh";
    clip.source_label = "walk_turn.bvh";
    clip.mirror = true;
    request.clips.push_back(clip);
    request.jobs = 1;
    auto out = std::make_unique<WalkDatabase>();
    out->bytes = mmdb::test::serializeAligned(mmdb::cook::cookDatabase(request));
    auto opened = mmdb::Database::fromMemory(out->bytes.data(), out->bytes.size());
    EXPECT_TRUE(opened.ok()) << opened.error().message();
    out->db = std::move(opened.value());
    return out;
  }();
  return *made;
}

// The sample's run: its 19 s locomotion script at the database's speeds, a search forced by the
// host where the stick turns sharply, `seconds` at 60 steps a second.
struct Played {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a 64 of every decision
  std::vector<mmdb::Decision> decisions;   // [step * characters + character]
  std::vector<float> since_switch;         // before each step, same layout
  mmdb::MotionMeasures measures;
  uint64_t mirrored_shown = 0;   // steps whose pose shown carries the "mirrored" tag
  uint64_t mirrored_events = 0;  // ... and steps it entered or left (Playing::tags_*)
};

void mix(uint64_t& h, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xFF;
    h *= 1099511628211ull;
  }
}

Played play(const mmdb::Database& db, const mmdb::CrowdSettings& settings, uint32_t characters,
            double seconds) {
  Played run;
  auto created = mmdb::Crowd::create(db, characters, settings);
  EXPECT_TRUE(created.ok()) << created.error().message();
  mmdb::Crowd& crowd = created.value();
  auto meter = mmdb::MotionMeter::create(crowd);
  EXPECT_TRUE(meter.ok()) << meter.error().message();
  const mmdb::StickScript script = mmdb::StickScript::builtInLocomotion();  // the 19 s one
  const mmdb::LocomotionSpeeds speeds = mmdb::speedsForDatabase(db);
  std::vector<mmdb::ScriptedStick> previous(characters);
  const long steps = std::lround(seconds * 60);
  for (long step = 0; step < steps; ++step) {
    for (uint32_t i = 0; i < characters; ++i) {
      const mmdb::ScriptedStick stick = script.at(step / 60.0 + script.characterOffset(i));
      EXPECT_TRUE(crowd.setInput(i, mmdb::stickInput(stick, speeds)).ok());
      if (step > 0 && mmdb::stickChangedSharply(previous[i], stick)) {
        EXPECT_TRUE(crowd.forceSearch(i).ok());
      }
      previous[i] = stick;
      run.since_switch.push_back(crowd.characters()[i].since_switch);
    }
    const mmdb::Status s = crowd.step(kStep);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(meter.value().record(crowd, kStep).ok());
    const uint64_t mirrored = mmdb::mirroredTagMask(db);
    for (uint32_t i = 0; i < characters; ++i) {
      mmdb::Playing p;
      EXPECT_TRUE(crowd.playing(i, p).ok());
      run.mirrored_shown += (p.tags & mirrored) != 0;
      run.mirrored_events += ((p.tags_entered | p.tags_left) & mirrored) != 0;
      const mmdb::Decision& d = crowd.decisions()[i];
      run.decisions.push_back(d);
      mix(run.hash, uint64_t(d.reason) | uint64_t(d.switched) << 8 | uint64_t(d.frame) << 16);
      mix(run.hash, uint64_t(d.playing) | uint64_t(std::lround(d.cost * 1000)) << 32);
    }
  }
  run.measures = meter.value().total();
  return run;
}

// Recorded from the crowd before it had any policy: reference() must make the same decisions.
// Recorded again when the crowds' clocks were put on the keys they land near
// (advanceClipTime): the frames played at a key's edge, and so some decisions, moved.
constexpr uint64_t kReferenceHash = 0x8bdf31a6bc7e36d5ull;

TEST(CrowdPolicies, ReferenceMakesTheDecisionsOfTheCrowdWithoutPolicies) {
  const Played run = play(walkDatabase().db, mmdb::CrowdSettings::reference(), 12, 19.0);
  EXPECT_EQ(run.hash, kReferenceHash) << std::hex << run.hash;
}

// With every policy on, each one leaves its mark and none is broken.
TEST(CrowdPolicies, EachPolicyHoldsOverAScriptedRun) {
  const mmdb::Database& db = walkDatabase().db;
  mmdb::CrowdSettings settings;       // the defaults: every policy on
  settings.neighbourhood_frames = 4;  // small, so that the continuing rule has winners to keep
  settings.range_end_margin = 1.5f;   // long, so that winners would often fall inside it
  const uint32_t n = 12;
  const Played run = play(db, settings, n, 19.0);
  const uint32_t continue_frames = mmdb::continueFrames(settings.continue_window, db.frameRate());
  const uint32_t margin = mmdb::continueFrames(settings.range_end_margin, db.frameRate());
  ASSERT_EQ(margin, 90u);  // 1.5 s at 60 Hz
  uint64_t continued = 0, held = 0, settled = 0, switched = 0;
  for (size_t k = 0; k < run.decisions.size(); ++k) {
    const mmdb::Decision& d = run.decisions[k];
    const float since = run.since_switch[k];
    // The cooldown: no switch within it of the last but at a range end.
    if (d.switched && d.reason != mmdb::SearchReason::RangeEnd &&
        d.reason != mmdb::SearchReason::Start) {
      EXPECT_GE(since, settings.jump_cooldown) << "step " << k / n << " character " << k % n;
    }
    if (d.held) {
      ++held;
      EXPECT_EQ(d.reason, mmdb::SearchReason::None);
      EXPECT_LT(since, settings.jump_cooldown);
    }
    if (d.continued) {
      ++continued;
      EXPECT_FALSE(d.switched);
      EXPECT_GT(d.frame, d.playing - 2) << "a winner just ahead of the frame playing";
      EXPECT_LE(d.frame, d.playing - 1 + continue_frames);
    }
    settled += d.reason == mmdb::SearchReason::Forced;
    // The range end margin: a switch goes to a frame with at least the margin left in its range.
    if (d.switched) {
      ++switched;
      bool fits = false;
      for (const mmdb::MatchRange& r : db.ranges())
        if (d.frame >= r.first_frame && d.frame < r.first_frame + r.frame_count)
          fits = d.frame - r.first_frame + margin < r.frame_count || d.frame == r.first_frame;
      EXPECT_TRUE(fits) << "step " << k / n << " character " << k % n << " switched to " << d.frame
                        << ", within " << margin << " frames of its range's end";
    }
  }
  EXPECT_GT(switched, 0u);
  EXPECT_GT(continued, 0u);
  EXPECT_GT(held, 0u);
  EXPECT_GT(settled, 0u);
  EXPECT_EQ(run.measures.continuations, continued);
  // Fewer switches than the reference makes on the same run.
  const Played reference = play(db, mmdb::CrowdSettings::reference(), n, 19.0);
  EXPECT_LT(run.measures.switches, reference.measures.switches);
}

// A range end that moves on never picks the frame playing or one just behind it.
TEST(CrowdPolicies, ARangeEndMovesOn) {
  const mmdb::Database& db = walkDatabase().db;
  for (const bool moves_on : {false, true}) {
    mmdb::CrowdSettings settings = mmdb::CrowdSettings::reference();
    settings.range_end_moves_on = moves_on;
    settings.search_interval_ticks = 100000;  // play on to the range ends
    auto created = mmdb::Crowd::create(db, 4, settings);
    ASSERT_TRUE(created.ok());
    mmdb::Crowd& crowd = created.value();
    const int32_t neighbourhood = db.defaultNeighbourhoodFrames();
    int range_ends = 0;
    for (int step = 0; step < 1200; ++step) {
      for (uint32_t i = 0; i < 4; ++i) ASSERT_TRUE(crowd.setStick(i, 0.f, 0.6f + 0.1f * i).ok());
      ASSERT_TRUE(crowd.beginStep(kStep).ok());
      for (size_t k = 0; k < crowd.requests().size(); ++k) {
        const uint32_t c = crowd.searching()[k];
        if (crowd.decisions()[c].reason != mmdb::SearchReason::RangeEnd) continue;
        ++range_ends;
        EXPECT_FALSE(crowd.requests()[k].seeded);
        EXPECT_EQ(crowd.requests()[k].current_frame,
                  moves_on ? int32_t(crowd.characters()[c].current_frame) : -1);
      }
      ASSERT_TRUE(crowd.search().ok());
      for (size_t k = 0; k < crowd.requests().size(); ++k) {
        const uint32_t c = crowd.searching()[k];
        if (!moves_on || crowd.decisions()[c].reason != mmdb::SearchReason::RangeEnd) continue;
        const int32_t playing = int32_t(crowd.characters()[c].current_frame);
        if (crowd.results()[k].frame >= 0) {
          EXPECT_GE(std::abs(crowd.results()[k].frame - playing), neighbourhood);
        }
      }
      ASSERT_TRUE(crowd.endStep().ok());
    }
    EXPECT_GT(range_ends, 0);
  }
}

// The stick settling after a sharp change forces one search, the step it settles.
TEST(CrowdPolicies, TheStickSettlingForcesOneSearch) {
  const mmdb::Database& db = walkDatabase().db;
  mmdb::CrowdSettings settings = mmdb::CrowdSettings::reference();
  settings.search_when_settled = true;
  settings.search_interval_ticks = 1000;  // no periodic search in the way
  auto created = mmdb::Crowd::create(db, 1, settings);
  ASSERT_TRUE(created.ok());
  mmdb::Crowd& crowd = created.value();
  std::vector<int> forced;
  for (int step = 0; step < 120; ++step) {
    // Walking ahead, then a sharp turn to the right at step 60 (one step), then held there.
    const float x = step >= 60 ? 0.8f : 0.f, z = step >= 60 ? 0.f : 0.8f;
    ASSERT_TRUE(crowd.setStick(0, x, z).ok());
    ASSERT_TRUE(crowd.step(kStep).ok());
    if (crowd.decisions()[0].reason == mmdb::SearchReason::Forced) forced.push_back(step);
  }
  EXPECT_EQ(forced, std::vector<int>{61});
}

// A switch between a clip and its mirror is no gameplay event: by default the cook's "mirrored"
// tag never enters or leaves Playing's tag events, though the pose shown carries it.
TEST(CrowdPolicies, TheMirroredTagIsNoEventUnlessAskedFor) {
  const mmdb::Database& db = walkDatabase().db;
  ASSERT_NE(mmdb::mirroredTagMask(db), 0u) << "the walk is cooked with its mirror";
  const Played quiet = play(db, mmdb::CrowdSettings{}, 8, 19.0);
  EXPECT_GT(quiet.mirrored_shown, 0u);
  EXPECT_EQ(quiet.mirrored_events, 0u);
  mmdb::CrowdSettings settings;
  settings.mirrored_tag_events = true;
  const Played events = play(db, settings, 8, 19.0);
  EXPECT_GT(events.mirrored_events, 0u);
}

TEST(CrowdPolicies, SettingsThatCannotWorkAreRefusedByName) {
  const mmdb::Database& db = walkDatabase().db;
  const struct {
    float mmdb::CrowdSettings::*field;
    const char* name;
  } fields[] = {
      {&mmdb::CrowdSettings::continue_window, "continue_window"},
      {&mmdb::CrowdSettings::jump_cooldown, "jump_cooldown"},
      {&mmdb::CrowdSettings::range_end_margin, "range_end_margin"},
      {&mmdb::CrowdSettings::settle_velocity_change, "settle_velocity_change"},
      {&mmdb::CrowdSettings::settle_rotation_change, "settle_rotation_change"},
      {&mmdb::CrowdSettings::inertialization_rate_halflife, "inertialization_rate_halflife"},
      {&mmdb::CrowdSettings::transition_speed_limit, "transition_speed_limit"}};
  for (const auto& f : fields)
    for (const float bad : {-1.f, std::nanf(""), INFINITY}) {
      mmdb::CrowdSettings settings;
      settings.*f.field = bad;
      auto created = mmdb::Crowd::create(db, 1, settings);
      ASSERT_FALSE(created.ok()) << f.name;
      EXPECT_EQ(created.error().code(), mmdb::ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(created.error().message()).find(std::string(f.name) + " "),
                std::string::npos)
          << created.error().message();
    }
  mmdb::MotionMeasureSettings measure;
  measure.phase_drift_limit = -0.02f;
  auto crowd = mmdb::Crowd::create(db, 1);
  ASSERT_TRUE(crowd.ok());
  auto meter = mmdb::MotionMeter::create(crowd.value(), measure);
  ASSERT_FALSE(meter.ok());
  EXPECT_STREQ(meter.error().message(),
               "MotionMeter::create: phase_drift_limit -0.02 must be finite and > 0");
  auto fine = mmdb::MotionMeter::create(crowd.value());
  ASSERT_TRUE(fine.ok());
  EXPECT_FALSE(fine.value().record(crowd.value(), 0.f).ok());
}

// The meter on a run it can check: a character that never switches plays the clip's own motion,
// so no joint moves more in a step than in the clip (ratio at most 1), and every switch the
// crowd reports is counted.
TEST(MotionMeter, AnUninterruptedClipMovesAsTheClipAndSwitchesAreCounted) {
  const mmdb::Database& db = walkDatabase().db;
  mmdb::CrowdSettings settings = mmdb::CrowdSettings::reference();
  settings.search_interval_ticks = 100000;  // only the start and range ends search
  auto created = mmdb::Crowd::create(db, 1, settings);
  ASSERT_TRUE(created.ok());
  mmdb::Crowd& crowd = created.value();
  auto meter = mmdb::MotionMeter::create(crowd);
  ASSERT_TRUE(meter.ok());
  uint64_t switches = 0;
  for (int step = 0; step < 60; ++step) {  // 1 s, well inside the clip
    ASSERT_TRUE(crowd.setStick(0, 0.f, 0.5f).ok());
    ASSERT_TRUE(crowd.step(kStep).ok());
    ASSERT_TRUE(meter.value().record(crowd, kStep).ok());
    switches += crowd.decisions()[0].switched;
  }
  const mmdb::MotionMeasures m = meter.value().total();
  EXPECT_EQ(m.switches, switches);
  EXPECT_EQ(m.steps, 60u);
  EXPECT_NEAR(m.character_seconds, 1.0, 1e-5);
  if (switches == 0) {
    EXPECT_LE(m.max_step_ratio[mmdb::kElsewhere], 1.0 + 1e-3);
    EXPECT_GT(m.max_step_ratio[mmdb::kElsewhere], 0.3);
  }
  for (uint32_t j = 0; j < db.jointCount(); ++j) EXPECT_GE(meter.value().clipJointSteps()[j], 0.f);
}

// The targets on real motion: bandai-1 mirrored (a root bone at the origin, a rest pose
// that is not symmetric), the built-in script, the default policies.
TEST(MotionMeter, BandaiTransitionsAreContinuousAndPlantedToesHoldStill) {
  std::string why;
  const mmdb::test::RealDatabase* real = mmdb::test::bandaiDatabaseAt(60, true, &why);
  if (!real) GTEST_SKIP() << why;
  mmdb::CrowdSettings settings;
  settings.stagger_phases = 0;
  const Played run = play(real->db, settings, 24, 20.0);
  const mmdb::MotionMeasures& m = run.measures;
  std::printf(
      "[ motion   ] bandai-1 mirrored: step ratio %.2f at switches, %.2f elsewhere; slide "
      "p90 %.1f mm; %.2f switches per character-second\n",
      m.max_step_ratio[mmdb::kAtSwitch], m.max_step_ratio[mmdb::kElsewhere], m.planted_slide_mm.p90,
      m.switch_rate);
  EXPECT_LT(m.max_step_ratio[mmdb::kAtSwitch], 1.5);
  EXPECT_LT(m.max_step_ratio[mmdb::kElsewhere], 1.5);
  EXPECT_LT(m.planted_slide_mm.p90, 25.0);
}

// A switch between arms that differ by up to half a turn (CMU 131, whose features see feet, hips
// and trajectory, not arms): the offsets decaying with 0.15 s while their rates die out in 0.1 s,
// composed so that a source's twist stays a twist, swing the hands and head more slowly than one
// 0.1 s half-life on the rotation vector; the transition speed limit (the default) then keeps
// every joint within 1.5 times its clips' fastest step. Same decisions every way (the pose is not
// in the query), so only the decay differs.
TEST(MotionMeter, CmuBvhArmsSwingSlowerWithTheSplitDecayAndTheSpeedLimit) {
  std::string why;
  const mmdb::test::RealDatabase* real = mmdb::test::cmuBvhDatabase(&why);
  if (!real) GTEST_SKIP() << why;
  mmdb::CrowdSettings limited;
  limited.stagger_phases = 0;
  // The same decisions whatever the decay: root motion alone (the synchronization's adjustment
  // depends on the feet, and so on the pose the decay shows).
  limited.synchronization.mode = mmdb::Synchronization::None;
  mmdb::CrowdSettings split = limited;
  split.transition_speed_limit = 0.f;
  mmdb::CrowdSettings single = split;
  single.inertialization_halflife = single.inertialization_rate_halflife = 0.1f;
  const Played a = play(real->db, split, 24, 20.0), b = play(real->db, single, 24, 20.0);
  const Played c = play(real->db, limited, 24, 20.0);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.hash, c.hash);
  const double at_switch = a.measures.max_step_ratio[mmdb::kAtSwitch];
  const double before = b.measures.max_step_ratio[mmdb::kAtSwitch];
  const double with_limit = c.measures.max_step_ratio[mmdb::kAtSwitch];
  std::printf(
      "[ motion   ] CMU BVH mirrored: step ratio at switches %.2f with the speed limit, %.2f "
      "without (one 0.1 s half-life %.2f), elsewhere %.2f\n",
      with_limit, at_switch, before, c.measures.max_step_ratio[mmdb::kElsewhere]);
  EXPECT_LT(at_switch, 1.85);
  EXPECT_LT(at_switch, before - 0.4);
  EXPECT_LT(with_limit, 1.5);
  EXPECT_LT(c.measures.max_step_ratio[mmdb::kElsewhere], 1.25);
}

}  // namespace
