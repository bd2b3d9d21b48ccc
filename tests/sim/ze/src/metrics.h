// The tools API's metrics (zet): the device's metric groups and their
// metrics. Instruction sampling: the time-based group "EuStallSampling" and
// the streamers that collect its raw reports; the sampling itself (timers,
// the signal handler) is in sampling.cpp, the API in metrics.cpp. Counters
// per piece of work: the query-based group "ComputeBasic" (metric_query.h).
#pragma once

#include "objects.h"

#include <zet_api.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace sim {

inline constexpr uint32_t kMetricCount = 10;      // IP, then the nine reasons
inline constexpr uint32_t kStallReasons = kMetricCount - 1;
inline constexpr uint32_t kMinSamplingPeriodNs = 20'000;
inline constexpr uint32_t kMaxSamplingPeriodNs = 1'000'000'000;
inline constexpr uint32_t kStreamerCapacity = 65'536;  // reports per streamer

// One raw report, 64 bytes, little-endian (see tests/sim/README.md):
//   0  uint64 ip          the sampled instruction's address
//   8  uint16 counts[9]   Active, ControlStall, PipeStall, SendStall, DistStall,
//                         SbidStall, SyncStall, InstrFetchStall, OtherStall
//  26  uint16 subslice
//  28  uint32 flags       bit 0: valid
//  32  uint64 timestamp   device ticks
//  40  zero up to 64
namespace report {
inline constexpr size_t kSize = 64;
inline constexpr size_t kIp = 0;
inline constexpr size_t kCounts = 8;
inline constexpr size_t kSubslice = 26;
inline constexpr size_t kFlags = 28;
inline constexpr size_t kTimestamp = 32;
inline constexpr uint32_t kValid = 1;
}  // namespace report

struct Metric;

struct MetricGroup : Object {
  static constexpr Kind kKind = Kind::MetricGroup;
  MetricGroup(Device* d, bool q, uint32_t qg = 0) : Object(kKind), device(d), queryBased(q), queryGroup(qg) {}
  Device* const device;
  const bool queryBased;           // a query group (metric_query.h); otherwise EuStallSampling
  const uint32_t queryGroup;       // which of queryGroups()
  uint32_t domain() const;
  std::vector<Metric*> metrics{};  // registered, never destroyed
};

struct Metric : Object {
  static constexpr Kind kKind = Kind::Metric;
  Metric(MetricGroup* g, uint32_t i) : Object(kKind), group(g), index(i) {}
  MetricGroup* const group;
  // EuStallSampling: 0 is IP, then the reasons in report order.
  // Query groups: the QueryMetric it is (metric_query.h).
  const uint32_t index;
};

// Raw reports between the signal handlers that write them (on any thread
// that runs a sampled launch) and zetMetricStreamerReadData (on any program
// thread). A bounded queue of cells, each with a sequence number that says
// whether it is free to write or ready to read: no locks and no allocation,
// so writing is async-signal-safe, and a writer interrupted half-way delays
// readers only up to its own cell.
class ReportRing {
 public:
  explicit ReportRing(uint32_t capacity);  // a power of two
  // False (nothing written) when the ring is full.
  bool push(const uint8_t* report) noexcept;
  // Moves up to `max` reports to `out`; returns how many.
  uint64_t pop(uint8_t* out, uint64_t max) noexcept;
  // Reports written and not yet read.
  uint64_t size() const noexcept;

 private:
  struct Cell {
    std::atomic<uint64_t> seq;
    uint8_t data[report::kSize];
  };
  std::unique_ptr<Cell[]> cells_;
  const uint64_t mask_;
  alignas(64) std::atomic<uint64_t> head_{0};  // position of the next write
  alignas(64) std::atomic<uint64_t> tail_{0};  // position of the next read
};

struct MetricStreamer : Object {
  static constexpr Kind kKind = Kind::MetricStreamer;
  MetricStreamer(Device* d, uint32_t period, uint32_t notifyEvery, std::shared_ptr<Event> event)
      : Object(kKind), device(d), periodNs(period), notifyEveryNReports(notifyEvery),
        notification(std::move(event)), ring(kStreamerCapacity) {}
  Device* const device;
  const uint32_t periodNs;
  const uint32_t notifyEveryNReports;        // 0: never
  const std::shared_ptr<Event> notification;  // may be null
  ReportRing ring;
  std::atomic<bool> dropped{false};  // a report did not fit since the last read
  // Guards `closed` against the workers' notifications: once closed, the
  // notification event is never signaled again.
  std::mutex notifyMutex;
  bool closed = false;
};

// Makes the device's metric groups and metrics (at zeInit, with the device).
void createMetricGroups(Device& device);

// After a sampled launch on `device` (on the thread that ran it): signals the
// open streamer's notification event once enough reports are waiting.
void notifyReports(Device& device);

}  // namespace sim
