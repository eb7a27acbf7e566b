// The FBX and glTF importer linked in (MMCOOK_ASSIMP_ON_DEMAND off): importer.h's entry points
// call assimp_importer.cpp directly.
#include "import/importer.h"

namespace mmdb::cook {

RawClip importAssimpFile(const std::string& path, const std::string& take) {
  return importAssimpFileHere(path, take);
}

SourceInfo inspectAssimpFile(const std::string& path) { return inspectAssimpFileHere(path); }

}  // namespace mmdb::cook
