// Smoke test of the simulated HSA runtime, used the way programs and tools
// use ROCr: linked as libhsa-runtime64.so.1, dlopened, fed a code object
// built with gtap_add_sim_hsa_code_object, driven through AQL packets, and
// extended by a tool library (smoke_tool.cpp) loaded through HSA_TOOLS_LIB or
// found preloaded.
//
// Scenarios that need a fresh process with their own environment (tool
// loading, clock settings) run this binary again as a child:
// `sim_hsa_smoke_test --child <scenario>`.
#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_aqlprofile.h>
#include <hsa/amd_hsa_signal.h>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

#define HSA_OK(expr) ASSERT_EQ(HSA_STATUS_SUCCESS, (expr))

constexpr uint64_t kForever = UINT64_MAX;
constexpr uint64_t kNsPerDeviceTick = 10;  // the documented 100 MHz device clock

// The layouts of the code object's kernarg segments (smoke_kernels.c).
struct VectorAddArgs {
  const float* a;
  const float* b;
  float* c;
  uint32_t n;
};
struct AppendArgs {
  uint32_t* log;
  uint32_t value;
};
struct SpinArgs {
  uint64_t ns;
  uint64_t* ticks;
};
struct GroupSumArgs {
  const uint32_t* in;
  uint32_t* out;
};
struct GeometryArgs {
  uint32_t* ids;
  uint32_t* group_items;
};

std::vector<uint8_t> readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uint64_t systemTimestamp() {
  uint64_t t = 0;
  EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t));
  return t;
}

uint64_t readClock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

uint64_t threadCpuNs() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  return (uint64_t(r.ru_utime.tv_sec) + uint64_t(r.ru_stime.tv_sec)) * 1'000'000'000ull +
         (uint64_t(r.ru_utime.tv_usec) + uint64_t(r.ru_stime.tv_usec)) * 1'000ull;
}

std::string realPath(const char* path) {
  char buf[PATH_MAX];
  return realpath(path, buf) != nullptr ? std::string(buf) : std::string(path);
}

// The table the smoke tool received in OnLoad (the test process loads it
// through HSA_TOOLS_LIB, set in main): the only way to reach the
// tool-only intercept queue functions, as with ROCr.
HsaApiTable* toolTable() {
  void* tool = dlopen(GTAP_SIM_HSA_SMOKE_TOOL_PATH, RTLD_LAZY | RTLD_NOLOAD);
  if (tool == nullptr) return nullptr;
  auto** table = static_cast<HsaApiTable**>(dlsym(tool, "smoke_tool_table"));
  dlclose(tool);
  return table != nullptr ? *table : nullptr;
}

uint16_t header(hsa_packet_type_t type) {
  return uint16_t((type << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
                  (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                  (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

uint16_t packetType(const void* packet) {
  uint16_t h = __atomic_load_n(static_cast<const uint16_t*>(packet), __ATOMIC_ACQUIRE);
  return uint16_t((h >> HSA_PACKET_HEADER_TYPE) & ((1 << HSA_PACKET_HEADER_WIDTH_TYPE) - 1));
}

// Writes packets into a queue the way programs do: reserve slots, write the
// bodies, publish each header (with setup) by a release store, first packet
// last, then ring the doorbell once with the last index.
uint64_t submit(hsa_queue_t* q, const std::vector<hsa_kernel_dispatch_packet_t>& packets) {
  const uint64_t n = packets.size();
  const uint64_t first = hsa_queue_add_write_index_screlease(q, n);
  while (first + n - hsa_queue_load_read_index_scacquire(q) > q->size) std::this_thread::yield();
  auto* ring = static_cast<hsa_kernel_dispatch_packet_t*>(q->base_address);
  for (uint64_t i = 0; i < n; ++i) {
    auto* slot = &ring[(first + i) & (q->size - 1)];
    std::memcpy(reinterpret_cast<uint8_t*>(slot) + 4, reinterpret_cast<const uint8_t*>(&packets[i]) + 4,
                sizeof(hsa_kernel_dispatch_packet_t) - 4);
  }
  for (uint64_t i = n; i-- > 0;) {
    auto* slot = &ring[(first + i) & (q->size - 1)];
    uint32_t word = packets[i].header | (uint32_t(packets[i].setup) << 16);
    __atomic_store_n(reinterpret_cast<uint32_t*>(slot), word, __ATOMIC_RELEASE);
  }
  hsa_signal_store_screlease(q->doorbell_signal, int64_t(first + n - 1));
  return first;
}

hsa_kernel_dispatch_packet_t dispatchPacket(uint64_t kernel_object, void* kernarg, uint32_t dims,
                                            const uint32_t grid[3], const uint32_t wg[3], hsa_signal_t completion) {
  hsa_kernel_dispatch_packet_t p{};
  p.header = header(HSA_PACKET_TYPE_KERNEL_DISPATCH);
  p.setup = uint16_t(dims << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS);
  p.workgroup_size_x = uint16_t(wg[0]);
  p.workgroup_size_y = uint16_t(wg[1]);
  p.workgroup_size_z = uint16_t(wg[2]);
  p.grid_size_x = grid[0];
  p.grid_size_y = grid[1];
  p.grid_size_z = grid[2];
  p.kernel_object = kernel_object;
  p.kernarg_address = kernarg;
  p.completion_signal = completion;
  return p;
}

hsa_kernel_dispatch_packet_t barrierPacket(hsa_packet_type_t type, std::vector<hsa_signal_t> deps,
                                           hsa_signal_t completion) {
  hsa_barrier_and_packet_t b{};  // the OR packet has the same layout
  b.header = header(type);
  for (size_t i = 0; i < deps.size() && i < 5; ++i) b.dep_signal[i] = deps[i];
  b.completion_signal = completion;
  hsa_kernel_dispatch_packet_t p;
  static_assert(sizeof p == sizeof b);
  std::memcpy(&p, &b, sizeof p);
  return p;
}

// --- Child processes --------------------------------------------------------

// Runs this binary as `--child <scenario>` with the given environment changes
// (a value of nullptr removes the variable); returns its exit status.
int runChild(const std::string& scenario, const std::map<std::string, const char*>& changes) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    if (changes.count(key) == 0) env.push_back(entry);
  }
  for (const auto& [key, value] : changes) {
    if (value != nullptr) env.push_back(key + "=" + value);
  }
  // A preloaded library must not stop a sanitizer build from starting.
  std::string asan = "ASAN_OPTIONS=verify_asan_link_order=0";
  for (auto& e : env) {
    if (e.rfind("ASAN_OPTIONS=", 0) == 0) {
      asan = e + ":verify_asan_link_order=0";
      e = asan;
      asan.clear();
    }
  }
  if (!asan.empty()) env.push_back(asan);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string self = GTAP_SIM_HSA_SMOKE_TEST_PATH;
  std::string flag = "--child";
  std::string name = scenario;
  char* argv[] = {self.data(), flag.data(), name.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A fresh log file for the smoke tool.
std::string toolLogPath(const char* test) {
  std::string path = "/tmp/gtap_sim_hsa_tool_" + std::to_string(getpid()) + "_" + test + ".log";
  unlink(path.c_str());
  return path;
}

size_t countLines(const std::string& text, const std::string& prefix) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// --- The fixture: the runtime set up as a program sets it up ----------------

class SimHsa : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_init());
    ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_iterate_agents(
                                      [](hsa_agent_t agent, void* data) {
                                        auto* self = static_cast<SimHsa*>(data);
                                        hsa_device_type_t type;
                                        hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
                                        (type == HSA_DEVICE_TYPE_GPU ? self->gpu_ : self->cpu_) = agent;
                                        return HSA_STATUS_SUCCESS;
                                      },
                                      this));
    ASSERT_NE(0u, gpu_.handle);
    ASSERT_NE(0u, cpu_.handle);
    findPools();
    bytes_ = readFile(GTAP_SIM_HSA_SMOKE_KERNELS_PATH);
    ASSERT_FALSE(bytes_.empty()) << GTAP_SIM_HSA_SMOKE_KERNELS_PATH;
    ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_code_object_reader_create_from_memory(bytes_.data(), bytes_.size(), &reader_));
    executable_ = loadExecutable();
  }

  void TearDown() override {
    for (hsa_queue_t* q : queues_) EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_queue_destroy(q));
    for (void* p : allocations_) EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_amd_memory_pool_free(p));
    for (hsa_signal_t s : signals_) EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_signal_destroy(s));
    if (executable_.handle != 0) {
      EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_executable_destroy(executable_));
    }
    if (reader_.handle != 0) {
      EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_code_object_reader_destroy(reader_));
    }
    EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_shut_down());
  }

  void findPools() {
    auto visit = [](hsa_amd_memory_pool_t pool, void* data) {
      auto* self = static_cast<SimHsa*>(data);
      hsa_amd_segment_t segment;
      uint32_t flags = 0;
      hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment);
      if (segment != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
      hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
      if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) {
        self->kernarg_pool_ = pool;
      } else if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) {
        self->host_pool_ = pool;
      } else if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) {
        self->coarse_pools_.push_back(pool);
      }
      return HSA_STATUS_SUCCESS;
    };
    ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_amd_agent_iterate_memory_pools(cpu_, visit, this));
    ASSERT_EQ(1u, coarse_pools_.size());
    coarse_pools_.clear();
    ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_amd_agent_iterate_memory_pools(gpu_, visit, this));
    ASSERT_EQ(1u, coarse_pools_.size());
    device_pool_ = coarse_pools_[0];
    ASSERT_NE(0u, kernarg_pool_.handle);
    ASSERT_NE(0u, host_pool_.handle);
  }

  hsa_executable_t loadExecutable() {
    hsa_executable_t e{};
    EXPECT_EQ(HSA_STATUS_SUCCESS,
              hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr, &e));
    EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_executable_load_agent_code_object(e, gpu_, reader_, nullptr, nullptr));
    EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_executable_freeze(e, nullptr));
    return e;
  }

  hsa_executable_symbol_t symbol(const char* name, hsa_executable_t e = {}) {
    hsa_executable_symbol_t s{};
    EXPECT_EQ(HSA_STATUS_SUCCESS,
              hsa_executable_get_symbol_by_name(e.handle != 0 ? e : executable_, name, &gpu_, &s))
        << name;
    return s;
  }

  uint64_t kernelObject(const char* name, hsa_executable_t e = {}) {
    uint64_t object = 0;
    EXPECT_EQ(HSA_STATUS_SUCCESS,
              hsa_executable_symbol_get_info(symbol(name, e), HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
    return object;
  }

  template <class T = uint8_t>
  T* allocate(hsa_amd_memory_pool_t pool, size_t bytes) {
    void* p = nullptr;
    EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_amd_memory_pool_allocate(pool, bytes, 0, &p));
    allocations_.push_back(p);
    return static_cast<T*>(p);
  }

  // A kernarg segment in kernarg memory, as programs allocate them.
  template <class Args>
  void* kernarg(const Args& args) {
    void* p = allocate(kernarg_pool_, sizeof args);
    std::memcpy(p, &args, sizeof args);
    return p;
  }

  hsa_signal_t signal(int64_t initial) {
    hsa_signal_t s{};
    EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_signal_create(initial, 0, nullptr, &s));
    signals_.push_back(s);
    return s;
  }

  hsa_queue_t* queue(uint32_t size = 128) {
    hsa_queue_t* q = nullptr;
    EXPECT_EQ(HSA_STATUS_SUCCESS,
              hsa_queue_create(gpu_, size, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, UINT32_MAX, UINT32_MAX, &q));
    if (q != nullptr) queues_.push_back(q);
    return q;
  }

  hsa_queue_t* interceptQueue() {
    HsaApiTable* table = toolTable();
    EXPECT_NE(nullptr, table) << "the smoke tool was not loaded through HSA_TOOLS_LIB";
    if (table == nullptr) return nullptr;
    hsa_queue_t* q = nullptr;
    EXPECT_EQ(HSA_STATUS_SUCCESS, table->amd_ext_->hsa_amd_queue_intercept_create_fn(
                                      gpu_, 128, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, UINT32_MAX, UINT32_MAX, &q));
    if (q != nullptr) queues_.push_back(q);
    return q;
  }

  hsa_status_t registerHandler(hsa_queue_t* q, hsa_amd_queue_intercept_handler handler, void* data) {
    return toolTable()->amd_ext_->hsa_amd_queue_intercept_register_fn(q, handler, data);
  }

  // Sets up a vector add of n elements; returns the packet.
  hsa_kernel_dispatch_packet_t vectorAdd(uint32_t n, float scale, float** out, hsa_signal_t completion) {
    auto* a = allocate<float>(host_pool_, n * sizeof(float));
    auto* b = allocate<float>(host_pool_, n * sizeof(float));
    auto* c = allocate<float>(host_pool_, n * sizeof(float));
    for (uint32_t i = 0; i < n; ++i) {
      a[i] = float(i) * scale;
      b[i] = 1000.0f + float(i);
    }
    *out = c;
    const uint32_t grid[3] = {n, 1, 1};
    const uint32_t wg[3] = {64, 1, 1};
    return dispatchPacket(kernelObject("vector_add.kd"), kernarg(VectorAddArgs{a, b, c, n}), 1, grid, wg, completion);
  }

  static void expectVectorAdd(const float* c, uint32_t n, float scale) {
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(float(i) * scale + 1000.0f + float(i), c[i]) << "element " << i;
    }
  }

  hsa_kernel_dispatch_packet_t appendPacket(uint32_t* log, uint32_t value, hsa_signal_t completion) {
    const uint32_t one[3] = {1, 1, 1};
    return dispatchPacket(kernelObject("append.kd"), kernarg(AppendArgs{log, value}), 1, one, one, completion);
  }

  static int64_t waitZero(hsa_signal_t s, uint64_t timeout_ns = 10'000'000'000ull) {
    return hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, timeout_ns, HSA_WAIT_STATE_BLOCKED);
  }

  hsa_agent_t cpu_{}, gpu_{};
  hsa_amd_memory_pool_t kernarg_pool_{}, host_pool_{}, device_pool_{};
  std::vector<hsa_amd_memory_pool_t> coarse_pools_;
  std::vector<uint8_t> bytes_;
  hsa_code_object_reader_t reader_{};
  hsa_executable_t executable_{};
  std::vector<hsa_queue_t*> queues_;
  std::vector<void*> allocations_;
  std::vector<hsa_signal_t> signals_;
};

