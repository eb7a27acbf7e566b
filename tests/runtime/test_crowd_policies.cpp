// The crowd's playability policies (continuing rule, jump cooldown, the search when the stick
// settles, a range end that moves on) and the motion measures, on a database cooked from the
// sample's procedural walk, played by the sample's built-in stick script.
#include "cook/cook_database.h"
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

// The sample's run: its 19 s locomotion script at the database's speeds, a search forced by the host
// where the stick turns sharply, `seconds` at 60 steps a second.
struct Played {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a 64 of every decision
  std::vector<mmdb::Decision> decisions;   // [step * characters + character]
  std::vector<float> since_switch;         // before each step, same layout
  mmdb::MotionMeasures measures;
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
    for (uint32_t i = 0; i < characters; ++i) {
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
constexpr uint64_t kReferenceHash = 0x10c9a8db4b003f27ull;

TEST(CrowdPolicies, ReferenceMakesTheDecisionsOfTheCrowdWithoutPolicies) {
  const Played run = play(walkDatabase().db, mmdb::CrowdSettings::reference(), 12, 19.0);
  EXPECT_EQ(run.hash, kReferenceHash) << std::hex << run.hash;
}

}  // namespace
