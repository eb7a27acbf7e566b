// `mmcook diff A.mmdb B.mmdb`: what changed between two cooks, in what the files store and in
// what a replay of one stick script decides on each (docs/review.md).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace mmdb::cook {

struct DiffCommandOptions {
  std::string a, b;             // the two .mmdb files
  bool json = false;            // JSON instead of text
  std::string stick;            // a stick file; "" for the built-in script
  int64_t characters = 16;      // replayed characters, 1..256
  double seconds = 20.0;        // replayed seconds, above 0 and at most 600
  bool fail_on_change = false;  // exit with kExitChanged when they differ
  // Thresholds on B's motion measures, "KEY=VALUE[UNIT][,KEY=VALUE[UNIT]...]"
  // (docs/review.md "Data checks"), checked when fail_on_given (an empty list is an error).
  bool fail_on_given = false;
  std::string fail_on;
};

// The first differing decisions listed (one per character, earliest first).
inline constexpr size_t kDiffListedDecisions = 5;

// Compares the two files and prints the result to `out`, then each `fail_on` threshold B's
// replay exceeds to `err`. Returns kExitChanged when a threshold is exceeded, or when
// `fail_on_change` and the files differ (in structure or in a decision); else kExitOk. Throws
// UsageError for characters or seconds out of range or a `fail_on` that does not parse (before
// opening anything), InputError naming the file for a stick file with an error (file:line) or
// a database that does not open or verify, and for thresholds with no replay to check.
int runDiffCommand(const DiffCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace mmdb::cook
