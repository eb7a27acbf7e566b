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
            include/mmdb/mmdb.h include/mmdb/mmdb_generated.h share/mmdb/mmdb.fbs)
    if(NOT EXISTS ${PREFIX}/${f})
      message(FATAL_ERROR "the install has no ${f}")
    endif()
  endforeach()
  return()
endif()

set(bin ${WORK}/${MODE})
file(REMOVE_RECURSE ${bin})

# MODE=cook: a real Ninja build through mmdb_cook() re-cooks exactly when it should.
function(build_expect what)  # what: "nothing" or "cook"
  run(${CMAKE_COMMAND} --build ${bin})
  if(what STREQUAL "nothing" AND NOT out MATCHES "no work to do")
    message(FATAL_ERROR "expected no work, the build did:\n${out}")
  elseif(what STREQUAL "cook" AND NOT out MATCHES "Cooking loco.mmdb")
    message(FATAL_ERROR "expected a cook, the build did:\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
if(MODE STREQUAL "cook")
  set(src ${WORK}/cook_inputs)  # copies, since the test edits them
  file(REMOVE_RECURSE ${src})
  file(COPY ${SOURCE}/samples/data/walk_turn.bvh DESTINATION ${src})
  file(WRITE ${src}/loco.toml "[[clip]]\nsource = \"walk_turn.bvh\"\n")
  file(WRITE ${src}/unrelated.bvh "a file the manifest does not name")
  run(${CMAKE_COMMAND} -S ${SOURCE}/tests/consumer/cook -B ${bin} -G Ninja
      "-DCMAKE_PREFIX_PATH=${PREFIX}" -DMANIFEST=${src}/loco.toml)
  build_expect(cook)
  if(NOT EXISTS ${bin}/loco.mmdb OR NOT EXISTS ${bin}/loco.mmdb.d)
    message(FATAL_ERROR "the build made no loco.mmdb or no depfile")
  endif()
  if(out MATCHES "cooked|clips")
    message(FATAL_ERROR "mmdb_cook printed on success:\n${out}")
  endif()
  build_expect(nothing)
  file(TOUCH ${src}/unrelated.bvh)
  build_expect(nothing)

  # A touched source re-cooks; the bytes are the same, so the file keeps its time.
  file(TIMESTAMP ${bin}/loco.mmdb before "%s")
  run(${CMAKE_COMMAND} -E sleep 1.1)
  file(TOUCH ${src}/walk_turn.bvh)
  build_expect(cook)
  file(TIMESTAMP ${bin}/loco.mmdb after "%s")
  if(NOT before STREQUAL after)
    message(FATAL_ERROR "an identical cook rewrote loco.mmdb (${before} -> ${after})")
  endif()
  build_expect(nothing)

  # A weight edited in the manifest re-cooks into new bytes.
  file(WRITE ${src}/loco.toml "[weights]\nfoot_position = 0.5\n[[clip]]\nsource = \"walk_turn.bvh\"\n")
  build_expect(cook)
  file(TIMESTAMP ${bin}/loco.mmdb edited "%s")
  if(edited STREQUAL before)
    message(FATAL_ERROR "a new weight did not rewrite loco.mmdb")
  endif()
  message(STATUS "mmdb_cook: re-cooks on a source and a manifest edit, not on other files")
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
