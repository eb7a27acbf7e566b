// `mmcook cook`: a manifest (or motion files with default settings) in, an .mmdb out.
#pragma once

#include "core/cook_settings.h"

#include <string>
#include <vector>

namespace mm {

struct CookCommandOptions {
  std::vector<std::string> inputs;  // one .toml manifest, or motion files (the quick form)
  std::string output;
  int jobs = 0;          // 0 = all cores
  bool verify = false;   // reopen the written file with the runtime and check it
  bool quiet = false;    // no summary, no progress
  std::string depfile;   // when set, a Makefile-syntax depfile of the output's inputs goes here
  std::string report;    // when set, a JSON report of the cook goes here
};

// Throws UsageError for a bad combination of inputs, InputError for anything in the inputs, and
// writes the output (atomically) only when everything succeeded. Returns the exit code.
int runCookCommand(const CookCommandOptions& options);

// The request the quick form builds: one clip per file, named by its stem, default settings.
// Throws InputError when a file is missing or two files share a stem.
CookRequest quickRequest(const std::vector<std::string>& files);

}  // namespace mm
