// Modules. A native module's bytes are a host shared object built against
// gtap_sim_kernel.h; the driver writes them to an anonymous file and dlopens
// it, so every module gets its own copy of the code and globals, and the
// program's bytes are all that is needed (as with a real device binary).
#include "api.h"
#include "objects.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>

namespace sim {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "the simulated Level Zero driver needs to know the host ELF machine"
#endif

constexpr uint32_t kMaxKernelArgs = 256;

struct BuildError {
  ze_result_t code;
  std::string log;
};

uint64_t fnv1a(const uint8_t* data, size_t n, uint64_t seed) {
  uint64_t h = 14695981039346656037ull ^ seed;
  for (size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 1099511628211ull;
  }
  return h;
}

// Rejects anything that is not a shared object for this host before handing
// it to the dynamic loader (device binaries of real GPUs included).
bool checkElf(const uint8_t* p, size_t n, std::string& why) {
  if (n < sizeof(Elf64_Ehdr) || std::memcmp(p, ELFMAG, SELFMAG) != 0) {
    why = "not an ELF file; the simulated device runs host shared objects built with gtap_sim_kernel.h";
    return false;
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, p, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN || eh.e_machine != kHostMachine) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "ELF class %u, type %u, machine %u is not a 64-bit shared object for this host (machine %u)",
                  unsigned(eh.e_ident[EI_CLASS]), unsigned(eh.e_type), unsigned(eh.e_machine),
                  unsigned(kHostMachine));
    why = buf;
    return false;
  }
  return true;
}

// The executable segments of the loaded copy, found through the dynamic
// loader's list of objects (the entry whose load bias and name are the
// module's own). Collected into a fixed array: nothing that could throw runs
// inside the C library's callback.
struct CodeSearch {
  const link_map* own = nullptr;
  static constexpr size_t kMaxRanges = 16;
  Module::CodeRange ranges[kMaxRanges] = {};
  size_t count = 0;
};

int collectCode(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<CodeSearch*>(data);
  const link_map* own = search->own;
  if (info->dlpi_addr != own->l_addr || info->dlpi_name == nullptr || own->l_name == nullptr ||
      std::strcmp(info->dlpi_name, own->l_name) != 0) {
    return 0;
  }
  for (ElfW(Half) i = 0; i < info->dlpi_phnum && search->count < CodeSearch::kMaxRanges; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || ph.p_memsz == 0) continue;
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    search->ranges[search->count++] = {begin, begin + ph.p_memsz};
  }
  return 1;
}

void findCode(Module& m) {
  link_map* own = nullptr;
  if (dlinfo(m.library, RTLD_DI_LINKMAP, &own) != 0 || own == nullptr) return;
  m.loadBias = own->l_addr;
  CodeSearch search;
  search.own = own;
  dl_iterate_phdr(collectCode, &search);
  m.code.assign(search.ranges, search.ranges + search.count);
}

