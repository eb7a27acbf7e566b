#include "core/raw_clip.h"

#include "core/errors.h"

#include <unordered_set>

namespace mmdb::cook {

int Skeleton::find(const std::string& name) const {
  for (size_t j = 0; j < names.size(); ++j)
    if (names[j] == name) return static_cast<int>(j);
  return -1;
}

void validateSkeleton(const Skeleton& s, const std::string& what) {
  const size_t n = s.names.size();
  if (n == 0) throw InputError(what + ": the skeleton has no joints");
  if (s.parents.size() != n || s.offsets.size() != n || s.bind_rotations.size() != n)
    throw InputError(what + ": skeleton arrays disagree in length (internal importer error)");
  std::unordered_set<std::string> seen;
  for (size_t j = 0; j < n; ++j) {
    if (s.names[j].empty())
      throw InputError(what + ": joint " + std::to_string(j) + " has no name");
    if (!seen.insert(s.names[j]).second)
      throw InputError(what + ": duplicate joint name '" + s.names[j] +
                       "'; rename one of them so every joint is unique");
    const int p = s.parents[j];
    if (j == 0 ? p != -1 : (p < 0 || p >= static_cast<int>(j)))
      throw InputError(what + ": joint '" + s.names[j] +
                       "' has a bad parent; the root must come first and parents precede children");
  }
}

}  // namespace mmdb::cook
