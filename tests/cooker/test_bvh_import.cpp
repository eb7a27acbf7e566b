// BVH importer: known values for every accepted form, exact messages for every bad input, and the
// real corpus when ../shared/data is present.
#include "core/errors.h"
#include "import/importer.h"

#include <assimp/Importer.hpp>
#include <assimp/scene.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const float kHalfSqrt2 = std::sqrt(0.5f);

void expectQuat(const glm::quat& actual, float w, float x, float y, float z) {
  EXPECT_NEAR(actual.w, w, 1e-6f);
  EXPECT_NEAR(actual.x, x, 1e-6f);
  EXPECT_NEAR(actual.y, y, 1e-6f);
  EXPECT_NEAR(actual.z, z, 1e-6f);
}

void expectVec(const glm::vec3& actual, float x, float y, float z) {
  EXPECT_FLOAT_EQ(actual.x, x);
  EXPECT_FLOAT_EQ(actual.y, y);
  EXPECT_FLOAT_EQ(actual.z, z);
}

std::string testData(const std::string& name) {
  return std::string(MMDB_TEST_DATA) + "/bvh/" + name;
}

// A one-joint file whose single frame line is `frame` under the given CHANNELS line.
std::string oneJoint(const std::string& channels, const std::string& frame) {
  return "HIERARCHY\nROOT Hips\n{\n  OFFSET 1 2 3\n  CHANNELS " + channels +
         "\n}\nMOTION\nFrames: 1\nFrame Time: 0.5\n" + frame + "\n";
}

// Routes spdlog's default logger into a string for the lifetime of the object.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    sink->set_pattern("%l: %v");
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return stream_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream stream_;
};

TEST(BvhImport, TwoJointFileFromDisk) {
  const mmdb::cook::RawClip clip = mmdb::cook::importBvhFile(testData("two_joints.bvh"));
  EXPECT_EQ(clip.name, "two_joints");
  EXPECT_EQ(clip.source_path, testData("two_joints.bvh"));
  EXPECT_EQ(clip.take, "");
  EXPECT_EQ(clip.declared_unit_scale, 0.0);
  EXPECT_EQ(clip.frame_rate, 30.0);  // 1 / 0.0333333, snapped to the whole rate
  ASSERT_EQ(clip.frame_count, 3);

  const mmdb::cook::Skeleton& s = clip.skeleton;
  ASSERT_EQ(s.jointCount(), 2);  // the End Site is not a joint
  EXPECT_EQ(s.names, (std::vector<std::string>{"Hips", "Spine"}));
  EXPECT_EQ(s.parents, (std::vector<int>{-1, 0}));
  expectVec(s.offsets[0], 0, 90, 0);
  expectVec(s.offsets[1], 0, 10, 0);
  expectQuat(s.bind_rotations[0], 1, 0, 0, 0);
  expectQuat(s.bind_rotations[1], 1, 0, 0, 0);
  ASSERT_EQ(clip.rotations.size(), 6u);
  ASSERT_EQ(clip.translations.size(), 6u);

  // Frame 0: identity; positions from the channels (root), from OFFSET (Spine).
  expectQuat(clip.rotation(0, 0), 1, 0, 0, 0);
  expectQuat(clip.rotation(0, 1), 1, 0, 0, 0);
  expectVec(clip.translation(0, 0), 1, 2, 3);
  expectVec(clip.translation(0, 1), 0, 10, 0);
  // Frame 1: 90 degrees about Z (root), about X (Spine).
  expectQuat(clip.rotation(1, 0), kHalfSqrt2, 0, 0, kHalfSqrt2);
  expectQuat(clip.rotation(1, 1), kHalfSqrt2, kHalfSqrt2, 0, 0);
  expectVec(clip.translation(1, 0), 4, 5, 6);
  // Frame 2: +90 about Y (root), -90 about Y (Spine); exponent notation in a position.
  expectQuat(clip.rotation(2, 0), kHalfSqrt2, 0, kHalfSqrt2, 0);
  expectQuat(clip.rotation(2, 1), kHalfSqrt2, 0, -kHalfSqrt2, 0);
  expectVec(clip.translation(2, 0), -7.5f, 8.25f, 1e-5f);
  expectVec(clip.translation(2, 1), 0, 10, 0);
}

