// The manifest reader: every key lands in its CookRequest field, and every mistake is an
// InputError that names the manifest, the line and the key.
#include "core/errors.h"
#include "manifest/manifest.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace {

namespace fs = std::filesystem;

class Manifest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("mmdb_manifest_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_ / "clips");
    for (const char* name : {"walk.bvh", "run.bvh", "clips/jump.fbx"})
      std::ofstream(folder_ / name) << "not parsed by the manifest reader\n";
    manifest_ = (folder_ / "loco.toml").string();
  }
  void TearDown() override { fs::remove_all(folder_); }

  mmdb::cook::CookRequest parse(const std::string& text) {
    return mmdb::cook::parseManifest(text, manifest_);
  }

  // The message of the InputError that parsing `text` throws, with the manifest path replaced
  // by "loco.toml" so expectations read like what a user sees.
  std::string errorOf(const std::string& text) {
    try {
      parse(text);
    } catch (const mmdb::cook::InputError& e) {
      std::string message = e.what();
      for (size_t at; (at = message.find(manifest_)) != std::string::npos;)
        message.replace(at, manifest_.size(), "loco.toml");
      return message;
    }
    ADD_FAILURE() << "no InputError for:\n" << text;
    return {};
  }

  fs::path folder_;
  std::string manifest_;
};

constexpr const char* kWalk = "[[clip]]\nsource = \"walk.bvh\"\n";

TEST_F(Manifest, OnlyClipsKeepsEveryDefault) {
  const mmdb::cook::CookRequest request = parse(kWalk);
  const mmdb::cook::CookSettings defaults;
  const mmdb::cook::CookSettings& s = request.settings;
  EXPECT_EQ(request.manifest_path, manifest_);
  EXPECT_EQ(s.frame_rate, defaults.frame_rate);
  EXPECT_EQ(s.unit_scale, defaults.unit_scale);
  EXPECT_EQ(s.roles.preset, "");
  EXPECT_EQ(s.roles.hips, "");
  EXPECT_FALSE(s.roles.facing_axis.has_value());
  EXPECT_EQ(s.weights, defaults.weights);
  EXPECT_EQ(s.root_position_window_s, defaults.root_position_window_s);
  EXPECT_EQ(s.facing_window_s, defaults.facing_window_s);
  EXPECT_EQ(s.savitzky_golay_order, defaults.savitzky_golay_order);
  EXPECT_EQ(s.contact_speed_threshold, defaults.contact_speed_threshold);
  EXPECT_EQ(s.contact_median_s, defaults.contact_median_s);
  EXPECT_EQ(s.trailing_unmatchable_s, defaults.trailing_unmatchable_s);
  EXPECT_EQ(s.trajectory_times, defaults.trajectory_times);
  EXPECT_EQ(request.mirror.patterns, mmdb::cook::MirrorSettings{}.patterns);
  EXPECT_EQ(request.mirror.tag_pairs, (mmdb::cook::TagPairs{{"left", "right"}}));

  ASSERT_EQ(request.clips.size(), 1u);
  const mmdb::cook::ClipSpec& clip = request.clips[0];
  EXPECT_EQ(clip.name, "walk");
  EXPECT_EQ(clip.source, (folder_ / "walk.bvh").string());
  EXPECT_EQ(clip.source_label, "walk.bvh");
  EXPECT_EQ(clip.take, "");
  EXPECT_EQ(clip.source_first_frame, 0);
  EXPECT_EQ(clip.source_frame_count, -1);
  EXPECT_TRUE(clip.tags.empty());
  EXPECT_FALSE(clip.mirror);
  EXPECT_TRUE(clip.ranges.empty());
  EXPECT_EQ(clip.manifest_line, 1);
}

