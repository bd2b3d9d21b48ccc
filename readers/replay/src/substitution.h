// --substitute SELECTOR=PATH: which modules a selector names, and the check
// that the replacement binary offers every kernel the stream creates from
// them with the same number of arguments, done on the device before replay.
#pragma once

#include <cstdint>
#include <map>

#include "setup.h"

namespace gtap::replay {

// The replacement binary of every module the options select, by module id.
// Throws ReplayError naming the selector, kernel and difference.
std::map<uint64_t, Bytes> checkSubstitutions(const ReplaySetup& setup);

}  // namespace gtap::replay
