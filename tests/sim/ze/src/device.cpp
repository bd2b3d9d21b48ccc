// The one simulated device: a GPU whose memory is the host's, whose timer runs
// at 19.2 MHz (see clock.h), and whose two queue groups are a compute engine
// (that also copies) and a copy-only engine.
#include "api.h"
#include "clock.h"
#include "objects.h"

#include <unistd.h>

#include <cstring>

namespace sim {

namespace {

constexpr char kDeviceName[] = "gtap simulated GPU";
// Not a PCI identity: chosen so no tool mistakes the device for real hardware.
constexpr uint32_t kVendorId = 0x6774;  // "gt"
constexpr uint32_t kDeviceId = 0x5a01;
constexpr uint8_t kDeviceUuid[ZE_MAX_DEVICE_UUID_SIZE] = {'g', 't', 'a', 'p', '-', 's', 'i', 'm',
                                                          '-', 'z', 'e', '-', 'd', 'e', 'v', '0'};
// Identifies the native binary format: host shared objects with
// gtap_sim_kernel.h descriptors.
constexpr uint8_t kNativeKernelUuid[ZE_MAX_NATIVE_KERNEL_UUID_SIZE] = {
    'g', 't', 'a', 'p', '-', 's', 'i', 'm', '-', 'h', 'o', 's', 't', '-', 's', 'o'};

constexpr uint64_t kMaxMemAllocSize = 4ull << 30;
constexpr uint32_t kMaxGroupSize = 1024;
constexpr uint32_t kMaxSharedLocalMemory = 64 * 1024;

constexpr QueueGroup kQueueGroups[kNumQueueGroups] = {
    {ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
         ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS |
         ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_METRICS,
     128, 4},
    {ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY, 16, 2},
};

uint64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 8ull << 30;
}

}  // namespace

const QueueGroup& queueGroup(uint32_t ordinal) { return kQueueGroups[ordinal]; }

