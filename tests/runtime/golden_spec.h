// The spec of tests/data/mmdb/mmdb-1.0.mmdb and the values a reader must find in it.
#pragma once

#include "synthetic_database.h"

namespace mmdb::test {

inline SyntheticSpec goldenSpec() {
  SyntheticSpec spec;
  spec.clips = 3;
  spec.frames_per_clip = 48;
  spec.joints = 3;
  spec.seed = 7;
  return spec;
}

}  // namespace mmdb::test
