// Coded pose streams in the runtime: open checks their structure, decodePoses() gives what the
// cook measured, any range of frames, checked; sampling decoded memory agrees with the raw file.
#include "compress/pose_compression.h"
#include "real_database.h"
#include "synthetic_database.h"
#include "write/database_writer.h"

#include <mmdb/mmdb.h>
#include <mmdb/mmdb_generated.h>

#include <gtest/gtest.h>
#include <meshoptimizer.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

namespace {

using mmdb::Database;
using mmdb::ErrorCode;
using mmdb::Float4;

// Caller-owned decode memory for every stream of `frames` frames.
struct Decoded {
  std::vector<Float4> streams[mmdb::kPoseStreamCount];
  Decoded(const Database& db, uint32_t frames) {
    for (auto& s : streams) s.resize(size_t(frames) * db.jointCount());
  }
  mmdb::PoseBuffers buffers() { return {streams[0], streams[1], streams[2], streams[3]}; }
  mmdb::PoseView view(uint32_t first, uint32_t frames) const {
    mmdb::PoseView v;
    v.first_frame = first;
    v.frame_count = frames;
    v.rotations = streams[0];
    v.translations = streams[1];
    v.velocities = streams[2];
    v.angular_velocities = streams[3];
    return v;
  }
};

mmdb::cook::CookedDatabase coded(uint32_t segment_frames = 100, uint32_t joints = 6) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 3;
  spec.frames_per_clip = 170;
  spec.joints = joints;
  mmdb::cook::CookedDatabase db = mmdb::test::makeSyntheticDatabase(spec);
  mmdb::cook::CompressionSettings settings;
  settings.segment_frames = int(segment_frames);
  mmdb::cook::compressPoses(db, settings, 2);
  return db;
}

