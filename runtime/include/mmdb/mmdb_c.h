/* The runtime's C interface: open a database, run a crowd of characters on the CPU, read their
 * poses and what each one plays. For engines and languages that bind C (C#, Rust, a plugin ABI)
 * rather than the C++ headers; it is mmdb::Database and mmdb::Crowd underneath, with the same
 * numbers.
 *
 *   mmdb_database* db = NULL;
 *   if (mmdb_database_open("loco.mmdb", &db) != MMDB_OK) { puts(mmdb_last_error()); return; }
 *   mmdb_crowd* crowd = NULL;
 *   mmdb_crowd_create(db, 100, NULL, &crowd);          // NULL settings: the defaults
 *   each frame:  mmdb_crowd_set_stick(crowd, i, x, z); mmdb_crowd_step(crowd, dt);
 *                mmdb_crowd_world_pose(crowd, i, positions, rotations);
 *   mmdb_crowd_destroy(crowd); mmdb_database_close(db);
 *
 * Every call that can fail returns an mmdb_status; on failure mmdb_last_error() gives the message
 * (naming the argument), the outputs are untouched and the crowd is as it was. A NULL pointer
 * where one is needed is MMDB_INVALID_ARGUMENT, never a crash. Quaternions are x, y, z, w;
 * positions metres, the world's Y up. A database must outlive its crowds: closing one that a
 * crowd still plays is refused. Threading as the C++ types: one crowd per thread at a time; any
 * number of threads may read one database.
 */
#ifndef MMDB_C_H
#define MMDB_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* mmdb::ErrorCode, value for value. */
typedef enum mmdb_status {
  MMDB_OK = 0,
  MMDB_IO_ERROR = 1,         /* the file could not be opened, sized or mapped */
  MMDB_NOT_AN_MMDB = 2,      /* too small, or the "MMDB" identifier is missing */
  MMDB_VERSION_MISMATCH = 3, /* another schema major version: re-cook the file */
  MMDB_MISALIGNED = 4,       /* a buffer or GPU array is not 16-byte aligned */
  MMDB_CORRUPT = 5,          /* the verifier refused the file */
  MMDB_INCONSISTENT = 6,     /* it parses, but counts, ranges, layout or values disagree */
  MMDB_INVALID_ARGUMENT = 7, /* a call was given arguments that do not fit */
  MMDB_NO_MATCH = 8,         /* a search found no frame */
  MMDB_DEVICE_ERROR = 9      /* (the GPU crowd's; not returned here) */
} mmdb_status;

/* The status's short name ("InvalidArgument", ...); "Unknown" for a value not listed. */
const char* mmdb_status_name(mmdb_status status);
/* The message of the last call on this thread that failed ("" before any); valid until the next
 * failing call on the thread. */
const char* mmdb_last_error(void);

typedef struct mmdb_database mmdb_database;
typedef struct mmdb_crowd mmdb_crowd;

/* Maps and verifies the file (mmdb::Database::open). *out is set only on success. */
mmdb_status mmdb_database_open(const char* path, mmdb_database** out);
/* Closes it; NULL is a no-op. MMDB_INVALID_ARGUMENT while crowds created on it exist (it then
 * stays open). */
mmdb_status mmdb_database_close(mmdb_database* db);

/* Counts and names; 0 or NULL for a NULL database or an index out of range. Names are
 * NUL-terminated and live as long as the database. */
uint32_t mmdb_database_frame_count(const mmdb_database* db);
float mmdb_database_frame_rate(const mmdb_database* db);
uint32_t mmdb_database_joint_count(const mmdb_database* db);
const char* mmdb_database_joint_name(const mmdb_database* db, uint32_t joint);
/* The joint's parent, -1 for a root (and for a NULL database or a joint out of range). */
int32_t mmdb_database_joint_parent(const mmdb_database* db, uint32_t joint);
uint32_t mmdb_database_clip_count(const mmdb_database* db);
const char* mmdb_database_clip_name(const mmdb_database* db, uint32_t clip);
uint32_t mmdb_database_tag_count(const mmdb_database* db);
const char* mmdb_database_tag_name(const mmdb_database* db, uint32_t bit);

