// The pose-compression stage on a 2 m character with known motion: every joint stays within the
// budget in model space, still tracks are stored once, and the bytes do not depend on the job
// count.
#include "compress/exponent_filter.h"
#include "compress/frame_lanes.h"
#include "compress/pose_compression.h"
#include "core/errors.h"
#include "manifest/manifest.h"
#include "write/database_writer.h"

#include <gtest/gtest.h>
#include <meshoptimizer.h>

#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <cstring>
#include <random>

namespace {

constexpr float kPi = 3.14159265f;

struct JointSpec {
  int parent;
  glm::vec3 offset;  // bind translation, m
  float amplitude;   // rad of a sine swing, 0 = still
  float hertz;
  glm::vec3 axis;
};

// A 2 m tall character: hips at 1 m, head top at 1.95 m plus the 3 cm shell, one arm and leg,
// and a still joint (11) that keeps a tilted rest rotation.
const JointSpec kJoints[] = {
    {-1, {0.f, 1.0f, 0.f}, 0.3f, 0.9f, {0, 1, 0}},   // 0 root (hips), bobs and turns
    {0, {0.f, 0.25f, 0.f}, 0.2f, 1.1f, {1, 0, 0}},   // 1 spine
    {1, {0.f, 0.25f, 0.f}, 0.15f, 1.3f, {0, 0, 1}},  // 2 chest
    {2, {0.f, 0.3f, 0.f}, 0.1f, 0.7f, {0, 1, 0}},    // 3 neck
    {3, {0.f, 0.15f, 0.f}, 0.05f, 2.f, {1, 0, 0}},   // 4 head
    {2, {0.2f, 0.2f, 0.f}, 0.8f, 1.f, {0, 0, 1}},    // 5 upper arm
    {5, {0.3f, 0.f, 0.f}, 1.0f, 1.f, {0, 1, 0}},     // 6 forearm
    {6, {0.25f, 0.f, 0.f}, 0.4f, 3.f, {1, 0, 0}},    // 7 hand
    {0, {0.1f, -0.05f, 0.f}, 0.7f, 1.f, {1, 0, 0}},  // 8 thigh
    {8, {0.f, -0.45f, 0.f}, 0.9f, 1.f, {1, 0, 0}},   // 9 shin
    {9, {0.f, -0.45f, 0.f}, 0.3f, 1.f, {1, 0, 0}},   // 10 foot
    {4, {0.f, 0.1f, 0.05f}, 0.f, 0.f, {0, 0, 1}},    // 11 still
};
constexpr uint32_t kJointCount = sizeof(kJoints) / sizeof(kJoints[0]);
const glm::quat kStillRotation = glm::angleAxis(0.3f, glm::vec3(0, 0, 1));

mmdb::cook::CookedDatabase characterDatabase(uint32_t frames = 1500, float rate = 60.f) {
  mmdb::cook::CookedDatabase db;
  db.frame_rate = rate;
  db.frame_count = frames;
  db.joint_count = kJointCount;
  db.clips.push_back({"walk", 0, 0, frames, rate, 0, frames, false, -1, 0, ""});
  for (const JointSpec& j : kJoints) {
    db.skeleton.names.push_back("joint" + std::to_string(db.skeleton.names.size()));
    db.skeleton.parents.push_back(j.parent);
    db.skeleton.bind_translations.push_back(j.offset);
    db.skeleton.bind_rotations.push_back(glm::quat(1, 0, 0, 0));
  }
  for (uint32_t f = 0; f < frames; ++f) {
    const float t = float(f) / rate;
    for (uint32_t i = 0; i < kJointCount; ++i) {
      const JointSpec& j = kJoints[i];
      const float w = 2 * kPi * j.hertz;
      const float angle = j.amplitude * std::sin(w * t + float(i));
      const float rate_of_angle = j.amplitude * w * std::cos(w * t + float(i));
      glm::quat q = i == 11 ? kStillRotation : glm::angleAxis(angle, glm::normalize(j.axis));
      glm::vec3 p = j.offset, v(0);
      if (i == 0) {  // the hips bob 3 cm and sway 2 cm
        p += glm::vec3(0.02f * std::sin(w * t), 0.03f * std::sin(2 * w * t), 0.f);
        v = glm::vec3(0.02f * w * std::cos(w * t), 0.06f * w * std::cos(2 * w * t), 0.f);
      }
      db.local_rotations.push_back(q);
      db.local_translations.push_back(p);
      db.local_velocities.push_back(v);
      db.local_angular_velocities.push_back(glm::normalize(j.axis) *
                                            (i == 11 ? 0.f : rate_of_angle));
    }
  }
  return db;
}

glm::quat quatOf(const glm::vec4& v) { return glm::quat(v.w, v.x, v.y, v.z); }

// Per joint, the largest model-space distance between raw and decoded, at the joint and at its
// shell points, over every frame, and the first frame with it; computed in T (double for the
// true error, float for the cook's own check, which this repeats).
template <typename T>
struct ModelSpaceErrors {
  std::vector<T> worst;
  std::vector<uint32_t> frame;
};
template <typename T>
ModelSpaceErrors<T> modelSpaceErrors(const mmdb::cook::CookedDatabase& db,
                                     const std::vector<glm::vec4>& rot,
                                     const std::vector<glm::vec4>& pos, float shell) {
  const size_t joints = db.joint_count;
  ModelSpaceErrors<T> out{std::vector<T>(joints, 0), std::vector<uint32_t>(joints, 0)};
  std::vector<glm::qua<T>> rq(joints), dq(joints);
  std::vector<glm::vec<3, T>> rp(joints), dp(joints);
  for (size_t f = 0; f < db.frame_count; ++f) {
    for (size_t j = 0; j < joints; ++j) {
      const size_t e = f * joints + j;
      const glm::qua<T> a(db.local_rotations[e]), b(quatOf(rot[e]));
      const glm::vec<3, T> ta(db.local_translations[e]), tb(pos[e]);
      const int p = db.skeleton.parents[j];
      rq[j] = p < 0 ? a : rq[size_t(p)] * a;
      dq[j] = p < 0 ? b : dq[size_t(p)] * b;
      rp[j] = p < 0 ? ta : rp[size_t(p)] + rq[size_t(p)] * ta;
      dp[j] = p < 0 ? tb : dp[size_t(p)] + dq[size_t(p)] * tb;
      T err = glm::length(rp[j] - dp[j]);
      for (int axis = 0; axis < 3; ++axis) {
        glm::vec<3, T> s(0);
        s[axis] = T(shell);
        err = std::max(err, glm::length((rp[j] + rq[j] * s) - (dp[j] + dq[j] * s)));
      }
      if (err > out.worst[j]) {
        out.worst[j] = err;
        out.frame[j] = uint32_t(f);
      }
    }
  }
  return out;
}

std::vector<double> fkErrors(const mmdb::cook::CookedDatabase& db,
                             const std::vector<glm::vec4>& rot, const std::vector<glm::vec4>& pos,
                             float shell) {
  return modelSpaceErrors<double>(db, rot, pos, shell).worst;
}

std::vector<glm::vec4> decoded(const mmdb::cook::CookedDatabase& db, int stream) {
  return mmdb::cook::decodeCodedStream(*db.pose_coding.streams[size_t(stream)], db.frame_count,
                                       db.joint_count, db.pose_coding.segment_frames,
                                       stream == mmdb::cook::kStreamRotations);
}

TEST(Compress, EveryJointOfAKnownMotionStaysWithinTheBudget) {
  mmdb::cook::CookedDatabase db = characterDatabase();
  mmdb::cook::CompressionSettings settings;
  settings.segment_frames = 256;  // several segments
  mmdb::cook::CompressionReport report;
  mmdb::cook::compressPoses(db, settings, 2, &report);
  ASSERT_TRUE(report.enabled);
  const std::vector<double> errors =
      fkErrors(db, decoded(db, mmdb::cook::kStreamRotations),
               decoded(db, mmdb::cook::kStreamTranslations), float(settings.shell_distance));
  double worst = 0;
  for (uint32_t j = 0; j < kJointCount; ++j) {
    // The budget, less what float FK rounding can add (a few ulps of 2 m).
    EXPECT_LE(errors[j], settings.position_tolerance + 1e-6) << "joint " << j;
    worst = std::max(worst, errors[j]);
  }
  // Coded, not exact: the error is there, and the report measured the same one.
  EXPECT_GT(worst, settings.position_tolerance * 0.2);
  EXPECT_NEAR(report.streams[mmdb::cook::kStreamRotations].max_error, worst, 2e-6);
  EXPECT_GE(report.streams[mmdb::cook::kStreamRotations].worst_joint, 0);
  // Much smaller than raw.
  for (int s = 0; s < mmdb::cook::kPoseStreamCount; ++s)
    EXPECT_LT(report.streams[size_t(s)].coded_bytes * 3, report.streams[size_t(s)].raw_bytes)
        << report.streams[size_t(s)].name;
}

TEST(Compress, StillTracksAreStoredOnceWithTheirExactValue) {
  mmdb::cook::CookedDatabase db = characterDatabase();
  mmdb::cook::compressPoses(db, {}, 1);
  const mmdb::cook::CookedCodedStream& rot = *db.pose_coding.streams[mmdb::cook::kStreamRotations];
  const mmdb::cook::CookedCodedStream& pos =
      *db.pose_coding.streams[mmdb::cook::kStreamTranslations];
  const mmdb::cook::CookedCodedStream& vel = *db.pose_coding.streams[mmdb::cook::kStreamVelocities];
  const mmdb::cook::CookedCodedStream& ang =
      *db.pose_coding.streams[mmdb::cook::kStreamAngularVelocities];
  EXPECT_EQ(rot.tracks[11].coding, mmdb::cook::TrackCoding::Constant);
  EXPECT_FLOAT_EQ(rot.tracks[11].value.z, kStillRotation.z);
  EXPECT_FLOAT_EQ(rot.tracks[11].value.w, kStillRotation.w);
  EXPECT_EQ(ang.tracks[11].coding, mmdb::cook::TrackCoding::Constant);
  EXPECT_EQ(ang.tracks[11].value, glm::vec4(0));
  for (uint32_t j = 0; j < kJointCount; ++j) {
    if (j == 0) {
      EXPECT_NE(pos.tracks[j].coding, mmdb::cook::TrackCoding::Constant);
      EXPECT_NE(vel.tracks[j].coding, mmdb::cook::TrackCoding::Constant);
      continue;
    }
    // Bind offsets: one value, exactly; their velocities are 0.
    EXPECT_EQ(pos.tracks[j].coding, mmdb::cook::TrackCoding::Constant) << j;
    EXPECT_EQ(pos.tracks[j].value, glm::vec4(kJoints[j].offset, 0.f)) << j;
    EXPECT_EQ(vel.tracks[j].coding, mmdb::cook::TrackCoding::Constant) << j;
    EXPECT_EQ(vel.tracks[j].value, glm::vec4(0)) << j;
    // Moving rotations are coded: the quaternion filter, or the exponential one where 16 bits
    // per component are not enough for the joint's lever.
    if (j != 11) {
      EXPECT_TRUE(rot.tracks[j].coding == mmdb::cook::TrackCoding::Quaternion ||
                  rot.tracks[j].coding == mmdb::cook::TrackCoding::Exponent)
          << j;
    }
  }
  // A constant track has no data: its segments are empty.
  const size_t segments = (db.frame_count + 1023) / 1024;
  EXPECT_EQ(pos.segment_offsets[1 * segments], pos.segment_offsets[2 * segments]);
}

TEST(Compress, VelocitiesStayWithinTheirBudgets) {
  mmdb::cook::CookedDatabase db = characterDatabase();
  mmdb::cook::CompressionSettings settings;
  mmdb::cook::compressPoses(db, settings, 2);
  const std::vector<glm::vec4> vel = decoded(db, mmdb::cook::kStreamVelocities);
  const std::vector<glm::vec4> ang = decoded(db, mmdb::cook::kStreamAngularVelocities);
  for (size_t e = 0; e < vel.size(); ++e) {
    ASSERT_LE(glm::length(glm::vec3(vel[e]) - db.local_velocities[e]),
              settings.velocity_tolerance * 1.0001)
        << "element " << e;
    ASSERT_LE(glm::length(glm::vec3(ang[e]) - db.local_angular_velocities[e]),
              settings.angular_velocity_tolerance * 1.0001)
        << "element " << e;
    ASSERT_EQ(vel[e].w, 0.f);
  }
}

// The largest error of a vector track coded with the exponential filter at `bits`, as the cook
// codes it: a fourth component, the track's largest magnitude, fixes the exponent.
float exponentError(const std::vector<glm::vec3>& track, int bits) {
  float pad = 0;
  for (const glm::vec3& v : track)
    pad = std::max({pad, std::fabs(v.x), std::fabs(v.y), std::fabs(v.z)});
  if (pad == 0) pad = 1;
  std::vector<float> values;
  for (const glm::vec3& v : track) values.insert(values.end(), {v.x, v.y, v.z, pad});
  std::vector<uint8_t> bytes(values.size() * 4);
  mmdb::cook::encodeExponentFilter(bytes.data(), values.data(), track.size(), 4, bits);
  meshopt_decodeFilterExp(bytes.data(), track.size(), 16);
  float worst = 0;
  for (size_t i = 0; i < track.size(); ++i) {
    float d[4];
    std::memcpy(d, bytes.data() + i * 16, 16);
    worst = std::max(worst, glm::length(glm::vec3(d[0], d[1], d[2]) - track[i]));
  }
  return worst;
}

// Each coded velocity track takes the fewest bits within its budget: one bit less would not
// hold it. Budgets far apart, so that the search starts both above and below the answer.
TEST(Compress, EachVelocityTrackTakesTheFewestBitsWithinItsBudget) {
  for (const float tolerance : {1e-2f, 1e-4f, 3e-6f}) {
    mmdb::cook::CookedDatabase db = characterDatabase(600);
    const std::vector<glm::vec3> raw = db.local_angular_velocities;
    mmdb::cook::CompressionSettings settings;
    settings.angular_velocity_tolerance = tolerance;
    mmdb::cook::compressPoses(db, settings, 2);
    const auto& stream = *db.pose_coding.streams[mmdb::cook::kStreamAngularVelocities];
    int coded = 0;
    for (uint32_t j = 0; j < kJointCount; ++j) {
      const mmdb::cook::CookedTrack& track = stream.tracks[j];
      if (track.coding != mmdb::cook::TrackCoding::Exponent) continue;
      ++coded;
      std::vector<glm::vec3> values;
      for (uint32_t f = 0; f < db.frame_count; ++f) values.push_back(raw[f * kJointCount + j]);
      EXPECT_LE(exponentError(values, track.bits), tolerance) << "joint " << j;
      if (track.bits > 1) {
        EXPECT_GT(exponentError(values, track.bits - 1), tolerance)
            << "joint " << j << " fits in " << track.bits - 1 << " bits, not only "
            << int(track.bits);
      }
    }
    EXPECT_GE(coded, 10) << "tolerance " << tolerance;
  }
}

TEST(Compress, ATighterBudgetCostsBytesAndStillHolds) {
  mmdb::cook::CookedDatabase loose = characterDatabase(), tight = characterDatabase();
  mmdb::cook::CompressionSettings settings;
  mmdb::cook::CompressionReport loose_report, tight_report;
  mmdb::cook::compressPoses(loose, settings, 2, &loose_report);
  settings.position_tolerance = 1e-5;
  mmdb::cook::compressPoses(tight, settings, 2, &tight_report);
  EXPECT_GT(tight_report.streams[mmdb::cook::kStreamRotations].coded_bytes,
            loose_report.streams[mmdb::cook::kStreamRotations].coded_bytes);
  EXPECT_LE(tight_report.streams[mmdb::cook::kStreamRotations].max_error, 1e-5);
  const std::vector<double> errors =
      fkErrors(tight, decoded(tight, mmdb::cook::kStreamRotations),
               decoded(tight, mmdb::cook::kStreamTranslations), float(settings.shell_distance));
  for (uint32_t j = 0; j < kJointCount; ++j) EXPECT_LE(errors[j], 1e-5 + 1e-6) << "joint " << j;
}

// Also with budgets whose model-space check codes tracks again, round after round: those rounds
// share each trial coding of a track between the threads.
TEST(Compress, SameBytesForAnyJobCount) {
  for (const double tolerance : {1e-4, 1e-5, 2e-6}) {
    std::vector<uint8_t> first;
    for (int jobs : {1, 2, 3, 8}) {
      mmdb::cook::CookedDatabase db = characterDatabase(2100);
      mmdb::cook::CompressionSettings settings;
      settings.segment_frames = 300;
      settings.position_tolerance = tolerance;
      mmdb::cook::compressPoses(db, settings, jobs);
      db.feature_count = 0;  // the writer does not need a valid feature layout
      const std::vector<uint8_t> bytes = mmdb::cook::serializeDatabase(db);
      if (first.empty())
        first = bytes;
      else
        EXPECT_EQ(bytes, first) << tolerance << " m, " << jobs << " jobs";
    }
  }
}

// A cook releases each raw stream once it is coded, to lower its peak memory: the file must not
// change, and the released streams must really be gone.
TEST(Compress, ReleasingTheRawStreamsGivesTheSameFile) {
  mmdb::cook::CompressionSettings settings;
  settings.segment_frames = 300;
  std::vector<uint8_t> files[2];
  for (const mmdb::cook::RawPoses raw :
       {mmdb::cook::RawPoses::Keep, mmdb::cook::RawPoses::Release}) {
    mmdb::cook::CookedDatabase db = characterDatabase(700);
    mmdb::cook::compressPoses(db, settings, 2, nullptr, raw);
    const bool released = raw == mmdb::cook::RawPoses::Release;
    EXPECT_EQ(db.local_rotations.empty(), released);
    EXPECT_EQ(db.local_translations.empty(), released);
    EXPECT_EQ(db.local_velocities.empty(), released);
    EXPECT_EQ(db.local_angular_velocities.empty(), released);
    db.feature_count = 0;  // the writer does not need a valid feature layout
    files[released ? 1 : 0] = mmdb::cook::serializeDatabase(db);
  }
  ASSERT_FALSE(files[0].empty());
  EXPECT_EQ(files[0], files[1]);
}

// The stream's reported worst error is the model-space check in float, frame by frame, as
// glm computes it, of the poses the runtime decodes: the same bits, joint and first frame.
// 1,499 frames is no multiple of the four frames the check takes at once, and the joint's
// worst frame is looked for in the last group too. A motion that repeats every 7 frames has its
// worst error at many frames, the first of which is reported.
TEST(Compress, TheReportedWorstErrorIsTheFloatCheckOfTheDecodedPoses) {
  for (const uint32_t frames : {1499u, 1501u, 3u, 1500u}) {
    mmdb::cook::CookedDatabase db = characterDatabase(frames);
    const bool cyclic = frames == 1500;
    if (cyclic) {
      const size_t n = db.joint_count;
      for (size_t f = 7; f < frames; ++f)
        for (size_t j = 0; j < n; ++j) {
          db.local_rotations[f * n + j] = db.local_rotations[(f % 7) * n + j];
          db.local_translations[f * n + j] = db.local_translations[(f % 7) * n + j];
        }
    }
    const mmdb::cook::CookedDatabase raw = db;
    mmdb::cook::CompressionSettings settings;
    settings.segment_frames = 256;
    mmdb::cook::compressPoses(db, settings, 2);
    const std::vector<glm::vec4> rot = decoded(db, mmdb::cook::kStreamRotations);
    const std::vector<glm::vec4> pos = decoded(db, mmdb::cook::kStreamTranslations);
    const size_t joints = db.joint_count;
    const ModelSpaceErrors<float> check =
        modelSpaceErrors<float>(raw, rot, pos, float(settings.shell_distance));
    const std::vector<float>& joint_max = check.worst;
    const std::vector<uint32_t>& joint_frame = check.frame;
    size_t worst = 0;
    for (size_t j = 1; j < joints; ++j)
      if (joint_max[j] > joint_max[worst]) worst = j;
    const mmdb::cook::CookedCodedStream& stream =
        *db.pose_coding.streams[mmdb::cook::kStreamRotations];
    EXPECT_EQ(stream.max_error, joint_max[worst]) << frames << " frames";
    EXPECT_EQ(stream.worst_joint, int(worst)) << frames << " frames";
    EXPECT_EQ(stream.worst_frame, joint_frame[worst]) << frames << " frames";
    if (frames > 1000) {
      EXPECT_GT(stream.max_error, 0.f);
    }
    if (cyclic) {
      EXPECT_LT(stream.worst_frame, 7u);
    }
  }
}

TEST(Compress, NoneLeavesTheRawStreams) {
  mmdb::cook::CookedDatabase db = characterDatabase(200);
  mmdb::cook::CompressionSettings settings;
  settings.pose = mmdb::cook::CompressionSettings::Pose::None;
  mmdb::cook::CompressionReport report;
  mmdb::cook::compressPoses(db, settings, 1, &report);
  EXPECT_FALSE(report.enabled);
  EXPECT_FALSE(db.pose_coding.anyCoded());
  EXPECT_EQ(report.streams[0].raw_bytes, 200u * kJointCount * 16);
}

TEST(Compress, SettingsOutOfRangeNameTheirKey) {
  mmdb::cook::CookedDatabase db = characterDatabase(100);
  auto messageOf = [&](mmdb::cook::CompressionSettings s) -> std::string {
    try {
      mmdb::cook::compressPoses(db, s, 1);
    } catch (const mmdb::cook::InputError& e) {
      return e.what();
    }
    return "";
  };
  mmdb::cook::CompressionSettings s;
  s.position_tolerance = 0;
  EXPECT_EQ(messageOf(s), "compression.position_tolerance must be a positive number of metres");
  s = {};
  s.segment_frames = 4096;
  EXPECT_EQ(messageOf(s), "compression.segment_frames must be 1 to 1024");
  s = {};
  s.angular_velocity_tolerance = std::nan("");
  EXPECT_EQ(messageOf(s),
            "compression.angular_velocity_tolerance must be a positive number of rad/s");
}

TEST(Compress, ManifestKeys) {
  const std::string clip =
      "[[clip]]\nsource = \"" + std::string(MMDB_TEST_DATA) + "/bvh/two_joints.bvh\"\n";
  mmdb::cook::CookRequest r = mmdb::cook::parseManifest(
      "[compression]\npose = \"none\"\nposition_tolerance = 0.0002\nshell_distance = 0.05\n"
      "velocity_tolerance = 0.002\nangular_velocity_tolerance = 0.02\nsegment_frames = 512\n" +
          clip,
      "/tmp/m.toml");
  const mmdb::cook::CompressionSettings& c = r.settings.compression;
  EXPECT_EQ(c.pose, mmdb::cook::CompressionSettings::Pose::None);
  EXPECT_DOUBLE_EQ(c.position_tolerance, 0.0002);
  EXPECT_DOUBLE_EQ(c.shell_distance, 0.05);
  EXPECT_DOUBLE_EQ(c.velocity_tolerance, 0.002);
  EXPECT_DOUBLE_EQ(c.angular_velocity_tolerance, 0.02);
  EXPECT_EQ(c.segment_frames, 512);
  EXPECT_EQ(mmdb::cook::parseManifest(clip, "/tmp/m.toml").settings.compression.pose,
            mmdb::cook::CompressionSettings::Pose::Meshopt);  // the default
  try {
    mmdb::cook::parseManifest("[compression]\npose = \"zip\"\n" + clip, "/tmp/m.toml");
    FAIL() << "no error";
  } catch (const mmdb::cook::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'compression.pose' must be \"meshopt\" or \"none\""),
              std::string::npos)
        << e.what();
  }
}

}  // namespace