// --- The library ------------------------------------------------------------

TEST(SimHsaLibrary, LinkedAndDlopenedRuntimeIsTheSimulatedOne) {
  Dl_info info{};
  ASSERT_NE(0, dladdr(reinterpret_cast<void*>(&hsa_init), &info));
  const std::string dir = realPath(GTAP_SIM_HSA_DIR);
  ASSERT_EQ(0u, realPath(info.dli_fname).rfind(dir, 0))
      << "hsa_init comes from " << info.dli_fname << ", not from " << dir << " (is LD_LIBRARY_PATH set?)";

  // A program that dlopens the runtime by its soname gets the same library.
  void* handle = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(nullptr, handle) << dlerror();
  link_map* map = nullptr;
  ASSERT_EQ(0, dlinfo(handle, RTLD_DI_LINKMAP, &map));
  EXPECT_EQ(0u, realPath(map->l_name).rfind(dir, 0)) << map->l_name;
  auto init = reinterpret_cast<decltype(&hsa_init)>(dlsym(handle, "hsa_init"));
  auto info_fn = reinterpret_cast<decltype(&hsa_system_get_info)>(dlsym(handle, "hsa_system_get_info"));
  auto shut_down = reinterpret_cast<decltype(&hsa_shut_down)>(dlsym(handle, "hsa_shut_down"));
  ASSERT_TRUE(init && info_fn && shut_down);
  ASSERT_EQ(HSA_STATUS_SUCCESS, init());
  uint64_t frequency = 0;
  EXPECT_EQ(HSA_STATUS_SUCCESS, info_fn(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency));
  EXPECT_EQ(1'000'000'000u, frequency);
  uint16_t major = 0;
  EXPECT_EQ(HSA_STATUS_SUCCESS, info_fn(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
  EXPECT_EQ(1u, major);
  EXPECT_EQ(HSA_STATUS_SUCCESS, shut_down());
  // As in ROCr, the intercept functions are reachable only through the table.
  EXPECT_EQ(nullptr, dlsym(handle, "hsa_amd_queue_intercept_create"));
  EXPECT_EQ(nullptr, dlsym(handle, "hsa_amd_queue_intercept_register"));
  dlclose(handle);
}

TEST(SimHsaLibrary, ReferenceCountingAndCallsOutsideInit) {
  EXPECT_EQ(HSA_STATUS_ERROR_NOT_INITIALIZED, hsa_shut_down());
  uint64_t t = 0;
  EXPECT_EQ(HSA_STATUS_ERROR_NOT_INITIALIZED, hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t));
  const char* text = nullptr;
  EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_status_string(HSA_STATUS_ERROR_NOT_INITIALIZED, &text));
  EXPECT_NE(nullptr, std::strstr(text, "HSA_STATUS_ERROR_NOT_INITIALIZED"));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, hsa_status_string(hsa_status_t(0x7777), &text));

  ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_init());
  ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_init());
  ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_shut_down());
  EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t));  // still one reference
  ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_shut_down());
  EXPECT_EQ(HSA_STATUS_ERROR_NOT_INITIALIZED, hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t));
  // And up again.
  ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_init());
  EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t));
  ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_shut_down());
}

// --- Agents and memory ------------------------------------------------------

TEST_F(SimHsa, AgentsDescribeACpuAndAKernelAgent) {
  std::vector<hsa_agent_t> agents;
  HSA_OK(hsa_iterate_agents(
      [](hsa_agent_t a, void* d) {
        static_cast<std::vector<hsa_agent_t>*>(d)->push_back(a);
        return HSA_STATUS_SUCCESS;
      },
      &agents));
  ASSERT_EQ(2u, agents.size());
  EXPECT_EQ(cpu_.handle, agents[0].handle);  // CPU agents first, as in ROCr
  EXPECT_EQ(gpu_.handle, agents[1].handle);
  EXPECT_EQ(HSA_STATUS_INFO_BREAK,
            hsa_iterate_agents([](hsa_agent_t, void*) { return HSA_STATUS_INFO_BREAK; }, nullptr));

  char name[64] = {};
  HSA_OK(hsa_agent_get_info(gpu_, HSA_AGENT_INFO_NAME, name));
  EXPECT_STREQ("gtap-sim-gpu", name);
  char product[64] = {};
  HSA_OK(hsa_agent_get_info(gpu_, hsa_agent_info_t(HSA_AMD_AGENT_INFO_PRODUCT_NAME), product));
  EXPECT_STREQ("gtap simulated GPU", product);
  hsa_agent_feature_t feature;
  HSA_OK(hsa_agent_get_info(gpu_, HSA_AGENT_INFO_FEATURE, &feature));
  EXPECT_EQ(HSA_AGENT_FEATURE_KERNEL_DISPATCH, feature);
  uint32_t wavefront = 0, min_size = 0, max_size = 0, wg_max = 0, cus = 0;
  HSA_OK(hsa_agent_get_info(gpu_, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wavefront));
  HSA_OK(hsa_agent_get_info(gpu_, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &min_size));
  HSA_OK(hsa_agent_get_info(gpu_, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &max_size));
  HSA_OK(hsa_agent_get_info(gpu_, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, &wg_max));
  HSA_OK(hsa_agent_get_info(gpu_, hsa_agent_info_t(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT), &cus));
  EXPECT_EQ(64u, wavefront);
  EXPECT_EQ(64u, min_size);
  EXPECT_EQ(131072u, max_size);
  EXPECT_EQ(1024u, wg_max);
  EXPECT_EQ(4u, cus);
  char uuid[21] = {};
  HSA_OK(hsa_agent_get_info(gpu_, hsa_agent_info_t(HSA_AMD_AGENT_INFO_UUID), uuid));
  EXPECT_EQ(0, std::strncmp(uuid, "GPU-", 4));
  hsa_device_type_t type;
  HSA_OK(hsa_agent_get_info(cpu_, HSA_AGENT_INFO_DEVICE, &type));
  EXPECT_EQ(HSA_DEVICE_TYPE_CPU, type);
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_AGENT, hsa_agent_get_info(hsa_agent_t{12345}, HSA_AGENT_INFO_NAME, name));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, hsa_agent_get_info(gpu_, hsa_agent_info_t(0x7fff), name));

  // One ISA on the GPU, none on the CPU.
  std::vector<hsa_isa_t> isas;
  auto collect = [](hsa_isa_t isa, void* d) {
    static_cast<std::vector<hsa_isa_t>*>(d)->push_back(isa);
    return HSA_STATUS_SUCCESS;
  };
  HSA_OK(hsa_agent_iterate_isas(cpu_, collect, &isas));
  EXPECT_TRUE(isas.empty());
  HSA_OK(hsa_agent_iterate_isas(gpu_, collect, &isas));
  ASSERT_EQ(1u, isas.size());
  uint32_t length = 0;
  HSA_OK(hsa_isa_get_info_alt(isas[0], HSA_ISA_INFO_NAME_LENGTH, &length));
  std::string isa_name(length, '\0');
  HSA_OK(hsa_isa_get_info_alt(isas[0], HSA_ISA_INFO_NAME, isa_name.data()));
  EXPECT_EQ(0u, isa_name.rfind("gtap-sim-host-", 0)) << isa_name;
  hsa_isa_t by_name{};
  HSA_OK(hsa_isa_from_name(isa_name.c_str(), &by_name));
  EXPECT_EQ(isas[0].handle, by_name.handle);
  uint32_t wave_size = 0;
  HSA_OK(hsa_isa_iterate_wavefronts(
      isas[0],
      [](hsa_wavefront_t w, void* d) { return hsa_wavefront_get_info(w, HSA_WAVEFRONT_INFO_SIZE, d); }, &wave_size));
  EXPECT_EQ(64u, wave_size);

  bool supported = false;
  HSA_OK(hsa_system_extension_supported(HSA_EXTENSION_AMD_PROFILER, 1, 0, &supported));
  EXPECT_TRUE(supported);
  HSA_OK(hsa_system_extension_supported(HSA_EXTENSION_IMAGES, 1, 0, &supported));
  EXPECT_FALSE(supported);
}

