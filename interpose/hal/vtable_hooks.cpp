#include "vtable_hooks.h"

#include "recorder.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <new>
#include <mutex>
#include <set>
#include <type_traits>
#include <unordered_map>

#include "clock.h"
#include "config.h"
#include "phases.h"
#include "dlsym_hook.h"
#include "functions.h"
#include "internal_error.h"
#include "log.h"
#include "replay_stream.h"
#include "session.h"

namespace gtap::hal {

// One hooked slot: what its thunk hands the enter stub.
struct Slot {
  void* original;
  uint16_t function;
  bool returnsStatus;
  Decoder decoder;
  const char* implementation;  // "iree_hal_<impl>": the type of the objects whose vtable this is
};

}  // namespace gtap::hal

extern "C" {
void gtap_hal_enter_stub();
void gtap_hal_exit_stub();
}

namespace gtap::hal {

namespace {

// --- function ids ------------------------------------------------------------------

constexpr size_t kMaxFunctions = 4096;
core::FunctionInfo g_functions[kMaxFunctions];
size_t g_functionCount = 0;

// Every entry names something from the start: the table is registered whole,
// at load (before any thread, as function ranges must be), and entries are
// filled as vtables are hooked, each before any record can use it.
struct FunctionTable {
  FunctionTable() {
    for (auto& f : g_functions) f = {"unknown", core::ApiKind::ireeHal};
    core::registerFunctions(core::kHalFunctionBase, g_functions, kMaxFunctions);
  }
} g_functionTable;

// A string kept for the life of the process. Under the scan mutex.
const char* intern(const std::string& s) {
  static auto* strings = new std::set<std::string>();
  return strings->insert(s).first->c_str();
}

// Under the scan mutex (at load, and when a dlsym finds new images).
uint16_t functionId(const std::string& name) {
  // Never freed: records name these functions until the process ends.
  static auto* names = new std::deque<std::string>();
  static auto* ids = new std::unordered_map<std::string, uint16_t>();
  auto it = ids->find(name);
  if (it != ids->end()) return it->second;
  if (g_functionCount == kMaxFunctions) return 0xffff;
  names->push_back(name);
  g_functions[g_functionCount] = {names->back().c_str(), core::ApiKind::ireeHal};
  uint16_t id = static_cast<uint16_t>(core::kHalFunctionBase + g_functionCount++);
  ids->emplace(name, id);
  return id;
}

// --- the per-thread stack of return addresses ----------------------------------------

struct ShadowEntry {
  void* returnAddress;
  Slot* slot;
  core::Record* record;  // the call's record (mode api), filled at its end
  CallContext call;
};
constexpr uint32_t kShadowDepth = 128;
struct Shadow {
  ShadowEntry entries[kShadowDepth];
  uint32_t depth = 0;
  // Entries below `base` are calls outside the program's callback running
  // now (a host call, a buffer's release callback): a call made while only
  // those are open is the program's own, not the driver's.
  uint32_t base = 0;
};
// A pointer only: the stack itself is allocated at a thread's first hooked
// call, so the library's static TLS stays small.
__thread Shadow* t_shadow __attribute__((tls_model("initial-exec"))) = nullptr;

// --- the program's callbacks ---------------------------------------------------------

// A callback of the program's and its user data, handed to the driver in
// their place; freed when the callback has run (a callback the driver never
// calls, because the call failed, leaves it: a few bytes, never a dangling one).
struct ProgramCallback {
  void* fn;
  void* userData;
};

// Runs the program's callback with the calls open on this thread set aside:
// what it calls is the program's.
template <typename Result, typename Call>
Result asProgram(Call&& call) {
  Shadow* shadow = t_shadow;
  uint32_t saved = shadow ? shadow->base : 0;
  if (shadow) shadow->base = shadow->depth;
  uint8_t guard = core::t_guard;
  core::t_guard &= core::kGuardGtap;  // the program's code: the runtimes' own calls are not open in it
  if constexpr (std::is_void_v<Result>) {
    call();
    core::t_guard = guard;
    if (shadow) shadow->base = saved;
  } else {
    Result result = call();
    core::t_guard = guard;
    if (shadow) shadow->base = saved;
    return result;
  }
}

// iree_hal_host_call_fn_t: (user_data, const uint64_t args[4], context*) -> iree_status_t.
uint64_t hostCall(void* record, const uint64_t* args, void* context) {
  auto* r = static_cast<ProgramCallback*>(record);
  ProgramCallback c = *r;
  delete r;
  using Fn = uint64_t (*)(void*, const uint64_t*, void*);
  return asProgram<uint64_t>([&] { return reinterpret_cast<Fn>(c.fn)(c.userData, args, context); });
}

// iree_hal_buffer_release_fn_t: (user_data, buffer).
void releaseCallback(void* record, void* buffer) {
  auto* r = static_cast<ProgramCallback*>(record);
  ProgramCallback c = *r;
  delete r;
  using Fn = void (*)(void*, void*);
  asProgram<void>([&] { reinterpret_cast<Fn>(c.fn)(c.userData, buffer); });
}

// queue_host_call passes its iree_hal_host_call_t {fn, user_data} in rdx:rcx
// (16 bytes in two registers: the semaphore lists before it are on the
// stack); import_buffer its iree_hal_buffer_release_callback_t {fn,
// user_data} in rcx:r8. A null function is left as it is.
void wrapProgramCallback(Decoder decoder, SavedRegisters& regs) {
  uint64_t& fn = decoder == Decoder::queueHostCall ? regs.rdx : regs.rcx;
  uint64_t& userData = decoder == Decoder::queueHostCall ? regs.rcx : regs.r8;
  if (fn == 0) return;
  auto* record = new (std::nothrow) ProgramCallback{reinterpret_cast<void*>(fn), reinterpret_cast<void*>(userData)};
  if (!record) return;  // the callback runs unwrapped: its calls count as the driver's
  fn = decoder == Decoder::queueHostCall ? reinterpret_cast<uint64_t>(&hostCall)
                                         : reinterpret_cast<uint64_t>(&releaseCallback);
  userData = reinterpret_cast<uint64_t>(record);
}

// --- thunks ------------------------------------------------------------------------

// movabs $slot, %r11; jmp *0(%rip); .quad gtap_hal_enter_stub
constexpr size_t kThunkBytes = 32;

// The thunks of one vtable: written into fresh anonymous pages, which are
// made executable (and no longer writable) before any slot points at them.
class Thunks {
 public:
  explicit Thunks(size_t count) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    bytes_ = (count * kThunkBytes + page - 1) / page * page;
    if (bytes_ == 0) return;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) base_ = static_cast<uint8_t*>(p);
  }
  bool ok() const { return base_ != nullptr; }
  void* make(size_t index, Slot* slot) {
    uint8_t* t = base_ + index * kThunkBytes;
    uint64_t slotValue = reinterpret_cast<uint64_t>(slot);
    uint64_t stub = reinterpret_cast<uint64_t>(&gtap_hal_enter_stub);
    t[0] = 0x49;  // movabs imm64, %r11
    t[1] = 0xbb;
    std::memcpy(t + 2, &slotValue, 8);
    t[10] = 0xff;  // jmp *0(%rip)
    t[11] = 0x25;
    std::memset(t + 12, 0, 4);
    std::memcpy(t + 16, &stub, 8);
    std::memset(t + 24, 0xcc, kThunkBytes - 24);
    return t;
  }
  bool seal() { return mprotect(base_, bytes_, PROT_READ | PROT_EXEC) == 0; }
  // Not sealed: nothing points at these pages yet.
  void discard() {
    if (base_) munmap(base_, bytes_);
    base_ = nullptr;
  }

