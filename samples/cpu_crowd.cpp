// The crowd on the CPU runtime: controller, query, search, then sample, inertialize and pose
// every character every tick, as a game's animation update would. The characters that search in
// a tick are answered together by one mmdb::searchBatch (one pass over the database for all of
// them); with --exhaustive each is searched alone with mmdb::searchExhaustive.
#include "crowd.h"

#include <mmdb/playback.h>
#include <mmdb/search.h>

#include <glm/geometric.hpp>
#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

namespace mmdb::sample {

mmdb::StickInput controller_input(const ScriptedStick& stick, const LocomotionSpeeds& speeds) {
  const glm::vec2 velocity = desired_velocity(stick, speeds);
  mmdb::StickInput input;
  input.desired_velocity = {velocity.x, 0.0f, velocity.y};
  constexpr float kReleased = 0.01f;
  input.desired_facing = stick.magnitude > kReleased
                             ? glm::vec3(stick.direction.x, 0.0f, stick.direction.y)
                             : glm::vec3(0.0f);
  return input;
}

void RootMotionPath::integrate(const mmdb::Database& db, uint32_t frame, float dt) {
  mmdb::integrateRootMotion(db, frame, dt, position, rotation);
}

LocomotionSpeeds speeds_for_database(const mmdb::Database& db, float& top_speed) {
  std::vector<float> speeds;
  const mmdb::Span<const mmdb::RootFrame> roots = db.rootMotion();
  for (const mmdb::MatchRange& range : db.ranges()) {
    for (uint32_t f = range.first_frame; f < range.first_frame + range.frame_count; ++f)
      speeds.push_back(std::hypot(roots[f].velocity.x, roots[f].velocity.z));
  }
  LocomotionSpeeds result;
  top_speed = 0.0f;
  if (speeds.empty()) return result;
  const auto percentile = speeds.begin() + std::ptrdiff_t(0.95 * double(speeds.size() - 1));
  std::nth_element(speeds.begin(), percentile, speeds.end());
  top_speed = *percentile;
  constexpr float kSlowest = 0.2f;  // m/s: the stick still asks for some motion
  result.run = std::clamp(top_speed, kSlowest, result.run);
  result.walk = std::min(result.walk, 0.6f * result.run);
  return result;
}

std::vector<bool> forced_search_frames(const mmdb::Database& db) {
  std::vector<bool> forced(db.frameCount(), false);
  for (const mmdb::MatchRange& range : db.ranges()) {
    if (range.frame_count > 0) forced[range.first_frame + range.frame_count - 1] = true;
  }
  for (uint32_t i = 0; i < db.clipCount(); ++i) {
    const mmdb::ClipInfo clip = db.clip(i);
    if (clip.frame_count > 0) forced[clip.first_frame + clip.frame_count - 1] = true;
  }
  return forced;
}

namespace {

// The local pose of one skeleton: rotations, translations and their velocities per joint.
struct Pose {
  explicit Pose(size_t joints)
      : rotations(joints, glm::quat(1.0f, 0.0f, 0.0f, 0.0f)),
        translations(joints, glm::vec3(0.0f)),
        velocities(joints, glm::vec3(0.0f)),
        angular_velocities(joints, glm::vec3(0.0f)) {}
  std::vector<glm::quat> rotations;
  std::vector<glm::vec3> translations;
  std::vector<glm::vec3> velocities;
  std::vector<glm::vec3> angular_velocities;
};

struct Character {
  Character(int index_, size_t joints)
      : index(index_), time_offset(character_time_offset(index_)), offsets(joints) {}

