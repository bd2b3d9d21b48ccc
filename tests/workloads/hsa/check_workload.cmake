# Runs an HSA workload and checks what it prints (the format is in hsa_workload.h).
#
#   cmake -DPROGRAM=path [-DARGS=a,b] [-DREQUIRED=dispatch,checksum]
#         [-DEXPECT_DISPATCHES=N] [-DEXPECT_EXIT=N] -P check_workload.cmake
#
# With EXPECT_EXIT (non-zero) the program runs once and must exit with that
# status. Otherwise it runs twice; both runs must exit 0, print only
# well-formed lines, at least one line of each REQUIRED kind (the first word
# of a line: dispatch, dispatches, barrier, copy, alloc, free, lock, unlock,
# checksum, timestamp, calls), as many frees as allocations and of the same
# kinds and sizes, as many unlocks as locks and of the same sizes,
# EXPECT_DISPATCHES dispatches if given (dispatch lines plus the counts of
# "dispatches N" lines), and the same lines both times apart from timestamps
# (which are device durations).

cmake_minimum_required(VERSION 3.25)

if(NOT PROGRAM)
  message(FATAL_ERROR "PROGRAM not set")
endif()
string(REPLACE "," ";" args "${ARGS}")
string(REPLACE "," ";" required "${REQUIRED}")

function(run_program out_var)
  execute_process(COMMAND "${PROGRAM}" ${args}
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  if(DEFINED EXPECT_EXIT AND NOT EXPECT_EXIT STREQUAL "0")
    if(NOT status STREQUAL EXPECT_EXIT)
      message(FATAL_ERROR "${PROGRAM} ${args}: exit status ${status}, expected ${EXPECT_EXIT}\n"
                          "stdout:\n${output}\nstderr:\n${errors}")
    endif()
  elseif(NOT status STREQUAL "0")
    message(FATAL_ERROR "${PROGRAM} ${args}: exit status ${status}\nstdout:\n${output}\nstderr:\n${errors}")
  endif()
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()

# The lines of `output` other than timestamps, after checking each line.
function(check_lines output out_var)
  # CMake lists split on ';' and treat brackets specially; neither belongs in the output.
  if(output MATCHES "[][;\\\\]")
    message(FATAL_ERROR "${PROGRAM}: stdout holds characters the format never uses:\n${output}")
  endif()
  if(NOT output MATCHES "\n$")
    message(FATAL_ERROR "${PROGRAM}: stdout does not end with a newline:\n${output}")
  endif()
  string(REGEX REPLACE "\n$" "" output "${output}")
  string(REPLACE "\n" ";" lines "${output}")
  set(name "[A-Za-z_][A-Za-z0-9_]*")
  set(n "[0-9]+")
  set(kept "")
  set(dispatches 0)
  set(allocs "")
  set(frees "")
  set(locks "")
  set(unlocks "")
  set(seen "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^dispatch ${name} ${n} ${n} ${n} ${n} ${n} ${n}$")
      math(EXPR dispatches "${dispatches} + 1")
    elseif(line MATCHES "^dispatches (${n})$")
      math(EXPR dispatches "${dispatches} + ${CMAKE_MATCH_1}")
    elseif(line MATCHES "^(alloc|free) ((host|device) ${n})$")
      if(CMAKE_MATCH_1 STREQUAL "alloc")
        list(APPEND allocs "${CMAKE_MATCH_2}")
      else()
        list(APPEND frees "${CMAKE_MATCH_2}")
      endif()
    elseif(line MATCHES "^lock (${n})$")
      list(APPEND locks "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^unlock (${n})$")
      list(APPEND unlocks "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^barrier (and|or)$" OR line MATCHES "^copy ${n}$"
           OR line MATCHES "^checksum ${name} [0-9a-f]+$" OR line MATCHES "^calls hsa_[a-z0-9_]+ ${n}$")
    elseif(line MATCHES "^timestamp ${name} (${n})$")
      if(CMAKE_MATCH_1 EQUAL 0)
        message(FATAL_ERROR "${PROGRAM}: zero duration: ${line}")
      endif()
    else()
      message(FATAL_ERROR "${PROGRAM}: malformed line \"${line}\" in:\n${output}")
    endif()
    string(REGEX MATCH "^[a-z]+" kind "${line}")
    list(APPEND seen "${kind}")
    if(NOT kind STREQUAL "timestamp")
      list(APPEND kept "${line}")
    endif()
  endforeach()
  foreach(kind IN LISTS required)
    if(NOT kind IN_LIST seen)
      message(FATAL_ERROR "${PROGRAM}: no \"${kind}\" line in:\n${output}")
    endif()
  endforeach()
  list(LENGTH allocs alloc_count)
  list(LENGTH frees free_count)
  if(NOT alloc_count EQUAL free_count)
    message(FATAL_ERROR "${PROGRAM}: ${alloc_count} allocations but ${free_count} frees")
  endif()
  list(SORT allocs)
  list(SORT frees)
  if(NOT allocs STREQUAL frees)
    message(FATAL_ERROR "${PROGRAM}: the frees (${frees}) are not what was allocated (${allocs})")
  endif()
  list(SORT locks)
  list(SORT unlocks)
  if(NOT locks STREQUAL unlocks)
    message(FATAL_ERROR "${PROGRAM}: the unlocks (${unlocks}) are not what was locked (${locks})")
  endif()
  if(DEFINED EXPECT_DISPATCHES AND NOT dispatches EQUAL EXPECT_DISPATCHES)
    message(FATAL_ERROR "${PROGRAM}: ${dispatches} dispatches, expected ${EXPECT_DISPATCHES}")
  endif()
  set(${out_var} "${kept}" PARENT_SCOPE)
endfunction()

run_program(first)
if(DEFINED EXPECT_EXIT AND NOT EXPECT_EXIT STREQUAL "0")
  return()
endif()
check_lines("${first}" first_lines)
run_program(second)
check_lines("${second}" second_lines)
if(NOT first_lines STREQUAL second_lines)
  message(FATAL_ERROR "${PROGRAM}: two runs printed different lines:\n${first}\n---\n${second}")
endif()
