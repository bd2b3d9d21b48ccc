#include "ze_runtime.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "chunk_producer.h"
#include "dlsym_hook.h"
#include "log.h"

namespace gtap::ze {

std::atomic<bool> g_resolved{false};
CodeRange g_runtimeCode[kMaxRuntimeRanges];
std::atomic<size_t> g_runtimeCodeCount{0};
std::atomic<uintptr_t> g_runtimeLow{0}, g_runtimeHigh{0};

namespace {
constexpr const char* kLoaderName = "libze_loader.so.1";
std::mutex g_resolveMutex;
void* g_loader = nullptr;

bool isRuntimeLibrary(const char* path) {
  if (!path) return false;
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "libze_", 6) == 0;
}

// Adds the executable segments of every loaded libze_* object not known yet.
std::mutex g_codeMutex;
void scanRuntimeLibraries() {
  std::lock_guard<std::mutex> lock(g_codeMutex);
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        if (!isRuntimeLibrary(info->dlpi_name)) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
          CodeRange r{info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
          size_t n = g_runtimeCodeCount.load(std::memory_order_relaxed);
          bool known = false;
          for (size_t k = 0; k < n && !known; ++k) known = g_runtimeCode[k].begin == r.begin;
          if (known || n == kMaxRuntimeRanges) continue;
          g_runtimeCode[n] = r;
          uintptr_t low = g_runtimeLow.load(std::memory_order_relaxed);
          uintptr_t high = g_runtimeHigh.load(std::memory_order_relaxed);
          g_runtimeLow.store(n == 0 || r.begin < low ? r.begin : low, std::memory_order_relaxed);
          g_runtimeHigh.store(n == 0 || r.end > high ? r.end : high, std::memory_order_relaxed);
          g_runtimeCodeCount.store(n + 1, std::memory_order_release);
        }
        return 0;
      },
      nullptr);
}

// Names already noted, in the order learnt; ids follow gtap's own functions.
std::mutex g_unrecordedMutex;
std::vector<std::string> g_unrecorded;
pid_t g_unrecordedWrittenPid = 0;
size_t g_unrecordedWritten = 0;

// A name of the Level Zero API proper (ze*, zet*, zes* followed by a capital),
// not the loader's own entry points (zeLoader*, zel*).
bool isApiName(const char* name) {
  if (std::strncmp(name, "ze", 2) != 0 || std::strncmp(name, "zeLoader", 8) == 0) return false;
  const char* rest = name + 2;
  if (*rest == 't' || *rest == 's') ++rest;
  return *rest >= 'A' && *rest <= 'Z';
}

// The loader's exported API functions gtap has no wrapper for: a program
// linked against them (or looking them up) reaches the loader directly.
// Read from the loader's dynamic symbol table.
void noteLoaderExportsWithoutWrapper(void* loader) {
  link_map* map = nullptr;
  if (dlinfo(loader, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_ld) return;
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const uint32_t* gnuHash = nullptr;
  const uint32_t* sysvHash = nullptr;
  for (const ElfW(Dyn)* d = map->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(d->d_un.d_ptr);
    if (d->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(d->d_un.d_ptr);
    if (d->d_tag == DT_GNU_HASH) gnuHash = reinterpret_cast<const uint32_t*>(d->d_un.d_ptr);
    if (d->d_tag == DT_HASH) sysvHash = reinterpret_cast<const uint32_t*>(d->d_un.d_ptr);
  }
  if (!symbols || !strings) return;
  size_t count = 0;
  if (sysvHash) {
    count = sysvHash[1];
  } else if (gnuHash) {
    // The symbol count is one past the last chain's end.
    uint32_t buckets = gnuHash[0], offset = gnuHash[1], bloomWords = gnuHash[2];
    const uint32_t* bucket = gnuHash + 4 + bloomWords * (sizeof(ElfW(Addr)) / 4);
    const uint32_t* chain = bucket + buckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < buckets; ++i) last = std::max(last, bucket[i]);
    if (last >= offset)
      while (!(chain[last - offset] & 1)) ++last;
    count = last ? last + 1 : offset;
  }
  for (size_t i = 0; i < count; ++i) {
    const ElfW(Sym)& s = symbols[i];
    if (s.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s.st_info) != STT_FUNC) continue;
    const char* name = strings + s.st_name;
    if (isApiName(name) && !wrapperFor(name)) noteUnrecorded(name);
  }
}