bool sameFloat4(const Float4& a, const glm::vec4& b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

TEST(PoseDecode, OpensWithNoCopyAndDecodesWhatTheCookMeasured) {
  const mmdb::cook::CookedDatabase cooked = coded();
  const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(cooked);
  auto opened = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  const Database& db = opened.value();
  EXPECT_EQ(db.schemaMajor(), 2);
  EXPECT_TRUE(db.posesCoded());
  EXPECT_TRUE(db.localRotations().empty());
  EXPECT_EQ(db.rawPoses().frame_count, 0u);
  Decoded out(db, db.frameCount());
  ASSERT_TRUE(db.decodePoses(0, db.frameCount(), out.buffers()).ok());
  for (int s = 0; s < mmdb::cook::kPoseStreamCount; ++s) {
    const std::vector<glm::vec4> expected = mmdb::cook::decodeCodedStream(
        *cooked.pose_coding.streams[size_t(s)], cooked.frame_count, cooked.joint_count,
        cooked.pose_coding.segment_frames, s == mmdb::cook::kStreamRotations);
    ASSERT_EQ(expected.size(), out.streams[s].size());
    for (size_t e = 0; e < expected.size(); ++e)
      ASSERT_TRUE(sameFloat4(out.streams[s][e], expected[e])) << "stream " << s << " element " << e;
  }
  // The coded file is smaller than the raw one.
  mmdb::cook::CookedDatabase raw = cooked;
  raw.pose_coding = {};
  EXPECT_LT(bytes.size() * 2, mmdb::test::serializeAligned(raw).size());
}

TEST(PoseDecode, AnyRangeOfFramesMatchesTheWholeDecode) {
  const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(coded(100));
  const Database db = std::move(Database::fromMemory(bytes.data(), bytes.size()).value());
  Decoded whole(db, db.frameCount());
  ASSERT_TRUE(db.decodePoses(0, db.frameCount(), whole.buffers()).ok());
  const uint32_t last = db.frameCount() - 1;
  const std::pair<uint32_t, uint32_t> ranges[] = {{0, 1},     {99, 3},   {100, 100},
                                                  {250, 160}, {last, 1}, {37, 400}};
  const size_t joints = db.jointCount();
  for (const auto& [first, count] : ranges) {
    Decoded part(db, count);
    ASSERT_TRUE(db.decodePoses(first, count, part.buffers()).ok()) << first << "+" << count;
    for (int s = 0; s < 4; ++s)
      ASSERT_EQ(std::memcmp(part.streams[s].data(), whole.streams[s].data() + first * joints,
                            size_t(count) * joints * sizeof(Float4)),
                0)
          << "stream " << s << " frames " << first << "+" << count;
  }
  // One stream alone.
  Decoded part(db, 10);
  mmdb::PoseBuffers only;
  only.angular_velocities = part.streams[3];
  ASSERT_TRUE(db.decodePoses(5, 10, only).ok());
  EXPECT_EQ(std::memcmp(part.streams[3].data(), whole.streams[3].data() + 5 * joints,
                        10 * joints * sizeof(Float4)),
            0);
}

TEST(PoseDecode, ARawFileIsItsOwnMemoryAndDecodesAsACopy) {
  mmdb::test::SyntheticSpec spec;
  const mmdb::cook::CookedDatabase cooked = mmdb::test::makeSyntheticDatabase(spec);
  const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(cooked);
  const Database db = std::move(Database::fromMemory(bytes.data(), bytes.size()).value());
  EXPECT_FALSE(db.posesCoded());
  const mmdb::PoseView raw = db.rawPoses();
  EXPECT_EQ(raw.frame_count, db.frameCount());
  EXPECT_EQ(raw.rotations.data(), db.localRotations().data());  // the file itself
  Decoded out(db, 7);
  ASSERT_TRUE(db.decodePoses(11, 7, out.buffers()).ok());
  EXPECT_EQ(std::memcmp(out.streams[1].data(), db.localTranslations().data() + 11 * db.jointCount(),
                        7 * db.jointCount() * sizeof(Float4)),
            0);
}

TEST(PoseDecode, BadArgumentsAreRefused) {
  const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(coded());
  const Database db = std::move(Database::fromMemory(bytes.data(), bytes.size()).value());
  Decoded out(db, 4);
  EXPECT_EQ(db.decodePoses(db.frameCount() - 2, 4, out.buffers()).code(),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(db.decodePoses(0, 3, out.buffers()).code(), ErrorCode::InvalidArgument);  // size
  std::vector<Float4> storage(4 * db.jointCount() + 1);
  mmdb::PoseBuffers misaligned;
  misaligned.rotations =
      mmdb::Span<Float4>(reinterpret_cast<Float4*>(reinterpret_cast<uint8_t*>(storage.data()) + 4),
                         4 * db.jointCount());
  const mmdb::Status s = db.decodePoses(0, 4, misaligned);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(s.message()).find("16-byte"), std::string::npos) << s.message();
  EXPECT_EQ(Database().decodePoses(0, 0, {}).code(), ErrorCode::InvalidArgument);
  // Sampling a coded file needs the decoded poses.
  std::vector<glm::quat> r(db.jointCount());
  std::vector<glm::vec3> t(db.jointCount());
  mmdb::SamplePoseJob job;
  job.database = &db;
  job.rotations = r;
  job.translations = t;
  EXPECT_EQ(job.Run().code(), ErrorCode::InvalidArgument);
  // Poses that do not hold the clip.
  Decoded part(db, 10);
  job.poses = part.view(0, 10);
  job.clip = 1;
  EXPECT_EQ(job.Run().code(), ErrorCode::InvalidArgument);
}

// Model-space positions of a sampled pose.
std::vector<glm::vec3> modelPositions(const Database& db, const std::vector<glm::quat>& r,
                                      const std::vector<glm::vec3>& t) {
  std::vector<glm::quat> mq(db.jointCount());
  std::vector<glm::vec3> mp(db.jointCount());
  mmdb::ForwardKinematicsJob fk;
  fk.parents = db.parents();
  fk.local_rotations = r;
  fk.local_translations = t;
  fk.model_rotations = mq;
  fk.model_translations = mp;
  EXPECT_TRUE(fk.Run().ok());
  return mp;
}

// Samples every clip of `raw_db` and `coded_db` (decoded) at keys and between them; returns the
// largest model-space distance of a joint.
double samplingDifference(const Database& raw_db, const Database& coded_db) {
  Decoded out(coded_db, coded_db.frameCount());
  EXPECT_TRUE(coded_db.decodePoses(0, coded_db.frameCount(), out.buffers()).ok());
  const size_t joints = raw_db.jointCount();
  std::vector<glm::quat> ra(joints), rb(joints);
  std::vector<glm::vec3> ta(joints), tb(joints), va(joints), vb(joints);
  double worst = 0;
  for (uint32_t c = 0; c < raw_db.clipCount(); ++c) {
    const uint32_t frames = raw_db.clip(c).frame_count;
    for (uint32_t k = 0; k < 2 * frames; k += 3) {
      mmdb::SamplePoseJob a, b;
      a.database = &raw_db;
      b.database = &coded_db;
      b.poses = out.view(0, coded_db.frameCount());
      a.clip = b.clip = c;
      a.time = b.time = float(k) * 0.5f / raw_db.frameRate();
      a.rotations = ra, a.translations = ta, a.velocities = va;
      b.rotations = rb, b.translations = tb, b.velocities = vb;
      EXPECT_TRUE(a.Run().ok());
      EXPECT_TRUE(b.Run().ok());
      const std::vector<glm::vec3> pa = modelPositions(raw_db, ra, ta);
      const std::vector<glm::vec3> pb = modelPositions(coded_db, rb, tb);
      for (size_t j = 0; j < joints; ++j)
        worst = std::max(worst, double(glm::length(pa[j] - pb[j])));
    }
  }
  return worst;
}

TEST(PoseDecode, SamplingACodedFileAgreesWithTheRawFileWithinTheBudget) {
  mmdb::cook::CookedDatabase cooked = coded(128, 8);
  const mmdb::test::AlignedBytes coded_bytes = mmdb::test::serializeAligned(cooked);
  cooked.pose_coding = {};
  const mmdb::test::AlignedBytes raw_bytes = mmdb::test::serializeAligned(cooked);
  const Database raw = std::move(Database::fromMemory(raw_bytes.data(), raw_bytes.size()).value());
  const Database db =
      std::move(Database::fromMemory(coded_bytes.data(), coded_bytes.size()).value());
  const double worst = samplingDifference(raw, db);
  EXPECT_LE(worst, mmdb::cook::CompressionSettings{}.position_tolerance + 1e-6);
  EXPECT_GT(worst, 0.0);
}

// --- damaged coded streams: refused at open, or at decode, never undefined behaviour ---------

namespace fb = mmdb::fb;

mmdb::Status openStatus(const mmdb::test::AlignedBytes& b) {
  auto r = Database::fromMemory(b.data(), b.size());
  return r.ok() ? mmdb::Status() : mmdb::Status(r.error());
}

TEST(PoseDecode, BrokenStructureIsRefusedAtOpen) {
  struct Case {
    const char* name;
    std::function<void(mmdb::cook::CookedDatabase&)> damage;
    ErrorCode code;
    const char* message;
  };
  const Case cases[] = {
      {"offsets past the data",
       [](mmdb::cook::CookedDatabase& d) { d.pose_coding.streams[1]->segment_offsets.back() += 1; },
       ErrorCode::Inconsistent, "segment offsets run from 0 to"},
      {"falling offsets",
       [](mmdb::cook::CookedDatabase& d) {
         auto& o = d.pose_coding.streams[0]->segment_offsets;
         std::swap(o[1], o[2]);
       },
       ErrorCode::Inconsistent, "offsets must not fall"},
      {"quaternion coding on translations",
       [](mmdb::cook::CookedDatabase& d) {
         d.pose_coding.streams[1]->tracks[0].coding = mmdb::cook::TrackCoding::Quaternion;
         d.pose_coding.streams[1]->tracks[0].bits = 12;
       },
       ErrorCode::Inconsistent, "local_translations: joint 0 has coding 1 with 12 bits"},
      {"30 bits",
       [](mmdb::cook::CookedDatabase& d) { d.pose_coding.streams[3]->tracks[1].bits = 30; },
       ErrorCode::Inconsistent, "local_angular_velocities: joint 1 has coding"},
      {"NaN constant",
       [](mmdb::cook::CookedDatabase& d) { d.pose_coding.streams[2]->tracks[0].value.x = NAN; },
       ErrorCode::Inconsistent, "local_velocities: joint 0's constant is not finite"},
      {"segment of 2000 frames",
       [](mmdb::cook::CookedDatabase& d) { d.pose_coding.segment_frames = 2000; },
       ErrorCode::Inconsistent, "segment_frames is 2000"},
      {"tracks short",
       [](mmdb::cook::CookedDatabase& d) { d.pose_coding.streams[0]->tracks.pop_back(); },
       ErrorCode::Inconsistent, "local_rotations has 5 elements, expected 6"},
  };
  for (const Case& c : cases) {
    mmdb::cook::CookedDatabase db = coded();
    c.damage(db);
    const mmdb::Status s = openStatus(mmdb::test::serializeAligned(db));
    EXPECT_EQ(s.code(), c.code) << c.name << ": " << s.message();
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos)
        << c.name << ": " << s.message();
  }
}

