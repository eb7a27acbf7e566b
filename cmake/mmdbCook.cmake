# mmdb_cook(OUTPUT <file.mmdb> MANIFEST <file.toml> [TARGET <name>] [JOBS <n>])
#
# Cooks a manifest at build time with mmdb::mmcook. The build re-cooks when the manifest, any
# source file it names or mmcook itself changes (mmcook writes a depfile), and not otherwise.
# An output whose bytes would not change keeps its time, so with Ninja what depends on it is not
# rebuilt. Relative OUTPUT is in the current binary folder, relative MANIFEST in the current
# source folder. TARGET adds a target of that name, built by default, that makes the output.
# JOBS is mmcook's --jobs (default 0: all cores; the bytes are the same whatever it is).
# Prints nothing on success.
function(mmdb_cook)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUTPUT;MANIFEST;TARGET;JOBS" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mmdb_cook: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_OUTPUT OR NOT arg_MANIFEST)
    message(FATAL_ERROR "mmdb_cook: OUTPUT and MANIFEST are required")
  endif()
  if(NOT TARGET mmdb::mmcook)
    message(FATAL_ERROR "mmdb_cook: no mmdb::mmcook (was mmdb built with MMDB_BUILD_COOKER=OFF?)")
  endif()
  set(jobs 0)
  if(DEFINED arg_JOBS)
    set(jobs ${arg_JOBS})
  endif()
  cmake_path(ABSOLUTE_PATH arg_OUTPUT BASE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} NORMALIZE
             OUTPUT_VARIABLE output)
  cmake_path(ABSOLUTE_PATH arg_MANIFEST BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE
             OUTPUT_VARIABLE manifest)
  add_custom_command(
    OUTPUT ${output}
    COMMAND mmdb::mmcook --quiet cook ${manifest} -o ${output} --jobs ${jobs}
            --depfile ${output}.d
    DEPENDS ${manifest} mmdb::mmcook
    DEPFILE ${output}.d
    COMMENT "Cooking ${arg_OUTPUT}"
    VERBATIM)
  if(arg_TARGET)
    add_custom_target(${arg_TARGET} ALL DEPENDS ${output})
  endif()
endfunction()
