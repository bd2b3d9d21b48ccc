// Hardware counters around HSA dispatches through AMD's AQL profile
// extension, and device metrics through ROCm SMI (docs/interception.md,
// "Counters"). The pass this run collects is planned per GPU agent when the
// runtime loads; each dispatch gtap measures gets a profile's start packet
// before it and its stop packet after it, all three with the barrier bit, and
// its values are read with the completion times (consume).
#include "tracker_impl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gtap/format/aql_counters.h"
#include "gtap/format/counter_request.h"
#include "clock.h"
#include "log.h"
#include "session.h"

namespace gtap::hsa {

namespace {

bool quiet() { return core::config().quiet; }

// A fine-grained pool of system memory (a CPU agent's), which every agent can
// be given access to: the profile buffers the packet processor reads and
// writes, and the host reads back.
hsa_amd_memory_pool_t systemPool(const std::vector<DeviceInfo>& devices) {
  struct Found {
    hsa_amd_memory_pool_t pool{};
  } found;
  for (const DeviceInfo& d : devices) {
    if (d.gpu || found.pool.handle) continue;
    GTAP_HSA_CALL(
        hsa_amd_agent_iterate_memory_pools, d.agent,
        [](hsa_amd_memory_pool_t p, void* v) {
          hsa_amd_segment_t segment{};
          uint32_t flags = 0;
          if (GTAP_HSA_CALL(hsa_amd_memory_pool_get_info, p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment) !=
                  HSA_STATUS_SUCCESS ||
              segment != HSA_AMD_SEGMENT_GLOBAL)
            return HSA_STATUS_SUCCESS;
          if (GTAP_HSA_CALL(hsa_amd_memory_pool_get_info, p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags) !=
                  HSA_STATUS_SUCCESS ||
              !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED))
            return HSA_STATUS_SUCCESS;
          static_cast<Found*>(v)->pool = p;
          return HSA_STATUS_INFO_BREAK;
        },
        &found);
  }
  return found.pool;
}

uint32_t roundUp(uint32_t n) { return (n + 255u) & ~255u; }

}  // namespace