TEST_F(Manifest, EveryKeyIsRead) {
  const mmdb::cook::CookRequest request = parse(R"(# every key, none at its default
[database]
frame_rate = 30
unit_scale = 0.01
trailing_unmatchable = 0.5
trajectory_times = [0.25, 0.5, 1.5]

[skeleton]
preset = "bandai"
hips = "Hips_J"
left_foot = "Foot_L"
right_foot = "Foot_R"
left_toe = "Toes_L"
right_toe = "Toes_R"
root_position = "Chest"
facing = "Pelvis"
facing_axis = [0, 1, 0]

[weights]
foot_position = 0.5
foot_velocity = 2
hip_velocity = 3.5
trajectory_position = 4
trajectory_direction = 5

[filters]
root_position_window = 0.25
facing_window = 2
order = 2

[contacts]
speed_threshold = 0.3
median = 0.2

[mirror]
patterns = [["Left*", "Right*"], ["*_Lf", "*_Rt"]]
tag_pairs = [["left", "right"], ["CW", "ccw"]]

[[clip]]
source = "walk.bvh"
name = "walk_fast"
take = "Take 001"
frames = [10, 510]
tags = ["locomotion", "fast"]
mirror = true

  [[clip.range]]
  frames = [100, 160]
  tags = ["turn"]

  [[clip.range]]
  seconds = [10, 12.5]
  exclude = true

[[clip]]
source = "clips/jump.fbx"
)");
  const mmdb::cook::CookSettings& s = request.settings;
  EXPECT_EQ(s.frame_rate, 30.0);
  EXPECT_EQ(s.unit_scale, 0.01);
  EXPECT_EQ(s.trailing_unmatchable_s, 0.5);
  EXPECT_EQ(s.trajectory_times, (std::array<double, 3>{0.25, 0.5, 1.5}));
  EXPECT_EQ(s.roles.preset, "bandai");
  EXPECT_EQ(s.roles.hips, "Hips_J");
  EXPECT_EQ(s.roles.left_foot, "Foot_L");
  EXPECT_EQ(s.roles.right_foot, "Foot_R");
  EXPECT_EQ(s.roles.left_toe, "Toes_L");
  EXPECT_EQ(s.roles.right_toe, "Toes_R");
  EXPECT_EQ(s.roles.root_position, "Chest");
  EXPECT_EQ(s.roles.facing, "Pelvis");
  ASSERT_TRUE(s.roles.facing_axis.has_value());
  EXPECT_EQ(*s.roles.facing_axis, glm::vec3(0, 1, 0));
  EXPECT_EQ(s.weights[mmdb::cook::kBlockFootPosition], 0.5f);
  EXPECT_EQ(s.weights[mmdb::cook::kBlockFootVelocity], 2.0f);
  EXPECT_EQ(s.weights[mmdb::cook::kBlockHipVelocity], 3.5f);
  EXPECT_EQ(s.weights[mmdb::cook::kBlockTrajectoryPosition], 4.0f);
  EXPECT_EQ(s.weights[mmdb::cook::kBlockTrajectoryDirection], 5.0f);
  EXPECT_EQ(s.root_position_window_s, 0.25);
  EXPECT_EQ(s.facing_window_s, 2.0);
  EXPECT_EQ(s.savitzky_golay_order, 2);
  EXPECT_EQ(s.contact_speed_threshold, 0.3);
  EXPECT_EQ(s.contact_median_s, 0.2);
  const std::vector<std::pair<std::string, std::string>> patterns{{"Left*", "Right*"},
                                                                  {"*_Lf", "*_Rt"}};
  EXPECT_EQ(request.mirror.patterns, patterns);
  EXPECT_EQ(request.mirror.tag_pairs, (mmdb::cook::TagPairs{{"left", "right"}, {"CW", "ccw"}}));

  ASSERT_EQ(request.clips.size(), 2u);
  const mmdb::cook::ClipSpec& walk = request.clips[0];
  EXPECT_EQ(walk.name, "walk_fast");
  EXPECT_EQ(walk.source_label, "walk.bvh");
  EXPECT_EQ(walk.take, "Take 001");
  EXPECT_EQ(walk.source_first_frame, 10);
  EXPECT_EQ(walk.source_frame_count, 500);
  EXPECT_EQ(walk.tags, (std::vector<std::string>{"locomotion", "fast"}));
  EXPECT_TRUE(walk.mirror);
  EXPECT_EQ(walk.manifest_line, 39);
  ASSERT_EQ(walk.ranges.size(), 2u);
  EXPECT_EQ(walk.ranges[0].first_frame, 100);
  EXPECT_EQ(walk.ranges[0].frame_count, 60);
  EXPECT_EQ(walk.ranges[0].tags, std::vector<std::string>{"turn"});
  EXPECT_FALSE(walk.ranges[0].exclude);
  EXPECT_EQ(walk.ranges[1].first_frame, 300);  // seconds at the database rate (30 Hz)
  EXPECT_EQ(walk.ranges[1].frame_count, 75);
  EXPECT_TRUE(walk.ranges[1].exclude);
  EXPECT_TRUE(walk.ranges[1].tags.empty());

  const mmdb::cook::ClipSpec& jump = request.clips[1];
  EXPECT_EQ(jump.name, "jump");
  EXPECT_EQ(jump.source, (folder_ / "clips" / "jump.fbx").string());
  EXPECT_EQ(jump.source_label, "clips/jump.fbx");
  EXPECT_EQ(jump.manifest_line, 55);
}

TEST_F(Manifest, IntegersAreAcceptedWhereNumbersAreExpected) {
  const mmdb::cook::CookRequest request =
      parse(std::string("[contacts]\nspeed_threshold = 1\n") + kWalk);
  EXPECT_EQ(request.settings.contact_speed_threshold, 1.0);
}

TEST_F(Manifest, AbsoluteSourceIsKeptAndRelativeResolvesAgainstManifestFolder) {
  const std::string absolute = (folder_ / "run.bvh").string();
  manifest_ = (folder_ / "clips" / "nested.toml").string();
  const mmdb::cook::CookRequest request =
      parse("[[clip]]\nsource = \"" + absolute + "\"\n[[clip]]\nsource = \"../walk.bvh\"\n");
  EXPECT_EQ(request.clips[0].source, absolute);
  EXPECT_EQ(request.clips[1].source, (folder_ / "walk.bvh").string());
  EXPECT_EQ(request.clips[1].source_label, "../walk.bvh");
}

TEST_F(Manifest, MistypedKeyNamesKeyLineAndSuggestion) {
  EXPECT_EQ(errorOf("[wieghts]\nfoot_position = 1\n"),
            "loco.toml:1: unknown key 'wieghts' (did you mean 'weights'?); known keys at the top "
            "level: database, skeleton, weights, filters, contacts, compression, mirror, clip");
  EXPECT_EQ(errorOf("[weights]\nfoot_velocity = 1\nfoot_postion = 0.5\n"),
            "loco.toml:3: unknown key 'weights.foot_postion' (did you mean "
            "'weights.foot_position'?); known keys in [weights]: foot_position, foot_velocity, "
            "hip_velocity, trajectory_position, trajectory_direction");
  EXPECT_EQ(errorOf(std::string(kWalk) + "colour = \"red\"\n"),
            "loco.toml:3: unknown key 'clip.colour'; known keys in [clip]: source, name, take, "
            "frames, tags, mirror, bias, range");
  EXPECT_EQ(errorOf(std::string(kWalk) + "[[clip.range]]\nframe = [1, 2]\ntags = [\"a\"]\n"),
            "loco.toml:4: unknown key 'clip.range.frame' (did you mean 'clip.range.frames'?); "
            "known keys in [clip.range]: frames, seconds, tags, exclude, bias");
  EXPECT_EQ(errorOf(std::string("frame_rate = 30\n") + kWalk),
            "loco.toml:1: unknown key 'frame_rate'; known keys at the top level: database, "
            "skeleton, weights, filters, contacts, compression, mirror, clip");
}

TEST_F(Manifest, UnknownKeyInEveryTable) {
  for (const char* table : {"database", "skeleton", "weights", "filters", "contacts", "mirror"}) {
    const std::string message = errorOf(std::string("[") + table + "]\nbogus = 1\n" + kWalk);
    EXPECT_EQ(message.rfind("loco.toml:2: unknown key '" + std::string(table) + ".bogus'", 0), 0u)
        << message;
  }
}

TEST_F(Manifest, SyntaxErrorNamesLine) {
  const std::string message = errorOf("[database]\nframe_rate = = 60\n");
  EXPECT_EQ(message.rfind("loco.toml:2: TOML syntax error: ", 0), 0u) << message;
}