 private:
  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
};

// --- writing read-only vtables -----------------------------------------------------------

// The protection of the mapping holding `address` (from /proc/self/maps), or -1.
int protectionOf(uintptr_t address) {
  FILE* f = std::fopen("/proc/self/maps", "re");
  if (!f) return -1;
  char line[512];
  int prot = -1;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    if (address < start || address >= end) continue;
    prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | (perms[2] == 'x' ? PROT_EXEC : 0);
    break;
  }
  std::fclose(f);
  return prot;
}

// Stores the thunks into the vtable's slots: the pages made writable, one
// aligned pointer store per slot, the protection put back.
bool writeSlots(void** table, const std::vector<std::pair<size_t, void*>>& values, std::string& why) {
  const uintptr_t pageSize = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t first = reinterpret_cast<uintptr_t>(table);
  uintptr_t last = first;
  for (const auto& [index, value] : values) last = std::max(last, first + index * sizeof(void*));
  uintptr_t pageStart = first & ~(pageSize - 1);
  uintptr_t pageEnd = (last + sizeof(void*) + pageSize - 1) & ~(pageSize - 1);
  int prot = protectionOf(first);
  if (prot < 0 || protectionOf(last) != prot) {
    why = "its pages are not one mapping gtap can find in /proc/self/maps";
    return false;
  }
  if (!(prot & PROT_WRITE) &&
      mprotect(reinterpret_cast<void*>(pageStart), pageEnd - pageStart, prot | PROT_WRITE) != 0) {
    why = std::string("mprotect failed: ") + std::strerror(errno);
    return false;
  }
  for (const auto& [index, value] : values) __atomic_store_n(&table[index], value, __ATOMIC_RELEASE);
  if (!(prot & PROT_WRITE)) mprotect(reinterpret_cast<void*>(pageStart), pageEnd - pageStart, prot);
  return true;
}

