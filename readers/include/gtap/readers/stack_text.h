// CPU stacks of a capture as text: each frame symbolised offline (function,
// inlined frames, file:line where debug information exists), or module+offset
// when the module cannot be used.
#pragma once

#include <string>
#include <vector>

#include "gtap/readers/device_work.h"
#include "gtap/readers/symbolizer.h"

namespace gtap::readers {

// One line per frame, innermost first; inlined frames get their own line.
std::vector<std::string> describeStack(const DeviceWork& work, uint32_t stack, Symbolizer& symbolizer,
                                       std::vector<std::string>* problems = nullptr);

}  // namespace gtap::readers
