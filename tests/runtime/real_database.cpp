#include "real_database.h"

#include "cook/cook_database.h"
#include "write/database_writer.h"

#include <mmdb/controller.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <tuple>

namespace mmdb::test {

namespace fs = std::filesystem;

const RealDatabase* bandaiDatabase(std::string* why_absent) {
  return bandaiDatabaseAt(mmdb::cook::CookSettings{}.frame_rate, false, why_absent);
}

const mmdb::cook::CookedDatabase* bandaiCookedDatabase(std::string* why_absent) {
  const RealDatabase* real = bandaiDatabase(why_absent);
  return real ? &real->cooked : nullptr;
}

namespace {

// Cooks the request on two threads and opens the result from memory; nullptr (and why) when the
// cooked bytes do not open.
std::unique_ptr<RealDatabase> cookAndOpen(mmdb::cook::CookRequest& request, const char* corpus,
                                          std::string* why_absent) {
  request.jobs = 2;
  auto real = std::make_unique<RealDatabase>();
  real->cooked = mmdb::cook::cookDatabase(request);
  real->bytes = serializeAligned(real->cooked);
  auto opened = mmdb::Database::fromMemory(real->bytes.data(), real->bytes.size());
  if (!opened.ok()) {
    if (why_absent)
      *why_absent = std::string(corpus) + " cooked but did not open: " + opened.error().message();
    return nullptr;
  }
  real->db = std::move(opened.value());
  return real;
}

// bandai-1's clips whose file name does not hold one of `left_out` (all of them for none).
const RealDatabase* cookBandai(double frame_rate, bool mirror, const std::array<float, 5>& weights,
                               std::string* why_absent,
                               const std::vector<std::string>& left_out = {}) {
  static std::map<std::tuple<double, bool, std::array<float, 5>, std::vector<std::string>>,
                  std::unique_ptr<RealDatabase>>
      cache;
  auto& slot = cache[{frame_rate, mirror, weights, left_out}];
  if (slot) return slot.get();
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "bandai-1";
  if (!fs::exists(dir)) {
    if (why_absent) *why_absent = "no motion corpus at " + dir.string();
    return nullptr;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const bool kept = std::none_of(left_out.begin(), left_out.end(), [&](const std::string& word) {
      return name.find(word) != std::string::npos;
    });
    if (e.path().extension() == ".bvh" && kept) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  mmdb::cook::CookRequest request;
  request.settings.frame_rate = frame_rate;
  request.settings.weights = weights;
  for (const auto& f : files) {
    mmdb::cook::ClipSpec clip;
    clip.source = f.string();
    clip.source_label = f.filename().string();
    clip.mirror = mirror;
    request.clips.push_back(clip);
  }
  slot = cookAndOpen(request, "bandai-1", why_absent);
  return slot.get();
}

}  // namespace

const RealDatabase* bandaiDatabaseAt(double frame_rate, bool mirror, std::string* why_absent) {
  return cookBandai(frame_rate, mirror, mmdb::cook::CookSettings{}.weights, why_absent);
}

const RealDatabase* bandaiForwardDatabase(std::string* why_absent) {
  return cookBandai(mmdb::cook::CookSettings{}.frame_rate, true, mmdb::cook::CookSettings{}.weights,
                    why_absent, {"walk-back", "walk-left", "walk-right"});
}

const RealDatabase* nonRepeatingDatabase(double frame_rate, std::string* why_absent) {
  static std::map<double, std::unique_ptr<RealDatabase>> cache;
  auto& slot = cache[frame_rate];
  if (slot) return slot.get();
  const RealDatabase* real = bandaiDatabaseAt(frame_rate, true, why_absent);
  if (!real) return nullptr;
  auto made = std::make_unique<RealDatabase>();
  made->cooked = completedWithSynthetic(real->cooked, 300000, 36);
  made->bytes = serializeAligned(made->cooked);
  auto opened = mmdb::Database::fromMemory(made->bytes.data(), made->bytes.size());
  if (!opened.ok()) {
    if (why_absent)
      *why_absent =
          std::string("the non-repeating database did not open: ") + opened.error().message();
    return nullptr;
  }
  made->db = std::move(opened.value());
  slot = std::move(made);
  return slot.get();
}

const RealDatabase* cmuBvhDatabase(std::string* why_absent) {
  static std::unique_ptr<RealDatabase> slot;
  if (slot) return slot.get();
  const fs::path dir = fs::path(MMDB_SHARED_DATA) / "cmu-bvh";
  mmdb::cook::CookRequest request;
  for (const char* name : {"131_01.bvh", "131_02.bvh"}) {
    if (!fs::exists(dir / name)) {
      if (why_absent) *why_absent = "no motion corpus at " + (dir / name).string();
      return nullptr;
    }
    mmdb::cook::ClipSpec clip;
    clip.source = (dir / name).string();
    clip.source_label = name;
    clip.mirror = true;
    request.clips.push_back(clip);
  }
  slot = cookAndOpen(request, "cmu-bvh", why_absent);
  return slot.get();
}

const RealDatabase* bandaiDatabaseWeighted(const std::array<float, 5>& weights,
                                           std::string* why_absent) {
  return cookBandai(mmdb::cook::CookSettings{}.frame_rate, false, weights, why_absent);
}

void makeGameQueries(const mmdb::Database& db, uint32_t count, uint32_t seed,
                     std::vector<std::vector<float>>& queries, std::vector<int32_t>& current) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  const mmdb::ControllerSettings settings;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t f = rng() % db.frameCount();
    const mmdb::RootFrame& root = db.rootMotion()[f];
    mmdb::CharacterState state;
    state.velocity = {root.velocity.x, 0.f, root.velocity.z};
    state.rotation = glm::quat(root.rotation.w, root.rotation.x, root.rotation.y, root.rotation.z);
    state.angular_velocity = {root.angular_velocity.x, root.angular_velocity.y,
                              root.angular_velocity.z};
    // Stick: a direction and a speed from standing to a dash, facing where it points or a
    // strafe direction.
    const float heading = 6.2831853f * unit(rng), speed = 4.f * unit(rng) * unit(rng);
    mmdb::StickInput stick;
    stick.desired_velocity = {speed * std::sin(heading), 0.f, speed * std::cos(heading)};
    const float facing = unit(rng) < 0.7f ? heading : 6.2831853f * unit(rng);
    stick.desired_facing = {std::sin(facing), 0.f, std::cos(facing)};
    float trajectory[mmdb::kTrajectoryFloats];
    mmdb::predictTrajectory(state, stick, settings, trajectory);
    std::vector<float> q(db.featureCount());
    (void)mmdb::buildQuery(db, int32_t(f), trajectory, mmdb::Span<float>(q));
    queries.push_back(std::move(q));
    current.push_back(int32_t(f));
  }
}

}  // namespace mmdb::test