TEST_F(SimHsa, RegionsIncludeKernargFineAndDeviceMemory) {
  struct Seen {
    std::vector<hsa_region_t> regions;
  } seen;
  HSA_OK(hsa_agent_iterate_regions(
      gpu_,
      [](hsa_region_t r, void* d) {
        static_cast<Seen*>(d)->regions.push_back(r);
        return HSA_STATUS_SUCCESS;
      },
      &seen));
  ASSERT_EQ(5u, seen.regions.size());  // device, group, and the three system regions it reaches
  hsa_region_t kernarg{}, device{}, group{};
  for (hsa_region_t r : seen.regions) {
    hsa_region_segment_t segment;
    uint32_t flags = 0;
    bool host = false;
    HSA_OK(hsa_region_get_info(r, HSA_REGION_INFO_SEGMENT, &segment));
    HSA_OK(hsa_region_get_info(r, HSA_REGION_INFO_GLOBAL_FLAGS, &flags));
    HSA_OK(hsa_region_get_info(r, hsa_region_info_t(HSA_AMD_REGION_INFO_HOST_ACCESSIBLE), &host));
    if (segment == HSA_REGION_SEGMENT_GROUP) group = r;
    if (flags & HSA_REGION_GLOBAL_FLAG_KERNARG) kernarg = r;
    if ((flags & HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED) && !host) device = r;
  }
  ASSERT_NE(0u, kernarg.handle);
  ASSERT_NE(0u, device.handle);
  ASSERT_NE(0u, group.handle);
  bool allowed = true;
  HSA_OK(hsa_region_get_info(group, HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED, &allowed));
  EXPECT_FALSE(allowed);
  size_t granule = 0;
  HSA_OK(hsa_region_get_info(kernarg, HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE, &granule));
  EXPECT_EQ(4096u, granule);

  void* p = nullptr;
  HSA_OK(hsa_memory_allocate(kernarg, 100, &p));
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % 4096);
  std::memset(p, 0xab, 100);
  HSA_OK(hsa_memory_free(p));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ALLOCATION, hsa_memory_allocate(group, 64, &p));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, hsa_memory_allocate(kernarg, 0, &p));
  EXPECT_EQ(HSA_STATUS_SUCCESS, hsa_memory_free(nullptr));

  size_t cpu_regions = 0;
  HSA_OK(hsa_agent_iterate_regions(
      cpu_,
      [](hsa_region_t, void* d) {
        ++*static_cast<size_t*>(d);
        return HSA_STATUS_SUCCESS;
      },
      &cpu_regions));
  EXPECT_EQ(3u, cpu_regions);
}

TEST_F(SimHsa, PoolsAllocateAndDescribeAccess) {
  hsa_amd_memory_pool_access_t access;
  HSA_OK(hsa_amd_agent_memory_pool_get_info(gpu_, device_pool_, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  EXPECT_EQ(HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT, access);
  HSA_OK(hsa_amd_agent_memory_pool_get_info(cpu_, device_pool_, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  EXPECT_EQ(HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT, access);
  HSA_OK(hsa_amd_agent_memory_pool_get_info(gpu_, host_pool_, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  EXPECT_EQ(HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT, access);
  size_t size = 0, alignment = 0;
  bool allowed = false;
  HSA_OK(hsa_amd_memory_pool_get_info(device_pool_, HSA_AMD_MEMORY_POOL_INFO_SIZE, &size));
  HSA_OK(hsa_amd_memory_pool_get_info(device_pool_, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT, &alignment));
  HSA_OK(hsa_amd_memory_pool_get_info(device_pool_, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &allowed));
  EXPECT_GT(size, 0u);
  EXPECT_EQ(4096u, alignment);
  EXPECT_TRUE(allowed);

  // Device memory, made reachable from the CPU, filled and copied.
  auto* device = allocate<uint32_t>(device_pool_, 1 << 20);
  HSA_OK(hsa_amd_agents_allow_access(1, &cpu_, nullptr, device));
  HSA_OK(hsa_amd_memory_fill(device, 0x5a5a5a5au, (1 << 20) / 4));
  auto* host = allocate<uint32_t>(host_pool_, 1 << 20);
  HSA_OK(hsa_memory_copy(host, device, 1 << 20));
  EXPECT_EQ(0x5a5a5a5au, host[0]);
  EXPECT_EQ(0x5a5a5a5au, host[(1 << 18) - 1]);

  // Pointer queries find the allocation from any address inside it.
  hsa_amd_pointer_info_t info{};
  info.size = sizeof info;
  uint32_t count = 0;
  hsa_agent_t* reach = nullptr;
  HSA_OK(hsa_amd_pointer_info(device + 100, &info, malloc, &count, &reach));
  EXPECT_EQ(HSA_EXT_POINTER_TYPE_HSA, info.type);
  EXPECT_EQ(device, info.hostBaseAddress);
  EXPECT_EQ(size_t(1 << 20), info.sizeInBytes);
  EXPECT_EQ(gpu_.handle, info.agentOwner.handle);
  EXPECT_EQ(2u, count);  // the GPU, and the CPU since allow_access
  free(reach);
  HSA_OK(hsa_amd_pointer_info_set_userdata(device, this));
  HSA_OK(hsa_amd_pointer_info(device, &info, nullptr, nullptr, nullptr));
  EXPECT_EQ(this, info.userData);

  // Locking host memory hands back the same pointer.
  std::vector<uint8_t> buffer(8192);
  void* locked = nullptr;
  HSA_OK(hsa_amd_memory_lock(buffer.data(), buffer.size(), &gpu_, 1, &locked));
  EXPECT_EQ(buffer.data(), locked);
  HSA_OK(hsa_amd_pointer_info(buffer.data() + 10, &info, nullptr, nullptr, nullptr));
  EXPECT_EQ(HSA_EXT_POINTER_TYPE_LOCKED, info.type);
  HSA_OK(hsa_amd_memory_unlock(buffer.data()));
  HSA_OK(hsa_amd_pointer_info(buffer.data(), &info, nullptr, nullptr, nullptr));
  EXPECT_EQ(HSA_EXT_POINTER_TYPE_UNKNOWN, info.type);

  // Errors.
  void* p = nullptr;
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_MEMORY_POOL, hsa_amd_memory_pool_allocate({42}, 64, 0, &p));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, hsa_amd_memory_pool_free(buffer.data()));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, hsa_amd_agents_allow_access(1, &cpu_, nullptr, buffer.data()));
}

TEST_F(SimHsa, AsyncCopiesWaitForTheirDependencies) {
  constexpr size_t kBytes = 4 << 20;
  auto* src = allocate<uint8_t>(device_pool_, kBytes);
  auto* dst = allocate<uint8_t>(host_pool_, kBytes);
  for (size_t i = 0; i < kBytes; ++i) src[i] = uint8_t(i * 7);
  hsa_signal_t done = signal(1);
  HSA_OK(hsa_amd_memory_async_copy(dst, cpu_, src, gpu_, kBytes, 0, nullptr, done));
  EXPECT_EQ(0, waitZero(done));
  EXPECT_EQ(0, std::memcmp(src, dst, kBytes));

  // A copy with a dependency does not start until the dependency reaches 0.
  std::memset(dst, 0, kBytes);
  hsa_signal_t dependency = signal(1);
  hsa_signal_store_relaxed(done, 1);
  HSA_OK(hsa_amd_memory_async_copy(dst, cpu_, src, gpu_, kBytes, 1, &dependency, done));
  EXPECT_EQ(1, hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 100'000'000, HSA_WAIT_STATE_BLOCKED));
  EXPECT_EQ(0, dst[1]);
  hsa_signal_store_screlease(dependency, 0);
  EXPECT_EQ(0, waitZero(done));
  EXPECT_EQ(0, std::memcmp(src, dst, kBytes));

  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_SIGNAL,
            hsa_amd_memory_async_copy(dst, cpu_, src, gpu_, 16, 0, nullptr, hsa_signal_t{8}));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_AGENT,
            hsa_amd_memory_async_copy(dst, hsa_agent_t{8}, src, gpu_, 16, 0, nullptr, done));
}

// --- Signals ----------------------------------------------------------------

TEST_F(SimHsa, SignalOperations) {
  hsa_signal_t s{};
  HSA_OK(hsa_signal_create(10, 1, &gpu_, &s));
  EXPECT_EQ(10, hsa_signal_load_scacquire(s));
  hsa_signal_add_screlease(s, 5);
  hsa_signal_subtract_relaxed(s, 3);
  EXPECT_EQ(12, hsa_signal_load_relaxed(s));
  hsa_signal_and_scacq_screl(s, 0b1010);
  EXPECT_EQ(8, hsa_signal_load_relaxed(s));
  hsa_signal_or_relaxed(s, 1);
  hsa_signal_xor_relaxed(s, 8);
  EXPECT_EQ(1, hsa_signal_load_relaxed(s));
  EXPECT_EQ(1, hsa_signal_exchange_scacq_screl(s, 7));
  EXPECT_EQ(7, hsa_signal_cas_scacq_screl(s, 7, 9));  // succeeds: returns the old value
  EXPECT_EQ(9, hsa_signal_cas_relaxed(s, 7, 11));     // fails: returns the current value
  EXPECT_EQ(9, hsa_signal_load_acquire(s));           // deprecated name, same entry
  hsa_signal_silent_store_relaxed(s, -4);
  EXPECT_EQ(-4, hsa_signal_load_relaxed(s));
  volatile hsa_signal_value_t* value = nullptr;
  HSA_OK(hsa_amd_signal_value_pointer(s, &value));
  EXPECT_EQ(-4, *value);
  // The handle is ROCr's signal ABI block.
  EXPECT_EQ(&reinterpret_cast<amd_signal_t*>(s.handle)->value, value);
  HSA_OK(hsa_signal_destroy(s));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_SIGNAL, hsa_signal_destroy(s));

  hsa_agent_t twice[2] = {gpu_, gpu_};
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, hsa_signal_create(0, 2, twice, &s));
  EXPECT_EQ(HSA_STATUS_ERROR, hsa_amd_signal_create(0, 0, nullptr, HSA_AMD_SIGNAL_IPC, &s));
  HSA_OK(hsa_amd_signal_create(3, 0, nullptr, HSA_AMD_SIGNAL_AMD_GPU_ONLY, &s));
  EXPECT_EQ(3, hsa_signal_load_relaxed(s));
  HSA_OK(hsa_signal_destroy(s));
}

TEST_F(SimHsa, SignalWaitsBlockWakeAndTimeOut) {
  hsa_signal_t s = signal(1);
  // A timeout (in system ticks, i.e. ns) returns the current value.
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(1, hsa_signal_wait_relaxed(s, HSA_SIGNAL_CONDITION_LT, 1, 50'000'000, HSA_WAIT_STATE_BLOCKED));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(49));

  // A blocked waiter sleeps, then wakes on the store.
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    hsa_signal_store_screlease(s, 0);
  });
  const uint64_t cpu_before = threadCpuNs();
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(0, hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, kForever, HSA_WAIT_STATE_BLOCKED));
  const auto waited = std::chrono::steady_clock::now() - start;
  const uint64_t cpu_used = threadCpuNs() - cpu_before;
  setter.join();
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(cpu_used, 50'000'000u) << "the wait spun instead of sleeping";

  // Several signals at once.
  hsa_signal_t pair[2] = {signal(1), signal(1)};
  hsa_signal_condition_t conditions[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_EQ};
  hsa_signal_value_t values[2] = {0, 0};
  std::thread second([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    hsa_signal_store_relaxed(pair[1], 0);
  });
  hsa_signal_value_t satisfying = -1;
  EXPECT_EQ(1u, hsa_amd_signal_wait_any(2, pair, conditions, values, kForever, HSA_WAIT_STATE_BLOCKED, &satisfying));
  EXPECT_EQ(0, satisfying);
  second.join();
  EXPECT_EQ(UINT32_MAX, hsa_amd_signal_wait_any(1, pair, conditions, values, 10'000'000, HSA_WAIT_STATE_BLOCKED,
                                                &satisfying));

  hsa_signal_group_t group{};
  HSA_OK(hsa_signal_group_create(2, pair, 0, nullptr, &group));
  hsa_signal_t which{};
  hsa_signal_value_t v = -1;
  HSA_OK(hsa_signal_group_wait_any_scacquire(group, conditions, values, HSA_WAIT_STATE_BLOCKED, &which, &v));
  EXPECT_EQ(pair[1].handle, which.handle);
  HSA_OK(hsa_signal_group_destroy(group));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP, hsa_signal_group_destroy(group));
}

