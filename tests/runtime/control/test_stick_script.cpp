// Known answers for the stick script: the built-in script (and the locomotion it begins with), the
// stick file format and its errors, the facing apart from the stick, and the helpers that turn a
// stick into a controller input.
#include <mmdb/stick_script.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr double kTick = 1.0 / 60.0;

glm::vec2 atDegrees(double degrees) {
  const double r = degrees * 3.14159265358979323846 / 180.0;
  return glm::vec2(float(std::sin(r)), float(std::cos(r)));
}

// Counts the sharp changes over one loop of `script` at 60 Hz, the loop's wrap included.
int sharpChangesPerLoop(const mmdb::StickScript& script) {
  int sharp = 0;
  mmdb::ScriptedStick previous = script.at(0.0);
  const int ticks = int(std::lround(script.duration() / kTick));
  for (int i = 1; i <= ticks; ++i) {
    const mmdb::ScriptedStick now = script.at(i * kTick);
    if (mmdb::stickChangedSharply(previous, now)) ++sharp;
    previous = now;
  }
  return sharp;
}

TEST(StickScript, BuiltInSegmentsGiveTheScriptedStick) {
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  EXPECT_DOUBLE_EQ(script.duration(), 30.0);
  EXPECT_EQ(script.segments().size(), 14u);

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
  EXPECT_FALSE(run.has_facing);
}

// builtIn() begins with the locomotion script, segment for segment, so that its first 19 s play
// as the sample's script did before it walked backwards and sideways.
TEST(StickScript, BuiltInBeginsWithTheLocomotionScript) {
  const mmdb::StickScript locomotion = mmdb::StickScript::builtInLocomotion();
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  EXPECT_DOUBLE_EQ(locomotion.duration(), 19.0);
  ASSERT_EQ(locomotion.segments().size(), 9u);
  const char* names[] = {"stand",
                         "walk forward",
                         "walk, turn left",
                         "walk, sharp right",
                         "run",
                         "run, turn left",
                         "stop",
                         "walk back",
                         "stop"};
  for (size_t i = 0; i < 9; ++i) {
    const mmdb::StickSegment& a = locomotion.segments()[i];
    const mmdb::StickSegment& b = script.segments()[i];
    EXPECT_EQ(a.name, names[i]) << i;
    EXPECT_FALSE(a.has_facing) << i;
    EXPECT_EQ(a.name, b.name) << i;
    EXPECT_EQ(a.seconds, b.seconds) << i;
    EXPECT_EQ(a.heading_begin, b.heading_begin) << i;
    EXPECT_EQ(a.heading_end, b.heading_end) << i;
    EXPECT_EQ(a.magnitude, b.magnitude) << i;
    EXPECT_EQ(a.run, b.run) << i;
    EXPECT_EQ(a.has_facing, b.has_facing) << i;
  }
  for (int i = 0; i < 19 * 60; ++i) {
    const mmdb::ScriptedStick a = locomotion.at(i * kTick), b = script.at(i * kTick);
    ASSERT_EQ(a.segment, b.segment) << i;
    ASSERT_EQ(a.direction, b.direction) << i;
    ASSERT_EQ(a.magnitude, b.magnitude) << i;
    ASSERT_EQ(a.run, b.run) << i;
    ASSERT_FALSE(b.has_facing) << i;
  }
}

