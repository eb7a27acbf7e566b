// Database::open / fromMemory: views match what was cooked, and every kind of bad file is
// refused with the right code and a message that says what is wrong.
#include "cook/bounds.h"
#include "golden_spec.h"
#include "synthetic_database.h"
#include "test_util.h"

#include <mmdb/database.h>
#include <mmdb/mmdb_generated.h>
#include <mmdb/search.h>

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace {

using mmdb::Database;
using mmdb::ErrorCode;
using mmdb::test::AlignedBytes;

mmdb::cook::CookedDatabase small() {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 4;
  spec.frames_per_clip = 100;
  return mmdb::test::makeSyntheticDatabase(spec);
}

mmdb::Result<Database> openCooked(const mmdb::cook::CookedDatabase& db, AlignedBytes& storage) {
  storage = mmdb::test::serializeAligned(db);
  return Database::fromMemory(storage.data(), storage.size());
}

void expectViewsMatch(const Database& d, const mmdb::cook::CookedDatabase& c) {
  ASSERT_TRUE(d.valid());
  // The 1.0 regression file, or one written now.
  EXPECT_TRUE(d.schemaMajor() == 1 || d.schemaMajor() == mmdb::cook::kSchemaMajor)
      << d.schemaMajor();
  EXPECT_EQ(d.frameCount(), c.frame_count);
  EXPECT_EQ(d.jointCount(), c.joint_count);
  EXPECT_FLOAT_EQ(d.frameRate(), c.frame_rate);
  EXPECT_EQ(d.featureCount(), c.feature_count);
  EXPECT_EQ(d.featureStride(), c.feature_stride);
  ASSERT_EQ(d.features().size(), c.features.size());
  EXPECT_EQ(0, std::memcmp(d.features().data(), c.features.data(), c.features.size() * 4));
  ASSERT_EQ(d.localRotations().size(), c.local_rotations.size());
  for (size_t i = 0; i < c.local_rotations.size(); i += 7) {
    EXPECT_EQ(d.localRotations()[i].x, c.local_rotations[i].x);
    EXPECT_EQ(d.localRotations()[i].w, c.local_rotations[i].w);
    EXPECT_EQ(d.localTranslations()[i].y, c.local_translations[i].y);
    EXPECT_EQ(d.localTranslations()[i].w, 0.f);
    EXPECT_EQ(d.localAngularVelocities()[i].z, c.local_angular_velocities[i].z);
  }
  ASSERT_EQ(d.rootMotion().size(), c.frame_count);
  EXPECT_EQ(d.rootMotion()[5].position.z, c.root_motion[5].position.z);
  EXPECT_EQ(d.rootMotion()[5].rotation.y, c.root_motion[5].rotation.y);
  EXPECT_EQ(d.contacts()[30], c.contacts[30]);
  ASSERT_EQ(d.clipCount(), c.clips.size());
  for (uint32_t i = 0; i < d.clipCount(); ++i) {
    EXPECT_EQ(d.clip(i).name, c.clips[i].name);
    EXPECT_EQ(d.clip(i).first_frame, c.clips[i].first_frame);
    EXPECT_EQ(d.clip(i).frame_count, c.clips[i].frame_count);
    EXPECT_EQ(d.clip(i).tag_mask, c.clips[i].tag_mask);
    EXPECT_EQ(d.clip(i).bias, c.clips[i].bias);
  }
  ASSERT_EQ(d.ranges().size(), c.ranges.size());
  for (size_t i = 0; i < c.ranges.size(); ++i) {
    EXPECT_EQ(d.ranges()[i].first_frame, c.ranges[i].first_frame);
    EXPECT_EQ(d.ranges()[i].frame_count, c.ranges[i].frame_count);
    EXPECT_EQ(d.ranges()[i].tag_mask, c.ranges[i].tag_mask);
    EXPECT_EQ(d.rangeBias(uint32_t(i)), c.ranges[i].bias);
  }
  EXPECT_EQ(d.tagCount(), 3u);
  EXPECT_EQ(d.tagName(2), "jump");
  EXPECT_EQ(d.tagMask("idle"), 2u);
  EXPECT_EQ(d.tagMask("swim"), 0u);
  EXPECT_EQ(d.jointName(0), "Hips");
  EXPECT_EQ(d.findJoint("Joint2"), 2);
  EXPECT_EQ(d.parents()[1], 0);
  EXPECT_EQ(d.roleJoint(mmdb::Role::Hips), 0);
  EXPECT_EQ(d.roleJoint(mmdb::Role::RightToe), -1);
  ASSERT_EQ(d.featureBlockCount(), 7u);
  EXPECT_EQ(d.featureBlock(5).name, "trajectory_position");
  EXPECT_EQ(d.featureBlock(5).first_column, 15);
  EXPECT_EQ(d.findFeatureBlock(mmdb::FeatureKind::TrajectoryDirection), 6);
  EXPECT_FLOAT_EQ(d.featureBlock(6).weight, 1.5f);
  EXPECT_EQ(d.defaultNeighbourhoodFrames(), 20);
  ASSERT_EQ(d.trajectoryTimes().size(), 3u);
  EXPECT_FLOAT_EQ(d.trajectoryTimes()[2], 1.f);
  // Every GPU array is 16-aligned inside the buffer.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d.features().data()) % 16, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d.rootMotion().data()) % 16, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d.boundsLargeMax().data()) % 16, 0u);
}

TEST(Database, FromMemoryGivesZeroCopyViewsOfEveryStream) {
  const mmdb::cook::CookedDatabase c = small();
  AlignedBytes bytes;
  auto r = openCooked(c, bytes);
  ASSERT_TRUE(r.ok()) << r.error().message();
  expectViewsMatch(r.value(), c);
  // Zero copy: the views point into the caller's bytes.
  const uint8_t* p = reinterpret_cast<const uint8_t*>(r.value().features().data());
  EXPECT_GE(p, bytes.data());
  EXPECT_LT(p, bytes.data() + bytes.size());
}

TEST(Database, OpenMapsTheFile) {
  const mmdb::cook::CookedDatabase c = small();
  const AlignedBytes bytes = mmdb::test::serializeAligned(c);
  const std::string path = mmdb::test::scratchPath("open.mmdb");
  mmdb::test::writeFile(path.c_str(), bytes.data(), bytes.size());
  auto r = Database::open(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().message();
  expectViewsMatch(r.value(), c);
  // Moving keeps the mapping alive; the moved-from database is empty.
  Database moved = std::move(r.value());
  EXPECT_FALSE(r.value().valid());
  EXPECT_EQ(r.value().frameCount(), 0u);
  EXPECT_EQ(moved.frameCount(), c.frame_count);
  std::remove(path.c_str());
}

TEST(Database, ClipOfFrameFindsTheClipOrNone) {
  AlignedBytes bytes;
  auto r = openCooked(small(), bytes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().clipOfFrame(0), 0);
  EXPECT_EQ(r.value().clipOfFrame(99), 0);
  EXPECT_EQ(r.value().clipOfFrame(100), 1);
  EXPECT_EQ(r.value().clipOfFrame(399), 3);
  EXPECT_EQ(r.value().clipOfFrame(400), -1);
  EXPECT_EQ(r.value().findClip("clip_2"), 2);
  EXPECT_EQ(r.value().findClip("nope"), -1);
}

TEST(Database, LogCallbackHearsOpenAndErrors) {
  std::vector<std::string> lines;
  mmdb::OpenOptions options;
  options.log_user = &lines;
  options.log = [](void* user, mmdb::LogLevel, const char* message) {
    static_cast<std::vector<std::string>*>(user)->push_back(message);
  };
  AlignedBytes bytes = mmdb::test::serializeAligned(small());
  ASSERT_TRUE(Database::fromMemory(bytes.data(), bytes.size(), options).ok());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("400 frames"), std::string::npos) << lines[0];
  EXPECT_FALSE(Database::fromMemory(bytes.data(), 10, options).ok());
  EXPECT_EQ(lines.size(), 2u);
  // Through a path: one line each, naming the file.
  const std::string path = mmdb::test::scratchPath("logged.mmdb");
  mmdb::test::writeFile(path.c_str(), bytes.data(), bytes.size());
  ASSERT_TRUE(Database::open(path.c_str(), options).ok());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2].find("opened " + path), 0u) << lines[2];
  mmdb::test::writeFile(path.c_str(), bytes.data(), bytes.size() / 2);
  auto cut = Database::open(path.c_str(), options);
  ASSERT_FALSE(cut.ok());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3], cut.error().message());
  EXPECT_EQ(lines[3].find(path + ": "), 0u) << lines[3];
  std::remove(path.c_str());
}