TEST(BvhImport, CrlfTabsLowercaseKeywordsAndExponents) {
  const mmdb::cook::RawClip clip = mmdb::cook::importBvhFile(testData("crlf_tabs.bvh"));
  EXPECT_EQ(clip.name, "crlf_tabs");
  EXPECT_EQ(clip.frame_rate, 120.0);  // 1 / 0.008333 is 120.005: within the printed precision
  ASSERT_EQ(clip.frame_count, 2);
  ASSERT_EQ(clip.skeleton.jointCount(), 2);
  EXPECT_EQ(clip.skeleton.names[1], "Left Leg");  // names may hold spaces
  // The root has position channels only: identity rotation.
  expectQuat(clip.rotation(0, 0), 1, 0, 0, 0);
  expectVec(clip.translation(0, 0), 15, -25, 3);  // 1.5E+01 -2.5e+01 +3
  expectQuat(clip.rotation(0, 1), kHalfSqrt2, kHalfSqrt2, 0, 0);
  expectVec(clip.translation(0, 1), 1, 0, 0);
  const float half = glm::radians(-25.0f) / 2;
  expectQuat(clip.rotation(1, 1), std::cos(half), 0, std::sin(half), 0);
}

TEST(BvhImport, ChannelOrderDecidesTheProduct) {
  // Z then X: R = Rz(90) * Rx(90).
  const mmdb::cook::RawClip zx =
      mmdb::cook::parseBvh(oneJoint("3 Zrotation Xrotation Yrotation", "90 90 0"), "zxy.bvh");
  expectQuat(zx.rotation(0, 0), 0.5f, 0.5f, 0.5f, 0.5f);
  // X then Z with the same angles: R = Rx(90) * Rz(90).
  const mmdb::cook::RawClip xz =
      mmdb::cook::parseBvh(oneJoint("3 Xrotation Yrotation Zrotation", "90 0 90"), "xyz.bvh");
  expectQuat(xz.rotation(0, 0), 0.5f, 0.5f, -0.5f, 0.5f);
}

TEST(BvhImport, GeneralAnglesMatchAxisAngleProduct) {
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(
      oneJoint("3 Yrotation Zrotation Xrotation", "-33.5 71.25 160"), "yzx.bvh");
  const glm::quat expected = glm::angleAxis(glm::radians(-33.5f), glm::vec3(0, 1, 0)) *
                             glm::angleAxis(glm::radians(71.25f), glm::vec3(0, 0, 1)) *
                             glm::angleAxis(glm::radians(160.0f), glm::vec3(1, 0, 0));
  expectQuat(clip.rotation(0, 0), expected.w, expected.x, expected.y, expected.z);
}

TEST(BvhImport, AnySubsetOfChannels) {
  // One position axis and one rotation axis; the other axes come from OFFSET 1 2 3.
  const mmdb::cook::RawClip clip =
      mmdb::cook::parseBvh(oneJoint("2 Yposition Xrotation", "7 90"), "subset.bvh");
  expectVec(clip.translation(0, 0), 1, 7, 3);
  expectQuat(clip.rotation(0, 0), kHalfSqrt2, kHalfSqrt2, 0, 0);
  // Rotation first, positions after, in any order.
  const mmdb::cook::RawClip mixed = mmdb::cook::parseBvh(
      oneJoint("6 Zrotation Zposition Xposition Yrotation Yposition Xrotation", "90 3 1 0 2 0"),
      "mixed.bvh");
  expectVec(mixed.translation(0, 0), 1, 2, 3);
  expectQuat(mixed.rotation(0, 0), kHalfSqrt2, 0, 0, kHalfSqrt2);
}

TEST(BvhImport, JointsWithoutChannelsKeepTheirOffset) {
  const std::string text =
      "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n"
      "JOINT B\n{\nOFFSET 4 5 6\nCHANNELS 0\n}\n}\n"
      "MOTION\nFrames: 1\nFrame Time: 0.1\n90\n";
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(text, "fixed.bvh");
  ASSERT_EQ(clip.skeleton.jointCount(), 2);
  expectVec(clip.translation(0, 1), 4, 5, 6);
  expectQuat(clip.rotation(0, 1), 1, 0, 0, 0);
  EXPECT_DOUBLE_EQ(clip.frame_rate, 10.0);
}

TEST(BvhImport, TreeParentsPrecedeChildren) {
  const std::string text =
      "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\nCHANNELS 1 Yrotation\n"
      "JOINT A\n{\nOFFSET 1 0 0\nCHANNELS 1 Yrotation\n"
      "  JOINT A1\n{\nOFFSET 1 0 0\nCHANNELS 1 Yrotation\nEnd Site\n{\nOFFSET 1 0 0\n}\n}\n}\n"
      "JOINT B\n{\nOFFSET -1 0 0\nCHANNELS 1 Yrotation\nEnd Site\n{\nOFFSET -1 0 0\n}\n}\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.25\n0 0 0 0\n10 20 30 40\n";
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(text, "/some/dir/tree.bvh");
  EXPECT_EQ(clip.name, "tree");
  EXPECT_EQ(clip.skeleton.names, (std::vector<std::string>{"R", "A", "A1", "B"}));
  EXPECT_EQ(clip.skeleton.parents, (std::vector<int>{-1, 0, 1, 0}));
  const float half = glm::radians(40.0f) / 2;
  expectQuat(clip.rotation(1, 3), std::cos(half), 0, std::sin(half), 0);
}

