// Each compute pass against its CPU twin in the runtime, on random states: the GPU state is
// written, one pass runs, and its outputs are compared with what the runtime's functions give
// for the same inputs. Winners and costs of the match must be identical; poses agree to 1e-5.
#include "gpu_test_util.h"

#include "compress/pose_compression.h"

#include <mmdb/controller.h>
#include <mmdb/playback.h>
#include <mmdb/search.h>
#include <mmdb/synchronization.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>

namespace mmdb::test {
namespace {

using mmdb::gpu::CharacterInput;
using mmdb::gpu::CrowdCharacter;
using mmdb::gpu::JointOffset;
using mmdb::gpu::JointPose;
using mmdb::gpu::MatchResult;
using mmdb::gpu::Pass;
using mmdb::gpu::SearchReason;

constexpr float kDt = 1.f / 60;
constexpr float kPoseTolerance = 1e-5f;
constexpr uint32_t kCharacters = 48;

class PassTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    mmdb::test::SyntheticSpec spec = leggedSpec();
    spec.clips = 6;
    spec.frames_per_clip = 180;
    db_ = makeTestDatabase(spec);
    ASSERT_TRUE(db_);
  }
  std::unique_ptr<mmdb::gpu::Crowd> makeCrowd(const mmdb::gpu::CrowdSettings& settings = {}) {
    auto crowd = mmdb::gpu::Crowd::create(*context(), db_->view, kCharacters, settings);
    EXPECT_TRUE(crowd) << crowd.error().message();
    return crowd ? std::move(crowd.value()) : nullptr;
  }
  const mmdb::Database& db() const { return db_->db; }

  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
  uint32_t below(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  glm::vec3 randomVec(float scale) {
    return {uniform(-scale, scale), uniform(-scale, scale), uniform(-scale, scale)};
  }
  glm::quat randomQuat() {
    glm::quat q(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
    return glm::normalize(q);
  }

  // A character playing a random clip at a random clip time, with a random controller state.
  void resolveAgainstTheJob(bool unrotated);

  CrowdCharacter randomPlaying() {
    CrowdCharacter s = mmdb::gpu::initialCharacter();
    const mmdb::ClipInfo clip = db().clip(below(db().clipCount()));
    s.clip_first = clip.first_frame;
    s.clip_count = clip.frame_count;
    s.clip_time = uniform(0, float(clip.frame_count - 1) / db().frameRate());
    const float key = std::floor(s.clip_time * db().frameRate() + mmdb::kClipTimeSnap);
    s.current_frame = clip.first_frame + uint32_t(std::min(key, float(clip.frame_count - 1)));
    s.flags = mmdb::gpu::kCharacterPlaying;
    s.since_switch = uniform(0, 0.6f);
    s.transition_time = s.since_switch;  // no transition held back
    s.search_timer = int(below(8)) - 2;
    s.sim_position = toFloat4(glm::vec3(uniform(-5, 5), 0, uniform(-5, 5)));
    s.sim_velocity = toFloat4(glm::vec3(uniform(-2, 2), 0, uniform(-2, 2)));
    s.sim_acceleration = toFloat4(glm::vec3(uniform(-3, 3), 0, uniform(-3, 3)));
    const float yaw = uniform(-3.1f, 3.1f);
    s.sim_rotation = {0, std::sin(yaw / 2), 0, std::cos(yaw / 2)};
    s.sim_angular_velocity = toFloat4(glm::vec3(0, uniform(-2, 2), 0));
    // The achieved path near the controller, sometimes further than max_drift from it.
    s.achieved_position =
        toFloat4(toVec3(s.sim_position) + glm::vec3(uniform(-0.8f, 0.8f), 0, uniform(-0.8f, 0.8f)));
    const float achieved_yaw = yaw + uniform(-0.6f, 0.6f);
    s.achieved_rotation = {0, std::sin(achieved_yaw / 2), 0, std::cos(achieved_yaw / 2)};
    // A warp eased part of the way: the stride shortened, the way turned a little.
    const float stride = uniform(0.4f, 1.f), turn = uniform(-0.3f, 0.3f);
    s.warp = {std::cos(turn), std::sin(turn) * stride, -std::sin(turn), std::cos(turn) * stride};
    return s;
  }

  std::vector<float> sample(uint32_t first, float time, std::vector<glm::quat>& r,
                            std::vector<glm::vec3>& t, std::vector<glm::vec3>& v,
                            std::vector<glm::vec3>& w) {
    const size_t n = db().jointCount();
    r.assign(n, glm::quat());
    t.assign(n, glm::vec3());
    v.assign(n, glm::vec3());
    w.assign(n, glm::vec3());
    mmdb::SamplePoseJob job;
    job.database = &db();
    job.clip = uint32_t(db().clipOfFrame(first));
    job.time = time;
    job.rotations = r;
    job.translations = t;
    job.velocities = v;
    job.angular_velocities = w;
    EXPECT_TRUE(job.Run().ok());
    return {};
  }

  std::mt19937 rng_{20261130};
  std::unique_ptr<TestDatabase> db_;
};

mmdb::StickInput stickOf(const CharacterInput& in) {
  mmdb::StickInput stick;
  stick.desired_velocity = toVec3(in.desired_velocity);
  stick.desired_facing = toVec3(in.desired_facing);
  return stick;
}

bool lastOfRange(const mmdb::Database& db, uint32_t frame) {
  for (const mmdb::MatchRange& r : db.ranges())
    if (r.first_frame + r.frame_count == frame + 1) return true;
  return false;
}

TEST_F(PassTest, BuildQueryMatchesTheControllerAndBuildQuery) {
  auto crowd = makeCrowd();
  ASSERT_TRUE(crowd);
  std::vector<CrowdCharacter> states(kCharacters);
  for (uint32_t i = 0; i < kCharacters; ++i) {
    states[i] = randomPlaying();
    if (i % 7 == 0) states[i].flags = 0;  // nothing playing yet
    if (i % 11 == 1) {                    // at the last frame of a matchable range
      const mmdb::MatchRange& r = db().ranges()[below(uint32_t(db().ranges().size()))];
      states[i].current_frame = r.first_frame + r.frame_count - 1;
    }
    CharacterInput in{};
    in.desired_velocity =
        toFloat4(glm::vec3(uniform(-1.75f, 1.75f), uniform(-1, 1), uniform(-1.75f, 1.75f)));
    in.desired_facing = i % 5 == 0 ? mmdb::Float4{0, 0, 0, 0}
                                   : toFloat4(glm::vec3(uniform(-1, 1), 0, uniform(-1, 1)));
    in.force_search = i % 4 == 0;
    crowd->setInput(i, in);
    // The policies' state: an input that changed sharply last step, a forced search waiting.
    if (i % 3 == 0) states[i].flags |= mmdb::gpu::kCharacterInputChanging;
    if (i % 9 == 2) states[i].flags |= mmdb::gpu::kCharacterForcePending;
    states[i].input_velocity =
        i % 2 ? toFloat4(glm::vec3(uniform(-1.75f, 1.75f), 0, uniform(-1.75f, 1.75f)))
              : mmdb::Float4{in.desired_velocity.x, 0, in.desired_velocity.z, 0};
    const float facing_yaw = uniform(-3.1f, 3.1f);
    states[i].input_facing = toFloat4(glm::vec3(std::sin(facing_yaw), 0, std::cos(facing_yaw)));
  }
  ASSERT_TRUE(crowd->writeCharacters(states).ok());
  ASSERT_TRUE(crowd->passAndWait(Pass::BuildQuery, kDt).ok());
  const mmdb::gpu::CrowdSettings policy;  // makeCrowd()'s: the defaults
  const mmdb::SettleLimits limits =
      mmdb::settleLimits(policy.settle_velocity_change, policy.settle_rotation_change, kDt);
  const auto after = valueOf(crowd->readCharacters());
  const auto results = valueOf(crowd->readResults());
  const auto queries = valueOf(crowd->readQueries());
  ASSERT_EQ(after.size(), kCharacters);

  mmdb::ControllerSettings settings;
  uint32_t searched = 0;
  for (uint32_t i = 0; i < kCharacters; ++i) {
    SCOPED_TRACE("character " + std::to_string(i));
    const CrowdCharacter& s = states[i];
    const mmdb::StickInput stick = stickOf(crowd->inputs()[i]);
    mmdb::CharacterState sim;
    sim.position = toVec3(s.sim_position);
    sim.velocity = toVec3(s.sim_velocity);
    sim.acceleration = toVec3(s.sim_acceleration);
    sim.rotation = toQuat(s.sim_rotation);
    sim.angular_velocity = toVec3(s.sim_angular_velocity);
    mmdb::updateCharacter(sim, stick, settings, kDt);
    EXPECT_LT(vecDistance(sim.position, toVec3(after[i].sim_position)), 1e-5f);
    EXPECT_LT(vecDistance(sim.velocity, toVec3(after[i].sim_velocity)), 1e-5f);
    EXPECT_LT(vecDistance(sim.acceleration, toVec3(after[i].sim_acceleration)), 1e-4f);
    EXPECT_LT(quatDistance(sim.rotation, toQuat(after[i].sim_rotation)), 1e-5f);
    EXPECT_LT(vecDistance(sim.angular_velocity, toVec3(after[i].sim_angular_velocity)), 1e-4f);

    const bool playing = s.flags & mmdb::gpu::kCharacterPlaying;
    const mmdb::ClipInfo clip = db().clip(uint32_t(db().clipOfFrame(s.current_frame)));
    // mmdb::Crowd's decision: the stick settling, then the reason, then the jump cooldown.
    glm::vec3 facing = toVec3(crowd->inputs()[i].desired_facing);
    facing.y = 0;
    if (glm::dot(facing, facing) <= 1e-12f) facing = toVec3(s.input_facing);
    glm::vec3 change =
        glm::vec3(stick.desired_velocity.x, 0, stick.desired_velocity.z) - toVec3(s.input_velocity);
    const bool changing = change.x * change.x + change.z * change.z > limits.velocity_squared ||
                          mmdb::turnedSharply(toVec3(s.input_facing), facing, limits.cos_limit);
    const bool settled = playing && (s.flags & mmdb::gpu::kCharacterInputChanging) && !changing;
    SearchReason expected = SearchReason::None;
    if (!playing) {
      // A character not playing waits for its staggered start (a timer still above 0).
      if (policy.start_stagger_intervals == 0 || s.search_timer <= 0)
        expected = SearchReason::Start;
    } else if (lastOfRange(db(), s.current_frame) ||
               s.current_frame + 1 >= clip.first_frame + clip.frame_count)
      expected = SearchReason::RangeEnd;
    else if (crowd->inputs()[i].force_search || (s.flags & mmdb::gpu::kCharacterForcePending) ||
             settled)
      expected = SearchReason::Forced;
    else if (s.search_timer <= 0)
      expected = SearchReason::Periodic;
    const bool held = (expected == SearchReason::Forced || expected == SearchReason::Periodic) &&
                      s.since_switch < policy.jump_cooldown;
    EXPECT_EQ(bool(after[i].flags & mmdb::gpu::kCharacterHeld), held);
    EXPECT_EQ(bool(after[i].flags & mmdb::gpu::kCharacterForcePending),
              held && expected == SearchReason::Forced);
    EXPECT_EQ(bool(after[i].flags & mmdb::gpu::kCharacterInputChanging), playing && changing);
    EXPECT_LT(vecDistance(toVec3(after[i].input_facing), facing), 1e-6f);
    if (held) expected = SearchReason::None;
    ASSERT_EQ(SearchReason(results[i].reason), expected);
    if (expected == SearchReason::None) continue;
    ++searched;

    float trajectory[mmdb::kTrajectoryFloats];
    mmdb::predictTrajectory(sim, stick, settings, trajectory);
    expressInCharacterFrame(sim, toVec3(s.achieved_position), toQuat(s.achieved_rotation),
                            crowd->params().max_drift, trajectory);
    std::vector<float> query(db().featureCount());
    ASSERT_TRUE(
        mmdb::buildQuery(db(), playing ? int32_t(s.current_frame) : -1, trajectory, query).ok());
    const float* gpu = queries.data() + size_t(i) * db().featureStride();
    for (uint32_t c = 0; c < db().featureCount(); ++c) {
      if (c < 15) {
        EXPECT_EQ(gpu[c], query[c]) << "pose column " << c << " is a copy of the row";
      } else {
        EXPECT_NEAR(gpu[c], query[c], 2e-5f * std::max(1.f, std::fabs(query[c]))) << "column " << c;
      }
    }
    for (uint32_t c = db().featureCount(); c < db().featureStride(); ++c) EXPECT_EQ(gpu[c], 0.f);
  }
  EXPECT_GT(searched, kCharacters / 3);
}

struct MatchCase {
  bool shared_memory;
  bool bounds;
  float transition_cost;
};

class MatchTest : public PassTest, public ::testing::WithParamInterface<MatchCase> {};

TEST_P(MatchTest, WinnersAndCostsEqualTheExhaustiveSearch) {
  mmdb::gpu::CrowdSettings settings;
  settings.shared_memory_reduction = GetParam().shared_memory;
  settings.transition_cost = GetParam().transition_cost;
  settings.bounds_pruning = GetParam().bounds;
  auto crowd = makeCrowd(settings);
  ASSERT_EQ(crowd->params().bounds_size, GetParam().bounds ? db().boundsSmallSize() : 0u);
  ASSERT_GT(crowd->params().range_end_margin, 0u);  // the default margin is exercised
  ASSERT_TRUE(crowd);
  const uint64_t locomotion = db().tagMask("locomotion"), idle = db().tagMask("idle"),
                 jump = db().tagMask("jump");
  ASSERT_NE(locomotion, 0u);
  const mmdb::TagFilter filters[] = {{0, 0},    {locomotion, 0}, {0, idle},
                                     {jump, 0}, {1ull << 40, 0}, {0, locomotion | idle}};
  const SearchReason reasons[] = {SearchReason::Periodic, SearchReason::Forced, SearchReason::Start,
                                  SearchReason::RangeEnd, SearchReason::None};

  for (int round = 0; round < 3; ++round) {
    std::vector<CrowdCharacter> states(kCharacters);
    std::vector<MatchResult> results(kCharacters);
    std::vector<float> queries(size_t(kCharacters) * db().featureStride(), 0.f);
    for (uint32_t i = 0; i < kCharacters; ++i) {
      states[i] = randomPlaying();
      results[i] = {12345, -1.f, uint32_t(reasons[(i + round) % 5]), 0};
      // A query near a random row, so the winner is a real decision, not a coin toss.
      const uint32_t near = below(db().frameCount());
      for (uint32_t c = 0; c < db().featureCount(); ++c)
        queries[size_t(i) * db().featureStride() + c] =
            db().featureRow(near)[c] + uniform(-0.4f, 0.4f);
      const mmdb::TagFilter& f = filters[(i / 5 + round) % 6];
      crowd->setTagFilter(i, f.required, f.excluded);
    }
    ASSERT_TRUE(crowd->writeCharacters(states).ok());
    ASSERT_TRUE(crowd->writeResults(results).ok());
    ASSERT_TRUE(crowd->writeQueries(queries).ok());
    ASSERT_TRUE(crowd->passAndWait(Pass::Match, kDt).ok());
    const auto out = valueOf(crowd->readResults());
    ASSERT_EQ(out.size(), kCharacters);
    for (uint32_t i = 0; i < kCharacters; ++i) {
      SCOPED_TRACE("round " + std::to_string(round) + " character " + std::to_string(i));
      const SearchReason reason = SearchReason(results[i].reason);
      if (reason == SearchReason::None) {
        EXPECT_EQ(out[i].frame, 12345u);
        continue;
      }
      const bool seeded = reason == SearchReason::Periodic || reason == SearchReason::Forced;
      // A range end moves on (the default): it skips the playing frame's neighbourhood.
      const bool moves_on = reason == SearchReason::RangeEnd && settings.range_end_moves_on;
      mmdb::SearchRequest request;
      request.query = mmdb::Span<const float>(queries.data() + size_t(i) * db().featureStride(),
                                              db().featureCount());
      request.current_frame = seeded || moves_on ? int32_t(states[i].current_frame) : -1;
      request.seeded = seeded;
      request.transition_cost = GetParam().transition_cost;
      request.range_end_margin = int32_t(crowd->params().range_end_margin);  // the default's
      request.filter = filters[(i / 5 + round) % 6];
      auto cpu = mmdb::searchExhaustive(db(), request);
      if (!cpu) {  // no current frame and no candidate passes the filter: none on the GPU either
        ASSERT_EQ(cpu.error().code(), mmdb::ErrorCode::NoMatch) << cpu.error().message();
        EXPECT_EQ(out[i].frame, mmdb::gpu::kNoFrame);
        continue;
      }
      EXPECT_EQ(out[i].frame, uint32_t(cpu->frame));
      EXPECT_EQ(out[i].cost, cpu->cost)
          << "costs accumulate in the same order, without fused multiply-adds";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Reductions, MatchTest,
    ::testing::Values(MatchCase{false, false, 0.f}, MatchCase{true, false, 0.f},
                      MatchCase{false, true, 0.f}, MatchCase{true, true, 0.f},
                      MatchCase{false, false, 0.35f}, MatchCase{true, true, 0.35f}),
    [](const auto& info) {
      return std::string(info.param.shared_memory ? "SharedMemory" : "Subgroup") +
             (info.param.bounds ? "Pruned" : "Exhaustive") +
             (info.param.transition_cost > 0 ? "WithTransitionCost" : "");
    });

TEST_F(PassTest, MatchTiesGoToTheLowestFrame) {
  // Two identical rows: the query equals both, so only the tie rule decides.
  mmdb::test::SyntheticSpec spec;
  spec.clips = 2;
  spec.frames_per_clip = 300;
  spec.joints = 2;
  auto cooked = mmdb::test::makeSyntheticDatabase(spec);
  const uint32_t a = 37, b = 400, stride = cooked.feature_stride;
  for (uint32_t c = 0; c < stride; ++c)
    cooked.features[size_t(b) * stride + c] = cooked.features[size_t(a) * stride + c];
  mmdb::test::computeBounds(cooked);
  TestDatabase t;
  t.bytes = mmdb::test::serializeAligned(cooked);
  auto opened = mmdb::Database::fromMemory(t.bytes.data(), t.bytes.size());
  ASSERT_TRUE(opened) << opened.error().message();
  t.db = std::move(opened.value());
  t.view = mmdb::gpu::DatabaseView::fromDatabase(t.db).value();
  mmdb::gpu::CrowdSettings legless;
  legless.foot_locking = false;
  legless.transition_cost = 0.f;  // ties between the frame playing and another: none added
  auto crowd = mmdb::gpu::Crowd::create(*context(), t.view, 3, legless);
  ASSERT_TRUE(crowd) << crowd.error().message();
  std::vector<float> queries(3 * stride);
  for (uint32_t i = 0; i < 3; ++i)
    for (uint32_t c = 0; c < stride; ++c)
      queries[i * stride + c] = cooked.features[size_t(b) * stride + c];
  std::vector<CrowdCharacter> states(3);
  for (auto& s : states) {
    s.flags = mmdb::gpu::kCharacterPlaying;
    s.clip_first = 0;
    s.clip_count = 300;
  }
  states[0].current_frame = 200;  // neither copy is near: the lower one wins
  states[1].current_frame = 45;   // frame 37 is within 20: the copy at 400 wins
  states[2].current_frame = 400;  // playing a copy: only strictly cheaper wins, so it stays
  std::vector<MatchResult> results(3, MatchResult{0, 0, uint32_t(SearchReason::Periodic), 0});
  ASSERT_TRUE(crowd.value()->writeCharacters(states).ok());
  ASSERT_TRUE(crowd.value()->writeResults(results).ok());
  ASSERT_TRUE(crowd.value()->writeQueries(queries).ok());
  ASSERT_TRUE(crowd.value()->passAndWait(Pass::Match, kDt).ok());
  const auto out = valueOf(crowd.value()->readResults());
  EXPECT_EQ(out[0].frame, a);
  EXPECT_EQ(out[1].frame, b);
  EXPECT_EQ(out[2].frame, b);
  EXPECT_EQ(out[0].cost, 0.f);
}

TEST_F(PassTest, ResolveCapturesTheTransitionJobsOffsets) { resolveAgainstTheJob(false); }

// The reference's angular-velocity offsets (unrotated_angular_offsets), alike.
TEST_F(PassTest, ResolveCapturesTheReferencesUnrotatedRates) { resolveAgainstTheJob(true); }

void PassTest::resolveAgainstTheJob(bool unrotated) {
  // The capture alone: with the transition speed limit a switch may first hold the transition
  // playing back (against the last pose, which this test has not shown), as the crowd
  // simulation tests compare.
  mmdb::gpu::CrowdSettings settings;
  settings.transition_speed_limit = 0.f;
  settings.unrotated_angular_offsets = unrotated;
  auto crowd = makeCrowd(settings);
  ASSERT_TRUE(crowd);
  const size_t joints = db().jointCount();
  std::vector<CrowdCharacter> states(kCharacters);
  std::vector<MatchResult> results(kCharacters);
  std::vector<JointOffset> offsets(kCharacters * joints);
  for (uint32_t i = 0; i < kCharacters; ++i) {
    states[i] = randomPlaying();
    if (i % 9 == 0) states[i].flags = 0;
    const uint32_t kind = i % 4;  // 0: no search, 1: keeps playing, 2: switches, 3: found nothing
    uint32_t winner = below(db().frameCount());
    if (kind == 1) winner = states[i].current_frame;
    if (kind == 3) winner = mmdb::gpu::kNoFrame;
    results[i] = {winner, 1.5f, uint32_t(kind == 0 ? SearchReason::None : SearchReason::Periodic),
                  2.f};
    for (size_t j = 0; j < joints; ++j) {
      JointOffset& o = offsets[i * joints + j];
      o.rotation = toFloat4(randomVec(0.6f));
      o.angular_velocity = toFloat4(randomVec(3));
      o.translation = toFloat4(randomVec(0.2f));
      o.velocity = toFloat4(randomVec(1));
    }
  }
  ASSERT_TRUE(crowd->writeCharacters(states).ok());
  ASSERT_TRUE(crowd->writeResults(results).ok());
  ASSERT_TRUE(crowd->writeOffsets(offsets).ok());
  ASSERT_TRUE(crowd->passAndWait(Pass::Resolve, kDt).ok());
  const auto after = valueOf(crowd->readCharacters());
  const auto captured = valueOf(crowd->readOffsets());

  uint32_t switches = 0;
  for (uint32_t i = 0; i < kCharacters; ++i) {
    SCOPED_TRACE("character " + std::to_string(i));
    const CrowdCharacter& s = states[i];
    const bool playing = s.flags & mmdb::gpu::kCharacterPlaying;
    const bool searched = results[i].reason != 0;
    const uint32_t winner = results[i].frame;
    const bool jumps =
        searched && winner != mmdb::gpu::kNoFrame && (!playing || winner != s.current_frame);
    EXPECT_EQ(bool(after[i].flags & mmdb::gpu::kCharacterSearched), searched);
    EXPECT_EQ(bool(after[i].flags & mmdb::gpu::kCharacterSwitched), jumps && playing);
    if (searched) {
      EXPECT_EQ(after[i].search_timer, int(crowd->params().search_interval_ticks));
    }
    if (!jumps) {
      EXPECT_EQ(after[i].current_frame, s.current_frame);
      EXPECT_EQ(after[i].clip_time, s.clip_time);
      for (size_t j = 0; j < joints; ++j)
        EXPECT_EQ(captured[i * joints + j].translation.x, offsets[i * joints + j].translation.x);
      continue;
    }
    const auto where = mmdb::clipTimeOfFrame(db(), winner).value();
    EXPECT_EQ(after[i].current_frame, winner);
    EXPECT_EQ(after[i].clip_first, db().clip(where.clip).first_frame);
    EXPECT_NEAR(after[i].clip_time, where.time, 1e-6f);
    EXPECT_TRUE(after[i].flags & mmdb::gpu::kCharacterPlaying);
    if (!playing) continue;
    ++switches;
    EXPECT_EQ(after[i].since_switch, 0.f);
    EXPECT_EQ(after[i].transition_time, 0.f);

    std::vector<glm::quat> sr, dr, off_r(joints);
    std::vector<glm::vec3> st, sv, sw, dt, dv, dw, off_w(joints), off_t(joints), off_v(joints);
    sample(s.clip_first, s.clip_time, sr, st, sv, sw);
    sample(winner, where.time, dr, dt, dv, dw);
    for (size_t j = 0; j < joints; ++j) {
      const JointOffset& o = offsets[i * joints + j];
      const glm::vec3 axis = toVec3(o.rotation);
      const float angle = glm::length(axis);
      off_r[j] = angle > 0 ? glm::angleAxis(angle, axis / angle) : glm::quat(1, 0, 0, 0);
      off_w[j] = toVec3(o.angular_velocity);
      off_t[j] = toVec3(o.translation);
      off_v[j] = toVec3(o.velocity);
    }
    mmdb::InertializeTransitionJob job;
    job.halflife = crowd->params().inertialization_halflife;
    job.rate_halflife = crowd->params().inertialization_rate_halflife;
    job.time_since_previous = s.transition_time;
    job.source_rotations = sr;
    job.source_angular_velocities = sw;
    job.source_translations = st;
    job.source_velocities = sv;
    job.destination_rotations = dr;
    job.destination_angular_velocities = dw;
    job.destination_translations = dt;
    job.destination_velocities = dv;
    job.offset_rotations = off_r;
    job.offset_angular_velocities = off_w;
    job.offset_translations = off_t;
    job.offset_velocities = off_v;
    job.unrotated_rates = unrotated;
    ASSERT_TRUE(job.Run().ok());
    for (size_t j = 0; j < joints; ++j) {
      const JointOffset& g = captured[i * joints + j];
      const glm::vec3 axis = toVec3(g.rotation);
      const float angle = glm::length(axis);
      const glm::quat gq = angle > 0 ? glm::angleAxis(angle, axis / angle) : glm::quat(1, 0, 0, 0);
      EXPECT_LT(quatDistance(gq, off_r[j]), kPoseTolerance) << "joint " << j;
      EXPECT_LT(vecDistance(toVec3(g.angular_velocity), off_w[j]), 1e-4f) << "joint " << j;
      EXPECT_LT(vecDistance(toVec3(g.translation), off_t[j]), kPoseTolerance) << "joint " << j;
      EXPECT_LT(vecDistance(toVec3(g.velocity), off_v[j]), 1e-4f) << "joint " << j;
    }
  }
  EXPECT_GT(switches, 4u);
}

TEST_F(PassTest, SampleMatchesSamplePoseJob) {
  auto crowd = makeCrowd();
  ASSERT_TRUE(crowd);
  std::vector<CrowdCharacter> states(kCharacters);
  for (uint32_t i = 0; i < kCharacters; ++i) {
    states[i] = randomPlaying();
    if (i % 6 == 0) states[i].clip_time += 10.f;  // past the clip's end: clamps
    if (i % 6 == 1) states[i].clip_time = float(i % 5) / db().frameRate();  // on a key
  }
  ASSERT_TRUE(crowd->writeCharacters(states).ok());
  ASSERT_TRUE(crowd->passAndWait(Pass::Sample, kDt).ok());
  const auto poses = valueOf(crowd->readLocalPoses());
  const size_t joints = db().jointCount();
  for (uint32_t i = 0; i < kCharacters; ++i) {
    std::vector<glm::quat> r;
    std::vector<glm::vec3> t, v, w;
    sample(states[i].clip_first, states[i].clip_time, r, t, v, w);
    for (size_t j = 0; j < joints; ++j) {
      const JointPose& p = poses[i * joints + j];
      EXPECT_LT(quatDistance(toQuat(p.rotation), r[j]), kPoseTolerance) << i << "/" << j;
      EXPECT_LT(vecDistance(toVec3(p.translation), t[j]), kPoseTolerance) << i << "/" << j;
      EXPECT_LT(vecDistance(toVec3(p.velocity), v[j]), kPoseTolerance * 10) << i << "/" << j;
      EXPECT_LT(vecDistance(toVec3(p.angular_velocity), w[j]), kPoseTolerance * 10)
          << i << "/" << j;
    }
  }
}

// A coded database, decoded into the staging buffer at upload: the GPU's sampled poses agree with
// the raw database's CPU samples within the cook's budget, in model space.
TEST_F(PassTest, SampleOfACodedDatabaseAgreesWithTheRawOneWithinTheBudget) {
  mmdb::test::SyntheticSpec spec = leggedSpec();
  spec.clips = 6;
  spec.frames_per_clip = 180;
  std::unique_ptr<TestDatabase> coded = makeTestDatabase(spec, true);
  ASSERT_TRUE(coded);
  ASSERT_TRUE(coded->db.posesCoded());
  ASSERT_NE(coded->view.database, nullptr);
  auto crowd = mmdb::gpu::Crowd::create(*context(), coded->view, kCharacters, {});
  ASSERT_TRUE(crowd) << crowd.error().message();
  std::vector<CrowdCharacter> states(kCharacters);
  for (uint32_t i = 0; i < kCharacters; ++i) states[i] = randomPlaying();
  ASSERT_TRUE(crowd.value()->writeCharacters(states).ok());
  ASSERT_TRUE(crowd.value()->passAndWait(Pass::Sample, kDt).ok());
  const auto poses = valueOf(crowd.value()->readLocalPoses());
  const size_t joints = db().jointCount();
  const float budget = float(mmdb::cook::CompressionSettings{}.position_tolerance);
  auto model = [&](const std::vector<glm::quat>& r, const std::vector<glm::vec3>& t) {
    std::vector<glm::quat> mq(joints);
    std::vector<glm::vec3> mp(joints);
    mmdb::ForwardKinematicsJob fk;
    fk.parents = db().parents();
    fk.local_rotations = r;
    fk.local_translations = t;
    fk.model_rotations = mq;
    fk.model_translations = mp;
    EXPECT_TRUE(fk.Run().ok());
    return mp;
  };
  for (uint32_t i = 0; i < kCharacters; ++i) {
    std::vector<glm::quat> r, gr(joints);
    std::vector<glm::vec3> t, v, w, gt(joints);
    sample(states[i].clip_first, states[i].clip_time, r, t, v, w);  // the raw database
    for (size_t j = 0; j < joints; ++j) {
      gr[j] = toQuat(poses[i * joints + j].rotation);
      gt[j] = toVec3(poses[i * joints + j].translation);
    }
    const std::vector<glm::vec3> raw = model(r, t), gpu = model(gr, gt);
    for (size_t j = 0; j < joints; ++j)
      EXPECT_LT(vecDistance(raw[j], gpu[j]), budget + kPoseTolerance) << i << "/" << j;
  }
}

TEST_F(PassTest, InertializeMatchesInertializeJobAndSkipsDecayedCharacters) {
  auto crowd = makeCrowd();
  ASSERT_TRUE(crowd);
  const size_t joints = db().jointCount();
  std::vector<CrowdCharacter> states(kCharacters);
  std::vector<JointOffset> offsets(kCharacters * joints);
  std::vector<JointPose> poses(kCharacters * joints);
  for (uint32_t i = 0; i < kCharacters; ++i) {
    states[i] = randomPlaying();
    states[i].since_switch = uniform(0, 0.5f);
    states[i].transition_time = i % 3 == 0 ? 0.5f * states[i].since_switch : states[i].since_switch;
    if (i % 5 != 0) states[i].flags |= mmdb::gpu::kCharacterInertializing;
    for (size_t j = 0; j < joints; ++j) {
      offsets[i * joints + j] = {toFloat4(randomVec(0.6f)), toFloat4(randomVec(3)),
                                 toFloat4(randomVec(0.2f)), toFloat4(randomVec(1))};
      poses[i * joints + j] = {toFloat4(randomQuat()), toFloat4(randomVec(1)),
                               toFloat4(randomVec(1)), toFloat4(randomVec(2))};
    }
  }
  ASSERT_TRUE(crowd->writeCharacters(states).ok());
  ASSERT_TRUE(crowd->writeOffsets(offsets).ok());
  ASSERT_TRUE(crowd->writeLocalPoses(poses).ok());
  ASSERT_TRUE(crowd->passAndWait(Pass::Inertialize, kDt).ok());
  const auto out = valueOf(crowd->readLocalPoses());
  for (uint32_t i = 0; i < kCharacters; ++i) {
    SCOPED_TRACE("character " + std::to_string(i));
    if (!(states[i].flags & mmdb::gpu::kCharacterInertializing)) {
      for (size_t j = 0; j < joints; ++j)
        EXPECT_EQ(out[i * joints + j].translation.x, poses[i * joints + j].translation.x);
      continue;
    }
    std::vector<glm::quat> r(joints), off_r(joints), out_r(joints);
    std::vector<glm::vec3> t(joints), off_w(joints), off_t(joints), off_v(joints), out_t(joints);
    for (size_t j = 0; j < joints; ++j) {
      r[j] = toQuat(poses[i * joints + j].rotation);
      t[j] = toVec3(poses[i * joints + j].translation);
      const glm::vec3 axis = toVec3(offsets[i * joints + j].rotation);
      off_r[j] = glm::angleAxis(glm::length(axis), glm::normalize(axis));
      off_w[j] = toVec3(offsets[i * joints + j].angular_velocity);
      off_t[j] = toVec3(offsets[i * joints + j].translation);
      off_v[j] = toVec3(offsets[i * joints + j].velocity);
    }
    mmdb::InertializeJob job;
    job.halflife = crowd->params().inertialization_halflife;
    job.rate_halflife = crowd->params().inertialization_rate_halflife;
    job.time_since_switch = states[i].transition_time;  // the decay's clock, held back or not
    job.rotations = r;
    job.translations = t;
    job.offset_rotations = off_r;
    job.offset_angular_velocities = off_w;
    job.offset_translations = off_t;
    job.offset_velocities = off_v;
    job.out_rotations = out_r;
    job.out_translations = out_t;
    ASSERT_TRUE(job.Run().ok());
    for (size_t j = 0; j < joints; ++j) {
      const JointPose& g = out[i * joints + j];
      EXPECT_LT(quatDistance(toQuat(g.rotation), out_r[j]), kPoseTolerance) << "joint " << j;
      EXPECT_LT(vecDistance(toVec3(g.translation), out_t[j]), kPoseTolerance) << "joint " << j;
      glm::vec3 x = off_t[j], v = off_v[j];
      mmdb::decayOffsetSplit(x, v, crowd->params().inertialization_halflife,
                             crowd->params().inertialization_rate_halflife,
                             states[i].transition_time);
      EXPECT_LT(vecDistance(toVec3(g.velocity), toVec3(poses[i * joints + j].velocity) + v), 1e-4f)
          << "joint " << j;
      // Shown angular velocity: offset rate + offset rotation applied to the pose's.
      glm::vec3 rv = off_w[j];
      const glm::quat offset = mmdb::decayRotationSplit(
          off_r[j], rv, crowd->params().inertialization_halflife,
          crowd->params().inertialization_rate_halflife, states[i].transition_time);
      const glm::vec3 shown = rv + offset * toVec3(poses[i * joints + j].angular_velocity);
      EXPECT_LT(vecDistance(toVec3(g.angular_velocity), shown), 1e-4f) << "joint " << j;
    }
  }
}

TEST_F(PassTest, FkMatchesForwardKinematicsJobAndAdvancesTheClock) {
  auto crowd = makeCrowd();
  ASSERT_TRUE(crowd);
  const size_t joints = db().jointCount();
  std::vector<CrowdCharacter> states(kCharacters);
  std::vector<JointPose> poses(kCharacters * joints);
  // Clocks that land near a key after the step, a few far enough from it to stay off: the snap
  // (mmdb::advanceClipTime) on both sides of each key.
  const float rate = db().frameRate();
  const float offsets[] = {0.f, 4e-4f, -9e-4f, 2e-3f, -0.01f};
  for (uint32_t i = 0; i < kCharacters; ++i) {
    states[i] = randomPlaying();
    if (i % 2 == 0) {
      const float key = std::floor(states[i].clip_time * rate) + 1.f;
      states[i].clip_time = (key + offsets[(i / 2) % 5]) / rate - kDt;
    }
    for (size_t j = 0; j < joints; ++j)
      poses[i * joints + j] = {toFloat4(randomQuat()), toFloat4(randomVec(0.5f)), {}, {}};
  }
  // Every third character holds its left toe somewhere near it (locked at the last step): the
  // adjustment keeps that toe within reach of its lock.
  const auto legs = mmdb::findLegChains(db());
  ASSERT_TRUE(legs.ok());
  std::vector<mmdb::gpu::CharacterFeet> held(kCharacters);
  for (uint32_t i = 0; i < kCharacters; i += 3) {
    // Within the clamp, so that the toe's limit, not the clamp, says how far it moves.
    states[i].achieved_position =
        toFloat4(toVec3(states[i].sim_position) +
                 glm::vec3(uniform(-0.1f, 0.1f), 0.f, uniform(-0.1f, 0.1f)));
    mmdb::gpu::FootLock& f = held[i].foot[0];
    f.flags = mmdb::gpu::kFootLocked | mmdb::gpu::kFootContact | mmdb::gpu::kFootSeen;
    f.position = toFloat4(toVec3(states[i].achieved_position) +
                          glm::vec3(uniform(-0.3f, 0.3f), 0.f, uniform(-0.3f, 0.3f)));
  }
  ASSERT_TRUE(crowd->writeFootLocks(held).ok());
  ASSERT_TRUE(crowd->writeCharacters(states).ok());
  ASSERT_TRUE(crowd->writeLocalPoses(poses).ok());
  ASSERT_TRUE(crowd->passAndWait(Pass::Fk, kDt).ok());
  uint32_t snapped = 0, adjusted = 0, clamped = 0, held_back = 0, warped = 0;
  const auto model = valueOf(crowd->readModelPoses());
  const auto after = valueOf(crowd->readCharacters());
  const auto feet = valueOf(crowd->readFootLocks());
  for (uint32_t i = 0; i < kCharacters; ++i) {
    SCOPED_TRACE("character " + std::to_string(i));
    std::vector<glm::quat> r(joints), mr(joints);
    std::vector<glm::vec3> t(joints), mt(joints);
    for (size_t j = 0; j < joints; ++j) {
      r[j] = toQuat(poses[i * joints + j].rotation);
      t[j] = toVec3(poses[i * joints + j].translation);
    }
    mmdb::ForwardKinematicsJob fk;
    fk.parents = db().parents();
    fk.local_rotations = r;
    fk.local_translations = t;
    fk.model_rotations = mr;
    fk.model_translations = mt;
    ASSERT_TRUE(fk.Run().ok());
    for (size_t j = 0; j < joints; ++j) {
      EXPECT_LT(quatDistance(toQuat(model[i * joints + j].rotation), mr[j]), kPoseTolerance)
          << "joint " << j;
      EXPECT_LT(vecDistance(toVec3(model[i * joints + j].position), mt[j]), kPoseTolerance)
          << "joint " << j;
    }
    const float time = mmdb::advanceClipTime(states[i].clip_time, kDt, db().frameRate());
    const float key = std::floor(time * db().frameRate() + mmdb::kClipTimeSnap);
    EXPECT_EQ(after[i].clip_time, time);
    if (time != states[i].clip_time + kDt) ++snapped;
    EXPECT_EQ(after[i].current_frame,
              states[i].clip_first + uint32_t(std::min(key, float(states[i].clip_count - 1))));
    EXPECT_EQ(after[i].since_switch, states[i].since_switch + kDt);
    EXPECT_EQ(after[i].search_timer, states[i].search_timer - 1) << "one step";
    // The frame of the pose shown, as the CPU crowd keeps it (CrowdCharacter::shown_frame).
    const float shown =
        std::floor(std::fmax(states[i].clip_time * db().frameRate(), 0.f) + mmdb::kClipTimeSnap);
    EXPECT_EQ(feet[i].shown_frame,
              states[i].clip_first + uint32_t(std::min(shown, float(states[i].clip_count - 1))));
    // The achieved path takes dt of the root motion of the frame playing before the clock moves.
    glm::vec3 position = toVec3(states[i].achieved_position);
    glm::quat rotation = toQuat(states[i].achieved_rotation);
    integrateRootMotion(db(), states[i].current_frame, kDt, position, rotation);
    const glm::vec3 before = toVec3(states[i].achieved_position);
    const glm::quat facing = toQuat(states[i].achieved_rotation);
    // Warped (the crowd's default) towards the controller's velocity, from the map it had.
    mmdb::GroundWarp warp{states[i].warp.x, states[i].warp.y, states[i].warp.z, states[i].warp.w};
    {
      const mmdb::SynchronizationSettings sync;
      const glm::vec3 local = glm::inverse(facing) * (position - before);
      const glm::vec3 gap = toVec3(states[i].sim_position) - before;
      const glm::vec3 wanted =
          toVec3(states[i].sim_velocity) +
          glm::vec3(gap.x, 0.f, gap.z) * (0.69314718056f / sync.position_halflife);
      mmdb::stepGroundWarp(sync, kDt, local / kDt, glm::inverse(facing) * wanted, warp);
      position = before + facing * warp.apply(local);
      warped += !warp.identity();
    }
    EXPECT_NEAR(after[i].warp.x, warp.xx, 1e-5f);
    EXPECT_NEAR(after[i].warp.y, warp.zx, 1e-5f);
    EXPECT_NEAR(after[i].warp.z, warp.xz, 1e-5f);
    EXPECT_NEAR(after[i].warp.w, warp.zz, 1e-5f);
    // Then the synchronization (the crowd's default: the character follows the controller; no
    // foot is held here), as mmdb::Crowd runs it.
    mmdb::AdjustmentJob adjust;
    adjust.dt = kDt;
    adjust.root_motion = position - before;
    adjust.root_turn = mmdb::yawAngle(glm::normalize(rotation * glm::inverse(facing)));
    adjust.sim_position = toVec3(states[i].sim_position);
    adjust.sim_rotation = toQuat(states[i].sim_rotation);
    adjust.position = position;
    adjust.rotation = rotation;
    if (i % 3 == 0) {
      adjust.locked_legs = 1;
      adjust.locks[0] = toVec3(held[i].foot[0].position);
      adjust.toes[0] = warp.apply(mt[legs.value()[0].toe]);
      mmdb::AdjustmentJob free = adjust;
      free.locked_legs = 0;
      free.Run();
      adjust.Run();
      held_back += glm::length(free.moved - adjust.moved) > 1e-6f;
    } else {
      adjust.Run();
    }
    EXPECT_LT(vecDistance(toVec3(after[i].achieved_position), adjust.position), 1e-5f);
    EXPECT_LT(quatDistance(toQuat(after[i].achieved_rotation), adjust.rotation), 1e-5f);
    EXPECT_LT(vecDistance(toVec3(after[i].adjustment), adjust.moved), 1e-5f);
    EXPECT_NEAR(after[i].adjustment.w, adjust.turned, 1e-5f);
    adjusted += glm::length(adjust.moved) > 1e-4f;
    clamped += glm::length(adjust.moved) > 0.5f * glm::length(adjust.root_motion) + 1e-4f;
    EXPECT_EQ(after[i].achieved_position.w, 0.f);
    // And the step's root motion, as the CPU crowd reports it (CrowdCharacter::root_motion_*).
    EXPECT_LT(vecDistance(toVec3(after[i].root_motion_world), position - before), 1e-6f);
    EXPECT_LT(
        vecDistance(toVec3(after[i].root_motion_local), glm::inverse(facing) * (position - before)),
        1e-6f);
    EXPECT_LT(quatDistance(toQuat(after[i].root_motion_rotation),
                           glm::normalize(rotation * glm::inverse(facing))),
              1e-6f);
  }
  EXPECT_GT(snapped, kCharacters / 8) << "clocks put on a key";
  EXPECT_GT(adjusted, kCharacters / 4) << "characters moved towards their controllers";
  EXPECT_GT(clamped, kCharacters / 8) << "characters put within the clamp";
  EXPECT_GT(held_back, 0u) << "adjustments held back by a locked toe";
  EXPECT_GT(warped, kCharacters / 2) << "root motions warped";
}

mmdb::FootLock toCpu(const mmdb::gpu::FootLock& g) {
  mmdb::FootLock f;
  f.locked = g.flags & mmdb::gpu::kFootLocked;
  f.blending = g.flags & mmdb::gpu::kFootBlending;
  f.contact = g.flags & mmdb::gpu::kFootContact;
  f.seen = g.flags & mmdb::gpu::kFootSeen;
  f.position = toVec3(g.position);
  f.target = toVec3(g.target);
  f.animated = toVec3(g.animated);
  f.offset = toVec3(g.offset);
  f.offset_velocity = toVec3(g.offset_velocity);
  f.since_unlock = g.since_unlock;
  return f;
}

mmdb::gpu::FootLock toGpu(const mmdb::FootLock& f) {
  mmdb::gpu::FootLock g{};
  g.flags = (f.locked ? mmdb::gpu::kFootLocked : 0u) |
            (f.blending ? mmdb::gpu::kFootBlending : 0u) |
            (f.contact ? mmdb::gpu::kFootContact : 0u) | (f.seen ? mmdb::gpu::kFootSeen : 0u);
  g.position = toFloat4(f.position);
  g.target = toFloat4(f.target);
  g.animated = toFloat4(f.animated);
  g.offset = toFloat4(f.offset);
  g.offset_velocity = toFloat4(f.offset_velocity);
  g.since_unlock = f.since_unlock;
  return g;
}

// The foot lock pass after fk, on characters in every foot state (fresh, held near or past the
// radius, blending back, with and without their contact), against FootLockJob on what fk left.
TEST_F(PassTest, FootLockMatchesFootLockJob) {
  auto crowd = makeCrowd();
  ASSERT_TRUE(crowd);
  const size_t joints = db().jointCount();
  const auto legs = mmdb::findLegChains(db());
  ASSERT_TRUE(legs.ok()) << legs.error().message();
  std::vector<CrowdCharacter> states(kCharacters);
  std::vector<JointPose> poses(kCharacters * joints);
  uint32_t folded = 0;
  for (uint32_t i = 0; i < kCharacters; ++i) {
    states[i] = randomPlaying();
    if (i % 8 == 7) states[i].flags = 0;  // nothing playing: nothing held
    // The clip's pose at its time, a little off (legs from straight to well bent).
    std::vector<glm::quat> r;
    std::vector<glm::vec3> t, v, w;
    sample(states[i].clip_first, states[i].clip_time, r, t, v, w);
    for (size_t j = 0; j < joints; ++j) {
      const glm::quat off = glm::normalize(
          glm::quat(1.f, uniform(-0.05f, 0.05f), uniform(-0.05f, 0.05f), uniform(-0.05f, 0.05f)));
      poses[i * joints + j] = {toFloat4(glm::normalize(off * r[j])), toFloat4(t[j]), toFloat4(v[j]),
                               toFloat4(w[j])};
    }
    // Some knees folded nearly shut (a transition can fold one further than any clip; the
    // synthetic knees bend about +x): their legs follow the animation, or fade the IK in, alike
    // on both.
    if (i % 8 == 5 || i % 8 == 6) {
      for (const mmdb::LegChain& leg : legs.value())
        poses[i * joints + leg.knee].rotation =
            toFloat4(glm::angleAxis(i % 8 == 5 ? 2.9f : 2.6f, glm::vec3(1.f, 0.f, 0.f)));
      ++folded;
    }
  }
  ASSERT_TRUE(crowd->writeCharacters(states).ok());
  ASSERT_TRUE(crowd->writeLocalPoses(poses).ok());
  ASSERT_TRUE(crowd->passAndWait(Pass::Fk, kDt).ok());
  const auto placed = valueOf(crowd->readCharacters());
  const auto local = valueOf(crowd->readLocalPoses());
  const auto model = valueOf(crowd->readModelPoses());
  auto feet = valueOf(crowd->readFootLocks());  // fk kept the frame shown
  ASSERT_EQ(feet.size(), kCharacters);

  // Every state a foot can be in, around where its toe is now.
  for (uint32_t i = 0; i < kCharacters; ++i) {
    const glm::vec3 position = toVec3(placed[i].achieved_position);
    const glm::quat rotation = toQuat(placed[i].achieved_rotation);
    const mmdb::GroundWarp warp{placed[i].warp.x, placed[i].warp.y, placed[i].warp.z,
                                placed[i].warp.w};
    for (uint32_t leg = 0; leg < mmdb::kLegCount; ++leg) {
      const glm::vec3 toe =
          position +
          rotation * warp.apply(toVec3(model[i * joints + legs.value()[leg].toe].position));
      mmdb::FootLock f;
      const uint32_t kind = (i + 3 * leg) % 6;
      f.seen = kind != 0;
      f.contact = (i / 6 + leg) % 2 == 0;
      f.animated = toe - kDt * randomVec(1.5f);
      if (kind == 1 || kind == 2) {  // held, within or past the radius
        f.locked = true;
        f.position = toe + randomVec(kind == 1 ? 0.08f : 0.3f);
      } else if (kind == 3 || kind == 4) {  // blending back, early or late
        f.blending = true;
        f.offset = randomVec(0.2f);
        f.offset_velocity = randomVec(2.f);
        f.since_unlock = kind == 3 ? uniform(0.f, 0.3f) : uniform(1.9f, 2.1f);
      }
      feet[i].foot[leg] = toGpu(f);
    }
  }
  ASSERT_TRUE(crowd->writeFootLocks(feet).ok());
  ASSERT_TRUE(crowd->passAndWait(Pass::FootLock, kDt).ok());
  const auto out_local = valueOf(crowd->readLocalPoses());
  const auto out_model = valueOf(crowd->readModelPoses());
  const auto out_feet = valueOf(crowd->readFootLocks());

  uint32_t bent = 0, locks = 0, unlocks = 0, shut = 0, fading = 0, warped = 0;
  for (uint32_t i = 0; i < kCharacters; ++i) {
    SCOPED_TRACE("character " + std::to_string(i));
    EXPECT_EQ(out_feet[i].shown_frame, feet[i].shown_frame);
    if (!(placed[i].flags & mmdb::gpu::kCharacterPlaying)) {
      for (uint32_t leg = 0; leg < mmdb::kLegCount; ++leg)
        EXPECT_EQ(out_feet[i].foot[leg].flags, 0u) << "nothing held before playing";
      for (size_t j = 0; j < joints; ++j)
        EXPECT_EQ(out_local[i * joints + j].rotation.x, local[i * joints + j].rotation.x);
      continue;
    }
    std::vector<glm::quat> r(joints), mr(joints);
    std::vector<glm::vec3> t(joints), mt(joints);
    for (size_t j = 0; j < joints; ++j) {
      r[j] = toQuat(local[i * joints + j].rotation);
      t[j] = toVec3(local[i * joints + j].translation);
      mr[j] = toQuat(model[i * joints + j].rotation);
      mt[j] = toVec3(model[i * joints + j].position);
    }
    for (const mmdb::LegChain& leg : legs.value()) {  // how far open each leg is
      const float length =
          glm::length(mt[leg.knee] - mt[leg.upper_leg]) + glm::length(mt[leg.foot] - mt[leg.knee]);
      const float open = glm::length(mt[leg.foot] - mt[leg.upper_leg]) / length;
      shut += open < 0.2f;
      fading += open > 0.2f && open < 0.35f;
    }
    std::array<mmdb::FootLock, mmdb::kLegCount> cpu_feet{};
    for (uint32_t leg = 0; leg < mmdb::kLegCount; ++leg) cpu_feet[leg] = toCpu(feet[i].foot[leg]);
    const std::array<mmdb::FootLock, mmdb::kLegCount> before = cpu_feet;
    mmdb::FootLockJob job;
    job.parents = db().parents();
    job.legs = mmdb::Span<const mmdb::LegChain>(legs.value().data(), legs.value().size());
    job.contacts = db().contacts()[feet[i].shown_frame];
    job.position = toVec3(placed[i].achieved_position);
    job.rotation = toQuat(placed[i].achieved_rotation);
    job.dt = kDt;
    job.warp = {placed[i].warp.x, placed[i].warp.y, placed[i].warp.z, placed[i].warp.w};
    warped += !job.warp.identity();
    job.feet = cpu_feet;
    job.local_rotations = r;
    job.local_translations = t;
    job.model_rotations = mr;
    job.model_translations = mt;
    ASSERT_TRUE(job.Run().ok());
    for (uint32_t leg = 0; leg < mmdb::kLegCount; ++leg) {
      SCOPED_TRACE("leg " + std::to_string(leg));
      const mmdb::FootLock g = toCpu(out_feet[i].foot[leg]);
      const mmdb::FootLock& c = cpu_feet[leg];
      ASSERT_EQ(g.locked, c.locked);
      ASSERT_EQ(g.blending, c.blending);
      ASSERT_EQ(g.contact, c.contact);
      ASSERT_EQ(g.seen, c.seen);
      EXPECT_LT(vecDistance(g.position, c.position), kPoseTolerance);
      EXPECT_LT(vecDistance(g.target, c.target), kPoseTolerance);
      EXPECT_LT(vecDistance(g.animated, c.animated), kPoseTolerance);
      EXPECT_LT(vecDistance(g.offset, c.offset), kPoseTolerance);
      EXPECT_LT(vecDistance(g.offset_velocity, c.offset_velocity), 1e-3f) << "a finite difference";
      EXPECT_NEAR(g.since_unlock, c.since_unlock, 1e-6f);
      bent += c.locked || c.blending;
      locks += c.locked && !before[leg].locked;
      unlocks += before[leg].locked && !c.locked;
    }
    for (size_t j = 0; j < joints; ++j) {
      EXPECT_LT(quatDistance(toQuat(out_local[i * joints + j].rotation), r[j]), 1e-4f)
          << "joint " << j;
      EXPECT_EQ(out_local[i * joints + j].translation.x, local[i * joints + j].translation.x);
      EXPECT_LT(quatDistance(toQuat(out_model[i * joints + j].rotation), mr[j]), 1e-4f)
          << "joint " << j;
      EXPECT_LT(vecDistance(toVec3(out_model[i * joints + j].position), mt[j]), 1e-4f)
          << "joint " << j;
    }
  }
  EXPECT_GT(folded, 3u);
  EXPECT_GT(shut, 0u) << "legs folded shut, as animated";
  EXPECT_GT(fading, 0u) << "legs the IK fades in on";
  EXPECT_GT(bent, kCharacters / 2) << "legs bent";
  EXPECT_GT(locks, 3u) << "contacts that start";
  EXPECT_GT(unlocks, 3u) << "locks let go";
  EXPECT_GT(warped, kCharacters / 2) << "legs bent to warped toes";
}

TEST_F(PassTest, FootLockOffLeavesFksPose) {
  mmdb::gpu::CrowdSettings settings;
  settings.foot_locking = false;
  auto crowd = makeCrowd(settings);
  ASSERT_TRUE(crowd);
  for (int step = 0; step < 30; ++step) {
    for (uint32_t i = 0; i < kCharacters; ++i) ASSERT_TRUE(crowd->setStick(i, 0.f, 0.8f).ok());
    ASSERT_TRUE(crowd->stepAndWait(kDt).ok());
  }
  const auto model = valueOf(crowd->readModelPoses());
  const auto feet = valueOf(crowd->readFootLocks());
  ASSERT_TRUE(crowd->passAndWait(Pass::FootLock, kDt).ok());
  const auto after = valueOf(crowd->readModelPoses());
  ASSERT_EQ(model.size(), after.size());
  EXPECT_EQ(std::memcmp(model.data(), after.data(), model.size() * sizeof(model[0])), 0);
  for (const auto& f : feet) EXPECT_EQ(f.foot[0].flags | f.foot[1].flags, 0u);
  const mmdb::gpu::PassTimings timings = crowd->readTimings();
  EXPECT_EQ(timings.ms.size(), size_t(mmdb::gpu::kPassCount));
}

}  // namespace
}  // namespace mmdb::test