// --- images ------------------------------------------------------------------------------

struct Image {
  std::string path;
  uintptr_t bias;
};

int collectImage(dl_phdr_info* info, size_t, void* data) {
  auto* images = static_cast<std::vector<Image>*>(data);
  std::string path = info->dlpi_name ? info->dlpi_name : "";
  if (path.empty()) {
    // The executable.
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    path.assign(exe, static_cast<size_t>(n));
  }
  if (path.find("linux-vdso") != std::string::npos) return 0;
  images->push_back({path, static_cast<uintptr_t>(info->dlpi_addr)});
  return 0;
}

bool isSystemImage(const std::string& path) {
  for (const char* dir : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/"})
    if (path.compare(0, std::strlen(dir), dir) == 0) return true;
  return false;
}

std::string ownPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ownPath), &info) && info.dli_fname) return info.dli_fname;
  return {};
}

// Methods whose arguments are read only where their signature has a shape
// gtap knows (SlotMethod::variant, from embed_slot_tables.py's SHAPES).
struct ShapedDecoder {
  const char* interface;
  const char* method;
  Decoder decoder;           // for variant 1
  Decoder otherwise;         // for variant 2
};
constexpr ShapedDecoder kShaped[] = {
    {"device", "queue_fill", Decoder::queueFill, Decoder::queueFill},
    {"device", "queue_update", Decoder::queueUpdate, Decoder::queueUpdate},
    {"device", "queue_copy", Decoder::queueCopy, Decoder::queueCopy},
    {"device", "queue_read", Decoder::queueRead, Decoder::queueRead},
    {"device", "queue_write", Decoder::queueWrite, Decoder::queueWrite},
    {"device", "queue_execute", Decoder::queueExecute, Decoder::queueExecute},
    {"device", "queue_alloca", Decoder::queueAllocaOutR8, Decoder::queueAllocaOutR9},
    {"device", "queue_dealloca", Decoder::queueDealloca, Decoder::queueDealloca},
    {"device", "queue_flush", Decoder::queueFlush, Decoder::queueFlush},
    {"device", "wait_semaphores", Decoder::waitSemaphores, Decoder::waitSemaphores},
    {"device", "import_file", Decoder::importFile, Decoder::importFile},
    {"semaphore", "signal", Decoder::semaphoreSignal, Decoder::semaphoreSignal},
    {"semaphore", "wait", Decoder::semaphoreWait, Decoder::semaphoreWait},
    {"command_buffer", "fill_buffer", Decoder::fillBuffer, Decoder::fillBuffer},
    {"command_buffer", "update_buffer", Decoder::updateBuffer, Decoder::updateBuffer},
    {"command_buffer", "copy_buffer", Decoder::copyBuffer, Decoder::copyBuffer},
    {"local_executable", "issue_call", Decoder::issueCall, Decoder::issueCall},
    {"device", "queue_host_call", Decoder::queueHostCall, Decoder::queueHostCall},
    {"allocator", "import_buffer", Decoder::importBuffer, Decoder::importBuffer},
};