TEST(BvhImport, BracesOnTheNameLineBlankLinesAndBom) {
  const std::string text =
      "\xEF\xBB\xBFHIERARCHY\nROOT Hips {\n  OFFSET 0 0 0\n  CHANNELS 1 Zrotation\n"
      "  End Site { OFFSET 0 1 0 }\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n\n90\n\n  \n-90\n\n";
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(text, "braces.bvh");
  EXPECT_EQ(clip.skeleton.names[0], "Hips");
  ASSERT_EQ(clip.frame_count, 2);
  expectQuat(clip.rotation(1, 0), kHalfSqrt2, 0, 0, -kHalfSqrt2);
}

TEST(BvhImport, LastFrameWithoutNewline) {
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.5\n1\n2",
      "nonl.bvh");
  EXPECT_EQ(clip.frame_count, 2);
}

// The import's warnings go with the clip (the cook reports them, and a cached part keeps them).
TEST(BvhImport, MoreFramesThanDeclaredReadsThemAll) {
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
      "MOTION\nFrames: 2\nFrame Time: 0.5\n1\n2\n3\n4\n",
      "more.bvh");
  EXPECT_EQ(clip.frame_count, 4);
  EXPECT_EQ(clip.rotations.size(), 4u);
  ASSERT_EQ(clip.warnings.size(), 1u);
  EXPECT_EQ(clip.warnings[0].text, "more.bvh:8: declares 2 frames but holds 4; reading all 4");
  EXPECT_EQ(clip.warnings[0].code, "bvh-frame-count");
  EXPECT_EQ(clip.warnings[0].file, "more.bvh");
  EXPECT_EQ(clip.warnings[0].line, 8);
}

TEST(BvhImport, OneFrameFewerThanDeclaredIsAccepted) {
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\n"
      "MOTION\nFrames: 4\nFrame Time: 0.5\n1\n2\n3\n",
      "offbyone.bvh");
  EXPECT_EQ(clip.frame_count, 3);
  ASSERT_EQ(clip.warnings.size(), 1u);
  EXPECT_EQ(clip.warnings[0].text,
            "offbyone.bvh:8: declares 4 frames but holds 3 (a common exporter off-by-one); "
            "reading the 3 present");
  EXPECT_EQ(clip.warnings[0].line, 8);
}

TEST(BvhImport, MatchingFrameCountWarnsOfNothing) {
  LogCapture log;
  EXPECT_TRUE(mmdb::cook::importBvhFile(testData("two_joints.bvh")).warnings.empty());
  EXPECT_EQ(log.text(), "");
}

// Every number form, through the whole frame scanner: each value must be the nearest float to
// the decimal, or its neighbour (the float rounded from std::from_chars' double, within 1 ulp).
TEST(BvhImport, NumbersMatchFromChars) {
  std::vector<std::string> numbers = {"0",
                                      "-0",
                                      "1",
                                      "-1",
                                      "+3",
                                      "5.",
                                      ".5",
                                      "-.25",
                                      "0.000001",
                                      "-0.0000001",
                                      "000123.5",
                                      "123456789",
                                      "12345678.9",
                                      "1234567.89",
                                      "-130.536",
                                      "5.1072e-06",
                                      "-2.5E+01",
                                      "1e-5",
                                      "1E5",
                                      "3.40282e+38",
                                      "-1.17549e-38",
                                      "0.1234567",
                                      "0.12345678",
                                      "9999999.",
                                      "99999999",
                                      "1234567890123456789",
                                      "12345678901234567890123",
                                      "0.30000000000000004",
                                      "7e22",
                                      "7e-22",
                                      "4.9e-45",
                                      "123.456e3",
                                      "-9.87654321e-3",
                                      "1.0000000",
                                      "180",
                                      "-179.99999"};
  // Deterministic spread of magnitudes and printed precisions.
  uint64_t state = 12345;
  char buffer[64];
  for (int i = 0; i < 4000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double mantissa = static_cast<double>(state >> 11) / static_cast<double>(1ull << 53);
    const int magnitude = static_cast<int>((state >> 3) % 12) - 6;
    const double value = (mantissa - 0.5) * std::pow(10.0, magnitude);
    const int digits = static_cast<int>((state >> 7) % 10);
    const char* format = (i % 3 == 0) ? "%.*f" : (i % 3 == 1) ? "%.*g" : "%.*e";
    std::snprintf(buffer, sizeof buffer, format, digits, value);
    numbers.push_back(buffer);
  }
  std::string text =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 1 Xposition\n}\nMOTION\nFrames: " +
      std::to_string(numbers.size()) + "\nFrame Time: 0.5\n";
  for (const std::string& n : numbers) text += n + (n.size() % 2 ? "\n" : " \t\r\n");
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(text, "numbers.bvh");
  ASSERT_EQ(clip.frame_count, static_cast<int>(numbers.size()));
  for (size_t i = 0; i < numbers.size(); ++i) {
    const std::string& n = numbers[i];
    double expected = 0;
    const char* first = n.data() + (n[0] == '+');
    std::from_chars(first, n.data() + n.size(), expected);
    const float nearest = static_cast<float>(expected);
    const float got = clip.translation(static_cast<int>(i), 0).x;
    EXPECT_TRUE(got == nearest || got == std::nextafter(nearest, 0.0f) ||
                got == std::nextafter(nearest, 2.0f * nearest))
        << n << " read as " << got << ", nearest float " << nearest;
  }
}

