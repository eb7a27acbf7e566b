#include "cli/build_outputs.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

namespace mm {
namespace {

namespace fs = std::filesystem;

std::string escapeDepfilePath(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#' || c == '\\') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

std::string absolute(const std::string& path) {
  std::error_code ec;
  const fs::path full = fs::absolute(path, ec);
  return ec ? path : full.lexically_normal().string();
}

}  // namespace

std::string depfileText(const std::string& output, const CookRequest& request) {
  std::vector<std::string> inputs;
  std::set<std::string> seen;
  const auto add = [&](const std::string& path) {
    const std::string full = absolute(path);
    if (seen.insert(full).second) inputs.push_back(full);
  };
  if (!request.manifest_path.empty()) add(request.manifest_path);
  for (const ClipSpec& clip : request.clips) add(clip.source);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);  // a new mmcook re-cooks
  if (!ec) add(self.string());

  std::string text = escapeDepfilePath(absolute(output)) + ":";
  for (const std::string& input : inputs) text += " \\\n  " + escapeDepfilePath(input);
  return text + "\n";
}

bool fileHoldsBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != bytes.size() || ec) return false;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chunk(1 << 20);
  size_t offset = 0;
  while (offset < bytes.size()) {
    const size_t n = std::min(chunk.size(), bytes.size() - offset);
    if (!in.read(chunk.data(), static_cast<std::streamsize>(n))) return false;
    if (std::memcmp(chunk.data(), bytes.data() + offset, n) != 0) return false;
    offset += n;
  }
  return true;
}

}  // namespace mm