void Tracker::Impl::setUpCountersLocked() {
  const core::Config& cfg = core::config();
  if (cfg.counters.empty() || !recordKernels()) return;
  if (!counterDevices.empty()) {
    // The runtime started again (hsa_shut_down, then hsa_init): the plan
    // stands, but the extension's table and the pool are the new runtime's.
    aql = {};
    GTAP_HSA_CALL(hsa_system_get_major_extension_table, uint16_t{HSA_EXTENSION_AMD_AQLPROFILE}, uint16_t{1},
                  sizeof aql, &aql);
    hostPool = systemPool(devices);
    if (!aql.hsa_ven_amd_aqlprofile_start || !aql.hsa_ven_amd_aqlprofile_iterate_data || !hostPool.handle)
      for (CounterDevice& cd : counterDevices) cd.measure = false;
    return;
  }
  counterDevices.resize(devices.size());
  out.countersRequested = cfg.counters;
  bool haveTable = GTAP_HSA_CALL(hsa_system_get_major_extension_table, uint16_t{HSA_EXTENSION_AMD_AQLPROFILE}, uint16_t{1}, sizeof aql,
                                 &aql) == HSA_STATUS_SUCCESS &&
                   aql.hsa_ven_amd_aqlprofile_validate_event && aql.hsa_ven_amd_aqlprofile_get_info &&
                   aql.hsa_ven_amd_aqlprofile_start && aql.hsa_ven_amd_aqlprofile_stop &&
                   aql.hsa_ven_amd_aqlprofile_iterate_data;
  hostPool = systemPool(devices);
  bool measuring = false;
  for (const DeviceInfo& d : devices) {
    if (!d.gpu || !core::deviceIndexWanted(d.gpuIndex)) continue;
    auto noteAll = [&](const std::vector<std::string>& names, const std::string& reason, uint32_t pass) {
      for (const auto& n : names) out.counterNotes.push_back({n, d.id, reason, pass});
    };
    if (!haveTable) {
      noteAll(format::splitCounterList(cfg.counters),
              "the HSA runtime has no AQL profile extension (HSA_EXTENSION_AMD_AQLPROFILE)", 0);
      continue;
    }
    // What the agent offers of the counters gtap knows, as the launcher and
    // `gtap counters --list` see it.
    std::vector<format::OfferedCounter> offered;
    std::vector<const format::AqlCounter*> known;
    for (const format::AqlCounter& c : format::kAqlCounters) {
      hsa_ven_amd_aqlprofile_event_t event{static_cast<hsa_ven_amd_aqlprofile_block_name_t>(c.block), 0, c.eventId};
      bool valid = false;
      if (aql.hsa_ven_amd_aqlprofile_validate_event(d.agent, &event, &valid) != HSA_STATUS_SUCCESS || !valid) continue;
      hsa_ven_amd_aqlprofile_profile_t profile{};
      profile.agent = d.agent;
      profile.type = HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC;
      profile.events = &event;
      profile.event_count = 1;
      uint32_t perPass = 0;
      if (aql.hsa_ven_amd_aqlprofile_get_info(&profile, HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS, &perPass) !=
          HSA_STATUS_SUCCESS)
        perPass = 1;
      offered.push_back({std::string(format::aqlBlockName(c.block)), c.name, false, perPass});
      known.push_back(&c);
    }
    format::CounterPlan plan = format::planCounters(cfg.counters, offered);
    const auto passes = static_cast<uint32_t>(plan.passes.size());
    noteAll(plan.unknown, "not offered by the device", 0);
    for (uint32_t p = 0; p < passes; ++p) {
      if (p == cfg.counterPass) continue;
      std::string reason = "needs another pass (" + std::to_string(p + 1) + " of " + std::to_string(passes) + ")";
      for (const auto& c : plan.passes[p]) out.counterNotes.push_back({c.name, d.id, reason, p});
    }
    if (cfg.counterPass >= passes) continue;
    CounterDevice& cd = counterDevices[d.id];
    core::profile::CounterSetRecord set;
    set.id = core::profile::nextCounterSetId();
    set.device = d.id;
    set.source = "hsaAqlProfile";
    set.pass = cfg.counterPass;
    set.passes = passes;
    for (const auto& c : plan.passes[cfg.counterPass]) {
      const format::AqlCounter& k = *known[c.offered];
      core::profile::CounterDefRecord def;
      def.name = k.name;
      def.description = k.description;
      def.block = c.group;
      def.type = schema::CounterType::UNSIGNED;
      set.counters.push_back(std::move(def));
      cd.events.push_back({static_cast<hsa_ven_amd_aqlprofile_block_name_t>(k.block), 0, k.eventId});
    }
    hsa_ven_amd_aqlprofile_profile_t profile{};
    profile.agent = d.agent;
    profile.type = HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC;
    profile.events = cd.events.data();
    profile.event_count = static_cast<uint32_t>(cd.events.size());
    if (aql.hsa_ven_amd_aqlprofile_get_info(&profile, HSA_VEN_AMD_AQLPROFILE_INFO_COMMAND_BUFFER_SIZE,
                                            &cd.commandBytes) != HSA_STATUS_SUCCESS ||
        aql.hsa_ven_amd_aqlprofile_get_info(&profile, HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA_SIZE, &cd.outputBytes) !=
            HSA_STATUS_SUCCESS ||
        !hostPool.handle) {
      for (const auto& def : set.counters)
        out.counterNotes.push_back({def.name, d.id,
                                    hostPool.handle ? "the AQL profile extension gave no buffer sizes for the profile"
                                                    : "no system memory pool for the profile's buffers",
                                    cfg.counterPass});
      cd.events.clear();
      continue;
    }
    cd.set = set.id;
    cd.measure = true;
    measuring = true;
    out.counterSets.push_back(std::move(set));
  }
  if (measuring && !quiet())
    core::logLine("counters on for HSA agents (AQL profile): each measured dispatch runs alone, one at a time");
  if (measuring) startCounterReaderLocked();
}

