# Runs a workload and checks what it prints (the format is in ze_workload.h).
#
#   cmake -DPROGRAM=path [-DARGS=a,b] [-DREQUIRED=launch,checksum]
#         [-DEXPECT_LAUNCHES=N] [-DEXPECT_EXIT=N] -P check_workload.cmake
#
# With EXPECT_EXIT (non-zero) the program runs once and must exit with that
# status. Otherwise it runs twice; both runs must exit 0, print only
# well-formed lines, at least one line of each REQUIRED kind, as many frees as
# allocations, EXPECT_LAUNCHES launch lines if given, and the same lines both
# times apart from timestamps (which are device durations).

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
      message(FATAL_ERROR "${PROGRAM} ${args}: exit status ${status}, expected ${EXPECT_EXIT}\n${errors}")
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
  set(launches 0)
  set(allocs 0)
  set(frees 0)
  set(seen "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^launch ${name} ${n} ${n} ${n} ${n} ${n} ${n}$")
      math(EXPR launches "${launches} + 1")
    elseif(line MATCHES "^(alloc|free) (host|device|shared) ${n}$")
      if(CMAKE_MATCH_1 STREQUAL "alloc")
        math(EXPR allocs "${allocs} + 1")
      else()
        math(EXPR frees "${frees} + 1")
      endif()
    elseif(line MATCHES "^(copy|fill) ${n}$" OR line MATCHES "^checksum ${name} [0-9a-f]+$")
    elseif(line MATCHES "^(sync|events) [a-z-]+$")
      # which entry points the headers offered (ze_host_sync, ze_counter_events)
    elseif(line MATCHES "^round ${n}$" OR line STREQUAL "handler own")
      # ze_phases: the round whose lines follow; its own signal handler ran
    elseif(line MATCHES "^range ${name}$")
      # ze_ranges: the named range the next launch is made in
    elseif(line MATCHES "^timestamp ${name} ${n}$")
      string(REGEX REPLACE "^timestamp ${name} " "" ns "${line}")
      if(ns EQUAL 0)
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
  if(NOT allocs EQUAL frees)
    message(FATAL_ERROR "${PROGRAM}: ${allocs} allocations but ${frees} frees")
  endif()
  if(DEFINED EXPECT_LAUNCHES AND NOT launches EQUAL EXPECT_LAUNCHES)
    message(FATAL_ERROR "${PROGRAM}: ${launches} launch lines, expected ${EXPECT_LAUNCHES}")
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
