// libFuzzer target: any bytes through the BVH parser. Bad input must end in mmdb::cook::InputError,
// never a crash, a hang or an unbounded allocation.
#include "core/errors.h"
#include "import/importer.h"

#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);  // frame-count warnings would flood the run
    return true;
  }();
  (void)quiet;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const mmdb::cook::RawClip clip = mmdb::cook::parseBvh(text, "fuzz.bvh");
    // What the parser promises of a clip it returns.
    const size_t samples = static_cast<size_t>(clip.frame_count) * clip.skeleton.names.size();
    if (clip.frame_count <= 0 || clip.rotations.size() != samples ||
        clip.translations.size() != samples || !(clip.frame_rate > 0))
      __builtin_trap();
  } catch (const mmdb::cook::InputError&) {
  }
  return 0;
}
