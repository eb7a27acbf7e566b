// The whole cook on BVH files written by the test (known motion), and on the Bandai Namco corpus
// when it is present.
#include "compress/pose_compression.h"
#include "cook/cook_database.h"
#include "cook/features.h"
#include "core/errors.h"
#include "synthetic_bvh.h"
#include "synthetic_request.h"
#include "write/database_writer.h"

#include <gtest/gtest.h>
#include <mmdb/database.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace mmdb::cook {
namespace {

namespace fs = std::filesystem;
using namespace mmdb::test;

class CookPipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("mmdb_cook_pipeline_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  CookRequest threeClips() { return walkTurnAndPart(dir_); }

  fs::path dir_;
};

TEST_F(CookPipeline, FillsEveryField) {
  CookReport report;
  std::vector<std::pair<int, int>> calls;
  const CookedDatabase db = cookDatabase(
      threeClips(), &report, [&](int done, int total) { calls.emplace_back(done, total); });
  EXPECT_EQ(report.preset, "geno");
  EXPECT_DOUBLE_EQ(report.unit_scale, 0.01);
  EXPECT_EQ(report.unit_scale_origin, "preset");
  EXPECT_EQ(report.source_frames, 121 + 151 + 61);
  EXPECT_EQ(report.role_lines[3], "left_toe: LeftToeBase (joint 3)");
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls.back(), std::make_pair(3, 3));

  // 30 -> 60 Hz: 2n - 1 frames; the mirrored turn follows the turn.
  ASSERT_EQ(db.clips.size(), 4u);
  const std::vector<std::string> names = {"walk", "turn", "turn#mirror", "walk_part"};
  const std::vector<uint32_t> counts = {241, 301, 301, 121};
  uint32_t first = 0;
  for (size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(db.clips[c].name, names[c]);
    EXPECT_EQ(db.clips[c].frame_count, counts[c]);
    EXPECT_EQ(db.clips[c].first_frame, first);
    EXPECT_FLOAT_EQ(db.clips[c].source_frame_rate, 30);
    first += counts[c];
  }
  EXPECT_EQ(db.frame_count, first);
  EXPECT_TRUE(db.clips[2].mirrored);
  EXPECT_EQ(db.clips[2].mirror_of, 1);
  EXPECT_EQ(db.clips[3].source_first_frame, 10u);
  EXPECT_EQ(db.clips[3].source_frame_count, 61u);
  EXPECT_EQ(db.clips[3].source_index, 0);
  EXPECT_EQ(db.clips[1].source_index, 1);
  ASSERT_EQ(db.sources.size(), 2u);
  EXPECT_EQ(db.sources[0].path, "walk.bvh");
  EXPECT_EQ(db.sources[0].size_bytes, fs::file_size(dir_ / "walk.bvh"));
  EXPECT_EQ(db.sources[0].format, SourceFormat::Bvh);
  EXPECT_NE(db.sources[0].content_hash, db.sources[1].content_hash);

  // Tags in order of first appearance; "mirrored" after the turn's own.
  EXPECT_EQ(db.tag_names, (std::vector<std::string>{"locomotion", "fast", "turn", "mirrored"}));
  EXPECT_EQ(db.clips[0].tag_mask, 1u);
  EXPECT_EQ(db.clips[2].tag_mask, 1u | 4u | 8u);
  // walk: [0,30) 1, [30,70) 1|2, [70,221) 1; turn [241, 522); mirror [542, 823);
  // walk_part: [853, 853 + 121 - 20).
  ASSERT_EQ(db.ranges.size(), 6u);
  EXPECT_EQ(db.ranges[1].first_frame, 30u);
  EXPECT_EQ(db.ranges[1].frame_count, 40u);
  EXPECT_EQ(db.ranges[1].tag_mask, 3u);
  EXPECT_EQ(db.ranges[2].frame_count, 151u);
  EXPECT_EQ(db.ranges[4].first_frame, 542u);
  EXPECT_EQ(db.ranges[5].first_frame, 843u + 10u);
  EXPECT_EQ(db.ranges[5].frame_count, 121u - 10u - 20u);

