// What the HSA workloads share: checked calls, the runtime set-up (GPU agent,
// memory pools, code object, kernels), AQL packets and queues, and the lines
// they print for tests to compare against gtap.
//
// Stdout carries only these lines (diagnostics go to stderr):
//   dispatch KERNEL GX GY GZ WX WY WZ   one per kernel dispatch packet: grid size, then
//                                       workgroup size (x y z, 1 for unused dimensions)
//   barrier and|or                      one per barrier-AND / barrier-OR packet
//   copy BYTES                          one per hsa_amd_memory_async_copy or hsa_memory_copy
//   alloc host|device BYTES             one per hsa_amd_memory_pool_allocate / hsa_memory_allocate
//                                       (host: a pool or region owned by the CPU agent,
//                                       device: one owned by the GPU)
//   free host|device BYTES              one per free, naming what it frees
//   lock BYTES                          one per hsa_amd_memory_lock of the program's own
//                                       host memory
//   unlock BYTES                        one per hsa_amd_memory_unlock, naming what it unlocks
//   checksum NAME HEX                   FNV-1a 64 of results, identical with and without an interposer
//   timestamp KERNEL NS                 (hsa_own_timestamps only) a device duration the
//                                       program read itself
//   calls FUNCTION N                    (hsa_callbacks only, at the end) how many times the
//                                       program called the HSA function, callbacks included
// KERNEL is the kernel's name without the ".kd" suffix. A packet's line is
// printed when the program writes the packet, a copy's when it asks for it.
//
// The exception is hsa_dispatch_loop, a benchmark: it prints only
//   dispatches N                        how many kernel dispatch packets it wrote
//   checksum NAME HEX
// at the end, and its elapsed time on stderr.
//
// Exit status: 0 success; 1 an HSA call failed (the message names the call and
// the status), or the runtime lacks what the program needs (a GPU, a pool,
// the code object, a kernel whose kernarg segment fits); 2 wrong results;
// 64 bad arguments.
//
// Everything up to "The linked runtime" calls no HSA function, so that
// hsa_dlopen, which resolves them all with dlsym, can use it; it defines
// GTAP_HSA_WORKLOAD_NO_LINKED_RUNTIME to leave out the rest.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <string>
#include <time.h>
#include <vector>

#ifndef GTAP_HSA_WORKLOAD_NO_LINKED_RUNTIME
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#endif

namespace workload {

inline constexpr int kExitHsaFailure = 1;
inline constexpr int kExitWrongResult = 2;
inline constexpr int kExitUsage = 64;
inline constexpr uint64_t kForever = UINT64_MAX;

// The status's name, without asking the runtime (hsa_status_string), which
// may be the thing that is broken, or not linked at all.
inline const char* statusName(hsa_status_t status) {
  switch (static_cast<int>(status)) {
#define GTAP_HSA_WORKLOAD_STATUS(name) \
  case name:                           \
    return #name;
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_SUCCESS)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_INFO_BREAK)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_ARGUMENT)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_ALLOCATION)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_AGENT)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_REGION)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_QUEUE)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_OUT_OF_RESOURCES)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_RESOURCE_FREE)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_NOT_INITIALIZED)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_INDEX)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_ISA)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_ISA_NAME)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_FROZEN_EXECUTABLE)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_VARIABLE_UNDEFINED)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_EXCEPTION)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_CODE_SYMBOL)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_FILE)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_CACHE)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_WAVEFRONT)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_RUNTIME_STATE)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_FATAL)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_INVALID_MEMORY_POOL)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_ERROR_MEMORY_FAULT)
    GTAP_HSA_WORKLOAD_STATUS(HSA_STATUS_CU_MASK_REDUCED)
#undef GTAP_HSA_WORKLOAD_STATUS
  }
  return "unknown status";
}

[[noreturn]] inline void hsaFailed(const char* call, hsa_status_t status, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: %s failed: %s (0x%x)\n", file, line, call, statusName(status),
               static_cast<unsigned>(status));
  std::exit(kExitHsaFailure);
}

