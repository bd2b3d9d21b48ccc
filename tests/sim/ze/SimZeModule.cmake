# gtap_add_sim_ze_module(<target> <source>...)
#
# Builds kernels written with gtap_sim_kernel.h into a module for the simulated
# Level Zero device: a host shared object at
# ${GTAP_SIM_OUTPUT_DIR}/kernels/<target>.so (use $<TARGET_FILE:<target>>),
# whose bytes a program passes to zeModuleCreate with ZE_MODULE_FORMAT_NATIVE.
# Sources may be C or C++. Callable from any directory added after
# tests/sim/ze, since functions (unlike variables) are global in CMake.
function(gtap_add_sim_ze_module target)
  if(NOT ARGN)
    message(FATAL_ERROR "gtap_add_sim_ze_module(${target}): no sources given")
  endif()
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE gtap_sim_ze_kernel_api)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY "${GTAP_SIM_OUTPUT_DIR}/kernels"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
endfunction()
