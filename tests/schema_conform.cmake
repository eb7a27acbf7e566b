# flatc --conform of the current schema against a released one, the version enums set aside:
# SchemaMajor and SchemaMinor hold the schema's own version (their Current value is the one
# thing every release changes), so both copies get the same value before the comparison.
# Everything else must be a legal evolution (a field removed, moved or retyped, or an enum
# value renumbered, fails).
# cmake -DFLATC=<flatc> -DRELEASED=<mmdb-X.Y.fbs> -DCURRENT=<mmdb.fbs> -DWORK_DIR=<dir> -P schema_conform.cmake
foreach(var FLATC RELEASED CURRENT WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "schema_conform.cmake needs -D${var}=...")
  endif()
endforeach()

function(without_version in out)
  file(READ "${in}" text)
  string(REGEX REPLACE "(enum Schema(Major|Minor) : ushort {[ ]*Current = )[0-9]+" "\\10"
                       text "${text}")
  file(WRITE "${out}" "${text}")
endfunction()

get_filename_component(released_name "${RELEASED}" NAME)
file(MAKE_DIRECTORY "${WORK_DIR}")
without_version("${RELEASED}" "${WORK_DIR}/released-${released_name}")
without_version("${CURRENT}" "${WORK_DIR}/current.fbs")
execute_process(
  COMMAND "${FLATC}" --conform "${WORK_DIR}/released-${released_name}" "${WORK_DIR}/current.fbs"
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "schema/mmdb.fbs does not conform to ${released_name}:\n${out}${err}")
endif()
message(STATUS "schema/mmdb.fbs conforms to ${released_name}")
