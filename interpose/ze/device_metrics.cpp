#include "device_metrics.h"

#include <level_zero/zes_api.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chunk_producer.h"
#include "clock.h"
#include "log.h"
#include "profile_records.h"
#include "real.h"
#include "session.h"

namespace gtap::ze {

namespace {

const char* engineName(zes_engine_group_t type) {
  switch (type) {
    case ZES_ENGINE_GROUP_ALL: return "engine all active";
    case ZES_ENGINE_GROUP_COMPUTE_ALL: return "engine compute active";
    case ZES_ENGINE_GROUP_MEDIA_ALL: return "engine media active";
    case ZES_ENGINE_GROUP_COPY_ALL: return "engine copy active";
    case ZES_ENGINE_GROUP_COMPUTE_SINGLE: return "engine compute single active";
    case ZES_ENGINE_GROUP_RENDER_SINGLE: return "engine render single active";
    case ZES_ENGINE_GROUP_COPY_SINGLE: return "engine copy single active";
    case ZES_ENGINE_GROUP_RENDER_ALL: return "engine render active";
    case ZES_ENGINE_GROUP_3D_ALL: return "engine 3d active";
    case ZES_ENGINE_GROUP_3D_RENDER_COMPUTE_ALL: return "engine 3d render compute active";
    default: return "engine other active";
  }
}

const char* temperatureName(zes_temp_sensors_t type) {
  switch (type) {
    case ZES_TEMP_SENSORS_GLOBAL: return "temperature";
    case ZES_TEMP_SENSORS_GPU: return "temperature gpu";
    case ZES_TEMP_SENSORS_MEMORY: return "temperature memory";
    default: return "temperature other";
  }
}

// What one device is sampled for: each metric with how it is read (NaN when
// a read fails).
struct Device {
  uint32_t id = 0;
  std::vector<core::profile::DeviceMetricsRecord::Metric> metrics;
  std::vector<std::function<double()>> readers;
  std::string note;
  bool described = false;  // its note (or first samples) written
  std::vector<int64_t> times;
  std::vector<double> values;
};

}  // namespace

struct DeviceMetrics::Impl {
  std::mutex mu;
  std::condition_variable wake;
  std::vector<std::unique_ptr<Device>> devices;
  std::thread thread;
  bool started = false, stopping = false;
  // After the exit sample, or in a fork's child (the parent's thread is not
  // there, and is not started again): nothing more is sampled.
  bool stopped = false;
  uint64_t intervalNs = 0;

