#include "tracker.h"

#include "tracker_impl.h"

#include <atomic>
#include <bit>
#include <string>
#include <type_traits>
#include <vector>

#include "chunk_producer.h"
#include "clock.h"
#include "log.h"
#include "replay_stream.h"
#include "session.h"

namespace gtap::hsa {

Tracker& Tracker::get() {
  static Tracker* t = new Tracker();  // lives until the process ends
  return *t;
}

Tracker::Tracker() : impl_(std::make_unique<Impl>()) { impl_->stackDepth = core::config().stackDepth; }

// --- agents, pools and the clock ---------------------------------------------

// The system-domain clock (what the profiling queries return) against gtap's
// host clock: the tightest of a few brackets.
void Tracker::Impl::sampleClockLocked(DeviceInfo& d) {
  int64_t bestWidth = INT64_MAX, bestNs = 0;
  uint64_t bestTicks = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    uint64_t ts = 0;
    int64_t before = core::monotonicNs();
    if (GTAP_HSA_CALL(hsa_system_get_info, HSA_SYSTEM_INFO_TIMESTAMP, &ts) != HSA_STATUS_SUCCESS) return;
    int64_t after = core::monotonicNs();
    if (after - before < bestWidth) {
      bestWidth = after - before;
      bestNs = before + (after - before) / 2;
      bestTicks = ts;
    }
  }
  d.lastSampleNs = bestNs;
  out.samples.push_back({d.id, bestNs, bestTicks});
}

void Tracker::runtimeLoaded() {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  m.loaded.store(true);
  m.canTime = GTAP_HSA_REAL(hsa_amd_queue_intercept_create) && GTAP_HSA_REAL(hsa_amd_queue_intercept_register) &&
              GTAP_HSA_REAL(hsa_signal_create) && GTAP_HSA_REAL(hsa_amd_signal_async_handler) &&
              GTAP_HSA_REAL(hsa_signal_load_relaxed) && GTAP_HSA_REAL(hsa_signal_store_relaxed) &&
              GTAP_HSA_REAL(hsa_signal_store_screlease) && GTAP_HSA_REAL(hsa_signal_subtract_screlease) &&
              GTAP_HSA_REAL(hsa_amd_profiling_get_dispatch_time) &&
              GTAP_HSA_REAL(hsa_amd_profiling_get_async_copy_time) &&
              GTAP_HSA_REAL(hsa_amd_profiling_set_profiler_enabled);
  if (!m.canTime && recordKernels())
    core::logLine("the HSA runtime lacks entries gtap needs to see packets and time them; HSA device work is not recorded");
  uint64_t frequency = 0;
  if (GTAP_HSA_CALL(hsa_system_get_info, HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency) == HSA_STATUS_SUCCESS &&
      frequency)
    m.timestampFrequency = frequency;
  if (m.devices.empty()) {
    // Agents in the runtime's order; GPUs become devices (ids per file).
    std::vector<hsa_agent_t> agents;
    uint32_t gpus = 0;
    GTAP_HSA_CALL(hsa_iterate_agents, 
        [](hsa_agent_t a, void* v) {
          static_cast<std::vector<hsa_agent_t>*>(v)->push_back(a);
          return HSA_STATUS_SUCCESS;
        },
        &agents);
    for (hsa_agent_t agent : agents) {
      hsa_device_type_t type{};
      GTAP_HSA_CALL(hsa_agent_get_info, agent, HSA_AGENT_INFO_DEVICE, &type);
      DeviceInfo d;
      d.agent = agent;
      d.gpu = type == HSA_DEVICE_TYPE_GPU;
      d.id = static_cast<uint32_t>(m.devices.size());
      if (d.gpu) d.gpuIndex = gpus++;
      core::profile::DeviceRecord r;
      r.id = d.id;
      r.api = schema::Api::HSA;
      r.handle = agent.handle;
      std::string product = agentString(agent, amdAgentInfo(HSA_AMD_AGENT_INFO_PRODUCT_NAME), 64);
      std::string name = agentString(agent, HSA_AGENT_INFO_NAME, 64);
      r.name = product.empty() ? name : product + " (" + name + ")";
      std::string vendor = agentString(agent, HSA_AGENT_INFO_VENDOR_NAME, 64);
      r.vendorId = vendor == "AMD" ? 0x1002 : 0;
      uint32_t chip = 0;
      if (GTAP_HSA_CALL(hsa_agent_get_info, agent, amdAgentInfo(HSA_AMD_AGENT_INFO_CHIP_ID), &chip) ==
          HSA_STATUS_SUCCESS)
        r.deviceId = chip;
      std::string uuid = agentString(agent, amdAgentInfo(HSA_AMD_AGENT_INFO_UUID), 21);
      r.uuid.assign(uuid.begin(), uuid.end());
      // Device times are read through the profiling API, which returns them in
      // the system domain: the device's "ticks" are system timestamps.
      r.frequency = m.timestampFrequency;
      r.kernelBits = 64;
      r.globalBits = 64;
      m.deviceOfAgent[agent.handle] = d.id;
      if (d.gpu) m.sampleClockLocked(d);
      m.devices.push_back(d);
      if (d.gpu) m.out.devices.push_back(std::move(r));
    }
    // Pools and regions by owner, for the kind of what is allocated from them.
    struct Owner {
      Impl* impl;
      std::pair<schema::MemoryKind, uint32_t> kind;
    };
    for (const DeviceInfo& d : m.devices) {
      Owner owner{&m, {d.gpu ? schema::MemoryKind::DEVICE : schema::MemoryKind::HOST, d.gpu ? d.id : kNoDevice}};
      GTAP_HSA_CALL(hsa_amd_agent_iterate_memory_pools, 
          d.agent,
          [](hsa_amd_memory_pool_t p, void* v) {
            auto* o = static_cast<Owner*>(v);
            o->impl->pools.emplace(p.handle, o->kind);
            return HSA_STATUS_SUCCESS;
          },
          &owner);
      GTAP_HSA_CALL(hsa_agent_iterate_regions, 
          d.agent,
          [](hsa_region_t r, void* v) {
            auto* o = static_cast<Owner*>(v);
            o->impl->pools.emplace(r.handle, o->kind);
            return HSA_STATUS_SUCCESS;
          },
          &owner);
    }
    m.setUpCountersLocked();
    m.startDeviceMetricsLocked();
  } else {
    for (DeviceInfo& d : m.devices)
      if (d.gpu) m.sampleClockLocked(d);
    m.setUpCountersLocked();
  }
  if (recordKernels()) GTAP_HSA_CALL(hsa_amd_profiling_async_copy_enable, true);
}

