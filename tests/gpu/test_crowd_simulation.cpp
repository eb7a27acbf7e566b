// A crowd of 64 characters for 600 frames (10 s at 60 Hz) with scripted sticks, on the GPU and on
// its CPU twin, an mmdb::Crowd created with the same settings: the two make the same decisions
// every frame, show the same poses and walk the same achieved paths (the root motion of the
// frames played, from which the queries are built).
//
// The skeleton has legs and foot locking is on: the same feet lock and let go on both, their
// targets within 1e-4 m.
//
// Every ninth character is teleported twice (mmdb::Crowd::teleport and the GPU's): both go on
// alike, with their feet let go; every eleventh is placed aside once (Crowd::place), its feet
// held; every seventh has its simulation root set twice (Crowd::setSimulation), once right after
// a teleport of the same step: the same trajectories and decisions follow.
//
// A second run gives a third of the characters run-time block weights (the same on both crowds)
// on a database with cost biases (negative ones included), and staggers the starts over two
// intervals (CrowdSettings::start_stagger_intervals): the characters start over the first 12
// steps, alike on both.
//
// The query's trajectory columns come from exp, sin, cos and atan, which a GPU computes to a few
// ulps of the CPU's, so two candidates whose costs differ by about 1e-6 relative may swap. Such
// a near-tie is verified to be one (both costs within 1e-5 relative on the CPU) and the CPU crowd
// is then given the GPU's pick as its search result; anything else is a failure, and near-ties
// must stay rare.
#include "gpu_test_util.h"

#include <mmdb/controller.h>
#include <mmdb/crowd.h>
#include <mmdb/search.h>

#include <cmath>

namespace mmdb::test {
namespace {

using mmdb::gpu::SearchReason;

constexpr uint32_t kCharacters = 64;
constexpr int kFrames = 600;
constexpr float kDt = 1.f / 60;

// Stick of a character at a time: a direction that turns in steps every 1.5 s and a speed that
// sometimes drops to zero (standing).
glm::vec2 scriptedStick(uint32_t character, int frame) {
  const int segment = (frame + int(character) * 17) / 90;
  // Off the 30-degree grid: an exact half turn from the initial +Z facing has two equally short
  // ways round, and which one float rounding picks may differ between devices.
  const float angle = float((segment * 7 + int(character) * 3) % 12) * (3.14159265f / 6) + 0.1f;
  const float speed =
      ((segment + int(character)) % 4 == 0) ? 0.f : 0.4f + 0.2f * float((segment + character) % 4);
  return {speed * std::sin(angle), speed * std::cos(angle)};
}

// The CPU crowd that decides as the GPU crowd with these push constants does.
mmdb::Crowd cpuTwin(const mmdb::Database& db, const mmdb::gpu::PassParams& p,
                    bool foot_locking = true, uint32_t start_stagger_intervals = 0,
                    const mmdb::SynchronizationSettings& sync = {}) {
  mmdb::CrowdSettings settings;
  settings.synchronization = sync;
  settings.search_interval_ticks = p.search_interval_ticks;
  settings.stagger_phases = p.stagger_phases;
  settings.transition_cost = p.transition_cost;
  settings.neighbourhood_frames = p.neighbourhood_frames;
  settings.max_drift = p.max_drift;
  settings.inertialization_halflife = p.inertialization_halflife;
  settings.inertialization_rate_halflife = p.inertialization_rate_halflife;
  settings.controller_halflife = p.controller_halflife;
  settings.jump_cooldown = p.jump_cooldown;
  settings.search_when_settled = (p.policies & mmdb::gpu::kPolicySearchWhenSettled) != 0;
  settings.range_end_moves_on = (p.policies & mmdb::gpu::kPolicyRangeEndMovesOn) != 0;
  EXPECT_EQ((p.policies & mmdb::gpu::kPolicyStaggerStarts) != 0, start_stagger_intervals > 0);
  settings.start_stagger_intervals = start_stagger_intervals;
  settings.continue_window = float(p.policies >> mmdb::gpu::kPolicyContinueShift) / db.frameRate();
  settings.foot_locking = foot_locking;
  auto created = mmdb::Crowd::create(db, p.character_count, settings);
  EXPECT_TRUE(created) << created.error().message();
  return created ? std::move(created).value() : mmdb::Crowd();
}

// The cost of a frame for a request, as the search counts it (weights and bias included).
float costOf(const mmdb::Database& db, const mmdb::SearchRequest& request, int32_t frame) {
  std::vector<float> weight(request.query.size(), 1.f);
  for (uint32_t b = 0; b < request.block_weights.size(); ++b) {
    const mmdb::FeatureBlockInfo block = db.featureBlock(b);
    for (uint32_t c = block.first_column; c < block.first_column + block.width; ++c)
      weight[c] = request.block_weights[b];
  }
  float acc = frame == request.current_frame ? 0.f : request.transition_cost;
  const auto row = db.featureRow(uint32_t(frame));
  for (size_t c = 0; c < request.query.size(); ++c) {
    const float d = (request.query[c] - row[c]) * weight[c];
    acc += d * d;
  }
  return acc + db.frameBias(uint32_t(frame));
}

// Run-time weights of character i when a run gives them: every third character, each block's
// weight between 0.5 and 1.5.
std::vector<float> weightsOf(uint32_t character, uint32_t blocks) {
  std::vector<float> w;
  for (uint32_t b = 0; b < blocks; ++b) w.push_back(0.5f + 0.25f * float((character + b) % 5));
  return w;
}

// Whether joint j is `root` or below it.
bool below(const mmdb::Database& db, uint32_t root, size_t j) {
  for (int32_t p = int32_t(j); p >= 0; p = db.parents()[size_t(p)])
    if (p == int32_t(root)) return true;
  return false;
}

using CrowdSimulationTest = GpuTest;

// `clips` clips of 600 frames (10 s at 60 Hz) of a two-joint skeleton (no legs), for the timers.
mmdb::test::SyntheticSpec twoJointSpec(uint32_t clips) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = clips;
  spec.frames_per_clip = 600;
  spec.joints = 2;
  return spec;
}

void simulateAgainstTheCpu(bool weights_and_biases,
                           const mmdb::SynchronizationSettings& synchronization = {}) {
  const mmdb::Synchronization sync = synchronization.mode;
  mmdb::test::SyntheticSpec spec = leggedSpec();  // foot locking on, as by default
  spec.clips = 8;
  spec.frames_per_clip = 300;
  auto t = makeTestDatabase(spec, false, weights_and_biases);
  ASSERT_TRUE(t);
  const mmdb::Database& db = t->db;
  ASSERT_EQ(db.rangeBiases().empty(), !weights_and_biases);
  mmdb::gpu::CrowdSettings settings;
  settings.start_stagger_intervals = weights_and_biases ? 2 : 0;  // over the first 12 steps
  settings.synchronization = synchronization;
  // Held toes do not limit the adjustment here: that limit is a boundary on which the GPU's
  // rounding of exp and atan moves the share taken by up to a millimetre where the adjustment
  // runs along it, and over 600 steps the two crowds' queries would part by more than their
  // rounding. PassTest.FkMatchesForwardKinematicsJobAndAdvancesTheClock compares it, held toes
  // included, one step at a time.
  settings.synchronization.foot_reach = 1e6f;
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, kCharacters, settings);
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();

