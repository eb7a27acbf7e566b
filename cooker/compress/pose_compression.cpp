#include "compress/pose_compression.h"

#include "core/errors.h"
#include "core/parallel_for.h"

#include <meshoptimizer.h>

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <type_traits>

namespace mmdb::cook {
namespace {

constexpr int kQuatMinBits = 4, kQuatMaxBits = 16;
// 24 would let a value that rounds up to its power of two overflow the signed mantissa.
constexpr int kExpMaxBits = 23;
constexpr int kTighteningRounds = 64;

// --- one track: a joint's values over every frame ---------------------------------------------

// Rotations are x, y, z, w; vectors x, y, z with w = 0.
using Track = std::vector<glm::vec4>;

int vertexBytes(TrackCoding coding, bool rotation) {
  switch (coding) {
    case TrackCoding::Constant:
      return 0;
    case TrackCoding::Quaternion:
      return 8;
    case TrackCoding::Exponent:
      return 16;
    case TrackCoding::Lossless:
      return rotation ? 16 : 12;
  }
  return 0;
}

// The exponential filter shares one exponent between a frame's components. A vector gets a
// fourth component, the track's largest magnitude, so the exponent is the same in every frame:
// the mantissas are then a fixed-point grid whose deltas from frame to frame stay small, where
// an exponent that followed each frame's magnitude would rescale them and defeat delta coding.
float exponentPad(const Track& track) {
  float pad = 0;
  for (const glm::vec4& v : track)
    pad = std::max({pad, std::fabs(v.x), std::fabs(v.y), std::fabs(v.z)});
  return pad > 0 ? pad : 1.f;
}

// The filtered bytes of frames [first, first + n) of a track (what the vertex codec codes).
// `pad`: exponentPad(track), for Exponent-coded vectors.
void filterTrack(const Track& track, size_t first, size_t n, const CookedTrack& coding,
                 bool rotation, float pad, std::vector<uint8_t>& out) {
  const bool padded = !rotation && coding.coding == TrackCoding::Exponent;
  const int components = rotation || padded ? 4 : 3;
  std::vector<float> values(n * size_t(components));
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < components; ++c)
      values[i * components + c] = c == 3 && padded ? pad : track[first + i][c];
  out.assign(n * size_t(vertexBytes(coding.coding, rotation)), 0);
  switch (coding.coding) {
    case TrackCoding::Constant:
      break;
    case TrackCoding::Quaternion:
      meshopt_encodeFilterQuat(out.data(), n, 8, coding.bits, values.data());
      break;
    case TrackCoding::Exponent:
      meshopt_encodeFilterExp(out.data(), n, size_t(components) * 4, coding.bits, values.data());
      break;
    case TrackCoding::Lossless:
      std::memcpy(out.data(), values.data(), values.size() * sizeof(float));
      break;
  }
}

// A decoded rotation made unit length, as the runtime does it (the same operations in the same
// order, so both give the same bits): a filtered quaternion is a few 1e-5 off unit length, which
// FK would turn into a scale of every child offset.
glm::vec4 normalized(float x, float y, float z, float w) {
  const float length2 = x * x + y * y + z * z + w * w;
  const float inverse = 1.f / std::sqrt(length2);
  return glm::vec4(x * inverse, y * inverse, z * inverse, w * inverse);
}

// Filtered bytes -> values, as the runtime decodes them (in place on `bytes`).
void unfilter(std::vector<uint8_t>& bytes, size_t n, const CookedTrack& coding, bool rotation,
              glm::vec4* out, size_t out_stride) {
  const int components = rotation ? 4 : 3;
  switch (coding.coding) {
    case TrackCoding::Constant:
      for (size_t i = 0; i < n; ++i) out[i * out_stride] = coding.value;
      return;
    case TrackCoding::Quaternion: {
      meshopt_decodeFilterQuat(bytes.data(), n, 8);
      for (size_t i = 0; i < n; ++i) {
        int16_t s[4];
        std::memcpy(s, bytes.data() + i * 8, sizeof(s));
        constexpr float kScale = 1.f / 32767.f;
        out[i * out_stride] =
            normalized(s[0] * kScale, s[1] * kScale, s[2] * kScale, s[3] * kScale);
      }
      return;
    }
    case TrackCoding::Exponent:
      meshopt_decodeFilterExp(bytes.data(), n, 16);
      for (size_t i = 0; i < n; ++i) {
        float v[4];
        std::memcpy(v, bytes.data() + i * 16, 16);
        out[i * out_stride] =
            rotation ? normalized(v[0], v[1], v[2], v[3]) : glm::vec4(v[0], v[1], v[2], 0.f);
      }
      return;
    case TrackCoding::Lossless:
      for (size_t i = 0; i < n; ++i) {
        float v[4] = {0, 0, 0, 0};
        std::memcpy(v, bytes.data() + i * size_t(components) * 4, size_t(components) * 4);
        out[i * out_stride] = glm::vec4(v[0], v[1], v[2], v[3]);
      }
      return;
  }
}

Track decodeTrack(const Track& track, const CookedTrack& coding, bool rotation) {
  Track out(track.size());
  std::vector<uint8_t> bytes;
  filterTrack(track, 0, track.size(), coding, rotation, exponentPad(track), bytes);
  unfilter(bytes, track.size(), coding, rotation, out.data(), 1);
  return out;
}

float angleBetween(const glm::vec4& a, const glm::vec4& b) {
  const glm::quat qa(a.w, a.x, a.y, a.z), qb(b.w, b.x, b.y, b.z);
  const glm::quat d = glm::conjugate(qa) * qb;
  return 2.f * std::atan2(glm::length(glm::vec3(d.x, d.y, d.z)), std::fabs(d.w));
}

// The largest error of a decoded track: an angle for rotations, a distance for vectors.
float trackError(const Track& raw, const Track& decoded, bool rotation) {
  float worst = 0;
  for (size_t i = 0; i < raw.size(); ++i)
    worst = std::max(worst, rotation ? angleBetween(raw[i], decoded[i])
                                     : glm::length(glm::vec3(raw[i] - decoded[i])));
  return worst;
}

// The constant that is nearest every frame: the box centre of a vector, the sign-aligned mean
// of a rotation.
glm::vec4 constantOf(const Track& track, bool rotation) {
  if (!rotation) {
    glm::vec4 lo = track[0], hi = track[0];
    for (const glm::vec4& v : track) {
      lo = glm::min(lo, v);
      hi = glm::max(hi, v);
    }
    glm::vec4 mid = (lo + hi) * 0.5f;
    mid.w = 0;
    return mid;
  }
  glm::dvec4 sum(0);
  for (const glm::vec4& q : track)
    sum += glm::dot(q, track[0]) < 0 ? -glm::dvec4(q) : glm::dvec4(q);
  const double len = glm::length(sum);
  return len > 0 ? glm::vec4(sum / len) : track[0];
}

struct Choice {
  CookedTrack coding;
  float error = 0;  // the decoded track's largest error (angle or distance)
  Track decoded;
};

// The cheapest coding of a track whose error is at most `target`.
Choice chooseCoding(const Track& track, bool rotation, float target) {
  Choice c;
  c.coding.coding = TrackCoding::Constant;
  c.coding.value = constantOf(track, rotation);
  c.decoded.assign(track.size(), c.coding.value);
  c.error = trackError(track, c.decoded, rotation);
  if (c.error <= target) return c;

  auto attempt = [&](TrackCoding coding, int bits) {
    Choice a;
    a.coding.coding = coding;
    a.coding.bits = uint8_t(bits);
    a.decoded = decodeTrack(track, a.coding, rotation);
    a.error = trackError(track, a.decoded, rotation);
    return a;
  };
  // The error falls as bits rise; search the narrowest that fits, then make sure of it.
  auto narrowest = [&](TrackCoding coding, int lo, int hi) -> std::optional<Choice> {
    Choice best = attempt(coding, hi);
    if (best.error > target) return std::nullopt;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      Choice a = attempt(coding, mid);
      if (a.error <= target) {
        hi = mid;
        best = std::move(a);
      } else {
        lo = mid + 1;
      }
    }
    if (best.coding.bits != hi) best = attempt(coding, hi);
    return best;
  };
  if (rotation) {
    if (auto q = narrowest(TrackCoding::Quaternion, kQuatMinBits, kQuatMaxBits)) return *q;
  }
  if (auto e = narrowest(TrackCoding::Exponent, 1, kExpMaxBits)) return *e;
  Choice lossless;
  lossless.coding.coding = TrackCoding::Lossless;
  lossless.decoded = track;
  return lossless;
}

