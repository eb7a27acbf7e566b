#include "compress/pose_compression.h"

#include "compress/exponent_filter.h"
#include "compress/frame_lanes.h"

#include "core/errors.h"
#include "core/large_pages.h"
#include "core/parallel_for.h"

#include <meshoptimizer.h>

#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
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

// A joint's values read in place from a frame-major pose stream ([frame * joints + joint]), as
// the vec4s of a Track: the stream is never copied whole.
class TrackView {
 public:
  TrackView(const std::vector<glm::quat>& stream, size_t joint, size_t joints, size_t frames)
      : rotations_(stream.data() + joint), joints_(joints), frames_(frames) {}
  TrackView(const std::vector<glm::vec3>& stream, size_t joint, size_t joints, size_t frames)
      : vectors_(stream.data() + joint), joints_(joints), frames_(frames) {}

  size_t size() const { return frames_; }
  glm::vec4 operator[](size_t frame) const {
    if (rotations_) {
      const glm::quat& q = rotations_[frame * joints_];
      return glm::vec4(q.x, q.y, q.z, q.w);
    }
    const glm::vec3& v = vectors_[frame * joints_];
    return glm::vec4(v.x, v.y, v.z, 0.f);
  }
  // The whole track, contiguous, into `track`: for the passes that read it many times.
  void copyTo(Track& track) const {
    track.resize(frames_);
    for (size_t f = 0; f < frames_; ++f) track[f] = (*this)[f];
  }

 private:
  const glm::quat* rotations_ = nullptr;
  const glm::vec3* vectors_ = nullptr;
  size_t joints_ = 0, frames_ = 0;
};

// One view per joint of a stream.
template <typename T>
std::vector<TrackView> viewsOf(const std::vector<T>& stream, size_t frames, size_t joints) {
  std::vector<TrackView> views;
  views.reserve(joints);
  for (size_t j = 0; j < joints; ++j) views.emplace_back(stream, j, joints, frames);
  return views;
}

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
template <typename Values>
float exponentPad(const Values& track) {
  float pad = 0;
  for (size_t i = 0; i < track.size(); ++i) {
    const glm::vec4 v = track[i];
    pad = std::max({pad, std::fabs(v.x), std::fabs(v.y), std::fabs(v.z)});
  }
  return pad > 0 ? pad : 1.f;
}