/* What a joint does for the cook and the crowd (mmdb::Role, value for value): the joints the
 * manifest's [skeleton] roles or preset named, which the cook stores in the file. */
typedef enum mmdb_role {
  MMDB_ROLE_HIPS = 0,
  MMDB_ROLE_LEFT_FOOT = 1, /* the ankle above the left toe */
  MMDB_ROLE_RIGHT_FOOT = 2,
  MMDB_ROLE_LEFT_TOE = 3, /* the joint whose contact foot locking holds */
  MMDB_ROLE_RIGHT_TOE = 4,
  MMDB_ROLE_ROOT_POSITION = 5, /* its ground projection is the simulation root's position */
  MMDB_ROLE_FACING = 6         /* its local facing axis gives the simulation root's facing */
} mmdb_role;
#define MMDB_ROLE_COUNT 7u /* the roles are 0 to MMDB_ROLE_COUNT - 1 */

/* The role as a manifest spells it ("hips", "left_foot", "right_foot", "left_toe", "right_toe",
 * "root_position", "facing"); "unknown" for a value not listed. */
const char* mmdb_role_name(mmdb_role role);
/* The joint that plays `role` (an index for mmdb_database_joint_name and the poses), in *joint;
 * -1 when the file names no joint for it (the roles are optional in the file: a database made by
 * other tools may name some or none). MMDB_INVALID_ARGUMENT for a NULL db or joint, or a role
 * not listed; *joint is then untouched. */
mmdb_status mmdb_database_role_joint(const mmdb_database* db, mmdb_role role, int32_t* joint);
/* The contact joints (the toes the cook measured contacts on), in the order of
 * mmdb_playing::contacts' bits: bit i is contact joint i. The count is 0 for a NULL database or a
 * file without contacts; the joint -1 for a NULL database or an index out of range. */
uint32_t mmdb_database_contact_joint_count(const mmdb_database* db);
int32_t mmdb_database_contact_joint(const mmdb_database* db, uint32_t contact);

/* mmdb::CrowdSettings, field for field (booleans as 0 or 1); docs/runtime.md says what each
 * does. Fill one with mmdb_crowd_settings_default() or _reference() and change what you need. */
typedef struct mmdb_crowd_settings {
  uint32_t search_interval_ticks;
  uint32_t stagger_phases;
  uint32_t start_stagger_intervals;
  float transition_cost;
  int32_t neighbourhood_frames;
  float max_drift;
  float inertialization_halflife;
  float inertialization_rate_halflife;
  float inertialization_threshold;
  float transition_speed_limit;
  float controller_halflife;
  float max_speed;
  int32_t bounds_pruning;
  float continue_window;
  float jump_cooldown;
  int32_t search_when_settled;
  float settle_velocity_change;
  float settle_rotation_change;
  float range_end_margin;
  int32_t range_end_moves_on;
  int32_t start_playing; /* the reference controller's rules (reference() turns them on) */
  float search_interval_seconds;
  float settle_search_interval;
  int32_t search_at_clip_end;
  int32_t unrotated_angular_offsets;
  int32_t predict_before_update;
  int32_t show_next_frame;
  int32_t reference_arithmetic;
  int32_t mirrored_tag_events;
  int32_t foot_locking;
  float foot_unlock_radius;
  float foot_unlock_halflife;
  float ik_foot_height;
  float ik_toe_length;
  float ik_max_length_buffer;
  uint32_t step_workers; /* the split step's searches and ends that may run at once (below) */
  /* mmdb::CrowdSettings::synchronization (mmdb/synchronization.h), field for field */
  uint32_t synchronization; /* MMDB_SYNC_NONE, _CHARACTER_FOLLOWS (default), _CONTROLLER_FOLLOWS */
  float sync_position_halflife;
  float sync_rotation_halflife;
  float sync_position_ratio;
  float sync_rotation_ratio;
  float sync_max_distance;
  float sync_max_angle;
  float sync_foot_reach;
  float sync_hard_distance;
  float sync_rate_min; /* play-rate matching (1 and 1: off) */
  float sync_rate_max;
  float sync_stride_min; /* warping: stride bounds (1 and 1: off) and the most the way the clip */
  float sync_stride_max; /* goes is turned, rad (0: off); its easing half-life, s */
  float sync_warp_angle;
  float sync_warp_halflife;
} mmdb_crowd_settings;