TEST(Database, MissingFileIsAnIoErrorNamingThePath) {
  auto r = Database::open("/nonexistent/dir/x.mmdb");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::IoError);
  EXPECT_NE(std::string(r.error().message()).find("/nonexistent/dir/x.mmdb"), std::string::npos);
  auto d = Database::open("/tmp");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code(), ErrorCode::IoError);
}

// A FIFO would block open() until a writer came: it is refused before it is opened.
TEST(Database, FifoAndDeviceAreRefusedWithoutBlocking) {
  const std::string fifo = mmdb::test::scratchPath("fifo.mmdb");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = Database::open(fifo.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::IoError);
  EXPECT_NE(std::string(r.error().message()).find("not a regular file"), std::string::npos)
      << r.error().message();
  ::unlink(fifo.c_str());
  auto zero = Database::open("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code(), ErrorCode::IoError);
}

// A mapped file rewritten in place (which Database::open's comment warns against) is read as it
// is now: a search over NaN features says so with NoMatch instead of returning frame -1.
TEST(Database, FeaturesRewrittenUnderTheMappingGiveNoMatch) {
  const AlignedBytes bytes = mmdb::test::serializeAligned(small());
  const std::string path = mmdb::test::scratchPath("rewritten.mmdb");
  mmdb::test::writeFile(path.c_str(), bytes.data(), bytes.size());
  auto r = Database::open(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Database& db = r.value();
  const size_t offset =
      size_t(reinterpret_cast<const uint8_t*>(db.features().data()) - db.bytes().data());
  std::vector<float> nan(db.features().size(), NAN);
  FILE* file = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fseek(file, long(offset), SEEK_SET), 0);
  ASSERT_EQ(std::fwrite(nan.data(), sizeof(float), nan.size(), file), nan.size());
  std::fclose(file);
  ASSERT_TRUE(std::isnan(db.features()[0])) << "the mapping does not show the rewrite";
  std::vector<float> query(db.featureCount(), 0.f);
  mmdb::SearchRequest request;
  request.query = query;
  for (int32_t current : {-1, 10}) {
    request.current_frame = current;
    for (auto* search : {&mmdb::searchExhaustive, &mmdb::searchPruned}) {
      const auto found = search(db, request);
      ASSERT_FALSE(found.ok()) << "frame " << found.value().frame;
      EXPECT_EQ(found.error().code(), ErrorCode::NoMatch);
    }
  }
  std::remove(path.c_str());
}

TEST(Database, NotAnMmdb) {
  alignas(16) char text[64] = "this is a text file, not a database at all.........";
  auto r = Database::fromMemory(text, sizeof(text));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::NotAnMmdb);
  auto tiny = Database::fromMemory(text, 4);
  EXPECT_EQ(tiny.error().code(), ErrorCode::NotAnMmdb);
  auto none = Database::fromMemory(nullptr, 0);
  EXPECT_EQ(none.error().code(), ErrorCode::InvalidArgument);
  auto null = Database::fromMemory(nullptr, 100);
  EXPECT_EQ(null.error().code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(null.error().message(), "no bytes given (a null pointer with size 100)");
}

TEST(Database, MisalignedBufferIsRefused) {
  const AlignedBytes bytes = mmdb::test::serializeAligned(small());
  std::vector<uint8_t> shifted(bytes.size() + 16);
  uint8_t* base = shifted.data() + (16 - reinterpret_cast<uintptr_t>(shifted.data()) % 16) % 16;
  std::memcpy(base + 4, bytes.data(), bytes.size());
  auto r = Database::fromMemory(base + 4, bytes.size());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Misaligned);
  EXPECT_NE(std::string(r.error().message()).find("16-byte"), std::string::npos);
}

