// Synthetic cooked databases for runtime tests and benchmarks: smooth features with known
// structure, several clips, tagged ranges, exact bounds. Deterministic for a given spec.
#pragma once

#include "core/cooked_database.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mmdb::test {

struct SyntheticSpec {
  uint32_t clips = 6;
  uint32_t frames_per_clip = 240;
  uint32_t joints = 4;  // a chain off the root, plus a second branch from joint 0
  float frame_rate = 60;
  uint32_t seed = 1;
  float noise = 0.02f;  // per-frame jitter on top of the smooth curves (normalized units)
  // A skeleton with two legs for foot locking (joints >= 9): 0 Hips (the root), 1-4 UpLeg_L,
  // Knee_L, Foot_L, Toe_L, 5-8 the same on the right, then a spine chain. They walk a stride a
  // second, each foot half of it on the ground (its toe's contact bit set) moving back a little
  // slower than the root's 1.2 m/s, so planted toes slide.
  bool legs = false;
};

// Tags: bit 0 "locomotion" (even clips), bit 1 "idle" (odd clips), bit 2 "jump" (the second
// half of clip 0's matchable part, a separate range). Each clip's last 20 frames are not
// matchable. Clip i is named "clip_<i>".
mmdb::cook::CookedDatabase makeSyntheticDatabase(const SyntheticSpec& spec);

// `base` completed to `frames` frames (nothing happens when it already has that many) with
// synthetic clips that follow its motion without repeating it: each synthetic frame blends two of
// base's clips, each played from a random point at a rate that drifts between 0.75x and 1.25x
// (rows interpolated between frames, so no row is a copy of another), with a blend weight that
// moves smoothly between 0 and 1, and its trajectory turned by a smoothly varying angle that grows
// with the sample's time (a random curve the trajectory follows). Pose streams, root motion and
// contacts are those of the nearest frame of the first clip (the search does not read them).
// Synthetic clips are 4 to 12 s long, named "synthetic_<i>", with one range each (all but the
// last trailing_unmatchable_frames) tagged as the first clip's. Bounds are recomputed.
// Deterministic for a given base and seed.
mmdb::cook::CookedDatabase completedWithSynthetic(const mmdb::cook::CookedDatabase& base,
                                                  uint32_t frames, uint32_t seed);

// Recomputes exact per-box min/max of the stored features over the matchable frames (what the
// cook does, mmdb::cook::buildDatabaseBounds).
void computeBounds(mmdb::cook::CookedDatabase& db);

// Cost biases (schema 2.1) on a synthetic database: clip c's bias is -0.25, 0 or 0.25 (c % 3),
// and a range's is its clip's, minus 0.5 for the "jump" ranges (tag bit 2).
void setSyntheticBiases(mmdb::cook::CookedDatabase& db);

// The database normalized again by the cook's normalize stage with these block weights (one per
// feature block, in order): what a cook of the same motion with those weights stores. Bounds
// are recomputed.
mmdb::cook::CookedDatabase reweighted(const mmdb::cook::CookedDatabase& db,
                                      const std::vector<float>& block_weights);

// Bytes on a 64-byte boundary (FlatBuffers data must start 16-aligned for the runtime).
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(const std::vector<uint8_t>& bytes);
  AlignedBytes(const void* data, size_t size);
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t[], Free> data_;
  size_t size_ = 0;
};

// serializeDatabase() into aligned memory.
AlignedBytes serializeAligned(const mmdb::cook::CookedDatabase& db);

// Writes bytes to a file (plain, not atomic: test scratch files).
void writeFile(const char* path, const void* data, size_t size);
std::vector<uint8_t> readFile(const char* path);

}  // namespace mmdb::test
