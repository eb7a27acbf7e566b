// The cook's two halves: per-clip parts (from a cache folder, or the .mmclip files of a link)
// must give the bytes of the one-piece cook, and a part that does not fit is never used.
#include "cache/clip_file.h"
#include "cache/clip_store.h"
#include "cache/intermediate_file.h"
#include "cache/pose_file.h"
#include "cook/cook_database.h"
#include "cook/features.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "synthetic_bvh.h"
#include "synthetic_request.h"
#include "write/database_writer.h"

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace mmdb::cook {
namespace {

namespace fs = std::filesystem;
using namespace mmdb::test;

std::vector<uint8_t> cookBytes(const CookRequest& r, ClipStore* store = nullptr,
                               CookReport* report = nullptr) {
  return serializeDatabase(cookDatabase(r, report, {}, store));
}

std::vector<uint8_t> readBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

std::vector<fs::path> cacheEntries(const fs::path& folder) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(folder))
    if (e.path().extension() == ".mmclip") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// What mmcook cook-clip does for each clip, through the library: one .mmclip per clip.
std::vector<std::string> cookClipFiles(const CookRequest& r, const fs::path& folder) {
  std::vector<std::string> files;
  std::optional<ClipContext> context;
  for (int i = 0; i < static_cast<int>(r.clips.size()); ++i) {
    const CookedSource source = hashSource(r.clips[i].source, r.clips[i].source_label);
    const std::string key = clipKey(r, i, source, context ? &*context : nullptr);
    const ClipPart part = cookClipPart(r, i, source, context ? &*context : nullptr);
    if (i == 0) context = clipContext(r, part);
    files.push_back((folder / ("clip" + std::to_string(i) + ".mmclip")).string());
    writeBytes(files.back(), serializeClipFile(key, part).whole());
  }
  return files;
}

// What mmcook writes: the poses coded (from the store when it keeps them).
std::vector<uint8_t> cookCodedBytes(const CookRequest& r, ClipStore* store = nullptr,
                                    CookReport* report = nullptr) {
  return serializeDatabase(cookDatabase(r, report, {}, store, PoseOutput::Coded));
}

std::vector<fs::path> poseEntries(const fs::path& folder) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(folder))
    if (e.path().extension() == ".mmposes") out.push_back(e.path());
  return out;
}

std::vector<std::string> names(const CookRequest& r) {
  std::vector<std::string> out;
  for (const auto& c : r.clips)
    out.push_back(c.name.empty() ? fs::path(c.source).stem().string() : c.name);
  return out;
}

class ClipCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mmdb_clip_cache_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  // Four clips from three sources: tags, ranges, a mirrored clip and a part of a file.
  CookRequest clips() {
    CookRequest r = walkTurnAndPart(dir_);
    ClipSpec run;
    run.source = write("run.bvh", bvhText(walkFrames(90, 3.0f)));
    r.clips.push_back(run);
    r.jobs = 2;
    return r;
  }

  fs::path dir_;
};

TEST_F(ClipCache, ColdAndWarmCachesGiveTheOnePieceCooksBytes) {
  CookRequest r = clips();
  const std::vector<uint8_t> whole = cookBytes(r);
  ClipCacheFolder cache((dir_ / "cache").string());
  for (int jobs : {1, 2, 0}) {
    r.jobs = jobs;
    CookReport report;
    EXPECT_EQ(cookBytes(r, &cache, &report), whole) << "jobs " << jobs;
    EXPECT_TRUE(report.store.used);
    EXPECT_EQ(report.store.hits, jobs == 1 ? 0 : 4);
    EXPECT_EQ(report.store.misses, jobs == 1 ? 4 : 0);
    EXPECT_EQ(report.store.refused, 0);
    EXPECT_EQ(report.source_frames, 121 + 151 + 61 + 90);
  }
  EXPECT_EQ(cacheEntries(dir_ / "cache").size(), 4u);
}

TEST_F(ClipCache, LinkOfClipFilesGivesTheOnePieceCooksBytes) {
  CookRequest r = clips();
  const std::vector<uint8_t> whole = cookBytes(r);
  const std::vector<std::string> parts = cookClipFiles(r, dir_);
  ClipFileList files(parts, names(r));
  CookReport report;
  EXPECT_EQ(cookBytes(r, &files, &report), whole);
  EXPECT_EQ(report.store.hits, 4);
  EXPECT_EQ(report.store.misses, 0);
  // A link reads no source: the parts vouch for theirs.
  for (const char* source : {"walk.bvh", "circle.bvh", "run.bvh"}) fs::remove(dir_ / source);
  ClipFileList again(parts, names(r));
  EXPECT_EQ(cookBytes(r, &again), whole);
}

// Weights, tags, ranges and the trailing unmatchable time are the link's: changing them re-cooks
// no clip, and the result is what a one-piece cook with the new settings gives.
TEST_F(ClipCache, ALinkSettingChangeReusesEveryClip) {
  CookRequest r = clips();
  ClipCacheFolder cache((dir_ / "cache").string());
  cookBytes(r, &cache);
  r.settings.weights[kBlockTrajectoryDirection] = 3.0f;
  r.settings.trailing_unmatchable_s = 0.5;
  r.clips[0].tags = {"walk"};
  r.clips[1].ranges = {{10, 20, {"sharp"}, false}};
  CookReport report;
  const std::vector<uint8_t> warm = cookBytes(r, &cache, &report);
  EXPECT_EQ(report.store.hits, 4);
  EXPECT_EQ(report.store.misses, 0);
  EXPECT_EQ(warm, cookBytes(r));
}

