// The headless context: device choice, device facts, errors that name the devices.
#include "gpu_test_util.h"

#include <cmath>

namespace mmdb::test {
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
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a.value()->info().name.substr(0, 4), name.substr(0, 4));

  mmdb::gpu::ContextOptions by_index;
  by_index.device = "0";
  auto b = mmdb::gpu::Context::createHeadless(by_index);
  ASSERT_TRUE(b) << b.error().message();
}

TEST_F(ContextTest, AnUnknownDeviceIsAnErrorListingTheDevices) {
  mmdb::gpu::ContextOptions options;
  options.device = "no-such-gpu-xyz";
  auto ctx = mmdb::gpu::Context::createHeadless(options);
  ASSERT_FALSE(ctx);
  const std::string message = ctx.error().message();
  EXPECT_EQ(ctx.error().code(), mmdb::ErrorCode::DeviceError);
  EXPECT_NE(message.find("no-such-gpu-xyz"), std::string::npos) << message;
  EXPECT_NE(message.find(context()->info().name), std::string::npos) << message;
}

TEST_F(ContextTest, RefusesADatabaseWithoutTrajectoryBlocks) {
  mmdb::Database empty;
  auto view = mmdb::gpu::DatabaseView::fromDatabase(empty);
  ASSERT_FALSE(view);
  EXPECT_EQ(view.error().code(), mmdb::ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(view.error().message()).find("empty"), std::string::npos)
      << view.error().message();
}

TEST_F(ContextTest, UploadsEveryStreamOnce) {
  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 3;
  spec.frames_per_clip = 100;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  auto crowd = mmdb::gpu::Crowd::create(*context(), t->view, 4);
  ASSERT_TRUE(crowd) << crowd.error().message();
  const uint64_t poses = uint64_t(t->db.frameCount()) * t->db.jointCount() * 16;
  const uint64_t expected = t->db.features().size_bytes() + t->db.ranges().size() * 16 + 4 * poses +
                            (t->db.clipCount() + 1) * 4 + 2 * t->db.featureCount() * 4 +
                            t->db.jointCount() * 4 + t->db.boundsSmallMin().size_bytes() +
                            t->db.boundsSmallMax().size_bytes() + t->db.rootMotion().size_bytes() +
                            (t->db.ranges().size() + t->db.clipCount()) * 4 +  // cost biases
                            t->db.frameCount() * 4;                            // contact masks
  EXPECT_EQ(crowd.value()->deviceDatabaseBytes(), expected);
}

// Run-time weights: one per feature block, finite and > 0, or none; refused by block.
TEST_F(ContextTest, BlockWeightsAreCheckedByBlock) {
  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 2;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, 2);
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();
  std::vector<float> w(t->db.featureBlockCount(), 1.f);
  EXPECT_TRUE(crowd.setBlockWeights(1, w.data(), w.size()).ok());
  EXPECT_TRUE(crowd.setBlockWeights(1, nullptr, 0).ok());
  w[5] = 0.f;
  const mmdb::Status zero = crowd.setBlockWeights(0, w.data(), w.size());
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.code(), mmdb::ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(zero.message()).find("trajectory_position"), std::string::npos)
      << zero.message();
  w[5] = 1.f;
  EXPECT_FALSE(crowd.setBlockWeights(0, w.data(), 3).ok());
  EXPECT_FALSE(crowd.setBlockWeights(2, w.data(), w.size()).ok());
  ASSERT_TRUE(crowd.stepAndWait(1.f / 60).ok());
}

