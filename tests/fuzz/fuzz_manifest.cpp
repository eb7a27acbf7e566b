// libFuzzer target for the manifest reader: any text either parses or throws InputError.
// Anything else (a crash, a sanitizer report, another exception) is a bug.
#include "core/errors.h"
#include "manifest/manifest.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    // A folder that does not exist: every source is "not found", so no file is ever read.
    mm::parseManifest(text, "/nonexistent-mmdb-fuzz/fuzz.toml");
  } catch (const mm::InputError&) {
  }
  return 0;
}
