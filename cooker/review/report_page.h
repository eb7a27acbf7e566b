// The pieces of the `mmcook report` page that its sections share (html_report.cpp,
// coverage_view.cpp, replay_view.cpp, changes_view.cpp): text helpers, the page being written,
// and each database's data. Internal to the report.
#pragma once

#include "review/diff.h"
#include "review/html_report.h"
#include "review/replay.h"
#include "review/report_data.h"

#include <mmdb/database.h>
#include <mmdb/search.h>
#include <mmdb/stick_script.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mmcook::review::html {

inline constexpr float kPi = 3.14159265358979f;

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Text for HTML content and attribute values.
std::string escape(std::string_view text);

// A cost with 3 significant digits, "no match" when not finite.
std::string costText(float cost);

// Low cost green, through yellow, to red; grey for no match. `t` in [0, 1].
std::string costColour(float t);

// A global frame as "clip, local frame N" ("-" for -1).
std::string answeredBy(const mmdb::Database& db, int32_t frame);

const char* reasonName(mmdb::SearchReason reason);

struct Page {
  std::string html;
  void operator+=(const std::string& s) { html += s; }
  void operator+=(const char* s) { html += s; }
};

// Both databases of the page and what is derived from each.
struct Side {
  std::string label;  // "A" or "B"
  ReportDatabase input;
  Timeline timeline;
  std::vector<BlockHistogram> histograms;
  std::optional<CoverageMap> coverage;
  std::string coverage_error;  // why there is no map
  std::optional<Replay> replay;
  std::string replay_error;                    // why there is no replay
  std::vector<mmdb::ClipSlide> straight = {};  // each clip's own feet played straight, clip order
};

void openColumns(Page& page, size_t n);
void openPanel(Page& page, const Side& side, const std::string& section, size_t sides);

// Whether some feature block's cooked weight differs between the two databases (or their blocks
// differ): their costs are then on different scales.
bool weightsDiffer(const mmdb::Database& a, const mmdb::Database& b);

// The sections each file draws.
void coverageSection(Page& page, const std::vector<Side>& sides, const std::string& incomparable);
void replaySection(Page& page, const std::vector<Side>& sides, const std::string& script_name,
                   const mmdb::StickScript& script, const ReplaySettings& settings);
void changesSection(Page& page, const std::vector<Side>& sides, const StructureDiff& d);

}  // namespace mmcook::review::html
