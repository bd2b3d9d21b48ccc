// Code object readers, executables and their symbols.
//
// A code object is a host shared object built against gtap_sim_hsa_kernel.h.
// Loading it writes the bytes to an anonymous file (memfd_create) and
// dlopens that, so every load gets its own copy of code and globals, and the
// bytes the program handed over are all that is needed, as with a real
// device binary.
#include "code_object.h"

#include "agent.h"
#include "api.h"
#include "runtime.h"
#include "signal.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace sim_hsa {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#endif

// The anonymous file stays open while the code is loaded: glibc's dlopen
// treats a path it has loaded before as the same library, so the
// "/proc/self/fd/N" name must not be reused while this copy is live.
struct LoadedCodeObject {
  void* library = nullptr;
  int fd = -1;
  ~LoadedCodeObject();
};

namespace {

struct Reader {
  std::vector<uint8_t> owned;  // file contents; memory readers point at the program's bytes
  const uint8_t* data;
  size_t size;
};

struct Executable;

struct Symbol {
  hsa_symbol_kind_t kind;
  std::string name;
  const Agent* agent;
  Executable* executable;
  const gtap_sim_hsa_kernel_desc* kernel = nullptr;  // kernels
  uint64_t address = 0;                              // kernel object or variable address
  uint32_t size = 0;                                 // variables
  uint32_t alignment = 0;
  bool is_const = false;
};

struct Executable {
  hsa_profile_t profile;
  hsa_default_float_rounding_mode_t rounding;
  hsa_executable_state_t state;
  std::vector<std::shared_ptr<LoadedCodeObject>> objects;
  std::vector<std::unique_ptr<Symbol>> symbols;
};

struct State {
  std::mutex lock;
  std::map<uint64_t, std::unique_ptr<Reader>> readers;
  std::map<uint64_t, std::unique_ptr<Executable>> executables;
  std::set<const Symbol*> symbols;
  std::map<uint64_t, KernelRef> kernels;  // by kernel object
};

State& state() {
  static auto* s = new State;  // never destroyed: dispatches may run during exit
  return *s;
}

template <class T>
uint64_t handleOf(const T* p) {
  return reinterpret_cast<uint64_t>(p);
}

Executable* findExecutable(State& s, hsa_executable_t e) {
  auto it = s.executables.find(e.handle);
  return it == s.executables.end() ? nullptr : it->second.get();
}

const Symbol* findSymbol(State& s, hsa_executable_symbol_t sym) {
  auto* p = reinterpret_cast<const Symbol*>(sym.handle);
  return s.symbols.count(p) != 0 ? p : nullptr;
}

// --- ELF --------------------------------------------------------------------

struct Variable {
  std::string name;
  uint64_t value;  // st_value: offset from the load base
  uint64_t size;
  uint32_t alignment;
  bool is_const;
};

template <class T>
bool readAt(const uint8_t* data, size_t size, uint64_t offset, T& out) {
  if (offset > size || size - offset < sizeof(T)) return false;
  std::memcpy(&out, data + offset, sizeof(T));
  return true;
}

// The exported data objects of a shared object: the code object's global
// variables. Bounds-checked, since the bytes come from the program.
std::vector<Variable> exportedVariables(const uint8_t* data, size_t size) {
  std::vector<Variable> out;
  Elf64_Ehdr eh;
  if (!readAt(data, size, 0, eh) || eh.e_shentsize != sizeof(Elf64_Shdr)) return out;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    if (!readAt(data, size, eh.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr), sections[i])) return out;
  }
  for (const Elf64_Shdr& table : sections) {
    if (table.sh_type != SHT_DYNSYM || table.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strings = sections[table.sh_link];
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= table.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      if (!readAt(data, size, table.sh_offset + off, sym)) break;
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || (bind != STB_GLOBAL && bind != STB_WEAK) ||
          sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sections.size() ||
          ELF64_ST_VISIBILITY(sym.st_other) != STV_DEFAULT || sym.st_name >= strings.sh_size ||
          strings.sh_offset > size || strings.sh_offset + sym.st_name >= size) {
        continue;
      }
      const char* name = reinterpret_cast<const char*>(data + strings.sh_offset + sym.st_name);
      size_t max = size - (strings.sh_offset + sym.st_name);
      // Names with two leading underscores belong to the toolchain (section
      // bounds, sanitizer bookkeeping), not to the program.
      if (max >= 2 && name[0] == '_' && name[1] == '_') continue;
      const Elf64_Shdr& home = sections[sym.st_shndx];
      out.push_back({std::string(name, strnlen(name, max)), sym.st_value, sym.st_size,
                     uint32_t(home.sh_addralign != 0 ? home.sh_addralign : 1), (home.sh_flags & SHF_WRITE) == 0});
    }
  }
  return out;
}

