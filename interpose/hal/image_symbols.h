// The symbols the IREE HAL front end needs from a loaded image: its HAL
// vtables (local objects named iree_hal_<impl>_vtable) and the HAL functions
// their slots point at. Read with libelf from the image's file, or from the
// separate debug file with the same build-id when the image is stripped.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gtap::hal {

struct VtableSymbol {
  std::string name;    // iree_hal_task_device_vtable
  uint64_t value = 0;  // link-time address (add the image's load bias)
  uint64_t size = 0;   // bytes
};

struct ImageSymbols {
  std::string symbolFile;  // the file the symbols came from (the image or its debug file)
  std::string buildId;     // hex, empty when the image has none
  std::vector<VtableSymbol> vtables;
  // link-time address -> iree_hal_* names (identical functions may share one address)
  std::unordered_multimap<uint64_t, std::string> functions;
  bool strippedWithIree = false;  // no symbol table anywhere, but the image holds IREE HAL strings
  // Link-time address of iree_async_semaphore_multi_wait (0: none): IREE's
  // host waits on semaphore lists, which call no vtable slot.
  uint64_t multiWait = 0;
};

// Debug-file directories, in order: those of GTAP_DEBUG_PATH (colon-separated),
// then /usr/lib/debug. Each is searched as DIR/.build-id/XX/REST.debug.
std::vector<std::string> debugDirectories();

// Reads `path`'s HAL symbols. `systemImage`: the image lies in a system
// library directory; its debug file is looked for only in GTAP_DEBUG_PATH
// (reading libc's debug file at every start would cost more than it finds).
// Returns false with `why` when the file cannot be read as ELF at all.
bool readImageSymbols(const std::string& path, bool systemImage, ImageSymbols& out, std::string& why);

}  // namespace gtap::hal