// Patches the schema version in place (the writer's struct field in the root table).
void patchVersion(AlignedBytes& bytes, uint16_t major, uint16_t minor) {
  const Database probe = std::move(Database::fromMemory(bytes.data(), bytes.size()).value());
  ASSERT_TRUE(probe.valid());
  const uint8_t* root = bytes.data() + *reinterpret_cast<const uint32_t*>(bytes.data());
  const int32_t vt_rel = *reinterpret_cast<const int32_t*>(root);
  const uint8_t* vt = root - vt_rel;
  const uint16_t field = *reinterpret_cast<const uint16_t*>(vt + 4);
  ASSERT_NE(field, 0);
  uint8_t* version = bytes.data() + (root - bytes.data()) + field;
  ASSERT_EQ(*reinterpret_cast<uint16_t*>(version), mmdb::cook::kSchemaMajor);
  std::memcpy(version, &major, 2);
  std::memcpy(version + 2, &minor, 2);
}

TEST(Database, AnotherMajorVersionIsRefusedWithReCookMessage) {
  AlignedBytes bytes = mmdb::test::serializeAligned(small());
  patchVersion(bytes, 3, 0);
  auto r = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::VersionMismatch);
  EXPECT_STREQ(r.error().message(),
               "file has schema 3.0, this runtime reads 1.x to 2.x; re-cook it with a matching "
               "mmcook");
  AlignedBytes old = mmdb::test::serializeAligned(small());
  patchVersion(old, 0, 9);
  EXPECT_EQ(Database::fromMemory(old.data(), old.size()).error().code(),
            ErrorCode::VersionMismatch);
}

