// The only symbols the driver exports: the *GetProcAddrTable functions the
// Level Zero loader calls to fill its dispatch tables.
//
// An entry introduced in a later API version than the caller asked for is
// left alone, since the caller's table (built from older headers) has no room
// for it; the versions come from the loader's own per-entry checks. An entry
// the driver does not implement is set to null, which the loader turns into
// ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
#include "api.h"

#include <ze_ddi.h>
#include <zes_ddi.h>
#include <zet_ddi.h>

namespace {

template <class Table>
ze_result_t checkVersion(ze_api_version_t version, Table* table) {
  if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Tables only grow within a major version; another major is another ABI.
  if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT)) {
    return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  }
  return ZE_RESULT_SUCCESS;
}

template <class Slot, class Value>
void fill(Slot& slot, Value value, ze_api_version_t requested, ze_api_version_t since) {
  if (uint32_t(requested) >= uint32_t(since)) slot = value;
}

// A caller at least as new as these headers has a table at least as large.
template <class Table>
void clearIfCurrent(Table* table, ze_api_version_t requested) {
  if (uint32_t(requested) >= uint32_t(ZE_API_VERSION_CURRENT)) *table = Table{};
}

}  // namespace

extern "C" {

// Global
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version, ze_global_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnInit, GTAP_SIM_ENTRY(zeInit), version, ZE_API_VERSION_1_0);
#ifdef GTAP_SIM_HAS_INIT_DRIVERS
  fill(t->pfnInitDrivers, GTAP_SIM_ENTRY(zeInitDrivers), version, ZE_API_VERSION_1_10);
#endif
  return ZE_RESULT_SUCCESS;
}

