// Writes the regression database for the current schema version (tests/data/mmdb/mmdb-<v>.mmdb):
// a small synthetic database whose expected values the tests know. Run once per released schema
// version and commit the output; never regenerate an old version's file.
#include "golden_spec.h"
#include "synthetic_database.h"

#include "write/database_writer.h"

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <out.mmdb>\n", argv[0]);
    return 2;
  }
  try {
    const mm::CookedDatabase db = mmtest::makeSyntheticDatabase(mmtest::goldenSpec());
    mm::writeFileAtomically(argv[1], mm::serializeDatabase(db));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