// The filtered bytes of frames [first, first + n) of a track (what the vertex codec codes).
// `pad`: exponentPad(track), for Exponent-coded vectors.
template <typename Values>
void filterTrack(const Values& track, size_t first, size_t n, const CookedTrack& coding,
                 bool rotation, float pad, std::vector<float>& values, std::vector<uint8_t>& out) {
  const bool padded = !rotation && coding.coding == TrackCoding::Exponent;
  const int components = rotation || padded ? 4 : 3;
  values.resize(n * size_t(components));
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
      encodeExponentFilter(out.data(), values.data(), n, components, coding.bits);
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

float angleBetween(const glm::vec4& a, const glm::vec4& b) {
  const glm::quat qa(a.w, a.x, a.y, a.z), qb(b.w, b.x, b.y, b.z);
  const glm::quat d = glm::conjugate(qa) * qb;
  return 2.f * std::atan2(glm::length(glm::vec3(d.x, d.y, d.z)), std::fabs(d.w));
}

struct TrackError {
  float error = 0;     // an angle for rotations, a distance for vectors
  uint32_t frame = 0;  // the first frame with that error
};

float valueError(const glm::vec4& raw, const glm::vec4& decoded, bool rotation) {
  return rotation ? angleBetween(raw, decoded) : glm::length(glm::vec3(raw - decoded));
}

// The scratch of one thread's trial codings.
struct TrialScratch {
  std::vector<float> values;
  std::vector<uint8_t> bytes;
};

// Codes a track, decodes it into `decoded` as the runtime would, and measures its largest error
// (the first frame with it). The filters code each frame on its own, so this goes chunk by
// chunk with the same result as in one piece, and stops at the first chunk whose error exceeds
// `target`: a caller searching for the narrowest coding only needs to know that this one fails
// (the error returned is then a lower bound of the whole track's). With `jobs` > 1 the chunks
// are shared by that many threads, taken in frame order, and the chunks' largest errors are
// merged in frame order: the same result, and a failure still stops every thread within a chunk.
TrackError codeAndMeasure(const Track& track, const CookedTrack& coding, bool rotation, float pad,
                          float target, TrialScratch& scratch, Track& decoded, int jobs = 1) {
  constexpr size_t kChunkFrames = 256;
  decoded.resize(track.size());
  const size_t chunks = (track.size() + kChunkFrames - 1) / kChunkFrames;
  auto measureChunk = [&](size_t c, TrialScratch& with) {
    const size_t first = c * kChunkFrames, n = std::min(kChunkFrames, track.size() - first);
    filterTrack(track, first, n, coding, rotation, pad, with.values, with.bytes);
    unfilter(with.bytes, n, coding, rotation, decoded.data() + first, 1);
    TrackError worst;
    for (size_t i = first; i < first + n; ++i) {
      const float e = valueError(track[i], decoded[i], rotation);
      if (e > worst.error) worst = {e, uint32_t(i)};
    }
    return worst;
  };
  TrackError worst;
  if (jobs <= 1 || chunks < 2) {
    for (size_t c = 0; c < chunks && worst.error <= target; ++c) {
      const TrackError e = measureChunk(c, scratch);
      if (e.error > worst.error) worst = e;
    }
    return worst;
  }
  std::vector<TrackError> chunk_worst(chunks);
  std::atomic<bool> over{false};
  parallelFor(0, int(chunks), jobs, [&](int c) {
    if (over.load(std::memory_order_relaxed)) return;
    thread_local TrialScratch mine;
    chunk_worst[size_t(c)] = measureChunk(size_t(c), mine);
    if (chunk_worst[size_t(c)].error > target) over = true;
  });
  for (const TrackError& e : chunk_worst)
    if (e.error > worst.error) worst = e;
  return worst;
}

// The largest error of a constant in place of the track (the first frame with it), or, once
// some frame's error exceeds `target`, that error: a constant that fails is only compared with
// the target.
TrackError constantError(const Track& raw, const glm::vec4& value, bool rotation, float target) {
  TrackError worst;
  for (size_t i = 0; i < raw.size(); ++i) {
    const float e = valueError(raw[i], value, rotation);
    if (e > worst.error) {
      worst = {e, uint32_t(i)};
      if (e > target) break;
    }
  }
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

// The decoded tracks the model-space check reads: a slot of `frames` values for each track a
// filter codes, handed out as the tracks are chosen (a track chosen again keeps its slot). The
// slots lie in one block with large pages advised, so the tracks that take none (constant or
// lossless) take no memory, and where the system has large pages the block costs a page fault
// per 2 MB rather than per 4 KB.
class DecodedSlots {
 public:
  DecodedSlots(size_t tracks, size_t frames)
      : block_(tracks * frames), frames_(frames), slot_of_(tracks, -1) {}

  // Called for distinct tracks from any threads.
  glm::vec4* slot(size_t track) {
    int& slot = slot_of_[track];
    if (slot < 0) slot = next_++;
    return block_.data() + size_t(slot) * frames_;
  }

 private:
  LargePageBuffer<glm::vec4> block_;
  size_t frames_;
  std::vector<int> slot_of_;
  std::atomic<int> next_{0};
};

struct Choice {
  CookedTrack coding;
  float error = 0;           // the decoded track's largest error (angle or distance)
  uint32_t worst_frame = 0;  // the first frame with that error
  // What the choice learnt of the track whatever its target, so that neither choosing it again
  // for a smaller one nor coding its segments reads the whole track again for them: a floor of
  // the best constant's error (its error when the constant was chosen; else one frame's error
  // above the target it failed), and exponentPad's value (in every choice but a constant).
  float constant_floor = 0;
  float pad = 0;
  // Quaternion and Exponent codings chosen with slots: the decoded track, in its slot. A constant
  // is its value and a lossless track the raw one, so neither is held twice.
  const glm::vec4* decoded = nullptr;

  glm::vec4 valueAt(size_t frame, const TrackView& raw) const {
    switch (coding.coding) {
      case TrackCoding::Constant:
        return coding.value;
      case TrackCoding::Lossless:
        return raw[frame];
      default:
        return decoded[frame];
    }
  }
};

// The width to try first for a track coded with a filter: the narrowest whose quantization
// step alone keeps the error within `target`. The exponential filter rounds each component to
// a step of 2^(E - bits + 1), E the exponent of the frame's largest component (for a vector the
// track's largest magnitude, `pad`; at most 1 for a unit quaternion), so a component is off by
// at most 2^(E - bits): a vector by sqrt(3) times that, and a rotation by an angle of about
// twice its quaternion's distance, 4 times that. The quaternion filter keeps three components
// in [-1/sqrt(2), 1/sqrt(2)] on 2^(bits - 1) - 1 steps a side: about 2.5 * 2^-bits radians.
// Only a guess: the search walks from it to the narrowest width that fits.
int firstWidth(TrackCoding coding, bool rotation, float pad, float target, int lo, int hi) {
  if (!(target > 0)) return hi;
  double bound_at_zero_bits;  // the bound of the error times 2^bits
  if (coding == TrackCoding::Quaternion) {
    bound_at_zero_bits = 2.5;
  } else {
    int e = 1;
    if (!rotation) std::frexp(pad, &e);
    bound_at_zero_bits = std::ldexp(rotation ? 4.0 : std::sqrt(3.0), e);
  }
  const double bits = std::ceil(std::log2(bound_at_zero_bits / double(target)));
  return int(std::clamp(bits, double(lo), double(hi)));
}

// chooseCoding's buffers, a track's frames each: the track, and the decoded values of its last
// trial and of its best one.
struct ChoiceScratch {
  Track track, trial, best_trial;
  TrialScratch coding;
};

// ChoiceScratches kept from one chooseCoding to the next, one for each call running at once. A
// cook chooses about a hundred tracks of up to hundreds of thousands of frames: buffers allocated
// for each call went back to the system and were faulted in and zeroed again by the next, which
// was most of a coded cook's system time.
class ScratchShelf {
 public:
  // choose(scratch) with a scratch taken from the shelf and given back after.
  template <typename Choose>
  auto with(Choose choose) {
    std::unique_ptr<ChoiceScratch> s = take();
    auto result = choose(*s);
    give(std::move(s));
    return result;
  }

 private:
  std::unique_ptr<ChoiceScratch> take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return std::make_unique<ChoiceScratch>();
    std::unique_ptr<ChoiceScratch> s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  void give(std::unique_ptr<ChoiceScratch> s) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(s));
  }
  std::mutex mutex_;
  std::vector<std::unique_ptr<ChoiceScratch>> free_;
};

