// The file's pose streams, raw or coded, for the open checks (database/checks.cpp) and the decoder
// (pose_decode.cpp).
#pragma once

#include "mmdb/database.h"
#include "mmdb/mmdb_generated.h"

namespace mmdb {

// The coded stream of a pose stream, or null when it is raw.
const fb::CodedStream* codedStream(const fb::Database& db, PoseStream stream) noexcept;
// The raw vector of a pose stream, or null when it is absent (coded).
const flatbuffers::Vector<const fb::Vec4*>* rawStream(const fb::Database& db,
                                                      PoseStream stream) noexcept;
// "local_rotations", ...: the schema's field names.
const char* poseStreamName(PoseStream stream) noexcept;

}  // namespace mmdb
