// The operation stream inside a DeviceOps chunk (format 1.4 on; see
// capture.capnp and docs/format.md): one row of varints per operation,
// holding only the fields that differ from the previous operation's (ids,
// shapes) or from their defaults (sizes, notes, lists), and times as
// differences. A Level Zero launch takes about 16 bytes before compression
// where the Cap'n Proto struct list of 1.0-1.3 took about 220, so the writer
// and the readers touch a fourteenth of the memory.
//
// A row:
//   varint head = (fields << 3) | kind      fields: the kDevOp* bits below
//   then, in bit order, for each bit set:
//     kDevOpTicks        zigzag (start - previous start), zigzag (end - start)
//                        (device ticks, differences modulo 2^64)
//     kDevOpAppendIndex  zigzag (appendIndex - previous appendIndex)   absent: ~0
//     kDevOpSubmitNs     zigzag (submitNs - appendNs)                  absent: 0
//     kDevOpCompleted    zigzag (completedNs - appendNs)               absent: 0
//     kDevOpKernel, kDevOpList, kDevOpQueue                            absent: previous op's
//     kDevOpGroupCount, kDevOpGroupSize: three varints                 absent: previous op's
//     kDevOpBytes, kDevOpDirection                                     absent: 0
//     kDevOpThread, kDevOpSubmitThread, kDevOpDevice                   absent: previous op's
//     kDevOpStack, kDevOpQueueIndex (zigzag difference from the
//       previous present one), kDevOpPacketHeader                      absent: 0
//     kDevOpGrid         varint n, n varints                           absent: none
//     kDevOpArguments    varint length, bytes                          absent: none
//     kDevOpNote         varint length, bytes                          absent: previous op's
//     kDevOpRecordedBy                                                 absent: previous op's
//     kDevOpOperation    varint length, bytes                          absent: previous op's
//       (a note or operation that became empty is written, length 0)
//     kDevOpBindings     varint n, n × (buffer, offset, length, slot)
//     kDevOpWaits, kDevOpSignals: varint n, n × (semaphore, value)
//     kDevOpCounters     (1.7) varint set (a CounterSet id, > 0), varint n,
//                        n varints (the values' 64 bits, capture.capnp),
//                        varint length, the runtime's raw bytes
//   and always (after the fields) zigzag (appendNs - previous appendNs).
//   kDevOpTimed is a flag with no value.
// "Previous" starts, for the first row of a chunk, at: device and threads
// ~0, ids, shapes, ticks, times and indices 0, recordedBy unknown, note and
// operation empty.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtap/format/schema/capture.capnp.h"
#include "gtap/format/varint.h"