// Where iree_hal_local_executable_t keeps its function table, export count
// and export names in the IREE versions a vtable matched ("3.11.0, 3.12.0"):
// known only when every one of them has all three at the same offsets.
LocalExecutableLayout localExecutableLayout(const std::string& versions) {
  LocalExecutableLayout layout;
  bool first = true;
  size_t at = 0;
  while (at < versions.size()) {
    size_t comma = versions.find(", ", at);
    std::string version = versions.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    at = comma == std::string::npos ? versions.size() : comma + 2;
    LocalExecutableLayout v;
    if (!objectFieldOffset(version.c_str(), "local_executable", "dispatch_ptrs", v.dispatchPtrs) ||
        !objectFieldOffset(version.c_str(), "local_executable", "export_count", v.exportCount) ||
        !objectFieldOffset(version.c_str(), "local_executable", "export_names", v.exportNames))
      return {};
    if (!first && (v.dispatchPtrs != layout.dispatchPtrs || v.exportCount != layout.exportCount ||
                   v.exportNames != layout.exportNames))
      return {};
    layout = v;
    first = false;
  }
  return layout;
}

Decoder decoderFor(const char* interface, const SlotMethod& method) {
  auto is = [](const char* a, const char* b) { return std::strcmp(a, b) == 0; };
  if (method.variant != 0)
    for (const ShapedDecoder& d : kShaped)
      if (is(interface, d.interface) && is(method.name, d.method)) return method.variant == 1 ? d.decoder : d.otherwise;
  if (is(interface, "command_buffer")) {
    if (is(method.name, "dispatch")) return method.variant == 1 ? Decoder::dispatchConfig : Decoder::dispatchCountPointer;
    if (is(method.name, "destroy")) return Decoder::commandBufferDestroy;
    if (is(method.name, "begin")) return Decoder::commandBufferBegin;
    if (is(method.name, "end")) return Decoder::commandBufferEnd;
    if (is(method.name, "execution_barrier")) return Decoder::executionBarrier;
  } else if (is(interface, "executable_cache")) {
    if (is(method.name, "prepare_executable")) return Decoder::prepareExecutable;
  } else if (is(interface, "executable") || is(interface, "local_executable")) {
    if (is(method.name, "destroy")) return Decoder::executableDestroy;
  } else if (is(interface, "allocator")) {
    if (is(method.name, "allocate_buffer")) return Decoder::allocateBuffer;
  } else if (is(interface, "buffer")) {
    if (is(method.name, "destroy")) return Decoder::bufferDestroy;
  }
  return Decoder::none;
}

}  // namespace

// --- the calls -------------------------------------------------------------------------------

extern "C" __attribute__((visibility("hidden"))) void* gtap_hal_enter(Slot* slot, void** returnSlot,
                                                                     const SavedRegisters* regs) {
  static std::atomic<bool> told{false};
  if (!told.load(std::memory_order_relaxed))
    core::replay::notReplayed(told, "IREE HAL programs are not replayed (gtap replays Level Zero work)");
  // Any mode records something here: the call (api), the HAL operations
  // (kernels), buffers (memory).
  if (!core::g_recordApi && !core::recordKernels() && !core::recordMemory()) return slot->original;
  core::ThreadState* thread = core::enterCall(0);
  if (!thread) return slot->original;
  Shadow* shadow = t_shadow;
  if (!shadow) {
    shadow = new (std::nothrow) Shadow();
    if (!shadow) return slot->original;
    t_shadow = shadow;
  }
  if (shadow->depth == kShadowDepth) return slot->original;  // too deep: this call goes unrecorded
  bool nested = shadow->depth > shadow->base;
  ShadowEntry& e = shadow->entries[shadow->depth++];
  e.returnAddress = *returnSlot;
  e.slot = slot;
  e.call = CallContext{};
  e.call.thread = thread;
  e.call.ticks = core::nowTicks();
  e.call.nested = nested;
  // No call record to link to without one.
  e.call.beginIndex = ~uint64_t{0};
  e.record = core::g_recordApi && !core::phases::paused() ? thread->openCall(slot->function, e.call.ticks, e.call.beginIndex) : nullptr;
  *returnSlot = reinterpret_cast<void*>(&gtap_hal_exit_stub);
  if (slot->decoder != Decoder::none) {
    // gtap's own work: whatever it calls is not the program's.
    uint8_t saved = core::t_guard;
    core::t_guard |= core::kGuardGtap;
    try {
      core::testThrowPoint(core::TestSite::halCall);
      if (slot->decoder == Decoder::queueHostCall || slot->decoder == Decoder::importBuffer)
        wrapProgramCallback(slot->decoder, *const_cast<SavedRegisters*>(regs));
      atCallStart(slot->decoder, slot->implementation, *regs, reinterpret_cast<const uint64_t*>(returnSlot + 1),
                  e.call);
    } GTAP_CATCH_INTERNAL {
      core::t_guard = saved;
      core::stopAfterInternalError("an IREE HAL vtable hook");
      // The call goes to the original as if never hooked: it returns straight
      // to its caller (its record stays open: a begin without an end).
      *returnSlot = e.returnAddress;
      --shadow->depth;
      return slot->original;
    }
    core::t_guard = saved;
  }
  return slot->original;
}

