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
  // Thresholds on B's motion measures, "KEY=VALUE[UNIT],...": exit with kExitChanged when one is
  // exceeded (docs/review.md "Data checks"). Empty: none.
  std::string fail_on;
};

// The first differing decisions listed (one per character, earliest first).
inline constexpr size_t kDiffListedDecisions = 5;

// Compares the two files and prints the result to `out`. Returns kExitOk, or kExitChanged when
// `fail_on_change` and the files differ (in structure or in a decision), or when a `fail_on`
// threshold is exceeded. Throws UsageError for characters or seconds out of range, a `fail_on`
// that does not parse (unknown key, bad number or unit), InputError naming the file for a stick
// file with an error (file:line) or a database that does not open or verify.
int runDiffCommand(const DiffCommandOptions& options, std::ostream& out);

}  // namespace mmdb::cook