namespace gtap::format {

inline constexpr uint32_t kDevOpTimed = 1u << 0, kDevOpTicks = 1u << 1, kDevOpAppendIndex = 1u << 2,
                          kDevOpSubmitNs = 1u << 3, kDevOpCompleted = 1u << 4, kDevOpKernel = 1u << 5,
                          kDevOpList = 1u << 6, kDevOpQueue = 1u << 7, kDevOpGroupCount = 1u << 8,
                          kDevOpGroupSize = 1u << 9, kDevOpBytes = 1u << 10, kDevOpDirection = 1u << 11,
                          kDevOpThread = 1u << 12, kDevOpSubmitThread = 1u << 13, kDevOpDevice = 1u << 14,
                          kDevOpStack = 1u << 15, kDevOpQueueIndex = 1u << 16, kDevOpPacketHeader = 1u << 17,
                          kDevOpGrid = 1u << 18, kDevOpArguments = 1u << 19, kDevOpNote = 1u << 20,
                          kDevOpRecordedBy = 1u << 21, kDevOpOperation = 1u << 22, kDevOpBindings = 1u << 23,
                          kDevOpWaits = 1u << 24, kDevOpSignals = 1u << 25, kDevOpCounters = 1u << 26;
inline constexpr uint32_t kDevOpKnownFields = (1u << 27) - 1;

// A range of a buffer an IREE HAL operation binds (BufferRef).
struct OpBinding {
  uint64_t buffer = 0, offset = 0, length = 0;
  uint32_t slot = 0;
  bool operator==(const OpBinding&) const = default;
};
// A timeline semaphore and a value on it (SemaphoreValue).
struct OpSemaphore {
  uint64_t semaphore = 0, value = 0;
  bool operator==(const OpSemaphore&) const = default;
};

// Every field of a DeviceOp; the views point into the caller's memory when
// encoding, into the stream (bytes) or the decoder (lists) when decoding,
// valid until the visit returns.
struct DeviceOpFields {
  schema::DeviceOpKind kind = schema::DeviceOpKind::KERNEL;
  bool timed = false;
  uint32_t device = ~0u;
  uint64_t queue = 0, list = 0, kernel = 0;
  std::array<uint32_t, 3> groupCount{}, groupSize{};
  uint64_t bytes = 0;
  schema::CopyDirection direction = schema::CopyDirection::UNKNOWN;
  uint32_t thread = ~0u;
  uint64_t appendIndex = ~uint64_t{0};
  int64_t appendNs = 0, submitNs = 0;
  uint32_t submitThread = ~0u;
  uint64_t startTicks = 0, endTicks = 0;
  uint32_t stack = 0;
  int64_t completedNs = 0;
  std::string_view note;
  std::span<const uint8_t> arguments;
  uint16_t packetHeader = 0;
  uint64_t queueIndex = 0;
  std::span<const uint32_t> grid;
  schema::Api recordedBy = schema::Api::UNKNOWN;
  std::span<const OpBinding> bindings;
  std::string_view operation;
  std::span<const OpSemaphore> waits, signals;
  // Hardware counters read around it (0: not measured), one value per
  // counter of the set, and the runtime's raw data.
  uint32_t counterSet = 0;
  std::span<const uint64_t> counterValues;
  std::span<const uint8_t> counterRaw;
};

namespace devops_detail {
using varint::unzigzag;
using varint::zigzag;
// What the previous row left, shared by encoder and decoder.
struct Previous {
  uint32_t device = ~0u, thread = ~0u, submitThread = ~0u;
  uint64_t queue = 0, list = 0, kernel = 0;
  std::array<uint32_t, 3> groupCount{}, groupSize{};
  uint64_t startTicks = 0, appendIndex = 0, queueIndex = 0;
  int64_t appendNs = 0;
  schema::Api recordedBy = schema::Api::UNKNOWN;
};
}  // namespace devops_detail

// Appends rows to a byte vector it owns (cleared and reused by the caller
// between chunks through reset()).
class DeviceOpEncoder {
 public:
  void reset() {
    out_.clear();
    prev_ = {};
    prevNote_.clear();
    prevOperation_.clear();
    count_ = 0;
  }
  void add(const DeviceOpFields& f) {
    using namespace devops_detail;
    // The most a row takes: 28 varints of ten bytes, the lists and the texts.
    size_t room = 310 + 10 * f.grid.size() + 40 * f.bindings.size() + 20 * (f.waits.size() + f.signals.size()) +
                  f.arguments.size() + f.note.size() + f.operation.size() + 10 * f.counterValues.size() +
                  f.counterRaw.size();
    size_t at = out_.size();
    if (out_.capacity() < at + room) out_.reserve(std::max(at + room, 2 * out_.capacity()));
    out_.resize(at + room);
    uint8_t* const start = out_.data() + at;
    uint8_t* p = start;
    uint32_t fields = 0;
    if (f.timed) fields |= kDevOpTimed;
    if (f.startTicks | f.endTicks) fields |= kDevOpTicks;
    if (f.appendIndex != ~uint64_t{0}) fields |= kDevOpAppendIndex;
    if (f.submitNs) fields |= kDevOpSubmitNs;
    if (f.completedNs) fields |= kDevOpCompleted;
    if (f.kernel != prev_.kernel) fields |= kDevOpKernel;
    if (f.list != prev_.list) fields |= kDevOpList;
    if (f.queue != prev_.queue) fields |= kDevOpQueue;
    if (f.groupCount != prev_.groupCount) fields |= kDevOpGroupCount;
    if (f.groupSize != prev_.groupSize) fields |= kDevOpGroupSize;
    if (f.bytes) fields |= kDevOpBytes;
    if (f.direction != schema::CopyDirection::UNKNOWN) fields |= kDevOpDirection;
    if (f.thread != prev_.thread) fields |= kDevOpThread;
    if (f.submitThread != prev_.submitThread) fields |= kDevOpSubmitThread;
    if (f.device != prev_.device) fields |= kDevOpDevice;
    if (f.stack) fields |= kDevOpStack;
    if (f.queueIndex) fields |= kDevOpQueueIndex;
    if (f.packetHeader) fields |= kDevOpPacketHeader;
    if (!f.grid.empty()) fields |= kDevOpGrid;
    if (!f.arguments.empty()) fields |= kDevOpArguments;
    if (f.note != prevNote_) fields |= kDevOpNote;
    if (f.recordedBy != prev_.recordedBy) fields |= kDevOpRecordedBy;
    if (f.operation != prevOperation_) fields |= kDevOpOperation;
    if (!f.bindings.empty()) fields |= kDevOpBindings;
    if (!f.waits.empty()) fields |= kDevOpWaits;
    if (!f.signals.empty()) fields |= kDevOpSignals;
    if (f.counterSet) fields |= kDevOpCounters;
    uint32_t kind = static_cast<uint32_t>(f.kind);
    put(p, (uint64_t{fields} << 3) | (kind < 8 ? kind : static_cast<uint32_t>(schema::DeviceOpKind::OTHER)));
    if (fields & kDevOpTicks) {
      put(p, zigzag(static_cast<int64_t>(f.startTicks - prev_.startTicks)));
      put(p, zigzag(static_cast<int64_t>(f.endTicks - f.startTicks)));
      prev_.startTicks = f.startTicks;
    }
    if (fields & kDevOpAppendIndex) {
      put(p, zigzag(static_cast<int64_t>(f.appendIndex - prev_.appendIndex)));
      prev_.appendIndex = f.appendIndex;
    }
    if (fields & kDevOpSubmitNs) put(p, zigzag(static_cast<int64_t>(static_cast<uint64_t>(f.submitNs) - static_cast<uint64_t>(f.appendNs))));
    if (fields & kDevOpCompleted) put(p, zigzag(static_cast<int64_t>(static_cast<uint64_t>(f.completedNs) - static_cast<uint64_t>(f.appendNs))));
    if (fields & kDevOpKernel) put(p, prev_.kernel = f.kernel);
    if (fields & kDevOpList) put(p, prev_.list = f.list);
    if (fields & kDevOpQueue) put(p, prev_.queue = f.queue);
    if (fields & kDevOpGroupCount) {
      for (uint32_t v : f.groupCount) put(p, v);
      prev_.groupCount = f.groupCount;
    }
    if (fields & kDevOpGroupSize) {
      for (uint32_t v : f.groupSize) put(p, v);
      prev_.groupSize = f.groupSize;
    }
    if (fields & kDevOpBytes) put(p, f.bytes);
    if (fields & kDevOpDirection) put(p, static_cast<uint64_t>(f.direction));
    if (fields & kDevOpThread) put(p, prev_.thread = f.thread);
    if (fields & kDevOpSubmitThread) put(p, prev_.submitThread = f.submitThread);
    if (fields & kDevOpDevice) put(p, prev_.device = f.device);
    if (fields & kDevOpStack) put(p, f.stack);
    if (fields & kDevOpQueueIndex) {
      put(p, zigzag(static_cast<int64_t>(f.queueIndex - prev_.queueIndex)));
      prev_.queueIndex = f.queueIndex;
    }
    if (fields & kDevOpPacketHeader) put(p, f.packetHeader);
    if (fields & kDevOpGrid) {
      put(p, f.grid.size());
      for (uint32_t v : f.grid) put(p, v);
    }
    if (fields & kDevOpArguments) bytes(p, f.arguments.data(), f.arguments.size());
    if (fields & kDevOpNote) {
      bytes(p, f.note.data(), f.note.size());
      prevNote_.assign(f.note);
    }
    if (fields & kDevOpRecordedBy) put(p, static_cast<uint64_t>(prev_.recordedBy = f.recordedBy));
    if (fields & kDevOpOperation) {
      bytes(p, f.operation.data(), f.operation.size());
      prevOperation_.assign(f.operation);
    }
    if (fields & kDevOpBindings) {
      put(p, f.bindings.size());
      for (const OpBinding& b : f.bindings) {
        put(p, b.buffer);
        put(p, b.offset);
        put(p, b.length);
        put(p, b.slot);
      }
    }
    for (auto list : {kDevOpWaits, kDevOpSignals}) {
      if (!(fields & list)) continue;
      auto values = list == kDevOpWaits ? f.waits : f.signals;
      put(p, values.size());
      for (const OpSemaphore& s : values) {
        put(p, s.semaphore);
        put(p, s.value);
      }
    }
    if (fields & kDevOpCounters) {
      put(p, f.counterSet);
      put(p, f.counterValues.size());
      for (uint64_t v : f.counterValues) put(p, v);
      bytes(p, f.counterRaw.data(), f.counterRaw.size());
    }
    put(p, zigzag(static_cast<int64_t>(static_cast<uint64_t>(f.appendNs) - static_cast<uint64_t>(prev_.appendNs))));
    prev_.appendNs = f.appendNs;
    out_.resize(at + static_cast<size_t>(p - start));
    ++count_;
  }
  std::span<const uint8_t> bytes() const { return out_; }
  uint32_t count() const { return count_; }

