// Contexts. The simulated device keeps no per-context state beyond identity:
// all memory is host memory and residency is always given.
#include "api.h"
#include "objects.h"

namespace sim {

namespace {

ze_result_t createContext(ze_driver_handle_t hDriver, const ze_context_desc_t* desc, uint32_t numDevices,
                          ze_device_handle_t* phDevices, ze_context_handle_t* phContext) {
  SIM_LOOKUP(driver, Driver, hDriver);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(phContext);
  SIM_CHECK(desc->flags <= ZE_CONTEXT_FLAG_TBD, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_CHECK(!(phDevices == nullptr && numDevices > 0), ZE_RESULT_ERROR_INVALID_SIZE);
  for (uint32_t i = 0; i < numDevices; ++i) {
    SIM_LOOKUP(device, Device, phDevices[i]);
  }
  *phContext = toHandle<ze_context_handle_t>(makeObject<Context>());
  return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t zeContextCreate(ze_driver_handle_t hDriver, const ze_context_desc_t* desc,
                            ze_context_handle_t* phContext) {
  return createContext(hDriver, desc, 0, nullptr, phContext);
}

ze_result_t zeContextCreateEx(ze_driver_handle_t hDriver, const ze_context_desc_t* desc, uint32_t numDevices,
                              ze_device_handle_t* phDevices, ze_context_handle_t* phContext) {
  return createContext(hDriver, desc, numDevices, phDevices, phContext);
}

ze_result_t zeContextDestroy(ze_context_handle_t hContext) {
  std::shared_ptr<Context> context;
  if (ze_result_t r = take(hContext, context); r != ZE_RESULT_SUCCESS) return r;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeContextGetStatus(ze_context_handle_t hContext) {
  SIM_LOOKUP(context, Context, hContext);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeContextSystemBarrier(ze_context_handle_t hContext, ze_device_handle_t hDevice) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeContextMakeMemoryResident(ze_context_handle_t hContext, ze_device_handle_t hDevice, void* ptr,
                                        size_t) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(ptr);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeContextEvictMemory(ze_context_handle_t hContext, ze_device_handle_t hDevice, void* ptr, size_t) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(ptr);
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
