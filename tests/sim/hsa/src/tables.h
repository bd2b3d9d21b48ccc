// The live HsaApiTable. Like ROCr, every exported hsa_* function calls the
// entry of this table, so a tool that rewrites an entry in OnLoad sees every
// call the program makes, however it reached the runtime (linked, dlsym).
#pragma once

#include "common.h"

namespace sim_hsa {

struct LiveTables {
  HsaApiTable root;
  CoreApiTable core;
  AmdExtTable amd_ext;
  FinalizerExtTable finalizer_ext;
  ImageExtTable image_ext;
};

// Never destroyed, so calls made during process exit still find it.
LiveTables& liveTables();

// Restores the runtime's own entries; after the last hsa_shut_down, so that
// entries of tools that are about to be unloaded are never called again.
void resetTables();

}  // namespace sim_hsa