// Every HSA call that returns a status goes through this; a failure names
// the call and the status and ends the program.
#define HSA_CHECK(call)                                                                   \
  do {                                                                                    \
    hsa_status_t hsa_check_status_ = (call);                                              \
    if (hsa_check_status_ != HSA_STATUS_SUCCESS)                                          \
      ::workload::hsaFailed(#call, hsa_check_status_, __FILE__, __LINE__);                \
  } while (0)

// The runtime lacks something the program needs.
[[noreturn]] __attribute__((format(printf, 1, 2))) inline void setupFailed(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
  std::exit(kExitHsaFailure);
}

[[noreturn]] __attribute__((format(printf, 1, 2))) inline void wrongResult(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fputs("wrong result: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
  std::exit(kExitWrongResult);
}

// argv[index] as a positive count no larger than `maximum`, or `fallback` when absent.
inline uint32_t countArgument(int argc, char** argv, int index, uint32_t fallback, const char* usage,
                              uint32_t maximum = 1u << 24) {
  if (index >= argc) return fallback;
  char* end = nullptr;
  unsigned long value = std::strtoul(argv[index], &end, 10);
  if (*argv[index] == '\0' || *argv[index] == '-' || *end != '\0' || value == 0 || value > maximum) {
    std::fprintf(stderr, "usage: %s %s (counts from 1 to %u)\n", argv[0], usage, maximum);
    std::exit(kExitUsage);
  }
  return static_cast<uint32_t>(value);
}

inline void noMoreArguments(int argc, char** argv, int used, const char* usage) {
  if (argc > used + 1) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    std::exit(kExitUsage);
  }
}

// FNV-1a, 64 bits: stable across runs and builds, unlike std::hash.
class Checksum {
 public:
  void add(const void* data, size_t bytes) {
    auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < bytes; ++i) {
      hash_ ^= p[i];
      hash_ *= 0x100000001b3ull;
    }
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

// Lines for stdout, printed as they come or held back (by a thread, to keep
// the output in a fixed order).
class Report {
 public:
  static Report immediate() { return Report(false); }
  static Report held() { return Report(true); }

  void dispatch(const std::string& kernel, const hsa_kernel_dispatch_packet_t& p) {
    add("dispatch %s %u %u %u %u %u %u", kernel.c_str(), p.grid_size_x, p.grid_size_y, p.grid_size_z,
        unsigned(p.workgroup_size_x), unsigned(p.workgroup_size_y), unsigned(p.workgroup_size_z));
  }
  void barrierAnd() { add("barrier and"); }
  void barrierOr() { add("barrier or"); }
  void copy(size_t bytes) { add("copy %zu", bytes); }
  void alloc(const char* kind, size_t bytes) { add("alloc %s %zu", kind, bytes); }
  void free(const char* kind, size_t bytes) { add("free %s %zu", kind, bytes); }
  void lock(size_t bytes) { add("lock %zu", bytes); }
  void unlock(size_t bytes) { add("unlock %zu", bytes); }
  void checksum(const std::string& name, const Checksum& sum) {
    add("checksum %s %016llx", name.c_str(), static_cast<unsigned long long>(sum.value()));
  }
  void timestamp(const std::string& kernel, uint64_t ns) {
    add("timestamp %s %llu", kernel.c_str(), static_cast<unsigned long long>(ns));
  }
  void dispatches(uint64_t count) { add("dispatches %llu", static_cast<unsigned long long>(count)); }

  void print() const {
    for (const auto& line : lines_) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

 private:
  explicit Report(bool held) : held_(held) {}

  __attribute__((format(printf, 2, 3))) void add(const char* format, ...) {
    char line[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (held_) {
      lines_.push_back(line);
    } else {
      std::printf("%s\n", line);
      std::fflush(stdout);
    }
  }

  bool held_;
  std::vector<std::string> lines_;
};

// The code object: GTAP_SIM_KERNELS_DIR/<file> when that variable is set,
// else the path the build compiled in.
inline std::string codeObjectPath() {
  const char* dir = std::getenv("GTAP_SIM_KERNELS_DIR");
  if (dir != nullptr && *dir != '\0') return std::string(dir) + "/" + GTAP_HSA_WORKLOAD_KERNELS_FILE;
  return GTAP_HSA_WORKLOAD_KERNELS_PATH;
}

inline std::vector<uint8_t> readCodeObject(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(in), {});
  if (bytes.empty()) setupFailed("cannot read the code object %s", path.c_str());
  return bytes;
}

inline uint64_t hostNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// --- AQL packets ------------------------------------------------------------

// A packet header: type, barrier bit, acquire and release fence scopes.
inline uint16_t packetHeader(hsa_packet_type_t type, bool barrier, hsa_fence_scope_t acquire,
                             hsa_fence_scope_t release) {
  return uint16_t((type << HSA_PACKET_HEADER_TYPE) | ((barrier ? 1 : 0) << HSA_PACKET_HEADER_BARRIER) |
                  (acquire << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                  (release << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

// The fence scopes and barrier bit a packet is written with.
struct Fences {
  bool barrier = false;
  hsa_fence_scope_t acquire = HSA_FENCE_SCOPE_SYSTEM;
  hsa_fence_scope_t release = HSA_FENCE_SCOPE_SYSTEM;
};

// What a dispatch needs of a kernel symbol.
struct Kernel {
  std::string name;  // without ".kd"
  uint64_t object = 0;
  uint32_t kernargSize = 0;
  uint32_t kernargAlignment = 0;
  uint32_t groupSize = 0;    // static group segment bytes
  uint32_t privateSize = 0;  // static private segment bytes per work-item
};

// A kernel dispatch packet, header included (publishPacket writes it last),
// with as many dimensions as the sizes use (unused ones are 1 in both).
// `dynamicGroupBytes` adds to the kernel's static group segment.
inline hsa_kernel_dispatch_packet_t dispatchPacket(const Kernel& kernel, const uint32_t grid[3],
                                                   const uint32_t workgroup[3], const void* kernarg,
                                                   hsa_signal_t completion, const Fences& fences = {},
                                                   uint32_t dynamicGroupBytes = 0) {
  hsa_kernel_dispatch_packet_t p{};
  uint32_t dims = grid[2] > 1 || workgroup[2] > 1 ? 3 : grid[1] > 1 || workgroup[1] > 1 ? 2 : 1;
  p.header = packetHeader(HSA_PACKET_TYPE_KERNEL_DISPATCH, fences.barrier, fences.acquire, fences.release);
  p.setup = uint16_t(dims << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
  p.workgroup_size_x = uint16_t(workgroup[0]);
  p.workgroup_size_y = uint16_t(workgroup[1]);
  p.workgroup_size_z = uint16_t(workgroup[2]);
  p.grid_size_x = grid[0];
  p.grid_size_y = grid[1];
  p.grid_size_z = grid[2];
  p.private_segment_size = kernel.privateSize;
  p.group_segment_size = kernel.groupSize + dynamicGroupBytes;
  p.kernel_object = kernel.object;
  p.kernarg_address = const_cast<void*>(kernarg);
  p.completion_signal = completion;
  return p;
}

// A one-dimensional dispatch of `items` work-items in groups of `groupItems`.
inline hsa_kernel_dispatch_packet_t dispatchPacket1d(const Kernel& kernel, uint32_t items, uint32_t groupItems,
                                                     const void* kernarg, hsa_signal_t completion,
                                                     const Fences& fences = {}, uint32_t dynamicGroupBytes = 0) {
  const uint32_t grid[3] = {items, 1, 1};
  const uint32_t workgroup[3] = {groupItems, 1, 1};
  return dispatchPacket(kernel, grid, workgroup, kernarg, completion, fences, dynamicGroupBytes);
}

// A barrier-AND (or, with `any`, barrier-OR) packet on up to five signals;
// the two packet types have the same layout.
inline hsa_barrier_and_packet_t barrierPacket(bool any, std::initializer_list<hsa_signal_t> dependencies,
                                              hsa_signal_t completion, const Fences& fences = {}) {
  static_assert(sizeof(hsa_barrier_and_packet_t) == sizeof(hsa_barrier_or_packet_t));
  hsa_barrier_and_packet_t p{};
  p.header = packetHeader(any ? HSA_PACKET_TYPE_BARRIER_OR : HSA_PACKET_TYPE_BARRIER_AND, fences.barrier,
                          fences.acquire, fences.release);
  size_t i = 0;
  for (hsa_signal_t s : dependencies) {
    if (i == 5) setupFailed("a barrier packet holds at most five dependencies");
    p.dep_signal[i++] = s;
  }
  p.completion_signal = completion;
  return p;
}

// Writes `packet` into the ring slot of `index`: the body first, then the
// first 32 bits (header and setup, or header and reserved field) with one
// release store, which hands the slot to the packet processor.
template <class Packet>
void publishPacket(hsa_queue_t* queue, uint64_t index, const Packet& packet) {
  static_assert(sizeof(Packet) == 64, "AQL packets are 64 bytes");
  auto* slot = static_cast<uint8_t*>(queue->base_address) + (index & (queue->size - 1)) * 64;
  std::memcpy(slot + 4, reinterpret_cast<const uint8_t*>(&packet) + 4, 60);
  uint32_t word;
  std::memcpy(&word, &packet, sizeof word);
  __atomic_store_n(reinterpret_cast<uint32_t*>(slot), word, __ATOMIC_RELEASE);
}

#ifndef GTAP_HSA_WORKLOAD_NO_LINKED_RUNTIME

// === The linked runtime ===================================================

// A global pool and the kind its allocations are reported as.
struct Pool {
  hsa_amd_memory_pool_t pool{};
  const char* kind = "host";
};

// The GPU agent, the memory programs use, and the code object, loaded into
// an executable for the GPU.
class Runtime {
 public:
  enum class Load { kFromMemory, kFromFile };

  hsa_agent_t cpu{};
  hsa_agent_t gpu{};
  hsa_region_t kernargRegion{};  // the GPU's kernarg region (system memory)
  Pool kernargPool;              // the CPU's pool with KERNARG_INIT
  Pool hostPool;                 // the CPU's fine-grained pool
  Pool devicePool;               // the GPU's coarse-grained pool
  hsa_executable_t executable{};

  Runtime() = default;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  void open(Load how = Load::kFromMemory) {
    HSA_CHECK(hsa_init());
    HSA_CHECK(hsa_iterate_agents(&Runtime::visitAgent, this));
    if (gpu.handle == 0) setupFailed("no HSA GPU agent with kernel dispatch found");
    if (cpu.handle == 0) setupFailed("no HSA CPU agent found");
    HSA_CHECK(hsa_agent_iterate_regions(gpu, &Runtime::visitRegion, this));
    if (kernargRegion.handle == 0) setupFailed("the GPU has no kernarg region");
    HSA_CHECK(hsa_amd_agent_iterate_memory_pools(cpu, &Runtime::visitCpuPool, this));
    HSA_CHECK(hsa_amd_agent_iterate_memory_pools(gpu, &Runtime::visitGpuPool, this));
    if (kernargPool.pool.handle == 0) setupFailed("the CPU has no kernarg memory pool");
    if (hostPool.pool.handle == 0) setupFailed("the CPU has no fine-grained memory pool");
    if (devicePool.pool.handle == 0) setupFailed("the GPU has no memory pool");
    kernargPool.kind = hostPool.kind = "host";
    devicePool.kind = "device";
    loadCodeObject(how);
  }

  void close() {
    HSA_CHECK(hsa_executable_destroy(executable));
    HSA_CHECK(hsa_code_object_reader_destroy(reader_));
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    HSA_CHECK(hsa_shut_down());
  }

  // The kernel "<name>.kd", whose kernarg segment must hold `argsBytes`.
  Kernel kernel(const char* name, size_t argsBytes) const {
    Kernel k;
    k.name = name;
    const std::string symbolName = k.name + ".kd";
    hsa_executable_symbol_t symbol{};
    HSA_CHECK(hsa_executable_get_symbol_by_name(executable, symbolName.c_str(), &gpu, &symbol));
    hsa_symbol_kind_t kind{};
    HSA_CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
    if (kind != HSA_SYMBOL_KIND_KERNEL) setupFailed("%s is not a kernel", symbolName.c_str());
    HSA_CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k.object));
    HSA_CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                             &k.kernargSize));
    HSA_CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT,
                                             &k.kernargAlignment));
    HSA_CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                             &k.groupSize));
    HSA_CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                             &k.privateSize));
    if (k.kernargSize < argsBytes)
      setupFailed("%s: kernarg segment of %u bytes, the program passes %zu", symbolName.c_str(), k.kernargSize,
                  argsBytes);
    return k;
  }

  uint64_t systemTimestamp() const {
    uint64_t t = 0;
    HSA_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t));
    return t;
  }

 private:
  static hsa_status_t visitAgent(hsa_agent_t agent, void* data) {
    auto* self = static_cast<Runtime*>(data);
    hsa_device_type_t type{};
    HSA_CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_CPU && self->cpu.handle == 0) self->cpu = agent;
    if (type == HSA_DEVICE_TYPE_GPU && self->gpu.handle == 0) {
      uint32_t features = 0;
      HSA_CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_FEATURE, &features));
      if (features & HSA_AGENT_FEATURE_KERNEL_DISPATCH) self->gpu = agent;
    }
    return HSA_STATUS_SUCCESS;
  }

  static hsa_status_t visitRegion(hsa_region_t region, void* data) {
    auto* self = static_cast<Runtime*>(data);
    hsa_region_segment_t segment{};
    HSA_CHECK(hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &segment));
    if (segment != HSA_REGION_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
    uint32_t flags = 0;
    HSA_CHECK(hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags));
    if ((flags & HSA_REGION_GLOBAL_FLAG_KERNARG) && self->kernargRegion.handle == 0) {
      bool allowed = false;
      HSA_CHECK(hsa_region_get_info(region, HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED, &allowed));
      if (allowed) self->kernargRegion = region;
    }
    return HSA_STATUS_SUCCESS;
  }

  // A global pool the runtime allocates from; its global flags in `flags`.
  static bool allocatablePool(hsa_amd_memory_pool_t pool, uint32_t* flags) {
    hsa_amd_segment_t segment{};
    HSA_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
    if (segment != HSA_AMD_SEGMENT_GLOBAL) return false;
    bool allowed = false;
    HSA_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed));
    if (!allowed) return false;
    HSA_CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, flags));
    return true;
  }

  static hsa_status_t visitCpuPool(hsa_amd_memory_pool_t pool, void* data) {
    auto* self = static_cast<Runtime*>(data);
    uint32_t flags = 0;
    if (!allocatablePool(pool, &flags)) return HSA_STATUS_SUCCESS;
    if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) {
      if (self->kernargPool.pool.handle == 0) self->kernargPool.pool = pool;
    } else if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) {
      if (self->hostPool.pool.handle == 0) self->hostPool.pool = pool;
    }
    return HSA_STATUS_SUCCESS;
  }

  static hsa_status_t visitGpuPool(hsa_amd_memory_pool_t pool, void* data) {
    auto* self = static_cast<Runtime*>(data);
    uint32_t flags = 0;
    if (!allocatablePool(pool, &flags)) return HSA_STATUS_SUCCESS;
    if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && self->devicePool.pool.handle == 0)
      self->devicePool.pool = pool;
    return HSA_STATUS_SUCCESS;
  }

  void loadCodeObject(Load how) {
    const std::string path = codeObjectPath();
    if (how == Load::kFromMemory) {
      // The bytes stay alive until the reader is destroyed, as the specification asks.
      bytes_ = readCodeObject(path);
      HSA_CHECK(hsa_code_object_reader_create_from_memory(bytes_.data(), bytes_.size(), &reader_));
    } else {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) setupFailed("cannot open the code object %s", path.c_str());
      HSA_CHECK(hsa_code_object_reader_create_from_file(fd_, &reader_));
    }
    hsa_profile_t profile{};
    HSA_CHECK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_PROFILE, &profile));
    HSA_CHECK(hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr, &executable));
    HSA_CHECK(hsa_executable_load_agent_code_object(executable, gpu, reader_, nullptr, nullptr));
    HSA_CHECK(hsa_executable_freeze(executable, nullptr));
    uint32_t result = 0;
    HSA_CHECK(hsa_executable_validate(executable, &result));
    if (result != 0) setupFailed("the executable of %s does not validate (%u)", path.c_str(), result);
  }

  hsa_code_object_reader_t reader_{};
  std::vector<uint8_t> bytes_;
  int fd_ = -1;
};

