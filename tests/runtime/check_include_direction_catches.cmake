# check_include_direction.cmake fails where it should: on a copy of runtime/src with one include
# upwards (the database including the crowd), one private header by its bare name, and one source
# outside every folder, each named in its message; and it passes on the copy without them.
#   cmake -DRUNTIME=<repo>/runtime/src -DWORK=<folder> -P check_include_direction_catches.cmake
cmake_policy(VERSION 3.25)
set(check ${CMAKE_CURRENT_LIST_DIR}/check_include_direction.cmake)
file(REMOVE_RECURSE ${WORK})
file(COPY ${RUNTIME}/ DESTINATION ${WORK}/src)

function(run_check expect_pass)
  execute_process(COMMAND ${CMAKE_COMMAND} -DRUNTIME=${WORK}/src -P ${check}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(expect_pass AND NOT rc EQUAL 0)
    message(FATAL_ERROR "the check fails on an untouched copy:\n${out}")
  endif()
  if(NOT expect_pass AND rc EQUAL 0)
    message(FATAL_ERROR "the check passes on a copy it should reject:\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run_check(TRUE)
file(WRITE ${WORK}/src/database/upwards.cpp "#include \"crowd/not_there.h\"\n")
file(WRITE ${WORK}/src/search/bare.cpp "#include \"rotation.h\"\n")
file(WRITE ${WORK}/src/flat.cpp "#include \"mmdb/database.h\"\n")
run_check(FALSE)
foreach(expected "database/upwards.cpp: #include \"crowd/not_there.h\" (database may use: database)"
    "search/bare.cpp: #include \"rotation.h\" (a private header by its path from src/)"
    "flat.cpp: outside the runtime's folders")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the check's message lacks '${expected}':\n${out}")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
message(STATUS "the include direction check rejects an upward include, a bare private header and "
               "a file outside the folders")
