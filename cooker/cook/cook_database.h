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

// A warning of the cook, as logged, with the clip it is about when it is about one.
struct CookWarning {
  std::string text;    // the whole message
  std::string source;  // the clip's source as the manifest names it, or ""
  std::string clip;    // the clip's name, or ""
};

struct CookReport {
  std::string preset;                  // role preset picked ("" when all roles were given)
  std::vector<std::string> role_lines; // "left_foot: LeftFoot (joint 4)", ...
  double unit_scale = 0;               // metres per source unit that was applied
  std::string unit_scale_origin;       // "manifest", "file", "preset" or "inferred from hip height"
  long long source_frames = 0;         // frames read from the sources
  std::vector<CookWarning> warnings;   // also logged as they happen
  // Wall time of each part of the cook, in order ("import and clip stages", "assembly", ...).
  std::vector<std::pair<std::string, double>> stage_seconds;
};

// Called from the cooking threads with (clips done, clip count); may be empty.
using CookProgress = std::function<void(int done, int total)>;

// Throws InputError for anything a user can fix (file, clip, frame or joint named).
CookedDatabase cookDatabase(const CookRequest& request, CookReport* report = nullptr,
                            const CookProgress& progress = {});

}  // namespace mm
