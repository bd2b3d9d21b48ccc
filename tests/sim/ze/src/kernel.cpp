// Kernels: a module's descriptor plus the state a program sets before a
// launch (group size, argument values, global offset).
#include "api.h"
#include "objects.h"

#include <cstring>

namespace sim {

namespace {

constexpr uint32_t kMaxGroupSize = 1024;         // matches the compute properties
constexpr uint32_t kMaxLocalMemory = 64 * 1024;  // maxSharedLocalMemory
constexpr uint32_t kSimdWidth = 8;
constexpr uint32_t kHardwareThreads = 1 * 4 * 8 * 7;  // slices * subslices * EUs * threads

bool hasRequiredGroupSize(const gtap_sim_kernel_desc* d) {
  return d->required_group_size[0] != 0 || d->required_group_size[1] != 0 || d->required_group_size[2] != 0;
}

uint32_t largestDivisorAtMost(uint32_t n, uint32_t limit) {
  for (uint32_t d = limit < n ? limit : n; d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

}  // namespace

ze_result_t Kernel::snapshot(std::shared_ptr<LaunchState>& out) {
  auto s = std::make_shared<LaunchState>();
  s->module = module;
  s->desc = desc;
  std::lock_guard lock(mutex);
  for (bool set : argSet) {
    // Running a kernel with an argument never set would read garbage on real
    // hardware; refusing it catches incomplete captures and replays early.
    if (!set) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  s->groupSize = groupSize;
  s->globalOffset = globalOffset;
  s->values = values;
  s->localSizes = localSizes;
  out = std::move(s);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t* desc, ze_kernel_handle_t* phKernel) {
  SIM_LOOKUP(module, Module, hModule);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(desc->pKernelName);
  SIM_NOT_NULL(phKernel);
  SIM_CHECK(desc->flags <= 0x3, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  const gtap_sim_kernel_desc* d = module->findKernel(desc->pKernelName);
  if (d == nullptr) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;

  auto kernel = std::make_shared<Kernel>();
  kernel->module = module;
  kernel->desc = d;
  if (hasRequiredGroupSize(d)) {
    for (int i = 0; i < 3; ++i) kernel->groupSize[i] = d->required_group_size[i] ? d->required_group_size[i] : 1;
  }
  kernel->values.resize(d->num_args);
  kernel->localSizes.assign(d->num_args, 0);
  kernel->argSet.assign(d->num_args, false);
  for (uint32_t i = 0; i < d->num_args; ++i) kernel->values[i].assign(d->arg_sizes[i], 0);
  size_t nameLength = std::strlen(d->name);
  for (size_t i = 0; i < kernel->uuid.size(); ++i) {
    kernel->uuid[i] = uint8_t(nameLength > 0 ? d->name[i % nameLength] : 0);
  }
  registerObject(kernel);
  *phKernel = toHandle<ze_kernel_handle_t>(kernel);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelDestroy(ze_kernel_handle_t hKernel) {
  std::shared_ptr<Kernel> kernel;
  return take(hKernel, kernel);
}

ze_result_t zeKernelSetCacheConfig(ze_kernel_handle_t hKernel, ze_cache_config_flags_t flags) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_CHECK(flags <= 0x3, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  std::lock_guard lock(kernel->mutex);
  kernel->cacheConfig = flags;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t hKernel, uint32_t x, uint32_t y, uint32_t z) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  const gtap_sim_kernel_desc* d = kernel->desc;
  SIM_CHECK(x != 0 && y != 0 && z != 0, ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
  SIM_CHECK(x <= kMaxGroupSize && y <= kMaxGroupSize && z <= kMaxGroupSize &&
                uint64_t(x) * y * z <= kMaxGroupSize,
            ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
  if (hasRequiredGroupSize(d)) {
    const uint32_t* r = d->required_group_size;
    SIM_CHECK(x == (r[0] ? r[0] : 1) && y == (r[1] ? r[1] : 1) && z == (r[2] ? r[2] : 1),
              ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
  }
  std::lock_guard lock(kernel->mutex);
  kernel->groupSize = {x, y, z};
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSuggestGroupSize(ze_kernel_handle_t hKernel, uint32_t globalSizeX, uint32_t globalSizeY,
                                     uint32_t globalSizeZ, uint32_t* groupSizeX, uint32_t* groupSizeY,
                                     uint32_t* groupSizeZ) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(groupSizeX);
  SIM_NOT_NULL(groupSizeY);
  SIM_NOT_NULL(groupSizeZ);
  SIM_CHECK(globalSizeX != 0 && globalSizeY != 0 && globalSizeZ != 0, ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION);
  const gtap_sim_kernel_desc* d = kernel->desc;
  if (hasRequiredGroupSize(d)) {
    *groupSizeX = d->required_group_size[0] ? d->required_group_size[0] : 1;
    *groupSizeY = d->required_group_size[1] ? d->required_group_size[1] : 1;
    *groupSizeZ = d->required_group_size[2] ? d->required_group_size[2] : 1;
    return ZE_RESULT_SUCCESS;
  }
  // Exact divisors, so the global size is covered without a remainder, with
  // the X dimension favoured the way GPU drivers do.
  uint32_t x = largestDivisorAtMost(globalSizeX, 256);
  uint32_t y = largestDivisorAtMost(globalSizeY, kMaxGroupSize / x);
  uint32_t z = largestDivisorAtMost(globalSizeZ, kMaxGroupSize / (x * y));
  *groupSizeX = x;
  *groupSizeY = y;
  *groupSizeZ = z;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSuggestMaxCooperativeGroupCount(ze_kernel_handle_t hKernel, uint32_t* totalGroupCount) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(totalGroupCount);
  std::lock_guard lock(kernel->mutex);
  uint64_t items = uint64_t(kernel->groupSize[0]) * kernel->groupSize[1] * kernel->groupSize[2];
  uint64_t threadsPerGroup = (items + kSimdWidth - 1) / kSimdWidth;
  *totalGroupCount = uint32_t(kHardwareThreads / (threadsPerGroup ? threadsPerGroup : 1));
  if (*totalGroupCount == 0) *totalGroupCount = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t hKernel, uint32_t argIndex, size_t argSize,
                                     const void* pArgValue) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  const gtap_sim_kernel_desc* d = kernel->desc;
  SIM_CHECK(argIndex < d->num_args, ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
  std::lock_guard lock(kernel->mutex);
  if (d->arg_sizes[argIndex] == GTAP_SIM_ARG_LOCAL) {
    // Local memory: the size is the amount to reserve per work-group.
    SIM_CHECK(argSize != 0 && argSize <= kMaxLocalMemory, ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
    kernel->localSizes[argIndex] = uint32_t(argSize);
  } else {
    SIM_CHECK(argSize == d->arg_sizes[argIndex], ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
    auto& v = kernel->values[argIndex];
    // A null value means a null (all-zero) argument, per the specification.
    if (pArgValue != nullptr) {
      std::memcpy(v.data(), pArgValue, argSize);
    } else {
      std::memset(v.data(), 0, argSize);
    }
  }
  kernel->argSet[argIndex] = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSetIndirectAccess(ze_kernel_handle_t hKernel, ze_kernel_indirect_access_flags_t flags) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_CHECK(flags <= 0x7, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  std::lock_guard lock(kernel->mutex);
  kernel->indirectAccess = flags;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelGetIndirectAccess(ze_kernel_handle_t hKernel, ze_kernel_indirect_access_flags_t* pFlags) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(pFlags);
  std::lock_guard lock(kernel->mutex);
  *pFlags = kernel->indirectAccess;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelGetSourceAttributes(ze_kernel_handle_t hKernel, uint32_t* pSize, char** pString) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(pSize);
  SIM_NOT_NULL(pString);
  // Host kernels carry no source attributes: the empty string.
  if (*pSize == 0 || *pString == nullptr) {
    *pSize = 1;
    return ZE_RESULT_SUCCESS;
  }
  (*pString)[0] = '\0';
  *pSize = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelGetProperties(ze_kernel_handle_t hKernel, ze_kernel_properties_t* p) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(p);
  const gtap_sim_kernel_desc* d = kernel->desc;
  p->numKernelArgs = d->num_args;
  p->requiredGroupSizeX = d->required_group_size[0];
  p->requiredGroupSizeY = d->required_group_size[1];
  p->requiredGroupSizeZ = d->required_group_size[2];
  p->requiredNumSubGroups = 0;
  p->requiredSubgroupSize = 0;
  p->maxSubgroupSize = 32;
  p->maxNumSubgroups = kMaxGroupSize / kSimdWidth;
  p->localMemSize = 0;  // only dynamic local memory, set per launch
  p->privateMemSize = 0;
  p->spillMemSize = 0;
  std::memcpy(p->uuid.kid, kernel->uuid.data(), sizeof p->uuid.kid);
  std::memcpy(p->uuid.mid, kernel->module->uuid.data(), sizeof p->uuid.mid);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelGetName(ze_kernel_handle_t hKernel, size_t* pSize, char* pName) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(pSize);
  copyStringOut(kernel->desc->name, pSize, pName);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSetGlobalOffsetExp(ze_kernel_handle_t hKernel, uint32_t offsetX, uint32_t offsetY,
                                       uint32_t offsetZ) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  std::lock_guard lock(kernel->mutex);
  kernel->globalOffset = {offsetX, offsetY, offsetZ};
  return ZE_RESULT_SUCCESS;
}

// The kernel's body function: the code runs in the host address space the
// device shares, so its address is the device address of the first instruction.
ze_result_t zexKernelGetBaseAddress(ze_kernel_handle_t hKernel, uint64_t* baseAddress) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(baseAddress);
  *baseAddress = reinterpret_cast<uintptr_t>(kernel->desc->fn);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeKernelSchedulingHintExp(ze_kernel_handle_t hKernel, ze_scheduling_hint_exp_desc_t* pHint) {
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(pHint);
  SIM_CHECK(pHint->flags <= 0x7, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  return ZE_RESULT_SUCCESS;  // hints change nothing on a sequential device
}

}  // namespace sim
