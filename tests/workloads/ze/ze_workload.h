// What the Level Zero workloads share: checked calls, the runtime set-up, the
// kernel module, and the lines they print for tests to compare against gtap.
//
// Stdout carries only these lines (diagnostics go to stderr):
//   launch KERNEL GX GY GZ LX LY LZ   group count, then group size
//   copy BYTES | fill BYTES           one per append (per execution of a regular list)
//   alloc host|device|shared BYTES    one per zeMemAlloc*
//   free host|device|shared BYTES     one per zeMemFree, naming what it frees
//   checksum NAME HEX                 FNV-1a of results, equal with and without gtap
//   timestamp KERNEL NS               (ze_own_timestamps) a device duration
//   round N | handler own             (ze_phases) the round whose lines follow; its own signal handler ran
// Exit status: 0 success, 1 a Level Zero call failed, 2 wrong results, 64 bad arguments.
#pragma once

#include <level_zero/ze_api.h>

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

namespace workload {

inline constexpr int kExitZeFailure = 1;
inline constexpr int kExitWrongResult = 2;
inline constexpr int kExitUsage = 64;
inline constexpr uint64_t kForever = UINT64_MAX;

[[noreturn]] inline void zeFailed(const char* call, ze_result_t result, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: %s failed: 0x%x\n", file, line, call, static_cast<unsigned>(result));
  std::exit(kExitZeFailure);
}

// Every Level Zero call goes through this; a failure names the call and ends the program.
#define ZE_CHECK(call)                                                                      \
  do {                                                                                      \
    ze_result_t ze_check_result_ = (call);                                                  \
    if (ze_check_result_ != ZE_RESULT_SUCCESS) ::workload::zeFailed(#call, ze_check_result_, __FILE__, __LINE__); \
  } while (0)

[[noreturn]] inline void wrongResult(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fputs("wrong result: ", stderr);
  std::vfprintf(stderr, format, args);
  std::fputc('\n', stderr);
  va_end(args);
  std::exit(kExitWrongResult);
}

// argv[index] as a positive count, or `fallback` when absent.
inline uint32_t countArgument(int argc, char** argv, int index, uint32_t fallback, const char* usage) {
  if (index >= argc) return fallback;
  char* end = nullptr;
  unsigned long value = std::strtoul(argv[index], &end, 10);
  if (*argv[index] == '\0' || *end != '\0' || value == 0 || value > 1u << 24) {
    std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    std::exit(kExitUsage);
  }
  return static_cast<uint32_t>(value);
}

// A zero-initialised Level Zero structure with its type tag set.
template <class T>
T typed(ze_structure_type_t stype) {
  T value{};
  value.stype = stype;
  return value;
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

// A kernel with the group size last set on it, which launch lines report.
struct Kernel {
  ze_kernel_handle_t handle = nullptr;
  std::string name;
  uint32_t groupSize[3] = {1, 1, 1};

  void setGroupSize(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    ZE_CHECK(zeKernelSetGroupSize(handle, x, y, z));
    groupSize[0] = x;
    groupSize[1] = y;
    groupSize[2] = z;
  }

  template <class T>
  void setArg(uint32_t index, const T& value) {
    ZE_CHECK(zeKernelSetArgumentValue(handle, index, sizeof(T), &value));
  }
};

// Lines for stdout. Printed as they come, or held back: by a thread, to keep
// the output in a fixed order, and for a regular command list, whose lines are
// printed once per execution.
class Report {
 public:
  static Report immediate() { return Report(false); }
  static Report held() { return Report(true); }

  void launch(const Kernel& k, const ze_group_count_t& g) {
    add("launch %s %u %u %u %u %u %u", k.name.c_str(), g.groupCountX, g.groupCountY, g.groupCountZ, k.groupSize[0],
        k.groupSize[1], k.groupSize[2]);
  }
  void copy(size_t bytes) { add("copy %zu", bytes); }
  void fill(size_t bytes) { add("fill %zu", bytes); }
  void alloc(const char* kind, size_t bytes) { add("alloc %s %zu", kind, bytes); }
  void free(const char* kind, size_t bytes) { add("free %s %zu", kind, bytes); }
  void checksum(const std::string& name, const Checksum& sum) {
    add("checksum %s %016llx", name.c_str(), static_cast<unsigned long long>(sum.value()));
  }
  void timestamp(const std::string& kernel, uint64_t ns) {
    add("timestamp %s %llu", kernel.c_str(), static_cast<unsigned long long>(ns));
  }

  // Adds this report's lines to `to` (printing them if `to` is immediate).
  void replayInto(Report& to) const {
    for (const auto& line : lines_) to.addLine(line);
  }
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
    addLine(line);
  }
  void addLine(const std::string& line) {
    if (held_) {
      lines_.push_back(line);
    } else {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
  }

  bool held_;
  std::vector<std::string> lines_;
};

// Unified shared memory of one context, reporting each allocation and free.
class Memory {
 public:
  Memory(ze_context_handle_t context, ze_device_handle_t device, Report& report)
      : context_(context), device_(device), report_(report) {}
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  ~Memory() {
    if (!live_.empty()) std::fprintf(stderr, "%zu allocations never freed\n", live_.size());
  }

  template <class T>
  T* host(size_t count) {
    auto desc = typed<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
    void* p = nullptr;
    ZE_CHECK(zeMemAllocHost(context_, &desc, count * sizeof(T), alignof(T), &p));
    adopt(p, "host", count * sizeof(T));
    return static_cast<T*>(p);
  }

  template <class T>
  T* device(size_t count) {
    auto desc = typed<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
    void* p = nullptr;
    ZE_CHECK(zeMemAllocDevice(context_, &desc, count * sizeof(T), alignof(T), device_, &p));
    adopt(p, "device", count * sizeof(T));
    return static_cast<T*>(p);
  }

  template <class T>
  T* shared(size_t count) {
    auto ddesc = typed<ze_device_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
    auto hdesc = typed<ze_host_mem_alloc_desc_t>(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
    void* p = nullptr;
    ZE_CHECK(zeMemAllocShared(context_, &ddesc, &hdesc, count * sizeof(T), alignof(T), device_, &p));
    adopt(p, "shared", count * sizeof(T));
    return static_cast<T*>(p);
  }

  // Takes over memory the program allocated itself, so it is reported and freed alike.
  void adopt(void* p, const char* kind, size_t bytes) {
    live_[p] = {kind, bytes};
    report_.alloc(kind, bytes);
  }

  void free(void* p) {
    auto it = live_.find(p);
    if (it == live_.end()) {
      std::fprintf(stderr, "free of %p, which this program did not allocate\n", p);
      std::exit(kExitWrongResult);
    }
    ZE_CHECK(zeMemFree(context_, p));
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
  };
  ze_context_handle_t context_;
  ze_device_handle_t device_;
  Report& report_;
  std::map<void*, Allocation> live_;
};

// The kernel module: GTAP_SIM_KERNELS_DIR/<file> when that variable is set,
// else the path the build compiled in.
inline std::string kernelModulePath() {
  const char* dir = std::getenv("GTAP_SIM_KERNELS_DIR");
  if (dir != nullptr && *dir != '\0') return std::string(dir) + "/" + GTAP_WORKLOAD_KERNELS_FILE;
  return GTAP_WORKLOAD_KERNELS_PATH;
}

// Driver, device, context and kernel module of the first GPU.
struct Runtime {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  ze_module_handle_t module = nullptr;
  uint32_t computeOrdinal = 0;  // the first queue group that runs kernels
  uint32_t computeQueues = 0;   // and how many queues it has

  // With `initDrivers` (headers of API 1.10 or later), the drivers come from
  // zeInitDrivers, as current SYCL runtimes find them, instead of zeInit and
  // zeDriverGet.
  static Runtime open(bool initDrivers = false) {
    Runtime rt;
    uint32_t drivers = 0;
    std::vector<ze_driver_handle_t> driverHandles;
#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 10)
    if (initDrivers) {
      ze_init_driver_type_desc_t desc{ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, nullptr, ZE_INIT_DRIVER_TYPE_FLAG_GPU};
      ZE_CHECK(zeInitDrivers(&drivers, nullptr, &desc));
      driverHandles.resize(drivers);
      ZE_CHECK(zeInitDrivers(&drivers, driverHandles.data(), &desc));
    }
#else
    (void)initDrivers;
#endif
    if (driverHandles.empty()) {
      ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
      ZE_CHECK(zeDriverGet(&drivers, nullptr));
      driverHandles.resize(drivers);
      ZE_CHECK(zeDriverGet(&drivers, driverHandles.data()));
    }
    for (ze_driver_handle_t d : driverHandles) {
      uint32_t devices = 0;
      ZE_CHECK(zeDeviceGet(d, &devices, nullptr));
      std::vector<ze_device_handle_t> deviceHandles(devices);
      ZE_CHECK(zeDeviceGet(d, &devices, deviceHandles.data()));
      for (ze_device_handle_t dev : deviceHandles) {
        auto props = typed<ze_device_properties_t>(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES);
        ZE_CHECK(zeDeviceGetProperties(dev, &props));
        if (props.type == ZE_DEVICE_TYPE_GPU && rt.device == nullptr) {
          rt.driver = d;
          rt.device = dev;
        }
      }
    }
    if (rt.device == nullptr) {
      std::fprintf(stderr, "no Level Zero GPU found\n");
      std::exit(kExitZeFailure);
    }
    ze_context_desc_t cdesc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ZE_CHECK(zeContextCreate(rt.driver, &cdesc, &rt.context));
    rt.findComputeGroup();
    rt.module = loadModule(rt.context, rt.device, kernelModulePath());
    return rt;
  }

  void close() {
    ZE_CHECK(zeModuleDestroy(module));
    ZE_CHECK(zeContextDestroy(context));
    module = nullptr;
    context = nullptr;
  }

  Kernel kernel(const char* name) const {
    Kernel k;
    k.name = name;
    ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
    ZE_CHECK(zeKernelCreate(module, &desc, &k.handle));
    return k;
  }

  ze_command_queue_handle_t queue(uint32_t index = 0,
                                  ze_command_queue_mode_t mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS) const {
    auto desc = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
    desc.ordinal = computeOrdinal;
    desc.index = index;
    desc.mode = mode;
    ze_command_queue_handle_t q = nullptr;
    ZE_CHECK(zeCommandQueueCreate(context, device, &desc, &q));
    return q;
  }

  ze_command_list_handle_t list() const {
    auto desc = typed<ze_command_list_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC);
    desc.commandQueueGroupOrdinal = computeOrdinal;
    ze_command_list_handle_t l = nullptr;
    ZE_CHECK(zeCommandListCreate(context, device, &desc, &l));
    return l;
  }

  ze_command_list_handle_t immediateList(ze_command_queue_mode_t mode) const {
    auto desc = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
    desc.ordinal = computeOrdinal;
    desc.mode = mode;
    ze_command_list_handle_t l = nullptr;
    ZE_CHECK(zeCommandListCreateImmediate(context, device, &desc, &l));
    return l;
  }

  ze_event_pool_handle_t eventPool(uint32_t count, ze_event_pool_flags_t flags) const {
    ze_event_pool_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, count};
    ze_event_pool_handle_t pool = nullptr;
    ze_device_handle_t dev = device;
    ZE_CHECK(zeEventPoolCreate(context, &desc, 1, &dev, &pool));
    return pool;
  }

 private:
  void findComputeGroup() {
    uint32_t count = 0;
    ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(device, &count, nullptr));
    std::vector<ze_command_queue_group_properties_t> groups(
        count, typed<ze_command_queue_group_properties_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES));
    ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(device, &count, groups.data()));
    for (uint32_t i = 0; i < count; ++i) {
      if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
        computeOrdinal = i;
        computeQueues = groups[i].numQueues;
        return;
      }
    }
    std::fprintf(stderr, "the device has no compute queue group\n");
    std::exit(kExitZeFailure);
  }

  static ze_module_handle_t loadModule(ze_context_handle_t context, ze_device_handle_t device,
                                       const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(in), {});
    if (bytes.empty()) {
      std::fprintf(stderr, "cannot read the kernel module %s\n", path.c_str());
      std::exit(kExitZeFailure);
    }
    auto desc = typed<ze_module_desc_t>(ZE_STRUCTURE_TYPE_MODULE_DESC);
    desc.format = ZE_MODULE_FORMAT_NATIVE;
    desc.inputSize = bytes.size();
    desc.pInputModule = bytes.data();
    ze_module_handle_t module = nullptr;
    ze_module_build_log_handle_t log = nullptr;
    ze_result_t r = zeModuleCreate(context, device, &desc, &module, &log);
    if (r != ZE_RESULT_SUCCESS) {
      size_t size = 0;
      std::string text;
      if (log != nullptr && zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) {
        text.resize(size);
        zeModuleBuildLogGetString(log, &size, text.data());
      }
      std::fprintf(stderr, "module %s: %s\n", path.c_str(), text.c_str());
      zeFailed("zeModuleCreate", r, __FILE__, __LINE__);
    }
    if (log != nullptr) ZE_CHECK(zeModuleBuildLogDestroy(log));
    return module;
  }
};

// Round-up group count for `n` items in groups of `size`.
inline uint32_t groupsFor(uint32_t n, uint32_t size) { return (n + size - 1) / size; }

inline uint64_t hostNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

}  // namespace workload
