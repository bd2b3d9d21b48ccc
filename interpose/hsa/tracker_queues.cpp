#include "tracker_impl.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "clock.h"
#include "log.h"
#include "session.h"
#include "stack_table.h"

namespace gtap::hsa {

namespace {

// Kernarg segments larger than this are not copied into the file (AQL
// programs keep them far smaller; the limit guards against a wrong size).
constexpr uint32_t kMaxKernargBytes = 64 * 1024;
constexpr uint16_t kPacketTypeMask = (1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1;

uint16_t packetType(uint16_t header) { return header & kPacketTypeMask; }

// The program's stack at a doorbell. The packet handler runs inside the
// runtime, inside gtap's wrapper of the doorbell store: the frames up to that
// wrapper (the runtime's queue machinery) are not the program's.
std::vector<uint64_t> doorbellStack(uint32_t depth) {
  std::vector<uint64_t> frames = core::captureStack(depth + 24);
  size_t i = 0;
  while (i < frames.size() && !core::isGtapAddress(frames[i])) ++i;
  if (i == frames.size()) i = 0;  // no wrapper below: keep what there is
  while (i < frames.size() && core::isGtapAddress(frames[i])) ++i;
  frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(i));
  if (frames.size() > depth) frames.resize(depth);
  return frames;
}

}  // namespace

// --- queues and packets ------------------------------------------------------------

hsa_status_t Tracker::createQueue(core::RealCall<decltype(&::hsa_queue_create)>& real, hsa_agent_t agent,
                                  uint32_t size, hsa_queue_type32_t type,
                                  void (*callback)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                  uint32_t privateSegmentSize, uint32_t groupSegmentSize, hsa_queue_t** queue,
                                  const core::CallScope& scope) {
  Impl& m = *impl_;
  bool intercept;
  {
    std::lock_guard<std::mutex> lock(m.mu);
    intercept = recordKernels() && m.canTime && m.loaded && scope.thread();
  }
  // Made before the queue, which lives as long as the process (a late packet
  // may still name it): once the runtime has made the queue, nothing that can
  // fail comes before its packet handler is registered.
  auto made = std::make_unique<QueueInfo>();
  hsa_status_t status = HSA_STATUS_ERROR;
  if (intercept) {
    status = GTAP_HSA_REAL(hsa_amd_queue_intercept_create)(agent, size, type, callback, data, privateSegmentSize,
                                                            groupSegmentSize, queue);
    if (status == HSA_STATUS_SUCCESS) {
      real.made(status);  // the program's queue: hsa_queue_create is not to be called after this
    } else {
      // What the program asked for, as it asked: its own call decides.
      intercept = false;
      std::lock_guard<std::mutex> lock(m.mu);
      if (!m.warnedIntercept) {
        m.warnedIntercept = true;
        core::logLine("the HSA runtime refused an intercept queue (status 0x%x); packets on such queues are not seen",
                      static_cast<unsigned>(status));
      }
    }
  }
  if (!intercept) status = real(agent, size, type, callback, data, privateSegmentSize, groupSegmentSize, queue);
  if (status != HSA_STATUS_SUCCESS || !queue || !*queue) return status;
  QueueInfo* info = made.release();
  info->agent = agent;
  info->queue = *queue;
  if (intercept) {
    if (GTAP_HSA_REAL(hsa_amd_queue_intercept_register)(*queue, &Impl::interceptHandler, info) != HSA_STATUS_SUCCESS)
      core::logLine("the HSA runtime refused gtap's packet handler; packets on queue %p are not seen",
                    static_cast<void*>(*queue));
    GTAP_HSA_REAL(hsa_amd_profiling_set_profiler_enabled)(*queue, 1);
  }
  std::lock_guard<std::mutex> lock(m.mu);
  info->device = m.deviceOf(agent);
  core::profile::ObjectRecord extras;
  extras.properties.emplace_back("size", std::to_string((*queue)->size));
  extras.properties.emplace_back("intercepted", intercept ? "yes" : "no");
  info->id = m.objectLocked(schema::ObjectKind::COMMAND_QUEUE, reinterpret_cast<uint64_t>(*queue), info->device, 0,
                            "", threadIdOf(scope), std::move(extras));
  m.queues[*queue] = info;
  return status;
}

void Tracker::queueDestroying(hsa_queue_t* queue) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.queues.find(queue);
  if (it == m.queues.end()) return;
  QueueInfo& q = *it->second;
  if (m.loaded) m.collectLocked(q);
  for (Timed& t : q.inFlight) {
    t.rec.note = "its queue was destroyed before it completed";
    m.out.ops.push_back(std::move(t.rec));
  }
  q.inFlight.clear();
  m.out.destroyed.emplace_back(q.id, core::nowTicks());
  m.queues.erase(it);
}

