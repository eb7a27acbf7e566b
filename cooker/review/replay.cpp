#include "review/replay.h"

#include <mmdb/controller.h>
#include <mmdb/playback.h>
#include <mmdb/search.h>

#include <glm/geometric.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <utility>

namespace mmcook::review {
namespace {

using mmdb::ErrorCode;

double mean(const std::vector<double>& values) {
  double sum = 0.0;
  for (const double v : values) sum += v;
  return values.empty() ? 0.0 : sum / double(values.size());
}

}  // namespace

int16_t replayMillimetres(float metres) {
  if (std::isnan(metres)) return 0;
  const double mm = std::clamp(double(metres) * 1000.0, -32767.0, 32767.0);
  return int16_t(std::lround(mm));
}

namespace {

// Fills ReplayPoses step after step.
struct PoseTracker {
  ReplayPoses poses;
  std::vector<int32_t> contact_joints;
  std::vector<glm::vec3> model;   // [character][joint], the last step's model space pose
  std::vector<glm::vec2> toes;    // [character][contact joint], the last step's ground position
  std::vector<uint32_t> planted;  // [character], the last step's contact bits
  std::vector<uint8_t> seen;      // [character], played in the last step
  // The measures since the last sample, [character].
  std::vector<float> slide, pose_step, gap;
  std::vector<uint8_t> switched;

  void start(const mmdb::Database& db, const ReplaySettings& settings, uint64_t steps) {
    const uint32_t n = settings.characters, joints = db.jointCount();
    poses.characters = n;
    poses.joints = joints;
    const size_t bytes_per_step = size_t(n) * joints * 3 * sizeof(int16_t);
    const size_t budget = std::max(settings.max_pose_bytes, bytes_per_step);
    const size_t kept_steps = std::max<size_t>(1, budget / bytes_per_step);
    poses.stride = uint32_t((steps + kept_steps - 1) / kept_steps);
    poses.samples = uint32_t((steps + poses.stride - 1) / poses.stride);
    const size_t elements = size_t(poses.samples) * n;
    poses.offsets_mm.reserve(elements * joints * 3);
    poses.ground_mm.reserve(elements * 4);
    for (auto* v : {&poses.contacts}) v->reserve(elements);
    const mmdb::Span<const int32_t> contacts = db.contactJoints();
    contact_joints.assign(contacts.begin(), contacts.end());
    model.assign(size_t(n) * joints, glm::vec3(0.f));
    toes.assign(size_t(n) * contact_joints.size(), glm::vec2(0.f));
    planted.assign(n, 0);
    seen.assign(n, 0);
    slide.assign(n, 0.f);
    pose_step.assign(n, 0.f);
    gap.assign(n, 0.f);
    switched.assign(n, 0);
  }

  static int32_t millimetres32(float metres) {
    if (!std::isfinite(metres)) return 0;
    return int32_t(std::clamp(double(metres) * 1000.0, -2e9, 2e9) + (metres < 0 ? -0.5 : 0.5));
  }

