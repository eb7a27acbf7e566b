# Runs mmdb_sample headless and checks what a user would look at: the exit code, the decision
# lines, the summary line and the SVG plot.
#
#   cmake -DSAMPLE=<mmdb_sample> -DDATABASE=<file.mmdb> -DSVG=<out.svg> -DARGS="a;b"
#         -DEXPECT=ok|bad_database -P check_sample.cmake
#
# EXPECT=ok: exit 0, at least one decision line naming the global and clip-local frame, the
# summary line, and an SVG that starts with <svg, ends with </svg> and holds two polylines.
# EXPECT=bad_database: exit 1 and a message saying why the database cannot be used.
# EXPECT=bad_stick: exit 1 and a message naming the stick file, the line and what is wrong.
# EXPECT=pruned_equals_exhaustive: runs twice, the second time with --exhaustive, and checks
# that both print the same decisions (the two searches return the same frame and cost).
# EXPECT=cpu_equals_gpu: runs on the CPU, then with --gpu, and checks that both make the same
# decisions: the same decision lines (time, character, start or jump, global and clip-local frame,
# reason) and the same search and jump counts. Costs agree to 0.1% plus the printed 0.001: the
# query's trajectory comes from exp, sin, cos and atan, which a GPU computes to a few ulps of the
# CPU's (lavapipe's sin and cos less closely), so the same winner's cost can differ in its last
# printed digits. For the same reason a near tie (the same search, other winners, costs within
# that tolerance) may go either way: such a character is followed no further, and the counts are
# not compared; more than a quarter of the characters left so fails. Without a Vulkan device the
# test reports itself skipped.
# EXPECT=explain: as ok, run with --explain: every decision line is followed by its search's
# candidates (#1, #2, #3), #1 being the frame the decision chose, and each candidate's cost is
# taken apart into every feature block's part.
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

# Runs the sample with ${ARGS} and the arguments after `timeout`; sets <label>_lines (the decision lines) and
# <label>_counts ("N searches, X jumps/s"). Sets <label>_no_device when --gpu found no Vulkan
# device instead of failing.
function(run_for_decisions label timeout)
  execute_process(COMMAND "${SAMPLE}" "${DATABASE}" ${ARGS} ${ARGN} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${timeout})
  if(rc EQUAL 1 AND err MATCHES "--gpu needs a Vulkan device")
    set(${label}_no_device TRUE PARENT_SCOPE)
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the ${label} run exited with '${rc}': ${err}")
  endif()
  string(REGEX MATCHALL "t=[^\n]*" lines "${out}")
  list(LENGTH lines count)
  if(count EQUAL 0)
    message(FATAL_ERROR "the ${label} run printed no decision")
  endif()
  string(REGEX MATCH "summary: ([0-9]+) searches \\([a-z]+\\), ([0-9.]+) jumps/s" summary "${out}")
  set(counts "${CMAKE_MATCH_1} searches, ${CMAKE_MATCH_2} jumps/s")
  message(STATUS "${label}: ${count} decisions, ${counts}")
  set(${label}_lines "${lines}" PARENT_SCOPE)
  set(${label}_counts "${counts}" PARENT_SCOPE)
endfunction()

if(EXPECT STREQUAL "pruned_equals_exhaustive")
  run_for_decisions(pruned 120)
  run_for_decisions(exhaustive 120 --exhaustive)
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