void Tracker::Impl::collectLocked(QueueInfo& q) {
  while (!q.inFlight.empty()) {
    Timed& t = q.inFlight.front();
    if (signalValue(t.mine) != 0) break;
    core::profile::OpRecord& rec = t.rec;
    rec.completedNs = core::monotonicNs();
    hsa_amd_profiling_dispatch_time_t time{};
    if (GTAP_HSA_REAL(hsa_amd_profiling_get_dispatch_time)(t.agent, t.mine, &time) == HSA_STATUS_SUCCESS) {
      rec.timed = true;
      rec.start = time.start;
      rec.end = time.end;
      if (t.program.handle) programTimes[t.program.handle] = {false, time.start, time.end};
    } else {
      rec.note = "the runtime gave no dispatch time";
      if (t.program.handle) programTimes.erase(t.program.handle);
    }
    GTAP_HSA_REAL(hsa_signal_store_relaxed)(t.mine, 1);
    freePacketSignals.push_back(t.mine);
    if (uint32_t dev = rec.device; dev < devices.size()) {
      DeviceInfo& d = devices[dev];
      if (rec.completedNs - d.lastSampleNs > kClockSampleIntervalNs) sampleClockLocked(d);
    }
    out.ops.push_back(std::move(rec));
    q.inFlight.pop_front();
  }
}

// the packets that doorbell published. Each kernel dispatch and barrier packet
// goes on to the device as written, but for its completion signal: gtap's,
// which the device decrements when the packet is done (with its start and end
// times, profiling being on). When the program gave a signal of its own, a
// barrier-AND packet that waits for gtap's follows and completes the
// program's: the device hands over the completion, so the program sees it as
// soon as it would have, with no host thread in between. gtap reads the times
// later, off the program's path (collectLocked).
void Tracker::Impl::interceptHandler(const void* packets, uint64_t count, uint64_t userIndex, void* data,
                                     hsa_amd_queue_intercept_packet_writer writer) {
  auto* queue = static_cast<QueueInfo*>(data);
  // After an internal error the packets go on as the program wrote them.
  if (core::stoppedAfterInternalError()) return writer(packets, count);
  size_t kept = ~size_t{0};
  bool written = false;
  try {
    interceptPackets(queue, packets, count, userIndex, writer, kept, written);
  } GTAP_CATCH_INTERNAL {
    if (written) throw;  // the runtime's own, from its packet writer
    core::stopAfterInternalError("the HSA packet handler");
    // This doorbell's packets go on as written: gtap's signals for them will
    // never be reached, so they are not waited for.
    try {
      Impl& m = *Tracker::get().impl_;
      std::lock_guard<std::mutex> lock(m.mu);
      while (kept != ~size_t{0} && queue->inFlight.size() > kept) {
        m.freePacketSignals.push_back(queue->inFlight.back().mine);
        queue->inFlight.pop_back();
      }
    } catch (...) {
    }
    writer(packets, count);
  }
}

