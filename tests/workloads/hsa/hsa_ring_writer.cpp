// AQL packets written the way IREE's amdgpu driver writes them: a batch of
// slots reserved at once, each packet's fields stored in place in the ring,
// each header published last, one doorbell per batch, and the read index
// watched for room when the ring wraps.
//
//   hsa_ring_writer [DISPATCHES=200 [BATCH=16]]
//
// DISPATCHES ring_fill dispatches go out in batches of BATCH (the last may be
// smaller), each batch followed by a barrier-AND packet with the barrier bit,
// whose completion signal counts the batches down (it is created at their
// number); only the first batch's barrier has a dependency (below). For each batch the program reserves its
// BATCH + 1 slots with one hsa_queue_add_write_index_screlease, waits until
// the read index leaves room for all of them, writes every packet's body
// straight into its slot through the ring's base address (the hsa_queue_t at
// the head of the amd_queue_t) and then its header and setup as one 32-bit
// store with release order, and rings the doorbell once, with
// hsa_signal_store_relaxed, for the whole batch. The ring holds 64 packets,
// fewer than the program writes by default, and the program waits for the
// device only at the end, so the ring wraps while the device works on it.
// The first batch's barrier also waits on a signal the host sets (as a wait
// on a host-signalled semaphore would) when it finds the ring full, or once
// it has claimed more slots than a ring held by that barrier can free,
// whichever comes first (after the last batch when everything fits): so with
// more than 64 packets the program waits for room, unless a tool between it
// and the runtime takes its packets as they come (as intercepted queues do).
//
// Dispatch d fills its own slice of out: out[d * 256 + k] = 1000 d + 3 k,
// from its own kernarg segment; the segments lie back to back in one
// allocation from the kernarg pool, a kernarg ring as IREE keeps one.
//
// Lines: alloc host (out), alloc host (the kernarg segments); per batch one
// "dispatch ring_fill 256 1 1 64 1 1" per dispatch and "barrier and";
// "checksum out"; the frees. How often the program waited for room goes to
// stderr.
#include "hsa_workload.h"
#include "hsa_replay_args.h"

#include <hsa/amd_hsa_queue.h>

#include <algorithm>

using namespace workload;

namespace {

constexpr uint32_t kQueueSize = 64;
constexpr uint32_t kSliceItems = 256;
constexpr uint32_t kGroupSize = 64;

// Hands the slot to the packet processor: header and setup in one release store.
void commit(void* slot, uint16_t header, uint16_t setup) {
  __atomic_store_n(static_cast<uint32_t*>(slot), uint32_t(header) | (uint32_t(setup) << 16), __ATOMIC_RELEASE);
}

// The ring of a queue the program writes itself.
class Ring {
 public:
  explicit Ring(hsa_queue_t* queue)
      : queue_(queue),
        // ROCr's queue begins with the hsa_queue_t the program was given.
        slots_(static_cast<uint8_t*>(reinterpret_cast<amd_queue_t*>(queue)->hsa_queue.base_address)),
        mask_(queue->size - 1) {}

  // The first of `count` consecutive slots, claimed but maybe not yet free.
  uint64_t claim(uint32_t count) { return hsa_queue_add_write_index_screlease(queue_, count); }

  // Whether the packet processor has taken what the slots held before.
  bool free(uint64_t first, uint32_t count) const {
    return first + count - hsa_queue_load_read_index_scacquire(queue_) <= queue_->size;
  }

  void waitUntilFree(uint64_t first, uint32_t count) const {
    while (!free(first, count)) sched_yield();
  }

  template <class Packet>
  Packet* slot(uint64_t index) const {
    static_assert(sizeof(Packet) == 64, "AQL packets are 64 bytes");
    return reinterpret_cast<Packet*>(slots_ + (index & mask_) * 64);
  }

  void ringDoorbell(uint64_t lastIndex) const {
    hsa_signal_store_relaxed(queue_->doorbell_signal, hsa_signal_value_t(lastIndex));
  }

 private:
  hsa_queue_t* queue_;
  uint8_t* slots_;
  uint64_t mask_;
};

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[DISPATCHES [BATCH]]";
  const uint32_t dispatches = countArgument(argc, argv, 1, 200, usage, 100000);
  const uint32_t batch = countArgument(argc, argv, 2, 16, usage, kQueueSize - 1);
  noMoreArguments(argc, argv, 2, usage);
  const uint32_t batches = (dispatches + batch - 1) / batch;

  Report out = Report::immediate();
  Runtime rt;
  rt.open(Runtime::Load::kFromMemory);
  Memory mem(out);

