// The C interface (mmdb/mmdb_c.h) over mmdb::Database and mmdb::Crowd: argument checks, copies
// into the caller's arrays, and the thread's last error message.
#include "mmdb/mmdb_c.h"

#include "mmdb/crowd.h"
#include "mmdb/database.h"

#include <atomic>
#include <cstdio>
#include <new>
#include <utility>

struct mmdb_database {
  mmdb::Database db;
  std::atomic<uint32_t> crowds{0};  // crowds created on it and not destroyed
};

struct mmdb_crowd {
  mmdb::Crowd crowd;
  mmdb_database* db = nullptr;
};

// mmdb_role is mmdb::Role, value for value.
static_assert(MMDB_ROLE_HIPS == int(mmdb::Role::Hips) &&
              MMDB_ROLE_LEFT_FOOT == int(mmdb::Role::LeftFoot) &&
              MMDB_ROLE_RIGHT_FOOT == int(mmdb::Role::RightFoot) &&
              MMDB_ROLE_LEFT_TOE == int(mmdb::Role::LeftToe) &&
              MMDB_ROLE_RIGHT_TOE == int(mmdb::Role::RightToe) &&
              MMDB_ROLE_ROOT_POSITION == int(mmdb::Role::RootPosition) &&
              MMDB_ROLE_FACING == int(mmdb::Role::Facing) &&
              MMDB_ROLE_COUNT == int(mmdb::Role::Facing) + 1);