  const size_t n = db.frame_count, j = db.joint_count;
  EXPECT_EQ(j, 6u);
  EXPECT_EQ(db.local_rotations.size(), n * j);
  EXPECT_EQ(db.local_translations.size(), n * j);
  EXPECT_EQ(db.local_velocities.size(), n * j);
  EXPECT_EQ(db.local_angular_velocities.size(), n * j);
  EXPECT_EQ(db.root_motion.size(), n);
  EXPECT_EQ(db.contacts.size(), n);
  EXPECT_EQ(db.features.size(), n * 28);
  EXPECT_EQ(db.feature_offset.size(), 27u);
  EXPECT_EQ(db.feature_blocks.size(), 7u);
  EXPECT_EQ(db.bounds_small_min.size(), (n + 15) / 16 * 28);
  EXPECT_EQ(db.bounds_large_max.size(), (n + 127) / 128 * 28);
  for (size_t f = 0; f < n; ++f) EXPECT_EQ(db.features[f * 28 + 27], 0.0f);

  EXPECT_EQ(db.skeleton.preset, "geno");
  EXPECT_EQ(db.skeleton.contact_joints, (std::vector<int>{3, 5}));
  EXPECT_NEAR(db.skeleton.bind_translations[1].y, 0.3f, 1e-6);
  EXPECT_EQ(db.skeleton.roles.size(), 7u);
  EXPECT_EQ(db.settings.root_position_window, 31);
  EXPECT_EQ(db.settings.facing_window, 61);
  EXPECT_EQ(db.settings.contact_median_frames, 6);
  EXPECT_EQ(db.settings.trailing_unmatchable_frames, 20);
  EXPECT_EQ(db.settings.block_weights, (std::vector<float>{0.75f, 0.75f, 1, 1, 1, 1, 1.5f}));

  // The walk moves at 1.2 m/s along +Z; mid-clip trajectory sample at +1 s is 1.2 m ahead.
  EXPECT_NEAR(db.root_motion[100].velocity.z, 1.2f, 1e-3);
  const float* row = &db.features[100 * 28];
  EXPECT_NEAR(row[20] * db.feature_scale[20] + db.feature_offset[20], 1.2f, 1e-3);
  // The mirrored turn turns the other way.
  EXPECT_NEAR(db.root_motion[241 + 150].angular_velocity.y, 1.0f, 1e-3);
  EXPECT_NEAR(db.root_motion[542 + 150].angular_velocity.y, -1.0f, 1e-3);
}

TEST_F(CookPipeline, MirroredClipIsTheReflectionOfItsOriginal) {
  const CookedDatabase db = cookDatabase(threeClips());
  const CookedClip& turn = db.clips[1];
  const CookedClip& mirror = db.clips[2];
  ASSERT_EQ(mirror.mirror_of, 1);
  ASSERT_EQ(turn.frame_count, mirror.frame_count);
  auto raw = [&](uint32_t frame, int column) {
    return db.features[frame * 28 + column] * db.feature_scale[column] + db.feature_offset[column];
  };
  // Column c of the mirror is sign * column from[c] of the original: left and right swap, x flips.
  int from[27];
  float sign[27];
  for (int c = 0; c < 27; ++c) {
    from[c] = c;
    sign[c] = 1;
  }
  for (int c = 0; c < 3; ++c) {
    from[c] = c + 3, from[c + 3] = c, from[c + 6] = c + 9, from[c + 9] = c + 6;
  }
  for (int c : {0, 3, 6, 9, 12}) sign[c] = -1;
  for (int c = 15; c < 27; c += 2) sign[c] = -1;
  for (uint32_t f = 0; f < turn.frame_count; ++f) {
    const uint32_t a = turn.first_frame + f, b = mirror.first_frame + f;
    const CookedRootFrame &ra = db.root_motion[a], &rb = db.root_motion[b];
    EXPECT_NEAR(rb.position.x, -ra.position.x, 1e-5) << f;
    EXPECT_NEAR(rb.position.z, ra.position.z, 1e-5) << f;
    EXPECT_NEAR(rb.angular_velocity.y, -ra.angular_velocity.y, 1e-4) << f;
    for (int c = 0; c < 27; ++c)
      EXPECT_NEAR(raw(b, c), sign[c] * raw(a, from[c]), 1e-4) << "frame " << f << " column " << c;
    const uint32_t swapped = ((db.contacts[a] & 1u) << 1) | ((db.contacts[a] & 2u) >> 1);
    EXPECT_EQ(db.contacts[b], swapped) << f;
  }
}

