# Builds a consumer project (tests/consumer/<MODE>) against this build and runs it on a cooked
# file; the link line must hold no cooker dependency. MODE=install installs this build into
# PREFIX instead (the fixture of the other consumers); MODE=cook drives a Ninja build that cooks
# with mmdb_cook(). The package's components:
#   runtime_only            COMPONENTS runtime with Vulkan disabled, built and run;
#   without_vulkan          no COMPONENTS with Vulkan disabled: all but gpu (configure only);
#   cook_without_languages  a project(NONE) that cooks with COMPONENTS cook (Ninja);
#   unknown_component       COMPONENTS nonsense must fail configure with CMake's message;
#   documented_link_line    consumer.cpp compiled and linked by hand with the libraries of the
#                           `c++ ... -lmmdb_runtime ...` line in docs/runtime.md, and nothing else
#                           (needs -DCXX, -DINCLUDEDIR, -DLIBDIR, and the dependencies' folders in
#                           -DDEP_INCLUDE_DIRS, -DDEP_LIBRARY_DIRS and the compiler's own ones in
#                           -DIMPLICIT_DIRS, each list joined with |);
#   c_project               consumer.c (the C interface) built by a project(LANGUAGES C) with
#                           COMPONENTS runtime, linked by the C compiler, and run;
#   c_without_cmake         consumer.c compiled and linked by the C compiler with the installed
#                           mmdb.pc's flags (pkg-config), then with the libraries of the
#                           `cc ... -lmmdb_runtime ...` line in docs/runtime.md (needs -DCC,
#                           -DPKG_CONFIG, -DLIBDIR, -DDEP_LIBRARY_DIRS and -DIMPLICIT_DIRS).
# A configure of the installed package must print nothing of its dependencies' searches.
#   cmake -DMODE=install|find_package|add_subdirectory|cook|runtime_only|without_vulkan|
#                cook_without_languages|unknown_component|documented_link_line|c_project|
#                c_without_cmake
#         -DSOURCE=... -DBUILD=... -DWORK=... -DPREFIX=... -DGENERATOR=... -DCXX_FLAGS=...
#         -DDATABASE=... [-DCOOK_REPORTS=FOLDER] -P check_consumer.cmake
# With COOK_REPORTS, MODE=cook copies each report it reads (loco.json) into FOLDER.
cmake_minimum_required(VERSION 3.25)  # the project's policies (IN_LIST) in script mode too
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The package looks for its dependencies quietly: a consumer's configure shows none of it.
function(expect_quiet_configure)
  string(REGEX MATCH "[^\n]*(missing components|Could NOT find|Found )[^\n]*" line "${out}")
  if(NOT line STREQUAL "")
    message(FATAL_ERROR "the configure printed a dependency search: '${line}'\n${out}")
  endif()
