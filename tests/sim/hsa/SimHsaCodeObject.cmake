# gtap_add_sim_hsa_code_object(<target> <source>...)
#
# Builds kernels written with gtap_sim_hsa_kernel.h into a code object for the
# simulated HSA runtime: a host shared object at
# ${GTAP_SIM_OUTPUT_DIR}/hsa/kernels/<target>.so (use $<TARGET_FILE:<target>>),
# whose bytes a program passes to hsa_code_object_reader_create_from_memory
# (or whose file it opens for _from_file). Sources may be C or C++. Globals
# meant to be executable variable symbols need default visibility. Callable
# from any directory added after tests/sim/hsa, since functions (unlike
# variables) are global in CMake.
#
# Every kernel needs its GTAP_SIM_HSA_ARGUMENTS: after linking, sim_hsa_metadata
# writes the NT_AMDGPU_METADATA note a compiler would emit (kernels, their
# arguments, the simulated ISA as target) and objcopy adds it to the shared
# object as section .note.AMDGPU; a kernel without a layout fails the build.
function(gtap_add_sim_hsa_code_object target)
  if(NOT ARGN)
    message(FATAL_ERROR "gtap_add_sim_hsa_code_object(${target}): no sources given")
  endif()
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE gtap_sim_hsa_kernel_api)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY "${GTAP_SIM_OUTPUT_DIR}/hsa/kernels"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(NOT CMAKE_OBJCOPY)
    message(FATAL_ERROR "gtap_add_sim_hsa_code_object(${target}): objcopy not found (Debian: binutils)")
  endif()
  set(note "${CMAKE_CURRENT_BINARY_DIR}/${target}.amdgpu-metadata.note")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" "-DGENERATOR=$<TARGET_FILE:sim_hsa_metadata>" "-DOBJCOPY=${CMAKE_OBJCOPY}"
            "-DCODE_OBJECT=$<TARGET_FILE:${target}>" "-DNOTE=${note}"
            -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/add_metadata_note.cmake"
    COMMENT "Adding the AMDGPU metadata note to ${target}"
    VERBATIM)
  add_dependencies(${target} sim_hsa_metadata)
endfunction()