TEST_F(CookPipeline, WithoutAPresetTheUnitComesFromTheHipHeight) {
  CookRequest r = threeClips();
  RoleSettings& roles = r.settings.roles;
  roles.hips = roles.facing = "Hips";
  roles.root_position = "Spine2";
  roles.left_foot = "LeftFoot";
  roles.right_foot = "RightFoot";
  roles.left_toe = "LeftToeBase";
  roles.right_toe = "RightToeBase";
  CookReport report;
  const CookedDatabase db = cookDatabase(r, &report);
  EXPECT_EQ(report.preset, "");
  EXPECT_EQ(report.unit_scale_origin, "inferred from hip height");
  // Hips 90 units up, toes at 90 - 80 - 5 = 5: 85 units make 0.9 m.
  EXPECT_NEAR(report.unit_scale, 0.9 / 85, 1e-7);
  EXPECT_NEAR(db.settings.unit_scale, 0.9f / 85, 1e-7);
  EXPECT_NEAR(db.root_motion[100].velocity.z, 1.2f * 0.9f / 0.85f, 2e-3);
}

bool sameBytes(const void* a, const void* b, size_t n) {
  return n == 0 || std::memcmp(a, b, n) == 0;
}
template <typename T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && sameBytes(a.data(), b.data(), a.size() * sizeof(T));
}

// The streams a cook concatenates from its clips, bit for bit.
void expectSameStreams(const CookedDatabase& a, const CookedDatabase& b, const std::string& what) {
  EXPECT_TRUE(same(a.local_rotations, b.local_rotations)) << what;
  EXPECT_TRUE(same(a.local_translations, b.local_translations)) << what;
  EXPECT_TRUE(same(a.local_velocities, b.local_velocities)) << what;
  EXPECT_TRUE(same(a.local_angular_velocities, b.local_angular_velocities)) << what;
  EXPECT_TRUE(same(a.root_motion, b.root_motion)) << what;
  EXPECT_TRUE(same(a.contacts, b.contacts)) << what;
  EXPECT_TRUE(same(a.features, b.features)) << what;
}

TEST_F(CookPipeline, SameResultForAnyThreadCount) {
  CookRequest r = threeClips();
  for (int copy = 0; copy < 3; ++copy) {  // more clips than threads
    ClipSpec c = r.clips[copy % 2];
    c.name = "copy" + std::to_string(copy);
    r.clips.push_back(c);
  }
  r.jobs = 1;
  const CookedDatabase a = cookDatabase(r);
  for (int jobs : {2, 3, 0}) {
    r.jobs = jobs;
    const CookedDatabase b = cookDatabase(r);
    expectSameStreams(a, b, std::to_string(jobs) + " jobs");
    EXPECT_TRUE(same(a.feature_offset, b.feature_offset)) << jobs;
    EXPECT_TRUE(same(a.feature_scale, b.feature_scale)) << jobs;
    EXPECT_TRUE(same(a.bounds_small_min, b.bounds_small_min)) << jobs;
    EXPECT_TRUE(same(a.bounds_large_max, b.bounds_large_max)) << jobs;
    EXPECT_EQ(a.tag_names, b.tag_names);
    ASSERT_EQ(a.ranges.size(), b.ranges.size());
    for (size_t i = 0; i < a.ranges.size(); ++i) {
      EXPECT_EQ(a.ranges[i].first_frame, b.ranges[i].first_frame);
      EXPECT_EQ(a.ranges[i].tag_mask, b.ranges[i].tag_mask);
    }
    ASSERT_EQ(a.clips.size(), b.clips.size());
    for (size_t i = 0; i < a.clips.size(); ++i) EXPECT_EQ(a.clips[i].name, b.clips[i].name);
    for (size_t i = 0; i < a.sources.size(); ++i)
      EXPECT_EQ(a.sources[i].content_hash, b.sources[i].content_hash);
    for (size_t i = 0; i < a.feature_blocks.size(); ++i)
      EXPECT_EQ(a.feature_blocks[i].std, b.feature_blocks[i].std);
  }
}

