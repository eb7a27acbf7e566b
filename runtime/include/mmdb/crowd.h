// The character step on the CPU, for a crowd: the twin of mmdb::gpu::Crowd (mmdb/gpu/crowd.h),
// with the same settings, the same step order and the same decisions. One step is
//
//   1 controller   updateCharacter(dt) towards the character's stick
//   2 decide       search when nothing plays yet (Start, unseeded), at the last frame of a
//                  matchable range or clip (RangeEnd, unseeded), when forced (Forced, seeded with
//                  the frame playing), or when the search timer ran out (Periodic, seeded); the
//                  query is predictTrajectory() seen from the achieved path
//                  (expressInCharacterFrame()) put into buildQuery()
//   3 match        every searching character's request in one searchBatch(): one pass over the
//                  database for all of them (searchExhaustive() one by one without pruning)
//   4 resolve      the timer restarts; on a new winner an InertializeTransitionJob and a jump
//                  to the winner's clip time
//   5 sample       SamplePoseJob at the clip time
//   6 inertialize  InertializeJob: the captured offsets, decayed by the time since the switch
//   7 fk           ForwardKinematicsJob to model space; the achieved path takes dt of the playing
//                  frame's root motion, then the synchronization (mmdb/synchronization.h): the
//                  character adjusted towards the simulation root, or the root put on the
//                  character; the clip time and the time since the switch move on by dt, the
//                  timer by one step
//   8 foot lock    FootLockJob (foot_locking): toes whose contact starts are held where they are
//                  in the world (placed by the achieved transform after the step), the legs bent
//                  to them by two-bone IK, until the contact ends or the toe strays past
//                  foot_unlock_radius; then they blend back to the animation
//
// Typical use:
//
//   auto crowd = mmdb::Crowd::create(db, 250);
//   each frame:  crowd->setStick(i, x, z) ...;  crowd->step(dt);
//                crowd->modelRotations(), crowd->modelTranslations(): the poses to draw, in
//                model space; world = achieved_position + achieved_rotation * model, with the
//                characters() after the step
//
// step() is beginStep(), search() and endStep(); a caller that times or explains the searches,
// or answers the requests itself (searchBatchRange() on a job system), calls the three.
//
// Errors are values: InvalidArgument for a character index, a setting or a dt that does not fit;
// nothing thrown. Everything is allocated by create(); a step allocates nothing. A Crowd is used
// from one thread; the Database it was created from must outlive it and stay where it is.
#pragma once

