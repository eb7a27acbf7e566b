// The checks Database::adopt runs on a file, in this order: its version before the FlatBuffers
// verifier, then where its arrays start and what its values mean (database/checks.cpp)
// (internal). Each returns an error naming what is wrong.
#pragma once

#include "mmdb/database.h"
#include "mmdb/mmdb_generated.h"

#include <cstddef>
#include <cstdint>

namespace mmdb::detail {

// Reads the version without trusting the buffer: it must be checked before the verifier so a
// file from another major gets the re-cook message rather than "corrupt".
Status checkVersion(const uint8_t* bytes, size_t size);

// Every array read in place starts on its element's boundary (after the verifier).
Status checkAlignment(const fb::Database& db);

// What the verifier cannot see: counts, finite values, clips, ranges, features and bounds.
Status checkSemantics(const fb::Database& db);

}  // namespace mmdb::detail
