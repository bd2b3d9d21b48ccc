// Metric queries: pools of queries whose begin and end commands bracket work
// in a command list, and the query-based metric group "ComputeBasic" whose
// values they measure. Begin and end run on the engine's thread in list
// order, so a query counts exactly the kernels that engine ran in between.
#include "api.h"
#include "clock.h"
#include "commands.h"
#include "metric_query.h"
#include "sync.h"

#include <algorithm>
#include <cstring>

namespace sim {

namespace {

struct QueryMetricInfo {
  const char* name;
  const char* description;
  zet_metric_type_t type;
  zet_value_type_t valueType;
  const char* units;
};

constexpr QueryMetricInfo kQueryMetrics[kQueryMetricCount] = {
    {"GpuTime", "Time from the query's begin to its end on the device clock", ZET_METRIC_TYPE_DURATION,
     ZET_VALUE_TYPE_UINT64, "ns"},
    {"GpuCoreClocks", "Device clock ticks from the query's begin to its end", ZET_METRIC_TYPE_EVENT,
     ZET_VALUE_TYPE_UINT64, "cycles"},
    {"AvgGpuCoreFrequencyMHz", "Average device clock frequency between begin and end (constant)",
     ZET_METRIC_TYPE_RATIO, ZET_VALUE_TYPE_UINT64, "MHz"},
    {"GpuBusyTime", "Time spent running kernels between the query's begin and its end", ZET_METRIC_TYPE_DURATION,
     ZET_VALUE_TYPE_UINT64, "ns"},
    {"KernelsExecuted", "Kernels run between the query's begin and its end", ZET_METRIC_TYPE_EVENT,
     ZET_VALUE_TYPE_UINT64, "events"},
    {"WorkGroupsExecuted", "Work-groups run between the query's begin and its end", ZET_METRIC_TYPE_EVENT,
     ZET_VALUE_TYPE_UINT64, "events"},
    {"WorkItemsExecuted", "Work-items run between the query's begin and its end", ZET_METRIC_TYPE_EVENT,
     ZET_VALUE_TYPE_UINT64, "events"},
};

constexpr char kComponent[] = "GPU";
constexpr uint32_t kTier = 1;

void copyName(char* out, size_t size, const char* text) {
  std::memset(out, 0, size);
  std::strncpy(out, text, size - 1);
}

void storeLe(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = uint8_t(v >> (8 * i));
}

uint64_t loadLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t ticksToNs(uint64_t ticks) {
  return uint64_t((unsigned __int128)ticks * 1'000'000'000u / clock::kTicksPerSecond);
}

}  // namespace

const std::vector<QueryGroupInfo>& queryGroups() {
  // Never destroyed: a tool may calculate values while the process exits.
  static const auto& groups = *new std::vector<QueryGroupInfo>{
      {"ComputeBasic",
       "Per-query counters: time, device clocks, busy time, kernels, work-groups and work-items run between a "
       "query's begin and end",
       {kGpuTime, kGpuCoreClocks, kAvgGpuCoreFrequency, kGpuBusyTime, kKernelsExecuted, kWorkGroupsExecuted,
        kWorkItemsExecuted}},
      {"ComputeTiming", "Per-query time and device clocks between a query's begin and end",
       {kGpuTime, kGpuCoreClocks, kAvgGpuCoreFrequency}},
      {"ComputeBusy", "Per-query time spent running kernels between a query's begin and end", {kGpuBusyTime}},
      {"ComputeWork", "Per-query kernels, work-groups and work-items run between a query's begin and end",
       {kKernelsExecuted, kWorkGroupsExecuted, kWorkItemsExecuted}},
  };
  return groups;
}

MetricQuery::~MetricQuery() {
  std::lock_guard lock(pool->mutex);
  pool->slotUsed[index] = false;
}

void queryGroupProperties(uint32_t group, zet_metric_group_properties_t* out) {
  const QueryGroupInfo& g = queryGroups()[group];
  copyName(out->name, sizeof out->name, g.name);
  copyName(out->description, sizeof out->description, g.description);
  out->samplingType = ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED;
  out->domain = kQueryDomain;
  out->metricCount = uint32_t(g.metrics.size());
}

void queryMetricProperties(uint32_t index, zet_metric_properties_t* out) {
  const QueryMetricInfo& info = kQueryMetrics[index];
  copyName(out->name, sizeof out->name, info.name);
  copyName(out->description, sizeof out->description, info.description);
  copyName(out->component, sizeof out->component, kComponent);
  out->tierNumber = kTier;
  out->metricType = info.type;
  out->resultType = info.valueType;
  copyName(out->resultUnits, sizeof out->resultUnits, info.units);
}

ze_result_t calculateQueryValues(uint32_t group, size_t rawDataSize, const uint8_t* raw, uint32_t* pCount,
                                 zet_typed_value_t* values) {
  const std::vector<QueryMetric>& metrics = queryGroups()[group].metrics;
  const uint32_t perReport = uint32_t(metrics.size());
  namespace r = queryReport;
  SIM_CHECK(rawDataSize % r::kSize == 0, ZE_RESULT_ERROR_INVALID_SIZE);
  for (size_t off = 0; off < rawDataSize; off += r::kSize) {
    // Data of another group (or not a report at all) cannot be calculated here.
    SIM_CHECK(loadLe(raw + off + r::kMagic, 4) == r::kQueryMagic, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  }
  // One row of values per valid report, in the order of the reports.
  std::vector<const uint8_t*> reports;
  for (size_t off = 0; off < rawDataSize; off += r::kSize) {
    if (loadLe(raw + off + r::kFlags, 4) & r::kValid) reports.push_back(raw + off);
  }
  const uint64_t needed64 = uint64_t(reports.size()) * perReport;
  const uint32_t needed = needed64 > UINT32_MAX ? UINT32_MAX : uint32_t(needed64);
  if (*pCount == 0 || values == nullptr) {
    *pCount = needed;
    return ZE_RESULT_SUCCESS;
  }
  const uint32_t n = std::min(*pCount, needed);
  uint32_t written = 0;
  for (size_t i = 0; i < reports.size() && written < n; ++i) {
    const uint8_t* p = reports[i];
    const uint64_t ticks = loadLe(p + r::kEnd, 8) - loadLe(p + r::kBegin, 8);
    const uint64_t row[kQueryMetricCount] = {
        ticksToNs(ticks),
        ticks,
        clock::kTicksPerSecond / 1'000'000,
        loadLe(p + r::kBusyNs, 8),
        loadLe(p + r::kKernels, 8),
        loadLe(p + r::kWorkGroups, 8),
        loadLe(p + r::kWorkItems, 8),
    };
    for (uint32_t k = 0; k < perReport && written < n; ++k, ++written) {
      values[written].type = kQueryMetrics[metrics[k]].valueType;
      values[written].value.ui64 = row[metrics[k]];
    }
  }
  *pCount = written;
  return ZE_RESULT_SUCCESS;
}

namespace metricQueries {

void begin(MetricQuery& q, const WorkTotals& totals) {
  std::lock_guard lock(q.mutex);
  q.begun = true;
  q.ready = false;
  q.beginTotals = totals;
  q.beginTicks = clock::nowTicks();
}

void end(MetricQuery& q, const WorkTotals& totals) {
  namespace r = queryReport;
  const uint64_t now = clock::nowTicks();
  std::lock_guard lock(q.mutex);
  if (!q.begun) return;  // an end without its begin measures nothing: the query stays not ready
  uint8_t* p = q.report;
  std::memset(p, 0, r::kSize);
  storeLe(p + r::kBegin, q.beginTicks, 8);
  storeLe(p + r::kEnd, now, 8);
  storeLe(p + r::kBusyNs, totals.busyNs - q.beginTotals.busyNs, 8);
  storeLe(p + r::kKernels, totals.kernels - q.beginTotals.kernels, 8);
  storeLe(p + r::kWorkGroups, totals.workGroups - q.beginTotals.workGroups, 8);
  storeLe(p + r::kWorkItems, totals.workItems - q.beginTotals.workItems, 8);
  storeLe(p + r::kMagic, r::kQueryMagic, 4);
  storeLe(p + r::kFlags, r::kValid, 4);
  q.begun = false;
  q.ready = true;
}

}  // namespace metricQueries

ze_result_t zetMetricQueryPoolCreate(zet_context_handle_t hContext, zet_device_handle_t hDevice,
                                     zet_metric_group_handle_t hMetricGroup, const zet_metric_query_pool_desc_t* desc,
                                     zet_metric_query_pool_handle_t* phMetricQueryPool) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_LOOKUP(group, MetricGroup, hMetricGroup);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(phMetricQueryPool);
  SIM_CHECK(desc->type <= ZET_METRIC_QUERY_POOL_TYPE_EXECUTION, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  // Execution queries (the program's own markers) are not offered.
  SIM_CHECK(desc->type == ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE, ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
  SIM_CHECK(desc->count > 0, ZE_RESULT_ERROR_INVALID_SIZE);
  SIM_CHECK(group->device == device.get(), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  // Only an event-based group is measured by queries.
  SIM_CHECK(group->queryBased, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  {
    std::lock_guard lock(sync::mutex());
    // As for streamers: queries use activated groups (metrics.cpp).
    const auto& active = context->activeMetricGroups;
    if (std::find(active.begin(), active.end(), group.get()) == active.end()) return ZE_RESULT_NOT_READY;
  }
  auto pool = makeObject<MetricQueryPool>(device.get(), desc->count);
  *phMetricQueryPool = toHandle<zet_metric_query_pool_handle_t>(pool);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricQueryPoolDestroy(zet_metric_query_pool_handle_t hMetricQueryPool) {
  std::shared_ptr<MetricQueryPool> pool;
  return take(hMetricQueryPool, pool);  // queries still alive keep their slots' pool
}

ze_result_t zetMetricQueryCreate(zet_metric_query_pool_handle_t hMetricQueryPool, uint32_t index,
                                 zet_metric_query_handle_t* phMetricQuery) {
  SIM_LOOKUP(pool, MetricQueryPool, hMetricQueryPool);
  SIM_NOT_NULL(phMetricQuery);
  {
    std::lock_guard lock(pool->mutex);
    SIM_CHECK(index < pool->slotUsed.size(), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // One query per slot at a time, as one event per slot of an event pool.
    SIM_CHECK(!pool->slotUsed[index], ZE_RESULT_ERROR_INVALID_ARGUMENT);
    pool->slotUsed[index] = true;
  }
  std::shared_ptr<MetricQuery> query;
  try {
    query = makeObject<MetricQuery>(pool, index);
  } catch (...) {
    std::lock_guard lock(pool->mutex);
    pool->slotUsed[index] = false;
    throw;
  }
  *phMetricQuery = toHandle<zet_metric_query_handle_t>(query);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricQueryDestroy(zet_metric_query_handle_t hMetricQuery) {
  std::shared_ptr<MetricQuery> query;
  return take(hMetricQuery, query);  // the slot is free once queued work no longer holds it
}

ze_result_t zetMetricQueryReset(zet_metric_query_handle_t hMetricQuery) {
  SIM_LOOKUP(query, MetricQuery, hMetricQuery);
  std::lock_guard lock(query->mutex);
  query->begun = false;
  query->ready = false;
  std::memset(query->report, 0, sizeof query->report);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricQueryGetData(zet_metric_query_handle_t hMetricQuery, size_t* pRawDataSize, uint8_t* pRawData) {
  SIM_LOOKUP(query, MetricQuery, hMetricQuery);
  SIM_NOT_NULL(pRawDataSize);
  // The size query: one report, whether or not it is ready.
  if (*pRawDataSize == 0 || pRawData == nullptr) {
    *pRawDataSize = queryReport::kSize;
    return ZE_RESULT_SUCCESS;
  }
  SIM_CHECK(*pRawDataSize >= queryReport::kSize, ZE_RESULT_ERROR_INVALID_SIZE);
  std::lock_guard lock(query->mutex);
  if (!query->ready) return ZE_RESULT_NOT_READY;
  std::memcpy(pRawData, query->report, queryReport::kSize);
  *pRawDataSize = queryReport::kSize;
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
