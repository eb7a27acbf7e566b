// The CPU character step of a crowd, in the order of the GPU crowd's passes (build query, match,
// resolve, sample, inertialize, fk), made of the runtime's own functions and jobs.
#include "mmdb/crowd.h"

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

template <class T>
Span<T> slice(std::vector<T>& v, size_t index, size_t count) {
  return Span<T>(v.data() + index * count, count);
}

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
  if (settings.reference_arithmetic && settings.transition_speed_limit > 0.f)
    return Error::format(
        ErrorCode::InvalidArgument,
        "Crowd::create: reference_arithmetic decays a transition's offsets step by "
        "step, which transition_speed_limit %g cannot hold back: set it to 0",
        double(settings.transition_speed_limit));
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

namespace {

bool finite(const glm::vec3& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}

// The turn about +Y of a rotation (its twist about Y), normalized; false when it has none: not
// finite, zero, or a half turn about a horizontal axis.
bool yawOf(const glm::quat& q, glm::quat& yaw) {
  if (!std::isfinite(q.w) || !std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z))
    return false;
  // Scaled by its largest component first, so that no square overflows or underflows: any
  // scale of a rotation keeps its yaw.
  const float largest = std::fmax(std::fmax(std::fabs(q.w), std::fabs(q.x)),
                                  std::fmax(std::fabs(q.y), std::fabs(q.z)));
  if (!(largest > 0.f)) return false;
  const float w = q.w / largest, y = q.y / largest;
  const float length = std::sqrt(w * w + y * y);
  if (!(length > 1e-6f)) return false;
  yaw = glm::quat(w / length, 0.f, y / length, 0.f);
  return true;
}

// Whether every component of v is at most `limit` in size (and finite), and its length too.
bool within(const glm::vec3& v, float limit) {
  if (!(std::fabs(v.x) <= limit && std::fabs(v.y) <= limit && std::fabs(v.z) <= limit))
    return false;
  return double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z <= double(limit) * limit;
}

}  // namespace

Status checkPlacement(const char* what, uint32_t character, const glm::vec3& position,
                      const glm::quat& rotation, glm::quat& yaw) noexcept {
  if (!finite(position))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's position (%g, %g, %g) is not finite", what,
                         character, double(position.x), double(position.y), double(position.z));
  if (!(std::fabs(position.x) <= kMaxCrowdCoordinate &&
        std::fabs(position.y) <= kMaxCrowdCoordinate &&
        std::fabs(position.z) <= kMaxCrowdCoordinate))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's position (%g, %g, %g) has a coordinate beyond %g m",
                         what, character, double(position.x), double(position.y),
                         double(position.z), double(kMaxCrowdCoordinate));
  if (!yawOf(rotation, yaw))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's rotation (%g, %g, %g, %g) has no turn about +Y to "
                         "take (not finite, zero, or a half turn about a horizontal axis)",
                         what, character, double(rotation.x), double(rotation.y),
                         double(rotation.z), double(rotation.w));
  return Status();
}

Status checkCrowdDt(const char* what, float dt) noexcept {
  if (!(dt >= 0.f && dt <= kMaxCrowdDt))
    return Error::format(ErrorCode::InvalidArgument, "%.60s: dt %g s must be finite and 0 to %g s",
                         what, double(dt), double(kMaxCrowdDt));
  return Status();
}

Status checkStick(const char* what, uint32_t character, float& x, float& z) noexcept {
  if (!(std::fabs(x) <= kMaxStickLength && std::fabs(z) <= kMaxStickLength) ||
      !(x * x + z * z <= kMaxStickLength * kMaxStickLength))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's stick (%g, %g) is not finite or longer than %g (a "
                         "stick is at most 1 long; up to %g it is scaled to 1)",
                         what, character, double(x), double(z), double(kMaxStickLength),
                         double(kMaxStickLength));
  const float length = std::sqrt(x * x + z * z);
  if (length > 1.0f) {
    x /= length;
    z /= length;
  }
  return Status();
}

Status checkStickInput(const char* what, uint32_t character, const glm::vec3& velocity,
                       const glm::vec3& facing) noexcept {
  if (!within(glm::vec3(velocity.x, 0.f, velocity.z), kMaxCrowdSpeed))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's desired velocity (%g, %g) m/s is not finite or "
                         "faster than %g m/s",
                         what, character, double(velocity.x), double(velocity.z),
                         double(kMaxCrowdSpeed));
  if (!(std::fabs(facing.x) <= kMaxCrowdFacing && std::fabs(facing.z) <= kMaxCrowdFacing))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: character %u's desired facing (%g, %g) is not finite or has a "
                         "component beyond %g (only its direction counts)",
                         what, character, double(facing.x), double(facing.z),
                         double(kMaxCrowdFacing));
  return Status();
}

Status checkSimulation(const char* what, uint32_t character, const CharacterState& state,
                       glm::quat& yaw) noexcept {
  const struct {
    const char* name;
    const glm::vec3& value;
    float limit;
    const char* unit;
  } rates[] = {{"velocity", state.velocity, kMaxCrowdSpeed, "m/s"},
               {"acceleration", state.acceleration, kMaxCrowdAcceleration, "m/s^2"},
               {"angular velocity", state.angular_velocity, kMaxCrowdAngularVelocity, "rad/s"}};
  for (const auto& r : rates)
    if (!within(r.value, r.limit))
      return Error::format(
          ErrorCode::InvalidArgument,
          "%.60s: character %u's %.20s (%g, %g, %g) %.8s is not finite or beyond %g %.8s", what,
          character, r.name, double(r.value.x), double(r.value.y), double(r.value.z), r.unit,
          double(r.limit), r.unit);
  return checkPlacement(what, character, state.position, state.rotation, yaw);
}

Status checkCrowdSize(const char* what, uint32_t character_count) noexcept {
  if (character_count == 0)
    return Error::format(ErrorCode::InvalidArgument, "%.60s: a crowd needs at least one character",
                         what);
  if (character_count > kMaxCrowdCharacters)
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: %u characters are more than a crowd holds (at most %u)", what,
                         character_count, kMaxCrowdCharacters);
  return Status();
}

Status checkControllerSettings(const char* what, float max_speed,
                               float controller_halflife) noexcept {
  if (!(std::fabs(max_speed) <= kMaxCrowdSpeed))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: max_speed %g m/s must be finite and at most %g m/s in size", what,
                         double(max_speed), double(kMaxCrowdSpeed));
  if (!(controller_halflife >= kMinControllerHalflife &&
        controller_halflife <= kMaxControllerHalflife))
    return Error::format(ErrorCode::InvalidArgument,
                         "%.60s: controller_halflife %g s must be finite and %g to %g s", what,
                         double(controller_halflife), double(kMinControllerHalflife),
                         double(kMaxControllerHalflife));
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

