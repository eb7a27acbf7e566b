#include "cache/clip_store.h"

#include "cache/clip_file.h"
#include "cache/pose_file.h"
#include "core/errors.h"
#include "core/fnv1a.h"
#include "write/database_writer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string_view>
#include <system_error>

namespace mmdb::cook {

namespace fs = std::filesystem;

ClipCacheFolder::ClipCacheFolder(std::string folder, double stamp_settle_seconds)
    : folder_(std::move(folder)), stamps_(folder_, stamp_settle_seconds) {
  std::error_code ec;
  if (fs::exists(folder_, ec) && !fs::is_directory(folder_, ec))
    throw InputError(folder_ +
                     ": the clip cache is not a folder; give a folder with --cache, "
                     "or cook with --no-cache");
  fs::create_directories(folder_, ec);
  if (ec)
    throw InputError(folder_ + ": cannot create the clip cache folder: " + ec.message() +
                     "; give another with --cache, or cook with --no-cache");
  // The same check an entry's write makes, so a read-only cache fails before the cook.
  try {
    checkWritable((fs::path(folder_) / "probe.mmclip").string());
  } catch (const InputError& e) {
    throw InputError(folder_ + ": the clip cache folder is not writable (" + e.what() +
                     "); give another with --cache, or cook with --no-cache");
  }
}

std::string ClipCacheFolder::entryPath(const std::string& key, const char* extension) const {
  Fnv1a64 hash;
  hash.add(key.data(), key.size());
  const std::string name = fmt::format("{:016x}", hash.value());
  return (fs::path(folder_) / name.substr(0, 2) / (name + extension)).string();
}

namespace {

// The cache entry at `path` as `read` reads it, when it is there and holds `key`. An entry under
// another key with the same hash is a miss (it is replaced); one that cannot be used is refused
// with a warning that the cook does `instead`.
template <typename Read, typename Warn>
auto readEntry(const std::string& path, const std::string& key, Read read, const char* holds,
               const char* instead, bool* refused, Warn warn)
    -> std::optional<decltype(read(path))> {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  try {
    auto file = read(path);
    if (file.key == key) return file;
    spdlog::debug("clip cache: {} holds another {} ({})", path, holds,
                  firstKeyDifference(file.key, key));
  } catch (const InputError& e) {
    warn(Warning{"cache-entry-refused", fmt::format("clip cache: {}; {}", e.what(), instead), path,
                 0});
    if (refused) *refused = true;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ClipPart> ClipCacheFolder::find(const std::string& key, int, bool* refused,
                                              PartPoses poses) {
  auto file = readEntry(
      entryPath(key), key, [poses](const std::string& path) { return readClipFile(path, poses); },
      "clip", "cooking the clip again", refused, [this](Warning w) { note(std::move(w)); });
  if (!file) {
    noteMiss(key);
    return std::nullopt;
  }
  return std::move(file->part);
}

void ClipCacheFolder::keep(const std::string& key, int, const ClipPart& part) {
  const ClipFileBytes bytes = serializeClipFile(key, part);
  keepEntry(entryPath(key), bytes.pieces(), "a clip");
  // Remembered for the next miss's cause; a cache of hints, never an error.
  try {
    const std::string path = lastKeyPath(key);
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    writeFileAtomically(path, std::vector<uint8_t>(key.begin(), key.end()), Durability::Unsynced);
  } catch (const InputError& e) {
    spdlog::debug("clip cache: cannot remember the key of a clip: {}", e.what());
  }
}

namespace {

// The line of a key that starts with `word` ("name 4:walk"), or "".
std::string keyLine(const std::string& key, std::string_view word) {
  for (size_t at = 0; at < key.size();) {
    const size_t end = std::min(key.find('\n', at), key.size());
    const std::string_view line(key.data() + at, end - at);
    if (line.substr(0, word.size()) == word) return std::string(line);
    at = end + 1;
  }
  return "";
}

// The first line where two keys differ, named as the manifest or the user knows it.
std::string missCause(const std::string& before, const std::string& now) {
  const auto [was, is] = firstDifferingLines(before, now);
  if (was == is) return "the same key (the entry was deleted or replaced)";
  // Each key line's first words, and what a user changed to change it.
  static const std::pair<std::string_view, std::string_view> kCauses[] = {
      {"cooker", "another mmcook version"},
      {"source frames", "the clip's frames or seconds"},
      {"source", "the source file's content"},
      {"take", "the clip's take"},
      {"mirror pattern", "[mirror] patterns"},
      {"mirror", "the clip's mirror"},
      {"rate", "[database] frame_rate"},
      {"windows", "[filters]"},
      {"contacts", "[contacts]"},
      {"trajectory", "[database] trajectory_times"},
      {"unit scale", "[skeleton] unit_scale"},
      {"role", "[skeleton] roles"},
      {"facing axis", "[skeleton] facing_axis"},
      {"preset", "the first clip's skeleton preset or roles"},
      {"first clip", "the clip's place (first or not)"},
      {"after the first clip", "the clip's place (first or not)"},
  };
  for (const auto& [prefix, cause] : kCauses)
    if (is.rfind(prefix, 0) == 0 || was.rfind(prefix, 0) == 0)
      return std::string(cause) + " ('" + was + "' -> '" + is + "')";
  return "'" + was + "' -> '" + is + "'";
}

}  // namespace

std::string ClipCacheFolder::lastKeyPath(const std::string& key) const {
  const std::string name = keyLine(key, "name ");
  Fnv1a64 hash;
  hash.add(name.data(), name.size());
  return (fs::path(folder_) / "last" / fmt::format("{:016x}.key", hash.value())).string();
}

void ClipCacheFolder::noteMiss(const std::string& key) {
  std::string cause = "a clip the cache has not seen";
  std::ifstream in(lastKeyPath(key), std::ios::binary);
  if (in) {
    const std::string before{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    cause = missCause(before, key);
  }
  std::lock_guard lock(miss_mutex_);
  ++miss_causes_[cause];
}

std::vector<std::pair<std::string, int>> ClipCacheFolder::missCauses() const {
  std::lock_guard lock(miss_mutex_);
  std::vector<std::pair<std::string, int>> out(miss_causes_.begin(), miss_causes_.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::optional<StoredPoseCoding> ClipCacheFolder::findPoses(const std::string& key, bool* refused) {
  const std::string path = entryPath(key, ".mmposes");
  auto file = readEntry(path, key, readPoseFile, "pose coding", "coding the poses again", refused,
                        [this](Warning w) { note(std::move(w)); });
  if (!file) return std::nullopt;
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used
  return std::move(file->stored);
}

void ClipCacheFolder::keepPoses(const std::string& key, uint32_t frames, uint32_t joints,
                                const CookedPoseCoding& coding) {
  const IntermediateBytes bytes = serializePoseFile(key, frames, joints, coding);
  const auto pieces = bytes.pieces();
  keepEntry(entryPath(key, ".mmposes"), pieces, "the pose coding");
  prunePoseCodings();
}

// A pose coding is as large as the database's poses, and every edit of a clip makes a new one:
// keep the most recently used (a hit touches its file), delete the rest.
void ClipCacheFolder::prunePoseCodings() {
  std::vector<std::pair<fs::file_time_type, fs::path>> codings;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".mmposes" && it->is_regular_file(ec))
      codings.emplace_back(it->last_write_time(ec), it->path());
  if (codings.size() <= kKeptPoseCodings) return;
  std::sort(codings.begin(), codings.end(), std::greater<>());
  for (size_t i = kKeptPoseCodings; i < codings.size(); ++i) fs::remove(codings[i].second, ec);
}

CookedSource ClipCacheFolder::hashSourceFile(const std::string& path, const std::string& label,
                                             bool* unread) {
  return stamps_.hash(path, label, unread);
}

void ClipCacheFolder::hashSourceFiles(const std::vector<const ClipSpec*>& specs, CookedSource* out,
                                      bool* unread) {
  std::vector<SourceStamps::Look> looks;
  std::vector<const ClipSpec*> to_read;
  std::vector<size_t> at;  // where each of to_read goes
  for (size_t i = 0; i < specs.size(); ++i) {
    looks.push_back(stamps_.look(specs[i]->source, specs[i]->source_label));
    unread[i] = looks[i].stamped.has_value();
    if (unread[i]) {
      out[i] = *looks[i].stamped;
    } else {
      to_read.push_back(specs[i]);
      at.push_back(i);
    }
  }
  CookedSource read[kSourcesHashedTogether];
  bool ok[kSourcesHashedTogether] = {};
  hashSourcesTogether(to_read, read, ok);
  for (size_t k = 0; k < to_read.size(); ++k) {
    const size_t i = at[k];
    if (ok[k]) {
      out[i] = read[k];
      stamps_.stamp(looks[i], specs[i]->source, out[i]);
    } else {  // what hashSourceFile() says of it: an error, as hashSource() gives it
      out[i] = stamps_.hash(specs[i]->source, specs[i]->source_label, &unread[i]);
    }
  }
}

void ClipCacheFolder::keepEntry(const std::string& path,
                                std::span<const std::span<const uint8_t>> pieces,
                                const char* what) {
  try {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    writeFileAtomically(path, pieces);
  } catch (const InputError& e) {
    // The cook goes on: a cache that cannot keep an entry only makes the next cook slower.
    std::lock_guard lock(warn_mutex_);
    if (!keep_failed_)
      warnings_.push_back({"cache-entry-not-kept",
                           fmt::format("clip cache: cannot keep {}: {}", what, e.what()), path, 0});
    keep_failed_ = true;
  }
}

void ClipCacheFolder::note(Warning w) {
  std::lock_guard lock(warn_mutex_);
  warnings_.push_back(std::move(w));
}

std::vector<Warning> ClipCacheFolder::takeWarnings() {
  std::lock_guard lock(warn_mutex_);
  std::vector<Warning> out = std::move(warnings_);
  warnings_.clear();
  // Found by several threads: in one order whatever the thread count.
  std::sort(out.begin(), out.end(),
            [](const Warning& a, const Warning& b) { return a.text < b.text; });
  return out;
}

std::string defaultClipCacheFolder() {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : std::string();
  };
  if (std::string dir = env("MMCOOK_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string dir = env("XDG_CACHE_HOME"); !dir.empty())
    return (fs::path(dir) / "mmcook").string();
  if (std::string dir = env("HOME"); !dir.empty())
    return (fs::path(dir) / ".cache" / "mmcook").string();
  return "";
}

ClipFileList::ClipFileList(std::vector<std::string> files, std::vector<std::string> clip_names,
                           std::unique_ptr<ClipCacheFolder> pose_store)
    : files_(std::move(files)),
      clip_names_(std::move(clip_names)),
      loaded_(files_.size()),
      loaded_poses_(files_.size(), 0),
      pose_store_(std::move(pose_store)) {
  if (files_.size() != clip_names_.size())
    throw InputError(
        fmt::format("the manifest has {} clips but {} .mmclip files were given; give "
                    "one per clip, in the manifest's order (re-run CMake when the "
                    "manifest's clips changed)",
                    clip_names_.size(), files_.size()));
}

ClipFile& ClipFileList::load(int index, PartPoses poses) {
  std::unique_ptr<ClipFile>& file = loaded_.at(static_cast<size_t>(index));
  const bool with_poses = poses == PartPoses::Read;
  if (!file || (with_poses && !loaded_poses_[size_t(index)])) {
    file = std::make_unique<ClipFile>(readClipFile(files_[index], poses));
    loaded_poses_[size_t(index)] = with_poses;
  }
  return *file;
}

std::optional<CookedSource> ClipFileList::recordedSource(int index) {
  return load(index, PartPoses::Skip).part.source;
}

std::optional<ClipPart> ClipFileList::find(const std::string& key, int index, bool*,
                                           PartPoses poses) {
  const std::string& path = files_.at(static_cast<size_t>(index));
  ClipFile file = std::move(load(index, poses));
  loaded_[index].reset();
  if (file.key != key)
    throw InputError(
        path + ": it was not cooked from what clip " + clip_names_[index] +
        " of the manifest is now (first difference: " + firstKeyDifference(file.key, key) +
        "); cook it again with mmcook cook-clip, and give the files in the "
        "manifest's clip order");
  return std::move(file.part);
}

void ClipFileList::keep(const std::string&, int, const ClipPart&) {}

std::optional<StoredPoseCoding> ClipFileList::findPoses(const std::string& key, bool* refused) {
  return pose_store_ ? pose_store_->findPoses(key, refused) : std::nullopt;
}

void ClipFileList::keepPoses(const std::string& key, uint32_t frames, uint32_t joints,
                             const CookedPoseCoding& coding) {
  if (pose_store_) pose_store_->keepPoses(key, frames, joints, coding);
}

std::vector<Warning> ClipFileList::takeWarnings() {
  return pose_store_ ? pose_store_->takeWarnings() : std::vector<Warning>{};
}

}  // namespace mmdb::cook
