#include "sampler.h"

#include <level_zero/zet_api.h>
#include <pthread.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "real.h"
#include "session.h"

namespace gtap::ze {

namespace {

// ZET_METRIC_TYPE_IP_EXP in the 1.4 headers, ZET_METRIC_TYPE_IP (same value)
// in later ones.
constexpr uint32_t kMetricTypeIp = 0x7ffffffe;
// What one debug ELF may take in a capture; a larger one is left out.
constexpr size_t kMaxDebugInfo = size_t(1) << 30;

using KernelBaseFn = ze_result_t(ZE_APICALL*)(ze_kernel_handle_t, uint64_t*);

struct Row {
  uint64_t ip = 0;
  std::vector<uint64_t> counts;
};

struct Batch {
  uint32_t device = 0;
  int64_t fromNs = 0, toNs = 0;
  bool dropped = false;
  std::vector<Row> rows;
};

struct Device {
  ze_device_handle_t handle = nullptr;
  uint32_t id = 0;
  ze_context_handle_t context = nullptr;
  zet_metric_group_handle_t group = nullptr;
  zet_metric_streamer_handle_t streamer = nullptr;
  std::string groupName;
  std::vector<std::string> reasons;  // the metrics but the IP, in group order
  uint32_t metricCount = 0, ipIndex = 0;
  uint64_t periodNs = 0;
  int64_t lastReadNs = 0;
  std::string note;    // why it is not sampled
  bool described = false;  // its first chunk (reasons or note) is written
};

uint64_t asCount(const zet_typed_value_t& v) {
  switch (v.type) {
    case ZET_VALUE_TYPE_UINT32: return v.value.ui32;
    case ZET_VALUE_TYPE_UINT64: return v.value.ui64;
    case ZET_VALUE_TYPE_FLOAT32: return v.value.fp32 > 0 ? uint64_t(v.value.fp32) : 0;
    case ZET_VALUE_TYPE_FLOAT64: return v.value.fp64 > 0 ? uint64_t(v.value.fp64) : 0;
    case ZET_VALUE_TYPE_BOOL8: return v.value.b8 ? 1 : 0;
    default: return 0;
  }
}

}  // namespace

struct Sampler::Impl {
  std::mutex mu;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<Batch> pending;
  std::atomic<KernelBaseFn> kernelBase{nullptr};  // read at every kernel created, without the lock
  bool kernelBaseLooked = false;
  bool stopped = false;  // after the exit read, or in a fork's child: the streamers are not read again

