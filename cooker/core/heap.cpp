#include "core/heap.h"

#include <cstdlib>
#include <fstream>
#include <string>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace mmdb::cook {

namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb";

bool underSanitizer() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// "always [madvise] never": the bracketed word is the system's policy.
bool systemGivesHugePages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return std::getline(in, line) && line.find("[never]") == std::string::npos;
}

}  // namespace

std::string largePageTunables(const char* current) {
  const std::string tunables = current ? current : "";
  if (tunables.find(kTunable) != std::string::npos) return "";
  return (tunables.empty() ? "" : tunables + ":") + kTunable + "=1";
}

void restartWithLargePageHeap(char** argv) {
#if defined(__GLIBC__) && defined(__linux__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string extended = largePageTunables(tunables);
  if (extended.empty() || underSanitizer() || !systemGivesHugePages()) return;
  const std::string current = tunables ? tunables : "";
  if (setenv("GLIBC_TUNABLES", extended.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: the restart failed (no /proc, say). Run as is, with the environment as it was.
  if (tunables)
    setenv("GLIBC_TUNABLES", current.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

}  // namespace mmdb::cook
