// Functions a program may call on libgtap.so (include/gtap/gtap.h finds them
// with dlsym, so the program runs unchanged without gtap).
#include <signal.h>

#include <string>

#include "clock.h"
#include "config.h"
#include "phases.h"
#include "replay_stream.h"
#include "signals.h"
#include "chunk_producer.h"
#include "session.h"

namespace gtap::core::phases {

std::atomic<uint32_t> g_changes{0};
namespace {
std::atomic<uint64_t> g_changeTicks[kMaxChanges];
}

void setPaused(bool pause) {
  for (;;) {
    uint32_t n = g_changes.load(std::memory_order_acquire);
    if (static_cast<bool>(n & 1) == pause || n >= kMaxChanges) return;
    g_changeTicks[n].store(nowTicks(), std::memory_order_relaxed);
    if (g_changes.compare_exchange_weak(n, n + 1, std::memory_order_release)) return;
  }
}

bool droppedAt(uint64_t ticks) {
  if (!ticks) return false;
  uint32_t n = g_changes.load(std::memory_order_acquire);
  uint32_t before = 0;  // changes made at or before `ticks`
  while (before < n && g_changeTicks[before].load(std::memory_order_relaxed) <= ticks) ++before;
  return before & 1;
}

}  // namespace gtap::core::phases

namespace {
// Writes the changes so far as a phases chunk whenever there are more than
// this file has (a forked child's file gets them all again).
void producePhases(gtap::core::ChunkSink& sink, bool) {
  using namespace gtap::core::phases;
  static const gtap::core::ChunkSink* lastSink = nullptr;
  static uint32_t written = 0;
  if (&sink != lastSink) {
    lastSink = &sink;
    written = 0;
  }
  uint32_t n = g_changes.load(std::memory_order_acquire);
  if (n == written) return;
  capnp::MallocMessageBuilder m;
  auto list = m.initRoot<gtap::schema::Phases>().initChanges(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t ticks = g_changeTicks[i].load(std::memory_order_relaxed);
    list[i].setHostNs(ticks <= 1 ? 0 : sink.toHostNs(ticks));
    list[i].setPaused(!(i & 1));
  }
  if (sink.write(gtap::schema::ChunkKind::PHASES, m)) written = n;
}

void onToggleSignal(int) {
  using namespace gtap::core::phases;
  setPaused(!paused());
}

// GTAP_START_PAUSED and GTAP_TOGGLE_SIGNAL take effect at load, before the
// program's first call (and before it can send the signal, whose default
// action would end it).
struct PhaseSetup {
  PhaseSetup() {
    gtap::core::registerChunkProducer(&producePhases);
    const gtap::core::Config& c = gtap::core::config();
    if (!c.enabled) return;
    if (c.startPaused) {
      gtap::core::phases::g_changeTicks[0].store(1, std::memory_order_relaxed);
      gtap::core::phases::g_changes.store(1, std::memory_order_release);
    }
    if (c.toggleSignal) {
      struct sigaction sa {};
      sa.sa_handler = &onToggleSignal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      gtap::core::realSigaction(c.toggleSignal, &sa, nullptr);
    }
  }
} phaseSetup;

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

// Resumes / pauses the profile records (no-op when already so).
__attribute__((visibility("default"))) void gtap_start(void) { gtap::core::phases::setPaused(false); }

__attribute__((visibility("default"))) void gtap_stop(void) { gtap::core::phases::setPaused(true); }

}  // extern "C"
