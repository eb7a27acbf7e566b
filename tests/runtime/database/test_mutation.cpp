// Mutation sweep: truncate a valid file at many points and flip bytes in every part of it.
// Each damaged buffer must be refused with a reason, or (when the damage lands somewhere that
// stays valid) open and be searchable without crashing. Run it under ASan+UBSan.
#include "synthetic_database.h"

#include <mmdb/controller.h>
#include <mmdb/database.h>
#include <mmdb/playback.h>
#include <mmdb/search.h>

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using mmdb::Database;
using mmdb::ErrorCode;

mmdb::test::AlignedBytes validBytes() {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 2;
  spec.frames_per_clip = 70;
  spec.joints = 3;
  return mmdb::test::serializeAligned(mmdb::test::makeSyntheticDatabase(spec));
}

// Uses everything a game would on a database that opened.
void exercise(const Database& db) {
  std::vector<float> query(db.featureCount(), 0.25f);
  mmdb::SearchRequest request;
  request.query = query;
  request.current_frame = int32_t(db.frameCount() / 2);
  auto a = mmdb::searchExhaustive(db, request);
  auto b = mmdb::searchPruned(db, request);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().frame, b.value().frame);
  float trajectory[mmdb::kTrajectoryFloats] = {};
  (void)mmdb::buildQuery(db, 0, trajectory, mmdb::Span<float>(query));
  std::vector<glm::quat> rotations(db.jointCount());
  std::vector<glm::vec3> translations(db.jointCount());
  for (uint32_t c = 0; c < db.clipCount(); ++c) {
    mmdb::SamplePoseJob job;
    job.database = &db;
    job.clip = c;
    job.time = 0.3f;
    job.rotations = rotations;
    job.translations = translations;
    EXPECT_TRUE(job.Run().ok());
  }
  for (uint32_t i = 0; i < db.tagCount(); ++i) (void)db.tagName(i);
  for (uint32_t j = 0; j < db.jointCount(); ++j) (void)db.jointName(j);
  for (uint32_t b2 = 0; b2 < db.featureBlockCount(); ++b2) (void)db.featureBlock(b2);
  (void)db.roleJoint(mmdb::Role::LeftFoot);
  (void)db.facingAxis();
  (void)db.trajectoryTimes();
  (void)db.cookerVersion();
}

bool knownCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::NotAnMmdb:
    case ErrorCode::VersionMismatch:
    case ErrorCode::Misaligned:
    case ErrorCode::Corrupt:
    case ErrorCode::Inconsistent:
      return true;
    default:
      return false;
  }
}

TEST(Mutation, TruncatedFilesAreRefusedWithAReason) {
  const mmdb::test::AlignedBytes bytes = validBytes();
  ASSERT_TRUE(Database::fromMemory(bytes.data(), bytes.size()).ok());
  // Every length near the start and end, and a stride through the middle.
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 256 && n < bytes.size(); ++n) lengths.push_back(n);
  for (size_t n = 256; n < bytes.size(); n += 97) lengths.push_back(n);
  for (size_t n = bytes.size() > 64 ? bytes.size() - 64 : 0; n < bytes.size(); ++n)
    lengths.push_back(n);
  for (size_t n : lengths) {
    mmdb::test::AlignedBytes cut(bytes.data(), n);  // exact size, so ASan sees any overread
    auto r = Database::fromMemory(cut.data(), n);
    if (r.ok()) {
      // Only trailing alignment padding may go without anything referring to it.
      EXPECT_GE(n + 8, bytes.size())
          << "a file cut to " << n << " of " << bytes.size() << " bytes opened";
      exercise(r.value());
      continue;
    }
    EXPECT_TRUE(knownCode(r.error().code())) << n << ": " << r.error().message();
    EXPECT_GT(std::strlen(r.error().message()), 10u);
  }
}

TEST(Mutation, FlippedBytesAreRefusedOrHarmless) {
  const mmdb::test::AlignedBytes bytes = validBytes();
  std::mt19937 rng(42);
  size_t refused = 0, opened = 0;
  // Every byte of the first 1 KiB (header, vtables, tables), then a stride over the rest, each
  // with a few different flips; plus random multi-byte damage.
  std::vector<size_t> positions;
  for (size_t i = 0; i < bytes.size() && i < 1024; ++i) positions.push_back(i);
  for (size_t i = 1024; i < bytes.size(); i += 13) positions.push_back(i);
  const uint8_t masks[] = {0x01, 0x80, 0xff};
  mmdb::test::AlignedBytes copy(bytes.data(), bytes.size());
  for (size_t pos : positions) {
    for (uint8_t mask : masks) {
      copy.data()[pos] ^= mask;
      auto r = Database::fromMemory(copy.data(), copy.size());
      if (r.ok()) {
        ++opened;
        exercise(r.value());
      } else {
        ++refused;
        EXPECT_TRUE(knownCode(r.error().code())) << pos << ": " << r.error().message();
      }
      copy.data()[pos] ^= mask;
    }
  }
  for (int trial = 0; trial < 2000; ++trial) {
    mmdb::test::AlignedBytes damaged(bytes.data(), bytes.size());
    const int flips = 1 + int(rng() % 8);
    for (int k = 0; k < flips; ++k) damaged.data()[rng() % damaged.size()] = uint8_t(rng());
    auto r = Database::fromMemory(damaged.data(), damaged.size());
    if (r.ok()) {
      ++opened;
      exercise(r.value());
    } else {
      ++refused;
    }
  }
  // Both outcomes happen: flips in float payloads stay valid, flips in offsets do not.
  EXPECT_GT(refused, 100u);
  EXPECT_GT(opened, 100u);
}

}  // namespace
