// Discovery and set-up the way rocm_bandwidth_test and HIP's runtime do them:
// inside the callbacks the runtime calls. Every HSA call it makes goes through
// COUNTED, which counts it, so a test can hold gtap's call counts against
// what the program says it made, exactly:
//
//   hsa_callbacks [DISPATCHES=4 [ELEMENTS=4096]]
//
// 1. hsa_init; the AMD loader extension table, as HIP asks for it (a runtime
//    without it answers with an error, which is fine);
// 2. hsa_iterate_agents, whose callback asks each agent's type and name
//    (hsa_agent_get_info), then
//    - for the CPU: iterates its pools (hsa_amd_agent_iterate_memory_pools),
//      asking each pool's segment, flags and whether it allocates
//      (hsa_amd_memory_pool_get_info); in the callback of the fine-grained
//      pool it allocates the three vectors (hsa_amd_memory_pool_allocate);
//    - for the GPU: iterates its ISAs (hsa_agent_iterate_isas, name length
//      and name inside), its regions for the kernarg region
//      (hsa_agent_iterate_regions, hsa_region_get_info inside), and creates
//      the queue the dispatches go to (hsa_queue_create);
// 3. loads the code object and finds its kernel by iterating the
//    executable's symbols (hsa_executable_symbol_get_info inside);
// 4. registers a deallocation callback on one vector (it asks the system
//    timestamp when the vector is freed) and an asynchronous handler on the
//    first dispatch's completion signal (run on the runtime's thread, it
//    reads the signal and sets another one, which the program waits for);
// 5. DISPATCHES vector_add dispatches on the queue made in the callback;
// 6. frees, destroys, shuts down.
//
// Lines (hsa_workload.h): alloc, dispatch, free, checksum; then
// "calls NAME COUNT" for every function it called, by name.
#include <hsa/hsa_ven_amd_loader.h>

#include <mutex>

#include "hsa_workload.h"
#include "hsa_workload_args.h"

using namespace workload;