// A mirrored copy's tags are swapped in the link: the cache and a link of clip files tag it as a
// one-piece cook does, and a change of [mirror] tag_pairs re-links the same parts.
TEST_F(ClipCache, MirroredTagsAreSwappedAlikeInACookTheCacheAndALink) {
  CookRequest r = clips();
  ASSERT_TRUE(r.clips[1].mirror);
  r.clips[1].tags = {"locomotion", "turn-left"};
  r.clips[1].ranges = {{10, 20, {"sharp_LEFT"}, false}};
  const std::vector<uint8_t> whole = cookBytes(r);
  const CookedDatabase db = cookDatabase(r);
  EXPECT_EQ(db.tag_names, (std::vector<std::string>{"locomotion", "fast", "turn-left", "sharp_LEFT",
                                                    "turn-right", "mirrored", "sharp_RIGHT"}));
  ASSERT_EQ(db.clips[2].name, "turn#mirror");
  EXPECT_EQ(db.clips[2].tag_mask, 1u | 16u | 32u);

  const std::vector<std::string> parts = cookClipFiles(r, dir_);
  ClipFileList files(parts, names(r));
  EXPECT_EQ(cookBytes(r, &files), whole);
  ClipCacheFolder cache((dir_ / "cache").string());
  EXPECT_EQ(cookBytes(r, &cache), whole);

  for (const TagPairs& pairs : {TagPairs{}, TagPairs{{"turn", "spin"}, {"LEFT", "right"}}}) {
    CookRequest other = r;
    other.mirror.tag_pairs = pairs;
    const std::vector<uint8_t> expected = cookBytes(other);
    EXPECT_NE(expected, whole);
    ClipFileList again(parts, names(other));  // the same parts: tag_pairs is not in their keys
    CookReport linked;
    EXPECT_EQ(cookBytes(other, &again, &linked), expected);
    EXPECT_EQ(linked.store.hits, 4);
    CookReport cached;
    EXPECT_EQ(cookBytes(other, &cache, &cached), expected);
    EXPECT_EQ(cached.store.hits, 4);
    EXPECT_EQ(cached.store.misses, 0);
  }
  CookRequest spin = r;
  spin.mirror.tag_pairs = {{"turn", "spin"}, {"LEFT", "right"}};
  EXPECT_EQ(cookDatabase(spin).tag_names,
            (std::vector<std::string>{"locomotion", "fast", "turn-left", "sharp_LEFT", "spin-right",
                                      "mirrored", "sharp_RIGHT"}));
  EXPECT_EQ(clipKey(spin, 1, hashSource(r.clips[1].source, ""), nullptr),
            clipKey(r, 1, hashSource(r.clips[1].source, ""), nullptr));
}

TEST_F(ClipCache, AnEditedSourceReCooksOnlyTheClipsOfIt) {
  CookRequest r = clips();
  ClipCacheFolder cache((dir_ / "cache").string());
  cookBytes(r, &cache);
  write("walk.bvh", bvhText(walkFrames(121, 1.3f)));  // clips 0 and 2 read it
  CookReport report;
  const std::vector<uint8_t> warm = cookBytes(r, &cache, &report);
  EXPECT_EQ(report.store.hits, 2);
  EXPECT_EQ(report.store.misses, 2);
  EXPECT_EQ(warm, cookBytes(r));
}

TEST_F(ClipCache, APerClipSettingReCooksEveryClip) {
  CookRequest r = clips();
  ClipCacheFolder cache((dir_ / "cache").string());
  cookBytes(r, &cache);
  r.settings.contact_speed_threshold = 0.3;
  CookReport report;
  const std::vector<uint8_t> warm = cookBytes(r, &cache, &report);
  EXPECT_EQ(report.store.hits, 0);
  EXPECT_EQ(report.store.misses, 4);
  EXPECT_EQ(warm, cookBytes(r));
  r.clips[3].name = "sprint";  // a clip's name is in its motion and its warnings
  cookBytes(r, &cache, &report);
  EXPECT_EQ(report.store.hits, 3);
  EXPECT_EQ(report.store.misses, 1);
}

// The key names every input, line by line, and nothing of the link.
TEST_F(ClipCache, TheKeyNamesTheClipsInputs) {
  CookRequest r = clips();
  const CookedSource source = hashSource(r.clips[0].source, r.clips[0].source_label);
  const std::string key = clipKey(r, 0, source, nullptr);
  const std::string cooker = std::string(kCookerVersion);
  for (const std::string& line :
       {"cooker " + std::to_string(cooker.size()) + ":" + cooker, std::string("name 4:walk"),
        std::string("first clip"), std::string("mirror 0")})
    EXPECT_NE(key.find(line), std::string::npos) << line << " in\n" << key;
  EXPECT_NE(key.find(fmt::format("source {:016x} {}", source.content_hash, source.size_bytes)),
            std::string::npos);
  CookRequest heavier = r;
  heavier.settings.weights[kBlockFootPosition] = 9;
  heavier.clips[0].tags = {"other"};
  EXPECT_EQ(clipKey(heavier, 0, source, nullptr), key);
  CookRequest faster = r;
  faster.settings.frame_rate = 30;
  EXPECT_NE(clipKey(faster, 0, source, nullptr), key);
  EXPECT_EQ(firstKeyDifference(key, clipKey(faster, 0, source, nullptr)).substr(0, 6), "'rate ");
}