endfunction()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE ${PREFIX})
  run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX})
  foreach(f lib/cmake/mmdb/mmdbConfig.cmake lib/cmake/mmdb/mmdbConfigVersion.cmake
            lib/pkgconfig/mmdb.pc
            include/mmdb/mmdb.h include/mmdb/mmdb_c.h include/mmdb/mmdb_generated.h
            share/mmdb/mmdb.fbs share/mmdb/cook-report.schema.json)
    if(NOT EXISTS ${PREFIX}/${f})
      message(FATAL_ERROR "the install has no ${f}")
    endif()
  endforeach()
  # A build that loads the FBX importer on demand installs the module, and the installed mmcook
  # loads it from the install, not from the build.
  if(EXISTS ${BUILD}/bin/mmcook_assimp.so)
    file(GLOB_RECURSE modules ${PREFIX}/lib*/mmcook_assimp.so)
    if(NOT modules MATCHES "/mmcook/mmcook_assimp.so")
      message(FATAL_ERROR "the install has no lib.../mmcook/mmcook_assimp.so: ${modules}")
    endif()
    set(fbx /usr/share/assimp/models/FBX/animation_with_skeleton.fbx)  # assimp-testmodels
    if(EXISTS ${fbx})
      execute_process(COMMAND ${PREFIX}/bin/mmcook -v inspect-source ${fbx}
        RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
      string(FIND "${out}" "FBX and glTF importer: ${PREFIX}/lib" at)
      if(NOT code EQUAL 0 OR at EQUAL -1)
        message(FATAL_ERROR "the installed mmcook did not load the installed importer:\n${out}")
      endif()
    endif()
  endif()
  return()
endif()

set(bin ${WORK}/${MODE})
file(REMOVE_RECURSE ${bin})

# MODE=cook: a real Ninja build through mmdb_cook() re-cooks exactly when it should, once as one
# cook with a clip cache (loco.mmdb) and once as an edge per clip and a link (loco_per_clip.mmdb).
function(build_expect)  # build_expect(<pattern that must be in the output>... [NOT <pattern>...])
  run(${CMAKE_COMMAND} --build ${bin} -j 2)
  set(must TRUE)
  foreach(pattern IN LISTS ARGN)
    if(pattern STREQUAL "NOT")
      set(must FALSE)
    elseif(must AND NOT out MATCHES "${pattern}")
      message(FATAL_ERROR "expected '${pattern}' in the build's output:\n${out}")
    elseif(NOT must AND out MATCHES "${pattern}")
      message(FATAL_ERROR "did not expect '${pattern}' in the build's output:\n${out}")
    endif()
  endforeach()
  set(out "${out}" PARENT_SCOPE)
endfunction()
function(expect_clips)  # expect_clips(<name>...): loco_per_clip.mmdb's clips, in order
  run(${PREFIX}/bin/mmcook inspect --json ${bin}/loco_per_clip.mmdb)
  string(JSON count LENGTH "${out}" clips)
  set(names "")
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON name GET "${out}" clips ${i} name)
      list(APPEND names ${name})
    endforeach()
  endif()
  if(NOT names STREQUAL ARGN)
    message(FATAL_ERROR "loco_per_clip.mmdb holds the clips '${names}', not '${ARGN}'")
  endif()
endfunction()
function(expect_same_databases)
  file(SHA256 ${bin}/loco.mmdb one)
  file(SHA256 ${bin}/loco_per_clip.mmdb two)
  if(NOT one STREQUAL two)
    message(FATAL_ERROR "the per-clip build's database differs from the one cook's")
  endif()
endfunction()
function(expect_cache hits misses)
  file(READ ${bin}/loco.json report)
  if(COOK_REPORTS)  # each version, for cook_report.schema (tests/cooker) to check
    get_property(kept GLOBAL PROPERTY kept_cook_reports)
    if(NOT kept)
      set(kept 0)
    endif()
    math(EXPR kept "${kept} + 1")
    set_property(GLOBAL PROPERTY kept_cook_reports ${kept})
    file(MAKE_DIRECTORY ${COOK_REPORTS})
    file(COPY_FILE ${bin}/loco.json ${COOK_REPORTS}/consumer.cook_at_build_time-${kept}-loco.json)
  endif()
  string(JSON got_hits GET "${report}" clip_cache hits)
  string(JSON got_misses GET "${report}" clip_cache misses)
  if(NOT got_hits EQUAL hits OR NOT got_misses EQUAL misses)
    message(FATAL_ERROR "expected ${hits} cache hits and ${misses} misses, the report says "
                        "${got_hits} and ${got_misses}")
  endif()
