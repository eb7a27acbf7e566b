// What the clip cache remembers of each source it hashed: the file's identity and times with its
// hash, so that a cook reads again only the sources that changed. Hashing every source is what a
// re-cook of unchanged clips would otherwise spend most of its time on.
#pragma once

#include "core/cooked_database.h"

#include <cstdint>
#include <optional>
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

  // What identifies one version of a file without reading it. The change time cannot be set by a
  // user: any write or metadata change moves it to the present.
  struct FileIdentity {
    uint64_t device = 0, inode = 0, size = 0;
    int64_t modified_ns = 0, changed_ns = 0;
    bool operator==(const FileIdentity& o) const = default;
    std::string text() const;
  };
  // hash() in two steps, for a caller that reads several sources side by side: look() finds the
  // stamp of an unchanged file (`stamped`), or else notes the file as it is before the read;
  // stamp() then records the hash read since, when the file did not change meanwhile.
  struct Look {
    std::optional<CookedSource> stamped;
    std::string absolute;
    std::optional<FileIdentity> before;
  };
  Look look(const std::string& path, const std::string& label) const;
  void stamp(const Look& look, const std::string& path, const CookedSource& source) const;

 private:
  std::string stampPath(const std::string& absolute) const;  // of a source's absolute path

  std::string folder_;
  double settle_seconds_;
};

}  // namespace mmdb::cook