  // Finds the group and opens the streamer; fills d.note when it cannot.
  void open(ze_driver_handle_t driver, Device& d);
  void readDevice(Device& d, int64_t now);
};

Sampler& Sampler::get() {
  static Sampler* s = new Sampler();  // lives until the process ends
  return *s;
}

Sampler::Sampler() : impl_(new Impl) {
  // The writer may be reading a streamer when the program forks: the child
  // gets the lock free, and reads nothing (the streamers are the parent's).
  pthread_atfork([] { Sampler::get().impl_->mu.lock(); }, [] { Sampler::get().impl_->mu.unlock(); },
                 [] {
                   Impl* impl = Sampler::get().impl_;
                   impl->stopped = true;
                   impl->pending.clear();
                   impl->mu.unlock();
                 });
}

void Sampler::Impl::open(ze_driver_handle_t driver, Device& d) {
  uint32_t n = 0;
  if (GTAP_ZE_REAL(zetMetricGroupGet)(d.handle, &n, nullptr) != ZE_RESULT_SUCCESS || n == 0) {
    d.note = "the device offers no metric groups";
    return;
  }
  std::vector<zet_metric_group_handle_t> groups(n);
  if (GTAP_ZE_REAL(zetMetricGroupGet)(d.handle, &n, groups.data()) != ZE_RESULT_SUCCESS) {
    d.note = "zetMetricGroupGet failed";
    return;
  }
  groups.resize(n);
  for (zet_metric_group_handle_t g : groups) {
    zet_metric_group_properties_t gp{};
    gp.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
    if (GTAP_ZE_REAL(zetMetricGroupGetProperties)(g, &gp) != ZE_RESULT_SUCCESS) continue;
    if (!(gp.samplingType & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED)) continue;
    uint32_t m = 0;
    if (GTAP_ZE_REAL(zetMetricGet)(g, &m, nullptr) != ZE_RESULT_SUCCESS || m == 0) continue;
    std::vector<zet_metric_handle_t> metrics(m);
    if (GTAP_ZE_REAL(zetMetricGet)(g, &m, metrics.data()) != ZE_RESULT_SUCCESS) continue;
    std::vector<std::string> names;
    uint32_t ip = ~0u;
    for (uint32_t i = 0; i < m; ++i) {
      zet_metric_properties_t mp{};
      mp.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES;
      if (GTAP_ZE_REAL(zetMetricGetProperties)(metrics[i], &mp) != ZE_RESULT_SUCCESS) break;
      if (uint32_t(mp.metricType) == kMetricTypeIp && ip == ~0u) ip = i;
      names.emplace_back(mp.name, strnlen(mp.name, sizeof mp.name));
    }
    if (ip == ~0u || names.size() != m) continue;
    d.group = g;
    d.groupName.assign(gp.name, strnlen(gp.name, sizeof gp.name));
    d.metricCount = m;
    d.ipIndex = ip;
    for (uint32_t i = 0; i < m; ++i)
      if (i != ip) d.reasons.push_back(names[i]);
    break;
  }
  if (!d.group) {
    d.note = "the device offers no time-based metric group with an instruction-pointer metric";
    return;
  }
  // A context of gtap's own: the program's contexts keep the groups it
  // activates in them.
  ze_context_desc_t cd{};
  cd.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
  if (GTAP_ZE_REAL(zeContextCreate)(driver, &cd, &d.context) != ZE_RESULT_SUCCESS) {
    d.note = "zeContextCreate for the streamer failed";
    d.context = nullptr;
    return;
  }
  ze_result_t r = GTAP_ZE_REAL(zetContextActivateMetricGroups)(d.context, d.handle, 1, &d.group);
  if (r != ZE_RESULT_SUCCESS) {
    d.note = "zetContextActivateMetricGroups(" + d.groupName + ") failed with " + std::to_string(uint32_t(r));
    return;
  }
  zet_metric_streamer_desc_t sd{};
  sd.stype = ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC;
  sd.notifyEveryNReports = 0;
  d.periodNs = uint64_t(core::config().samplePeriodUs) * 1000;
  sd.samplingPeriod = uint32_t(d.periodNs);
  r = GTAP_ZE_REAL(zetMetricStreamerOpen)(d.context, d.handle, d.group, &sd, nullptr, &d.streamer);
  if (r != ZE_RESULT_SUCCESS) {
    d.note = "zetMetricStreamerOpen(" + d.groupName + ") failed with " + std::to_string(uint32_t(r));
    d.streamer = nullptr;
    return;
  }
  d.lastReadNs = core::monotonicNs();
}

void Sampler::deviceSeen(ze_driver_handle_t driver, ze_device_handle_t device, uint32_t deviceId) {
  if (!device || deviceId == ~0u) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->stopped) return;
  for (const auto& d : impl_->devices)
    if (d->handle == device) return;
  auto d = std::make_unique<Device>();
  d->handle = device;
  d->id = deviceId;
  impl_->open(driver, *d);
  if (!impl_->kernelBaseLooked) {
    impl_->kernelBaseLooked = true;
    void* fn = nullptr;
    if (GTAP_ZE_REAL(zeDriverGetExtensionFunctionAddress)(driver, "zexKernelGetBaseAddress", &fn) ==
            ZE_RESULT_SUCCESS &&
        fn)
      impl_->kernelBase.store(reinterpret_cast<KernelBaseFn>(fn), std::memory_order_release);
  }
  if (!d->note.empty() && !core::config().quiet)
    core::logLine("mode samples: device %u is not sampled: %s", deviceId, d->note.c_str());
  impl_->devices.push_back(std::move(d));
}

uint64_t Sampler::kernelCodeAddress(ze_kernel_handle_t kernel) {
  KernelBaseFn fn = impl_->kernelBase.load(std::memory_order_acquire);
  uint64_t base = 0;
  if (!fn || fn(kernel, &base) != ZE_RESULT_SUCCESS) return 0;
  return base;
}

std::vector<uint8_t> Sampler::moduleDebugInfo(ze_module_handle_t module) {
  std::vector<uint8_t> bytes;
  size_t size = 0;
  if (GTAP_ZE_REAL(zetModuleGetDebugInfo)(module, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &size, nullptr) !=
          ZE_RESULT_SUCCESS ||
      size == 0 || size > kMaxDebugInfo)
    return bytes;
  bytes.resize(size);
  if (GTAP_ZE_REAL(zetModuleGetDebugInfo)(module, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &size, bytes.data()) !=
          ZE_RESULT_SUCCESS ||
      size > bytes.size()) {
    bytes.clear();
    return bytes;
  }
  bytes.resize(size);
  return bytes;
}