endfunction()
if(MODE STREQUAL "cook")
  set(src ${WORK}/cook_inputs)  # copies, since the test edits them
  file(REMOVE_RECURSE ${src})
  file(COPY ${SOURCE}/samples/data/walk_turn.bvh DESTINATION ${src})
  file(COPY ${SOURCE}/samples/data/walk_turn.bvh DESTINATION ${src}/more)
  set(clips "[[clip]]\nsource = \"walk_turn.bvh\"\nmirror = true\n[[clip]]\nname = \"copy\"\nsource = \"more/walk_turn.bvh\"\n[[clip]]\nname = \"part\"\nsource = \"walk_turn.bvh\"\nframes = [10, 100]\n")
  file(WRITE ${src}/loco.toml "${clips}")
  file(WRITE ${src}/unrelated.bvh "a file the manifest does not name")
  # Every frame of one clip excluded: a warning of the link ("no matchable frame left"). (Every
  # frame of every clip would be an error: a database no search could start.)
  file(WRITE ${src}/warned.toml "[[clip]]\nname = \"all_excluded\"\nsource = \"walk_turn.bvh\"\n"
       "  [[clip.range]]\n  frames = [0, \"end\"]\n  exclude = true\n"
       "[[clip]]\nname = \"kept\"\nsource = \"walk_turn.bvh\"\n")
  run(${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer/cook -B ${bin} -G Ninja
      "-DCMAKE_PREFIX_PATH=${PREFIX}" -DMANIFEST=${src}/loco.toml
      -DWARNED_MANIFEST=${src}/warned.toml)
  # loco_per_clip.mmdb has two clips to an edge: clip 0 alone, then clips 1 and 2.
  build_expect("Cooking loco.mmdb" "Cooking clip 0 of loco_per_clip.mmdb"
               "Cooking clips 1 to 2 of loco_per_clip.mmdb" "Linking loco_per_clip.mmdb")
  if(NOT EXISTS ${bin}/loco.mmdb OR NOT EXISTS ${bin}/loco.mmdb.d)
    message(FATAL_ERROR "the build made no loco.mmdb or no depfile")
  endif()
  if(out MATCHES "cooked|clips  |up to date")  # mmcook's own lines, not the build's
    message(FATAL_ERROR "mmdb_cook printed on success:\n${out}")
  endif()
  expect_same_databases()
  expect_cache(0 3)
  build_expect("no work to do")
  file(TOUCH ${src}/unrelated.bvh)
  build_expect("no work to do")

  # A touched source re-cooks; the bytes are the same, so the files keep their time and the
  # per-clip build does not even link.
  file(TIMESTAMP ${bin}/loco.mmdb before "%s")
  run(${CMAKE_COMMAND} -E sleep 1.1)
  file(TOUCH ${src}/walk_turn.bvh)
  file(TIMESTAMP ${bin}/loco_per_clip.mmdb.clips/1.mmclip part_before "%s")
  build_expect("Cooking loco.mmdb" "Cooking clip 0 of" "Cooking clips 1 to 2 of" NOT "Linking")
  file(TIMESTAMP ${bin}/loco_per_clip.mmdb.clips/1.mmclip part_after "%s")
  if(NOT part_before STREQUAL part_after)
    message(FATAL_ERROR "clip 1's part was rewritten, though its source did not change")
  endif()
  file(TIMESTAMP ${bin}/loco.mmdb after "%s")
  if(NOT before STREQUAL after)
    message(FATAL_ERROR "an identical cook rewrote loco.mmdb (${before} -> ${after})")
  endif()
  expect_cache(3 0)
  build_expect("no work to do")

  # A weight edited in the manifest re-cooks into new bytes, with every clip from the cache; the
  # per-clip build re-links without re-running a clip edge (or CMake).
  file(WRITE ${src}/loco.toml "[weights]\nfoot_position = 0.5\n${clips}")
  build_expect("Cooking loco.mmdb" "Linking loco_per_clip.mmdb" NOT "Cooking clip"
               "Re-running CMake")
  file(TIMESTAMP ${bin}/loco.mmdb edited "%s")
  if(edited STREQUAL before)
    message(FATAL_ERROR "a new weight did not rewrite loco.mmdb")
  endif()
  expect_cache(3 0)
  expect_same_databases()

  # An edited source re-cooks the clips that read it, and only those.
  file(APPEND ${src}/more/walk_turn.bvh "\n")
  build_expect("Cooking loco.mmdb" "Cooking clips 1 to 2 of" NOT "Cooking clip 0 of")
  expect_cache(2 1)
  expect_same_databases()
  # WERROR: the warning is in the build log, the build fails, and no database is written.
  foreach(target warned warned_per_clip)
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${bin} --target ${target}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(rc EQUAL 0 OR NOT out MATCHES "warning: clip all_excluded has no matchable frame left"
       OR NOT out MATCHES "1 warning and --werror" OR EXISTS ${bin}/${target}.mmdb)
      message(FATAL_ERROR "WERROR did not fail ${target} with its warning (${rc}):\n${out}")
    endif()
  endforeach()
  file(READ ${bin}/warned.json report)
  string(JSON status GET "${report}" status)
  string(JSON code GET "${report}" warnings 0 code)
  string(JSON clip GET "${report}" warnings 0 clip)
  string(JSON line GET "${report}" warnings 0 manifest_line)
  if(NOT status STREQUAL "failed" OR NOT code STREQUAL "no-matchable-frames"
     OR NOT clip STREQUAL "all_excluded" OR NOT line EQUAL 1)
    message(FATAL_ERROR "the failed cook's report says ${status}, ${code}:\n${report}")
  endif()

  # A clip more, then one fewer: each time one build counts the clips again, re-runs CMake and
  # cooks what changed, and the per-clip database holds the clips the manifest now names.
  set(fourth "[[clip]]\nname = \"fourth\"\nsource = \"walk_turn.bvh\"\n")
  file(WRITE ${src}/loco.toml "[weights]\nfoot_position = 0.5\n${clips}${fourth}")
  build_expect("Re-running CMake" "Cooking clip 3 of loco_per_clip.mmdb"
               "Linking loco_per_clip.mmdb" "Cooking loco.mmdb" NOT "build again"
               "Cooking clip 0 of loco_per_clip" "Cooking clips 1 to 2 of loco_per_clip")
  expect_clips(walk_turn "walk_turn#mirror" copy part fourth)
  expect_same_databases()
  build_expect("no work to do")
  string(REPLACE "[[clip]]\nname = \"part\"\nsource = \"walk_turn.bvh\"\nframes = [10, 100]\n" ""
         fewer "${clips}")
  if(fewer STREQUAL clips)
    message(FATAL_ERROR "the test's manifest has no clip 'part' to remove")
  endif()
  file(WRITE ${src}/loco.toml "[weights]\nfoot_position = 0.5\n${fewer}${fourth}")
  build_expect("Re-running CMake" "Linking loco_per_clip.mmdb" "Cooking loco.mmdb"
               NOT "build again")
  expect_clips(walk_turn "walk_turn#mirror" copy fourth)
  expect_same_databases()
  build_expect("no work to do")
  message(STATUS "mmdb_cook: re-cooks on a source and a manifest edit, not on other files; "
                 "a weight edit takes every clip from the cache; a clip added or removed builds "
                 "at once")
  return()
endif()
# MODE=cook_without_languages: project(NONE), COMPONENTS cook, one clip cooked at build time.
if(MODE STREQUAL "cook_without_languages")
  set(src ${WORK}/cook_without_languages_inputs)
  file(REMOVE_RECURSE ${src})
  file(COPY ${SOURCE}/samples/data/walk_turn.bvh DESTINATION ${src})
  file(WRITE ${src}/tiny.toml "[[clip]]\nsource = \"walk_turn.bvh\"\n")
  run(${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer/${MODE} -B ${bin} -G Ninja
      "-DCMAKE_PREFIX_PATH=${PREFIX}" -DMANIFEST=${src}/tiny.toml)
  expect_quiet_configure()
  if(out MATCHES "compiler identification|Detecting")
    message(FATAL_ERROR "the configure enabled a language:\n${out}")
  endif()
  build_expect("Cooking tiny.mmdb" "Cooking clip 0 of tiny_per_clip.mmdb" "Linking tiny_per_clip")
  if(NOT EXISTS ${bin}/tiny.mmdb)
    message(FATAL_ERROR "the build made no tiny.mmdb")
  endif()
  run(${PREFIX}/bin/mmcook inspect ${bin}/tiny.mmdb)  # a database the runtime opens
  build_expect("no work to do")
  # A clip count per edge that is not a whole number of 1 or more fails configure, saying so.
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer/${MODE} -B ${bin}-bad
                          -G Ninja "-DCMAKE_PREFIX_PATH=${PREFIX}" -DMANIFEST=${src}/tiny.toml
                          -DCLIPS_PER_EDGE=0
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "CLIPS_PER_EDGE must be a whole number of 1 or more, not '0'")
    message(FATAL_ERROR "CLIPS_PER_EDGE 0 did not fail configure (${rc}):\n${out}")
  endif()
  message(STATUS "mmdb_cook: cooked tiny.mmdb in a project without languages")
  return()
endif()

# MODE=unknown_component: configure fails with CMake's not-found message, naming the component.
if(MODE STREQUAL "unknown_component")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer/${MODE} -B ${bin}
                          -G ${GENERATOR} "-DCMAKE_PREFIX_PATH=${PREFIX}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")  # CMake wraps its messages
  if(rc EQUAL 0)
    message(FATAL_ERROR "COMPONENTS nonsense configured:\n${out}")
  endif()
  if(NOT flat MATCHES "is considered to be NOT FOUND" OR NOT flat MATCHES "component \"nonsense\"")
    message(FATAL_ERROR "COMPONENTS nonsense failed without naming it:\n${out}")
  endif()
  message(STATUS "an unknown component fails configure: package \"mmdb\" is considered to be "
                 "NOT FOUND (unknown component \"nonsense\")")
  return()
