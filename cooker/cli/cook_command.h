// `mmcook cook`: a manifest (or motion files with default settings) in, an .mmdb out.
#pragma once

#include "core/cook_settings.h"

#include <string>
#include <vector>

namespace mmdb::cook {

struct CookCommandOptions {
  std::vector<std::string> inputs;  // one .toml manifest, or motion files (the quick form)
  std::string output;
  int jobs = 0;         // 0 = all cores
  bool verify = false;  // reopen the written file with the runtime and check it
  bool quiet = false;   // no summary, no progress
  bool werror = false;  // any warning fails the cook (exit 1), and nothing is written
  std::string depfile;  // when set, a Makefile-syntax depfile of the output's inputs goes here
  std::string depfile_target;  // the output as the depfile names it ("": its absolute path)
  std::string report;          // when set, a JSON report of the cook goes here
  std::string cache;      // clip cache folder; "" = the default one for a manifest, none otherwise
  bool no_cache = false;  // no clip cache at all
  // `mmcook link`: the manifest's clips come from these .mmclip files (one per clip, in order)
  // and nothing is imported.
  bool link = false;
  std::vector<std::string> clip_files;
};

// Throws UsageError for a bad combination of inputs, InputError for anything in the inputs, and
// writes the output (atomically) only when everything succeeded. Returns the exit code.
int runCookCommand(const CookCommandOptions& options);

// `mmcook cook-clip`: clips of a manifest in, one .mmclip each out. A build edge of several clips
// pays one process start for them all.
struct CookClipOptions {
  std::string manifest;
  std::vector<int> indices;          // the clips' places in the manifest, from 0; or
  std::string clip;                  // one clip's name
  std::vector<std::string> outputs;  // OUT.mmclip, one per clip in the order given
  std::string first;           // the first clip's .mmclip, for later clips (else it is cooked here)
  std::string depfile;         // one for them all, named by the first output
  std::string depfile_target;  // as CookCommandOptions'
  bool quiet = false;
  bool werror = false;  // a warning of a clip fails it (exit 1) before its part is written
  // The clips' entry files (cook-entries), none or one per clip: each must hold its clip's entry
  // as the manifest gives it now, and the depfile names them instead of the manifest.
  std::vector<std::string> entries;
  std::string cache;  // a clip cache folder to find the parts in, and to keep them in
};

// Writes an output only when its bytes change (an output already cooked from the same inputs is
// left alone, without importing anything). Returns the exit code.
int runCookClipCommand(const CookClipOptions& options);

// `mmcook cook-entries`: one file per clip of a manifest, <folder>/<i>.entry, holding
// clipEntryText(); a file whose text would not change keeps its time.
struct ClipEntriesOptions {
  std::string manifest;
  std::string folder;
  int expect = -1;  // the clip count the build was made for (-1: any)
  std::string depfile;
  std::string depfile_target;  // the first entry as the depfile names it
};
// With `expect` and another count: writes the count to <folder>/clips.count (which the build's
// configure step depends on) and fails, so that the next build counts the clips again.
int runClipEntriesCommand(const ClipEntriesOptions& options);

// The request the quick form builds: one clip per file, named by its stem, default settings.
// Throws InputError when a file is missing or two files share a stem.
CookRequest quickRequest(const std::vector<std::string>& files);

}  // namespace mmdb::cook