// Loads the bytes as a shared object and collects its kernel descriptors.
bool load(Module& m, BuildError& err) {
  if (!checkElf(m.binary.data(), m.binary.size(), err.log)) {
    err.code = ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    return false;
  }
  int fd = memfd_create("gtap-sim-ze-module", MFD_CLOEXEC);
  if (fd < 0) {
    err = {ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, std::string("memfd_create failed: ") + std::strerror(errno)};
    return false;
  }
  size_t done = 0;
  while (done < m.binary.size()) {
    ssize_t w = ::write(fd, m.binary.data() + done, m.binary.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = {ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, std::string("writing the module failed: ") + std::strerror(errno)};
      ::close(fd);
      return false;
    }
    done += size_t(w);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  m.library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  m.fd = fd;
  if (m.library == nullptr) {
    const char* e = dlerror();
    err = {ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, std::string("dlopen failed: ") + (e ? e : "unknown error")};
    return false;
  }
  using ListFn = const gtap_sim_kernel_desc* const* (*)(uint32_t*);
  auto list = reinterpret_cast<ListFn>(dlsym(m.library, "gtap_sim_ze_module_kernels"));
  if (list == nullptr) {
    err = {ZE_RESULT_ERROR_INVALID_NATIVE_BINARY,
           "the shared object has no gtap_sim_ze_module_kernels (not built with gtap_sim_kernel.h)"};
    return false;
  }
  uint32_t count = 0;
  const gtap_sim_kernel_desc* const* descs = list(&count);
  std::set<std::string> seen;
  for (uint32_t i = 0; i < count; ++i) {
    const gtap_sim_kernel_desc* d = descs[i];
    if (d == nullptr || d->abi_version != GTAP_SIM_KERNEL_ABI_VERSION) {
      err = {ZE_RESULT_ERROR_INVALID_NATIVE_BINARY,
             "kernel descriptor built against another gtap_sim_kernel.h ABI version"};
      return false;
    }
    if (d->name == nullptr || d->fn == nullptr || d->num_args > kMaxKernelArgs ||
        d->granularity > GTAP_SIM_PER_WORK_GROUP || !seen.insert(d->name).second) {
      err = {ZE_RESULT_ERROR_INVALID_NATIVE_BINARY,
             std::string("malformed or duplicate kernel descriptor ") + (d->name ? d->name : "(unnamed)")};
      return false;
    }
    m.kernels.push_back(d);
    m.kernelNames.push_back(d->name);
  }
  findCode(m);
  uint64_t h1 = fnv1a(m.binary.data(), m.binary.size(), 0);
  uint64_t h2 = fnv1a(m.binary.data(), m.binary.size(), 0x9e3779b97f4a7c15ull);
  std::memcpy(m.uuid.data(), &h1, 8);
  std::memcpy(m.uuid.data() + 8, &h2, 8);
  return true;
}

// dlsym on a module's handle also searches the libraries it depends on (libc
// and so on); only symbols defined by the module itself count as its own.
void* ownSymbol(const Module& m, const char* name) {
  void* address = dlsym(m.library, name);
  if (address == nullptr) return nullptr;
  link_map* own = nullptr;
  link_map* found = nullptr;
  Dl_info info{};
  if (dlinfo(m.library, RTLD_DI_LINKMAP, &own) != 0 ||
      dladdr1(address, &info, reinterpret_cast<void**>(&found), RTLD_DL_LINKMAP) == 0 || found != own) {
    return nullptr;
  }
  return address;
}

void returnLog(ze_module_build_log_handle_t* phLog, std::string text) {
  if (phLog != nullptr) *phLog = toHandle<ze_module_build_log_handle_t>(makeObject<BuildLog>(std::move(text)));
}

}  // namespace

Module::~Module() {
  if (library != nullptr) dlclose(library);
  if (fd >= 0) ::close(fd);
}

const gtap_sim_kernel_desc* Module::findKernel(const char* name) const {
  for (const auto* d : kernels) {
    if (std::strcmp(d->name, name) == 0) return d;
  }
  return nullptr;
}

