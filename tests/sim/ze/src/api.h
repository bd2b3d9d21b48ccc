// Every Level Zero function the simulated driver implements.
//
// The list drives two things: the declarations below (each sim::zeX has
// exactly the type of the API's zeX, so a mismatch fails to compile) and the
// name table behind zeDriverGetExtensionFunctionAddress.
#pragma once

#include <ze_api.h>

#define GTAP_SIM_ZE_FUNCTIONS(X)                   \
  X(zeInit)                                        \
  X(zeDriverGet)                                   \
  X(zeDriverGetApiVersion)                         \
  X(zeDriverGetProperties)                         \
  X(zeDriverGetIpcProperties)                      \
  X(zeDriverGetExtensionProperties)                \
  X(zeDriverGetExtensionFunctionAddress)           \
  X(zeDeviceGet)                                   \
  X(zeDeviceGetSubDevices)                         \
  X(zeDeviceGetProperties)                         \
  X(zeDeviceGetComputeProperties)                  \
  X(zeDeviceGetModuleProperties)                   \
  X(zeDeviceGetCommandQueueGroupProperties)        \
  X(zeDeviceGetMemoryProperties)                   \
  X(zeDeviceGetMemoryAccessProperties)             \
  X(zeDeviceGetCacheProperties)                    \
  X(zeDeviceGetImageProperties)                    \
  X(zeDeviceGetExternalMemoryProperties)           \
  X(zeDeviceGetP2PProperties)                      \
  X(zeDeviceCanAccessPeer)                         \
  X(zeDeviceGetStatus)                             \
  X(zeDeviceGetGlobalTimestamps)                   \
  X(zeContextCreate)                               \
  X(zeContextCreateEx)                             \
  X(zeContextDestroy)                              \
  X(zeContextGetStatus)                            \
  X(zeContextSystemBarrier)                        \
  X(zeContextMakeMemoryResident)                   \
  X(zeContextEvictMemory)                          \
  X(zeMemAllocShared)                              \
  X(zeMemAllocDevice)                              \
  X(zeMemAllocHost)                                \
  X(zeMemFree)                                     \
  X(zeMemFreeExt)                                  \
  X(zeMemGetAllocProperties)                       \
  X(zeMemGetAddressRange)                          \
  X(zeModuleCreate)                                \
  X(zeModuleDestroy)                               \
  X(zeModuleDynamicLink)                           \
  X(zeModuleGetNativeBinary)                       \
  X(zeModuleGetGlobalPointer)                      \
  X(zeModuleGetKernelNames)                        \
  X(zeModuleGetProperties)                         \
  X(zeModuleGetFunctionPointer)                    \
  X(zeModuleBuildLogDestroy)                       \
  X(zeModuleBuildLogGetString)                     \
  X(zeKernelCreate)                                \
  X(zeKernelDestroy)                               \
  X(zeKernelSetCacheConfig)                        \
  X(zeKernelSetGroupSize)                          \
  X(zeKernelSuggestGroupSize)                      \
  X(zeKernelSuggestMaxCooperativeGroupCount)       \
  X(zeKernelSetArgumentValue)                      \
  X(zeKernelSetIndirectAccess)                     \
  X(zeKernelGetIndirectAccess)                     \
  X(zeKernelGetSourceAttributes)                   \
  X(zeKernelGetProperties)                         \
  X(zeKernelGetName)                               \
  X(zeKernelSetGlobalOffsetExp)                    \
  X(zeKernelSchedulingHintExp)                     \
  X(zeEventPoolCreate)                             \
  X(zeEventPoolDestroy)                            \
  X(zeEventCreate)                                 \
  X(zeEventDestroy)                                \
  X(zeEventHostSignal)                             \
  X(zeEventHostSynchronize)                        \
  X(zeEventQueryStatus)                            \
  X(zeEventHostReset)                              \
  X(zeEventQueryKernelTimestamp)                   \
  X(zeEventQueryTimestampsExp)                     \
  X(zeFenceCreate)                                 \
  X(zeFenceDestroy)                                \
  X(zeFenceHostSynchronize)                        \
  X(zeFenceQueryStatus)                            \
  X(zeFenceReset)                                  \
  X(zeCommandQueueCreate)                          \
  X(zeCommandQueueDestroy)                         \
  X(zeCommandQueueExecuteCommandLists)             \
  X(zeCommandQueueSynchronize)                     \
  X(zeCommandListCreate)                           \
  X(zeCommandListCreateImmediate)                  \
  X(zeCommandListDestroy)                          \
  X(zeCommandListClose)                            \
  X(zeCommandListReset)                            \
  X(zeCommandListAppendWriteGlobalTimestamp)       \
  X(zeCommandListAppendBarrier)                    \
  X(zeCommandListAppendMemoryRangesBarrier)        \
  X(zeCommandListAppendMemoryCopy)                 \
  X(zeCommandListAppendMemoryFill)                 \
  X(zeCommandListAppendMemoryCopyRegion)           \
  X(zeCommandListAppendMemoryCopyFromContext)      \
  X(zeCommandListAppendMemoryPrefetch)             \
  X(zeCommandListAppendMemAdvise)                  \
  X(zeCommandListAppendSignalEvent)                \
  X(zeCommandListAppendWaitOnEvents)               \
  X(zeCommandListAppendEventReset)                 \
  X(zeCommandListAppendQueryKernelTimestamps)      \
  X(zeCommandListAppendLaunchKernel)               \
  X(zeCommandListAppendLaunchCooperativeKernel)    \
  X(zeCommandListAppendLaunchKernelIndirect)       \
  X(zeCommandListAppendLaunchMultipleKernelsIndirect)

#include <new>

// Counter-based event pools (ZE_experimental_event_pool_counter_based, API
// 1.8) and in-order lists come with headers that name the extension.
#ifdef ZE_EVENT_POOL_COUNTER_BASED_EXP_NAME
#define GTAP_SIM_HAS_COUNTER_BASED_EVENTS 1
#endif

namespace sim {
#define GTAP_SIM_DECLARE(name) decltype(::name) name;
GTAP_SIM_ZE_FUNCTIONS(GTAP_SIM_DECLARE)
#undef GTAP_SIM_DECLARE
}  // namespace sim

// zeInitDrivers (API 1.10) exists only in headers that declare it; only those
// headers define ZE_API_VERSION_CURRENT_M. The 1.20 loader uses it to
// decide whether a program's zeInitDrivers may reach this driver.
#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 10)
#define GTAP_SIM_HAS_INIT_DRIVERS 1
namespace sim {
decltype(::zeInitDrivers) zeInitDrivers;
}  // namespace sim
// zeCommandListHostSynchronize (API 1.6): every header that defines
// ZE_API_VERSION_CURRENT_M has it; Debian 12's 1.8 loader headers (API 1.5)
// do not.
#define GTAP_SIM_HAS_LIST_HOST_SYNCHRONIZE 1
namespace sim {
decltype(::zeCommandListHostSynchronize) zeCommandListHostSynchronize;
}  // namespace sim
#endif

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
