// Calls Level Zero functions a known number of times, by the route named on
// the command line, and prints what it called ("calls NAME COUNT" lines) so a
// test can compare gtap's record with what really happened.
//
//   ze_api_counts direct|dlopen|table|extension
//   ze_api_counts init-drivers            (zeInitDrivers instead of zeInit + zeDriverGet,
//                                          where the headers have it; else as direct)
//   ze_api_counts unseen-init             (the loader is initialised through an entry point
//                                          gtap does not see, read from the loader's symbol
//                                          table, as a newer
//                                          loader's zeInitDrivers is when gtap was built
//                                          against older headers; then as direct)
//   ze_api_counts vendor-extension        (calls a driver's zex* functions, found by name with
//                                          zeDriverGetExtensionFunctionAddress; prints
//                                          "unrecorded NAME" for each)
//   ze_api_counts threads THREADS CALLS   (pattern per thread, see below)
//   ze_api_counts fork
//   ze_api_counts forever                 (prints "done N" every 1000 calls)
//   ze_api_counts crash                   (calls, then dies of SIGSEGV)
//   ze_api_counts late                    (calls from a static destructor after main)
//   ze_api_counts quick-exit              (calls, then _exit(5): no atexit, no destructors)
//   ze_api_counts handler                 (its own SIGTERM handler, then raise(SIGTERM))
//   ze_api_counts exit-in-call            (main waits in zeEventHostSynchronize for an event
//                                          nothing signals; another thread sees it blocked
//                                          there, prints the counts and calls exit(7))
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

std::map<std::string, int> g_counts;

// The functions the scenarios use, reached by one of the routes.
struct Api {
  decltype(&zeInit) init = nullptr;
  decltype(&zeDriverGet) driverGet = nullptr;
  decltype(&zeDriverGetApiVersion) driverGetApiVersion = nullptr;
  decltype(&zeDeviceGet) deviceGet = nullptr;
  decltype(&zeDeviceGetProperties) deviceGetProperties = nullptr;
  decltype(&zeContextCreate) contextCreate = nullptr;
  decltype(&zeContextDestroy) contextDestroy = nullptr;
  decltype(&zeMemAllocHost) memAllocHost = nullptr;
  decltype(&zeMemFree) memFree = nullptr;
};

#define CALL(api, fn, name, ...)      \
  do {                                \
    ++g_counts[name];                 \
    ze_result_t r_ = api.fn(__VA_ARGS__); \
    if (r_ != ZE_RESULT_SUCCESS) {    \
      std::fprintf(stderr, "%s failed: 0x%x\n", name, r_); \
      std::exit(10);                  \
    }                                 \
  } while (0)

Api direct() {
  return {&zeInit, &zeDriverGet, &zeDriverGetApiVersion, &zeDeviceGet, &zeDeviceGetProperties,
          &zeContextCreate, &zeContextDestroy, &zeMemAllocHost, &zeMemFree};
}

void* openLoader() {
  void* h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    std::exit(11);
  }
  return h;
}

template <typename T>
void load(void* h, const char* name, T& out) {
  out = reinterpret_cast<T>(dlsym(h, name));
  if (!out) {
    std::fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
    std::exit(12);
  }
}

// The loader's own definition of `name`, read from its dynamic symbol table
// (as the dynamic linker would), past any interposer.
void* loaderSymbol(void* handle, const char* name) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0) return nullptr;
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const uint32_t* gnuHash = nullptr;
  for (const ElfW(Dyn)* d = map->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(d->d_un.d_ptr);
    if (d->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(d->d_un.d_ptr);
    if (d->d_tag == DT_GNU_HASH) gnuHash = reinterpret_cast<const uint32_t*>(d->d_un.d_ptr);
  }
  if (!symbols || !strings || !gnuHash) return nullptr;
  uint32_t buckets = gnuHash[0], offset = gnuHash[1], bloomWords = gnuHash[2];
  const uint32_t* bucket = gnuHash + 4 + bloomWords * (sizeof(ElfW(Addr)) / 4);
  const uint32_t* chain = bucket + buckets;
  for (uint32_t b = 0; b < buckets; ++b) {
    for (uint32_t i = bucket[b]; i >= offset && i != 0; ++i) {
      if (symbols[i].st_shndx != SHN_UNDEF && std::strcmp(strings + symbols[i].st_name, name) == 0)
        return reinterpret_cast<void*>(map->l_addr + symbols[i].st_value);
      if (chain[i - offset] & 1) break;
    }
  }
  return nullptr;
}

