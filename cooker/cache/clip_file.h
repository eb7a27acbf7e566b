// The .mmclip file (schema/mmclip.fbs): one clip's part of the cook, as `mmcook cook-clip` writes
// it and `mmcook link` and the clip cache read it.
#pragma once

#include "cache/intermediate_file.h"
#include "cook/cook_database.h"

#include <flatbuffers/flatbuffers.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace mmdb::cook {

// The format's version. A reader takes its own major with any minor; the cooker version must
// match too, since a part is only valid for the cooker that made it.
inline constexpr uint16_t kClipFormatMajor = 3;
inline constexpr uint16_t kClipFormatMinor = 0;

// A part and the key (clipKey) it was cooked under.
struct ClipFile {
  std::string key;
  ClipPart part;
};

// The bytes of a .mmclip: the FlatBuffers buffer, whose bulk is the four pose streams, and the
// trailer with their checksums (intermediate_file.h).
using ClipFileBytes = IntermediateBytes;
// Deterministic.
ClipFileBytes serializeClipFile(const std::string& key, const ClipPart& part);

// Checks and reads .mmclip bytes: the checksum, the FlatBuffers structure, the format and cooker
// versions, and that every array has the size the clip's frame and joint counts give, with
// finite values. Throws InputError "<what>: <what is wrong>; <what to do>".
// PartPoses::Skip neither reads nor checks the pose streams (nor their checksum), and leaves them
// out of the part.
ClipFile parseClipFile(const uint8_t* data, size_t size, const std::string& what,
                       PartPoses poses = PartPoses::Read);

// Reads and parses the file at `path`. Throws InputError naming it.
// PartPoses::Skip reads only the bytes before the pose streams (a HeadReader per thread).
ClipFile readClipFile(const std::string& path, PartPoses poses = PartPoses::Read);

// The key's first line that differs between two keys, as "'<a line>' against '<b line>'", for
// messages that say why a part does not fit.
std::string firstKeyDifference(const std::string& a, const std::string& b);
// The first line where keys `a` and `b` differ, as (a's line, b's line); equal lines when the keys
// are equal.
std::pair<std::string, std::string> firstDifferingLines(const std::string& a, const std::string& b);

}  // namespace mmdb::cook