 private:
  static void put(uint8_t*& out, uint64_t v) { varint::put(out, v); }
  static void bytes(uint8_t*& out, const void* data, size_t n) {
    put(out, n);
    if (n) std::memcpy(out, data, n);
    out += n;
  }
  std::vector<uint8_t> out_;
  devops_detail::Previous prev_;
  std::string prevNote_, prevOperation_;
  uint32_t count_ = 0;
};

// Decodes `count` rows, calling visit(const DeviceOpFields&) for each; a
// visitor that returns bool stops the decoding by returning false (the rows
// after it are then neither decoded nor checked).
// Returns an empty string on success, else what was wrong and at which row.
// Every length and count is checked against the bytes left before it is
// used; enum values are passed as stored (readers name unknown ones).
template <typename Visit>
std::string decodeDeviceOps(const uint8_t* data, size_t size, uint32_t count, Visit&& visit) {
  using namespace devops_detail;
  const uint8_t* p = data;
  const uint8_t* const end = data + size;
  uint32_t row = 0;
  auto get = [&](uint64_t& out) { return varint::get(p, end, out); };
  auto at = [&](const std::string& what) {
    return "operation " + std::to_string(row) + " of " + std::to_string(count) + ": " + what;
  };
  // Each row is at least two bytes (its head and its time).
  if (count > size / 2)
    return "count " + std::to_string(count) + " but only " + std::to_string(size) + " encoded bytes (at most " +
           std::to_string(size / 2) + " operations)";
  Previous prev;
  std::vector<uint32_t> grid;
  std::vector<OpBinding> bindings;
  std::vector<OpSemaphore> waits, signals;
  std::vector<uint64_t> counterValues;
  std::string_view note, operation;  // views into the stream, kept from row to row
  DeviceOpFields f;
  std::string bad;  // what was wrong, when a check below fails
  // False (and `bad` said) when x does not fit.
  auto fits32 = [&](uint64_t x, const char* what, uint32_t& out) {
    if (__builtin_expect(x > 0xffffffffu, 0)) {
      bad = std::string(what) + " " + std::to_string(x) + " does not fit 32 bits";
      return false;
    }
    out = static_cast<uint32_t>(x);
    return true;
  };
  for (; row < count; ++row) {
    uint64_t head;
    if (!get(head)) return at("cut short");
    uint64_t fields = head >> 3;
    if (fields & ~uint64_t{kDevOpKnownFields})
      return at("unknown field bits " + std::to_string(fields & ~uint64_t{kDevOpKnownFields}));
    f.kind = static_cast<schema::DeviceOpKind>(head & 7);
    f.timed = fields & kDevOpTimed;
    uint64_t v = 0, w = 0;
    auto text = [&](std::string_view& out, const char* what) {
      uint64_t n;
      if (!get(n)) return false;
      if (n > static_cast<uint64_t>(end - p)) {
        bad = std::string(what) + " of " + std::to_string(n) + " bytes runs past the stream";
        return false;
      }
      out = {reinterpret_cast<const char*>(p), static_cast<size_t>(n)};
      p += n;
      return true;
    };
    // A list of n entries of at least `each` bytes: n is checked before it sizes anything.
    auto listCount = [&](uint64_t& n, size_t each, const char* what) {
      if (!get(n)) return false;
      if (n > static_cast<uint64_t>(end - p) / each) {
        bad = std::string(what) + ": " + std::to_string(n) + " entries cannot fit the " +
              std::to_string(end - p) + " bytes left";
        return false;
      }
      return true;
    };
#define GTAP_DEVOPS_GET(x) \
  if (!get(x)) return at("cut short")
    if (fields & kDevOpTicks) {
      GTAP_DEVOPS_GET(v);
      GTAP_DEVOPS_GET(w);
      f.startTicks = prev.startTicks + static_cast<uint64_t>(unzigzag(v));
      f.endTicks = f.startTicks + static_cast<uint64_t>(unzigzag(w));
      prev.startTicks = f.startTicks;
    } else {
      f.startTicks = f.endTicks = 0;
    }
    if (fields & kDevOpAppendIndex) {
      GTAP_DEVOPS_GET(v);
      f.appendIndex = prev.appendIndex += static_cast<uint64_t>(unzigzag(v));
    } else {
      f.appendIndex = ~uint64_t{0};
    }
    uint64_t submitDelta = 0, completedDelta = 0;
    if (fields & kDevOpSubmitNs) GTAP_DEVOPS_GET(submitDelta);
    if (fields & kDevOpCompleted) GTAP_DEVOPS_GET(completedDelta);
    if (fields & kDevOpKernel) GTAP_DEVOPS_GET(prev.kernel);
    if (fields & kDevOpList) GTAP_DEVOPS_GET(prev.list);
    if (fields & kDevOpQueue) GTAP_DEVOPS_GET(prev.queue);
    for (auto [bit, shape] : {std::pair{kDevOpGroupCount, &prev.groupCount}, std::pair{kDevOpGroupSize, &prev.groupSize}}) {
      if (!(fields & bit)) continue;
      for (uint32_t& x : *shape) {
        GTAP_DEVOPS_GET(v);
        if (!fits32(v, bit == kDevOpGroupCount ? "group count" : "group size", x)) return at(bad);
      }
    }
    f.kernel = prev.kernel;
    f.list = prev.list;
    f.queue = prev.queue;
    f.groupCount = prev.groupCount;
    f.groupSize = prev.groupSize;
    f.bytes = 0;
    if (fields & kDevOpBytes) GTAP_DEVOPS_GET(f.bytes);
    f.direction = schema::CopyDirection::UNKNOWN;
    if (fields & kDevOpDirection) {
      GTAP_DEVOPS_GET(v);
      if (v > 0xffff) return at("direction " + std::to_string(v) + " out of range");
      f.direction = static_cast<schema::CopyDirection>(v);
    }
    for (auto [bit, slot, what] : {std::tuple{kDevOpThread, &prev.thread, "thread"},
                                   std::tuple{kDevOpSubmitThread, &prev.submitThread, "submit thread"},
                                   std::tuple{kDevOpDevice, &prev.device, "device"}}) {
      if (!(fields & bit)) continue;
      GTAP_DEVOPS_GET(v);
      if (!fits32(v, what, *slot)) return at(bad);
    }
    f.thread = prev.thread;
    f.submitThread = prev.submitThread;
    f.device = prev.device;
    f.stack = 0;
    if (fields & kDevOpStack) {
      GTAP_DEVOPS_GET(v);
      if (!fits32(v, "stack", f.stack)) return at(bad);
    }
    if (fields & kDevOpQueueIndex) {
      GTAP_DEVOPS_GET(v);
      prev.queueIndex += static_cast<uint64_t>(unzigzag(v));
      f.queueIndex = prev.queueIndex;
    } else {
      f.queueIndex = 0;
    }
    f.packetHeader = 0;
    if (fields & kDevOpPacketHeader) {
      GTAP_DEVOPS_GET(v);
      if (v > 0xffff) return at("packet header " + std::to_string(v) + " does not fit 16 bits");
      f.packetHeader = static_cast<uint16_t>(v);
    }
    grid.clear();
    if (fields & kDevOpGrid) {
      if (!listCount(w, 1, "grid")) return at(bad.empty() ? "cut short" : bad);
      for (uint64_t i = 0; i < w; ++i) {
        GTAP_DEVOPS_GET(v);
        uint32_t x;
        if (!fits32(v, "grid size", x)) return at(bad);
        grid.push_back(x);
      }
    }
    f.grid = grid;
    std::string_view args;
    if ((fields & kDevOpArguments) && !text(args, "arguments")) return at(bad.empty() ? "cut short" : bad);
    if ((fields & kDevOpNote) && !text(note, "note")) return at(bad.empty() ? "cut short" : bad);
    f.arguments = {reinterpret_cast<const uint8_t*>(args.data()), args.size()};
    f.note = note;
    if (fields & kDevOpRecordedBy) {
      GTAP_DEVOPS_GET(v);
      if (v > 0xffff) return at("api " + std::to_string(v) + " out of range");
      prev.recordedBy = static_cast<schema::Api>(v);
    }
    f.recordedBy = prev.recordedBy;
    if ((fields & kDevOpOperation) && !text(operation, "operation")) return at(bad.empty() ? "cut short" : bad);
    f.operation = operation;
    bindings.clear();
    if (fields & kDevOpBindings) {
      if (!listCount(w, 4, "bindings")) return at(bad.empty() ? "cut short" : bad);
      bindings.resize(w);  // w is bounded by the bytes left
      for (OpBinding& b : bindings) {
        uint64_t slot;
        GTAP_DEVOPS_GET(b.buffer);
        GTAP_DEVOPS_GET(b.offset);
        GTAP_DEVOPS_GET(b.length);
        GTAP_DEVOPS_GET(slot);
        if (!fits32(slot, "binding slot", b.slot)) return at(bad);
      }
    }
    f.bindings = bindings;
    for (auto [bit, values] : {std::pair{kDevOpWaits, &waits}, std::pair{kDevOpSignals, &signals}}) {
      values->clear();
      if (!(fields & bit)) continue;
      if (!listCount(w, 2, bit == kDevOpWaits ? "waits" : "signals")) return at(bad.empty() ? "cut short" : bad);
      values->resize(w);
      for (OpSemaphore& s : *values) {
        GTAP_DEVOPS_GET(s.semaphore);
        GTAP_DEVOPS_GET(s.value);
      }
    }
    f.waits = waits;
    f.signals = signals;
    counterValues.clear();
    f.counterSet = 0;
    f.counterRaw = {};
    if (fields & kDevOpCounters) {
      GTAP_DEVOPS_GET(v);
      if (v == 0 || v > 0xffffffffu) return at("counter set " + std::to_string(v) + " out of range");
      f.counterSet = static_cast<uint32_t>(v);
      if (!listCount(w, 1, "counter values")) return at(bad.empty() ? "cut short" : bad);
      counterValues.resize(w);
      for (uint64_t& x : counterValues) GTAP_DEVOPS_GET(x);
      std::string_view raw;
      if (!text(raw, "counter raw data")) return at(bad.empty() ? "cut short" : bad);
      f.counterRaw = {reinterpret_cast<const uint8_t*>(raw.data()), raw.size()};
    }
    f.counterValues = counterValues;
    GTAP_DEVOPS_GET(v);
#undef GTAP_DEVOPS_GET
    f.appendNs = prev.appendNs = static_cast<int64_t>(static_cast<uint64_t>(prev.appendNs) + static_cast<uint64_t>(unzigzag(v)));
    f.submitNs = (fields & kDevOpSubmitNs) ? static_cast<int64_t>(static_cast<uint64_t>(f.appendNs) + static_cast<uint64_t>(unzigzag(submitDelta))) : 0;
    f.completedNs = (fields & kDevOpCompleted) ? static_cast<int64_t>(static_cast<uint64_t>(f.appendNs) + static_cast<uint64_t>(unzigzag(completedDelta))) : 0;
    if constexpr (std::is_same_v<decltype(visit(static_cast<const DeviceOpFields&>(f))), bool>) {
      if (!visit(static_cast<const DeviceOpFields&>(f))) return {};  // the visitor has what it wanted
    } else {
      visit(static_cast<const DeviceOpFields&>(f));
    }
  }
  if (p != end) return std::to_string(end - p) + " bytes left after " + std::to_string(count) + " operations";
  return {};
}

}  // namespace gtap::format
