#include "tracker_impl.h"

#include "hsa_replay.h"
#include "replay_stream.h"

#include <sched.h>

#include <algorithm>
#include <bit>
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
// A counter profile's start and stop packets: vendor-specific, barrier bit,
// system-scope fences (the host reads the output buffer).
constexpr uint16_t kProfileHeader = static_cast<uint16_t>(
    (HSA_PACKET_TYPE_VENDOR_SPECIFIC << HSA_PACKET_HEADER_TYPE) | (1u << HSA_PACKET_HEADER_BARRIER) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));

uint16_t packetType(uint16_t header) { return header & kPacketTypeMask; }

// Packets gtap can time at once on one queue: the ring of slots (and gtap's
// signals) is made with the queue, twice its size within these bounds.
constexpr uint64_t kMinSlots = 128, kMaxSlots = 4096;
// Kernarg bytes each slot has room for from the start.
constexpr size_t kSlotArgumentBytes = 512;

// The program's stack at a doorbell, into `frames` (room for `depth`). The
// packet handler runs inside the runtime, inside gtap's wrapper of the
// doorbell store: the frames up to that wrapper (the runtime's queue
// machinery) are not the program's.
uint32_t doorbellStack(uint64_t* frames, uint32_t depth) {
  uint64_t raw[256 + 24];
  uint32_t got = core::captureStackInto(raw, std::min<uint32_t>(depth, 256) + 24, false);
  uint32_t first = 0;  // past gtap's own frames (this function, the handler)
  while (first < got && core::isGtapAddress(raw[first])) ++first;
  uint32_t i = first;
  while (i < got && !core::isGtapAddress(raw[i])) ++i;
  if (i == got) i = first;  // no wrapper below: keep what there is
  while (i < got && core::isGtapAddress(raw[i])) ++i;
  uint32_t n = std::min(got - i, depth);
  std::copy(raw + i, raw + i + n, frames);
  return n;
}

// Per thread, grown once to the largest doorbell: the packets handed on
// (each of the program's may become four: a counter profile's start, the
// packet, the profile's stop and the barrier that completes its signal).
thread_local std::vector<hsa_kernel_dispatch_packet_t> t_outPackets;
// Per thread: the counter values of the packet being read.
thread_local std::vector<uint64_t> t_counterValues;

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
    // Replay needs the packets too, whether or not they are timed.
    intercept = (recordKernels() || core::replay::enabled()) && m.canTime && m.loaded && scope.thread();
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
  const uint32_t number = core::nextQueueNumber();
  {
    std::lock_guard<std::mutex> lock(m.mu);
    info->device = m.deviceOf(agent);
    info->wanted = core::queueNumberWanted(number) &&
                   (info->device < m.devices.size() && core::deviceIndexWanted(m.devices[info->device].gpuIndex));
    core::profile::ObjectRecord extras;
    extras.properties.emplace_back("size", std::to_string((*queue)->size));
    extras.properties.emplace_back("intercepted", intercept ? "yes" : "no");
    extras.properties.emplace_back("number", std::to_string(number));
    info->id = m.objectLocked(schema::ObjectKind::COMMAND_QUEUE, reinterpret_cast<uint64_t>(*queue), info->device,
                              0, "", threadIdOf(scope), std::move(extras));
  }
  if (intercept && recordKernels()) {
    // Everything a packet needs, made now: a doorbell then takes nothing
    // from the heap or the runtime. A slot without a signal times nothing.
    // Measured dispatches run one at a time while the program goes on
    // writing (the intercept queue takes its packets as they come): more of
    // them wait in flight, so their queues get more slots.
    bool measuring;
    {
      std::lock_guard<std::mutex> lock(m.mu);
      measuring = info->wanted && info->device < m.counterDevices.size() && m.counterDevices[info->device].measure;
    }
    uint64_t slots =
        std::bit_ceil(std::clamp<uint64_t>((measuring ? 8ull : 2ull) * (*queue)->size, kMinSlots, kMaxSlots));
    try {
      info->slots = std::make_unique<PacketSlot[]>(slots);
      for (uint64_t i = 0; i < slots; ++i) {
        PacketSlot& slot = info->slots[i];
        slot.mine = m.newPacketSignal();
        if (!slot.mine.handle) throw std::bad_alloc();
        // The fence's signal (below, where packets are rewritten).
        slot.stopped = m.newPacketSignal();
        if (!slot.stopped.handle) throw std::bad_alloc();
        slot.arguments.reserve(kSlotArgumentBytes);
        if (recordStacks()) slot.stack.reserve(m.stackDepth);
      }
      info->capacity = slots;
      if (info->wanted && m.armQueueCounters(*info)) {
        info->measures = true;
      } else if (info->wanted && info->device < m.counterDevices.size() && m.counterDevices[info->device].measure) {
        core::logLine("gtap could not make the counter profiles of queue %p; its dispatches are not measured",
                      static_cast<void*>(*queue));
      }
    } catch (const std::bad_alloc&) {
      core::logLine("gtap could not make its completion signals for queue %p; its packets are recorded untimed",
                    static_cast<void*>(*queue));
    }
    GTAP_HSA_REAL(hsa_amd_profiling_set_profiler_enabled)(*queue, 1);
  }
  if (intercept &&
      GTAP_HSA_REAL(hsa_amd_queue_intercept_register)(*queue, &Impl::interceptHandler, info) != HSA_STATUS_SUCCESS)
    core::logLine("the HSA runtime refused gtap's packet handler; packets on queue %p are not seen",
                  static_cast<void*>(*queue));
  std::lock_guard<std::mutex> lock(m.mu);
  m.queues[*queue] = info;
  return status;
}