TEST_F(SimHsa, AsyncHandlersAndFunctionsRunOnTheEventThread) {
  struct Seen {
    std::atomic<int> calls{0};
    std::atomic<int64_t> value{-1};
    std::atomic<bool> function_ran{false};
  } seen;
  hsa_signal_t s = signal(5);
  HSA_OK(hsa_amd_signal_async_handler(
      s, HSA_SIGNAL_CONDITION_LT, 3,
      [](hsa_signal_value_t value, void* arg) {
        auto* seen = static_cast<Seen*>(arg);
        seen->value = value;
        ++seen->calls;
        return false;  // once
      },
      &seen));
  HSA_OK(hsa_amd_async_function([](void* arg) { static_cast<Seen*>(arg)->function_ran = true; }, &seen));
  hsa_signal_store_screlease(s, 2);
  for (int i = 0; i < 500 && (seen.calls == 0 || !seen.function_ran); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(1, seen.calls.load());
  EXPECT_EQ(2, seen.value.load());
  EXPECT_TRUE(seen.function_ran.load());
  hsa_signal_store_screlease(s, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(1, seen.calls.load());  // it returned false: not called again
}

// --- Code objects and executables -------------------------------------------

TEST_F(SimHsa, ExecutableSymbolsDescribeKernelsAndVariables) {
  std::map<std::string, hsa_symbol_kind_t> symbols;
  auto collect = [](hsa_executable_t, hsa_executable_symbol_t s, void* d) {
    uint32_t length = 0;
    hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &length);
    std::string name(length, '\0');
    hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name.data());
    hsa_symbol_kind_t kind;
    hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind);
    (*static_cast<std::map<std::string, hsa_symbol_kind_t>*>(d))[name] = kind;
    return HSA_STATUS_SUCCESS;
  };
  HSA_OK(hsa_executable_iterate_symbols(executable_, collect, &symbols));
  for (const char* k : {"vector_add.kd", "append.kd", "spin.kd", "group_sum.kd", "geometry.kd"}) {
    ASSERT_EQ(1u, symbols.count(k)) << k;
    EXPECT_EQ(HSA_SYMBOL_KIND_KERNEL, symbols[k]) << k;
  }
  EXPECT_EQ(HSA_SYMBOL_KIND_VARIABLE, symbols.at("smoke_counter"));
  EXPECT_EQ(HSA_SYMBOL_KIND_VARIABLE, symbols.at("smoke_constant"));
  EXPECT_EQ(7u, symbols.size());

  size_t agent_symbols = 0;
  auto count = [](hsa_executable_t, hsa_agent_t, hsa_executable_symbol_t, void* d) {
    ++*static_cast<size_t*>(d);
    return HSA_STATUS_SUCCESS;
  };
  HSA_OK(hsa_executable_iterate_agent_symbols(executable_, gpu_, count, &agent_symbols));
  EXPECT_EQ(7u, agent_symbols);
  agent_symbols = 0;
  HSA_OK(hsa_executable_iterate_agent_symbols(executable_, cpu_, count, &agent_symbols));
  EXPECT_EQ(0u, agent_symbols);

  // Kernel symbols are named NAME.kd, as in AMDGPU code objects v3+.
  hsa_executable_symbol_t s{};
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME, hsa_executable_get_symbol_by_name(executable_, "vector_add", &gpu_, &s));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
            hsa_executable_get_symbol_by_name(executable_, "vector_add.kd", nullptr, &s));
  uint32_t kernarg_size = 0, kernarg_align = 0, group = 0, priv = 0;
  uint64_t object = 0;
  hsa_agent_t agent{};
  HSA_OK(hsa_executable_symbol_get_info(symbol("vector_add.kd"), HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                        &kernarg_size));
  HSA_OK(hsa_executable_symbol_get_info(symbol("vector_add.kd"),
                                        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, &kernarg_align));
  HSA_OK(hsa_executable_symbol_get_info(symbol("vector_add.kd"), HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
  HSA_OK(hsa_executable_symbol_get_info(symbol("vector_add.kd"), HSA_EXECUTABLE_SYMBOL_INFO_AGENT, &agent));
  EXPECT_EQ(sizeof(VectorAddArgs), kernarg_size);
  EXPECT_EQ(16u, kernarg_align);
  EXPECT_NE(0u, object);
  EXPECT_EQ(0u, object % 64);
  EXPECT_EQ(gpu_.handle, agent.handle);
  HSA_OK(hsa_executable_symbol_get_info(symbol("group_sum.kd"), HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                        &group));
  EXPECT_EQ(1024u, group);
  HSA_OK(hsa_executable_symbol_get_info(symbol("geometry.kd"), HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                        &priv));
  EXPECT_EQ(8u, priv);
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT,
            hsa_executable_symbol_get_info(symbol("vector_add.kd"), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &object));

  // Variables: the loaded copy's globals.
  uint64_t address = 0;
  uint32_t size = 0;
  bool is_const = true;
  HSA_OK(hsa_executable_symbol_get_info(symbol("smoke_counter"), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address));
  HSA_OK(hsa_executable_symbol_get_info(symbol("smoke_counter"), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, &size));
  HSA_OK(hsa_executable_symbol_get_info(symbol("smoke_counter"), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST,
                                        &is_const));
  EXPECT_EQ(16u, size);
  EXPECT_FALSE(is_const);
  auto* counter = reinterpret_cast<uint32_t*>(address);
  EXPECT_EQ(7u, counter[0]);
  HSA_OK(hsa_executable_symbol_get_info(symbol("smoke_constant"), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &address));
  HSA_OK(hsa_executable_symbol_get_info(symbol("smoke_constant"), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST,
                                        &is_const));
  EXPECT_EQ(42u, *reinterpret_cast<const uint64_t*>(address));
  EXPECT_TRUE(is_const);

  // A second executable has its own copy: other kernel objects, other globals.
  hsa_executable_t second = loadExecutable();
  EXPECT_NE(kernelObject("vector_add.kd"), kernelObject("vector_add.kd", second));
  counter[0] = 99;
  uint64_t second_address = 0;
  HSA_OK(hsa_executable_symbol_get_info(symbol("smoke_counter", second), HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
                                        &second_address));
  EXPECT_EQ(7u, *reinterpret_cast<uint32_t*>(second_address));
  HSA_OK(hsa_executable_destroy(second));

  hsa_executable_state_t state;
  HSA_OK(hsa_executable_get_info(executable_, HSA_EXECUTABLE_INFO_STATE, &state));
  EXPECT_EQ(HSA_EXECUTABLE_STATE_FROZEN, state);
  uint32_t result = 1;
  HSA_OK(hsa_executable_validate(executable_, &result));
  EXPECT_EQ(0u, result);
}

TEST_F(SimHsa, CodeObjectLoadingRefusesWhatCannotRun) {
  hsa_executable_t e{};
  HSA_OK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr, &e));
  // Not an ELF file at all.
  const char junk[] = "certainly not a code object";
  hsa_code_object_reader_t bad{};
  HSA_OK(hsa_code_object_reader_create_from_memory(junk, sizeof junk, &bad));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_CODE_OBJECT, hsa_executable_load_agent_code_object(e, gpu_, bad, nullptr, nullptr));
  HSA_OK(hsa_code_object_reader_destroy(bad));
  // An AMDGPU code object: right format, wrong ISA for this device.
  std::vector<uint8_t> amdgpu(bytes_.begin(), bytes_.begin() + 64);
  uint16_t machine = 224;  // EM_AMDGPU
  std::memcpy(amdgpu.data() + 18, &machine, sizeof machine);
  HSA_OK(hsa_code_object_reader_create_from_memory(amdgpu.data(), amdgpu.size(), &bad));
  EXPECT_EQ(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
            hsa_executable_load_agent_code_object(e, gpu_, bad, nullptr, nullptr));
  HSA_OK(hsa_code_object_reader_destroy(bad));
  // The CPU runs no code objects.
  EXPECT_EQ(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS,
            hsa_executable_load_agent_code_object(e, cpu_, reader_, nullptr, nullptr));
  // The same symbols twice.
  HSA_OK(hsa_executable_load_agent_code_object(e, gpu_, reader_, nullptr, nullptr));
  EXPECT_EQ(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED,
            hsa_executable_load_agent_code_object(e, gpu_, reader_, nullptr, nullptr));
  HSA_OK(hsa_executable_freeze(e, nullptr));
  EXPECT_EQ(HSA_STATUS_ERROR_FROZEN_EXECUTABLE, hsa_executable_freeze(e, nullptr));
  EXPECT_EQ(HSA_STATUS_ERROR_FROZEN_EXECUTABLE,
            hsa_executable_load_agent_code_object(e, gpu_, reader_, nullptr, nullptr));
  HSA_OK(hsa_executable_destroy(e));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_EXECUTABLE, hsa_executable_destroy(e));

  // From a file descriptor.
  int fd = open(GTAP_SIM_HSA_SMOKE_KERNELS_PATH, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  hsa_code_object_reader_t from_file{};
  HSA_OK(hsa_code_object_reader_create_from_file(fd, &from_file));
  close(fd);
  HSA_OK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, nullptr, &e));
  HSA_OK(hsa_executable_load_agent_code_object(e, gpu_, from_file, nullptr, nullptr));
  HSA_OK(hsa_code_object_reader_destroy(from_file));
  EXPECT_NE(0u, kernelObject("append.kd", e));
  HSA_OK(hsa_executable_destroy(e));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_FILE, hsa_code_object_reader_create_from_file(-1, &from_file));
}

// --- Queues and dispatches --------------------------------------------------

TEST_F(SimHsa, QueuesAreAqlRingsWithIndices) {
  hsa_queue_t* q = nullptr;
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT,
            hsa_queue_create(gpu_, 100, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &q));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_AGENT,
            hsa_queue_create(cpu_, 64, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &q));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
            hsa_queue_create(gpu_, 1u << 20, HSA_QUEUE_TYPE_MULTI, nullptr, nullptr, 0, 0, &q));
  q = queue(16);
  ASSERT_NE(nullptr, q);
  EXPECT_EQ(64u, q->size);  // rounded up to the minimum, as ROCr does
  EXPECT_EQ(HSA_QUEUE_TYPE_MULTI, q->type);
  EXPECT_EQ(uint32_t(HSA_QUEUE_FEATURE_KERNEL_DISPATCH), q->features);
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(q->base_address) % 64);
  EXPECT_NE(0u, q->doorbell_signal.handle);
  for (uint32_t i = 0; i < q->size; ++i) {
    EXPECT_EQ(HSA_PACKET_TYPE_INVALID, packetType(static_cast<uint8_t*>(q->base_address) + 64 * i));
  }
  hsa_queue_t* other = queue();
  EXPECT_NE(q->id, other->id);

  // Index operations on a soft queue, which has no packet processor.
  hsa_signal_t doorbell = signal(0);
  hsa_region_t region{};
  EXPECT_EQ(HSA_STATUS_INFO_BREAK, hsa_agent_iterate_regions(
                                       cpu_,
                                       [](hsa_region_t r, void* d) {
                                         *static_cast<hsa_region_t*>(d) = r;
                                         return HSA_STATUS_INFO_BREAK;
                                       },
                                       &region));
  hsa_queue_t* soft = nullptr;
  HSA_OK(hsa_soft_queue_create(region, 32, HSA_QUEUE_TYPE_SINGLE, HSA_QUEUE_FEATURE_AGENT_DISPATCH, doorbell, &soft));
  queues_.push_back(soft);
  EXPECT_EQ(0u, hsa_queue_add_write_index_relaxed(soft, 3));
  EXPECT_EQ(3u, hsa_queue_add_write_index_scacq_screl(soft, 2));
  EXPECT_EQ(5u, hsa_queue_cas_write_index_scacq_screl(soft, 5, 9));
  EXPECT_EQ(9u, hsa_queue_cas_write_index_relaxed(soft, 5, 11));
  EXPECT_EQ(9u, hsa_queue_load_write_index_scacquire(soft));
  hsa_queue_store_write_index_screlease(soft, 12);
  EXPECT_EQ(12u, hsa_queue_load_write_index_relaxed(soft));
  hsa_queue_store_read_index_screlease(soft, 4);
  EXPECT_EQ(4u, hsa_queue_load_read_index_scacquire(soft));
  EXPECT_EQ(12u, hsa_queue_load_write_index_acquire(soft));  // deprecated name
  // The indices live in the amd_queue_t the hsa_queue_t starts, as in ROCr.
  EXPECT_EQ(12u, reinterpret_cast<amd_queue_t*>(soft)->write_dispatch_id);

  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_QUEUE, hsa_amd_profiling_set_profiler_enabled(reinterpret_cast<hsa_queue_t*>(this), 1));
  HsaApiTable* table = toolTable();
  ASSERT_NE(nullptr, table);
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_QUEUE, table->amd_ext_->hsa_amd_queue_intercept_register_fn(
                                                q, [](const void*, uint64_t, uint64_t, void*,
                                                      hsa_amd_queue_intercept_packet_writer) {}, nullptr));
}