// Tells a code object for this runtime from anything else; AMDGPU code
// objects are a recognised but incompatible ISA.
hsa_status_t checkElf(const uint8_t* p, size_t n) {
  Elf64_Ehdr eh;
  if (!readAt(p, n, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  if (eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == EM_AMDGPU) {
    warn("an AMDGPU code object cannot run here; build the kernels for the simulated GPU "
         "(gtap_sim_hsa_kernel.h, gtap_add_sim_hsa_code_object)");
    return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN || eh.e_machine != kHostMachine) {
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  return HSA_STATUS_SUCCESS;
}

std::mutex g_librariesLock;
std::set<void*> g_libraries;  // dlopen handles of live code objects

hsa_status_t loadLibrary(const Reader& reader, LoadedCodeObject& object, link_map*& map) {
  object.fd = memfd_create("gtap-sim-hsa-code-object", MFD_CLOEXEC);
  SIM_CHECK(object.fd >= 0, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
  size_t done = 0;
  while (done < reader.size) {
    ssize_t w = ::write(object.fd, reader.data + done, reader.size - done);
    if (w < 0 && errno == EINTR) continue;
    SIM_CHECK(w > 0, HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    done += size_t(w);
  }
  // Should a library loaded under this name still be around (a code object
  // that stayed loaded after its dlclose), the name is spelt differently.
  std::string dir = "/proc/self/fd/";
  for (int attempt = 0; attempt < 8; ++attempt, dir += "./") {
    std::string path = dir + std::to_string(object.fd);
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* e = dlerror();
      warn("code object failed to load: %s", e != nullptr ? e : "unknown error");
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
    std::lock_guard<std::mutex> lock(g_librariesLock);
    if (g_libraries.insert(library).second) {
      object.library = library;
      break;
    }
    dlclose(library);
  }
  SIM_CHECK(object.library != nullptr, HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  SIM_CHECK(dlinfo(object.library, RTLD_DI_LINKMAP, &map) == 0, HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  return HSA_STATUS_SUCCESS;
}

// Loads a reader's code object for an agent and describes its symbols.
hsa_status_t load(const Reader& reader, const Agent* agent, std::shared_ptr<LoadedCodeObject>& object,
                  std::vector<std::unique_ptr<Symbol>>& symbols) {
  if (hsa_status_t r = checkElf(reader.data, reader.size); r != HSA_STATUS_SUCCESS) return r;
  object = std::make_shared<LoadedCodeObject>();
  link_map* map = nullptr;
  if (hsa_status_t r = loadLibrary(reader, *object, map); r != HSA_STATUS_SUCCESS) return r;
  using ListFn = const gtap_sim_hsa_kernel_desc* const* (*)(uint32_t*);
  auto list = reinterpret_cast<ListFn>(dlsym(object->library, "gtap_sim_hsa_code_object_kernels"));
  if (list == nullptr) {
    warn("code object has no gtap_sim_hsa_code_object_kernels (not built with gtap_sim_hsa_kernel.h)");
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  uint32_t count = 0;
  const gtap_sim_hsa_kernel_desc* const* descs = list(&count);
  std::set<std::string> seen;
  for (uint32_t i = 0; i < count; ++i) {
    const gtap_sim_hsa_kernel_desc* d = descs[i];
    if (d == nullptr || d->abi_version != GTAP_SIM_HSA_KERNEL_ABI_VERSION) {
      warn("kernel descriptor built against another gtap_sim_hsa_kernel.h ABI version");
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
    if (d->name == nullptr || d->fn == nullptr || d->granularity > GTAP_SIM_HSA_PER_WORK_GROUP ||
        !seen.insert(d->name).second) {
      warn("malformed or duplicate kernel descriptor %s", d->name != nullptr ? d->name : "(unnamed)");
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
    auto sym = std::make_unique<Symbol>();
    sym->kind = HSA_SYMBOL_KIND_KERNEL;
    sym->name = std::string(d->name) + ".kd";  // kernel symbols, as in code objects v3+
    sym->agent = agent;
    sym->kernel = d;
    sym->address = handleOf(d);
    symbols.push_back(std::move(sym));
  }
  for (const Variable& v : exportedVariables(reader.data, reader.size)) {
    auto sym = std::make_unique<Symbol>();
    sym->kind = HSA_SYMBOL_KIND_VARIABLE;
    sym->name = v.name;
    sym->agent = agent;
    sym->address = map->l_addr + v.value;
    sym->size = uint32_t(v.size);
    sym->alignment = v.alignment;
    sym->is_const = v.is_const;
    symbols.push_back(std::move(sym));
  }
  return HSA_STATUS_SUCCESS;
}

void forget(State& s, Executable& e) {
  for (auto& sym : e.symbols) {
    s.symbols.erase(sym.get());
    if (sym->kind == HSA_SYMBOL_KIND_KERNEL) s.kernels.erase(sym->address);
  }
}

void copyName(const std::string& name, void* value) { std::memcpy(value, name.data(), name.size()); }

}  // namespace

LoadedCodeObject::~LoadedCodeObject() {
  if (library != nullptr) {
    {
      std::lock_guard<std::mutex> lock(g_librariesLock);
      g_libraries.erase(library);
    }
    dlclose(library);
  }
  if (fd >= 0) ::close(fd);
}

bool findKernelObject(uint64_t kernel_object, KernelRef& out) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  auto it = s.kernels.find(kernel_object);
  if (it == s.kernels.end()) return false;
  out = it->second;
  return true;
}

void destroyAllCodeObjects() {
  std::map<uint64_t, std::unique_ptr<Executable>> executables;
  std::map<uint64_t, std::unique_ptr<Reader>> readers;
  std::map<uint64_t, KernelRef> kernels;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.lock);
    executables.swap(s.executables);
    readers.swap(s.readers);
    kernels.swap(s.kernels);
    s.symbols.clear();
  }
}

// --- Readers ----------------------------------------------------------------

hsa_status_t hsa_code_object_reader_create_from_memory(const void* code_object, size_t size,
                                                       hsa_code_object_reader_t* code_object_reader) {
  SIM_OPEN();
  SIM_CHECK(code_object != nullptr && size != 0 && code_object_reader != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_TRY
  // Not copied: the program keeps the bytes until the reader is destroyed.
  auto reader = std::make_unique<Reader>(Reader{{}, static_cast<const uint8_t*>(code_object), size});
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  code_object_reader->handle = handleOf(reader.get());
  s.readers.emplace(code_object_reader->handle, std::move(reader));
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_code_object_reader_create_from_file(hsa_file_t file, hsa_code_object_reader_t* code_object_reader) {
  SIM_OPEN();
  SIM_NOT_NULL(code_object_reader);
  struct stat st{};
  SIM_CHECK(fstat(file, &st) == 0 && S_ISREG(st.st_mode), HSA_STATUS_ERROR_INVALID_FILE);
  SIM_TRY
  auto reader = std::make_unique<Reader>();
  reader->owned.resize(size_t(st.st_size));
  size_t done = 0;
  while (done < reader->owned.size()) {
    // pread: the program's file offset is left where it was.
    ssize_t r = pread(file, reader->owned.data() + done, reader->owned.size() - done, off_t(done));
    if (r < 0 && errno == EINTR) continue;
    SIM_CHECK(r > 0, HSA_STATUS_ERROR_INVALID_FILE);
    done += size_t(r);
  }
  SIM_CHECK(!reader->owned.empty(), HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  reader->data = reader->owned.data();
  reader->size = reader->owned.size();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  code_object_reader->handle = handleOf(reader.get());
  s.readers.emplace(code_object_reader->handle, std::move(reader));
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t code_object_reader) {
  SIM_OPEN();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  SIM_CHECK(s.readers.erase(code_object_reader.handle) == 1, HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
  return HSA_STATUS_SUCCESS;
}

// --- Executables ------------------------------------------------------------

namespace {

hsa_status_t createExecutable(hsa_profile_t profile, hsa_default_float_rounding_mode_t rounding,
                              hsa_executable_state_t state_, hsa_executable_t* executable) {
  SIM_CHECK(profile == HSA_PROFILE_BASE || profile == HSA_PROFILE_FULL, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(rounding >= HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT && rounding <= HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR,
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_NOT_NULL(executable);
  SIM_TRY
  auto e = std::make_unique<Executable>();
  e->profile = profile;
  e->rounding = rounding;
  e->state = state_;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  executable->handle = handleOf(e.get());
  s.executables.emplace(executable->handle, std::move(e));
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

}  // namespace

hsa_status_t hsa_executable_create_alt(hsa_profile_t profile, hsa_default_float_rounding_mode_t default_float_rounding_mode,
                                       const char* options, hsa_executable_t* executable) {
  SIM_OPEN();
  return createExecutable(profile, default_float_rounding_mode, HSA_EXECUTABLE_STATE_UNFROZEN, executable);
}

hsa_status_t hsa_executable_create(hsa_profile_t profile, hsa_executable_state_t executable_state, const char* options,
                                   hsa_executable_t* executable) {
  SIM_OPEN();
  SIM_CHECK(executable_state == HSA_EXECUTABLE_STATE_UNFROZEN || executable_state == HSA_EXECUTABLE_STATE_FROZEN,
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  return createExecutable(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, executable_state, executable);
}

hsa_status_t hsa_executable_destroy(hsa_executable_t executable) {
  SIM_OPEN();
  std::unique_ptr<Executable> doomed;  // dlclose outside the lock
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  auto it = s.executables.find(executable.handle);
  SIM_CHECK(it != s.executables.end(), HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  forget(s, *it->second);
  doomed = std::move(it->second);
  s.executables.erase(it);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t code_object_reader, const char* options,
                                                   hsa_loaded_code_object_t* loaded_code_object) {
  SIM_OPEN();
  State& s = state();
  Reader reader;
  {
    std::lock_guard<std::mutex> lock(s.lock);
    Executable* e = findExecutable(s, executable);
    SIM_CHECK(e != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE);
    SIM_CHECK(toAgent(agent) != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
    auto r = s.readers.find(code_object_reader.handle);
    SIM_CHECK(r != s.readers.end(), HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
    SIM_CHECK(e->state == HSA_EXECUTABLE_STATE_UNFROZEN, HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
    reader.data = r->second->data;
    reader.size = r->second->size;
  }
  // Only the GPU runs code objects.
  const Agent* a = toAgent(agent);
  SIM_CHECK(isGpu(a), HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
  SIM_TRY
  std::shared_ptr<LoadedCodeObject> object;
  std::vector<std::unique_ptr<Symbol>> symbols;
  // dlopen runs outside the lock: the code object's constructors may call back.
  if (hsa_status_t r = load(reader, a, object, symbols); r != HSA_STATUS_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(s.lock);
  Executable* e = findExecutable(s, executable);
  SIM_CHECK(e != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  SIM_CHECK(e->state == HSA_EXECUTABLE_STATE_UNFROZEN, HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
  for (const auto& sym : symbols) {
    for (const auto& other : e->symbols) {
      SIM_CHECK(other->name != sym->name || other->agent != sym->agent, HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED);
    }
  }
  for (auto& sym : symbols) {
    sym->executable = e;
    s.symbols.insert(sym.get());
    if (sym->kind == HSA_SYMBOL_KIND_KERNEL) s.kernels[sym->address] = KernelRef{object, sym->kernel};
    e->symbols.push_back(std::move(sym));
  }
  e->objects.push_back(object);
  if (loaded_code_object != nullptr) loaded_code_object->handle = handleOf(object.get());
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

namespace {

// ROCr 6.1 freezes each code segment loaded for a GPU by invalidating the
// GPU's code caches (amd_loader_context.cpp RegionMemory::Freeze,
// GpuAgent::InvalidateCodeCaches): AqlQueue::ExecutePM4 waits for that
// packet with a signal it makes, waits on and destroys through the runtime's
// exported hsa_signal_* functions, so through the tool table: calls of the
// runtime's own, made on the program's thread inside the program's call.
void invalidateCodeCaches() {
  hsa_signal_t done{};
  if (::hsa_signal_create(1, 0, nullptr, &done) != HSA_STATUS_SUCCESS) return;
  storeValue(toSignal(done), 0, std::memory_order_release);  // the device's part
  ::hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX, HSA_WAIT_STATE_ACTIVE);
  ::hsa_signal_destroy(done);
}

}  // namespace

hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char* options) {
  SIM_OPEN();
  State& s = state();
  size_t segments = 0;
  {
    std::lock_guard<std::mutex> lock(s.lock);
    Executable* e = findExecutable(s, executable);
    SIM_CHECK(e != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE);
    SIM_CHECK(e->state == HSA_EXECUTABLE_STATE_UNFROZEN, HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
    e->state = HSA_EXECUTABLE_STATE_FROZEN;
    segments = e->objects.size();  // every code object is loaded for the GPU
  }
  for (size_t i = 0; i < segments; ++i) invalidateCodeCaches();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_get_info(hsa_executable_t executable, hsa_executable_info_t attribute, void* value) {
  SIM_OPEN();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  Executable* e = findExecutable(s, executable);
  SIM_CHECK(e != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  SIM_NOT_NULL(value);
  switch (attribute) {
    case HSA_EXECUTABLE_INFO_PROFILE:
      *static_cast<hsa_profile_t*>(value) = e->profile;
      break;
    case HSA_EXECUTABLE_INFO_STATE:
      *static_cast<hsa_executable_state_t*>(value) = e->state;
      break;
    case HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
      *static_cast<hsa_default_float_rounding_mode_t*>(value) = e->rounding;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

// Host code has no unresolved references left for validation to find.
hsa_status_t hsa_executable_validate(hsa_executable_t executable, uint32_t* result) {
  SIM_OPEN();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  SIM_CHECK(findExecutable(s, executable) != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  SIM_NOT_NULL(result);
  *result = 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_validate_alt(hsa_executable_t executable, const char* options, uint32_t* result) {
  return sim_hsa::hsa_executable_validate(executable, result);
}

hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable, const char* symbol_name,
                                               const hsa_agent_t* agent, hsa_executable_symbol_t* symbol) {
  SIM_OPEN();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  Executable* e = findExecutable(s, executable);
  SIM_CHECK(e != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  SIM_CHECK(symbol_name != nullptr && symbol != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  // Every symbol here is an agent symbol; without an agent nothing matches.
  const Agent* a = agent != nullptr ? toAgent(*agent) : nullptr;
  SIM_CHECK(agent == nullptr || a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  for (const auto& sym : e->symbols) {
    if (sym->agent == a && sym->name == symbol_name) {
      symbol->handle = handleOf(sym.get());
      return HSA_STATUS_SUCCESS;
    }
  }
  return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}

hsa_status_t hsa_executable_get_symbol(hsa_executable_t executable, const char* module_name, const char* symbol_name,
                                       hsa_agent_t agent, int32_t call_convention, hsa_executable_symbol_t* symbol) {
  return sim_hsa::hsa_executable_get_symbol_by_name(executable, symbol_name, &agent, symbol);
}

namespace {

// Symbol handles of an executable, taken under the lock so that callbacks
// run without it (they may call back into the runtime).
hsa_status_t symbolsOf(hsa_executable_t executable, const Agent* onlyFor, std::vector<uint64_t>& out) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  Executable* e = findExecutable(s, executable);
  SIM_CHECK(e != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  for (const auto& sym : e->symbols) {
    if (onlyFor == nullptr || sym->agent == onlyFor) out.push_back(handleOf(sym.get()));
  }
  return HSA_STATUS_SUCCESS;
}

}  // namespace

hsa_status_t hsa_executable_iterate_symbols(hsa_executable_t executable,
                                            hsa_status_t (*callback)(hsa_executable_t exec,
                                                                     hsa_executable_symbol_t symbol, void* data),
                                            void* data) {
  SIM_OPEN();
  SIM_TRY
  std::vector<uint64_t> symbols;
  if (hsa_status_t r = symbolsOf(executable, nullptr, symbols); r != HSA_STATUS_SUCCESS) return r;
  SIM_NOT_NULL(callback);
  for (uint64_t h : symbols) {
    hsa_status_t r = callback(executable, hsa_executable_symbol_t{h}, data);
    if (r != HSA_STATUS_SUCCESS) return r;
  }
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_executable_iterate_agent_symbols(hsa_executable_t executable, hsa_agent_t agent,
                                                  hsa_status_t (*callback)(hsa_executable_t exec, hsa_agent_t agent,
                                                                           hsa_executable_symbol_t symbol, void* data),
                                                  void* data) {
  SIM_OPEN();
  const Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_TRY
  std::vector<uint64_t> symbols;
  if (hsa_status_t r = symbolsOf(executable, a, symbols); r != HSA_STATUS_SUCCESS) return r;
  SIM_NOT_NULL(callback);
  for (uint64_t h : symbols) {
    hsa_status_t r = callback(executable, agent, hsa_executable_symbol_t{h}, data);
    if (r != HSA_STATUS_SUCCESS) return r;
  }
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

// Code objects for this runtime hold agent symbols only.
hsa_status_t hsa_executable_iterate_program_symbols(hsa_executable_t executable,
                                                    hsa_status_t (*callback)(hsa_executable_t exec,
                                                                             hsa_executable_symbol_t symbol, void* data),
                                                    void* data) {
  SIM_OPEN();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  SIM_CHECK(findExecutable(s, executable) != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE);
  SIM_NOT_NULL(callback);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t executable_symbol,
                                            hsa_executable_symbol_info_t attribute, void* value) {
  SIM_OPEN();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.lock);
  const Symbol* sym = findSymbol(s, executable_symbol);
  SIM_CHECK(sym != nullptr, HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL);
  SIM_NOT_NULL(value);
  const bool kernel = sym->kind == HSA_SYMBOL_KIND_KERNEL;
  switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
      *static_cast<hsa_symbol_kind_t*>(value) = sym->kind;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
      *static_cast<uint32_t*>(value) = uint32_t(sym->name.size());
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
      copyName(sym->name, value);  // exactly NAME_LENGTH bytes, no NUL, as specified
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH:
      *static_cast<uint32_t*>(value) = 0;  // module names belong to module-linkage symbols
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME:
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_AGENT:
      *static_cast<hsa_agent_t*>(value) = toHandle(sym->agent);
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE:
      *static_cast<hsa_symbol_linkage_t*>(value) = HSA_SYMBOL_LINKAGE_PROGRAM;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION:
      *static_cast<bool*>(value) = true;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS:
      SIM_CHECK(!kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<uint64_t*>(value) = sym->address;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION:
      SIM_CHECK(!kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<hsa_variable_allocation_t*>(value) = HSA_VARIABLE_ALLOCATION_AGENT;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT:
      SIM_CHECK(!kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<hsa_variable_segment_t*>(value) = HSA_VARIABLE_SEGMENT_GLOBAL;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT:
      SIM_CHECK(!kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<uint32_t*>(value) = sym->alignment;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE:
      SIM_CHECK(!kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<uint32_t*>(value) = sym->size;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST:
      SIM_CHECK(!kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<bool*>(value) = sym->is_const;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
      SIM_CHECK(kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<uint64_t*>(value) = sym->address;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
      SIM_CHECK(kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<uint32_t*>(value) = sym->kernel->kernarg_segment_size;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
      SIM_CHECK(kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      // AQL requires kernarg segments aligned to at least 16 bytes.
      *static_cast<uint32_t*>(value) = std::max<uint32_t>(16, sym->kernel->kernarg_segment_alignment);
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
      SIM_CHECK(kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<uint32_t*>(value) = sym->kernel->group_segment_size;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
      SIM_CHECK(kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<uint32_t*>(value) = sym->kernel->private_segment_size;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK:
      SIM_CHECK(kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<bool*>(value) = false;
      break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION:
      SIM_CHECK(kernel, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<uint32_t*>(value) = 0;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

}  // namespace sim_hsa
