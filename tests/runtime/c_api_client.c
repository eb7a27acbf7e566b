/* A program's use of the C interface, compiled as C11 (tests/runtime/capi/test_c_api.cpp runs it
 * and compares with the C++ crowd): open a database, run a crowd on given sticks, read the world
 * poses and what each character plays; and every bad argument refused with a status. */
#include "c_api_client.h"

#include <mmdb/mmdb_c.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static int report(char* error, size_t error_size, const char* what, mmdb_status status) {
  snprintf(error, error_size, "%s: %s: %s", what, mmdb_status_name(status), mmdb_last_error());
  return 1;
}

/* Range w of `workers` ranges that cut [0, n) into near equal parts. */
static void cut(uint32_t n, uint32_t workers, uint32_t w, uint32_t* first, uint32_t* count) {
  *first = (uint32_t)((uint64_t)n * w / workers);
  *count = (uint32_t)((uint64_t)n * (w + 1) / workers) - *first;
}

/* One step in parts, each part's ranges last first. */
static mmdb_status split_step(mmdb_crowd* crowd, uint32_t characters, uint32_t workers, float dt) {
  uint32_t first, count, w;
  mmdb_status s = mmdb_crowd_prepare_step(crowd, dt);
  for (w = workers; w-- > 0 && s == MMDB_OK;) {
    cut(characters, workers, w, &first, &count);
    s = mmdb_crowd_begin_step_range(crowd, first, count);
  }
  if (s == MMDB_OK) s = mmdb_crowd_finish_begin_step(crowd);
  const uint32_t searches = mmdb_crowd_search_count(crowd);
  for (w = workers; w-- > 0 && s == MMDB_OK;) {
    cut(searches, workers, w, &first, &count);
    s = mmdb_crowd_search_range(crowd, first, count, w);
  }
  for (w = workers; w-- > 0 && s == MMDB_OK;) {
    cut(characters, workers, w, &first, &count);
    s = mmdb_crowd_end_step_range(crowd, first, count, w);
  }
  if (s == MMDB_OK) s = mmdb_crowd_finish_step(crowd);
  return s;
}

int c_client_run(const char* path, uint32_t characters, uint32_t steps, uint32_t workers,
                 const float* sticks, float* world_positions, mmdb_playing* playing, char* error,
                 size_t error_size) {
  mmdb_database* db = NULL;
  mmdb_status s = mmdb_database_open(path, &db);
  if (s != MMDB_OK) return report(error, error_size, "open", s);
  mmdb_crowd* crowd = NULL;
  mmdb_crowd_settings settings;
  mmdb_crowd_settings_default(&settings);
  if (workers > 0) settings.step_workers = workers;
  s = mmdb_crowd_create(db, characters, &settings, &crowd);
  if (s != MMDB_OK) {
    mmdb_database_close(db);
    return report(error, error_size, "create", s);
  }
  const uint32_t joints = mmdb_crowd_joint_count(crowd);
  int failed = 0;
  for (uint32_t step = 0; step < steps && !failed; ++step) {
    for (uint32_t c = 0; c < characters && !failed; ++c) {
      const float* stick = sticks + 2 * ((size_t)step * characters + c);
      s = mmdb_crowd_set_stick(crowd, c, stick[0], stick[1]);
      if (s != MMDB_OK) failed = report(error, error_size, "set_stick", s);
    }
    if (!failed) {
      s = workers > 0 ? split_step(crowd, characters, workers, 1.0f / 60.0f)
                      : mmdb_crowd_step(crowd, 1.0f / 60.0f);
      if (s != MMDB_OK) failed = report(error, error_size, "step", s);
    }
    for (uint32_t c = 0; c < characters && !failed; ++c) {
      const size_t at = (size_t)step * characters + c;
      s = mmdb_crowd_world_pose(crowd, c, world_positions + 3 * joints * at, NULL);
      if (s == MMDB_OK) s = mmdb_crowd_playing(crowd, c, playing + at);
      if (s != MMDB_OK) failed = report(error, error_size, "read", s);
    }
  }
  mmdb_crowd_destroy(crowd);
  s = mmdb_database_close(db);
  if (!failed && s != MMDB_OK) failed = report(error, error_size, "close", s);
  return failed;
}

