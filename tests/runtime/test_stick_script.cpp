// Known answers for the stick script: the built-in script, the stick file format and its errors,
// and the helpers that turn a stick into a controller input.
#include <mmdb/stick_script.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr double kTick = 1.0 / 60.0;

TEST(StickScript, BuiltInSegmentsGiveTheScriptedStick) {
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  EXPECT_DOUBLE_EQ(script.duration(), 19.0);
  EXPECT_EQ(script.segments().size(), 9u);

  const mmdb::ScriptedStick stand = script.at(0.5);
  EXPECT_EQ(stand.segment, "stand");
  EXPECT_FLOAT_EQ(stand.magnitude, 0.0f);

  const mmdb::ScriptedStick walk = script.at(2.0);
  EXPECT_EQ(walk.segment, "walk forward");
  EXPECT_FLOAT_EQ(walk.magnitude, 1.0f);
  EXPECT_FALSE(walk.run);
  EXPECT_NEAR(walk.direction.x, 0.0f, 1e-6f);
  EXPECT_NEAR(walk.direction.y, 1.0f, 1e-6f);

  // Half-way through the left turn the stick points 45 degrees left of +Z, towards +X.
  const mmdb::ScriptedStick turn = script.at(1.5 + 3.0 + 1.0);
  EXPECT_EQ(turn.segment, "walk, turn left");
  EXPECT_NEAR(turn.direction.x, std::sqrt(0.5f), 1e-5f);
  EXPECT_NEAR(turn.direction.y, std::sqrt(0.5f), 1e-5f);

  const mmdb::ScriptedStick run = script.at(1.5 + 3.0 + 2.0 + 2.0 + 1.0);
  EXPECT_EQ(run.segment, "run");
  EXPECT_TRUE(run.run);
  EXPECT_NEAR(run.direction.x, -1.0f, 1e-5f);
}

TEST(StickScript, LoopsAndAcceptsNegativeTimes) {
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  for (double t : {0.25, 3.3, 7.7, 12.1, 18.9}) {
    const mmdb::ScriptedStick a = script.at(t);
    const mmdb::ScriptedStick b = script.at(t + script.duration());
    const mmdb::ScriptedStick c = script.at(t - script.duration());
    EXPECT_EQ(a.segment, b.segment) << t;
    EXPECT_EQ(a.segment, c.segment) << t;
    EXPECT_NEAR(a.direction.x, b.direction.x, 1e-5f) << t;
    EXPECT_NEAR(a.direction.y, c.direction.y, 1e-5f) << t;
  }
}

TEST(StickScript, DesiredVelocityAndInputUseWalkAndRunSpeeds) {
  mmdb::ScriptedStick stick;
  stick.direction = {0.6f, 0.8f};
  stick.magnitude = 0.5f;
  glm::vec2 v = mmdb::desiredVelocity(stick);
  EXPECT_NEAR(v.x, 0.6f * 0.5f * 1.75f, 1e-6f);
  EXPECT_NEAR(v.y, 0.8f * 0.5f * 1.75f, 1e-6f);
  stick.run = true;
  stick.magnitude = 1.0f;
  v = mmdb::desiredVelocity(stick);
  EXPECT_NEAR(v.x, 0.6f * 4.0f, 1e-6f);
  EXPECT_NEAR(v.y, 0.8f * 4.0f, 1e-6f);

  const mmdb::StickInput input = mmdb::stickInput(stick, {1.0f, 2.0f});
  EXPECT_NEAR(input.desired_velocity.x, 1.2f, 1e-6f);
  EXPECT_EQ(input.desired_velocity.y, 0.0f);
  EXPECT_NEAR(input.desired_velocity.z, 1.6f, 1e-6f);
  EXPECT_FLOAT_EQ(input.desired_facing.x, 0.6f);
  EXPECT_FLOAT_EQ(input.desired_facing.z, 0.8f);
  // A released stick keeps the facing: a zero facing.
  stick.magnitude = 0.0f;
  const mmdb::StickInput released = mmdb::stickInput(stick, {});
  EXPECT_EQ(released.desired_facing, glm::vec3(0.0f));
  EXPECT_EQ(released.desired_velocity, glm::vec3(0.0f));
}