// The cheapest coding of a track whose error is at most `target`. With `slots`, a track coded
// with a filter keeps its decoded values in the slot of track `slot_track`.
// `jobs`: threads for each trial coding (codeAndMeasure).
// `previous`: this track's choice for a larger target, whose facts it reuses: a constant whose
// error's floor exceeds `target` fails again, and is not made and measured again.
Choice chooseCoding(const TrackView& view, bool rotation, float target, ChoiceScratch& buffers,
                    DecodedSlots* slots = nullptr, size_t slot_track = 0, int jobs = 1,
                    const Choice* previous = nullptr) {
  Track& track = buffers.track;
  view.copyTo(track);
  Choice c;
  if (previous && previous->constant_floor > target) {
    c.constant_floor = previous->constant_floor;
  } else {
    c.coding.coding = TrackCoding::Constant;
    c.coding.value = constantOf(track, rotation);
    const TrackError constant = constantError(track, c.coding.value, rotation, target);
    c.error = constant.error;
    c.worst_frame = constant.frame;
    c.constant_floor = constant.error;
    if (c.error <= target) return c;
  }

  TrialScratch& scratch = buffers.coding;
  const float pad = previous && previous->pad > 0 ? previous->pad : exponentPad(track);
  c.pad = pad;
  Track &trial = buffers.trial, &best_trial = buffers.best_trial;
  // An attempt that fails is only compared with the target, so it stops early; one that passes
  // is always measured whole.
  auto attempt = [&](TrackCoding coding, int bits) {
    Choice a;
    a.constant_floor = c.constant_floor;
    a.pad = pad;
    a.coding.coding = coding;
    a.coding.bits = uint8_t(bits);
    const TrackError e =
        codeAndMeasure(track, a.coding, rotation, pad, target, scratch, trial, jobs);
    a.error = e.error;
    a.worst_frame = e.frame;
    return a;
  };
  // The error falls as bits rise. The search starts at the width the filter's step predicts
  // (firstWidth) and walks from it one bit at a time: down while the next narrower width still
  // fits, or up until one fits. A good guess costs two trials, one that fits (measured whole)
  // and one that fails (stopped early), where a bisection of the whole range costs five or six.
  auto narrowest = [&](TrackCoding coding, int lo, int hi) -> std::optional<Choice> {
    int bits = firstWidth(coding, rotation, pad, target, lo, hi);
    Choice best = attempt(coding, bits);
    while (best.error > target) {  // up until a width fits, or none does
      if (bits == hi) return std::nullopt;
      best = attempt(coding, ++bits);
    }
    trial.swap(best_trial);
    while (bits > lo) {  // down while a narrower width still fits
      const Choice a = attempt(coding, bits - 1);
      if (a.error > target) break;
      best = a;
      --bits;
      trial.swap(best_trial);
    }
    if (slots) {
      glm::vec4* slot = slots->slot(slot_track);
      std::copy(best_trial.begin(), best_trial.end(), slot);
      best.decoded = slot;
    }
    return best;
  };
  if (rotation) {
    if (auto q = narrowest(TrackCoding::Quaternion, kQuatMinBits, kQuatMaxBits)) return *q;
  }
  if (auto e = narrowest(TrackCoding::Exponent, 1, kExpMaxBits)) return *e;
  Choice lossless;
  lossless.coding.coding = TrackCoding::Lossless;
  lossless.constant_floor = c.constant_floor;
  lossless.pad = pad;
  return lossless;
}