// A raw file of major 1 (the layout 2.0 still writes when nothing is coded) opens.
TEST(Database, TheOldMajorOpens) {
  AlignedBytes bytes = mmdb::test::serializeAligned(small());
  patchVersion(bytes, 1, 0);
  auto r = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r.value().schemaMajor(), 1);
}

TEST(Database, ANewerMinorVersionOpens) {
  AlignedBytes bytes = mmdb::test::serializeAligned(small());
  patchVersion(bytes, mmdb::cook::kSchemaMajor, 7);
  auto r = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r.value().schemaMinor(), 7);
}

// --- semantic checks: each damaged CookedDatabase is refused as Inconsistent -----------------

struct Damage {
  const char* name;
  void (*apply)(mmdb::cook::CookedDatabase&);
  const char* expected;  // a piece of the message
};

const Damage kDamages[] = {
    {"rotations short", [](mmdb::cook::CookedDatabase& d) { d.local_rotations.pop_back(); },
     "local_rotations has"},
    {"velocities short", [](mmdb::cook::CookedDatabase& d) { d.local_velocities.pop_back(); },
     "local_velocities has"},
    {"root motion short", [](mmdb::cook::CookedDatabase& d) { d.root_motion.pop_back(); },
     "root_motion"},
    {"contacts short", [](mmdb::cook::CookedDatabase& d) { d.contacts.pop_back(); }, "contacts"},
    {"features short",
     [](mmdb::cook::CookedDatabase& d) { d.features.resize(d.features.size() - 28); },
     "features has"},
    {"stride not multiple of 4",
     [](mmdb::cook::CookedDatabase& d) {
       d.feature_stride = 30;
       d.features.assign(size_t(d.frame_count) * 30, 0.f);
       mmdb::test::computeBounds(d);
     },
     "multiple of 4"},
    {"count over stride", [](mmdb::cook::CookedDatabase& d) { d.feature_count = 29; },
     "feature_stride"},
    {"offset size", [](mmdb::cook::CookedDatabase& d) { d.feature_offset.pop_back(); },
     "feature_offset"},
    {"scale zero", [](mmdb::cook::CookedDatabase& d) { d.feature_scale[3] = 0.f; },
     "feature_scale[3]"},
    {"scale NaN", [](mmdb::cook::CookedDatabase& d) { d.feature_scale[2] = NAN; },
     "feature_scale[2]"},
    {"feature NaN", [](mmdb::cook::CookedDatabase& d) { d.features[28 * 5 + 2] = NAN; },
     "features[142]"},
    {"feature inf", [](mmdb::cook::CookedDatabase& d) { d.features[7] = INFINITY; }, "not finite"},
    {"bounds NaN", [](mmdb::cook::CookedDatabase& d) { d.bounds_small_max[3] = NAN; },
     "bounds_small_max"},
    {"bounds size", [](mmdb::cook::CookedDatabase& d) { d.bounds_large_min.resize(28); },
     "bounds_large_min"},
    {"bounds do not contain",
     [](mmdb::cook::CookedDatabase& d) { d.bounds_small_max[28 * 2 + 1] -= 1.f; },
     "outside their bounds"},
    {"parent after child", [](mmdb::cook::CookedDatabase& d) { d.skeleton.parents[1] = 2; },
     "must precede"},
    {"names short", [](mmdb::cook::CookedDatabase& d) { d.skeleton.names.pop_back(); },
     "skeleton.names"},
    {"clip past end", [](mmdb::cook::CookedDatabase& d) { d.clips.back().frame_count += 1; },
     "outside [0, 400)"},
    {"clips overlap", [](mmdb::cook::CookedDatabase& d) { d.clips[2].first_frame -= 1; }, "sorted"},
    {"range past end", [](mmdb::cook::CookedDatabase& d) { d.ranges.back().frame_count += 100; },
     "range"},
    {"ranges unsorted", [](mmdb::cook::CookedDatabase& d) { std::swap(d.ranges[0], d.ranges[2]); },
     "sorted"},
    {"block past columns", [](mmdb::cook::CookedDatabase& d) { d.feature_blocks[6].width = 7; },
     "trajectory_direction"},
    {"blocks overlap", [](mmdb::cook::CookedDatabase& d) { d.feature_blocks[1].first_column = 2; },
     "overlaps"},
    {"no frames", [](mmdb::cook::CookedDatabase& d) { d.frame_count = 0; }, ""},
    {"zero rate", [](mmdb::cook::CookedDatabase& d) { d.frame_rate = 0; }, "frame_rate"},
    {"contact joint", [](mmdb::cook::CookedDatabase& d) { d.skeleton.contact_joints = {9}; },
     "contact joint"},
    {"tiny rate", [](mmdb::cook::CookedDatabase& d) { d.frame_rate = 1e-45f; },
     "frame_rate 1.4013e-45 is outside [1, 1000] Hz"},
    {"frames outside every clip", [](mmdb::cook::CookedDatabase& d) { d.clips.pop_back(); },
     "the clips end at global frame 300 of 400"},
    {"gap between clips",
     [](mmdb::cook::CookedDatabase& d) {
       d.clips[1].first_frame += 1;
       d.clips[1].frame_count -= 1;
     },
     "global frames 100 to 101 belong to no clip"},
    {"range across clips",
     [](mmdb::cook::CookedDatabase& d) {
       d.ranges.erase(d.ranges.begin() + 2);
       d.ranges[1].frame_count += 60;
     },
     "which are not inside one clip"},
    {"root motion NaN", [](mmdb::cook::CookedDatabase& d) { d.root_motion[7].velocity.x = NAN; },
     "root_motion[7] is not finite"},
    {"rotation inf", [](mmdb::cook::CookedDatabase& d) { d.local_rotations[5].w = INFINITY; },
     "local_rotations[5] is not finite"},
    {"trajectory time NaN",
     [](mmdb::cook::CookedDatabase& d) { d.settings.trajectory_times[2] = NAN; },
     "settings.trajectory_times[2] = nan"},
    {"two trajectory times",
     [](mmdb::cook::CookedDatabase& d) { d.settings.trajectory_times.pop_back(); },
     "settings.trajectory_times has 2 elements, expected 3"},
    {"kind against width",
     [](mmdb::cook::CookedDatabase& d) {
       d.feature_blocks[0].kind = mmdb::cook::FeatureKind::TrajectoryPosition;
     },
     "feature block 0 (left_foot_position): kind 2 with width 3"},
    {"clip tag bit", [](mmdb::cook::CookedDatabase& d) { d.clips[1].tag_mask |= 8; },
     "clip 1 (clip_1): tag_mask has bits 0x8 beyond the 3 tag_names"},
    {"range tag bit",
     [](mmdb::cook::CookedDatabase& d) { d.ranges[0].tag_mask |= uint64_t{1} << 63; },
     "range 0: tag_mask has bits 0x8000000000000000 beyond the 3 tag_names"},
    {"source index", [](mmdb::cook::CookedDatabase& d) { d.clips[2].source_index = 1; },
     "clip 2 (clip_2): source_index 1 is outside the 1 sources"},
    {"mirror of", [](mmdb::cook::CookedDatabase& d) { d.clips[3].mirror_of = 4; },
     "clip 3 (clip_3): mirror_of 4 is not -1 or another of the 4 clips"},
    {"mirror of itself", [](mmdb::cook::CookedDatabase& d) { d.clips[0].mirror_of = 0; },
     "clip 0 (clip_0): mirror_of 0"},
    {"no trajectory block",
     [](mmdb::cook::CookedDatabase& d) {
       d.feature_blocks[5].kind = mmdb::cook::FeatureKind::TrajectoryDirection;
     },
     "feature_blocks has no trajectory position or no trajectory direction block"},
};

