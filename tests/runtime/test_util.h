// Helpers shared by the runtime tests.
#pragma once

#include <mmdb/database.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace mmdb::test {

// A scratch path under the build's temporary directory.
inline std::string scratchPath(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/mmdb_rt_" + std::to_string(::getpid()) + "_" +
         name;
}

}  // namespace mmdb::test
