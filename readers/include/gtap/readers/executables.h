// The executables a capture holds (Level Zero modules, HSA code objects,
// IREE HAL executables) and their kernels: from the runtime's own answers,
// and, for AMDGPU code objects and other ELFs carrying their metadata note
// (the simulated HSA runtime's code objects), from that metadata.
#pragma once

#include <string>
#include <vector>

#include "gtap/readers/kernel_stats.h"

namespace gtap::readers {

struct ExecutableKernelRow {
  std::string process;
  uint64_t module = 0;          // gtap id
  std::string format;           // "native", "spirv", "amdgpu"
  uint64_t size = 0;
  std::string hash;             // hex of the stored binary
  std::string target;           // AMDGPU target id, when known
  std::string kernel;
  std::string source;           // "runtime" (what the runtime reported) or "metadata" (the code object's)
  int64_t args = -1;            // explicit arguments, -1 when unknown
  int64_t hiddenArgs = -1;
  int64_t kernargBytes = -1;
  int64_t sgprs = -1, vgprs = -1, ldsBytes = -1, scratchBytes = -1, wavefront = -1;
  std::string requiredGroupSize;
};

std::vector<ExecutableKernelRow> executableRows(const std::vector<LoadedCapture>& captures,
                                                std::vector<std::string>& notes);

}  // namespace gtap::readers
