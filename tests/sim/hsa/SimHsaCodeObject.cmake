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
endfunction()