// After the locomotion the character walks backwards and sideways: the velocity it is asked for
// points against the facing, then across it to the left (+X, facing +Z) and to the right.
TEST(StickScript, BuiltInWalksBackwardsAndSidewaysFacingForward) {
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  const mmdb::LocomotionSpeeds speeds;
  const struct {
    double t;
    const char* segment;
    float along_facing;  // desired velocity's component along the facing, in m/s
    float across;        // ... and across it, positive to the left (facing x velocity, +Y up)
  } expected[] = {
      {19.0 + 1.0, "turn round, walk forward", 1.75f, 0.0f},
      {21.0 + 1.0, "walk backwards", -0.6f * 1.75f, 0.0f},
      {23.5 + 1.0, "strafe left", 0.0f, 0.8f * 1.75f},
      {26.0 + 1.0, "strafe right", 0.0f, -0.8f * 1.75f},
  };
  for (const auto& e : expected) {
    const mmdb::ScriptedStick stick = script.at(e.t);
    EXPECT_EQ(stick.segment, e.segment) << e.t;
    EXPECT_FALSE(stick.run) << e.t;
    const mmdb::StickInput input = mmdb::stickInput(stick, speeds);
    // Facing forward, +Z, in all four.
    EXPECT_NEAR(input.desired_facing.x, 0.0f, 1e-6f) << e.t;
    EXPECT_NEAR(input.desired_facing.z, 1.0f, 1e-6f) << e.t;
    const glm::vec3 f = input.desired_facing, v = input.desired_velocity;
    EXPECT_NEAR(f.x * v.x + f.z * v.z, e.along_facing, 1e-5f) << e.t;
    EXPECT_NEAR(f.z * v.x - f.x * v.z, e.across, 1e-5f) << e.t;
  }
  EXPECT_TRUE(script.at(22.0).has_facing);
  EXPECT_FALSE(script.at(20.0).has_facing);  // turning round faces along the stick
  // The last stop keeps facing forward with the stick released, and the loop then starts over.
  const mmdb::ScriptedStick stop = script.at(29.0);
  EXPECT_EQ(stop.segment, "stop");
  const mmdb::StickInput stopped = mmdb::stickInput(stop, speeds);
  EXPECT_EQ(stopped.desired_velocity, glm::vec3(0.0f));
  EXPECT_NEAR(stopped.desired_facing.z, 1.0f, 1e-6f);
  EXPECT_EQ(script.at(30.5).segment, "stand");
}