int c_client_roles(const char* path, int32_t* roles, const char** names, int32_t* contacts,
                   uint32_t contacts_size, uint32_t* contact_count, char* error,
                   size_t error_size) {
  mmdb_database* db = NULL;
  mmdb_status s = mmdb_database_open(path, &db);
  if (s != MMDB_OK) return report(error, error_size, "open", s);
  int failed = 0;
  for (uint32_t r = 0; r < MMDB_ROLE_COUNT && !failed; ++r) {
    s = mmdb_database_role_joint(db, (mmdb_role)r, &roles[r]);
    if (s != MMDB_OK) failed = report(error, error_size, mmdb_role_name((mmdb_role)r), s);
    names[r] = mmdb_role_name((mmdb_role)r);
  }
  *contact_count = mmdb_database_contact_joint_count(db);
  for (uint32_t i = 0; i < *contact_count && i < contacts_size; ++i)
    contacts[i] = mmdb_database_contact_joint(db, i);
  mmdb_database_close(db);
  return failed;
}

/* Checks one refused call: the status and the start of the message. */
static int refused(mmdb_status got, mmdb_status want, const char* message, char* error,
                   size_t error_size) {
  if (got == want && strncmp(mmdb_last_error(), message, strlen(message)) == 0) return 0;
  snprintf(error, error_size, "wanted %s \"%s...\", got %s \"%s\"", mmdb_status_name(want), message,
           mmdb_status_name(got), mmdb_last_error());
  return 1;
}