Status Crowd::teleport(uint32_t character, const glm::vec3& position,
                       const glm::quat& rotation) noexcept {
  if (Status s = checkBetweenSteps(character, "teleport"); !s) return s;
  glm::quat yaw;
  if (Status s = checkPlacement("teleport", character, position, rotation, yaw); !s) return s;
  CrowdCharacter& ch = characters_[character];
  // The rigid move that takes the achieved transform to the new one carries the simulation too.
  const glm::quat turn = glm::normalize(yaw * glm::inverse(ch.achieved_rotation));
  CharacterState& sim = ch.sim;
  sim.position = position + turn * (sim.position - ch.achieved_position);
  sim.rotation = glm::normalize(turn * sim.rotation);
  sim.velocity = turn * sim.velocity;
  sim.acceleration = turn * sim.acceleration;
  sim.angular_velocity = turn * sim.angular_velocity;
  ch.achieved_position = position;
  ch.achieved_rotation = yaw;
  for (FootLock& f : slice(feet_, character, kLegCount)) f = FootLock{};
  return Status();
}

Status Crowd::place(uint32_t character, const glm::vec3& position,
                    const glm::quat& rotation) noexcept {
  if (Status s = checkBetweenSteps(character, "place"); !s) return s;
  glm::quat yaw;
  if (Status s = checkPlacement("place", character, position, rotation, yaw); !s) return s;
  CrowdCharacter& ch = characters_[character];
  // The feet held in the world stay, their legs bent to them again at once: the pose a game draws
  // after the placing has its held toes where they were, not carried along by it.
  ch.achieved_position = position;
  ch.achieved_rotation = yaw;
  if (settings_.foot_locking && ch.playing) {
    FootLockJob job;
    job.parents = db_->parents();
    job.legs = Span<const LegChain>(legs_.data(), legs_.size());
    job.settings = foot_settings_;
    job.position = ch.achieved_position;
    job.rotation = ch.achieved_rotation;
    job.hold_only = true;
    job.feet = slice(feet_, character, kLegCount);
    job.local_rotations = slice(local_rotations_, character, joints_);
    job.local_translations = slice(local_translations_, character, joints_);
    job.model_rotations = slice(model_rotations_, character, joints_);
    job.model_translations = slice(model_translations_, character, joints_);
    detail::runFootLock4(&job, 1);
  }
  return Status();
}

Status Crowd::setSimulation(uint32_t character, const CharacterState& state) noexcept {
  if (Status s = checkBetweenSteps(character, "setSimulation"); !s) return s;
  glm::quat yaw;
  if (!finite(state.position) || !finite(state.velocity) || !finite(state.acceleration) ||
      !finite(state.angular_velocity))
    return Error::format(ErrorCode::InvalidArgument,
                         "setSimulation: character %u's state is not finite", character);
  if (Status s = checkSimulation("setSimulation", character, state, yaw); !s) return s;
  characters_[character].sim = state;
  characters_[character].sim.rotation = yaw;
  return Status();
}

// What search(), endStep() and their parts say when no step has begun, or its beginning is not
// finished.
Status Crowd::notBegun(const char* what) const noexcept {
  if (phase_ == Phase::Beginning)
    return Error::format(ErrorCode::InvalidArgument,
                         "%s: the step's beginning is not finished (call finishBeginStep)", what);
  return Error::format(ErrorCode::InvalidArgument, "%s: no step has begun (call beginStep)", what);
}

Status Crowd::checkRange(uint32_t first, uint32_t count, const char* what) const noexcept {
  if (first <= count_ && count <= count_ - first) return Status();
  return Error::format(ErrorCode::InvalidArgument,
                       "%s: characters [%u, %u + %u) are outside the crowd's %u", what, first,
                       first, count, count_);
}

// Claims a range's characters for this part of the step; a character another range already
// claimed is an overlap: what this one claimed is given back, and nothing else is touched.
Status Crowd::claimRange(uint32_t first, uint32_t count, const char* what) noexcept {
  for (uint32_t c = first; c < first + count; ++c) {
    if (claimed_[c].exchange(1, std::memory_order_acq_rel) != 0) {
      for (uint32_t u = first; u < c; ++u) claimed_[u].store(0, std::memory_order_release);
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: character %u of [%u, %u + %u) is in another range of this step; "
                           "the ranges must not overlap",
                           what, c, first, first, count);
    }
  }
  return Status();
}

// Whether every character was claimed by a `range_call` of this part of the step.
Status Crowd::checkAllClaimed(const char* what, const char* range_call) const noexcept {
  for (uint32_t c = 0; c < count_; ++c) {
    if (claimed_[c].load(std::memory_order_acquire) == 0)
      return Error::format(ErrorCode::InvalidArgument,
                           "%s: character %u is in no range of this step (call %s for it first)",
                           what, c, range_call);
  }
  return Status();
}

Status Crowd::step(float dt) noexcept {
  if (Status s = beginStep(dt); !s) return s;
  // A failure past the beginning closes the step too: the next one may begin.
  Status s = search();
  if (s) s = endStep();
  if (!s) abandonStep();
  return s;
}

void Crowd::abandonStep() noexcept {
  for (uint32_t c = 0; c < count_; ++c) claimed_[c].store(0, std::memory_order_relaxed);
  phase_ = Phase::Idle;
}

Status Crowd::beginStep(float dt) noexcept {
  if (Status s = prepare(dt, "beginStep"); !s) return s;
  // One thread: the requests go straight to their places in character order.
  for (uint32_t c = 0; c < count_; ++c) {
    if (Status s = decide(c, searches_); !s) {
      abandonStep();  // closed: the next one may begin
      return s;
    }
    searches_ += decisions_[c].reason != SearchReason::None ? 1 : 0;
  }
  phase_ = Phase::Begun;
  return Status();
}

Status Crowd::prepareStep(float dt) noexcept { return prepare(dt, "prepareStep"); }

Status Crowd::prepare(float dt, const char* what) noexcept {
  if (db_ == nullptr)
    return Error::format(ErrorCode::InvalidArgument, "%s: the crowd is empty", what);
  if (phase_ != Phase::Idle)
    return Error::format(ErrorCode::InvalidArgument, "%s: the previous step has not ended", what);
  if (Status s = checkCrowdDt(what, dt); !s) return s;
  dt_ = dt;
  searches_ = 0;
  for (uint32_t c = 0; c <= count_; ++c) searched_[c].store(0, std::memory_order_relaxed);
  const SettleLimits limits =
      settleLimits(settings_.settle_velocity_change, settings_.settle_rotation_change, dt);
  settle_velocity_limit_ = limits.velocity_squared;
  settle_cos_limit_ = limits.cos_limit;
  phase_ = Phase::Beginning;
  return Status();
}

