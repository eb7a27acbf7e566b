// The .mmposes file (schema/mmposes.fbs): a database's coded pose streams, as the clip cache keeps
// them for the next cook of the same clips with the same compression settings.
#pragma once

#include "cache/intermediate_file.h"
#include "cook/cook_database.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mmdb::cook {

// The format's version. A reader takes its own major with any minor; the cooker version must
// match too, since the coding is only valid for the cooker that made it.
inline constexpr uint16_t kPoseFileFormatMajor = 1;
inline constexpr uint16_t kPoseFileFormatMinor = 0;

// A pose coding and the key (poseCodingKey) it was made under.
struct PoseFile {
  std::string key;
  StoredPoseCoding stored;  // every stream coded
};

// The bytes of an .mmposes: the FlatBuffers buffer and its checksum (intermediate_file.h).
// Deterministic.
IntermediateBytes serializePoseFile(const std::string& key, uint32_t frame_count,
                                    uint32_t joint_count, const CookedPoseCoding& coding);

// Checks and reads .mmposes bytes: the checksum, the FlatBuffers structure, the format and cooker
// versions, and that every stream has a track per joint and segment offsets that fit its data.
// Throws InputError "<what>: <what is wrong>; <what to do>". With a `keeper` that keeps the
// bytes alive, the coded data is borrowed from them (CookedCodedStream::borrowed), else copied.
PoseFile parsePoseFile(const uint8_t* data, size_t size, const std::string& what,
                       std::shared_ptr<const void> keeper = nullptr);

// Reads and parses the file at `path`, mapped: the coding borrows its coded data from the
// mapping, which lives as long as the coding. Throws InputError naming it.
PoseFile readPoseFile(const std::string& path);

}  // namespace mmdb::cook
