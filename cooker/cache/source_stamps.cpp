#include "cache/source_stamps.h"

#include "cook/cook_database.h"
#include "core/fnv1a.h"
#include "write/database_writer.h"

#include <spdlog/fmt/fmt.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

namespace mmdb::cook {
namespace {

namespace fs = std::filesystem;

using FileIdentity = SourceStamps::FileIdentity;

std::optional<FileIdentity> identityOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  FileIdentity id;
  id.device = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<uint64_t>(st.st_size);
  id.modified_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.changed_ns = int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return id;
}

constexpr const char* kStampHeader = "mmcook source stamp 1";

}  // namespace

SourceStamps::SourceStamps(std::string folder, double settle_seconds)
    : folder_(std::move(folder)), settle_seconds_(settle_seconds) {}

std::string SourceStamps::stampPath(const std::string& absolute) const {
  Fnv1a64 hash;
  hash.add(absolute.data(), absolute.size());
  return (fs::path(folder_) / "sources" / fmt::format("{:016x}.stamp", hash.value())).string();
}

std::string SourceStamps::FileIdentity::text() const {
  return fmt::format("{} {} {} {} {}", device, inode, size, modified_ns, changed_ns);
}

SourceStamps::Look SourceStamps::look(const std::string& path, const std::string& label) const {
  Look l;
  l.before = identityOf(path);
  std::error_code ec;
  l.absolute = fs::absolute(path, ec).lexically_normal().string();
  if (l.before) {
    // header, path, identity, then "hash format"
    std::ifstream in(stampPath(l.absolute));
    std::string header, named, identity;
    uint64_t content_hash = 0;
    int format = -1;
    if (std::getline(in, header) && header == kStampHeader && std::getline(in, named) &&
        named == l.absolute && std::getline(in, identity) && identity == l.before->text() &&
        (in >> std::hex >> content_hash >> std::dec >> format) &&
        format >= static_cast<int>(SourceFormat::MIN) &&
        format <= static_cast<int>(SourceFormat::MAX))
      l.stamped = CookedSource{label.empty() ? path : label, content_hash, l.before->size,
                               static_cast<SourceFormat>(format)};
  }
  return l;
}

void SourceStamps::stamp(const Look& look, const std::string& path,
                         const CookedSource& source) const {
  const std::optional<FileIdentity>& before = look.before;
  const std::optional<FileIdentity> after = identityOf(path);
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t settled_ns = now_ns - int64_t(settle_seconds_ * 1e9);
  if (!(before && after && *before == *after && before->size == source.size_bytes &&
        before->modified_ns <= settled_ns && before->changed_ns <= settled_ns))
    return;
  const std::string stamp = stampPath(look.absolute);
  const std::string text =
      fmt::format("{}\n{}\n{}\n{:016x} {}\n", kStampHeader, look.absolute, before->text(),
                  source.content_hash, static_cast<int>(source.format));
  // Renamed into place, not synced: a stamp lost or cut short by a crash is only a miss (the
  // reader wants every line), and a sync per source would cost more than the hashing.
  std::error_code ec;
  fs::create_directories(fs::path(stamp).parent_path(), ec);
  const std::string temporary =
      fmt::format("{}.tmp.{}.{}.{}", stamp, temporaryHostName(), ::getpid(),
                  std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec) fs::rename(temporary, stamp, ec);
  if (ec) fs::remove(temporary, ec);
}

CookedSource SourceStamps::hash(const std::string& path, const std::string& label,
                                bool* from_stamp) const {
  if (from_stamp) *from_stamp = false;
  const Look l = look(path, label);
  if (l.stamped) {
    if (from_stamp) *from_stamp = true;
    return *l.stamped;
  }
  const CookedSource source = hashSource(path, label);
  stamp(l, path, source);
  return source;
}

}  // namespace mmdb::cook