TEST_F(Manifest, WrongTypes) {
  EXPECT_EQ(errorOf(std::string("[database]\nframe_rate = \"60\"\n") + kWalk),
            "loco.toml:2: 'database.frame_rate' must be a number, got a string");
  EXPECT_EQ(errorOf(std::string("[filters]\norder = 3.0\n") + kWalk),
            "loco.toml:2: 'filters.order' must be an integer, got a number");
  EXPECT_EQ(errorOf(std::string("[skeleton]\nhips = 3\n") + kWalk),
            "loco.toml:2: 'skeleton.hips' must be a string, got an integer");
  EXPECT_EQ(errorOf(std::string(kWalk) + "mirror = \"yes\"\n"),
            "loco.toml:3: 'clip.mirror' must be true or false, got a string");
  EXPECT_EQ(errorOf(std::string(kWalk) + "tags = \"locomotion\"\n"),
            "loco.toml:3: 'clip.tags' must be an array, got a string");
  EXPECT_EQ(errorOf(std::string("weights = 3\n") + kWalk),
            "loco.toml:1: 'weights' must be a table ([weights]), got an integer");
  EXPECT_EQ(errorOf("[clip]\nsource = \"walk.bvh\"\n"),
            "loco.toml:1: 'clip' must be an array of tables: write [[clip]] (double brackets) "
            "above each clip");
  EXPECT_EQ(errorOf(std::string(kWalk) + "range = 3\n"),
            "loco.toml:3: 'clip.range' must be an array of tables: write [[clip.range]] below its "
            "[[clip]]");
  EXPECT_EQ(errorOf(std::string("[skeleton]\nfacing_axis = [0, \"y\", 0]\n") + kWalk),
            "loco.toml:2: 'skeleton.facing_axis' must hold finite numbers only, got a string");
}

TEST_F(Manifest, OutOfRangeValues) {
  EXPECT_EQ(errorOf(std::string("[database]\nframe_rate = 0\n") + kWalk),
            "loco.toml:2: 'database.frame_rate' must be at least 1 and at most 1000 (frames "
            "per second), got 0");
  EXPECT_EQ(errorOf(std::string("[database]\nframe_rate = -30\n") + kWalk),
            "loco.toml:2: 'database.frame_rate' must be at least 1 and at most 1000 (frames "
            "per second), got -30");
  EXPECT_EQ(errorOf(std::string("[database]\nframe_rate = nan\n") + kWalk),
            "loco.toml:2: 'database.frame_rate' must be a finite number, got nan");
  EXPECT_EQ(errorOf(std::string("[database]\nunit_scale = inf\n") + kWalk),
            "loco.toml:2: 'database.unit_scale' must be a finite number, got inf");
  EXPECT_EQ(errorOf(std::string("[database]\nunit_scale = 0\n") + kWalk),
            "loco.toml:2: 'database.unit_scale' must be greater than 0 and at most 1000 (metres "
            "per source unit), got 0");
  EXPECT_EQ(errorOf(std::string("[database]\ntrailing_unmatchable = -0.1\n") + kWalk),
            "loco.toml:2: 'database.trailing_unmatchable' must be at least 0 and at most 60 "
            "(seconds), got -0.1");
  EXPECT_EQ(errorOf(std::string("[database]\ntrajectory_times = [1, 2]\n") + kWalk),
            "loco.toml:2: 'database.trajectory_times' must have 3 numbers, got 2");
  EXPECT_EQ(errorOf(std::string("[database]\ntrajectory_times = [1, 0.5, 2]\n") + kWalk),
            "loco.toml:2: 'database.trajectory_times' must be three increasing times in seconds, "
            "above 0 and at most 10, e.g. [0.3333, 0.6667, 1.0]");
  EXPECT_EQ(errorOf(std::string("[weights]\nfoot_position = -0.75\n") + kWalk),
            "loco.toml:2: 'weights.foot_position' must be at least 1e-06 and at most 1000 (to "
            "make a block matter less use a small weight such as 0.01), got -0.75");
  EXPECT_EQ(errorOf(std::string("[weights]\ntrajectory_direction = 0\n") + kWalk),
            "loco.toml:2: 'weights.trajectory_direction' must be at least 1e-06 and at most 1000 "
            "(to make a block matter less use a small weight such as 0.01), got 0");
  EXPECT_EQ(errorOf(std::string("[filters]\nfacing_window = 0\n") + kWalk),
            "loco.toml:2: 'filters.facing_window' must be greater than 0 and at most 10 "
            "(seconds), got 0");
  EXPECT_EQ(errorOf(std::string("[filters]\nroot_position_window = -1\n") + kWalk),
            "loco.toml:2: 'filters.root_position_window' must be greater than 0 and at most 10 "
            "(seconds), got -1");
  EXPECT_EQ(errorOf(std::string("[filters]\norder = 5\n") + kWalk),
            "loco.toml:2: 'filters.order' (Savitzky-Golay polynomial order) must be 0 to 4, got 5");
  EXPECT_EQ(errorOf(std::string("[contacts]\nspeed_threshold = 0\n") + kWalk),
            "loco.toml:2: 'contacts.speed_threshold' must be greater than 0 and at most 100 "
            "(metres per second), got 0");
  EXPECT_EQ(errorOf(std::string("[contacts]\nmedian = -1\n") + kWalk),
            "loco.toml:2: 'contacts.median' must be at least 0 and at most 10 (seconds), got -1");
  EXPECT_EQ(errorOf(std::string("[skeleton]\nfacing_axis = [0, 0, 0]\n") + kWalk),
            "loco.toml:2: 'skeleton.facing_axis' must not be zero; give the facing joint's local "
            "axis that points forward, e.g. [0, 0, 1]");
  EXPECT_EQ(errorOf(std::string("[skeleton]\nleft_foot = \"\"\n") + kWalk),
            "loco.toml:2: 'skeleton.left_foot' must not be empty");
}

TEST_F(Manifest, SmallOrEvenWindowsInSecondsAreFine) {
  const mmdb::cook::CookRequest request =
      parse(std::string("[filters]\nroot_position_window = 0.01\nfacing_window = 1\n") + kWalk);
  EXPECT_EQ(request.settings.root_position_window_s, 0.01);
  EXPECT_EQ(request.settings.facing_window_s, 1.0);
}

