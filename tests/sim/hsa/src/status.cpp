// hsa_status_string.
#include "api.h"

#include <hsa/hsa_ext_finalize.h>
#include <hsa/hsa_ext_image.h>

namespace sim_hsa {

namespace {

const char* describe(uint32_t status) {
  switch (status) {
    case HSA_STATUS_SUCCESS: return "HSA_STATUS_SUCCESS: The function has been executed successfully.";
    case HSA_STATUS_INFO_BREAK: return "HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before completing.";
    case HSA_STATUS_ERROR: return "HSA_STATUS_ERROR: A generic error has occurred.";
    case HSA_STATUS_ERROR_INVALID_ARGUMENT: return "HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument.";
    case HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: return "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid.";
    case HSA_STATUS_ERROR_INVALID_ALLOCATION: return "HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid.";
    case HSA_STATUS_ERROR_INVALID_AGENT: return "HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.";
    case HSA_STATUS_ERROR_INVALID_REGION: return "HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.";
    case HSA_STATUS_ERROR_INVALID_SIGNAL: return "HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.";
    case HSA_STATUS_ERROR_INVALID_QUEUE: return "HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.";
    case HSA_STATUS_ERROR_OUT_OF_RESOURCES: return "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.";
    case HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: return "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.";
    case HSA_STATUS_ERROR_RESOURCE_FREE: return "HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while releasing a resource.";
    case HSA_STATUS_ERROR_NOT_INITIALIZED: return "HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the runtime is zero.";
    case HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: return "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The maximum reference count for the object has been reached.";
    case HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: return "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments passed to a function are not compatible.";
    case HSA_STATUS_ERROR_INVALID_INDEX: return "HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.";
    case HSA_STATUS_ERROR_INVALID_ISA: return "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.";
    case HSA_STATUS_ERROR_INVALID_ISA_NAME: return "HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction set architecture name is invalid.";
    case HSA_STATUS_ERROR_INVALID_CODE_OBJECT: return "HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.";
    case HSA_STATUS_ERROR_INVALID_EXECUTABLE: return "HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.";
    case HSA_STATUS_ERROR_FROZEN_EXECUTABLE: return "HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.";
    case HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: return "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name.";
    case HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: return "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already defined.";
    case HSA_STATUS_ERROR_VARIABLE_UNDEFINED: return "HSA_STATUS_ERROR_VARIABLE_UNDEFINED: The variable is undefined.";
    case HSA_STATUS_ERROR_EXCEPTION: return "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.";
    case HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: return "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is invalid.";
    case HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: return "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is invalid.";
    case HSA_STATUS_ERROR_INVALID_FILE: return "HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.";
    case HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: return "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid.";
    case HSA_STATUS_ERROR_INVALID_CACHE: return "HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.";
    case HSA_STATUS_ERROR_INVALID_WAVEFRONT: return "HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid.";
    case HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: return "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid.";
    case HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: return "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The runtime is in an invalid state for this operation.";
    case HSA_STATUS_ERROR_FATAL: return "HSA_STATUS_ERROR_FATAL: The queue received an error that may require process termination.";
    case HSA_STATUS_ERROR_INVALID_MEMORY_POOL: return "HSA_STATUS_ERROR_INVALID_MEMORY_POOL: The memory pool is invalid.";
    case HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: return "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent accessed memory beyond the maximum legal address.";
    case HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: return "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent executed an invalid shader instruction.";
    case HSA_STATUS_ERROR_MEMORY_FAULT: return "HSA_STATUS_ERROR_MEMORY_FAULT: The agent attempted to access an inaccessible address.";
    case HSA_STATUS_CU_MASK_REDUCED: return "HSA_STATUS_CU_MASK_REDUCED: The CU mask was set, but some of its CUs are disabled for the process.";
    case HSA_EXT_STATUS_ERROR_INVALID_PROGRAM: return "HSA_EXT_STATUS_ERROR_INVALID_PROGRAM: The program is invalid.";
    case HSA_EXT_STATUS_ERROR_INVALID_MODULE: return "HSA_EXT_STATUS_ERROR_INVALID_MODULE: The module is invalid.";
    case HSA_EXT_STATUS_ERROR_INCOMPATIBLE_MODULE: return "HSA_EXT_STATUS_ERROR_INCOMPATIBLE_MODULE: The machine model or profile of the module does not match the program.";
    case HSA_EXT_STATUS_ERROR_MODULE_ALREADY_INCLUDED: return "HSA_EXT_STATUS_ERROR_MODULE_ALREADY_INCLUDED: The module is already part of the program.";
    case HSA_EXT_STATUS_ERROR_SYMBOL_MISMATCH: return "HSA_EXT_STATUS_ERROR_SYMBOL_MISMATCH: Compatibility mismatch between symbol declaration and definition.";
    case HSA_EXT_STATUS_ERROR_FINALIZATION_FAILED: return "HSA_EXT_STATUS_ERROR_FINALIZATION_FAILED: The finalization encountered an error.";
    case HSA_EXT_STATUS_ERROR_DIRECTIVE_MISMATCH: return "HSA_EXT_STATUS_ERROR_DIRECTIVE_MISMATCH: Mismatch between a directive in the control directive structure and in the program.";
    case HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED: return "HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED: Image format is not supported.";
    case HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED: return "HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED: Image size is not supported.";
    case HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED: return "HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED: Image pitch is not supported or invalid.";
    case HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED: return "HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED: Sampler descriptor is not supported or invalid.";
  }
  return nullptr;
}

}  // namespace

// Answers before hsa_init too: programs call it to report a failed hsa_init.
hsa_status_t hsa_status_string(hsa_status_t status, const char** status_string) {
  SIM_NOT_NULL(status_string);
  const char* text = describe(uint32_t(status));
  SIM_CHECK(text != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  *status_string = text;
  return HSA_STATUS_SUCCESS;
}

}  // namespace sim_hsa
