// A crowd of 64 characters for 600 frames (10 s at 60 Hz) with scripted sticks, on the GPU and on
// a CPU twin built from the runtime's functions with the same step semantics (see crowd.h): the
// two make the same decisions every frame, show the same poses and walk the same achieved paths
// (the root motion of the frames played, from which the queries are built).
//
// The query's trajectory columns come from exp, sin, cos and atan, which a GPU computes to a few
// ulps of the CPU's, so two candidates whose costs differ by about 1e-6 relative may swap. Such
// a near-tie is verified to be one (both costs within 1e-5 relative on the CPU) and the twin then
// follows the GPU's pick; anything else is a failure, and near-ties must stay rare.
#include "gpu_test_util.h"

#include <mmdb/controller.h>
#include <mmdb/playback.h>
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

struct Pose {
  explicit Pose(size_t n) : r(n), t(n), v(n), w(n) {}
  std::vector<glm::quat> r;
  std::vector<glm::vec3> t, v, w;
};

// One character on the CPU, stepping exactly as the GPU passes do.
class CpuCharacter {
 public:
  CpuCharacter(const mmdb::Database& db, uint32_t index, const mmdb::gpu::PassParams& p)
      : db_(db),
        index_(index),
        p_(p),
        offsets_(db.jointCount()),
        shown_(db.jointCount()),
        model_r_(db.jointCount()),
        model_t_(db.jointCount()),
        query_(db.featureCount()) {
    std::fill(offsets_.r.begin(), offsets_.r.end(), glm::quat(1, 0, 0, 0));
    for (int k = 0; k < 3; ++k) settings_.times[k] = db.trajectoryTimes()[k];
  }

  // Controller, reason, query and search: what the GPU's first two passes do.
  void decide(const mmdb::StickInput& stick, bool forced) {
    mmdb::updateCharacter(sim_, stick, settings_, kDt);
    const mmdb::ClipInfo clip = db_.clip(clip_);
    reason_ = SearchReason::None;
    if (!playing_)
      reason_ = SearchReason::Start;
    else if (lastOfRange(frame_) || frame_ + 1 >= clip.first_frame + clip.frame_count)
      reason_ = SearchReason::RangeEnd;
    else if (forced)
      reason_ = SearchReason::Forced;
    else if (timer_ <= 0)
      reason_ = SearchReason::Periodic;
    if (reason_ == SearchReason::None) return;
    float trajectory[mmdb::kTrajectoryFloats];
    mmdb::predictTrajectory(sim_, stick, settings_, trajectory);
    expressInCharacterFrame(sim_, achieved_position_, achieved_rotation_, p_.max_drift, trajectory);
    ASSERT_TRUE(mmdb::buildQuery(db_, playing_ ? int32_t(frame_) : -1, trajectory, query_).ok());
    request_ = {};
    request_.query = query_;
    const bool seeded = reason_ == SearchReason::Forced || reason_ == SearchReason::Periodic;
    request_.current_frame = seeded ? int32_t(frame_) : -1;
    auto found = mmdb::searchExhaustive(db_, request_);
    ASSERT_TRUE(found);
    winner_ = found->frame;
    cost_ = found->cost;
  }

  // The cost of a frame for the last query, as the search counts it.
  float costOf(int32_t frame) const {
    float acc = frame == request_.current_frame ? 0.f : request_.transition_cost;
    const auto row = db_.featureRow(uint32_t(frame));
    for (size_t c = 0; c < query_.size(); ++c) acc += (query_[c] - row[c]) * (query_[c] - row[c]);
    return acc;
  }
  void adoptWinner(int32_t frame) { winner_ = frame; }

  // Resolve, sample, inertialize, FK, advance.
  void play() {
    if (reason_ != SearchReason::None) {
      timer_ = int(p_.search_interval_ticks);
      if (reason_ == SearchReason::Start && p_.stagger_phases > 1)
        timer_ += int(p_.search_interval_ticks * (index_ % p_.stagger_phases) / p_.stagger_phases);
      if (winner_ >= 0 && (!playing_ || uint32_t(winner_) != frame_)) jump(uint32_t(winner_));
    }
    sample(clip_, time_, shown_);
    mmdb::InertializeJob blend;
    blend.time_since_switch = since_switch_;
    blend.rotations = shown_.r;
    blend.translations = shown_.t;
    blend.offset_rotations = offsets_.r;
    blend.offset_angular_velocities = offsets_.w;
    blend.offset_translations = offsets_.t;
    blend.offset_velocities = offsets_.v;
    blend.out_rotations = shown_.r;
    blend.out_translations = shown_.t;
    ASSERT_TRUE(blend.Run().ok());
    mmdb::ForwardKinematicsJob fk;
    fk.parents = db_.parents();
    fk.local_rotations = shown_.r;
    fk.local_translations = shown_.t;
    fk.model_rotations = model_r_;
    fk.model_translations = model_t_;
    ASSERT_TRUE(fk.Run().ok());

    if (playing_) integrateRootMotion(db_, frame_, kDt, achieved_position_, achieved_rotation_);
    const mmdb::ClipInfo clip = db_.clip(clip_);
    time_ += kDt;
    const float key = std::floor(time_ * db_.frameRate() + 1e-4f);
    frame_ = clip.first_frame + uint32_t(std::min(key, float(clip.frame_count - 1)));
    since_switch_ += kDt;
    timer_ -= 1;
  }