// Opens the loader with our own handle: dlsym(RTLD_NEXT) would find nothing
// when the program opened the loader RTLD_LOCAL.
void resolveLocked() {
  void* loader = dlopen(kLoaderName, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!loader) loader = dlopen(kLoaderName, RTLD_NOW | RTLD_LOCAL);
  if (!loader) {
    core::logLine("cannot open %s (%s); Level Zero calls fail with ZE_RESULT_ERROR_UNINITIALIZED",
                  kLoaderName, dlerror());
    return;
  }
  for (size_t i = 0; i < kFunctionCount; ++i) g_real[i] = core::realDlsym(loader, kFunctions[i].name);
  g_loader = loader;
  scanRuntimeLibraries();
}

// dlsym(loader, name) from the program: gtap's wrapper, or the loader's own
// function (unrecorded, and named as such) when gtap has none.
void* lookupForLoader(const char* name) {
  void* wrapper = wrapperFor(name);
  if (!wrapper && g_loader && isApiName(name) && core::realDlsym(g_loader, name)) noteUnrecorded(name);
  return wrapper;
}

// Unrecorded functions are defined in the capture like recorded ones, marked
// unrecorded, with ids after gtap's own; each file (a forked child's too)
// gets every name learnt so far.
void produceUnrecorded(core::ChunkSink& sink, bool) {
  std::vector<std::pair<uint32_t, std::string>> fresh;
  {
    std::lock_guard<std::mutex> lock(g_unrecordedMutex);
    if (g_unrecordedWrittenPid != getpid()) {
      g_unrecordedWrittenPid = getpid();
      g_unrecordedWritten = 0;
    }
    for (size_t i = g_unrecordedWritten; i < g_unrecorded.size(); ++i)
      fresh.emplace_back(static_cast<uint32_t>(core::kZeFunctionBase + kFunctionCount + i), g_unrecorded[i]);
    g_unrecordedWritten = g_unrecorded.size();
  }
  if (fresh.empty()) return;
  capnp::MallocMessageBuilder message;
  auto list = message.initRoot<schema::Definitions>().initFunctions(static_cast<unsigned>(fresh.size()));
  for (unsigned i = 0; i < fresh.size(); ++i) {
    const std::string& name = fresh[i].second;
    list[i].setId(fresh[i].first);
    list[i].setApi(name.rfind("zet", 0) == 0   ? schema::Api::LEVEL_ZERO_TOOLS
                   : name.rfind("zes", 0) == 0 ? schema::Api::LEVEL_ZERO_SYSMAN
                                               : schema::Api::LEVEL_ZERO);
    list[i].setName(name);
    list[i].setUnrecorded(true);
  }
  sink.write(schema::ChunkKind::DEFINITIONS, message);
}

__attribute__((constructor(102))) void registerZe() {
  core::registerFunctions(core::kZeFunctionBase, kFunctions, kFunctionCount);
  core::registerLibrarySymbols("libze_loader.so", "ze", &lookupForLoader);
  core::registerChunkProducer(&produceUnrecorded);
}
}  // namespace

void resolveAll() {
  std::lock_guard<std::mutex> lock(g_resolveMutex);
  if (g_resolved.load(std::memory_order_relaxed)) return;
  resolveLocked();
  g_resolved.store(true, std::memory_order_release);
  if (g_loader) noteLoaderExportsWithoutWrapper(g_loader);
}

bool calledByRuntimeSlow(uintptr_t address) {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(address), &info) || !isRuntimeLibrary(info.dli_fname)) return false;
  scanRuntimeLibraries();
  return true;
}

void noteUnrecorded(const char* name) {
  std::lock_guard<std::mutex> lock(g_unrecordedMutex);
  for (const auto& n : g_unrecorded)
    if (n == name) return;
  // Ids stay inside the Level Zero range.
  if (kFunctionCount + g_unrecorded.size() + 1 >= core::kHsaFunctionBase - core::kZeFunctionBase) return;
  g_unrecorded.emplace_back(name);
}

void* wrapperFor(const char* name) {
  size_t lo = 0, hi = kWrapperCount;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = std::strcmp(kWrappers[mid].name, name);
    if (c == 0) return realFunction(kWrappers[mid].index) ? kWrappers[mid].wrapper : nullptr;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return nullptr;
}

}  // namespace gtap::ze