void Sampler::Impl::readDevice(Device& d, int64_t now) {
  size_t size = 0;
  if (GTAP_ZE_REAL(zetMetricStreamerReadData)(d.streamer, UINT32_MAX, &size, nullptr) != ZE_RESULT_SUCCESS ||
      size == 0)
    return;
  std::vector<uint8_t> raw(size);
  ze_result_t r = GTAP_ZE_REAL(zetMetricStreamerReadData)(d.streamer, UINT32_MAX, &size, raw.data());
  if ((r != ZE_RESULT_SUCCESS && r != ZE_RESULT_WARNING_DROPPED_DATA) || size == 0) return;
  raw.resize(std::min(size, raw.size()));
  Batch b;
  b.device = d.id;
  b.fromNs = d.lastReadNs;
  b.toNs = now;
  b.dropped = r == ZE_RESULT_WARNING_DROPPED_DATA;
  d.lastReadNs = now;
  uint32_t count = 0;
  auto calculate = GTAP_ZE_REAL(zetMetricGroupCalculateMetricValues);
  if (calculate(d.group, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw.size(), raw.data(), &count, nullptr) !=
          ZE_RESULT_SUCCESS ||
      count == 0)
    return;
  std::vector<zet_typed_value_t> values(count);
  if (calculate(d.group, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw.size(), raw.data(), &count,
                values.data()) != ZE_RESULT_SUCCESS)
    return;
  count = std::min<uint32_t>(count, uint32_t(values.size()));
  const uint32_t m = d.metricCount;
  for (uint32_t row = 0; row + m <= count; row += m) {
    Row out;
    out.ip = asCount(values[row + d.ipIndex]);
    out.counts.reserve(m - 1);
    for (uint32_t i = 0; i < m; ++i)
      if (i != d.ipIndex) out.counts.push_back(asCount(values[row + i]));
    b.rows.push_back(std::move(out));
  }
  if (!b.rows.empty() || b.dropped) pending.push_back(std::move(b));
}

void Sampler::read() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->stopped) return;
  int64_t now = core::monotonicNs();
  for (auto& d : impl_->devices)
    if (d->streamer) impl_->readDevice(*d, now);
}

void Sampler::readAtExit() {
  read();
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stopped = true;
}

void Sampler::produce(core::ChunkSink& sink) {
  std::vector<Batch> batches;
  std::vector<const Device*> fresh;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    batches.swap(impl_->pending);
    for (auto& d : impl_->devices) {
      if (!d->described) fresh.push_back(d.get());
      d->described = true;
    }
  }
  auto deviceOf = [&](uint32_t id) -> const Device* {
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (const auto& d : impl_->devices)
      if (d->id == id) return d.get();
    return nullptr;
  };
  auto write = [&](const Device& d, const Batch* b) {
    capnp::MallocMessageBuilder m;
    auto root = m.initRoot<schema::InstructionSamples>();
    root.setDevice(d.id);
    root.setGroup(d.groupName);
    auto reasons = root.initReasons(unsigned(d.reasons.size()));
    for (unsigned i = 0; i < d.reasons.size(); ++i) reasons.set(i, d.reasons[i]);
    root.setPeriodNs(d.periodNs);
    root.setNote(d.note);
    if (b) {
      root.setFromNs(b->fromNs);
      root.setToNs(b->toNs);
      root.setDropped(b->dropped);
      auto rows = root.initSamples(unsigned(b->rows.size()));
      for (unsigned i = 0; i < b->rows.size(); ++i) {
        rows[i].setIp(b->rows[i].ip);
        auto c = rows[i].initCounts(unsigned(b->rows[i].counts.size()));
        for (unsigned k = 0; k < b->rows[i].counts.size(); ++k) c.set(k, b->rows[i].counts[k]);
      }
    }
    sink.write(schema::ChunkKind::INSTRUCTION_SAMPLES, m);
  };
  // Every device is named once, sampled or not (with why not), so readers
  // can tell "no samples" from "not sampled".
  for (const Device* d : fresh) write(*d, nullptr);
  for (const Batch& b : batches)
    if (const Device* d = deviceOf(b.device)) write(*d, &b);
}

namespace {

void exitWork() {
  if (core::recordSamples()) Sampler::get().readAtExit();
}

void produceChunks(core::ChunkSink& sink, bool) {
  if (!core::recordSamples()) return;
  Sampler::get().read();
  Sampler::get().produce(sink);
}

__attribute__((constructor(104))) void registerSampler() {
  core::registerChunkProducer(&produceChunks);
  core::registerExitWork(&exitWork);
}

}  // namespace

}  // namespace gtap::ze
