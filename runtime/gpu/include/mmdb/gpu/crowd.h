// Motion matching for a crowd on the GPU: the database goes to device-local buffers once, and each
// frame seven compute passes run for every character:
//
//   1 build_query  controller springs (stick -> trajectory), search timer, query features from
//                  the trajectory as seen from the character's achieved path
//   2 match        a workgroup per searching character: exhaustive search of the allowed ranges
//   3 resolve      act on the winner (inertialized switch), advance playback time
//   4 sample       local pose at start_frame + time * rate (slerp / lerp, clamped at clip end)
//   5 inertialize  add the decaying transition offsets (characters below threshold skipped)
//   6 fk           local pose -> model space; the achieved path takes the frame's root motion
//   7 foot_lock    hold planted toes where they are in the world, legs bent by two-bone IK
//                  (CrowdSettings::foot_locking), blending back when they let go
//
// Semantics are those of the CPU runtime's functions, and mmdb::Crowd (mmdb/crowd.h) is the same
// step on the CPU (docs/runtime.md "The GPU crowd"), one step being:
//   updateCharacter(dt); search when nothing plays yet (Start, unseeded), at the last frame of a
//   matchable range or clip (RangeEnd, unseeded), when forced, or when the search timer ran out
//   (seeded); buildQuery + searchExhaustive; on a new winner an InertializeTransitionJob and a
//   jump to the winner's clip time; SamplePoseJob at the clip time; InertializeJob; FK; the
//   achieved path moves by dt of the playing frame's root motion; then the clip time and the time
//   since the switch move on by dt, and the timer by one step; FootLockJob with the achieved
//   transform of after the step. readModelPoses() is the final pose in model space; the world pose
//   is achieved_position + achieved_rotation * model (readCharacters() after the step). Typical
//   use:
//
//   auto db = mmdb::Database::open("walk.mmdb");
//   auto ctx = mmdb::gpu::Context::createHeadless({});          // or Context::wrap(engine...)
//   auto view = mmdb::gpu::DatabaseView::fromDatabase(db.value());
//   auto crowd = mmdb::gpu::Crowd::create(*ctx.value(), view.value(), 250, {});
//   each frame:  crowd.value()->setStick(i, x, z) ...;  crowd.value()->step(cmd, dt);  // caller
//   submits or, for tools: crowd.value()->stepAndWait(dt); crowd.value()->readModelPoses();
//
// Errors are values (mmdb::Status, mmdb::Result): DeviceError for Vulkan failures,
// InvalidArgument for a character index or a size that does not fit, nothing thrown.
//
// Nothing is allocated per frame: step() records into the caller's command buffer (inputs go in
// with vkCmdUpdateBuffer), barriers between passes included. Reads copy back and wait; they are
// for tools and tests. A Crowd is used from one thread; one step may be in flight at a time. C++17.
#pragma once

#include "mmdb/gpu/context.h"
#include "mmdb/gpu/layout.h"
#include "mmdb/playback.h"
#include "mmdb/search.h"
#include "mmdb/synchronization.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mmdb {
class Database;
}

