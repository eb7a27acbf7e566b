// A database cooked from the Bandai Namco corpus (../shared/data/bandai-1), for tests and
// benchmarks that need real motion. Cooked once per process.
#pragma once

#include "synthetic_database.h"

#include <mmdb/database.h>

#include <array>
#include <string>
#include <vector>

namespace mmdb::test {

struct RealDatabase {
  mmdb::cook::CookedDatabase cooked;  // as the cook left it: raw pose streams, nothing coded
  mmdb::test::AlignedBytes bytes;
  mmdb::Database db;
};

// nullptr when the corpus is absent (why: the folder looked at, in *why_absent).
const RealDatabase* bandaiDatabase(std::string* why_absent);

// bandaiDatabase()'s cooked database, for tests that code or write it themselves.
const mmdb::cook::CookedDatabase* bandaiCookedDatabase(std::string* why_absent);

// bandai-1 cooked at `frame_rate` Hz, every clip also mirrored when `mirror`; cooked once per
// process for each pair. nullptr when the corpus is absent, as above.
const RealDatabase* bandaiDatabaseAt(double frame_rate, bool mirror, std::string* why_absent);

// bandai-1's forward clips alone (walk, run, dash: no walk-back, walk-left or walk-right), each
// also mirrored, at the cook's default rate: locomotion with no sideways, backward or standing
// clip. Cooked once per process; nullptr when absent, as above.
const RealDatabase* bandaiForwardDatabase(std::string* why_absent);

// A 300,000-frame database that does not repeat itself: bandai-1's clips once each, mirrored,
// at `frame_rate` Hz (bandaiDatabaseAt(frame_rate, true)), completed with
// completedWithSynthetic() (seed 36). Built once per process for each rate; nullptr when the
// corpus is absent, as above.
const RealDatabase* nonRepeatingDatabase(double frame_rate, std::string* why_absent);

// CMU subject 131's two BVH takes (../shared/data/cmu-bvh, 131_01 and 131_02), each also
// mirrored, at the cook's default rate: a skeleton whose first joint is the hips, arms that differ
// by up to half a turn between clips. Cooked once per process; nullptr when absent, as above.
const RealDatabase* cmuBvhDatabase(std::string* why_absent);

// bandai-1 cooked with these manifest weights (foot_position, foot_velocity, hip_velocity,
// trajectory_position, trajectory_direction); cooked once per process for each set.
const RealDatabase* bandaiDatabaseWeighted(const std::array<float, 5>& weights,
                                           std::string* why_absent);

// Queries a game asks: the pose part of a playing row and a trajectory predicted by the
// controller from that frame's root motion and a random stick. current[i] is the playing frame.
void makeGameQueries(const mmdb::Database& db, uint32_t count, uint32_t seed,
                     std::vector<std::vector<float>>& queries, std::vector<int32_t>& current);

}  // namespace mmdb::test