namespace {

thread_local char last_error[mmdb::Error::kMaxMessage + 1] = "";

mmdb_status fail(mmdb::ErrorCode code, const char* message) {
  std::snprintf(last_error, sizeof last_error, "%s", message);
  return mmdb_status(int(code));
}

mmdb_status fail(const mmdb::Error& error) { return fail(error.code(), error.message()); }

mmdb_status nullArgument(const char* call, const char* argument) {
  char message[mmdb::Error::kMaxMessage + 1];
  std::snprintf(message, sizeof message, "%s: %s is NULL", call, argument);
  return fail(mmdb::ErrorCode::InvalidArgument, message);
}

mmdb_status result(const mmdb::Status& status) { return status.ok() ? MMDB_OK : fail(status); }

// The synchronization's fields, either way (the mode as its number).
void copySynchronization(const mmdb::CrowdSettings& from, mmdb_crowd_settings& to) {
  const mmdb::SynchronizationSettings& s = from.synchronization;
  to.synchronization = static_cast<uint32_t>(s.mode);
  to.sync_position_halflife = s.position_halflife;
  to.sync_rotation_halflife = s.rotation_halflife;
  to.sync_position_ratio = s.position_ratio;
  to.sync_rotation_ratio = s.rotation_ratio;
  to.sync_max_distance = s.max_distance;
  to.sync_max_angle = s.max_angle;
  to.sync_foot_reach = s.foot_reach;
  to.sync_hard_distance = s.hard_distance;
  to.sync_rate_min = s.rate_min;
  to.sync_rate_max = s.rate_max;
  to.sync_stride_min = s.stride_min;
  to.sync_stride_max = s.stride_max;
  to.sync_warp_angle = s.warp_angle;
  to.sync_warp_halflife = s.warp_halflife;
  static_assert(sizeof(mmdb::SynchronizationSettings) == 15 * sizeof(float),
                "a synchronization setting the C settings do not carry");
}
void copySynchronization(const mmdb_crowd_settings& from, mmdb::CrowdSettings& to) {
  mmdb::SynchronizationSettings& s = to.synchronization;
  s.mode = static_cast<mmdb::Synchronization>(from.synchronization);
  s.position_halflife = from.sync_position_halflife;
  s.rotation_halflife = from.sync_rotation_halflife;
  s.position_ratio = from.sync_position_ratio;
  s.rotation_ratio = from.sync_rotation_ratio;
  s.max_distance = from.sync_max_distance;
  s.max_angle = from.sync_max_angle;
  s.foot_reach = from.sync_foot_reach;
  s.hard_distance = from.sync_hard_distance;
  s.rate_min = from.sync_rate_min;
  s.rate_max = from.sync_rate_max;
  s.stride_min = from.sync_stride_min;
  s.stride_max = from.sync_stride_max;
  s.warp_angle = from.sync_warp_angle;
  s.warp_halflife = from.sync_warp_halflife;
}

// mmdb::CrowdSettings and mmdb_crowd_settings field for field, either way (bool to and from
// int32_t 0 or 1): one list, so that the two directions cannot drift apart.
template <class From, class To>
void copySettings(const From& from, To& to) {
  to.search_interval_ticks = from.search_interval_ticks;
  to.stagger_phases = from.stagger_phases;
  to.start_stagger_intervals = from.start_stagger_intervals;
  to.transition_cost = from.transition_cost;
  to.neighbourhood_frames = from.neighbourhood_frames;
  to.max_drift = from.max_drift;
  to.inertialization_halflife = from.inertialization_halflife;
  to.inertialization_rate_halflife = from.inertialization_rate_halflife;
  to.inertialization_threshold = from.inertialization_threshold;
  to.transition_speed_limit = from.transition_speed_limit;
  to.controller_halflife = from.controller_halflife;
  to.max_speed = from.max_speed;
  to.bounds_pruning = from.bounds_pruning != 0;
  to.continue_window = from.continue_window;
  to.jump_cooldown = from.jump_cooldown;
  to.search_when_settled = from.search_when_settled != 0;
  to.settle_velocity_change = from.settle_velocity_change;
  to.settle_rotation_change = from.settle_rotation_change;
  to.range_end_margin = from.range_end_margin;
  to.range_end_moves_on = from.range_end_moves_on != 0;
  to.start_playing = from.start_playing != 0;
  to.search_interval_seconds = from.search_interval_seconds;
  to.settle_search_interval = from.settle_search_interval;
  to.search_at_clip_end = from.search_at_clip_end != 0;
  to.unrotated_angular_offsets = from.unrotated_angular_offsets != 0;
  to.predict_before_update = from.predict_before_update != 0;
  to.show_next_frame = from.show_next_frame != 0;
  to.reference_arithmetic = from.reference_arithmetic != 0;
  to.mirrored_tag_events = from.mirrored_tag_events != 0;
  to.foot_locking = from.foot_locking != 0;
  to.foot_unlock_radius = from.foot_unlock_radius;
  to.foot_unlock_halflife = from.foot_unlock_halflife;
  to.ik_foot_height = from.ik_foot_height;
  to.ik_toe_length = from.ik_toe_length;
  to.ik_max_length_buffer = from.ik_max_length_buffer;
  to.step_workers = from.step_workers;
  copySynchronization(from, to);
}

// The checks every per-character read makes: a crowd, and a character in it.
mmdb_status checkCharacter(const char* call, const mmdb_crowd* crowd, uint32_t character) {
  if (!crowd) return nullArgument(call, "crowd");
  if (character >= crowd->crowd.characterCount()) {
    char message[mmdb::Error::kMaxMessage + 1];
    std::snprintf(message, sizeof message,
                  "%s: character %u is out of range (the crowd has %u characters)", call, character,
                  crowd->crowd.characterCount());
    return fail(mmdb::ErrorCode::InvalidArgument, message);
  }
  return MMDB_OK;
}

// Copies a character's pose, placed by (position, rotation).
void copyPose(const mmdb_crowd* crowd, uint32_t character, const glm::vec3& position,
              const glm::quat& rotation, float* positions, float* rotations) {
  const uint32_t joints = crowd->crowd.jointCount();
  const size_t first = size_t(character) * joints;
  for (uint32_t j = 0; j < joints; ++j) {
    if (positions) {
      const glm::vec3 p = position + rotation * crowd->crowd.modelTranslations()[first + j];
      positions[3 * j] = p.x;
      positions[3 * j + 1] = p.y;
      positions[3 * j + 2] = p.z;
    }
    if (rotations) {
      const glm::quat q = rotation * crowd->crowd.modelRotations()[first + j];
      rotations[4 * j] = q.x;
      rotations[4 * j + 1] = q.y;
      rotations[4 * j + 2] = q.z;
      rotations[4 * j + 3] = q.w;
    }
  }
}

}  // namespace