// --- forward kinematics check -----------------------------------------------------------------

struct FkError {
  std::vector<float> joint_max;  // per joint, the largest error over frames
  std::vector<uint32_t> joint_worst_frame;
};

// Model space of frame f: positions and rotations of every joint.
void modelPose(const std::vector<int>& parents, const glm::vec4* rot, const glm::vec4* pos,
               size_t joints, glm::quat* model_rot, glm::vec3* model_pos) {
  for (size_t j = 0; j < joints; ++j) {
    const glm::quat q(rot[j].w, rot[j].x, rot[j].y, rot[j].z);
    const glm::vec3 t(pos[j]);
    const int p = parents[j];
    if (p < 0) {
      model_rot[j] = q;
      model_pos[j] = t;
    } else {
      model_rot[j] = model_rot[p] * q;
      model_pos[j] = model_pos[p] + model_rot[p] * t;
    }
  }
}

// Per joint, the largest distance over frames between the raw and the decoded model-space
// position of the joint and of its shell points (shell along each local axis). The decoded
// tracks are read in place from the choices: copies of them would double the pose memory.
FkError measureFk(const std::vector<int>& parents, const std::vector<Track>& raw_rot,
                  const std::vector<Track>& raw_pos, const std::vector<Choice>& dec_rot,
                  const std::vector<Choice>& dec_pos, float shell, size_t frames, int jobs) {
  const size_t joints = parents.size();
  constexpr size_t kChunk = 2048;
  const int chunks = int((frames + kChunk - 1) / kChunk);
  std::vector<FkError> partial(static_cast<size_t>(chunks));
  parallelFor(0, chunks, jobs, [&](int c) {
    FkError& e = partial[size_t(c)];
    e.joint_max.assign(joints, 0.f);
    e.joint_worst_frame.assign(joints, 0);
    std::vector<glm::vec4> rr(joints), rp(joints), dr(joints), dp(joints);
    std::vector<glm::quat> mrr(joints), mdr(joints);
    std::vector<glm::vec3> mrp(joints), mdp(joints);
    const size_t end = std::min(frames, size_t(c + 1) * kChunk);
    for (size_t f = size_t(c) * kChunk; f < end; ++f) {
      for (size_t j = 0; j < joints; ++j) {
        rr[j] = raw_rot[j][f];
        rp[j] = raw_pos[j][f];
        dr[j] = dec_rot[j].decoded[f];
        dp[j] = dec_pos[j].decoded[f];
      }
      modelPose(parents, rr.data(), rp.data(), joints, mrr.data(), mrp.data());
      modelPose(parents, dr.data(), dp.data(), joints, mdr.data(), mdp.data());
      for (size_t j = 0; j < joints; ++j) {
        float err = glm::length(mrp[j] - mdp[j]);
        for (int axis = 0; axis < 3; ++axis) {
          glm::vec3 v(0);
          v[axis] = shell;
          err = std::max(err, glm::length((mrp[j] + mrr[j] * v) - (mdp[j] + mdr[j] * v)));
        }
        if (err > e.joint_max[j]) {
          e.joint_max[j] = err;
          e.joint_worst_frame[j] = uint32_t(f);
        }
      }
    }
  });
  FkError total;
  total.joint_max.assign(joints, 0.f);
  total.joint_worst_frame.assign(joints, 0);
  for (const FkError& e : partial)  // chunks in frame order: ties keep the first frame
    for (size_t j = 0; j < joints; ++j)
      if (e.joint_max[j] > total.joint_max[j]) {
        total.joint_max[j] = e.joint_max[j];
        total.joint_worst_frame[j] = e.joint_worst_frame[j];
      }
  return total;
}