  mmdb::Crowd cpu =
      cpuTwin(db, crowd.params(), true, settings.start_stagger_intervals, settings.synchronization);
  ASSERT_EQ(cpu.characterCount(), kCharacters);
  // GPU poses are within a few ulps of the CPU's; inertialization offsets carry that over the
  // switches (the more so as the legs' joints turn fast: their offsets' velocities are large), so
  // a run with other decisions (the weighted one) gets a little more.
  const float pose_tolerance = weights_and_biases ? 5e-5f : 1e-5f;
  uint32_t weighted = 0;
  for (uint32_t i = 0; weights_and_biases && i < kCharacters; i += 3, ++weighted) {
    const std::vector<float> w = weightsOf(i, db.featureBlockCount());
    ASSERT_TRUE(crowd.setBlockWeights(i, w.data(), w.size()).ok());
    ASSERT_TRUE(cpu.setBlockWeights(i, w).ok());
  }
  const size_t joints = db.jointCount();
  uint64_t searches = 0, switches = 0, near_ties = 0, held = 0, foot_ties = 0;
  std::vector<bool> parted(kCharacters, false);  // left out after a tie of a foot's unlock
  float worst_pose = 0, worst_cost = 0, worst_path = 0, worst_foot = 0, worst_leg = 0;
  uint64_t locked = 0, blending = 0, teleports = 0, placed = 0, simulations = 0, tag_events = 0;
  uint64_t limited_steps = 0, adjusted_steps = 0, rated_steps = 0, warped_steps = 0;

