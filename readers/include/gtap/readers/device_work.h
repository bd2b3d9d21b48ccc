// The device side of a capture: devices and their clocks, runtime objects,
// device operations with times converted to the host clock, allocations, and
// CPU stacks.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtap/format/device_ops.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/op_store.h"

namespace gtap::readers {

struct Device {
  uint32_t id = 0;
  std::string name;
  uint64_t frequencyHz = 0;
  uint8_t kernelBits = 64;
  uint8_t globalBits = 64;
  double peakFlopsPerSecond = 0, peakBytesPerSecond = 0;  // 0: unknown
  struct Sample {
    int64_t hostNs;
    uint64_t ticks;
  };
  std::vector<Sample> samples;  // by host time

  // Converts a device timestamp `bits` wide to host ns with the clock sample
  // nearest `nearHostNs`; the timestamp may have wrapped since the sample.
  // Returns false when there is no sample or no frequency.
  bool toHostNs(uint64_t ticks, uint8_t bits, int64_t nearHostNs, int64_t& out) const;
  // The same in two steps, for several timestamps near one host time: the
  // sample (null when toHostNs would return false), then each conversion.
  const Sample* sampleNear(int64_t nearHostNs, uint8_t bits) const;
  int64_t hostNsFrom(const Sample& sample, uint64_t ticks, uint8_t bits) const;
};

struct Object {
  uint64_t id = 0;
  schema::ObjectKind kind = schema::ObjectKind::UNKNOWN;
  uint64_t handle = 0;
  uint32_t device = ~0u;
  uint64_t parent = 0;
  std::string name;
  int64_t createdNs = 0;
  int64_t destroyedNs = 0;  // 0 while alive at the end
  uint64_t binarySize = 0;
  std::string binaryHash;   // hex, modules only
  uint64_t binaryHashLow = 0, binaryHashHigh = 0;
  std::string binaryFormat;
  std::vector<std::pair<std::string, std::string>> properties;
  // Mode samples: a module's debug ELF (size 0 when none), a kernel's device
  // address of its first instruction (0 when unknown).
  uint64_t debugInfoSize = 0, debugInfoHashLow = 0, debugInfoHashHigh = 0;
  uint64_t codeAddress = 0;
};

// What a device dispatch joined to an IREE HAL dispatch knows of it and of
// the queue_execute that submitted it; indices are the operations' places in
// the capture's file order (DeviceWork::ops when read whole).
struct HalOrigin {
  uint32_t op = 0;  // the device dispatch
  uint32_t dispatch = 0;
  uint32_t submission = 0;
  uint32_t submissionThread = ~0u;
  uint64_t submissionAppendIndex = ~uint64_t{0};
  uint64_t list = 0;  // the command buffer
  std::string_view name;  // the HAL dispatch's export
  int64_t dispatchNs = 0;    // when the HAL dispatch was recorded
  int64_t submissionNs = 0;  // when the queue_execute was made
};

// Fields are grouped by size, so the many of a large capture pack tightly.
struct DeviceOp {
  uint64_t queue = 0;
  uint64_t list = 0;
  uint64_t kernel = 0;
  uint64_t bytes = 0;
  uint64_t appendIndex = ~uint64_t{0};
  int64_t appendNs = 0;
  int64_t submitNs = 0;
  int64_t completedNs = 0;
  int64_t startNs = 0;      // valid when timed
  int64_t endNs = 0;
  // Names and lists point into the DeviceWork's OpStore (or at literals).
  std::string_view name;    // kernel name, or "copy", "fill", "barrier"
  std::string_view module;  // "module#ID" of the kernel, when known
  std::string_view note;
  std::span<const uint32_t> gridSize;  // HSA dispatches: work-items per dimension (empty otherwise)
  std::array<uint32_t, 3> groupCount{};
  std::array<uint32_t, 3> groupSize{};
  uint32_t device = ~0u;
  uint32_t thread = ~0u;
  uint32_t stack = 0;
  uint32_t deviceDispatches = 0;  // see hal below
  schema::DeviceOpKind kind = schema::DeviceOpKind::KERNEL;
  schema::CopyDirection direction = schema::CopyDirection::UNKNOWN;
  bool timed = false;       // startNs/endNs valid
  // The runtime level that recorded it: IREE_HAL for a dispatch recorded into
  // an IREE command buffer (no device times at that level), else the device
  // runtime's (UNKNOWN in older files).
  schema::Api recordedBy = schema::Api::UNKNOWN;
  // HSA packets: the AQL header and the index in the program's queue.
  uint16_t packetHeader = 0;
  uint64_t queueIndex = 0;
  // IREE HAL operations: the method that issued it ("dispatch",
  // "queue_execute", ...).
  std::string_view operation;
  // IREE HAL dispatches joined to the device dispatches they became
  // (joinHalDispatches, joinHalStreamed): on a device-level kernel, the HAL
  // dispatch it came from and the queue_execute that submitted it (null when
  // none); on a HAL dispatch, deviceDispatches above.
  const HalOrigin* hal = nullptr;
  using Binding = format::OpBinding;
  using SemaphoreValue = format::OpSemaphore;
  // The lists an operation may carry, read only when asked for (in the
  // DeviceWork's store; null when there are none): an HSA dispatch's kernarg
  // bytes; an IREE HAL operation's buffers bound or touched, and the
  // semaphore values it waited for and signalled.
  struct Lists {
    std::span<const uint8_t> counterRaw;  // the runtime's raw counter data
    std::span<const uint8_t> arguments;
    std::span<const Binding> bindings;
    std::span<const SemaphoreValue> waits, signals;
  };
  const Lists* lists = nullptr;
  // Hardware counters read around it (counters.h): the CounterSet's id (0:
  // not measured) and one value per counter of the set, as stored bits.
  uint32_t counterSet = 0;
  std::span<const uint64_t> counterValues;
  std::span<const uint8_t> counterRaw() const { return lists ? lists->counterRaw : std::span<const uint8_t>(); }
  std::span<const uint8_t> arguments() const { return lists ? lists->arguments : std::span<const uint8_t>(); }
  std::span<const Binding> bindings() const { return lists ? lists->bindings : std::span<const Binding>(); }
  std::span<const SemaphoreValue> waits() const { return lists ? lists->waits : std::span<const SemaphoreValue>(); }
  std::span<const SemaphoreValue> signals() const { return lists ? lists->signals : std::span<const SemaphoreValue>(); }
  int64_t durationNs() const { return endNs - startNs; }
};

struct MemoryOp {
  bool isFree = false;
  schema::MemoryKind kind = schema::MemoryKind::UNKNOWN;
  uint32_t device = ~0u;
  uint64_t address = 0;
  uint64_t size = 0;
  int64_t hostNs = 0;
  uint32_t thread = ~0u;
  uint32_t stack = 0;
};

struct HostModule {
  uint32_t id = 0;
  std::string path;
  std::string buildId;  // hex
  uint64_t loadBias = 0, start = 0, end = 0;
};

// How the IREE HAL dispatches of a capture met the device dispatches below
// them: each submission of a command buffer executes its dispatches once.
struct HalJoin {
  uint64_t executions = 0;     // HAL dispatches times the submissions that executed them
  uint64_t joined = 0;         // of those, joined to a device dispatch
  uint64_t deviceKernels = 0;  // device-level kernel dispatches
  uint64_t notFromHal = 0;     // of those, joined to no HAL dispatch (the driver's own, or another library's)
};

struct DeviceWork {
  std::map<uint32_t, Device> devices;
  std::map<uint64_t, Object> objects;
  std::vector<DeviceOp> ops;
  // What ops' names and lists point into; shared by copies.
  std::shared_ptr<OpStore> store = std::make_shared<OpStore>();
  std::vector<MemoryOp> memory;
  std::map<uint32_t, HostModule> modules;
  std::map<uint32_t, std::vector<uint64_t>> stacks;
  std::vector<std::string> notes;
  HalJoin halJoin;
  // The join, once made: each joined device dispatch's origin (in the store),
  // by operation index, and (HAL dispatch index, device dispatches it became)
  // for each HAL dispatch that became any, by index.
  bool halJoined = false;
  std::span<const HalOrigin> halOrigins;
  std::vector<std::pair<uint32_t, uint32_t>> halDispatchCounts;