// Per joint, the shell plus the farthest any descendant gets from it over the frames: the
// lever through which its rotation error moves a point.
std::vector<float> leverArms(const std::vector<int>& parents, const std::vector<Track>& rot,
                             const std::vector<Track>& pos, size_t frames, float shell) {
  const size_t joints = parents.size();
  std::vector<float> lever(joints, 0.f);
  std::vector<glm::vec4> r(joints), p(joints);
  std::vector<glm::quat> mr(joints);
  std::vector<glm::vec3> mp(joints);
  // Every 4th frame is enough for a margin that the FK check backs up.
  for (size_t f = 0; f < frames; f += 4) {
    for (size_t j = 0; j < joints; ++j) {
      r[j] = rot[j][f];
      p[j] = pos[j][f];
    }
    modelPose(parents, r.data(), p.data(), joints, mr.data(), mp.data());
    for (size_t d = 0; d < joints; ++d)
      for (int a = parents[d]; a >= 0; a = parents[size_t(a)])
        lever[size_t(a)] = std::max(lever[size_t(a)], glm::length(mp[d] - mp[size_t(a)]));
  }
  for (float& l : lever) l += shell;
  return lever;
}

// --- segments ---------------------------------------------------------------------------------

CookedCodedStream encodeStream(const std::vector<Track>& tracks, const std::vector<Choice>& choices,
                               bool rotation, uint32_t segment_frames, size_t frames, int jobs) {
  const size_t joints = tracks.size();
  const size_t segments = (frames + segment_frames - 1) / segment_frames;
  // Each joint's segments, coded in parallel, then laid out in joint order.
  std::vector<std::vector<std::vector<uint8_t>>> blobs(joints);
  parallelFor(0, int(joints), jobs, [&](int j) {
    const CookedTrack& coding = choices[size_t(j)].coding;
    blobs[size_t(j)].resize(segments);
    if (coding.coding == TrackCoding::Constant) return;
    const size_t vertex = size_t(vertexBytes(coding.coding, rotation));
    const float pad = exponentPad(tracks[size_t(j)]);
    std::vector<uint8_t> filtered;
    for (size_t s = 0; s < segments; ++s) {
      const size_t first = s * segment_frames;
      const size_t n = std::min<size_t>(segment_frames, frames - first);
      filterTrack(tracks[size_t(j)], first, n, coding, rotation, pad, filtered);
      std::vector<uint8_t>& out = blobs[size_t(j)][s];
      out.resize(meshopt_encodeVertexBufferBound(n, vertex));
      const size_t size =
          meshopt_encodeVertexBuffer(out.data(), out.size(), filtered.data(), n, vertex);
      if (size == 0) throw std::logic_error("the vertex codec found its output buffer too small");
      out.resize(size);
    }
  });
  CookedCodedStream stream;
  for (const Choice& c : choices) stream.tracks.push_back(c.coding);
  stream.segment_offsets.push_back(0);
  for (size_t j = 0; j < joints; ++j)
    for (size_t s = 0; s < segments; ++s) {
      stream.data.insert(stream.data.end(), blobs[j][s].begin(), blobs[j][s].end());
      if (stream.data.size() > UINT32_MAX)
        throw InputError("the coded pose streams exceed 4 GiB; cook fewer frames");
      stream.segment_offsets.push_back(uint32_t(stream.data.size()));
    }
  return stream;
}