TEST(Database, SemanticChecksRefuseInconsistentFiles) {
  for (const Damage& damage : kDamages) {
    SCOPED_TRACE(damage.name);
    mmdb::cook::CookedDatabase c = small();
    damage.apply(c);
    AlignedBytes bytes;
    auto r = openCooked(c, bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Inconsistent) << r.error().message();
    EXPECT_NE(std::string(r.error().message()).find(damage.expected), std::string::npos)
        << r.error().message();
  }
}

// --- the regression file of schema 1.0 ---------------------------------------------------------

TEST(Database, OpensTheSchema1_0RegressionFileWithItsValues) {
  const std::string path = std::string(MMDB_TEST_DATA) + "/mmdb/mmdb-1.0.mmdb";
  auto r = Database::open(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Database& d = r.value();
  EXPECT_EQ(d.schemaMajor(), 1);
  EXPECT_EQ(d.schemaMinor(), 0);
  // The file was made from goldenSpec(); it must read back exactly as that database.
  expectViewsMatch(d, mmdb::test::makeSyntheticDatabase(mmdb::test::goldenSpec()));
  // A file from before the 2.1 cost biases: every bias reads as 0.
  EXPECT_TRUE(d.rangeBiases().empty());
  for (uint32_t f = 0; f < d.frameCount(); ++f) ASSERT_EQ(d.frameBias(f), 0.f) << f;
}

// --- the regression file of schema 2.1 ---------------------------------------------------------

TEST(Database, OpensTheSchema2_1RegressionFileWithItsBiases) {
  const std::string path = std::string(MMDB_TEST_DATA) + "/mmdb/mmdb-2.1.mmdb";
  auto r = Database::open(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Database& d = r.value();
  EXPECT_EQ(d.schemaMajor(), 2);
  EXPECT_EQ(d.schemaMinor(), 1);
  // The file was made from goldenSpec() with setSyntheticBiases().
  mmdb::cook::CookedDatabase c = mmdb::test::makeSyntheticDatabase(mmdb::test::goldenSpec());
  mmdb::test::setSyntheticBiases(c);
  expectViewsMatch(d, c);
  ASSERT_EQ(d.rangeBiases().size(), d.ranges().size());
  EXPECT_EQ(d.clip(0).bias, -0.25f);
  EXPECT_EQ(d.rangeBias(1), -0.75f);  // clip 0's jump range
  const mmdb::ClipInfo last = d.clip(2);
  EXPECT_EQ(d.frameBias(last.first_frame + last.frame_count - 1), 0.25f);  // unmatchable tail
}

// --- the regression file of schema 2.2 ---------------------------------------------------------

// The first frame that lies outside its small or large box (what RangeBounds allows for a frame
// no range holds), or -1.
int64_t firstFrameOutsideItsBoxes(const Database& d) {
  const uint32_t stride = d.featureStride(), small = d.boundsSmallSize();
  const uint32_t large = d.boundsLargeSize();
  for (uint32_t f = 0; f < d.frameCount(); ++f)
    for (uint32_t c = 0; c < d.featureCount(); ++c) {
      const float v = d.features()[size_t(f) * stride + c];
      const size_t s = size_t(f / small) * stride + c, l = size_t(f / large) * stride + c;
      if (v < d.boundsSmallMin()[s] || v > d.boundsSmallMax()[s] || v < d.boundsLargeMin()[l] ||
          v > d.boundsLargeMax()[l])
        return f;
    }
  return -1;
}

// Whether a range holds `frame`.
bool matchable(const Database& d, int64_t frame) {
  for (const mmdb::MatchRange& r : d.ranges())
    if (frame >= r.first_frame && frame < int64_t(r.first_frame) + r.frame_count) return true;
  return false;
}

// Requests around every 7th frame's row (moved by a little of another row's), seeded at that
// frame or unseeded, answered by the pruned search, the batch (with and without a scratch) and
// the exhaustive search: the same winners and costs.
void expectPrunedSearchesAgree(const Database& d) {
  const uint32_t n = d.featureCount();
  std::vector<std::vector<float>> queries;
  std::vector<mmdb::SearchRequest> requests;
  for (uint32_t f = 0; f < d.frameCount(); f += 7) {
    std::vector<float> q(n);
    const uint32_t other = (f * 31 + 17) % d.frameCount();
    for (uint32_t c = 0; c < n; ++c)
      q[c] = 0.8f * d.featureRow(f)[c] + 0.2f * d.featureRow(other)[c];
    queries.push_back(std::move(q));
  }
  for (size_t i = 0; i < queries.size(); ++i) {
    mmdb::SearchRequest r;
    r.query = {queries[i].data(), queries[i].size()};
    r.current_frame = i % 2 ? int32_t(i * 7) : -1;
    r.transition_cost = 0.5f;
    requests.push_back(r);
  }
  std::vector<mmdb::SearchResult> batch(requests.size()), scratched(requests.size());
  std::vector<float> scratch(mmdb::batchScratchFloats(d));
  ASSERT_TRUE(
      mmdb::searchBatch(d, {requests.data(), requests.size()}, {batch.data(), batch.size()}));
  ASSERT_TRUE(mmdb::searchBatch(d, {requests.data(), requests.size()},
                                {scratched.data(), scratched.size()},
                                {scratch.data(), scratch.size()}));
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(i);
    auto exhaustive = mmdb::searchExhaustive(d, requests[i]);
    auto pruned = mmdb::searchPruned(d, requests[i]);
    ASSERT_TRUE(exhaustive.ok() && pruned.ok());
    EXPECT_EQ(pruned.value().frame, exhaustive.value().frame);
    EXPECT_EQ(pruned.value().cost, exhaustive.value().cost);
    EXPECT_EQ(batch[i].frame, exhaustive.value().frame);
    EXPECT_EQ(batch[i].cost, exhaustive.value().cost);
    EXPECT_EQ(scratched[i].frame, exhaustive.value().frame);
    EXPECT_EQ(scratched[i].cost, exhaustive.value().cost);
  }
}

TEST(Database, OpensTheSchema2_2RegressionFileWithItsRangeBounds) {
  const std::string path = std::string(MMDB_TEST_DATA) + "/mmdb/mmdb-2.2.mmdb";
  auto r = Database::open(path.c_str());
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Database& d = r.value();
  EXPECT_EQ(d.schemaMajor(), 2);
  EXPECT_EQ(d.schemaMinor(), 2);
  // The file was made from goldenSpec() with setSyntheticBiases(); each clip's last 20 frames
  // are unmatchable, and the boxes leave them out.
  mmdb::cook::CookedDatabase c = mmdb::test::makeSyntheticDatabase(mmdb::test::goldenSpec());
  mmdb::test::setSyntheticBiases(c);
  expectViewsMatch(d, c);
  EXPECT_EQ(d.flatbuffer()->required_features(), mmdb::kFeatureRangeBounds);
  const int64_t outside = firstFrameOutsideItsBoxes(d);
  EXPECT_GE(outside, 0);
  EXPECT_FALSE(matchable(d, outside));
  expectPrunedSearchesAgree(d);
}

// RangeBounds: the writer sets it exactly when some frame lies outside its boxes, and the
// runtime then checks the frames of matchable ranges only.
TEST(Database, RangeBoundsLeaveOutOnlyUnmatchableFrames) {
  mmdb::cook::CookedDatabase c = small();  // bounds over the matchable frames, as the cook's
  AlignedBytes bytes;
  int64_t outside = -1;
  {
    auto r = openCooked(c, bytes);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r.value().flatbuffer()->required_features(), mmdb::kFeatureRangeBounds);
    outside = firstFrameOutsideItsBoxes(r.value());
    ASSERT_GE(outside, 0);
    EXPECT_FALSE(matchable(r.value(), outside));
    expectPrunedSearchesAgree(r.value());
  }
  // Boxes over every frame (a 2.1 cook's): the bit stays clear, and a 2.1 reader opens the file.
  mmdb::cook::CookedDatabase all = c;
  for (auto [size, lo, hi] :
       {std::tuple{all.bounds_small_size, &all.bounds_small_min, &all.bounds_small_max},
        std::tuple{all.bounds_large_size, &all.bounds_large_min, &all.bounds_large_max}}) {
    mmdb::cook::FeatureBounds b =
        mmdb::cook::buildFeatureBounds(all.features, all.feature_stride, size);
    *lo = std::move(b.min);
    *hi = std::move(b.max);
  }
  {
    auto r = openCooked(all, bytes);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r.value().flatbuffer()->required_features(), 0u);
    EXPECT_EQ(firstFrameOutsideItsBoxes(r.value()), -1);
  }
  // Without the bit, a range-bounds file is refused at its first frame outside its boxes.
  {
    bytes = mmdb::test::serializeAligned(c);
    auto* table = reinterpret_cast<flatbuffers::Table*>(
        const_cast<mmdb::fb::Database*>(mmdb::fb::GetDatabase(bytes.data())));
    ASSERT_TRUE(table->SetField<uint64_t>(mmdb::fb::Database::VT_REQUIRED_FEATURES, 0, 0));
    auto r = Database::fromMemory(bytes.data(), bytes.size());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Inconsistent);
    EXPECT_NE(std::string(r.error().message())
                  .find("features of global frame " + std::to_string(outside) + " lie outside"),
              std::string::npos)
        << r.error().message();
  }
  // With it, a matchable frame outside its box is still refused, by frame.
  {
    mmdb::cook::CookedDatabase damaged = c;
    const uint32_t frame = damaged.ranges[1].first_frame + 3;
    damaged.features[size_t(frame) * damaged.feature_stride + 5] =
        damaged
            .bounds_small_max[size_t(frame / damaged.bounds_small_size) * damaged.feature_stride +
                              5] +
        1.f;
    auto r = openCooked(damaged, bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Inconsistent);
    EXPECT_NE(std::string(r.error().message())
                  .find("features of global frame " + std::to_string(frame) + " lie outside"),
              std::string::npos)
        << r.error().message();
  }
}

// Biases a file holds must be finite (the cooker never writes others).
TEST(Database, RefusesABiasThatIsNotFinite) {
  for (const bool in_range : {true, false}) {
    mmdb::cook::CookedDatabase c = small();
    mmdb::test::setSyntheticBiases(c);
    if (in_range)
      c.ranges[1].bias = NAN;
    else
      c.clips[1].bias = INFINITY;
    const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(c);
    auto r = Database::fromMemory(bytes.data(), bytes.size());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), mmdb::ErrorCode::Inconsistent);
    EXPECT_NE(std::string(r.error().message()).find(in_range ? "range_biases[1]" : "clip 1: bias"),
              std::string::npos)
        << r.error().message();
  }
}

}  // namespace