void Tracker::queueDestroying(hsa_queue_t* queue) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.mu);
  auto it = m.queues.find(queue);
  if (it == m.queues.end()) return;
  QueueInfo& q = *it->second;
  if (m.loaded) m.consume(q, true);
  m.abandonInFlight(q, "its queue was destroyed before it completed");
  m.out.destroyed.emplace_back(q.id, core::nowTicks());
  m.queues.erase(it);
}

void Tracker::Impl::consume(QueueInfo& q, bool wait) {
  if (!q.capacity) return;
  while (q.consuming.exchange(true, std::memory_order_acquire)) {
    if (!wait) return;  // another thread reads them
    sched_yield();
  }
  uint64_t tail = q.tail.load(std::memory_order_relaxed);
  const uint64_t head = q.head.load(std::memory_order_acquire);
  for (; tail < head; ++tail) {
    PacketSlot& slot = q.slots[tail & (q.capacity - 1)];
    if (signalValue(slot.mine) != 0) break;
    if (slot.fenced && signalValue(slot.stopped) != 0) {
      if (!wait) break;
      // The packet is done and gtap's stop (or fence) packet is right behind
      // it with nothing left to wait for: a caller that waits (the program
      // asking for its times, a queue going away) has it shortly.
      const int64_t until = core::monotonicNs() + 100'000'000;
      while (signalValue(slot.stopped) != 0 && core::monotonicNs() < until) sched_yield();
      if (signalValue(slot.stopped) != 0) break;
    }
    // Read after the packet was seen complete: a packet completing while
    // earlier ones are read must not be stamped before its end.
    const int64_t now = core::monotonicNs();
    char note[96];
    uint32_t noteBytes = 0;
    hsa_amd_profiling_dispatch_time_t time{};
    bool timed = GTAP_HSA_REAL(hsa_amd_profiling_get_dispatch_time)(q.agent, slot.mine, &time) == HSA_STATUS_SUCCESS;
    if (slot.unknownKernel)
      noteBytes = static_cast<uint32_t>(
          std::snprintf(note, sizeof note, "kernel object 0x%llx is not from an executable gtap saw frozen",
                        static_cast<unsigned long long>(slot.unknownKernel)));
    if (slot.program.handle) programTimes.put(slot.program.handle, false, timed, time.start, time.end);
    GTAP_HSA_REAL(hsa_signal_store_relaxed)(slot.mine, 1);
    auto args = static_cast<uint32_t>(slot.arguments.size());
    auto frames = static_cast<uint32_t>(slot.stack.size());
    uint32_t counterCount = 0, rawBytes = 0;
    const char* counterNote = nullptr;
    if (slot.measured) {
      slot.measured = false;
      if (readCounters(slot, t_counterValues, counterNote)) {
        counterCount = static_cast<uint32_t>(t_counterValues.size());
        rawBytes = static_cast<uint32_t>(slot.profile.output_buffer.size);
      }
    }
    if (slot.fenced) {
      slot.fenced = false;
      GTAP_HSA_REAL(hsa_signal_store_relaxed)(slot.stopped, 1);
    }
    core::devicework::Header* rec = core::devicework::begin(frames, 0, 0, 0, args, noteBytes, counterCount, rawBytes);
    if (!rec) continue;
    uint32_t size = rec->size;
    *rec = slot.rec;
    rec->size = size;
    rec->counterCount = counterCount;
    rec->counterRawBytes = rawBytes;
    if (counterCount) {
      rec->counterSet = counterDevices[q.device].set;
      std::copy(t_counterValues.begin(), t_counterValues.end(), rec->counterValues());
      std::memcpy(rec->counterRaw(), slot.profile.output_buffer.ptr, rawBytes);
    } else if (counterNote && !noteBytes) {
      rec->fixedNote = counterNote;
    }
    rec->stackCount = static_cast<uint16_t>(frames);
    rec->argumentBytes = args;
    rec->noteBytes = static_cast<uint16_t>(noteBytes);
    rec->completedNs = now;
    rec->timed = timed;
    if (timed) {
      rec->start = time.start;
      rec->end = time.end;
    } else if (!noteBytes) {
      rec->fixedNote = "the runtime gave no dispatch time";
    }
    std::copy(slot.stack.begin(), slot.stack.end(), rec->stack());
    std::copy(slot.arguments.begin(), slot.arguments.end(), rec->arguments());
    std::memcpy(rec->note(), note, noteBytes);
    core::devicework::commit(rec);
  }
  q.tail.store(tail, std::memory_order_release);
  q.consuming.store(false, std::memory_order_release);
}