namespace mmdb::gpu {

// The streams the passes read, as views into the mapped file (no copies), plus the few derived
// numbers. Valid while the file stays mapped.
struct DatabaseView {
  uint32_t frame_count = 0;
  uint32_t joint_count = 0;
  uint32_t feature_count = 0;
  uint32_t feature_stride = 0;  // floats per row, a multiple of 4
  float frame_rate = 60;
  const float* features = nullptr;  // frame_count * feature_stride
  const void* ranges = nullptr;     // range_count MatchRange structs (16 bytes each)
  uint32_t range_count = 0;
  const mmdb::Float4* rotations = nullptr;     // frame_count * joint_count, each of the four; null
  const mmdb::Float4* translations = nullptr;  // for a stream the file codes, which the upload
  const mmdb::Float4* velocities = nullptr;    // decodes from `database` into the staging buffer
  const mmdb::Float4* angular_velocities = nullptr;
  const mmdb::RootFrame* root_motion = nullptr;  // frame_count: the achieved path integrates it
  const mmdb::Database* database = nullptr;      // set when a pose stream is coded
  const float* feature_offset = nullptr;         // feature_count
  const float* feature_scale = nullptr;          // feature_count
  const float* bounds_min = nullptr;  // bounds_rows rows at feature_stride: per-column min
  const float* bounds_max = nullptr;  // ... and max of the features over bounds_size frames
  uint32_t bounds_size = 0;           // 0: no bounds (the match pass is exhaustive)
  uint32_t bounds_rows = 0;
  int32_t default_neighbourhood_frames = 20;  // 1/3 s at the file's rate
  std::vector<int32_t> parents;               // joint_count
  std::vector<uint32_t> clip_starts;          // clip first frames, then frame_count
  std::vector<uint64_t> clip_tags;            // per clip: its own tags (ClipInfo::tag_mask)
  uint64_t mirrored_tag = 0;                  // mmdb::mirroredTagMask (fromDatabase fills it)
  // Cost biases (mmdb::Database::rangeBias, ClipInfo::bias): range_count per range, then one per
  // clip; all 0 for a file without biases.
  std::vector<float> biases;
  // Per feature block, in the file's order: its name, first column and width (for run-time
  // weights).
  struct Block {
    std::string name;
    uint32_t first_column = 0, width = 0;
  };
  std::vector<Block> blocks;
  uint32_t trajectory_position_column = 15;
  uint32_t trajectory_direction_column = 21;
  std::array<float, 3> trajectory_times{1.f / 3, 2.f / 3, 1.f};
  const uint32_t* contacts = nullptr;  // frame_count contact masks (mmdb::Database::contacts())
  // Per joint its largest move in model space between two frames of a clip (mmdb::clipJointSteps),
  // from which the transition speed limit takes each joint's limit.
  std::vector<float> clip_joint_steps;
  // The legs foot locking bends (mmdb::findLegChains()), and why there are none when
  // legs_status is an error (a crowd with foot_locking refuses the view with it).
  std::array<mmdb::LegChain, mmdb::kLegCount> legs{};
  mmdb::Status legs_status;

  // From an opened (verified) database. InvalidArgument naming what the passes cannot handle:
  // a row wider than kMaxFeatureStride floats, trajectory blocks other than 3 samples of (x, z),
  // clips that do not tile the frames.
  static Result<DatabaseView> fromDatabase(const mmdb::Database& db);
};

struct CrowdSettings {
  uint32_t search_interval_ticks = 6;  // steps between periodic searches (0.1 s at 60 steps/s);
                                       // whole steps, so no float timer drifts past one
  uint32_t stagger_phases = 6;  // character c's first periodic search comes (c % n) / n of an
                                // interval late (whole steps), spreading the searches (0: off)
  float transition_cost = mmdb::kDefaultTransitionCost;  // added to every candidate but the
                                                         // frame playing
  int32_t neighbourhood_frames =
      mmdb::kDefaultNeighbourhood;  // frames around the playing one a
                                    // seeded search skips; negative: 1/3 s at the file's rate
  float max_drift = 0.5f;           // m: the query's trajectory starts from the character's
                                    // achieved path and closes at most this much of its gap
                                    // to the controller
  float inertialization_halflife = 0.15f;  // s: the offsets decay (mmdb::CrowdSettings's)
  float inertialization_rate_halflife = mmdb::kDefaultInertializationHalflife;  // s: their rates
  float inertialization_threshold = 1e-5f;  // offsets bounded below this (rad, m) are skipped
  float transition_speed_limit = 1.4f;      // mmdb::CrowdSettings's (needs the view's
                                            // clip_joint_steps; 0: off)
  float controller_halflife = 0.27f;        // trajectory springs (Holden's default)
  float max_speed = 1.75f;                  // m/s at full stick (setStick)
  bool timestamps = true;                   // per-pass GPU times (when the queue supports them)
  bool shared_memory_reduction = false;     // reduce the match without subgroup operations
  bool bounds_pruning = true;               // skip boxes of frames whose cost bound cannot win (the
                                            // file's small boxes, as searchPruned); same winners
  // Playability policies: the same names, defaults and meaning as mmdb::CrowdSettings's.
  float continue_window = 0.2f;
  float jump_cooldown = 0.25f;
  float range_end_margin = 0.25f;
  bool search_when_settled = true;
  float settle_velocity_change = 50.f;
  float settle_rotation_change = 50.f;
  bool range_end_moves_on = true;
  uint32_t start_stagger_intervals = 2;
  // The reference controller's rules, as mmdb::CrowdSettings's (off by default).
  bool start_playing = false;
  float search_interval_seconds = 0.f;
  float settle_search_interval = 0.f;
  bool search_at_clip_end = false;
  bool unrotated_angular_offsets = false;
  bool predict_before_update = false;
  bool show_next_frame = false;
  bool reference_arithmetic = false;  // the exponential and acos are the GPU's own (docs/gpu.md)
  bool mirrored_tag_events = false;   // mmdb::CrowdSettings's