if(EXPECT STREQUAL "cpu_equals_gpu")
  run_for_decisions(cpu 300)
  run_for_decisions(gpu 300 --gpu)
  if(gpu_no_device)
    message(STATUS "no Vulkan device, skipped")
    return()
  endif()
  # Each character's decisions in order, the CPU's against the GPU's.
  set(characters "")
  foreach(label cpu gpu)
    foreach(line IN LISTS ${label}_lines)
      if(NOT line MATCHES "char +([0-9]+) ")
        message(FATAL_ERROR "no character in '${line}'")
      endif()
      list(APPEND ${label}_of_${CMAKE_MATCH_1} "${line}")
      list(APPEND characters ${CMAKE_MATCH_1})
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES characters)
  list(LENGTH characters character_count)
  set(cost_pattern "^(.*)cost +([0-9]+)\\.([0-9][0-9][0-9])(.*)$")
  set(diverged "")
  set(compared 0)
  foreach(c IN LISTS characters)
    foreach(line IN ZIP_LISTS cpu_of_${c} gpu_of_${c})
      if(NOT DEFINED line_0 OR NOT DEFINED line_1 OR line_0 STREQUAL "" OR line_1 STREQUAL "")
        message(FATAL_ERROR "character ${c}: the CPU and the GPU printed different numbers of "
                            "decisions, the same ones up to there")
      endif()
      if(NOT line_0 MATCHES "${cost_pattern}")
        message(FATAL_ERROR "no cost in '${line_0}'")
      endif()
      set(cpu_rest "${CMAKE_MATCH_1}${CMAKE_MATCH_4}")
      math(EXPR cpu_cost "${CMAKE_MATCH_2} * 1000 + 1${CMAKE_MATCH_3} - 1000")  # thousandths
      if(NOT line_1 MATCHES "${cost_pattern}")
        message(FATAL_ERROR "no cost in '${line_1}'")
      endif()
      set(gpu_rest "${CMAKE_MATCH_1}${CMAKE_MATCH_4}")
      math(EXPR gpu_cost "${CMAKE_MATCH_2} * 1000 + 1${CMAKE_MATCH_3} - 1000")
      math(EXPR difference "${cpu_cost} - ${gpu_cost}")
      if(difference LESS 0)
        math(EXPR difference "-(${difference})")
      endif()
      math(EXPR allowed "1 + ${cpu_cost} / 1000")
      if(NOT cpu_rest STREQUAL gpu_rest)
        # The same search (time, character, reason) whose winners differ at costs that agree
        # within the tolerance: a near tie, which the GPU's few ulps may break the other way.
        # From there the character plays other frames: it is followed no further.
        string(REGEX REPLACE "frame +[0-9]+" "frame" cpu_search "${cpu_rest}")
        string(REGEX REPLACE "frame +[0-9]+" "frame" gpu_search "${gpu_rest}")
        if(cpu_search STREQUAL gpu_search AND NOT difference GREATER allowed)
          message(STATUS "character ${c} left at a near tie:\n  cpu: ${line_0}\n  gpu: ${line_1}")
          list(APPEND diverged ${c})
          break()
        endif()
        message(FATAL_ERROR "first different decision:\n  cpu: ${line_0}\n  gpu: ${line_1}")
      endif()
      if(difference GREATER allowed)
        message(FATAL_ERROR "the same decision with costs apart by more than 0.1%:\n"
                            "  cpu: ${line_0}\n  gpu: ${line_1}")
      endif()
      math(EXPR compared "${compared} + 1")
    endforeach()
  endforeach()
  list(LENGTH diverged diverged_count)
  math(EXPR most "${character_count} / 4")
  if(diverged_count GREATER most)
    list(JOIN diverged ", " diverged_list)
    message(FATAL_ERROR "${diverged_count} of ${character_count} characters left at near ties "
                        "(${diverged_list}): more than a quarter")
  endif()
  message(STATUS "${compared} decisions the same; left at near ties: ${diverged_count} of "
                 "${character_count} characters")
  if(diverged_count GREATER 0)
    return()  # the counts include the other frames those characters played
  endif()
  if(NOT cpu_counts STREQUAL gpu_counts)
    message(FATAL_ERROR "the CPU counted ${cpu_counts}, the GPU ${gpu_counts}")
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

if(EXPECT STREQUAL "bad_stick")
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "expected exit code 1 for a bad stick file, got '${rc}'")
  endif()
  if(NOT err MATCHES "bad stick file: [^:]+:[0-9]+: .+")
    message(FATAL_ERROR "expected 'bad stick file: <path>:<line>: <reason>' on stderr, got: ${err}")
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
if(EXPECT STREQUAL "explain")
  string(REPLACE "\n" ";" lines "${out}")
  set(explained 0)
  set(want "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^t= *[0-9.]+ s  char +([0-9]+)  (jump to|start at) global frame +([0-9]+) ")
      set(want "char +${CMAKE_MATCH_1}  #1 +frame +${CMAKE_MATCH_3} ")
    elseif(line MATCHES "#1 ")
      if(want AND NOT line MATCHES "${want}")
        message(FATAL_ERROR "the decision before it chose another frame than #1:\n${line}")
      endif()
      if(NOT line MATCHES "cost +[0-9.]+ = [0-9.]+ left_foot_position \\+ .*trajectory_direction")
        message(FATAL_ERROR "#1 not taken apart by feature block:\n${line}")
      endif()
      if(want)
        math(EXPR explained "${explained} + 1")
      endif()
      set(want "")
    endif()
  endforeach()
  if(explained EQUAL 0 OR NOT out MATCHES "#2 " OR NOT out MATCHES "#3 ")
    message(FATAL_ERROR "no decision followed by its explained candidates #1, #2 and #3")
  endif()
  message(STATUS "${explained} decisions explained")
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
  string(REGEX MATCHALL "<[a-z]+[ >]" opened "${svg}")
  string(REGEX MATCHALL "(/>|</[a-z]+>)" closed "${svg}")
  list(LENGTH opened opened_count)
  list(LENGTH closed closed_count)
  if(NOT opened_count EQUAL closed_count)
    message(FATAL_ERROR "'${SVG}' opens ${opened_count} elements but closes ${closed_count}")
  endif()
endif()
