/* A C program's use of the runtime through its C interface (mmdb/mmdb_c.h), built by a project
 * outside this one with a C compiler alone: open a cooked file, name the joints of its roles, run
 * a crowd of two characters for a second and read their world poses and what they play. */
#include <mmdb/mmdb_c.h>

#include <stdio.h>

static int failed(const char* call, mmdb_status status) {
  fprintf(stderr, "error: %s: %s: %s\n", call, mmdb_status_name(status), mmdb_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mmdb_consumer FILE.mmdb\n");
    return 2;
  }
  mmdb_database* db = NULL;
  mmdb_status s = mmdb_database_open(argv[1], &db);
  if (s != MMDB_OK) return failed("mmdb_database_open", s);
  const uint32_t joints = mmdb_database_joint_count(db);
  printf("C program: opened %u frames, %u joints\n", mmdb_database_frame_count(db), joints);
  for (uint32_t r = 0; r < MMDB_ROLE_COUNT; ++r) {
    int32_t joint = -1;
    s = mmdb_database_role_joint(db, (mmdb_role)r, &joint);
    if (s != MMDB_OK) return failed("mmdb_database_role_joint", s);
    if (joint >= 0)
      printf("  role %s: joint %d (%s)\n", mmdb_role_name((mmdb_role)r), joint,
             mmdb_database_joint_name(db, (uint32_t)joint));
  }
  mmdb_crowd_settings settings;
  mmdb_crowd_settings_default(&settings);
  settings.foot_locking = 0; /* the file may name no toes to hold */
  mmdb_crowd* crowd = NULL;
  s = mmdb_crowd_create(db, 2, &settings, &crowd);
  if (s != MMDB_OK) return failed("mmdb_crowd_create", s);
  float positions[3 * 256];
  mmdb_playing playing;
  int steps = 0;
  for (; steps < 60 && s == MMDB_OK; ++steps) {
    s = mmdb_crowd_set_stick(crowd, 1, steps < 30 ? 0.0f : 0.7f, 1.0f);
    if (s == MMDB_OK) s = mmdb_crowd_step(crowd, 1.0f / 60.0f);
    for (uint32_t c = 0; c < 2 && s == MMDB_OK && joints <= 256; ++c)
      s = mmdb_crowd_world_pose(crowd, c, positions, NULL);
  }
  if (s == MMDB_OK) s = mmdb_crowd_playing(crowd, 1, &playing);
  if (s != MMDB_OK) {
    mmdb_crowd_destroy(crowd);
    mmdb_database_close(db);
    return failed("the crowd's step", s);
  }
  printf("C program: stepped %d times; character 1 plays global frame %u of clip %s\n", steps,
         playing.frame, mmdb_database_clip_name(db, playing.clip));
  mmdb_crowd_destroy(crowd);
  s = mmdb_database_close(db);
  if (s != MMDB_OK) return failed("mmdb_database_close", s);
  return playing.playing ? 0 : 1;
}