  // Foot locking, as mmdb::CrowdSettings (same names and defaults): the foot lock pass holds a
  // toe whose contact starts where it is in the world, bending the leg to it, until the contact
  // ends or the animated toe strays past foot_unlock_radius; then it blends back. Needs the
  // view's legs (DatabaseView::legs).
  bool foot_locking = true;
  float foot_unlock_radius = mmdb::kDefaultFootUnlockRadius;      // m
  float foot_unlock_halflife = mmdb::kDefaultFootUnlockHalflife;  // s
  float ik_foot_height = mmdb::kDefaultIkFootHeight;              // m above the ground (y = 0)
  float ik_toe_length = mmdb::kDefaultIkToeLength;                // m
  float ik_max_length_buffer = mmdb::kDefaultIkMaxLengthBuffer;   // m

  // Where the character goes against its controller, as mmdb::CrowdSettings::synchronization
  // (mmdb/synchronization.h); the fk pass runs it after the root motion.
  mmdb::SynchronizationSettings synchronization;

  // Every policy off, no foot locking and every start in the first step, as
  // mmdb::CrowdSettings::reference().
  static CrowdSettings reference() {
    CrowdSettings s;
    s.start_stagger_intervals = 0;
    s.transition_cost = 0.f;
    s.continue_window = 0.f;
    s.jump_cooldown = 0.f;
    s.search_when_settled = false;
    s.range_end_moves_on = false;
    s.range_end_margin = 0.f;
    s.foot_locking = false;
    s.transition_speed_limit = 0.f;
    s.inertialization_halflife = mmdb::kDefaultInertializationHalflife;
    s.inertialization_rate_halflife = mmdb::kDefaultInertializationHalflife;
    s.synchronization.mode = mmdb::Synchronization::None;
    return s;
  }
  // reference() and the reference controller's decision rules, as
  // mmdb::CrowdSettings::referenceController().
  static CrowdSettings referenceController() {
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
};

enum class Pass : uint32_t { BuildQuery = 0, Match, Resolve, Sample, Inertialize, Fk, FootLock };
inline constexpr uint32_t kPassCount = 7;

// GPU milliseconds of each pass of the last completed step (timestamp queries).
struct PassTimings {
  std::array<double, kPassCount> ms{};
  double total_ms = 0;
  bool valid = false;
};

// What a character decided in the last step: the CPU crowd's type (mmdb/crowd.h), so the two
// report decisions alike.
using Decision = mmdb::Decision;

class Crowd {
 public:
  // Uploads the database (each stream with one copy through a staging buffer) and creates the
  // buffers, pipelines and descriptors. Characters start as initialCharacter(): at the origin
  // facing +Z with nothing playing, so their first step searches (SearchReason::Start). `db`'s
  // arrays are read only here. InvalidArgument for no characters or more than
  // mmdb::kMaxCrowdCharacters, a max_speed or controller_halflife beyond the crowds' limits
  // (mmdb::checkControllerSettings()), a negative max_drift, a
  // foot-locking setting that is negative or not finite (named), or with foot_locking a view
  // without legs (its legs_status); DeviceError when Vulkan fails.
  static Result<std::unique_ptr<Crowd>> create(const Context& context, const DatabaseView& db,
                                               uint32_t character_count,
                                               const CrowdSettings& settings = {});
  ~Crowd();
  Crowd(const Crowd&) = delete;
  Crowd& operator=(const Crowd&) = delete;

