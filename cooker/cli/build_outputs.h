// What `mmcook cook` gives a build system beyond the database: a depfile naming every input the
// output depends on, a JSON report of the cook, and an output left untouched when its bytes would
// not change (so Ninja's restat skips whatever depends on it).
#pragma once

#include "compress/pose_compression.h"
#include "cook/cook_database.h"
#include "core/cook_settings.h"
#include "core/cooked_database.h"
#include "write/database_writer.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mmdb::cook {

// Makefile-syntax depfile text: "OUTPUT: INPUT..." with the manifest (when there is one), every
// clip's source file once, and the running mmcook executable; absolute paths, spaces and '#'
// escaped with '\', '$' doubled.
std::string depfileText(const std::string& output, const CookRequest& request);
// The same for a list of inputs (mmcook itself is added).
std::string depfileText(const std::string& output, const std::vector<std::string>& inputs);

// What the cook did, for --report: the summary's facts, the warnings with their clip, the time of
// each stage and the output's hash. One JSON object.
struct CookReportFacts {
  const CookRequest* request = nullptr;
  const CookedDatabase* db = nullptr;
  const CookReport* report = nullptr;
  const CompressionReport* compression = nullptr;  // may be null: no "compression" object
  std::string output;
  const SerializedDatabase* bytes = nullptr;  // what the output holds
  bool unchanged = false;  // the output already held these bytes and was left alone
  bool verified = false;
  double seconds = 0;  // the whole command
  std::string cache;   // the clip cache folder, or "" when the cook used none
};
std::string cookReportJson(const CookReportFacts& facts);

// True when `path` is a regular file holding exactly `bytes`.
bool fileHoldsBytes(const std::string& path, std::span<const uint8_t> bytes);
bool fileHoldsBytes(const std::string& path, const SerializedDatabase& bytes);

}  // namespace mmdb::cook
