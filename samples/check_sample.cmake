# Runs mmdb_sample headless and checks what a user would look at: the exit code, the decision
# lines, the summary line and the SVG plot.
#
#   cmake -DSAMPLE=<mmdb_sample> -DDATABASE=<file.mmdb> -DSVG=<out.svg> -DARGS="a;b"
#         -DEXPECT=ok|bad_database -P check_sample.cmake
#
# EXPECT=ok: exit 0, at least one decision line naming the global and clip-local frame, the
# summary line, and an SVG that starts with <svg, ends with </svg> and holds two polylines.
# EXPECT=bad_database: exit 1 and a message saying why the database cannot be used.
# EXPECT=pruned_equals_exhaustive: runs twice, the second time with --exhaustive, and checks
# that both print the same decisions (the two searches return the same frame and cost).
# EXPECT=no_gpu: --gpu where no Vulkan driver can be loaded: exit 1 and a message saying so.
# EXPECT=gpu: as ok, plus the per-pass GPU timings line; without a Vulkan device, exit 1 with a
# message saying so, and the test reports itself skipped.

foreach(var SAMPLE DATABASE EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_sample.cmake: -D${var}=... is required")
  endif()
endforeach()

# -DFAKE_MMDB=ON: first write a file that carries the MMDB identifier but is garbage after it.
if(FAKE_MMDB)
  string(REPEAT "x" 256 filler)
  file(WRITE "${DATABASE}" "garbMMDB${filler}")
endif()

if(EXPECT STREQUAL "pruned_equals_exhaustive")
  foreach(method pruned exhaustive)
    set(command "${SAMPLE}" "${DATABASE}" ${ARGS})
    if(method STREQUAL "exhaustive")
      list(APPEND command --exhaustive)
    endif()
    execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err TIMEOUT 120)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the ${method} run exited with '${rc}': ${err}")
    endif()
    string(REGEX MATCHALL "t=[^\n]*" lines "${out}")
    list(LENGTH lines count)
    if(count EQUAL 0)
      message(FATAL_ERROR "the ${method} run printed no decision")
    endif()
    set(${method}_lines "${lines}")
    message(STATUS "${method}: ${count} decisions")
  endforeach()
  if(NOT pruned_lines STREQUAL exhaustive_lines)
    foreach(line IN ZIP_LISTS pruned_lines exhaustive_lines)
      if(NOT line_0 STREQUAL line_1)
        message(FATAL_ERROR "first difference:\n  pruned:     ${line_0}\n  exhaustive: ${line_1}")
      endif()
    endforeach()
    message(FATAL_ERROR "the pruned and exhaustive runs printed different numbers of decisions")
  endif()
  return()
endif()

set(command "${SAMPLE}" "${DATABASE}")
if(DEFINED SVG)
  file(REMOVE "${SVG}")
  list(APPEND command --svg "${SVG}")
endif()
list(APPEND command ${ARGS})

execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 120)
message(STATUS "stdout:\n${out}")
message(STATUS "stderr:\n${err}")

if(EXPECT STREQUAL "bad_database")
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "expected exit code 1 for a bad database, got '${rc}'")
  endif()
  if(NOT err MATCHES "cannot open database '[^']+': [A-Za-z]+: .+")
    message(FATAL_ERROR "expected 'cannot open database '<path>': <Code>: <reason>' on stderr")
  endif()
  return()
endif()

if(EXPECT STREQUAL "no_gpu")
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "expected exit code 1 without a Vulkan device, got '${rc}'")
  endif()
  set(no_device "--gpu needs a Vulkan device and none could be used: [^\n]+\nInstall a Vulkan")
  if(NOT err MATCHES "${no_device}")
    message(FATAL_ERROR "expected '--gpu needs a Vulkan device and none could be used: <why>' "
                        "and what to install on stderr")
  endif()
  return()
endif()
if(EXPECT STREQUAL "gpu" AND rc EQUAL 1 AND err MATCHES "--gpu needs a Vulkan device")
  message(STATUS "no Vulkan device, skipped")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mmdb_sample exited with '${rc}', expected 0")
endif()
if(EXPECT STREQUAL "gpu" AND NOT out MATCHES "gpu passes, mean ms per step over [0-9]+ steps")
  message(FATAL_ERROR "no 'gpu passes, mean ms per step ...' line in the output")
endif()
set(decision_line "t= *[0-9.]+ s  char +[0-9]+  jump to global frame +[0-9]+ ")
string(APPEND decision_line "\\(clip '[^']+' local frame +[0-9]+\\)  cost +[0-9.]+")
if(NOT out MATCHES "${decision_line}")
  message(FATAL_ERROR "no decision line like 't=... s  char N  jump to global frame F "
                      "(clip 'NAME' local frame L)  cost C' in the output")
endif()
set(summary_line "summary: [0-9]+ searches \\([a-z]+\\), [0-9.]+ jumps/s per character, ")
string(APPEND summary_line "mean cost [0-9.]+, mean search [0-9.]+ us")
if(NOT out MATCHES "${summary_line}")
  message(FATAL_ERROR "no summary line like 'summary: N searches (method), X jumps/s per "
                      "character, mean cost C, mean search T us' in the output")
endif()

if(DEFINED SVG)
  if(NOT EXISTS "${SVG}")
    message(FATAL_ERROR "the SVG file '${SVG}' was not written")
  endif()
  file(READ "${SVG}" svg)
  string(FIND "${svg}" "<svg " svg_start)
  if(NOT svg_start EQUAL 0)
    message(FATAL_ERROR "'${SVG}' does not start with <svg")
  endif()
  if(NOT svg MATCHES "</svg>\n$")
    message(FATAL_ERROR "'${SVG}' does not end with </svg>")
  endif()
  string(REGEX MATCHALL "<polyline [^>]*points=\"[0-9.,-]+( [0-9.,-]+)+\"/>" lines "${svg}")
  list(LENGTH lines polyline_count)
  if(NOT polyline_count EQUAL 2)
    message(FATAL_ERROR "'${SVG}' holds ${polyline_count} non-empty polylines, expected 2")
  endif()
  # Every opened element is closed (a cheap well-formedness check without an XML parser).
  string(REGEX MATCHALL "<[a-z]+ " opened "${svg}")
  string(REGEX MATCHALL "(/>|</[a-z]+>)" closed "${svg}")
  list(LENGTH opened opened_count)
  list(LENGTH closed closed_count)
  if(NOT opened_count EQUAL closed_count)
    message(FATAL_ERROR "'${SVG}' opens ${opened_count} elements but closes ${closed_count}")
  endif()
endif()
