# Writes the list of functions libhsa-runtime64.so.1 exports, read from the
# installed HSA headers at build time (cmake -P, see CMakeLists.txt):
#
#   GTAP_SIM_HSA_EXPORT(<table>, <name>)         every entry of the core, AMD
#                                                extension, finalizer and image
#                                                tables in hsa_api_trace.h
#   GTAP_SIM_HSA_EXPORT_ALIAS(<name>, <target>)  the deprecated
#                                                _acquire/_release/_acq_rel
#                                                signal and queue functions of
#                                                hsa.h, which ROCr exports as
#                                                aliases of the sc variants
#
# Inputs: HSA_INCLUDE_DIR (the directory holding hsa/), OUTPUT.
cmake_minimum_required(VERSION 3.25)

# Reachable only through the AMD extension table, as in ROCr ("for use by
# tools only - not in library export table").
set(tool_only hsa_amd_queue_intercept_create hsa_amd_queue_intercept_register
              hsa_amd_runtime_queue_create_register)

function(read_lines path out)
  file(READ "${path}" text)
  # Statements end in ';', which CMake lists would split on.
  string(REPLACE ";" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

set(result "// Generated from ${HSA_INCLUDE_DIR}/hsa by generate_exports.cmake.\n")

read_lines("${HSA_INCLUDE_DIR}/hsa/hsa_api_trace.h" lines)
set(table "")
foreach(line IN LISTS lines)
  if(line MATCHES "^struct (CoreApiTable|AmdExtTable|FinalizerExtTable|ImageExtTable) {")
    set(name_CoreApiTable core)
    set(name_AmdExtTable amd_ext)
    set(name_FinalizerExtTable finalizer_ext)
    set(name_ImageExtTable image_ext)
    set(table "${name_${CMAKE_MATCH_1}}")
  elseif(line MATCHES "^}")
    set(table "")
  elseif(table AND line MATCHES "decltype\\(([a-z_0-9]+)\\)")
    set(function "${CMAKE_MATCH_1}")
    if(NOT function IN_LIST tool_only)
      string(APPEND result "GTAP_SIM_HSA_EXPORT(${table}, ${function})\n")
      math(EXPR count_${table} "${count_${table}} + 0 + 1")
    endif()
  endif()
endforeach()
foreach(t core amd_ext finalizer_ext image_ext)
  if(NOT count_${t})
    message(FATAL_ERROR "no ${t} entries found in ${HSA_INCLUDE_DIR}/hsa/hsa_api_trace.h")
  endif()
endforeach()

read_lines("${HSA_INCLUDE_DIR}/hsa/hsa.h" lines)
foreach(line IN LISTS lines)
  if(line MATCHES "HSA_DEPRECATED (hsa_(signal|queue)_[a-z_]+)_(acquire|release|acq_rel)\\(")
    set(stem "${CMAKE_MATCH_1}")
    set(order_acquire scacquire)
    set(order_release screlease)
    set(order_acq_rel scacq_screl)
    string(APPEND result
           "GTAP_SIM_HSA_EXPORT_ALIAS(${stem}_${CMAKE_MATCH_3}, ${stem}_${order_${CMAKE_MATCH_3}})\n")
  endif()
endforeach()

# Rewritten only when it changes, so an unchanged header rebuilds nothing.
file(WRITE "${OUTPUT}.tmp" "${result}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