/* mmdb_crowd_settings::synchronization: mmdb::Synchronization's values. */
#define MMDB_SYNC_NONE 0u
#define MMDB_SYNC_CHARACTER_FOLLOWS 1u
#define MMDB_SYNC_CONTROLLER_FOLLOWS 2u

/* mmdb::CrowdSettings{}, CrowdSettings::reference() and referenceController(); a NULL `out` is
 * ignored. */
void mmdb_crowd_settings_default(mmdb_crowd_settings* out);
void mmdb_crowd_settings_reference(mmdb_crowd_settings* out);
void mmdb_crowd_settings_reference_controller(mmdb_crowd_settings* out);

/* A crowd of `characters` characters playing `db` (mmdb::Crowd::create), with `settings` (NULL:
 * the defaults). *out is set only on success. */
mmdb_status mmdb_crowd_create(mmdb_database* db, uint32_t characters,
                              const mmdb_crowd_settings* settings, mmdb_crowd** out);
/* NULL is a no-op. */
void mmdb_crowd_destroy(mmdb_crowd* crowd);
uint32_t mmdb_crowd_character_count(const mmdb_crowd* crowd); /* 0 for NULL */
uint32_t mmdb_crowd_joint_count(const mmdb_crowd* crowd);     /* 0 for NULL */

/* Inputs of the next step, kept until changed (mmdb::Crowd's setters). */
mmdb_status mmdb_crowd_set_stick(mmdb_crowd* crowd, uint32_t character, float x, float z);
/* World m/s and a direction to face (y ignored; a zero facing keeps the facing), 3 floats each. */
mmdb_status mmdb_crowd_set_input(mmdb_crowd* crowd, uint32_t character,
                                 const float desired_velocity[3], const float desired_facing[3]);
mmdb_status mmdb_crowd_set_tag_filter(mmdb_crowd* crowd, uint32_t character, uint64_t required,
                                      uint64_t excluded);
mmdb_status mmdb_crowd_force_search(mmdb_crowd* crowd, uint32_t character);
/* Puts the character at `position` (3 floats) facing the turn about +Y of `rotation` (x, y, z,
 * w) at once, its simulation root moved with it, no transition, held feet let go
 * (mmdb::Crowd::teleport). Between steps. */
mmdb_status mmdb_crowd_teleport(mmdb_crowd* crowd, uint32_t character, const float position[3],
                                const float rotation[4]);
/* Places the character where the game's capsule went (mmdb::Crowd::place): the placement alone,
 * the simulation and the feet held untouched. Between steps. */
mmdb_status mmdb_crowd_place(mmdb_crowd* crowd, uint32_t character, const float position[3],
                             const float rotation[4]);
/* One step of dt seconds (finite, >= 0). */
mmdb_status mmdb_crowd_step(mmdb_crowd* crowd, float dt);

/* The step split for a job system, as mmdb::Crowd's (docs/runtime.md "A step over a job system"):
 *   mmdb_crowd_prepare_step(crowd, dt);                       one thread
 *   mmdb_crowd_begin_step_range(crowd, first, count);         any threads, each character once
 *   mmdb_crowd_finish_begin_step(crowd);                      one thread
 *   mmdb_crowd_search_range(crowd, first, count, worker);     up to step_workers threads, over
 *                                                             the requests [0, search_count)
 *   mmdb_crowd_end_step_range(crowd, first, count, worker);   up to step_workers threads, each
 *                                                             character once
 *   mmdb_crowd_finish_step(crowd);                            one thread
 * The same poses, bit for bit, as mmdb_crowd_step in any split and order. A range outside the
 * crowd (or the requests), a worker of step_workers or more, an overlap or a part out of order
 * is refused with a status, touching nothing. */