template <typename T>
std::vector<Track> tracksOf(const std::vector<T>& values, size_t frames, size_t joints) {
  std::vector<Track> tracks(joints, Track(frames));
  for (size_t f = 0; f < frames; ++f)
    for (size_t j = 0; j < joints; ++j) {
      const T& v = values[f * joints + j];
      if constexpr (std::is_same_v<T, glm::quat>)
        tracks[j][f] = glm::vec4(v.x, v.y, v.z, v.w);
      else
        tracks[j][f] = glm::vec4(v.x, v.y, v.z, 0.f);
    }
  return tracks;
}

void checkSetting(bool ok, const std::string& key, const std::string& rule) {
  if (!ok) throw InputError("compression." + key + " " + rule);
}

// Velocities: each track on its own, within the tolerance at every frame.
CookedCodedStream codeVelocities(const std::vector<Track>& tracks, float tolerance,
                                 uint32_t segment_frames, size_t frames, int jobs) {
  std::vector<Choice> choices(tracks.size());
  parallelFor(0, int(tracks.size()), jobs, [&](int j) {
    choices[size_t(j)] = chooseCoding(tracks[size_t(j)], false, tolerance);
  });
  CookedCodedStream stream = encodeStream(tracks, choices, false, segment_frames, frames, jobs);
  for (size_t j = 0; j < tracks.size(); ++j) {
    for (size_t f = 0; f < frames; ++f) {
      const float e = glm::length(glm::vec3(tracks[j][f] - choices[j].decoded[f]));
      if (e > stream.max_error) {
        stream.max_error = e;
        stream.worst_joint = int(j);
        stream.worst_frame = uint32_t(f);
      }
    }
  }
  return stream;
}

}  // namespace