// A coded cook concatenates the clips' streams while they cook, into pose streams reserved from
// the frame counts the files declare. A file that holds more frames than it declares (the
// importer reads them all) overruns them: the clip that would not fit and every one after it are
// left to the assembly. A raw cook reserves nothing and joins everything but the poses while the
// clips cook. All give the streams the assembly alone gave: the same file, for any job count.
TEST_F(CookPipeline, StreamsJoinedWhileTheClipsCookAreThoseOfTheAssembly) {
  CookRequest r = threeClips();  // a walk, a mirrored turn, part of the walk
  std::string text = bvhText(circleFrames(91, -0.8, 2.0));
  const std::string declared = "Frames: 91\n";
  ASSERT_NE(text.find(declared), std::string::npos);
  text.replace(text.find(declared), declared.size(), "Frames: 71\n");
  ClipSpec longer;
  longer.name = "longer";
  longer.source = write("longer.bvh", text);
  longer.mirror = true;
  ClipSpec walk_again = r.clips[0];
  walk_again.name = "walk_again";

  for (const bool overrun : {false, true}) {
    CookRequest q = r;
    q.clips.push_back(walk_again);
    q.clips.insert(q.clips.begin() + 1, overrun ? longer : walk_again);
    q.clips[1].name = "second";
    q.jobs = 1;
    // The reference: the poses concatenated by the assembly, then coded.
    CookedDatabase assembled = cookDatabase(q);
    compressPoses(assembled, q.settings.compression, 1);
    const std::vector<uint8_t> expected = serializeDatabase(assembled);
    for (int jobs : {1, 2, 3}) {
      q.jobs = jobs;
      const CookedDatabase coded = cookDatabase(q, nullptr, {}, nullptr, PoseOutput::Coded);
      EXPECT_TRUE(coded.local_rotations.empty());  // released once coded
      EXPECT_EQ(serializeDatabase(coded), expected) << "overrun " << overrun << ", jobs " << jobs;
      expectSameStreams(cookDatabase(q), assembled, "raw, " + std::to_string(jobs) + " jobs");
    }
  }
}