Status Crowd::beginStepRange(uint32_t first, uint32_t count) noexcept {
  if (phase_ != Phase::Beginning)
    return Error(ErrorCode::InvalidArgument,
                 "beginStepRange: no step is being begun (call prepareStep)");
  if (Status s = checkRange(first, count, "beginStepRange"); !s) return s;
  if (Status s = claimRange(first, count, "beginStepRange"); !s) return s;
  // Each character's request in its own slot (slot c); finishBeginStep() packs them.
  // A character that fails is marked (2); the others of the range are decided, and
  // finishBeginStep() closes the step naming the first that failed.
  Status failed;
  for (uint32_t c = first; c < first + count; ++c) {
    if (Status s = decide(c, c); !s) {
      claimed_[c].store(2, std::memory_order_release);
      if (failed) failed = s;
    }
  }
  return failed;
}

Status Crowd::finishBeginStep() noexcept {
  if (phase_ != Phase::Beginning)
    return Error(ErrorCode::InvalidArgument,
                 "finishBeginStep: no step is being begun (call prepareStep)");
  if (Status s = checkAllClaimed("finishBeginStep", "beginStepRange"); !s) return s;
  for (uint32_t c = 0; c < count_; ++c) {
    if (claimed_[c].load(std::memory_order_acquire) != 2) continue;
    abandonStep();
    return Error::format(ErrorCode::InvalidArgument,
                         "finishBeginStep: character %u failed in beginStepRange (its query is not "
                         "finite); the step is closed, nothing played",
                         c);
  }
  // The searching characters' requests, packed in character order: slot k <= c, so the move is
  // in place.
  size_t k = 0;
  for (uint32_t c = 0; c < count_; ++c) {
    claimed_[c].store(0, std::memory_order_relaxed);
    if (decisions_[c].reason == SearchReason::None) continue;
    if (k != c) {
      requests_[k] = requests_[c];
      results_[k] = results_[c];
    }
    searching_[k] = c;
    ++k;
  }
  searches_ = k;
  phase_ = Phase::Begun;
  return Status();
}

// The build query pass: the controller, the reason to search, the query and the request.
Status Crowd::decide(uint32_t c, size_t slot) noexcept {
  CrowdCharacter& ch = characters_[c];
  const StickInput& input = inputs_[c];
  const CharacterState before = ch.sim;
  updateCharacter(ch.sim, input, controller_, dt_);

  // The stick settles: it changed sharply in the last step and no longer does.
  bool settled = false;
  if (dt_ > 0.f) {
    const glm::vec3 velocity(input.desired_velocity.x, 0.f, input.desired_velocity.z);
    glm::vec3 facing(input.desired_facing.x, 0.f, input.desired_facing.z);
    if (facing.x * facing.x + facing.z * facing.z <= 1e-12f) facing = ch.input_facing;
    const glm::vec3 change = velocity - ch.input_velocity;
    const bool changing = change.x * change.x + change.z * change.z > settle_velocity_limit_ ||
                          turnedSharply(ch.input_facing, facing, settle_cos_limit_);
    settled = settings_.search_when_settled && ch.playing && ch.input_changing && !changing;
    ch.input_changing = ch.playing && changing;
    // settle_search_interval: at most once per interval (the reference's force-search timer,
    // counted down in the steps that do not force).
    if (settings_.settle_search_interval > 0.f) {
      if (settled && ch.settle_clock <= 0.f)
        ch.settle_clock = settings_.settle_search_interval;
      else if (ch.settle_clock > 0.f) {
        settled = false;
        ch.settle_clock -= dt_;
      } else {
        settled = false;
      }
    }
    ch.input_velocity = velocity;
    ch.input_facing = facing;
  }

  SearchReason reason = SearchReason::None;
  if (!ch.playing) {
    if (settings_.start_stagger_intervals == 0 || ch.search_timer <= 0)
      reason = SearchReason::Start;
  } else if (must_move_[ch.current_frame])
    reason = SearchReason::RangeEnd;
  else if (forced_[c] || settled)
    reason = SearchReason::Forced;
  else if (settings_.search_interval_seconds > 0.f ? ch.search_clock <= 0.f
                                                   : ch.search_timer <= 0)  // whole steps: no drift
    reason = SearchReason::Periodic;
  // The jump cooldown: a periodic or forced search waits for it to end; a forced one is kept.
  const bool held = (reason == SearchReason::Forced || reason == SearchReason::Periodic) &&
                    ch.since_switch < settings_.jump_cooldown;
  forced_[c] = held && reason == SearchReason::Forced ? 1 : 0;  // else one step only
  if (held) reason = SearchReason::None;
  decisions_[c].reason = reason;
  decisions_[c].switched = false;
  decisions_[c].continued = false;
  decisions_[c].held = held;
  if (reason == SearchReason::None) return Status();

  // The trajectory from the simulation root after this step's update, or (the reference's
  // order) before it.
  const CharacterState& predicted = settings_.predict_before_update ? before : ch.sim;
  float trajectory[kTrajectoryFloats];
  predictTrajectory(predicted, input, controller_, trajectory);
  expressInCharacterFrame(predicted, ch.achieved_position, ch.achieved_rotation,
                          settings_.max_drift, trajectory);
  const int32_t playing = ch.playing ? int32_t(ch.current_frame) : -1;
  const Span<float> query = slice(queries_, c, features_);
  if (Status s = buildQuery(*db_, playing, trajectory, query); !s) return s;
  // The inputs' limits keep the query finite; one that is not anyway (a placement or simulation
  // root carried beyond them by the step) fails the character here, not the crowd's search: its
  // controller is as before the step and it does not search.
  for (const float value : query) {
    if (std::isfinite(value)) continue;
    ch.sim = before;
    decisions_[c].reason = SearchReason::None;
    return Error::format(ErrorCode::InvalidArgument,
                         "step: character %u's query is not finite (its placement (%g, %g, %g) or "
                         "simulation root (%g, %g, %g) is beyond what the step holds: teleport it)",
                         c, double(ch.achieved_position.x), double(ch.achieved_position.y),
                         double(ch.achieved_position.z), double(ch.sim.position.x),
                         double(ch.sim.position.y), double(ch.sim.position.z));
  }
  SearchRequest& request = requests_[slot];
  request = SearchRequest{};
  request.query = query;
  // Start and range-end searches have no frame to beat: at a range end the search must move.
  const bool seeded = reason == SearchReason::Forced || reason == SearchReason::Periodic;
  const bool moves_on = reason == SearchReason::RangeEnd && settings_.range_end_moves_on;
  request.current_frame = seeded || moves_on ? playing : -1;
  request.seeded = seeded;
  request.transition_cost = settings_.transition_cost;
  request.neighbourhood_frames =
      settings_.neighbourhood_frames < 0 ? kDefaultNeighbourhood : settings_.neighbourhood_frames;
  request.range_end_margin = int32_t(range_end_frames_);
  request.filter = filters_[c];
  request.block_weights = blockWeights(c);
  results_[slot] = SearchResult{};
  searching_[slot] = c;
  return Status();
}