void Tracker::Impl::startCounterReaderLocked() {
  if (counterReader) return;
  counterReader = true;
  std::thread([this] {
    // The program's signals are for its own threads.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard<std::mutex> lock(mu);
      // Not once the runtime is gone or the process is exiting (its exit
      // work read what completed; the runtime may be torn down after).
      if (!loaded.load(std::memory_order_acquire)) continue;
      for (auto& [handle, q] : queues)
        if (q->measures) consume(*q, false);
    }
  }).detach();
}

bool Tracker::Impl::armQueueCounters(QueueInfo& q) {
  if (q.device >= counterDevices.size() || !counterDevices[q.device].measure) return false;
  const CounterDevice& cd = counterDevices[q.device];
  const uint32_t cmd = roundUp(cd.commandBytes), outBytes = roundUp(cd.outputBytes);
  const size_t bytes = static_cast<size_t>(cmd + outBytes) * q.capacity;
  void* memory = nullptr;
  if (GTAP_HSA_CALL(hsa_amd_memory_pool_allocate, hostPool, bytes, 0, &memory) != HSA_STATUS_SUCCESS || !memory)
    return false;
  hsa_agent_t agent = q.agent;
  GTAP_HSA_CALL(hsa_amd_agents_allow_access, 1, &agent, nullptr, memory);
  std::memset(memory, 0, bytes);
  auto* base = static_cast<uint8_t*>(memory);
  for (uint64_t i = 0; i < q.capacity; ++i) {
    PacketSlot& slot = q.slots[i];
    if (!slot.stopped.handle) slot.stopped = newPacketSignal();
    if (!slot.stopped.handle) return false;  // the profiles made so far are never used
    slot.profile.agent = agent;
    slot.profile.type = HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC;
    slot.profile.events = cd.events.data();
    slot.profile.event_count = static_cast<uint32_t>(cd.events.size());
    slot.profile.command_buffer = {base + i * (cmd + outBytes), cd.commandBytes};
    slot.profile.output_buffer = {base + i * (cmd + outBytes) + cmd, cd.outputBytes};
  }
  return true;
}

bool Tracker::Impl::readCounters(PacketSlot& slot, std::vector<uint64_t>& values, const char*& note) {
  values.assign(slot.profile.event_count, 0);
  struct Read {
    const hsa_ven_amd_aqlprofile_profile_t* profile;
    std::vector<uint64_t>* values;
  } read{&slot.profile, &values};
  // Each instance of a block (shader engines, cache channels) reports its
  // own sample: an event's value is their sum.
  hsa_status_t s = aql.hsa_ven_amd_aqlprofile_iterate_data(
      &slot.profile,
      [](hsa_ven_amd_aqlprofile_info_type_t type, hsa_ven_amd_aqlprofile_info_data_t* data, void* v) {
        if (type != HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA) return HSA_STATUS_SUCCESS;
        auto* r = static_cast<Read*>(v);
        for (uint32_t i = 0; i < r->profile->event_count; ++i) {
          const hsa_ven_amd_aqlprofile_event_t& e = r->profile->events[i];
          if (e.block_name == data->pmc_data.event.block_name && e.counter_id == data->pmc_data.event.counter_id) {
            (*r->values)[i] += data->pmc_data.result;
            break;
          }
        }
        return HSA_STATUS_SUCCESS;
      },
      &read);
  if (s != HSA_STATUS_SUCCESS) {
    note = "the AQL profile extension could not read the dispatch's counters";
    return false;
  }
  return true;
}

// --- device metrics: ROCm SMI --------------------------------------------------------