extern "C" __attribute__((visibility("hidden"))) void* gtap_hal_exit(uint64_t result) {
  Shadow* shadow = t_shadow;
  ShadowEntry& e = shadow->entries[--shadow->depth];
  // iree_status_t: 0 is OK, otherwise its low 5 bits are the status code.
  int32_t value = e.slot->returnsStatus ? static_cast<int32_t>(result & 0x1f) : 0;
  if (e.slot->decoder != Decoder::none) {
    uint8_t saved = core::t_guard;
    core::t_guard |= core::kGuardGtap;
    // Reached from the exit stub, which nothing may unwind through: the
    // caller gets the original's result whatever happens here.
    try {
      atCallEnd(e.slot->decoder, e.slot->returnsStatus ? result : 0, e.call);
    } GTAP_CATCH_INTERNAL {
      core::stopAfterInternalError("an IREE HAL vtable hook");
    }
    core::t_guard = saved;
  }
  if (e.record) e.call.thread->closeCall(e.record, core::nowTicks(), value);
  return e.returnAddress;
}

bool sameMethods(const SlotLayout& a, const SlotLayout& b) {
  if (a.count != b.count) return false;
  for (size_t i = 0; i < a.count; ++i)
    if (std::strcmp(a.methods[i].name, b.methods[i].name) != 0) return false;
  return true;
}

const SlotLayout* matchLayout(const std::vector<std::vector<std::string>>& methods, std::string& versions,
                              std::string& why) {
  size_t count = 0;
  const SlotLayout* layouts = slotLayouts(count);
  const SlotLayout* match = nullptr;
  const SlotLayout* closest = nullptr;
  size_t closestAgree = 0;
  auto agrees = [](const std::vector<std::string>& names, const char* method) {
    for (const std::string& n : names)
      if (n == method) return true;
    return false;
  };
  // A name the layout has at another slot: the slots are in another order.
  auto misplaced = [](const std::vector<std::string>& names, const SlotLayout& layout, size_t at) {
    for (size_t j = 0; j < layout.count; ++j)
      if (j != at)
        for (const std::string& n : names)
          if (n == layout.methods[j].name) return true;
    return false;
  };
  // The layout whose methods most slots agree with: an executable loader
  // (destroy, infer_format, query_support, try_load) also agrees with an
  // executable cache in two slots, and must not be taken for one.
  size_t matchAgree = 0;
  const SlotLayout* tie = nullptr;
  for (size_t l = 0; l < count; ++l) {
    const SlotLayout& layout = layouts[l];
    size_t agree = 0, disagree = 0;
    for (size_t i = 0; i < methods.size() && i < layout.count; ++i) {
      if (methods[i].empty()) continue;
      if (agrees(methods[i], layout.methods[i].name))
        ++agree;
      else if (misplaced(methods[i], layout, i))
        ++disagree;
    }
    if (agree > closestAgree || (agree == closestAgree && closest && layout.count == methods.size() &&
                                 closest->count != methods.size())) {
      closestAgree = agree;
      closest = &layout;
    }
    if (layout.count == methods.size() && disagree == 0 && agree >= std::min<size_t>(2, methods.size()) &&
        agree * 3 >= methods.size()) {
      if (!match || agree > matchAgree) {
        match = &layout;
        matchAgree = agree;
        tie = nullptr;
        versions.clear();
      } else if (agree == matchAgree && std::strcmp(match->interface, layout.interface) != 0 &&
                 !sameMethods(*match, layout)) {
        tie = &layout;  // two interfaces that would read its slots differently (a lone destroy is the same)
      }
      if (std::strcmp(match->interface, layout.interface) == 0 && agree == matchAgree)
        versions += std::string(versions.empty() ? "" : ", ") + layout.version;
    }
  }
  if (match && tie) {
    why = "its slots agree as well with " + std::string(match->interface) + " as with " + tie->interface +
          ", so which it is cannot be told";
    versions.clear();
    return nullptr;
  }
  if (match) return match;
  if (!closest) {
    why = "none of its " + std::to_string(methods.size()) + " slots points at a function named like a HAL method";
    return nullptr;
  }
  why = "its " + std::to_string(methods.size()) + " slots match no known layout; the closest is IREE " +
        closest->version + "'s " + closest->interface + " (" + std::to_string(closest->count) + " slots)";
  for (size_t i = 0; i < methods.size(); ++i) {
    if (methods[i].empty()) continue;
    if (i >= closest->count) {
      why += ": slot " + std::to_string(i) + " (" + methods[i][0] + ") is past its end";
      break;
    }
    if (!agrees(methods[i], closest->methods[i].name) && misplaced(methods[i], *closest, i)) {
      why += ": slot " + std::to_string(i) + " is " + methods[i][0] + " where it has " + closest->methods[i].name;
      break;
    }
  }
  return nullptr;
}