  SearchReason reason() const { return reason_; }
  int32_t winner() const { return winner_; }
  float cost() const { return cost_; }
  uint32_t frame() const { return frame_; }
  const glm::vec3& achievedPosition() const { return achieved_position_; }
  const glm::quat& achievedRotation() const { return achieved_rotation_; }
  const std::vector<glm::quat>& modelRotations() const { return model_r_; }
  const std::vector<glm::vec3>& modelTranslations() const { return model_t_; }

 private:
  bool lastOfRange(uint32_t frame) const {
    for (const mmdb::MatchRange& r : db_.ranges())
      if (r.first_frame + r.frame_count == frame + 1) return true;
    return false;
  }
  void sample(uint32_t clip, float time, Pose& pose) const {
    mmdb::SamplePoseJob job;
    job.database = &db_;
    job.clip = clip;
    job.time = time;
    job.rotations = pose.r;
    job.translations = pose.t;
    job.velocities = pose.v;
    job.angular_velocities = pose.w;
    ASSERT_TRUE(job.Run().ok());
  }
  void jump(uint32_t frame) {
    const mmdb::ClipTime where = mmdb::clipTimeOfFrame(db_, frame).value();
    if (playing_) {
      Pose source(db_.jointCount()), destination(db_.jointCount());
      sample(clip_, time_, source);
      sample(where.clip, where.time, destination);
      mmdb::InertializeTransitionJob job;
      job.time_since_previous = since_switch_;
      job.source_rotations = source.r;
      job.source_angular_velocities = source.w;
      job.source_translations = source.t;
      job.source_velocities = source.v;
      job.destination_rotations = destination.r;
      job.destination_angular_velocities = destination.w;
      job.destination_translations = destination.t;
      job.destination_velocities = destination.v;
      job.offset_rotations = offsets_.r;
      job.offset_angular_velocities = offsets_.w;
      job.offset_translations = offsets_.t;
      job.offset_velocities = offsets_.v;
      ASSERT_TRUE(job.Run().ok());
      since_switch_ = 0;
    }
    playing_ = true;
    clip_ = where.clip;
    time_ = where.time;
    frame_ = frame;
  }

  const mmdb::Database& db_;
  uint32_t index_;
  mmdb::gpu::PassParams p_;
  mmdb::ControllerSettings settings_;
  mmdb::CharacterState sim_;
  bool playing_ = false;
  uint32_t clip_ = 0, frame_ = 0;
  float time_ = 0, since_switch_ = 1e6f;
  int timer_ = 0;  // steps
  glm::vec3 achieved_position_{0.f};
  glm::quat achieved_rotation_{1, 0, 0, 0};
  Pose offsets_, shown_;
  std::vector<glm::quat> model_r_;
  std::vector<glm::vec3> model_t_;
  std::vector<float> query_;
  mmdb::SearchRequest request_;
  SearchReason reason_ = SearchReason::None;
  int32_t winner_ = -1;
  float cost_ = 0;
};

using CrowdSimulationTest = GpuTest;

