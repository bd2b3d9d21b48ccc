#include "counters.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "gtap/format/counter_request.h"
#include "log.h"
#include "real.h"
#include "session.h"

namespace gtap::ze {

namespace {

constexpr uint32_t kQueriesPerPool = 64;

schema::CounterType counterType(zet_value_type_t t) {
  switch (t) {
    case ZET_VALUE_TYPE_FLOAT32:
    case ZET_VALUE_TYPE_FLOAT64: return schema::CounterType::REAL;
    case ZET_VALUE_TYPE_BOOL8: return schema::CounterType::BOOLEAN;
    default: return schema::CounterType::UNSIGNED;
  }
}

// capture.capnp's CounterType bits of a calculated value.
uint64_t valueBits(const zet_typed_value_t& v) {
  switch (v.type) {
    case ZET_VALUE_TYPE_UINT32: return v.value.ui32;
    case ZET_VALUE_TYPE_UINT64: return v.value.ui64;
    case ZET_VALUE_TYPE_FLOAT32: {
      double d = v.value.fp32;
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return bits;
    }
    case ZET_VALUE_TYPE_FLOAT64: {
      uint64_t bits;
      std::memcpy(&bits, &v.value.fp64, sizeof bits);
      return bits;
    }
    case ZET_VALUE_TYPE_BOOL8: return v.value.b8 ? 1 : 0;
    default: return 0;
  }
}

std::string text(const char* s, size_t n) { return std::string(s, strnlen(s, n)); }

// The environment the runtime reads at zeInit: Intel's driver offers metric
// groups only with ZET_ENABLE_METRICS, and Sysman through the device handles
// only with ZES_ENABLE_SYSMAN. Set before the program can call zeInit, and
// only when asked for and not set already.
__attribute__((constructor(105))) void enableTools() {
  const char* counters = std::getenv("GTAP_COUNTERS");
  if (counters && *counters) setenv("ZET_ENABLE_METRICS", "1", 0);
  const char* interval = std::getenv("GTAP_METRICS_INTERVAL_MS");
  if (interval && *interval && std::strtoul(interval, nullptr, 10) > 0) setenv("ZES_ENABLE_SYSMAN", "1", 0);
}

}  // namespace

struct Counters::Impl {
  struct Device {
    uint32_t id = 0;
    ze_device_handle_t handle = nullptr;
    zet_metric_group_handle_t group = nullptr;
    uint32_t set = 0;
    uint32_t groupMetrics = 0;            // values per report
    std::vector<uint32_t> picked;         // the set's counters: their index in the group
  };
  struct Pool {
    ze_context_handle_t context = nullptr;
    ze_device_handle_t device = nullptr;
    std::vector<zet_metric_query_pool_handle_t> pools;
    std::vector<zet_metric_query_handle_t> all, free;
    bool activated = false, failed = false;
  };
  std::mutex mu;
  std::map<uint32_t, Device> devices;  // by gtap's device id
  std::map<uint32_t, Device*> bySet;
  std::vector<std::unique_ptr<Pool>> pools;
  std::map<zet_metric_query_handle_t, Pool*> owner;
  bool requestWritten = false, toldOn = false, toldNone = false;
};

Counters& Counters::get() {
  static Counters* c = new Counters();  // lives until the process ends
  return *c;
}

Counters::Counters() : impl_(new Impl) {}

bool Counters::on() { return !core::config().counters.empty() && core::recordKernels(); }

void Counters::deviceSeen(ze_device_handle_t device, uint32_t deviceId,
                          std::vector<core::profile::CounterSetRecord>& sets,
                          std::vector<core::profile::CounterNoteRecord>& notes, std::string& requested) {
  if (!on() || !device || deviceId == ~0u) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->devices.count(deviceId)) return;
    impl_->devices[deviceId].id = deviceId;
    if (!impl_->requestWritten) {
      impl_->requestWritten = true;
      requested = core::config().counters;
    }
  }
  const core::Config& cfg = core::config();
  // What the device offers, through the runtime's own functions (gtap's
  // calls are not the program's).
  struct GroupInfo {
    zet_metric_group_handle_t handle;
    std::string name;
    bool eventBased;
    std::vector<zet_metric_properties_t> metrics;
  };
  std::vector<GroupInfo> groups;
  std::vector<format::OfferedCounter> offered;
  std::vector<std::pair<uint32_t, uint32_t>> where;  // offered index -> (group, metric)
  uint32_t n = 0;
  if (GTAP_ZE_REAL(zetMetricGroupGet)(device, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
    std::vector<zet_metric_group_handle_t> handles(n);
    if (GTAP_ZE_REAL(zetMetricGroupGet)(device, &n, handles.data()) != ZE_RESULT_SUCCESS) n = 0;
    for (uint32_t g = 0; g < n && g < handles.size(); ++g) {
      zet_metric_group_properties_t gp{};
      gp.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
      if (GTAP_ZE_REAL(zetMetricGroupGetProperties)(handles[g], &gp) != ZE_RESULT_SUCCESS) continue;
      uint32_t m = 0;
      if (GTAP_ZE_REAL(zetMetricGet)(handles[g], &m, nullptr) != ZE_RESULT_SUCCESS) continue;
      std::vector<zet_metric_handle_t> metrics(m);
      if (m && GTAP_ZE_REAL(zetMetricGet)(handles[g], &m, metrics.data()) != ZE_RESULT_SUCCESS) continue;
      GroupInfo info{handles[g], text(gp.name, sizeof gp.name),
                     (gp.samplingType & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED) != 0,
                     {}};
      for (uint32_t i = 0; i < m && i < metrics.size(); ++i) {
        zet_metric_properties_t mp{};
        mp.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES;
        if (GTAP_ZE_REAL(zetMetricGetProperties)(metrics[i], &mp) != ZE_RESULT_SUCCESS) break;
        info.metrics.push_back(mp);
      }
      if (info.metrics.size() != m) continue;  // values could not be matched to names
      uint32_t gi = static_cast<uint32_t>(groups.size());
      // Only groups measured by queries are offered, as `gtap run` and
      // `gtap bench` plan them (a time-based group is sampled, not
      // measured per dispatch).
      for (uint32_t i = 0; i < m && info.eventBased; ++i) {
        // One group per pass, as `gtap run` and `gtap bench` plan them.
        offered.push_back({info.name, text(info.metrics[i].name, sizeof info.metrics[i].name), true, 0});
        where.emplace_back(gi, i);
      }
      groups.push_back(std::move(info));
    }
  }
  format::CounterPlan plan = format::planCounters(cfg.counters, offered);
  for (const std::string& name : plan.unknown) {
    std::string reason = "not offered by the device";
    for (const GroupInfo& g : groups) {
      if (g.eventBased) continue;
      bool in = g.name == name;
      for (const auto& mp : g.metrics) in |= text(mp.name, sizeof mp.name) == name;
      if (in) {
        reason = "not offered per dispatch by the device (only by its time-based group " + g.name + ")";
        break;
      }
    }
    notes.push_back({name, deviceId, reason, 0});
  }
  uint32_t passes = static_cast<uint32_t>(plan.passes.size());
  for (uint32_t p = 0; p < passes; ++p) {
    if (p == cfg.counterPass) continue;
    std::string reason = "needs another pass (" + std::to_string(p + 1) + " of " + std::to_string(passes) + ")";
    for (const auto& c : plan.passes[p]) notes.push_back({c.name, deviceId, reason, p});
  }
  if (cfg.counterPass >= passes) {
    if (passes && !cfg.quiet)
      core::logLine("counters: device %u: GTAP_COUNTER_PASS=%u, but the request has %u pass%s; nothing is measured",
                    deviceId, cfg.counterPass, passes, passes == 1 ? "" : "es");
    return;
  }
  const auto& pass = plan.passes[cfg.counterPass];
  const GroupInfo& group = groups[where[pass.front().offered].first];
  core::profile::CounterSetRecord set;
  set.id = core::profile::nextCounterSetId();
  set.device = deviceId;
  set.source = "levelZeroMetricQuery";
  set.group = group.name;
  set.pass = cfg.counterPass;
  set.passes = passes;
  Impl::Device d;
  d.id = deviceId;
  d.handle = device;
  d.group = group.handle;
  d.set = set.id;
  d.groupMetrics = static_cast<uint32_t>(group.metrics.size());
  for (const auto& c : pass) {
    uint32_t mi = where[c.offered].second;
    const zet_metric_properties_t& mp = group.metrics[mi];
    d.picked.push_back(mi);
    set.counters.push_back({text(mp.name, sizeof mp.name), text(mp.description, sizeof mp.description),
                            text(mp.resultUnits, sizeof mp.resultUnits), "", counterType(mp.resultType)});
  }
  sets.push_back(std::move(set));
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Device& at = impl_->devices[deviceId];
  at = std::move(d);
  impl_->bySet[at.set] = &at;
  if (!impl_->toldOn && !cfg.quiet) {
    impl_->toldOn = true;
    core::logLine("counters on (%s): the dispatches gtap measures run one at a time", group.name.c_str());
  }
}

