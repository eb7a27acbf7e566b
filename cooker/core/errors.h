// Errors a user can cause carry what, where and what to do; mmcook maps them to exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace mmdb::cook {

// Bad input: a file, a manifest, a joint. mmcook exits with 1.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bad usage of the command line. mmcook exits with 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// kExitChanged: `mmcook diff --fail-on-change` found the two files differ, or `--fail-on` one of
// B's motion measures over its threshold.
enum ExitCode : int {
  kExitOk = 0,
  kExitBadInput = 1,
  kExitUsage = 2,
  kExitInternal = 3,
  kExitChanged = 4
};

}  // namespace mmdb::cook