  const Kernel fill = rt.kernel("ring_fill", sizeof(hsa_ring_fill_args));
  const size_t items = size_t(dispatches) * kSliceItems;
  uint32_t* results = mem.allocate<uint32_t>(rt.hostPool, items);
  std::fill(results, results + items, 0xdeadbeefu);
  HSA_CHECK(hsa_amd_agents_allow_access(1, &rt.gpu, nullptr, results));
  const uint32_t alignment = std::max<uint32_t>(fill.kernargAlignment, 16);
  const size_t stride = (size_t(fill.kernargSize) + alignment - 1) / alignment * alignment;
  uint8_t* kernargs = mem.allocate<uint8_t>(rt.kernargPool, stride * dispatches);

  Queue queue(rt, kQueueSize);
  if (queue.handle()->size != kQueueSize)
    setupFailed("asked for a queue of %u packets, got %u", kQueueSize, queue.handle()->size);
  Ring ring(queue.handle());
  hsa_signal_t batchesLeft = createSignal(hsa_signal_value_t(batches));
  hsa_signal_t gate = createSignal(1);
  bool gateOpen = false;
  uint64_t waits = 0;

  const uint16_t dispatchHeader =
      packetHeader(HSA_PACKET_TYPE_KERNEL_DISPATCH, false, HSA_FENCE_SCOPE_AGENT, HSA_FENCE_SCOPE_AGENT);
  const uint16_t dispatchSetup = uint16_t(1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
  const uint16_t barrierHeader =
      packetHeader(HSA_PACKET_TYPE_BARRIER_AND, true, HSA_FENCE_SCOPE_AGENT, HSA_FENCE_SCOPE_SYSTEM);

  // While the gate is closed the packet processor can take no more than the
  // first batch: slots beyond that are never free.
  const uint64_t gatedSlots = kQueueSize + std::min(batch, dispatches) + 1;
  for (uint32_t written = 0; written < dispatches;) {
    const uint32_t count = std::min(batch, dispatches - written);
    const uint64_t first = ring.claim(count + 1);
    const bool full = !ring.free(first, count + 1);
    if (!gateOpen && (full || first + count + 1 > gatedSlots)) {
      hsa_signal_store_screlease(gate, 0);
      gateOpen = true;
    }
    if (full) {
      ++waits;
      ring.waitUntilFree(first, count + 1);
    }
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t d = written + i;
      void* segment = kernargs + size_t(d) * stride;
      const hsa_ring_fill_args args{results + size_t(d) * kSliceItems, 1000u * d, kSliceItems};
      std::memcpy(segment, &args, sizeof args);

      auto* p = ring.slot<hsa_kernel_dispatch_packet_t>(first + i);
      p->workgroup_size_x = kGroupSize;
      p->workgroup_size_y = 1;
      p->workgroup_size_z = 1;
      p->reserved0 = 0;
      p->grid_size_x = kSliceItems;
      p->grid_size_y = 1;
      p->grid_size_z = 1;
      p->private_segment_size = fill.privateSize;
      p->group_segment_size = fill.groupSize;
      p->kernel_object = fill.object;
      p->kernarg_address = segment;
      p->reserved2 = 0;
      p->completion_signal = hsa_signal_t{0};
      out.dispatch(fill.name, *p);  // before the slot is the packet processor's
      commit(p, dispatchHeader, dispatchSetup);
    }
    auto* b = ring.slot<hsa_barrier_and_packet_t>(first + count);
    b->reserved0 = 0;
    b->reserved1 = 0;
    for (hsa_signal_t& dep : b->dep_signal) dep = hsa_signal_t{0};
    if (written == 0) b->dep_signal[0] = gate;
    b->reserved2 = 0;
    b->completion_signal = batchesLeft;
    commit(b, barrierHeader, 0);
    out.barrierAnd();
    ring.ringDoorbell(first + count);
    written += count;
  }
  if (!gateOpen) hsa_signal_store_screlease(gate, 0);
  waitComplete(batchesLeft);
  const uint32_t packets = dispatches + batches;
  std::fprintf(stderr, "hsa_ring_writer: %u packets in a ring of %u, waited for room %llu times\n", packets,
               kQueueSize, static_cast<unsigned long long>(waits));

  for (uint32_t d = 0; d < dispatches; ++d) {
    for (uint32_t k = 0; k < kSliceItems; ++k) {
      const uint32_t got = results[size_t(d) * kSliceItems + k];
      const uint32_t expected = 1000u * d + 3u * k;
      if (got != expected) wrongResult("dispatch %u: out[%u] = %u, expected %u", d, k, got, expected);
    }
  }
  Checksum sum;
  sum.add(results, items * sizeof(uint32_t));
  out.checksum("out", sum);

  HSA_CHECK(hsa_signal_destroy(batchesLeft));
  HSA_CHECK(hsa_signal_destroy(gate));
  queue.destroy();
  mem.free({results, kernargs});
  rt.close();
  return 0;
}