// Rotations over the whole range of angles (and far outside it) against libm in double.
TEST(BvhImport, RotationsMatchLibmOverAllAngles) {
  std::vector<float> degrees;
  for (int i = -4000; i <= 4000; ++i) degrees.push_back(static_cast<float>(i) * 0.4537f);
  for (float big : {1e4f, -3.3e5f, 9.9e5f, 2e6f, -4.7e7f, 1e9f}) degrees.push_back(big);
  std::string text =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n}\n"
      "MOTION\nFrames: " +
      std::to_string(degrees.size()) + "\nFrame Time: 0.5\n";
  char buffer[128];
  for (float d : degrees) {
    std::snprintf(buffer, sizeof buffer, "%.9g 0 0\n", d);
    text += buffer;
  }
  const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(text, "angles.bvh");
  ASSERT_EQ(clip.frame_count, static_cast<int>(degrees.size()));
  for (size_t f = 0; f < degrees.size(); ++f) {
    const float half = degrees[f] * (3.14159265358979323846f / 360.0f);
    const glm::quat& q = clip.rotation(static_cast<int>(f), 0);
    EXPECT_NEAR(q.w, std::cos(static_cast<double>(half)), 1e-6) << degrees[f];
    EXPECT_NEAR(q.x, std::sin(static_cast<double>(half)), 1e-6) << degrees[f];
    EXPECT_EQ(q.y, 0.0f);
    EXPECT_EQ(q.z, 0.0f);
  }
}

TEST(BvhImport, TinyNumbersUnderflowToZero) {
  const mmdb::cook::RawClip clip =
      mmdb::cook::parseBvh(oneJoint("1 Xposition", "1e-999"), "tiny.bvh");
  EXPECT_EQ(clip.translation(0, 0).x, 0.0f);
}

// ---------------------------------------------------------------------------------------------
// Bad input: InputError naming the file and the 1-based line, with what to do.

// The message parseBvh throws for `text`, or "" when it throws nothing.
std::string errorFor(const std::string& text, const std::string& path = "walk.bvh") {
  try {
    mmdb::cook::parseBvh(text, path);
  } catch (const mmdb::cook::InputError& e) {
    return e.what();
  }
  return "";
}