  for (int frame = 0; frame < kFrames; ++frame) {
    std::vector<bool> forced(kCharacters);
    for (uint32_t i = 0; i < kCharacters; ++i) {
      const glm::vec2 stick = scriptedStick(i, frame);
      ASSERT_TRUE(crowd.setStick(i, stick.x, stick.y).ok());
      // A sharp turn of the stick asks for a search now, as a game would.
      forced[i] = frame > 0 && glm::length(stick - scriptedStick(i, frame - 1)) > 0.5f;
      if (forced[i]) {
        ASSERT_TRUE(crowd.forceSearch(i).ok());
      }
    }
    // Every ninth character teleported now and then, on both (the GPU's at the step's start).
    if (frame == 200 || frame == 400) {
      for (uint32_t i = 0; i < kCharacters; i += 9) {
        const glm::vec3 where(3.f * float(i % 5) - 6.f, 0.f, 2.f * float(frame / 200) - 1.f);
        const glm::quat yaw = glm::angleAxis(0.7f * float(i) + 0.1f, glm::vec3(0.f, 1.f, 0.f));
        ASSERT_TRUE(
            crowd.teleport(i, {where.x, where.y, where.z, 0.f}, {yaw.x, yaw.y, yaw.z, yaw.w}).ok());
        ASSERT_TRUE(cpu.teleport(i, where, yaw).ok());
        ++teleports;
      }
    }
    // Every seventh character's simulation root set a metre behind its placement, moving and
    // turning (a collision pushed the capsule), on both; at frame 200 right after the teleports.
    // (Frame 350 instead of 360 brings one toe to 0.29999 m of its lock, the unlock radius to
    // float precision: the crowds then part on a tie, as the search's near-ties above can.)
    if (frame == 200 || frame == 360) {
      for (uint32_t i = 0; i < kCharacters; i += 7) {
        const mmdb::CrowdCharacter& c = cpu.characters()[i];
        mmdb::CharacterState state;
        state.position = c.achieved_position + c.achieved_rotation * glm::vec3(0.f, 0.f, -1.f);
        state.velocity = c.achieved_rotation * glm::vec3(0.3f, 0.f, 0.8f);
        state.acceleration = glm::vec3(0.1f, 0.f, -0.2f);
        state.rotation = glm::angleAxis(0.3f * float(i), glm::vec3(0.f, 1.f, 0.f));
        state.angular_velocity = glm::vec3(0.f, 0.5f, 0.f);
        ASSERT_TRUE(crowd.setSimulation(i, state).ok());
        ASSERT_TRUE(cpu.setSimulation(i, state).ok());
        ++simulations;
      }
    }
    // Every eleventh character placed half a metre aside (the game owns the root), on both.
    if (frame == 300) {
      for (uint32_t i = 5; i < kCharacters; i += 11) {
        const mmdb::CrowdCharacter& c = cpu.characters()[i];
        const glm::vec3 where = c.achieved_position + glm::vec3(0.5f, 0.f, 0.f);
        const glm::quat yaw = c.achieved_rotation;
        ASSERT_TRUE(
            crowd.place(i, {where.x, where.y, where.z, 0.f}, {yaw.x, yaw.y, yaw.z, yaw.w}).ok());
        ASSERT_TRUE(cpu.place(i, where, yaw).ok());
        ++placed;
      }
    }
    const std::vector<mmdb::gpu::CharacterInput> inputs = crowd.inputs();
    ASSERT_TRUE(crowd.stepAndWait(kDt).ok());
    const auto decisions = valueOf(crowd.readDecisions());
    ASSERT_EQ(decisions.size(), kCharacters);
    // The first steps too: with staggered starts the characters start (and enter tags) in them.
    const bool check_pose = frame % 10 == 0 || frame < 12 || frame == kFrames - 1;
    std::vector<mmdb::gpu::ModelJoint> model;
    std::vector<mmdb::gpu::CrowdCharacter> characters;
    std::vector<mmdb::gpu::CharacterFeet> feet;
    std::vector<mmdb::Playing> playing;
    feet = valueOf(crowd.readFootLocks());  // every step, for the ties of the feet below
    if (check_pose) {
      model = valueOf(crowd.readModelPoses());
      characters = valueOf(crowd.readCharacters());
      playing = valueOf(crowd.readPlaying());
    }

    // The same inputs on the CPU: the GPU's stick, as it recorded it, and the same forces.
    for (uint32_t i = 0; i < kCharacters; ++i) {
      mmdb::StickInput stick;
      stick.desired_velocity = toVec3(inputs[i].desired_velocity);
      stick.desired_facing = toVec3(inputs[i].desired_facing);
      ASSERT_TRUE(cpu.setInput(i, stick).ok());
      if (forced[i]) {
        ASSERT_TRUE(cpu.forceSearch(i).ok());
      }
    }
    ASSERT_TRUE(cpu.beginStep(kDt).ok());
    ASSERT_TRUE(cpu.search().ok());
    for (uint32_t i = 0; i < kCharacters; ++i) {
      if (parted[i]) continue;
      ASSERT_EQ(decisions[i].reason, cpu.decisions()[i].reason)
          << "frame " << frame << " character " << i;
    }
    for (size_t k = 0; k < cpu.requests().size(); ++k) {
      const uint32_t i = cpu.searching()[k];
      if (parted[i]) continue;
      SCOPED_TRACE("frame " + std::to_string(frame) + " character " + std::to_string(i));
      ++searches;
      mmdb::SearchResult& found = cpu.results()[k];
      const uint32_t cpu_winner = found.frame < 0 ? mmdb::gpu::kNoFrame : uint32_t(found.frame);
      if (decisions[i].frame != cpu_winner) {
        ASSERT_NE(decisions[i].frame, mmdb::gpu::kNoFrame);
        ASSERT_GE(found.frame, 0);
        const mmdb::SearchRequest& request = cpu.requests()[k];
        const float a = costOf(db, request, found.frame);
        const float b = costOf(db, request, int32_t(decisions[i].frame));
        ASSERT_LE(std::fabs(a - b), 1e-5f * std::max(std::fabs(a), std::fabs(b)))
            << "GPU picked " << decisions[i].frame << " (cost " << b << "), CPU " << found.frame
            << " (cost " << a << ")";
        ++near_ties;
        found.frame = int32_t(decisions[i].frame);
      } else {
        const float relative =
            std::fabs(decisions[i].cost - found.cost) / std::max(1.f, std::fabs(found.cost));
        worst_cost = std::max(worst_cost, relative);
        EXPECT_LT(relative, 1e-4f) << "GPU cost " << decisions[i].cost << ", CPU " << found.cost;
      }
    }
    ASSERT_TRUE(cpu.endStep().ok());

    for (uint32_t i = 0; i < kCharacters; ++i) {
      if (parted[i]) continue;
      // A toe let go at the
      // unlock radius to float precision (its captured offset that long) on one side and not
      // the other is a tie, as the search's near-ties above: the crowds part there, and the
      // character is left out of the comparison from then on.
      bool tie = false;
      for (uint32_t leg = 0; leg < mmdb::kLegCount; ++leg) {
        const mmdb::gpu::FootLock& g = feet[i].foot[leg];
        const mmdb::FootLock& f = cpu.footLocks()[i * mmdb::kLegCount + leg];
        const float radius = mmdb::kDefaultFootUnlockRadius;
        const bool parts = (g.flags & mmdb::gpu::kFootLocked) != 0
                               ? !f.locked
                               : f.locked || std::fabs(g.since_unlock - f.since_unlock) > 1e-4f;
        tie = tie || (parts && (std::fabs(glm::length(f.offset) - radius) < 1e-4f ||
                                std::fabs(glm::length(toVec3(g.offset)) - radius) < 1e-4f));
      }
      if (tie) {
        parted[i] = true;
        ++foot_ties;
      }
      if (parted[i]) continue;
      SCOPED_TRACE("frame " + std::to_string(frame) + " character " + std::to_string(i));
      const mmdb::CrowdCharacter& c = cpu.characters()[i];
      if (decisions[i].switched) ++switches;
      ASSERT_EQ(decisions[i].switched, cpu.decisions()[i].switched);
      ASSERT_EQ(decisions[i].continued, cpu.decisions()[i].continued);
      ASSERT_EQ(decisions[i].held, cpu.decisions()[i].held);
      held += decisions[i].held;
      ASSERT_EQ(decisions[i].playing, c.current_frame);
      ASSERT_EQ(cpu.decisions()[i].playing, c.current_frame);
      if (!check_pose) continue;
      const float path = vecDistance(toVec3(characters[i].achieved_position), c.achieved_position);
      const float facing =
          quatDistance(toQuat(characters[i].achieved_rotation), c.achieved_rotation);
      worst_path = std::max({worst_path, path, facing});
      ASSERT_LT(path, 1e-4f) << "the achieved path";
      ASSERT_LT(vecDistance(toVec3(characters[i].sim_position), c.sim.position), 1e-4f)
          << "the simulation root";
      ASSERT_LT(facing, 1e-4f) << "the achieved facing";
      // The transition's clock: the same holds by the transition speed limit on both.
      ASSERT_NEAR(characters[i].transition_time, c.transition_time, 1e-5f);
      limited_steps += c.transition_time < c.since_switch - 1e-4f;
      // The step's root motion (a game that owns the root reads it): the same on both.
      ASSERT_LT(vecDistance(toVec3(characters[i].root_motion_world), c.root_motion_world), 1e-5f);
      ASSERT_LT(vecDistance(toVec3(characters[i].root_motion_local), c.root_motion_local), 1e-5f);
      ASSERT_LT(quatDistance(toQuat(characters[i].root_motion_rotation), c.root_motion_rotation),
                1e-5f);
      // The synchronization's adjustment: the same on both.
      ASSERT_LT(vecDistance(toVec3(characters[i].adjustment), c.adjustment_world), 1e-4f);
      ASSERT_NEAR(characters[i].adjustment.w, c.adjustment_angle, 1e-4f);
      adjusted_steps += glm::length(c.adjustment_world) > 1e-6f;
      ASSERT_EQ(characters[i].play_rate, c.play_rate);
      rated_steps += c.play_rate != 1.f;
      // The warp: the same map on both (its aim carries the achieved path's difference, times
      // the gap's closing rate over the clip's speed).
      ASSERT_NEAR(characters[i].warp.x, c.warp.xx, 1e-3f);
      ASSERT_NEAR(characters[i].warp.y, c.warp.zx, 1e-3f);
      ASSERT_NEAR(characters[i].warp.z, c.warp.xz, 1e-3f);
      ASSERT_NEAR(characters[i].warp.w, c.warp.zz, 1e-3f);
      warped_steps += !c.warp.identity();
      if (sync == mmdb::Synchronization::ControllerFollows) {
        ASSERT_LT(vecDistance(c.sim.position, c.achieved_position), 1e-6f);
      }
      for (uint32_t leg = 0; leg < mmdb::kLegCount; ++leg) {
        const mmdb::gpu::FootLock& g = feet[i].foot[leg];
        const mmdb::FootLock& f = cpu.footLocks()[i * mmdb::kLegCount + leg];
        ASSERT_EQ(bool(g.flags & mmdb::gpu::kFootLocked), f.locked) << "leg " << leg;
        ASSERT_EQ(bool(g.flags & mmdb::gpu::kFootBlending), f.blending) << "leg " << leg;
        ASSERT_EQ(bool(g.flags & mmdb::gpu::kFootContact), f.contact) << "leg " << leg;
        locked += f.locked;
        blending += f.blending;
        if (f.locked) {
          ASSERT_LT(vecDistance(toVec3(g.position), f.position), 1e-4f) << "leg " << leg;
        }
        // A shown toe carries the placement's difference (above), and a blend's captured
        // velocity (a move over one dt) magnifies it.
        worst_foot = std::max(worst_foot, vecDistance(toVec3(g.target), f.target));
        ASSERT_LT(vecDistance(toVec3(g.target), f.target), 1e-3f) << "leg " << leg;
      }
      // What is playing, as a game reads it after the step: the same on both.
      mmdb::Playing p;
      ASSERT_TRUE(cpu.playing(i, p).ok());
      const mmdb::Playing& g = playing[i];
      ASSERT_EQ(g.playing, p.playing);
      ASSERT_EQ(g.clip, p.clip);
      ASSERT_EQ(g.frame, p.frame);
      ASSERT_EQ(g.clip_frame, p.clip_frame);
      ASSERT_NEAR(g.clip_time, p.clip_time, 1e-5f);
      ASSERT_EQ(g.range, p.range);
      ASSERT_EQ(g.tags, p.tags);
      ASSERT_EQ(g.tags_entered, p.tags_entered);
      ASSERT_EQ(g.tags_left, p.tags_left);
      ASSERT_EQ(g.contacts, p.contacts);
      ASSERT_EQ(g.locked_feet, p.locked_feet);
      ASSERT_EQ(g.blending_feet, p.blending_feet);
      ASSERT_EQ(g.decision.reason, p.decision.reason);
      ASSERT_EQ(g.decision.switched, p.decision.switched);
      ASSERT_EQ(g.decision.playing, p.decision.playing);
      tag_events += uint64_t(g.tags_entered != 0) + uint64_t(g.tags_left != 0);
      for (size_t j = 0; j < joints; ++j) {
        const float dr = quatDistance(toQuat(model[i * joints + j].rotation),
                                      cpu.modelRotations()[i * joints + j]);
        const float dt = vecDistance(toVec3(model[i * joints + j].position),
                                     cpu.modelTranslations()[i * joints + j]);
        // A held (or warped) leg reaches for a point in the world, so its model pose carries the
        // achieved path's difference (up to 1e-4, above, magnified by a blend's captured
        // velocity) rather than the pose's.
        bool held = false;
        const bool warped = !cpu.characters()[i].warp.identity();
        for (uint32_t leg = 0; leg < mmdb::kLegCount; ++leg) {
          const mmdb::FootLock& f = cpu.footLocks()[i * mmdb::kLegCount + leg];
          held = held || ((f.locked || f.blending || warped) &&
                          below(db, cpu.legChains()[leg].upper_leg, j));
        }
        (held ? worst_leg : worst_pose) = std::max({held ? worst_leg : worst_pose, dr, dt});
        ASSERT_LT(dr, held ? 1e-3f : pose_tolerance) << "joint " << j;
        ASSERT_LT(dt, held ? 1e-3f : pose_tolerance) << "joint " << j;
      }
    }
  }
  std::printf(
      "[ crowd    ] %s: %llu searches, %llu inertialized switches, %llu near-ties, worst pose "
      "difference %.2g, worst relative cost difference %.2g, worst achieved path difference "
      "%.2g; feet locked %llu, blending %llu (checked steps), worst foot target difference %.2g, "
      "worst held leg difference %.2g; transitions held back by the speed limit %llu (checked "
      "steps); %llu parted on a foot's tie\n",
      weights_and_biases ? "weights and biases" : "cooked weights, no biases",
      (unsigned long long)searches, (unsigned long long)switches, (unsigned long long)near_ties,
      double(worst_pose), double(worst_cost), double(worst_path), (unsigned long long)locked,
      (unsigned long long)blending, double(worst_foot), double(worst_leg),
      (unsigned long long)limited_steps, (unsigned long long)foot_ties);
  EXPECT_GT(limited_steps, 0u) << "the speed limit held transitions back, alike on both";
  if (synchronization.rate_min != 1.f || synchronization.rate_max != 1.f) {
    EXPECT_GT(rated_steps, uint64_t(kCharacters) * 10) << "clips played faster and slower";
  } else {
    EXPECT_EQ(rated_steps, 0u);
  }
  if (sync == mmdb::Synchronization::CharacterFollows) {
    EXPECT_GT(adjusted_steps, uint64_t(kCharacters) * 10)
        << "the character followed the controller";
    EXPECT_GT(warped_steps, uint64_t(kCharacters) * 10) << "root motions and feet warped";
  } else {
    EXPECT_EQ(adjusted_steps, 0u);
    EXPECT_EQ(warped_steps, 0u);
  }
  // A search every 6 steps, less those the jump cooldown after each switch holds back.
  EXPECT_GT(searches, uint64_t(kCharacters) * kFrames / 16);
  EXPECT_GT(held, 0u) << "the jump cooldown held searches back on both";
  EXPECT_GT(switches, 100u);
  EXPECT_LE(near_ties, searches / 1000 + 1);
  EXPECT_LE(foot_ties, 2u) << "characters parted on a tie of a foot's unlock";
  EXPECT_GT(locked, uint64_t(kCharacters) * 20) << "feet lock";
  EXPECT_GT(blending, uint64_t(kCharacters)) << "and let go";
  EXPECT_EQ(weighted, weights_and_biases ? 22u : 0u);
  EXPECT_EQ(teleports, 16u) << "teleports on both, then the same decisions, poses and feet";
  EXPECT_EQ(placed, 6u);
  EXPECT_EQ(simulations, 20u);
  EXPECT_GE(tag_events, uint64_t(kCharacters)) << "tags entered and left, read alike";
}

