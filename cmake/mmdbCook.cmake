# mmdb_cook(OUTPUT <file.mmdb> MANIFEST <file.toml> [TARGET <name>] [JOBS <n>] [CACHE <dir>]
#           [REPORT <file.json>] [PER_CLIP [CLIPS_PER_EDGE <n>]] [WERROR])
#
# Cooks a manifest at build time with mmdb::mmcook. The build re-cooks when the manifest, any
# source file it names or mmcook itself changes (mmcook writes depfiles), and not otherwise.
# An output whose bytes would not change keeps its time, so with Ninja what depends on it is not
# rebuilt. Relative OUTPUT, CACHE and REPORT are in the current binary folder, relative MANIFEST
# in the current source folder. Prints the cook's warnings, and nothing else on success.
#
#   TARGET    adds a target of that name, built by default, that makes the output.
#   JOBS      mmcook's --jobs (default 0: all cores; the bytes are the same whatever it is). With
#             Ninja, whole cooks and links run in the job pool `mmdb_cook` (one at a time, unless
#             the project defines the pool in JOB_POOLS itself), so that two of them never share
#             the cores; PER_CLIP clip edges take one core each, as Ninja's -j allows.
#   CACHE     the clip cache folder (mmcook --cache); without it, mmcook's default for manifests
#             ($MMCOOK_CACHE_DIR, $XDG_CACHE_HOME/mmcook or ~/.cache/mmcook). A cook after an
#             edit of weights, tags or ranges re-imports no clip. With PER_CLIP, the clip edges
#             find and keep their parts there, and the link its pose coding (without CACHE, the
#             link keeps its pose coding in <OUTPUT>.clips/cache).
#   REPORT    also writes mmcook's JSON report (docs/cook-report.md).
#   WERROR    fails the build on any warning of the cook (mmcook --werror); nothing is written.
#   PER_CLIP  build edges of a few clips each (mmcook cook-clip into <OUTPUT>.clips/<i>.mmclip,
#             one part per clip) and one link edge (mmcook link): the build tool runs the clip
#             edges in parallel, and a build tool that distributes or caches edges remotely can
#             spread them over machines. A clip edge depends on its clips' entries
#             (<OUTPUT>.clips/<i>.entry, which mmcook cook-entries rewrites only when what the
#             clip reads of the manifest changes), their sources and the first clip's part, not
#             on the whole manifest: a weight edit re-runs the link alone, and a changed source
#             re-runs its edge, which cooks that clip again and leaves the others' parts alone.
#             The clips are counted from the manifest's [[clip]] tables when CMake runs, and
#             the build edges are made for that count. A manifest edit that adds or removes a
#             clip re-runs CMake within the same build, before any cook: with Ninja, an edge
#             counts the clips again on each manifest edit (a CMake script, no cook) and CMake
#             runs again only when the count changed, so a weight edit re-runs no CMake; with
#             other generators every manifest edit re-runs CMake. The warnings are the link's to
#             print (once per link, like a cache hit).
#   CLIPS_PER_EDGE  clips per PER_CLIP edge; the first clip has an edge of its own, which the
#             others wait for. Each edge pays one process start, which costs about as much as a
#             short clip's cook. The default gives about two edges per core of the machine that
#             runs CMake (105 clips on 2 cores: 26 to an edge; on 32 cores: 2); 1 suits a farm
#             that runs every edge on a machine of its own.
# mmcook writes its depfiles with absolute paths, as Ninja reads them: no `cmake -E
# cmake_transform_depfile` step after each edge (CMP0116's NEW behaviour adds one, which costs
# more than a clip edge's cook).
# In script mode, with MMDB_COUNT_MANIFEST and MMDB_COUNT_FILE: counts the manifest's [[clip]]
# tables into the count file, rewritten only when the count changed (PER_CLIP's counting edge).
function(_mmdb_count_clips manifest out)
  file(STRINGS ${manifest} clip_tables REGEX "^[ \t]*\\[\\[[ \t]*clip[ \t]*\\]\\]")
  list(LENGTH clip_tables count)
  set(${out} ${count} PARENT_SCOPE)
endfunction()
function(_mmdb_write_count count_file count)
  set(old_count "")
  if(EXISTS ${count_file})
    file(READ ${count_file} old_count)
  endif()
  if(NOT old_count STREQUAL "${count}\n")
    file(WRITE ${count_file} "${count}\n")
  endif()
endfunction()
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED MMDB_COUNT_MANIFEST)
  _mmdb_count_clips(${MMDB_COUNT_MANIFEST} count)
  _mmdb_write_count(${MMDB_COUNT_FILE} ${count})
  return()
endif()

cmake_policy(PUSH)
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 OLD)
endif()

