// Shared by every part of the simulated HSA runtime.
#pragma once

// hsa_api_trace.h includes its siblings as "inc/..." unless AMD_INTERNAL_BUILD
// is defined (the build defines it); Debian installs them next to it.
#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>

#include <cstdint>

namespace sim_hsa {

// True between the first hsa_init and the matching last hsa_shut_down; every
// other entry point answers HSA_STATUS_ERROR_NOT_INITIALIZED outside that.
bool isOpen();

// One line on stderr, prefixed with the runtime's name.
void warn(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace sim_hsa

// Early-return helpers: keep each entry point a list of the checks the
// specification lists, in the order ROCr applies them.
#define SIM_OPEN() \
  if (!::sim_hsa::isOpen()) return HSA_STATUS_ERROR_NOT_INITIALIZED;

#define SIM_CHECK(cond, code) \
  if (!(cond)) return static_cast<hsa_status_t>(code);

#define SIM_NOT_NULL(ptr) SIM_CHECK((ptr) != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT)

// No C++ exception may leave the runtime: allocation failures become
// HSA_STATUS_ERROR_OUT_OF_RESOURCES.
#define SIM_TRY try {
#define SIM_CATCH                                \
  }                                              \
  catch (const std::bad_alloc&) {                \
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;    \
  }                                              \
  catch (...) {                                  \
    return HSA_STATUS_ERROR;                     \
  }