namespace {

std::mutex g_countsLock;
std::map<std::string, uint64_t> g_counts;

void counted(const char* name) {
  std::lock_guard<std::mutex> lock(g_countsLock);
  ++g_counts[name];
}

// Calls an HSA function and counts the call.
#define COUNTED(fn, ...) (counted(#fn), fn(__VA_ARGS__))
#define CHECKED(fn, ...) HSA_CHECK(COUNTED(fn, __VA_ARGS__))

constexpr uint32_t kGroupSize = 64;

struct Found {
  Report* out = nullptr;
  uint32_t elements = 0;
  hsa_agent_t cpu{}, gpu{};
  hsa_region_t kernarg{};
  hsa_queue_t* queue = nullptr;
  float* vectors[3] = {};
  uint32_t pools = 0, isas = 0, regions = 0;
};

hsa_status_t visitPool(hsa_amd_memory_pool_t pool, void* data) {
  auto* f = static_cast<Found*>(data);
  ++f->pools;
  hsa_amd_segment_t segment{};
  uint32_t flags = 0;
  bool allocates = false;
  CHECKED(hsa_amd_memory_pool_get_info, pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
  CHECKED(hsa_amd_memory_pool_get_info, pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allocates);
  if (segment != HSA_AMD_SEGMENT_GLOBAL || !allocates) return HSA_STATUS_SUCCESS;
  CHECKED(hsa_amd_memory_pool_get_info, pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
  if (!(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) || f->vectors[0]) return HSA_STATUS_SUCCESS;
  // The buffers come from the pool found, in its callback.
  for (float*& v : f->vectors) {
    size_t bytes = size_t(f->elements) * sizeof(float);
    CHECKED(hsa_amd_memory_pool_allocate, pool, bytes, 0, reinterpret_cast<void**>(&v));
    f->out->alloc("host", bytes);
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t visitIsa(hsa_isa_t isa, void* data) {
  auto* f = static_cast<Found*>(data);
  ++f->isas;
  uint32_t length = 0;
  CHECKED(hsa_isa_get_info_alt, isa, HSA_ISA_INFO_NAME_LENGTH, &length);
  std::string name(length + 1, '\0');
  CHECKED(hsa_isa_get_info_alt, isa, HSA_ISA_INFO_NAME, name.data());
  return HSA_STATUS_SUCCESS;
}

hsa_status_t visitRegion(hsa_region_t region, void* data) {
  auto* f = static_cast<Found*>(data);
  ++f->regions;
  hsa_region_global_flag_t flags{};
  CHECKED(hsa_region_get_info, region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
  if ((flags & HSA_REGION_GLOBAL_FLAG_KERNARG) && !f->kernarg.handle) f->kernarg = region;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t visitAgent(hsa_agent_t agent, void* data) {
  auto* f = static_cast<Found*>(data);
  hsa_device_type_t type{};
  char name[64] = {};
  CHECKED(hsa_agent_get_info, agent, HSA_AGENT_INFO_DEVICE, &type);
  CHECKED(hsa_agent_get_info, agent, HSA_AGENT_INFO_NAME, name);
  if (type == HSA_DEVICE_TYPE_CPU && !f->cpu.handle) {
    f->cpu = agent;
    CHECKED(hsa_amd_agent_iterate_memory_pools, agent, &visitPool, f);
  } else if (type == HSA_DEVICE_TYPE_GPU && !f->gpu.handle) {
    f->gpu = agent;
    CHECKED(hsa_agent_iterate_isas, agent, &visitIsa, f);
    CHECKED(hsa_agent_iterate_regions, agent, &visitRegion, f);
    // HIP makes its queues while it discovers the devices.
    CHECKED(hsa_queue_create, agent, 64, HSA_QUEUE_TYPE_MULTI, &queueError, nullptr, UINT32_MAX, UINT32_MAX,
            &f->queue);
  }
  return HSA_STATUS_SUCCESS;
}

struct KernelSearch {
  Kernel kernel;
  uint32_t symbols = 0;
};

hsa_status_t visitSymbol(hsa_executable_t, hsa_executable_symbol_t symbol, void* data) {
  auto* k = static_cast<KernelSearch*>(data);
  ++k->symbols;
  hsa_symbol_kind_t kind{};
  CHECKED(hsa_executable_symbol_get_info, symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind);
  if (kind != HSA_SYMBOL_KIND_KERNEL) return HSA_STATUS_SUCCESS;
  uint32_t length = 0;
  CHECKED(hsa_executable_symbol_get_info, symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &length);
  std::string name(length, '\0');
  CHECKED(hsa_executable_symbol_get_info, symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name.data());
  if (name != "vector_add.kd") return HSA_STATUS_SUCCESS;
  k->kernel.name = "vector_add";
  CHECKED(hsa_executable_symbol_get_info, symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k->kernel.object);
  CHECKED(hsa_executable_symbol_get_info, symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
          &k->kernel.kernargSize);
  return HSA_STATUS_SUCCESS;
}

// Runs on the runtime's event thread once the first dispatch completed.
struct Handled {
  hsa_signal_t watched{}, done{};
};

bool onFirstDispatch(hsa_signal_value_t, void* data) {
  auto* h = static_cast<Handled*>(data);
  if (COUNTED(hsa_signal_load_relaxed, h->watched) > 0) std::fprintf(stderr, "handler ran early\n");
  COUNTED(hsa_signal_store_screlease, h->done, 0);
  return false;  // once
}

// Runs inside the free of the vector it was registered for.
void onVectorFreed(void*, void* data) {
  uint64_t now = 0;
  CHECKED(hsa_system_get_info, HSA_SYSTEM_INFO_TIMESTAMP, &now);
  *static_cast<bool*>(data) = true;
}

void waitForZero(hsa_signal_t s) {
  while (COUNTED(hsa_signal_wait_scacquire, s, HSA_SIGNAL_CONDITION_LT, 1, kForever, HSA_WAIT_STATE_BLOCKED) >= 1) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[DISPATCHES [ELEMENTS]]";
  const uint32_t dispatches = countArgument(argc, argv, 1, 4, usage, 100000);
  const uint32_t n = countArgument(argc, argv, 2, 4096, usage);
  noMoreArguments(argc, argv, 2, usage);

  Report out = Report::immediate();
  CHECKED(hsa_init);
  // HIP asks for the loader extension first; a runtime without it says so.
  hsa_ven_amd_loader_1_00_pfn_t loader{};
  COUNTED(hsa_system_get_major_extension_table, HSA_EXTENSION_AMD_LOADER, 1, sizeof loader, &loader);

  Found f;
  f.out = &out;
  f.elements = n;
  CHECKED(hsa_iterate_agents, &visitAgent, &f);
  if (!f.gpu.handle || !f.queue) setupFailed("no GPU agent, or no queue made for it");
  if (!f.vectors[0]) setupFailed("no fine-grained system pool");
  if (!f.kernarg.handle) setupFailed("no kernarg region");

  // The code object, and its kernel found by iterating its symbols.
  std::vector<uint8_t> bytes = readCodeObject(codeObjectPath());
  hsa_code_object_reader_t reader{};
  hsa_executable_t executable{};
  CHECKED(hsa_code_object_reader_create_from_memory, bytes.data(), bytes.size(), &reader);
  CHECKED(hsa_executable_create_alt, HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr,
          &executable);
  CHECKED(hsa_executable_load_agent_code_object, executable, f.gpu, reader, nullptr, nullptr);
  CHECKED(hsa_executable_freeze, executable, nullptr);
  KernelSearch search;
  CHECKED(hsa_executable_iterate_symbols, executable, &visitSymbol, &search);
  if (!search.kernel.object) setupFailed("no vector_add kernel among %u symbols", search.symbols);
  if (search.kernel.kernargSize < sizeof(hsa_vector_add_args)) setupFailed("vector_add's kernarg segment is too small");

  void* kernarg = nullptr;
  CHECKED(hsa_memory_allocate, f.kernarg, search.kernel.kernargSize, &kernarg);
  out.alloc("host", search.kernel.kernargSize);
  std::memset(kernarg, 0, search.kernel.kernargSize);
  float* a = f.vectors[0];
  float* b = f.vectors[1];
  float* c = f.vectors[2];
  *static_cast<hsa_vector_add_args*>(kernarg) = hsa_vector_add_args{a, b, c, n};

  bool freedSeen = false;
  CHECKED(hsa_amd_register_deallocation_callback, c, &onVectorFreed, &freedSeen);

  Handled handled;
  hsa_signal_t completion{};
  CHECKED(hsa_signal_create, 1, 0, nullptr, &completion);
  CHECKED(hsa_signal_create, 1, 0, nullptr, &handled.done);
  handled.watched = completion;
  CHECKED(hsa_amd_signal_async_handler, completion, HSA_SIGNAL_CONDITION_EQ, 0, &onFirstDispatch, &handled);

  Checksum sum;
  for (uint32_t d = 0; d < dispatches; ++d) {
    for (uint32_t i = 0; i < n; ++i) {
      a[i] = float(i % 113) + float(d);
      b[i] = 0.5f * float(i % 7);
      c[i] = -1.0f;
    }
    if (d > 0) COUNTED(hsa_signal_store_relaxed, completion, 1);
    const hsa_kernel_dispatch_packet_t packet = dispatchPacket1d(search.kernel, n, kGroupSize, kernarg, completion);
    uint64_t index = COUNTED(hsa_queue_add_write_index_scacq_screl, f.queue, 1);
    publishPacket(f.queue, index, packet);
    COUNTED(hsa_signal_store_screlease, f.queue->doorbell_signal, static_cast<hsa_signal_value_t>(index));
    out.dispatch(search.kernel.name, packet);
    waitForZero(completion);
    if (d == 0) waitForZero(handled.done);  // the handler has run
    for (uint32_t i = 0; i < n; ++i)
      if (c[i] != a[i] + b[i]) wrongResult("dispatch %u: c[%u] = %g, expected %g", d, i, c[i], a[i] + b[i]);
    sum.add(c, size_t(n) * sizeof(float));
  }
  out.checksum("c", sum);

  for (float* v : f.vectors) {
    CHECKED(hsa_amd_memory_pool_free, v);
    out.free("host", size_t(n) * sizeof(float));
  }
  if (!freedSeen) setupFailed("the deallocation callback did not run");
  CHECKED(hsa_memory_free, kernarg);
  out.free("host", search.kernel.kernargSize);
  CHECKED(hsa_signal_destroy, completion);
  CHECKED(hsa_signal_destroy, handled.done);
  CHECKED(hsa_queue_destroy, f.queue);
  CHECKED(hsa_executable_destroy, executable);
  CHECKED(hsa_code_object_reader_destroy, reader);
  CHECKED(hsa_shut_down);

  std::lock_guard<std::mutex> lock(g_countsLock);
  for (const auto& [name, count] : g_counts)
    std::printf("calls %s %llu\n", name.c_str(), static_cast<unsigned long long>(count));
  return 0;
}