void checkCompressionSettings(const CompressionSettings& settings) {
  checkSetting(std::isfinite(settings.position_tolerance) && settings.position_tolerance > 0,
               "position_tolerance", "must be a positive number of metres");
  checkSetting(std::isfinite(settings.shell_distance) && settings.shell_distance >= 0,
               "shell_distance", "must be a number of metres >= 0");
  checkSetting(std::isfinite(settings.velocity_tolerance) && settings.velocity_tolerance > 0,
               "velocity_tolerance", "must be a positive number of m/s");
  checkSetting(
      std::isfinite(settings.angular_velocity_tolerance) && settings.angular_velocity_tolerance > 0,
      "angular_velocity_tolerance", "must be a positive number of rad/s");
  checkSetting(settings.segment_frames >= 1 && settings.segment_frames <= kMaxSegmentFrames,
               "segment_frames", "must be 1 to " + std::to_string(kMaxSegmentFrames));
}

CompressionReport compressionReport(const CookedPoseCoding& coding, size_t frames, size_t joints) {
  static const char* const kNames[kPoseStreamCount] = {
      "local_rotations", "local_translations", "local_velocities", "local_angular_velocities"};
  CompressionReport r;
  for (int s = 0; s < kPoseStreamCount; ++s) {
    StreamCompressionReport& sr = r.streams[size_t(s)];
    sr.name = kNames[s];
    sr.raw_bytes = uint64_t(frames) * joints * 16;
    if (!coding.streams[size_t(s)]) continue;
    r.enabled = true;
    const CookedCodedStream& stream = *coding.streams[size_t(s)];
    sr.coded_bytes =
        stream.tracks.size() * 32 + stream.segment_offsets.size() * 4 + stream.data.size();
    for (const CookedTrack& t : stream.tracks) {
      if (t.coding == TrackCoding::Constant)
        ++sr.constant_tracks;
      else if (t.coding == TrackCoding::Lossless)
        ++sr.lossless_tracks;
      else
        ++sr.coded_tracks;
    }
    sr.max_error = stream.max_error;
    sr.worst_joint = stream.worst_joint;
    sr.worst_frame = stream.worst_frame;
  }
  return r;
}

