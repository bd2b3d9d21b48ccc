// Where inside its kernels a device spent time (mode samples): the
// instruction samples of a capture attributed to the kernel code they fell in,
// by offset from the kernel's first instruction.
//
// A sample names a device address only. It belongs to the kernel whose code
// starts nearest below it (the kernels' codeAddress) among the kernels whose
// module was loaded while the samples were taken (the read's time window), so
// code loaded again at another address, or another module at the same one,
// is told apart. Its source line comes from the module's debug ELF, where
// the function symbol named like the kernel marks the kernel's first
// instruction.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "gtap/readers/stack_frames.h"

namespace gtap::readers {

// One kernel's code as sampled: every kernel object created from the same
// module at the same address shares it.
struct SampledCode {
  uint32_t device = ~0u;
  uint64_t address = 0;  // its first instruction on the device
  uint64_t module = 0;   // the module's object id (0 when unknown)
  std::string kernel;    // the kernel's name
  // Offset from `address` to the counts per reason (InstructionSamples::reasons).
  std::map<uint64_t, std::vector<uint64_t>> offsets;
  uint64_t samples = 0;  // every count of every offset
};

struct InstructionSamples {
  bool recorded = false;             // the capture holds instruction-sample records (mode samples)
  uint32_t sampledDevices = 0;       // devices with a streamer open
  std::vector<std::string> reasons;  // what the counts count ("Active", "ControlStall", ...)
  std::vector<SampledCode> codes;
  std::unordered_map<uint64_t, uint32_t> codeOfKernel;  // kernel object id -> codes index
  uint64_t samples = 0;              // every count read
  uint64_t unattributed = 0;         // of those, at addresses in no known kernel
  bool dropped = false;              // the runtime said it dropped some
  std::vector<std::string> notes;    // devices not sampled and why; damaged records

  const SampledCode* codeOf(uint64_t kernel) const {
    auto it = codeOfKernel.find(kernel);
    return it == codeOfKernel.end() || codes[it->second].samples == 0 ? nullptr : &codes[it->second];
  }
};

// Reads the capture's instruction samples; `work` holds its objects
// (streamDeviceWork or loadDeviceWork has read them).
InstructionSamples loadInstructionSamples(const Capture& capture, const DeviceWork& work);

// Names the instruction `offset` bytes into kernel `kernel` of `module` (an
// object of `capture` whose debugInfo is its debug ELF): source frames,
// innermost first; empty when unknown, with `problem` saying why.
using InstructionResolver =
    std::function<std::vector<ResolvedFrame>(const Capture& capture, const Object& module,
                                              const std::string& kernel, uint64_t offset, std::string& problem)>;

// Calls `visit` with each sampled instruction of `samples` (codes with
// samples, offsets in order) and its source frames, named by `resolve` (may
// be empty); what naming found wrong is added to `notes`, each once.
using SampledInstructionVisitor = std::function<void(const SampledCode& code, uint64_t offset,
                                                     const std::vector<uint64_t>& counts,
                                                     const std::vector<ResolvedFrame>& frames)>;
void forEachSampledInstruction(const Capture& capture, const DeviceWork& work, const InstructionSamples& samples,
                               const InstructionResolver& resolve, std::vector<std::string>& notes,
                               const SampledInstructionVisitor& visit);

// How an instruction reads in a flame graph or a table: "file.c:42" (the
// innermost frame's file basename and line), with the function first when it
// is not the kernel itself ("helper [inlined] file.c:12"); "kernel+0x1a" when
// nothing is known.
std::string instructionText(const std::vector<ResolvedFrame>& frames, const std::string& kernel, uint64_t offset);

}  // namespace gtap::readers

namespace gtap::readers {

// `gtap kernels --instructions`: the sampled instructions of the kernels whose
// name matches a glob, one row per kernel and source line (or offset where no
// line is known), hottest first, merged over every capture.
struct InstructionRow {
  std::string kernel;
  std::string text;      // instructionText
  std::string location;  // file:line in full, when known
  uint64_t offset = 0;   // the row's hottest offset from the kernel's first instruction
  uint32_t offsets = 0;  // distinct offsets on the row
  uint64_t hottest = 0;  // samples at `offset`
  uint64_t samples = 0;
  std::vector<uint64_t> counts;  // per reason
  double share = 0;      // of its kernel's samples
  int64_t timeNs = 0;    // its kernel's device time in proportion to the samples
};

struct InstructionReport {
  bool recorded = false;             // some capture holds instruction samples
  std::vector<std::string> reasons;
  std::vector<InstructionRow> rows;
  uint64_t samples = 0;              // of the matching kernels
  uint64_t launches = 0;             // of the matching kernels
  int64_t deviceNs = 0;              // of the matching kernels' timed launches
  std::vector<std::string> notes;
};

InstructionReport instructionReport(std::span<const Capture* const> captures, const std::string& kernelGlob,
                                    const InstructionResolver& resolve);

}  // namespace gtap::readers
