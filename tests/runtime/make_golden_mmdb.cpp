// Writes the regression database for the current schema version (tests/data/mmdb/mmdb-<v>.mmdb):
// a small synthetic database whose expected values the tests know, with the cost biases of
// setSyntheticBiases() (schema 2.1). Run once per released schema version and commit the output;
// never regenerate an old version's file. With --coded, the same
// database with its pose streams coded (segments of 64 frames): the .mmdb fuzzer's seed of a
// coded file.
#include "golden_spec.h"
#include "synthetic_database.h"

#include "compress/pose_compression.h"
#include "write/database_writer.h"

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  const bool coded = argc == 3 && std::string(argv[1]) == "--coded";
  // An output path that looks like an option (--help) is a mistyped command, not a file name.
  const bool path_is_option = argc >= 2 && argv[argc - 1][0] == '-';
  if ((argc != 2 && !coded) || path_is_option) {
    std::fprintf(stderr, "usage: %s [--coded] <out.mmdb>\n", argv[0]);
    return 2;
  }
  try {
    mmdb::cook::CookedDatabase db = mmdb::test::makeSyntheticDatabase(mmdb::test::goldenSpec());
    mmdb::test::setSyntheticBiases(db);
    if (coded) {
      mmdb::cook::CompressionSettings settings;
      settings.segment_frames = 64;
      mmdb::cook::compressPoses(db, settings, 1);
    }
    mmdb::cook::writeFileAtomically(argv[argc - 1], mmdb::cook::serializeDatabase(db));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
