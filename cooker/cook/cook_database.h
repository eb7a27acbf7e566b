// The whole cook: import every clip, run the stages of docs/cook.md "Order of the stages" in parallel over
// clips, then normalize, build ranges and bounds over the whole database. Deterministic: the
// result does not depend on request.jobs.
#pragma once

#include "core/cook_settings.h"
#include "core/cooked_database.h"

#include <functional>
#include <string>
#include <vector>

namespace mm {

struct CookReport {
  std::string preset;                  // role preset picked ("" when all roles were given)
  std::vector<std::string> role_lines; // "left_foot: LeftFoot (joint 4)", ...
  double unit_scale = 0;               // metres per source unit that was applied
  std::string unit_scale_origin;       // "manifest", "file", "preset" or "inferred from hip height"
  long long source_frames = 0;         // frames read from the sources
  std::vector<std::string> warnings;   // also logged as they happen
};

// Called from the cooking threads with (clips done, clip count); may be empty.
using CookProgress = std::function<void(int done, int total)>;

// Throws InputError for anything a user can fix (file, clip, frame or joint named).
CookedDatabase cookDatabase(const CookRequest& request, CookReport* report = nullptr,
                            const CookProgress& progress = {});

}  // namespace mm
