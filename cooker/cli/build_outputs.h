// What `mmcook cook` gives a build system beyond the database: a depfile naming every input the
// output depends on, and an output left untouched when its bytes would not change (so Ninja's
// restat skips whatever depends on it).
#pragma once

#include "core/cook_settings.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mm {

// Makefile-syntax depfile text: "OUTPUT: INPUT..." with the manifest (when there is one), every
// clip's source file once, and the running mmcook executable; absolute paths, spaces and '#'
// escaped with '\', '$' doubled.
std::string depfileText(const std::string& output, const CookRequest& request);

// True when `path` is a regular file holding exactly `bytes`.
bool fileHoldsBytes(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace mm