// Patches a field of the root table in place (it must be present).
template <class T>
void patchRoot(mmdb::test::AlignedBytes& bytes, flatbuffers::voffset_t field, T value) {
  auto* table = reinterpret_cast<flatbuffers::Table*>(
      const_cast<fb::Database*>(fb::GetDatabase(bytes.data())));
  ASSERT_TRUE(table->SetField<T>(field, value, T()));
}

TEST(PoseDecode, FeatureBitsAndVersionsGuardTheCodedStreams) {
  mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(coded());
  // The lowest bit this runtime does not know, with the coded streams' own.
  const uint64_t unknown = (mmdb::kKnownFeatures + 1) & ~mmdb::kKnownFeatures;
  patchRoot<uint64_t>(bytes, fb::Database::VT_REQUIRED_FEATURES, unknown | 1);
  mmdb::Status s = openStatus(bytes);
  EXPECT_EQ(s.code(), ErrorCode::VersionMismatch);
  char expected[64];
  std::snprintf(expected, sizeof expected, "needs features 0x%llx", (unsigned long long)unknown);
  EXPECT_NE(std::string(s.message()).find(expected), std::string::npos) << s.message();
  patchRoot<uint64_t>(bytes, fb::Database::VT_REQUIRED_FEATURES, 0);
  s = openStatus(bytes);
  EXPECT_EQ(s.code(), ErrorCode::Inconsistent);
  EXPECT_STREQ(s.message(), "pose streams are coded but required_features does not say so");
}

