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
                            (t->db.clipCount() + 1) * 4 + 2 * t->db.featureCount() * 4 + t->db.jointCount() * 4 +
                            t->db.boundsSmallMin().size_bytes() + t->db.boundsSmallMax().size_bytes();
  EXPECT_EQ(crowd.value()->deviceDatabaseBytes(), expected);
}

TEST_F(ContextTest, AnEnginesDeviceRunsACrowdFromItsOwnCommandBuffer) {
  mmtest::SyntheticSpec spec;
  spec.clips = 2;
  spec.frames_per_clip = 120;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  mmdb::gpu::Context* engine = context();
  auto wrapped = mmdb::gpu::Context::wrap(engine->instance(), engine->physicalDevice(), engine->device(),
                                          engine->queue(), engine->queueFamily());
  auto crowd = mmdb::gpu::Crowd::create(*wrapped, t->view, 8);
  ASSERT_TRUE(crowd) << crowd.error().message;

  // The engine's own command buffer and fence.
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = engine->queueFamily();
  VkCommandPool pool = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateCommandPool(engine->device(), &pci, nullptr, &pool), VK_SUCCESS);
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  ASSERT_EQ(vkAllocateCommandBuffers(engine->device(), &cai, &cmd), VK_SUCCESS);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  for (int frame = 0; frame < 3; ++frame) {
    crowd.value()->setStick(0, 0.f, 1.f);
    ASSERT_EQ(vkBeginCommandBuffer(cmd, &begin), VK_SUCCESS);
    crowd.value()->step(cmd, 1.f / 60);
    ASSERT_EQ(vkEndCommandBuffer(cmd), VK_SUCCESS);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    ASSERT_EQ(vkQueueSubmit(engine->queue(), 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
    ASSERT_EQ(vkQueueWaitIdle(engine->queue()), VK_SUCCESS);
  }
  vkDestroyCommandPool(engine->device(), pool, nullptr);

  const auto decisions = crowd.value()->readDecisions();
  ASSERT_EQ(decisions.size(), 8u);
  for (const auto& d : decisions) EXPECT_NE(d.frame, mmdb::gpu::kNoFrame);
  const auto states = crowd.value()->readCharacters();
  EXPECT_EQ(states[0].search_count, 1u) << "one start search, then the timer runs";
  EXPECT_GT(states[0].sim_position.z, 0.f) << "the stick pushed the character along +Z";
  const mmdb::gpu::PassTimings timings = crowd.value()->readTimings();
  if (engine->info().timestamp_period_ns > 0) {
    EXPECT_TRUE(timings.valid);
    EXPECT_GT(timings.total_ms, 0.0);
  }
}

}  // namespace
}  // namespace mmgpu
