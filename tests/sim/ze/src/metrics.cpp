// The tools API's metrics: the device's metric groups and their metrics;
// instruction sampling's group, "EuStallSampling", modelled on Intel's
// instruction (EU stall) sampling; streamers that collect its raw reports; and
// the calculation that turns reports into one row of values per instruction
// address. (The query-based "ComputeBasic" is in metric_query.cpp.) What is measured is real (sampling.cpp):
// the address of the instruction a kernel was executing. The stall reasons
// are not: a CPU has no such counters, so every sample counts as Active.
#include "api.h"
#include "clock.h"
#include "commands.h"
#include "metric_query.h"
#include "metrics.h"
#include "sampling.h"
#include "sync.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace sim {

namespace {

struct MetricInfo {
  const char* name;
  const char* description;
  zet_metric_type_t type;
  const char* units;
};

// In the order of zetMetricGet, and (after IP) of the counts in a raw report.
constexpr MetricInfo kMetrics[kMetricCount] = {
    {"IP", "Address of the sampled instruction", ZET_METRIC_TYPE_IP_EXP, "Address"},
    {"Active", "Samples taken while the instruction's thread was executing", ZET_METRIC_TYPE_EVENT, "Events"},
    {"ControlStall", "Samples taken while the thread waited on control flow (branches, jumps)",
     ZET_METRIC_TYPE_EVENT, "Events"},
    {"PipeStall", "Samples taken while the thread waited for an execution pipeline", ZET_METRIC_TYPE_EVENT,
     "Events"},
    {"SendStall", "Samples taken while the thread waited to issue a send (memory or message)",
     ZET_METRIC_TYPE_EVENT, "Events"},
    {"DistStall", "Samples taken while the thread waited for a shared function unit", ZET_METRIC_TYPE_EVENT,
     "Events"},
    {"SbidStall", "Samples taken while the thread waited on a scoreboard dependency (an earlier send's result)",
     ZET_METRIC_TYPE_EVENT, "Events"},
    {"SyncStall", "Samples taken while the thread waited at a barrier or fence", ZET_METRIC_TYPE_EVENT,
     "Events"},
    {"InstrFetchStall", "Samples taken while the thread waited for its instruction to be fetched",
     ZET_METRIC_TYPE_EVENT, "Events"},
    {"OtherStall", "Samples taken while the thread was stalled for any other reason", ZET_METRIC_TYPE_EVENT,
     "Events"},
};

constexpr char kGroupName[] = "EuStallSampling";
constexpr char kGroupDescription[] =
    "Instruction sampling: every sampling period, the address of the instruction a kernel was executing "
    "and why its thread was stalled";
constexpr char kComponent[] = "XVE";
constexpr uint32_t kTier = 4;

void copyName(char* out, size_t size, const char* text) {
  std::memset(out, 0, size);
  std::strncpy(out, text, size - 1);
}

uint64_t loadLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool isActive(const Context& context, const MetricGroup* group) {
  const auto& active = context.activeMetricGroups;
  return std::find(active.begin(), active.end(), group) != active.end();
}

}  // namespace

ReportRing::ReportRing(uint32_t capacity) : cells_(new Cell[capacity]), mask_(capacity - 1) {
  for (uint64_t i = 0; i < capacity; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
}

// A cell at position p is free to write when its sequence is p, and ready to
// read when it is p + 1; reading makes it p + capacity (free for the next lap).
bool ReportRing::push(const uint8_t* r) noexcept {
  uint64_t pos = head_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    const uint64_t seq = cell.seq.load(std::memory_order_acquire);
    const int64_t diff = int64_t(seq - pos);
    if (diff == 0) {
      if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        std::memcpy(cell.data, r, report::kSize);
        cell.seq.store(pos + 1, std::memory_order_release);
        return true;
      }
    } else if (diff < 0) {
      return false;  // full: the cell still holds an unread report of the previous lap
    } else {
      pos = head_.load(std::memory_order_relaxed);
    }
  }
}