Api viaDlopen() {
  void* h = openLoader();
  Api a;
  load(h, "zeInit", a.init);
  load(h, "zeDriverGet", a.driverGet);
  load(h, "zeDriverGetApiVersion", a.driverGetApiVersion);
  load(h, "zeDeviceGet", a.deviceGet);
  load(h, "zeDeviceGetProperties", a.deviceGetProperties);
  load(h, "zeContextCreate", a.contextCreate);
  load(h, "zeContextDestroy", a.contextDestroy);
  load(h, "zeMemAllocHost", a.memAllocHost);
  load(h, "zeMemFree", a.memFree);
  // A name the loader does not have must still fail as it would without gtap.
  if (dlsym(h, "zeNoSuchFunction")) std::exit(13);
  return a;
}

Api viaTables() {
  void* h = openLoader();
  Api a;
  ze_pfnGetGlobalProcAddrTable_t getGlobal;
  ze_pfnGetDriverProcAddrTable_t getDriver;
  ze_pfnGetDeviceProcAddrTable_t getDevice;
  ze_pfnGetContextProcAddrTable_t getContext;
  ze_pfnGetMemProcAddrTable_t getMem;
  load(h, "zeGetGlobalProcAddrTable", getGlobal);
  load(h, "zeGetDriverProcAddrTable", getDriver);
  load(h, "zeGetDeviceProcAddrTable", getDevice);
  load(h, "zeGetContextProcAddrTable", getContext);
  load(h, "zeGetMemProcAddrTable", getMem);
  static ze_global_dditable_t global;
  static ze_driver_dditable_t driver;
  static ze_device_dditable_t device;
  static ze_context_dditable_t context;
  static ze_mem_dditable_t mem;
  // The loader hands out tables once it is initialised.
  decltype(&zeInit) init;
  load(h, "zeInit", init);
  ++g_counts["zeInit"];
  if (init(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS) std::exit(15);
  ++g_counts["zeGetGlobalProcAddrTable"];
  if (getGlobal(ZE_API_VERSION_CURRENT, &global) != ZE_RESULT_SUCCESS || !global.pfnInit) std::exit(14);
  // Calling zeInit again through the table is allowed and must be seen too.
  ++g_counts["zeInit"];
  if (global.pfnInit(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS) std::exit(15);
  const std::pair<const char*, ze_result_t (*)(ze_api_version_t, void*)> getters[] = {
      {"zeGetDriverProcAddrTable", reinterpret_cast<ze_result_t (*)(ze_api_version_t, void*)>(getDriver)},
      {"zeGetDeviceProcAddrTable", reinterpret_cast<ze_result_t (*)(ze_api_version_t, void*)>(getDevice)},
      {"zeGetContextProcAddrTable", reinterpret_cast<ze_result_t (*)(ze_api_version_t, void*)>(getContext)},
      {"zeGetMemProcAddrTable", reinterpret_cast<ze_result_t (*)(ze_api_version_t, void*)>(getMem)}};
  void* tables[] = {&driver, &device, &context, &mem};
  for (int i = 0; i < 4; ++i) {
    ++g_counts[getters[i].first];
    if (getters[i].second(ZE_API_VERSION_CURRENT, tables[i]) != ZE_RESULT_SUCCESS) std::exit(16);
  }
  a.driverGet = driver.pfnGet;
  a.driverGetApiVersion = driver.pfnGetApiVersion;
  a.deviceGet = device.pfnGet;
  a.deviceGetProperties = device.pfnGetProperties;
  a.contextCreate = context.pfnCreate;
  a.contextDestroy = context.pfnDestroy;
  a.memAllocHost = mem.pfnAllocHost;
  a.memFree = mem.pfnFree;
  return a;
}

// The common scenario: a fixed sequence of calls through `a`.
void scenario(const Api& a, int propertyQueries) {
  if (a.init) CALL(a, init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
  uint32_t n = 0;
  CALL(a, driverGet, "zeDriverGet", &n, nullptr);
  std::vector<ze_driver_handle_t> drivers(n);
  CALL(a, driverGet, "zeDriverGet", &n, drivers.data());
  ze_api_version_t version;
  CALL(a, driverGetApiVersion, "zeDriverGetApiVersion", drivers[0], &version);
  uint32_t nd = 0;
  CALL(a, deviceGet, "zeDeviceGet", drivers[0], &nd, nullptr);
  std::vector<ze_device_handle_t> devices(nd);
  CALL(a, deviceGet, "zeDeviceGet", drivers[0], &nd, devices.data());
  for (int i = 0; i < propertyQueries; ++i) {
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    CALL(a, deviceGetProperties, "zeDeviceGetProperties", devices[0], &props);
  }
  ze_context_desc_t cdesc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ze_context_handle_t ctx;
  CALL(a, contextCreate, "zeContextCreate", drivers[0], &cdesc, &ctx);
  ze_host_mem_alloc_desc_t hdesc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
  for (int i = 0; i < 3; ++i) {
    void* p = nullptr;
    CALL(a, memAllocHost, "zeMemAllocHost", ctx, &hdesc, 4096, 64, &p);
    std::memset(p, i, 4096);
    CALL(a, memFree, "zeMemFree", ctx, p);
  }
  CALL(a, contextDestroy, "zeContextDestroy", ctx);
}

// zeInitDrivers (API 1.10) replaces zeInit and zeDriverGet; the two ways are
// not to be mixed in one process, so this scenario never calls zeDriverGet.
void initDriversScenario() {
#if defined(ZE_API_VERSION_CURRENT_M) && ZE_API_VERSION_CURRENT_M >= ZE_MAKE_VERSION(1, 10)
  Api a = direct();
  ze_init_driver_type_desc_t desc{ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC, nullptr, ZE_INIT_DRIVER_TYPE_FLAG_GPU};
  uint32_t n = 0;
  ++g_counts["zeInitDrivers"];
  if (zeInitDrivers(&n, nullptr, &desc) != ZE_RESULT_SUCCESS || n == 0) std::exit(21);
  std::vector<ze_driver_handle_t> drivers(n);
  ++g_counts["zeInitDrivers"];
  if (zeInitDrivers(&n, drivers.data(), &desc) != ZE_RESULT_SUCCESS) std::exit(21);
  ze_api_version_t version;
  CALL(a, driverGetApiVersion, "zeDriverGetApiVersion", drivers[0], &version);
  uint32_t nd = 1;
  ze_device_handle_t device;
  CALL(a, deviceGet, "zeDeviceGet", drivers[0], &nd, &device);
  for (int i = 0; i < 4; ++i) {
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    CALL(a, deviceGetProperties, "zeDeviceGetProperties", device, &props);
  }
#else
  scenario(direct(), 5);
#endif
}

ze_driver_handle_t firstDriver() {
  uint32_t n = 1;
  ze_driver_handle_t d = nullptr;
  ++g_counts["zeDriverGet"];
  if (zeDriverGet(&n, &d) != ZE_RESULT_SUCCESS || !d) std::exit(17);
  return d;
}

void printCounts(const char* prefix = "calls") {
  for (const auto& [name, count] : g_counts) std::printf("%s %s %d\n", prefix, name.c_str(), count);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "direct";
  if (mode == "direct") {
    scenario(direct(), 5);
  } else if (mode == "init-drivers") {
    initDriversScenario();
  } else if (mode == "dlopen") {
    scenario(viaDlopen(), 5);
  } else if (mode == "table") {
    scenario(viaTables(), 5);
  } else if (mode == "unseen-init") {
    // dlsym is the route gtap answers; the loader's own symbol table is not.
    auto init = reinterpret_cast<decltype(&zeInit)>(loaderSymbol(openLoader(), "zeInit"));
    if (!init) std::exit(12);
    if (init(ZE_INIT_FLAG_GPU_ONLY) != ZE_RESULT_SUCCESS) std::exit(15);
    Api a = direct();
    a.init = nullptr;
    scenario(a, 3);
  } else if (mode == "vendor-extension") {
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    using Import = ze_result_t(ZE_APICALL*)(ze_driver_handle_t, void*, size_t);
    using Release = ze_result_t(ZE_APICALL*)(ze_driver_handle_t, void*);
    using Base = ze_result_t(ZE_APICALL*)(ze_driver_handle_t, void*, void**);
    void* fns[3] = {};
    const char* names[3] = {"zexDriverImportExternalPointer", "zexDriverGetHostPointerBaseAddress",
                            "zexDriverReleaseImportedPointer"};
    for (int i = 0; i < 3; ++i) {
      ++g_counts["zeDriverGetExtensionFunctionAddress"];
      if (zeDriverGetExtensionFunctionAddress(d, names[i], &fns[i]) != ZE_RESULT_SUCCESS || !fns[i]) std::exit(18);
      std::printf("unrecorded %s 1\n", names[i]);
    }
    static char buffer[4096];
    void* base = nullptr;
    if (reinterpret_cast<Import>(fns[0])(d, buffer, sizeof buffer) != ZE_RESULT_SUCCESS) std::exit(19);
    if (reinterpret_cast<Base>(fns[1])(d, buffer + 100, &base) != ZE_RESULT_SUCCESS || base != buffer) std::exit(19);
    if (reinterpret_cast<Release>(fns[2])(d, buffer) != ZE_RESULT_SUCCESS) std::exit(19);
    uint32_t nd = 1;
    ze_device_handle_t dev;
    CALL(direct(), deviceGet, "zeDeviceGet", d, &nd, &dev);
  } else if (mode == "extension") {
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    Api a = direct();
    void* p = nullptr;
    ++g_counts["zeDriverGetExtensionFunctionAddress"];
    if (zeDriverGetExtensionFunctionAddress(d, "zeDeviceGetProperties", &p) != ZE_RESULT_SUCCESS || !p)
      std::exit(18);
    a.deviceGetProperties = reinterpret_cast<decltype(&zeDeviceGetProperties)>(p);
    uint32_t nd = 1;
    ze_device_handle_t dev;
    CALL(a, deviceGet, "zeDeviceGet", d, &nd, &dev);
    for (int i = 0; i < 7; ++i) {
      ze_device_properties_t props{};
      props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      CALL(a, deviceGetProperties, "zeDeviceGetProperties", dev, &props);
    }
  } else if (mode == "threads") {
    int threads = argc > 2 ? std::atoi(argv[2]) : 8;
    int calls = argc > 3 ? std::atoi(argv[3]) : 100000;
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    std::vector<std::thread> pool;
    std::atomic<int> failures{0};
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        // Every third call is zeDriverGetApiVersion, the rest zeDriverGet, so a
        // reader can check each thread's order.
        for (int i = 0; i < calls; ++i) {
          ze_result_t r;
          if (i % 3 == 0) {
            ze_api_version_t v;
            r = zeDriverGetApiVersion(d, &v);
          } else {
            uint32_t n = 0;
            r = zeDriverGet(&n, nullptr);
          }
          if (r != ZE_RESULT_SUCCESS) ++failures;
        }
        (void)t;
      });
    }
    for (auto& th : pool) th.join();
    if (failures) return 19;
    g_counts["zeDriverGetApiVersion"] += threads * ((calls + 2) / 3);
    g_counts["zeDriverGet"] += threads * (calls - (calls + 2) / 3);
  } else if (mode == "fork") {
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    ze_api_version_t v;
    for (int i = 0; i < 10; ++i) CALL(direct(), driverGetApiVersion, "zeDriverGetApiVersion", d, &v);
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      g_counts.clear();
      for (int i = 0; i < 25; ++i) {
        uint32_t n = 0;
        CALL(direct(), driverGet, "zeDriverGet", &n, nullptr);
      }
      printCounts("child");
      std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    for (int i = 0; i < 5; ++i) CALL(direct(), driverGetApiVersion, "zeDriverGetApiVersion", d, &v);
    printCounts("parent");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 20;
  } else if (mode == "late") {
    // Constructed before the first call, so destroyed after gtap's atexit
    // flush: its calls must still reach the file.
    struct LateCaller {
      ze_driver_handle_t d = nullptr;
      ~LateCaller() {
        ze_api_version_t v;
        for (int i = 0; i < 9; ++i) zeDriverGetApiVersion(d, &v);
      }
    };
    static LateCaller late;
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    late.d = firstDriver();
    g_counts["zeDriverGetApiVersion"] += 9;
  } else if (mode == "quick-exit") {
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    ze_api_version_t v;
    for (int i = 0; i < 77; ++i) CALL(direct(), driverGetApiVersion, "zeDriverGetApiVersion", d, &v);
    printCounts();
    _exit(5);
  } else if (mode == "crash") {
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    ze_api_version_t v;
    for (int i = 0; i < 321; ++i) CALL(direct(), driverGetApiVersion, "zeDriverGetApiVersion", d, &v);
    printCounts();
    volatile int* nowhere = nullptr;
    *nowhere = 1;
    return 0;
  } else if (mode == "handler") {
    static volatile sig_atomic_t got = 0;
    struct sigaction sa {};
    sa.sa_handler = [](int) { got = 1; };
    sigaction(SIGTERM, &sa, nullptr);
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    ze_api_version_t v;
    for (int i = 0; i < 100; ++i) CALL(direct(), driverGetApiVersion, "zeDriverGetApiVersion", d, &v);
    raise(SIGTERM);
    std::printf("handled %d\n", static_cast<int>(got));
    for (int i = 0; i < 50; ++i) CALL(direct(), driverGetApiVersion, "zeDriverGetApiVersion", d, &v);
  } else if (mode == "exit-in-call") {
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    ze_api_version_t v;
    for (int i = 0; i < 12; ++i) CALL(direct(), driverGetApiVersion, "zeDriverGetApiVersion", d, &v);
    ze_context_desc_t cdesc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t ctx;
    CALL(direct(), contextCreate, "zeContextCreate", d, &cdesc, &ctx);
    ze_event_pool_desc_t pdesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool;
    ++g_counts["zeEventPoolCreate"];
    if (zeEventPoolCreate(ctx, &pdesc, 0, nullptr, &pool) != ZE_RESULT_SUCCESS) std::exit(10);
    ze_event_desc_t edesc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
    ze_event_handle_t event;
    ++g_counts["zeEventCreate"];
    if (zeEventCreate(pool, &edesc, &event) != ZE_RESULT_SUCCESS) std::exit(10);
    ++g_counts["zeEventHostSynchronize"];
    pid_t mainTid = gettid();
    std::thread([mainTid] {
      // Main is inside the call once the kernel says it sleeps (nothing else
      // it does after starting this thread blocks).
      std::string stat = "/proc/self/task/" + std::to_string(mainTid) + "/stat";
      for (;;) {
        char buf[512] = {};
        if (FILE* f = std::fopen(stat.c_str(), "r")) {
          size_t n = std::fread(buf, 1, sizeof buf - 1, f);
          std::fclose(f);
          const char* close = std::strrchr(buf, ')');
          if (n && close && close[1] == ' ' && close[2] == 'S') break;
        }
        usleep(1000);
      }
      printCounts();
      std::exit(7);
    }).detach();
    zeEventHostSynchronize(event, UINT64_MAX);
    return 0;
  } else if (mode == "forever") {
    CALL(direct(), init, "zeInit", ZE_INIT_FLAG_GPU_ONLY);
    ze_driver_handle_t d = firstDriver();
    long done = 0;
    for (;;) {
      for (int i = 0; i < 1000; ++i) {
        ze_api_version_t v;
        zeDriverGetApiVersion(d, &v);
      }
      done += 1000;
      std::printf("done %ld\n", done);
      std::fflush(stdout);
      usleep(1000);
    }
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  printCounts();
  return 0;
}