// Driver
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version, ze_driver_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnGet, GTAP_SIM_ENTRY(zeDriverGet), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetApiVersion, GTAP_SIM_ENTRY(zeDriverGetApiVersion), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetProperties, GTAP_SIM_ENTRY(zeDriverGetProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetIpcProperties, GTAP_SIM_ENTRY(zeDriverGetIpcProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetExtensionProperties, GTAP_SIM_ENTRY(zeDriverGetExtensionProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetExtensionFunctionAddress, GTAP_SIM_ENTRY(zeDriverGetExtensionFunctionAddress), version, ZE_API_VERSION_1_1);
  return ZE_RESULT_SUCCESS;
}

// Device
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version, ze_device_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnGet, GTAP_SIM_ENTRY(zeDeviceGet), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetSubDevices, GTAP_SIM_ENTRY(zeDeviceGetSubDevices), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetProperties, GTAP_SIM_ENTRY(zeDeviceGetProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetComputeProperties, GTAP_SIM_ENTRY(zeDeviceGetComputeProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetModuleProperties, GTAP_SIM_ENTRY(zeDeviceGetModuleProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetCommandQueueGroupProperties, GTAP_SIM_ENTRY(zeDeviceGetCommandQueueGroupProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetMemoryProperties, GTAP_SIM_ENTRY(zeDeviceGetMemoryProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetMemoryAccessProperties, GTAP_SIM_ENTRY(zeDeviceGetMemoryAccessProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetCacheProperties, GTAP_SIM_ENTRY(zeDeviceGetCacheProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetImageProperties, GTAP_SIM_ENTRY(zeDeviceGetImageProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetExternalMemoryProperties, GTAP_SIM_ENTRY(zeDeviceGetExternalMemoryProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetP2PProperties, GTAP_SIM_ENTRY(zeDeviceGetP2PProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnCanAccessPeer, GTAP_SIM_ENTRY(zeDeviceCanAccessPeer), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetStatus, GTAP_SIM_ENTRY(zeDeviceGetStatus), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetGlobalTimestamps, GTAP_SIM_ENTRY(zeDeviceGetGlobalTimestamps), version, ZE_API_VERSION_1_1);
  fill(t->pfnReserveCacheExt, nullptr, version, ZE_API_VERSION_1_2);
  fill(t->pfnSetCacheAdviceExt, nullptr, version, ZE_API_VERSION_1_2);
  fill(t->pfnPciGetPropertiesExt, nullptr, version, ZE_API_VERSION_1_3);
  return ZE_RESULT_SUCCESS;
}

// DeviceExp
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceExpProcAddrTable(ze_api_version_t version, ze_device_exp_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnGetFabricVertexExp, nullptr, version, ZE_API_VERSION_1_4);
  return ZE_RESULT_SUCCESS;
}

// Context
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version, ze_context_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, GTAP_SIM_ENTRY(zeContextCreate), version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeContextDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetStatus, GTAP_SIM_ENTRY(zeContextGetStatus), version, ZE_API_VERSION_1_0);
  fill(t->pfnSystemBarrier, GTAP_SIM_ENTRY(zeContextSystemBarrier), version, ZE_API_VERSION_1_0);
  fill(t->pfnMakeMemoryResident, GTAP_SIM_ENTRY(zeContextMakeMemoryResident), version, ZE_API_VERSION_1_0);
  fill(t->pfnEvictMemory, GTAP_SIM_ENTRY(zeContextEvictMemory), version, ZE_API_VERSION_1_0);
  fill(t->pfnMakeImageResident, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnEvictImage, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnCreateEx, GTAP_SIM_ENTRY(zeContextCreateEx), version, ZE_API_VERSION_1_1);
  return ZE_RESULT_SUCCESS;
}

// CommandQueue
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandQueueProcAddrTable(ze_api_version_t version, ze_command_queue_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, GTAP_SIM_ENTRY(zeCommandQueueCreate), version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeCommandQueueDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnExecuteCommandLists, GTAP_SIM_ENTRY(zeCommandQueueExecuteCommandLists), version, ZE_API_VERSION_1_0);
  fill(t->pfnSynchronize, GTAP_SIM_ENTRY(zeCommandQueueSynchronize), version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// CommandList
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t version, ze_command_list_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, GTAP_SIM_ENTRY(zeCommandListCreate), version, ZE_API_VERSION_1_0);
  fill(t->pfnCreateImmediate, GTAP_SIM_ENTRY(zeCommandListCreateImmediate), version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeCommandListDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnClose, GTAP_SIM_ENTRY(zeCommandListClose), version, ZE_API_VERSION_1_0);
  fill(t->pfnReset, GTAP_SIM_ENTRY(zeCommandListReset), version, ZE_API_VERSION_1_0);
#ifdef GTAP_SIM_HAS_LIST_HOST_SYNCHRONIZE
  fill(t->pfnHostSynchronize, GTAP_SIM_ENTRY(zeCommandListHostSynchronize), version, ZE_API_VERSION_1_6);
#endif
  fill(t->pfnAppendWriteGlobalTimestamp, GTAP_SIM_ENTRY(zeCommandListAppendWriteGlobalTimestamp), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendBarrier, GTAP_SIM_ENTRY(zeCommandListAppendBarrier), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendMemoryRangesBarrier, GTAP_SIM_ENTRY(zeCommandListAppendMemoryRangesBarrier), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendMemoryCopy, GTAP_SIM_ENTRY(zeCommandListAppendMemoryCopy), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendMemoryFill, GTAP_SIM_ENTRY(zeCommandListAppendMemoryFill), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendMemoryCopyRegion, GTAP_SIM_ENTRY(zeCommandListAppendMemoryCopyRegion), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendMemoryCopyFromContext, GTAP_SIM_ENTRY(zeCommandListAppendMemoryCopyFromContext), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendImageCopy, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendImageCopyRegion, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendImageCopyToMemory, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendImageCopyFromMemory, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendMemoryPrefetch, GTAP_SIM_ENTRY(zeCommandListAppendMemoryPrefetch), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendMemAdvise, GTAP_SIM_ENTRY(zeCommandListAppendMemAdvise), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendSignalEvent, GTAP_SIM_ENTRY(zeCommandListAppendSignalEvent), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendWaitOnEvents, GTAP_SIM_ENTRY(zeCommandListAppendWaitOnEvents), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendEventReset, GTAP_SIM_ENTRY(zeCommandListAppendEventReset), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendQueryKernelTimestamps, GTAP_SIM_ENTRY(zeCommandListAppendQueryKernelTimestamps), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendLaunchKernel, GTAP_SIM_ENTRY(zeCommandListAppendLaunchKernel), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendLaunchCooperativeKernel, GTAP_SIM_ENTRY(zeCommandListAppendLaunchCooperativeKernel), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendLaunchKernelIndirect, GTAP_SIM_ENTRY(zeCommandListAppendLaunchKernelIndirect), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendLaunchMultipleKernelsIndirect, GTAP_SIM_ENTRY(zeCommandListAppendLaunchMultipleKernelsIndirect), version, ZE_API_VERSION_1_0);
  fill(t->pfnAppendImageCopyToMemoryExt, nullptr, version, ZE_API_VERSION_1_3);
  fill(t->pfnAppendImageCopyFromMemoryExt, nullptr, version, ZE_API_VERSION_1_3);
  return ZE_RESULT_SUCCESS;
}

// Image
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetImageProcAddrTable(ze_api_version_t version, ze_image_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnGetProperties, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnCreate, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnGetAllocPropertiesExt, nullptr, version, ZE_API_VERSION_1_3);
  return ZE_RESULT_SUCCESS;
}

// ImageExp
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetImageExpProcAddrTable(ze_api_version_t version, ze_image_exp_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnGetMemoryPropertiesExp, nullptr, version, ZE_API_VERSION_1_2);
  fill(t->pfnViewCreateExp, nullptr, version, ZE_API_VERSION_1_2);
  return ZE_RESULT_SUCCESS;
}

// Fence
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetFenceProcAddrTable(ze_api_version_t version, ze_fence_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, GTAP_SIM_ENTRY(zeFenceCreate), version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeFenceDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnHostSynchronize, GTAP_SIM_ENTRY(zeFenceHostSynchronize), version, ZE_API_VERSION_1_0);
  fill(t->pfnQueryStatus, GTAP_SIM_ENTRY(zeFenceQueryStatus), version, ZE_API_VERSION_1_0);
  fill(t->pfnReset, GTAP_SIM_ENTRY(zeFenceReset), version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// EventPool
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t version, ze_event_pool_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, GTAP_SIM_ENTRY(zeEventPoolCreate), version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeEventPoolDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetIpcHandle, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnOpenIpcHandle, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnCloseIpcHandle, nullptr, version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// Event
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t version, ze_event_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, GTAP_SIM_ENTRY(zeEventCreate), version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeEventDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnHostSignal, GTAP_SIM_ENTRY(zeEventHostSignal), version, ZE_API_VERSION_1_0);
  fill(t->pfnHostSynchronize, GTAP_SIM_ENTRY(zeEventHostSynchronize), version, ZE_API_VERSION_1_0);
  fill(t->pfnQueryStatus, GTAP_SIM_ENTRY(zeEventQueryStatus), version, ZE_API_VERSION_1_0);
  fill(t->pfnHostReset, GTAP_SIM_ENTRY(zeEventHostReset), version, ZE_API_VERSION_1_0);
  fill(t->pfnQueryKernelTimestamp, GTAP_SIM_ENTRY(zeEventQueryKernelTimestamp), version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// EventExp
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventExpProcAddrTable(ze_api_version_t version, ze_event_exp_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnQueryTimestampsExp, GTAP_SIM_ENTRY(zeEventQueryTimestampsExp), version, ZE_API_VERSION_1_2);
  return ZE_RESULT_SUCCESS;
}

// Module
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetModuleProcAddrTable(ze_api_version_t version, ze_module_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, GTAP_SIM_ENTRY(zeModuleCreate), version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeModuleDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnDynamicLink, GTAP_SIM_ENTRY(zeModuleDynamicLink), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetNativeBinary, GTAP_SIM_ENTRY(zeModuleGetNativeBinary), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetGlobalPointer, GTAP_SIM_ENTRY(zeModuleGetGlobalPointer), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetKernelNames, GTAP_SIM_ENTRY(zeModuleGetKernelNames), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetProperties, GTAP_SIM_ENTRY(zeModuleGetProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetFunctionPointer, GTAP_SIM_ENTRY(zeModuleGetFunctionPointer), version, ZE_API_VERSION_1_0);
  fill(t->pfnInspectLinkageExt, nullptr, version, ZE_API_VERSION_1_3);
  return ZE_RESULT_SUCCESS;
}

// ModuleBuildLog
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetModuleBuildLogProcAddrTable(ze_api_version_t version, ze_module_build_log_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeModuleBuildLogDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetString, GTAP_SIM_ENTRY(zeModuleBuildLogGetString), version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// Kernel
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetKernelProcAddrTable(ze_api_version_t version, ze_kernel_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, GTAP_SIM_ENTRY(zeKernelCreate), version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, GTAP_SIM_ENTRY(zeKernelDestroy), version, ZE_API_VERSION_1_0);
  fill(t->pfnSetCacheConfig, GTAP_SIM_ENTRY(zeKernelSetCacheConfig), version, ZE_API_VERSION_1_0);
  fill(t->pfnSetGroupSize, GTAP_SIM_ENTRY(zeKernelSetGroupSize), version, ZE_API_VERSION_1_0);
  fill(t->pfnSuggestGroupSize, GTAP_SIM_ENTRY(zeKernelSuggestGroupSize), version, ZE_API_VERSION_1_0);
  fill(t->pfnSuggestMaxCooperativeGroupCount, GTAP_SIM_ENTRY(zeKernelSuggestMaxCooperativeGroupCount), version, ZE_API_VERSION_1_0);
  fill(t->pfnSetArgumentValue, GTAP_SIM_ENTRY(zeKernelSetArgumentValue), version, ZE_API_VERSION_1_0);
  fill(t->pfnSetIndirectAccess, GTAP_SIM_ENTRY(zeKernelSetIndirectAccess), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetIndirectAccess, GTAP_SIM_ENTRY(zeKernelGetIndirectAccess), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetSourceAttributes, GTAP_SIM_ENTRY(zeKernelGetSourceAttributes), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetProperties, GTAP_SIM_ENTRY(zeKernelGetProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetName, GTAP_SIM_ENTRY(zeKernelGetName), version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// KernelExp
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetKernelExpProcAddrTable(ze_api_version_t version, ze_kernel_exp_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnSetGlobalOffsetExp, GTAP_SIM_ENTRY(zeKernelSetGlobalOffsetExp), version, ZE_API_VERSION_1_1);
  fill(t->pfnSchedulingHintExp, GTAP_SIM_ENTRY(zeKernelSchedulingHintExp), version, ZE_API_VERSION_1_2);
  return ZE_RESULT_SUCCESS;
}

// Sampler
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetSamplerProcAddrTable(ze_api_version_t version, ze_sampler_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, nullptr, version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// PhysicalMem
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetPhysicalMemProcAddrTable(ze_api_version_t version, ze_physical_mem_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnCreate, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnDestroy, nullptr, version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// Mem
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t version, ze_mem_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnAllocShared, GTAP_SIM_ENTRY(zeMemAllocShared), version, ZE_API_VERSION_1_0);
  fill(t->pfnAllocDevice, GTAP_SIM_ENTRY(zeMemAllocDevice), version, ZE_API_VERSION_1_0);
  fill(t->pfnAllocHost, GTAP_SIM_ENTRY(zeMemAllocHost), version, ZE_API_VERSION_1_0);
  fill(t->pfnFree, GTAP_SIM_ENTRY(zeMemFree), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetAllocProperties, GTAP_SIM_ENTRY(zeMemGetAllocProperties), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetAddressRange, GTAP_SIM_ENTRY(zeMemGetAddressRange), version, ZE_API_VERSION_1_0);
  fill(t->pfnGetIpcHandle, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnOpenIpcHandle, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnCloseIpcHandle, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnFreeExt, GTAP_SIM_ENTRY(zeMemFreeExt), version, ZE_API_VERSION_1_3);
  return ZE_RESULT_SUCCESS;
}

// VirtualMem
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetVirtualMemProcAddrTable(ze_api_version_t version, ze_virtual_mem_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnReserve, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnFree, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnQueryPageSize, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnMap, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnUnmap, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnSetAccessAttribute, nullptr, version, ZE_API_VERSION_1_0);
  fill(t->pfnGetAccessAttribute, nullptr, version, ZE_API_VERSION_1_0);
  return ZE_RESULT_SUCCESS;
}

// FabricVertexExp
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetFabricVertexExpProcAddrTable(ze_api_version_t version, ze_fabric_vertex_exp_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnGetExp, nullptr, version, ZE_API_VERSION_1_4);
  fill(t->pfnGetSubVerticesExp, nullptr, version, ZE_API_VERSION_1_4);
  fill(t->pfnGetPropertiesExp, nullptr, version, ZE_API_VERSION_1_4);
  fill(t->pfnGetDeviceExp, nullptr, version, ZE_API_VERSION_1_4);
  return ZE_RESULT_SUCCESS;
}

// FabricEdgeExp
ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetFabricEdgeExpProcAddrTable(ze_api_version_t version, ze_fabric_edge_exp_dditable_t* t) {
  if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;
  fill(t->pfnGetExp, nullptr, version, ZE_API_VERSION_1_4);
  fill(t->pfnGetVerticesExp, nullptr, version, ZE_API_VERSION_1_4);
  fill(t->pfnGetPropertiesExp, nullptr, version, ZE_API_VERSION_1_4);
  return ZE_RESULT_SUCCESS;
}


// Tools (zet) and sysman (zes) are not implemented, but the 1.8 loader refuses
// a driver that lacks any of these tables (zeInit then fails), so each is
// exported and left empty; the loader answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
// for its functions.
#define GTAP_SIM_EMPTY_TABLE(fn, type)                                                 \
  ZE_DLLEXPORT ze_result_t ZE_APICALL fn(ze_api_version_t version, type* t) {         \
    if (ze_result_t r = checkVersion(version, t); r != ZE_RESULT_SUCCESS) return r;   \
    clearIfCurrent(t, version);                                                        \
    return ZE_RESULT_SUCCESS;                                                          \
  }
GTAP_SIM_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
GTAP_SIM_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
GTAP_SIM_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)

}  // extern "C"