uint64_t ReportRing::pop(uint8_t* out, uint64_t max) noexcept {
  uint64_t done = 0;
  uint64_t pos = tail_.load(std::memory_order_relaxed);
  while (done < max) {
    Cell& cell = cells_[pos & mask_];
    const uint64_t seq = cell.seq.load(std::memory_order_acquire);
    const int64_t diff = int64_t(seq - (pos + 1));
    if (diff == 0) {
      if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        std::memcpy(out + done * report::kSize, cell.data, report::kSize);
        cell.seq.store(pos + mask_ + 1, std::memory_order_release);
        ++done;
        pos = pos + 1;
      }
    } else if (diff < 0) {
      break;  // empty, or the next report is still being written
    } else {
      pos = tail_.load(std::memory_order_relaxed);
    }
  }
  return done;
}

uint64_t ReportRing::size() const noexcept {
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  const uint64_t head = head_.load(std::memory_order_acquire);
  return head > tail ? head - tail : 0;
}

void createMetricGroups(Device& device) {
  auto group = makeObject<MetricGroup>(&device, false);
  for (uint32_t i = 0; i < kMetricCount; ++i) group->metrics.push_back(makeObject<Metric>(group.get(), i).get());
  device.metricGroup = group.get();
  for (uint32_t g = 0; g < queryGroups().size(); ++g) {
    auto queries = makeObject<MetricGroup>(&device, true, g);
    for (QueryMetric m : queryGroups()[g].metrics)
      queries->metrics.push_back(makeObject<Metric>(queries.get(), uint32_t(m)).get());
    device.queryGroups.push_back(queries.get());
  }
  device.queryGroup = device.queryGroups.front();
}

uint32_t MetricGroup::domain() const { return queryBased ? kQueryDomain : 0; }

void notifyReports(Device& device) {
  if (device.sampling.load(std::memory_order_acquire) == nullptr) return;
  std::shared_ptr<MetricStreamer> s;
  {
    std::lock_guard lock(sync::mutex());
    s = device.streamer;
  }
  if (!s || !s->notification || s->notifyEveryNReports == 0) return;
  if (s->ring.size() < s->notifyEveryNReports) return;
  std::lock_guard lock(s->notifyMutex);
  if (s->closed) return;
  // Signaled the way the host signals an event (the specification: "the
  // driver signals the notification event from the host").
  const uint64_t now = clock::nowTicks();
  events::signal(*s->notification, now, now);
}

