// mmcook: cooks motion capture into a motion-matching database, inspects and compares the
// result, and writes an HTML report of it.
// Exit codes: 0 ok, 1 bad input, 2 bad usage, 3 internal error, 4 `diff --fail-on-change` found a
// change or `diff --fail-on` a measure over its threshold (docs/command-line.md "Exit codes").
#include "cli/cook_command.h"
#include "cli/diff_command.h"
#include "cli/inspect.h"
#include "core/cooked_database.h"
#include "core/diagnostic.h"
#include "core/errors.h"
#include "review/html_report.h"

#include <CLI/CLI.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>

namespace {

// Passes every message on but warnings: --no-warnings.
class NoWarningsSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit NoWarningsSink(spdlog::sink_ptr to) : to_(std::move(to)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level != spdlog::level::warn) to_->log(msg);
  }
  void flush_() override { to_->flush(); }
  void set_pattern_(const std::string& pattern) override { to_->set_pattern(pattern); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    to_->set_formatter(std::move(formatter));
  }

 private:
  spdlog::sink_ptr to_;
};

// The pattern's %*: "info: " or "debug: " before a message of those levels, and nothing before a
// warning or an error, which is logged as a whole diagnostic line ("loco.toml:7: warning: ...",
// core/diagnostic.h).
class LevelPrefix final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    if (msg.level >= spdlog::level::warn) return;
    const spdlog::string_view_t name = spdlog::level::to_string_view(msg.level);
    dest.append(name.data(), name.data() + name.size());
    dest.append(std::string_view(": "));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelPrefix>();
  }
};

