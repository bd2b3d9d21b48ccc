#include "exit_hooks.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>

#include "dlsym_hook.h"
#include "internal_error.h"
#include "session.h"
#include "signals.h"

namespace gtap::core {

namespace {

pthread_key_t g_threadKey;

// An atexit handler and a destructor: an exception leaving either would end
// the program with std::terminate.
void flushAtExit() {
  try {
    beginExit();
    runExitWork();
    flushSession();
  } GTAP_CATCH_INTERNAL {
    stopAfterInternalError("the work gtap does at exit");
  }
}

void onThreadExit(void* state) { markThreadExited(static_cast<ThreadState*>(state)); }

bool g_exitHooksInstalled = false;

using ExitFn = void (*)(int);
// Looked up at load: a vfork child that calls _exit must look nothing up.
ExitFn g_realUnderscoreExit = nullptr;
ExitFn g_realUnderscoreCapitalExit = nullptr;

__attribute__((constructor(101))) void gtapLoad() {
  g_realUnderscoreExit = reinterpret_cast<ExitFn>(realDlsym(RTLD_NEXT, "_exit"));
  g_realUnderscoreCapitalExit = reinterpret_cast<ExitFn>(realDlsym(RTLD_NEXT, "_Exit"));
  initSessionGlobals();
  pthread_key_create(&g_threadKey, &onThreadExit);
  pthread_atfork(&prepareFork, &afterForkParent, &afterForkChild);
}

// Runs after the program's own static destructors (libgtap is initialised
// before the program), so calls they make are still recorded.
__attribute__((destructor(101))) void gtapUnload() {
  try {
    finishSession("exit");
  } GTAP_CATCH_INTERNAL {
    stopAfterInternalError("closing the capture at exit");
  }
}

}  // namespace

void installExitHooks() {
  if (g_exitHooksInstalled) return;  // inherited by a forked child, as are the hooks
  g_exitHooksInstalled = true;
  std::atexit(&flushAtExit);
  armSignals();
}

void registerThreadExit(ThreadState* t) { pthread_setspecific(g_threadKey, t); }

}  // namespace gtap::core

// _exit and _Exit end the process without atexit handlers or destructors (a
// forked child often leaves this way): the capture is closed first, with the
// same bounded, signal-safe wait as for a fatal signal, since these may be
// called from a signal handler. A vfork child's _exit (after a failed exec)
// closes nothing: the session it sees is its parent's (session.cpp).
extern "C" __attribute__((visibility("default"), noreturn)) void _exit(int status) {
  gtap::core::finishSessionFromSignal(0, 3000);
  if (auto real = gtap::core::g_realUnderscoreExit) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

extern "C" __attribute__((visibility("default"), noreturn)) void _Exit(int status) {
  gtap::core::finishSessionFromSignal(0, 3000);
  if (auto real = gtap::core::g_realUnderscoreCapitalExit) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