TEST_F(CrowdSimulationTest, SixtyFourCharactersDecideAndPoseAsOnTheCpu) {
  simulateAgainstTheCpu(false);
}

TEST_F(CrowdSimulationTest, WeightedCharactersOnABiasedDatabaseDecideAsOnTheCpu) {
  simulateAgainstTheCpu(true);
}

TEST_F(CrowdSimulationTest, ControllersThatFollowTheirCharactersDecideAsOnTheCpu) {
  mmdb::SynchronizationSettings sync;
  sync.mode = mmdb::Synchronization::ControllerFollows;
  simulateAgainstTheCpu(false, sync);
}

TEST_F(CrowdSimulationTest, ClipsPlayedAtTheSticksSpeedDecideAsOnTheCpu) {
  mmdb::SynchronizationSettings sync;
  sync.rate_min = 0.5f;
  sync.rate_max = 1.5f;
  simulateAgainstTheCpu(false, sync);
}

TEST_F(CrowdSimulationTest, StaggeredTimersSpreadTheSearchesOverFrames) {
  auto t = makeTestDatabase(twoJointSpec(4));
  ASSERT_TRUE(t);
  // The reference's timers: no jump cooldown holds a search back (and no legs to lock).
  auto created =
      mmdb::gpu::Crowd::create(*context(), t->view, 60, mmdb::gpu::CrowdSettings::reference());
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();
  for (int frame = 0; frame < 30; ++frame) {
    ASSERT_TRUE(crowd.stepAndWait(kDt).ok());
    const auto decisions = valueOf(crowd.readDecisions());
    int periodic = 0, start = 0;
    for (const auto& d : decisions) {
      periodic += d.reason == SearchReason::Periodic;
      start += d.reason == SearchReason::Start;
    }
    if (frame == 0) {
      EXPECT_EQ(start, 60) << "everyone starts with a search";
    } else if (frame >= 12) {
      // 0.1 s at 60 Hz is 6 frames and 6 phases: 10 periodic searches a frame, not 60 every 6th.
      EXPECT_GE(periodic, 7) << "frame " << frame;
      EXPECT_LE(periodic, 13) << "frame " << frame;
    }
  }
}

