// The importer module's one exported symbol (importer.h, "loads it on demand"): the module is
// assimp_importer.cpp and what it needs, linked with Assimp into mmcook_assimp.so.
#include "import/importer.h"

extern "C" __attribute__((visibility("default"))) const mmdb::cook::AssimpImporterModule*
mmcook_assimp_importer_module() {
  static const mmdb::cook::AssimpImporterModule module{
      mmdb::cook::kAssimpModuleBuild, sizeof(mmdb::cook::RawClip), sizeof(mmdb::cook::SourceInfo),
      &mmdb::cook::importAssimpFileHere, &mmdb::cook::inspectAssimpFileHere};
  return &module;
}
