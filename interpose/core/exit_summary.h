// GTAP_SUMMARY: small tables kept as the writer thread writes records (API
// call spans, device ops, the devices and kernels they name), printed on
// stderr when the capture file is complete. Every note is made on the writer
// thread, never on a program thread; each does nothing unless GTAP_SUMMARY is
// set.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gtap/format/schema/capture.capnp.h"

namespace gtap::core::summary {

// Counts from zero for a new session (a forked child's capture keeps the
// kernel names and devices it inherited, not the parent's counts).
void restart();

void noteCall(uint16_t function, int64_t durationNs);
void noteDevice(uint32_t id, uint64_t frequencyHz, uint8_t kernelBits);
void noteKernelName(uint64_t kernel, std::string_view name);

struct Op {
  schema::DeviceOpKind kind;
  schema::Api recordedBy;
  uint32_t device;
  uint64_t kernel;
  uint64_t bytes;
  schema::CopyDirection direction;
  bool timed;
  uint64_t start, end;  // device ticks
};
void noteOp(const Op& op);

// Writes the summary to fd 2, each line beginning "gtap: ".
void print(int pid, const std::string& path, int64_t durationNs);

}  // namespace gtap::core::summary
