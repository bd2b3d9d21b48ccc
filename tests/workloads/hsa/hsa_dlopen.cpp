// hsa_vector_add's work, by a program that does not link the HSA runtime:
// like IREE's amdgpu driver it dlopens libhsa-runtime64.so.1 (RTLD_NOW |
// RTLD_LOCAL) and resolves every function it calls with dlsym into a struct
// of function pointers, the AMD extensions (hsa_amd_memory_pool_allocate, ...)
// included. A tool that only interposes the runtime's exported symbols in the
// global scope never sees these calls; one that rewrites the runtime's API
// table does.
//
//   hsa_dlopen [DISPATCHES=4 [ELEMENTS=65536]]
//
// Lines: as hsa_vector_add's.
#define GTAP_HSA_WORKLOAD_NO_LINKED_RUNTIME
#include "hsa_workload.h"
#include "hsa_workload_args.h"

#include <dlfcn.h>
#include <sched.h>

using namespace workload;

namespace {

constexpr uint32_t kGroupSize = 256;
constexpr const char* kLibrary = "libhsa-runtime64.so.1";

// Every runtime function the program calls. decltype only names the
// declarations in hsa.h: nothing here refers to a linked symbol.
#define HSA_DLOPEN_FUNCTIONS(X)               \
  X(hsa_init)                                 \
  X(hsa_shut_down)                            \
  X(hsa_iterate_agents)                       \
  X(hsa_agent_get_info)                       \
  X(hsa_agent_iterate_regions)                \
  X(hsa_region_get_info)                      \
  X(hsa_amd_agent_iterate_memory_pools)       \
  X(hsa_amd_memory_pool_get_info)             \
  X(hsa_amd_memory_pool_allocate)             \
  X(hsa_amd_memory_pool_free)                 \
  X(hsa_memory_allocate)                      \
  X(hsa_memory_free)                          \
  X(hsa_code_object_reader_create_from_memory) \
  X(hsa_code_object_reader_destroy)           \
  X(hsa_executable_create_alt)                \
  X(hsa_executable_load_agent_code_object)    \
  X(hsa_executable_freeze)                    \
  X(hsa_executable_get_symbol_by_name)        \
  X(hsa_executable_symbol_get_info)           \
  X(hsa_executable_destroy)                   \
  X(hsa_queue_create)                         \
  X(hsa_queue_destroy)                        \
  X(hsa_queue_add_write_index_scacq_screl)    \
  X(hsa_queue_load_read_index_scacquire)      \
  X(hsa_signal_create)                        \
  X(hsa_signal_destroy)                       \
  X(hsa_signal_store_relaxed)                 \
  X(hsa_signal_store_screlease)               \
  X(hsa_signal_wait_scacquire)

struct Hsa {
  void* library = nullptr;
#define HSA_DLOPEN_MEMBER(name) decltype(&::name) name = nullptr;
  HSA_DLOPEN_FUNCTIONS(HSA_DLOPEN_MEMBER)
#undef HSA_DLOPEN_MEMBER