// A damaged, truncated or foreign cache entry, or one from another cooker, is refused with a
// warning and cooked again: the bytes are still the one-piece cook's.
TEST_F(ClipCache, DamagedEntriesAreRefusedAndCookedAgain) {
  CookRequest r = clips();
  const std::vector<uint8_t> whole = cookBytes(r);
  ClipCacheFolder cache((dir_ / "cache").string());
  cookBytes(r, &cache);
  const std::vector<fs::path> entries = cacheEntries(dir_ / "cache");
  ASSERT_EQ(entries.size(), 4u);
  std::vector<uint8_t> flipped = readBytes(entries[0]);
  flipped[flipped.size() / 2] ^= 0x10;
  writeBytes(entries[0], flipped);
  std::vector<uint8_t> truncated = readBytes(entries[1]);
  truncated.resize(truncated.size() / 3);
  writeBytes(entries[1], truncated);
  writeBytes(entries[2], std::vector<uint8_t>(whole.begin(), whole.begin() + 4096));  // an .mmdb
  // Another cooker's part: the version string changed and the checksums sealed again.
  std::vector<uint8_t> other = readBytes(entries[3]);
  const std::string version = kCookerVersion;
  // The last copy: the first is in the key (strings made first end up last in the buffer).
  auto at = std::find_end(other.begin(), other.end(), version.begin(), version.end());
  ASSERT_NE(at, other.end());
  at[7] = '0';
  at[9] = '9';
  resealIntermediate(other);
  writeBytes(entries[3], other);
  try {
    parseClipFile(other.data(), other.size(), "other.mmclip");
    ADD_FAILURE() << "another cooker's part was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("other.mmclip: it was cooked by 'mmcook 0.9.0'"),
              std::string::npos)
        << e.what();
  }

  CookReport report;
  EXPECT_EQ(cookBytes(r, &cache, &report), whole);
  EXPECT_EQ(report.store.refused, 4);
  EXPECT_EQ(report.store.misses, 4);
  cookBytes(r, &cache, &report);  // cooked again, kept again
  EXPECT_EQ(report.store.hits, 4);
}

// Every single-byte change of a part is refused, never read as other motion.
TEST_F(ClipCache, EveryFlippedByteOfAPartIsRefused) {
  CookRequest r = clips();
  r.clips.resize(1);
  const std::vector<std::string> files = cookClipFiles(r, dir_);
  const std::vector<uint8_t> good = readBytes(files[0]);
  EXPECT_NO_THROW(parseClipFile(good.data(), good.size(), "good.mmclip"));
  for (size_t i = 0; i < good.size(); i += std::max<size_t>(1, good.size() / 997)) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x01;
    EXPECT_THROW(parseClipFile(bad.data(), bad.size(), "bad.mmclip"), InputError) << i;
  }
  for (size_t size : {size_t(0), size_t(8), size_t(15), good.size() - 1})
    EXPECT_THROW(parseClipFile(good.data(), size, "short.mmclip"), InputError) << size;
}