void compressPoses(CookedDatabase& db, const CompressionSettings& settings, int jobs,
                   CompressionReport* report, RawPoses raw) {
  const auto start = std::chrono::steady_clock::now();
  db.pose_coding = CookedPoseCoding{};
  CompressionReport local;
  CompressionReport& r = report ? *report : local;
  const size_t frames = db.frame_count, joints = db.joint_count;
  r = compressionReport(db.pose_coding, frames, joints);
  if (settings.pose == CompressionSettings::Pose::None || frames == 0 || joints == 0) return;

  checkCompressionSettings(settings);
  if (jobs <= 0) jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  meshopt_encodeVertexVersion(0);  // the format every meshoptimizer decodes

  const uint32_t segment_frames = uint32_t(settings.segment_frames);
  const float tolerance = float(settings.position_tolerance);
  const float shell = float(settings.shell_distance);
  const std::vector<int>& parents = db.skeleton.parents;
  auto release = [raw](auto& stream) {
    if (raw == RawPoses::Release) std::decay_t<decltype(stream)>().swap(stream);
  };
  std::vector<Track> rot = tracksOf(db.local_rotations, frames, joints);
  release(db.local_rotations);
  std::vector<Track> pos = tracksOf(db.local_translations, frames, joints);
  release(db.local_translations);
  const std::vector<float> lever = leverArms(parents, rot, pos, frames, shell);

  // Start each track at half the budget along its lever (errors down a chain add up),
  // then let the model-space check tighten the tracks that carry a joint over the budget.
  constexpr float kShare = 0.5f;  // of 1/3, 1/2 and 1, the smallest file on bandai-1
  std::vector<float> rot_target(joints), pos_target(joints, tolerance * kShare);
  for (size_t j = 0; j < joints; ++j) rot_target[j] = tolerance * kShare / lever[j];
  std::vector<Choice> rot_choice(joints), pos_choice(joints);
  parallelFor(0, int(joints), jobs, [&](int j) {
    rot_choice[size_t(j)] = chooseCoding(rot[size_t(j)], true, rot_target[size_t(j)]);
    pos_choice[size_t(j)] = chooseCoding(pos[size_t(j)], false, pos_target[size_t(j)]);
  });
  auto measure = [&] {
    return measureFk(parents, rot, pos, rot_choice, pos_choice, shell, frames, jobs);
  };
  FkError fk = measure();
  for (int round = 0;; ++round) {
    std::vector<size_t> over;
    for (size_t j = 0; j < joints; ++j)
      if (fk.joint_max[j] > tolerance) over.push_back(j);
    if (over.empty()) break;
    // Tighten, for each joint over the budget, the track up its chain that moves it most.
    std::vector<std::pair<bool, size_t>> tighten;  // (rotation?, joint)
    for (size_t d : over) {
      float best = -1;
      std::pair<bool, size_t> pick{true, d};
      for (int a = int(d); a >= 0; a = parents[size_t(a)]) {
        const Choice& rc = rot_choice[size_t(a)];
        const Choice& pc = pos_choice[size_t(a)];
        const float rot_part = rc.error * lever[size_t(a)];
        if (rc.coding.coding != TrackCoding::Lossless && rot_part > best) {
          best = rot_part;
          pick = {true, size_t(a)};
        }
        if (pc.coding.coding != TrackCoding::Lossless && pc.error > best) {
          best = pc.error;
          pick = {false, size_t(a)};
        }
      }
      if (best >= 0 && std::find(tighten.begin(), tighten.end(), pick) == tighten.end())
        tighten.push_back(pick);
    }
    if (tighten.empty()) break;  // everything on the chains is already exact
    const bool last_round = round + 1 >= kTighteningRounds;
    parallelFor(0, int(tighten.size()), jobs, [&](int i) {
      const auto [is_rot, j] = tighten[size_t(i)];
      Choice& c = is_rot ? rot_choice[j] : pos_choice[j];
      const Track& t = is_rot ? rot[j] : pos[j];
      if (last_round) {
        c = chooseCoding(t, is_rot, 0.f);  // exact
      } else {
        float& target = is_rot ? rot_target[j] : pos_target[j];
        target = std::min(target, c.error) * 0.5f;
        c = chooseCoding(t, is_rot, target);
      }
    });
    fk = measure();
    if (last_round) {
      // Whatever is still over the budget goes exact along its whole chain.
      for (size_t d = 0; d < joints; ++d)
        if (fk.joint_max[d] > tolerance)
          for (int a = int(d); a >= 0; a = parents[size_t(a)]) {
            rot_choice[size_t(a)] = chooseCoding(rot[size_t(a)], true, 0.f);
            pos_choice[size_t(a)] = chooseCoding(pos[size_t(a)], false, 0.f);
          }
      fk = measure();
      break;
    }
  }

  CookedPoseCoding& coding = db.pose_coding;
  coding.segment_frames = segment_frames;
  coding.position_tolerance = tolerance;
  coding.shell_distance = shell;
  coding.velocity_tolerance = float(settings.velocity_tolerance);
  coding.angular_velocity_tolerance = float(settings.angular_velocity_tolerance);
  coding.streams[kStreamRotations] =
      encodeStream(rot, rot_choice, true, segment_frames, frames, jobs);
  coding.streams[kStreamTranslations] =
      encodeStream(pos, pos_choice, false, segment_frames, frames, jobs);
  // Both carry the model-space check's result: their errors show only together.
  for (int s : {kStreamRotations, kStreamTranslations}) {
    CookedCodedStream& stream = *coding.streams[size_t(s)];
    for (size_t j = 0; j < joints; ++j)
      if (fk.joint_max[j] > stream.max_error || stream.worst_joint < 0) {
        stream.max_error = fk.joint_max[j];
        stream.worst_joint = int(j);
        stream.worst_frame = fk.joint_worst_frame[j];
      }
  }
  if (raw == RawPoses::Release) {  // done with the rotations and translations
    std::vector<Track>().swap(rot);
    std::vector<Track>().swap(pos);
    std::vector<Choice>().swap(rot_choice);
    std::vector<Choice>().swap(pos_choice);
  }
  std::vector<Track> vel = tracksOf(db.local_velocities, frames, joints);
  release(db.local_velocities);
  coding.streams[kStreamVelocities] =
      codeVelocities(vel, float(settings.velocity_tolerance), segment_frames, frames, jobs);
  std::vector<Track>().swap(vel);
  std::vector<Track> ang = tracksOf(db.local_angular_velocities, frames, joints);
  release(db.local_angular_velocities);
  coding.streams[kStreamAngularVelocities] =
      codeVelocities(ang, float(settings.angular_velocity_tolerance), segment_frames, frames, jobs);

  r = compressionReport(coding, frames, joints);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<glm::vec4> decodeCodedStream(const CookedCodedStream& stream, uint32_t frame_count,
                                         uint32_t joint_count, uint32_t segment_frames,
                                         bool rotations) {
  std::vector<glm::vec4> out(size_t(frame_count) * joint_count);
  const size_t segments = (size_t(frame_count) + segment_frames - 1) / segment_frames;
  std::vector<uint8_t> bytes;
  for (size_t j = 0; j < joint_count; ++j) {
    const CookedTrack& coding = stream.tracks[j];
    const size_t vertex = size_t(vertexBytes(coding.coding, rotations));
    for (size_t s = 0; s < segments; ++s) {
      const size_t first = s * segment_frames;
      const size_t n = std::min<size_t>(segment_frames, frame_count - first);
      if (coding.coding != TrackCoding::Constant) {
        const uint32_t begin = stream.segment_offsets[j * segments + s];
        const uint32_t end = stream.segment_offsets[j * segments + s + 1];
        bytes.assign(n * vertex, 0);
        if (meshopt_decodeVertexBuffer(bytes.data(), n, vertex, stream.data.data() + begin,
                                       end - begin) != 0)
          throw std::logic_error("a coded segment does not decode");
      }
      unfilter(bytes, n, coding, rotations, out.data() + first * joint_count + j, joint_count);
    }
  }
  return out;
}

}  // namespace mmdb::cook
