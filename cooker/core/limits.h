// What mmcook accepts, derived from what real motion capture needs (docs/command-line.md
// "Limits"). Every limit is checked before the memory it bounds is allocated, and a file beyond
// one is refused with exit 1, the number and what to do.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mmdb::cook {

// Frame rates of sources and of the database, Hz. Mocap runs at 24 to 480 Hz.
constexpr double kMinFrameRate = 1, kMaxFrameRate = 1000;
// Length of one clip (source frames first to last), seconds: a day.
constexpr double kMaxClipSeconds = 24.0 * 3600.0;
// Joint samples (frames x joints) of one imported clip: 2^25, about 1 GB while it cooks, and
// more than a database holds at 64 bytes per sample.
constexpr size_t kMaxClipSamples = size_t{1} << 25;
// The largest .mmdb the runtime opens (mmdb::kMaxFileBytes: FlatBuffers offsets are 32-bit).
constexpr uint64_t kMaxDatabaseBytes = (uint64_t{1} << 31) - 2;
// Bytes of the .mmdb per joint sample (four vec4 pose streams) and per frame (root motion,
// contacts, a 28-float feature row and its share of the bounds boxes), for the size estimate.
constexpr uint64_t kFileBytesPerSample = 64, kFileBytesPerFrame = 200;
// Peak memory of a cook per byte of the database it makes: the cooked clips, the assembled
// database and the serialized bytes are alive at once.
constexpr uint64_t kCookMemoryPerFileByte = 3;

// The estimated size of the .mmdb holding `frames` frames of `joints` joints.
constexpr uint64_t estimatedDatabaseBytes(uint64_t frames, uint64_t joints) {
  return frames * (joints * kFileBytesPerSample + kFileBytesPerFrame);
}

}  // namespace mmdb::cook