endif()

# MODE=documented_link_line: no CMake, only the libraries docs/runtime.md names.
if(MODE STREQUAL "documented_link_line")
  file(STRINGS ${SOURCE}/docs/runtime.md documented REGEX "^c\\+\\+ .*-lmmdb_runtime")
  list(LENGTH documented count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "docs/runtime.md has ${count} lines 'c++ ... -lmmdb_runtime ...', not one")
  endif()
  string(REGEX MATCHALL "-l[^ `]+" libraries "${documented}")
  string(REPLACE "|" ";" implicit "${IMPLICIT_DIRS}")
  set(include_flags -I${PREFIX}/${INCLUDEDIR})
  string(REPLACE "|" ";" dirs "${DEP_INCLUDE_DIRS}")
  foreach(dir IN LISTS dirs)
    if(dir AND NOT dir IN_LIST implicit)  # -I/usr/include would break the C++ library's own headers
      list(APPEND include_flags -I${dir})
    endif()
  endforeach()
  set(library_flags -L${PREFIX}/${LIBDIR})
  string(REPLACE "|" ";" dirs "${DEP_LIBRARY_DIRS}")
  foreach(dir IN LISTS dirs)
    if(dir AND NOT dir IN_LIST implicit)
      list(APPEND library_flags -L${dir})
    endif()
  endforeach()
  separate_arguments(flags UNIX_COMMAND "${CXX_FLAGS}")
  file(MAKE_DIRECTORY ${bin})
  run(${CXX} ${flags} -std=c++17 ${include_flags} ${SOURCE}/tests/consumer/consumer.cpp
      -o ${bin}/mmdb_consumer ${library_flags} ${libraries})
  run(${bin}/mmdb_consumer ${DATABASE})
  string(STRIP "${out}" out)
  list(JOIN libraries " " libraries)
  message(STATUS "${out}, linked with ${libraries} as docs/runtime.md says")
  return()