// A character index or a size that does not fit is an InvalidArgument naming both, never a throw.
TEST_F(ContextTest, SettersAndWritesCheckTheirIndexAndSize) {
  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 2;
  spec.frames_per_clip = 60;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, 4);
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();
  const mmdb::gpu::CharacterInput input{};
  const std::vector<mmdb::gpu::CharacterInput> inputs(5, input);
  const mmdb::Status failures[] = {
      crowd.setStick(4, 0.f, 1.f),
      crowd.setInput(7, input),
      crowd.setTagFilter(4, 1, 0),
      crowd.forceSearch(100),
      crowd.setInputs(inputs.data(), 5),
      crowd.writeCharacters(std::vector<mmdb::gpu::CrowdCharacter>(3)),
      crowd.writeResults({}),
      crowd.writeQueries(std::vector<float>(1)),
      crowd.writeLocalPoses({}),
      crowd.writeOffsets({}),
  };
  for (const mmdb::Status& s : failures) {
    EXPECT_EQ(s.code(), mmdb::ErrorCode::InvalidArgument) << s.message();
  }
  EXPECT_STREQ(failures[0].message(),
               "setStick: character 4 is out of range (the crowd has 4 characters)");
  EXPECT_STREQ(failures[4].message(), "setInputs: 5 inputs for a crowd of 4 characters");
  EXPECT_STREQ(failures[5].message(), "writeCharacters: 3 elements, the buffer holds 4");
  EXPECT_TRUE(crowd.setStick(3, 0.f, 1.f).ok());
  EXPECT_TRUE(crowd.setInputs(inputs.data(), 4).ok());
  EXPECT_TRUE(crowd.stepAndWait(1.f / 60).ok());

  mmdb::gpu::CrowdSettings bad;
  bad.max_drift = -1.f;
  auto refused = mmdb::gpu::Crowd::create(*context(), t->view, 4, bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), mmdb::ErrorCode::InvalidArgument);
  mmdb::gpu::CrowdSettings too_late;
  too_late.start_stagger_intervals = 17;
  auto late = mmdb::gpu::Crowd::create(*context(), t->view, 4, too_late);
  ASSERT_FALSE(late);
  EXPECT_STREQ(late.error().message(), "start_stagger_intervals 17 is over 16");
  mmdb::gpu::CrowdSettings unlimited;
  unlimited.transition_speed_limit = -1.f;
  auto negative = mmdb::gpu::Crowd::create(*context(), t->view, 4, unlimited);
  ASSERT_FALSE(negative);
  EXPECT_STREQ(negative.error().message(), "transition_speed_limit -1 must be finite and >= 0");
  // The reference's arithmetic decays the offsets in place: no limit can hold a transition back.
  mmdb::gpu::CrowdSettings reference = mmdb::gpu::CrowdSettings::referenceController();
  reference.transition_speed_limit = 1.4f;
  auto held = mmdb::gpu::Crowd::create(*context(), t->view, 4, reference);
  ASSERT_FALSE(held);
  EXPECT_STREQ(held.error().message(),
               "reference_arithmetic decays a transition's offsets step by step, which "
               "transition_speed_limit 1.4 cannot hold back: set it to 0");
  // A view made by hand without the clips' joint steps: the limit needs them, or is set off.
  mmdb::gpu::DatabaseView by_hand = t->view;
  by_hand.clip_joint_steps.clear();
  auto no_steps = mmdb::gpu::Crowd::create(*context(), by_hand, 4);
  ASSERT_FALSE(no_steps);
  EXPECT_EQ(std::string(no_steps.error().message()),
            "transition speed limit: the view holds 0 clip joint steps for " +
                std::to_string(t->view.joint_count) +
                " joints (DatabaseView::fromDatabase fills them), or set transition_speed_limit "
                "= 0");
  unlimited.transition_speed_limit = 0.f;
  EXPECT_TRUE(mmdb::gpu::Crowd::create(*context(), by_hand, 4, unlimited));
  auto empty = mmdb::gpu::Crowd::create(*context(), t->view, 0);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), mmdb::ErrorCode::InvalidArgument);
}