// Line numbers of this file are the ones the messages below name.
std::string walkFile(const std::string& frames_line, const std::string& frame0,
                     const std::string& frame1 = "7 8 9 10 11 12\n") {
  return "HIERARCHY\n"                                     // 1
         "ROOT Hips\n"                                     // 2
         "{\n"                                             // 3
         "  OFFSET 0 0 0\n"                                // 4
         "  CHANNELS 3 Xposition Yposition Zposition\n"    // 5
         "  JOINT Spine\n"                                 // 6
         "  {\n"                                           // 7
         "    OFFSET 0 1 0\n"                              // 8
         "    CHANNELS 3 Zrotation Xrotation Yrotation\n"  // 9
         "  }\n"                                           // 10
         "}\n"                                             // 11
         "MOTION\n"                                        // 12
         + frames_line +                                   // 13
         "Frame Time: 0.5\n"                               // 14
         + frame0 + frame1;                                // 15, 16
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

const std::string kGood = walkFile("Frames: 2\n", "1 2 3 4 5 6\n");

TEST(BvhImportErrors, TheBaseFileIsGood) { EXPECT_EQ(errorFor(kGood), ""); }

TEST(BvhImportErrors, MisspelledKeyword) {
  EXPECT_EQ(errorFor(replaced(kGood, "    OFFSET", "    OFSET")),
            "walk.bvh:8: expected 'OFFSET' but found 'OFSET'; fix the hierarchy or re-export the "
            "file");
  EXPECT_EQ(errorFor(replaced(kGood, "  CHANNELS 3 Z", "  CHANNEL 3 Z")),
            "walk.bvh:9: expected 'CHANNELS' but found 'CHANNEL'; fix the hierarchy or re-export "
            "the file");
  EXPECT_EQ(errorFor(replaced(kGood, "  JOINT", "  BONE")),
            "walk.bvh:6: expected 'JOINT', 'End Site' or '}' but found 'BONE'; fix the hierarchy "
            "or re-export the file");
  EXPECT_EQ(errorFor(replaced(kGood, "MOTION", "MOTOIN")),
            "walk.bvh:12: expected 'MOTION' after the hierarchy but found 'MOTOIN'; fix the "
            "hierarchy or re-export the file");
  EXPECT_EQ(errorFor(replaced(kGood, "Frames:", "Frame:")),
            "walk.bvh:13: expected 'Frames:' but found 'Frame: 2'; fix that line or re-export the "
            "file");
  EXPECT_EQ(errorFor(replaced(kGood, "Frame Time:", "FrameTime:")),
            "walk.bvh:14: expected 'Frame Time:' but found 'FrameTime: 0.5'; fix that line or "
            "re-export the file");
}

TEST(BvhImportErrors, NotABvhFile) {
  EXPECT_EQ(errorFor("Kaydara FBX Binary  \x00\x1a", "walk.fbx"),
            "walk.fbx:1: the file does not start with 'HIERARCHY', so it is not a BVH file (or "
            "it is damaged); check the path, or re-export the file as BVH");
  EXPECT_EQ(errorFor(""),
            "walk.bvh:1: the file ends where 'HIERARCHY' was expected; the file is truncated: "
            "re-export it");
}

TEST(BvhImportErrors, CarriageReturnLineEndsAreNamed) {
  EXPECT_EQ(errorFor("HIERARCHY\rROOT Hips\r{\r  OFFSET 0 0 0\r}\rMOTION\rFrames: 1\r"
                     "Frame Time: 0.1\r0\r"),
            "walk.bvh:1: the lines end with CR alone (classic Mac OS line ends); convert them to "
            "LF or CR LF line ends, e.g. with tr '\\r' '\\n', or re-export the file");
}

TEST(BvhImportErrors, FrameTimeOutsideTheRateLimits) {
  const std::string slow = replaced(kGood, "Frame Time: 0.5", "Frame Time: 1000");
  EXPECT_NE(errorFor(slow).find("'Frame Time:' is 1000 s, a rate of 0.001 Hz; mmcook reads 1 to "
                                "1000 Hz"),
            std::string::npos)
      << errorFor(slow);
  const std::string huge = replaced(kGood, "Frame Time: 0.5", "Frame Time: 1e300");
  EXPECT_NE(errorFor(huge).find("mmcook reads 1 to 1000 Hz"), std::string::npos) << errorFor(huge);
  const std::string fast = replaced(kGood, "Frame Time: 0.5", "Frame Time: 0.0001");
  EXPECT_NE(errorFor(fast).find("a rate of 10000 Hz"), std::string::npos) << errorFor(fast);
}

TEST(BvhImportErrors, QuotesOnlyAFewCharactersOfAnUnparsableFile) {
  const std::string garbage(5000, 'x');
  const std::string message = errorFor(garbage);
  EXPECT_LT(message.size(), 200u) << message;
  EXPECT_EQ(message.find("xxxxxxxxxx"), std::string::npos) << message;
}

TEST(BvhImportErrors, TruncatedInTheHierarchy) {
  const std::string cut_in_offset = kGood.substr(0, kGood.find("1 0\n    CHANNELS") + 1);
  EXPECT_EQ(errorFor(cut_in_offset),
            "walk.bvh:8: the file ends inside an OFFSET; the file is truncated: re-export it");
  const std::string cut_in_joint = kGood.substr(0, kGood.find("  }\n}"));
  EXPECT_EQ(errorFor(cut_in_joint),
            "walk.bvh:10: the file ends inside joint 'Spine'; the file is truncated: re-export it");
  const std::string cut_in_channels = kGood.substr(0, kGood.find(" Yrotation\n"));
  EXPECT_EQ(errorFor(cut_in_channels),
            "walk.bvh:9: the file ends inside CHANNELS; the file is truncated: re-export it");
  const std::string cut_before_motion = kGood.substr(0, kGood.find("MOTION"));
  EXPECT_EQ(errorFor(cut_before_motion),
            "walk.bvh:12: the file ends before MOTION; the file is truncated: re-export it");
  const std::string cut_in_header = kGood.substr(0, kGood.find("Frame Time"));
  EXPECT_EQ(errorFor(cut_in_header),
            "walk.bvh:14: the file ends where 'Frame Time:' was expected; the file is truncated: "
            "re-export it");
}

TEST(BvhImportErrors, TruncatedInAFrame) {
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 4 5 6\n", "7 8 9")),
            "walk.bvh:16: the file ends inside frame 1 (3 of 6 numbers); the file is truncated: "
            "re-export it");
}

