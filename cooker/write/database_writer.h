// CookedDatabase -> .mmdb bytes (schema/mmdb.fbs), and the atomic write of those bytes.
#pragma once

#include "core/cooked_database.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mmdb::cook {

// Serializes every field of `db` into a FlatBuffers buffer with the "MMDB" identifier.
// Deterministic: the same database gives the same bytes (every field is written, even when it
// equals its default; nothing depends on time or memory addresses). Arrays the GPU reads
// (Vec4 streams, root motion, features and bounds) start at 16-byte offsets from the buffer start.
// Vectors are written padded to four floats (w = 0); quaternions as x, y, z, w.
std::vector<uint8_t> serializeDatabase(const CookedDatabase& db);
// The same bytes left in the builder's buffer (no copy into a vector; the buffer asks for 2 MB
// pages where the system has them). What mmcook writes: a database is often tens of MB.
flatbuffers::DetachedBuffer serializeDatabaseBuffer(const CookedDatabase& db);

// The schema's PoseCoding table of `coding`, as the database holds it (the clip cache keeps it
// too, in an .mmposes file).
flatbuffers::Offset<fb::PoseCoding> writePoseCoding(flatbuffers::FlatBufferBuilder& fbb,
                                                    const CookedPoseCoding& coding);

// Writes `bytes` to `path` through a temporary file in the same folder, flushed to disk and then
// renamed over `path`, so a reader sees the old file or the new one, never a partial one. The
// temporary file is unnamed while it is written (O_TMPFILE, where the file system has it), so a
// cook killed meanwhile leaves nothing; it gets a name only for the rename.
// Throws InputError naming the path, the system's reason and what to do; on failure an existing
// file at `path` is untouched and no temporary file is left behind.
void writeFileAtomically(const std::string& path, std::span<const uint8_t> bytes);
inline void writeFileAtomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  writeFileAtomically(path, std::span<const uint8_t>(bytes));
}

// Checks, before a long cook, that writeFileAtomically(path, ...) can create its temporary file
// (the folder exists and is writable, `path` is not a folder). Throws the same InputError it
// would; leaves nothing behind. Also removes the `<path>.tmp.<pid>.<n>` files of cooks that
// were killed (process <pid> no longer runs).
void checkWritable(const std::string& path);

}  // namespace mmdb::cook