// setSimulation makes the CPU crowd's checks; a teleport asked for after it in the same step is
// refused (the host cannot move a state it only records), and nothing is recorded by a refusal.
TEST_F(ContextTest, SetSimulationChecksItsStateAndComesAfterATeleport) {
  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 2;
  spec.frames_per_clip = 60;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, 2);
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();
  mmdb::CharacterState state;
  state.position = {1.f, 0.f, 2.f};
  state.velocity = {0.f, 0.f, NAN};
  mmdb::Status s = crowd.setSimulation(0, state);
  EXPECT_STREQ(s.message(), "setSimulation: character 0's state is not finite");
  state.velocity = {0.f, 0.f, 1.f};
  state.rotation = glm::quat(0.f, 1.f, 0.f, 0.f);  // a half turn about X: no yaw to take
  EXPECT_EQ(crowd.setSimulation(0, state).code(), mmdb::ErrorCode::InvalidArgument);
  EXPECT_EQ(crowd.setSimulation(2, mmdb::CharacterState{}).code(),
            mmdb::ErrorCode::InvalidArgument);
  // Refused states leave nothing to record: the next step sets no simulation.
  ASSERT_TRUE(crowd.stepAndWait(1.f / 60).ok());
  for (const mmdb::gpu::CharacterInput& in : crowd.inputs()) EXPECT_EQ(in.set_simulation, 0u);

  state.rotation = glm::angleAxis(0.5f, glm::vec3(0.f, 1.f, 0.f));
  const mmdb::Float4 here{0.f, 0.f, 0.f, 0.f}, facing{0.f, 0.f, 0.f, 1.f};
  ASSERT_TRUE(crowd.teleport(1, here, facing).ok());  // teleport first: fine
  ASSERT_TRUE(crowd.setSimulation(1, state).ok());
  ASSERT_TRUE(crowd.setSimulation(0, state).ok());
  s = crowd.teleport(0, here, facing);
  EXPECT_STREQ(s.message(),
               "teleport: character 0 has a simulation root set for the next step; teleport "
               "first, then setSimulation");
  EXPECT_TRUE(crowd.place(0, here, facing).ok()) << "place leaves the simulation alone";
  ASSERT_TRUE(crowd.stepAndWait(1.f / 60).ok());
  // The step started from the state set: one controller update of it.
  const auto characters = crowd.readCharacters();
  ASSERT_TRUE(characters);
  for (uint32_t i = 0; i < 2; ++i) {
    const mmdb::gpu::CrowdCharacter& c = characters.value()[i];
    EXPECT_NEAR(c.sim_position.x, 1.f, 0.05f) << i;
    EXPECT_NEAR(c.sim_position.z, 2.f, 0.05f) << i;
  }
  EXPECT_TRUE(crowd.teleport(0, here, facing).ok()) << "a new step, a new order";
}

// Foot locking needs the view's legs and settings that are finite and >= 0, as on the CPU; the same
// skeleton plays without it.
TEST_F(ContextTest, FootLockingRefusesALeglessSkeletonAndBadSettingsByName) {
  mmdb::test::SyntheticSpec legless;
  legless.clips = 2;
  legless.frames_per_clip = 60;
  auto t = makeTestDatabase(legless);
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->view.legs_status.ok());
  auto refused = mmdb::gpu::Crowd::create(*context(), t->view, 2);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), mmdb::ErrorCode::InvalidArgument);
  EXPECT_STREQ(refused.error().message(),
               "foot locking: left leg: the skeleton names no LeftToe joint (or set foot_locking "
               "= false)");
  mmdb::gpu::CrowdSettings settings;
  settings.foot_locking = false;
  auto unlocked = mmdb::gpu::Crowd::create(*context(), t->view, 2, settings);
  ASSERT_TRUE(unlocked) << unlocked.error().message();
  EXPECT_TRUE(unlocked.value()->stepAndWait(1.f / 60).ok());

  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 2;
  spec.frames_per_clip = 60;
  auto legged = makeTestDatabase(spec);
  ASSERT_TRUE(legged);
  ASSERT_TRUE(legged->view.legs_status.ok()) << legged->view.legs_status.message();
  EXPECT_EQ(legged->view.legs[1].toe, 8u);
  mmdb::gpu::CrowdSettings bad;
  bad.foot_unlock_halflife = -0.1f;
  auto halflife = mmdb::gpu::Crowd::create(*context(), legged->view, 2, bad);
  ASSERT_FALSE(halflife);
  EXPECT_STREQ(halflife.error().message(), "foot_unlock_halflife -0.1 s must be finite and >= 0");
  bad = {};
  bad.ik_toe_length = std::nanf("");
  auto toe = mmdb::gpu::Crowd::create(*context(), legged->view, 2, bad);
  ASSERT_FALSE(toe);
  EXPECT_STREQ(toe.error().message(), "ik_toe_length nan m must be finite and >= 0");
}