TEST(BvhImportErrors, TruncatedFileOnDisk) {
  const std::string path = testData("truncated.bvh");
  try {
    mmdb::cook::importBvhFile(path);
    FAIL() << "no error";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":21: the file ends inside frame 2 (4 of 9 numbers); the file is "
                  "truncated: re-export it");
  }
}

TEST(BvhImportErrors, FrameLineWithTooManyOrTooFewNumbers) {
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 4 5 6 7\n")),
            "walk.bvh:15: frame 0 has 7 numbers but the hierarchy has 6 channels; each frame must "
            "be one line with one number per channel: fix the line or re-export the file");
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 4 5 6\n", "7 8 9 10 11\n")),
            "walk.bvh:16: frame 1 has 5 numbers but the hierarchy has 6 channels; each frame must "
            "be one line with one number per channel: fix the line or re-export the file");
  // A frame wrapped over two lines is reported at its first line.
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3\n4 5 6\n")),
            "walk.bvh:15: frame 0 has 3 numbers but the hierarchy has 6 channels; each frame must "
            "be one line with one number per channel: fix the line or re-export the file");
}

TEST(BvhImportErrors, ValuesThatAreNotFiniteNumbers) {
  const std::string tail = ", which is not a number; fix the line or re-export the file";
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 abc 4 5 6\n")),
            "walk.bvh:15: frame 0 holds 'abc'" + tail);
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 4 5 6\n", "7 8 1,5 10 11 12\n")),
            "walk.bvh:16: frame 1 holds '1,5'" + tail);
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 1.5x 5 6\n")),
            "walk.bvh:15: frame 0 holds '1.5x'" + tail);
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 - 5 6\n")),
            "walk.bvh:15: frame 0 holds '-'" + tail);
  const std::string not_finite =
      ", which is not a finite number; fix the line or re-export the file";
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 nan 3 4 5 6\n")),
            "walk.bvh:15: frame 0 holds 'nan'" + not_finite);
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 4 5 6\n", "7 8 9 -INF 11 12\n")),
            "walk.bvh:16: frame 1 holds '-INF'" + not_finite);
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 4 1e999 6\n")),
            "walk.bvh:15: frame 0 holds '1e999'" + not_finite);
  EXPECT_EQ(errorFor(walkFile("Frames: 2\n", "1 2 3 4 1e39 6\n")),  // beyond a float
            "walk.bvh:15: frame 0 holds '1e39'" + not_finite);
  EXPECT_EQ(errorFor(replaced(kGood, "OFFSET 0 1 0", "OFFSET 0 nan 0")),
            "walk.bvh:8: OFFSET needs three numbers but found 'nan'; fix the hierarchy or "
            "re-export the file");
}

TEST(BvhImportErrors, DeclaredFrameCountBeyondTheData) {
  EXPECT_EQ(errorFor(walkFile("Frames: 10\n", "1 2 3 4 5 6\n")),
            "walk.bvh:13: declares 10 frames but holds 2; re-export the file or fix the "
            "'Frames:' line");
  // Far beyond: refused without reserving memory for the declared count.
  EXPECT_EQ(errorFor(walkFile("Frames: 4000000000000\n", "1 2 3 4 5 6\n")),
            "walk.bvh:13: declares 4000000000000 frames but holds 2; re-export the file or fix "
            "the 'Frames:' line");
  EXPECT_EQ(errorFor(walkFile("Frames: 99999999999999999999999\n", "1 2 3 4 5 6\n")),
            "walk.bvh:13: 'Frames:' needs a whole number of frames but found "
            "'9999999999999999...'; fix the 'Frames:' line or re-export the file");
  EXPECT_EQ(errorFor(walkFile("Frames: -2\n", "1 2 3 4 5 6\n")),
            "walk.bvh:13: 'Frames:' needs a whole number of frames but found '-2'; fix the "
            "'Frames:' line or re-export the file");
  EXPECT_EQ(errorFor(walkFile("Frames: 2 frames\n", "1 2 3 4 5 6\n")),
            "walk.bvh:13: unexpected 'frames' after the frame count; fix that line or re-export "
            "the file");
}

