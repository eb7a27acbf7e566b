#include "synthetic_database.h"

#include "cook/bounds.h"
#include "cook/normalize.h"
#include "write/database_writer.h"

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

namespace mmdb::test {
namespace {

constexpr uint16_t kFeatures = 27;
constexpr uint16_t kStride = 28;
constexpr uint32_t kTrailing = 20;

void addBlocks(mmdb::cook::CookedDatabase& db) {
  struct B {
    const char* name;
    mmdb::cook::FeatureKind kind;
    int joint;
    uint16_t first, width;
    float weight;
  };
  const B blocks[] = {
      {"left_foot_position", mmdb::cook::FeatureKind::Position, 2, 0, 3, 0.75f},
      {"right_foot_position", mmdb::cook::FeatureKind::Position, 3, 3, 3, 0.75f},
      {"left_foot_velocity", mmdb::cook::FeatureKind::Velocity, 2, 6, 3, 1.f},
      {"right_foot_velocity", mmdb::cook::FeatureKind::Velocity, 3, 9, 3, 1.f},
      {"hip_velocity", mmdb::cook::FeatureKind::Velocity, 0, 12, 3, 1.f},
      {"trajectory_position", mmdb::cook::FeatureKind::TrajectoryPosition, -1, 15, 6, 1.f},
      {"trajectory_direction", mmdb::cook::FeatureKind::TrajectoryDirection, -1, 21, 6, 1.5f},
  };
  for (const B& b : blocks) {
    mmdb::cook::CookedFeatureBlock fb;
    fb.name = b.name;
    fb.kind = b.kind;
    fb.joint = std::min<int>(b.joint, int(db.joint_count) - 1);
    if (b.kind == mmdb::cook::FeatureKind::TrajectoryPosition ||
        b.kind == mmdb::cook::FeatureKind::TrajectoryDirection)
      fb.joint = -1;
    fb.first_column = b.first;
    fb.width = b.width;
    fb.std = 0.5f + 0.1f * b.first;
    fb.weight = b.weight;
    db.feature_blocks.push_back(fb);
    db.settings.block_weights.push_back(b.weight);
  }
}

// The legged skeleton's bind pose: hips 0.86 m up, legs of two 0.4 m bones, the toe 0.12 m ahead
// of the ankle and 0.06 m below it.
const char* const kLegNames[9] = {"Hips",    "UpLeg_L", "Knee_L", "Foot_L", "Toe_L",
                                  "UpLeg_R", "Knee_R",  "Foot_R", "Toe_R"};
glm::vec3 legBind(uint32_t j) {
  const float side = j >= 5 ? -1.f : 1.f;
  switch (j == 0 ? 0 : (j - 1) % 4) {
    case 0:
      return j == 0 ? glm::vec3(0.f, 0.86f, 0.f) : glm::vec3(0.1f * side, -0.04f, 0.f);
    case 1:
    case 2:
      return glm::vec3(0.f, -0.4f, 0.f);
    default:
      return glm::vec3(0.f, -0.06f, 0.12f);
  }
}

void addLeggedSkeleton(mmdb::cook::CookedDatabase& db, uint32_t joints) {
  mmdb::cook::CookedSkeleton& sk = db.skeleton;
  for (uint32_t j = 0; j < joints; ++j) {
    sk.names.push_back(j < 9 ? kLegNames[j] : "Spine" + std::to_string(j - 8));
    sk.parents.push_back(j == 0 ? -1 : (j == 1 || j == 5 || j == 9) ? 0 : int(j) - 1);
    sk.bind_translations.push_back(j < 9 ? legBind(j) : glm::vec3(0.f, 0.15f, 0.f));
    sk.bind_rotations.push_back(glm::quat(1, 0, 0, 0));
  }
  sk.roles = {{mmdb::cook::Role::Hips, 0},      {mmdb::cook::Role::RootPosition, 0},
              {mmdb::cook::Role::Facing, 0},    {mmdb::cook::Role::LeftFoot, 3},
              {mmdb::cook::Role::RightFoot, 7}, {mmdb::cook::Role::LeftToe, 4},
              {mmdb::cook::Role::RightToe, 8}};
  sk.contact_joints = {4, 8};
  sk.preset = "synthetic";
}

// The walk of the legged skeleton: a stride a second, each foot half of it on the ground moving
// back 0.56 m (1.12 m/s, a little slower than the root's 1.2 m/s: planted toes slide), half of it
// swinging forward 8 cm up; the knees and hips follow by the law of cosines, the feet level.
constexpr float kStanceDepth = 0.7f;    // the ankle below the upper leg joint, on the ground
constexpr float kStrideLength = 0.28f;  // the ankle from -this to this along z

float stancePhase(float t, float phase, int side) {
  const float p = t + phase / (2.f * 3.14159265f) + 0.5f * float(side);
  return p - std::floor(p);
}

// Hip and knee angles about +x for a clip time.
glm::vec2 legAngles(float t, float phase, int side) {
  const float p = stancePhase(t, phase, side);
  float z, y;
  if (p < 0.5f) {
    z = kStrideLength * (1.f - 4.f * p);
    y = -kStanceDepth;
  } else {
    const float q = 2.f * (p - 0.5f);
    z = kStrideLength * (2.f * q - 1.f);
    y = -kStanceDepth + 0.08f * std::sin(3.14159265f * q);
  }
  const float d = std::sqrt(y * y + z * z);
  const float cos_inner = std::fmax(-1.f, std::fmin(1.f, (0.32f - d * d) / 0.32f));
  const float knee = 3.14159265f - std::acos(cos_inner);
  const float hip = std::atan2(-z, -y) - 0.5f * knee;
  return {hip, knee};
}

void leggedPose(uint32_t joints, float t, float phase, glm::quat* r, glm::vec3* p, glm::vec3* v,
                glm::vec3* w) {
  const glm::vec3 x(1.f, 0.f, 0.f);
  for (uint32_t j = 0; j < joints; ++j) {
    r[j] = glm::quat(1, 0, 0, 0);
    p[j] = j < 9 ? legBind(j) : glm::vec3(0.f, 0.15f, 0.f);
    v[j] = glm::vec3(0.f);
    w[j] = glm::vec3(0.f);
  }
  const float omega = 3.14159265f;
  r[0] = glm::angleAxis(0.1f * std::sin(omega * t + phase), glm::vec3(0.f, 1.f, 0.f));
  w[0] = glm::vec3(0.f, 0.1f * omega * std::cos(omega * t + phase), 0.f);
  p[0].y += 0.01f * std::sin(4.f * omega * t + phase);
  v[0].y = 0.04f * omega * std::cos(4.f * omega * t + phase);
  constexpr float kEpsilon = 1e-3f;
  for (int side = 0; side < 2; ++side) {
    const glm::vec2 a = legAngles(t, phase, side);
    const glm::vec2 rate =
        (legAngles(t + kEpsilon, phase, side) - legAngles(t - kEpsilon, phase, side)) /
        (2.f * kEpsilon);
    const uint32_t u = 1 + 4 * uint32_t(side);
    r[u] = glm::angleAxis(a.x, x);
    r[u + 1] = glm::angleAxis(a.y, x);
    r[u + 2] = glm::angleAxis(-(a.x + a.y), x);
    w[u] = rate.x * x;
    w[u + 1] = rate.y * x;
    w[u + 2] = -(rate.x + rate.y) * x;
  }
}

bool leggedContact(float t, float phase, int side) { return stancePhase(t, phase, side) < 0.5f; }

void addSkeleton(mmdb::cook::CookedDatabase& db, uint32_t joints) {
  mmdb::cook::CookedSkeleton& sk = db.skeleton;
  for (uint32_t j = 0; j < joints; ++j) {
    sk.names.push_back(j == 0 ? "Hips" : "Joint" + std::to_string(j));
    // 0 is the root; odd joints chain off their predecessor, even ones branch from the root.
    sk.parents.push_back(j == 0 ? -1 : (j % 2 == 1 ? int(j) - 1 : 0));
    sk.bind_translations.push_back(glm::vec3(0.f, j == 0 ? 0.9f : -0.2f, 0.05f * float(j)));
    sk.bind_rotations.push_back(glm::quat(1, 0, 0, 0));
  }
  sk.roles = {{mmdb::cook::Role::Hips, 0},
              {mmdb::cook::Role::RootPosition, 0},
              {mmdb::cook::Role::Facing, 0}};
  if (joints > 1)
    sk.roles.push_back({mmdb::cook::Role::LeftFoot, int(std::min<uint32_t>(2, joints - 1))});
  sk.contact_joints = {int(joints - 1)};
  sk.preset = "synthetic";
}

}  // namespace

void computeBounds(mmdb::cook::CookedDatabase& db) { mmdb::cook::buildDatabaseBounds(db); }

void setSyntheticBiases(mmdb::cook::CookedDatabase& db) {
  for (size_t c = 0; c < db.clips.size(); ++c) db.clips[c].bias = 0.25f * float(c % 3) - 0.25f;
  for (mmdb::cook::CookedRange& r : db.ranges) {
    float bias = 0;
    for (const mmdb::cook::CookedClip& c : db.clips)
      if (r.first_frame >= c.first_frame && r.first_frame < c.first_frame + c.frame_count)
        bias = c.bias;
    r.bias = bias - ((r.tag_mask & 4u) ? 0.5f : 0.f);
  }
}

mmdb::cook::CookedDatabase reweighted(const mmdb::cook::CookedDatabase& db,
                                      const std::vector<float>& block_weights) {
  mmdb::cook::CookedDatabase out = db;
  const size_t n = db.feature_count, stride = db.feature_stride, frames = db.frame_count;
  std::vector<float> raw(frames * n);
  for (size_t f = 0; f < frames; ++f)
    for (size_t c = 0; c < n; ++c)
      raw[f * n + c] = db.features[f * stride + c] * db.feature_scale[c] + db.feature_offset[c];
  for (size_t b = 0; b < out.feature_blocks.size(); ++b) {
    out.feature_blocks[b].weight = block_weights.at(b);
    out.settings.block_weights.at(b) = block_weights[b];
  }
  mmdb::cook::NormalizedFeatures normalized =
      mmdb::cook::normalizeFeatures(raw, int(n), int(stride), out.feature_blocks);
  out.features = std::move(normalized.features);
  out.feature_offset = std::move(normalized.offset);
  out.feature_scale = std::move(normalized.scale);
  computeBounds(out);
  return out;
}

mmdb::cook::CookedDatabase completedWithSynthetic(const mmdb::cook::CookedDatabase& base,
                                                  uint32_t frames, uint32_t seed) {
  using mmdb::cook::FeatureKind;
  mmdb::cook::CookedDatabase db = base;
  if (db.frame_count >= frames) return db;
  if (db.pose_coding.anyCoded() || !db.raw_pose_parts.first.empty())
    throw std::invalid_argument("completedWithSynthetic: the base's pose streams must be raw");
  const uint32_t joints = db.joint_count, stride = db.feature_stride, n = db.feature_count;
  const float rate = db.frame_rate;
  const uint32_t trailing = db.settings.trailing_unmatchable_frames;
  std::vector<uint32_t> sources;  // clips of at least 2 s
  for (uint32_t c = 0; c < base.clips.size(); ++c)
    if (float(base.clips[c].frame_count) >= 2 * rate) sources.push_back(c);
  if (sources.empty()) throw std::invalid_argument("completedWithSynthetic: no clip of 2 s");
  // The trajectory's samples as (x, z) column pairs, each turned by its share of the angle.
  struct Pair {
    uint16_t x, z;
    float share;
  };
  std::vector<Pair> pairs;
  for (const mmdb::cook::CookedFeatureBlock& b : db.feature_blocks) {
    if (b.kind != FeatureKind::TrajectoryPosition && b.kind != FeatureKind::TrajectoryDirection)
      continue;
    const uint16_t samples = b.width / 2;
    for (uint16_t k = 0; k < samples; ++k)
      pairs.push_back({uint16_t(b.first_column + 2 * k), uint16_t(b.first_column + 2 * k + 1),
                       float(k + 1) / float(samples)});
  }

  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0., 1.);
  constexpr double kTau = 6.283185307179586;
  struct Player {
    uint32_t clip = 0;
    double phase = 0;  // frames into the clip
    double rate = 1, swing = 0, period = 1, offset = 0;
  };
  auto newPlayer = [&] {
    Player p;
    p.clip = sources[rng() % sources.size()];
    p.phase = unit(rng) * 0.9 * double(base.clips[p.clip].frame_count - 1);
    p.rate = 0.85 + 0.3 * unit(rng);
    p.swing = 0.1 * unit(rng);
    p.period = (1.5 + 4.0 * unit(rng)) * rate;
    p.offset = kTau * unit(rng);
    return p;
  };
  auto advance = [&](Player& p, uint32_t t) {
    p.phase += p.rate + p.swing * std::sin(kTau * t / p.period + p.offset);
    const double last = double(base.clips[p.clip].frame_count - 1);
    if (p.phase >= last) p.phase = unit(rng) * 0.5 * last;  // a cut, as between takes
  };
  auto sample = [&](const Player& p, float* out) {
    const mmdb::cook::CookedClip& clip = base.clips[p.clip];
    const uint32_t i = uint32_t(p.phase);
    const float t = float(p.phase - i);
    const float* a = base.features.data() + size_t(clip.first_frame + i) * stride;
    const float* b = a + stride;
    for (uint32_t c = 0; c < n; ++c) out[c] = a[c] * (1 - t) + b[c] * t;
  };
  auto wave = [&] {  // amplitude, period (frames), offset
    return std::array<double, 3>{unit(rng), (1.5 + 4.5 * unit(rng)) * rate, kTau * unit(rng)};
  };

