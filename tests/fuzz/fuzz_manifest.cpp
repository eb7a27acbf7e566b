// libFuzzer target for the manifest reader: any text either parses or throws InputError.
// Anything else (a crash, a sanitizer report, another exception) is a bug.
#include "core/errors.h"
#include "manifest/manifest.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Every source resolves (nothing is read from disk), so the parse goes on past each clip's
  // source to its name, frames, tags, mirror flag and [[clip.range]] tables.
  const mmdb::cook::SourceCheck every_source_exists = [](const std::string&, bool& missing) {
    missing = false;
    return std::string();
  };
  try {
    mmdb::cook::parseManifest(text, "/mmdb-fuzz/fuzz.toml", every_source_exists);
  } catch (const mmdb::cook::InputError&) {
  }
  return 0;
}