// With start_stagger_intervals 1, character c's Start search comes at step c % 6 (0.1 s at 60 Hz,
// 6 phases), on the GPU as on the CPU, and the periodic searches are as evenly spread as without
// it.
TEST_F(CrowdSimulationTest, StaggeredStartsSpreadTheFirstSearchesOverAnInterval) {
  auto t = makeTestDatabase(twoJointSpec(4));
  ASSERT_TRUE(t);
  mmdb::gpu::CrowdSettings settings = mmdb::gpu::CrowdSettings::reference();
  settings.start_stagger_intervals = 1;
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, 60, settings);
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();
  mmdb::Crowd cpu = cpuTwin(t->db, crowd.params(), false, 1);
  for (int frame = 0; frame < 30; ++frame) {
    ASSERT_TRUE(crowd.stepAndWait(kDt).ok());
    ASSERT_TRUE(cpu.step(kDt).ok());
    const auto decisions = valueOf(crowd.readDecisions());
    int periodic = 0;
    for (uint32_t c = 0; c < decisions.size(); ++c) {
      SCOPED_TRACE("frame " + std::to_string(frame) + " character " + std::to_string(c));
      ASSERT_EQ(decisions[c].reason, cpu.decisions()[c].reason);
      ASSERT_EQ(decisions[c].reason == SearchReason::Start, frame < 6 && int(c % 6) == frame);
      ASSERT_EQ(cpu.characters()[c].playing, int(c % 6) <= frame);
      periodic += decisions[c].reason == SearchReason::Periodic;
    }
    if (frame >= 6) {
      EXPECT_EQ(periodic, 10) << "frame " << frame;
    }
  }
}