// The match pass. NoMatch is not an error of the step: that character's result has frame -1, as
// the GPU's kNoFrame, and it keeps what it plays.
Status Crowd::search() noexcept {
  if (phase_ != Phase::Begun) return notBegun("search");
  return searchRange(0, uint32_t(searches_), 0);
}

Status Crowd::searchRange(uint32_t first, uint32_t count, uint32_t worker) noexcept {
  if (phase_ != Phase::Begun) return notBegun("searchRange");
  if (first > searches_ || count > searches_ - first)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchRange: requests [%u, %u + %u) are outside this step's %zu", first,
                         first, count, searches_);
  if (worker >= settings_.step_workers)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchRange: worker %u of %u (CrowdSettings::step_workers)", worker,
                         settings_.step_workers);
  if (searched_[count_].load(std::memory_order_acquire) != 0)
    return Error::format(ErrorCode::InvalidArgument,
                         "searchRange: requests [%u, %u + %u): the step's end has begun "
                         "(endStepRange); every search comes before it",
                         first, first, count);
  for (uint32_t k = first; k < first + count; ++k) {
    if (searched_[k].exchange(1, std::memory_order_acq_rel) != 0) {
      for (uint32_t u = first; u < k; ++u) searched_[u].store(0, std::memory_order_release);
      return Error::format(ErrorCode::InvalidArgument,
                           "searchRange: request %u of [%u, %u + %u) was searched by another "
                           "range of this step; the ranges must not overlap",
                           k, first, first, count);
    }
  }
  if (count == 0) return Status();
  const Span<const SearchRequest> requests(requests_.data() + first, count);
  const Span<SearchResult> results(results_.data() + first, count);
  if (settings_.bounds_pruning) {
    const size_t floats = batch_scratch_.size() / settings_.step_workers;
    const Status s = searchBatch(*db_, requests, results,
                                 Span<float>(batch_scratch_.data() + worker * floats, floats));
    if (!s && s.code() != ErrorCode::NoMatch) return s;
    return Status();
  }
  for (size_t k = 0; k < count; ++k) {
    const Result<SearchResult> found = searchExhaustive(*db_, requests[k]);
    if (found) {
      results[k] = found.value();
    } else if (found.error().code() == ErrorCode::NoMatch) {
      results[k] = SearchResult{};
    } else {
      return found.error();
    }
  }
  return Status();
}

Status Crowd::endStep() noexcept {
  if (phase_ != Phase::Begun) return notBegun("endStep");
  if (Status s = endStepRange(0, count_, 0); !s) return s;
  return finishStep();
}

Status Crowd::endStepRange(uint32_t first, uint32_t count, uint32_t worker) noexcept {
  if (phase_ != Phase::Begun) return notBegun("endStepRange");
  if (Status s = checkRange(first, count, "endStepRange"); !s) return s;
  if (worker >= settings_.step_workers)
    return Error::format(ErrorCode::InvalidArgument,
                         "endStepRange: worker %u of %u (CrowdSettings::step_workers)", worker,
                         settings_.step_workers);
  // This range's results, checked before anything moves.
  const uint32_t* begin = searching_.data();
  const uint32_t* end = begin + searches_;
  const size_t k_first = size_t(std::lower_bound(begin, end, first) - begin);
  size_t k_end = k_first;
  for (; k_end < searches_ && searching_[k_end] < first + count; ++k_end) {
    const int32_t frame = results_[k_end].frame;
    if (frame < -1 || frame >= int64_t(db_->frameCount()))
      return Error::format(ErrorCode::InvalidArgument,
                           "endStep: result %zu (character %u) has frame %d, outside [-1, %u)",
                           k_end, searching_[k_end], frame, db_->frameCount());
  }
  if (Status s = claimRange(first, count, "endStepRange"); !s) return s;
  searched_[count_].store(1, std::memory_order_release);  // no search after this
  // Four characters at a time: each one's switch, if any, and its sampled pose; their forward
  // kinematics side by side; each one's clock moved on; their foot locks side by side; then what
  // each one reports.
  size_t k = k_first;
  prefetchBlock(first, std::min(4u, count));
  for (uint32_t block = first; block < first + count; block += 4) {
    const uint32_t in_block = std::min(4u, first + count - block);
    if (block + 4 < first + count)
      prefetchBlock(block + 4, std::min(4u, first + count - block - 4));
    for (uint32_t c = block; c < block + in_block; ++c) {
      if (k < k_end && searching_[k] == c) {
        if (Status s = resolve(c, results_[k++], worker); !s) return s;
      }
    }
    if (Status s = poseBlock(block, in_block, worker); !s) return s;
    for (uint32_t c = block; c < block + in_block; ++c) advance(c);
    if (settings_.foot_locking) lockFeet(block, in_block);
    for (uint32_t c = block; c < block + in_block; ++c) {
      const CrowdCharacter& ch = characters_[c];
      decisions_[c].frame = ch.last_winner;
      decisions_[c].cost = ch.last_cost;
      decisions_[c].playing = ch.current_frame;
      showRange(c);
    }
  }
  return Status();
}

Status Crowd::finishStep() noexcept {
  if (phase_ != Phase::Begun) return notBegun("finishStep");
  if (Status s = checkAllClaimed("finishStep", "endStepRange"); !s) return s;
  for (uint32_t c = 0; c < count_; ++c) claimed_[c].store(0, std::memory_order_relaxed);
  phase_ = Phase::Idle;
  return Status();
}

// The range holding the pose shown and the tags it gained and lost.
void Crowd::showRange(uint32_t c) noexcept {
  const CrowdCharacter& ch = characters_[c];
  Shown& shown = shown_[c];
  int32_t range = -1;
  uint64_t tags = 0;
  if (ch.playing) {
    // Mostly the range shown last step still holds the frame (ranges are disjoint).
    const Span<const MatchRange> ranges = db_->ranges();
    const bool same = shown.range >= 0 && size_t(shown.range) < ranges.size() &&
                      ch.shown_frame - ranges[size_t(shown.range)].first_frame <
                          ranges[size_t(shown.range)].frame_count;
    range = same ? shown.range : rangeOfFrame(ranges, ch.shown_frame);
    tags = range >= 0 ? ranges[size_t(range)].tag_mask : clips_[ch.clip].tag_mask;
  }
  shown.entered = tags & ~shown.tags & event_tags_;
  shown.left = shown.tags & ~tags & event_tags_;
  shown.range = range;
  shown.tags = tags;
}