TEST_F(ClipCache, LinkRefusesMissingStaleAndMisplacedParts) {
  CookRequest r = clips();
  const std::vector<std::string> files = cookClipFiles(r, dir_);
  auto linkError = [&](std::vector<std::string> given) {
    try {
      ClipFileList list(std::move(given), names(r));
      cookDatabase(r, nullptr, {}, &list);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(linkError({files[0], files[1]}),
            "the manifest has 4 clips but 2 .mmclip files were given; give one per clip, in the "
            "manifest's order (re-run CMake when the manifest's clips changed)");
  std::vector<std::string> swapped = files;
  std::swap(swapped[1], swapped[3]);
  const std::string misplaced = linkError(swapped);
  EXPECT_EQ(misplaced.rfind(files[3] + ": it was not cooked from what clip turn of the manifest "
                                       "is now (first difference: ",
                            0),
            0u)
      << misplaced;
  // Two parts of one source that disagree about its bytes: the later one does not fit.
  write("walk.bvh", bvhText(walkFrames(121, 1.25f)));
  fs::create_directories(dir_ / "again");
  std::vector<std::string> mixed = files;
  mixed[2] = cookClipFiles(r, dir_ / "again")[2];
  const std::string disagree = linkError(mixed);
  EXPECT_EQ(disagree.rfind(mixed[2] + ": it was not cooked from what clip walk_part", 0), 0u)
      << disagree;
  EXPECT_NE(disagree.find("(first difference: 'source "), std::string::npos) << disagree;
  fs::remove(files[2]);
  EXPECT_NE(linkError(files).find(files[2] + ": cannot open"), std::string::npos);
}

TEST_F(ClipCache, AnUnusableCacheFolderIsAnErrorNamingIt) {
  write("file", "not a folder");
  const std::string under_file = (dir_ / "file" / "cache").string();
  try {
    ClipCacheFolder cache(under_file);
    ADD_FAILURE() << "a cache under a file was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(under_file + ": cannot create the clip cache folder", 0),
              0u)
        << e.what();
  }
  try {
    ClipCacheFolder cache((dir_ / "file").string());
    ADD_FAILURE() << "a file was accepted as the cache";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the clip cache is not a folder"), std::string::npos);
  }
  if (::geteuid() != 0) {  // root writes into a read-only folder
    fs::create_directories(dir_ / "locked");
    ::chmod((dir_ / "locked").c_str(), 0500);
    EXPECT_THROW(ClipCacheFolder((dir_ / "locked").string()), InputError);
    ::chmod((dir_ / "locked").c_str(), 0700);
  }
}

// ---- the pose coding in the cache ----------------------------------------------------------

// A change that leaves every clip as it was (weights, tags, ranges) takes the pose coding from the
// cache, reads no part's poses, and gives the bytes of a cook without a cache.
TEST_F(ClipCache, ALinkSettingChangeTakesThePoseCodingFromTheCache) {
  CookRequest r = clips();
  ClipCacheFolder cache((dir_ / "cache").string());
  CookReport first;
  EXPECT_EQ(cookCodedBytes(r, &cache, &first), cookCodedBytes(r));
  EXPECT_FALSE(first.store.coded_poses_found);
  EXPECT_TRUE(first.compression.enabled);
  EXPECT_EQ(poseEntries(dir_ / "cache").size(), 1u);
  r.settings.weights[kBlockTrajectoryDirection] = 3.0f;
  r.clips[0].tags = {"walk"};
  r.clips[1].ranges = {{10, 20, {"sharp"}, false}};
  for (int jobs : {1, 2}) {
    r.jobs = jobs;
    CookReport warm;
    EXPECT_EQ(cookCodedBytes(r, &cache, &warm), cookCodedBytes(r)) << "jobs " << jobs;
    EXPECT_TRUE(warm.store.coded_poses_found);
    EXPECT_EQ(warm.store.hits, 4);
    // The report is the coding's, as when it was made.
    for (int s = 0; s < kPoseStreamCount; ++s) {
      EXPECT_EQ(warm.compression.streams[s].coded_bytes, first.compression.streams[s].coded_bytes);
      EXPECT_EQ(warm.compression.streams[s].max_error, first.compression.streams[s].max_error);
      EXPECT_EQ(warm.compression.streams[s].worst_frame, first.compression.streams[s].worst_frame);
    }
  }
  // Raw output never looks at the pose coding in the store.
  CookReport raw;
  EXPECT_EQ(cookBytes(r, &cache, &raw), cookBytes(r));
  EXPECT_FALSE(raw.store.coded_poses_found);
}

// The coding's key names the clips and the [compression] settings: a change to either codes the
// poses again.
TEST_F(ClipCache, ACompressionOrClipChangeCodesThePosesAgain) {
  CookRequest r = clips();
  ClipCacheFolder cache((dir_ / "cache").string());
  cookCodedBytes(r, &cache);
  CookReport report;
  r.settings.compression.position_tolerance = 0.0002;
  EXPECT_EQ(cookCodedBytes(r, &cache, &report), cookCodedBytes(r));
  EXPECT_FALSE(report.store.coded_poses_found);
  EXPECT_EQ(report.store.hits, 4);
  r.clips[3].name = "sprint";
  EXPECT_EQ(cookCodedBytes(r, &cache, &report), cookCodedBytes(r));
  EXPECT_FALSE(report.store.coded_poses_found);
  write("walk.bvh", bvhText(walkFrames(121, 1.3f)));
  EXPECT_EQ(cookCodedBytes(r, &cache, &report), cookCodedBytes(r));
  EXPECT_FALSE(report.store.coded_poses_found);
  EXPECT_EQ(poseEntries(dir_ / "cache").size(), 4u);
  // pose = "none" writes raw streams, from the same parts.
  r.settings.compression.pose = CompressionSettings::Pose::None;
  EXPECT_EQ(cookCodedBytes(r, &cache, &report), cookBytes(r));
  EXPECT_FALSE(report.store.coded_poses_found);
  EXPECT_FALSE(report.compression.enabled);  // the report still names the raw streams
  EXPECT_EQ(report.compression.streams[kStreamRotations].name, "local_rotations");
  const CookedDatabase raw = cookDatabase(r);
  EXPECT_EQ(report.compression.streams[kStreamRotations].raw_bytes,
            uint64_t{16} * raw.frame_count * raw.joint_count);
}

// FNV-1a 64 as published (the empty string, "a", "foobar"), and four chains at once give each
// input's own hash.
// Every length of part serializes to a buffer the verifier accepts: the root frames (52-byte
// structs) and the joints' vectors (12 and 16 bytes) must not throw later 8-byte fields off their
// alignment, whatever the frame and joint counts (a part with a warning of the import failed so).
TEST(ClipFile, EveryShapeOfPartReadsBack) {
  for (int joints = 1; joints <= 3; ++joints) {
    for (int frames = 1; frames <= 12; ++frames) {
      ClipPart part;
      part.source_rate = 30;
      part.source_frames = frames;
      part.unit.scale = 0.01;
      part.unit.origin = "manifest";
      for (int j = 0; j < joints; ++j) {
        part.skeleton.names.push_back("joint" + std::to_string(j));
        part.skeleton.parents.push_back(j - 1);
        part.skeleton.offsets.emplace_back(0, j, 0);
        part.skeleton.bind_rotations.emplace_back(1, 0, 0, 0);
      }
      ClipMotion& m = part.motion;
      m.clip.name = "clip";
      m.clip.frame_count = frames;
      const size_t cells = size_t(frames) * size_t(joints);
      m.clip.rotations.assign(cells, glm::quat(1, 0, 0, 0));
      m.clip.translations.assign(cells, glm::vec3(0.5f));
      m.velocities.assign(cells, glm::vec3(0));
      m.angular_velocities.assign(cells, glm::vec3(0));
      m.root.resize(size_t(frames));
      m.contacts.assign(size_t(frames), 1);
      m.features.assign(size_t(frames) * kFeatureCount, 0.25f);
      m.facing.configured_sum = 0.5 * frames;
      m.facing.moving_frames = frames;
      // Sums of one cosine per moving frame: at most `frames` either way.
      for (int c = 0; c < FacingAgreement::kCandidates; ++c)
        m.facing.candidate_sum[c] = 0.1 * c * frames;
      for (int w = 0; w < frames % 3; ++w)
        m.warnings.push_back({"bvh-frame-count", std::string(size_t(frames + w), 'x'), "a.bvh", w});
      const std::vector<uint8_t> bytes = serializeClipFile("key", part).whole();
      for (PartPoses poses : {PartPoses::Read, PartPoses::Skip}) {
        try {
          const ClipFile file = parseClipFile(bytes.data(), bytes.size(), "part", poses);
          EXPECT_EQ(file.part.motion.facing.moving_frames, frames);
          EXPECT_EQ(file.part.motion.warnings.size(), size_t(frames % 3));
        } catch (const InputError& e) {
          ADD_FAILURE() << joints << " joints, " << frames << " frames: " << e.what();
        }
      }
    }
  }
}

TEST(SourceHash, FourChainsAtOnceGiveEachInputsFnv1a64) {
  auto one = [](const std::string& text) {
    Fnv1a64 h;
    h.add(text.data(), text.size());
    return h.value();
  };
  EXPECT_EQ(one(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(one("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(one("foobar"), 0x85944171f73967e8ull);
  const std::string texts[4] = {"foobar", "barfoo", "FOOBAR", "f00b4r"};
  Fnv1a64 four[4];
  four[1].add("x", 1);  // a chain that is not at its start
  const unsigned char* data[4];
  for (int i = 0; i < 4; ++i) data[i] = reinterpret_cast<const unsigned char*>(texts[i].data());
  Fnv1a64::addFour(four, data, 6);
  EXPECT_EQ(four[0].value(), one("foobar"));
  EXPECT_EQ(four[1].value(), one("xbarfoo"));
  EXPECT_EQ(four[2].value(), one("FOOBAR"));
  EXPECT_EQ(four[3].value(), one("f00b4r"));
}

// A source whose read fails is an error naming it, never the hash of what was read before
// (which a cache would take for the file's). Linux's /proc/self/mem is a regular file whose first
// read fails (address 0 is not mapped).
TEST(SourceHash, AFailedReadIsAnErrorNotAShorterHash) {
  std::string message;
  try {
    hashSource("/proc/self/mem", "");
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, std::string("/proc/self/mem: reading the file to hash it failed after 0 "
                                 "bytes: ") +
                         std::strerror(EIO) + "; check the disk or copy the file again");
}

// The sources are hashed four at a time: without a store ahead of the clips, with a cache side by
// side where no stamp vouches for them. Each is its file's own hash and size, whatever their
// lengths and the job count; a source that cannot be read still fails naming it (without a store,
// with its importer's message).
TEST_F(ClipCache, SourcesHashedFourAtATimeAreTheirFilesHashes) {
  CookRequest r;
  // Lengths that differ by more than the 256 KiB read at a time, and one group of four and a
  // group of two.
  for (int k = 0; k < 6; ++k) {
    ClipSpec c;
    const int frames = 60 + 2000 * (k % 3) + 10 * k;
    c.source = write("clip" + std::to_string(k) + ".bvh",
                     bvhText(k % 2 ? circleFrames(frames, 1.0, 1.5) : walkFrames(frames, 1.2f)));
    r.clips.push_back(c);
  }
  r.clips.push_back(r.clips[2]);  // a source used twice is hashed once
  r.clips.back().name = "again";
  ASSERT_GT(fs::file_size(r.clips[2].source), fs::file_size(r.clips[0].source) + (256u << 10));
  auto expectHashes = [&](const CookedDatabase& db, const std::string& what) {
    ASSERT_EQ(db.sources.size(), 6u) << what;
    for (size_t s = 0; s < 6; ++s) {
      const CookedSource expected = hashSource(r.clips[s].source, "");
      EXPECT_EQ(db.sources[s].content_hash, expected.content_hash) << what << ", source " << s;
      EXPECT_EQ(db.sources[s].size_bytes, expected.size_bytes) << what << ", source " << s;
      EXPECT_EQ(db.sources[s].path, r.clips[s].source) << what << ", source " << s;
    }
  };
  ClipCacheFolder cache((dir_ / "cache").string(), 0.0);
  for (int jobs : {1, 2}) {
    r.jobs = jobs;
    expectHashes(cookDatabase(r), "no store, jobs " + std::to_string(jobs));
    CookReport report;
    expectHashes(cookDatabase(r, &report, {}, &cache), "cache, jobs " + std::to_string(jobs));
    EXPECT_EQ(report.store.sources_unread, jobs == 1 ? 0 : 6);  // stamped by the first
  }
  auto errorOf = [&](ClipStore* store) {
    try {
      cookDatabase(r, nullptr, {}, store);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  r.clips[4].source = (dir_ / "missing.bvh").string();
  const std::string e = errorOf(nullptr);
  EXPECT_NE(e.find("missing.bvh: cannot open"), std::string::npos) << e;
  const std::string c = errorOf(&cache);
  EXPECT_NE(c.find("missing.bvh"), std::string::npos) << c;
}

// With pose = "none", what mmcook writes keeps each clip's raw pose arrays where its stages left
// them (raw_pose_parts, one per clip) instead of concatenating them, and gives the bytes of the
// concatenated streams: from the sources or a store, with any job count.
TEST_F(ClipCache, RawPosesForTheFileStayInTheClipsArrays) {
  CookRequest r = clips();
  r.settings.compression.pose = CompressionSettings::Pose::None;
  const CookedDatabase concatenated = cookDatabase(r);
  const std::vector<uint8_t> expected = serializeDatabase(concatenated);
  ClipCacheFolder cache((dir_ / "cache").string());
  for (ClipStore* store : {static_cast<ClipStore*>(nullptr), static_cast<ClipStore*>(&cache)}) {
    for (int jobs : {1, 2}) {
      r.jobs = jobs;
      const CookedDatabase db = cookDatabase(r, nullptr, {}, store, PoseOutput::Coded);
      const std::string what = (store ? "store, jobs " : "sources, jobs ") + std::to_string(jobs);
      EXPECT_TRUE(db.local_rotations.empty() && db.local_translations.empty() &&
                  db.local_velocities.empty() && db.local_angular_velocities.empty())
          << what;
      const RawPoseParts& parts = db.raw_pose_parts;
      ASSERT_EQ(parts.rotations.size(), db.clips.size()) << what;
      ASSERT_EQ(parts.translations.size(), db.clips.size()) << what;
      ASSERT_EQ(parts.velocities.size(), db.clips.size()) << what;
      ASSERT_EQ(parts.angular_velocities.size(), db.clips.size()) << what;
      for (size_t c = 0; c < db.clips.size(); ++c) {
        const size_t first = size_t(db.clips[c].first_frame) * db.joint_count;
        const size_t n = size_t(db.clips[c].frame_count) * db.joint_count;
        auto sameAsSlice = [&](const auto& part, const auto& stream) {
          return part.size() == n &&
                 std::equal(part.begin(), part.end(), stream.begin() + std::ptrdiff_t(first));
        };
        EXPECT_TRUE(sameAsSlice(parts.rotations[c], concatenated.local_rotations)) << what;
        EXPECT_TRUE(sameAsSlice(parts.translations[c], concatenated.local_translations)) << what;
        EXPECT_TRUE(sameAsSlice(parts.velocities[c], concatenated.local_velocities)) << what;
        EXPECT_TRUE(sameAsSlice(parts.angular_velocities[c], concatenated.local_angular_velocities))
            << what;
      }
      EXPECT_EQ(serializeDatabase(db), expected) << what;
    }
  }
}

// Each pose coding is as large as the database's coded poses: the cache keeps the most recently
// used ones only.
TEST_F(ClipCache, OnlyTheRecentlyUsedPoseCodingsAreKept) {
  CookRequest r = clips();
  ClipCacheFolder cache((dir_ / "cache").string());
  CookReport report;
  auto cookWithTolerance = [&](int i) {
    r.settings.compression.position_tolerance = 0.0001 * (1 + i);
    cookCodedBytes(r, &cache, &report);
    return report.store.coded_poses_found;
  };
  const int kept = static_cast<int>(ClipCacheFolder::kKeptPoseCodings);
  for (int i = 0; i < kept; ++i) EXPECT_FALSE(cookWithTolerance(i));
  EXPECT_TRUE(cookWithTolerance(0));  // used again: now the most recent
  EXPECT_FALSE(cookWithTolerance(kept));
  EXPECT_EQ(poseEntries(dir_ / "cache").size(), ClipCacheFolder::kKeptPoseCodings);
  EXPECT_TRUE(cookWithTolerance(0));
  EXPECT_FALSE(cookWithTolerance(1));  // the least recently used went
}

TEST_F(ClipCache, TheCodingKeyNamesEveryClipAndTheSettings) {
  CookRequest r = clips();
  const std::vector<std::string> keys = {"clip a\n", "clip b\n"};
  const std::string key = poseCodingKey(r, keys);
  EXPECT_NE(key.find("cooker " + std::to_string(std::string(kCookerVersion).size()) + ":" +
                     kCookerVersion),
            std::string::npos)
      << key;
  EXPECT_NE(key.find("clips 2\n"), std::string::npos) << key;
  EXPECT_NE(poseCodingKey(r, {keys[1], keys[0]}), key);  // the order of the clips counts
  CookRequest heavier = r;
  heavier.settings.weights[kBlockFootPosition] = 9;
  heavier.settings.trailing_unmatchable_s = 0.1;
  EXPECT_EQ(poseCodingKey(heavier, keys), key);
  CookRequest wider = r;
  wider.settings.compression.segment_frames = 512;
  EXPECT_NE(poseCodingKey(wider, keys), key);
}

// A damaged or foreign pose coding is refused with a warning and the poses are coded again; so
// is one whose counts disagree with the parts its key names.
TEST_F(ClipCache, DamagedPoseCodingsAreRefusedAndCodedAgain) {
  CookRequest r = clips();
  const std::vector<uint8_t> expected = cookCodedBytes(r);
  ClipCacheFolder cache((dir_ / "cache").string());
  CookReport report;
  cookCodedBytes(r, &cache, &report);
  const std::vector<fs::path> entries = poseEntries(dir_ / "cache");
  ASSERT_EQ(entries.size(), 1u);
  const std::vector<uint8_t> good = readBytes(entries[0]);
  const PoseFile kept = parsePoseFile(good.data(), good.size(), "good.mmposes");

  std::vector<uint8_t> flipped = good;
  flipped[flipped.size() / 2] ^= 0x04;
  // Sealed again: the coding's own checks must see the damage (segments that no longer span the
  // data).
  PoseFile shifted = kept;
  shifted.stored.coding.streams[kStreamRotations]->segment_offsets.back() -= 1;
  std::vector<uint8_t> miscounted = serializePoseFile(kept.key, kept.stored.frame_count + 1,
                                                      kept.stored.joint_count, kept.stored.coding)
                                        .whole();
  for (const std::vector<uint8_t>& bad :
       {flipped, std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2),
        serializePoseFile(kept.key, kept.stored.frame_count, kept.stored.joint_count,
                          shifted.stored.coding)
            .whole()}) {
    writeBytes(entries[0], bad);
    EXPECT_EQ(cookCodedBytes(r, &cache, &report), expected);
    EXPECT_FALSE(report.store.coded_poses_found);
    EXPECT_EQ(report.store.refused, 1);
  }
  // The counts are checked against the parts after they are read without their poses: the cook
  // reads them again, with their poses.
  writeBytes(entries[0], miscounted);
  EXPECT_EQ(cookCodedBytes(r, &cache, &report), expected);
  EXPECT_FALSE(report.store.coded_poses_found);
  EXPECT_EQ(report.store.refused, 1);
  EXPECT_EQ(report.store.hits, 4);
  // Coded again, kept again.
  EXPECT_EQ(cookCodedBytes(r, &cache, &report), expected);
  EXPECT_TRUE(report.store.coded_poses_found);
  EXPECT_EQ(report.store.refused, 0);
}

TEST_F(ClipCache, EveryFlippedByteOfAPoseCodingIsRefused) {
  CookRequest r = clips();
  ClipCacheFolder cache((dir_ / "cache").string());
  cookCodedBytes(r, &cache);
  const std::vector<uint8_t> good = readBytes(poseEntries(dir_ / "cache").at(0));
  EXPECT_NO_THROW(parsePoseFile(good.data(), good.size(), "good.mmposes"));
  for (size_t i = 0; i < good.size(); i += std::max<size_t>(1, good.size() / 997)) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x01;
    EXPECT_THROW(parsePoseFile(bad.data(), bad.size(), "bad.mmposes"), InputError) << i;
  }
}

// A pose coding whose tracks (16-byte structs) are off their alignment in memory, here the whole
// file 8 bytes off, is refused, not read (reading them there is undefined behaviour).
TEST_F(ClipCache, APoseCodingOffItsAlignmentIsRefused) {
  CookRequest r = clips();
  ClipCacheFolder cache((dir_ / "cache").string());
  cookCodedBytes(r, &cache);
  const std::vector<uint8_t> good = readBytes(poseEntries(dir_ / "cache").at(0));
  std::vector<uint8_t> storage(good.size() + 32);
  uint8_t* aligned = storage.data() + (16 - reinterpret_cast<uintptr_t>(storage.data()) % 16) % 16;
  std::copy(good.begin(), good.end(), aligned);
  EXPECT_NO_THROW(parsePoseFile(aligned, good.size(), "aligned.mmposes"));
  std::copy(good.begin(), good.end(), aligned + 8);
  try {
    parsePoseFile(aligned + 8, good.size(), "off.mmposes");
    ADD_FAILURE() << "a pose coding off its alignment was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("16-byte aligned"), std::string::npos) << e.what();
  }
}

// A part read without its poses checks, and reads, only what comes before its pose streams.
TEST_F(ClipCache, APartReadWithoutItsPosesSkipsThem) {
  CookRequest r = clips();
  r.clips.resize(2);  // the walk, and the mirrored turn
  const std::vector<std::string> files = cookClipFiles(r, dir_);
  for (const std::string& path : files) {
    std::vector<uint8_t> bytes = readBytes(path);
    const ClipFile whole = parseClipFile(bytes.data(), bytes.size(), "whole.mmclip");
    const ClipFile lean = parseClipFile(bytes.data(), bytes.size(), "lean.mmclip", PartPoses::Skip);
    EXPECT_EQ(lean.key, whole.key);
    for (const auto& [a, b] : {std::pair{&lean.part.motion, &whole.part.motion},
                               std::pair{lean.part.mirror ? &*lean.part.mirror : nullptr,
                                         whole.part.mirror ? &*whole.part.mirror : nullptr}}) {
      ASSERT_EQ(a == nullptr, b == nullptr);
      if (!a) continue;
      EXPECT_EQ(a->clip.frame_count, b->clip.frame_count);
      EXPECT_TRUE(a->clip.rotations.empty() && a->clip.translations.empty() &&
                  a->velocities.empty() && a->angular_velocities.empty());
      EXPECT_FALSE(b->clip.rotations.empty());
      EXPECT_EQ(a->features, b->features);
      EXPECT_EQ(a->contacts, b->contacts);
    }
    // A byte of the last pose stream (the buffer's last bytes before the trailer) is damaged:
    // the whole read refuses it, the read without poses never looks at it.
    bytes[bytes.size() - kTrailerBytes - 5] ^= 0x40;
    EXPECT_THROW(parseClipFile(bytes.data(), bytes.size(), "whole.mmclip"), InputError);
    EXPECT_NO_THROW(parseClipFile(bytes.data(), bytes.size(), "lean.mmclip", PartPoses::Skip));
  }
}

// A head reader reuses its buffer: whatever it read before, the bulk of the file it reads now is
// zero, and the part before it is the file's.
TEST_F(ClipCache, AHeadReaderLeavesEveryBulkZero) {
  CookRequest r = clips();
  const std::vector<std::string> files = cookClipFiles(r, dir_);
  HeadReader reader;
  for (int pass = 0; pass < 2; ++pass)
    for (const std::string& path : files) {  // a long part, then shorter ones, and again
      const std::vector<uint8_t> whole = readBytes(path);
      const std::span<const uint8_t> head = reader.read(path, "give a part");
      ASSERT_EQ(head.size(), whole.size());
      const size_t body = whole.size() - kTrailerBytes;
      uint64_t bulk_start = 0;
      for (int b = 0; b < 8; ++b) bulk_start |= uint64_t(whole[body + b]) << (8 * b);
      ASSERT_LT(bulk_start, body);
      EXPECT_TRUE(std::equal(head.begin(), head.begin() + bulk_start, whole.begin())) << path;
      EXPECT_TRUE(std::all_of(head.begin() + bulk_start, head.begin() + body, [](uint8_t v) {
        return v == 0;
      })) << path;
      EXPECT_TRUE(std::equal(head.begin() + body, head.end(), whole.begin() + body)) << path;
      EXPECT_NO_THROW(parseClipFile(head.data(), head.size(), path, PartPoses::Skip));
      EXPECT_THROW(parseClipFile(head.data(), head.size(), path), InputError);  // no poses there
    }
  write("short.mmclip", "MMCL");
  EXPECT_THROW(parseClipFile(reader.read((dir_ / "short.mmclip").string(), "give a part").data(), 4,
                             "short.mmclip", PartPoses::Skip),
               InputError);
}

// ---- source stamps ---------------------------------------------------------------------------

void setModifiedTime(const fs::path& p, const struct timespec& time) {
  const struct timespec times[2] = {time, time};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
}

// The cache remembers each source's hash; a source is read again only when its identity or times
// changed, and a freshly written one is not trusted to its times at all.
TEST_F(ClipCache, UnchangedSourcesAreNotReadAgain) {
  CookRequest r = clips();
  {
    ClipCacheFolder fresh((dir_ / "fresh").string());  // settles 2 s: these files are newer
    CookReport report;
    cookBytes(r, &fresh, &report);
    cookBytes(r, &fresh, &report);
    EXPECT_EQ(report.store.sources_unread, 0);
  }
  ClipCacheFolder cache((dir_ / "cache").string(), 0.0);
  CookReport report;
  cookBytes(r, &cache, &report);
  EXPECT_EQ(report.store.sources_unread, 0);
  EXPECT_EQ(cookBytes(r, &cache, &report), cookBytes(r));
  EXPECT_EQ(report.store.sources_unread, 3);  // walk.bvh (twice in the manifest), circle, run
  EXPECT_EQ(report.store.hits, 4);

  // Other motion of the same size, with the old modification time put back: the change time
  // still gives it away.
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "walk.bvh").c_str(), &st), 0);
  std::string text = bvhText(walkFrames(121, 1.2f));
  const size_t at = text.find("MOTION");
  ASSERT_NE(at, std::string::npos);
  const size_t digit = text.find_first_of("123456789", text.find("Frame Time", at) + 20);
  text[digit] = text[digit] == '9' ? '8' : static_cast<char>(text[digit] + 1);
  ASSERT_EQ(text.size(), static_cast<size_t>(st.st_size));
  usleep(20000);  // a change time that differs at any time granularity of the file system
  std::ofstream(dir_ / "walk.bvh", std::ios::binary) << text;
  setModifiedTime(dir_ / "walk.bvh", st.st_mtim);
  EXPECT_EQ(cookBytes(r, &cache, &report), cookBytes(r));
  EXPECT_EQ(report.store.sources_unread, 2);
  EXPECT_EQ(report.store.misses, 2);  // the walk and its part
}

// ---- real data -------------------------------------------------------------------------------

TEST(ClipCacheBandai, CacheAndLinkGiveTheOnePieceCooksBytes) {
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "bandai-1";
  if (!fs::exists(dir)) GTEST_SKIP() << "no motion corpus at " << dir;
  std::vector<fs::path> sources;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".bvh") sources.push_back(e.path());
  std::sort(sources.begin(), sources.end());
  CookRequest r;
  r.settings.frame_rate = 30;
  for (size_t i = 0; i < sources.size(); ++i) {
    ClipSpec c;
    c.source = sources[i].string();
    c.mirror = i % 2 == 0;
    r.clips.push_back(c);
  }
  r.jobs = 2;
  const fs::path work =
      fs::temp_directory_path() / ("mmdb_clip_cache_bandai_" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work);
  const std::vector<uint8_t> whole = cookBytes(r);
  ClipCacheFolder cache((work / "cache").string());
  CookReport cold, warm;
  EXPECT_TRUE(cookBytes(r, &cache, &cold) == whole);
  EXPECT_TRUE(cookBytes(r, &cache, &warm) == whole);
  EXPECT_EQ(cold.store.misses, static_cast<int>(sources.size()));
  EXPECT_EQ(warm.store.hits, static_cast<int>(sources.size()));
  ClipFileList files(cookClipFiles(r, work), names(r));
  EXPECT_TRUE(cookBytes(r, &files) == whole);
  r.settings.weights[kBlockHipVelocity] = 2.0f;
  CookReport weighted;
  EXPECT_TRUE(cookBytes(r, &cache, &weighted) == cookBytes(r));
  EXPECT_EQ(weighted.store.hits, static_cast<int>(sources.size()));
  fs::remove_all(work);
}

}  // namespace
}  // namespace mmdb::cook
