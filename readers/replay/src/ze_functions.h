// The Level Zero entry points replay calls, looked up in the loader at run
// time: gtap links no GPU runtime, and `--sim` must be able to point the
// loader at another driver before it is opened.
#pragma once

#include <level_zero/ze_api.h>

#include <string>

namespace gtap::replay {

#define GTAP_REPLAY_ZE_FUNCTIONS(X)                                                                   \
  X(zeInit) X(zeDriverGet) X(zeDeviceGet) X(zeDeviceGetProperties) X(zeContextCreate)                 \
  X(zeContextCreateEx) X(zeContextDestroy) X(zeMemAllocHost) X(zeMemAllocDevice) X(zeMemAllocShared)  \
  X(zeMemFree) X(zeModuleCreate) X(zeModuleDestroy) X(zeModuleBuildLogGetString)                      \
  X(zeModuleBuildLogDestroy) X(zeKernelCreate) X(zeKernelDestroy) X(zeKernelSetGroupSize)              \
  X(zeKernelSetArgumentValue) X(zeKernelSetIndirectAccess) X(zeKernelGetProperties)                   \
  X(zeCommandQueueCreate) X(zeCommandQueueDestroy) X(zeCommandQueueSynchronize)                       \
  X(zeCommandQueueExecuteCommandLists) X(zeCommandListCreate) X(zeCommandListCreateImmediate)          \
  X(zeCommandListClose) X(zeCommandListReset) X(zeCommandListDestroy) X(zeCommandListAppendLaunchKernel) \
  X(zeCommandListAppendLaunchCooperativeKernel) X(zeCommandListAppendMemoryCopy)                      \
  X(zeCommandListAppendMemoryCopyRegion) X(zeCommandListAppendMemoryFill) X(zeCommandListAppendBarrier) \
  X(zeCommandListAppendSignalEvent) X(zeCommandListAppendWaitOnEvents) X(zeCommandListAppendEventReset) \
  X(zeEventPoolCreate) X(zeEventPoolDestroy) X(zeEventCreate) X(zeEventDestroy) X(zeEventHostSignal)  \
  X(zeEventHostReset) X(zeEventHostSynchronize) X(zeFenceCreate) X(zeFenceDestroy) X(zeFenceReset)    \
  X(zeFenceHostSynchronize)

struct ZeFunctions {
#define GTAP_REPLAY_DECLARE(name) decltype(&::name) name = nullptr;
  GTAP_REPLAY_ZE_FUNCTIONS(GTAP_REPLAY_DECLARE)
#undef GTAP_REPLAY_DECLARE
  // An experimental extension: null when the loader lacks it.
  decltype(&::zeKernelSetGlobalOffsetExp) zeKernelSetGlobalOffsetExp = nullptr;
};

// Opens libze_loader.so.1 (once per process; it stays loaded) and looks up
// every function. Throws std::runtime_error naming what is missing.
const ZeFunctions& loadZeFunctions();

// "ZE_RESULT_ERROR_INVALID_ARGUMENT (0x78000004)".
std::string resultName(ze_result_t result);

}  // namespace gtap::replay