Status Crowd::playing(uint32_t character, Playing& out) const noexcept {
  if (Status s = checkCharacter(character, "playing"); !s) return s;
  const CrowdCharacter& ch = characters_[character];
  const Shown& shown = shown_[character];
  Playing p;
  p.playing = ch.playing;
  p.decision = decisions_[character];
  if (ch.playing) {
    p.clip = ch.clip;
    p.frame = ch.shown_frame;
    p.clip_frame = ch.shown_frame - clips_[ch.clip].first_frame;
    p.clip_time = ch.shown_time;
    p.contacts = ch.shown_frame < db_->contacts().size() ? db_->contacts()[ch.shown_frame] : 0u;
  }
  p.range = shown.range;
  p.tags = shown.tags;
  p.tags_entered = shown.entered;
  p.tags_left = shown.left;
  for (uint32_t leg = 0; leg < kLegCount; ++leg) {
    if (feet_.empty()) break;
    const FootLock& foot = feet_[size_t(character) * kLegCount + leg];
    if (foot.locked) p.locked_feet |= 1u << leg;
    if (foot.blending) p.blending_feet |= 1u << leg;
  }
  out = p;
  return Status();
}

Status Crowd::sample(uint32_t clip, float time, uint32_t scratch) noexcept {
  SamplePoseJob job;
  job.database = db_;
  job.poses = poses_;
  job.clip = clip;
  job.time = time;
  job.rotations = slice(switch_rotations_, scratch, joints_);
  job.translations = slice(switch_translations_, scratch, joints_);
  job.velocities = slice(switch_velocities_, scratch, joints_);
  job.angular_velocities = slice(switch_angular_, scratch, joints_);
  detail::runSamplePose(job, clips_[clip].first_frame,  // checked at create
                        clips_[clip].frame_count);
  return Status();
}

// The resolve pass: the timer restarts; a new winner is an inertialized switch (or the start).
Status Crowd::resolve(uint32_t c, const SearchResult& found, uint32_t worker) noexcept {
  CrowdCharacter& ch = characters_[c];
  const uint32_t interval = settings_.search_interval_ticks;
  ch.search_count += 1;
  ch.search_timer = int32_t(interval);
  ch.search_clock = settings_.search_interval_seconds;
  // Spread the crowd's searches, once: from the first periodic search, or from the starts.
  if (decisions_[c].reason == SearchReason::Start && settings_.start_stagger_intervals == 0) {
    const uint32_t late = staggerTicks(c, interval, settings_.stagger_phases);
    ch.search_timer += int32_t(late);
    if (interval > 0)
      ch.search_clock += settings_.search_interval_seconds * float(late) / float(interval);
  }
  ch.last_winner = found.frame < 0 ? kNoFrame : uint32_t(found.frame);
  ch.last_cost = found.cost;
  if (found.frame < 0 || (ch.playing && uint32_t(found.frame) == ch.current_frame)) return Status();
  // The continuing rule: playback reaches a winner a little ahead in the same clip by itself.
  if (ch.playing && continue_frames_ > 0) {
    const ClipSpan& clip = clips_[ch.clip];
    const uint32_t winner = uint32_t(found.frame);
    if (winner > ch.current_frame && winner < clip.first_frame + clip.frame_count &&
        winner - ch.current_frame <= continue_frames_) {
      decisions_[c].continued = true;
      return Status();
    }
  }

  const Result<ClipTime> where = clipTimeOfFrame(*db_, uint32_t(found.frame));
  if (!where) return where.error();
  if (ch.playing) {
    // The pose the switch starts from keeps within the transition speed limit too: the
    // transition playing may be held back in this step, as in any other.
    if (limitApplies(ch, offsetsShow(ch))) {
      if (Status s = limitTransition(c, worker); !s) return s;
    }
    // The pose showing (source) and the one to show (destination), both with velocities.
    const uint32_t source = 2 * worker, destination = source + 1;  // the worker's scratch
    if (Status s = sample(ch.clip, ch.clip_time, source); !s) return s;
    if (Status s = sample(where->clip, where->time, destination); !s) return s;
    InertializeTransitionJob job;
    job.halflife = settings_.inertialization_halflife;
    job.rate_halflife = settings_.inertialization_rate_halflife;
    job.time_since_previous = ch.transition_time;
    job.source_rotations = slice(switch_rotations_, source, joints_);
    job.source_angular_velocities = slice(switch_angular_, source, joints_);
    job.source_translations = slice(switch_translations_, source, joints_);
    job.source_velocities = slice(switch_velocities_, source, joints_);
    job.destination_rotations = slice(switch_rotations_, destination, joints_);
    job.destination_angular_velocities = slice(switch_angular_, destination, joints_);
    job.destination_translations = slice(switch_translations_, destination, joints_);
    job.destination_velocities = slice(switch_velocities_, destination, joints_);
    job.offset_rotations = slice(offset_rotations_, c, joints_);
    job.offset_angular_velocities = slice(offset_angular_, c, joints_);
    job.offset_translations = slice(offset_translations_, c, joints_);
    job.offset_velocities = slice(offset_velocities_, c, joints_);
    job.unrotated_rates = settings_.unrotated_angular_offsets;
    const Span<glm::quat> previous = slice(reference_offsets_, worker, joints_);
    if (settings_.reference_arithmetic) {
      // The offsets decay in place: from the time last shown to now, then carried on.
      decayReferenceOffsets(c, dt_ - shownLead());
      job.time_since_previous = 0.f;
      std::copy_n(offset_rotations_.begin() + ptrdiff_t(c) * joints_, joints_, previous.begin());
    }
    // The job's checks hold by construction (halflives checked at create, the spans the crowd's).
    detail::runInertializeTransition(job, offset_vectors_.data() + size_t(c) * joints_);
    if (settings_.reference_arithmetic) {
      // The rotation offsets as the reference rounds them (its inertialize_transition, not
      // normalized), for its acos to see the same w.
      for (uint32_t j = 0; j < joints_; ++j)
        offset_rotations_[size_t(c) * joints_ + j] = detail::quatAbs(
            detail::referenceQuatMul(detail::referenceQuatMul(previous[j], job.source_rotations[j]),
                                     detail::referenceQuatInv(job.destination_rotations[j])));
    }
    // Bounds of the new offsets, from which offsetsShow() tells when they have decayed away.
    float bound_x = 0.f, bound_v = 0.f;
    for (uint32_t j = 0; j < joints_; ++j) {
      const size_t i = size_t(c) * joints_ + j;
      const float rotation = glm::length(offset_vectors_[i]);
      bound_x = std::fmax(bound_x, std::fmax(rotation, glm::length(offset_translations_[i])));
      bound_v = std::fmax(
          bound_v, std::fmax(glm::length(offset_angular_[i]), glm::length(offset_velocities_[i])));
    }
    ch.offset_bound_x = bound_x;
    ch.offset_bound_v = bound_v;
    ch.since_switch = 0.f;
    ch.transition_time = 0.f;
    decisions_[c].switched = true;
  }
  ch.playing = true;
  ch.clip = where->clip;
  ch.clip_time = where->time;
  ch.current_frame = uint32_t(found.frame);
  return Status();
}