endif()

# MODE=c_without_cmake: a C program built by the C compiler, first with what mmdb.pc says, then
# with the `cc ... -lmmdb_runtime ...` line of docs/runtime.md. Each must link and run.
if(MODE STREQUAL "c_without_cmake")
  separate_arguments(flags UNIX_COMMAND "${CXX_FLAGS}")  # the sanitizers, for an instrumented build
  string(REPLACE "|" ";" implicit "${IMPLICIT_DIRS}")
  file(MAKE_DIRECTORY ${bin})
  set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
  run(${PKG_CONFIG} --cflags --libs mmdb)
  string(STRIP "${out}" pc_flags)
  separate_arguments(pc_list UNIX_COMMAND "${pc_flags}")
  # Its folders are the install's, wherever it was installed (the file finds its own prefix).
  file(REAL_PATH ${PREFIX}/${LIBDIR} libdir)
  set(found_libdir FALSE)
  foreach(flag IN LISTS pc_list)
    if(flag MATCHES "^-L(.+)$")
      file(REAL_PATH "${CMAKE_MATCH_1}" dir)
      if(dir STREQUAL libdir)
        set(found_libdir TRUE)
      endif()
    endif()
  endforeach()
  if(NOT found_libdir OR NOT "-lmmdb_runtime" IN_LIST pc_list)
    message(FATAL_ERROR "pkg-config --libs mmdb does not give the install's library in "
                        "${libdir}: ${pc_flags}")
  endif()
  run(${CC} ${flags} -std=c11 ${SOURCE}/tests/consumer/consumer.c -o ${bin}/with_pkg_config
      ${pc_list})
  run(${bin}/with_pkg_config ${DATABASE})
  if(NOT out MATCHES "C program: stepped 60 times")
    message(FATAL_ERROR "the C program built with pkg-config's flags did not play:\n${out}")
  endif()

  file(STRINGS ${SOURCE}/docs/runtime.md documented REGEX "^cc .*-lmmdb_runtime")
  list(LENGTH documented count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "docs/runtime.md has ${count} lines 'cc ... -lmmdb_runtime ...', not one")
  endif()
  string(REGEX MATCHALL "-l[^ `]+" libraries "${documented}")
  set(library_flags -L${PREFIX}/${LIBDIR})
  string(REPLACE "|" ";" dirs "${DEP_LIBRARY_DIRS}")
  foreach(dir IN LISTS dirs)
    if(dir AND NOT dir IN_LIST implicit)
      list(APPEND library_flags -L${dir})
    endif()
  endforeach()
  run(${CC} ${flags} -std=c11 -I${PREFIX}/${INCLUDEDIR} ${SOURCE}/tests/consumer/consumer.c
      -o ${bin}/with_documented_line ${library_flags} ${libraries})
  run(${bin}/with_documented_line ${DATABASE})
  string(REGEX MATCH "C program: stepped [^\n]*" line "${out}")
  list(JOIN libraries " " libraries)
  message(STATUS "${line}; linked by the C compiler with pkg-config's '${pc_flags}', and with "
                 "${libraries} as docs/runtime.md says")
  return()