  int index;
  double time_offset;        // into the stick script
  mmdb::CharacterState sim;  // the controller's simulation root
  ScriptedStick previous_stick;
  bool playing = false;                // false until the first search picked a frame
  uint32_t clip = 0;                   // playing clip
  float clip_time = 0.0f;              // clip-local seconds
  uint32_t frame = 0;                  // global frame playing
  int search_timer = 0;                // ticks until the next periodic search
  float since_switch = 1e6f;           // seconds since the last transition
  std::optional<SearchReason> reason;  // why it searches this tick, if it does
  Pose offsets;                        // inertialization offsets captured at the last switch
  RootMotionPath achieved;             // where the frames played took the character
};

// Per-tick working memory shared by all characters, sized once.
struct Scratch {
  explicit Scratch(const mmdb::Database& db)
      : query(db.featureCount()),
        source(db.jointCount()),
        destination(db.jointCount()),
        shown(db.jointCount()),
        model_rotations(db.jointCount()),
        model_translations(db.jointCount()) {}
  std::vector<float> query;
  Pose source, destination, shown;
  std::vector<glm::quat> model_rotations;
  std::vector<glm::vec3> model_translations;
};

bool report(const mmdb::Status& status, const char* what) {
  if (status.ok()) return true;
  std::fprintf(stderr, "mmdb_sample: %s failed: %s: %s\n", what, mmdb::errorCodeName(status.code()),
               status.message());
  return false;
}

class CpuCrowd {
 public:
  CpuCrowd(const mmdb::Database& db, const SampleOptions& options, const LocomotionSpeeds& speeds,
           DecisionLog& log, TrajectoryTrace& trace, PlaybackStats& stats)
      : db_(db),
        options_(options),
        speeds_(speeds),
        log_(log),
        trace_(trace),
        stats_(stats),
        scratch_(db),
        forced_search_(forced_search_frames(db)) {
    const mmdb::Span<const float> times = db.trajectoryTimes();
    if (times.size() == mmdb::kTrajectorySamples) {
      for (int i = 0; i < mmdb::kTrajectorySamples; ++i) settings_.times[i] = times[i];
    }
    const int32_t hips = db.roleJoint(mmdb::Role::Hips);
    hips_ = hips >= 0 ? uint32_t(hips) : 0;
    characters_.reserve(size_t(options.characters));
    for (int i = 0; i < options.characters; ++i) characters_.emplace_back(i, db.jointCount());
    // Per-tick search memory, sized once: a query, a request and a result per character.
    const size_t count = size_t(std::max(options.characters, 0));
    queries_.assign(count * db.featureCount(), 0.0f);
    requests_.reserve(count);
    results_.reserve(count);
    searching_.reserve(count);
  }

  int run() {
    if (!load_poses()) return failure_;
    const long ticks = std::lround(options_.seconds / kTickSeconds);
    for (long tick = 0; tick < ticks; ++tick) {
      const double time = double(tick) * kTickSeconds;
      requests_.clear();
      searching_.clear();
      for (Character& c : characters_) {
        if (!prepare(c, time)) return failure_;
      }
      if (!search_all(time)) return failure_;
      for (Character& c : characters_) {
        if (!finish_step(c)) return failure_;
      }
    }
    return kExitSuccess;
  }

 private:
  // The controller steps; a character that must search builds its query and request.
  bool prepare(Character& c, double time) {
    const float dt = float(kTickSeconds);
    const ScriptedStick stick = scripted_stick(time + c.time_offset);
    const mmdb::StickInput input = controller_input(stick, speeds_);
    mmdb::updateCharacter(c.sim, input, settings_, dt);

    c.reason = search_reason(c, stick);
    c.previous_stick = stick;
    if (!c.reason) return true;
    float trajectory[mmdb::kTrajectoryFloats];
    mmdb::predictTrajectory(c.sim, input, settings_, trajectory);
    mmdb::expressInCharacterFrame(c.sim, c.achieved.position, c.achieved.rotation, kMaxDrift,
                                  trajectory);
    const int32_t playing = c.playing ? int32_t(c.frame) : -1;
    const size_t n = db_.featureCount();
    const mmdb::Span<float> query(queries_.data() + size_t(c.index) * n, n);
    if (!report(mmdb::buildQuery(db_, playing, trajectory, query), "building the query"))
      return false;
    mmdb::SearchRequest request;
    request.query = query;
    // At the end of what may be played the search must move, so it starts from nothing.
    request.current_frame = *c.reason == SearchReason::RangeEnd ? -1 : playing;
    requests_.push_back(request);
    searching_.push_back(c.index);
    return true;
  }

  // Every request of this tick in one batch (or one by one, exhaustively); then each decision.
  bool search_all(double time) {
    if (requests_.empty()) return true;
    results_.resize(requests_.size());
    const auto start = std::chrono::steady_clock::now();
    if (options_.exhaustive) {
      for (size_t i = 0; i < requests_.size(); ++i) {
        const mmdb::Result<mmdb::SearchResult> found = mmdb::searchExhaustive(db_, requests_[i]);
        if (!found) return search_failed(found.error(), "the search");
        results_[i] = found.value();
      }
    } else if (const mmdb::Status s = mmdb::searchBatch(db_, requests_, results_); !s) {
      return search_failed(s, "the batch search");
    }
    const auto stop = std::chrono::steady_clock::now();
    const double microseconds =
        std::chrono::duration<double, std::micro>(stop - start).count() / double(requests_.size());
    for (size_t i = 0; i < requests_.size(); ++i) {
      Character& c = characters_[size_t(searching_[i])];
      if (!decide(c, results_[i], microseconds, time)) return false;
      if (options_.explain && !explain(c, requests_[i])) return false;
    }
    return true;
  }