void Tracker::Impl::interceptPackets(QueueInfo* queue, const void* packets, uint64_t count, uint64_t userIndex,
                                     hsa_amd_queue_intercept_packet_writer writer, size_t& kept, bool& written) {
  Impl& m = *Tracker::get().impl_;
  constexpr size_t kLocal = 32;
  hsa_kernel_dispatch_packet_t local[kLocal];
  std::vector<hsa_kernel_dispatch_packet_t> heap;
  hsa_kernel_dispatch_packet_t* outPackets = local;
  if (2 * count > kLocal) {
    heap.resize(2 * count);
    outPackets = heap.data();
  }
  const auto* in = static_cast<const hsa_kernel_dispatch_packet_t*>(packets);
  uint64_t ticks = core::nowTicks();
  uint32_t thread = core::currentThreadId();
  core::ThreadState* state = core::t_state;
  uint64_t appendIndex = state && core::g_recordApi && state->produced ? state->produced - 1 : ~uint64_t{0};
  std::vector<uint64_t> stack;
  if (recordStacks()) stack = doorbellStack(m.stackDepth);
  size_t n = 0;
  std::lock_guard<std::mutex> lock(m.mu);
  if (m.loaded) m.collectLocked(*queue);
  kept = queue->inFlight.size();
  for (uint64_t i = 0; i < count; ++i) {
    hsa_kernel_dispatch_packet_t& pkt = outPackets[n++];
    pkt = in[i];
    uint16_t header = pkt.header;
    uint16_t type = packetType(header);
    if (type != HSA_PACKET_TYPE_KERNEL_DISPATCH && type != HSA_PACKET_TYPE_BARRIER_AND &&
        type != HSA_PACKET_TYPE_BARRIER_OR)
      continue;  // vendor-specific and agent packets pass as written
    Timed t;
    core::profile::OpRecord& rec = t.rec;
    rec.device = queue->device;
    rec.queue = queue->id;
    rec.thread = rec.submitThread = thread;
    rec.appendIndex = appendIndex;
    rec.recordedBy = schema::Api::HSA;
    rec.appendTicks = rec.submitTicks = ticks;
    rec.packetHeader = header;
    rec.queueIndex = userIndex + i;
    rec.stack = stack;
    hsa_signal_t* completion;
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      // A dispatch the filters leave out goes on exactly as the program wrote
      // it; the program's own profiling queries on its signal then reach the
      // runtime, not times gtap kept from an earlier packet.
      auto k = m.kernels.find(pkt.kernel_object);
      bool wanted = k != m.kernels.end() ? k->second.wanted : core::config().kernelFilter.empty();
      if (!core::dispatchNumberWanted(m.dispatches++) || !wanted) {
        if (pkt.completion_signal.handle) m.programTimes.erase(pkt.completion_signal.handle);
        continue;
      }
      rec.kind = schema::DeviceOpKind::KERNEL;
      rec.gridSize = {pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z};
      uint32_t wg[3] = {pkt.workgroup_size_x, pkt.workgroup_size_y, pkt.workgroup_size_z};
      for (int d = 0; d < 3; ++d) {
        rec.groupSize[d] = wg[d];
        rec.groupCount[d] = wg[d] ? (rec.gridSize[d] + wg[d] - 1) / wg[d] : 0;
      }
      completion = &pkt.completion_signal;
      if (k != m.kernels.end()) {
        rec.kernel = k->second.id;
        uint32_t size = std::min(k->second.kernargSize, kMaxKernargBytes);
        if (pkt.kernarg_address && size) {
          auto* a = static_cast<const uint8_t*>(pkt.kernarg_address);
          rec.arguments.assign(a, a + size);
        }
      } else {
        char note[96];
        std::snprintf(note, sizeof note, "kernel object 0x%llx is not from an executable gtap saw frozen",
                      static_cast<unsigned long long>(pkt.kernel_object));
        rec.note = note;
      }
    } else {
      rec.kind = schema::DeviceOpKind::BARRIER;
      completion = &reinterpret_cast<hsa_barrier_and_packet_t*>(&pkt)->completion_signal;
    }
    t.program = *completion;
    t.agent = queue->agent;
    t.mine = m.loaded && m.canTime ? m.acquirePacketSignalLocked() : hsa_signal_t{0};
    if (!t.mine.handle) {
      if (rec.note.empty()) rec.note = "gtap could not time it";
      m.out.ops.push_back(std::move(rec));
      continue;
    }
    *completion = t.mine;
    if (t.program.handle) {
      hsa_barrier_and_packet_t forward{};
      uint16_t releaseScope = (header >> HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE) &
                              ((1u << HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE) - 1);
      forward.header = static_cast<uint16_t>(
          (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
          (HSA_FENCE_SCOPE_NONE << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
          (releaseScope << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
      forward.dep_signal[0] = t.mine;
      forward.completion_signal = t.program;
      static_assert(sizeof forward == sizeof outPackets[0]);
      std::memcpy(&outPackets[n++], &forward, sizeof forward);
    }
    queue->inFlight.push_back(std::move(t));
    core::testThrowPoint(core::TestSite::hsaPacket);
  }
  written = true;
  writer(outPackets, n);
}

}  // namespace gtap::hsa
