#include "sample_options.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace mmdb::sample {
namespace {

constexpr int kMaxCharacters = 100000;
constexpr double kMaxSeconds = 3600.0;

bool parse_int(std::string_view text, int& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

bool parse_double(const std::string& text, double& value) {
  try {
    std::size_t used = 0;
    value = std::stod(text, &used);
    return used == text.size() && std::isfinite(value);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::string usage_text(const char* program) {
  return std::string("Usage: ") + program +
         " DATABASE.mmdb [options]\n"
         "Plays a scripted stick path through a motion-matching database, as a game would.\n"
         "\n"
         "Options:\n"
         "  --characters N     characters to simulate, each at its own point of the script (1)\n"
         "  --seconds S        simulated seconds at 60 Hz (20)\n"
         "  --exhaustive       exhaustive search instead of the bounds-pruned one\n"
         "  --quiet-decisions  print the summary only, not each decision\n"
         "  --svg FILE         plot of desired vs achieved trajectory of character 0 (sample.svg)\n"
         "  --stick FILE       play this stick file instead of the built-in script (one segment a\n"
         "                     line: SECONDS HEADING MAGNITUDE walk|run [face=FACING] NAME;\n"
         "                     docs/runtime.md)\n"
         "  --gpu              run the crowd on the GPU (Vulkan compute) instead of the CPU\n"
         "  --explain          after each search, its winner and the next two candidates with\n"
         "                     each feature block's part of their cost (CPU crowd)\n"
         "  --no-foot-locking  show the feet as the clips move them: no planted toe is held in\n"
         "                     place and no leg is bent to one (the motion measures then show\n"
         "                     the database's own foot slide)\n"
         "  --start-stagger K  spread the characters' first searches over K search intervals\n"
         "                     (0 to 16; 0: all in the first step), each character showing\n"
         "                     nothing until its own\n"
         "  --speed-limit X    hold a transition back where it would move a joint more than X\n"
         "                     times its fastest step in the clips (the crowd's default 1.4;\n"
         "                     0: off; docs/runtime.md \"Transition speed limit\")\n"
         "  --sync MODE        where the character goes against its controller: character\n"
         "                     (the default: it follows the controller, adjusted within the\n"
         "                     clamp), controller (the controller follows the character's\n"
         "                     root motion) or none (root motion alone); docs/runtime.md\n"
         "  --sync-halflife S  the adjustment's position half-life, s (> 0; rotation: 2 S)\n"
         "  --sync-ratio X     the adjustment per step at most X times the step's own motion\n"
         "  --sync-distance M  past this from its controller (m) the character is brought back\n"
         "                     as far as its planted feet allow\n"
         "  --sync-hard-distance M  the most it may be from its controller, m\n"
         "  --sync-reach M     how far the adjustment may carry a planted toe from its lock, m\n"
         "  --rate-min X, --rate-max X  play-rate matching: clips play at the stick's speed\n"
         "                     within these rates (1 and 1: off)\n"
         "  --stride-min X, --stride-max X  stride warping (CPU crowd): the root motion and\n"
         "                     the feet scaled along the way the clip goes, within these\n"
         "                     (1 and 1: off)\n"
         "  --warp-angle DEG   orientation warping (CPU crowd): the way the clip goes turned\n"
         "                     towards the controller's by at most DEG (0: off, at most 90)\n"
         "  --warp-halflife S  how fast the warping eases to its aim, s (> 0)\n"
         "  --sync-angle DEG   the most it may be turned from the controller's facing, degrees\n"
         "  -h, --help         this text\n"
         "\n"
         "Exit codes: 0 success, 1 the database cannot be used (or no GPU), 2 bad usage.\n";
}

bool parse_options(int argc, const char* const* argv, SampleOptions& options, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) {
        error = arg + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "--characters") {
      if (!value(text)) return false;
      if (!parse_int(text, options.characters) || options.characters < 1 ||
          options.characters > kMaxCharacters) {
        error = "--characters wants a whole number from 1 to " + std::to_string(kMaxCharacters) +
                ", got '" + text + "'";
        return false;
      }
    } else if (arg == "--seconds") {
      if (!value(text)) return false;
      if (!parse_double(text, options.seconds) || options.seconds <= 0.0 ||
          options.seconds > kMaxSeconds) {
        error = "--seconds wants a number of seconds above 0 and at most 3600, got '" + text + "'";
        return false;
      }
    } else if (arg == "--svg") {
      if (!value(options.svg_path)) return false;
      if (options.svg_path.empty()) {
        error = "--svg wants a file name";
        return false;
      }
    } else if (arg == "--stick") {
      if (!value(options.stick_path)) return false;
      if (options.stick_path.empty()) {
        error = "--stick wants a file name";
        return false;
      }
    } else if (arg == "--exhaustive") {
      options.exhaustive = true;
    } else if (arg == "--quiet-decisions") {
      options.quiet_decisions = true;
    } else if (arg == "--gpu") {
      options.gpu = true;
    } else if (arg == "--explain") {
      options.explain = true;
    } else if (arg == "--no-foot-locking") {
      options.foot_locking = false;
    } else if (arg == "--start-stagger") {
      if (!value(text)) return false;
      if (!parse_int(text, options.start_stagger) || options.start_stagger < 0 ||
          options.start_stagger > 16) {
        error = "--start-stagger wants a whole number of search intervals from 0 to 16, got '" +
                text + "'";
        return false;
      }
    } else if (arg == "--speed-limit") {
      if (!value(text)) return false;
      if (!parse_double(text, options.speed_limit) || !(options.speed_limit >= 0.0) ||
          options.speed_limit > 100.0) {
        error = "--speed-limit wants a multiple of the clips' speed from 0 (off) to 100, got '" +
                text + "'";
        return false;
      }
    } else if (arg == "--sync") {
      if (!value(text)) return false;
      if (text == "none")
        options.sync_mode = 0;
      else if (text == "character")
        options.sync_mode = 1;
      else if (text == "controller")
        options.sync_mode = 2;
      else {
        error = "--sync wants character, controller or none, got '" + text + "'";
        return false;
      }
    } else if (arg == "--sync-halflife" || arg == "--sync-ratio" || arg == "--sync-distance" ||
               arg == "--sync-angle" || arg == "--sync-hard-distance" || arg == "--sync-reach" ||
               arg == "--rate-min" || arg == "--rate-max" || arg == "--stride-min" ||
               arg == "--stride-max" || arg == "--warp-angle" || arg == "--warp-halflife") {
      if (!value(text)) return false;
      double& target = arg == "--sync-halflife"        ? options.sync_halflife
                       : arg == "--sync-ratio"         ? options.sync_ratio
                       : arg == "--sync-distance"      ? options.sync_distance
                       : arg == "--sync-hard-distance" ? options.sync_hard_distance
                       : arg == "--sync-reach"         ? options.sync_reach
                       : arg == "--rate-min"           ? options.rate_min
                       : arg == "--rate-max"           ? options.rate_max
                       : arg == "--stride-min"         ? options.stride_min
                       : arg == "--stride-max"         ? options.stride_max
                       : arg == "--warp-angle"         ? options.warp_angle
                       : arg == "--warp-halflife"      ? options.warp_halflife
                                                       : options.sync_angle;
      const bool positive = arg == "--sync-halflife" || arg == "--warp-halflife";
      const double most = arg == "--sync-angle"   ? 180.0
                          : arg == "--warp-angle" ? 90.0
                          : arg == "--stride-min" ? 1.0
                          : arg == "--stride-max" ? 4.0
                                                  : 1000.0;
      const double least = arg == "--stride-max" ? 1.0 : 0.0;
      if (!parse_double(text, target) || !(positive ? target > least : target >= least) ||
          !(target <= most)) {
        char range[64];
        std::snprintf(range, sizeof range, "%s %g to %g", positive ? "above" : "from", least, most);
        error = arg + " wants a number " + range + ", got '" + text + "'";
        return false;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      error = "unknown option '" + arg + "' (see --help)";
      return false;
    } else if (options.database_path.empty()) {
      options.database_path = arg;
    } else {
      error = "one database only: got '" + options.database_path + "' and '" + arg + "'";
      return false;
    }
  }
  if (options.explain && options.gpu) {
    error = "--explain takes apart the CPU crowd's searches; leave out --gpu";
    return false;
  }
  if (!options.help && options.database_path.empty()) {
    error = "no database given: pass the .mmdb file that mmcook wrote";
    return false;
  }
  return true;
}

void apply_sync_options(const SampleOptions& options, mmdb::SynchronizationSettings& sync) {
  if (options.sync_mode >= 0) sync.mode = static_cast<mmdb::Synchronization>(options.sync_mode);
  if (options.sync_halflife >= 0) {
    sync.position_halflife = float(options.sync_halflife);
    sync.rotation_halflife = float(2.0 * options.sync_halflife);
  }
  if (options.sync_ratio >= 0) {
    sync.position_ratio = float(options.sync_ratio);
    sync.rotation_ratio = float(options.sync_ratio);
  }
  if (options.sync_distance >= 0) sync.max_distance = float(options.sync_distance);
  if (options.sync_hard_distance >= 0) sync.hard_distance = float(options.sync_hard_distance);
  if (options.sync_reach >= 0) sync.foot_reach = float(options.sync_reach);
  if (options.rate_min >= 0) sync.rate_min = float(options.rate_min);
  if (options.rate_max >= 0) sync.rate_max = float(options.rate_max);
  if (options.stride_min >= 0) sync.stride_min = float(options.stride_min);
  if (options.stride_max >= 0) sync.stride_max = float(options.stride_max);
  if (options.warp_angle >= 0) sync.warp_angle = float(options.warp_angle * 3.14159265358979 / 180);
  if (options.warp_halflife >= 0) sync.warp_halflife = float(options.warp_halflife);
  if (options.sync_angle >= 0) sync.max_angle = float(options.sync_angle * 3.14159265358979 / 180);
}

}  // namespace mmdb::sample