TEST_F(Manifest, MirrorPatternErrors) {
  const std::string form =
      "'mirror.patterns' must be pairs of name patterns with one '*' each, e.g. "
      "[[\"Left*\", \"Right*\"], [\"*_L\", \"*_R\"]]";
  EXPECT_EQ(errorOf(std::string("[mirror]\npatterns = [[\"Left*\"]]\n") + kWalk),
            "loco.toml:2: " + form);
  EXPECT_EQ(errorOf(std::string("[mirror]\npatterns = [\"Left*\", \"Right*\"]\n") + kWalk),
            "loco.toml:2: " + form);
  EXPECT_EQ(errorOf(std::string("[mirror]\npatterns = [[\"Left\", \"Right*\"]]\n") + kWalk),
            "loco.toml:2: " + form + "; 'Left' needs exactly one '*' and a name part");
  EXPECT_EQ(errorOf(std::string("[mirror]\npatterns = [[\"*_L*\", \"*_R\"]]\n") + kWalk),
            "loco.toml:2: " + form + "; '*_L*' needs exactly one '*' and a name part");
  EXPECT_EQ(errorOf(std::string("[mirror]\npatterns = [[\"L*\", \"L*\"]]\n") + kWalk),
            "loco.toml:2: " + form + "; a pair must differ, got 'L*' twice");
}

TEST_F(Manifest, EmptyMirrorPatternsTurnMirroringNamesOff) {
  const mmdb::cook::CookRequest request = parse(std::string("[mirror]\npatterns = []\n") + kWalk);
  EXPECT_TRUE(request.mirror.patterns.empty());
}

TEST_F(Manifest, TagPairsAreReadAsWritten) {
  const mmdb::cook::CookRequest request = parse(
      std::string("[mirror]\ntag_pairs = [[\"Left\", \"RIGHT\"], [\"cw\", \"ccw\"]]\n") + kWalk);
  EXPECT_EQ(request.mirror.tag_pairs, (mmdb::cook::TagPairs{{"Left", "RIGHT"}, {"cw", "ccw"}}));
  // Setting patterns alone keeps the default pairs, and the other way round.
  EXPECT_EQ(parse(std::string("[mirror]\npatterns = []\n") + kWalk).mirror.tag_pairs,
            mmdb::cook::MirrorSettings{}.tag_pairs);
  EXPECT_EQ(parse(std::string("[mirror]\ntag_pairs = [[\"l\", \"r\"]]\n") + kWalk).mirror.patterns,
            mmdb::cook::MirrorSettings{}.patterns);
}

TEST_F(Manifest, EmptyTagPairsSwapNoTag) {
  const mmdb::cook::CookRequest request = parse(std::string("[mirror]\ntag_pairs = []\n") + kWalk +
                                                "tags = [\"strafe-left\"]\nmirror = true\n");
  EXPECT_TRUE(request.mirror.tag_pairs.empty());
  // The clip keeps its own tags as written: only its mirrored copy's are swapped, in the cook.
  EXPECT_EQ(request.clips[0].tags, std::vector<std::string>{"strafe-left"});
  EXPECT_EQ(parse(std::string(kWalk) + "tags = [\"strafe-left\"]\nmirror = true\n").clips[0].tags,
            std::vector<std::string>{"strafe-left"});
}

TEST_F(Manifest, TagPairErrors) {
  const std::string form =
      "'mirror.tag_pairs' must be pairs of words that a mirrored copy's tags swap, e.g. "
      "[[\"left\", \"right\"]]";
  auto pairs = [](const std::string& value) {
    return "[mirror]\ntag_pairs = " + value + "\n" + kWalk;
  };
  EXPECT_EQ(errorOf(pairs("[[\"left\"]]")),
            "loco.toml:2: " + form + "; a pair holds two words, got 1");
  EXPECT_EQ(errorOf(pairs("[[\"left\", \"right\", \"up\"]]")),
            "loco.toml:2: " + form + "; a pair holds two words, got 3");
  EXPECT_EQ(
      errorOf(pairs("[\"left\", \"right\"]")),
      "loco.toml:2: " + form +
          "; each pair is an array of two words in brackets of its own, got a string ('left')");
  EXPECT_EQ(errorOf(pairs("[[\"left\", \"right\"], 3]")),
            "loco.toml:2: " + form +
                "; each pair is an array of two words in brackets of its own, got an integer");
  EXPECT_EQ(errorOf(pairs("[[\"left\", 1]]")),
            "loco.toml:2: " + form + "; a word is a string, got an integer");
  EXPECT_EQ(errorOf(pairs("[[[\"left\"], \"right\"]]")),
            "loco.toml:2: " + form + "; a word is a string, got an array");
  EXPECT_EQ(errorOf(pairs("[[\"left\", \"\"]]")),
            "loco.toml:2: " + form + "; a word must not be empty");
  EXPECT_EQ(errorOf(pairs("[[\"strafe-left\", \"strafe-right\"]]")),
            "loco.toml:2: " + form +
                "; 'strafe-left' is not one word: a word is 1 to 64 letters and digits, and is "
                "matched against each part of a tag that '-', '_' and '.' separate");
  EXPECT_EQ(errorOf(pairs("[[\"left\", \"left\"]]")),
            "loco.toml:2: " + form + "; a pair must be two different words, got 'left' and 'left'");
  EXPECT_EQ(errorOf(pairs("[[\"left\", \"LEFT\"]]")),
            "loco.toml:2: " + form + "; a pair must be two different words, got 'left' and 'LEFT'");
  EXPECT_EQ(errorOf(pairs("[[\"left\", \"right\"], [\"Right\", \"droite\"]]")),
            "loco.toml:2: " + form +
                "; 'Right' is already in the pair [\"left\", \"right\"]: a word may be in one pair "
                "only");
  // A list over several lines names the line of the pair, and of the pair it clashes with.
  EXPECT_EQ(errorOf(pairs("[\n  [\"left\", \"right\"],\n  [\"cw\", \"Left\"],\n]")),
            "loco.toml:4: " + form +
                "; 'Left' is already in the pair [\"left\", \"right\"] on line 3: a word may be "
                "in one pair only");
  EXPECT_EQ(errorOf(pairs("[\n  [\"left\", \"right\"],\n  [\"up\"],\n]")),
            "loco.toml:4: " + form + "; a pair holds two words, got 1");
  EXPECT_EQ(errorOf(pairs("\"left\"")),
            "loco.toml:2: 'mirror.tag_pairs' must be an array, got a string");
  EXPECT_EQ(errorOf("[mirror]\ntag_pair = [[\"left\", \"right\"]]\n" + std::string(kWalk)),
            "loco.toml:2: unknown key 'mirror.tag_pair' (did you mean 'mirror.tag_pairs'?); known "
            "keys in [mirror]: patterns, tag_pairs");
}

