// Instruction sampling (mode samples): where inside its kernels a Level Zero
// device spends time, through the tools API's metric streamer.
//
// For each device the program finds, gtap looks for a time-based metric group
// with an instruction-pointer metric (EuStallSampling on Intel GPUs), makes a
// context of its own, activates the group there and opens a streamer. The
// writer thread reads the streamer at every flush, has the runtime calculate
// the values (one row per instruction address: the address and a count per
// stall reason) and writes them as instructionSamples chunks. Readers find the
// kernel of an address from the kernels' code addresses
// (zexKernelGetBaseAddress) and its source line from the module's debug ELF
// (zetModuleGetDebugInfo), both recorded with the objects.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <vector>

#include "chunk_producer.h"

namespace gtap::ze {

class Sampler {
 public:
  static Sampler& get();

  // A device the program found: opens its streamer, once per device. On the
  // program's thread (the first zeDeviceGet that returns it).
  void deviceSeen(ze_driver_handle_t driver, ze_device_handle_t device, uint32_t deviceId);
  // The device address of the kernel's first instruction, 0 when the driver
  // does not say.
  uint64_t kernelCodeAddress(ze_kernel_handle_t kernel);
  // The module's debug ELF (with DWARF), empty when the driver has none.
  std::vector<uint8_t> moduleDebugInfo(ze_module_handle_t module);

  // Reads every open streamer (the writer at each flush; at exit, the last
  // read while the runtime is still up).
  void read();
  void readAtExit();
  void produce(core::ChunkSink& sink);

  struct Impl;

 private:
  Sampler();
  Impl* impl_;
};

}  // namespace gtap::ze