  void load() {
    library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) setupFailed("dlopen(%s): %s", kLibrary, dlerror());
#define HSA_DLOPEN_RESOLVE(fn)                                                   \
  fn = reinterpret_cast<decltype(fn)>(dlsym(library, #fn));                      \
  if (fn == nullptr) setupFailed("dlsym(%s, %s): %s", kLibrary, #fn, dlerror());
    HSA_DLOPEN_FUNCTIONS(HSA_DLOPEN_RESOLVE)
#undef HSA_DLOPEN_RESOLVE
  }

  void unload() {
    if (dlclose(library) != 0) setupFailed("dlclose(%s): %s", kLibrary, dlerror());
    library = nullptr;
  }
};

// What the program finds: the agents, the kernarg region, a fine-grained
// system pool.
struct Found {
  const Hsa* hsa;
  hsa_agent_t cpu{};
  hsa_agent_t gpu{};
  hsa_region_t kernargRegion{};
  hsa_amd_memory_pool_t hostPool{};
};

hsa_status_t visitAgent(hsa_agent_t agent, void* data) {
  auto* found = static_cast<Found*>(data);
  hsa_device_type_t type{};
  HSA_CHECK(found->hsa->hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
  if (type == HSA_DEVICE_TYPE_CPU && found->cpu.handle == 0) found->cpu = agent;
  if (type == HSA_DEVICE_TYPE_GPU && found->gpu.handle == 0) {
    uint32_t features = 0;
    HSA_CHECK(found->hsa->hsa_agent_get_info(agent, HSA_AGENT_INFO_FEATURE, &features));
    if (features & HSA_AGENT_FEATURE_KERNEL_DISPATCH) found->gpu = agent;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t visitRegion(hsa_region_t region, void* data) {
  auto* found = static_cast<Found*>(data);
  hsa_region_segment_t segment{};
  HSA_CHECK(found->hsa->hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &segment));
  uint32_t flags = 0;
  if (segment == HSA_REGION_SEGMENT_GLOBAL) {
    HSA_CHECK(found->hsa->hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags));
  }
  if ((flags & HSA_REGION_GLOBAL_FLAG_KERNARG) && found->kernargRegion.handle == 0) found->kernargRegion = region;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t visitCpuPool(hsa_amd_memory_pool_t pool, void* data) {
  auto* found = static_cast<Found*>(data);
  hsa_amd_segment_t segment{};
  HSA_CHECK(found->hsa->hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
  if (segment != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  bool allowed = false;
  HSA_CHECK(found->hsa->hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed));
  uint32_t flags = 0;
  HSA_CHECK(found->hsa->hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (allowed && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) &&
      !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && found->hostPool.handle == 0) {
    found->hostPool = pool;
  }
  return HSA_STATUS_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "[DISPATCHES [ELEMENTS]]";
  const uint32_t dispatches = countArgument(argc, argv, 1, 4, usage, 100000);
  const uint32_t n = countArgument(argc, argv, 2, 1u << 16, usage);
  noMoreArguments(argc, argv, 2, usage);
  const size_t bytes = size_t(n) * sizeof(float);

  Report out = Report::immediate();
  Hsa hsa;
  hsa.load();
  HSA_CHECK(hsa.hsa_init());

  Found found{&hsa};
  HSA_CHECK(hsa.hsa_iterate_agents(visitAgent, &found));
  if (found.gpu.handle == 0 || found.cpu.handle == 0)
    setupFailed("no HSA GPU agent with kernel dispatch, or no CPU agent");
  HSA_CHECK(hsa.hsa_agent_iterate_regions(found.gpu, visitRegion, &found));
  HSA_CHECK(hsa.hsa_amd_agent_iterate_memory_pools(found.cpu, visitCpuPool, &found));
  if (found.kernargRegion.handle == 0) setupFailed("the GPU has no kernarg region");
  if (found.hostPool.handle == 0) setupFailed("the CPU has no fine-grained memory pool");

  // The code object, from memory; the bytes outlive the reader.
  const std::string path = codeObjectPath();
  const std::vector<uint8_t> bytesOfCode = readCodeObject(path);
  hsa_code_object_reader_t reader{};
  HSA_CHECK(hsa.hsa_code_object_reader_create_from_memory(bytesOfCode.data(), bytesOfCode.size(), &reader));
  hsa_profile_t profile{};
  HSA_CHECK(hsa.hsa_agent_get_info(found.gpu, HSA_AGENT_INFO_PROFILE, &profile));
  hsa_executable_t executable{};
  HSA_CHECK(hsa.hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr, &executable));
  HSA_CHECK(hsa.hsa_executable_load_agent_code_object(executable, found.gpu, reader, nullptr, nullptr));
  HSA_CHECK(hsa.hsa_executable_freeze(executable, nullptr));
  hsa_executable_symbol_t symbol{};
  HSA_CHECK(hsa.hsa_executable_get_symbol_by_name(executable, "vector_add.kd", &found.gpu, &symbol));
  Kernel vectorAdd;
  vectorAdd.name = "vector_add";
  HSA_CHECK(hsa.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &vectorAdd.object));
  HSA_CHECK(hsa.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                               &vectorAdd.kernargSize));
  HSA_CHECK(hsa.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                               &vectorAdd.groupSize));
  HSA_CHECK(hsa.hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                               &vectorAdd.privateSize));
  if (vectorAdd.kernargSize < sizeof(hsa_vector_add_args))
    setupFailed("vector_add.kd: kernarg segment of %u bytes, the program passes %zu", vectorAdd.kernargSize,
                sizeof(hsa_vector_add_args));

