// An executable for IREE's CPU drivers in the system-library format
// ("system-elf-x86_64": a shared library exporting
// iree_hal_executable_library_query), written against the executable library
// ABI of the IREE build it is compiled with. One export, elementwise_mul:
// dst[i] = lhs[i] * rhs[i] over 4 floats (bindings 0, 1 and 2), each
// workgroup taking every workgroup_count-th element from its id on. Built only
// with the real-IREE tests (tests/workloads/hal/CMakeLists.txt).
#include <stddef.h>
#include <stdint.h>

#include "iree/hal/local/executable_library.h"

static int elementwise_mul(const iree_hal_executable_environment_v0_t* environment,
                           const iree_hal_executable_dispatch_state_v0_t* dispatch,
                           const iree_hal_executable_workgroup_state_v0_t* workgroup) {
  (void)environment;
  const float* lhs = (const float*)dispatch->binding_ptrs[0];
  const float* rhs = (const float*)dispatch->binding_ptrs[1];
  float* dst = (float*)dispatch->binding_ptrs[2];
  size_t n = dispatch->binding_lengths[2] / sizeof(float);
  for (size_t i = workgroup->workgroup_id_x; i < n; i += dispatch->workgroup_count_x) dst[i] = lhs[i] * rhs[i];
  return 0;
}

static const iree_hal_executable_dispatch_v0_t kPointers[1] = {elementwise_mul};
static const iree_hal_executable_dispatch_attrs_v0_t kAttributes[1] = {{
    .binding_count = 3,
    .workgroup_size_x = 1,
    .workgroup_size_y = 1,
    .workgroup_size_z = 1,
}};
static const char* const kNames[1] = {"elementwise_mul"};

static const iree_hal_executable_library_header_t kHeader = {
    .version = IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST,
    .name = "gtap_elementwise_mul",
    .features = IREE_HAL_EXECUTABLE_LIBRARY_FEATURE_NONE,
    .sanitizer = IREE_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE,
};
static const iree_hal_executable_library_v0_t kLibrary = {
    .header = &kHeader,
    .exports = {.count = 1, .ptrs = kPointers, .attrs = kAttributes, .names = kNames},
};

__attribute__((visibility("default"))) const iree_hal_executable_library_header_t** iree_hal_executable_library_query(
    iree_hal_executable_library_version_t max_version, const iree_hal_executable_environment_v0_t* environment) {
  (void)environment;
  return max_version >= IREE_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST ? (const iree_hal_executable_library_header_t**)&kLibrary
                                                                   : NULL;
}
