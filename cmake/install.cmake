# Install rules and the CMake package: `find_package(mmdb)` gives mmdb::runtime, mmdb::gpu (when
# built), mmdb::mmcook (the cooker, as an imported executable) and MMDB_SCHEMA (the .fbs file).
include(CMakePackageConfigHelpers)
set(MMDB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mmdb)

set(targets mmdb_runtime mmdb_schema)
if(TARGET mmdb_gpu)
  list(APPEND targets mmdb_gpu mmdb_shaders)  # the shaders are compiled into mmdb_gpu
endif()
if(TARGET mmcook)
  list(APPEND targets mmcook)
endif()
# Exported under the names the build tree's aliases use: mmdb::runtime, mmdb::gpu, ...
set_target_properties(mmdb_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(mmdb_schema PROPERTIES EXPORT_NAME schema)
if(TARGET mmdb_gpu)
  set_target_properties(mmdb_gpu PROPERTIES EXPORT_NAME gpu)
  set_target_properties(mmdb_shaders PROPERTIES EXPORT_NAME shaders)
endif()
install(TARGETS ${targets} EXPORT mmdbTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT mmdbTargets NAMESPACE mmdb:: DESTINATION ${MMDB_CMAKE_DIR})

install(DIRECTORY runtime/include/mmdb DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/generated/mmdb/mmdb_generated.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mmdb)
if(TARGET mmdb_gpu)
  install(DIRECTORY runtime/gpu/include/mmdb/gpu DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mmdb)
endif()
install(FILES schema/mmdb.fbs DESTINATION ${CMAKE_INSTALL_DATADIR}/mmdb)

set(MMDB_PACKAGE_HAS_GPU ${MMDB_BUILD_GPU})
configure_package_config_file(cmake/mmdbConfig.cmake.in ${PROJECT_BINARY_DIR}/mmdbConfig.cmake
  INSTALL_DESTINATION ${MMDB_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mmdbConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mmdbConfig.cmake ${PROJECT_BINARY_DIR}/mmdbConfigVersion.cmake
              cmake/mmdbCook.cmake
        DESTINATION ${MMDB_CMAKE_DIR})
