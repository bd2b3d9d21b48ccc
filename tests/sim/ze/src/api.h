// Every Level Zero function the simulated driver implements.
//
// The list (implemented_functions.txt, turned into sim_ze_functions.h at build
// time) drives three things: the declarations below (each sim::zeX has
// exactly the type of the API's zeX, so a mismatch fails to compile), the
// generated dispatch tables the loader asks for, and the name table behind
// zeDriverGetExtensionFunctionAddress.
#pragma once

#include <ze_api.h>
#include <zet_api.h>
#include <zes_api.h>

#include "sim_ze_functions.h"

#include <new>

// Counter-based event pools (ZE_experimental_event_pool_counter_based, API
// 1.8) and in-order lists come with headers that name the extension.
#ifdef ZE_EVENT_POOL_COUNTER_BASED_EXP_NAME
#define GTAP_SIM_HAS_COUNTER_BASED_EVENTS 1
#endif

namespace sim {
#define GTAP_SIM_DECLARE(name) decltype(::name) name;
GTAP_SIM_ZE_FUNCTIONS(GTAP_SIM_DECLARE)
// zeInitDrivers (API 1.10) and zeCommandListHostSynchronize (API 1.6), with
// the headers that declare them; Debian 12's 1.8 loader headers (API 1.4) do
// not. The 1.20 loader uses zeInitDrivers to decide whether a program's
// zeInitDrivers may reach this driver.
GTAP_SIM_ZE_OPTIONAL_FUNCTIONS(GTAP_SIM_DECLARE)
#undef GTAP_SIM_DECLARE

// A vendor function no header declares, reachable only through
// zeDriverGetExtensionFunctionAddress (driver.cpp), as Intel's driver offers
// it: the address of the kernel's first instruction.
ze_result_t zexKernelGetBaseAddress(ze_kernel_handle_t hKernel, uint64_t* baseAddress);
}  // namespace sim

namespace sim {

// What the tables and zeDriverGetExtensionFunctionAddress hand out: the
// implementation wrapped so that no C++ exception (an allocation failure, a
// thread that cannot start) ever unwinds into the C caller.
template <auto Fn>
struct Guard;
template <class... Args, ze_result_t (*Fn)(Args...)>
struct Guard<Fn> {
  static ze_result_t ZE_APICALL call(Args... args) noexcept {
    try {
      return Fn(args...);
    } catch (const std::bad_alloc&) {
      return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    } catch (...) {
      return ZE_RESULT_ERROR_UNKNOWN;
    }
  }
};

}  // namespace sim

#define GTAP_SIM_ENTRY(fn) (&::sim::Guard<&::sim::fn>::call)
