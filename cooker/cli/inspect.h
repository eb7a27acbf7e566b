// `mmcook inspect` and `mmcook inspect-source`: what a cooked database or a motion file holds.
#pragma once

#include <ostream>
#include <string>

namespace mmdb::cook {

// Opens `path` with the runtime's checks (identifier, version, alignment, verifier, semantic
// checks) and prints its header, settings, skeleton roles, sources, clips, tags, matchable
// ranges, feature blocks and the size of each section; as JSON when `json`.
// Throws InputError with the runtime's reason when the file does not open.
void inspectDatabase(const std::string& path, bool json, std::ostream& out);

// Imports `path` far enough to list its takes (rate, frames, duration) and its joints.
void inspectSource(const std::string& path, std::ostream& out);

}  // namespace mmdb::cook