// The cook's exponential filter writes the same bytes as meshoptimizer's, for values of every
// magnitude (subnormal to large), both signs, zeros (which take part in the shared exponent),
// exact powers of two and their neighbours, with and without a fourth component.
TEST(ExponentFilter, SameBytesAsMeshoptimizer) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  std::uniform_int_distribution<int> exponent(-140, 60);
  std::uniform_int_distribution<int> kind(0, 7);
  auto value = [&]() -> float {
    switch (kind(rng)) {
      case 0:
        return 0.f;
      case 1:
        return -0.f;
      case 2:
        return std::ldexp(1.f, exponent(rng)) * (unit(rng) < 0 ? -1.f : 1.f);
      case 3:
        return std::nextafter(std::ldexp(1.f, exponent(rng) / 4), 0.f);
      case 4:
        return unit(rng) * std::ldexp(1.f, exponent(rng));
      default:
        return unit(rng) * 3.f;
    }
  };
  size_t compared = 0;
  for (int components : {3, 4}) {
    for (int bits = 1; bits <= 23; ++bits) {
      constexpr size_t kVectors = 2000;
      std::vector<float> values(kVectors * size_t(components));
      for (float& v : values) v = value();
      std::vector<uint8_t> ours(values.size() * 4), theirs(values.size() * 4);
      mmdb::cook::encodeExponentFilter(ours.data(), values.data(), kVectors, components, bits);
      meshopt_encodeFilterExp(theirs.data(), kVectors, size_t(components) * 4, bits, values.data());
      for (size_t k = 0; k < values.size(); ++k) {
        uint32_t a, b;
        std::memcpy(&a, ours.data() + k * 4, 4);
        std::memcpy(&b, theirs.data() + k * 4, 4);
        ASSERT_EQ(a, b) << "value " << values[k] << " (vector " << k / size_t(components) << ", "
                        << components << " components, " << bits << " bits)";
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, size_t(2000 * 23 * (3 + 4)));
}

// The model-space check's four-frame arithmetic gives, in every lane, the bits of glm's scalar
// quaternion product, rotation and length; rotateAxis those of q * v with v along an axis
// (== also takes -0 for +0).
TEST(FrameLanes, SameBitsAsGlm) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  auto quat = [&] { return glm::normalize(glm::quat(unit(rng), unit(rng), unit(rng), unit(rng))); };
  auto vec = [&] { return glm::vec3(unit(rng), unit(rng), unit(rng)) * 2.f; };
  using mmdb::cook::kFrameLanes;
  using mmdb::cook::Lanes;
  for (int round = 0; round < 2000; ++round) {
    glm::quat p[kFrameLanes], q[kFrameLanes];
    glm::vec3 v[kFrameLanes];
    float px[4][kFrameLanes], qx[4][kFrameLanes], vx[3][kFrameLanes];
    for (int l = 0; l < kFrameLanes; ++l) {
      p[l] = quat(), q[l] = quat(), v[l] = vec();
      for (int c = 0; c < 4; ++c) px[c][l] = p[l][c], qx[c][l] = q[l][c];
      for (int c = 0; c < 3; ++c) vx[c][l] = v[l][c];
    }
    auto lanesOf = [](float(*x)[kFrameLanes]) {
      return mmdb::cook::LaneQuat{Lanes::load(x[0]), Lanes::load(x[1]), Lanes::load(x[2]),
                                  Lanes::load(x[3])};
    };
    const mmdb::cook::LaneQuat lp = lanesOf(px), lq = lanesOf(qx);
    const mmdb::cook::LaneVec3 lv{Lanes::load(vx[0]), Lanes::load(vx[1]), Lanes::load(vx[2])};
    const float shell = std::fabs(unit(rng)) * 0.05f;
    const mmdb::cook::LaneQuat product = lp * lq;
    const mmdb::cook::LaneVec3 rotated = lp * lv;
    const mmdb::cook::LaneVec3 axes[3] = {mmdb::cook::rotateAxis<0>(lp, Lanes::splat(shell)),
                                          mmdb::cook::rotateAxis<1>(lp, Lanes::splat(shell)),
                                          mmdb::cook::rotateAxis<2>(lp, Lanes::splat(shell))};
    float out[4][kFrameLanes], rot[3][kFrameLanes], axis[3][3][kFrameLanes], len[kFrameLanes];
    product.x.store(out[0]), product.y.store(out[1]), product.z.store(out[2]),
        product.w.store(out[3]);
    rotated.x.store(rot[0]), rotated.y.store(rot[1]), rotated.z.store(rot[2]);
    for (int a = 0; a < 3; ++a)
      axes[a].x.store(axis[a][0]), axes[a].y.store(axis[a][1]), axes[a].z.store(axis[a][2]);
    mmdb::cook::length(lv).store(len);
    for (int l = 0; l < kFrameLanes; ++l) {
      const glm::quat pq = p[l] * q[l];
      const glm::vec3 pv = p[l] * v[l];
      for (int c = 0; c < 4; ++c) ASSERT_EQ(out[c][l], pq[c]) << "product, lane " << l;
      for (int c = 0; c < 3; ++c) ASSERT_EQ(rot[c][l], pv[c]) << "rotation, lane " << l;
      ASSERT_EQ(len[l], glm::length(v[l])) << "length, lane " << l;
      for (int a = 0; a < 3; ++a) {
        glm::vec3 s(0);
        s[a] = shell;
        const glm::vec3 expected = p[l] * s;
        for (int c = 0; c < 3; ++c) {
          ASSERT_EQ(axis[a][c][l], expected[c]) << "axis " << a << ", lane " << l;
        }
      }
    }
  }
}