# `--depfile-target` and the spelling of `path` that Ninja gives the edge's output in its build
# file (relative to the top binary folder when inside it), which it compares with the depfile's;
# nothing for other generators.
function(_mmdb_depfile_target path out)
  set(args "")
  if(CMAKE_GENERATOR MATCHES "Ninja")
    cmake_path(IS_PREFIX CMAKE_BINARY_DIR "${path}" NORMALIZE inside)
    set(spelled "${path}")
    if(inside)
      cmake_path(RELATIVE_PATH path BASE_DIRECTORY ${CMAKE_BINARY_DIR} OUTPUT_VARIABLE spelled)
    endif()
    set(args --depfile-target "${spelled}")
  endif()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

function(mmdb_cook)
  cmake_parse_arguments(PARSE_ARGV 0 arg "PER_CLIP;WERROR"
                        "OUTPUT;MANIFEST;TARGET;JOBS;CACHE;REPORT;CLIPS_PER_EDGE" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mmdb_cook: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_OUTPUT OR NOT arg_MANIFEST)
    message(FATAL_ERROR "mmdb_cook: OUTPUT and MANIFEST are required")
  endif()
  if(NOT TARGET mmdb::mmcook)
    message(FATAL_ERROR "mmdb_cook: no mmdb::mmcook (was mmdb built with MMDB_BUILD_COOKER=OFF?)")
  endif()
  if(DEFINED arg_CLIPS_PER_EDGE AND NOT arg_PER_CLIP)
    message(FATAL_ERROR "mmdb_cook: CLIPS_PER_EDGE is for PER_CLIP cooks; add PER_CLIP or drop it")
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
  if(arg_WERROR)
    list(APPEND extra --werror)
  endif()
  set(cache_dir "")
  if(arg_CACHE)
    cmake_path(ABSOLUTE_PATH arg_CACHE BASE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} NORMALIZE
               OUTPUT_VARIABLE cache_dir)
  endif()
  # Whole cooks and links use every core they are given: with Ninja, one at a time.
  set(pool "")
  if(CMAKE_GENERATOR MATCHES "Ninja")
    get_property(pools GLOBAL PROPERTY JOB_POOLS)
    if(NOT pools MATCHES "(^|;)mmdb_cook=")
      set_property(GLOBAL APPEND PROPERTY JOB_POOLS mmdb_cook=1)
    endif()
    set(pool JOB_POOL mmdb_cook)
  endif()

  if(NOT arg_PER_CLIP)
    set(cache "")
    if(cache_dir)
      set(cache --cache ${cache_dir})
    endif()
    _mmdb_depfile_target(${output} target)
    add_custom_command(
      OUTPUT ${output}
      BYPRODUCTS ${byproducts}
      COMMAND mmdb::mmcook --quiet cook ${manifest} -o ${output} --jobs ${jobs}
              --depfile ${output}.d ${target} ${cache} ${extra}
      DEPENDS ${manifest} mmdb::mmcook
      DEPFILE ${output}.d
      COMMENT "Cooking ${arg_OUTPUT}"
      ${pool}
      VERBATIM)
  else()
    # Count the [[clip]] tables: the edges below are made for that count. CMake runs again
    # when clips.count changes. With Ninja, an edge counts them again whenever the manifest
    # changes; as an input of build.ninja, Ninja brings it up to date before anything else, and
    # it rewrites the file only when the count changed (restat), so CMake runs again, within the
    # same build, only then. Other generators check their inputs before building anything: for
    # them every manifest edit re-runs CMake.
    _mmdb_count_clips(${manifest} count)
    if(count EQUAL 0)
      message(FATAL_ERROR "mmdb_cook: ${manifest} has no [[clip]] tables (PER_CLIP needs each "
                          "clip as a [[clip]] table)")
    endif()
    set(parts_dir ${output}.clips)
    set(count_file ${parts_dir}/clips.count)
    _mmdb_write_count(${count_file} ${count})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${count_file})
    set(count_dep "")
    if(CMAKE_GENERATOR MATCHES "Ninja")
      add_custom_command(
        OUTPUT ${count_file}
        COMMAND ${CMAKE_COMMAND} -DMMDB_COUNT_MANIFEST=${manifest} -DMMDB_COUNT_FILE=${count_file}
                -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE}  # this file, in script mode
        DEPENDS ${manifest} ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
        COMMENT "Counting the clips of ${arg_OUTPUT}"
        VERBATIM)
      set(count_dep ${count_file})  # the entries' edge brings the counting edge into the build
    else()
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})
    endif()

    math(EXPR last "${count} - 1")
    set(entries "")
    foreach(i RANGE ${last})
      list(APPEND entries ${parts_dir}/${i}.entry)
    endforeach()
    _mmdb_depfile_target(${parts_dir}/0.entry target)
    add_custom_command(
      OUTPUT ${entries}
      BYPRODUCTS ${parts_dir}/entries.d
      COMMAND mmdb::mmcook --quiet cook-entries ${manifest} -o ${parts_dir} --clips ${count}
              --depfile ${parts_dir}/entries.d ${target}
      DEPENDS ${manifest} mmdb::mmcook ${count_dep}
      DEPFILE ${parts_dir}/entries.d
      COMMENT "Reading the clip entries of ${arg_OUTPUT}"
      VERBATIM)

    set(clip_cache "")
    set(pose_cache --cache ${parts_dir}/cache)
    if(cache_dir)
      set(clip_cache --cache ${cache_dir})
      set(pose_cache --cache ${cache_dir})
    endif()
    # Clip 0 has an edge of its own, which every other edge waits for (its part gives the others
    # their skeleton, roles and unit); the others go CLIPS_PER_EDGE to an edge, in manifest order.
    # By default about two edges per core of the machine that configures: each edge pays a process
    # start, which costs about as much as a short clip, and two per core keep the cores busy to
    # the end.
    cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
    if(NOT cores GREATER 0)
      set(cores 1)
    endif()
    math(EXPR per_edge "(${count} - 1 + 2 * ${cores} - 1) / (2 * ${cores})")
    if(per_edge LESS 1)
      set(per_edge 1)
    endif()
    if(DEFINED arg_CLIPS_PER_EDGE)
      if(NOT arg_CLIPS_PER_EDGE MATCHES "^[1-9][0-9]*$")
        message(FATAL_ERROR "mmdb_cook: CLIPS_PER_EDGE must be a whole number of 1 or more, not "
                            "'${arg_CLIPS_PER_EDGE}'")
      endif()
      set(per_edge ${arg_CLIPS_PER_EDGE})
    endif()
    set(first ${parts_dir}/0.mmclip)
    set(parts "")
    set(group_start 0)
    while(group_start LESS count)
      set(group_end ${count})
      if(group_start GREATER 0)
        math(EXPR group_end "${group_start} + ${per_edge}")
        if(group_end GREATER count)
          set(group_end ${count})
        endif()
      else()
        set(group_end 1)
      endif()
      set(group_args "")
      set(group_parts "")
      set(group_deps "")
      math(EXPR group_last "${group_end} - 1")
      foreach(i RANGE ${group_start} ${group_last})
        set(part ${parts_dir}/${i}.mmclip)
        list(APPEND group_args --index ${i} --entry ${parts_dir}/${i}.entry -o ${part})
        list(APPEND group_parts ${part})
        list(APPEND group_deps ${parts_dir}/${i}.entry)
      endforeach()
      set(first_args "")
      if(group_start GREATER 0)
        set(first_args --first ${first})
        list(APPEND group_deps ${first})
      endif()
      set(group_depfile ${parts_dir}/${group_start}.mmclip.d)
      if(group_start EQUAL group_last)
        set(comment "Cooking clip ${group_start} of ${arg_OUTPUT}")
      else()
        set(comment "Cooking clips ${group_start} to ${group_last} of ${arg_OUTPUT}")
      endif()
      # Silent: the link prints every warning, its own and the parts'. The depfile is named by
      # the edge's first part, as Ninja reads it.
      list(GET group_parts 0 named)
      _mmdb_depfile_target(${named} target)
      add_custom_command(
        OUTPUT ${group_parts}
        BYPRODUCTS ${group_depfile}
        COMMAND mmdb::mmcook --quiet --no-warnings cook-clip ${manifest} ${group_args}
                --depfile ${group_depfile} ${target} ${first_args} ${clip_cache}
        DEPENDS ${group_deps} mmdb::mmcook
        DEPFILE ${group_depfile}
        COMMENT "${comment}"
        VERBATIM)
      list(APPEND parts ${group_parts})
      set(group_start ${group_end})
    endwhile()
    _mmdb_depfile_target(${output} target)
    add_custom_command(
      OUTPUT ${output}
      BYPRODUCTS ${byproducts}
      COMMAND mmdb::mmcook --quiet link ${manifest} ${parts} -o ${output} --jobs ${jobs}
              --depfile ${output}.d ${target} ${pose_cache} ${extra}
      DEPENDS ${manifest} mmdb::mmcook ${parts}
      DEPFILE ${output}.d
      COMMENT "Linking ${arg_OUTPUT}"
      ${pool}
      VERBATIM)
  endif()
  if(arg_TARGET)
    add_custom_target(${arg_TARGET} ALL DEPENDS ${output})
  endif()
endfunction()
cmake_policy(POP)
