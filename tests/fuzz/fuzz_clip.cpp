// .mmclip parts (the clip cache, cook-clip, link): any bytes. The checksum is sealed again over
// the mutated buffer, so mutations reach the FlatBuffers verifier and the part's own checks
// instead of all stopping at the checksum. A part is refused with InputError or read whole and
// consistent (what the link relies on), and then writes and reads back; never a crash.
#include "cache/clip_file.h"
#include "cook/features.h"
#include "core/errors.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);  // heap memory: aligned as a mapped file is
  if (bytes.size() >= 16) {
    const size_t body = bytes.size() - 8;
    const uint64_t sum = mmdb::cook::clipFileChecksum(bytes.data(), body);
    for (int b = 0; b < 8; ++b) bytes[body + b] = static_cast<uint8_t>(sum >> (8 * b));
  }
  try {
    const mmdb::cook::ClipFile file =
        mmdb::cook::parseClipFile(bytes.data(), bytes.size(), "fuzz.mmclip");
    const mmdb::cook::ClipPart& part = file.part;
    const size_t joints = part.skeleton.names.size();
    for (const mmdb::cook::ClipMotion* m : {&part.motion, part.mirror ? &*part.mirror : nullptr}) {
      if (!m) continue;
      const size_t frames = static_cast<size_t>(m->clip.frame_count);
      if (frames == 0 || m->clip.rotations.size() != frames * joints ||
          m->clip.translations.size() != frames * joints ||
          m->velocities.size() != frames * joints ||
          m->angular_velocities.size() != frames * joints || m->root.size() != frames ||
          m->contacts.size() != frames || m->features.size() != frames * mmdb::cook::kFeatureCount)
        std::abort();
    }
    const std::vector<uint8_t> again = mmdb::cook::serializeClipFile(file.key, part);
    const mmdb::cook::ClipFile reread =
        mmdb::cook::parseClipFile(again.data(), again.size(), "again.mmclip");
    if (reread.key != file.key) std::abort();
  } catch (const mmdb::cook::InputError&) {
  }
  return 0;
}