TEST(BvhImportErrors, ZeroFrames) {
  EXPECT_EQ(errorFor(walkFile("Frames: 0\n", "", "")),
            "walk.bvh:13: the file holds no frames (it declares 0); re-export it with its motion");
  EXPECT_EQ(errorFor(walkFile("Frames: 1\n", "\n", "\n")),
            "walk.bvh:13: the file holds no frames (it declares 1); re-export it with its motion");
}

TEST(BvhImportErrors, FrameTimeMustBePositive) {
  const std::string hint = "; fix that line or re-export the file";
  for (const std::string bad : {"0", "-0.5", "-0", "abc", "nan", "inf", "1e-320"}) {
    EXPECT_EQ(errorFor(replaced(kGood, "Frame Time: 0.5", "Frame Time: " + bad)),
              "walk.bvh:14: 'Frame Time:' must be a positive number of seconds but found '" + bad +
                  "'" + hint);
  }
  EXPECT_EQ(errorFor(replaced(kGood, "Frame Time: 0.5", "Frame Time:")),
            "walk.bvh:14: expected a number after 'Frame Time:'; fix that line or re-export the "
            "file");
}

// `depth` joints, each inside the previous one, one rotation channel each.
std::string nested(int depth) {
  std::string text = "HIERARCHY\nROOT J0\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n";
  for (int j = 1; j < depth; ++j)
    text += "JOINT J" + std::to_string(j) + "\n{\nOFFSET 0 1 0\nCHANNELS 1 Xrotation\n";
  for (int j = 0; j < depth; ++j) text += "}\n";
  text += "MOTION\nFrames: 1\nFrame Time: 0.5\n";
  for (int j = 0; j < depth; ++j) text += "0 ";
  return text + "\n";
}

TEST(BvhImportErrors, HierarchyDeeperThanAnySkeleton) {
  const mmdb::cook::RawClip deepest = mmdb::cook::parseBvh(nested(256), "deep.bvh");
  EXPECT_EQ(deepest.skeleton.jointCount(), 256);
  EXPECT_EQ(deepest.skeleton.parents[255], 254);
  // Joint 256 (0-based) opens on line 2 + 256 * 4.
  EXPECT_EQ(errorFor(nested(257), "deep.bvh"),
            "deep.bvh:1026: joints nest deeper than 256 levels, more than any skeleton; the file "
            "is damaged: re-export it");
  // Far deeper: still an error, not a stack overflow.
  EXPECT_NE(errorFor(nested(100000), "deep.bvh").find("nest deeper than 256"), std::string::npos);
}

TEST(BvhImportErrors, DuplicateJointNames) {
  EXPECT_EQ(errorFor(replaced(kGood, "JOINT Spine", "JOINT Hips")),
            "walk.bvh:6: duplicate joint name 'Hips' (first at line 2); rename one of them so "
            "every joint is unique, then re-export");
}

TEST(BvhImportErrors, BadChannels) {
  EXPECT_EQ(errorFor(replaced(kGood, "CHANNELS 3 Z", "CHANNELS 7 Z")),
            "walk.bvh:9: CHANNELS needs a count from 0 to 6 but found '7'; fix the hierarchy or "
            "re-export the file");
  EXPECT_EQ(errorFor(replaced(kGood, "Xrotation", "Wrotation")),
            "walk.bvh:9: expected a channel name (Xposition, Yposition, Zposition, Xrotation, "
            "Yrotation, Zrotation) but found 'Wrotation'; CHANNELS declares 3: fix the hierarchy "
            "or re-export the file");
  EXPECT_EQ(errorFor(replaced(kGood, "Zrotation Xrotation", "Zrotation Zrotation")),
            "walk.bvh:9: channel 'Zrotation' appears twice in one CHANNELS line; fix the hierarchy "
            "or re-export the file");
  // Fewer names than the count: the next keyword is reported where a channel was expected.
  EXPECT_EQ(errorFor(replaced(kGood, "CHANNELS 3 Xposition", "CHANNELS 4 Xposition")),
            "walk.bvh:6: expected a channel name (Xposition, Yposition, Zposition, Xrotation, "
            "Yrotation, Zrotation) but found 'JOINT'; CHANNELS declares 4: fix the hierarchy or "
            "re-export the file");
}

TEST(BvhImportErrors, NoChannelsAtAll) {
  EXPECT_EQ(errorFor("HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\nFrames: 1\n"
                     "Frame Time: 0.5\n\n"),
            "walk.bvh:2: no joint has CHANNELS, so there is no motion to read; re-export the file "
            "with its channels");
}

TEST(BvhImportErrors, SecondRootAndNamelessJoint) {
  EXPECT_EQ(errorFor(replaced(kGood, "MOTION", "ROOT Other\n{\n}\nMOTION")),
            "walk.bvh:12: a second ROOT: only one skeleton per file is supported; export one "
            "character per file");
  EXPECT_EQ(errorFor(replaced(kGood, "JOINT Spine", "JOINT")),
            "walk.bvh:6: a JOINT has no name; fix the hierarchy or re-export the file");
}