  uint32_t characterCount() const { return count_; }
  const PassParams& params() const { return params_; }

  // Inputs of the next step (kept on the host, recorded by step()). InvalidArgument, naming the
  // index and the count, for a character index of characterCount() or more (or more inputs), or
  // for a stick or input beyond the crowds' limits (mmdb::checkStick(), checkStickInput()).
  // World XZ stick, length <= 1: velocity max_speed * stick, facing along it (a stick under
  // 0.01 keeps the facing); a stick from 1 to mmdb::kMaxStickLength is scaled to length 1.
  Status setStick(uint32_t character, float x, float z);
  Status setInput(uint32_t character, const CharacterInput& input);
  Status setInputs(const CharacterInput* inputs, size_t count);  // characters [0, count)
  Status setTagFilter(uint32_t character, uint64_t required, uint64_t excluded);
  Status forceSearch(uint32_t character);  // a seeded search in the next step only
  // mmdb::Crowd::teleport, done at the start of the next step (before its controller update,
  // where the CPU crowd's falls between steps): the achieved transform becomes `position` (xyz)
  // and the turn about +Y of `rotation` (x, y, z, w), the simulation root moves with it, no
  // transition, held feet let go. The CPU crowd's checks and messages.
  Status teleport(uint32_t character, const Float4& position, const Float4& rotation);
  // mmdb::Crowd::place (the placement alone, feet held), done likewise at the next step's start;
  // the last of teleport() and place() before a step is the one done.
  Status place(uint32_t character, const Float4& position, const Float4& rotation);
  // mmdb::Crowd::setSimulation (the simulation root alone: the next trajectory and query start
  // from it, the pose and its placement stay), done at the next step's start after any
  // teleport() or place() asked for before it; the last state given before a step is the one
  // set. The CPU crowd's checks; a teleport() asked for after it in the same step is refused (on
  // the CPU it would move the state just set, which the host cannot do for the device).
  Status setSimulation(uint32_t character, const mmdb::CharacterState& state);
  // The character's run-time block weights, as mmdb::Crowd::setBlockWeights and
  // mmdb::SearchRequest::block_weights: `count` floats (one per feature block, finite, > 0,
  // relative to the cooked weights), or count 0 for the cooked weights. Copied; uploaded by the
  // next step(). InvalidArgument naming the block, or the count, when they do not fit, or for a
  // weight over mmdb::kMaxBlockWeight.
  Status setBlockWeights(uint32_t character, const float* weights, size_t count);
  const std::vector<CharacterInput>& inputs() const { return inputs_; }

  // Records one frame (all seven passes, barriers, timestamps) into `cmd`, which the caller
  // submits. Clears one-shot forced searches.
  void step(VkCommandBuffer cmd, float dt);
  // step() on an internal command buffer, submitted and waited for. InvalidArgument for a dt
  // that is not finite or beyond mmdb::kMaxCrowdDt (as passAndWait; step() records what it is
  // given).
  Status stepAndWait(float dt);
  // Records a single pass with `dt` (tests, tools); barriers before and after it.
  void recordPass(VkCommandBuffer cmd, Pass pass, float dt);
  Status passAndWait(Pass pass, float dt);

