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

// Makefile-syntax depfile text: "TARGET: INPUT..." with the manifest (when there is one), every
// clip's source file once, and the running mmcook executable; inputs as absolute paths, spaces
// and '#' escaped with '\' (a run of backslashes before them doubled), '$' doubled, as Ninja
// 1.11 and Make read them. `target` as depfileTarget() gives it. Throws InputError naming a path
// no depfile can carry (a quote, ';', '*', a tab, a newline, ...; checkDepfilePaths).
std::string depfileText(const std::string& target, const CookRequest& request);
// The same for a list of inputs (mmcook itself is added).
std::string depfileText(const std::string& target, const std::vector<std::string>& inputs);
// Throws InputError, naming the path and the character and saying to rename the folder, when
// the target, an input (as an absolute path) or mmcook cannot be written in a depfile so that
// Ninja reads it back: checked before a cook, so that it fails before anything is written.
void checkDepfilePaths(const std::string& target, const std::vector<std::string>& inputs);
// What a depfile names as its target: `given` (--depfile-target: the output as the build file
// spells it, which Ninja compares with the edge's output) or else the output's absolute path.
std::string depfileTarget(const std::string& output, const std::string& given);

// The JSON report's format (docs/cook-report.md; schema/cook-report.schema.json checks it). A
// new field keeps the number; a field that changes meaning or goes away takes the next one.
inline constexpr int kCookReportFormat = 1;

// What the cook did, for --report: the summary's facts, the warnings with their codes and
// clips, the time of each stage and the output's hash. One JSON object, "status": "ok".
struct CookReportFacts {
  bool link = false;  // "command": "link" (else "cook")
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

// Why a cook failed, for the report it leaves instead of the last success's.
struct CookFailure {
  std::string code;     // "bad-input", "bad-usage", "warnings-as-errors", "internal"
  int exit_code = 0;    // mmcook's
  std::string message;  // the whole message, as printed after "error: "
  std::string file;     // the file the message names first, when it starts with one ("" else)
  int line = 0;         // the line it names in that file, or 0
};
// The failure from an error's message: `file` and `line` when the message starts with
// "FILE:LINE: " or "FILE: " for one of `inputs` (the manifest and the sources the cook read).
CookFailure cookFailure(std::string code, int exit_code, std::string message,
                        const std::vector<std::string>& inputs);
// "status": "failed", the error, and what the cook found before it failed (its warnings; may be
// null).
std::string failedCookReportJson(bool link, const std::string& output, const std::string& manifest,
                                 const CookReport* partial, const CookFailure& failure,
                                 double seconds);

// True when `path` is a regular file holding exactly `bytes`.
bool fileHoldsBytes(const std::string& path, std::span<const uint8_t> bytes);
bool fileHoldsBytes(const std::string& path, const SerializedDatabase& bytes);
bool fileHoldsBytes(const std::string& path, std::span<const std::span<const uint8_t>> pieces);

}  // namespace mmdb::cook
