// zeDriverGetExtensionFunctionAddress: a program that asks the driver for a
// function by name gets gtap's wrapper when gtap knows that function, so calls
// through the returned pointer are recorded (once: the wrapper calls the
// loader's entry point, not the driver's pointer). A function gtap does not
// know (a driver's vendor extension, a newer API) keeps the driver's pointer
// and is named in the capture as unrecorded.
#include <level_zero/ze_api.h>

#include "call_scope.h"
#include "ze_runtime.h"

namespace gtap::ze {

ze_result_t hook_zeDriverGetExtensionFunctionAddress(
    core::RealCall<ze_result_t(ZE_APICALL*)(ze_driver_handle_t, const char*, void**)>& real, core::CallScope& scope,
    ze_driver_handle_t hDriver, const char* name, void** ppFunctionAddress) {
  ze_result_t result = real(hDriver, name, ppFunctionAddress);
  if (result == ZE_RESULT_SUCCESS && name && ppFunctionAddress && *ppFunctionAddress && !scope.nested()) {
    if (void* wrapper = wrapperFor(name))
      *ppFunctionAddress = wrapper;
    else
      noteUnrecorded(name);
  }
  return result;
}

}  // namespace gtap::ze