void Counters::devicesDone() {
  if (!on()) return;
  const core::Config& cfg = core::config();
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->toldNone || impl_->devices.empty()) return;
  for (const auto& [id, d] : impl_->devices)
    if (d.set) return;
  impl_->toldNone = true;
  if (!cfg.countersOptional)
    core::logLine("counters: no Level Zero device measures any of %s per dispatch (gtap counters --list shows "
                  "what they offer); nothing is measured",
                  cfg.counters.c_str());
}

uint32_t Counters::setOf(uint32_t deviceId) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->devices.find(deviceId);
  return it == impl_->devices.end() ? 0 : it->second.set;
}

zet_metric_query_handle_t Counters::takeQuery(ze_context_handle_t context, ze_device_handle_t device,
                                              uint32_t deviceId) {
  Impl::Pool* pool = nullptr;
  zet_metric_group_handle_t group = nullptr;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->devices.find(deviceId);
    if (it == impl_->devices.end() || !it->second.set) return nullptr;
    group = it->second.group;
    for (auto& p : impl_->pools)
      if (p->context == context && p->device == device) pool = p.get();
    if (!pool) {
      impl_->pools.push_back(std::make_unique<Impl::Pool>());
      pool = impl_->pools.back().get();
      pool->context = context;
      pool->device = device;
    }
    if (pool->failed) return nullptr;
    if (!pool->free.empty()) {
      zet_metric_query_handle_t q = pool->free.back();
      pool->free.pop_back();
      return q;
    }
  }
  // None free: the group activated (once) and a pool more, made without the
  // lock. Two threads may both make one; both are kept.
  bool activate = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    activate = !pool->activated;
    pool->activated = true;
  }
  if (activate) {
    ze_result_t r = GTAP_ZE_REAL(zetContextActivateMetricGroups)(context, device, 1, &group);
    if (r != ZE_RESULT_SUCCESS) {
      std::lock_guard<std::mutex> lock(impl_->mu);
      pool->failed = true;
      if (!core::config().quiet)
        core::logLine("counters: device %u: zetContextActivateMetricGroups failed (0x%x); its dispatches are not "
                      "measured",
                      deviceId, static_cast<uint32_t>(r));
      return nullptr;
    }
  }
  zet_metric_query_pool_desc_t desc{};
  desc.stype = ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC;
  desc.type = ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE;
  desc.count = kQueriesPerPool;
  zet_metric_query_pool_handle_t made = nullptr;
  ze_result_t r = GTAP_ZE_REAL(zetMetricQueryPoolCreate)(context, device, group, &desc, &made);
  if (r != ZE_RESULT_SUCCESS) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!pool->failed && !core::config().quiet)
      core::logLine("counters: device %u: zetMetricQueryPoolCreate failed (0x%x); its dispatches are not measured",
                    deviceId, static_cast<uint32_t>(r));
    pool->failed = true;
    return nullptr;
  }
  std::vector<zet_metric_query_handle_t> queries;
  for (uint32_t i = 0; i < kQueriesPerPool; ++i) {
    zet_metric_query_handle_t q = nullptr;
    if (GTAP_ZE_REAL(zetMetricQueryCreate)(made, i, &q) == ZE_RESULT_SUCCESS) queries.push_back(q);
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  pool->pools.push_back(made);
  if (queries.empty()) return nullptr;
  for (auto q : queries) impl_->owner[q] = pool;
  pool->all.insert(pool->all.end(), queries.begin(), queries.end());
  zet_metric_query_handle_t q = queries.back();
  queries.pop_back();
  pool->free.insert(pool->free.end(), queries.begin(), queries.end());
  return q;
}