void Tracker::Impl::abandonInFlight(QueueInfo& q, const char* note) {
  if (!q.capacity) return;
  while (q.consuming.exchange(true, std::memory_order_acquire)) sched_yield();
  uint64_t tail = q.tail.load(std::memory_order_relaxed);
  const uint64_t head = q.head.load(std::memory_order_acquire);
  for (; tail < head; ++tail) {
    PacketSlot& slot = q.slots[tail & (q.capacity - 1)];
    core::profile::OpRecord& op = out.ops.emplace_back();
    const core::devicework::Header& h = slot.rec;
    op.kind = h.kind;
    op.device = h.device;
    op.queue = h.queue;
    op.kernel = h.kernel;
    op.groupCount = h.groupCount;
    op.groupSize = h.groupSize;
    if (h.gridDims) op.gridSize.assign(h.grid.begin(), h.grid.begin() + h.gridDims);
    op.thread = h.thread;
    op.submitThread = h.submitThread;
    op.appendIndex = h.appendIndex;
    op.appendTicks = h.appendTicks;
    op.submitTicks = h.submitTicks;
    op.recordedBy = h.recordedBy;
    op.packetHeader = h.packetHeader;
    op.queueIndex = h.queueIndex;
    op.stack = slot.stack;
    op.arguments = slot.arguments;
    op.note = note;
  }
  q.tail.store(tail, std::memory_order_release);
  q.consuming.store(false, std::memory_order_release);
}