TEST(BvhImportErrors, MissingFile) {
  const std::string path = testData("no_such_file.bvh");
  try {
    mmdb::cook::importBvhFile(path);
    FAIL() << "no error";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": cannot open: No such file or directory; check the path");
  }
  try {
    mmdb::cook::importBvhFile(testData(""));
    FAIL() << "no error";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Real files, when the shared corpus is present.

fs::path sharedData() { return fs::path(MMDB_SHARED_DATA); }

std::vector<fs::path> bvhFilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".bvh") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(BvhImportCorpus, BandaiAllFiles) {
  const fs::path dir = sharedData() / "bandai-1";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no motion corpus at " << dir;
  const auto files = bvhFilesIn(dir);
  ASSERT_EQ(files.size(), 105u);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const mmdb::cook::RawClip clip = mmdb::cook::importBvhFile(file.string());
    EXPECT_EQ(clip.frame_rate, 30.0);
    EXPECT_EQ(clip.skeleton.names[0], "joint_Root");
    EXPECT_EQ(clip.skeleton.names[1], "Hips");
    EXPECT_EQ(clip.skeleton.jointCount(), 22);
    EXPECT_GT(clip.frame_count, 10);
    EXPECT_GE(clip.skeleton.find("Foot_L"), 0);
    EXPECT_GE(clip.skeleton.find("Toes_R"), 0);
    EXPECT_EQ(clip.rotations.size(), static_cast<size_t>(clip.frame_count) * 22);
  }
}

TEST(BvhImportCorpus, CmuSubject131) {
  const fs::path dir = sharedData() / "cmu-bvh";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no motion corpus at " << dir;
  for (const fs::path& file : bvhFilesIn(dir)) {
    SCOPED_TRACE(file.string());
    const mmdb::cook::RawClip clip = mmdb::cook::importBvhFile(file.string());
    EXPECT_EQ(clip.frame_rate, 120.0);
    EXPECT_EQ(clip.skeleton.jointCount(), 31);
    EXPECT_EQ(clip.skeleton.names[0], "Hips");
    EXPECT_GE(clip.skeleton.find("LeftAnkle"), 0);
    EXPECT_GT(clip.frame_count, 900);
  }
  // 131_01 declares and holds 994 frames; the first values of its first line are the root's.
  const mmdb::cook::RawClip clip = mmdb::cook::importBvhFile((dir / "131_01.bvh").string());
  EXPECT_EQ(clip.frame_count, 994);
  expectVec(clip.translation(0, 0), 5.23f, 16.9002f, -33.8986f);
}

TEST(BvhImportCorpus, AgreesWithAssimp) {
  const fs::path file = sharedData() / "bandai-1" / "dataset-1_walk_active_001.bvh";
  if (!fs::exists(file)) GTEST_SKIP() << "no motion corpus at " << file;
  const mmdb::cook::RawClip clip = mmdb::cook::importBvhFile(file.string());
  Assimp::Importer importer;
  const aiScene* scene = importer.ReadFile(file.string(), 0);
  ASSERT_NE(scene, nullptr) << importer.GetErrorString();
  ASSERT_EQ(scene->mNumAnimations, 1u);
  const aiAnimation* anim = scene->mAnimations[0];
  EXPECT_EQ(static_cast<int>(anim->mNumChannels), clip.skeleton.jointCount());
  ASSERT_GT(anim->mNumChannels, 0u);
  EXPECT_EQ(static_cast<int>(anim->mChannels[0]->mNumRotationKeys), clip.frame_count);
  EXPECT_NEAR(anim->mTicksPerSecond, clip.frame_rate, 1e-3);
  // Same rotation for the hips on a middle frame (Assimp keys are w, x, y, z; sign may differ).
  const int frame = clip.frame_count / 2;
  for (unsigned c = 0; c < anim->mNumChannels; ++c) {
    const aiNodeAnim* channel = anim->mChannels[c];
    const int joint = clip.skeleton.find(channel->mNodeName.C_Str());
    ASSERT_GE(joint, 0) << channel->mNodeName.C_Str();
    const aiQuaternion& a = channel->mRotationKeys[frame].mValue;
    const glm::quat& q = clip.rotation(frame, joint);
    const float dot = a.w * q.w + a.x * q.x + a.y * q.y + a.z * q.z;
    EXPECT_NEAR(std::fabs(dot), 1.0f, 1e-4f) << channel->mNodeName.C_Str();
  }
}

}  // namespace
