// Where a cook finds clip parts instead of cooking them (cook/cook_database.h's ClipStore):
//  - ClipCacheFolder: a content-addressed cache folder, shared by cooks and by processes;
//  - ClipFileList: the .mmclip files `mmcook link` is given, one per clip of the manifest.
#pragma once

#include "cache/clip_file.h"
#include "cache/source_stamps.h"
#include "cook/cook_database.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace mmdb::cook {

// <folder>/<2 hex digits>/<16 hex digits>.mmclip, named by a hash of the key; the file also holds
// the whole key, so a hit is an exact match. A database's pose coding is kept the same way, as
// an .mmposes file named by its poseCodingKey, so a cook of the same clips with other weights,
// tags or ranges codes no pose; the kKeptPoseCodings most recently used codings are kept, older
// ones deleted. And it remembers each source's hash (SourceStamps), so such a cook
// reads no source either. Entries are written atomically (a concurrent cook
// reads the old file or the new one), and one that is damaged, foreign or from another cooker is
// refused with a warning and cooked again. Deleting the folder at any time is safe.
class ClipCacheFolder : public ClipStore {
 public:
  static constexpr size_t kKeptPoseCodings = 8;

  // Creates the folder when missing. Throws InputError naming it when it cannot be created or
  // written to. `stamp_settle_seconds`: SourceStamps'.
  explicit ClipCacheFolder(std::string folder, double stamp_settle_seconds = 2.0);
  std::optional<ClipPart> find(const std::string& key, int index, bool* refused,
                               PartPoses poses) override;
  void keep(const std::string& key, int index, const ClipPart& part) override;
  std::optional<StoredPoseCoding> findPoses(const std::string& key, bool* refused) override;
  void keepPoses(const std::string& key, uint32_t frames, uint32_t joints,
                 const CookedPoseCoding& coding) override;
  CookedSource hashSourceFile(const std::string& path, const std::string& label,
                              bool* unread) override;
  // The stamped ones unread, the others read side by side and stamped.
  void hashSourceFiles(const std::vector<const ClipSpec*>& specs, CookedSource* out,
                       bool* unread) override;

  // The entries refused and the ones that could not be kept since the last call, sorted.
  std::vector<Warning> takeWarnings() override;
  // Why clips were cooked again: for each cause (the setting or file that changed since the
  // clip's last part was kept, "new clip" for a clip never kept), how many clips. Sorted by count,
  // then cause.
  std::vector<std::pair<std::string, int>> missCauses() const override;

  const std::string& folder() const { return folder_; }
  // `extension`: ".mmclip" for a clip's part, ".mmposes" for a pose coding.
  std::string entryPath(const std::string& key, const char* extension = ".mmclip") const;

 private:
  void keepEntry(const std::string& path, std::span<const std::span<const uint8_t>> pieces,
                 const char* what);
  void prunePoseCodings();
  void note(Warning w);
  // <folder>/last/<hash>.key: the key a clip of that name was last kept under.
  std::string lastKeyPath(const std::string& key) const;
  void noteMiss(const std::string& key);

  std::string folder_;
  SourceStamps stamps_;
  std::mutex warn_mutex_;
  bool keep_failed_ = false;  // warn once when the folder fills up or goes away mid-cook
  std::vector<Warning> warnings_;
  mutable std::mutex miss_mutex_;
  std::map<std::string, int> miss_causes_;
};

// The default cache folder for manifest cooks: $MMCOOK_CACHE_DIR, else $XDG_CACHE_HOME/mmcook,
// else $HOME/.cache/mmcook; "" when none of them is set.
std::string defaultClipCacheFolder();

// The parts of a link: files[i] must hold clip i's part, cooked under the key the manifest gives
// now. Anything else is an InputError naming the file and what differs. The parts vouch for their
// sources (recordedSource): a link reads no source file, so a build checks the sources' freshness
// by re-running cook-clip when one changes.
// With a pose store (a cache folder), the link finds and keeps the database's pose coding there:
// a link after a weight edit codes no pose.
class ClipFileList : public ClipStore {
 public:
  ClipFileList(std::vector<std::string> files, std::vector<std::string> clip_names,
               std::unique_ptr<ClipCacheFolder> pose_store = nullptr);
  std::optional<ClipPart> find(const std::string& key, int index, bool* refused,
                               PartPoses poses) override;
  void keep(const std::string& key, int index, const ClipPart& part) override;
  std::optional<CookedSource> recordedSource(int index) override;
  std::optional<StoredPoseCoding> findPoses(const std::string& key, bool* refused) override;
  void keepPoses(const std::string& key, uint32_t frames, uint32_t joints,
                 const CookedPoseCoding& coding) override;
  std::vector<Warning> takeWarnings() override;

 private:
  // Each file is read once, without its poses until they are needed; one thread per index at a
  // time.
  ClipFile& load(int index, PartPoses poses);

  std::vector<std::string> files_;
  std::vector<std::string> clip_names_;
  std::vector<std::unique_ptr<ClipFile>> loaded_;
  std::vector<char> loaded_poses_;  // per index: loaded_ holds the poses
  std::unique_ptr<ClipCacheFolder> pose_store_;
};

}  // namespace mmdb::cook
