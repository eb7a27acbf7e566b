// The whole CPU runtime: open a database, search it, drive a character, play poses.
#pragma once

#include "mmdb/controller.h"
#include "mmdb/crowd.h"
#include "mmdb/database.h"
#include "mmdb/motion_measures.h"
#include "mmdb/playback.h"
#include "mmdb/result.h"
#include "mmdb/search.h"
#include "mmdb/span.h"
#include "mmdb/stick_script.h"
#include "mmdb/synchronization.h"