// the packets that doorbell published. Each kernel dispatch and barrier packet
// goes on to the device as written, but for its completion signal: gtap's,
// which the device decrements when the packet is done (with its start and end
// times, profiling being on). When the program gave a signal of its own, a
// barrier-AND packet that waits for gtap's follows and completes the
// program's: the device hands over the completion, so the program sees it as
// soon as it would have, with no host thread in between. gtap reads the times
// later, in batches (consume): when the queue's ring of slots fills up, at
// each flush on the writer thread, or when the program asks for the times.
void Tracker::Impl::interceptHandler(const void* packets, uint64_t count, uint64_t userIndex, void* data,
                                     hsa_amd_queue_intercept_packet_writer writer) {
  auto* queue = static_cast<QueueInfo*>(data);
  // After an internal error the packets go on as the program wrote them.
  if (core::stoppedAfterInternalError()) return writer(packets, count);
  uint64_t kept = ~uint64_t{0};
  bool written = false;
  try {
    interceptPackets(queue, packets, count, userIndex, writer, kept, written);
  } GTAP_CATCH_INTERNAL {
    if (written) throw;  // the runtime's own, from its packet writer
    core::stopAfterInternalError("the HSA packet handler");
    // This doorbell's packets go on as written: gtap's signals for them will
    // never be reached, so their slots are given back.
    if (kept != ~uint64_t{0}) {
      queue->head.store(kept, std::memory_order_release);
      queue->producing.store(false, std::memory_order_release);
    }
    writer(packets, count);
  }
}

namespace {

// A packet gtap does not time, written as it is seen.
void untimed(const core::devicework::Header& fields, const uint64_t* stack, uint32_t frames, const char* note) {
  core::devicework::Header* rec = core::devicework::begin(frames, 0, 0, 0, 0, 0);
  if (!rec) return;
  uint32_t size = rec->size;
  *rec = fields;
  rec->size = size;
  rec->stackCount = static_cast<uint16_t>(frames);
  rec->completedNs = core::monotonicNs();
  if (!rec->fixedNote) rec->fixedNote = note;
  std::copy(stack, stack + frames, rec->stack());
  core::devicework::commit(rec);
}

}  // namespace

