// Compiled as C++17: every public header of the runtime on its own, then all together.
#include <mmdb/controller.h>
#include <mmdb/crowd.h>
#include <mmdb/database.h>
#include <mmdb/mmdb.h>
#include <mmdb/mmdb_c.h>
#include <mmdb/playback.h>
#include <mmdb/result.h>
#include <mmdb/search.h>
#include <mmdb/span.h>
#include <mmdb/stick_script.h>

#if __cplusplus != 201703L
#error "this file must be compiled as C++17"
#endif

static_assert(sizeof(mmdb::Float4) == 16);
static_assert(sizeof(mmdb::RootFrame) == 64);
static_assert(sizeof(mmdb::MatchRange) == 16);
static_assert(std::is_nothrow_move_constructible_v<mmdb::Database>);
static_assert(!std::is_copy_constructible_v<mmdb::Database>);