ze_result_t zetMetricGroupGet(zet_device_handle_t hDevice, uint32_t* pCount, zet_metric_group_handle_t* phMetricGroups) {
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(pCount);
  std::vector<MetricGroup*> groups = {device->metricGroup};
  groups.insert(groups.end(), device->queryGroups.begin(), device->queryGroups.end());
  countQuery(uint32_t(groups.size()), pCount, phMetricGroups != nullptr, [&](uint32_t i) {
    phMetricGroups[i] =
        reinterpret_cast<zet_metric_group_handle_t>(static_cast<Object*>(groups[i]));
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricGroupGetProperties(zet_metric_group_handle_t hMetricGroup,
                                        zet_metric_group_properties_t* pProperties) {
  SIM_LOOKUP(group, MetricGroup, hMetricGroup);
  SIM_NOT_NULL(pProperties);
  if (group->queryBased) {
    queryGroupProperties(group->queryGroup, pProperties);
    return ZE_RESULT_SUCCESS;
  }
  copyName(pProperties->name, sizeof pProperties->name, kGroupName);
  copyName(pProperties->description, sizeof pProperties->description, kGroupDescription);
  pProperties->samplingType = ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED;
  pProperties->domain = 0;
  pProperties->metricCount = kMetricCount;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricGet(zet_metric_group_handle_t hMetricGroup, uint32_t* pCount, zet_metric_handle_t* phMetrics) {
  SIM_LOOKUP(group, MetricGroup, hMetricGroup);
  SIM_NOT_NULL(pCount);
  countQuery(uint32_t(group->metrics.size()), pCount, phMetrics != nullptr, [&](uint32_t i) {
    phMetrics[i] = reinterpret_cast<zet_metric_handle_t>(static_cast<Object*>(group->metrics[i]));
  });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricGetProperties(zet_metric_handle_t hMetric, zet_metric_properties_t* pProperties) {
  SIM_LOOKUP(metric, Metric, hMetric);
  SIM_NOT_NULL(pProperties);
  if (metric->group->queryBased) {
    queryMetricProperties(metric->index, pProperties);
    return ZE_RESULT_SUCCESS;
  }
  const MetricInfo& info = kMetrics[metric->index];
  copyName(pProperties->name, sizeof pProperties->name, info.name);
  copyName(pProperties->description, sizeof pProperties->description, info.description);
  copyName(pProperties->component, sizeof pProperties->component, kComponent);
  pProperties->tierNumber = kTier;
  pProperties->metricType = info.type;
  pProperties->resultType = ZET_VALUE_TYPE_UINT64;
  copyName(pProperties->resultUnits, sizeof pProperties->resultUnits, info.units);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetContextActivateMetricGroups(zet_context_handle_t hContext, zet_device_handle_t hDevice, uint32_t count,
                                           zet_metric_group_handle_t* phMetricGroups) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_CHECK(!(phMetricGroups == nullptr && count > 0), ZE_RESULT_ERROR_INVALID_SIZE);
  std::vector<const MetricGroup*> groups;
  for (uint32_t i = 0; i < count; ++i) {
    SIM_LOOKUP(group, MetricGroup, phMetricGroups[i]);
    // Groups are activated for a device: one of another device does not belong.
    SIM_CHECK(group->device == device.get(), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Two groups of one domain (or one group twice) cannot be active together.
    SIM_CHECK(std::none_of(groups.begin(), groups.end(),
                           [&](const MetricGroup* g) { return g->domain() == group->domain(); }),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    groups.push_back(group.get());
  }
  std::lock_guard lock(sync::mutex());
  auto& active = context->activeMetricGroups;
  std::erase_if(active, [&](const MetricGroup* g) { return g->device == device.get(); });
  active.insert(active.end(), groups.begin(), groups.end());
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricStreamerOpen(zet_context_handle_t hContext, zet_device_handle_t hDevice,
                                  zet_metric_group_handle_t hMetricGroup, zet_metric_streamer_desc_t* desc,
                                  ze_event_handle_t hNotificationEvent, zet_metric_streamer_handle_t* phMetricStreamer) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_LOOKUP(group, MetricGroup, hMetricGroup);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(phMetricStreamer);
  std::shared_ptr<Event> event;
  if (hNotificationEvent != nullptr) {
    if (ze_result_t r = lookup(hNotificationEvent, event); r != ZE_RESULT_SUCCESS) return r;
    // The driver signals it from the host and the program resets it: a
    // host-visible pool, and not counter-based (neither is allowed there).
    SIM_CHECK((event->pool->flags & ZE_EVENT_POOL_FLAG_HOST_VISIBLE) && !event->pool->counterBased,
              ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
  }
  SIM_CHECK(group->device == device.get(), ZE_RESULT_ERROR_INVALID_ARGUMENT);
  // Only the time-based group is streamed.
  SIM_CHECK(!group->queryBased, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  // The closest supported values, written back as the specification asks.
  const uint32_t period = std::clamp(desc->samplingPeriod, kMinSamplingPeriodNs, kMaxSamplingPeriodNs);
  const uint32_t notifyEvery = std::min(desc->notifyEveryNReports, kStreamerCapacity);
  auto streamer = std::make_shared<MetricStreamer>(device.get(), period, notifyEvery, std::move(event));
  {
    std::lock_guard lock(sync::mutex());
    // Streams use activated groups; the specification names no result for
    // one that is not, and Intel's driver answers ZE_RESULT_NOT_READY.
    if (!isActive(*context, group.get())) return ZE_RESULT_NOT_READY;
    if (device->streamer) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;  // one per device
    device->streamer = streamer;
    device->samplingPeriodNs.store(period, std::memory_order_release);
  }
  try {
    registerObject(streamer);
  } catch (...) {
    std::lock_guard lock(sync::mutex());
    device->streamer.reset();
    throw;
  }
  sampling::installHandler();
  device->sampling.store(streamer.get(), std::memory_order_seq_cst);
  desc->samplingPeriod = period;
  desc->notifyEveryNReports = notifyEvery;
  *phMetricStreamer = toHandle<zet_metric_streamer_handle_t>(streamer);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricStreamerClose(zet_metric_streamer_handle_t hMetricStreamer) {
  std::shared_ptr<MetricStreamer> streamer;
  if (ze_result_t r = take(hMetricStreamer, streamer); r != ZE_RESULT_SUCCESS) return r;
  Device* device = streamer->device;
  {
    std::lock_guard lock(sync::mutex());
    if (device->streamer == streamer) {
      device->sampling.store(nullptr, std::memory_order_seq_cst);
      device->streamer.reset();
    }
  }
  // After this no signal handler writes into the streamer ...
  sampling::waitForHandlers();
  // ... and no worker signals its notification event.
  std::lock_guard lock(streamer->notifyMutex);
  streamer->closed = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricStreamerReadData(zet_metric_streamer_handle_t hMetricStreamer, uint32_t maxReportCount,
                                      size_t* pRawDataSize, uint8_t* pRawData) {
  SIM_LOOKUP(streamer, MetricStreamer, hMetricStreamer);
  SIM_NOT_NULL(pRawDataSize);
  const uint64_t pending = streamer->ring.size();
  if (*pRawDataSize == 0 || pRawData == nullptr) {
    *pRawDataSize = size_t(pending * report::kSize);
    return ZE_RESULT_SUCCESS;
  }
  const uint64_t wanted = std::min<uint64_t>({maxReportCount, *pRawDataSize / report::kSize, pending});
  const uint64_t got = streamer->ring.pop(pRawData, wanted);
  *pRawDataSize = size_t(got * report::kSize);
  // Reports that did not fit were dropped: said once, by the next read.
  if (streamer->dropped.exchange(false, std::memory_order_relaxed)) return ZE_RESULT_WARNING_DROPPED_DATA;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricGroupCalculateMetricValues(zet_metric_group_handle_t hMetricGroup,
                                                zet_metric_group_calculation_type_t type, size_t rawDataSize,
                                                const uint8_t* pRawData, uint32_t* pMetricValueCount,
                                                zet_typed_value_t* pMetricValues) {
  SIM_LOOKUP(group, MetricGroup, hMetricGroup);
  SIM_CHECK(type <= ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_NOT_NULL(pRawData);
  SIM_NOT_NULL(pMetricValueCount);
  // A query's values are its counts, the same for both calculation types.
  if (group->queryBased)
    return calculateQueryValues(group->queryGroup, rawDataSize, pRawData, pMetricValueCount, pMetricValues);
  SIM_CHECK(rawDataSize % report::kSize == 0, ZE_RESULT_ERROR_INVALID_SIZE);
  // One row per instruction address, in ascending order: the address, then
  // each reason's count summed over the valid reports of that address. The
  // maximum values of instruction sampling are the same sums.
  std::map<uint64_t, std::array<uint64_t, kStallReasons>> rows;
  for (size_t off = 0; off < rawDataSize; off += report::kSize) {
    const uint8_t* r = pRawData + off;
    if (!(loadLe(r + report::kFlags, 4) & report::kValid)) continue;
    auto& row = rows[loadLe(r + report::kIp, 8)];
    for (uint32_t k = 0; k < kStallReasons; ++k) row[k] += loadLe(r + report::kCounts + 2 * k, 2);
  }
  const uint64_t needed64 = uint64_t(rows.size()) * kMetricCount;
  const uint32_t needed = needed64 > UINT32_MAX ? UINT32_MAX : uint32_t(needed64);
  if (*pMetricValueCount == 0 || pMetricValues == nullptr) {
    *pMetricValueCount = needed;
    return ZE_RESULT_SUCCESS;
  }
  const uint32_t n = std::min(*pMetricValueCount, needed);
  uint32_t written = 0;
  for (auto it = rows.begin(); it != rows.end() && written < n; ++it) {
    for (uint32_t k = 0; k < kMetricCount && written < n; ++k, ++written) {
      pMetricValues[written].type = ZET_VALUE_TYPE_UINT64;
      pMetricValues[written].value.ui64 = k == 0 ? it->first : it->second[k - 1];
    }
  }
  *pMetricValueCount = written;
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
