// libFuzzer target: Database::fromMemory on arbitrary bytes; when a buffer opens, everything a
// game would do with it (search both ways, build a query, sample a pose) must not crash and the
// two searches must agree.
#include <mmdb/mmdb.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void exercise(const mmdb::Database& db) {
  std::vector<float> query(db.featureCount());
  const mmdb::Span<const float> row = db.featureRow(db.frameCount() / 3);
  for (size_t c = 0; c < query.size(); ++c) query[c] = row[c] + 0.05f * float(c % 3);
  mmdb::SearchRequest request;
  request.query = query;
  request.current_frame = int32_t(db.frameCount() / 2);
  request.filter.required = db.tagMask("locomotion");
  const auto exhaustive = mmdb::searchExhaustive(db, request);
  const auto pruned = mmdb::searchPruned(db, request);
  if (exhaustive.ok() != pruned.ok()) std::abort();
  if (exhaustive.ok() && (exhaustive.value().frame != pruned.value().frame ||
                          exhaustive.value().cost != pruned.value().cost))
    std::abort();  // the pruned search must be exact on every file that opens

  float trajectory[mmdb::kTrajectoryFloats] = {0.f, 0.3f, 0.f, 0.6f, 0.f, 1.f,
                                               0.f, 1.f,  0.f, 1.f,  0.f, 1.f};
  (void)mmdb::buildQuery(db, 0, trajectory, mmdb::Span<float>(query));

  if (db.jointCount() > 4096 || db.clipCount() == 0) return;
  // Coded pose streams decode, or are refused with a reason: never out of bounds or NaN.
  std::vector<mmdb::Float4> decoded[mmdb::kPoseStreamCount];
  mmdb::PoseView poses;
  if (db.posesCoded()) {
    const size_t elements = size_t(db.frameCount()) * db.jointCount();
    if (elements > (size_t{1} << 22)) return;
    for (auto& stream : decoded) stream.resize(elements);
    const mmdb::Status s =
        db.decodePoses(0, db.frameCount(), {decoded[0], decoded[1], decoded[2], decoded[3]});
    if (!s) {
      if (s.code() != mmdb::ErrorCode::Corrupt && s.code() != mmdb::ErrorCode::Inconsistent)
        std::abort();
      return;
    }
    for (const auto& stream : decoded)
      for (const mmdb::Float4& v : stream)
        if (!(std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) && std::isfinite(v.w)))
          std::abort();  // a decode that succeeds gives finite values
    poses = {0, db.frameCount(), decoded[0], decoded[1], decoded[2], decoded[3]};
  }
  std::vector<glm::quat> rotations(db.jointCount()), model_q(db.jointCount());
  std::vector<glm::vec3> translations(db.jointCount()), model_x(db.jointCount());
  mmdb::SamplePoseJob sample;
  sample.database = &db;
  sample.poses = poses;
  sample.clip = db.clipCount() - 1;
  sample.time = 0.25f;
  sample.rotations = rotations;
  sample.translations = translations;
  if (!sample.Run().ok()) std::abort();  // valid inputs on an opened file must work
  mmdb::ForwardKinematicsJob fk;
  fk.parents = db.parents();
  fk.local_rotations = rotations;
  fk.local_translations = translations;
  fk.model_rotations = model_q;
  fk.model_translations = model_x;
  if (!fk.Run().ok()) std::abort();  // parents were checked at open
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The runtime requires 16-byte aligned buffers; libFuzzer's are not. Copy into an exact-size
  // aligned allocation so ASan catches any read past the end.
  void* buffer = nullptr;
  if (posix_memalign(&buffer, 16, size ? size : 1) != 0) return 0;
  if (size) std::memcpy(buffer, data, size);
  {
    auto db = mmdb::Database::fromMemory(buffer, size);
    if (db.ok())
      exercise(db.value());
    else if (db.error().message()[0] == '\0')
      std::abort();  // every refusal has a reason
  }
  std::free(buffer);
  return 0;
}