TEST_F(SimHsa, VectorAddDispatchComputesAndReleasesItsSlot) {
  hsa_queue_t* q = queue();
  ASSERT_NE(nullptr, q);
  constexpr uint32_t n = 1000;  // not a multiple of the work-group size
  float* c = nullptr;
  hsa_signal_t done = signal(1);
  const uint64_t index = submit(q, {vectorAdd(n, 2.0f, &c, done)});
  ASSERT_EQ(0, waitZero(done));
  expectVectorAdd(c, n, 2.0f);
  EXPECT_EQ(HSA_PACKET_TYPE_INVALID, packetType(static_cast<uint8_t*>(q->base_address) + 64 * (index & (q->size - 1))));
  EXPECT_EQ(index + 1, hsa_queue_load_read_index_scacquire(q));

  // Many more than the ring holds.
  std::vector<float*> outputs(300);
  hsa_signal_t many = signal(int64_t(outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) submit(q, {vectorAdd(64, float(i), &outputs[i], many)});
  ASSERT_EQ(0, waitZero(many));
  for (size_t i = 0; i < outputs.size(); ++i) expectVectorAdd(outputs[i], 64, float(i));
}

TEST_F(SimHsa, GroupKernelsSeeGroupMemoryAndPartialGroups) {
  hsa_queue_t* q = queue();
  constexpr uint32_t n = 1000, wg = 64, groups = (n + wg - 1) / wg;
  auto* in = allocate<uint32_t>(host_pool_, n * 4);
  auto* out = allocate<uint32_t>(host_pool_, groups * 4);
  for (uint32_t i = 0; i < n; ++i) in[i] = i;
  hsa_signal_t done = signal(1);
  const uint32_t grid[3] = {n, 1, 1}, size[3] = {wg, 1, 1};
  submit(q, {dispatchPacket(kernelObject("group_sum.kd"), kernarg(GroupSumArgs{in, out}), 1, grid, size, done)});
  ASSERT_EQ(0, waitZero(done));
  for (uint32_t g = 0; g < groups; ++g) {
    uint32_t expected = 0;
    for (uint32_t i = g * wg; i < std::min(n, (g + 1) * wg); ++i) expected += i;
    EXPECT_EQ(expected, out[g]) << "group " << g;
  }
}

TEST_F(SimHsa, ThreeDimensionalGridsCoverEveryWorkItem) {
  hsa_queue_t* q = queue();
  const uint32_t grid[3] = {5, 3, 2}, wg[3] = {2, 2, 2};
  const uint32_t total = grid[0] * grid[1] * grid[2];
  auto* ids = allocate<uint32_t>(host_pool_, total * 4);
  auto* items = allocate<uint32_t>(host_pool_, total * 4);
  std::fill(ids, ids + total, UINT32_MAX);
  hsa_signal_t done = signal(1);
  submit(q, {dispatchPacket(kernelObject("geometry.kd"), kernarg(GeometryArgs{ids, items}), 3, grid, wg, done)});
  ASSERT_EQ(0, waitZero(done));
  for (uint32_t z = 0; z < grid[2]; ++z) {
    for (uint32_t y = 0; y < grid[1]; ++y) {
      for (uint32_t x = 0; x < grid[0]; ++x) {
        uint32_t at = (z * grid[1] + y) * grid[0] + x;
        EXPECT_EQ(at, ids[at]);
        // Edge groups are partial: x groups hold 2, 2, 1 items; y groups 2, 1.
        uint32_t expected = (x < 4 ? 2 : 1) * (y < 2 ? 2 : 1) * 2;
        EXPECT_EQ(expected, items[at]) << x << "," << y << "," << z;
      }
    }
  }
}

TEST_F(SimHsa, BarrierPacketsHoldLaterPacketsBack) {
  hsa_queue_t* q = queue();
  auto* log = allocate<uint32_t>(host_pool_, 64);
  hsa_signal_t gate = signal(1), other = signal(1), done = signal(2);
  // barrier-AND(gate, other) ; append(1) ; barrier-OR(gate, other) ; append(2)
  submit(q, {barrierPacket(HSA_PACKET_TYPE_BARRIER_AND, {gate, hsa_signal_t{0}, other}, hsa_signal_t{0}),
             appendPacket(log, 1, done)});
  EXPECT_EQ(2, hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 2, 100'000'000, HSA_WAIT_STATE_BLOCKED));
  EXPECT_EQ(0u, log[0]);
  hsa_signal_store_screlease(gate, 0);  // one of two: the AND barrier still holds
  EXPECT_EQ(2, hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 2, 100'000'000, HSA_WAIT_STATE_BLOCKED));
  hsa_signal_store_screlease(other, 0);
  EXPECT_EQ(1, hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 1, 10'000'000'000ull, HSA_WAIT_STATE_BLOCKED));
  EXPECT_EQ(1u, log[0]);
  EXPECT_EQ(1u, log[1]);

  hsa_signal_t a = signal(1), b = signal(1), barrier_done = signal(1);
  submit(q, {barrierPacket(HSA_PACKET_TYPE_BARRIER_OR, {a, b}, barrier_done), appendPacket(log, 2, done)});
  EXPECT_EQ(1, hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, 100'000'000, HSA_WAIT_STATE_BLOCKED));
  hsa_signal_store_screlease(b, 0);  // one is enough for OR
  EXPECT_EQ(0, waitZero(done));
  EXPECT_EQ(0, waitZero(barrier_done));
  EXPECT_EQ(2u, log[0]);
  EXPECT_EQ(2u, log[2]);
}

TEST_F(SimHsa, QueueErrorsReachTheCallback) {
  struct Seen {
    std::atomic<int> status{0};
    std::atomic<hsa_queue_t*> source{nullptr};
  } seen;
  hsa_queue_t* q = nullptr;
  HSA_OK(hsa_queue_create(
      gpu_, 64, HSA_QUEUE_TYPE_MULTI,
      [](hsa_status_t status, hsa_queue_t* source, void* data) {
        static_cast<Seen*>(data)->source = source;
        static_cast<Seen*>(data)->status = int(status);
      },
      &seen, UINT32_MAX, UINT32_MAX, &q));
  queues_.push_back(q);
  hsa_signal_t done = signal(1);
  const uint32_t one[3] = {1, 1, 1};
  submit(q, {dispatchPacket(0xdead0000, kernarg(AppendArgs{}), 1, one, one, done)});  // no such kernel
  for (int i = 0; i < 500 && seen.status == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(int(HSA_STATUS_ERROR_INVALID_CODE_OBJECT), seen.status.load());
  EXPECT_EQ(q, seen.source.load());
  EXPECT_EQ(1, hsa_signal_load_scacquire(done));  // never completed
}

// --- Profiling --------------------------------------------------------------

TEST_F(SimHsa, DispatchTimesAreInTheSystemDomain) {
  hsa_queue_t* q = queue();
  HSA_OK(hsa_amd_profiling_set_profiler_enabled(q, 1));
  auto* ticks = allocate<uint64_t>(host_pool_, 16);
  hsa_signal_t done = signal(1);
  const uint32_t one[3] = {1, 1, 1};
  constexpr uint64_t kSpinNs = 3'000'000;
  const uint64_t before = systemTimestamp();
  submit(q, {dispatchPacket(kernelObject("spin.kd"), kernarg(SpinArgs{kSpinNs, ticks}), 1, one, one, done)});
  ASSERT_EQ(0, waitZero(done));
  const uint64_t after = systemTimestamp();

  hsa_amd_profiling_dispatch_time_t time{};
  HSA_OK(hsa_amd_profiling_get_dispatch_time(gpu_, done, &time));
  EXPECT_LE(before, time.start);
  EXPECT_LE(time.start, time.end);
  EXPECT_LE(time.end, after);
  EXPECT_GE(time.end - time.start, kSpinNs - kNsPerDeviceTick);
  EXPECT_LT(time.end - time.start, 2'000'000'000u);

  // The signal holds raw device ticks, as ROCr's does; the query converts them.
  const auto* abi = reinterpret_cast<const amd_signal_t*>(done.handle);
  uint64_t converted = 0;
  HSA_OK(hsa_amd_profiling_convert_tick_to_system_domain(gpu_, abi->start_ts, &converted));
  EXPECT_NEAR(double(time.start), double(converted), 1000.0);

  // The kernel read the device clock itself: another domain, at 100 MHz.
  uint64_t kernel_start = 0, kernel_end = 0;
  HSA_OK(hsa_amd_profiling_convert_tick_to_system_domain(gpu_, ticks[0], &kernel_start));
  HSA_OK(hsa_amd_profiling_convert_tick_to_system_domain(gpu_, ticks[1], &kernel_end));
  EXPECT_LE(time.start, kernel_start + kNsPerDeviceTick);
  EXPECT_LE(kernel_end, time.end + kNsPerDeviceTick);
  EXPECT_EQ((ticks[1] - ticks[0]) * kNsPerDeviceTick, kernel_end - kernel_start);
  EXPECT_GE(ticks[1] - ticks[0], kSpinNs / kNsPerDeviceTick - 1);
  EXPECT_GT(std::max(ticks[0], kernel_start) - std::min(ticks[0], kernel_start), 1'000'000'000u)
      << "device ticks should not be system nanoseconds";

  // System timestamps are CLOCK_BOOTTIME nanoseconds.
  const uint64_t boot_before = readClock(CLOCK_BOOTTIME);
  const uint64_t system = systemTimestamp();
  const uint64_t boot_after = readClock(CLOCK_BOOTTIME);
  EXPECT_LE(boot_before, system);
  EXPECT_LE(system, boot_after);

  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_AGENT, hsa_amd_profiling_get_dispatch_time(cpu_, done, &time));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_SIGNAL, hsa_amd_profiling_get_dispatch_time(gpu_, hsa_signal_t{4}, &time));
}

TEST_F(SimHsa, AsyncCopyTimesAreInTheSystemDomain) {
  HSA_OK(hsa_amd_profiling_async_copy_enable(true));
  constexpr size_t kBytes = 16 << 20;
  auto* src = allocate<uint8_t>(device_pool_, kBytes);
  auto* dst = allocate<uint8_t>(host_pool_, kBytes);
  auto* dst2 = allocate<uint8_t>(host_pool_, kBytes);
  std::memset(src, 0x3c, kBytes);
  auto timeCopy = [&](uint8_t* to, hsa_agent_t to_agent, const uint8_t* from, hsa_agent_t from_agent) {
    hsa_signal_t done = signal(1);
    const uint64_t before = systemTimestamp();
    HSA_OK(hsa_amd_memory_async_copy(to, to_agent, from, from_agent, kBytes, 0, nullptr, done));
    ASSERT_EQ(0, waitZero(done));
    const uint64_t after = systemTimestamp();
    hsa_amd_profiling_async_copy_time_t time{};
    HSA_OK(hsa_amd_profiling_get_async_copy_time(done, &time));
    // Device ticks are 10 ns apart: a converted time may sit up to one tick early.
    EXPECT_LE(before, time.start + kNsPerDeviceTick);
    EXPECT_LE(time.start, time.end);
    EXPECT_LE(time.end, after);
    EXPECT_EQ(0, std::memcmp(from, to, kBytes));
  };
  timeCopy(dst, cpu_, src, gpu_);   // device to host: timed by the GPU's clock
  timeCopy(dst2, cpu_, dst, cpu_);  // host to host: timed in the system domain directly
  HSA_OK(hsa_amd_profiling_async_copy_enable(false));
  hsa_signal_t untimed = signal(1);
  HSA_OK(hsa_amd_memory_async_copy(dst, cpu_, src, gpu_, 64, 0, nullptr, untimed));
  ASSERT_EQ(0, waitZero(untimed));
  hsa_amd_profiling_async_copy_time_t time{};
  EXPECT_EQ(HSA_STATUS_ERROR, hsa_amd_profiling_get_async_copy_time(untimed, &time));
}

// --- Intercept queues -------------------------------------------------------

struct CountingHandler {
  std::mutex lock;
  std::vector<uint64_t> indices;
  std::vector<uint64_t> counts;

  static void handle(const void* packets, uint64_t count, uint64_t user_index, void* data,
                     hsa_amd_queue_intercept_packet_writer writer) {
    auto* self = static_cast<CountingHandler*>(data);
    {
      std::lock_guard<std::mutex> guard(self->lock);
      self->indices.push_back(user_index);
      self->counts.push_back(count);
    }
    writer(packets, count);
  }
};

TEST_F(SimHsa, InterceptQueueHandlersSeeAndForwardEveryPacket) {
  hsa_queue_t* q = interceptQueue();
  ASSERT_NE(nullptr, q);
  CountingHandler counter;
  HSA_OK(registerHandler(q, &CountingHandler::handle, &counter));

  float* c[3] = {};
  hsa_signal_t done = signal(3);
  submit(q, {vectorAdd(500, 1.0f, &c[0], done)});
  submit(q, {vectorAdd(500, 2.0f, &c[1], done), vectorAdd(500, 3.0f, &c[2], done)});  // one doorbell, two packets
  ASSERT_EQ(0, waitZero(done));
  for (int i = 0; i < 3; ++i) expectVectorAdd(c[i], 500, float(i + 1));
  std::lock_guard<std::mutex> guard(counter.lock);
  EXPECT_EQ((std::vector<uint64_t>{0, 1, 2}), counter.indices);
  EXPECT_EQ((std::vector<uint64_t>{1, 1, 1}), counter.counts);  // one packet per call, as in ROCr
  // The program's queue: consumed packets are INVALID again, the read index moved on.
  EXPECT_EQ(3u, hsa_queue_load_read_index_scacquire(q));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(HSA_PACKET_TYPE_INVALID, packetType(static_cast<uint8_t*>(q->base_address) + 64 * i));
  }
}

