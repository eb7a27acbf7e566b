// .mmposes pose codings (the clip cache): any bytes. The checksums are sealed again over the
// mutated buffer, so mutations reach the FlatBuffers verifier and the coding's own checks. A
// coding is refused with InputError or read with a track per joint and segment offsets that
// stay inside its data (what the writer and the runtime's decoder rely on), and then writes and
// reads back the same; never a crash.
#include "cache/intermediate_file.h"
#include "cache/pose_file.h"
#include "core/errors.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);  // heap memory: aligned as a mapped file is
  mmdb::cook::resealIntermediate(bytes);
  try {
    const mmdb::cook::PoseFile file =
        mmdb::cook::parsePoseFile(bytes.data(), bytes.size(), "fuzz.mmposes");
    const mmdb::cook::StoredPoseCoding& st = file.stored;
    const uint64_t segments =
        (uint64_t(st.frame_count) + st.coding.segment_frames - 1) / st.coding.segment_frames;
    for (const auto& stream : st.coding.streams) {
      if (!stream || stream->tracks.size() != st.joint_count ||
          stream->segment_offsets.size() != st.joint_count * segments + 1 ||
          stream->segment_offsets.back() != stream->bytes().size())
        std::abort();
      for (size_t i = 1; i < stream->segment_offsets.size(); ++i)
        if (stream->segment_offsets[i] < stream->segment_offsets[i - 1]) std::abort();
    }
    const std::vector<uint8_t> again =
        mmdb::cook::serializePoseFile(file.key, st.frame_count, st.joint_count, st.coding).whole();
    const mmdb::cook::PoseFile reread =
        mmdb::cook::parsePoseFile(again.data(), again.size(), "again.mmposes");
    if (reread.key != file.key ||
        mmdb::cook::serializePoseFile(reread.key, reread.stored.frame_count,
                                      reread.stored.joint_count, reread.stored.coding)
                .whole() != again)
      std::abort();
  } catch (const mmdb::cook::InputError&) {
  }
  return 0;
}