// The sample and inertialize passes of one character: the shown frame and time, and unless the
// character is still to start, its pose sampled and its offsets added (at transition_time) into
// its local pose. Whether the speed limit weighs it.
bool Crowd::samplePose(uint32_t c) noexcept {
  CrowdCharacter& ch = characters_[c];
  const float time = shownClipTime(ch);
  {
    const ClipSpan& clip = clips_[ch.clip];
    const float key = std::floor(std::fmax(time * rate_, 0.f) + kClipTimeSnap);
    ch.shown_frame = clip.first_frame + uint32_t(std::min(key, float(clip.frame_count - 1)));
    ch.shown_time = std::fmin(std::fmax(time, 0.f), float(clip.frame_count - 1) / rate_);
  }
  // Until a character starts playing it shows the first frame of the first matchable range, still
  // (a pose a game can draw; the GPU's sample pass shows the same), or with no range no motion:
  // every joint at its root, unrotated (the local pose create() set).
  if (!ch.playing) {
    const Span<const MatchRange> ranges = db_->ranges();
    if (ranges.empty()) return false;
    const Result<ClipTime> waiting = clipTimeOfFrame(*db_, ranges[0].first_frame);
    if (!waiting) return false;  // the verifier puts every range in a clip
    SamplePoseJob still;
    still.database = db_;
    still.poses = poses_;
    still.clip = waiting->clip;
    still.time = waiting->time;
    still.rotations = slice(local_rotations_, c, joints_);
    still.translations = slice(local_translations_, c, joints_);
    detail::runSamplePose(still, clips_[waiting->clip].first_frame,
                          clips_[waiting->clip].frame_count);
    return false;
  }
  SamplePoseJob pose;
  pose.database = db_;
  pose.poses = poses_;
  pose.clip = ch.clip;
  pose.time = time;
  pose.rotations = slice(local_rotations_, c, joints_);
  pose.translations = slice(local_translations_, c, joints_);
  // The jobs' checks hold by construction (the database verified, the crowd's arrays and
  // settings checked at create, the clip one of the database's): only their work runs.
  detail::runSamplePose(pose, clips_[ch.clip].first_frame, clips_[ch.clip].frame_count);
  // reference_arithmetic: the offsets decay in place by the step (at a switch, from the switch
  // to the time shown).
  if (settings_.reference_arithmetic)
    decayReferenceOffsets(c, ch.transition_time == 0.f ? shownLead() : dt_);
  const bool offsets_show = offsetsShow(ch);
  if (offsets_show)
    (void)inertialize(c, ch.transition_time + shownLead(), slice(local_rotations_, c, joints_),
                      slice(local_translations_, c, joints_));
  return limitApplies(ch, offsets_show);
}

// Asks the caches for what the step reads of the database for up to four characters: the two
// keys of each one's clip time (rotations and translations), its contacts and its root-motion
// row. Each is at a random place in tens of MB, which a block's work would otherwise wait for:
// fetched one block ahead, it arrives while the block before it is worked on. A hint: it changes
// no result (a switch in the block may still change the clip; then the hint is wasted).
void Crowd::prefetchBlock(uint32_t first, uint32_t count) const noexcept {
  const PoseView view = poses_.frame_count ? poses_ : db_->rawPoses();
  const float rate = rate_;
  const RootFrame* root_motion = db_->rootMotion().data();
  const uint32_t* contacts = db_->contacts().data();
  const auto lines = [](const void* at, size_t bytes) {
    const char* p = static_cast<const char*>(at);
    for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
    __builtin_prefetch(p + bytes - 1);
  };
  for (uint32_t c = first; c < first + count; ++c) {
    const CrowdCharacter& ch = characters_[c];
    if (!ch.playing) continue;
    lines(root_motion + ch.current_frame, sizeof(RootFrame));
    const ClipSpan& clip = clips_[ch.clip];
    const float key = std::fmin(std::fmax(ch.clip_time * rate, 0.f), float(clip.frame_count - 1));
    const size_t row = size_t(clip.first_frame) + uint32_t(key) - view.first_frame;
    const size_t keys = uint32_t(key) + 1 < clip.frame_count ? 2 : 1;
    __builtin_prefetch(contacts + clip.first_frame + uint32_t(key));  // the foot locks'
    lines(view.rotations.data() + row * joints_, keys * joints_ * sizeof(Float4));
    lines(view.translations.data() + row * joints_, keys * joints_ * sizeof(Float4));
  }
}

// The pose shown by each of up to four characters: sampled, inertialized and FK'd (four at
// once). A transition the speed limit may hold back whose pose moved a joint too far is made
// again by limitTransition(), whose first try is the pose made here (the switch's own step
// shows the source exactly: nothing to limit).
Status Crowd::poseBlock(uint32_t first, uint32_t count, uint32_t worker) noexcept {
  bool limited[4] = {};
  ForwardKinematicsJob jobs[4];
  const Span<const int32_t> parents = db_->parents();
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t c = first + i;
    limited[i] = samplePose(c);
    jobs[i].parents = parents;
    jobs[i].local_rotations = slice(local_rotations_, c, joints_);
    jobs[i].local_translations = slice(local_translations_, c, joints_);
    jobs[i].model_rotations = slice(model_rotations_, c, joints_);
    jobs[i].model_translations = slice(model_translations_, c, joints_);
  }
  detail::runForwardKinematics4(
      jobs, count,
      fk_scratch_.data() + size_t(worker) * detail::forwardKinematics4ScratchFloats(joints_));
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t c = first + i;
    if (limited[i] && !(squaredStepRatio(c) <= 1.f)) {
      if (Status s = limitTransition(c, worker); !s) return s;
    } else {
      keepUnlocked(c);
    }
  }
  return Status();
}