TEST(PoseDecode, DamagedSegmentsAreRefusedAtDecode) {
  // A segment cut short by moving an offset: the vertex codec runs out of bytes.
  {
    mmdb::cook::CookedDatabase db = coded();
    auto& stream = *db.pose_coding.streams[mmdb::cook::kStreamRotations];
    // Joint 0's first segment loses its last bytes to its second.
    stream.segment_offsets[1] -= 20;
    const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(db);
    const Database d = std::move(Database::fromMemory(bytes.data(), bytes.size()).value());
    Decoded out(d, d.frameCount());
    const mmdb::Status s = d.decodePoses(0, d.frameCount(), out.buffers());
    EXPECT_EQ(s.code(), ErrorCode::Corrupt) << s.message();
    EXPECT_NE(std::string(s.message()).find("local_rotations: joint 0, global frames [0, 100)"),
              std::string::npos)
        << s.message();
  }
  // A lossless velocity track whose frame 7 is NaN: decoded, then refused.
  {
    mmdb::cook::CookedDatabase db = coded();
    auto& stream = *db.pose_coding.streams[mmdb::cook::kStreamVelocities];
    const uint32_t frames = db.frame_count, segments = (frames + 99) / 100;
    std::vector<uint8_t> data;
    std::vector<uint32_t> offsets{0};
    for (uint32_t j = 0; j < db.joint_count; ++j) {
      stream.tracks[j].coding = mmdb::cook::TrackCoding::Lossless;
      stream.tracks[j].bits = 0;
      for (uint32_t s = 0; s < segments; ++s) {
        const uint32_t n = std::min(100u, frames - s * 100);
        std::vector<float> values(n * 3, 0.5f);
        if (j == 2 && s == 0) values[7 * 3 + 1] = NAN;
        std::vector<uint8_t> coded_bytes(meshopt_encodeVertexBufferBound(n, 12));
        coded_bytes.resize(meshopt_encodeVertexBuffer(coded_bytes.data(), coded_bytes.size(),
                                                      values.data(), n, 12));
        data.insert(data.end(), coded_bytes.begin(), coded_bytes.end());
        offsets.push_back(uint32_t(data.size()));
      }
    }
    stream.data = data;
    stream.segment_offsets = offsets;
    const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(db);
    const Database d = std::move(Database::fromMemory(bytes.data(), bytes.size()).value());
    Decoded out(d, d.frameCount());
    const mmdb::Status s = d.decodePoses(0, d.frameCount(), out.buffers());
    EXPECT_EQ(s.code(), ErrorCode::Inconsistent) << s.message();
    EXPECT_STREQ(s.message(),
                 "local_velocities: joint 2, global frame 7 decodes to NaN or infinity: re-cook "
                 "the file");
    // Frames after the bad one decode.
    Decoded part(d, 50);
    EXPECT_TRUE(d.decodePoses(200, 50, part.buffers()).ok());
  }
}