std::string cookError(const CookRequest& r) {
  try {
    cookDatabase(r);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST_F(CookPipeline, DifferentSkeletonsAreAnErrorNamingBothClipsAndTheJoint) {
  CookRequest r = threeClips();
  r.clips[2].source = write("tail.bvh", bvhText(walkFrames(61, 1.0f), true));
  r.clips[2].name = "tailed";
  r.clips[2].source_first_frame = 0;
  r.clips[2].source_frame_count = -1;
  const std::string e = cookError(r);
  EXPECT_NE(e.find("clip walk"), std::string::npos) << e;
  EXPECT_NE(e.find("clip tailed"), std::string::npos) << e;
  EXPECT_NE(e.find("'Tail'"), std::string::npos) << e;
}

TEST_F(CookPipeline, SourceRangeOutsideTheFileIsAnError) {
  CookRequest r = threeClips();
  r.clips[2].source_first_frame = 100;
  r.clips[2].source_frame_count = 50;
  r.clips[2].manifest_line = 12;
  const std::string e = cookError(r);
  EXPECT_NE(e.find("clip walk_part"), std::string::npos) << e;
  EXPECT_NE(e.find("manifest line 12"), std::string::npos) << e;
  EXPECT_NE(e.find("[100, 150)"), std::string::npos) << e;
}

TEST_F(CookPipeline, StandingStillHasNoSpreadToNormalize) {
  CookRequest r;
  ClipSpec still;
  still.source =
      write("still.bvh",
            bvhText(std::vector<BvhFrame>(60, {{0, 90, 0}, 0, {10, -80, 0}, {-10, -80, 0}})));
  r.clips = {still};
  const std::string e = cookError(r);
  EXPECT_NE(e.find("feature block left_foot_position never changes"), std::string::npos) << e;
}

TEST_F(CookPipeline, BackwardFacingAxisIsReportedWithTheBetterAxis) {
  CookRequest r = threeClips();
  r.settings.roles.facing_axis = glm::vec3(0, 0, -1);
  CookReport report;
  cookDatabase(r, &report);
  bool found = false;
  for (const auto& w : report.warnings)
    if (w.text.find("against the direction of travel") != std::string::npos &&
        w.text.find("local +Z") != std::string::npos)
      found = true;
  EXPECT_TRUE(found);
  CookReport fine;
  cookDatabase(threeClips(), &fine);
  for (const auto& w : fine.warnings)
    EXPECT_EQ(w.text.find("direction of travel"), std::string::npos) << w.text;
}

TEST_F(CookPipeline, ZeroWeightIsRejectedBeforeCooking) {
  CookRequest r = threeClips();
  r.settings.weights[kBlockHipVelocity] = 0;
  EXPECT_NE(cookError(r).find("weight hip_velocity is 0"), std::string::npos);
}

// A mirrored clip's tags, as the runtime reads them from the file: left and right swapped in the
// clip's tags and its ranges', the original's as written.
class MirroredTags : public CookPipeline {
 protected:
  // walk-left, tagged strafe-left, mirrored, with a range tagged turn_left_90; then a turn.
  CookRequest strafe() {
    CookRequest r;
    ClipSpec walk;
    walk.name = "walk-left";
    walk.source = write("walk.bvh", bvhText(walkFrames(121, 1.2f)));
    walk.source_label = "walk.bvh";
    walk.tags = {"locomotion", "strafe-left"};
    walk.ranges = {{30, 40, {"turn_left_90"}, false}};
    walk.mirror = true;
    ClipSpec turn;  // untagged: with a walk alone, the facing would never change
    turn.source = write("circle.bvh", bvhText(circleFrames(151, 1.0, 1.5)));
    r.clips = {walk, turn};
    return r;
  }

  // The cooked file, opened with the runtime's checks.
  const mmdb::Database& open(const CookRequest& r) {
    bytes_ = serializeDatabase(cookDatabase(r));
    auto opened = mmdb::Database::fromMemory(bytes_.data(), bytes_.size());
    if (opened.ok())
      database_ = std::move(opened.value());
    else
      ADD_FAILURE() << opened.error().message();
    return database_;
  }

  static std::vector<std::string> names(const mmdb::Database& db, uint64_t mask) {
    std::vector<std::string> out;
    for (uint32_t bit = 0; bit < 64; ++bit)
      if (mask & (uint64_t{1} << bit)) out.emplace_back(db.tagName(bit));
    return out;
  }

  // The tags of the matchable range that holds a clip's frame.
  static std::vector<std::string> rangeTags(const mmdb::Database& db, const char* clip,
                                            uint32_t frame) {
    const uint32_t global = db.clip(static_cast<uint32_t>(db.findClip(clip))).first_frame + frame;
    for (const mmdb::MatchRange& range : db.ranges())
      if (global >= range.first_frame && global < range.first_frame + range.frame_count)
        return names(db, range.tag_mask);
    ADD_FAILURE() << "no range holds frame " << frame << " of " << clip;
    return {};
  }

  static std::vector<std::string> clipTags(const mmdb::Database& db, const char* clip) {
    const int32_t index = db.findClip(clip);
    EXPECT_GE(index, 0) << clip;
    return index < 0 ? std::vector<std::string>{}
                     : names(db, db.clip(static_cast<uint32_t>(index)).tag_mask);
  }

  std::vector<uint8_t> bytes_;
  mmdb::Database database_;
};

TEST_F(MirroredTags, TheMirroredWalkStrafesRight) {
  const mmdb::Database& db = open(strafe());
  ASSERT_EQ(db.clipCount(), 3u);
  EXPECT_EQ(db.clip(1).name, "walk-left#mirror");
  EXPECT_TRUE(db.clip(1).mirrored);
  EXPECT_EQ(clipTags(db, "walk-left"), (std::vector<std::string>{"locomotion", "strafe-left"}));
  EXPECT_EQ(clipTags(db, "walk-left#mirror"),
            (std::vector<std::string>{"locomotion", "strafe-right", "mirrored"}));
  // Numbered in order of first appearance: the copy's own tags, then its range's.
  ASSERT_EQ(db.tagCount(), 6u);
  const std::vector<std::string> all = names(db, ~uint64_t{0} >> (64 - db.tagCount()));
  EXPECT_EQ(all, (std::vector<std::string>{"locomotion", "strafe-left", "turn_left_90",
                                           "strafe-right", "mirrored", "turn_right_90"}));
  // The ranges: [30, 70) of each clip adds the range's tag, turned for the copy.
  EXPECT_EQ(rangeTags(db, "walk-left", 35),
            (std::vector<std::string>{"locomotion", "strafe-left", "turn_left_90"}));
  EXPECT_EQ(rangeTags(db, "walk-left#mirror", 35),
            (std::vector<std::string>{"locomotion", "strafe-right", "mirrored", "turn_right_90"}));
  EXPECT_EQ(rangeTags(db, "walk-left#mirror", 10),
            (std::vector<std::string>{"locomotion", "strafe-right", "mirrored"}));
  // No range of the copy keeps a left tag.
  const mmdb::ClipInfo copy = db.clip(1);
  const uint64_t left = db.tagMask("strafe-left") | db.tagMask("turn_left_90");
  ASSERT_NE(left, 0u);
  for (const mmdb::MatchRange& range : db.ranges()) {
    if (range.first_frame >= copy.first_frame &&
        range.first_frame < copy.first_frame + copy.frame_count) {
      EXPECT_EQ(range.tag_mask & left, 0u) << "range at " << range.first_frame;
    }
  }
}

TEST_F(MirroredTags, NoPairsKeepTheClipsTags) {
  CookRequest r = strafe();
  r.mirror.tag_pairs.clear();
  const mmdb::Database& db = open(r);
  EXPECT_EQ(clipTags(db, "walk-left#mirror"),
            (std::vector<std::string>{"locomotion", "strafe-left", "mirrored"}));
  EXPECT_EQ(rangeTags(db, "walk-left#mirror", 35),
            (std::vector<std::string>{"locomotion", "strafe-left", "turn_left_90", "mirrored"}));
  EXPECT_EQ(db.tagMask("strafe-right"), 0u);
  EXPECT_EQ(db.tagMask("turn_right_90"), 0u);
}

TEST_F(MirroredTags, PairsOfTheirOwnAndTheCaseOfTheTags) {
  CookRequest r = strafe();
  r.clips[0].tags = {"Strafe-LEFT", "cw"};
  r.clips[0].ranges[0].tags = {"turn.Left"};
  r.mirror.tag_pairs = {{"left", "right"}, {"cw", "ccw"}};
  const mmdb::Database& db = open(r);
  EXPECT_EQ(clipTags(db, "walk-left"), (std::vector<std::string>{"Strafe-LEFT", "cw"}));
  EXPECT_EQ(clipTags(db, "walk-left#mirror"),
            (std::vector<std::string>{"Strafe-RIGHT", "ccw", "mirrored"}));
  EXPECT_EQ(rangeTags(db, "walk-left#mirror", 35),
            (std::vector<std::string>{"Strafe-RIGHT", "ccw", "mirrored", "turn.Right"}));
}

// ---- real data -------------------------------------------------------------------------------

TEST(CookPipelineBandai, WalksRunsAndFeetAreSane) {
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "bandai-1";
  if (!fs::exists(dir)) GTEST_SKIP() << "no motion corpus at " << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".bvh") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  CookRequest r;
  for (const auto& f : files) {
    ClipSpec c;
    c.source = f.string();
    r.clips.push_back(c);
  }
  r.jobs = 2;
  CookReport report;
  const CookedDatabase db = cookDatabase(r, &report);
  EXPECT_EQ(report.preset, "bandai");
  EXPECT_DOUBLE_EQ(report.unit_scale, 0.01);
  for (const auto& w : report.warnings)
    EXPECT_EQ(w.text.find("direction of travel"), std::string::npos) << w.text;

  // Mean horizontal root speed over the middle half of each clip, per motion kind.
  std::map<std::string, std::vector<double>> speeds;
  long long single_left = 0, single_right = 0, walk_frames = 0;
  for (const auto& c : db.clips) {
    const std::string kind = c.name.substr(10, c.name.find('_', 10) - 10);  // dataset-1_<kind>_
    double sum = 0;
    const uint32_t a = c.first_frame + c.frame_count / 4, b = c.first_frame + 3 * c.frame_count / 4;
    for (uint32_t f = a; f < b; ++f)
      sum += glm::length(glm::vec2(db.root_motion[f].velocity.x, db.root_motion[f].velocity.z));
    speeds[kind].push_back(sum / (b - a));
    if (kind == "walk")
      for (uint32_t f = a; f < b; ++f, ++walk_frames) {
        single_left += db.contacts[f] == 1u;
        single_right += db.contacts[f] == 2u;
      }
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / v.size();
  };
  ASSERT_EQ(speeds["walk"].size(), 30u);  // two takes per style
  // Styles such as "old" and "tired" walk slowly; on average a walk is 0.8 to 2 m/s.
  for (double s : speeds["walk"]) {
    EXPECT_GT(s, 0.3);
    EXPECT_LT(s, 2.0);
  }
  EXPECT_GT(mean(speeds["walk"]), 0.8);
  EXPECT_LT(mean(speeds["walk"]), 2.0);
  EXPECT_GT(mean(speeds["run"]), mean(speeds["walk"]) * 1.3);
  EXPECT_GT(mean(speeds["dash"]), mean(speeds["run"]));
  // Walking: each foot alone on the ground for a good part of the time.
  EXPECT_GT(single_left, walk_frames / 5);
  EXPECT_GT(single_right, walk_frames / 5);
  std::printf(
      "bandai-1: %u frames; mean root speed walk %.2f, run %.2f, dash %.2f m/s; single "
      "support left %.0f%%, right %.0f%% of walk frames\n",
      db.frame_count, mean(speeds["walk"]), mean(speeds["run"]), mean(speeds["dash"]),
      100.0 * single_left / walk_frames, 100.0 * single_right / walk_frames);
}

}  // namespace
}  // namespace mmdb::cook

