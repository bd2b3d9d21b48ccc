#include "dispatch_thunks.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "clock.h"
#include "internal_error.h"
#include "session.h"

extern "C" {
// dispatch_thunks_x86_64.S: kDispatchThunks thunks, kThunkBytes each.
extern const char gtap_hal_dispatch_thunks[];
extern const char gtap_hal_dispatch_thunks_end[];
}

namespace gtap::hal {

namespace {

constexpr uint64_t kDispatchThunks = 8192;  // as many as the .S assembles
constexpr uint64_t kThunkBytes = 16;
constexpr uint64_t kMaxNameBytes = 256;

using DispatchFn = int (*)(const void* environment, const void* dispatchState, const void* workgroupState);

// What thunk i stands in for.
struct Target {
  DispatchFn original;
  uint64_t executable;
  uint64_t ordinal;
};

// Slots are handed out once and never reused. Whether anything can still
// call a thunk after its executable's destroy (a command buffer recorded with
// it, a worker finishing a workgroup) is not something gtap can know, and a
// reused slot would run another export's function in its place; the pool
// bounds what that costs. An entry is written before the executable is
// handed its table and never changes after, so a thunk reads it unlocked.
Target g_targets[kDispatchThunks];
// The tables handed out: an executable's dispatch_ptrs points at its run of these.
const void* g_tables[kDispatchThunks];
std::mutex g_mutex;
uint64_t g_used = 0;  // under g_mutex

uint64_t load64(uint64_t address) {
  uint64_t v;
  std::memcpy(&v, reinterpret_cast<const void*>(address), sizeof v);
  return v;
}

std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}

// The process's mappings, from /proc/self/maps, to check addresses against
// before reading through them.
class Mappings {
 public:
  bool read() {
    FILE* f = std::fopen("/proc/self/maps", "re");
    if (!f) return false;
    char line[512];
    bool midLine = false;  // the rest of a line longer than the buffer (a long path)
    while (std::fgets(line, sizeof line, f)) {
      bool whole = std::strchr(line, '\n') != nullptr;
      if (!midLine) {
        unsigned long start = 0, end = 0;
        char perms[5] = {};
        if (std::sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3)
          ranges_.push_back({start, end, perms[0] == 'r', perms[2] == 'x'});
      }
      midLine = !whole;
    }
    std::fclose(f);
    std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.start < b.start; });
    return !ranges_.empty();
  }

  // [address, address + size) lies in readable mappings with no gap.
  bool readable(uint64_t address, uint64_t size) const {
    if (address + size < address) return false;
    uint64_t at = address, end = address + size;
    while (at < end) {
      const Range* r = find(at);
      if (!r || !r->read) return false;
      at = r->end;
    }
    return true;
  }

  bool executable(uint64_t address) const {
    const Range* r = find(address);
    return r && r->exec;
  }

  // The length of the NUL-terminated string at `address`, or -1 when it is
  // not readable or not terminated within `limit` bytes.
  int64_t stringLength(uint64_t address, uint64_t limit) const {
    const Range* r = find(address);
    if (!r || !r->read) return -1;
    uint64_t room = std::min<uint64_t>(r->end - address, limit + 1);
    auto* s = reinterpret_cast<const char*>(address);
    const void* nul = std::memchr(s, 0, room);
    return nul ? static_cast<const char*>(nul) - s : -1;
  }

 private:
  struct Range {
    uint64_t start, end;
    bool read, exec;
  };
  const Range* find(uint64_t address) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                               [](uint64_t a, const Range& r) { return a < r.start; });
    if (it == ranges_.begin()) return nullptr;
    --it;
    return address < it->end ? &*it : nullptr;
  }
  std::vector<Range> ranges_;
};

const void* thunk(uint64_t index) { return gtap_hal_dispatch_thunks + index * kThunkBytes; }

bool ownTable(uint64_t table) {
  auto first = reinterpret_cast<uint64_t>(&g_tables[0]);
  return table >= first && table < first + sizeof g_tables;
}

}  // namespace

uint64_t dispatchThunkCapacity() { return kDispatchThunks; }