ze_result_t zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice, const ze_module_desc_t* desc,
                           ze_module_handle_t* phModule, ze_module_build_log_handle_t* phBuildLog) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(desc->pInputModule);
  SIM_NOT_NULL(phModule);
  SIM_CHECK(desc->format <= ZE_MODULE_FORMAT_NATIVE, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_CHECK(desc->inputSize != 0, ZE_RESULT_ERROR_INVALID_SIZE);

  if (desc->format == ZE_MODULE_FORMAT_IL_SPIRV) {
    // There is no SPIR-V compiler behind this device; say so the way a driver
    // reports a failed build.
    returnLog(phBuildLog,
              "gtap simulated device: SPIR-V is not supported; build the kernels as a host shared object "
              "(gtap_sim_kernel.h) and pass it with ZE_MODULE_FORMAT_NATIVE");
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }

  auto module = std::make_shared<Module>();
  module->binary.assign(desc->pInputModule, desc->pInputModule + desc->inputSize);
  BuildError err{ZE_RESULT_SUCCESS, {}};
  if (!load(*module, err)) {
    returnLog(phBuildLog, "gtap simulated device: " + err.log);
    return err.code;
  }
  registerObject(module);
  returnLog(phBuildLog, "");
  *phModule = toHandle<ze_module_handle_t>(module);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleDestroy(ze_module_handle_t hModule) {
  std::shared_ptr<Module> module;
  // Kernels and queued launches hold the module, so its code stays mapped
  // until the last of them is gone.
  return take(hModule, module);
}

ze_result_t zeModuleDynamicLink(uint32_t numModules, ze_module_handle_t* phModules,
                                ze_module_build_log_handle_t* phLinkLog) {
  SIM_CHECK(g_initialized.load(std::memory_order_acquire), ZE_RESULT_ERROR_UNINITIALIZED);
  SIM_NOT_NULL(phModules);
  for (uint32_t i = 0; i < numModules; ++i) {
    SIM_LOOKUP(module, Module, phModules[i]);
  }
  // Host shared objects have no unresolved imports to link.
  returnLog(phLinkLog, "");
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleGetNativeBinary(ze_module_handle_t hModule, size_t* pSize, uint8_t* pModuleNativeBinary) {
  SIM_LOOKUP(module, Module, hModule);
  SIM_NOT_NULL(pSize);
  if (pModuleNativeBinary == nullptr) {
    *pSize = module->binary.size();
    return ZE_RESULT_SUCCESS;
  }
  SIM_CHECK(*pSize >= module->binary.size(), ZE_RESULT_ERROR_INVALID_SIZE);
  std::memcpy(pModuleNativeBinary, module->binary.data(), module->binary.size());
  *pSize = module->binary.size();
  return ZE_RESULT_SUCCESS;
}

// The module's bytes as the program gave them: a host shared object, whose
// symbol table and DWARF (when built with -g) describe the kernels' code.
ze_result_t zetModuleGetDebugInfo(zet_module_handle_t hModule, zet_module_debug_info_format_t format, size_t* pSize,
                                  uint8_t* pDebugInfo) {
  SIM_LOOKUP(module, Module, hModule);
  // ELF/DWARF is the only format the specification names; anything past it
  // is out of the enumeration.
  SIM_CHECK(format <= ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  SIM_NOT_NULL(pSize);
  if (pDebugInfo == nullptr) {
    *pSize = module->binary.size();
    return ZE_RESULT_SUCCESS;
  }
  SIM_CHECK(*pSize >= module->binary.size(), ZE_RESULT_ERROR_INVALID_SIZE);
  std::memcpy(pDebugInfo, module->binary.data(), module->binary.size());
  *pSize = module->binary.size();
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleGetGlobalPointer(ze_module_handle_t hModule, const char* pGlobalName, size_t* pSize,
                                     void** pptr) {
  SIM_LOOKUP(module, Module, hModule);
  SIM_NOT_NULL(pGlobalName);
  void* address = ownSymbol(*module, pGlobalName);
  if (address == nullptr) return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
  Dl_info info{};
  void* extra = nullptr;
  if (dladdr1(address, &info, &extra, RTLD_DL_SYMENT) == 0 || extra == nullptr) {
    return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
  }
  const auto* sym = static_cast<const ElfW(Sym)*>(extra);
  if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT) return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;  // a function
  if (pSize != nullptr) *pSize = sym->st_size;
  if (pptr != nullptr) *pptr = address;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleGetKernelNames(ze_module_handle_t hModule, uint32_t* pCount, const char** pNames) {
  SIM_LOOKUP(module, Module, hModule);
  SIM_NOT_NULL(pCount);
  countQuery(uint32_t(module->kernelNames.size()), pCount, pNames != nullptr,
             [&](uint32_t i) { pNames[i] = module->kernelNames[i]; });
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleGetProperties(ze_module_handle_t hModule, ze_module_properties_t* pModuleProperties) {
  SIM_LOOKUP(module, Module, hModule);
  SIM_NOT_NULL(pModuleProperties);
  pModuleProperties->flags = 0;  // never has unresolved imports
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleGetFunctionPointer(ze_module_handle_t hModule, const char* pFunctionName, void** pfnFunction) {
  SIM_LOOKUP(module, Module, hModule);
  SIM_NOT_NULL(pFunctionName);
  SIM_NOT_NULL(pfnFunction);
  void* address = ownSymbol(*module, pFunctionName);
  if (address == nullptr) return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
  *pfnFunction = address;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t hModuleBuildLog) {
  std::shared_ptr<BuildLog> log;
  return take(hModuleBuildLog, log);
}

ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t hModuleBuildLog, size_t* pSize, char* pBuildLog) {
  SIM_LOOKUP(log, BuildLog, hModuleBuildLog);
  SIM_NOT_NULL(pSize);
  copyStringOut(log->text.c_str(), pSize, pBuildLog);
  return ZE_RESULT_SUCCESS;
}

}  // namespace sim
