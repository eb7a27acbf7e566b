# Compiles the runtime (mmdb::runtime) and its Vulkan part (mmdb::gpu) for 64-bit Windows with the
# mingw-w64 cross compiler: every source to an object file, no link. The Windows file mapping
# (runtime/src/database/file_mapping.cpp) is only compiled here.
#   cmake -DCXX=<x86_64-w64-mingw32-g++> -DSOURCE=<repo> -DGENERATED=<build>/generated
#         -DWORK=<folder> -DSOURCES=<a.cpp|b.cpp|...> -P compile_for_windows.cmake
if(NOT CXX)
  message(FATAL_ERROR "no mingw-w64 C++ compiler (x86_64-w64-mingw32-g++-posix); install "
                      "g++-mingw-w64-x86-64-posix, as scripts/install-deps.sh does")
endif()

# The header-only dependencies, without the rest of /usr/include (whose C library headers are
# not Windows').
set(deps ${WORK}/include)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${deps})
foreach(dir flatbuffers glm vulkan vk_video meshoptimizer.h)
  if(EXISTS /usr/include/${dir})
    file(CREATE_LINK /usr/include/${dir} ${deps}/${dir} SYMBOLIC)
  endif()
endforeach()

string(REPLACE "|" ";" sources "${SOURCES}")
set(compiled 0)
foreach(source IN LISTS sources)
  get_filename_component(name ${source} NAME_WE)
  execute_process(
    COMMAND ${CXX} -std=c++20 -O1 -Wall -Wextra -Wno-missing-field-initializers -c ${source}
            -o ${WORK}/${name}.obj -I${SOURCE}/runtime/include -I${SOURCE}/runtime/src
            -I${SOURCE}/runtime/gpu/include
            -I${GENERATED} -isystem ${deps}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${source} does not compile for Windows:\n${out}")
  endif()
  if(out MATCHES "warning:")
    message(FATAL_ERROR "${source} compiles for Windows with warnings:\n${out}")
  endif()
  math(EXPR compiled "${compiled} + 1")
endforeach()
message(STATUS "compiled ${compiled} runtime sources for Windows")