  bool finish_step(Character& c) {
    const float dt = float(kTickSeconds);
    if (!show_pose(c)) return false;

    if (c.index == 0 && zero_ticks_++ % 60 == 0)
      trace_.seconds.push_back({glm::vec2(c.sim.position.x, c.sim.position.z),
                                std::to_string((zero_ticks_ - 1) / 60) + " s"});
    if (c.index == 0 && (trace_.desired.empty() || ++trace_ticks_ % 2 == 0)) {
      trace_.desired.emplace_back(c.sim.position.x, c.sim.position.z);
      trace_.achieved.emplace_back(c.achieved.position.x, c.achieved.position.z);
    }
    c.achieved.integrate(db_, c.frame, dt);
    advance(c, dt);
    return true;
  }

  std::optional<SearchReason> search_reason(const Character& c, const ScriptedStick& stick) const {
    if (!c.playing) return SearchReason::Start;
    if (forced_search_[c.frame]) return SearchReason::RangeEnd;
    if (stick_changed_sharply(c.previous_stick, stick)) return SearchReason::StickChanged;
    if (c.search_timer <= 0) return SearchReason::Periodic;
    return std::nullopt;
  }

  // NoMatch is the file's doing (nothing matchable, or features changed under the mapping).
  bool search_failed(const mmdb::Status& status, const char* what) {
    if (status.code() == mmdb::ErrorCode::NoMatch) failure_ = kExitBadInput;
    return report(status, what);
  }

  // The search's answer for one character: log it, then jump when it picked another frame.
  bool decide(Character& c, const mmdb::SearchResult& found, double microseconds, double time) {
    log_.record(time, c.index, c.playing ? int64_t(c.frame) : -1, uint32_t(found.frame), found.cost,
                microseconds, *c.reason);
    c.search_timer = kSearchIntervalTicks;
    const bool jumps = !c.playing || uint32_t(found.frame) != c.frame;
    if (jumps && c.index == 0) trace_jump(c.achieved.position, uint32_t(found.frame));
    if (jumps) return jump(c, uint32_t(found.frame));
    return true;
  }

  void trace_jump(const glm::vec3& at, uint32_t frame) {
    const int32_t clip = db_.clipOfFrame(frame);
    const std::string_view name = clip >= 0 ? db_.clip(uint32_t(clip)).name : std::string_view();
    trace_.jumps.push_back({glm::vec2(at.x, at.z), std::string(name)});
  }

  // --explain: the search's winner and the next two, each block's part of their cost.
  bool explain(const Character& c, const mmdb::SearchRequest& request) {
    std::array<mmdb::CandidateCost, 3> best;
    uint64_t matchable = 0;  // a tiny database may have fewer frames to rank
    for (const mmdb::MatchRange& range : db_.ranges()) matchable += range.frame_count;
    const size_t k = size_t(std::min<uint64_t>(best.size(), matchable));
    const mmdb::Result<uint32_t> n =
        mmdb::explainCandidates(db_, request, mmdb::Span<mmdb::CandidateCost>(best.data(), k));
    if (!n) return search_failed(n.error(), "explaining the search");
    log_.explain(c.index, mmdb::Span<const mmdb::CandidateCost>(best.data(), n.value()));
    return true;
  }

  // The poses sampling reads: the file's own streams, or all frames decoded once when the file
  // codes them.
  bool load_poses() {
    if (!db_.posesCoded()) {
      poses_ = db_.rawPoses();
      return true;
    }
    const size_t elements = size_t(db_.frameCount()) * db_.jointCount();
    for (std::vector<mmdb::Float4>& stream : decoded_) stream.resize(elements);
    const mmdb::PoseBuffers out{decoded_[0], decoded_[1], decoded_[2], decoded_[3]};
    if (!report(db_.decodePoses(0, db_.frameCount(), out), "decoding the pose streams")) {
      failure_ = kExitBadInput;
      return false;
    }
    poses_.first_frame = 0;
    poses_.frame_count = db_.frameCount();
    poses_.rotations = decoded_[0];
    poses_.translations = decoded_[1];
    poses_.velocities = decoded_[2];
    poses_.angular_velocities = decoded_[3];
    return true;
  }

  bool sample(uint32_t clip, float time, Pose& pose) {
    mmdb::SamplePoseJob job;
    job.database = &db_;
    job.poses = poses_;
    job.clip = clip;
    job.time = time;
    job.rotations = pose.rotations;
    job.translations = pose.translations;
    job.velocities = pose.velocities;
    job.angular_velocities = pose.angular_velocities;
    return report(job.Run(), "sampling a pose");
  }

