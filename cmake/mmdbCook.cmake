# mmdb_cook(OUTPUT <file.mmdb> MANIFEST <file.toml> [TARGET <name>] [JOBS <n>] [CACHE <dir>]
#           [REPORT <file.json>] [PER_CLIP])
#
# Cooks a manifest at build time with mmdb::mmcook. The build re-cooks when the manifest, any
# source file it names or mmcook itself changes (mmcook writes depfiles), and not otherwise.
# An output whose bytes would not change keeps its time, so with Ninja what depends on it is not
# rebuilt. Relative OUTPUT, CACHE and REPORT are in the current binary folder, relative MANIFEST
# in the current source folder. Prints nothing on success.
#
#   TARGET    adds a target of that name, built by default, that makes the output.
#   JOBS      mmcook's --jobs (default 0: all cores; the bytes are the same whatever it is).
#   CACHE     the clip cache folder (mmcook --cache); without it, mmcook's default for manifests
#             ($MMCOOK_CACHE_DIR, $XDG_CACHE_HOME/mmcook or ~/.cache/mmcook). A cook after an
#             edit of weights, tags or ranges re-imports no clip.
#   REPORT    also writes mmcook's JSON report (stages, warnings, cache hits and misses).
#   PER_CLIP  one build edge per clip (mmcook cook-clip into <OUTPUT>.clips/<i>.mmclip) and one
#             link edge (mmcook link): the build tool runs the clips in parallel, and a build
#             tool that distributes or caches edges remotely can spread them over machines. The
#             clips are counted from the manifest's [[clip]] tables when CMake runs (an edit of
#             the manifest re-runs CMake); the link refuses any part that does not fit.
function(mmdb_cook)
  cmake_parse_arguments(PARSE_ARGV 0 arg "PER_CLIP" "OUTPUT;MANIFEST;TARGET;JOBS;CACHE;REPORT" "")
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
  set(extra "")
  set(byproducts ${output}.d)  # a byproduct makes Ninja restat the output after the command
  if(arg_REPORT)
    cmake_path(ABSOLUTE_PATH arg_REPORT BASE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} NORMALIZE
               OUTPUT_VARIABLE report)
    list(APPEND extra --report ${report})
    list(APPEND byproducts ${report})
  endif()

  if(NOT arg_PER_CLIP)
    set(cache "")
    if(arg_CACHE)
      cmake_path(ABSOLUTE_PATH arg_CACHE BASE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} NORMALIZE
                 OUTPUT_VARIABLE cache_dir)
      set(cache --cache ${cache_dir})
    endif()
    add_custom_command(
      OUTPUT ${output}
      BYPRODUCTS ${byproducts}
      COMMAND mmdb::mmcook --quiet cook ${manifest} -o ${output} --jobs ${jobs}
              --depfile ${output}.d ${cache} ${extra}
      DEPENDS ${manifest} mmdb::mmcook
      DEPFILE ${output}.d
      COMMENT "Cooking ${arg_OUTPUT}"
      VERBATIM)
  else()
    # Count the [[clip]] tables; CMake runs again when the manifest changes.
    file(STRINGS ${manifest} clip_tables REGEX "^[ \t]*\\[\\[[ \t]*clip[ \t]*\\]\\]")
    list(LENGTH clip_tables count)
    if(count EQUAL 0)
      message(FATAL_ERROR "mmdb_cook: ${manifest} has no [[clip]] tables (PER_CLIP needs each "
                          "clip as a [[clip]] table)")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})
    set(parts_dir ${output}.clips)
    set(first ${parts_dir}/0.mmclip)
    set(parts "")
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      set(part ${parts_dir}/${i}.mmclip)
      set(first_args "")
      set(first_dep "")
      if(i GREATER 0)
        set(first_args --first ${first})
        set(first_dep ${first})
      endif()
      add_custom_command(
        OUTPUT ${part}
        BYPRODUCTS ${part}.d
        COMMAND ${CMAKE_COMMAND} -E make_directory ${parts_dir}
        COMMAND mmdb::mmcook --quiet cook-clip ${manifest} --index ${i} -o ${part}
                --depfile ${part}.d ${first_args}
        DEPENDS ${manifest} mmdb::mmcook ${first_dep}
        DEPFILE ${part}.d
        COMMENT "Cooking clip ${i} of ${arg_OUTPUT}"
        VERBATIM)
      list(APPEND parts ${part})
    endforeach()
    add_custom_command(
      OUTPUT ${output}
      BYPRODUCTS ${byproducts}
      COMMAND mmdb::mmcook --quiet link ${manifest} ${parts} -o ${output} --jobs ${jobs}
              --depfile ${output}.d
              ${extra}
      DEPENDS ${manifest} mmdb::mmcook ${parts}
      DEPFILE ${output}.d
      COMMENT "Linking ${arg_OUTPUT}"
      VERBATIM)
  endif()
  if(arg_TARGET)
    add_custom_target(${arg_TARGET} ALL DEPENDS ${output})
  endif()
endfunction()