TEST(StickScript, SharpChangeThresholds) {
  mmdb::ScriptedStick a;
  a.direction = {0.0f, 1.0f};
  a.magnitude = 1.0f;
  mmdb::ScriptedStick b = a;
  EXPECT_FALSE(mmdb::stickChangedSharply(a, b));
  const auto at_degrees = [](double degrees) {
    const double r = degrees * 3.14159265358979323846 / 180.0;
    return glm::vec2(float(std::sin(r)), float(std::cos(r)));
  };
  b.direction = at_degrees(29.0);
  EXPECT_FALSE(mmdb::stickChangedSharply(a, b));
  b.direction = at_degrees(31.0);
  EXPECT_TRUE(mmdb::stickChangedSharply(a, b));
  b = a;
  b.magnitude = 0.75f;
  EXPECT_FALSE(mmdb::stickChangedSharply(a, b));
  b.magnitude = 0.65f;
  EXPECT_TRUE(mmdb::stickChangedSharply(a, b));
  b = a;
  b.run = true;
  EXPECT_TRUE(mmdb::stickChangedSharply(a, b));
  // A released stick's direction means nothing.
  a.magnitude = b.magnitude = 0.0f;
  b.run = false;
  b.direction = at_degrees(180.0);
  EXPECT_FALSE(mmdb::stickChangedSharply(a, b));
}

TEST(StickScript, SharpChangesHappenOnlyAtSegmentBoundaries) {
  // Per loop at 60 Hz: stand->walk, turn left->sharp right, ->run, ->stop, ->walk back, ->stop.
  // The smooth turns never trigger; the loop's wrap (stop -> stand) neither.
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  int sharp = 0;
  mmdb::ScriptedStick previous = script.at(0.0);
  const int ticks = int(std::lround(script.duration() / kTick));
  for (int i = 1; i <= ticks; ++i) {
    const mmdb::ScriptedStick now = script.at(i * kTick);
    if (mmdb::stickChangedSharply(previous, now)) ++sharp;
    previous = now;
  }
  EXPECT_EQ(sharp, 6);
}

TEST(StickScript, CharactersAreSpreadOverTheScript) {
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  EXPECT_DOUBLE_EQ(script.characterOffset(0), 0.0);
  std::vector<double> offsets;
  for (uint32_t i = 0; i < 20; ++i) {
    const double t = script.characterOffset(i);
    EXPECT_GE(t, 0.0);
    EXPECT_LT(t, script.duration());
    for (double other : offsets) EXPECT_GT(std::abs(t - other), 0.1) << i;
    offsets.push_back(t);
  }
}

// The built-in script written as a stick file is the same script, stick for stick.
constexpr const char* kBuiltInAsFile =
    "# The sample's script.\n"
    "# seconds  heading   magnitude  gait  name\n"
    "1.5        0         0          walk  stand\n"
    "3          0         1          walk  walk forward\n"
    "2          0..90     1          walk  walk, turn left\n"
    "\n"
    "2          -90       1          walk  walk, sharp right   # comment after the name\n"
    "3\t-90\t1\trun\trun\r\n"
    "2          -90..+0   1          run   run, turn left\n"
    "2          0         0          walk  stop\n"
    "2          180       0.6        walk  walk back\n"
    "1.5        180       0          walk  stop";

TEST(StickFile, ParsesToTheSameSticksAsTheBuiltInScript) {
  const mmdb::Result<mmdb::StickScript> parsed = mmdb::StickScript::parse(kBuiltInAsFile, "a.txt");
  ASSERT_TRUE(parsed) << parsed.error().message();
  const mmdb::StickScript builtin = mmdb::StickScript::builtIn();
  ASSERT_EQ(parsed->segments().size(), builtin.segments().size());
  EXPECT_EQ(parsed->duration(), builtin.duration());
  for (int i = 0; i < 19 * 60; ++i) {
    const mmdb::ScriptedStick a = parsed->at(i * kTick), b = builtin.at(i * kTick);
    ASSERT_EQ(a.segment, b.segment) << i;
    ASSERT_EQ(a.direction, b.direction) << i;
    ASSERT_EQ(a.magnitude, b.magnitude) << i;
    ASSERT_EQ(a.run, b.run) << i;
  }
  EXPECT_EQ(parsed->segments()[3].name, "walk, sharp right");
}

