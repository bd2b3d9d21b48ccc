// --substitute SELECTOR=PATH for HSA: which code objects a selector names
// (a code object id, a kernel name with or without .kd, or all), and the ABI
// check of the replacement against the original, from their metadata, for
// every kernel the stream dispatches from them, done before anything runs.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "setup.h"

namespace gtap::replay {

// Whether `selector` names an HSA code object of the stream.
bool selectsHsaCodeObject(const readers::ReplayStream& stream, const std::string& selector);

struct HsaSubstitutions {
  std::map<uint64_t, Bytes> binaries;  // by code object id
  std::set<uint64_t> checkedKernels;   // hsaKernel ids the stream dispatches, whose ABI matched
  std::set<uint64_t> uncheckedKernels; // hsaKernel ids of replaced code objects never dispatched
};

// Throws ReplayError naming the selector, the kernel and the first
// difference: a missing kernel, another kernarg segment size or alignment,
// an argument at another offset or of another size or kind, a required
// work-group size a dispatch does not use, or more group or private memory
// than a dispatch gives.
HsaSubstitutions checkHsaSubstitutions(const ReplaySetup& setup,
                                       const std::vector<readers::ModuleSubstitution>& substitutions);

}  // namespace gtap::replay