TEST_F(CrowdSimulationTest, SixtyFourCharactersDecideAndPoseAsOnTheCpu) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 8;
  spec.frames_per_clip = 300;
  spec.joints = 6;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  const mmdb::Database& db = t->db;
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, kCharacters);
  ASSERT_TRUE(created) << created.error().message();
  mmdb::gpu::Crowd& crowd = *created.value();

  std::vector<CpuCharacter> cpu;
  for (uint32_t i = 0; i < kCharacters; ++i) cpu.emplace_back(db, i, crowd.params());
  const size_t joints = db.jointCount();
  uint64_t searches = 0, switches = 0, near_ties = 0;
  float worst_pose = 0, worst_cost = 0, worst_path = 0;

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
    const std::vector<mmdb::gpu::CharacterInput> inputs = crowd.inputs();
    ASSERT_TRUE(crowd.stepAndWait(kDt).ok());
    const auto decisions = valueOf(crowd.readDecisions());
    ASSERT_EQ(decisions.size(), kCharacters);
    const bool check_pose = frame % 10 == 0 || frame == kFrames - 1;
    std::vector<mmdb::gpu::ModelJoint> model;
    std::vector<mmdb::gpu::CrowdCharacter> characters;
    if (check_pose) {
      model = valueOf(crowd.readModelPoses());
      characters = valueOf(crowd.readCharacters());
    }

    for (uint32_t i = 0; i < kCharacters; ++i) {
      SCOPED_TRACE("frame " + std::to_string(frame) + " character " + std::to_string(i));
      mmdb::StickInput stick;
      stick.desired_velocity = toVec3(inputs[i].desired_velocity);
      stick.desired_facing = toVec3(inputs[i].desired_facing);
      CpuCharacter& c = cpu[i];
      c.decide(stick, forced[i]);
      ASSERT_EQ(decisions[i].reason, c.reason());
      if (c.reason() != SearchReason::None) {
        ++searches;
        const uint32_t cpu_winner = c.winner() < 0 ? mmdb::gpu::kNoFrame : uint32_t(c.winner());
        if (decisions[i].frame != cpu_winner) {
          ASSERT_NE(decisions[i].frame, mmdb::gpu::kNoFrame);
          const float a = c.costOf(c.winner()), b = c.costOf(int32_t(decisions[i].frame));
          ASSERT_LE(std::fabs(a - b), 1e-5f * std::max(a, b))
              << "GPU picked " << decisions[i].frame << " (cost " << b << "), CPU " << c.winner()
              << " (cost " << a << ")";
          ++near_ties;
          c.adoptWinner(int32_t(decisions[i].frame));
        } else {
          const float relative = std::fabs(decisions[i].cost - c.cost()) / std::max(1.f, c.cost());
          worst_cost = std::max(worst_cost, relative);
          EXPECT_LT(relative, 1e-4f) << "GPU cost " << decisions[i].cost << ", CPU " << c.cost();
        }
      }
      c.play();
      if (decisions[i].switched) ++switches;
      ASSERT_EQ(decisions[i].playing, c.frame());
      if (!check_pose) continue;
      const float path = vecDistance(toVec3(characters[i].achieved_position), c.achievedPosition());
      const float facing =
          quatDistance(toQuat(characters[i].achieved_rotation), c.achievedRotation());
      worst_path = std::max({worst_path, path, facing});
      ASSERT_LT(path, 1e-4f) << "the achieved path";
      ASSERT_LT(facing, 1e-4f) << "the achieved facing";
      for (size_t j = 0; j < joints; ++j) {
        const float dr =
            quatDistance(toQuat(model[i * joints + j].rotation), c.modelRotations()[j]);
        const float dt =
            vecDistance(toVec3(model[i * joints + j].position), c.modelTranslations()[j]);
        worst_pose = std::max({worst_pose, dr, dt});
        ASSERT_LT(dr, 1e-5f) << "joint " << j;
        ASSERT_LT(dt, 1e-5f) << "joint " << j;
      }
    }
  }
  std::printf(
      "[ crowd    ] %llu searches, %llu inertialized switches, %llu near-ties, worst pose "
      "difference %.2g, "
      "worst relative cost difference %.2g, worst achieved path difference %.2g\n",
      (unsigned long long)searches, (unsigned long long)switches, (unsigned long long)near_ties,
      double(worst_pose), double(worst_cost), double(worst_path));
  EXPECT_GT(searches, uint64_t(kCharacters) * kFrames / 8);
  EXPECT_GT(switches, 100u);
  EXPECT_LE(near_ties, searches / 1000 + 1);
}

TEST_F(CrowdSimulationTest, StaggeredTimersSpreadTheSearchesOverFrames) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 4;
  spec.frames_per_clip = 600;
  spec.joints = 2;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  auto created = mmdb::gpu::Crowd::create(*context(), t->view, 60);
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

// The timer counts whole steps: with 6 (0.1 s at 60 Hz), a periodic search every 6th step,
// never the 7th as a float timer counting down from 0.1 s by 1/60 gave.
TEST_F(CrowdSimulationTest, PeriodicSearchesComeEverySixthStep) {
  mmdb::test::SyntheticSpec spec;
  spec.clips = 2;
  spec.frames_per_clip = 600;
  spec.joints = 2;
  auto t = makeTestDatabase(spec);
  ASSERT_TRUE(t);
  mmdb::gpu::CrowdSettings settings;
  settings.stagger_phases = 0;
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
