// Tool libraries, loaded the way ROCr 5.3 to 6.0 loads them (runtime.cpp's
// LoadTools): those named in HSA_TOOLS_LIB, and libraries already in the
// process that export HSA_AMD_TOOL_PRIORITY.
#pragma once

#include "common.h"

namespace sim_hsa {

// At the end of the first hsa_init: calls each tool's OnLoad with the live
// tables; a tool without OnLoad, or whose OnLoad returns false, is unloaded.
void loadTools(HsaApiTable* table);
// At the last hsa_shut_down, before anything is torn down: OnUnload of each
// loaded tool, last loaded first.
void unloadTools();
// At the very end of the last hsa_shut_down: drops the runtime's references.
void closeTools();

}  // namespace sim_hsa