mmdb_status mmdb_crowd_prepare_step(mmdb_crowd* crowd, float dt);
mmdb_status mmdb_crowd_begin_step_range(mmdb_crowd* crowd, uint32_t first, uint32_t count);
mmdb_status mmdb_crowd_finish_begin_step(mmdb_crowd* crowd);
uint32_t mmdb_crowd_search_count(const mmdb_crowd* crowd); /* this step's requests; 0 for NULL */
mmdb_status mmdb_crowd_search_range(mmdb_crowd* crowd, uint32_t first, uint32_t count,
                                    uint32_t worker);
mmdb_status mmdb_crowd_end_step_range(mmdb_crowd* crowd, uint32_t first, uint32_t count,
                                      uint32_t worker);
mmdb_status mmdb_crowd_finish_step(mmdb_crowd* crowd);

/* The transform that places the character's pose in the world, read after the step (the
 * achieved position, 3 floats, and rotation, 4); either output may be NULL. */
mmdb_status mmdb_crowd_transform(const mmdb_crowd* crowd, uint32_t character, float position[3],
                                 float rotation[4]);
/* The root motion of the last step (CrowdCharacter::root_motion_*): how far the placement moved
 * in the world (3 floats) and in the character's frame before the step (3), and how it turned
 * (4, x y z w); any output may be NULL. */
mmdb_status mmdb_crowd_root_motion(const mmdb_crowd* crowd, uint32_t character, float world[3],
                                   float local[3], float rotation[4]);
/* The pose shown after the last step, joint_count joints: in model space (the character's own
 * frame, as mmdb::Crowd::modelTranslations/modelRotations), or in the world (placed by the
 * transform above). `positions` holds 3 floats a joint, `rotations` 4; either may be NULL. */
mmdb_status mmdb_crowd_model_pose(const mmdb_crowd* crowd, uint32_t character, float* positions,
                                  float* rotations);
mmdb_status mmdb_crowd_world_pose(const mmdb_crowd* crowd, uint32_t character, float* positions,
                                  float* rotations);

/* mmdb::Playing and its Decision: what the character shows after the last step. */
typedef struct mmdb_playing {
  int32_t playing;       /* a first search has picked a frame */
  uint32_t clip;         /* clip of the pose shown */
  uint32_t frame;        /* its global frame */
  uint32_t clip_frame;   /* the same from the clip's first frame */
  float clip_time;       /* clip-local seconds it was sampled at */
  int32_t range;         /* matchable range holding the frame, -1 in none */
  uint64_t tags;         /* that range's tags (in none, the clip's) */
  uint64_t tags_entered; /* tags the step gained */
  uint64_t tags_left;    /* tags the step lost */
  uint32_t contacts;     /* the frame's contact bits (bit i: mmdb_database_contact_joint(i)) */
  uint32_t locked_feet;  /* bit per leg (0 left, 1 right): the toe is held */
  uint32_t blending_feet;
  uint32_t search_reason; /* mmdb::SearchReason: 0 none, 1 start, 2 range end, 3 forced,
                             4 periodic */
  int32_t switched;       /* the step switched to `winner`, inertialized */
  int32_t continued;      /* the winner was played on to (the continuing rule) */
  int32_t held;           /* the winner waited for the jump cooldown */
  uint32_t winner;        /* the last search's winner, 0xFFFFFFFF when it found none */
  float winner_cost;
  uint32_t frame_playing; /* the global frame playing after the step */
} mmdb_playing;

mmdb_status mmdb_crowd_playing(const mmdb_crowd* crowd, uint32_t character, mmdb_playing* out);

#ifdef __cplusplus
}
#endif

#endif /* MMDB_C_H */