  mmdb::Status record(const mmdb::Crowd& crowd, uint64_t step) {
    const uint32_t joints = poses.joints;
    const mmdb::Span<const glm::vec3> pose = crowd.modelTranslations();
    const mmdb::Span<const mmdb::FootLock> feet = crowd.footLocks();
    const bool keep = step % poses.stride == 0;
    for (uint32_t i = 0; i < poses.characters; ++i) {
      const mmdb::CrowdCharacter& c = crowd.characters()[i];
      mmdb::Playing shown;
      if (mmdb::Status s = crowd.playing(i, shown); !s) return s;
      const glm::vec3* now = pose.data() + size_t(i) * joints;
      glm::vec3* before = model.data() + size_t(i) * joints;
      if (c.playing && seen[i]) {
        float largest = 0.f;
        for (uint32_t j = 0; j < joints; ++j)
          largest = std::max(largest, glm::length(now[j] - before[j]));
        pose_step[i] = std::max(pose_step[i], largest * 1000.f);
      }
      for (size_t t = 0; t < contact_joints.size(); ++t) {
        const int32_t joint = contact_joints[t];
        if (joint < 0 || uint32_t(joint) >= joints) continue;
        const glm::vec3 world = c.achieved_position + c.achieved_rotation * now[joint];
        const glm::vec2 ground(world.x, world.z);
        glm::vec2& last = toes[size_t(i) * contact_joints.size() + t];
        const uint32_t bit = 1u << t;
        if (c.playing && seen[i] && (shown.contacts & bit) && (planted[i] & bit))
          slide[i] = std::max(slide[i], glm::length(ground - last) * 1000.f);
        last = ground;
      }
      gap[i] = std::max(gap[i], glm::length(glm::vec2(c.sim.position.x - c.achieved_position.x,
                                                      c.sim.position.z - c.achieved_position.z)));
      if (crowd.decisions()[i].switched) switched[i] = 1;
      planted[i] = c.playing ? shown.contacts : 0;
      seen[i] = c.playing ? 1 : 0;
      std::copy(now, now + joints, before);
      if (!keep) continue;

      for (uint32_t j = 0; j < joints; ++j) {
        const glm::vec3 offset = c.achieved_rotation * now[j];
        poses.offsets_mm.push_back(replayMillimetres(offset.x));
        poses.offsets_mm.push_back(replayMillimetres(offset.y));
        poses.offsets_mm.push_back(replayMillimetres(offset.z));
      }
      poses.ground_mm.push_back(millimetres32(c.achieved_position.x));
      poses.ground_mm.push_back(millimetres32(c.achieved_position.z));
      poses.ground_mm.push_back(millimetres32(c.sim.position.x));
      poses.ground_mm.push_back(millimetres32(c.sim.position.z));
      poses.contacts.push_back(c.playing ? shown.contacts : 0);
      uint8_t locked = 0;
      for (uint32_t leg = 0; leg < mmdb::kLegCount; ++leg)
        if (size_t(i) * mmdb::kLegCount + leg < feet.size() &&
            feet[size_t(i) * mmdb::kLegCount + leg].locked)
          locked |= uint8_t(1u << leg);
      poses.locked.push_back(locked);
      poses.clip.push_back(c.playing ? int32_t(shown.clip) : -1);
      poses.slide_mm.push_back(slide[i]);
      poses.pose_step_mm.push_back(pose_step[i]);
      poses.gap_m.push_back(gap[i]);
      poses.switched.push_back(switched[i]);
      slide[i] = pose_step[i] = gap[i] = 0.f;
      switched[i] = 0;
    }
    return mmdb::Status();
  }
};

}  // namespace

double percentile95(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const auto at = values.begin() + std::ptrdiff_t(0.95 * double(values.size() - 1));
  std::nth_element(values.begin(), at, values.end());
  return *at;
}

double unitWeightDistance(const mmdb::Database& db, const mmdb::SearchRequest& request,
                          int32_t frame) {
  if (frame < 0 || uint32_t(frame) >= db.frameCount()) return 0.0;
  const mmdb::Span<const float> row = db.featureRow(uint32_t(frame));
  double total = 0.0;
  for (uint32_t b = 0; b < db.featureBlockCount(); ++b) {
    const mmdb::FeatureBlockInfo block = db.featureBlock(b);
    // The stored columns carry the cooked weight; run-time weights scale only the search's
    // sum, never the query, so they have nothing to divide out here.
    const double weight = double(block.weight);
    if (!(weight > 0.0)) continue;
    double sum = 0.0;
    for (uint32_t c = block.first_column; c < uint32_t(block.first_column) + block.width; ++c) {
      if (c >= request.query.size() || c >= row.size()) break;
      const double d = double(request.query[c]) - double(row[c]);
      sum += d * d;
    }
    total += sum / (weight * weight);
  }
  return total;
}

int32_t candidateSpacing(const mmdb::Database& db) {
  return std::max(1, db.defaultNeighbourhoodFrames());
}

std::vector<mmdb::CandidateCost> distinctCandidates(const mmdb::Database& db,
                                                    mmdb::Span<const mmdb::CandidateCost> ranked,
                                                    size_t count, int32_t spacing) {
  std::vector<mmdb::CandidateCost> kept;
  std::vector<int64_t> clips;  // of the kept ones
  const auto clipOf = [&](int32_t frame) -> int64_t {
    const int32_t clip =
        frame >= 0 && uint32_t(frame) < db.frameCount() ? db.clipOfFrame(uint32_t(frame)) : -1;
    return clip >= 0 ? int64_t(clip) : -2 - int64_t(frame);
  };
  for (const mmdb::CandidateCost& c : ranked) {
    if (kept.size() >= count) break;
    const int64_t clip = clipOf(c.frame);
    bool near = false;
    for (size_t k = 0; k < kept.size() && !near; ++k)
      near = clips[k] == clip && std::abs(int64_t(kept[k].frame) - c.frame) <= spacing;
    if (near) continue;
    kept.push_back(c);
    clips.push_back(clip);
  }
  return kept;
}

mmdb::Status checkPoses(const mmdb::Database& db) {
  constexpr uint32_t kChunk = 256;  // frames decoded at once
  const size_t joints = db.jointCount();
  struct alignas(16) Cell {  // decodePoses writes to 16-byte aligned spans
    mmdb::Float4 value;
  };
  std::vector<Cell> cells(size_t(kChunk) * joints * 4);
  mmdb::Float4* buffer = &cells.data()->value;
  mmdb::PoseBuffers out;
  mmdb::Span<mmdb::Float4>* spans[] = {&out.rotations, &out.translations, &out.velocities,
                                       &out.angular_velocities};
  for (uint32_t c = 0; c < db.clipCount(); ++c) {
    const mmdb::ClipInfo clip = db.clip(c);
    for (uint32_t first = 0; first < clip.frame_count; first += kChunk) {
      const uint32_t n = std::min(kChunk, clip.frame_count - first);
      for (size_t s = 0; s < 4; ++s)
        *spans[s] = mmdb::Span<mmdb::Float4>(buffer + s * kChunk * joints, n * joints);
      const mmdb::Status status = db.decodePoses(clip.first_frame + first, n, out);
      if (!status)
        return mmdb::Error::format(status.code(), "in clip '%.*s': %.160s",
                                   int(std::min<size_t>(clip.name.size(), 64)), clip.name.data(),
                                   status.message());
    }
  }
  return {};
}

mmdb::Result<std::vector<mmdb::ClipSlide>> straightClipSlides(const mmdb::Database& db,
                                                              double drift_limit_mm) {
  mmdb::Result<mmdb::DecodedPoses> decoded = mmdb::DecodedPoses::decode(db);
  if (!decoded) return decoded.error();
  const mmdb::PoseView& view = decoded.value().view();
  const uint32_t joints = db.jointCount();
  const mmdb::Span<const uint32_t> contacts = db.contacts();
  const mmdb::Span<const int32_t> contact_joints = db.contactJoints();
  const mmdb::Span<const mmdb::RootFrame> roots = db.rootMotion();
  std::vector<glm::quat> local_r(joints), model_r(joints);
  std::vector<glm::vec3> local_t(joints), model_t(joints);
  struct Toe {
    bool planted = false, open = false;
    glm::vec2 start{0.f}, previous{0.f};
  };
  std::vector<mmdb::ClipSlide> out(db.clipCount());
  for (uint32_t c = 0; c < db.clipCount(); ++c) {
    const mmdb::ClipInfo clip = db.clip(c);
    mmdb::ClipSlide& slide = out[c];
    slide.clip = c;
    std::vector<Toe> toes(contact_joints.size());
    for (uint32_t f = 0; f < clip.frame_count; ++f) {
      const uint32_t frame = clip.first_frame + f;
      if (frame >= contacts.size() || frame >= roots.size() || !view.covers(frame, 1)) break;
      const size_t row = size_t(frame - view.first_frame) * joints;
      for (uint32_t j = 0; j < joints; ++j) {
        const mmdb::Float4& q = view.rotations[row + j];
        const mmdb::Float4& t = view.translations[row + j];
        local_r[j] = glm::quat(q.w, q.x, q.y, q.z);
        local_t[j] = glm::vec3(t.x, t.y, t.z);
      }
      mmdb::ForwardKinematicsJob fk;
      fk.parents = db.parents();
      fk.local_rotations = mmdb::Span<const glm::quat>(local_r.data(), joints);
      fk.local_translations = mmdb::Span<const glm::vec3>(local_t.data(), joints);
      fk.model_rotations = mmdb::Span<glm::quat>(model_r.data(), joints);
      fk.model_translations = mmdb::Span<glm::vec3>(model_t.data(), joints);
      if (mmdb::Status s = fk.Run(); !s) return s;
      const mmdb::RootFrame& root = roots[frame];
      const glm::quat yaw(root.rotation.w, root.rotation.x, root.rotation.y, root.rotation.z);
      const glm::vec3 position(root.position.x, root.position.y, root.position.z);
      for (size_t t = 0; t < toes.size(); ++t) {
        Toe& toe = toes[t];
        const int32_t j = contact_joints[t];
        if (j < 0 || uint32_t(j) >= joints) continue;
        const glm::vec3 world = position + yaw * model_t[size_t(j)];
        const glm::vec2 at(world.x, world.z);
        const bool planted = (contacts[frame] >> t) & 1u;
        if (planted && !toe.planted && f > 0) {
          toe.open = true;
          toe.start = at;
        } else if (!planted && toe.planted && toe.open) {
          const double drift = double(glm::length(toe.previous - toe.start)) * 1000.0;
          slide.phases += 1;
          slide.over_limit += drift > drift_limit_mm ? 1 : 0;
          slide.mean_drift_mm += drift;
          slide.max_drift_mm = std::max(slide.max_drift_mm, drift);
          toe.open = false;
        }
        toe.planted = planted;
        toe.previous = at;
      }
    }
    if (slide.phases > 0) slide.mean_drift_mm /= double(slide.phases);
  }
  return out;
}

namespace {

uint64_t matchableFrames(const mmdb::Database& db) {
  uint64_t n = 0;
  for (const mmdb::MatchRange& range : db.ranges()) n += range.frame_count;
  return n;
}

// A jump's candidates (the winner and the best of other stretches of motion), the frame that was
// playing costed as the search costs its seed, and the query (ReplayJump).
void explainJump(const mmdb::Database& db, const mmdb::SearchRequest& request,
                 std::vector<mmdb::CandidateCost>& pool, int32_t spacing, ReplayJump& jump) {
  jump.seeded = request.seeded;
  jump.query.assign(request.query.begin(), request.query.end());
  if (pool.empty()) return;
  mmdb::Result<uint32_t> n = mmdb::explainCandidates(
      db, request, mmdb::Span<mmdb::CandidateCost>(pool.data(), pool.size()));
  if (n)
    jump.candidates =
        distinctCandidates(db, mmdb::Span<const mmdb::CandidateCost>(pool.data(), n.value()),
                           kReplayCandidates, spacing);
  if (request.current_frame < 0) return;
  // The seed alone: a filter no range passes leaves only the frame playing to rank.
  mmdb::SearchRequest seed = request;
  seed.seeded = true;
  seed.filter.required = ~uint64_t{0};
  seed.filter.excluded = ~uint64_t{0};
  mmdb::CandidateCost playing;
  mmdb::Result<uint32_t> one =
      mmdb::explainCandidates(db, seed, mmdb::Span<mmdb::CandidateCost>(&playing, 1));
  if (one && one.value() == 1 && playing.current) jump.playing = playing;
}

}  // namespace

mmdb::Result<Replay> replay(const mmdb::Database& db, const mmdb::StickScript& script,
                            const ReplaySettings& settings) {
  if (settings.characters < 1 || settings.characters > kMaxReplayCharacters)
    return mmdb::Error::format(ErrorCode::InvalidArgument, "replay: %u characters; replay 1 to %u",
                               settings.characters, kMaxReplayCharacters);
  if (!(settings.seconds >= kReplayStepSeconds && settings.seconds <= kMaxReplaySeconds))
    return mmdb::Error::format(ErrorCode::InvalidArgument,
                               "replay: %g s; replay from one step (1/60 s) to %g s",
                               settings.seconds, kMaxReplaySeconds);
  if (script.segments().empty())
    return mmdb::Error(ErrorCode::InvalidArgument, "replay: the stick script has no segment");
  if (db.ranges().empty())
    return mmdb::Error(ErrorCode::NoMatch,
                       "the database has no matchable frame to play; re-cook it with longer "
                       "clips or fewer excluded ranges");

  mmdb::CrowdSettings crowd_settings =
      settings.reference_policies ? mmdb::CrowdSettings::reference() : mmdb::CrowdSettings{};
  crowd_settings.search_interval_ticks = kReplaySearchIntervalSteps;
  crowd_settings.stagger_phases = 0;
  crowd_settings.start_stagger_intervals = 0;  // every character from the first step
  crowd_settings.max_drift = kReplayMaxDrift;
  crowd_settings.bounds_pruning = true;
  // Foot locking as a game runs it (the crowd's default), or the clips' own feet: planted toes
  // sliding as the clips and their transitions move them.
  crowd_settings.foot_locking = settings.feet == ReplayFeet::Locked;
  std::string locking_unavailable;
  if (crowd_settings.foot_locking) {
    // A skeleton without two legs to bend plays with the clips' own feet, and says why.
    const mmdb::Result<std::array<mmdb::LegChain, mmdb::kLegCount>> legs = mmdb::findLegChains(db);
    if (!legs) {
      crowd_settings.foot_locking = false;
      locking_unavailable = legs.error().message();
    }
  }
  mmdb::Result<mmdb::Crowd> created = mmdb::Crowd::create(db, settings.characters, crowd_settings);
  if (!created) return created.error();
  mmdb::Crowd& crowd = created.value();
  mmdb::Result<mmdb::MotionMeter> metered = mmdb::MotionMeter::create(crowd);
  if (!metered) return metered.error();
  mmdb::MotionMeter& meter = metered.value();

  const mmdb::LocomotionSpeeds speeds = mmdb::speedsForDatabase(db);
  const uint64_t steps = uint64_t(std::max(1L, std::lround(settings.seconds / kReplayStepSeconds)));

  Replay out;
  out.locking_unavailable = std::move(locking_unavailable);
  out.stats.clip_frames.assign(db.clipCount(), 0);
  out.trace.time.reserve(steps);
  out.trace.desired.reserve(steps);
  out.trace.achieved.reserve(steps);
  out.trace.cost.reserve(steps);
  out.trace.unit_distance.reserve(steps);
  meter.reserve(steps);
  std::vector<double> costs, unit_distances;
  float unit_first = 0;  // character 0's last winner's unit-weight distance
  std::vector<mmdb::CandidateCost> pool(
      size_t(std::min<uint64_t>(kReplayCandidatePool, matchableFrames(db))));
  const int32_t spacing = candidateSpacing(db);
  std::vector<mmdb::ScriptedStick> previous(settings.characters);
  double search_seconds = 0.0;
  PoseTracker tracker;
  if (settings.keep_poses) tracker.start(db, settings, steps);

  for (uint64_t step = 0; step < steps; ++step) {
    const double time = double(step) * kReplayStepSeconds;
    // The sticks, and a forced search where one turned sharply (as mmdb_sample).
    for (uint32_t i = 0; i < settings.characters; ++i) {
      const mmdb::ScriptedStick stick = script.at(time + script.characterOffset(i));
      if (mmdb::Status s = crowd.setInput(i, mmdb::stickInput(stick, speeds)); !s) return s;
      if (step > 0 && mmdb::stickChangedSharply(previous[i], stick))
        if (mmdb::Status s = crowd.forceSearch(i); !s) return s;
      previous[i] = stick;
    }

    if (mmdb::Status s = crowd.beginStep(float(kReplayStepSeconds)); !s) return s;
    const mmdb::Span<const mmdb::SearchRequest> requests = crowd.requests();
    if (!requests.empty()) {
      const auto start = std::chrono::steady_clock::now();
      const mmdb::Status searched = crowd.search();
      search_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!searched) return searched;
    }
    const mmdb::Span<const mmdb::SearchResult> results = crowd.results();
    for (size_t k = 0; k < requests.size(); ++k) {
      const uint32_t i = crowd.searching()[k];
      const mmdb::CrowdCharacter& c = crowd.characters()[i];  // as before the step
      const mmdb::SearchResult& found = results[k];
      if (found.frame < 0)
        return mmdb::Error::format(ErrorCode::NoMatch,
                                   "character %u found no frame to play at %.3f s: no matchable "
                                   "range passes its search",
                                   i, time);
      const mmdb::SearchReason reason = crowd.decisions()[i].reason;
      const int32_t playing = c.playing ? int32_t(c.current_frame) : -1;
      ++out.stats.decisions;
      costs.push_back(double(found.cost));
      unit_distances.push_back(unitWeightDistance(db, requests[k], found.frame));
      if (i == 0) unit_first = float(unit_distances.back());
      if (found.frame != playing) {
        out.jumps.push_back({time, i, playing, found.frame, found.cost, reason});
        if (settings.keep_poses) explainJump(db, requests[k], pool, spacing, out.jumps.back());
      }
      if (settings.keep_decisions) {
        const mmdb::SearchRequest& request = requests[k];
        out.decisions.push_back({uint32_t(step), i, reason, playing, found.frame, found.cost,
                                 std::vector<float>(request.query.begin(), request.query.end()),
                                 request.current_frame, request.seeded, request.transition_cost,
                                 request.range_end_margin});
      }
    }
    if (mmdb::Status s = crowd.endStep(); !s) return s;

    if (mmdb::Status s = meter.record(crowd, float(kReplayStepSeconds)); !s) return s;
    for (uint32_t i = 0; i < settings.characters; ++i) {
      const mmdb::CrowdCharacter& c = crowd.characters()[i];
      if (c.playing) ++out.stats.clip_frames[c.clip];
    }
    if (settings.keep_poses)
      if (mmdb::Status s = tracker.record(crowd, step); !s) return s;
    const mmdb::CrowdCharacter& first = crowd.characters()[0];
    out.trace.time.push_back(double(step + 1) * kReplayStepSeconds);
    out.trace.desired.emplace_back(first.sim.position.x, first.sim.position.z);
    out.trace.achieved.emplace_back(first.achieved_position.x, first.achieved_position.z);
    out.trace.cost.push_back(first.last_cost);
    out.trace.unit_distance.push_back(unit_first);
  }

  if (settings.keep_poses) out.poses = std::move(tracker.poses);
  ReplayStats& stats = out.stats;
  stats.steps = steps;
  stats.jumps = out.jumps.size();
  stats.decisions_per_second =
      search_seconds > 0.0 ? double(stats.decisions) / search_seconds : 0.0;
  stats.mean_cost = mean(costs);
  stats.p95_cost = percentile95(costs);
  stats.mean_unit_distance = mean(unit_distances);
  stats.motion = meter.total();
  stats.slides = meter.clipSlides();
  stats.trajectory_samples = stats.motion.trajectory_error_m.count;
  stats.mean_trajectory_error = stats.motion.trajectory_error_m.mean;
  stats.p95_trajectory_error = stats.motion.trajectory_error_m.p95;
  return out;
}

}  // namespace mmcook::review
