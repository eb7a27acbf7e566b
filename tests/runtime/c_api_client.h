/* The C11 client of the C interface that tests/runtime/capi/test_c_api.cpp runs. */
#ifndef MMDB_TEST_C_API_CLIENT_H
#define MMDB_TEST_C_API_CLIENT_H

#include <mmdb/mmdb_c.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs `characters` characters of the default crowd for `steps` steps of 1/60 s, stick (x, z) of
 * step s and character c at sticks[2 * (s * characters + c)], and writes after each step the
 * world pose (3 floats a joint) and what each plays, at index s * characters + c. With `workers`
 * 0 each step is mmdb_crowd_step; with N > 0 the crowd has step_workers N and each step is split
 * into N ranges of characters (and of requests), run last range first. 0 on success, else 1 with
 * the message in `error`. */
int c_client_run(const char* path, uint32_t characters, uint32_t steps, uint32_t workers,
                 const float* sticks, float* world_positions, mmdb_playing* playing, char* error,
                 size_t error_size);
/* The joint of each role, role r at roles[r] (MMDB_ROLE_COUNT of them, -1 where the file names
 * none), with each role's name at names[r]; and the contact joints, contact i at contacts[i] (up
 * to `contacts_size`, the count in *contact_count), each read through the C interface. 0 on
 * success, else 1 with the message in `error`. */
int c_client_roles(const char* path, int32_t* roles, const char** names, int32_t* contacts,
                   uint32_t contacts_size, uint32_t* contact_count, char* error, size_t error_size);
/* Every bad argument (NULL pointers, an index out of range, bad settings, closing a database a
 * crowd plays) refused with its status and message. 0 when all were, else 1 and the first
 * difference in `error`. */
int c_client_bad_arguments(const char* path, char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