namespace {

// ROCm SMI's C interface (rocm_smi.h), opened at run time: never linked, so
// gtap runs where it is not installed. Only what gtap calls, as the library
// declares it.
using RsmiStatus = int;
struct Rsmi {
  RsmiStatus (*init)(uint64_t) = nullptr;
  RsmiStatus (*numDevices)(uint32_t*) = nullptr;
  RsmiStatus (*pciId)(uint32_t, uint64_t*) = nullptr;
  RsmiStatus (*clock)(uint32_t, int, void*) = nullptr;           // rsmi_dev_gpu_clk_freq_get
  RsmiStatus (*power)(uint32_t, uint32_t, uint64_t*) = nullptr;  // rsmi_dev_power_ave_get: µW
  RsmiStatus (*temperature)(uint32_t, uint32_t, int, int64_t*) = nullptr;  // rsmi_dev_temp_metric_get: m°C
  RsmiStatus (*memoryUsed)(uint32_t, int, uint64_t*) = nullptr;            // rsmi_dev_memory_usage_get: bytes
  RsmiStatus (*busy)(uint32_t, uint32_t*) = nullptr;                       // rsmi_dev_busy_percent_get
  struct Version {
    uint32_t major, minor, patch;
    const char* build;
  };
  RsmiStatus (*version)(Version*) = nullptr;
};

// The frequencies rsmi_dev_gpu_clk_freq_get fills: from version 6 on, a bool
// (has_deep_sleep) comes before the counts.
struct RsmiFrequencies {
  uint8_t bytes[16 + 33 * 8];
};

bool loadRsmi(Rsmi& r, std::string& why) {
  void* lib = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("librocm_smi64.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "ROCm SMI (librocm_smi64.so.1) is not installed";
    return false;
  }
  auto sym = [&](auto& f, const char* name) { f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, name)); };
  sym(r.init, "rsmi_init");
  sym(r.numDevices, "rsmi_num_monitor_devices");
  sym(r.pciId, "rsmi_dev_pci_id_get");
  sym(r.clock, "rsmi_dev_gpu_clk_freq_get");
  sym(r.power, "rsmi_dev_power_ave_get");
  sym(r.temperature, "rsmi_dev_temp_metric_get");
  sym(r.memoryUsed, "rsmi_dev_memory_usage_get");
  sym(r.busy, "rsmi_dev_busy_percent_get");
  sym(r.version, "rsmi_version_get");
  if (!r.init || !r.numDevices || !r.pciId) {
    why = "ROCm SMI lacks rsmi_init, rsmi_num_monitor_devices or rsmi_dev_pci_id_get";
    return false;
  }
  return true;
}

// One sampled device: its SMI index and what is gathered since the last flush.
struct SmiDevice {
  uint32_t device = 0, smi = 0;
  core::profile::DeviceMetricsRecord pending;
};

struct Sampler {
  Rsmi rsmi;
  bool deepSleepField = false;
  std::mutex mu;
  std::vector<SmiDevice> devices;
  uint64_t intervalNs = 0;
};
Sampler* g_sampler = nullptr;  // lives until the process ends

const std::vector<core::profile::DeviceMetricsRecord::Metric> kSmiMetrics = {
    {"frequency actual", "MHz", false}, {"power", "W", false},   {"temperature", "C", false},
    {"memory used", "bytes", false},    {"busy", "percent", false},
};

void sampleOnce(Sampler& s) {
  const int64_t now = core::monotonicNs();
  std::lock_guard<std::mutex> lock(s.mu);
  for (SmiDevice& d : s.devices) {
    const uint32_t i = d.smi;
    // NaN: not read (the device or the library does not say).
    const double none = std::numeric_limits<double>::quiet_NaN();
    double freq = none, watts = none, celsius = none, used = none, busy = none;
    RsmiFrequencies f{};
    if (s.rsmi.clock && s.rsmi.clock(i, 0 /* RSMI_CLK_TYPE_SYS */, &f) == 0) {
      const size_t at = s.deepSleepField ? 4 : 0;  // num_supported, current, frequency[]
      uint32_t supported = 0, current = 0;
      std::memcpy(&supported, f.bytes + at, 4);
      std::memcpy(&current, f.bytes + at + 4, 4);
      uint64_t hz = 0;
      if (current < supported && current < 33) std::memcpy(&hz, f.bytes + at + 8 + 8 * current, 8);
      if (hz) freq = static_cast<double>(hz) / 1e6;
    }
    uint64_t uw = 0;
    if (s.rsmi.power && s.rsmi.power(i, 0, &uw) == 0) watts = static_cast<double>(uw) / 1e6;
    int64_t mc = 0;
    if (s.rsmi.temperature && s.rsmi.temperature(i, 0 /* edge */, 0 /* current */, &mc) == 0)
      celsius = static_cast<double>(mc) / 1000;
    uint64_t bytes = 0;
    if (s.rsmi.memoryUsed && s.rsmi.memoryUsed(i, 0 /* VRAM */, &bytes) == 0) used = static_cast<double>(bytes);
    uint32_t pct = 0;
    if (s.rsmi.busy && s.rsmi.busy(i, &pct) == 0) busy = pct;
    d.pending.times.push_back(now);
    for (double v : {freq, watts, celsius, used, busy}) d.pending.values.push_back(v);
  }
}

}  // namespace