ze_result_t zeDeviceGet(ze_driver_handle_t hDriver, uint32_t* pCount, ze_device_handle_t* phDevices) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(pCount);
  countQuery(1, pCount, phDevices != nullptr, [&](uint32_t i) {
    phDevices[i] = reinterpret_cast<ze_device_handle_t>(static_cast<Object*>(theDevice()));
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetSubDevices(ze_device_handle_t hDevice, uint32_t* pCount, ze_device_handle_t*) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(pCount);
  *pCount = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetProperties(ze_device_handle_t hDevice, ze_device_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(p);
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = kVendorId;
  p->deviceId = kDeviceId;
  p->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;  // its memory is host memory
  p->subdeviceId = 0;
  p->coreClockRate = 1200;  // MHz
  p->maxMemAllocSize = kMaxMemAllocSize;
  p->maxHardwareContexts = 64;
  p->maxCommandQueuePriority = 0;
  p->numThreadsPerEU = 7;
  p->physicalEUSimdWidth = 8;
  p->numEUsPerSubslice = 8;
  p->numSubslicesPerSlice = 4;
  p->numSlices = 1;
  // The unit of timerResolution depends on which revision of the structure
  // the caller passed (ze_api.h, ze_device_properties_t::timerResolution).
  p->timerResolution = p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? clock::kTicksPerSecond
                                                                           : clock::kLegacyNsPerTick;
  p->timestampValidBits = clock::kGlobalValidBits;
  p->kernelTimestampValidBits = clock::kKernelValidBits;
  std::memcpy(p->uuid.id, kDeviceUuid, sizeof kDeviceUuid);
  std::memset(p->name, 0, sizeof p->name);
  std::strncpy(p->name, kDeviceName, sizeof p->name - 1);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t hDevice, ze_device_compute_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(p);
  p->maxTotalGroupSize = kMaxGroupSize;
  p->maxGroupSizeX = kMaxGroupSize;
  p->maxGroupSizeY = kMaxGroupSize;
  p->maxGroupSizeZ = kMaxGroupSize;
  p->maxGroupCountX = UINT32_MAX;
  p->maxGroupCountY = UINT32_MAX;
  p->maxGroupCountZ = UINT32_MAX;
  p->maxSharedLocalMemory = kMaxSharedLocalMemory;
  p->numSubGroupSizes = 3;
  std::memset(p->subGroupSizes, 0, sizeof p->subGroupSizes);
  p->subGroupSizes[0] = 8;
  p->subGroupSizes[1] = 16;
  p->subGroupSizes[2] = 32;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetModuleProperties(ze_device_handle_t hDevice, ze_device_module_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(p);
  p->spirvVersionSupported = 0;  // modules are host shared objects only
  p->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
  const ze_device_fp_flags_t ieee = ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN |
                                    ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO |
                                    ZE_DEVICE_FP_FLAG_ROUND_TO_INF | ZE_DEVICE_FP_FLAG_FMA |
                                    ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT;
  p->fp16flags = ieee;
  p->fp32flags = ieee;
  p->fp64flags = ieee;
  p->maxArgumentsSize = 2048;
  p->printfBufferSize = 4 * 1024 * 1024;
  std::memcpy(p->nativeKernelSupported.id, kNativeKernelUuid, sizeof kNativeKernelUuid);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetCommandQueueGroupProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                                   ze_command_queue_group_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(pCount);
  countQuery(kNumQueueGroups, pCount, p != nullptr, [&](uint32_t i) {
    p[i].flags = kQueueGroups[i].flags;
    p[i].maxMemoryFillPatternSize = kQueueGroups[i].maxFillPatternSize;
    p[i].numQueues = kQueueGroups[i].numQueues;
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                        ze_device_memory_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(pCount);
  countQuery(1, pCount, p != nullptr, [&](uint32_t i) {
    p[i].flags = 0;
    p[i].maxClockRate = 3200;  // MHz
    p[i].maxBusWidth = 64;
    p[i].totalSize = physicalMemoryBytes();
    std::memset(p[i].name, 0, sizeof p[i].name);
    std::strncpy(p[i].name, "host memory", sizeof p[i].name - 1);
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetMemoryAccessProperties(ze_device_handle_t hDevice,
                                              ze_device_memory_access_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(p);
  // All memory is host memory the worker threads touch directly, so every kind
  // of allocation, even plain malloc, supports concurrent atomic access.
  const ze_memory_access_cap_flags_t all = ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
                                           ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT |
                                           ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
  p->hostAllocCapabilities = all;
  p->deviceAllocCapabilities = all;
  p->sharedSingleDeviceAllocCapabilities = all;
  p->sharedCrossDeviceAllocCapabilities = all;
  p->sharedSystemAllocCapabilities = all;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetCacheProperties(ze_device_handle_t hDevice, uint32_t* pCount,
                                       ze_device_cache_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(pCount);
  countQuery(1, pCount, p != nullptr, [&](uint32_t i) {
    p[i].flags = 0;
    p[i].cacheSize = 4 * 1024 * 1024;
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetImageProperties(ze_device_handle_t hDevice, ze_device_image_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(p);
  // No image support: every limit is zero, as the specification asks.
  p->maxImageDims1D = 0;
  p->maxImageDims2D = 0;
  p->maxImageDims3D = 0;
  p->maxImageBufferSize = 0;
  p->maxImageArraySlices = 0;
  p->maxSamplers = 0;
  p->maxReadImageArgs = 0;
  p->maxWriteImageArgs = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetExternalMemoryProperties(ze_device_handle_t hDevice,
                                                ze_device_external_memory_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(p);
  p->memoryAllocationImportTypes = 0;
  p->memoryAllocationExportTypes = 0;
  p->imageImportTypes = 0;
  p->imageExportTypes = 0;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetP2PProperties(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
                                     ze_device_p2p_properties_t* p) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_LOOKUP(peer, Device, hPeerDevice);
  SIM_NOT_NULL(p);
  p->flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS | ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceCanAccessPeer(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice, ze_bool_t* value) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_LOOKUP(peer, Device, hPeerDevice);
  SIM_NOT_NULL(value);
  *value = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetStatus(ze_device_handle_t hDevice) {
  SIM_LOOKUP(device, Device, hDevice);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeDeviceGetGlobalTimestamps(ze_device_handle_t hDevice, uint64_t* hostTimestamp,
                                        uint64_t* deviceTimestamp) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(hostTimestamp);
  SIM_NOT_NULL(deviceTimestamp);
  // One host reading gives both values, so the pair correlates exactly.
  uint64_t host = clock::hostNs();
  *hostTimestamp = host;
  *deviceTimestamp = clock::ticksAt(host);
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