// Every byte of the coded data flipped, one at a time: open and decode return, ok or refused.
TEST(PoseDecode, EveryCodedByteFlippedDecodesOrIsRefused) {
  const mmdb::test::AlignedBytes valid = mmdb::test::serializeAligned(coded(100, 4));
  const fb::Database* root = fb::GetDatabase(valid.data());
  int refused = 0, decoded = 0;
  for (const fb::CodedStream* stream :
       {root->pose_coding()->rotations(), root->pose_coding()->angular_velocities()}) {
    const size_t begin = size_t(stream->data()->Data() - valid.data());
    const size_t size = stream->data()->size();
    for (size_t i = 0; i < size; i += 3) {
      mmdb::test::AlignedBytes bytes(valid.data(), valid.size());
      bytes.data()[begin + i] ^= uint8_t(0x5a + i);
      auto opened = Database::fromMemory(bytes.data(), bytes.size());
      ASSERT_TRUE(opened.ok());  // the structure is intact
      const Database& d = opened.value();
      Decoded out(d, d.frameCount());
      const mmdb::Status s = d.decodePoses(0, d.frameCount(), out.buffers());
      if (s.ok()) {
        ++decoded;
        for (const auto& stream_values : out.streams)
          for (const Float4& v : stream_values)
            ASSERT_TRUE(std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) &&
                        std::isfinite(v.w));
      } else {
        ++refused;
        EXPECT_TRUE(s.code() == ErrorCode::Corrupt || s.code() == ErrorCode::Inconsistent)
            << s.message();
      }
    }
  }
  EXPECT_GT(decoded + refused, 100);
}

// A still database: every track constant, no coded bytes; even with the data vectors absent it
// opens and decodes to the constants.
TEST(PoseDecode, AStillDatabaseIsConstantsOnly) {
  mmdb::test::SyntheticSpec spec;
  spec.joints = 3;
  mmdb::cook::CookedDatabase db = mmdb::test::makeSyntheticDatabase(spec);
  for (size_t e = 0; e < db.local_rotations.size(); ++e) {
    db.local_rotations[e] = glm::angleAxis(0.1f * float(e % db.joint_count), glm::vec3(0, 1, 0));
    db.local_translations[e] = glm::vec3(0.f, 0.2f, 0.01f * float(e % db.joint_count));
    db.local_velocities[e] = db.local_angular_velocities[e] = glm::vec3(0);
  }
  mmdb::cook::compressPoses(db, {}, 1);
  for (const auto& stream : db.pose_coding.streams) {
    for (const mmdb::cook::CookedTrack& t : stream->tracks)
      EXPECT_EQ(t.coding, mmdb::cook::TrackCoding::Constant);
    EXPECT_TRUE(stream->data.empty());
  }
  mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(db);
  // CodedStream.data (field 2) absent in every stream (they may share one vtable).
  const fb::PoseCoding* coding = fb::GetDatabase(bytes.data())->pose_coding();
  for (const fb::CodedStream* s : {coding->rotations(), coding->translations(),
                                   coding->velocities(), coding->angular_velocities()}) {
    auto* table = reinterpret_cast<const flatbuffers::Table*>(s);
    auto* vtable = const_cast<uint8_t*>(table->GetVTable());
    flatbuffers::WriteScalar<flatbuffers::voffset_t>(vtable + 4 + 2 * 2, 0);
  }
  ASSERT_EQ(fb::GetDatabase(bytes.data())->pose_coding()->rotations()->data(), nullptr);
  auto opened = Database::fromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  const Database& d = opened.value();
  Decoded out(d, d.frameCount());
  ASSERT_TRUE(d.decodePoses(0, d.frameCount(), out.buffers()).ok());
  for (size_t e = 0; e < out.streams[1].size(); ++e) {
    EXPECT_EQ(out.streams[1][e].y, 0.2f);
    EXPECT_EQ(out.streams[2][e].x, 0.f);
  }
  // 1440 frames: two segments of 1024, so 3 * 2 + 1 offsets.
  EXPECT_EQ(d.poseStreamBytes(mmdb::PoseStream::Velocities), 3 * 32 + (3 * 2 + 1) * 4u);
}

