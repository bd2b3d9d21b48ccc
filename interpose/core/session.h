// One capture session per process: created on the first recorded call, owns
// the output file, the thread registry, the block pool and the writer thread.
// A forked child starts its own session (its own file) on its first call.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config.h"
#include "thread_state.h"

// Declared hidden, as everything of libgtap.so is: a wrapper then reads these
// globals directly, not through the GOT.
#pragma GCC visibility push(hidden)
namespace gtap::core {

// Guard bits: while a bit is set on a thread, calls of that front end on that
// thread are not recorded (the runtime calling itself, or gtap's own work).
enum GuardBits : uint8_t {
  kGuardZe = 1,
  kGuardHsa = 2,
  kGuardHal = 4,
  kGuardGtap = 0x80,
};

extern __thread ThreadState* t_state __attribute__((tls_model("initial-exec")));
extern __thread uint8_t t_guard __attribute__((tls_model("initial-exec")));
// Bumped when every thread must re-check its state (fork child, session end,
// recording stopped).
extern std::atomic<uint32_t> g_generation;

// The slow path of enterCall: starts the session or registers the thread.
ThreadState* enterSlow();

// The calling thread's state when its call is to be recorded, for a caller
// that has checked the guard bits itself.
inline ThreadState* enterUnguarded() {
  ThreadState* t = t_state;
  if (__builtin_expect(t != nullptr && t->generation == g_generation.load(std::memory_order_relaxed), 1))
    return t;
  return enterSlow();
}

// Returns the calling thread's state when this call is to be recorded.
inline ThreadState* enterCall(uint8_t guardBit) {
  if (t_guard & (guardBit | kGuardGtap)) return nullptr;
  return enterUnguarded();
}

const Config& config();

// What the configured mode asks for besides API calls: device work, memory
// operations, CPU stacks (GTAP_MODE kernels, memory, stacks).
bool recordKernels();
bool recordMemory();
bool recordStacks();
bool recordSamples();  // instruction sampling (mode samples, which brings kernels)

// Whether API call records are wanted (GTAP_MODE has "api").
extern bool g_recordApi;

// Called at exit points; see exit_hooks.cpp.
void runExitWork();                                // front ends' exit work, on the exiting thread
void beginExit();                                  // exit began here: other threads pass through from now
void flushSession();                               // write what is buffered now
// Asks the writer to write now without waiting for it; false when no writer
// is recording (none yet, stopped, or finished), so nothing is worth waiting for.
bool wakeWriter();
void finishSession(const char* reason);            // flush, write trailer, close
bool flushSessionFromSignal(int timeoutMs);        // async-signal-safe request + bounded wait
void finishSessionFromSignal(int sig, int timeoutMs);

// Exec (exec_hooks.cpp): before the real exec, the writer writes everything
// and the trailer and waits; true when this call made it wait, and then
// resumeSessionAfterExec must follow when the exec returns (it failed).
bool suspendSessionForExec();
void resumeSessionAfterExec();
// True in a process gtap's fork handlers did not see made (a vfork child, a
// clone): it shares or copied the parent's state and must touch none of it.
bool inVforkOrCloneChild();

// After an internal error (internal_error.h): says so once and makes every
// thread pass through from its next call. The writer goes on writing what
// was recorded before; the file is closed at exit as usual.
void stopSessionAfterInternalError(const char* where, const char* what);

// Used by the fork handlers.
void prepareFork();
void afterForkParent();
void afterForkChild();

}  // namespace gtap::core
#pragma GCC visibility pop