  // Copies back (waits). DeviceError when the copy fails.
  Result<std::vector<Decision>> readDecisions() const;
  Result<std::vector<CrowdCharacter>> readCharacters() const;
  Result<std::vector<MatchResult>> readResults() const;
  Result<std::vector<float>> readQueries() const;         // feature_stride floats per character
  Result<std::vector<JointPose>> readLocalPoses() const;  // joint_count per character
  Result<std::vector<ModelJoint>> readModelPoses() const;
  Result<std::vector<JointOffset>> readOffsets() const;
  // Foot locking per character: its feet (left, right: locked, blending, where held and shown)
  // and the frame of the pose shown. All unlocked without foot_locking.
  Result<std::vector<CharacterFeet>> readFootLocks() const;
  // What each character shows after the last step, as mmdb::Crowd::playing() reports it (the
  // same numbers; the clip time to the device's float division): the clip, frame and clip time
  // of the pose shown, its matchable range and tags, the tags it entered and left in that step,
  // its contact bits, the feet held and blending back, and the step's decision. From the
  // characters, results and feet buffers (three copies back) and what create() kept of the
  // database's ranges, clips and contacts. Nothing plays before the first step.
  Result<std::vector<mmdb::Playing>> readPlaying() const;
  PassTimings readTimings() const;  // of the last completed step; valid false if none

  // Overwrite GPU state (tools, tests). InvalidArgument unless the size is the read functions'.
  Status writeCharacters(const std::vector<CrowdCharacter>& characters);
  Status writeResults(const std::vector<MatchResult>& results);
  Status writeQueries(const std::vector<float>& queries);
  Status writeLocalPoses(const std::vector<JointPose>& poses);
  Status writeOffsets(const std::vector<JointOffset>& offsets);
  Status writeFootLocks(const std::vector<CharacterFeet>& feet);

  // Bytes of the database streams now on the device.
  uint64_t deviceDatabaseBytes() const { return database_bytes_; }

 private:
  struct Impl;
  explicit Crowd(const Context& context);
  Status moveCharacter(uint32_t character, const Float4& position, const Float4& rotation,
                       uint32_t kind, const char* what);
  // The steps of create().
  Status sizeBuffers(const DatabaseView& db);
  Status uploadDatabase(const DatabaseView& db);
  Status createDescriptors();
  Status createPipelines();
  void createTimestampQueries();
  Status checkCharacter(uint32_t character, const char* what) const;
  void recordInputs(VkCommandBuffer cmd);
  const Context& ctx_;
  std::unique_ptr<Impl> impl_;
  uint32_t count_ = 0;
  PassParams params_{};
  CrowdSettings settings_;
  std::vector<CharacterInput> inputs_;
  // Teleports asked for since the last step (CharacterInput::teleport and its transform), kept
  // apart from inputs_ so that a later setInput() does not drop them; merged when recorded.
  struct Teleport {
    uint32_t kind = 0;  // kTeleport*
    Float4 position{}, rotation{};
  };
  std::vector<Teleport> teleports_;
  // setSimulation() states asked for since the last step, merged likewise.
  struct Simulation {
    bool set = false;
    mmdb::CharacterState state;
  };
  std::vector<Simulation> simulations_;
  std::vector<DatabaseView::Block> blocks_;
  // What readPlaying() reads of the database, copied at create (the view's arrays are not kept).
  std::vector<mmdb::MatchRange> ranges_;
  std::vector<uint32_t> clip_starts_;  // clip first frames, then the frame count
  std::vector<uint64_t> clip_tags_;
  uint64_t event_tags_ = ~0ull;        // the tags whose changes are events (mirrored_tag_events)
  std::vector<uint32_t> contacts_;     // per frame; empty when the view has none
  std::vector<float> column_weights_;  // feature_stride per character, 1 where none is set
  bool weights_changed_ = true;        // column_weights_ not yet recorded for the device
  uint64_t database_bytes_ = 0;
};

}  // namespace mmdb::gpu
