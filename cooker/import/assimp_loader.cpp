// Loads the FBX and glTF importer module at the first file that needs it (importer.h, "loads it
// on demand"), so that a cook of BVH files never maps Assimp.
#include "core/errors.h"
#include "import/importer.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#ifndef MMCOOK_ASSIMP_MODULE_NAME
#error "MMCOOK_ASSIMP_MODULE_NAME: the module's file name, set by cooker/import/CMakeLists.txt"
#endif

namespace mmdb::cook {
namespace {

// Where the module may be: MMCOOK_ASSIMP_MODULE alone where it is set (a package that keeps the
// module elsewhere); else, in order, beside the executable (a build tree), where an install puts
// it relative to the executable's folder, and where this build made it.
std::vector<std::filesystem::path> moduleCandidates() {
  std::vector<std::filesystem::path> out;
  if (const char* set = std::getenv("MMCOOK_ASSIMP_MODULE"); set && *set) {
    out.emplace_back(set);
    return out;
  }
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    out.push_back(exe.parent_path() / MMCOOK_ASSIMP_MODULE_NAME);
    out.push_back((exe.parent_path() / MMCOOK_ASSIMP_MODULE_FROM_BINDIR / MMCOOK_ASSIMP_MODULE_NAME)
                      .lexically_normal());
  }
  out.push_back(MMCOOK_ASSIMP_MODULE_BUILT);
  return out;
}

struct Loaded {
  const AssimpImporterModule* module = nullptr;
  std::string error;  // why it could not be loaded
};

Loaded load() {
  std::string tried;
  for (const std::filesystem::path& path : moduleCandidates()) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
      tried += (tried.empty() ? "" : ", ") + path.string();
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      return {nullptr, "cannot load " + path.string() + ": " + (why ? why : "unknown error") +
                           " (is Assimp installed? apt-get install libassimp5)"};
    }
    using Entry = const AssimpImporterModule* (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, kAssimpModuleEntry));
    const AssimpImporterModule* module = entry ? entry() : nullptr;
    if (!module || std::strcmp(module->build, kAssimpModuleBuild) != 0 ||
        module->raw_clip_size != sizeof(RawClip) ||
        module->source_info_size != sizeof(SourceInfo)) {
      dlclose(handle);
      return {nullptr, path.string() + " is not this mmcook's importer module (" +
                           (module ? std::string(module->build) : std::string("no entry")) +
                           ", this is " + kAssimpModuleBuild + "); reinstall mmcook"};
    }
    spdlog::debug("FBX and glTF importer: {}", path.string());
    return {module, {}};  // kept loaded for the process's life
  }
  return {nullptr, "the FBX and glTF importer module " MMCOOK_ASSIMP_MODULE_NAME
                   " is not installed (looked for " +
                       tried + "); reinstall mmcook, or cook BVH files"};
}

const AssimpImporterModule& module(const std::string& path) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.module) throw InputError(path + ": cannot import: " + loaded.error);
  return *loaded.module;
}

}  // namespace

RawClip importAssimpFile(const std::string& path, const std::string& take) {
  return module(path).import_file(path, take);
}

SourceInfo inspectAssimpFile(const std::string& path) { return module(path).inspect_file(path); }

}  // namespace mmdb::cook
