# Every #include "<folder>/..." in cooker/<folder>/ names a folder that folder may use, the same
# rule the per-folder libraries link by (cooker/CMakeLists.txt):
#   core <- import + compress <- cook,  core <- manifest,  core <- write,
#   cook + write <- cache,
#   review (the runtime only; the report's files also core + write),
#   everything <- cli
#   cmake -DCOOKER=<repo>/cooker -P check_include_direction.cmake
cmake_policy(VERSION 3.25)
set(allowed_core core)
set(allowed_import core import)
set(allowed_cook core import compress cook)
set(allowed_manifest core manifest)
set(allowed_write core write)
set(allowed_cache core import compress cook write cache)
set(allowed_compress core compress)
set(allowed_review core write review)
set(allowed_cli core import cook manifest write compress cache review cli)

set(violations "")
set(checked 0)
foreach(folder core import cook manifest write compress cache review cli)
  file(GLOB files ${COOKER}/${folder}/*.h ${COOKER}/${folder}/*.cpp)
  foreach(file IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${file} includes REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" used "${line}")
      if(NOT used IN_LIST allowed_${folder})
        string(APPEND violations "\n  ${file}: ${line} (${folder} may use: ${allowed_${folder}})")
      endif()
    endforeach()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no cooker sources under ${COOKER}")
endif()
if(violations)
  message(FATAL_ERROR "includes against the cooker's dependency direction:${violations}")
endif()
message(STATUS "include direction holds in ${checked} cooker files")