// How an allocation is freed: hsa_amd_memory_pool_free or hsa_memory_free.
enum class FreeWith { kPool, kRegion };

// Allocations of one thread, reported as they are made and freed.
class Memory {
 public:
  explicit Memory(Report& report) : report_(report) {}
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  ~Memory() {
    if (!live_.empty()) std::fprintf(stderr, "%zu allocations never freed\n", live_.size());
  }

  // hsa_amd_memory_pool_allocate
  template <class T>
  T* allocate(const Pool& pool, size_t count) {
    void* p = nullptr;
    HSA_CHECK(hsa_amd_memory_pool_allocate(pool.pool, count * sizeof(T), 0, &p));
    adopt(p, pool.kind, count * sizeof(T), FreeWith::kPool);
    return static_cast<T*>(p);
  }

  // hsa_memory_allocate, from a region `kind` describes.
  template <class T>
  T* allocate(hsa_region_t region, const char* kind, size_t count) {
    void* p = nullptr;
    HSA_CHECK(hsa_memory_allocate(region, count * sizeof(T), &p));
    adopt(p, kind, count * sizeof(T), FreeWith::kRegion);
    return static_cast<T*>(p);
  }

  // A kernarg segment of `kernel` from `pool`, holding `args`.
  template <class Args>
  Args* kernarg(const Pool& pool, const Kernel& kernel, const Args& args) {
    void* p = nullptr;
    HSA_CHECK(hsa_amd_memory_pool_allocate(pool.pool, kernel.kernargSize, 0, &p));
    adopt(p, pool.kind, kernel.kernargSize, FreeWith::kPool);
    std::memset(p, 0, kernel.kernargSize);
    std::memcpy(p, &args, sizeof args);
    return static_cast<Args*>(p);
  }