endif()

set(configure_args "")
if(MODE STREQUAL "c_project")  # the sanitizers' flags, for an instrumented build
  list(APPEND configure_args "-DCMAKE_C_FLAGS=${CXX_FLAGS}")
endif()
if(MODE STREQUAL "runtime_only" OR MODE STREQUAL "without_vulkan")
  list(APPEND configure_args -DCMAKE_DISABLE_FIND_PACKAGE_Vulkan=ON)
endif()
run(${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer/${MODE} -B ${bin} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
    -DMMDB_SOURCE_DIR=${SOURCE} ${configure_args})
if(NOT MODE STREQUAL "add_subdirectory")  # the source tree's own searches are its build's
  expect_quiet_configure()
endif()
if(MODE STREQUAL "without_vulkan")
  string(REGEX MATCH "without Vulkan: [^\n]*" line "${out}")
  message(STATUS "${line}")
  return()
endif()
run(${CMAKE_COMMAND} --build ${bin} --target mmdb_consumer)

# What the consumer links: the runtime, and nothing of the cooker's.
if(GENERATOR STREQUAL "Ninja")
  run(${CMAKE_COMMAND} -E chdir ${bin} ninja -t commands mmdb_consumer)
  string(REGEX MATCH "[^\n]*-o mmdb_consumer [^\n]*" link "${out}")
  if(link STREQUAL "")
    message(FATAL_ERROR "no link line for mmdb_consumer in:\n${out}")
  endif()
  if(NOT link MATCHES "mmdb_runtime")
    message(FATAL_ERROR "mmdb_consumer does not link mmdb_runtime:\n${link}")
  endif()
  if(link MATCHES "assimp|spdlog|CLI11|tomlplusplus|mmcook")
    message(FATAL_ERROR "mmdb_consumer links a cooker dependency:\n${link}")
  endif()
endif()

run(${bin}/mmdb_consumer ${DATABASE})
message(STATUS "${out}")
