// The profile records front ends gather between flushes (devices and clock
// samples, runtime objects, device operations, memory operations), and the one
// place that writes them as chunks. Each front end keeps its own Outbox under
// its own lock and hands it to writeProfileRecords from its chunk producer.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "chunk_producer.h"
#include "gtap/format/device_ops.h"
#include "gtap/format/schema/capture.capnp.h"

namespace gtap::core::devicework {
struct Header;
}

namespace gtap::core::profile {

inline constexpr uint32_t kNoDevice = ~0u;

struct DeviceRecord {
  uint32_t id = 0;
  schema::Api api = schema::Api::UNKNOWN;
  uint64_t handle = 0;
  std::string name;
  uint32_t vendorId = 0, deviceId = 0;
  std::vector<uint8_t> uuid;
  uint64_t frequency = 0;  // ticks per second
  uint8_t kernelBits = 0, globalBits = 0;
  double peakFlopsPerSecond = 0, peakBytesPerSecond = 0;  // from its properties; 0: unknown
};

struct ClockSampleRecord {
  uint32_t device = 0;
  int64_t hostNs = 0;
  uint64_t ticks = 0;
};

struct ObjectRecord {
  uint64_t id = 0;
  schema::ObjectKind kind = schema::ObjectKind::UNKNOWN;
  uint64_t handle = 0;
  uint32_t device = kNoDevice;
  uint64_t parent = 0;
  std::string name;
  uint64_t ticks = 0;  // Clock::nowTicks() at creation
  uint32_t thread = 0;
  std::vector<uint8_t> binary;
  std::string binaryFormat, buildFlags;
  uint32_t flags = 0, ordinal = 0, index = 0;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<uint8_t> debugInfo;  // mode samples: a module's debug ELF
  uint64_t codeAddress = 0;        // mode samples: a kernel's first instruction on the device
};

struct OpRecord {
  schema::DeviceOpKind kind = schema::DeviceOpKind::KERNEL;
  uint32_t device = kNoDevice;
  uint64_t queue = 0, list = 0, kernel = 0;  // gtap object ids
  std::array<uint32_t, 3> groupCount{}, groupSize{};
  std::vector<uint32_t> gridSize;  // HSA dispatches: work-items per dimension
  uint64_t bytes = 0;
  schema::CopyDirection direction = schema::CopyDirection::UNKNOWN;
  uint32_t thread = ~0u;
  uint64_t appendIndex = ~uint64_t{0};
  uint64_t appendTicks = 0, submitTicks = 0;  // Clock::nowTicks()
  uint32_t submitThread = ~0u;
  bool timed = false;
  uint64_t start = 0, end = 0;  // device ticks
  int64_t completedNs = 0;
  std::string note;
  const char* fixedNote = nullptr;  // a string literal, written when `note` is empty (no copy per record)
  std::vector<uint64_t> stack;
  std::vector<uint8_t> arguments;  // HSA: kernarg bytes
  uint16_t packetHeader = 0;
  uint64_t queueIndex = 0;
  schema::Api recordedBy = schema::Api::UNKNOWN;
  using Binding = format::OpBinding;
  std::vector<Binding> bindings;  // IREE HAL: buffers bound or touched
  // IREE HAL: the method, and the semaphore values waited for and signalled.
  const char* operation = nullptr;  // a string literal
  using SemaphoreValue = format::OpSemaphore;
  std::vector<SemaphoreValue> waits, signals;
  // Hardware counters read around it: its CounterSetRecord id (0: not
  // measured), one value per counter (capture.capnp's CounterType bits), and
  // the runtime's raw data.
  uint32_t counterSet = 0;
  std::vector<uint64_t> counterValues;
  std::vector<uint8_t> counterRaw;
};

// A set of counters measured together around a dispatch (capture.capnp's
// CounterSet); ids come from nextCounterSetId().
struct CounterDefRecord {
  std::string name, description, units, block;
  schema::CounterType type = schema::CounterType::UNSIGNED;
};
struct CounterSetRecord {
  uint32_t id = 0;
  uint32_t device = kNoDevice;
  std::string source, group;
  std::vector<CounterDefRecord> counters;
  uint32_t pass = 0, passes = 1;
};
struct CounterNoteRecord {
  std::string counter;
  uint32_t device = kNoDevice;
  std::string reason;
  uint32_t pass = 0;
};
// Device metrics sampled over time (capture.capnp's DeviceMetrics).
struct DeviceMetricsRecord {
  uint32_t device = kNoDevice;
  std::string source;
  uint64_t intervalNs = 0;
  struct Metric {
    std::string name, units;
    bool cumulative = false;
  };
  std::vector<Metric> metrics;
  std::vector<int64_t> times;   // host ns
  std::vector<double> values;   // times.size() × metrics.size()
  std::string note;
};

struct MemoryRecord {
  bool isFree = false;
  schema::MemoryKind kind = schema::MemoryKind::UNKNOWN;
  uint32_t device = kNoDevice;
  uint64_t address = 0, size = 0, alignment = 0, ticks = 0;
  uint32_t thread = 0;
  std::vector<uint64_t> stack;
};

struct Outbox {
  std::vector<DeviceRecord> devices;
  std::vector<ClockSampleRecord> samples;
  std::vector<ObjectRecord> created;
  std::vector<std::pair<uint64_t, uint64_t>> destroyed;  // id, ticks
  std::vector<OpRecord> ops;
  std::vector<MemoryRecord> memory;
  // Written before the device ops, which name the sets.
  std::vector<CounterSetRecord> counterSets;
  std::vector<CounterNoteRecord> counterNotes;
  std::string countersRequested;  // with the first sets or notes of the file
  std::vector<DeviceMetricsRecord> deviceMetrics;

  // Emptied, capacity kept: swapped back to the recording side, the vectors
  // take records without growing (and faulting in new pages) every flush.
  void clear() {
    devices.clear();
    samples.clear();
    created.clear();
    destroyed.clear();
    ops.clear();
    memory.clear();
    counterSets.clear();
    counterNotes.clear();
    countersRequested.clear();
    deviceMetrics.clear();
  }
};

// A new object id, unique in the process whichever front end asks: the
// objects of Level Zero, HSA and IREE's HAL share one file.
uint64_t nextObjectId();
// A new counter set id (> 0), unique in the process.
uint32_t nextCounterSetId();

// Writes the records as devices, objects, stacks, device-ops and memory-ops
// chunks (only those with something in them), stacks before their users.
void writeProfileRecords(ChunkSink& sink, const Outbox& out);
// The counters chunk alone (sets, notes, the request): for a front end whose
// device ops go through writeDeviceWork, written from its producer first.
void writeCounters(ChunkSink& sink, const Outbox& out);
// Device-work records where they lie in the threads' buffers (device_work.h),
// as one device-ops chunk (and the stacks they name before it), with no
// OpRecord made on the way.
void writeDeviceWork(ChunkSink& sink, const std::vector<const devicework::Header*>& records);

}  // namespace gtap::core::profile