// Whether the transition's offsets are still added: an upper bound over joints of the decaying
// offsets, x(t) = e^-yt (x0 + (v0 + y x0) t), and of their rate (the GPU's resolve pass computes
// the same) above inertialization_threshold (0: always). With the slower of the two half-lives it
// bounds the split decay too ((1 + s) e^-s falls as s grows).
bool Crowd::offsetsShow(const CrowdCharacter& ch) const noexcept {
  // reference_arithmetic decays the offsets in place: always added, as the reference adds them.
  if (!(settings_.inertialization_threshold > 0.f) || settings_.reference_arithmetic) return true;
  const float y = detail::springY(
      std::fmax(settings_.inertialization_halflife, settings_.inertialization_rate_halflife));
  const float t = ch.transition_time;
  const float j1 = ch.offset_bound_v + y * ch.offset_bound_x;
  const float bound =
      std::exp(-y * t) * std::fmax(ch.offset_bound_x + j1 * t, ch.offset_bound_v + j1 * y * t);
  return bound > settings_.inertialization_threshold;
}

// Whether the transition speed limit weighs this step of the character's transition: on, playing,
// the offsets still added (offsets_show: offsetsShow(), which the caller has) and some time for
// them to have decayed in.
bool Crowd::limitApplies(const CrowdCharacter& ch, bool offsets_show) const noexcept {
  return !unlocked_translations_.empty() && ch.playing && ch.transition_time > 0.f && dt_ > 0.f &&
         offsets_show;
}

// The model pose just made, before foot locking: what the limit compares the next step's with.
void Crowd::keepUnlocked(uint32_t c) noexcept {
  if (!unlocked_translations_.empty())
    std::copy_n(model_translations_.begin() + ptrdiff_t(c) * joints_, joints_,
                unlocked_translations_.begin() + ptrdiff_t(c) * joints_);
}

// The transition speed limit, on the clip and transition playing: the pose sampled at the clip
// time into the worker's scratch, its decay tried at the whole step, then at half, a quarter and
// none of it, until no joint moves further than its limit (failing all, the try that moved one
// the least). The pose is left shown and transition_time at the time kept.
Status Crowd::limitTransition(uint32_t c, uint32_t worker) noexcept {
  CrowdCharacter& ch = characters_[c];
  const Span<glm::quat> rotations = slice(switch_rotations_, 2 * size_t(worker), joints_);
  const Span<glm::vec3> translations = slice(switch_translations_, 2 * size_t(worker), joints_);
  SamplePoseJob pose;
  pose.database = db_;
  pose.poses = poses_;
  pose.clip = ch.clip;
  pose.time = shownClipTime(ch);
  pose.rotations = rotations;
  pose.translations = translations;
  detail::runSamplePose(pose, clips_[ch.clip].first_frame, clips_[ch.clip].frame_count);
  const float to = ch.transition_time + shownLead();
  const float from = std::fmax(to - dt_, 0.f);
  const float times[] = {to, from + 0.5f * (to - from), from + 0.25f * (to - from), from};
  float best_time = to, best_ratio = std::numeric_limits<float>::infinity(), time = to;
  for (const float t : times) {
    time = t;
    if (Status s = inertialize(c, t, rotations, translations); !s) return s;
    if (Status s = forwardKinematics(c); !s) return s;
    const float ratio = squaredStepRatio(c);
    if (ratio < best_ratio) {
      best_ratio = ratio;
      best_time = t;
    }
    if (ratio <= 1.f) break;
  }
  if (time != best_time) {  // the last try is not the one kept: pose that one again
    if (Status s = inertialize(c, best_time, rotations, translations); !s) return s;
    if (Status s = forwardKinematics(c); !s) return s;
  }
  ch.transition_time = best_time - shownLead();
  keepUnlocked(c);
  return Status();
}

// The clip time of the pose shown: the clock's, or with show_next_frame one step further on (at
// the rate the clip played the last step).
float Crowd::shownClipTime(const CrowdCharacter& ch) const noexcept {
  return settings_.show_next_frame ? advanceClipTime(ch.clip_time, dt_ * ch.play_rate, rate_)
                                   : ch.clip_time;
}

// reference_arithmetic: the offsets decayed in place by dt in one step of the reference's spring
// (decay_spring_damper in Holden's spring.h: its approximate exponential, the rotation through
// acos), as its inertializer decays them each frame.
void Crowd::decayReferenceOffsets(uint32_t c, float dt) noexcept {
  if (!(dt > 0.f)) return;
  const float y = detail::referenceSpringY(settings_.inertialization_halflife);
  const float e = detail::referenceNegExp(y * dt);
  for (uint32_t j = 0; j < joints_; ++j) {
    const size_t i = size_t(c) * joints_ + j;
    const glm::vec3 x0 = detail::referenceToScaledAxis(offset_rotations_[i]);
    const glm::vec3 j1 = offset_angular_[i] + x0 * y;
    offset_vectors_[i] = e * (x0 + j1 * dt);
    offset_rotations_[i] = detail::referenceFromScaledAxis(offset_vectors_[i]);
    offset_angular_[i] = e * (offset_angular_[i] - j1 * y * dt);
    const glm::vec3 k1 = offset_velocities_[i] + offset_translations_[i] * y;
    offset_translations_[i] = e * (offset_translations_[i] + k1 * dt);
    offset_velocities_[i] = e * (offset_velocities_[i] - k1 * y * dt);
  }
}

// The decayed offsets at `time` added to a sampled local pose, into the character's local pose.
Status Crowd::inertialize(uint32_t c, float time, Span<const glm::quat> rotations,
                          Span<const glm::vec3> translations) noexcept {
  if (settings_.reference_arithmetic) {
    // The offsets as decayed in place (the reference's inertialize_update: offset * pose).
    (void)time;
    const size_t base = size_t(c) * joints_;
    for (uint32_t j = 0; j < joints_; ++j) {
      local_rotations_[base + j] =
          detail::referenceQuatMul(offset_rotations_[base + j], rotations[j]);
      local_translations_[base + j] = translations[j] + offset_translations_[base + j];
    }
    return Status();
  }
  InertializeJob blend;
  blend.halflife = settings_.inertialization_halflife;
  blend.rate_halflife = settings_.inertialization_rate_halflife;
  blend.time_since_switch = time;
  blend.rotations = rotations;
  blend.translations = translations;
  blend.offset_rotations = slice(offset_rotations_, c, joints_);
  blend.offset_angular_velocities = slice(offset_angular_, c, joints_);
  blend.offset_translations = slice(offset_translations_, c, joints_);
  blend.offset_velocities = slice(offset_velocities_, c, joints_);
  blend.out_rotations = slice(local_rotations_, c, joints_);  // may be in place: allowed
  blend.out_translations = slice(local_translations_, c, joints_);
  detail::runInertialize(blend, offset_vectors_.data() + size_t(c) * joints_);
  return Status();
}

