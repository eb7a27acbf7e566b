// A game's smallest use of the runtime, built by a project outside this one: open a cooked file,
// search it with the features of its first matchable frame, read the winner's pose (decoded when
// the file codes its poses, so meshoptimizer is linked), print the winner. The frame's own row
// costs 0, so the winner is that frame (or an identical row before it).
#include <mmdb/mmdb.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: mmdb_consumer FILE.mmdb\n");
    return 2;
  }
  auto opened = mmdb::Database::open(argv[1]);
  if (!opened.ok()) {
    std::fprintf(stderr, "error: %s\n", opened.error().message());
    return 1;
  }
  const mmdb::Database& db = opened.value();
  if (db.ranges().empty()) {
    std::fprintf(stderr, "error: %s has no matchable frame\n", argv[1]);
    return 1;
  }
  const uint32_t frame = db.ranges()[0].first_frame;
  mmdb::SearchRequest request;
  request.query = db.featureRow(frame);
  auto found = mmdb::searchPruned(db, request);
  if (!found.ok()) {
    std::fprintf(stderr, "error: %s\n", found.error().message());
    return 1;
  }
  std::vector<mmdb::Float4> rotations(db.jointCount());
  mmdb::PoseBuffers pose;
  pose.rotations = rotations;
  if (mmdb::Status decoded = db.decodePoses(uint32_t(found.value().frame), 1, pose); !decoded) {
    std::fprintf(stderr, "error: %s\n", decoded.message());
    return 1;
  }
  std::printf("queried frame %u: winner frame %d cost %g\n", frame, found.value().frame,
              double(found.value().cost));
  return found.value().frame == int32_t(frame) && found.value().cost == 0.0f ? 0 : 1;
}
