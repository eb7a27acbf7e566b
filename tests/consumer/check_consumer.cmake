# Builds a consumer project (tests/consumer/<MODE>) against this build and runs it on a cooked
# file; the link line must hold no cooker dependency. MODE=install installs this build into
# PREFIX instead (the fixture of the find_package and cook consumers); MODE=cook drives a Ninja
# build that cooks with mmdb_cook().
#   cmake -DMODE=install|find_package|add_subdirectory|cook -DSOURCE=... -DBUILD=... -DWORK=...
#         -DPREFIX=... -DGENERATOR=... -DCXX_FLAGS=... -DDATABASE=... -P check_consumer.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE ${PREFIX})
  run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX})
  foreach(f lib/cmake/mmdb/mmdbConfig.cmake lib/cmake/mmdb/mmdbConfigVersion.cmake
            include/mmdb/mmdb.h include/mmdb/mmdb_c.h include/mmdb/mmdb_generated.h
            share/mmdb/mmdb.fbs)
    if(NOT EXISTS ${PREFIX}/${f})
      message(FATAL_ERROR "the install has no ${f}")
    endif()
  endforeach()
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
function(expect_same_databases)
  file(SHA256 ${bin}/loco.mmdb one)
  file(SHA256 ${bin}/loco_per_clip.mmdb two)
  if(NOT one STREQUAL two)
    message(FATAL_ERROR "the per-clip build's database differs from the one cook's")
  endif()
endfunction()
function(expect_cache hits misses)
  file(READ ${bin}/loco.json report)
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
  run(${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer/cook -B ${bin} -G Ninja
      "-DCMAKE_PREFIX_PATH=${PREFIX}" -DMANIFEST=${src}/loco.toml)
  build_expect("Cooking loco.mmdb" "Cooking clip 0 of loco_per_clip.mmdb"
               "Cooking clip 2 of loco_per_clip.mmdb" "Linking loco_per_clip.mmdb")
  if(NOT EXISTS ${bin}/loco.mmdb OR NOT EXISTS ${bin}/loco.mmdb.d)
    message(FATAL_ERROR "the build made no loco.mmdb or no depfile")
  endif()
  if(out MATCHES "cooked|clips|up to date")
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
  build_expect("Cooking loco.mmdb" "Cooking clip 0 of" "Cooking clip 2 of" NOT "Linking"
               "Cooking clip 1 of")
  file(TIMESTAMP ${bin}/loco.mmdb after "%s")
  if(NOT before STREQUAL after)
    message(FATAL_ERROR "an identical cook rewrote loco.mmdb (${before} -> ${after})")
  endif()
  expect_cache(3 0)
  build_expect("no work to do")

  # A weight edited in the manifest re-cooks into new bytes, with every clip from the cache.
  file(WRITE ${src}/loco.toml "[weights]\nfoot_position = 0.5\n${clips}")
  build_expect("Cooking loco.mmdb" "Linking loco_per_clip.mmdb")
  file(TIMESTAMP ${bin}/loco.mmdb edited "%s")
  if(edited STREQUAL before)
    message(FATAL_ERROR "a new weight did not rewrite loco.mmdb")
  endif()
  expect_cache(3 0)
  expect_same_databases()

  # An edited source re-cooks the clips that read it, and only those.
  file(APPEND ${src}/more/walk_turn.bvh "\n")
  build_expect("Cooking loco.mmdb" "Cooking clip 1 of" NOT "Cooking clip 0 of" "Cooking clip 2 of")
  expect_cache(2 1)
  expect_same_databases()
  message(STATUS "mmdb_cook: re-cooks on a source and a manifest edit, not on other files; "
                 "a weight edit takes every clip from the cache")
  return()
endif()
run(${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer/${MODE} -B ${bin} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_PREFIX_PATH=${PREFIX}"
    -DMMDB_SOURCE_DIR=${SOURCE})
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