  void open(ze_device_handle_t device, Device& d);
  void sampleLocked(int64_t now);
  void run();
  void stop(bool lastSample);
};

DeviceMetrics& DeviceMetrics::get() {
  static DeviceMetrics* m = new DeviceMetrics();  // lives until the process ends
  return *m;
}

DeviceMetrics::DeviceMetrics() : impl_(new Impl) {
  impl_->intervalNs = uint64_t(core::config().metricsIntervalMs) * 1'000'000;
  pthread_atfork([] { DeviceMetrics::get().impl_->mu.lock(); }, [] { DeviceMetrics::get().impl_->mu.unlock(); },
                 [] {
                   Impl* impl = DeviceMetrics::get().impl_;
                   // The child has no sampling thread: its handle is the parent's.
                   if (impl->thread.joinable()) new (&impl->thread) std::thread();
                   impl->stopped = true;
                   for (auto& d : impl->devices) {
                     d->times.clear();
                     d->values.clear();
                   }
                   impl->mu.unlock();
                 });
}

bool DeviceMetrics::on() { return core::config().metricsIntervalMs > 0; }

void DeviceMetrics::Impl::open(ze_device_handle_t device, Device& d) {
  auto sys = reinterpret_cast<zes_device_handle_t>(device);
  using Metric = core::profile::DeviceMetricsRecord::Metric;
  uint32_t n = 0;
  ze_result_t engines = GTAP_ZE_REAL(zesDeviceEnumEngineGroups)(sys, &n, nullptr);
  if (engines == ZE_RESULT_SUCCESS && n) {
    std::vector<zes_engine_handle_t> handles(n);
    if (GTAP_ZE_REAL(zesDeviceEnumEngineGroups)(sys, &n, handles.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n && i < handles.size(); ++i) {
        zes_engine_properties_t p{};
        p.stype = ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES;
        if (GTAP_ZE_REAL(zesEngineGetProperties)(handles[i], &p) != ZE_RESULT_SUCCESS || p.onSubdevice) continue;
        zes_engine_handle_t h = handles[i];
        d.metrics.push_back(Metric{engineName(p.type), "ns", true});
        d.readers.push_back([h] {
          zes_engine_stats_t s{};
          if (GTAP_ZE_REAL(zesEngineGetActivity)(h, &s) != ZE_RESULT_SUCCESS) return double(NAN);
          return double(s.activeTime) * 1000.0;  // microseconds
        });
      }
  }
  n = 0;
  ze_result_t freqs = GTAP_ZE_REAL(zesDeviceEnumFrequencyDomains)(sys, &n, nullptr);
  if (freqs == ZE_RESULT_SUCCESS && n) {
    std::vector<zes_freq_handle_t> handles(n);
    if (GTAP_ZE_REAL(zesDeviceEnumFrequencyDomains)(sys, &n, handles.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n && i < handles.size(); ++i) {
        zes_freq_properties_t p{};
        p.stype = ZES_STRUCTURE_TYPE_FREQ_PROPERTIES;
        if (GTAP_ZE_REAL(zesFrequencyGetProperties)(handles[i], &p) != ZE_RESULT_SUCCESS || p.onSubdevice) continue;
        zes_freq_handle_t h = handles[i];
        d.metrics.push_back(Metric{p.type == ZES_FREQ_DOMAIN_MEMORY ? "frequency memory" : "frequency gpu", "MHz",
                                   false});
        d.readers.push_back([h] {
          zes_freq_state_t s{};
          s.stype = ZES_STRUCTURE_TYPE_FREQ_STATE;
          if (GTAP_ZE_REAL(zesFrequencyGetState)(h, &s) != ZE_RESULT_SUCCESS || s.actual < 0) return double(NAN);
          return s.actual;
        });
      }
  }
  n = 0;
  if (GTAP_ZE_REAL(zesDeviceEnumPowerDomains)(sys, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
    std::vector<zes_pwr_handle_t> handles(n);
    if (GTAP_ZE_REAL(zesDeviceEnumPowerDomains)(sys, &n, handles.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n && i < handles.size(); ++i) {
        zes_pwr_handle_t h = handles[i];
        d.metrics.push_back(Metric{n == 1 ? "power energy" : "power energy " + std::to_string(i), "uJ", true});
        d.readers.push_back([h] {
          zes_power_energy_counter_t e{};
          if (GTAP_ZE_REAL(zesPowerGetEnergyCounter)(h, &e) != ZE_RESULT_SUCCESS) return double(NAN);
          return double(e.energy);
        });
      }
  }
  n = 0;
  if (GTAP_ZE_REAL(zesDeviceEnumTemperatureSensors)(sys, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
    std::vector<zes_temp_handle_t> handles(n);
    if (GTAP_ZE_REAL(zesDeviceEnumTemperatureSensors)(sys, &n, handles.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n && i < handles.size(); ++i) {
        zes_temp_properties_t p{};
        p.stype = ZES_STRUCTURE_TYPE_TEMP_PROPERTIES;
        if (GTAP_ZE_REAL(zesTemperatureGetProperties)(handles[i], &p) != ZE_RESULT_SUCCESS || p.onSubdevice) continue;
        zes_temp_handle_t h = handles[i];
        d.metrics.push_back(Metric{temperatureName(p.type), "C", false});
        d.readers.push_back([h] {
          double t = 0;
          if (GTAP_ZE_REAL(zesTemperatureGetState)(h, &t) != ZE_RESULT_SUCCESS) return double(NAN);
          return t;
        });
      }
  }
  n = 0;
  if (GTAP_ZE_REAL(zesDeviceEnumMemoryModules)(sys, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
    std::vector<zes_mem_handle_t> handles(n);
    if (GTAP_ZE_REAL(zesDeviceEnumMemoryModules)(sys, &n, handles.data()) == ZE_RESULT_SUCCESS)
      for (uint32_t i = 0; i < n && i < handles.size(); ++i) {
        zes_mem_handle_t h = handles[i];
        std::string suffix = n == 1 ? "" : " " + std::to_string(i);
        zes_mem_state_t probe{};
        probe.stype = ZES_STRUCTURE_TYPE_MEM_STATE;
        if (GTAP_ZE_REAL(zesMemoryGetState)(h, &probe) == ZE_RESULT_SUCCESS) {
          d.metrics.push_back(Metric{"memory used" + suffix, "bytes", false});
          d.readers.push_back([h] {
            zes_mem_state_t s{};
            s.stype = ZES_STRUCTURE_TYPE_MEM_STATE;
            if (GTAP_ZE_REAL(zesMemoryGetState)(h, &s) != ZE_RESULT_SUCCESS || s.free > s.size) return double(NAN);
            return double(s.size - s.free);
          });
        }
        zes_mem_bandwidth_t bw{};
        if (GTAP_ZE_REAL(zesMemoryGetBandwidth)(h, &bw) == ZE_RESULT_SUCCESS) {
          for (bool read : {true, false}) {
            d.metrics.push_back(Metric{std::string(read ? "memory read" : "memory written") + suffix, "bytes", true});
            d.readers.push_back([h, read] {
              zes_mem_bandwidth_t b{};
              if (GTAP_ZE_REAL(zesMemoryGetBandwidth)(h, &b) != ZE_RESULT_SUCCESS) return double(NAN);
              return double(read ? b.readCounter : b.writeCounter);
            });
          }
        }
      }
  }
  if (d.metrics.empty())
    d.note = "Sysman gives no metrics for the device (zesDeviceEnumEngineGroups returned 0x" +
             [&] {
               char hex[16];
               snprintf(hex, sizeof hex, "%x", static_cast<uint32_t>(engines));
               return std::string(hex);
             }() +
             "; ZES_ENABLE_SYSMAN=1 must be set before zeInit)";
}

void DeviceMetrics::Impl::sampleLocked(int64_t now) {
  for (auto& d : devices) {
    if (d->metrics.empty()) continue;
    d->times.push_back(now);
    for (auto& read : d->readers) d->values.push_back(read());
  }
}

void DeviceMetrics::Impl::run() {
  std::unique_lock<std::mutex> lock(mu);
  auto next = std::chrono::steady_clock::now();
  while (!stopping) {
    next += std::chrono::nanoseconds(intervalNs);
    if (wake.wait_until(lock, next, [&] { return stopping; })) break;
    // Late (the machine was busy): the next sample is an interval from now.
    auto now = std::chrono::steady_clock::now();
    if (now > next + std::chrono::nanoseconds(intervalNs)) next = now;
    sampleLocked(core::monotonicNs());
  }
}

void DeviceMetrics::Impl::stop(bool lastSample) {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (stopped) return;
    stopped = true;
    stopping = true;
    t = std::move(thread);
  }
  wake.notify_all();
  if (t.joinable()) t.join();
  if (lastSample) {
    std::lock_guard<std::mutex> lock(mu);
    sampleLocked(core::monotonicNs());
  }
}

void DeviceMetrics::deviceSeen(ze_device_handle_t device, uint32_t deviceId) {
  if (!on() || !device || deviceId == ~0u) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopped) return;
    for (const auto& d : impl_->devices)
      if (d->id == deviceId) return;
  }
  auto d = std::make_unique<Device>();
  d->id = deviceId;
  impl_->open(device, *d);
  if (!d->note.empty() && !core::config().quiet)
    core::logLine("device metrics: device %u is not sampled: %s", deviceId, d->note.c_str());
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->stopped) return;
  for (const auto& have : impl_->devices)
    if (have->id == deviceId) return;
  Device* added = d.get();
  impl_->devices.push_back(std::move(d));
  if (!added->metrics.empty()) {
    // The first sample at once: the cumulative metrics count from it.
    added->times.push_back(core::monotonicNs());
    for (auto& read : added->readers) added->values.push_back(read());
  }
  if (!impl_->started && !added->metrics.empty()) {
    impl_->started = true;
    // Every signal blocked: a signal sent to the process must reach one of
    // the program's threads.
    sigset_t all, caller;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &caller);
    try {
      impl_->thread = std::thread([impl = impl_] { impl->run(); });
    } catch (const std::exception& e) {
      core::logLine("device metrics: cannot start the sampling thread (%s); not sampled", e.what());
    }
    pthread_sigmask(SIG_SETMASK, &caller, nullptr);
  }
}

namespace {

void exitWork() {
  if (DeviceMetrics::on()) DeviceMetrics::get().impl()->stop(true);
}

void produceChunks(core::ChunkSink& sink, bool) {
  if (!DeviceMetrics::on()) return;
  DeviceMetrics::Impl& impl = *DeviceMetrics::get().impl();
  core::profile::Outbox out;
  {
    std::lock_guard<std::mutex> lock(impl.mu);
    for (auto& d : impl.devices) {
      if (d->described && d->times.empty()) continue;
      d->described = true;
      core::profile::DeviceMetricsRecord r;
      r.device = d->id;
      r.source = "sysman";
      r.intervalNs = impl.intervalNs;
      r.metrics = d->metrics;
      r.note = d->note;
      r.times.swap(d->times);
      r.values.swap(d->values);
      out.deviceMetrics.push_back(std::move(r));
    }
  }
  if (!out.deviceMetrics.empty()) core::profile::writeProfileRecords(sink, out);
}

__attribute__((constructor(105))) void registerDeviceMetrics() {
  core::registerChunkProducer(&produceChunks);
  core::registerExitWork(&exitWork);
}

}  // namespace

}  // namespace gtap::ze