namespace mmdb::cook {
namespace {

double meanMovingSpeed(const CookedDatabase& db) {
  double sum = 0;
  long long n = 0;
  for (const auto& r : db.root_motion) {
    const double s = glm::length(glm::vec2(r.velocity.x, r.velocity.z));
    if (s > 0.3) sum += s, ++n;
  }
  return n ? sum / n : 0;
}

TEST(CookPipelineCmu, RawAndMetreCopiesAgree) {
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "cmu-bvh";
  if (!fs::exists(dir)) GTEST_SKIP() << "no motion corpus at " << dir;
  CookRequest raw, metres;
  for (const char* name : {"131_01", "131_02"}) {
    ClipSpec c;
    c.source = (dir / (std::string(name) + ".bvh")).string();
    raw.clips.push_back(c);
    c.source = (dir / ("scaled_" + std::string(name) + ".bvh")).string();
    metres.clips.push_back(c);
  }
  metres.settings.unit_scale = 1;
  CookReport raw_report, metres_report;
  const CookedDatabase a = cookDatabase(raw, &raw_report);
  const CookedDatabase b = cookDatabase(metres, &metres_report);
  EXPECT_EQ(raw_report.preset, "cmu");
  EXPECT_NEAR(raw_report.unit_scale, 2.54 / 45, 1e-12);
  EXPECT_EQ(metres_report.unit_scale_origin, "manifest");
  for (const auto& w : raw_report.warnings) ADD_FAILURE() << w.text;
  for (const auto& w : metres_report.warnings) ADD_FAILURE() << w.text;
  EXPECT_NEAR(a.frame_count, b.frame_count, 2);  // the metre copies have one more frame each
  const double va = meanMovingSpeed(a), vb = meanMovingSpeed(b);
  EXPECT_GT(va, 0.6);
  EXPECT_LT(va, 2.0);
  EXPECT_NEAR(va, vb, 0.02 * va);
  std::printf("cmu 131: %u frames at 60 Hz, mean moving root speed %.3f m/s (raw), %.3f (metres)\n",
              a.frame_count, va, vb);
}

}  // namespace
}  // namespace mmdb::cook
