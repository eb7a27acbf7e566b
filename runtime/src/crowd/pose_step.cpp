// The pose of each character in a crowd's step, in the order of the GPU crowd's passes after the
// match: resolve, sample, inertialize, forward kinematics, root motion, synchronization and
// foot locking; made of the runtime's own functions and jobs.
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

using detail::slice;

}  // namespace

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
    // reference_arithmetic: the worker's room for the previous rotation offsets (empty else).
    const Span<glm::quat> previous = settings_.reference_arithmetic
                                         ? slice(reference_offsets_, worker, joints_)
                                         : Span<glm::quat>();
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
