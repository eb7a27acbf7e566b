// .mmclip parts (the clip cache, cook-clip, link): any bytes. The checksums are sealed again over
// the mutated buffer, so mutations reach the FlatBuffers verifier and the part's own checks
// instead of all stopping at the checksums. A part is refused with InputError or read whole and
// consistent (what the link relies on), and then writes and reads back; read without its poses,
// it is the same part less its pose streams. Never a crash.
#include "cache/clip_file.h"
#include "cache/intermediate_file.h"
#include "cook/features.h"
#include "core/errors.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);  // heap memory: aligned as a mapped file is
  mmdb::cook::resealIntermediate(bytes);
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
    const mmdb::cook::ClipFile lean = mmdb::cook::parseClipFile(
        bytes.data(), bytes.size(), "fuzz.mmclip", mmdb::cook::PartPoses::Skip);
    if (lean.key != file.key || lean.part.motion.clip.frame_count != part.motion.clip.frame_count ||
        !lean.part.motion.clip.rotations.empty() ||
        lean.part.motion.root.size() != part.motion.root.size() ||
        std::memcmp(lean.part.motion.root.data(), part.motion.root.data(),
                    part.motion.root.size() * sizeof(part.motion.root[0])) != 0 ||
        lean.part.motion.features != part.motion.features)
      std::abort();
    const std::vector<uint8_t> again = mmdb::cook::serializeClipFile(file.key, part).whole();
    const mmdb::cook::ClipFile reread =
        mmdb::cook::parseClipFile(again.data(), again.size(), "again.mmclip");
    if (reread.key != file.key) std::abort();
  } catch (const mmdb::cook::InputError&) {
  }
  return 0;
}