void Tracker::Impl::interceptPackets(QueueInfo* queue, const void* packets, uint64_t count, uint64_t userIndex,
                                     hsa_amd_queue_intercept_packet_writer writer, uint64_t& kept, bool& written) {
  Impl& m = *Tracker::get().impl_;
  if (core::replay::enabled()) ReplayRecorder::get().packets(queue->queue, packets, count, userIndex);
  if (!recordKernels()) {
    written = true;
    return writer(packets, count);
  }
  if (t_outPackets.size() < 4 * count) t_outPackets.resize(4 * count);
  hsa_kernel_dispatch_packet_t* outPackets = t_outPackets.data();
  const auto* in = static_cast<const hsa_kernel_dispatch_packet_t*>(packets);
  uint64_t ticks = core::nowTicks();
  uint32_t thread = core::currentThreadId();
  core::ThreadState* state = core::t_state;
  uint64_t appendIndex = state && core::g_recordApi && state->produced ? state->produced - 1 : ~uint64_t{0};
  uint64_t stack[256];
  uint32_t frames = recordStacks() ? doorbellStack(stack, std::min<uint32_t>(m.stackDepth, 256)) : 0;
  const bool timing = m.loaded.load(std::memory_order_acquire) && queue->capacity;
  // The runtime calls one queue's handler from one thread at a time; should
  // two ever meet, the second's packets go on untimed rather than wait.
  const bool owner = timing && !queue->producing.exchange(true, std::memory_order_acquire);
  uint64_t head = 0;
  if (owner) {
    head = kept = queue->head.load(std::memory_order_relaxed);
    // Completions are read in batches: when this doorbell's packets would
    // not fit, the ring is read up to the first that has not completed.
    if (head + count - queue->tail.load(std::memory_order_acquire) > queue->capacity) m.consume(*queue, false);
  }
  const Tracker::Impl::KernelMap* kernels = m.kernelsView.load(std::memory_order_acquire);
  size_t n = 0;
  for (uint64_t i = 0; i < count; ++i) {
    hsa_kernel_dispatch_packet_t& pkt = outPackets[n++];
    pkt = in[i];
    uint16_t header = pkt.header;
    uint16_t type = packetType(header);
    if (type != HSA_PACKET_TYPE_KERNEL_DISPATCH && type != HSA_PACKET_TYPE_BARRIER_AND &&
        type != HSA_PACKET_TYPE_BARRIER_OR)
      continue;  // vendor-specific and agent packets pass as written
    if (!queue->wanted) {
      // GTAP_QUEUE_FILTER / GTAP_DEVICE_FILTER: as a dispatch the kernel
      // filter leaves out (below), but it still takes its dispatch number.
      if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) m.dispatches.fetch_add(1, std::memory_order_relaxed);
      if (pkt.completion_signal.handle) m.programTimes.put(pkt.completion_signal.handle, false, false, 0, 0);
      continue;
    }
    core::devicework::Header rec;
    rec.device = queue->device;
    rec.queue = queue->id;
    rec.thread = rec.submitThread = thread;
    rec.appendIndex = appendIndex;
    rec.recordedBy = schema::Api::HSA;
    rec.appendTicks = rec.submitTicks = ticks;
    rec.packetHeader = header;
    rec.queueIndex = userIndex + i;
    const KernelInfo* kernel = nullptr;
    hsa_signal_t* completion;
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      // A dispatch the filters leave out goes on exactly as the program wrote
      // it; the program's own profiling queries on its signal then reach the
      // runtime, not times gtap kept from an earlier packet.
      if (kernels) {
        auto k = kernels->find(pkt.kernel_object);
        if (k != kernels->end()) kernel = &k->second;
      }
      bool wanted = kernel ? kernel->wanted : core::config().kernelFilter.empty();
      if (!core::dispatchNumberWanted(m.dispatches.fetch_add(1, std::memory_order_relaxed)) || !wanted) {
        if (pkt.completion_signal.handle) m.programTimes.put(pkt.completion_signal.handle, false, false, 0, 0);
        continue;
      }
      rec.kind = schema::DeviceOpKind::KERNEL;
      rec.gridDims = 3;
      rec.grid = {pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z};
      uint32_t wg[3] = {pkt.workgroup_size_x, pkt.workgroup_size_y, pkt.workgroup_size_z};
      for (int d = 0; d < 3; ++d) {
        rec.groupSize[d] = wg[d];
        rec.groupCount[d] = wg[d] ? (rec.grid[d] + wg[d] - 1) / wg[d] : 0;
      }
      completion = &pkt.completion_signal;
      if (kernel) rec.kernel = kernel->id;
    } else {
      rec.kind = schema::DeviceOpKind::BARRIER;
      completion = &reinterpret_cast<hsa_barrier_and_packet_t*>(&pkt)->completion_signal;
    }
    PacketSlot* slot = nullptr;
    if (owner && head - queue->tail.load(std::memory_order_acquire) < queue->capacity)
      slot = &queue->slots[head & (queue->capacity - 1)];
    if (!slot) {
      if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH && !kernel)
        rec.fixedNote = "the kernel object is not from an executable gtap saw frozen";
      untimed(rec, stack, frames, timing ? "gtap's packets in flight on this queue were too many to time it"
                                         : "gtap could not time it");
      continue;
    }
    slot->rec = rec;
    slot->unknownKernel = type == HSA_PACKET_TYPE_KERNEL_DISPATCH && !kernel ? pkt.kernel_object : 0;
    slot->arguments.clear();
    if (kernel) {
      uint32_t size = std::min(kernel->kernargSize, kMaxKernargBytes);
      if (pkt.kernarg_address && size) {
        auto* a = static_cast<const uint8_t*>(pkt.kernarg_address);
        slot->arguments.assign(a, a + size);
      }
    }
    slot->stack.assign(stack, stack + frames);
    // Counters: the profile's start packet goes before the dispatch, its stop
    // packet after it, all three with the barrier bit, so that the dispatch
    // runs alone between them (measured dispatches are serialised).
    slot->measured = false;
    if (queue->measures && type == HSA_PACKET_TYPE_KERNEL_DISPATCH) {
      hsa_ext_amd_aql_pm4_packet_t start{};
      static_assert(sizeof start == sizeof outPackets[0]);
      if (m.aql.hsa_ven_amd_aqlprofile_start(&slot->profile, &start) == HSA_STATUS_SUCCESS) {
        start.header = kProfileHeader;
        start.completion_signal = hsa_signal_t{0};
        outPackets[n] = outPackets[n - 1];
        std::memcpy(&outPackets[n - 1], &start, sizeof start);
        completion = &outPackets[n].completion_signal;
        outPackets[n].header = static_cast<uint16_t>(outPackets[n].header | (1u << HSA_PACKET_HEADER_BARRIER));
        ++n;
        slot->measured = true;
      }
    }
    slot->program = *completion;
    *completion = slot->mine;
    if (slot->program.handle) {
      hsa_barrier_and_packet_t forward{};
      uint16_t releaseScope = (header >> HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE) &
                              ((1u << HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE) - 1);
      forward.header = static_cast<uint16_t>(
          (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
          (HSA_FENCE_SCOPE_NONE << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
          (releaseScope << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
      forward.dep_signal[0] = slot->mine;
      forward.completion_signal = slot->program;
      static_assert(sizeof forward == sizeof outPackets[0]);
      std::memcpy(&outPackets[n++], &forward, sizeof forward);
    }
    // The stop packet comes after the barrier that completes the program's
    // signal: with its barrier bit it completes only once that barrier has,
    // so when gtap sees it complete nothing waits for gtap's dispatch signal
    // any more and the slot's signals can be reset.
    slot->fenced = false;
    if (slot->measured) {
      hsa_ext_amd_aql_pm4_packet_t stop{};
      if (m.aql.hsa_ven_amd_aqlprofile_stop(&slot->profile, &stop) == HSA_STATUS_SUCCESS) {
        stop.header = kProfileHeader;
        stop.completion_signal = slot->stopped;
      } else {
        // A start without its stop would leave the counters running: a
        // barrier stands in, and the values are not read.
        hsa_barrier_and_packet_t none{};
        none.header = static_cast<uint16_t>((HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
                                            (1u << HSA_PACKET_HEADER_BARRIER));
        none.completion_signal = slot->stopped;
        std::memcpy(&stop, &none, sizeof stop);
      }
      std::memcpy(&outPackets[n++], &stop, sizeof stop);
      slot->fenced = true;
    } else if (slot->program.handle) {
      // Likewise for a packet not measured: a barrier after the one that
      // completes the program's signal tells when gtap's signal may be reset.
      // Reset earlier, a forwarding barrier the packet processor had not yet
      // seen satisfied would wait for gtap's signal for ever (the program
      // would hang).
      hsa_barrier_and_packet_t fence{};
      fence.header = static_cast<uint16_t>((HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
                                           (1u << HSA_PACKET_HEADER_BARRIER));
      fence.completion_signal = slot->stopped;
      std::memcpy(&outPackets[n++], &fence, sizeof fence);
      slot->fenced = true;
    }
    ++head;
    core::testThrowPoint(core::TestSite::hsaPacket);
  }
  if (owner) {
    // Published before the packets go on: a slot's signal is gtap's until
    // the device reaches it, so no reader takes it early.
    queue->head.store(head, std::memory_order_release);
    queue->producing.store(false, std::memory_order_release);
  }
  written = true;
  // No lock of gtap's is held here: the runtime may run the packets (and the
  // program's callbacks) before it returns.
  writer(outPackets, n);
}

}  // namespace gtap::hsa