// 63 tags "t0" to "t62" (and `extra`), as a TOML array.
std::string manyTags(int count, const std::string& extra = "") {
  std::string text = "tags = [";
  for (int i = 0; i < count; ++i) text += (i ? ", \"t" : "\"t") + std::to_string(i) + "\"";
  if (!extra.empty()) text += ", \"" + extra + "\"";
  return text + "]\n";
}

TEST_F(Manifest, SwappedTagsCountTowardsTheSixtyFour) {
  // 64 tags, strafe-left among them: the mirrored copy's strafe-right is the 65th.
  const std::string clip = std::string(kWalk) + manyTags(63, "strafe-left") + "mirror = true\n";
  EXPECT_EQ(errorOf(clip),
            "loco.toml:3: more than 64 different tags, counting 'strafe-right' that the mirrored "
            "copy 'walk#mirror' has for 'strafe-left' by [mirror] tag_pairs; a tag mask has 64 "
            "bits: use fewer tags, or swap fewer words");
  EXPECT_EQ(errorOf("[mirror]\ntag_pairs = [[\"left\", \"right\"]]\n\n" + clip),
            "loco.toml:6: more than 64 different tags, counting 'strafe-right' that the mirrored "
            "copy 'walk#mirror' has for 'strafe-left' by [mirror] tag_pairs (line 2); a tag mask "
            "has 64 bits: use fewer tags, or swap fewer words");
  // Without the copy, or without swapping, the 64 fit (the tag "mirrored" aside).
  EXPECT_EQ(parse(std::string(kWalk) + manyTags(63, "strafe-left")).clips.size(), 1u);
  // A range's tag names the range's line.
  EXPECT_EQ(
      errorOf(std::string(kWalk) + manyTags(63) +
              "mirror = true\n\n  [[clip.range]]\n  frames = [0, 10]\n  tags = [\"turn_left\"]\n"),
      "loco.toml:8: more than 64 different tags, counting 'turn_right' that the mirrored "
      "copy 'walk#mirror' has for 'turn_left' by [mirror] tag_pairs; a tag mask has 64 "
      "bits: use fewer tags, or swap fewer words");
  // A tag swapped into one the database has already is no new tag.
  EXPECT_EQ(
      parse(std::string(kWalk) + manyTags(61, "strafe-left\", \"strafe-right") + "mirror = true\n")
          .clips.size(),
      1u);
}

TEST_F(Manifest, TheTagMirroredCountsTowardsTheSixtyFour) {
  EXPECT_EQ(parse(std::string(kWalk) + manyTags(63) + "mirror = true\n").clips.size(), 1u);
  EXPECT_EQ(errorOf(std::string(kWalk) + manyTags(64) + "mirror = true\n"),
            "loco.toml:4: more than 64 different tags, counting 'mirrored', the tag of every "
            "mirrored copy; a tag mask has 64 bits, use fewer tags");
  // 62 tags and strafe-left: strafe-right is the 64th, "mirrored" the 65th; without swapping it
  // is the 64th.
  const std::string clip = std::string(kWalk) + manyTags(62, "strafe-left") + "mirror = true\n";
  EXPECT_EQ(errorOf(clip),
            "loco.toml:4: more than 64 different tags, counting 'mirrored', the tag of every "
            "mirrored copy; a tag mask has 64 bits, use fewer tags");
  EXPECT_EQ(parse("[mirror]\ntag_pairs = []\n" + clip).clips.size(), 1u);
}

TEST_F(Manifest, ASwappedTagLongerThanSixtyFourCharactersIsAnError) {
  const std::string tag = std::string(59, 'x') + "-left";  // 64 characters
  EXPECT_EQ(parse(std::string(kWalk) + "tags = [\"" + tag + "\"]\n").clips[0].tags[0], tag);
  EXPECT_EQ(errorOf(std::string(kWalk) + "tags = [\"" + tag + "\"]\nmirror = true\n"),
            "loco.toml:3: tag '" + tag + "' becomes '" + std::string(59, 'x') +
                "-right' on the mirrored copy 'walk#mirror' by [mirror] tag_pairs, longer than 64 "
                "characters; shorten the tag");
}

TEST_F(Manifest, ClipErrors) {
  EXPECT_EQ(errorOf("[database]\nframe_rate = 60\n"),
            "loco.toml:1: no clips: add a [[clip]] table with source = \"file.bvh\" for each clip");
  EXPECT_EQ(errorOf("[[clip]]\nname = \"walk\"\n"),
            "loco.toml:1: clip has no 'source'; add source = \"file.bvh\" (relative to the "
            "manifest's folder)");
  EXPECT_EQ(errorOf("[[clip]]\nsource = \"\"\n"), "loco.toml:2: 'clip.source' must not be empty");
  EXPECT_EQ(errorOf(std::string(kWalk) + "\n[[clip]]\nsource = \"walk.bvh\"\n"),
            "loco.toml:4: clip name 'walk' is already used by the clip on line 1; give one of "
            "them another name with name = \"...\"");
  EXPECT_EQ(errorOf(std::string(kWalk) + "frames = [10, 10]\n"),
            "loco.toml:3: 'clip.frames' must be [first, end] (frames first to end - 1) with 0 <= "
            "first < end <= 100000000, got [10, 10]");
  EXPECT_EQ(errorOf(std::string(kWalk) + "frames = [-1, 10]\n"),
            "loco.toml:3: 'clip.frames' must be [first, end] (frames first to end - 1) with 0 <= "
            "first < end <= 100000000, got [-1, 10]");
  EXPECT_EQ(errorOf(std::string(kWalk) + "frames = [0, 10.5]\n"),
            "loco.toml:3: 'clip.frames' must be [first, end] (frames first to end - 1) with "
            "integers, got a number");
  EXPECT_EQ(errorOf(std::string(kWalk) + "frames = [5]\n"),
            "loco.toml:3: 'clip.frames' must be [first, end] (frames first to end - 1), got 1 "
            "values");
  EXPECT_EQ(errorOf(std::string(kWalk) + "tags = [\"two words\"]\n"),
            "loco.toml:3: 'clip.tags' must hold tag names (letters, digits, '_', '-', '.'; 1 to "
            "64 characters), got 'two words'");
  EXPECT_EQ(errorOf(std::string(kWalk) + "tags = [1]\n"),
            "loco.toml:3: 'clip.tags' must hold tag names (letters, digits, '_', '-', '.'; 1 to "
            "64 characters), got an integer");
}

