// --substitute SELECTOR=PATH for Level Zero: which modules a selector names, and the check
// that the replacement binary offers every kernel the stream creates from
// them with the same number of arguments, done on the device before replay.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "setup.h"

namespace gtap::replay {

// The replacement binary of every module `substitutions` select, by module
// id. Throws ReplayError naming the selector, kernel and difference.
std::map<uint64_t, Bytes> checkSubstitutions(const ReplaySetup& setup,
                                             const std::vector<readers::ModuleSubstitution>& substitutions);

// A --substitute file's bytes, read once it is known to be a regular file
// small enough to be a module or code object. Throws ReplayError naming
// `what` and the path.
Bytes readSubstituteFile(const std::string& path, const std::string& what);

}  // namespace gtap::replay