// Moves the program's completion signal behind a barrier on a signal of its
// own, as a profiler does to time dispatches.
struct CompletionRewriter {
  hsa_signal_t own;
  std::atomic<uint64_t> original{0};

  static void handle(const void* packets, uint64_t count, uint64_t user_index, void* data,
                     hsa_amd_queue_intercept_packet_writer writer) {
    auto* self = static_cast<CompletionRewriter*>(data);
    hsa_kernel_dispatch_packet_t out[2];
    std::memcpy(&out[0], packets, sizeof out[0]);
    if (count != 1 || packetType(&out[0]) != HSA_PACKET_TYPE_KERNEL_DISPATCH) return writer(packets, count);
    self->original = out[0].completion_signal.handle;
    out[0].completion_signal = self->own;
    out[1] = barrierPacket(HSA_PACKET_TYPE_BARRIER_AND, {self->own}, hsa_signal_t{self->original});
    writer(out, 2);
  }
};

TEST_F(SimHsa, InterceptHandlersMayRewritePackets) {
  hsa_queue_t* q = interceptQueue();
  ASSERT_NE(nullptr, q);
  HSA_OK(hsa_amd_profiling_set_profiler_enabled(q, 1));
  CompletionRewriter rewriter{signal(1)};
  HSA_OK(registerHandler(q, &CompletionRewriter::handle, &rewriter));
  float* c = nullptr;
  hsa_signal_t done = signal(1);
  submit(q, {vectorAdd(700, 4.0f, &c, done)});
  ASSERT_EQ(0, waitZero(done));
  expectVectorAdd(c, 700, 4.0f);
  EXPECT_EQ(done.handle, rewriter.original.load());
  EXPECT_EQ(0, hsa_signal_load_scacquire(rewriter.own));
  hsa_amd_profiling_dispatch_time_t time{};
  HSA_OK(hsa_amd_profiling_get_dispatch_time(gpu_, rewriter.own, &time));
  EXPECT_GT(time.start, 0u);
  EXPECT_LE(time.start, time.end);
}

struct OrderLog {
  std::mutex lock;
  std::string calls;
};

template <char Name>
void orderedHandler(const void* packets, uint64_t count, uint64_t, void* data,
                    hsa_amd_queue_intercept_packet_writer writer) {
  auto* log = static_cast<OrderLog*>(data);
  {
    std::lock_guard<std::mutex> guard(log->lock);
    log->calls += Name;
  }
  writer(packets, count);
}

TEST_F(SimHsa, InterceptHandlersRunLastRegisteredFirst) {
  hsa_queue_t* q = interceptQueue();
  ASSERT_NE(nullptr, q);
  OrderLog log;
  HSA_OK(registerHandler(q, &orderedHandler<'A'>, &log));
  HSA_OK(registerHandler(q, &orderedHandler<'B'>, &log));
  auto* out = allocate<uint32_t>(host_pool_, 64);
  hsa_signal_t done = signal(1);
  submit(q, {appendPacket(out, 5, done)});
  ASSERT_EQ(0, waitZero(done));
  EXPECT_EQ(5u, out[1]);
  std::lock_guard<std::mutex> guard(log.lock);
  EXPECT_EQ("BA", log.calls);
}

// --- The API table and tools ------------------------------------------------

TEST_F(SimHsa, ToolTableHasSizedTablesAndNullUnimplementedEntries) {
  HsaApiTable* table = toolTable();
  ASSERT_NE(nullptr, table);
  EXPECT_EQ(sizeof(HsaApiTable), table->version.minor_id);
  EXPECT_EQ(sizeof(CoreApiTable), table->core_->version.minor_id);
  EXPECT_EQ(sizeof(AmdExtTable), table->amd_ext_->version.minor_id);
  EXPECT_EQ(sizeof(FinalizerExtTable), table->finalizer_ext_->version.minor_id);
  EXPECT_EQ(sizeof(ImageExtTable), table->image_ext_->version.minor_id);
  EXPECT_NE(nullptr, table->core_->hsa_queue_create_fn);
  EXPECT_NE(nullptr, table->amd_ext_->hsa_amd_queue_intercept_create_fn);
  // Not implemented: a null entry, and the exported function fails cleanly.
  EXPECT_EQ(nullptr, table->core_->hsa_code_object_serialize_fn);
  EXPECT_EQ(nullptr, table->image_ext_->hsa_ext_image_create_fn);
  EXPECT_EQ(HSA_STATUS_ERROR, hsa_code_object_serialize({}, nullptr, {}, nullptr, nullptr, nullptr));
  EXPECT_EQ(HSA_STATUS_ERROR, hsa_ext_image_destroy(gpu_, {}));
}

// --- AQL profile extension --------------------------------------------------

class SimHsaAqlProfile : public SimHsa {
 protected:
  void SetUp() override {
    SimHsa::SetUp();
    bool supported = false;
    ASSERT_EQ(HSA_STATUS_SUCCESS, hsa_system_extension_supported(HSA_EXTENSION_AMD_AQLPROFILE, 1, 0, &supported));
    ASSERT_TRUE(supported);
    ASSERT_EQ(HSA_STATUS_SUCCESS,
              hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 1, sizeof api_, &api_));
    ASSERT_NE(nullptr, api_.hsa_ven_amd_aqlprofile_iterate_data);
  }

  // A PMC profile of `list` with command and output buffers of the sizes
  // get_info asks for, in host memory; the event array lives as long as the test.
  hsa_ven_amd_aqlprofile_profile_t profile(const std::vector<hsa_ven_amd_aqlprofile_event_t>& list) {
    const auto& events = *event_lists_.emplace_back(std::make_unique<std::vector<hsa_ven_amd_aqlprofile_event_t>>(list));
    hsa_ven_amd_aqlprofile_profile_t p{};
    p.agent = gpu_;
    p.type = HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC;
    p.events = events.data();
    p.event_count = uint32_t(events.size());
    uint32_t command = 0, output = 0;
    EXPECT_EQ(HSA_STATUS_SUCCESS,
              api_.hsa_ven_amd_aqlprofile_get_info(&p, HSA_VEN_AMD_AQLPROFILE_INFO_COMMAND_BUFFER_SIZE, &command));
    EXPECT_EQ(HSA_STATUS_SUCCESS,
              api_.hsa_ven_amd_aqlprofile_get_info(&p, HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA_SIZE, &output));
    EXPECT_GT(command, 0u);
    EXPECT_GE(output, 8 * events.size());
    p.command_buffer = {allocate(host_pool_, command), command};
    p.output_buffer = {allocate(host_pool_, output), output};
    return p;
  }

  // Event results by position, through iterate_data.
  hsa_status_t results(const hsa_ven_amd_aqlprofile_profile_t& p, std::vector<uint64_t>& out) {
    out.clear();
    return api_.hsa_ven_amd_aqlprofile_iterate_data(
        &p,
        [](hsa_ven_amd_aqlprofile_info_type_t type, hsa_ven_amd_aqlprofile_info_data_t* info, void* data) {
          if (type != HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA) return HSA_STATUS_ERROR;
          static_cast<std::vector<uint64_t>*>(data)->push_back(info->pmc_data.result);
          return HSA_STATUS_SUCCESS;
        },
        &out);
  }

  std::string lastError() {
    const char* s = nullptr;
    EXPECT_EQ(HSA_STATUS_SUCCESS, api_.hsa_ven_amd_aqlprofile_error_string(&s));
    return s != nullptr ? s : "";
  }

  hsa_ven_amd_aqlprofile_1_00_pfn_t api_{};

 public:
  // The packet a tool writes: the extension's body under a vendor-specific
  // header, as a dispatch-sized slot for submit() or an intercept writer.
  static hsa_kernel_dispatch_packet_t vendorPacket(const hsa_ext_amd_aql_pm4_packet_t& pm4, hsa_signal_t completion) {
    hsa_ext_amd_aql_pm4_packet_t p = pm4;
    p.header = header(HSA_PACKET_TYPE_VENDOR_SPECIFIC);
    p.completion_signal = completion;
    hsa_kernel_dispatch_packet_t slot;
    static_assert(sizeof slot == sizeof p);
    std::memcpy(&slot, &p, sizeof slot);
    return slot;
  }

 protected:
  std::vector<std::unique_ptr<std::vector<hsa_ven_amd_aqlprofile_event_t>>> event_lists_;
};