  // Switches to `frame`, capturing the inertialization offsets from the pose shown now.
  bool jump(Character& c, uint32_t frame) {
    const mmdb::Result<mmdb::ClipTime> where = mmdb::clipTimeOfFrame(db_, frame);
    if (!where) return report(where.error(), "locating the chosen frame");
    if (c.playing) {
      if (!sample(c.clip, c.clip_time, scratch_.source)) return false;
      if (!sample(where->clip, where->time, scratch_.destination)) return false;
      mmdb::InertializeTransitionJob job;
      job.time_since_previous = c.since_switch;
      job.source_rotations = scratch_.source.rotations;
      job.source_angular_velocities = scratch_.source.angular_velocities;
      job.source_translations = scratch_.source.translations;
      job.source_velocities = scratch_.source.velocities;
      job.destination_rotations = scratch_.destination.rotations;
      job.destination_angular_velocities = scratch_.destination.angular_velocities;
      job.destination_translations = scratch_.destination.translations;
      job.destination_velocities = scratch_.destination.velocities;
      job.offset_rotations = c.offsets.rotations;
      job.offset_angular_velocities = c.offsets.angular_velocities;
      job.offset_translations = c.offsets.translations;
      job.offset_velocities = c.offsets.velocities;
      if (!report(job.Run(), "inertializing a transition")) return false;
      c.since_switch = 0.0f;
      ++stats_.transitions;
    }
    c.playing = true;
    c.clip = where->clip;
    c.clip_time = where->time;
    c.frame = frame;
    return true;
  }

  // Sample, inertialize and pose the character as it would be drawn this tick.
  bool show_pose(Character& c) {
    Pose& shown = scratch_.shown;
    if (!sample(c.clip, c.clip_time, shown)) return false;
    mmdb::InertializeJob blend;
    blend.time_since_switch = c.since_switch;
    blend.rotations = shown.rotations;
    blend.translations = shown.translations;
    blend.offset_rotations = c.offsets.rotations;
    blend.offset_angular_velocities = c.offsets.angular_velocities;
    blend.offset_translations = c.offsets.translations;
    blend.offset_velocities = c.offsets.velocities;
    blend.out_rotations = shown.rotations;  // in place: allowed for this job
    blend.out_translations = shown.translations;
    if (!report(blend.Run(), "inertializing the pose")) return false;

    mmdb::ForwardKinematicsJob fk;
    fk.parents = db_.parents();
    fk.local_rotations = shown.rotations;
    fk.local_translations = shown.translations;
    fk.model_rotations = scratch_.model_rotations;
    fk.model_translations = scratch_.model_translations;
    if (!report(fk.Run(), "forward kinematics")) return false;
    stats_.hip_height_sum += scratch_.model_translations[hips_].y;
    ++stats_.hip_height_samples;
    return true;
  }

  void advance(Character& c, float dt) const {
    const mmdb::ClipInfo clip = db_.clip(c.clip);
    c.clip_time += dt;
    // In float, as the GPU's fk pass computes it, so both play the same frame at a key's edge.
    const float key = std::floor(c.clip_time * db_.frameRate() + 1e-4f);
    const uint32_t local = uint32_t(std::min(key, float(clip.frame_count - 1)));
    c.frame = clip.first_frame + local;
    c.since_switch += dt;
    c.search_timer -= 1;
  }

  const mmdb::Database& db_;
  const SampleOptions& options_;
  LocomotionSpeeds speeds_;
  DecisionLog& log_;
  TrajectoryTrace& trace_;
  PlaybackStats& stats_;
  Scratch scratch_;
  mmdb::PoseView poses_;
  std::vector<mmdb::Float4> decoded_[mmdb::kPoseStreamCount];  // 16-aligned, as malloc gives
  std::vector<bool> forced_search_;
  std::vector<float> queries_;                 // featureCount() floats per character
  std::vector<mmdb::SearchRequest> requests_;  // this tick's searches
  std::vector<mmdb::SearchResult> results_;
  std::vector<int> searching_;  // the character of each request
  mmdb::ControllerSettings settings_;
  uint32_t hips_ = 0;
  std::vector<Character> characters_;
  int failure_ = kExitInternal;  // a failed step's exit code: 1 when the file is to blame
  long trace_ticks_ = 0;
  long zero_ticks_ = 0;  // ticks character 0 has finished, for the plot's seconds
};

}  // namespace

int run_cpu_crowd(const mmdb::Database& db, const SampleOptions& options,
                  const LocomotionSpeeds& speeds, DecisionLog& log, TrajectoryTrace& trace,
                  PlaybackStats& stats) {
  CpuCrowd crowd(db, options, speeds, log, trace, stats);
  return crowd.run();
}

}  // namespace mmdb::sample