TEST_F(Manifest, MissingSourceNamesLineAndResolvedPath) {
  EXPECT_EQ(errorOf("\n[[clip]]\nsource = \"missing.bvh\"\n"),
            "loco.toml:3: clip source 'missing.bvh' not found (looked for '" +
                (folder_ / "missing.bvh").string() +
                "'); fix the path, which is relative to the manifest's folder");
  EXPECT_EQ(errorOf("[[clip]]\nsource = \"clips\"\n"),
            "loco.toml:2: clip source 'clips' ('" + (folder_ / "clips").string() +
                "') cannot be read: not a regular file (a folder); give a motion file such as a "
                ".bvh or .fbx");
}

TEST_F(Manifest, RangeErrors) {
  const std::string clip = kWalk;
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\ntags = [\"turn\"]\n"),
            "loco.toml:3: a [[clip.range]] needs exactly one of 'frames = [first, end]' (frames "
            "at the database rate, from the clip's start) or 'seconds = [start, end]'");
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\nframes = [1, 2]\nseconds = [0, 1]\nexclude = true\n"),
            "loco.toml:3: a [[clip.range]] needs exactly one of 'frames = [first, end]' (frames "
            "at the database rate, from the clip's start) or 'seconds = [start, end]'");
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\nframes = [1, 2]\n"),
            "loco.toml:3: a [[clip.range]] does nothing without tags = [...], bias = ... or "
            "exclude = true");
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\nseconds = [2, 1]\nexclude = true\n"),
            "loco.toml:4: 'clip.range.seconds' must be [start, end] (seconds; end may be "
            "\"end\", the clip's end) with 0 <= start < end <= 1000000, got [2, 1]");
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\nseconds = [2, \"start\"]\nexclude = true\n"),
            "loco.toml:4: 'clip.range.seconds' must be [start, end] (seconds; end may be "
            "\"end\", the clip's end), got a string");
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\nframes = [\"end\", 9]\nexclude = true\n"),
            "loco.toml:4: 'clip.range.frames' must be [first, end] (frames first to end - 1, "
            "integers; end may be \"end\", the clip's end), got a string");
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\nframes = [1, 2]\nexclude = 1\n"),
            "loco.toml:5: 'clip.range.exclude' must be true or false, got an integer");
}

TEST_F(Manifest, BiasesOfClipsAndRanges) {
  const mmdb::cook::CookRequest r =
      parse(std::string(kWalk) +
            "bias = 0.2\n[[clip.range]]\nframes = [10, 20]\nbias = -0.5\n[[clip.range]]\n"
            "frames = [30, 40]\ntags = [\"turn\"]\n[[clip]]\nsource = \"run.bvh\"\n"
            "bias = -3\n");
  ASSERT_EQ(r.clips.size(), 2u);
  EXPECT_EQ(r.clips[0].bias, 0.2);
  ASSERT_EQ(r.clips[0].ranges.size(), 2u);
  EXPECT_EQ(r.clips[0].ranges[0].bias, -0.5);  // a range with only a bias is fine
  EXPECT_EQ(r.clips[0].ranges[1].bias, 0.0);
  EXPECT_EQ(r.clips[1].bias, -3.0);  // an integer is a number
}

// A range may run to the clip's end ("end"), in frames or in seconds; it keeps its line and,
// given in seconds, its seconds, so that the cook names them if the clip is shorter.
TEST_F(Manifest, RangesToTheEndAndTheirLines) {
  const mmdb::cook::CookRequest r =
      parse(std::string(kWalk) +
            "[[clip.range]]\nframes = [10, \"end\"]\ntags = [\"a\"]\n[[clip.range]]\n"
            "seconds = [1.5, \"end\"]\nexclude = true\n[[clip.range]]\nseconds = [0.5, 1]\n"
            "tags = [\"b\"]\n");
  ASSERT_EQ(r.clips[0].ranges.size(), 3u);
  const auto& frames = r.clips[0].ranges[0];
  EXPECT_TRUE(frames.to_end);
  EXPECT_EQ(frames.first_frame, 10);
  EXPECT_EQ(frames.manifest_line, 3);
  EXPECT_EQ(frames.first_seconds, -1.0);
  const auto& seconds = r.clips[0].ranges[1];
  EXPECT_TRUE(seconds.to_end);
  EXPECT_EQ(seconds.first_frame, 90);  // 1.5 s at 60 Hz
  EXPECT_EQ(seconds.first_seconds, 1.5);
  EXPECT_EQ(seconds.end_seconds, -1.0);
  EXPECT_EQ(seconds.manifest_line, 6);
  const auto& plain = r.clips[0].ranges[2];
  EXPECT_FALSE(plain.to_end);
  EXPECT_EQ(plain.first_frame, 30);
  EXPECT_EQ(plain.frame_count, 30);
  EXPECT_EQ(plain.end_seconds, 1.0);
}

TEST_F(Manifest, BiasesThatAreNotFiniteNumbersNameTheirLine) {
  const std::string clip = kWalk;
  EXPECT_EQ(errorOf(clip + "bias = nan\n"),
            "loco.toml:3: 'clip.bias' must be a finite number, got nan");
  EXPECT_EQ(errorOf(clip + "tags = [\"a\"]\nbias = -inf\n"),
            "loco.toml:4: 'clip.bias' must be a finite number, got -inf");
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\nframes = [1, 2]\nbias = inf\n"),
            "loco.toml:5: 'clip.range.bias' must be a finite number, got inf");
  EXPECT_EQ(errorOf(clip + "[[clip.range]]\nframes = [1, 2]\nbias = \"low\"\n"),
            "loco.toml:5: 'clip.range.bias' must be a number, got a string");
  EXPECT_EQ(errorOf(clip + "bias = 2e6\n"),
            "loco.toml:3: 'clip.bias' must be at least -1e+06 and at most 1e+06 (added to the "
            "search cost; negative prefers the frames), got 2e+06");
}