// The largest, over joints, of how far the model pose just computed moved from the last one shown
// (before foot locking) over that joint's limit in this step, squared.
float Crowd::squaredStepRatio(uint32_t c) const noexcept {
  const float per_frame = 1.f / (dt_ * rate_);
  const size_t base = size_t(c) * joints_;
  float ratio = 0.f;
  for (uint32_t j = 0; j < joints_; ++j) {
    const glm::vec3 moved = model_translations_[base + j] - unlocked_translations_[base + j];
    const float r = glm::dot(moved, moved) * joint_step_limits_[j];
    ratio = r > ratio ? r : ratio;  // std::fmax's result (a NaN r is passed over), inline
  }
  return ratio * per_frame * per_frame;
}

Status Crowd::forwardKinematics(uint32_t c) noexcept {
  ForwardKinematicsJob fk;
  fk.parents = db_->parents();
  fk.local_rotations = slice(local_rotations_, c, joints_);
  fk.local_translations = slice(local_translations_, c, joints_);
  fk.model_rotations = slice(model_rotations_, c, joints_);
  fk.model_translations = slice(model_translations_, c, joints_);
  detail::runForwardKinematics(fk);
  return Status();
}

// The end of the fk pass: the achieved path takes dt of the frame playing, the clock moves on.
void Crowd::advance(uint32_t c) noexcept {
  CrowdCharacter& ch = characters_[c];
  if (ch.playing) {
    const glm::vec3 position = ch.achieved_position;
    const glm::quat rotation = ch.achieved_rotation;
    // Play-rate matching: the clip plays faster or slower towards the controller's speed, its
    // root motion and clock alike, so its planted feet stay planted.
    const Float4 clip_velocity = db_->rootMotion()[ch.current_frame].velocity;
    ch.play_rate =
        playRate(settings_.synchronization,
                 glm::vec3(clip_velocity.x, clip_velocity.y, clip_velocity.z), ch.sim.velocity);
    const float clip_dt = dt_ * ch.play_rate;
    integrateRootMotion(*db_, ch.current_frame, clip_dt, ch.achieved_position,
                        ch.achieved_rotation);
    if (warpingOn(settings_.synchronization)) {
      // Warping: the step's root motion, in the character's frame, mapped onto the velocity the
      // controller wants (its own, plus the gap closing with the position half-life).
      const glm::quat to_model = glm::inverse(rotation);
      const glm::vec3 local = to_model * (ch.achieved_position - position);
      const glm::vec3 gap = ch.sim.position - position;
      const glm::vec3 wanted =
          ch.sim.velocity + glm::vec3(gap.x, 0.f, gap.z) *
                                (0.69314718056f / settings_.synchronization.position_halflife);
      stepGroundWarp(settings_.synchronization, dt_, local / dt_, to_model * wanted, ch.warp);
      ch.achieved_position = position + rotation * ch.warp.apply(local);
    } else {
      ch.warp = GroundWarp{};
    }
    ch.root_motion_world = ch.achieved_position - position;
    ch.root_motion_local = glm::inverse(rotation) * ch.root_motion_world;
    ch.root_motion_rotation = glm::normalize(ch.achieved_rotation * glm::inverse(rotation));
    synchronize(c);
    const ClipSpan& clip = clips_[ch.clip];
    ch.clip_time = advanceClipTime(ch.clip_time, clip_dt, rate_);
    // In float, as the GPU's fk pass computes it, so both play the same frame at a key's edge.
    const float key = std::floor(ch.clip_time * rate_ + kClipTimeSnap);
    ch.current_frame = clip.first_frame + uint32_t(std::min(key, float(clip.frame_count - 1)));
  }
  ch.since_switch += dt_;
  ch.transition_time += dt_;
  ch.search_timer -= 1;
  ch.search_clock -= dt_;
}

// After the root motion of the step: one of the character and its simulation root follows the
// other (CrowdSettings::synchronization). The locks of the last step's foot locking and the
// animated toes (the model pose before this step's foot locking) keep the adjustment from
// tearing a planted foot loose.
void Crowd::synchronize(uint32_t c) noexcept {
  CrowdCharacter& ch = characters_[c];
  ch.adjustment_world = glm::vec3(0.f);
  ch.adjustment_angle = 0.f;
  const SynchronizationSettings& sync = settings_.synchronization;
  if (sync.mode == Synchronization::ControllerFollows) {
    ch.sim.position = ch.achieved_position;
    ch.sim.rotation = ch.achieved_rotation;
    return;
  }
  if (sync.mode != Synchronization::CharacterFollows) return;
  AdjustmentJob job;
  job.settings = sync;
  job.dt = dt_;
  job.root_motion = ch.root_motion_world;
  job.root_turn = yawAngle(ch.root_motion_rotation);
  job.sim_position = ch.sim.position;
  job.sim_rotation = ch.sim.rotation;
  if (settings_.foot_locking) {
    for (uint32_t leg = 0; leg < kLegCount; ++leg) {
      const FootLock& foot = feet_[size_t(c) * kLegCount + leg];
      if (!foot.locked) continue;
      job.locked_legs |= 1u << leg;
      job.locks[leg] = foot.position;
      job.toes[leg] = ch.warp.apply(model_translations_[size_t(c) * joints_ + legs_[leg].toe]);
    }
  }
  job.position = ch.achieved_position;
  job.rotation = ch.achieved_rotation;
  job.Run();
  ch.achieved_position = job.position;
  ch.achieved_rotation = job.rotation;
  ch.adjustment_world = job.moved;
  ch.adjustment_angle = job.turned;
}

// The foot lock step of up to four characters, together: after advance(), so that the locks live
// where the achieved transform of after the step puts the pose shown.
void Crowd::lockFeet(uint32_t first, uint32_t count) noexcept {
  FootLockJob jobs[4];
  size_t playing = 0;
  const Span<const int32_t> parents = db_->parents();
  const Span<const uint32_t> contacts = db_->contacts();
  for (uint32_t c = first; c < first + count; ++c) {
    const CrowdCharacter& ch = characters_[c];
    const Span<FootLock> feet = slice(feet_, c, kLegCount);
    if (!ch.playing) {  // nothing shown yet: nothing held
      for (FootLock& f : feet) f = FootLock{};
      continue;
    }
    FootLockJob& job = jobs[playing++];
    job.parents = parents;
    job.legs = Span<const LegChain>(legs_.data(), legs_.size());
    job.settings = foot_settings_;
    job.contacts = contacts[ch.shown_frame];
    job.position = ch.achieved_position;
    job.rotation = ch.achieved_rotation;
    job.dt = dt_;
    job.warp = ch.warp;
    job.feet = feet;
    job.local_rotations = slice(local_rotations_, c, joints_);
    job.local_translations = slice(local_translations_, c, joints_);
    job.model_rotations = slice(model_rotations_, c, joints_);
    job.model_translations = slice(model_translations_, c, joints_);
  }
  if (playing > 0) detail::runFootLock4(jobs, playing);
}

}  // namespace mmdb
