// The headless context: device choice, device facts, errors that name the devices.
#include "gpu_test_util.h"

namespace mmgpu {
namespace {

using ContextTest = GpuTest;

TEST_F(ContextTest, ReportsTheDeviceFactsThePassesNeed) {
  const mmdb::gpu::DeviceInfo& info = context()->info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.subgroup_size, 0u);
  EXPECT_GT(info.device_local_bytes, 0u);
  EXPECT_NE(context()->queue(), VK_NULL_HANDLE);
}

TEST_F(ContextTest, PicksADeviceByNameSubstringOrIndex) {
  const std::string name = context()->info().name;
  mmdb::gpu::ContextOptions by_name;
  by_name.device = name.substr(0, 4);
  auto a = mmdb::gpu::Context::createHeadless(by_name);
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a.value()->info().name.substr(0, 4), name.substr(0, 4));

  mmdb::gpu::ContextOptions by_index;
  by_index.device = "0";
  auto b = mmdb::gpu::Context::createHeadless(by_index);
  ASSERT_TRUE(b) << b.error().message;
}

TEST_F(ContextTest, AnUnknownDeviceIsAnErrorListingTheDevices) {
  mmdb::gpu::ContextOptions options;
  options.device = "no-such-gpu-xyz";
  auto ctx = mmdb::gpu::Context::createHeadless(options);
  ASSERT_FALSE(ctx);
  EXPECT_NE(ctx.error().message.find("no-such-gpu-xyz"), std::string::npos) << ctx.error().message;
  EXPECT_NE(ctx.error().message.find(context()->info().name), std::string::npos) << ctx.error().message;
}

TEST_F(ContextTest, RefusesADatabaseWithoutTrajectoryBlocks) {
  mmdb::Database empty;
  auto view = mmdb::gpu::DatabaseView::fromDatabase(empty);
  ASSERT_FALSE(view);
  EXPECT_NE(view.error().message.find("empty"), std::string::npos) << view.error().message;
}

TEST_F(ContextTest, UploadsEveryStreamOnce) {
  mmtest::SyntheticSpec spec;
  spec.clips = 3;
  spec.frames_per_clip = 100;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  auto crowd = mmdb::gpu::Crowd::create(*context(), t->view, 4);
  ASSERT_TRUE(crowd) << crowd.error().message;
  const uint64_t poses = uint64_t(t->db.frameCount()) * t->db.jointCount() * 16;
  const uint64_t expected = t->db.features().size_bytes() + t->db.ranges().size() * 16 + 4 * poses +
                            (t->db.clipCount() + 1) * 4 + 2 * t->db.featureCount() * 4 + t->db.jointCount() * 4;
  EXPECT_EQ(crowd.value()->deviceDatabaseBytes(), expected);
}

}  // namespace
}  // namespace mmgpu