TEST_F(Manifest, TooManyTags) {
  std::string text = kWalk;
  text += "tags = [";
  for (int i = 0; i < 65; ++i) text += (i ? ", \"t" : "\"t") + std::to_string(i) + "\"";
  text += "]\n";
  EXPECT_EQ(errorOf(text),
            "loco.toml:3: more than 64 different tags; a tag mask has 64 bits, use fewer tags");
}

TEST_F(Manifest, SixtyFourTagsAcrossClipsAreFine) {
  std::string text;
  for (int clip = 0; clip < 2; ++clip) {
    text += "[[clip]]\nsource = \"walk.bvh\"\nname = \"c" + std::to_string(clip) + "\"\ntags = [";
    for (int i = 0; i < 32; ++i)
      text += (i ? ", \"t" : "\"t") + std::to_string(clip * 32 + i) + "\"";
    text += "]\n";
  }
  EXPECT_EQ(parse(text).clips.size(), 2u);
  EXPECT_EQ(errorOf(text + "[[clip]]\nsource = \"run.bvh\"\ntags = [\"one_more\"]\n"),
            "loco.toml:11: more than 64 different tags; a tag mask has 64 bits, use fewer tags");
}

TEST_F(Manifest, ReadManifestFromFile) {
  std::ofstream(manifest_) << "[database]\nframe_rate = 120\n" << kWalk;
  const mmdb::cook::CookRequest request = mmdb::cook::readManifest(manifest_);
  EXPECT_EQ(request.settings.frame_rate, 120.0);
  EXPECT_EQ(request.clips.at(0).manifest_line, 3);
}

TEST_F(Manifest, ReadManifestMissingFile) {
  const std::string path = (folder_ / "absent.toml").string();
  try {
    mmdb::cook::readManifest(path);
    FAIL() << "expected InputError";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": cannot open: No such file or directory; check the path");
  }
}

// Integers beyond 2^53 are numbers too: no empty optional, no value that changes between runs.
TEST_F(Manifest, HugeIntegersAreReadAsNumbers) {
  EXPECT_EQ(errorOf(std::string("[database]\nframe_rate = 9007199254740993\n") + kWalk),
            "loco.toml:2: 'database.frame_rate' must be at least 1 and at most 1000 (frames per "
            "second), got 9.0072e+15");
  EXPECT_EQ(errorOf(std::string("[database]\nframe_rate = -9223372036854775807\n") + kWalk),
            "loco.toml:2: 'database.frame_rate' must be at least 1 and at most 1000 (frames per "
            "second), got -9.22337e+18");
  EXPECT_EQ(errorOf(std::string("[weights]\nhip_velocity = 9223372036854775807\n") + kWalk),
            "loco.toml:2: 'weights.hip_velocity' must be at least 1e-06 and at most 1000 (to make "
            "a block matter less use a small weight such as 0.01), got 9.22337e+18");
  // A valid axis (the cook normalizes it), in an array as in a single key.
  const mmdb::cook::CookRequest request =
      parse(std::string("[skeleton]\nfacing_axis = [0, 0, 9007199254740993]\n") + kWalk);
  EXPECT_GT(request.settings.roles.facing_axis->z, 9e15f);
}

TEST_F(Manifest, TinyWeightsAreRefusedWithTheirLine) {
  EXPECT_EQ(errorOf(std::string("[weights]\nfoot_velocity = 1e-300\n") + kWalk),
            "loco.toml:2: 'weights.foot_velocity' must be at least 1e-06 and at most 1000 (to "
            "make a block matter less use a small weight such as 0.01), got 1e-300");
}

TEST_F(Manifest, NamesAreUniqueAfterMirroring) {
  EXPECT_EQ(errorOf(std::string(kWalk) + "mirror = true\n\n[[clip]]\nsource = \"run.bvh\"\n"
                                         "name = \"walk#mirror\"\n"),
            "loco.toml:5: clip name 'walk#mirror' is already used by the mirrored copy of the clip "
            "on line 1; give one of them another name with name = \"...\" (a mirrored copy of "
            "clip 'x' is named 'x#mirror')");
  EXPECT_EQ(errorOf("[[clip]]\nsource = \"run.bvh\"\nname = \"walk#mirror\"\n\n" +
                    std::string(kWalk) + "mirror = true\n"),
            "loco.toml:5: clip name 'walk#mirror' of the mirrored copy is already used by the clip "
            "on line 1; give one of them another name with name = \"...\" (a mirrored copy of "
            "clip 'x' is named 'x#mirror')");
  EXPECT_EQ(parse(std::string(kWalk) + "mirror = true\n").clips.size(), 1u);
}

TEST_F(Manifest, ReadManifestThatIsNotARegularFile) {
  const std::string dir = (folder_ / "dir.toml").string();
  fs::create_directories(dir);
  try {
    mmdb::cook::readManifest(dir);
    FAIL() << "expected InputError";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir +
                                         ": cannot open: not a regular file (a folder); check "
                                         "the path");
  }
  // A FIFO is refused before it is opened, so nothing blocks.
  const std::string fifo = (folder_ / "fifo.toml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    mmdb::cook::readManifest(fifo);
    FAIL() << "expected InputError";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_EQ(std::string(e.what()), fifo +
                                         ": cannot open: not a regular file (a named pipe, "
                                         "FIFO); check the path");
  }
}

TEST_F(Manifest, SourceErrorsSayWhatIsWrong) {
  fs::create_symlink("loop_b.bvh", folder_ / "loop_a.bvh");
  fs::create_symlink("loop_a.bvh", folder_ / "loop_b.bvh");
  EXPECT_EQ(errorOf("[[clip]]\nsource = \"loop_a.bvh\"\n"),
            "loco.toml:2: clip source 'loop_a.bvh' ('" + (folder_ / "loop_a.bvh").string() +
                "') cannot be read: a loop of symbolic links (too many levels of symbolic links); "
                "give a motion file such as a .bvh or .fbx");
  ASSERT_EQ(::mkfifo((folder_ / "pipe.bvh").c_str(), 0600), 0);
  EXPECT_EQ(errorOf("[[clip]]\nsource = \"pipe.bvh\"\n"),
            "loco.toml:2: clip source 'pipe.bvh' ('" + (folder_ / "pipe.bvh").string() +
                "') cannot be read: not a regular file (a named pipe, FIFO); give a motion file "
                "such as a .bvh or .fbx");
}