int c_client_bad_arguments(const char* path, char* error, size_t error_size) {
  mmdb_database* db = NULL;
  mmdb_crowd* crowd = NULL;
  float v[3] = {0.0f, 0.0f, 0.0f};
  mmdb_playing p;
  int bad = 0;
  bad |= refused(mmdb_database_open(NULL, &db), MMDB_INVALID_ARGUMENT,
                 "mmdb_database_open: path is NULL", error, error_size);
  bad |= refused(mmdb_database_open(path, NULL), MMDB_INVALID_ARGUMENT,
                 "mmdb_database_open: out is NULL", error, error_size);
  bad |=
      refused(mmdb_database_open("/nonexistent/x.mmdb", &db), MMDB_IO_ERROR, "", error, error_size);
  if (bad || db != NULL) return 1;
  mmdb_status s = mmdb_database_open(path, &db);
  if (s != MMDB_OK) return report(error, error_size, "open", s);
  bad |= refused(mmdb_crowd_create(NULL, 2, NULL, &crowd), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_create: db is NULL", error, error_size);
  bad |= refused(mmdb_crowd_create(db, 0, NULL, &crowd), MMDB_INVALID_ARGUMENT, "Crowd::create",
                 error, error_size);
  mmdb_crowd_settings settings;
  mmdb_crowd_settings_default(&settings);
  settings.inertialization_halflife = -1.0f;
  bad |= refused(mmdb_crowd_create(db, 2, &settings, &crowd), MMDB_INVALID_ARGUMENT,
                 "Crowd::create: inertialization_halflife -1 s", error, error_size);
  if (bad || crowd != NULL) return 1;
  s = mmdb_crowd_create(db, 2, NULL, &crowd);
  if (s != MMDB_OK) return report(error, error_size, "create", s);
  bad |= refused(mmdb_database_close(db), MMDB_INVALID_ARGUMENT,
                 "mmdb_database_close: 1 crowds still play the database", error, error_size);
  bad |= refused(mmdb_crowd_step(NULL, 0.1f), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_step: crowd is NULL", error, error_size);
  bad |= refused(mmdb_crowd_step(crowd, -1.0f), MMDB_INVALID_ARGUMENT, "", error, error_size);
  bad |= refused(mmdb_crowd_set_stick(crowd, 2, 0.0f, 1.0f), MMDB_INVALID_ARGUMENT,
                 "setStick: character 2 is out of range (the crowd has 2 characters)", error,
                 error_size);
  bad |= refused(mmdb_crowd_set_input(crowd, 0, NULL, v), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_set_input: desired_velocity is NULL", error, error_size);
  bad |= refused(mmdb_crowd_playing(crowd, 0, NULL), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_playing: out is NULL", error, error_size);
  bad |= refused(mmdb_crowd_playing(crowd, 5, &p), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_playing: character 5 is out of range (the crowd has 2 characters)",
                 error, error_size);
  const float nan_position[3] = {0.0f, NAN, 0.0f};
  const float level[4] = {0.0f, 0.0f, 0.0f, 1.0f};
  bad |= refused(mmdb_crowd_teleport(crowd, 0, nan_position, level), MMDB_INVALID_ARGUMENT,
                 "teleport: character 0's position (0, nan, 0) is not finite", error, error_size);
  bad |= refused(mmdb_crowd_teleport(crowd, 0, v, NULL), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_teleport: rotation is NULL", error, error_size);
  if (mmdb_crowd_teleport(crowd, 1, v, level) != MMDB_OK) {
    snprintf(error, error_size, "a valid teleport failed: %s", mmdb_last_error());
    bad = 1;
  }
  float moved[3] = {1.0f, 1.0f, 1.0f}, turned[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  if (mmdb_crowd_root_motion(crowd, 0, moved, NULL, turned) != MMDB_OK || moved[0] != 0.0f ||
      turned[3] != 1.0f) {
    snprintf(error, error_size, "a crowd that has not stepped moved: %s", mmdb_last_error());
    bad = 1;
  }
  if (mmdb_crowd_place(crowd, 0, v, level) != MMDB_OK) {
    snprintf(error, error_size, "a valid place failed: %s", mmdb_last_error());
    bad = 1;
  }
  bad |= refused(mmdb_crowd_place(crowd, 0, NULL, level), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_place: position is NULL", error, error_size);
  bad |= refused(mmdb_crowd_root_motion(crowd, 2, NULL, NULL, NULL), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_root_motion: character 2 is out of range (the crowd has 2 characters)",
                 error, error_size);
  bad |= refused(mmdb_crowd_world_pose(NULL, 0, NULL, NULL), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_world_pose: crowd is NULL", error, error_size);
  /* The roles: NULL pointers and a value that is no role, the output untouched. */
  int32_t joint = 12345;
  bad |= refused(mmdb_database_role_joint(NULL, MMDB_ROLE_LEFT_TOE, &joint), MMDB_INVALID_ARGUMENT,
                 "mmdb_database_role_joint: db is NULL", error, error_size);
  bad |= refused(mmdb_database_role_joint(db, MMDB_ROLE_LEFT_TOE, NULL), MMDB_INVALID_ARGUMENT,
                 "mmdb_database_role_joint: joint is NULL", error, error_size);
  bad |= refused(mmdb_database_role_joint(db, (mmdb_role)7, &joint), MMDB_INVALID_ARGUMENT,
                 "mmdb_database_role_joint: role 7 is not a role (the roles are 0 to 6, "
                 "MMDB_ROLE_HIPS to MMDB_ROLE_FACING)",
                 error, error_size);
  bad |= refused(mmdb_database_role_joint(db, (mmdb_role)-1, &joint), MMDB_INVALID_ARGUMENT,
                 "mmdb_database_role_joint: role -1 is not a role", error, error_size);
  if (joint != 12345 || strcmp(mmdb_role_name((mmdb_role)7), "unknown") != 0 ||
      strcmp(mmdb_role_name((mmdb_role)-1), "unknown") != 0 ||
      mmdb_database_contact_joint_count(NULL) != 0 || mmdb_database_contact_joint(NULL, 0) != -1 ||
      mmdb_database_contact_joint(db, mmdb_database_contact_joint_count(db)) != -1) {
    snprintf(error, error_size,
             "a refused role call wrote its output, or a role name or contact "
             "query out of range did not answer \"unknown\", 0 or -1");
    bad = 1;
  }
  if (mmdb_database_joint_name(db, mmdb_database_joint_count(db)) != NULL ||
      mmdb_database_joint_parent(NULL, 0) != -1 || mmdb_crowd_character_count(NULL) != 0 ||
      strcmp(mmdb_status_name((mmdb_status)99), "Unknown") != 0) {
    snprintf(error, error_size, "an out-of-range or NULL query did not answer 0, -1 or NULL");
    bad = 1;
  }
  /* The split step: parts out of order, ranges and workers out of range. */
  bad |= refused(mmdb_crowd_prepare_step(NULL, 0.1f), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_prepare_step: crowd is NULL", error, error_size);
  bad |= refused(mmdb_crowd_search_range(NULL, 0, 0, 0), MMDB_INVALID_ARGUMENT,
                 "mmdb_crowd_search_range: crowd is NULL", error, error_size);
  bad |= refused(mmdb_crowd_begin_step_range(crowd, 0, 2), MMDB_INVALID_ARGUMENT,
                 "beginStepRange: no step is being begun (call prepareStep)", error, error_size);
  if (mmdb_crowd_prepare_step(crowd, 0.1f) != MMDB_OK) {
    snprintf(error, error_size, "prepare_step failed: %s", mmdb_last_error());
    return 1;
  }
  bad |=
      refused(mmdb_crowd_begin_step_range(crowd, 1, 2), MMDB_INVALID_ARGUMENT,
              "beginStepRange: characters [1, 1 + 2) are outside the crowd's 2", error, error_size);
  bad |= refused(mmdb_crowd_finish_begin_step(crowd), MMDB_INVALID_ARGUMENT,
                 "finishBeginStep: character 0 is in no range", error, error_size);
  if (mmdb_crowd_begin_step_range(crowd, 0, 2) != MMDB_OK ||
      mmdb_crowd_finish_begin_step(crowd) != MMDB_OK) {
    snprintf(error, error_size, "a whole beginning failed: %s", mmdb_last_error());
    return 1;
  }
  bad |= refused(mmdb_crowd_search_range(crowd, 0, mmdb_crowd_search_count(crowd) + 1, 0),
                 MMDB_INVALID_ARGUMENT, "searchRange: requests [0, 0 + ", error, error_size);
  bad |= refused(mmdb_crowd_search_range(crowd, 0, 0, 1), MMDB_INVALID_ARGUMENT,
                 "searchRange: worker 1 of 1 (CrowdSettings::step_workers)", error, error_size);
  bad |= refused(mmdb_crowd_end_step_range(crowd, 0, 2, 1), MMDB_INVALID_ARGUMENT,
                 "endStepRange: worker 1 of 1", error, error_size);
  if (mmdb_crowd_search_range(crowd, 0, mmdb_crowd_search_count(crowd), 0) != MMDB_OK ||
      mmdb_crowd_end_step_range(crowd, 0, 2, 0) != MMDB_OK ||
      mmdb_crowd_finish_step(crowd) != MMDB_OK) {
    snprintf(error, error_size, "a whole split step failed: %s", mmdb_last_error());
    return 1;
  }
  bad |= refused(mmdb_crowd_finish_step(crowd), MMDB_INVALID_ARGUMENT, "finishStep: ", error,
                 error_size);
  if (mmdb_crowd_search_count(NULL) != 0) {
    snprintf(error, error_size, "mmdb_crowd_search_count(NULL) is not 0");
    bad = 1;
  }
  mmdb_crowd_destroy(crowd);
  mmdb_crowd_destroy(NULL);
  s = mmdb_database_close(db);
  if (!bad && s != MMDB_OK) bad = report(error, error_size, "close", s);
  if (!bad && mmdb_database_close(NULL) != MMDB_OK) bad = 1;
  return bad;
}