  // Buffers from the pool, the kernarg segment from the region, as hsa_vector_add.
  auto poolAllocate = [&](size_t size) {
    void* p = nullptr;
    HSA_CHECK(hsa.hsa_amd_memory_pool_allocate(found.hostPool, size, 0, &p));
    out.alloc("host", size);
    return static_cast<float*>(p);
  };
  float* a = poolAllocate(bytes);
  float* b = poolAllocate(bytes);
  float* c = poolAllocate(bytes);
  void* kernargMemory = nullptr;
  HSA_CHECK(hsa.hsa_memory_allocate(found.kernargRegion, vectorAdd.kernargSize, &kernargMemory));
  out.alloc("host", vectorAdd.kernargSize);
  std::memset(kernargMemory, 0, vectorAdd.kernargSize);
  const hsa_vector_add_args args{a, b, c, n};
  std::memcpy(kernargMemory, &args, sizeof args);

  hsa_queue_t* queue = nullptr;
  HSA_CHECK(hsa.hsa_queue_create(
      found.gpu, 64, HSA_QUEUE_TYPE_MULTI,
      [](hsa_status_t status, hsa_queue_t*, void*) {
        std::fprintf(stderr, "queue failed: %s (0x%x)\n", statusName(status), static_cast<unsigned>(status));
        std::fflush(stderr);
        std::_Exit(kExitHsaFailure);
      },
      nullptr, UINT32_MAX, UINT32_MAX, &queue));
  hsa_signal_t done{};
  HSA_CHECK(hsa.hsa_signal_create(1, 0, nullptr, &done));

  Checksum sum;
  for (uint32_t d = 0; d < dispatches; ++d) {
    for (uint32_t i = 0; i < n; ++i) {
      a[i] = 0.5f * float(i) + float(d);
      b[i] = 0.25f * float(i % 97) - float(d);
      c[i] = -1.0f;
    }
    hsa.hsa_signal_store_relaxed(done, 1);
    const hsa_kernel_dispatch_packet_t packet = dispatchPacket1d(vectorAdd, n, kGroupSize, kernargMemory, done);
    const uint64_t index = hsa.hsa_queue_add_write_index_scacq_screl(queue, 1);
    while (index - hsa.hsa_queue_load_read_index_scacquire(queue) >= queue->size) sched_yield();
    publishPacket(queue, index, packet);
    hsa.hsa_signal_store_screlease(queue->doorbell_signal, hsa_signal_value_t(index));
    out.dispatch(vectorAdd.name, packet);
    while (hsa.hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, kForever, HSA_WAIT_STATE_BLOCKED) >= 1) {
    }
    for (uint32_t i = 0; i < n; ++i) {
      if (c[i] != a[i] + b[i]) wrongResult("dispatch %u: c[%u] = %g, expected %g", d, i, c[i], a[i] + b[i]);
    }
    sum.add(c, bytes);
  }
  out.checksum("c", sum);

  HSA_CHECK(hsa.hsa_signal_destroy(done));
  HSA_CHECK(hsa.hsa_queue_destroy(queue));
  for (float* p : {a, b, c}) {
    HSA_CHECK(hsa.hsa_amd_memory_pool_free(p));
    out.free("host", bytes);
  }
  HSA_CHECK(hsa.hsa_memory_free(kernargMemory));
  out.free("host", vectorAdd.kernargSize);
  HSA_CHECK(hsa.hsa_executable_destroy(executable));
  HSA_CHECK(hsa.hsa_code_object_reader_destroy(reader));
  HSA_CHECK(hsa.hsa_shut_down());
  hsa.unload();
  return 0;
}