constexpr hsa_ven_amd_aqlprofile_event_t kGrbmCount{HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM, 0, 0};
constexpr hsa_ven_amd_aqlprofile_event_t kGrbmGuiActive{HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM, 0, 2};
constexpr hsa_ven_amd_aqlprofile_event_t kSqWaves{HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_SQ, 0, 4};
constexpr hsa_ven_amd_aqlprofile_event_t kGrbmCpBusy{HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM, 0, 3};

TEST_F(SimHsa, AqlProfileTableComesFromTheMajorExtensionTable) {
  bool supported = false;
  uint16_t minor = 99;
  HSA_OK(hsa_system_major_extension_supported(HSA_EXTENSION_AMD_AQLPROFILE, 1, &minor, &supported));
  EXPECT_TRUE(supported);
  EXPECT_EQ(0, minor);
  HSA_OK(hsa_agent_major_extension_supported(HSA_EXTENSION_AMD_AQLPROFILE, gpu_, 1, &minor, &supported));
  EXPECT_TRUE(supported);
  HSA_OK(hsa_system_major_extension_supported(HSA_EXTENSION_AMD_AQLPROFILE, 2, &minor, &supported));
  EXPECT_FALSE(supported);

  hsa_ven_amd_aqlprofile_1_00_pfn_t api{};
  HSA_OK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 1, sizeof api, &api));
  EXPECT_EQ(uint32_t(HSA_AQLPROFILE_VERSION_MAJOR), api.hsa_ven_amd_aqlprofile_version_major());
  EXPECT_NE(nullptr, api.hsa_ven_amd_aqlprofile_start);
  EXPECT_NE(nullptr, api.hsa_ven_amd_aqlprofile_stop);
  // Never more than the caller's length.
  hsa_ven_amd_aqlprofile_1_00_pfn_t partial{};
  HSA_OK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 1, 2 * sizeof(void*), &partial));
  EXPECT_NE(nullptr, partial.hsa_ven_amd_aqlprofile_version_minor);
  EXPECT_EQ(nullptr, partial.hsa_ven_amd_aqlprofile_error_string);

  EXPECT_EQ(HSA_STATUS_ERROR, hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 2, sizeof api, &api));
  EXPECT_EQ(HSA_STATUS_ERROR, hsa_system_get_major_extension_table(HSA_EXTENSION_FINALIZER, 1, sizeof api, &api));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, hsa_system_get_major_extension_table(0x100, 1, sizeof api, &api));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT,
            hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_AQLPROFILE, 1, sizeof api, nullptr));
}

TEST_F(SimHsaAqlProfile, ValidateEventRefusesWhatTheDeviceDoesNotCount) {
  bool valid = false;
  for (const auto& e : {kGrbmCount, kGrbmGuiActive, kSqWaves}) {
    HSA_OK(api_.hsa_ven_amd_aqlprofile_validate_event(gpu_, &e, &valid));
    EXPECT_TRUE(valid) << e.block_name << "/" << e.counter_id;
  }
  const hsa_ven_amd_aqlprofile_event_t unknown[] = {
      {HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_SQ, 0, 9999},  // no such counter
      {HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM, 1, 0},   // no second instance
      {HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_TCC, 0, 0},    // a block it does not count
  };
  for (const auto& e : unknown) {
    valid = true;
    HSA_OK(api_.hsa_ven_amd_aqlprofile_validate_event(gpu_, &e, &valid));
    EXPECT_FALSE(valid) << e.block_name << "/" << e.block_index << "/" << e.counter_id;
  }
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_AGENT, api_.hsa_ven_amd_aqlprofile_validate_event(cpu_, &kSqWaves, &valid));

  // A profile holding one is refused, naming the event.
  std::vector<hsa_ven_amd_aqlprofile_event_t> events{kSqWaves, unknown[0]};
  hsa_ven_amd_aqlprofile_profile_t p = profile({kSqWaves, kSqWaves});
  p.events = events.data();
  hsa_ext_amd_aql_pm4_packet_t start{};
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, api_.hsa_ven_amd_aqlprofile_start(&p, &start));
  EXPECT_NE(std::string::npos, lastError().find("event 1 (block 6, instance 0, counter 9999)")) << lastError();

  // Buffers smaller than get_info says are refused too.
  hsa_ven_amd_aqlprofile_profile_t small = profile({kSqWaves});
  small.output_buffer.size -= 1;
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, api_.hsa_ven_amd_aqlprofile_start(&small, &start));
  EXPECT_NE(std::string::npos, lastError().find("output buffer")) << lastError();
}

TEST_F(SimHsaAqlProfile, BlockCountersAreTheBlocksCounterRegisters) {
  bool valid = false;
  HSA_OK(api_.hsa_ven_amd_aqlprofile_validate_event(gpu_, &kGrbmCpBusy, &valid));
  EXPECT_TRUE(valid);
  uint32_t grbm = 0, sq = 0;
  hsa_ven_amd_aqlprofile_profile_t g = profile({kGrbmCount});
  HSA_OK(api_.hsa_ven_amd_aqlprofile_get_info(&g, HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS, &grbm));
  hsa_ven_amd_aqlprofile_profile_t w = profile({kSqWaves});
  HSA_OK(api_.hsa_ven_amd_aqlprofile_get_info(&w, HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS, &sq));
  EXPECT_EQ(2u, grbm);  // GFX9's GRBM and SQ counter registers
  EXPECT_EQ(8u, sq);
  // Three GRBM events are one more than the block counts at once.
  hsa_ven_amd_aqlprofile_profile_t three = profile({kGrbmCount, kGrbmGuiActive, kSqWaves});
  const hsa_ven_amd_aqlprofile_event_t threeGrbm[] = {kGrbmCount, kGrbmGuiActive, kGrbmCpBusy};
  three.events = threeGrbm;
  hsa_ext_amd_aql_pm4_packet_t start{};
  uint32_t size = 0;
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT,
            api_.hsa_ven_amd_aqlprofile_get_info(&three, HSA_VEN_AMD_AQLPROFILE_INFO_COMMAND_BUFFER_SIZE, &size));
  EXPECT_EQ(HSA_STATUS_ERROR_INVALID_ARGUMENT, api_.hsa_ven_amd_aqlprofile_start(&three, &start));
  EXPECT_NE(std::string::npos, lastError().find("3 events of block 3, which counts 2 at once")) << lastError();
  hsa_ven_amd_aqlprofile_profile_t two = profile({kGrbmGuiActive, kGrbmCpBusy, kSqWaves});
  HSA_OK(api_.hsa_ven_amd_aqlprofile_start(&two, &start));
}

TEST_F(SimHsaAqlProfile, CountersMeasureTheDispatchesBetweenStartAndStop) {
  hsa_queue_t* q = queue();
  ASSERT_NE(nullptr, q);
  // Before the start packet: not counted.
  float* before = nullptr;
  hsa_signal_t first = signal(1);
  submit(q, {vectorAdd(4096, 1.0f, &before, first)});
  ASSERT_EQ(0, waitZero(first));

  const std::vector<hsa_ven_amd_aqlprofile_event_t> events{kGrbmCount, kGrbmGuiActive, kSqWaves};
  hsa_ven_amd_aqlprofile_profile_t p = profile(events);
  hsa_ext_amd_aql_pm4_packet_t start{}, stop{};
  HSA_OK(api_.hsa_ven_amd_aqlprofile_start(&p, &start));
  HSA_OK(api_.hsa_ven_amd_aqlprofile_stop(&p, &stop));

  // 1000 work-items in groups of 96: 10 full groups of 2 waves and one of
  // 40 items, 1 wave; then one work-group busy for 2 ms: 1 wave.
  float* c = nullptr;
  hsa_kernel_dispatch_packet_t add = vectorAdd(1000, 3.0f, &c, {});
  add.workgroup_size_x = 96;
  auto* ticks = allocate<uint64_t>(host_pool_, 2 * sizeof(uint64_t));
  const uint32_t one[3] = {1, 1, 1};
  constexpr uint64_t kSpinNs = 2'000'000;
  hsa_kernel_dispatch_packet_t spin =
      dispatchPacket(kernelObject("spin.kd"), kernarg(SpinArgs{kSpinNs, ticks}), 1, one, one, {});
  hsa_signal_t done = signal(1);
  hsa_signal_t started = signal(1);
  submit(q, {vendorPacket(start, started), add, spin, vendorPacket(stop, done)});
  ASSERT_EQ(0, waitZero(done));
  EXPECT_EQ(0, hsa_signal_load_scacquire(started));
  expectVectorAdd(c, 1000, 3.0f);

  std::vector<uint64_t> values;
  HSA_OK(results(p, values));
  ASSERT_EQ(3u, values.size());
  const uint64_t count = values[0], active = values[1], waves = values[2];
  EXPECT_EQ(10u * 2 + 1 + 1, waves);
  EXPECT_GE(active, kSpinNs / kNsPerDeviceTick);
  EXPECT_GE(active, ticks[1] - ticks[0]);
  EXPECT_GE(count, active);
  EXPECT_GT(active, 0u);

  // A profile started again measures afresh: one dispatch of 64 groups of 64.
  HSA_OK(api_.hsa_ven_amd_aqlprofile_start(&p, &start));
  float* d = nullptr;
  hsa_signal_t again = signal(1);
  submit(q, {vendorPacket(start, {}), vectorAdd(64 * 64, 1.0f, &d, {}), vendorPacket(stop, again)});
  ASSERT_EQ(0, waitZero(again));
  HSA_OK(results(p, values));
  ASSERT_EQ(3u, values.size());
  EXPECT_EQ(64u, values[2]);
  EXPECT_GE(values[0], values[1]);
}

TEST_F(SimHsaAqlProfile, ResultsAreRefusedUntilTheStopPacketCompleted) {
  hsa_queue_t* q = queue();
  ASSERT_NE(nullptr, q);
  hsa_ven_amd_aqlprofile_profile_t p = profile({kSqWaves});
  hsa_ext_amd_aql_pm4_packet_t start{}, stop{};
  HSA_OK(api_.hsa_ven_amd_aqlprofile_start(&p, &start));
  HSA_OK(api_.hsa_ven_amd_aqlprofile_stop(&p, &stop));
  std::vector<uint64_t> values;
  EXPECT_EQ(HSA_STATUS_ERROR, results(p, values));

  // The stop packet waits behind a barrier: started, still not readable.
  hsa_signal_t gate = signal(1), started = signal(1), done = signal(1);
  float* c = nullptr;
  submit(q, {vendorPacket(start, started), vectorAdd(128, 1.0f, &c, {}),
             barrierPacket(HSA_PACKET_TYPE_BARRIER_AND, {gate}, {}), vendorPacket(stop, done)});
  ASSERT_EQ(0, waitZero(started));
  EXPECT_EQ(HSA_STATUS_ERROR, results(p, values));
  EXPECT_TRUE(values.empty());
  EXPECT_NE(std::string::npos, lastError().find("stop (or read) packet has not completed")) << lastError();

  hsa_signal_store_screlease(gate, 0);
  ASSERT_EQ(0, waitZero(done));
  HSA_OK(results(p, values));
  ASSERT_EQ(1u, values.size());
  EXPECT_EQ(2u, values[0]);
}

