# Install rules and the CMake package. `find_package(mmdb COMPONENTS ...)` has three components,
# each exported in a set of its own, so loading one needs none of the others' dependencies:
#   runtime  mmdb::runtime and mmdb::schema            (mmdbRuntimeTargets.cmake)
#   gpu      mmdb::gpu and mmdb::shaders, when built    (mmdbGpuTargets.cmake; needs runtime)
#   cook     mmdb::mmcook and mmdb_cook(), when built    (mmdbCookTargets.cmake)
# MMDB_SCHEMA (the .fbs file) comes with each of them.
include(CMakePackageConfigHelpers)
set(MMDB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mmdb)

# Exported under the names the build tree's aliases use: mmdb::runtime, mmdb::gpu, ...
set_target_properties(mmdb_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(mmdb_schema PROPERTIES EXPORT_NAME schema)
set(MMDB_PACKAGE_COMPONENTS runtime)
install(TARGETS mmdb_runtime mmdb_schema EXPORT mmdbRuntimeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT mmdbRuntimeTargets NAMESPACE mmdb:: DESTINATION ${MMDB_CMAKE_DIR})
if(TARGET mmdb_gpu)
  set_target_properties(mmdb_gpu PROPERTIES EXPORT_NAME gpu)
  set_target_properties(mmdb_shaders PROPERTIES EXPORT_NAME shaders)
  list(APPEND MMDB_PACKAGE_COMPONENTS gpu)
  # The shaders are compiled into mmdb_gpu; mmdb::runtime comes from the runtime's set.
  install(TARGETS mmdb_gpu mmdb_shaders EXPORT mmdbGpuTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT mmdbGpuTargets NAMESPACE mmdb:: DESTINATION ${MMDB_CMAKE_DIR})
endif()
if(TARGET mmcook)
  list(APPEND MMDB_PACKAGE_COMPONENTS cook)
  install(TARGETS mmcook EXPORT mmdbCookTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(TARGET mmcook_assimp)  # the FBX/glTF importer mmcook loads on demand, where it looks
    install(TARGETS mmcook_assimp LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/mmcook)
  endif()
  install(EXPORT mmdbCookTargets NAMESPACE mmdb:: DESTINATION ${MMDB_CMAKE_DIR})
  install(FILES cmake/mmdbCook.cmake DESTINATION ${MMDB_CMAKE_DIR})
endif()

install(DIRECTORY runtime/include/mmdb DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/generated/mmdb/mmdb_generated.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mmdb)
if(TARGET mmdb_gpu)
  install(DIRECTORY runtime/gpu/include/mmdb/gpu DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mmdb)
endif()
# Beside it, the JSON Schema of mmcook's --report (docs/cook-report.md), for tools that read it.
install(FILES schema/mmdb.fbs schema/cook-report.schema.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mmdb)

configure_package_config_file(cmake/mmdbConfig.cmake.in ${PROJECT_BINARY_DIR}/mmdbConfig.cmake
  INSTALL_DESTINATION ${MMDB_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mmdbConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mmdbConfig.cmake ${PROJECT_BINARY_DIR}/mmdbConfigVersion.cmake
        DESTINATION ${MMDB_CMAKE_DIR})

# mmdb.pc, for builds without CMake (pkg-config --cflags --libs mmdb). Relocatable: its prefix is
# found from its own folder, so an install moved or made with `cmake --install --prefix` works.
set(MMDB_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${MMDB_PC_DIR}")
  set(MMDB_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  string(REGEX REPLACE "[^/]+" ".." up "${MMDB_PC_DIR}")
  set(MMDB_PC_PREFIX "\${pcfiledir}/${up}")
endif()
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(MMDB_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(MMDB_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
# MMDB_PC_CFLAGS and MMDB_PC_LIBS: the dependencies' flags, from runtime/CMakeLists.txt (where
# meshoptimizer's target is seen).
configure_file(cmake/mmdb.pc.in ${PROJECT_BINARY_DIR}/mmdb.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mmdb.pc DESTINATION ${MMDB_PC_DIR})