  std::vector<float> ra(n), rb(n);
  uint32_t index = 0;
  while (db.frame_count < frames) {
    const uint32_t want = uint32_t((4. + 8. * unit(rng)) * rate);
    const uint32_t length = std::min(want, frames - db.frame_count);
    Player a = newPlayer(), b = newPlayer();
    const auto blend = wave(), turn1 = wave(), turn2 = wave();
    const mmdb::cook::CookedClip& lead = base.clips[a.clip];
    mmdb::cook::CookedClip clip;
    clip.name = "synthetic_" + std::to_string(index++);
    clip.source_index = lead.source_index;
    clip.first_frame = db.frame_count;
    clip.frame_count = length;
    clip.source_frame_rate = lead.source_frame_rate;
    clip.source_frame_count = length;
    clip.tag_mask = lead.tag_mask;
    clip.take = lead.take;
    mmdb::cook::CookedRange range;
    range.first_frame = clip.first_frame;
    range.frame_count = length > trailing ? length - trailing : 1;
    range.tag_mask = lead.tag_mask;
    for (uint32_t t = 0; t < length; ++t) {
      sample(a, ra.data());
      sample(b, rb.data());
      const float w = float(0.5 + 0.5 * std::sin(kTau * t / blend[1] + blend[2]));
      std::vector<float> row(stride, 0.f);
      for (uint32_t c = 0; c < n; ++c) row[c] = ra[c] * (1 - w) + rb[c] * w;
      const double angle = 0.5 * turn1[0] * std::sin(kTau * t / turn1[1] + turn1[2]) +
                           0.3 * turn2[0] * std::sin(kTau * t / turn2[1] + turn2[2]);
      for (const Pair& p : pairs) {
        const float s = float(std::sin(angle * p.share)), co = float(std::cos(angle * p.share));
        const float x = row[p.x] * db.feature_scale[p.x] + db.feature_offset[p.x];
        const float z = row[p.z] * db.feature_scale[p.z] + db.feature_offset[p.z];
        row[p.x] = (x * co - z * s - db.feature_offset[p.x]) / db.feature_scale[p.x];
        row[p.z] = (x * s + z * co - db.feature_offset[p.z]) / db.feature_scale[p.z];
      }
      db.features.insert(db.features.end(), row.begin(), row.end());
      const size_t from = lead.first_frame + uint32_t(a.phase + 0.5);
      db.root_motion.push_back(base.root_motion[from]);
      if (!base.contacts.empty()) db.contacts.push_back(base.contacts[from]);
      auto copyPose = [&](auto& to, const auto& of) {
        if (!of.empty())
          to.insert(to.end(), of.begin() + from * joints, of.begin() + (from + 1) * joints);
      };
      copyPose(db.local_rotations, base.local_rotations);
      copyPose(db.local_translations, base.local_translations);
      copyPose(db.local_velocities, base.local_velocities);
      copyPose(db.local_angular_velocities, base.local_angular_velocities);
      ++db.frame_count;
      advance(a, t);
      advance(b, t);
    }
    db.clips.push_back(clip);
    db.ranges.push_back(range);
  }
  computeBounds(db);
  return db;
}

