// What the clip cache remembers of each source it hashed: the file's identity and times with its
// hash, so that a cook reads again only the sources that changed. Hashing every source is what a
// re-cook of unchanged clips would otherwise spend most of its time on.
#pragma once

#include "core/cooked_database.h"

#include <string>

namespace mmdb::cook {

class SourceStamps {
 public:
  // Stamps live in <folder>/sources/, one small text file per source path. A stamp is trusted
  // only when the file's device, inode, size, modification and change times are all as recorded.
  // A stamp is only recorded for a file last changed at least `settle_seconds` before it was
  // hashed, so that a write within the file system's time granularity cannot hide behind it.
  explicit SourceStamps(std::string folder, double settle_seconds = 2.0);

  // The source's hash, size and format (hashSource's), from its stamp when the file is unchanged,
  // else by reading it (and stamping it). `from_stamp` is set when the file was not read. Throws
  // InputError as hashSource does; a stamp that cannot be read or written is only a miss.
  CookedSource hash(const std::string& path, const std::string& label, bool* from_stamp) const;

 private:
  std::string stampPath(const std::string& absolute) const;  // of a source's absolute path

  std::string folder_;
  double settle_seconds_;
};

}  // namespace mmdb::cook
