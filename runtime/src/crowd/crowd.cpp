// A crowd of characters: its settings, its creation from a database and the poses it plays, and
// its setters. Its step is in crowd/step.cpp, the characters' poses in crowd/pose_step.cpp.
#include "mmdb/crowd.h"

#include "crowd/spans.h"
#include "mmdb/playback.h"
#include "playback/playback_run.h"
#include "playback/rotation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

namespace mmdb {
namespace {

// The timer is a signed count of steps: an interval, staggered, stays far from its limit.
constexpr uint32_t kMaxSearchInterval = 1u << 30;

bool finiteNonNegative(float x) { return std::isfinite(x) && x >= 0.f; }

using detail::slice;

}  // namespace

CrowdSettings CrowdSettings::reference() noexcept {
  CrowdSettings s;
  s.start_stagger_intervals = 0;
  s.transition_cost = 0.f;
  s.continue_window = 0.f;
  s.jump_cooldown = 0.f;
  s.search_when_settled = false;
  s.range_end_moves_on = false;
  s.range_end_margin = 0.f;
  s.foot_locking = false;
  s.inertialization_threshold = 0.f;
  s.transition_speed_limit = 0.f;
  s.inertialization_halflife = kDefaultInertializationHalflife;
  s.inertialization_rate_halflife = kDefaultInertializationHalflife;
  s.synchronization.mode = Synchronization::None;
  return s;
}

CrowdSettings CrowdSettings::referenceController() noexcept {
  // reference(), then the reference's decisions: it starts playing the first range and searches
  // when its 0.1 s float timer runs out, when the stick settles (at most once per 0.1 s) and at a
  // clip's end.
  CrowdSettings s = reference();
  s.start_playing = true;
  s.search_interval_seconds = 0.1f;
  s.search_when_settled = true;
  s.settle_search_interval = 0.1f;
  s.search_at_clip_end = true;
  s.unrotated_angular_offsets = true;
  s.predict_before_update = true;
  s.show_next_frame = true;
  s.reference_arithmetic = true;
  return s;
}

uint64_t mirroredTagMask(const Database& db) noexcept {
  for (uint32_t bit = 0; bit < db.tagCount() && bit < 64; ++bit)
    if (db.tagName(bit) == "mirrored") return 1ull << bit;
  return 0;
}

SettleLimits settleLimits(float velocity_change, float rotation_change, float dt) noexcept {
  SettleLimits l;
  const float dv = velocity_change * dt;
  l.velocity_squared = dv * dv;
  const float angle = rotation_change * dt;
  l.cos_limit = angle < 3.14159265f ? std::cos(angle) : -2.f;
  return l;
}

uint32_t staggerTicks(uint32_t character, uint32_t interval, uint32_t phases) noexcept {
  return phases > 1 ? interval * (character % phases) / phases : 0;
}

uint32_t startDelayTicks(uint32_t character, uint32_t interval, uint32_t phases,
                         uint32_t intervals) noexcept {
  if (intervals == 0) return 0;
  return staggerTicks(character, interval, phases) +
         interval * (character / std::max(phases, 1u) % intervals);
}

Status checkStartStagger(const char* what, uint32_t interval, uint32_t intervals) noexcept {
  if (intervals > 16)
    return Error::format(ErrorCode::InvalidArgument, "%sstart_stagger_intervals %u is over 16",
                         what, intervals);
  if (uint64_t(interval) * intervals > kMaxSearchInterval)
    return Error::format(ErrorCode::InvalidArgument,
                         "%ssearch_interval_ticks %u times start_stagger_intervals %u is over "
                         "2^30 steps",
                         what, interval, intervals);
  return Status();
}

Status checkReferenceArithmetic(const char* what, bool reference_arithmetic,
                                float transition_speed_limit) noexcept {
  if (!reference_arithmetic || !(transition_speed_limit > 0.f)) return Status();
  return Error::format(ErrorCode::InvalidArgument,
                       "%sreference_arithmetic decays a transition's offsets step by step, which "
                       "transition_speed_limit %g cannot hold back: set it to 0",
                       what, double(transition_speed_limit));
}

uint32_t continueFrames(float continue_window, float frame_rate) noexcept {
  // Clamped below 2^31 (longer than any database), so that the cast is defined for any window.
  return uint32_t(std::fmin(std::floor(continue_window * frame_rate + 1e-4f), 2147483520.f));
}

bool turnedSharply(const glm::vec3& a, const glm::vec3& b, float cos_limit) noexcept {
  const float dot = a.x * b.x + a.z * b.z;
  const float lengths = std::sqrt((a.x * a.x + a.z * a.z) * (b.x * b.x + b.z * b.z));
  return dot < cos_limit * lengths;
}

Result<Crowd> Crowd::create(const Database& db, uint32_t character_count,
                            const CrowdSettings& settings, const PoseView& poses) noexcept {
  if (!db.valid() || db.frameCount() == 0 || db.jointCount() == 0 || db.clipCount() == 0)
    return Error(ErrorCode::InvalidArgument,
                 "Crowd::create: the database is empty (not opened, or no frames, joints or "
                 "clips)");
  if (Status s = checkCrowdSize("Crowd::create", character_count); !s) return s;
  if (!finiteNonNegative(settings.max_drift))
    return Error::format(ErrorCode::InvalidArgument,
                         "Crowd::create: max_drift %g m must be finite and >= 0",
                         double(settings.max_drift));
  if (!finiteNonNegative(settings.transition_cost))
    return Error::format(ErrorCode::InvalidArgument,
                         "Crowd::create: transition_cost %g must be finite and >= 0",
                         double(settings.transition_cost));
  if (!(settings.inertialization_halflife > 0.f) ||
      !std::isfinite(settings.inertialization_halflife))
    return Error::format(ErrorCode::InvalidArgument,
                         "Crowd::create: inertialization_halflife %g s must be finite and > 0",
                         double(settings.inertialization_halflife));
  if (!(settings.inertialization_rate_halflife > 0.f) ||
      !std::isfinite(settings.inertialization_rate_halflife))
    return Error::format(ErrorCode::InvalidArgument,
                         "Crowd::create: inertialization_rate_halflife %g s must be finite and > 0",
                         double(settings.inertialization_rate_halflife));
  if (Status s = checkControllerSettings("Crowd::create", settings.max_speed,
                                         settings.controller_halflife);
      !s)
    return s;
  if (settings.step_workers < 1 || settings.step_workers > 1024)
    return Error::format(ErrorCode::InvalidArgument,
                         "Crowd::create: step_workers %u must be 1 to 1024", settings.step_workers);
  if (settings.search_interval_ticks > kMaxSearchInterval)
    return Error::format(ErrorCode::InvalidArgument,
                         "Crowd::create: search_interval_ticks %u is over 2^30 steps",
                         settings.search_interval_ticks);
  if (Status s = checkStartStagger("Crowd::create: ", settings.search_interval_ticks,
                                   settings.start_stagger_intervals);
      !s)
    return s;
  const struct {
    const char* name;
    float value;
  } policies[] = {{"inertialization_threshold", settings.inertialization_threshold},
                  {"transition_speed_limit", settings.transition_speed_limit},
                  {"continue_window", settings.continue_window},
                  {"jump_cooldown", settings.jump_cooldown},
                  {"range_end_margin", settings.range_end_margin},
                  {"settle_velocity_change", settings.settle_velocity_change},
                  {"settle_rotation_change", settings.settle_rotation_change},
                  {"search_interval_seconds", settings.search_interval_seconds},
                  {"settle_search_interval", settings.settle_search_interval}};
  for (const auto& p : policies)
    if (!finiteNonNegative(p.value))
      return Error::format(ErrorCode::InvalidArgument,
                           "Crowd::create: %s %g must be finite and >= 0", p.name, double(p.value));
  if (Status s = checkReferenceArithmetic("Crowd::create: ", settings.reference_arithmetic,
                                          settings.transition_speed_limit);
      !s)
    return s;
  if (Status s = validateSynchronization("Crowd::create: ", settings.synchronization); !s) return s;
  FootLockSettings foot_settings;
  foot_settings.foot_unlock_radius = settings.foot_unlock_radius;
  foot_settings.foot_unlock_halflife = settings.foot_unlock_halflife;
  foot_settings.ik_foot_height = settings.ik_foot_height;
  foot_settings.ik_toe_length = settings.ik_toe_length;
  foot_settings.ik_max_length_buffer = settings.ik_max_length_buffer;
  if (Status s = validateFootLockSettings(foot_settings); !s)
    return Error::format(ErrorCode::InvalidArgument, "Crowd::create: %.200s", s.message());
  std::array<LegChain, kLegCount> legs{};
  if (settings.foot_locking) {
    Result<std::array<LegChain, kLegCount>> found = findLegChains(db);
    if (!found)
      return Error::format(ErrorCode::InvalidArgument,
                           "Crowd::create: foot locking: %.170s (or set foot_locking = false)",
                           found.error().message());
    legs = found.value();
  }
  const uint64_t pose_elements = uint64_t(db.frameCount()) * db.jointCount();
  const bool given = poses.frame_count != 0 || !poses.rotations.empty();
  if (given &&
      (!poses.covers(0, db.frameCount()) || poses.first_frame != 0 ||
       poses.rotations.size() != pose_elements || poses.translations.size() != pose_elements ||
       poses.velocities.size() != pose_elements ||
       poses.angular_velocities.size() != pose_elements))
    return Error::format(ErrorCode::InvalidArgument,
                         "Crowd::create: the poses must hold all %u frames of the database, "
                         "%llu elements in each of the four streams",
                         db.frameCount(), static_cast<unsigned long long>(pose_elements));

  Crowd crowd;
  crowd.db_ = &db;
  crowd.rate_ = db.frameRate();
  crowd.settings_ = settings;
  crowd.legs_ = legs;
  crowd.foot_settings_ = foot_settings;
  crowd.count_ = character_count;
  crowd.joints_ = db.jointCount();
  crowd.features_ = db.featureCount();
  crowd.continue_frames_ = continueFrames(settings.continue_window, db.frameRate());
  crowd.range_end_frames_ = continueFrames(settings.range_end_margin, db.frameRate());
  crowd.controller_.position_halflife = settings.controller_halflife;
  crowd.controller_.rotation_halflife = settings.controller_halflife;
  crowd.controller_.reference_arithmetic = settings.reference_arithmetic;
  const Span<const float> times = db.trajectoryTimes();
  if (times.size() == size_t(kTrajectorySamples))
    for (int i = 0; i < kTrajectorySamples; ++i) crowd.controller_.times[i] = times[i];

  const size_t n = character_count;
  const size_t joints = crowd.joints_;
  try {
    crowd.must_move_.assign(db.frameCount(), 0);
    crowd.characters_.assign(n, CrowdCharacter{});
    for (uint32_t c = 0; c < n; ++c) {  // a staggered start waits for its timer, as a periodic one
      CrowdCharacter& ch = crowd.characters_[c];
      ch.search_timer =
          int32_t(startDelayTicks(c, settings.search_interval_ticks, settings.stagger_phases,
                                  settings.start_stagger_intervals));
      ch.search_clock = 0.f;
      ch.settle_clock = settings.settle_search_interval;
    }
    crowd.inputs_.assign(n, StickInput{});
    crowd.filters_.assign(n, TagFilter{});
    crowd.blocks_ = db.featureBlockCount();
    crowd.block_weights_.assign(n * crowd.blocks_, 1.f);
    crowd.weighted_.assign(n, 0);
    crowd.forced_.assign(n, 0);
    crowd.decisions_.assign(n, Decision{});
    crowd.shown_.assign(n, Shown{});
    crowd.queries_.assign(n * crowd.features_, 0.f);
    crowd.requests_.assign(n, SearchRequest{});
    crowd.results_.assign(n, SearchResult{});
    crowd.searching_.assign(n, 0);
    crowd.batch_scratch_.assign(size_t(settings.step_workers) * batchScratchFloats(db), 0.f);
    const glm::quat identity(1.f, 0.f, 0.f, 0.f);
    crowd.local_rotations_.assign(n * joints, identity);
    crowd.model_rotations_.assign(n * joints, identity);
    crowd.offset_rotations_.assign(n * joints, identity);
    crowd.offset_vectors_.assign(n * joints, glm::vec3(0.f));
    if (settings.reference_arithmetic)
      crowd.reference_offsets_.assign(size_t(settings.step_workers) * joints,
                                      glm::quat(1.f, 0.f, 0.f, 0.f));
    crowd.local_translations_.assign(n * joints, glm::vec3(0.f));
    crowd.model_translations_.assign(n * joints, glm::vec3(0.f));
    crowd.offset_angular_.assign(n * joints, glm::vec3(0.f));
    crowd.offset_translations_.assign(n * joints, glm::vec3(0.f));
    crowd.offset_velocities_.assign(n * joints, glm::vec3(0.f));
    const size_t scratch = 2 * size_t(settings.step_workers) * joints;  // two poses a worker
    crowd.switch_rotations_.assign(scratch, identity);
    crowd.switch_translations_.assign(scratch, glm::vec3(0.f));
    crowd.switch_velocities_.assign(scratch, glm::vec3(0.f));
    crowd.switch_angular_.assign(scratch, glm::vec3(0.f));
    crowd.fk_scratch_.assign(
        size_t(settings.step_workers) * detail::forwardKinematics4ScratchFloats(joints), 0.f);
    crowd.claimed_.reset(new (std::nothrow) std::atomic<uint8_t>[n]);
    if (!crowd.claimed_) return Error(ErrorCode::InvalidArgument, "Crowd::create: out of memory");
    for (size_t c = 0; c < n; ++c) crowd.claimed_[c].store(0, std::memory_order_relaxed);
    crowd.searched_.reset(new (std::nothrow) std::atomic<uint8_t>[n + 1]);
    if (!crowd.searched_) return Error(ErrorCode::InvalidArgument, "Crowd::create: out of memory");
    for (size_t c = 0; c <= n; ++c) crowd.searched_[c].store(0, std::memory_order_relaxed);
    crowd.feet_.assign(n * kLegCount, FootLock{});
    if (settings.transition_speed_limit > 0.f)
      crowd.unlocked_translations_.assign(n * joints, glm::vec3(0.f));
  } catch (const std::bad_alloc&) {
    return Error::format(ErrorCode::InvalidArgument,
                         "Crowd::create: out of memory for %u characters of %u joints",
                         character_count, db.jointCount());
  }

  // A query the database cannot take (no trajectory blocks) is refused now, not at a step.
  const float trajectory[kTrajectoryFloats] = {};
  if (Status s = buildQuery(db, -1, trajectory, slice(crowd.queries_, 0, crowd.features_)); !s)
    return s;

  // Playing on from the last frame of a range leaves what the search may return; from the last
  // frame of a clip, the clip itself: either way the character must move.
  for (const MatchRange& range : db.ranges())
    if (range.frame_count > 0) crowd.must_move_[range.first_frame + range.frame_count - 1] = 1;
  // (search_at_clip_end: only from the last frame of a clip, the reference's whole-clip ranges.)
  if (settings.search_at_clip_end) std::fill(crowd.must_move_.begin(), crowd.must_move_.end(), 0);
  crowd.clips_.resize(db.clipCount());
  for (uint32_t i = 0; i < db.clipCount(); ++i) {
    const ClipInfo clip = db.clip(i);
    if (clip.frame_count > 0) crowd.must_move_[clip.first_frame + clip.frame_count - 1] = 1;
    crowd.clips_[i] = {clip.first_frame, clip.frame_count, clip.tag_mask};
  }
  crowd.event_tags_ = settings.mirrored_tag_events ? ~0ull : ~mirroredTagMask(db);
  // start_playing: every character plays the first frame of the first range, its first search
  // when its periodic timer runs out.
  if (settings.start_playing && !db.ranges().empty()) {
    const uint32_t first = db.ranges()[0].first_frame;
    const Result<ClipTime> where = clipTimeOfFrame(db, first);
    if (!where) return where.error();
    for (uint32_t c = 0; c < n; ++c) {
      CrowdCharacter& ch = crowd.characters_[c];
      ch.playing = true;
      ch.clip = where->clip;
      ch.clip_time = where->time;
      ch.current_frame = first;
      ch.last_winner = first;
      ch.search_timer =
          int32_t(settings.search_interval_ticks +
                  staggerTicks(c, settings.search_interval_ticks, settings.stagger_phases));
      ch.search_clock = settings.search_interval_seconds;
    }
  }

  if (given) {
    crowd.poses_ = poses;
  } else if (db.posesCoded()) {
    Result<DecodedPoses> decoded = DecodedPoses::decode(db);
    if (!decoded) return decoded.error();
    crowd.decoded_ = std::move(decoded.value());
    crowd.poses_ = crowd.decoded_.view();
  } else {
    crowd.poses_ = db.rawPoses();
  }
  if (settings.transition_speed_limit > 0.f) {
    Result<std::vector<float>> steps = clipJointSteps(db, crowd.poses_);
    if (!steps) return steps.error();
    try {
      crowd.joint_step_limits_ =
          transitionStepLimits(steps.value(), settings.transition_speed_limit);
    } catch (const std::bad_alloc&) {
      return Error(ErrorCode::InvalidArgument, "Crowd::create: out of memory");
    }
  }
  for (uint32_t c = 0; c < character_count; c += 4) {  // the pose shown before the first step
    Status s = crowd.poseBlock(c, std::min(4u, character_count - c), 0);
    if (!s) return s;
  }
  return Result<Crowd>(std::move(crowd));
}

static_assert(std::is_nothrow_move_assignable_v<detail::CrowdState> &&
                  std::is_nothrow_default_constructible_v<detail::CrowdState>,
              "Crowd's move is noexcept: every member must move and default-construct without "
              "throwing");

Crowd& Crowd::operator=(Crowd&& other) noexcept {
  if (this == &other) return *this;
  // Every member moves (a vector keeps its elements where they are, so the requests' queries and
  // the pose view into decoded_ stay valid); `other` is left as a default-constructed crowd.
  detail::CrowdState& mine = *this;
  detail::CrowdState& theirs = other;
  mine = std::move(theirs);
  theirs = detail::CrowdState();
  return *this;
}

Status Crowd::checkCharacter(uint32_t character, const char* what) const noexcept {
  if (character < count_) return Status();
  return Error::format(ErrorCode::InvalidArgument,
                       "%s: character %u is out of range (the crowd has %u characters)", what,
                       character, count_);
}

Status Crowd::checkBetweenSteps(uint32_t character, const char* what) const noexcept {
  if (Status s = checkCharacter(character, what); !s) return s;
  if (phase_ != Phase::Idle)
    return Error::format(ErrorCode::InvalidArgument, "%s: a step is in progress (call endStep)",
                         what);
  return Status();
}

Status Crowd::setStick(uint32_t character, float x, float z) noexcept {
  if (Status s = checkCharacter(character, "setStick"); !s) return s;
  if (Status s = checkStick("setStick", character, x, z); !s) return s;
  const float length = std::sqrt(x * x + z * z);
  StickInput& in = inputs_[character];
  in.desired_velocity = {x * settings_.max_speed, 0.f, z * settings_.max_speed};
  in.desired_facing = length > 0.01f ? glm::vec3(x, 0.f, z) : glm::vec3(0.f);
  return Status();
}

Status Crowd::setInput(uint32_t character, const StickInput& input) noexcept {
  if (Status s = checkCharacter(character, "setInput"); !s) return s;
  const glm::vec3& v = input.desired_velocity;
  const glm::vec3& f = input.desired_facing;
  if (!std::isfinite(v.x) || !std::isfinite(v.z) || !std::isfinite(f.x) || !std::isfinite(f.z))
    return Error::format(ErrorCode::InvalidArgument, "setInput: character %u's input is not finite",
                         character);
  if (Status s = checkStickInput("setInput", character, v, f); !s) return s;
  inputs_[character] = input;
  return Status();
}

Status Crowd::setTagFilter(uint32_t character, uint64_t required, uint64_t excluded) noexcept {
  if (Status s = checkCharacter(character, "setTagFilter"); !s) return s;
  filters_[character] = TagFilter{required, excluded};
  return Status();
}

Status Crowd::setBlockWeights(uint32_t character, Span<const float> weights) noexcept {
  if (Status s = checkCharacter(character, "setBlockWeights"); !s) return s;
  if (weights.empty()) {
    weighted_[character] = 0;
    return Status();
  }
  // The search's own check, on a request that holds only the weights and a valid query.
  SearchRequest check;
  check.query = slice(queries_, character, features_);
  check.block_weights = weights;
  if (Status s = validateSearch(*db_, check); !s)
    return Error::format(ErrorCode::InvalidArgument, "setBlockWeights: character %u: %.200s",
                         character, s.message());
  for (size_t b = 0; b < weights.size(); ++b)
    if (!(weights[b] <= kMaxBlockWeight))
      return Error::format(ErrorCode::InvalidArgument,
                           "setBlockWeights: character %u: block weight %zu is %g, over %g (a "
                           "cost so weighted overflows)",
                           character, b, double(weights[b]), double(kMaxBlockWeight));
  std::copy(weights.begin(), weights.end(), block_weights_.begin() + size_t(character) * blocks_);
  weighted_[character] = 1;
  return Status();
}

Span<const float> Crowd::blockWeights(uint32_t character) const noexcept {
  if (character >= count_ || !weighted_[character]) return {};
  return {block_weights_.data() + size_t(character) * blocks_, blocks_};
}

Status Crowd::forceSearch(uint32_t character) noexcept {
  if (Status s = checkCharacter(character, "forceSearch"); !s) return s;
  forced_[character] = 1;
  return Status();
}

std::vector<float> transitionStepLimits(Span<const float> clip_joint_steps, float limit) {
  std::vector<float> limits(clip_joint_steps.size(), 0.f);
  if (!(limit > 0.f)) return limits;
  for (size_t j = 0; j < limits.size(); ++j) {
    const float most = limit * std::fmax(clip_joint_steps[j], kMinJointStep);
    limits[j] = 1.f / (most * most);
  }
  return limits;
}

Result<std::vector<float>> clipJointSteps(const Database& db, const PoseView& given) noexcept {
  if (!db.valid())
    return Error(ErrorCode::InvalidArgument, "clipJointSteps: the database is not open");
  const uint32_t joints = db.jointCount();
  const PoseView view = given.frame_count != 0 ? given : db.rawPoses();
  const bool decode = view.frame_count == 0;  // a coded stream: a window at a time
  const size_t elements = size_t(db.frameCount()) * joints;
  if (!decode && (!view.covers(0, db.frameCount()) || view.first_frame != 0 ||
                  view.rotations.size() != elements || view.translations.size() != elements))
    return Error::format(ErrorCode::InvalidArgument,
                         "clipJointSteps: the poses must hold the rotations and translations of "
                         "all %u frames of the database",
                         db.frameCount());
  constexpr uint32_t kWindow = 256;  // frames decoded at once
  try {
    std::vector<float> steps(joints, 0.f);
    std::vector<Float4> window_rotations(decode ? size_t(kWindow) * joints : 0);
    std::vector<Float4> window_translations(window_rotations.size());
    std::vector<glm::quat> local_r(joints), model_r(joints);
    std::vector<glm::vec3> local_t(joints),
        model_t[2] = {std::vector<glm::vec3>(joints), std::vector<glm::vec3>(joints)};
    for (uint32_t i = 0; i < db.clipCount(); ++i) {
      const ClipInfo clip = db.clip(i);
      for (uint32_t f = 0; f < clip.frame_count; ++f) {
        const Float4* rotations = nullptr;
        const Float4* translations = nullptr;
        if (decode) {
          const uint32_t in_window = f % kWindow;
          if (in_window == 0) {
            const uint32_t frames = std::min(kWindow, clip.frame_count - f);
            PoseBuffers out;
            out.rotations = Span<Float4>(window_rotations.data(), size_t(frames) * joints);
            out.translations = Span<Float4>(window_translations.data(), size_t(frames) * joints);
            if (Status s = db.decodePoses(clip.first_frame + f, frames, out); !s) return s;
          }
          rotations = window_rotations.data() + size_t(in_window) * joints;
          translations = window_translations.data() + size_t(in_window) * joints;
        } else {
          rotations = view.rotations.data() + size_t(clip.first_frame + f) * joints;
          translations = view.translations.data() + size_t(clip.first_frame + f) * joints;
        }
        for (uint32_t j = 0; j < joints; ++j) {
          local_r[j] = glm::quat(rotations[j].w, rotations[j].x, rotations[j].y, rotations[j].z);
          local_t[j] = glm::vec3(translations[j].x, translations[j].y, translations[j].z);
        }
        ForwardKinematicsJob fk;
        fk.parents = db.parents();
        fk.local_rotations = local_r;
        fk.local_translations = local_t;
        fk.model_rotations = model_r;
        fk.model_translations = model_t[f % 2];
        detail::runForwardKinematics(fk);  // a verified database's parents precede their children
        if (f == 0) continue;
        for (uint32_t j = 0; j < joints; ++j)
          steps[j] = std::max(steps[j], glm::length(model_t[f % 2][j] - model_t[(f + 1) % 2][j]));
      }
    }
    return steps;
  } catch (const std::bad_alloc&) {
    return Error(ErrorCode::InvalidArgument, "clipJointSteps: out of memory");
  }
}

Result<DecodedPoses> DecodedPoses::decode(const Database& db) noexcept {
  if (!db.valid()) return Error(ErrorCode::InvalidArgument, "DecodedPoses: no database");
  DecodedPoses out;
  if (!db.posesCoded()) {
    out.view_ = db.rawPoses();
    return out;
  }
  const size_t elements = size_t(db.frameCount()) * db.jointCount();
  try {
    for (std::vector<Float4>& stream : out.streams_) stream.resize(elements);
  } catch (const std::bad_alloc&) {
    return Error::format(ErrorCode::InvalidArgument,
                         "DecodedPoses: out of memory for %u frames of %u joints", db.frameCount(),
                         db.jointCount());
  }
  std::vector<Float4>* s = out.streams_;
  if (Status status = db.decodePoses(0, db.frameCount(), {s[0], s[1], s[2], s[3]}); !status)
    return status;
  out.view_ = {0, db.frameCount(), s[0], s[1], s[2], s[3]};
  return out;
}

size_t DecodedPoses::bytes() const noexcept {
  size_t total = 0;
  for (const std::vector<Float4>& stream : streams_) total += stream.size() * sizeof(Float4);
  return total;
}

}  // namespace mmdb