// --quiet: warnings and errors alone, as a compiler in a build prints them; --no-warnings hides
// the warnings too (they are still counted and reported).
void setUpLogging(bool quiet, bool verbose, bool no_warnings) {
  spdlog::sink_ptr sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  if (no_warnings) sink = std::make_shared<NoWarningsSink>(sink);
  auto logger = std::make_shared<spdlog::logger>("mmcook", sink);
  // On a terminal a message first erases the progress line it may interrupt.
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<LevelPrefix>('*').set_pattern(::isatty(STDERR_FILENO) ? "\r\033[K%^%*%$%v"
                                                                            : "%*%v");
  logger->set_formatter(std::move(formatter));
  logger->set_level(quiet     ? spdlog::level::warn
                    : verbose ? spdlog::level::debug
                              : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

int run(int argc, char** argv) {
  CLI::App app{"mmcook: cooks motion capture (BVH, FBX) into a motion-matching database (.mmdb)",
               "mmcook"};
  app.set_version_flag("--version", mmdb::cook::kCookerVersion);
  // A parse error in mmcook's form too ("mmcook: error: ..."); the subcommands inherit it.
  app.failure_message([](const CLI::App* parsed, const CLI::Error& e) {
    return mmdb::cook::diagnostic("error", "", 0, CLI::FailureMessage::simple(parsed, e));
  });
  app.require_subcommand(1);
  bool quiet = false;
  bool verbose = false;
  bool no_warnings = false;
  const char* const kQuiet = "Print warnings and errors only (no summary, no progress)";
  const char* const kNoWarnings =
      "Do not print warnings (still counted, in --report, and failing --werror)";
  app.add_flag("-q,--quiet", quiet, kQuiet)->configurable(false);
  app.add_flag("-w,--no-warnings", no_warnings, kNoWarnings);
  app.add_flag("-v,--verbose", verbose, "Print debug messages");
  const char* const kWerror = "Fail on any warning (exit 1), writing no output";

  mmdb::cook::CookCommandOptions cook;
  CLI::App* cook_cmd = app.add_subcommand(
      "cook", "Cook a manifest (MANIFEST.toml) or motion files with default settings");
  cook_cmd->add_option("inputs", cook.inputs, "One manifest, or motion files (.bvh, .fbx, ...)")
      ->required();
  cook_cmd->add_option("-o,--output", cook.output, "The database to write (OUT.mmdb)")->required();
  cook_cmd->add_option("-j,--jobs", cook.jobs, "Threads to cook with; 0 = all cores")
      ->capture_default_str();
  cook_cmd->add_option("--depfile", cook.depfile,
                       "Also write a Makefile-syntax depfile of the output's inputs (for Ninja "
                       "and Make)");
  const char* const kDepfileTarget =
      "The output as the depfile names it (default: its absolute path); a build file's own "
      "spelling of the output, which Ninja compares with its edge's";
  cook_cmd->add_option("--depfile-target", cook.depfile_target, kDepfileTarget);
  cook_cmd->add_option(
      "--report", cook.report,
      "Also write a JSON report: summary, warnings with their clip, preset, roles, "
      "unit, time of each stage, the output's hash");
  cook_cmd->add_flag("--verify", cook.verify,
                     "Reopen the written file with the runtime and check it");
  cook_cmd->add_option("--cache", cook.cache,
                       "Keep each clip's cooked part in this folder and reuse it while the clip's "
                       "source and settings are unchanged (default for a manifest: "
                       "$MMCOOK_CACHE_DIR, $XDG_CACHE_HOME/mmcook or ~/.cache/mmcook; none for "
                       "motion files)");
  cook_cmd->add_flag("--no-cache", cook.no_cache, "Use no clip cache");
  cook_cmd->add_flag("--werror", cook.werror, kWerror);
  cook_cmd->add_flag("-q,--quiet", quiet, kQuiet);
  cook_cmd->add_flag("-w,--no-warnings", no_warnings, kNoWarnings);
  cook_cmd->add_flag("-v,--verbose", verbose, "Print debug messages");

  mmdb::cook::CookClipOptions clip;
  CLI::App* clip_cmd = app.add_subcommand(
      "cook-clip",
      "Cook clips of a manifest into intermediate .mmclip files, one each (for mmcook link)");
  clip_cmd->add_option("manifest", clip.manifest, "The manifest (MANIFEST.toml)")->required();
  clip_cmd
      ->add_option("--index", clip.indices,
                   "The clip's place in the manifest, from 0 (repeat it for several clips)")
      ->allow_extra_args(false);
  clip_cmd->add_option("--clip", clip.clip, "The clip's name");
  clip_cmd
      ->add_option("-o,--output", clip.outputs,
                   "The part to write (OUT.mmclip), one per --index in the same order")
      ->required()
      ->allow_extra_args(false);
  clip_cmd->add_option("--first", clip.first,
                       "The first clip's .mmclip (a later clip takes its skeleton, roles and "
                       "unit from it; without it, the first clip is cooked here too)");
  clip_cmd->add_option("--depfile", clip.depfile, "Also write a Makefile-syntax depfile");
  clip_cmd->add_option("--depfile-target", clip.depfile_target, kDepfileTarget);
  clip_cmd
      ->add_option("--entry", clip.entries,
                   "The clip's entry file from mmcook cook-entries (one per --index): checked "
                   "against the manifest, and named by the depfile instead of the manifest")
      ->allow_extra_args(false);
  clip_cmd->add_option("--cache", clip.cache,
                       "Find the part in this clip cache folder, and keep it there");
  clip_cmd->add_flag("--werror", clip.werror, kWerror);
  clip_cmd->add_flag("-q,--quiet", quiet, kQuiet);
  clip_cmd->add_flag("-w,--no-warnings", no_warnings, kNoWarnings);
  clip_cmd->add_flag("-v,--verbose", verbose, "Print debug messages");

  mmdb::cook::ClipEntriesOptions entries;
  CLI::App* entries_cmd = app.add_subcommand(
      "cook-entries",
      "Write each clip's entry of a manifest to DIR/<i>.entry (for builds with a step per clip)");
  entries_cmd->add_option("manifest", entries.manifest, "The manifest (MANIFEST.toml)")->required();
  entries_cmd->add_option("-o,--output", entries.folder, "The folder to write them in")->required();
  entries_cmd->add_option("--clips", entries.expect,
                          "The clip count the build was made for: another count fails (and is "
                          "written to DIR/clips.count)");
  entries_cmd->add_option("--depfile", entries.depfile, "Also write a Makefile-syntax depfile");
  entries_cmd->add_option("--depfile-target", entries.depfile_target,
                          "The first entry as the depfile names it");
  entries_cmd->add_flag("-q,--quiet", quiet, kQuiet);

  mmdb::cook::CookCommandOptions link;
  link.link = true;
  std::string link_manifest;
  CLI::App* link_cmd = app.add_subcommand(
      "link", "Make the database from a manifest and its clips' .mmclip files (from cook-clip)");
  link_cmd->add_option("manifest", link_manifest, "The manifest the clips were cooked from")
      ->required();
  link_cmd
      ->add_option("clips", link.clip_files,
                   "One .mmclip per clip of the manifest, in the manifest's order")
      ->required();
  link_cmd->add_option("-o,--output", link.output, "The database to write (OUT.mmdb)")->required();
  link_cmd->add_option("-j,--jobs", link.jobs, "Threads to link with; 0 = all cores")
      ->capture_default_str();
  link_cmd->add_option("--depfile", link.depfile, "Also write a Makefile-syntax depfile");
  link_cmd->add_option("--depfile-target", link.depfile_target, kDepfileTarget);
  link_cmd->add_option("--report", link.report, "Also write a JSON report of the link");
  link_cmd->add_option("--cache", link.cache,
                       "Find the database's pose coding in this clip cache folder, and keep it "
                       "there (a link after a weight edit then codes no pose)");
  link_cmd->add_flag("--verify", link.verify,
                     "Reopen the written file with the runtime and check it");
  link_cmd->add_flag("--werror", link.werror, kWerror);
  link_cmd->add_flag("-q,--quiet", quiet, kQuiet);
  link_cmd->add_flag("-w,--no-warnings", no_warnings, kNoWarnings);
  link_cmd->add_flag("-v,--verbose", verbose, "Print debug messages");

  std::string inspect_path;
  bool json = false;
  CLI::App* inspect_cmd = app.add_subcommand("inspect", "Print what an .mmdb file holds");
  inspect_cmd->add_option("file", inspect_path, "The .mmdb file")->required();
  inspect_cmd->add_flag("--json", json, "Print JSON instead of text");

  std::string source_path;
  CLI::App* source_cmd = app.add_subcommand(
      "inspect-source", "Print the takes, joints and frame ranges of a motion file");
  source_cmd->add_option("file", source_path, "A motion file (.bvh, .fbx, ...)")->required();

  mmcook::review::ReportOptions report;
  CLI::App* report_cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page that shows an .mmdb file: clip timeline, "
      "feature distributions, coverage map, skeleton replay, replay; with --compare OLD, what "
      "changed from OLD (A) to this file (B) first, as mmcook diff OLD FILE");
  report_cmd->add_option("file", report.database, "The .mmdb file (B, the newer, with --compare)")
      ->required();
  report_cmd->add_option("-o,--output", report.output, "The page to write (REPORT.html)")
      ->required();
  report_cmd->add_option("--compare", report.compare,
                         "An older .mmdb file to compare against: shown as A, beside this one (B)");
  report_cmd->add_option("--stick", report.stick,
                         "A stick file to replay (default: the built-in script)");
  report_cmd->add_option("--characters", report.characters, "Characters replayed, 1 to 256")
      ->capture_default_str();
  report_cmd->add_option("--seconds", report.seconds, "Seconds replayed at 60 Hz, 1 to 600")
      ->capture_default_str();
  report_cmd
      ->add_option("--replay-feet", report.replay_feet,
                   "locked: foot locking on, as a game runs the crowd; clips: the clips' own "
                   "feet, sliding as the clips and their transitions move them")
      ->capture_default_str();

  mmdb::cook::DiffCommandOptions diff;
  CLI::App* diff_cmd = app.add_subcommand(
      "diff",
      "Compare two .mmdb files: what they store, and what a replayed stick decides on each");
  diff_cmd->add_option("a", diff.a, "The first database (A, usually the older cook)")->required();
  diff_cmd->add_option("b", diff.b, "The second database (B)")->required();
  diff_cmd->add_flag("--json", diff.json, "Print JSON instead of text");
  diff_cmd->add_option("--stick", diff.stick,
                       "A stick file to replay (docs/runtime.md \"Stick scripts\"); default: the "
                       "built-in script of mmdb_sample");
  diff_cmd->add_option("--characters", diff.characters, "Characters replayed, 1 to 256")
      ->capture_default_str();
  diff_cmd->add_option("--seconds", diff.seconds, "Seconds replayed at 60 Hz, 1 to 600")
      ->capture_default_str();
  diff_cmd->add_flag("--fail-on-change", diff.fail_on_change,
                     "Exit with 4 when the files differ (in structure or in a decision)");
  CLI::Option* fail_on =
      diff_cmd->add_option("--fail-on", diff.fail_on,
                           "Exit with 4 when one of B's motion measures exceeds its threshold: "
                           "KEY=VALUE[,KEY=VALUE...], e.g. foot-slide-p90=5mm,switch-rate=3 "
                           "(docs/review.md \"Data checks\" lists the keys and units)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version or the parse error
    return code == 0 ? mmdb::cook::kExitOk : mmdb::cook::kExitUsage;
  }
  diff.fail_on_given = fail_on->count() > 0;
  if (quiet && verbose) throw mmdb::cook::UsageError("--quiet and --verbose do not go together");
  cook.quiet = clip.quiet = link.quiet = quiet;
  setUpLogging(quiet, verbose, no_warnings);

  if (*cook_cmd) return mmdb::cook::runCookCommand(cook);
  if (*clip_cmd) return mmdb::cook::runCookClipCommand(clip);
  if (*entries_cmd) return mmdb::cook::runClipEntriesCommand(entries);
  if (*link_cmd) {
    link.inputs = {link_manifest};
    return mmdb::cook::runCookCommand(link);
  }
  if (*diff_cmd) return mmdb::cook::runDiffCommand(diff, std::cout, std::cerr);
  if (*inspect_cmd) {
    mmdb::cook::inspectDatabase(inspect_path, json, std::cout);
    return mmdb::cook::kExitOk;
  }
  if (*report_cmd) {
    mmcook::review::writeReport(report);
    return mmdb::cook::kExitOk;
  }
  mmdb::cook::inspectSource(source_path, std::cout);
  return mmdb::cook::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const mmdb::cook::InputError& e) {  // at its line of a file, or mmcook's own
    std::fflush(stdout);
    const std::string line = e.located()
                                 ? mmdb::cook::diagnostic("error", e.file(), e.line(), e.message())
                                 : mmdb::cook::diagnostic("error", "", 0, e.what());
    std::fprintf(stderr, "%s\n", line.c_str());
    return mmdb::cook::kExitBadInput;
  } catch (const mmdb::cook::UsageError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s\nRun with --help for more information.\n",
                 mmdb::cook::diagnostic("error", "", 0, e.what()).c_str());
    return mmdb::cook::kExitUsage;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(
        stderr, "%s\nThis is a bug in mmcook; please report it with the input that caused it.\n",
        mmdb::cook::diagnostic("error", "", 0, std::string("internal error: ") + e.what()).c_str());
    return mmdb::cook::kExitInternal;
  } catch (...) {
    std::fprintf(
        stderr, "%s\n",
        mmdb::cook::diagnostic("error", "", 0, "internal error: unknown exception").c_str());
    return mmdb::cook::kExitInternal;
  }
}