extern "C" {

const char* mmdb_status_name(mmdb_status status) {
  if (int(status) < 0 || int(status) > int(mmdb::ErrorCode::DeviceError)) return "Unknown";
  return mmdb::errorCodeName(mmdb::ErrorCode(int(status)));
}

const char* mmdb_last_error(void) { return last_error; }

mmdb_status mmdb_database_open(const char* path, mmdb_database** out) {
  if (!path) return nullArgument("mmdb_database_open", "path");
  if (!out) return nullArgument("mmdb_database_open", "out");
  mmdb::Result<mmdb::Database> opened = mmdb::Database::open(path);
  if (!opened) return fail(opened.error());
  mmdb_database* db = new (std::nothrow) mmdb_database;
  if (!db) return fail(mmdb::ErrorCode::IoError, "mmdb_database_open: out of memory");
  db->db = std::move(opened.value());
  *out = db;
  return MMDB_OK;
}

mmdb_status mmdb_database_close(mmdb_database* db) {
  if (!db) return MMDB_OK;
  if (const uint32_t crowds = db->crowds.load(); crowds > 0) {
    char message[mmdb::Error::kMaxMessage + 1];
    std::snprintf(message, sizeof message,
                  "mmdb_database_close: %u crowds still play the database; destroy them first",
                  crowds);
    return fail(mmdb::ErrorCode::InvalidArgument, message);
  }
  delete db;
  return MMDB_OK;
}

uint32_t mmdb_database_frame_count(const mmdb_database* db) { return db ? db->db.frameCount() : 0; }
float mmdb_database_frame_rate(const mmdb_database* db) { return db ? db->db.frameRate() : 0.f; }
uint32_t mmdb_database_joint_count(const mmdb_database* db) { return db ? db->db.jointCount() : 0; }
// FlatBuffers strings end with a NUL in the buffer, so the views' data are C strings.
const char* mmdb_database_joint_name(const mmdb_database* db, uint32_t joint) {
  return db && joint < db->db.jointCount() ? db->db.jointName(joint).data() : nullptr;
}
int32_t mmdb_database_joint_parent(const mmdb_database* db, uint32_t joint) {
  return db && joint < db->db.jointCount() ? db->db.parents()[joint] : -1;
}
uint32_t mmdb_database_clip_count(const mmdb_database* db) { return db ? db->db.clipCount() : 0; }
const char* mmdb_database_clip_name(const mmdb_database* db, uint32_t clip) {
  return db && clip < db->db.clipCount() ? db->db.clip(clip).name.data() : nullptr;
}
uint32_t mmdb_database_tag_count(const mmdb_database* db) { return db ? db->db.tagCount() : 0; }
const char* mmdb_database_tag_name(const mmdb_database* db, uint32_t bit) {
  return db && bit < db->db.tagCount() ? db->db.tagName(bit).data() : nullptr;
}

const char* mmdb_role_name(mmdb_role role) {
  // The manifest's spelling (docs/cook.md "Skeleton roles and presets"), in mmdb::Role's order.
  static const char* const kNames[MMDB_ROLE_COUNT] = {
      "hips", "left_foot", "right_foot", "left_toe", "right_toe", "root_position", "facing"};
  return uint32_t(role) < MMDB_ROLE_COUNT ? kNames[uint32_t(role)] : "unknown";
}
mmdb_status mmdb_database_role_joint(const mmdb_database* db, mmdb_role role, int32_t* joint) {
  if (!db) return nullArgument("mmdb_database_role_joint", "db");
  if (!joint) return nullArgument("mmdb_database_role_joint", "joint");
  if (uint32_t(role) >= MMDB_ROLE_COUNT) {
    char message[mmdb::Error::kMaxMessage + 1];
    std::snprintf(message, sizeof message,
                  "mmdb_database_role_joint: role %d is not a role (the roles are 0 to %u, "
                  "MMDB_ROLE_HIPS to MMDB_ROLE_FACING)",
                  int(role), MMDB_ROLE_COUNT - 1);
    return fail(mmdb::ErrorCode::InvalidArgument, message);
  }
  *joint = db->db.roleJoint(static_cast<mmdb::Role>(role));
  return MMDB_OK;
}
uint32_t mmdb_database_contact_joint_count(const mmdb_database* db) {
  return db ? uint32_t(db->db.contactJoints().size()) : 0;
}
int32_t mmdb_database_contact_joint(const mmdb_database* db, uint32_t contact) {
  return db && contact < db->db.contactJoints().size() ? db->db.contactJoints()[contact] : -1;
}

void mmdb_crowd_settings_default(mmdb_crowd_settings* out) {
  if (out) copySettings(mmdb::CrowdSettings{}, *out);
}
void mmdb_crowd_settings_reference(mmdb_crowd_settings* out) {
  if (out) copySettings(mmdb::CrowdSettings::reference(), *out);
}
void mmdb_crowd_settings_reference_controller(mmdb_crowd_settings* out) {
  if (out) copySettings(mmdb::CrowdSettings::referenceController(), *out);
}

mmdb_status mmdb_crowd_create(mmdb_database* db, uint32_t characters,
                              const mmdb_crowd_settings* settings, mmdb_crowd** out) {
  if (!db) return nullArgument("mmdb_crowd_create", "db");
  if (!out) return nullArgument("mmdb_crowd_create", "out");
  mmdb::CrowdSettings chosen;
  if (settings) copySettings(*settings, chosen);
  mmdb::Result<mmdb::Crowd> created = mmdb::Crowd::create(db->db, characters, chosen);
  if (!created) return fail(created.error());
  mmdb_crowd* crowd = new (std::nothrow) mmdb_crowd;
  if (!crowd) return fail(mmdb::ErrorCode::IoError, "mmdb_crowd_create: out of memory");
  crowd->crowd = std::move(created.value());
  crowd->db = db;
  db->crowds.fetch_add(1);
  *out = crowd;
  return MMDB_OK;
}

void mmdb_crowd_destroy(mmdb_crowd* crowd) {
  if (!crowd) return;
  crowd->db->crowds.fetch_sub(1);
  delete crowd;
}

uint32_t mmdb_crowd_character_count(const mmdb_crowd* crowd) {
  return crowd ? crowd->crowd.characterCount() : 0;
}
uint32_t mmdb_crowd_joint_count(const mmdb_crowd* crowd) {
  return crowd ? crowd->crowd.jointCount() : 0;
}

mmdb_status mmdb_crowd_set_stick(mmdb_crowd* crowd, uint32_t character, float x, float z) {
  if (!crowd) return nullArgument("mmdb_crowd_set_stick", "crowd");
  return result(crowd->crowd.setStick(character, x, z));
}

mmdb_status mmdb_crowd_set_input(mmdb_crowd* crowd, uint32_t character,
                                 const float desired_velocity[3], const float desired_facing[3]) {
  if (!crowd) return nullArgument("mmdb_crowd_set_input", "crowd");
  if (!desired_velocity) return nullArgument("mmdb_crowd_set_input", "desired_velocity");
  if (!desired_facing) return nullArgument("mmdb_crowd_set_input", "desired_facing");
  mmdb::StickInput input;
  input.desired_velocity = {desired_velocity[0], desired_velocity[1], desired_velocity[2]};
  input.desired_facing = {desired_facing[0], desired_facing[1], desired_facing[2]};
  return result(crowd->crowd.setInput(character, input));
}

mmdb_status mmdb_crowd_set_tag_filter(mmdb_crowd* crowd, uint32_t character, uint64_t required,
                                      uint64_t excluded) {
  if (!crowd) return nullArgument("mmdb_crowd_set_tag_filter", "crowd");
  return result(crowd->crowd.setTagFilter(character, required, excluded));
}

mmdb_status mmdb_crowd_force_search(mmdb_crowd* crowd, uint32_t character) {
  if (!crowd) return nullArgument("mmdb_crowd_force_search", "crowd");
  return result(crowd->crowd.forceSearch(character));
}

mmdb_status mmdb_crowd_teleport(mmdb_crowd* crowd, uint32_t character, const float position[3],
                                const float rotation[4]) {
  if (!crowd) return nullArgument("mmdb_crowd_teleport", "crowd");
  if (!position) return nullArgument("mmdb_crowd_teleport", "position");
  if (!rotation) return nullArgument("mmdb_crowd_teleport", "rotation");
  return result(
      crowd->crowd.teleport(character, {position[0], position[1], position[2]},
                            glm::quat(rotation[3], rotation[0], rotation[1], rotation[2])));
}

mmdb_status mmdb_crowd_place(mmdb_crowd* crowd, uint32_t character, const float position[3],
                             const float rotation[4]) {
  if (!crowd) return nullArgument("mmdb_crowd_place", "crowd");
  if (!position) return nullArgument("mmdb_crowd_place", "position");
  if (!rotation) return nullArgument("mmdb_crowd_place", "rotation");
  return result(crowd->crowd.place(character, {position[0], position[1], position[2]},
                                   glm::quat(rotation[3], rotation[0], rotation[1], rotation[2])));
}

mmdb_status mmdb_crowd_step(mmdb_crowd* crowd, float dt) {
  if (!crowd) return nullArgument("mmdb_crowd_step", "crowd");
  return result(crowd->crowd.step(dt));
}

mmdb_status mmdb_crowd_prepare_step(mmdb_crowd* crowd, float dt) {
  if (!crowd) return nullArgument("mmdb_crowd_prepare_step", "crowd");
  return result(crowd->crowd.prepareStep(dt));
}

mmdb_status mmdb_crowd_begin_step_range(mmdb_crowd* crowd, uint32_t first, uint32_t count) {
  if (!crowd) return nullArgument("mmdb_crowd_begin_step_range", "crowd");
  return result(crowd->crowd.beginStepRange(first, count));
}

mmdb_status mmdb_crowd_finish_begin_step(mmdb_crowd* crowd) {
  if (!crowd) return nullArgument("mmdb_crowd_finish_begin_step", "crowd");
  return result(crowd->crowd.finishBeginStep());
}

uint32_t mmdb_crowd_search_count(const mmdb_crowd* crowd) {
  return crowd ? uint32_t(crowd->crowd.requests().size()) : 0;
}

mmdb_status mmdb_crowd_search_range(mmdb_crowd* crowd, uint32_t first, uint32_t count,
                                    uint32_t worker) {
  if (!crowd) return nullArgument("mmdb_crowd_search_range", "crowd");
  return result(crowd->crowd.searchRange(first, count, worker));
}

mmdb_status mmdb_crowd_end_step_range(mmdb_crowd* crowd, uint32_t first, uint32_t count,
                                      uint32_t worker) {
  if (!crowd) return nullArgument("mmdb_crowd_end_step_range", "crowd");
  return result(crowd->crowd.endStepRange(first, count, worker));
}

mmdb_status mmdb_crowd_finish_step(mmdb_crowd* crowd) {
  if (!crowd) return nullArgument("mmdb_crowd_finish_step", "crowd");
  return result(crowd->crowd.finishStep());
}

mmdb_status mmdb_crowd_transform(const mmdb_crowd* crowd, uint32_t character, float position[3],
                                 float rotation[4]) {
  if (mmdb_status s = checkCharacter("mmdb_crowd_transform", crowd, character); s != MMDB_OK)
    return s;
  const mmdb::CrowdCharacter& c = crowd->crowd.characters()[character];
  if (position) {
    position[0] = c.achieved_position.x;
    position[1] = c.achieved_position.y;
    position[2] = c.achieved_position.z;
  }
  if (rotation) {
    rotation[0] = c.achieved_rotation.x;
    rotation[1] = c.achieved_rotation.y;
    rotation[2] = c.achieved_rotation.z;
    rotation[3] = c.achieved_rotation.w;
  }
  return MMDB_OK;
}

mmdb_status mmdb_crowd_root_motion(const mmdb_crowd* crowd, uint32_t character, float world[3],
                                   float local[3], float rotation[4]) {
  if (mmdb_status s = checkCharacter("mmdb_crowd_root_motion", crowd, character); s != MMDB_OK)
    return s;
  const mmdb::CrowdCharacter& c = crowd->crowd.characters()[character];
  for (int k = 0; k < 3; ++k) {
    if (world) world[k] = c.root_motion_world[k];
    if (local) local[k] = c.root_motion_local[k];
  }
  if (rotation) {
    rotation[0] = c.root_motion_rotation.x;
    rotation[1] = c.root_motion_rotation.y;
    rotation[2] = c.root_motion_rotation.z;
    rotation[3] = c.root_motion_rotation.w;
  }
  return MMDB_OK;
}

mmdb_status mmdb_crowd_model_pose(const mmdb_crowd* crowd, uint32_t character, float* positions,
                                  float* rotations) {
  if (mmdb_status s = checkCharacter("mmdb_crowd_model_pose", crowd, character); s != MMDB_OK)
    return s;
  copyPose(crowd, character, glm::vec3(0.f), glm::quat(1.f, 0.f, 0.f, 0.f), positions, rotations);
  return MMDB_OK;
}

mmdb_status mmdb_crowd_world_pose(const mmdb_crowd* crowd, uint32_t character, float* positions,
                                  float* rotations) {
  if (mmdb_status s = checkCharacter("mmdb_crowd_world_pose", crowd, character); s != MMDB_OK)
    return s;
  const mmdb::CrowdCharacter& c = crowd->crowd.characters()[character];
  copyPose(crowd, character, c.achieved_position, c.achieved_rotation, positions, rotations);
  return MMDB_OK;
}

mmdb_status mmdb_crowd_playing(const mmdb_crowd* crowd, uint32_t character, mmdb_playing* out) {
  if (mmdb_status s = checkCharacter("mmdb_crowd_playing", crowd, character); s != MMDB_OK)
    return s;
  if (!out) return nullArgument("mmdb_crowd_playing", "out");
  mmdb::Playing p;
  if (mmdb::Status s = crowd->crowd.playing(character, p); !s) return fail(s);
  out->playing = p.playing ? 1 : 0;
  out->clip = p.clip;
  out->frame = p.frame;
  out->clip_frame = p.clip_frame;
  out->clip_time = p.clip_time;
  out->range = p.range;
  out->tags = p.tags;
  out->tags_entered = p.tags_entered;
  out->tags_left = p.tags_left;
  out->contacts = p.contacts;
  out->locked_feet = p.locked_feet;
  out->blending_feet = p.blending_feet;
  out->search_reason = uint32_t(p.decision.reason);
  out->switched = p.decision.switched ? 1 : 0;
  out->continued = p.decision.continued ? 1 : 0;
  out->held = p.decision.held ? 1 : 0;
  out->winner = p.decision.frame;
  out->winner_cost = p.decision.cost;
  out->frame_playing = p.decision.playing;
  return MMDB_OK;
}

}  // extern "C"