  std::string_view intern(std::string_view s) { return store->intern(s); }
  const HostModule* moduleFor(uint64_t address) const;
  std::string queueName(uint64_t queue) const;
};

DeviceWork loadDeviceWork(const Capture& capture);

// The same without holding every operation: reads the devices, objects,
// memory operations and stacks into `work` (whose ops stay empty), then
// streams the operations (streamDeviceOps).
bool streamDeviceWork(const Capture& capture, DeviceWork& work, bool lists,
                      const std::function<bool(std::span<const DeviceOp>)>& visit);
// The same, every operation whatever the capture's report filter: for a
// report that numbers operations by their place in the file and applies the
// filter itself (ReportFilter::keepsOp).
bool streamEveryDeviceOp(const Capture& capture, DeviceWork& work, bool lists,
                         const std::function<bool(std::span<const DeviceOp>)>& visit);
// Calls `visit` with each chunk's operations in file order, a batch of a few
// thousand at a time, their names, notes and host times as loadDeviceWork
// gives them, into a `work` that holds the other chunks already
// (streamDeviceWork). They are joined to IREE HAL dispatches when the work
// holds the join (joinHalStreamed), else not (hal unset, deviceDispatches 0).
// The names and notes stay valid while `work` lives; the span, and the
// argument, binding and semaphore lists (read only with `lists`), only during
// the call. `visit`
// returns false to stop; the return value says whether every chunk was seen.
// What was wrong with a chunk is noted once however often it is read.
bool streamDeviceOps(const Capture& capture, DeviceWork& work, bool lists,
                     const std::function<bool(std::span<const DeviceOp>)>& visit);
// Makes the IREE HAL join of a capture whose other chunks `work` holds,
// reading the operations once and keeping only what the join needs (the
// device kernels, HAL dispatches, begins and submissions, some 64 bytes
// each): streamDeviceOps then gives the operations joined. A reader that met
// IREE HAL command-buffer work (joinsHal) while streaming does this and
// streams again.
void joinHalStreamed(const Capture& capture, DeviceWork& work);
// Every operation of `capture` into `visit`, a batch at a time, joined to the
// IREE HAL dispatches, for readers that can start again: streamed once
// (streamDeviceWork); when IREE HAL command-buffer work shows up (joinsHal),
// the join is made (joinHalStreamed) and the operations are streamed again
// from the first, `restart` called before (what `visit` built from the part
// it saw must be dropped then).
void streamDeviceWorkJoined(const Capture& capture, DeviceWork& work,
                            const std::function<void(std::span<const DeviceOp>)>& visit,
                            const std::function<void()>& restart);

// Joins each execution of an IREE HAL dispatch to the device dispatch it
// became, in one process: a queue_execute runs the dispatches its command
// buffer holds (those recorded since the buffer's last begin); the executions,
// in submission order, take the device-level kernel dispatches of the same
// name (the export name is the kernel's symbol) in the order the device
// runtime saw them submitted, each the first not taken that was submitted no
// earlier than the HAL dispatch was recorded. loadDeviceWork runs it on every
// operation held; joinHalStreamed the same on what it read.
void joinHalDispatches(DeviceWork& work);
// An IREE HAL queue_execute of a command buffer: what joinHalDispatches joins
// from.
bool isHalSubmission(const DeviceOp& op);
// Whether any operation of the capture is IREE HAL command-buffer work
// (joinsHal): the operations are decoded until the first (nothing is kept).
bool holdsHalWork(const Capture& capture);
// Every operation of `capture` in file order, as loadDeviceWork gives them,
// for readers that must see each once and in order (the record exports), a
// batch at a time; a capture holding IREE HAL command-buffer work is joined
// first (joinHalStreamed). `work` holds the rest afterwards.
void visitDeviceWork(const Capture& capture, DeviceWork& work, bool lists,
                     const std::function<void(std::span<const DeviceOp>)>& visit);
// An IREE HAL operation recorded into a command buffer, or submitting one: a
// capture holding one may hold a submission to join (often only at its end),
// so a reader that streams the operations stops at the first, makes the join
// (joinHalStreamed) and streams again, rather than stream nearly all of it
// first.
bool joinsHal(const DeviceOp& op);

std::string directionName(schema::CopyDirection d);
std::string memoryKindName(schema::MemoryKind k);
std::string opKindName(schema::DeviceOpKind k);
// The same as a view of a literal.
std::string_view opKindText(schema::DeviceOpKind k);

}  // namespace gtap::readers