// Only a query of a context still alive: a destroyed context's went with it.
void Counters::reset(zet_metric_query_handle_t query) {
  if (!query) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->owner.count(query)) return;
  }
  GTAP_ZE_REAL(zetMetricQueryReset)(query);
}

void Counters::giveQuery(zet_metric_query_handle_t query) {
  if (!query) return;
  reset(query);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->owner.find(query);
  if (it != impl_->owner.end()) it->second->free.push_back(query);
}

int Counters::read(zet_metric_query_handle_t query, std::vector<uint8_t>& raw) {
  size_t size = 0;
  if (GTAP_ZE_REAL(zetMetricQueryGetData)(query, &size, nullptr) != ZE_RESULT_SUCCESS || size == 0) return -1;
  raw.resize(size);
  ze_result_t r = GTAP_ZE_REAL(zetMetricQueryGetData)(query, &size, raw.data());
  if (r == ZE_RESULT_NOT_READY) {
    raw.clear();
    return 0;
  }
  if (r != ZE_RESULT_SUCCESS || size == 0) {
    raw.clear();
    return -1;
  }
  raw.resize(std::min(size, raw.size()));
  return 1;
}

void Counters::calculate(core::profile::OpRecord& r) {
  if (!r.counterSet || r.counterRaw.empty() || !r.counterValues.empty()) return;
  zet_metric_group_handle_t group = nullptr;
  uint32_t groupMetrics = 0;
  std::vector<uint32_t> picked;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->bySet.find(r.counterSet);
    if (it == impl_->bySet.end()) return;
    group = it->second->group;
    groupMetrics = it->second->groupMetrics;
    picked = it->second->picked;
  }
  auto calc = GTAP_ZE_REAL(zetMetricGroupCalculateMetricValues);
  uint32_t count = 0;
  if (calc(group, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, r.counterRaw.size(), r.counterRaw.data(), &count,
           nullptr) != ZE_RESULT_SUCCESS ||
      count < groupMetrics) {
    r.note = "the runtime could not calculate its counter values from the raw data";
    return;
  }
  std::vector<zet_typed_value_t> values(count);
  if (calc(group, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, r.counterRaw.size(), r.counterRaw.data(), &count,
           values.data()) != ZE_RESULT_SUCCESS ||
      count < groupMetrics) {
    r.note = "the runtime could not calculate its counter values from the raw data";
    return;
  }
  // One report per query: its first row.
  for (uint32_t i : picked) r.counterValues.push_back(valueBits(values[i]));
}

void Counters::contextDestroying(ze_context_handle_t context) {
  std::vector<std::unique_ptr<Impl::Pool>> gone;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (auto it = impl_->pools.begin(); it != impl_->pools.end();) {
      if ((*it)->context == context) {
        for (auto q : (*it)->all) impl_->owner.erase(q);
        gone.push_back(std::move(*it));
        it = impl_->pools.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& p : gone) {
    for (auto q : p->all) GTAP_ZE_REAL(zetMetricQueryDestroy)(q);
    for (auto pool : p->pools) GTAP_ZE_REAL(zetMetricQueryPoolDestroy)(pool);
  }
}

}  // namespace gtap::ze