std::vector<VtableOutcome> installHooks() {
  std::vector<VtableOutcome> outcomes;
  std::vector<Image> images;
  dl_iterate_phdr(&collectImage, &images);
  const std::string self = ownPath();
  // Images already read (by path and load address: one unloaded and another
  // loaded at the same place is new).
  static auto* scanned = new std::set<std::pair<std::string, uintptr_t>>();
  for (const Image& image : images) {
    if (!self.empty() && image.path == self) continue;
    if (!scanned->insert({image.path, image.bias}).second) continue;
    ImageSymbols symbols;
    std::string why;
    if (!readImageSymbols(image.path, isSystemImage(image.path), symbols, why)) continue;
    // IREE's host waits on semaphore lists call no slot (below): say so.
    if (symbols.multiWait) noteUnrecordedWaits(image.path, image.bias + symbols.multiWait, "symbol");
    if (symbols.vtables.empty()) {
      if (symbols.strippedWithIree) {
        VtableOutcome o;
        o.image = image.path;
        o.refused = "it holds IREE's HAL but has no symbol table, and no debug file with build-id " +
                    (symbols.buildId.empty() ? std::string("(none)") : symbols.buildId) +
                    " was found (GTAP_DEBUG_PATH, /usr/lib/debug)";
        outcomes.push_back(std::move(o));
      }
      continue;
    }
    for (const VtableSymbol& v : symbols.vtables) {
      VtableOutcome o;
      o.image = image.path;
      o.vtable = v.name;
      std::string impl = v.name.substr(9, v.name.size() - 9 - 7);  // iree_hal_<impl>_vtable
      std::string prefix = "iree_hal_" + impl + "_";
      const char* implementation = intern("iree_hal_" + impl);
      auto** table = reinterpret_cast<void**>(image.bias + v.value);
      size_t slots = v.size / sizeof(void*);
      std::vector<std::vector<std::string>> methods(slots);
      for (size_t i = 0; i < slots; ++i) {
        if (!table[i]) continue;
        auto range = symbols.functions.equal_range(reinterpret_cast<uintptr_t>(table[i]) - image.bias);
        for (auto f = range.first; f != range.second; ++f)
          if (f->second.compare(0, prefix.size(), prefix) == 0) methods[i].push_back(f->second.substr(prefix.size()));
      }
      const SlotLayout* layout = matchLayout(methods, o.versions, why);
      if (!layout) {
        o.refused = why;
        outcomes.push_back(std::move(o));
        continue;
      }
      o.interface = layout->interface;
      Thunks thunks(slots);
      if (!thunks.ok()) {
        o.refused = std::string("no memory for its thunks: ") + std::strerror(errno);
        outcomes.push_back(std::move(o));
        continue;
      }
      std::vector<std::pair<size_t, void*>> values;
      for (size_t i = 0; i < slots; ++i) {
        if (!table[i]) continue;
        // Named by the function that runs (its own name when it has one of
        // the implementation's, which may differ from the layout's method
        // name: iree_hal_sync_device_allocator sits in device_allocator's slot).
        bool own = !methods[i].empty() && !std::count(methods[i].begin(), methods[i].end(), layout->methods[i].name);
        uint16_t id = functionId(prefix + (own ? methods[i][0] : std::string(layout->methods[i].name)));
        if (id == 0xffff) continue;
        // Never freed: a thunk may be running on some thread whenever.
        auto* slot = new Slot{table[i], id, layout->methods[i].returnsStatus,
                              decoderFor(layout->interface, layout->methods[i]), implementation};
        values.emplace_back(i, thunks.make(i, slot));
      }
      why.clear();
      if (!thunks.seal()) {
        thunks.discard();
        o.refused = std::string("its thunks could not be made executable: ") + std::strerror(errno);
        outcomes.push_back(std::move(o));
        continue;
      }
      if (!writeSlots(table, values, why)) {
        o.refused = why;
        outcomes.push_back(std::move(o));
        continue;
      }
      o.slotsHooked = static_cast<uint32_t>(values.size());
      // Semaphores that are IREE's async semaphores (their fail slot became
      // on_fail): that IREE waits on lists through
      // iree_async_semaphore_multi_wait, whose symbol LTO may have inlined away.
      if (!std::strcmp(layout->interface, "semaphore") && layout->count > 3 &&
          !std::strcmp(layout->methods[3].name, "on_fail") && !symbols.multiWait)
        noteUnrecordedWaits(image.path, 0, "semaphore layout");
      // Executables: export names and counts are asked of them through these
      // slots; a local executable's members are read where its version has them.
      bool local = !std::strcmp(layout->interface, "local_executable");
      if (local || !std::strcmp(layout->interface, "executable")) {
        ExecutableVtable info;
        info.implementation = implementation;
        for (size_t i = 0; i < layout->count; ++i) {
          const char* method = layout->methods[i].name;
          if (!std::strcmp(method, "function_info") || !std::strcmp(method, "export_info")) info.infoSlot = i;
          if (!std::strcmp(method, "function_count") || !std::strcmp(method, "export_count")) info.countSlot = i;
        }
        if (local) info.local = localExecutableLayout(o.versions);
        noteExecutableVtable(table, info);
      }
      outcomes.push_back(std::move(o));
    }
  }
  return outcomes;
}