ThunkOutcome installDispatchThunks(void* executable, const LocalExecutableLayout& layout, uint64_t functionCount,
                                   const std::vector<std::string>& names, std::string& why) {
  if (!executable || !layout.known()) return ThunkOutcome::notNeeded;
  if (static_cast<uint64_t>(gtap_hal_dispatch_thunks_end - gtap_hal_dispatch_thunks) !=
      kDispatchThunks * kThunkBytes) {
    why = "gtap's thunks are not laid out as it expects";
    return ThunkOutcome::refused;
  }
  Mappings maps;
  if (!maps.read()) {
    why = "/proc/self/maps could not be read";
    return ThunkOutcome::refused;
  }
  const auto object = reinterpret_cast<uint64_t>(executable);
  const size_t membersEnd = std::max({layout.dispatchPtrs, layout.exportCount, layout.exportNames}) + 8;
  if (!maps.readable(object, membersEnd)) {
    why = "the executable object (" + hex(object) + ") is not readable memory up to byte " +
          std::to_string(membersEnd);
    return ThunkOutcome::refused;
  }
  const uint64_t field = object + layout.dispatchPtrs;
  if (field % 8 != 0) {
    why = "its dispatch_ptrs member (" + hex(field) + ") is not aligned";
    return ThunkOutcome::refused;
  }
  const uint64_t table = load64(field);
  // No table: the driver runs the workgroups through issue_call, recorded there.
  if (table == 0 || ownTable(table)) return ThunkOutcome::notNeeded;
  const uint64_t count = load64(object + layout.exportCount);
  if (count != functionCount) {
    why = "its export_count (byte " + std::to_string(layout.exportCount) + ") reads " + std::to_string(count) +
          " where its function_count says " + std::to_string(functionCount);
    return ThunkOutcome::refused;
  }
  if (count == 0) return ThunkOutcome::notNeeded;
  if (count > kDispatchThunks) {
    why = "it has " + std::to_string(count) + " exports, more than gtap's " + std::to_string(kDispatchThunks) +
          " thunks";
    return ThunkOutcome::refused;
  }
  if (table % 8 != 0 || !maps.readable(table, 8 * count)) {
    why = "its dispatch_ptrs (" + hex(table) + ") is not readable memory for " + std::to_string(count) +
          " function pointers";
    return ThunkOutcome::refused;
  }
  std::vector<DispatchFn> functions(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t fn = load64(table + 8 * i);
    if (fn == 0 || !maps.executable(fn)) {
      why = "its dispatch_ptrs[" + std::to_string(i) + "] (" + hex(fn) + ") is not in executable memory";
      return ThunkOutcome::refused;
    }
    functions[i] = reinterpret_cast<DispatchFn>(fn);
  }
  if (const uint64_t exportNames = load64(object + layout.exportNames)) {
    if (exportNames % 8 != 0 || !maps.readable(exportNames, 8 * count)) {
      why = "its export_names (" + hex(exportNames) + ") is not readable memory for " + std::to_string(count) +
            " names";
      return ThunkOutcome::refused;
    }
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t name = load64(exportNames + 8 * i);
      if (name == 0) continue;  // IREE allows an export without a name
      int64_t length = maps.stringLength(name, kMaxNameBytes);
      std::string given = i < names.size() ? names[i] : std::string();
      if (length < 0 || given != std::string(reinterpret_cast<const char*>(name), static_cast<size_t>(length))) {
        why = "its export_names[" + std::to_string(i) + "] is not the name function_info gives (\"" + given + "\")";
        return ThunkOutcome::refused;
      }
    }
  }
  uint64_t base = 0;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_used + count > kDispatchThunks) return ThunkOutcome::exhausted;
    base = g_used;
    g_used += count;
    for (uint64_t i = 0; i < count; ++i) {
      g_targets[base + i] = {functions[i], object, i};
      g_tables[base + i] = thunk(base + i);
    }
  }
  // The executable object's own member (heap memory), one aligned store,
  // and only if it still holds what was checked.
  uint64_t expected = table;
  auto replacement = reinterpret_cast<uint64_t>(&g_tables[base]);
  if (!__atomic_compare_exchange_n(reinterpret_cast<uint64_t*>(field), &expected, replacement, false,
                                   __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    why = "its dispatch_ptrs changed while gtap checked it";
    return ThunkOutcome::refused;
  }
  return ThunkOutcome::installed;
}

}  // namespace gtap::hal

// Thunk `index` was called by the driver with the export's three arguments:
// one workgroup, counted around the original function, which runs whatever
// gtap's state (recording off, this thread unknown to the session).
extern "C" __attribute__((visibility("hidden"))) int gtap_hal_dispatch_thunk(uint32_t index, const void* environment,
                                                                            const void* dispatchState,
                                                                            const void* workgroupState) {
  using namespace gtap;
  const hal::Target& target = hal::g_targets[index];
  core::ThreadState* thread = core::recordKernels() ? core::enterCall(0) : nullptr;
  if (!thread) return target.original(environment, dispatchState, workgroupState);
  uint8_t saved = core::t_guard;
  core::t_guard |= core::kGuardGtap;  // gtap's own work: whatever it calls is not the program's
  hal::HostWorkgroup workgroup;
  bool counted = false;
  // On the driver's worker thread, which called a plain function pointer:
  // the workgroup runs, and returns its result, whatever gtap fails at.
  try {
    core::testThrowPoint(core::TestSite::halThunk);
    counted = hal::hostWorkgroupStart(target.executable, target.ordinal, dispatchState, thread->id,
                                      core::nowTicks(), workgroup);
  } GTAP_CATCH_INTERNAL {
    core::stopAfterInternalError("an IREE HAL dispatch thunk");
  }
  core::t_guard = saved;
  int result = target.original(environment, dispatchState, workgroupState);
  if (counted) {
    core::t_guard |= core::kGuardGtap;
    try {
      hal::hostWorkgroupEnd(workgroup);
    } GTAP_CATCH_INTERNAL {
      core::stopAfterInternalError("an IREE HAL dispatch thunk");
    }
    core::t_guard = saved;
  }
  return result;
}