  void free(void* p) {
    auto it = live_.find(p);
    if (it == live_.end()) {
      std::fprintf(stderr, "free of %p, which this program did not allocate\n", p);
      std::exit(kExitWrongResult);
    }
    if (it->second.with == FreeWith::kPool) {
      HSA_CHECK(hsa_amd_memory_pool_free(p));
    } else {
      HSA_CHECK(hsa_memory_free(p));
    }
    report_.free(it->second.kind, it->second.bytes);
    live_.erase(it);
  }
  void free(std::initializer_list<void*> ps) {
    for (void* p : ps) free(p);
  }

 private:
  struct Allocation {
    const char* kind;
    size_t bytes;
    FreeWith with;
  };

  void adopt(void* p, const char* kind, size_t bytes, FreeWith with) {
    live_[p] = {kind, bytes, with};
    report_.alloc(kind, bytes);
  }

  Report& report_;
  std::map<void*, Allocation> live_;
};

// A queue error ends the program: nothing it waits for would ever complete.
inline void queueError(hsa_status_t status, hsa_queue_t* source, void*) {
  std::fprintf(stderr, "queue %llu failed: %s (0x%x)\n",
               static_cast<unsigned long long>(source != nullptr ? source->id : 0), statusName(status),
               static_cast<unsigned>(status));
  std::fflush(stderr);
  std::_Exit(kExitHsaFailure);
}