#include "mmdb/controller.h"
#include "mmdb/database.h"
#include "mmdb/playback.h"
#include "mmdb/result.h"
#include "mmdb/search.h"
#include "mmdb/span.h"
#include "mmdb/synchronization.h"

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace mmdb {

// Why a character searched, in order of precedence. The GPU crowd reports the same values
// (mmdb::gpu::SearchReason is this type).
enum class SearchReason : uint32_t {
  None = 0,      // did not search this step
  Start = 1,     // nothing playing yet: unseeded
  RangeEnd = 2,  // at the last frame of a matchable range or clip: unseeded, must move
  Forced = 3,    // the host asked (forceSearch), or the stick settled after a sharp change
                 // (CrowdSettings::search_when_settled): seeded with the frame playing
  Periodic = 4,  // the search timer ran out: seeded
};

// Decision::frame when a search found nothing (an unseeded search whose filter passes no range).
inline constexpr uint32_t kNoFrame = 0xFFFFFFFFu;

// What a character decided in the last step (mmdb::gpu::Decision is this type).
struct Decision {
  SearchReason reason = SearchReason::None;  // None: did not search this step
  bool switched = false;                     // started an inertialized transition to `frame`
  uint32_t frame = 0;      // the last search's winner (global), kNoFrame when it found none
  float cost = 0;          // its cost
  uint32_t playing = 0;    // global frame playing after the step
  bool continued = false;  // the winner was the playing clip a little ahead: playback went on
                           // without a switch (CrowdSettings::continue_window)
  bool held = false;       // the winner was refused by the jump cooldown (CrowdSettings::
                           // jump_cooldown): playback went on
};

// The settings of mmdb::gpu::CrowdSettings that decide and play, with the same names and
// defaults, so that both crowds created with the same values make the same decisions.
struct CrowdSettings {
  uint32_t search_interval_ticks = 6;  // steps between periodic searches (0.1 s at 60 steps/s);
                                       // whole steps, so no float timer drifts past one
  uint32_t stagger_phases = 6;  // character c's first periodic search comes (c % n) / n of an
                                // interval late (whole steps), spreading the searches (0: off)
  uint32_t start_stagger_intervals = 2;  // k > 0: character c's Start search waits
                                         // startDelayTicks() steps, so a crowd created at once
                                         // starts over k intervals instead of all in its first
                                         // step; a character shows the first frame of the first
                                         // range, still, until its own start (docs/runtime.md
                                         // "Staggered starts"). 0: every
                                         // character starts in the first step. At most 16
  float transition_cost = kDefaultTransitionCost;        // added to every candidate but the frame
                                                         // playing: a switch must win by this much
  int32_t neighbourhood_frames = kDefaultNeighbourhood;  // frames around the playing one a
                                                         // seeded search skips; negative: 1/3 s
                                                         // at the file's rate
  float max_drift = 0.5f;  // m: the query's trajectory starts from the character's achieved path
                           // and closes at most this much of its gap to the controller
  // A switch's offsets decay apart (decayOffsetSplit): the offset of the pose with
  // inertialization_halflife, the rate it starts with (the source's motion carried on) with
  // inertialization_rate_halflife. The slower offset slows how fast a large pose change swings
  // the joints; the quicker rate keeps a fast source from carrying on past the pose
  // (docs/runtime.md "Playback jobs"). reference() decays both with Holden's 0.1 s.
  float inertialization_halflife = 0.15f;
  float inertialization_rate_halflife = kDefaultInertializationHalflife;
  float inertialization_threshold = 1e-5f;  // rad, m: once a bound of the decaying offsets is at
                                            // or below this, they are no longer added (the
                                            // GPU's skip; 0: always added)
  // While a transition decays, no joint of the pose (before foot locking) moves further in a step
  // than this multiple of its own fastest move between two frames of the clips (clipJointSteps(),
  // at least 0.5 mm a frame, scaled by dt times the frame rate): where the decay would move one
  // further, the transition's clock (CrowdCharacter::transition_time) goes on by half, a quarter
  // or none of the step instead, the first that keeps within (docs/runtime.md "Transition speed
  // limit"). 0: off, as in reference()
  float transition_speed_limit = 1.4f;
  float controller_halflife = 0.27f;  // position and rotation springs (Holden's default)
  float max_speed = 1.75f;            // m/s at full stick (setStick)
  bool bounds_pruning = true;  // searchBatch() (bounds-pruned); false: searchExhaustive() for
                               // each request. Same winners, same costs
  uint32_t step_workers = 1;   // searchRange() and endStepRange() calls that may run at once (a
                               // job system's threads), each with its own scratch; CPU crowd only

  // Playability policies (docs/runtime.md "Playability policies"). The defaults are what a game
  // wants; reference() turns every one off.
  float continue_window = 0.2f;  // s: a winner in the clip playing, at most this far ahead of the
                                 // frame playing, is played on to rather than jumped to (0: off)
  float jump_cooldown = 0.25f;   // s after a switch in which periodic and forced searches wait
                                 // (a forced one is kept until then); starts and range ends
                                 // search at once (0: off)
  bool search_when_settled = true;      // search once the stick settles after a sharp change:
  float settle_velocity_change = 50.f;  // m/s^2: the desired velocity changing faster, or
  float settle_rotation_change = 50.f;  // rad/s: the desired facing turning faster, is sharp
  float range_end_margin = 0.25f;  // s: the last this much of every range is no candidate, so a
                                   // winner plays at least this long before its range ends and
                                   // forces another switch (SearchRequest::range_end_margin, in
                                   // frames as continue_window; 0: off)
  bool range_end_moves_on = true;  // a range end's search skips the frames around the playing
                                   // one (neighbourhood_frames) as a seeded search does, so it
                                   // never picks the frame playing or one just behind it

  // The reference controller's rules (docs/runtime.md "Reference mode"), each off by default:
  bool start_playing = false;  // every character plays the first frame of the first range from
                               // creation and first searches when its periodic timer runs out
                               // (instead of a Start search at its first step)
  float search_interval_seconds = 0.f;  // s, > 0: the periodic timer counts this down in float
                                        // steps of dt and searches once it is at or below 0
                                        // (0.1 s: every 7th step at 60 steps/s, float's
                                        // remainder), instead of search_interval_ticks. 0: ticks
  float settle_search_interval = 0.f;   // s, > 0: a search on the stick settling comes at most
                                        // once per this long, the first this long after
                                        // creation (a float timer, as the periodic one). 0: any
  bool search_at_clip_end = false;      // the search that must move comes at the last frame of a
                                        // clip, not of a matchable range: the frames past a range's
                                        // end play on to the clip's end
  // The cook's "mirrored" tag enters and leaves Playing::tags_entered and tags_left at every
  // switch between a clip and its mirror; off (the default), its bit is left out of both
  // (Playing::tags keeps it).
  bool mirrored_tag_events = false;
  bool unrotated_angular_offsets = false;  // a switch's angular-velocity offsets are the rates
                                           // subtracted as they are (the reference's), not the
                                           // shown angular velocity kept
  // The query's trajectory is predicted from the simulation root as it was before this step's
  // update (the reference's order: it predicts, searches, then moves its simulation), not after.
  bool predict_before_update = false;
  // The pose shown is sampled one step ahead on the clip's clock, its transition's offsets one
  // step further decayed (the reference moves its frame on before it samples): after a switch the
  // winner's next frame shows, as the reference's does. Playing, decisions and the root are as
  // without it.
  bool show_next_frame = false;
  // The springs in the reference's arithmetic (ControllerSettings::reference_arithmetic) for the
  // controller and the trajectory, and a switch's offsets decayed step by step with it (the
  // reference's inertializer: one spring with inertialization_halflife, the rate half-life
  // unused). Off: the exact springs, decayed in closed form.
  bool reference_arithmetic = false;

  // Foot locking (FootLockJob, docs/runtime.md "The CPU crowd"): a toe whose contact starts is
  // held where it is in the world, the leg bent to it by two-bone IK, until its contact ends or
  // the animated toe strays further than foot_unlock_radius; then it blends back. Needs the
  // skeleton's two legs (findLegChains()); off, the pose is the animation's.
  bool foot_locking = true;
  float foot_unlock_radius = kDefaultFootUnlockRadius;      // m
  float foot_unlock_halflife = kDefaultFootUnlockHalflife;  // s: the blend back after a lock
  float ik_foot_height = kDefaultIkFootHeight;  // m: a held toe and the tip of its toes stay at
                                                // least this high above the ground (y = 0)
  float ik_toe_length = kDefaultIkToeLength;    // m: from the toe joint to the tip of the toes
  float ik_max_length_buffer = kDefaultIkMaxLengthBuffer;  // m: a leg reaches at most its length
                                                           // less this, never snapping straight

  // Where the character goes against its controller (mmdb/synchronization.h): by default it
  // follows the controller, adjusted towards the simulation root with its planted feet held;
  // reference() keeps Synchronization::None.
  SynchronizationSettings synchronization;

  // Every policy off, no foot locking and every start in the first step: the decisions and poses
  // of this crowd before it had policies (the search's winners are Holden's reference's for the
  // same query; its decisions are not: referenceController()).
  static CrowdSettings reference() noexcept;
  // reference() and the reference controller's own rules (start_playing,
  // search_interval_seconds 0.1 s, search_when_settled with settle_search_interval 0.1 s,
  // search_at_clip_end, unrotated_angular_offsets, predict_before_update, show_next_frame,
  // reference_arithmetic): docs/runtime.md "Reference mode" says which of its rules it reproduces.
  static CrowdSettings referenceController() noexcept;
};

// The bit of the tag the cook gives mirrored clips ("mirrored"), 0 when the file has none:
// CrowdSettings::mirrored_tag_events leaves it out of the tag events.
uint64_t mirroredTagMask(const Database& db) noexcept;

// What both crowds derive from the policy settings, computed alike so that they decide alike.
// A step's input changes sharply when |desired velocity - last| > velocity_change * dt, compared
// squared, or when the desired facing turns by more than rotation_change * dt, compared as a
// cosine (cos_limit -2 when that angle is half a turn or more: never).
struct SettleLimits {
  float velocity_squared = 0;
  float cos_limit = -2;
};
SettleLimits settleLimits(float velocity_change, float rotation_change, float dt) noexcept;
// How many steps character c's first periodic search comes after an interval
// (CrowdSettings::stagger_phases): interval * (c % phases) / phases, 0 with phases of 0 or 1.
uint32_t staggerTicks(uint32_t character, uint32_t interval, uint32_t phases) noexcept;
// With CrowdSettings::start_stagger_intervals = k > 0, how many steps after the crowd's creation
// character c's Start search comes: staggerTicks() plus interval * ((c / phases) % k) (phases of
// 0 or 1 count as 1), whole intervals, so its periodic searches then come at the steps they would
// without the delay (a multiple of the interval later). 0 with k = 0. With phases of 0 or 1 the
// starts spread by whole intervals only: k = 1 then delays nothing.
uint32_t startDelayTicks(uint32_t character, uint32_t interval, uint32_t phases,
                         uint32_t intervals) noexcept;
// Both crowds' check of start_stagger_intervals: at most 16, and its delays (interval * intervals)
// within 2^30 steps. InvalidArgument naming the setting (prefixed with `what`) otherwise.
Status checkStartStagger(const char* what, uint32_t interval, uint32_t intervals) noexcept;
// Both crowds' check of reference_arithmetic: it decays the offsets in place, so it takes no
// transition_speed_limit above 0. InvalidArgument naming both (prefixed with `what`) otherwise.
Status checkReferenceArithmetic(const char* what, bool reference_arithmetic,
                                float transition_speed_limit) noexcept;
// continue_window (or range_end_margin) in whole frames at the file's rate: floor(window * rate +
// 1e-4), at most 2^31 - 128.
uint32_t continueFrames(float continue_window, float frame_rate) noexcept;
// The checks of a teleport or a placement, as both crowds make them (Crowd::teleport, place):
// `character`'s position must be finite, each coordinate at most kMaxCrowdCoordinate in size,
// and its rotation have a turn about +Y to take, which goes into `yaw` (normalized; any scale of
// the rotation, the largest component divided out first). InvalidArgument naming the call
// (`what`), the character and the value otherwise.
Status checkPlacement(const char* what, uint32_t character, const glm::vec3& position,
                      const glm::quat& rotation, glm::quat& yaw) noexcept;
// The limits of what both crowds take where it enters (create, the setters, a step's dt): within
// them a step's arithmetic stays finite for any settings the crowds accept (docs/runtime.md
// "Errors and allocation"). A value beyond them is refused with InvalidArgument naming the call,
// the character and the value.
inline constexpr float kMaxCrowdSpeed = 1e4f;   // m/s: a desired velocity (setInput), max_speed (in
                                                // size), a simulation root's velocity
inline constexpr float kMaxCrowdFacing = 1e4f;  // each component of a desired facing
inline constexpr float kMaxCrowdAcceleration = 1e8f;     // m/s^2: a simulation root's
inline constexpr float kMaxCrowdAngularVelocity = 1e5f;  // rad/s: a simulation root's
inline constexpr float kMaxCrowdCoordinate = 1e7f;       // m: each coordinate of a position
inline constexpr float kMaxCrowdDt = 10.f;               // s: a step's dt
inline constexpr float kMinControllerHalflife = 1e-3f;   // s: CrowdSettings::controller_halflife
inline constexpr float kMaxControllerHalflife = 1e3f;    // s
inline constexpr float kMaxStickLength = 2.f;   // a stick up to this long is clamped to length 1
                                                // (a square gate's diagonal); longer is refused
inline constexpr float kMaxBlockWeight = 1e6f;  // a run-time block weight (setBlockWeights)
// The most characters one crowd holds (either crowd's create; its buffers grow with the count).
inline constexpr uint32_t kMaxCrowdCharacters = 1000000;

// The checks of those limits, as both crowds make them; `what` names the call.
// dt finite, 0 to kMaxCrowdDt.
Status checkCrowdDt(const char* what, float dt) noexcept;
// A stick: finite, at most kMaxStickLength long; one longer than 1 is scaled to length 1.
Status checkStick(const char* what, uint32_t character, float& x, float& z) noexcept;
// A desired velocity (x, z) at most kMaxCrowdSpeed long, a facing's x and z at most
// kMaxCrowdFacing in size, all finite (y is ignored).
Status checkStickInput(const char* what, uint32_t character, const glm::vec3& velocity,
                       const glm::vec3& facing) noexcept;
// A simulation root: checkPlacement()'s position and rotation (the yaw into `yaw`), a velocity,
// acceleration and angular velocity within kMaxCrowdSpeed, kMaxCrowdAcceleration and
// kMaxCrowdAngularVelocity (lengths).
Status checkSimulation(const char* what, uint32_t character, const CharacterState& state,
                       glm::quat& yaw) noexcept;
// max_speed at most kMaxCrowdSpeed in size, controller_halflife kMinControllerHalflife to
// kMaxControllerHalflife, character_count 1 to kMaxCrowdCharacters.
Status checkCrowdSize(const char* what, uint32_t character_count) noexcept;
Status checkControllerSettings(const char* what, float max_speed,
                               float controller_halflife) noexcept;
// Whether ground directions a and b (not zero) are more than acos(cos_limit) apart.
bool turnedSharply(const glm::vec3& a, const glm::vec3& b, float cos_limit) noexcept;

// One character's state between steps (the CPU's mmdb::gpu::CrowdCharacter).
struct CrowdCharacter {
  CharacterState sim;                // the controller's simulation root
  glm::vec3 achieved_position{0.f};  // where the root motion of the frames played took it
  glm::quat achieved_rotation{1.f, 0.f, 0.f, 0.f};  // ... and its facing; the query is built
                                                    // from here
  bool playing = false;                             // a first search has picked a frame
  uint32_t clip = 0;                                // clip playing
  float clip_time = 0;         // clip-local seconds playing (moved on by advanceClipTime)
  uint32_t current_frame = 0;  // global frame playing: first + floor(clip_time * rate + 1e-3)
  int32_t search_timer = 0;    // steps until the next periodic search (due at 0 or below)
  float since_switch = 1e6f;   // seconds since the last switch
  // Seconds the last switch's offsets have decayed for: since_switch less what the transition
  // speed limit held back.
  float transition_time = 1e6f;
  float offset_bound_x = 0;       // max |offset| over joints at the switch (rad or m), as the GPU's
  float offset_bound_v = 0;       // max |offset rate| over joints at the switch
  uint32_t last_winner = 0;       // global frame the last search returned (kNoFrame: none)
  float last_cost = 0;            // its cost
  uint32_t search_count = 0;      // searches since creation
  glm::vec3 input_velocity{0.f};  // the desired velocity of the last step (ground)
  glm::vec3 input_facing{0.f, 0.f, 1.f};  // the last desired facing that was not zero (ground)
  bool input_changing = false;            // the input changed sharply in the last step
  uint32_t shown_frame = 0;  // global frame of the pose shown after the last step (the key at
                             // or below the clip time it was sampled at, within
                             // kClipTimeSnap): its contacts are the shown pose's
  float shown_time = 0;      // clip-local seconds the pose shown was sampled at (clamped into
                             // its clip, as SamplePoseJob clamps it)
  // The root motion of the last step: how far the achieved transform moved, in the world and in
  // the character's frame before the step (local = inverse(rotation before) * world), and how it
  // turned (achieved_rotation after = root_motion_rotation * before). Zero when nothing played.
  glm::vec3 root_motion_world{0.f};
  glm::vec3 root_motion_local{0.f};
  glm::quat root_motion_rotation{1.f, 0.f, 0.f, 0.f};
  // The synchronization of the last step (Synchronization::CharacterFollows): how far the
  // adjustment towards the simulation root moved the achieved transform after the root motion,
  // in the world, and how far it turned it about +Y (rad). Zero in the other modes.
  glm::vec3 adjustment_world{0.f};
  float adjustment_angle = 0;
  // The rate the clip played at in the last step (SynchronizationSettings::rate_min, rate_max):
  // its clock and root motion took dt times this.
  float play_rate = 1;
  // The float timers of CrowdSettings::search_interval_seconds and settle_search_interval: s
  // until the next periodic search, and until a settled stick may force one.
  float search_clock = 0;
  float settle_clock = 0;
  // Warping (SynchronizationSettings::stride_min ...): the ground-plane map of the root motion
  // and the feet, eased step by step; identity when off.
  GroundWarp warp;
};

// What a character shows after the last step, for gameplay, sound and effects (Crowd::playing):
// the clip and frame of the pose shown, the matchable range holding it and its tags, its contacts
// and the feet held, what changed in the step. The pose shown is the one sampled before the step
// moved the clip time on (CrowdCharacter::current_frame is already past it).
struct Playing {
  bool playing = false;        // a first search has picked a frame (before it, the pose shows no
                               // motion and the rest is zero)
  uint32_t clip = 0;           // clip of the pose shown
  uint32_t frame = 0;          // its global frame: the key at or below the time it was sampled
                               // at (within kClipTimeSnap, as shown_frame)
  uint32_t clip_frame = 0;     // the same counted from the clip's first frame
  float clip_time = 0;         // clip-local seconds it was sampled at
  int32_t range = -1;          // the matchable range holding `frame` (Database::ranges()), -1 in
                               // none (an excluded part, a clip's unmatchable end)
  uint64_t tags = 0;           // that range's tags; in no range, the clip's own (bit i =
                               // Database::tagName(i))
  uint64_t tags_entered = 0;   // bits of `tags` the last step's pose did not have
  uint64_t tags_left = 0;      // bits the last step's pose had and this one has not
  uint32_t contacts = 0;       // contact bits of `frame` (Database::contacts(): bit i is
                               // contactJoints()[i])
  uint32_t locked_feet = 0;    // bit per leg (0 left, 1 right): foot locking holds its toe
  uint32_t blending_feet = 0;  // bit per leg: let go, blending back to the animation
  Decision decision;           // the step's search, switch and winner (decisions()[character])
};

// Every frame of a database's pose streams in memory the object owns, decoded once, for any
// number of crowds to play: pass view() to each Crowd::create (a crowd given no view of a coded
// file decodes one of its own, the same size). For a file whose streams are raw, view() is the
// file's own and nothing is held. The Database must outlive it; moving it keeps view() valid.
class DecodedPoses {
 public:
  // The decoder's error when a coded segment does not decode; InvalidArgument when the
  // database is not open or memory runs out.
  static Result<DecodedPoses> decode(const Database& db) noexcept;

  DecodedPoses() = default;
  DecodedPoses(DecodedPoses&&) noexcept = default;  // the buffers move, view() stays valid
  DecodedPoses& operator=(DecodedPoses&&) noexcept = default;
  DecodedPoses(const DecodedPoses&) = delete;  // a copy's view would point at the original
  DecodedPoses& operator=(const DecodedPoses&) = delete;
  const PoseView& view() const noexcept { return view_; }
  // Bytes held: frameCount() * jointCount() * 16 per coded stream (0 for a raw file).
  size_t bytes() const noexcept;

 private:
  std::vector<Float4> streams_[kPoseStreamCount];
  PoseView view_;
};

// Each joint's largest move in model space between two consecutive frames of any clip of `db`, in
// metres (forward kinematics from the clips' local poses): the speed the clips themselves reach,
// which the transition speed limit and the motion measures compare with. `poses` holds every
// frame (Crowd::poses(), DecodedPoses::view()); left empty, the file's raw streams are read, or
// coded ones decoded a few hundred frames at a time. The decoder's error for a coded segment that
// does not decode; InvalidArgument for a database that is not open, a view that does not hold
// every frame, or memory that runs out.
Result<std::vector<float>> clipJointSteps(const Database& db, const PoseView& poses = {}) noexcept;
// The floor of a joint's clip step where a limit or a ratio is taken from it (m a frame), so that
// a joint the clips never move divides by no zero.
inline constexpr float kMinJointStep = 0.0005f;
// What both crowds keep of the transition speed limit per joint: 1 / (limit * max(step,
// kMinJointStep))^2, from clipJointSteps(); all 0 for a limit of 0 (off).
std::vector<float> transitionStepLimits(Span<const float> clip_joint_steps, float limit);

namespace detail {

// Everything a Crowd holds, in one struct so that moving a crowd moves every member (the
// defaulted move) and empties the one moved from (a default-constructed state): nothing to list
// by hand.
struct CrowdState {
  const Database* db_ = nullptr;
  float rate_ = 0;  // db_->frameRate(), read every step
  CrowdSettings settings_;
  ControllerSettings controller_;
  PoseView poses_;
  uint32_t count_ = 0;
  uint32_t joints_ = 0;
  uint32_t features_ = 0;
  // Beginning: between prepareStep() and finishBeginStep().
  enum class Phase : uint8_t { Idle, Beginning, Begun } phase_ = Phase::Idle;
  float dt_ = 0;
  size_t searches_ = 0;              // requests this step
  uint32_t continue_frames_ = 0;     // continue_window in frames of the file
  uint32_t range_end_frames_ = 0;    // range_end_margin in frames of the file
  float settle_velocity_limit_ = 0;  // (settle_velocity_change * dt)^2 for this step
  float settle_cos_limit_ = -2;      // cos(settle_rotation_change * dt) for this step

  std::vector<uint8_t> must_move_;  // per frame: the last of a matchable range or of a clip
  // Per clip, what each step reads of its ClipInfo (Database::clip() reads the file's table,
  // field by field).
  struct ClipSpan {
    uint32_t first_frame = 0, frame_count = 0;
    uint64_t tag_mask = 0;
  };
  std::vector<ClipSpan> clips_;
  std::vector<CrowdCharacter> characters_;
  std::vector<StickInput> inputs_;
  std::vector<TagFilter> filters_;
  uint32_t blocks_ = 0;               // featureBlockCount()
  std::vector<float> block_weights_;  // blocks_ per character
  std::vector<uint8_t> weighted_;     // per character: block_weights_ are set
  std::vector<uint8_t> forced_;
  std::vector<Decision> decisions_;
  std::vector<float> queries_;  // featureCount() per character
  std::vector<SearchRequest> requests_;
  std::vector<SearchResult> results_;
  std::vector<uint32_t> searching_;
  std::vector<float> batch_scratch_;  // searchBatch()'s seeds and group bounds, per worker
  std::vector<glm::quat> local_rotations_, model_rotations_, offset_rotations_;
  std::vector<glm::vec3> local_translations_, model_translations_;
  std::vector<glm::vec3> offset_angular_, offset_translations_, offset_velocities_;
  std::vector<glm::vec3> offset_vectors_;     // offset_rotations_ as rotation vectors (at a switch)
  std::vector<glm::quat> reference_offsets_;  // reference_arithmetic: a switch's previous rotation
                                              // offsets, per worker
  // The transition speed limit: per joint 1 / (the most it may move in a frame, m)^2, and per
  // character and joint where the last pose shown was before foot locking (model space).
  std::vector<float> joint_step_limits_;
  std::vector<glm::vec3> unlocked_translations_;
  // Two poses sampled at a switch (source, destination): rotations, translations, velocities
  // and angular velocities of jointCount() joints each.
  std::vector<glm::quat> switch_rotations_;
  std::vector<glm::vec3> switch_translations_, switch_velocities_, switch_angular_;
  // Per worker: the forward kinematics of four characters at once, a lane each.
  std::vector<float> fk_scratch_;
  // Per character: beginStepRange() has decided it, or endStepRange() has played it, in this
  // step (claimed atomically, so that overlapping ranges on two threads are told apart; all 0
  // again once the step's part is finished).
  std::unique_ptr<std::atomic<uint8_t>[]> claimed_;
  // Per request slot: searchRange() has answered it in this step; the element past the last
  // (count_): endStepRange() has begun, after which no search is taken. All 0 at each step's
  // start.
  std::unique_ptr<std::atomic<uint8_t>[]> searched_;
  DecodedPoses decoded_;  // a coded file's poses, when the crowd decodes them itself
  std::array<LegChain, kLegCount> legs_{};  // with foot_locking
  FootLockSettings foot_settings_;
  std::vector<FootLock> feet_;  // kLegCount per character
  // Per character, of the pose shown: the range holding it (-1: none) and its tags, and the
  // tags gained and lost in the last step.
  struct Shown {
    int32_t range = -1;
    uint64_t tags = 0, entered = 0, left = 0;
  };
  std::vector<Shown> shown_;
  uint64_t event_tags_ = ~0ull;  // the tags whose changes are events (mirrored_tag_events)
};

}  // namespace detail

class Crowd : private detail::CrowdState {
 public:
  // A crowd of `character_count` characters playing `db`. Characters start at the origin facing
  // +Z with nothing playing, so their first step searches (SearchReason::Start). `poses` holds
  // every frame of the pose streams (Database::decodePoses()); left empty, the file's own streams
  // are read, or, when the file codes them, decoded once here into memory the crowd owns.
  // InvalidArgument for no characters or more than kMaxCrowdCharacters, a database without
  // 6-wide trajectory blocks, a negative or non-finite max_drift, transition cost or half-life, a
  // max_speed beyond kMaxCrowdSpeed, a controller_halflife outside kMinControllerHalflife to
  // kMaxControllerHalflife (checkControllerSettings()), a search interval over 2^30 steps, a
  // foot-locking setting that is negative or not finite (named), with foot_locking a skeleton
  // without two legs to bend (findLegChains()'s message, naming the leg, role and joint), a
  // `poses` that does not hold every frame; the decoder's error when decoding fails.
  static Result<Crowd> create(const Database& db, uint32_t character_count,
                              const CrowdSettings& settings = {},
                              const PoseView& poses = {}) noexcept;

  Crowd() = default;  // empty: no characters; create() makes a usable one
  Crowd(Crowd&& other) noexcept { *this = std::move(other); }
  Crowd& operator=(Crowd&& other) noexcept;  // leaves `other` empty
  Crowd(const Crowd&) = delete;
  Crowd& operator=(const Crowd&) = delete;

  uint32_t characterCount() const noexcept { return count_; }
  uint32_t jointCount() const noexcept { return joints_; }
  const CrowdSettings& settings() const noexcept { return settings_; }
  const Database& database() const noexcept { return *db_; }  // create()'s; not for an empty one
  // Every frame of the pose streams the crowd plays (the file's, create()'s, or decoded).
  const PoseView& poses() const noexcept { return poses_; }
  // Bytes of decoded poses the crowd holds itself: 0 when it plays a view it was given (a
  // DecodedPoses shared by several crowds) or a raw file's own streams.
  size_t ownedPoseBytes() const noexcept { return decoded_.bytes(); }

  // Inputs of the next step, kept until changed (forceSearch: one step). InvalidArgument, naming
  // the index and the count, for a character index of characterCount() or more, or for a stick
  // or input that is not finite or beyond its limit (checkStick(), checkStickInput(): a desired
  // velocity at most kMaxCrowdSpeed, a facing's components at most kMaxCrowdFacing).
  // World XZ stick, length <= 1: velocity max_speed * stick, facing along it (a stick under
  // 0.01 keeps the facing), as mmdb::gpu::Crowd::setStick. A stick longer than 1 and at most
  // kMaxStickLength (a square gate's diagonal) is scaled to length 1; a longer one is refused.
  Status setStick(uint32_t character, float x, float z) noexcept;
  Status setInput(uint32_t character, const StickInput& input) noexcept;
  Status setTagFilter(uint32_t character, uint64_t required, uint64_t excluded) noexcept;
  // The character's run-time block weights (SearchRequest::block_weights): featureBlockCount()
  // floats, finite and > 0, relative to the cooked weights; an empty span goes back to the cooked
  // weights. Copied. InvalidArgument, naming the block, for a count or a weight that does not
  // fit, or a weight over kMaxBlockWeight (the character's weights are then unchanged).
  Status setBlockWeights(uint32_t character, Span<const float> weights) noexcept;
  // The weights set for the character (empty: the cooked ones).
  Span<const float> blockWeights(uint32_t character) const noexcept;
  // A seeded search in the next step only; during a jump cooldown, at the step the cooldown
  // ends.
  Status forceSearch(uint32_t character) noexcept;

  // Puts a character elsewhere in the world at once (a spawn, a teleport, a respawn): its
  // achieved transform becomes `position` and the yaw of `rotation` (its turn about +Y; the
  // ground stays y = 0 for foot locking's foot height), and the controller's simulation root
  // moves with it, keeping its place and velocities relative to the character. No transition:
  // the clip plays on and nothing is inertialized across the move; held feet are let go, so the
  // next contact locks where the toe then is. InvalidArgument, changing nothing, for a character
  // out of range, a position or rotation that is not finite, a position coordinate beyond
  // kMaxCrowdCoordinate, a rotation with no turn about +Y to take (zero, or a half turn about a
  // horizontal axis; any scale of a rotation is taken), or a step in progress.
  Status teleport(uint32_t character, const glm::vec3& position,
                  const glm::quat& rotation) noexcept;
  // Moves the character's placement alone, continuously (the game owns the root: it reads each
  // step's root motion, moves its capsule with collisions, and places the character where the
  // capsule went): the achieved transform becomes `position` and the turn about +Y of
  // `rotation`; the simulation root, the clip and the feet held in the world stay as they are
  // (a held toe stays on its lock; the legs of held toes are bent to them again at once, so the
  // pose drawn after the placing keeps its held toes where they were; mmdb::gpu::Crowd bends
  // them in its next step). The checks of teleport().
  Status place(uint32_t character, const glm::vec3& position, const glm::quat& rotation) noexcept;
  // Sets the controller's simulation root (a collision stopped the capsule, gameplay pushed it):
  // the next step's trajectory and query start from it; the pose and its placement do not move.
  // The rotation is kept as its turn about +Y, normalized. InvalidArgument, changing nothing,
  // for a value that is not finite or beyond its limit (checkSimulation()), a rotation with no
  // turn about +Y, or a step in progress.
  Status setSimulation(uint32_t character, const CharacterState& state) noexcept;

  // One step of dt seconds (finite, 0 to kMaxCrowdDt): beginStep(dt), search(), endStep(). A
  // step that fails after its checks closes (the next one may begin) and names the character
  // that failed: within the limits above none does; a character whose query is not finite
  // anyway (a placement carried beyond the arithmetic) fails with its controller as before the
  // step, the controllers of the characters before it moved by dt, nothing played.
  Status step(float dt) noexcept;

  // The step in three parts. beginStep() runs the controllers and decides who searches, building
  // their queries and requests (requests()); search() answers them into results(); endStep()
  // acts on the results and plays. Between beginStep() and endStep() the caller may read the
  // requests (explainCandidates()) and write results() itself instead of calling search(): a
  // result's frame -1 means the search found nothing. InvalidArgument for a part out of order
  // (a beginStep() before the last step ended, a search() or endStep() without a beginStep()),
  // or for a result whose frame is outside the database. A beginStep() that fails for a
  // character (as step()) closes the step.
  Status beginStep(float dt) noexcept;
  Status search() noexcept;
  Status endStep() noexcept;

  // beginStep() split for a job system: prepareStep(dt) on one thread, beginStepRange() for
  // ranges of characters that together hold each character once, run at the same time on any
  // number of threads, then finishBeginStep() on one thread, which puts the requests in
  // character order. The same requests, results and bytes as beginStep() in any split and order.
  // prepareStep() refuses what beginStep() refuses; beginStepRange() refuses, touching nothing,
  // a range outside the crowd or one holding a character another range of this step already
  // took (an overlap); finishBeginStep() refuses a step in which some character is in no range
  // yet, naming it (play its range, then finish). A character that fails in beginStepRange() (as
  // step()) is named by it, the rest of its range decided; finishBeginStep() then closes the step,
  // naming the character. search(), endStep() and the setters that need
  // no step in progress refuse until finishBeginStep().
  Status prepareStep(float dt) noexcept;
  Status beginStepRange(uint32_t first, uint32_t count) noexcept;
  Status finishBeginStep() noexcept;

  // endStep() split for a job system: endStepRange() for ranges of characters that together
  // hold each character once, run at the same time on up to CrowdSettings::step_workers threads
  // (each with its own `worker`, 0 to step_workers - 1), then finishStep() on one thread. The
  // same results, bit for bit, in any split and order. InvalidArgument, touching nothing, for
  // a range outside the crowd, a worker out of range, a result outside the database, or a range
  // holding a character another range of the step already played (an overlap: on two threads
  // at once, one or both are refused); finishStep() refuses a step in which some character is
  // in no range yet, naming it (the step stays open: play its range, then finish).
  Status endStepRange(uint32_t first, uint32_t count, uint32_t worker) noexcept;
  Status finishStep() noexcept;

  // search() split for a job system: the requests [first, first + count) of requests() answered
  // into the same elements of results(), on up to CrowdSettings::step_workers threads at once
  // (each with its own `worker`, which picks its scratch), in ranges that do not overlap and
  // together hold every request. The same results as search() in any split and order.
  // InvalidArgument, touching nothing, for a range outside requests(), a worker out of range, no
  // step begun (finishBeginStep() not called yet), a range holding a request another range of
  // this step already searched (an overlap), or a search after endStepRange() began.
  Status searchRange(uint32_t first, uint32_t count, uint32_t worker) noexcept;

  // This step's searches, in character order: searching()[k] is the character of requests()[k]
  // and results()[k]. Valid from beginStep() to the next beginStep().
  Span<const SearchRequest> requests() const noexcept { return {requests_.data(), searches_}; }
  Span<const uint32_t> searching() const noexcept { return {searching_.data(), searches_}; }
  Span<SearchResult> results() noexcept { return {results_.data(), searches_}; }
  Span<const SearchResult> results() const noexcept { return {results_.data(), searches_}; }

  // Per character. decisions()[c].reason is set by beginStep(), the rest by endStep().
  Span<const Decision> decisions() const noexcept { return decisions_; }
  Span<const CrowdCharacter> characters() const noexcept { return characters_; }
  Span<const StickInput> inputs() const noexcept { return inputs_; }

  // The pose shown after the last step, element character * jointCount() + joint: local (after
  // inertialization and foot locking; the root joint relative to the simulation root) and model
  // space (FK with the root at the origin, as the GPU's ModelJoint). The world pose is
  // characters()[c].achieved_position + achieved_rotation * model, with the characters() after
  // the step (the achieved transform moves in the step, after sampling).
  Span<const glm::quat> localRotations() const noexcept { return local_rotations_; }
  Span<const glm::vec3> localTranslations() const noexcept { return local_translations_; }
  Span<const glm::quat> modelRotations() const noexcept { return model_rotations_; }
  Span<const glm::vec3> modelTranslations() const noexcept { return model_translations_; }

  // The inertialization offsets captured at each character's last switch (not decayed; the
  // shown pose decays them by transition_time), same layout.
  Span<const glm::quat> offsetRotations() const noexcept { return offset_rotations_; }
  Span<const glm::vec3> offsetAngularVelocities() const noexcept { return offset_angular_; }
  Span<const glm::vec3> offsetTranslations() const noexcept { return offset_translations_; }
  Span<const glm::vec3> offsetVelocities() const noexcept { return offset_velocities_; }

  // Foot locking, element character * kLegCount + leg (0 left, 1 right): whether the toe is held
  // after the last step (locked), blending back to the animation, where it is held and where it
  // was shown (world space). Every foot unlocked without foot_locking, and for a character that
  // has not started playing.
  Span<const FootLock> footLocks() const noexcept { return feet_; }
  // What `character` shows after the last step: InvalidArgument, naming the index and the
  // count, for a character out of range (`out` is then untouched). Nothing allocates.
  Status playing(uint32_t character, Playing& out) const noexcept;

  // The legs foot locking bends (findLegChains()); empty without foot_locking.
  Span<const LegChain> legChains() const noexcept {
    return {legs_.data(), settings_.foot_locking && db_ ? legs_.size() : 0};
  }

 private:
  Status checkCharacter(uint32_t character, const char* what) const noexcept;
  // checkCharacter(), and no step in progress (teleport, place, setSimulation).
  Status checkBetweenSteps(uint32_t character, const char* what) const noexcept;
  // The controller, the reason to search (decisions_) and, when it searches (a reason other than
  // None), the query, with its request in requests_[slot] and the reset result in results_[slot].
  Status decide(uint32_t character, size_t slot) noexcept;
  Status notBegun(const char* what) const noexcept;
  // Closes the step in progress (its claims given back), whatever part it is in.
  void abandonStep() noexcept;
  // prepareStep() and the start of beginStep(), whose name (`what`) its refusals carry.
  Status prepare(float dt, const char* what) noexcept;
  // The range and claim checks of beginStepRange() and endStepRange() (claimed_), and of their
  // finishing calls.
  Status checkRange(uint32_t first, uint32_t count, const char* what) const noexcept;
  Status claimRange(uint32_t first, uint32_t count, const char* what) noexcept;
  Status checkAllClaimed(const char* what, const char* range_call) const noexcept;
  Status resolve(uint32_t character, const SearchResult& found, uint32_t worker) noexcept;
  bool samplePose(uint32_t character) noexcept;
  Status poseBlock(uint32_t first, uint32_t count, uint32_t worker) noexcept;
  void prefetchBlock(uint32_t first, uint32_t count) const noexcept;
  bool offsetsShow(const CrowdCharacter& character) const noexcept;
  bool limitApplies(const CrowdCharacter& character, bool offsets_show) const noexcept;
  void keepUnlocked(uint32_t character) noexcept;
  Status limitTransition(uint32_t character, uint32_t worker) noexcept;
  Status inertialize(uint32_t character, float time, Span<const glm::quat> rotations,
                     Span<const glm::vec3> translations) noexcept;
  float squaredStepRatio(uint32_t character) const noexcept;
  float shownClipTime(const CrowdCharacter& ch) const noexcept;
  float shownLead() const noexcept { return settings_.show_next_frame ? dt_ : 0.f; }
  void decayReferenceOffsets(uint32_t character, float dt) noexcept;
  Status forwardKinematics(uint32_t character) noexcept;
  void advance(uint32_t character) noexcept;
  void synchronize(uint32_t character) noexcept;
  void lockFeet(uint32_t first, uint32_t count) noexcept;
  void showRange(uint32_t character) noexcept;
  Status sample(uint32_t clip, float time, uint32_t scratch) noexcept;
};

}  // namespace mmdb