// Puts each dispatch between the start and stop packets of a profile of its
// own, the stop packet carrying the dispatch's completion signal, as a
// counter-collecting tool does in an intercepted queue.
struct ProfileBracketer {
  std::vector<hsa_ext_amd_aql_pm4_packet_t> starts, stops;
  std::atomic<size_t> next{0};

  static void handle(const void* packets, uint64_t count, uint64_t, void* data,
                     hsa_amd_queue_intercept_packet_writer writer) {
    auto* self = static_cast<ProfileBracketer*>(data);
    hsa_kernel_dispatch_packet_t dispatch;
    std::memcpy(&dispatch, packets, sizeof dispatch);
    if (count != 1 || packetType(&dispatch) != HSA_PACKET_TYPE_KERNEL_DISPATCH || self->next >= self->starts.size()) {
      return writer(packets, count);
    }
    const size_t i = self->next++;
    hsa_kernel_dispatch_packet_t out[3] = {SimHsaAqlProfile::vendorPacket(self->starts[i], {}), dispatch,
                                           SimHsaAqlProfile::vendorPacket(self->stops[i], dispatch.completion_signal)};
    out[1].completion_signal = {};
    writer(out, 3);
  }
};

TEST_F(SimHsaAqlProfile, ToolsBracketDispatchesInInterceptedQueues) {
  hsa_queue_t* q = interceptQueue();
  ASSERT_NE(nullptr, q);
  const std::vector<hsa_ven_amd_aqlprofile_event_t> events{kSqWaves, kGrbmGuiActive, kGrbmCount};
  std::vector<hsa_ven_amd_aqlprofile_profile_t> profiles{profile(events), profile(events)};
  ProfileBracketer bracketer;
  for (auto& p : profiles) {
    bracketer.starts.emplace_back();
    bracketer.stops.emplace_back();
    HSA_OK(api_.hsa_ven_amd_aqlprofile_start(&p, &bracketer.starts.back()));
    HSA_OK(api_.hsa_ven_amd_aqlprofile_stop(&p, &bracketer.stops.back()));
  }
  HSA_OK(registerHandler(q, &ProfileBracketer::handle, &bracketer));

  float *c1 = nullptr, *c2 = nullptr;
  hsa_signal_t done = signal(2);
  submit(q, {vectorAdd(1000, 1.0f, &c1, done), vectorAdd(128, 2.0f, &c2, done)});
  ASSERT_EQ(0, waitZero(done));
  expectVectorAdd(c1, 1000, 1.0f);
  expectVectorAdd(c2, 128, 2.0f);

  // 1000 items in groups of 64: 16 one-wave groups; 128 items: 2.
  const uint64_t expected_waves[] = {16, 2};
  for (size_t i = 0; i < profiles.size(); ++i) {
    std::vector<uint64_t> values;
    HSA_OK(results(profiles[i], values));
    ASSERT_EQ(3u, values.size());
    EXPECT_EQ(expected_waves[i], values[0]) << "dispatch " << i;
    EXPECT_GT(values[1], 0u) << "dispatch " << i;
    EXPECT_GE(values[2], values[1]) << "dispatch " << i;
  }
}

// What the smoke tool logs when loaded: ROCr passes the root table's major
// version as the runtime version (1 with ROCr 5.x headers, 3 with 6.1's).
std::string loadLine(const char* rest) {
  return "load version=" + std::to_string(HSA_API_TABLE_MAJOR_VERSION) + " " + rest;
}

TEST(SimHsaTools, LoadedFromHsaToolsLibAndUnloadedAtShutDown) {
  const std::string log = toolLogPath("tools_lib");
  ASSERT_EQ(0, runChild("init-twice", {{"HSA_TOOLS_LIB", GTAP_SIM_HSA_SMOKE_TOOL_PATH},
                                       {"GTAP_SIM_HSA_SMOKE_TOOL_LOG", log.c_str()}}));
  // Loaded at each first hsa_init, told at each last hsa_shut_down.
  EXPECT_EQ(loadLine("sizes=1 failed=0 first_failed=-\nunload\n") +
                loadLine("sizes=1 failed=0 first_failed=-\nunload\n"),
            readText(log));
  unlink(log.c_str());
}

TEST(SimHsaTools, WrappedEntryIsCalledByTheExportedFunction) {
  const std::string log = toolLogPath("wrap");
  ASSERT_EQ(0, runChild("agent-info-4", {{"HSA_TOOLS_LIB", GTAP_SIM_HSA_SMOKE_TOOL_PATH},
                                         {"GTAP_SIM_HSA_SMOKE_TOOL_WRAP", "1"},
                                         {"GTAP_SIM_HSA_SMOKE_TOOL_LOG", log.c_str()}}));
  const std::string text = readText(log);
  // Three calls through the linked symbol, one through dlsym; none by the runtime itself.
  EXPECT_EQ(4u, countLines(text, "wrapped hsa_agent_get_info")) << text;
  unlink(log.c_str());
}

TEST(SimHsaTools, PreloadedToolIsFoundByItsPriority) {
  const std::string log = toolLogPath("preload");
  ASSERT_EQ(0, runChild("init-once", {{"HSA_TOOLS_LIB", nullptr},
                                      {"LD_PRELOAD", GTAP_SIM_HSA_SMOKE_TOOL_PATH},
                                      {"GTAP_SIM_HSA_SMOKE_TOOL_LOG", log.c_str()}}));
  EXPECT_EQ(loadLine("sizes=1 failed=0 first_failed=-\nunload\n"), readText(log));
  unlink(log.c_str());
}

TEST(SimHsaTools, ToolNamedTwiceIsLoadedOnce) {
  const std::string log = toolLogPath("twice");
  ASSERT_EQ(0, runChild("init-once", {{"HSA_TOOLS_LIB", GTAP_SIM_HSA_SMOKE_TOOL_PATH},
                                      {"LD_PRELOAD", GTAP_SIM_HSA_SMOKE_TOOL_PATH},
                                      {"GTAP_SIM_HSA_SMOKE_TOOL_LOG", log.c_str()}}));
  EXPECT_EQ(1u, countLines(readText(log), "load "));
  unlink(log.c_str());
}

TEST(SimHsaTools, RefusingToolIsUnloadedAndFailuresAreReported) {
  const std::string log = toolLogPath("refuse");
  // A name that does not load comes first: the tool hears about it.
  const std::string names = std::string("/nonexistent/libgtap-missing-tool.so ") + GTAP_SIM_HSA_SMOKE_TOOL_PATH;
  ASSERT_EQ(0, runChild("refused", {{"HSA_TOOLS_LIB", names.c_str()},
                                    {"HSA_TOOLS_REPORT_LOAD_FAILURE", "0"},
                                    {"GTAP_SIM_HSA_SMOKE_TOOL_REFUSE", "1"},
                                    {"GTAP_SIM_HSA_SMOKE_TOOL_LOG", log.c_str()}}));
  // Refused: loaded, told nothing more.
  EXPECT_EQ(loadLine("sizes=1 failed=1 first_failed=/nonexistent/libgtap-missing-tool.so refused\n"),
            readText(log));
  unlink(log.c_str());
}

TEST(SimHsaClock, TickOffsetAndSystemOffsetComeFromTheEnvironment) {
  ASSERT_EQ(0, runChild("clock-env", {{"HSA_TOOLS_LIB", nullptr},
                                      {"GTAP_SIM_HSA_TICK_OFFSET", "12345"},
                                      {"GTAP_SIM_HSA_SYSTEM_OFFSET", "1000000000000"}}));
}

// --- Child scenarios --------------------------------------------------------

#define CHILD_CHECK(cond)                                                            \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: child check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

// The second agent, found without hsa_agent_get_info so that the
// wrapped-entry scenario counts only its own calls.
hsa_agent_t findGpu() {
  std::vector<hsa_agent_t> agents;
  hsa_iterate_agents(
      [](hsa_agent_t agent, void* data) {
        static_cast<std::vector<hsa_agent_t>*>(data)->push_back(agent);
        return HSA_STATUS_SUCCESS;
      },
      &agents);
  return agents.size() == 2 ? agents[1] : hsa_agent_t{};
}

int childMain(const std::string& scenario) {
  if (scenario == "init-once" || scenario == "init-twice") {
    for (int round = 0; round < (scenario == "init-twice" ? 2 : 1); ++round) {
      CHILD_CHECK(hsa_init() == HSA_STATUS_SUCCESS);
      CHILD_CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS);
    }
    return 0;
  }
  if (scenario == "agent-info-4") {
    CHILD_CHECK(hsa_init() == HSA_STATUS_SUCCESS);
    hsa_agent_t gpu = findGpu();
    CHILD_CHECK(gpu.handle != 0);
    char name[64] = {};
    for (int i = 0; i < 3; ++i) CHILD_CHECK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name) == HSA_STATUS_SUCCESS);
    CHILD_CHECK(std::strcmp(name, "gtap-sim-gpu") == 0);
    void* runtime = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
    CHILD_CHECK(runtime != nullptr);
    auto get_info = reinterpret_cast<decltype(&hsa_agent_get_info)>(dlsym(runtime, "hsa_agent_get_info"));
    CHILD_CHECK(get_info != nullptr && get_info(gpu, HSA_AGENT_INFO_NAME, name) == HSA_STATUS_SUCCESS);
    CHILD_CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS);
    return 0;
  }
  if (scenario == "refused") {
    CHILD_CHECK(hsa_init() == HSA_STATUS_SUCCESS);
    // Unloaded again by the runtime.
    CHILD_CHECK(dlopen(GTAP_SIM_HSA_SMOKE_TOOL_PATH, RTLD_LAZY | RTLD_NOLOAD) == nullptr);
    CHILD_CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS);
    return 0;
  }
  if (scenario == "clock-env") {
    const uint64_t boot_before = readClock(CLOCK_BOOTTIME);
    CHILD_CHECK(hsa_init() == HSA_STATUS_SUCCESS);
    const uint64_t boot_after = readClock(CLOCK_BOOTTIME);
    hsa_agent_t gpu = findGpu();
    // The device clock read GTAP_SIM_HSA_TICK_OFFSET at the first hsa_init;
    // system time is CLOCK_BOOTTIME plus GTAP_SIM_HSA_SYSTEM_OFFSET.
    constexpr uint64_t kSystemOffset = 1'000'000'000'000ull;
    uint64_t at_init = 0;
    CHILD_CHECK(hsa_amd_profiling_convert_tick_to_system_domain(gpu, 12345, &at_init) == HSA_STATUS_SUCCESS);
    CHILD_CHECK(at_init + 1'000'000 >= boot_before + kSystemOffset);
    CHILD_CHECK(at_init <= boot_after + kSystemOffset + 1'000'000);
    uint64_t system = 0;
    CHILD_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &system) == HSA_STATUS_SUCCESS);
    CHILD_CHECK(system >= boot_before + kSystemOffset);
    CHILD_CHECK(system <= readClock(CLOCK_BOOTTIME) + kSystemOffset);
    CHILD_CHECK(hsa_shut_down() == HSA_STATUS_SUCCESS);
    return 0;
  }
  std::fprintf(stderr, "unknown child scenario %s\n", scenario.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) return childMain(argv[2]);
  // The test process is its own first tool user: the smoke tool hands the
  // tests the API table (for the tool-only intercept functions). It stays
  // loaded across the tests' hsa_init / hsa_shut_down cycles.
  setenv("HSA_TOOLS_LIB", GTAP_SIM_HSA_SMOKE_TOOL_PATH, 0);
  dlopen(GTAP_SIM_HSA_SMOKE_TOOL_PATH, RTLD_NOW | RTLD_LOCAL);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