// --- forward kinematics check -----------------------------------------------------------------

struct FkError {
  std::vector<float> joint_max;  // per joint, the largest error over frames
  std::vector<uint32_t> joint_worst_frame;
};

// Model space of one frame: positions and rotations of every joint.
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
// position of the joint and of its shell points (shell along each local axis). The raw and the
// decoded tracks are read in place: copies of them would double the pose memory. Four frames
// go side by side (frame_lanes.h), each with the bits the scalar glm code gives it.
// With `changed` (one flag per joint: a track of it was coded again since `previous` was
// measured), only the joints below a changed one are measured again, and the others keep their
// result from `previous`: their chains are the same, so that result is what measuring them
// again would give.
FkError measureFk(const std::vector<int>& parents, const std::vector<TrackView>& raw_rot,
                  const std::vector<TrackView>& raw_pos, const std::vector<Choice>& dec_rot,
                  const std::vector<Choice>& dec_pos, float shell, size_t frames, int jobs,
                  const std::vector<uint8_t>* changed = nullptr,
                  const FkError* previous = nullptr) {
  const size_t joints = parents.size();
  // measured: the joints to measure; posed: those and their ancestors, whose model space the
  // measured ones need. Parents come before their children.
  std::vector<uint8_t> measured(joints, 1), posed(joints, 1);
  if (changed && previous) {
    for (size_t j = 0; j < joints; ++j)
      measured[j] = (*changed)[j] || (parents[j] >= 0 && measured[size_t(parents[j])]);
    posed = measured;
    for (size_t j = joints; j-- > 0;)
      if (posed[j] && parents[j] >= 0) posed[size_t(parents[j])] = 1;
  }
  constexpr size_t kChunk = 2048;
  const int chunks = int((frames + kChunk - 1) / kChunk);
  std::vector<FkError> partial(static_cast<size_t>(chunks));
  const Lanes shell_lanes = Lanes::splat(shell);
  parallelFor(0, chunks, jobs, [&](int c) {
    FkError& e = partial[size_t(c)];
    e.joint_max.assign(joints, 0.f);
    e.joint_worst_frame.assign(joints, 0);
    // Per joint and lane, the largest error and the first frame with it; a lane sees every
    // kFrameLanes-th frame in order.
    std::vector<float> lane_max(joints * kFrameLanes, 0.f);
    std::vector<uint32_t> lane_frame(joints * kFrameLanes, 0);
    std::vector<LaneQuat> mrr(joints), mdr(joints);
    std::vector<LaneVec3> mrp(joints), mdp(joints);
    const size_t begin = size_t(c) * kChunk, end = std::min(frames, begin + kChunk);
    for (size_t f0 = begin; f0 < end; f0 += kFrameLanes) {
      // A group past the chunk's end repeats its last frame: the same error at the same frame.
      size_t f[kFrameLanes];
      for (int l = 0; l < kFrameLanes; ++l) f[l] = std::min(f0 + size_t(l), end - 1);
      for (size_t j = 0; j < joints; ++j) {
        if (!posed[j]) continue;
        // The joint's local rotation and translation in the four frames: raw, or as decoded.
        auto local = [&](bool decoded, LaneQuat& q, LaneVec3& t) {
          alignas(16) float v[7][kFrameLanes];  // rotation x y z w, translation x y z
          for (int l = 0; l < kFrameLanes; ++l) {
            const glm::vec4 r = decoded ? dec_rot[j].valueAt(f[l], raw_rot[j]) : raw_rot[j][f[l]];
            const glm::vec4 p = decoded ? dec_pos[j].valueAt(f[l], raw_pos[j]) : raw_pos[j][f[l]];
            v[0][l] = r.x, v[1][l] = r.y, v[2][l] = r.z, v[3][l] = r.w;
            v[4][l] = p.x, v[5][l] = p.y, v[6][l] = p.z;
          }
          q = {Lanes::load(v[0]), Lanes::load(v[1]), Lanes::load(v[2]), Lanes::load(v[3])};
          t = {Lanes::load(v[4]), Lanes::load(v[5]), Lanes::load(v[6])};
        };
        // modelPose, four frames at once.
        auto model = [&](bool decoded, std::vector<LaneQuat>& mr, std::vector<LaneVec3>& mp) {
          LaneQuat q;
          LaneVec3 t;
          local(decoded, q, t);
          const int p = parents[j];
          if (p < 0) {
            mr[j] = q;
            mp[j] = t;
          } else {
            mr[j] = mr[size_t(p)] * q;
            mp[j] = mp[size_t(p)] + mr[size_t(p)] * t;
          }
        };
        // The decoded slots are 2 x joints streams, more than the hardware prefetcher follows.
        constexpr size_t kAhead = 64;
        for (const Choice* d : {&dec_rot[j], &dec_pos[j]})
          if (d->decoded && f0 + kAhead < end) __builtin_prefetch(d->decoded + f0 + kAhead);
        model(false, mrr, mrp);
        model(true, mdr, mdp);
      }
      for (size_t j = 0; j < joints; ++j) {
        if (!measured[j]) continue;
        // The joint and its shell points, each as far along a local axis.
        auto shellError = [&]<int Axis>() {
          return length((mrp[j] + rotateAxis<Axis>(mrr[j], shell_lanes)) -
                        (mdp[j] + rotateAxis<Axis>(mdr[j], shell_lanes)));
        };
        alignas(16) float err[4][kFrameLanes];
        length(mrp[j] - mdp[j]).store(err[0]);
        shellError.template operator()<0>().store(err[1]);
        shellError.template operator()<1>().store(err[2]);
        shellError.template operator()<2>().store(err[3]);
        for (int l = 0; l < kFrameLanes; ++l) {
          const float m = std::max({err[0][l], err[1][l], err[2][l], err[3][l]});
          float& best = lane_max[j * kFrameLanes + size_t(l)];
          if (m > best) {
            best = m;
            lane_frame[j * kFrameLanes + size_t(l)] = uint32_t(f[l]);
          }
        }
      }
    }
    for (size_t j = 0; j < joints; ++j)  // the largest over lanes, at its first frame
      for (int l = 0; l < kFrameLanes; ++l) {
        const float m = lane_max[j * kFrameLanes + size_t(l)];
        const uint32_t frame = lane_frame[j * kFrameLanes + size_t(l)];
        if (m > e.joint_max[j] ||
            (m == e.joint_max[j] && m > 0 && frame < e.joint_worst_frame[j])) {
          e.joint_max[j] = m;
          e.joint_worst_frame[j] = frame;
        }
      }
  });
  FkError total;
  total.joint_max.assign(joints, 0.f);
  total.joint_worst_frame.assign(joints, 0);
  for (size_t j = 0; j < joints; ++j)
    if (!measured[j]) {
      total.joint_max[j] = previous->joint_max[j];
      total.joint_worst_frame[j] = previous->joint_worst_frame[j];
    }
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
std::vector<float> leverArms(const std::vector<int>& parents, const std::vector<TrackView>& rot,
                             const std::vector<TrackView>& pos, size_t frames, float shell,
                             int jobs) {
  const size_t joints = parents.size();
  // Every 4th frame is enough for a margin that the FK check backs up. Chunks of frames in
  // parallel: a maximum is the same in any order.
  constexpr size_t kStep = 4, kChunk = 4096;  // kChunk a multiple of kStep: the same frames
  const int chunks = int((frames + kChunk - 1) / kChunk);
  std::vector<std::vector<float>> partial(size_t(chunks), std::vector<float>(joints, 0.f));
  parallelFor(0, chunks, jobs, [&](int c) {
    std::vector<float>& lever = partial[size_t(c)];
    std::vector<glm::vec4> r(joints), p(joints);
    std::vector<glm::quat> mr(joints);
    std::vector<glm::vec3> mp(joints);
    const size_t end = std::min(frames, size_t(c + 1) * kChunk);
    for (size_t f = size_t(c) * kChunk; f < end; f += kStep) {
      for (size_t j = 0; j < joints; ++j) {
        r[j] = rot[j][f];
        p[j] = pos[j][f];
      }
      modelPose(parents, r.data(), p.data(), joints, mr.data(), mp.data());
      for (size_t d = 0; d < joints; ++d)
        for (int a = parents[d]; a >= 0; a = parents[size_t(a)])
          lever[size_t(a)] = std::max(lever[size_t(a)], glm::length(mp[d] - mp[size_t(a)]));
    }
  });
  std::vector<float> lever(joints, 0.f);
  for (const std::vector<float>& part : partial)
    for (size_t j = 0; j < joints; ++j) lever[j] = std::max(lever[j], part[j]);
  for (float& l : lever) l += shell;
  return lever;
}

// --- segments ---------------------------------------------------------------------------------

CookedCodedStream encodeStream(const std::vector<TrackView>& tracks,
                               const std::vector<Choice>& choices, bool rotation,
                               uint32_t segment_frames, size_t frames, int jobs) {
  const size_t joints = tracks.size();
  const size_t segments = (frames + segment_frames - 1) / segment_frames;
  // The segments of every coded track, in parallel (a stream often has one moving translation
  // among constant ones), then laid out in joint order.
  std::vector<size_t> coded;  // the joints whose tracks are not constant
  for (size_t j = 0; j < joints; ++j)
    if (choices[j].coding.coding != TrackCoding::Constant) coded.push_back(j);
  std::vector<std::vector<std::vector<uint8_t>>> blobs(joints,
                                                       std::vector<std::vector<uint8_t>>(segments));
  // Segment after segment, each across the tracks: a segment's frames are read from the
  // frame-major stream while its cache lines, which hold every joint's values, are still cached.
  parallelFor(0, int(coded.size() * segments), jobs, [&](int item) {
    const size_t j = coded[size_t(item) % coded.size()], s = size_t(item) / coded.size();
    const CookedTrack& coding = choices[j].coding;
    if (!(choices[j].pad > 0)) throw std::logic_error("a coded track's choice lacks its pad");
    const size_t vertex = size_t(vertexBytes(coding.coding, rotation));
    // Each thread's scratch, kept from one segment to the next.
    thread_local std::vector<float> values;
    thread_local std::vector<uint8_t> filtered, encoded;
    const size_t first = s * segment_frames;
    const size_t n = std::min<size_t>(segment_frames, frames - first);
    filterTrack(tracks[j], first, n, coding, rotation, choices[j].pad, values, filtered);
    encoded.resize(meshopt_encodeVertexBufferBound(n, vertex));
    const size_t size =
        meshopt_encodeVertexBuffer(encoded.data(), encoded.size(), filtered.data(), n, vertex);
    if (size == 0) throw std::logic_error("the vertex codec found its output buffer too small");
    // Kept at its size, not the codec's bound: the segments of a stream are held until the
    // last one is coded.
    blobs[j][s].assign(encoded.begin(), encoded.begin() + std::ptrdiff_t(size));
  });
  CookedCodedStream stream;
  for (const Choice& c : choices) stream.tracks.push_back(c.coding);
  size_t total = 0;
  for (const auto& joint : blobs)
    for (const auto& blob : joint) total += blob.size();
  if (total > UINT32_MAX)
    throw InputError("the coded pose streams exceed 4 GiB; cook fewer frames");
  // Sized once, and each segment freed as it is copied: the coded bytes are never held twice.
  stream.data.reserve(total);
  stream.segment_offsets.reserve(joints * segments + 1);
  stream.segment_offsets.push_back(0);
  for (auto& joint : blobs)
    for (auto& blob : joint) {
      stream.data.insert(stream.data.end(), blob.begin(), blob.end());
      std::vector<uint8_t>().swap(blob);
      stream.segment_offsets.push_back(uint32_t(stream.data.size()));
    }
  return stream;
}

void checkSetting(bool ok, const std::string& key, const std::string& rule) {
  if (!ok) throw InputError("compression." + key + " " + rule);
}

// The velocities and the angular velocities: each track on its own, within its stream's
// tolerance at every frame. Both streams' tracks are chosen in one parallelFor, the angular ones
// (all of them moving, the costlier) first, so that the threads end together rather than twice.
// A stream's worst error is the first joint, in joint order, with the largest error, at that
// track's first frame with it. `release(s)` is called for each stream once it is coded.
template <typename Release>
void codeVelocities(CookedDatabase& db, const CompressionSettings& settings,
                    uint32_t segment_frames, int jobs, ScratchShelf& shelf, Release release) {
  const size_t frames = db.frame_count, joints = db.joint_count;
  const std::vector<TrackView> tracks[2] = {viewsOf(db.local_angular_velocities, frames, joints),
                                            viewsOf(db.local_velocities, frames, joints)};
  const float tolerance[2] = {float(settings.angular_velocity_tolerance),
                              float(settings.velocity_tolerance)};
  const int stream_of[2] = {kStreamAngularVelocities, kStreamVelocities};
  std::vector<Choice> choices[2] = {std::vector<Choice>(joints), std::vector<Choice>(joints)};
  parallelFor(0, int(2 * joints), jobs, [&](int t) {
    const size_t s = size_t(t) / joints, j = size_t(t) % joints;
    choices[s][j] = shelf.with([&](ChoiceScratch& buffers) {
      return chooseCoding(tracks[s][j], false, tolerance[s], buffers);
    });
  });
  for (int s : {1, 0}) {  // the velocities first, as the stream order has them
    CookedCodedStream stream =
        encodeStream(tracks[s], choices[s], false, segment_frames, frames, jobs);
    for (size_t j = 0; j < joints; ++j)
      if (choices[s][j].error > stream.max_error) {
        stream.max_error = choices[s][j].error;
        stream.worst_joint = int(j);
        stream.worst_frame = choices[s][j].worst_frame;
      }
    db.pose_coding.streams[size_t(stream_of[s])] = std::move(stream);
    release(stream_of[s]);
  }
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
        stream.tracks.size() * 32 + stream.segment_offsets.size() * 4 + stream.bytes().size();
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
  CookedPoseCoding& coding = db.pose_coding;
  coding.segment_frames = segment_frames;
  coding.position_tolerance = tolerance;
  coding.shell_distance = shell;
  coding.velocity_tolerance = float(settings.velocity_tolerance);
  coding.angular_velocity_tolerance = float(settings.angular_velocity_tolerance);
  // The velocities first: each track is checked on its own, and a cook that releases their raw
  // streams then holds less while the rotations and translations are checked together.
  ScratchShelf shelf;
  codeVelocities(db, settings, segment_frames, jobs, shelf, [&](int stream) {
    release(stream == kStreamVelocities ? db.local_velocities : db.local_angular_velocities);
  });

  const std::vector<TrackView> rot = viewsOf(db.local_rotations, frames, joints);
  const std::vector<TrackView> pos = viewsOf(db.local_translations, frames, joints);
  const std::vector<float> lever = leverArms(parents, rot, pos, frames, shell, jobs);

  // Start each track at half the budget along its lever (errors down a chain add up),
  // then let the model-space check tighten the tracks that carry a joint over the budget.
  constexpr float kShare = 0.5f;  // of 1/3, 1/2 and 1, the smallest file on bandai-1
  std::vector<float> rot_target(joints), pos_target(joints, tolerance * kShare);
  for (size_t j = 0; j < joints; ++j) rot_target[j] = tolerance * kShare / lever[j];
  // Slot j: joint j's rotations; slot joints + j: its translations.
  auto decoded = std::make_unique<DecodedSlots>(2 * joints, frames);
  // `trial_jobs` > 1 for a track chosen again (`previous`, its last choice), alone.
  auto choose = [&](bool is_rot, size_t j, float target, int trial_jobs = 1,
                    const Choice* previous = nullptr) {
    return shelf.with([&](ChoiceScratch& buffers) {
      return is_rot ? chooseCoding(rot[j], true, target, buffers, decoded.get(), j, trial_jobs,
                                   previous)
                    : chooseCoding(pos[j], false, target, buffers, decoded.get(), joints + j,
                                   trial_jobs, previous);
    });
  };
  std::vector<Choice> rot_choice(joints), pos_choice(joints);
  // A track a piece of work (not a joint's two), so that the threads end closer together.
  parallelFor(0, int(2 * joints), jobs, [&](int t) {
    const size_t j = size_t(t / 2);
    if (t % 2 == 0)
      rot_choice[j] = choose(true, j, rot_target[j]);
    else
      pos_choice[j] = choose(false, j, pos_target[j]);
  });
  auto measure = [&](const std::vector<uint8_t>* changed = nullptr,
                     const FkError* previous = nullptr) {
    return measureFk(parents, rot, pos, rot_choice, pos_choice, shell, frames, jobs, changed,
                     previous);
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
    // A round codes a few tracks again (1 to 5 on bandai-1), fewer than the threads or not a
    // multiple of them: one track after another, each trial shared by the threads, so that no
    // thread waits for a round's last track.
    for (const auto& [is_rot, j] : tighten) {
      Choice& c = is_rot ? rot_choice[j] : pos_choice[j];
      if (last_round) {
        c = choose(is_rot, j, 0.f, jobs, &c);  // exact
      } else {
        float& target = is_rot ? rot_target[j] : pos_target[j];
        target = std::min(target, c.error) * 0.5f;
        c = choose(is_rot, j, target, jobs, &c);
      }
    }
    std::vector<uint8_t> changed(joints, 0);
    for (const auto& [is_rot, j] : tighten) changed[j] = 1;
    fk = measure(&changed, &fk);
    if (last_round) {
      // Whatever is still over the budget goes exact along its whole chain.
      for (size_t d = 0; d < joints; ++d)
        if (fk.joint_max[d] > tolerance)
          for (int a = int(d); a >= 0; a = parents[size_t(a)]) {
            rot_choice[size_t(a)] = choose(true, size_t(a), 0.f, jobs, &rot_choice[size_t(a)]);
            pos_choice[size_t(a)] = choose(false, size_t(a), 0.f, jobs, &pos_choice[size_t(a)]);
          }
      fk = measure();
      break;
    }
  }

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
  // Done with the rotations and translations: their decoded tracks and their raw streams.
  std::vector<Choice>().swap(rot_choice);
  std::vector<Choice>().swap(pos_choice);
  decoded.reset();
  release(db.local_rotations);
  release(db.local_translations);

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
        if (meshopt_decodeVertexBuffer(bytes.data(), n, vertex, stream.bytes().data() + begin,
                                       end - begin) != 0)
          throw std::logic_error("a coded segment does not decode");
      }
      unfilter(bytes, n, coding, rotations, out.data() + first * joint_count + j, joint_count);
    }
  }
  return out;
}

}  // namespace mmdb::cook