namespace {

std::mutex g_scanMutex;
std::atomic<unsigned long long> g_loadsSeen{~0ull};

int readLoads(dl_phdr_info* info, size_t, void* data) {
  *static_cast<unsigned long long*>(data) = info->dlpi_adds;
  return 1;  // every entry carries the same count: the first is enough
}

unsigned long long loadsSoFar() {
  unsigned long long adds = 0;
  dl_iterate_phdr(&readLoads, &adds);
  return adds;
}

// Hooks what the images loaded since the last scan carry, and says what it left alone.
void scan() {
  const core::Config& c = core::config();
  uint8_t saved = core::t_guard;
  core::t_guard |= core::kGuardGtap;  // gtap's own work: nothing it calls is the program's
  // At load (a constructor) and inside the program's dlsym: a failure stops
  // recording, the vtables not yet hooked stay as they are.
  try {
    for (const VtableOutcome& o : installHooks()) {
      if (o.refused.empty() || c.quiet) continue;
      if (o.vtable.empty())
        core::logLine("IREE HAL: %s: %s; HAL calls are not recorded, HSA and Level Zero capture continue",
                      o.image.c_str(), o.refused.c_str());
      else
        core::logLine("IREE HAL: not hooking %s in %s: %s", o.vtable.c_str(), o.image.c_str(), o.refused.c_str());
    }
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("finding the IREE HAL's vtables");
  }
  core::t_guard = saved;
}

// At every dlsym: images loaded since the last scan (dlopen) are scanned
// before the program can reach into them.
void rescanIfLoaded() {
  if (core::t_guard & core::kGuardGtap) return;
  unsigned long long loads = loadsSoFar();
  if (loads == g_loadsSeen.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(g_scanMutex);
  if (loads == g_loadsSeen.load(std::memory_order_relaxed)) return;
  scan();
  g_loadsSeen.store(loads, std::memory_order_release);
}

struct Install {
  Install() {
    const core::Config& c = core::config();
    // The HAL is recorded as calls (api), operations (kernels) and buffers
    // (memory); with replay, hooked only to say its work is not replayed.
    if (!c.enabled ||
        !(c.mode & (format::kModeApi | format::kModeKernels | format::kModeMemory | format::kModeReplay)))
      return;
    std::lock_guard<std::mutex> lock(g_scanMutex);
    unsigned long long loads = loadsSoFar();
    scan();
    g_loadsSeen.store(loads, std::memory_order_release);
    core::registerLoadWatcher(&rescanIfLoaded);
  }
} install;

}  // namespace

}  // namespace gtap::hal
