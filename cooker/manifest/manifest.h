// The TOML manifest: which clips to cook and with which settings (docs/manifest.md).
#pragma once

#include "core/cook_settings.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mmdb::cook {

// Reads and checks a manifest file. Throws InputError naming the file and line of the first
// problem (a syntax error, an unknown or mistyped key, a value out of range, a source file that
// does not exist) and saying what to do.
CookRequest readManifest(const std::string& path);

// Checks a clip's source (the resolved path): why it cannot be read, or "" when it can; sets
// `missing` when nothing is there.
using SourceCheck = std::function<std::string(const std::string& path, bool& missing)>;

// The same for text already in memory. `path` names the manifest in messages, and relative
// source paths resolve against its folder. Every field of CookSettings that the text does not
// set keeps its default. `check` replaces the file system's answer for the sources (the fuzz
// target accepts every source, so what follows a clip's source is parsed too).
CookRequest parseManifest(std::string_view text, const std::string& path,
                          const SourceCheck& check = {});

// The files a manifest names as clip sources, resolved as readManifest() resolves them, read
// from a manifest that may not pass readManifest()'s checks: a run that fails on the manifest
// must still never write over one of them. `complete` is false when the manifest cannot be read
// or parsed as TOML, or a source is not a string: then it may name files missing from `paths`.
struct ManifestSources {
  std::vector<std::string> paths;
  bool complete = false;
};
ManifestSources listManifestSources(const std::string& path);

// Every key a manifest may hold, dotted ("weights.foot_position", "clip.range.tags"), for the
// test that docs/manifest.md's reference lists them all with their defaults.
std::vector<std::string> manifestKeys();

}  // namespace mmdb::cook