TEST(PoseDecode, OldRawFilesStillOpen) {
  const std::string path = std::string(MMDB_TEST_DATA) + "/mmdb/mmdb-1.0.mmdb";
  auto opened = Database::open(path.c_str());
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  EXPECT_EQ(opened.value().schemaMajor(), 1);
  EXPECT_FALSE(opened.value().posesCoded());
  EXPECT_GT(opened.value().rawPoses().frame_count, 0u);
}

// bandai-1 cooked and coded with the default budget: every joint of every frame, decoded by the
// runtime, stays within 0.1 mm in model space (shell points included) of the raw pose.
TEST(PoseDecode, Bandai1RoundTripWithinTheBudget) {
  std::string why;
  const mmdb::cook::CookedDatabase* cooked = mmdb::test::bandaiCookedDatabase(&why);
  if (!cooked) GTEST_SKIP() << why;
  mmdb::cook::CookedDatabase db = *cooked;
  mmdb::cook::CompressionReport report;
  mmdb::cook::compressPoses(db, {}, 0, &report);
  const mmdb::test::AlignedBytes bytes = mmdb::test::serializeAligned(db);
  const Database d = std::move(Database::fromMemory(bytes.data(), bytes.size()).value());
  Decoded out(d, d.frameCount());
  ASSERT_TRUE(d.decodePoses(0, d.frameCount(), out.buffers()).ok());
  const size_t joints = d.jointCount();
  const float shell = mmdb::cook::CompressionSettings{}.shell_distance;
  std::vector<glm::dquat> rq(joints), dq(joints);
  std::vector<glm::dvec3> rp(joints), dp(joints);
  double worst = 0;
  for (size_t f = 0; f < d.frameCount(); ++f)
    for (size_t j = 0; j < joints; ++j) {
      const size_t e = f * joints + j;
      const Float4& q = out.streams[0][e];
      const Float4& t = out.streams[1][e];
      const glm::dquat a(db.local_rotations[e]), b(glm::quat(q.w, q.x, q.y, q.z));
      const glm::dvec3 ta(db.local_translations[e]), tb(t.x, t.y, t.z);
      const int p = db.skeleton.parents[j];
      rq[j] = p < 0 ? a : rq[size_t(p)] * a;
      dq[j] = p < 0 ? b : dq[size_t(p)] * b;
      rp[j] = p < 0 ? ta : rp[size_t(p)] + rq[size_t(p)] * ta;
      dp[j] = p < 0 ? tb : dp[size_t(p)] + dq[size_t(p)] * tb;
      double err = glm::length(rp[j] - dp[j]);
      for (int axis = 0; axis < 3; ++axis) {
        glm::dvec3 s(0);
        s[axis] = shell;
        err = std::max(err, glm::length((rp[j] + rq[j] * s) - (dp[j] + dq[j] * s)));
      }
      ASSERT_LE(err, 1e-4 + 1e-6) << "joint " << db.skeleton.names[j] << ", global frame " << f;
      worst = std::max(worst, err);
    }
  EXPECT_NEAR(worst, report.streams[0].max_error, 2e-6);
  for (size_t e = 0; e < db.local_velocities.size(); ++e) {
    const Float4& v = out.streams[2][e];
    const Float4& w = out.streams[3][e];
    ASSERT_LE(glm::length(glm::vec3(v.x, v.y, v.z) - db.local_velocities[e]), 0.001f * 1.0001f);
    ASSERT_LE(glm::length(glm::vec3(w.x, w.y, w.z) - db.local_angular_velocities[e]),
              0.01f * 1.0001f);
  }
}

}  // namespace