void Tracker::runtimeUnloading() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->drainLocked(true);
  impl_->loaded.store(false);
  // Signals die with the runtime; the next hsa_init starts afresh.
  impl_->freeSignals.clear();
  impl_->programTimes.clear();
}

void Tracker::processExiting() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->loaded) return;
  impl_->drainLocked(false);
  // The runtime may be torn down from here on (its own exit handlers): gtap
  // stops touching its signals, and packets still to come pass untimed.
  impl_->loaded.store(false);
}

// Work whose signal the device has reached but whose handler has not run yet
// is read now; at shut-down, work that never completed is written untimed.
void Tracker::Impl::drainLocked(bool runtimeEnding) {
  if (!canTime) return;
  collectAllLocked();
  if (runtimeEnding)
    for (auto& [handle, q] : queues) abandonInFlight(*q, "the runtime shut down before it completed");
  std::vector<Pending*> done;
  for (Pending* p : outstanding)
    if (signalValue(p->mine) == 0 || runtimeEnding) done.push_back(p);
  for (Pending* p : done) {
    if (p->finished.exchange(true)) continue;
    outstanding.erase(p);
    if (signalValue(p->mine) == 0) {
      Timed copy = *p;  // the handler may recycle `p` as soon as it runs
      mu.unlock();
      completeCopy(copy);
      mu.lock();
    } else {
      p->rec.note = "the runtime shut down before it completed";
      out.ops.push_back(std::move(p->rec));
    }
    // The handler may still run (or the runtime is gone): the entry is not reused.
  }
}

// --- objects ----------------------------------------------------------------------

uint64_t Tracker::Impl::objectLocked(schema::ObjectKind kind, uint64_t handle, uint32_t device, uint64_t parent,
                                     std::string name, uint32_t thread, core::profile::ObjectRecord extras) {
  extras.id = core::profile::nextObjectId();
  extras.kind = kind;
  extras.handle = handle;
  extras.device = device;
  extras.parent = parent;
  extras.name = std::move(name);
  extras.ticks = core::nowTicks();
  extras.thread = thread;
  uint64_t id = extras.id;
  out.created.push_back(std::move(extras));
  return id;
}

// --- the writer's side ------------------------------------------------------------------------

void Tracker::takeRecords(core::profile::Outbox& out) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->loaded) {
    impl_->collectAllLocked();
    // The clock is sampled here, on the writer thread, rather than where
    // completions are read (the program's thread may be the one).
    int64_t now = core::monotonicNs();
    for (DeviceInfo& d : impl_->devices)
      if (d.gpu && now - d.lastSampleNs > kClockSampleIntervalNs) impl_->sampleClockLocked(d);
  }
  std::swap(out, impl_->out);
  takeDeviceMetrics(out);
  // The writer's emptied vectors from the last flush: their capacity (and
  // pages) are reused, so a busy queue does not regrow them every flush.
  std::swap(impl_->out, impl_->spare);
}

void Tracker::returnRecords(core::profile::Outbox& out) {
  out.clear();
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::swap(impl_->spare, out);
}

namespace {

void exitWork() { Tracker::get().processExiting(); }

void produceChunks(core::ChunkSink& sink, bool) {
  core::profile::Outbox out;
  Tracker::get().takeRecords(out);
  core::profile::writeProfileRecords(sink, out);
  Tracker::get().returnRecords(out);
}

__attribute__((constructor(103))) void registerTracker() {
  core::registerChunkProducer(&produceChunks);
  core::registerExitWork(&exitWork);
}

}  // namespace

}  // namespace gtap::hsa
