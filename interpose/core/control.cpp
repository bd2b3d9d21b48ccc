// Functions a program may call on libgtap.so (include/gtap/gtap.h finds them
// with dlsym, so the program runs unchanged without gtap).
#include <string>

#include "replay_stream.h"
#include "chunk_producer.h"
#include "session.h"

namespace {
void scope(bool begin, const char* name) {
  if (!name || !gtap::core::replay::enabled()) return;
  uint32_t thread = gtap::core::currentThreadId();
  if (thread == ~0u) return;  // no session records (GTAP_ENABLE=0, or recording stopped)
  gtap::core::replay::scopeMarker(begin, name, thread);
}
}  // namespace

extern "C" {

__attribute__((visibility("default"))) void gtap_scope_begin(const char* name) { scope(true, name); }

__attribute__((visibility("default"))) void gtap_scope_end(const char* name) { scope(false, name); }

// Writes what is buffered now and returns when it is in the file (or after at
// most 5 s). Benchmarks call it between timed regions.
__attribute__((visibility("default"))) void gtap_flush(void) { gtap::core::flushSession(); }

}  // extern "C"
