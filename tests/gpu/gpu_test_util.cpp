#include "gpu_test_util.h"

#include "compress/pose_compression.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mmdb::test {
namespace {

struct Env {
  std::unique_ptr<mmdb::gpu::Context> context;
  std::string error;
  std::vector<std::string> messages;
};

Env& env() {
  // Destroyed at exit, so the device and instance are released before leak checks run.
  static std::unique_ptr<Env> e = [] {
    auto created = std::make_unique<Env>();
    Env* self = created.get();
    mmdb::gpu::ContextOptions options;
    options.validation = true;
    options.message_user = self;
    options.on_message = [](mmdb::gpu::MessageSeverity severity, const char* message, void* user) {
      if (severity == mmdb::gpu::MessageSeverity::Warning ||
          severity == mmdb::gpu::MessageSeverity::Error)
        static_cast<Env*>(user)->messages.push_back(message);
    };
    auto ctx = mmdb::gpu::Context::createHeadless(options);
    if (ctx) {
      created->context = std::move(ctx.value());
    } else {
      created->error = ctx.error().message();
    }
    return created;
  }();
  return *e;
}

}  // namespace

mmdb::gpu::Context* context() { return env().context.get(); }
const std::string& contextError() { return env().error; }
std::vector<std::string>& validationMessages() { return env().messages; }

std::unique_ptr<TestDatabase> makeTestDatabase(const mmdb::test::SyntheticSpec& spec,
                                               bool coded_poses, bool biases) {
  auto t = std::make_unique<TestDatabase>();
  mmdb::cook::CookedDatabase cooked = mmdb::test::makeSyntheticDatabase(spec);
  if (coded_poses) mmdb::cook::compressPoses(cooked, {}, 1);
  if (biases) mmdb::test::setSyntheticBiases(cooked);
  t->bytes = mmdb::test::serializeAligned(cooked);
  auto opened = mmdb::Database::fromMemory(t->bytes.data(), t->bytes.size());
  if (!opened) {
    ADD_FAILURE() << "synthetic database does not open: " << opened.error().message();
    return nullptr;
  }
  t->db = std::move(opened.value());
  auto view = mmdb::gpu::DatabaseView::fromDatabase(t->db);
  if (!view) {
    ADD_FAILURE() << view.error().message();
    return nullptr;
  }
  t->view = std::move(view.value());
  return t;
}

void GpuTest::SetUp() {
  mmdb::gpu::Context* ctx = context();  // messages from creating it belong to no test
  messages_before_ = validationMessages().size();
  if (!ctx) GTEST_SKIP() << "no Vulkan device: " << contextError();
}

void GpuTest::TearDown() {
  if (IsSkipped()) return;
  const auto& messages = validationMessages();
  for (size_t i = messages_before_; i < messages.size(); ++i)
    ADD_FAILURE() << "validation: " << messages[i];
}

float quatDistance(const glm::quat& a, const glm::quat& b) {
  const glm::quat c = glm::dot(a, b) < 0 ? -b : b;
  return std::max(
      {std::fabs(a.x - c.x), std::fabs(a.y - c.y), std::fabs(a.z - c.z), std::fabs(a.w - c.w)});
}

float vecDistance(const glm::vec3& a, const glm::vec3& b) {
  return std::max({std::fabs(a.x - b.x), std::fabs(a.y - b.y), std::fabs(a.z - b.z)});
}

}  // namespace mmdb::test