void Tracker::Impl::startDeviceMetricsLocked() {
  const core::Config& cfg = core::config();
  if (!cfg.metricsIntervalMs || g_sampler) return;
  std::vector<const DeviceInfo*> gpus;
  for (const DeviceInfo& d : devices)
    if (d.gpu && core::deviceIndexWanted(d.gpuIndex)) gpus.push_back(&d);
  if (gpus.empty()) return;
  auto sampler = std::make_unique<Sampler>();
  sampler->intervalNs = uint64_t{cfg.metricsIntervalMs} * 1'000'000;
  std::string why;
  bool ok = loadRsmi(sampler->rsmi, why);
  uint32_t count = 0;
  if (ok && (sampler->rsmi.init(0) != 0 || sampler->rsmi.numDevices(&count) != 0 || count == 0)) {
    why = "ROCm SMI sees no device";
    ok = false;
  }
  if (ok) {
    Rsmi::Version v{};
    if (sampler->rsmi.version && sampler->rsmi.version(&v) == 0) sampler->deepSleepField = v.major >= 6;
    // The agents ROCm SMI sees, matched by PCI location (bus, device,
    // function): what the runtime says of each agent against SMI's ids.
    for (const DeviceInfo* d : gpus) {
      uint32_t bdf = 0;
      if (GTAP_HSA_CALL(hsa_agent_get_info, d->agent, amdAgentInfo(HSA_AMD_AGENT_INFO_BDFID), &bdf) !=
          HSA_STATUS_SUCCESS)
        continue;
      for (uint32_t i = 0; i < count; ++i) {
        uint64_t id = 0;
        if (sampler->rsmi.pciId(i, &id) != 0 || (id & 0xffff) != (bdf & 0xffff)) continue;
        SmiDevice& s = sampler->devices.emplace_back();
        s.device = d->id;
        s.smi = i;
        s.pending.device = d->id;
        s.pending.source = "rocmSmi";
        s.pending.intervalNs = sampler->intervalNs;
        s.pending.metrics = kSmiMetrics;
        break;
      }
    }
    if (sampler->devices.empty()) {
      why = "ROCm SMI sees none of the HSA agents (by PCI location)";
      ok = false;
    }
  }
  if (!ok) {
    if (!quiet()) core::logLine("no device metrics for HSA agents: %s", why.c_str());
    for (const DeviceInfo* d : gpus) {
      core::profile::DeviceMetricsRecord r;
      r.device = d->id;
      r.source = "rocmSmi";
      r.intervalNs = uint64_t{cfg.metricsIntervalMs} * 1'000'000;
      r.note = "no device metrics: " + why;
      out.deviceMetrics.push_back(std::move(r));
    }
    return;
  }
  g_sampler = sampler.release();
  std::thread([s = g_sampler] {
    // The program's signals are for its own threads.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    for (;;) {
      sampleOnce(*s);
      std::this_thread::sleep_for(std::chrono::nanoseconds(s->intervalNs));
    }
  }).detach();
}

void takeDeviceMetrics(core::profile::Outbox& out) {
  Sampler* s = g_sampler;
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  for (SmiDevice& d : s->devices) {
    if (d.pending.times.empty()) continue;
    out.deviceMetrics.push_back(d.pending);
    d.pending.times.clear();
    d.pending.values.clear();
  }
}

}  // namespace gtap::hsa