// The timer counts whole steps: with 6 (0.1 s at 60 Hz), a periodic search every 6th step,
// never the 7th as a float timer counting down from 0.1 s by 1/60 gave.
// The reference controller's decision rules (referenceController(): the start playing the first
// range, the 0.1 s float timer, the settled stick at most once per 0.1 s, the search that must
// move at a clip's end) decide alike on both, step by step, sticks that jump and settle included.
TEST_F(CrowdSimulationTest, TheReferenceControllersRulesDecideAsOnTheCpu) {
  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 6;
  spec.frames_per_clip = 240;
  auto t = makeTestDatabase(spec, false, false);
  ASSERT_TRUE(t);
  constexpr uint32_t kCount = 16;
  const mmdb::gpu::CrowdSettings settings = mmdb::gpu::CrowdSettings::referenceController();
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, kCount, settings);
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();
  auto made = mmdb::Crowd::create(t->db, kCount, mmdb::CrowdSettings::referenceController());
  ASSERT_TRUE(made.ok()) << made.error().message();
  mmdb::Crowd& cpu = made.value();
  uint64_t counts[5] = {};
  float worst_joint = 0.f, worst_simulation = 0.f;
  int near_ties = 0;
  const uint32_t joints = t->db.jointCount();
  for (int frame = 0; frame < 400; ++frame) {
    for (uint32_t i = 0; i < kCount; ++i) {
      // The scripted stick, jumping to a standstill and back now and then (a settle follows).
      glm::vec2 stick = scriptedStick(i, frame);
      if ((frame + int(i) * 5) % 37 < 2) stick = glm::vec2(0.f);
      ASSERT_TRUE(crowd.setStick(i, stick.x, stick.y).ok());
    }
    const std::vector<mmdb::gpu::CharacterInput> inputs = crowd.inputs();
    for (uint32_t i = 0; i < kCount; ++i) {
      mmdb::StickInput input;
      input.desired_velocity = toVec3(inputs[i].desired_velocity);
      input.desired_facing = toVec3(inputs[i].desired_facing);
      ASSERT_TRUE(cpu.setInput(i, input).ok());
    }
    if (frame == 0) {
      // A switch in the very first step, before any offsets were made.
      ASSERT_TRUE(crowd.forceSearch(1).ok());
      ASSERT_TRUE(cpu.forceSearch(1).ok());
    }
    ASSERT_TRUE(crowd.stepAndWait(kDt).ok());
    const auto decisions = valueOf(crowd.readDecisions());
    ASSERT_TRUE(cpu.beginStep(kDt).ok());
    ASSERT_TRUE(cpu.search().ok());
    for (size_t k = 0; k < cpu.requests().size(); ++k) {
      // A near tie may pick the other frame: the reference's acos turns a last-place difference
      // in a w near 1 (the GPU's own sin and cos of the facing) into up to 3e-4 rad, which moves
      // the query's directions by up to 1e-4. The CPU plays the GPU's, so the two go on together.
      const uint32_t i = cpu.searching()[k];
      mmdb::SearchResult& found = cpu.results()[k];
      if (found.frame < 0 || decisions[i].frame == uint32_t(found.frame)) continue;
      const float a = costOf(t->db, cpu.requests()[k], found.frame);
      const float b = costOf(t->db, cpu.requests()[k], int32_t(decisions[i].frame));
      ASSERT_LE(std::fabs(a - b), 1e-3f * std::max(1.f, std::fabs(a)))
          << "frame " << frame << " character " << i << ": GPU " << decisions[i].frame << ", CPU "
          << found.frame;
      found.frame = int32_t(decisions[i].frame);
      ++near_ties;
    }
    ASSERT_TRUE(cpu.endStep().ok());
    const auto playing = valueOf(crowd.readPlaying());
    const auto characters = valueOf(crowd.readCharacters());
    const auto model = valueOf(crowd.readModelPoses());
    for (uint32_t i = 0; i < kCount; ++i) {
      SCOPED_TRACE("frame " + std::to_string(frame) + " character " + std::to_string(i));
      const mmdb::Decision& c = cpu.decisions()[i];
      ASSERT_EQ(decisions[i].reason, c.reason);
      ASSERT_EQ(decisions[i].playing, c.playing);
      if (c.reason != SearchReason::None) {
        ASSERT_EQ(decisions[i].frame, c.frame);
      }
      ++counts[uint32_t(c.reason)];
      // The frame shown (the next one) and the pose (the reference's springs and in-place
      // decay, the GPU's own exponential and acos) as on the CPU.
      mmdb::Playing shown;
      ASSERT_TRUE(cpu.playing(i, shown).ok());
      ASSERT_EQ(playing[i].frame, shown.frame);
      worst_simulation = std::max(worst_simulation, vecDistance(toVec3(characters[i].sim_position),
                                                                cpu.characters()[i].sim.position));
      for (uint32_t j = 0; j < joints; ++j)
        worst_joint =
            std::max(worst_joint, vecDistance(toVec3(model[size_t(i) * joints + j].position),
                                              cpu.modelTranslations()[size_t(i) * joints + j]));
    }
  }
  std::printf(
      "reference controller, GPU against CPU: joints within %.2g m, simulation %.2g m, %d near "
      "ties\n",
      double(worst_joint), double(worst_simulation), near_ties);
  EXPECT_LT(worst_simulation, 1e-4f);
  EXPECT_LT(worst_joint, 1e-3f);
  EXPECT_EQ(counts[uint32_t(SearchReason::Start)], 0u) << "playing from creation";
  EXPECT_GT(counts[uint32_t(SearchReason::Periodic)], kCount * 400 / 10);
  EXPECT_GT(counts[uint32_t(SearchReason::Forced)], kCount) << "settled sticks";
  EXPECT_GT(counts[uint32_t(SearchReason::RangeEnd)], 0u) << "clips' ends";
}

TEST_F(CrowdSimulationTest, PeriodicSearchesComeEverySixthStep) {
  auto t = makeTestDatabase(twoJointSpec(2));
  ASSERT_TRUE(t);
  mmdb::gpu::CrowdSettings settings = mmdb::gpu::CrowdSettings::reference();
  settings.stagger_phases = 0;
  settings.foot_locking = false;  // no legs
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, 1, settings);
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();
  EXPECT_EQ(crowd.params().search_interval_ticks, 6u);
  std::vector<int> periodic;
  for (int step = 0; step < 40; ++step) {
    ASSERT_TRUE(crowd.stepAndWait(kDt).ok());
    const auto decisions = valueOf(crowd.readDecisions());
    ASSERT_EQ(decisions.size(), 1u);
    if (step == 0) {
      EXPECT_EQ(decisions[0].reason, SearchReason::Start);
    }
    if (decisions[0].reason == SearchReason::Periodic) periodic.push_back(step);
  }
  EXPECT_EQ(periodic, (std::vector<int>{6, 12, 18, 24, 30, 36}));
}

}  // namespace
}  // namespace mmdb::test