// Each error names the file, the line and what is wrong.
TEST(StickFile, ErrorsNameFileLineAndProblem) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"# only a comment\n\n",
       "s.txt: no segment; write one per line: SECONDS HEADING MAGNITUDE "
       "walk|run NAME"},
      {"1 0 1 walk go\n2 0 1 walk\n",
       "s.txt:2: expected 5 fields, SECONDS HEADING MAGNITUDE walk|run NAME, found 4"},
      {"x 0 1 walk go\n", "s.txt:1: seconds 'x' must be a number above 0 and at most 3600"},
      {"0 0 1 walk go\n", "s.txt:1: seconds '0' must be a number above 0 and at most 3600"},
      {"-1 0 1 walk go\n", "s.txt:1: seconds '-1' must be a number above 0 and at most 3600"},
      {"4000 0 1 walk go\n", "s.txt:1: seconds '4000' must be a number above 0 and at most 3600"},
      {"nan 0 1 walk go\n", "s.txt:1: seconds 'nan' must be a number above 0 and at most 3600"},
      {"1 north 1 walk go\n",
       "s.txt:1: heading 'north' must be degrees (0 is +Z, 90 is +X) from -36000 to 36000, or a "
       "sweep FROM..TO"},
      {"1 0..x 1 walk go\n",
       "s.txt:1: heading '0..x' must be degrees (0 is +Z, 90 is +X) from -36000 to 36000, or a "
       "sweep FROM..TO"},
      {"1 0 1.5 walk go\n",
       "s.txt:1: magnitude '1.5' must be a number from 0 (released) to 1 (pushed)"},
      {"1 0 1 jog go\n", "s.txt:1: gait 'jog' must be walk or run"},
      {"1 0 1 walk go\n1 0 1 walk go\x01\n",
       "s.txt:2: control character 0x01: a stick file is plain text"},
  };
  for (const auto& c : cases) {
    const mmdb::Result<mmdb::StickScript> parsed = mmdb::StickScript::parse(c.text, "s.txt");
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_EQ(parsed.error().code(), mmdb::ErrorCode::InvalidArgument);
    EXPECT_STREQ(parsed.error().message(), c.message);
  }
}

TEST(StickFile, SegmentsAreCheckedWhenGivenDirectly) {
  EXPECT_FALSE(mmdb::StickScript::fromSegments({}));
  std::vector<mmdb::StickSegment> segments(2);
  segments[0].name = "walk";
  segments[1].name = "bad";
  segments[1].magnitude = 2.0f;
  const mmdb::Result<mmdb::StickScript> script = mmdb::StickScript::fromSegments(segments);
  ASSERT_FALSE(script);
  EXPECT_STREQ(script.error().message(),
               "stick segment 2 ('bad') has magnitude 2: the stick is pushed from 0 to 1");
  segments[1].magnitude = 1.0f;
  segments[1].seconds = 2.5;
  const mmdb::Result<mmdb::StickScript> fixed = mmdb::StickScript::fromSegments(segments);
  ASSERT_TRUE(fixed) << fixed.error().message();
  EXPECT_DOUBLE_EQ(fixed->duration(), 3.5);
  EXPECT_EQ(fixed->at(1.5).segment, "bad");
}

TEST(StickFile, LoadReadsAFileAndNamesOneItCannotRead) {
  const std::string path = ::testing::TempDir() + "mmdb_stick_load.txt";
  std::ofstream(path) << "2 45 1 run dash\n1 45 0 walk halt\n";
  const mmdb::Result<mmdb::StickScript> loaded = mmdb::StickScript::load(path.c_str());
  ASSERT_TRUE(loaded) << loaded.error().message();
  EXPECT_DOUBLE_EQ(loaded->duration(), 3.0);
  EXPECT_TRUE(loaded->at(1.0).run);
  EXPECT_NEAR(loaded->at(1.0).direction.x, std::sqrt(0.5f), 1e-6f);
  std::remove(path.c_str());

  const mmdb::Result<mmdb::StickScript> missing = mmdb::StickScript::load(path.c_str());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), mmdb::ErrorCode::IoError);
  EXPECT_EQ(std::string(missing.error().message()), path + ": no such stick file");
  const mmdb::Result<mmdb::StickScript> folder = mmdb::StickScript::load(MMDB_TEST_DATA);
  ASSERT_FALSE(folder);
  EXPECT_EQ(std::string(folder.error().message()),
            std::string(MMDB_TEST_DATA) + ": not a regular file");
}

}  // namespace