// Both crowds stagger their starts by default, and neither does with reference().
TEST(GpuCrowdSettings, StartStaggerDefaultsAreTheCpuCrowds) {
  EXPECT_EQ(mmdb::gpu::CrowdSettings{}.start_stagger_intervals,
            mmdb::CrowdSettings{}.start_stagger_intervals);
  EXPECT_EQ(mmdb::gpu::CrowdSettings::reference().start_stagger_intervals,
            mmdb::CrowdSettings::reference().start_stagger_intervals);
}

// The neighbourhood means what SearchRequest::neighbourhood_frames means: negative is the file's
// default (1/3 s at its rate), anything else is taken as it is.
TEST_F(ContextTest, TheNeighbourhoodDefaultsToTheFilesAsOnTheCpu) {
  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 2;
  spec.frames_per_clip = 60;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  mmdb::gpu::CrowdSettings settings;
  EXPECT_EQ(settings.neighbourhood_frames, mmdb::kDefaultNeighbourhood);
  auto by_default = mmdb::gpu::Crowd::create(*context(), t->view, 1, settings);
  ASSERT_TRUE(by_default) << by_default.error().message();
  EXPECT_EQ(by_default.value()->params().neighbourhood_frames, t->db.defaultNeighbourhoodFrames());
  settings.neighbourhood_frames = 0;
  auto none = mmdb::gpu::Crowd::create(*context(), t->view, 1, settings);
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_EQ(none.value()->params().neighbourhood_frames, 0);
}

TEST_F(ContextTest, AnEnginesDeviceRunsACrowdFromItsOwnCommandBuffer) {
  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 2;
  spec.frames_per_clip = 120;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  mmdb::gpu::Context* engine = context();
  auto wrapped = mmdb::gpu::Context::wrap(engine->instance(), engine->physicalDevice(),
                                          engine->device(), engine->queue(), engine->queueFamily());
  auto crowd = mmdb::gpu::Crowd::create(*wrapped, t->view, 8);
  ASSERT_TRUE(crowd) << crowd.error().message();

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
    ASSERT_TRUE(crowd.value()->setStick(0, 0.f, 1.f).ok());
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

  const auto decisions = valueOf(crowd.value()->readDecisions());
  ASSERT_EQ(decisions.size(), 8u);
  for (const auto& d : decisions) EXPECT_NE(d.frame, mmdb::gpu::kNoFrame);
  const auto states = valueOf(crowd.value()->readCharacters());
  ASSERT_EQ(states.size(), 8u);
  EXPECT_EQ(states[0].search_count, 1u) << "one start search, then the timer runs";
  EXPECT_GT(states[0].sim_position.z, 0.f) << "the stick pushed the character along +Z";
  const mmdb::gpu::PassTimings timings = crowd.value()->readTimings();
  if (engine->info().timestamp_period_ns > 0) {
    EXPECT_TRUE(timings.valid);
    EXPECT_GT(timings.total_ms, 0.0);
  }
}

}  // namespace
}  // namespace mmdb::test
