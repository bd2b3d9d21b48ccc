#include "exit_hooks.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>

#include "dlsym_hook.h"
#include "session.h"

namespace gtap::core {

namespace {

pthread_key_t g_threadKey;

// Signals whose default action ends the process. For each, gtap flushes (and
// on a default action, closes) the capture first, then lets the program's own
// handler or the default action happen exactly as without gtap.
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS,
                                 SIGTERM, SIGINT,  SIGHUP, SIGQUIT, SIGXCPU, SIGXFSZ};
struct sigaction g_previous[65];
bool g_installed[65];

bool isFault(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE; }

void onFatalSignal(int sig, siginfo_t* info, void* context) {
  int savedErrno = errno;
  const struct sigaction& prev = g_previous[sig];
  bool programHandler = (prev.sa_flags & SA_SIGINFO) ? prev.sa_sigaction != nullptr
                                                     : (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN);
  if (programHandler) {
    // The program may handle faults deliberately (and continue); flushing on
    // every fault would cost it dearly, so only other signals flush here.
    if (!isFault(sig)) flushSessionFromSignal(2000);
    errno = savedErrno;
    if (prev.sa_flags & SA_SIGINFO)
      prev.sa_sigaction(sig, info, context);
    else
      prev.sa_handler(sig);
    return;
  }
  finishSessionFromSignal(sig, 3000);
  // Back to the default action: a fault re-executes and ends the process; an
  // asynchronous signal is raised again and delivered when this handler returns.
  sigaction(sig, &prev, nullptr);
  if (!isFault(sig)) raise(sig);
  errno = savedErrno;
}

void installSignalHandlers() {
  for (int sig : kFatalSignals) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
    struct sigaction ours {};
    ours.sa_sigaction = onFatalSignal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    g_previous[sig] = current;
    if (sigaction(sig, &ours, nullptr) == 0) g_installed[sig] = true;
  }
}

void flushAtExit() {
  runExitWork();
  flushSession();
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
__attribute__((destructor(101))) void gtapUnload() { finishSession("exit"); }

}  // namespace

void installExitHooks() {
  if (g_exitHooksInstalled) return;  // inherited by a forked child, as are the hooks
  g_exitHooksInstalled = true;
  std::atexit(&flushAtExit);
  installSignalHandlers();
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