TEST_F(Manifest, ASourceCheckLetsEveryClipKeyBeRead) {
  // What the fuzz target does: sources that resolve without a file, so ranges and tags parse.
  const mmdb::cook::SourceCheck any = [](const std::string&, bool& missing) {
    missing = false;
    return std::string();
  };
  const mmdb::cook::CookRequest request = mmdb::cook::parseManifest(
      "[[clip]]\nsource = \"/nowhere/a.bvh\"\ntags = [\"x\"]\n[[clip.range]]\nframes = [1, 5]\n"
      "tags = [\"y\"]\n",
      "/nowhere/fuzz.toml", any);
  ASSERT_EQ(request.clips.size(), 1u);
  ASSERT_EQ(request.clips[0].ranges.size(), 1u);
  EXPECT_EQ(request.clips[0].ranges[0].frame_count, 4);
  EXPECT_EQ(request.clips[0].ranges[0].tags, std::vector<std::string>{"y"});
}

}  // namespace

// docs/manifest.md's reference ("every key, with its default where it has one") against the
// cooker: it lists every key the reader knows, and each default it states is CookSettings'.
namespace {

std::string referenceManifest() {
  std::ifstream in(MMDB_MANIFEST_DOC_PATH);
  std::stringstream text;
  text << in.rdbuf();
  const std::string page = text.str();
  const size_t marker = page.find("every key, with its default");
  if (marker == std::string::npos) return {};
  const size_t begin = page.rfind("```toml\n", marker);
  const size_t end = page.find("```", marker);
  if (begin == std::string::npos || end == std::string::npos) return {};
  return page.substr(begin + 8, end - begin - 8);
}

void collectKeys(const toml::table& table, const std::string& prefix, std::set<std::string>& keys) {
  for (const auto& [key, node] : table) {
    const std::string name = prefix + std::string(key.str());
    if (const toml::table* sub = node.as_table()) {
      collectKeys(*sub, name + ".", keys);
    } else if (const toml::array* array = node.as_array(); array && array->is_array_of_tables()) {
      keys.insert(name);
      for (const toml::node& element : *array) collectKeys(*element.as_table(), name + ".", keys);
    } else {
      keys.insert(name);
    }
  }
}

// docs/manifest.md prints seconds to four decimals (0.5167 for 31/60 s).
void expectPrinted(double printed, double value, const char* key) {
  EXPECT_NEAR(printed, value, 0.5e-4 + 1e-12) << key;
}

TEST(ManifestReference, DocListsEveryKey) {
  const std::string text = referenceManifest();
  ASSERT_FALSE(text.empty())
      << "docs/manifest.md has no ```toml block with 'every key, with its default'";
  std::set<std::string> listed;
  for (const auto& [key, node] : toml::parse(text)) {
    const std::string name(key.str());
    if (const toml::table* t = node.as_table()) {
      collectKeys(*t, name + ".", listed);
    } else if (const toml::array* a = node.as_array()) {
      for (const toml::node& element : *a) collectKeys(*element.as_table(), name + ".", listed);
    }
  }
  for (const std::string& key : mmdb::cook::manifestKeys())
    EXPECT_TRUE(listed.count(key)) << "docs/manifest.md's reference does not show '" << key << "'";
}

TEST(ManifestReference, DocDefaultsAreCookSettings) {
  const std::string text = referenceManifest();
  ASSERT_FALSE(text.empty());
  // Sources need not exist: the reference names example files.
  const mmdb::cook::CookRequest r =
      mmdb::cook::parseManifest(text, "docs/manifest.md", [](const std::string&, bool& missing) {
        missing = false;
        return std::string();
      });
  const mmdb::cook::CookSettings& got = r.settings;
  const mmdb::cook::CookSettings want;
  // [database] (unit_scale shows an example: its default is "what the file declares").
  EXPECT_EQ(got.frame_rate, want.frame_rate);
  expectPrinted(got.trailing_unmatchable_s, want.trailing_unmatchable_s,
                "database.trailing_unmatchable");
  for (int i = 0; i < 3; ++i)
    expectPrinted(got.trajectory_times[i], want.trajectory_times[i], "database.trajectory_times");
  // [skeleton] shows one preset's joints as an example; there is no default to compare.
  EXPECT_EQ(got.weights, want.weights) << "[weights]";
  expectPrinted(got.root_position_window_s, want.root_position_window_s,
                "filters.root_position_window");
  expectPrinted(got.facing_window_s, want.facing_window_s, "filters.facing_window");
  EXPECT_EQ(got.savitzky_golay_order, want.savitzky_golay_order) << "filters.order";
  EXPECT_EQ(got.contact_speed_threshold, want.contact_speed_threshold)
      << "contacts.speed_threshold";
  EXPECT_EQ(got.contact_median_s, want.contact_median_s) << "contacts.median";
  const mmdb::cook::CompressionSettings& gc = got.compression;
  const mmdb::cook::CompressionSettings& wc = want.compression;
  EXPECT_EQ(gc.pose, wc.pose) << "compression.pose";
  EXPECT_EQ(gc.position_tolerance, wc.position_tolerance) << "compression.position_tolerance";
  EXPECT_EQ(gc.shell_distance, wc.shell_distance) << "compression.shell_distance";
  EXPECT_EQ(gc.velocity_tolerance, wc.velocity_tolerance) << "compression.velocity_tolerance";
  EXPECT_EQ(gc.angular_velocity_tolerance, wc.angular_velocity_tolerance)
      << "compression.angular_velocity_tolerance";
  EXPECT_EQ(gc.segment_frames, wc.segment_frames) << "compression.segment_frames";
  EXPECT_EQ(r.mirror.patterns, mmdb::cook::MirrorSettings{}.patterns) << "mirror.patterns";
  EXPECT_EQ(r.mirror.tag_pairs, mmdb::cook::MirrorSettings{}.tag_pairs) << "mirror.tag_pairs";
  // A clip's optional keys: the second [[clip]] gives only its source.
  ASSERT_EQ(r.clips.size(), 2u);  // walk (with its mirrored copy), run
  const mmdb::cook::ClipSpec& plain = r.clips.back();
  EXPECT_EQ(plain.name, "run");
  EXPECT_EQ(plain.take, "");
  EXPECT_FALSE(plain.mirror);
  EXPECT_EQ(plain.bias, 0.0);
  EXPECT_EQ(plain.source_first_frame, 0);
  EXPECT_EQ(plain.source_frame_count, -1);
}

}  // namespace