mmdb::cook::CookedDatabase makeSyntheticDatabase(const SyntheticSpec& spec) {
  mmdb::cook::CookedDatabase db;
  std::mt19937 rng(spec.seed);
  std::uniform_real_distribution<float> unit(-1.f, 1.f);
  db.frame_rate = spec.frame_rate;
  db.settings.frame_rate = spec.frame_rate;
  db.joint_count = spec.joints;
  db.frame_count = spec.clips * spec.frames_per_clip;
  db.feature_count = kFeatures;
  db.feature_stride = kStride;
  db.tag_names = {"locomotion", "idle", "jump"};
  db.sources.push_back({"synthetic.bvh", 0x1234, 1000, mmdb::cook::SourceFormat::Bvh});
  if (spec.legs) {
    if (spec.joints < 9)
      throw std::invalid_argument("a synthetic skeleton with legs needs 9 joints");
    addLeggedSkeleton(db, spec.joints);
  } else {
    addSkeleton(db, spec.joints);
  }
  addBlocks(db);

  // Per column: a smooth curve with column-specific frequencies; per clip: its own phases.
  float freq[kFeatures], amp[kFeatures];
  for (int c = 0; c < kFeatures; ++c) {
    freq[c] = 0.5f + 2.5f * (0.5f + 0.5f * unit(rng));
    amp[c] = 0.6f + 0.8f * (0.5f + 0.5f * unit(rng));
  }
  for (int c = 0; c < kFeatures; ++c) {
    db.feature_offset.push_back(0.1f * float(c) - 1.f);
    db.feature_scale.push_back(0.2f + 0.05f * float(c));
  }

  const size_t frames = db.frame_count, joints = spec.joints;
  db.features.assign(frames * kStride, 0.f);
  db.local_rotations.resize(frames * joints);
  db.local_translations.resize(frames * joints);
  db.local_velocities.resize(frames * joints);
  db.local_angular_velocities.resize(frames * joints);
  db.root_motion.resize(frames);
  db.contacts.resize(frames);

  for (uint32_t k = 0; k < spec.clips; ++k) {
    mmdb::cook::CookedClip clip;
    clip.name = "clip_" + std::to_string(k);
    clip.first_frame = k * spec.frames_per_clip;
    clip.frame_count = spec.frames_per_clip;
    clip.source_frame_rate = 30;
    clip.source_frame_count = spec.frames_per_clip / 2;
    clip.tag_mask = (k % 2 == 0) ? 1u : 2u;
    db.clips.push_back(clip);

    float phase[kFeatures];
    for (int c = 0; c < kFeatures; ++c) phase[c] = 3.14159f * unit(rng);
    const float yaw_rate = 0.5f * unit(rng);
    for (uint32_t i = 0; i < spec.frames_per_clip; ++i) {
      const size_t f = clip.first_frame + i;
      const float t = float(i) / spec.frame_rate;
      for (int c = 0; c < kFeatures; ++c)
        db.features[f * kStride + c] =
            amp[c] * std::sin(freq[c] * t + phase[c]) + spec.noise * unit(rng);
      if (spec.legs)
        leggedPose(spec.joints, t, float(k), &db.local_rotations[f * joints],
                   &db.local_translations[f * joints], &db.local_velocities[f * joints],
                   &db.local_angular_velocities[f * joints]);
      for (size_t j = 0; j < joints && !spec.legs; ++j) {
        const float w = 0.7f + 0.3f * float(j);
        const float angle = 0.4f * std::sin(w * t + float(k));
        const size_t e = f * joints + j;
        db.local_rotations[e] =
            glm::angleAxis(angle, glm::normalize(glm::vec3(0.2f, 1.f, 0.1f * float(j))));
        db.local_translations[e] =
            glm::vec3(0.1f * std::sin(t + float(j)), 0.9f - 0.2f * float(j), 0.05f * float(j));
        db.local_velocities[e] = glm::vec3(0.1f * std::cos(t + float(j)), 0.f, 0.f);
        db.local_angular_velocities[e] = 0.4f * w * std::cos(w * t + float(k)) *
                                         glm::normalize(glm::vec3(0.2f, 1.f, 0.1f * float(j)));
      }
      mmdb::cook::CookedRootFrame& r = db.root_motion[f];
      const float yaw = yaw_rate * t;
      r.rotation = glm::angleAxis(yaw, glm::vec3(0, 1, 0));
      r.position = glm::vec3(1.2f * t * std::sin(yaw), 0.f, 1.2f * t * std::cos(yaw));
      r.velocity = glm::vec3(1.2f * std::sin(yaw), 0.f, 1.2f * std::cos(yaw));
      r.angular_velocity = glm::vec3(0.f, yaw_rate, 0.f);
      // With legs, each toe is in contact while its foot is on the ground (leggedPose()).
      db.contacts[f] = spec.legs ? (leggedContact(t, float(k), 0) ? 1u : 0u) |
                                       (leggedContact(t, float(k), 1) ? 2u : 0u)
                                 : (i / 15) % 2;
    }

    // Matchable: all but the trailing frames; clip 0's second half is also "jump".
    const uint32_t matchable =
        spec.frames_per_clip > kTrailing ? spec.frames_per_clip - kTrailing : 0;
    if (matchable == 0) continue;
    if (k == 0 && matchable >= 2) {
      const uint32_t half = matchable / 2;
      db.ranges.push_back({clip.first_frame, half, clip.tag_mask});
      db.ranges.push_back({clip.first_frame + half, matchable - half, clip.tag_mask | 4u});
    } else {
      db.ranges.push_back({clip.first_frame, matchable, clip.tag_mask});
    }
  }
  computeBounds(db);
  return db;
}

void AlignedBytes::Free::operator()(uint8_t* p) const { std::free(p); }

AlignedBytes::AlignedBytes(const void* data, size_t size) : size_(size) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, std::max<size_t>(size, 1)) != 0) throw std::bad_alloc();
  data_.reset(static_cast<uint8_t*>(p));
  if (size) std::memcpy(p, data, size);
}

AlignedBytes::AlignedBytes(const std::vector<uint8_t>& bytes)
    : AlignedBytes(bytes.data(), bytes.size()) {}

AlignedBytes serializeAligned(const mmdb::cook::CookedDatabase& db) {
  return AlignedBytes(mmdb::cook::serializeDatabase(db));
}

void writeFile(const char* path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), std::streamsize(size));
  if (!out) throw std::runtime_error(std::string("cannot write ") + path);
}

std::vector<uint8_t> readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace mmdb::test
