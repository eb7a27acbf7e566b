// libFuzzer target: a crowd on a small real database driven by arbitrary inputs and settings.
// The bytes are read as a script of calls whose floats are raw bit patterns (so overflowing finite
// values such as 1e38 come up as often as ordinary ones). Whatever the calls, the crowd never
// crashes, a step it accepts leaves every character finite, and a step that fails never leaves
// the crowd stuck ("the previous step has not ended").
#include <mmdb/mmdb.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Reader {
  const uint8_t* data;
  size_t size;
  uint8_t byte() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
  float number() {
    uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits = bits << 8 | byte();
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  // Mostly ordinary values, now and then a raw bit pattern.
  float value(float scale) {
    const uint8_t kind = byte();
    if (kind < 200) return scale * (float(kind) / 100.f - 1.f);
    return number();
  }
};

bool finite(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

const mmdb::Database& database() {
  static mmdb::Database db = [] {
    auto opened = mmdb::Database::open(MMDB_FUZZ_DATABASE);
    if (!opened) std::abort();  // the regression file always opens
    return std::move(opened).value();
  }();
  return db;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  const mmdb::Database& db = database();
  mmdb::CrowdSettings settings;
  settings.controller_halflife = in.byte() < 128 ? settings.controller_halflife : in.number();
  settings.max_speed = in.byte() < 128 ? settings.max_speed : in.number();
  settings.synchronization.mode = static_cast<mmdb::Synchronization>(in.byte() % 4);
  settings.synchronization.max_distance = in.byte() < 200 ? 0.15f : in.number();
  settings.synchronization.rate_max = in.byte() < 128 ? 1.f : in.value(2.f);
  settings.foot_locking = in.byte() % 2 == 0;
  auto made = mmdb::Crowd::create(db, 1 + in.byte() % 4, settings);
  if (!made) return 0;  // refused: a setting out of its limits
  mmdb::Crowd& crowd = made.value();
  const uint32_t n = crowd.characterCount();
  while (in.size > 0) {
    const uint32_t c = in.byte() % (n + 1);  // n: out of range, refused
    switch (in.byte() % 8) {
      case 0:
        (void)crowd.setStick(c, in.value(1.5f), in.value(1.5f));
        break;
      case 1: {
        mmdb::StickInput input;
        input.desired_velocity = {in.value(3.f), in.value(1.f), in.value(3.f)};
        input.desired_facing = {in.value(1.f), 0.f, in.value(1.f)};
        (void)crowd.setInput(c, input);
        break;
      }
      case 2: {
        mmdb::CharacterState state;
        state.position = {in.value(10.f), 0.f, in.value(10.f)};
        state.velocity = {in.value(3.f), 0.f, in.value(3.f)};
        state.acceleration = {in.value(10.f), 0.f, in.value(10.f)};
        state.rotation = glm::quat(in.value(1.f), in.value(1.f), in.value(1.f), in.value(1.f));
        state.angular_velocity = {0.f, in.value(5.f), 0.f};
        (void)crowd.setSimulation(c, state);
        break;
      }
      case 3:
      case 4: {
        const glm::vec3 position(in.value(10.f), 0.f, in.value(10.f));
        const glm::quat rotation(in.value(1.f), in.value(1.f), in.value(1.f), in.value(1.f));
        (void)(in.byte() % 2 ? crowd.teleport(c, position, rotation)
                             : crowd.place(c, position, rotation));
        break;
      }
      case 5: {
        std::vector<float> weights(db.featureBlockCount());
        for (float& w : weights) w = in.value(2.f);
        (void)crowd.setBlockWeights(c, weights);
        break;
      }
      default: {
        const float dt = in.byte() < 220 ? 1.f / 60 : in.number();
        const mmdb::Status s = crowd.step(dt);
        if (!s) {
          if (std::string(s.message()).find("has not ended") != std::string::npos) std::abort();
          break;
        }
        for (const mmdb::CrowdCharacter& ch : crowd.characters())
          if (!finite(ch.achieved_position) || !finite(ch.sim.position)) std::abort();
        for (const glm::vec3& p : crowd.modelTranslations())
          if (!finite(p)) std::abort();
      }
    }
  }
  return 0;
}
