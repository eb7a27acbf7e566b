// `mmcook report`: one self-contained HTML page (inline SVG, CSS and script; no network access)
// that shows a cooked database, or two side by side: the clip timeline, each feature block's
// distribution, the coverage map and a replay of a stick script with its motion measures and the
// clips where feet slide most (docs/report.md says what each section shows).
#pragma once

#include "review/replay.h"
#include "review/report_data.h"

#include <mmdb/database.h>
#include <mmdb/stick_script.h>

#include <cstdint>
#include <string>

namespace mmcook::review {

struct ReportSettings {
  uint32_t histogram_bins = 32;
  CoverageSettings coverage;
  ReplaySettings replay;                      // 16 characters, 20 s
  const mmdb::StickScript* script = nullptr;  // null: mmdb::StickScript::builtIn()
  std::string script_name;                    // how the page names the script, for a file
};

// An open database and the path it was opened from (shown in the page).
struct ReportDatabase {
  std::string path;
  const mmdb::Database* db = nullptr;
};

// The page for `a`, or for `a` and `b` side by side on every section when `b` is not null (A
// the older database, B the newer; the page then leads with what changed from A to B).
// Sections that cannot compare the two (features and the coverage pose need the same skeleton
// and feature blocks) show each database on its own and say why.
std::string renderReport(const ReportDatabase& a, const ReportDatabase* b,
                         const ReportSettings& settings = {});

// What `mmcook report DB -o OUT [--compare OLD] [--stick FILE]` does. Compared, the page shows
// OLD as A and DB as B, the order of `mmcook diff OLD DB`.
struct ReportOptions {
  std::string database;  // the database reported on (B when compared)
  std::string compare;   // "" for none; else the one it is compared against (A)
  std::string output;
  std::string stick;                   // a stick file for the replay; "" for the built-in script
  int64_t characters = 16;             // replayed characters, 1 to kMaxReplayCharacters
  double seconds = 20.0;               // replayed seconds, 1 to kMaxReplaySeconds
  std::string replay_feet = "locked";  // "locked" (foot locking on) or "clips" (the clips' feet)
};

// Opens the database(s) with the runtime's checks, renders the page and writes it atomically
// (a temporary file renamed over `output`, so a failure leaves no partial report). Throws
// mmdb::cook::UsageError for characters or seconds out of range or replay_feet neither "locked"
// nor "clips" (before opening anything), and
// mmdb::cook::InputError naming the file that does not open (a database or the stick file) or
// the output that cannot be written, and what to do.
void writeReport(const ReportOptions& options);

}  // namespace mmcook::review
