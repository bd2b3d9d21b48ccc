// Code objects: host shared objects built against gtap_sim_hsa_kernel.h,
// loaded into executables. A kernel's KERNEL_OBJECT is the address of its
// descriptor in the loaded copy; dispatches look it up here.
#pragma once

#define GTAP_SIM_HSA_KERNEL_TYPES_ONLY
#include "gtap_sim_hsa_kernel.h"

#include <cstdint>
#include <memory>

namespace sim_hsa {

struct LoadedCodeObject;

// A kernel found by its kernel object; `owner` keeps its code mapped while
// the dispatch runs, even if the program destroys the executable meanwhile.
struct KernelRef {
  std::shared_ptr<const LoadedCodeObject> owner;
  const gtap_sim_hsa_kernel_desc* desc = nullptr;
};

bool findKernelObject(uint64_t kernel_object, KernelRef& out);

}  // namespace sim_hsa
