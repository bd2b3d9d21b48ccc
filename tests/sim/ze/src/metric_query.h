// Metric queries (zet): the query-based metric groups ("ComputeBasic" and
// the smaller groups made of its metrics), whose metrics count what an engine
// ran between a query's begin and end commands. All of them read the same
// raw report; a group's values are its metrics' part of it.
// The queries' API is in metric_query.cpp; the counting in execute.cpp.
#pragma once

#include "commands.h"
#include "metrics.h"

#include <zet_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace sim {

// ComputeBasic's metrics, in the order of zetMetricGet and of the values
// zetMetricGroupCalculateMetricValues gives for one report.
enum QueryMetric : uint32_t {
  kGpuTime,             // ns from begin to end on the device clock
  kGpuCoreClocks,       // device clock ticks from begin to end
  kAvgGpuCoreFrequency, // MHz: the clock's constant rate
  kGpuBusyTime,         // ns spent running kernel bodies
  kKernelsExecuted,
  kWorkGroupsExecuted,
  kWorkItemsExecuted,
  kQueryMetricCount
};

// One query's raw data, 64 bytes, little-endian (see tests/sim/README.md):
//   0  uint64 begin ticks     device clock when the begin command ran
//   8  uint64 end ticks       device clock when the end command ran
//  16  uint64 busy ns         time spent running kernel bodies in between
//  24  uint64 kernels         kernels run in between
//  32  uint64 work-groups
//  40  uint64 work-items
//  48  uint32 magic           kQueryMagic: a query report of this driver
//  52  uint32 flags           bit 0: valid
//  56  zero up to 64
namespace queryReport {
inline constexpr size_t kSize = 64;
inline constexpr size_t kBegin = 0;
inline constexpr size_t kEnd = 8;
inline constexpr size_t kBusyNs = 16;
inline constexpr size_t kKernels = 24;
inline constexpr size_t kWorkGroups = 32;
inline constexpr size_t kWorkItems = 40;
inline constexpr size_t kMagic = 48;
inline constexpr size_t kFlags = 52;
inline constexpr uint32_t kQueryMagic = 0x31515347;  // "GSQ1"
inline constexpr uint32_t kValid = 1;
}  // namespace queryReport

struct MetricQueryPool : Object {
  static constexpr Kind kKind = Kind::MetricQueryPool;
  MetricQueryPool(Device* d, uint32_t n) : Object(kKind), device(d), slotUsed(n, false) {}
  Device* const device;
  std::mutex mutex;  // guards slotUsed
  std::vector<bool> slotUsed;
};

struct MetricQuery : Object {
  static constexpr Kind kKind = Kind::MetricQuery;
  MetricQuery(std::shared_ptr<MetricQueryPool> p, uint32_t i) : Object(kKind), pool(std::move(p)), index(i) {}
  ~MetricQuery() override;
  const std::shared_ptr<MetricQueryPool> pool;
  const uint32_t index;
  std::mutex mutex;  // guards everything below (worker's begin and end against the host)
  bool begun = false;
  bool ready = false;  // the end ran after a begin: `report` holds its data
  uint64_t beginTicks = 0;
  WorkTotals beginTotals;
  uint8_t report[queryReport::kSize] = {};
};

// The query-based groups, in the order zetMetricGroupGet gives them after
// the time-based one; all of one domain (1), so one is active at a time.
struct QueryGroupInfo {
  const char* name;
  const char* description;
  std::vector<QueryMetric> metrics;  // in the order of zetMetricGet and of the values
};
const std::vector<QueryGroupInfo>& queryGroups();
inline constexpr uint32_t kQueryDomain = 1;  // apart from instruction sampling's 0: both can be active

// Makes the query groups' metrics' names and the like known to metrics.cpp
// (`index` is a QueryMetric).
void queryMetricProperties(uint32_t index, zet_metric_properties_t* out);
void queryGroupProperties(uint32_t group, zet_metric_group_properties_t* out);
// zetMetricGroupCalculateMetricValues for a query group's raw data.
ze_result_t calculateQueryValues(uint32_t group, size_t rawDataSize, const uint8_t* raw, uint32_t* pCount,
                                 zet_typed_value_t* values);

}  // namespace sim
