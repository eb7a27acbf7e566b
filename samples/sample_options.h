// Command line of mmdb_sample. Parsed by hand: the sample links the runtime only, as a game
// would, and needs none of the cooker's dependencies.
#pragma once

#include <mmdb/synchronization.h>

#include <string>

namespace mmdb::sample {

struct SampleOptions {
  std::string database_path;
  int characters = 1;
  double seconds = 20.0;
  bool exhaustive = false;       // exhaustive CPU search instead of the bounds-pruned one
  bool quiet_decisions = false;  // print the summary only
  std::string svg_path = "sample.svg";
  std::string stick_path;    // a stick file (mmdb/stick_script.h); empty: the built-in script
  bool gpu = false;          // run the crowd through the Vulkan compute runtime
  bool explain = false;      // after each search, its three best candidates block by block (CPU)
  bool foot_locking = true;  // planted toes held where they land, the legs bent to them (IK)
  int start_stagger = 0;     // CrowdSettings::start_stagger_intervals: the starts spread over
                             // this many search intervals (0: every character starts at once)
  double speed_limit = -1;   // CrowdSettings::transition_speed_limit; below 0: the crowd's default
  // CrowdSettings::synchronization: the mode (0 none, 1 the character follows the controller, 2
  // the controller follows the character) and its settings; below 0: the crowd's default.
  int sync_mode = -1;
  double sync_halflife = -1;                // position_halflife (the rotation's is twice it)
  double sync_ratio = -1;                   // position_ratio and rotation_ratio
  double sync_distance = -1;                // max_distance, m
  double sync_hard_distance = -1;           // hard_distance, m
  double sync_reach = -1;                   // foot_reach, m
  double rate_min = -1, rate_max = -1;      // rate_min, rate_max (play-rate matching)
  double stride_min = -1, stride_max = -1;  // stride_min, stride_max (stride warping)
  double warp_angle = -1;                   // warp_angle, degrees (orientation warping)
  double warp_halflife = -1;                // warp_halflife, s
  double sync_angle = -1;                   // max_angle, degrees
  bool help = false;
};

// Exit codes, as mmcook's: 0 success, 1 bad input (the database, or no GPU for --gpu),
// 2 bad usage, 3 internal error (the runtime refused a call the sample made).
enum ExitCode : int { kExitSuccess = 0, kExitBadInput = 1, kExitBadUsage = 2, kExitInternal = 3 };

// Parses argv. Returns false and sets `error` (one line saying what is wrong) on bad usage.
bool parse_options(int argc, const char* const* argv, SampleOptions& options, std::string& error);

// The --sync options applied to a crowd's synchronization settings (those below 0 keep the
// crowd's default).
void apply_sync_options(const SampleOptions& options, mmdb::SynchronizationSettings& sync);

// The --help text.
std::string usage_text(const char* program);

}  // namespace mmdb::sample