TEST(StickScript, LoopsAndAcceptsNegativeTimes) {
  const mmdb::StickScript script = mmdb::StickScript::builtIn();
  for (double t : {0.25, 3.3, 7.7, 12.1, 18.9, 22.2, 25.0, 29.9}) {
    const mmdb::ScriptedStick a = script.at(t);
    const mmdb::ScriptedStick b = script.at(t + script.duration());
    const mmdb::ScriptedStick c = script.at(t - script.duration());
    EXPECT_EQ(a.segment, b.segment) << t;
    EXPECT_EQ(a.segment, c.segment) << t;
    EXPECT_NEAR(a.direction.x, b.direction.x, 1e-5f) << t;
    EXPECT_NEAR(a.direction.y, c.direction.y, 1e-5f) << t;
    EXPECT_EQ(a.has_facing, c.has_facing) << t;
    EXPECT_NEAR(a.facing.x, b.facing.x, 1e-5f) << t;
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

// With a facing the velocity is still the stick's, the facing the segment's, pushed or released.
TEST(StickScript, InputWithAFacingFacesItApartFromTheStick) {
  mmdb::ScriptedStick stick;
  stick.direction = {-0.6f, -0.8f};
  stick.magnitude = 0.5f;
  stick.has_facing = true;
  stick.facing = {0.8f, -0.6f};
  const mmdb::StickInput input = mmdb::stickInput(stick, {2.0f, 4.0f});
  EXPECT_NEAR(input.desired_velocity.x, -0.6f, 1e-6f);
  EXPECT_EQ(input.desired_velocity.y, 0.0f);
  EXPECT_NEAR(input.desired_velocity.z, -0.8f, 1e-6f);
  EXPECT_EQ(input.desired_facing, glm::vec3(0.8f, 0.0f, -0.6f));
  stick.run = true;
  EXPECT_NEAR(mmdb::stickInput(stick, {2.0f, 4.0f}).desired_velocity.x, -1.2f, 1e-6f);
  // A released stick still faces the given facing (a turn on the spot), with no velocity.
  stick.magnitude = 0.0f;
  const mmdb::StickInput released = mmdb::stickInput(stick, {});
  EXPECT_EQ(released.desired_velocity, glm::vec3(0.0f));
  EXPECT_EQ(released.desired_facing, glm::vec3(0.8f, 0.0f, -0.6f));
  // The facing is unused without has_facing.
  stick.has_facing = false;
  stick.magnitude = 1.0f;
  EXPECT_EQ(mmdb::stickInput(stick, {}).desired_facing, glm::vec3(-0.6f, 0.0f, -0.8f));
}

TEST(StickScript, SharpChangeThresholds) {
  mmdb::ScriptedStick a;
  a.direction = {0.0f, 1.0f};
  a.magnitude = 1.0f;
  mmdb::ScriptedStick b = a;
  EXPECT_FALSE(mmdb::stickChangedSharply(a, b));
  const auto at_degrees = atDegrees;
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

// The facing turning over 30 degrees is sharp too, the stick's direction held, pushed or not.
TEST(StickScript, SharpChangeOfTheFacing) {
  mmdb::ScriptedStick a;
  a.direction = {0.0f, 1.0f};
  a.magnitude = 0.8f;
  a.has_facing = true;
  a.facing = atDegrees(90.0);
  mmdb::ScriptedStick b = a;
  b.facing = atDegrees(119.0);
  EXPECT_FALSE(mmdb::stickChangedSharply(a, b));
  b.facing = atDegrees(121.0);
  EXPECT_TRUE(mmdb::stickChangedSharply(a, b));
  EXPECT_TRUE(mmdb::stickChangedSharply(b, a));
  // Released: the facing still counts (a turn on the spot).
  a.magnitude = b.magnitude = 0.0f;
  EXPECT_TRUE(mmdb::stickChangedSharply(a, b));
  b.facing = atDegrees(100.0);
  EXPECT_FALSE(mmdb::stickChangedSharply(a, b));
  // A pushed stick without a facing asks to face along itself: the same stick with a facing
  // along it is no change, one facing 45 degrees away is.
  mmdb::ScriptedStick walk;
  walk.direction = {0.0f, 1.0f};
  walk.magnitude = 0.8f;
  mmdb::ScriptedStick strafe = walk;
  strafe.has_facing = true;
  strafe.facing = {0.0f, 1.0f};
  EXPECT_FALSE(mmdb::stickChangedSharply(walk, strafe));  // same stick, facing along it
  strafe.facing = atDegrees(45.0);
  EXPECT_TRUE(mmdb::stickChangedSharply(walk, strafe));  // the facing alone turned 45 degrees
  // A released stick without a facing asks for none: nothing to compare the facing with.
  walk.magnitude = 0.0f;
  strafe.magnitude = 0.0f;
  strafe.facing = atDegrees(180.0);
  EXPECT_FALSE(mmdb::stickChangedSharply(walk, strafe));
  EXPECT_FALSE(mmdb::stickChangedSharply(strafe, walk));
}

TEST(StickScript, SharpChangesHappenOnlyAtSegmentBoundaries) {
  // Per loop of the locomotion at 60 Hz: stand->walk, turn left->sharp right, ->run, ->stop,
  // ->walk back, ->stop. The smooth turns never trigger; the loop's wrap (stop -> stand) neither.
  EXPECT_EQ(sharpChangesPerLoop(mmdb::StickScript::builtInLocomotion()), 6);
  // The built-in script adds: stop->turn round (pushed), ->walk backwards (magnitude 1 to 0.6 and
  // the stick turning round), ->strafe left, ->strafe right (the stick turning 90 and 180
  // degrees, the facing held), ->stop (released). Its wrap (stop facing +Z -> stand, released
  // without a facing) does not trigger either.
  EXPECT_EQ(sharpChangesPerLoop(mmdb::StickScript::builtIn()), 11);
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

// The locomotion script written as a stick file is the same script, stick for stick; with the
// lines after it, the built-in script.
constexpr const char* kLocomotionAsFile =
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
    "1.5        180       0          walk  stop\n";
constexpr const char* kBackwardsAndSidewaysAsFile =
    "# seconds heading magnitude gait facing name\n"
    "2          0       1         walk        turn round, walk forward\n"
    "2.5        180     0.6       walk face=0 walk backwards\n"
    "2.5        90      0.8       walk face=+0..0 strafe left\n"
    "2.5        -90     0.8       walk\tface=-0\tstrafe right\r\n"
    "1.5        0       0         walk face=0 stop  # facing forward";

void expectSameSticks(const mmdb::StickScript& a, const mmdb::StickScript& b) {
  ASSERT_EQ(a.segments().size(), b.segments().size());
  EXPECT_EQ(a.duration(), b.duration());
  const int ticks = int(std::lround(a.duration() / kTick));
  for (int i = 0; i < ticks; ++i) {
    const mmdb::ScriptedStick x = a.at(i * kTick), y = b.at(i * kTick);
    ASSERT_EQ(x.segment, y.segment) << i;
    ASSERT_EQ(x.direction, y.direction) << i;
    ASSERT_EQ(x.magnitude, y.magnitude) << i;
    ASSERT_EQ(x.run, y.run) << i;
    ASSERT_EQ(x.has_facing, y.has_facing) << i;
    if (x.has_facing) {
      ASSERT_EQ(x.facing, y.facing) << i;
    }
  }
}

TEST(StickFile, ParsesToTheSameSticksAsTheBuiltInScript) {
  const mmdb::Result<mmdb::StickScript> locomotion =
      mmdb::StickScript::parse(kLocomotionAsFile, "a.txt");
  ASSERT_TRUE(locomotion) << locomotion.error().message();
  expectSameSticks(locomotion.value(), mmdb::StickScript::builtInLocomotion());
  EXPECT_EQ(locomotion->segments()[3].name, "walk, sharp right");

  const std::string whole = std::string(kLocomotionAsFile) + kBackwardsAndSidewaysAsFile;
  const mmdb::Result<mmdb::StickScript> parsed = mmdb::StickScript::parse(whole, "a.txt");
  ASSERT_TRUE(parsed) << parsed.error().message();
  expectSameSticks(parsed.value(), mmdb::StickScript::builtIn());
  EXPECT_EQ(parsed->segments()[9].name, "turn round, walk forward");
  EXPECT_FALSE(parsed->segments()[9].has_facing);
  EXPECT_EQ(parsed->segments()[12].name, "strafe right");
  EXPECT_TRUE(parsed->segments()[12].has_facing);
  EXPECT_EQ(parsed->segments()[13].name, "stop");
}

// CR, LF and CRLF line ends, even mixed, read as the same lines: a file saved with CR alone (old
// Mac) is one segment per line, not one segment whose name holds the rest of the file, and an
// error names the line where the editor shows it.
TEST(StickFile, AcceptsCrLfAndCrLfLineEnds) {
  const std::string lf = kLocomotionAsFile;
  auto replaced = [&](const std::string& ending) {
    std::string out;
    for (const char c : lf) out += c == '\n' ? ending : std::string(1, c);
    return out;
  };
  const mmdb::Result<mmdb::StickScript> expected = mmdb::StickScript::parse(lf, "a.txt");
  ASSERT_TRUE(expected) << expected.error().message();
  for (const std::string& ending : {std::string("\r"), std::string("\r\n")}) {
    const mmdb::Result<mmdb::StickScript> parsed =
        mmdb::StickScript::parse(replaced(ending), "a.txt");
    ASSERT_TRUE(parsed) << parsed.error().message();
    expectSameSticks(parsed.value(), expected.value());
    ASSERT_EQ(parsed->segments().size(), expected->segments().size());
    for (size_t i = 0; i < parsed->segments().size(); ++i)
      EXPECT_EQ(parsed->segments()[i].name, expected->segments()[i].name) << i;
  }
  const mmdb::Result<mmdb::StickScript> mixed =
      mmdb::StickScript::parse("1 0 1 walk a\r2 0 1 walk b\r\n3 0 1 walk c\nbad\r", "m.txt");
  ASSERT_FALSE(mixed);
  EXPECT_EQ(std::string(mixed.error().message()).rfind("m.txt:4: ", 0), 0u)
      << mixed.error().message();
}

// `face=` after the gait: a facing or a sweep of it, in degrees like the heading; the name is the
// rest of the line. A name that merely holds "face=" further on is a name.
TEST(StickFile, ParsesTheFacingAndItsSweep) {
  const mmdb::Result<mmdb::StickScript> parsed = mmdb::StickScript::parse(
      "2 0 1 walk face=90..-90 look round, walking\n"
      "1 180 0.5 run face=45 backpedal face=front\n"
      "1 0 0 walk face=-30 turn on the spot\n"
      "1 0 1 walk about face=90\n",
      "f.stick");
  ASSERT_TRUE(parsed) << parsed.error().message();
  const std::vector<mmdb::StickSegment>& s = parsed->segments();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_TRUE(s[0].has_facing);
  EXPECT_EQ(s[0].facing_begin, 90.0);
  EXPECT_EQ(s[0].facing_end, -90.0);
  EXPECT_EQ(s[0].name, "look round, walking");
  EXPECT_EQ(s[1].facing_begin, 45.0);
  EXPECT_EQ(s[1].facing_end, 45.0);
  EXPECT_EQ(s[1].name, "backpedal face=front");
  EXPECT_TRUE(s[1].run);
  EXPECT_EQ(s[2].facing_end, -30.0);
  EXPECT_FALSE(s[3].has_facing);
  EXPECT_EQ(s[3].name, "about face=90");

  // The sweep: +X at the start, +Z half-way, -X at the end; the stick stays along +Z.
  const mmdb::ScriptedStick start = parsed->at(0.0), middle = parsed->at(1.0);
  const mmdb::ScriptedStick late = parsed->at(1.5);
  EXPECT_TRUE(start.has_facing);
  EXPECT_NEAR(start.facing.x, 1.0f, 1e-6f);
  EXPECT_NEAR(start.facing.y, 0.0f, 1e-6f);
  EXPECT_NEAR(middle.facing.x, 0.0f, 1e-6f);
  EXPECT_NEAR(middle.facing.y, 1.0f, 1e-6f);
  EXPECT_NEAR(late.facing.x, -std::sqrt(0.5f), 1e-6f);
  EXPECT_NEAR(late.facing.y, std::sqrt(0.5f), 1e-6f);
  EXPECT_NEAR(late.direction.x, 0.0f, 1e-6f);
  EXPECT_NEAR(late.direction.y, 1.0f, 1e-6f);
  // The sweep is smooth: no sharp change from one tick to the next, though it turns 180 degrees.
  for (int i = 1; i < 120; ++i)
    EXPECT_FALSE(mmdb::stickChangedSharply(parsed->at((i - 1) * kTick), parsed->at(i * kTick)))
        << i;
  // Into the next segment: walking forward facing -X, then backwards (-Z) facing 45 degrees.
  EXPECT_TRUE(mmdb::stickChangedSharply(parsed->at(2.0 - kTick), parsed->at(2.0)));
  const mmdb::StickInput back = mmdb::stickInput(parsed->at(2.5), {1.0f, 2.0f});
  EXPECT_NEAR(back.desired_velocity.z, -1.0f, 1e-6f);
  EXPECT_NEAR(back.desired_facing.x, std::sqrt(0.5f), 1e-6f);
  EXPECT_NEAR(back.desired_facing.z, std::sqrt(0.5f), 1e-6f);
  // Released with a facing: faces it.
  const mmdb::StickInput spot = mmdb::stickInput(parsed->at(3.5), {});
  EXPECT_EQ(spot.desired_velocity, glm::vec3(0.0f));
  EXPECT_NEAR(spot.desired_facing.x, -0.5f, 1e-6f);
  EXPECT_NEAR(spot.desired_facing.z, std::sqrt(0.75f), 1e-6f);
  // Without a facing it faces along the stick, as before.
  EXPECT_FALSE(parsed->at(4.5).has_facing);
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
      {"1 0 1 walk face=90\n",
       "s.txt:1: expected 6 fields, SECONDS HEADING MAGNITUDE walk|run face=FACING NAME, found 5"},
      {"1 0 1 walk face=left go\n",
       "s.txt:1: facing 'face=left' must be face=DEGREES (0 is +Z, 90 is +X) from -36000 to "
       "36000, or a sweep face=FROM..TO"},
      {"1 0 1 walk face= go\n",
       "s.txt:1: facing 'face=' must be face=DEGREES (0 is +Z, 90 is +X) from -36000 to 36000, or "
       "a sweep face=FROM..TO"},
      {"1 0 1 walk face=0..inf go\n",
       "s.txt:1: facing 'face=0..inf' must be face=DEGREES (0 is +Z, 90 is +X) from -36000 to "
       "36000, or a sweep face=FROM..TO"},
      {"1 0 1 walk face=nan go\n",
       "s.txt:1: facing 'face=nan' must be face=DEGREES (0 is +Z, 90 is +X) from -36000 to "
       "36000, or a sweep face=FROM..TO"},
      {"1 0 1 walk face=36001 go\n",
       "s.txt:1: facing 'face=36001' must be face=DEGREES (0 is +Z, 90 is +X) from -36000 to "
       "36000, or a sweep face=FROM..TO"},
      {"1 0 1 walk face=0..-40000 go\n",
       "s.txt:1: facing 'face=0..-40000' must be face=DEGREES (0 is +Z, 90 is +X) from -36000 to "
       "36000, or a sweep face=FROM..TO"},
      {"1 0 1 run face=90 go\n1 0 1 face=90 walk go\n",
       "s.txt:2: gait 'face=90' must be walk or run"},
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

  // A facing is checked when the segment has one, like the heading.
  segments[1].has_facing = true;
  segments[1].facing_begin = 10.0;
  segments[1].facing_end = std::nan("");
  const mmdb::Result<mmdb::StickScript> nan = mmdb::StickScript::fromSegments(segments);
  ASSERT_FALSE(nan);
  EXPECT_EQ(nan.error().code(), mmdb::ErrorCode::InvalidArgument);
  EXPECT_STREQ(nan.error().message(),
               "stick segment 2 ('bad') has facing nan: degrees from -36000 to 36000");
  segments[1].facing_end = 10.0;
  segments[1].facing_begin = -36000.5;
  const mmdb::Result<mmdb::StickScript> big = mmdb::StickScript::fromSegments(segments);
  ASSERT_FALSE(big);
  EXPECT_STREQ(big.error().message(),
               "stick segment 2 ('bad') has facing -36000.5: degrees from -36000 to 36000");
  segments[1].facing_begin = std::numeric_limits<double>::infinity();
  const mmdb::Result<mmdb::StickScript> inf = mmdb::StickScript::fromSegments(segments);
  ASSERT_FALSE(inf);
  EXPECT_STREQ(inf.error().message(),
               "stick segment 2 ('bad') has facing inf: degrees from -36000 to 36000");
  // Without has_facing the two angles are unused, and not checked.
  segments[1].has_facing = false;
  EXPECT_TRUE(mmdb::StickScript::fromSegments(segments));
  segments[1].has_facing = true;
  segments[1].facing_begin = -90.0;
  segments[1].facing_end = 90.0;
  const mmdb::Result<mmdb::StickScript> sweep = mmdb::StickScript::fromSegments(segments);
  ASSERT_TRUE(sweep) << sweep.error().message();
  const mmdb::ScriptedStick half = sweep->at(1.0 + 1.25);
  EXPECT_TRUE(half.has_facing);
  EXPECT_NEAR(half.facing.x, 0.0f, 1e-6f);
  EXPECT_NEAR(half.facing.y, 1.0f, 1e-6f);
  EXPECT_FALSE(sweep->at(0.5).has_facing);
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