// An AQL queue on the GPU, written to as programs do: reserve slots by moving
// the write index, wait while the ring has no room, write the packets
// (publishPacket), ring the doorbell with the last index.
class Queue {
 public:
  Queue(const Runtime& rt, uint32_t size) {
    HSA_CHECK(hsa_queue_create(rt.gpu, size, HSA_QUEUE_TYPE_MULTI, &queueError, nullptr, UINT32_MAX, UINT32_MAX,
                               &queue_));
  }
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  hsa_queue_t* handle() const { return queue_; }

  void destroy() {
    HSA_CHECK(hsa_queue_destroy(queue_));
    queue_ = nullptr;
  }

  // The index of the first of `count` consecutive slots, once they are free.
  uint64_t reserve(uint32_t count) {
    if (count > queue_->size) setupFailed("%u packets do not fit a queue of %u", count, queue_->size);
    const uint64_t first = hsa_queue_add_write_index_scacq_screl(queue_, count);
    while (first + count - hsa_queue_load_read_index_scacquire(queue_) > queue_->size) sched_yield();
    return first;
  }

  template <class Packet>
  void write(uint64_t index, const Packet& packet) {
    publishPacket(queue_, index, packet);
  }

  // Tells the packet processor that packets up to `lastIndex` are there.
  void ring(uint64_t lastIndex) { hsa_signal_store_screlease(queue_->doorbell_signal, hsa_signal_value_t(lastIndex)); }

  // One packet: reserve, write, ring.
  template <class Packet>
  uint64_t submit(const Packet& packet) {
    const uint64_t index = reserve(1);
    write(index, packet);
    ring(index);
    return index;
  }

 private:
  hsa_queue_t* queue_ = nullptr;
};

inline hsa_signal_t createSignal(hsa_signal_value_t initial) {
  hsa_signal_t s{};
  HSA_CHECK(hsa_signal_create(initial, 0, nullptr, &s));
  return s;
}

// Waits until the signal drops below 1 (a wait may return early: it is
// repeated until the condition holds).
inline void waitComplete(hsa_signal_t s) {
  while (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, kForever, HSA_WAIT_STATE_BLOCKED) >= 1) {
  }
}

#endif  // GTAP_HSA_WORKLOAD_NO_LINKED_RUNTIME

}  // namespace workload
