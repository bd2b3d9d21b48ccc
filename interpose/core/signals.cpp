// Signals that end the process, and the program's view of its dispositions.
//
// Every signal whose default action ends the process (faults, termination
// signals, SIGUSR1/2, SIGPIPE, timers, real-time signals, ...) is "watched",
// except the one borrowed for scopes and those the program ignores. For a
// watched signal the kernel holds:
//   - the program's disposition is the default: gtap's closing handler, which
//     closes the capture and then lets the default action happen (a real fault
//     re-executes; a sent signal is raised again with the default restored);
//   - the program's own handler: that handler itself, so gtap costs nothing
//     per signal and the kernel applies the program's mask and flags; only a
//     handler with SA_RESETHAND goes through a gtap trampoline that does the
//     reset itself (so the next delivery still closes the capture);
//   - SIG_IGN: SIG_IGN.
// sigaction, signal, bsd_signal, sysv_signal, siginterrupt and sigset are
// interposed so the program always reads back its own dispositions, never
// gtap's handlers. Before the first session no gtap handler is installed and
// these calls go straight to the C library.
#include "signals.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "config.h"
#include "dlsym_hook.h"
#include "session.h"

extern "C" int __sigaction(int sig, const struct sigaction* act, struct sigaction* old);

namespace gtap::core {

namespace {

constexpr int kSignalSlots = 65;  // 1..64 on Linux
// The kernel's flag for the return trampoline the C library sets on every
// action; a disposition read back without gtap carries it.
constexpr int kRestorerFlag = 0x04000000;

std::atomic<bool> g_armed{false};
bool g_watched[kSignalSlots];              // fixed when armed
struct sigaction g_program[kSignalSlots];  // the program's disposition of a watched signal
sigset_t g_interruptible;                  // siginterrupt(sig, 1): signal() without SA_RESTART
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;

// Dispositions change under this lock, with every signal blocked on the
// holding thread (so a handler on that thread can never wait for it).
class DispositionLock {
 public:
  DispositionLock() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved_);
    while (g_lock.test_and_set(std::memory_order_acquire)) {
      timespec ts{0, 10000};
      nanosleep(&ts, nullptr);
    }
  }
  ~DispositionLock() {
    g_lock.clear(std::memory_order_release);
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  DispositionLock(const DispositionLock&) = delete;
  DispositionLock& operator=(const DispositionLock&) = delete;

 private:
  sigset_t saved_;
};

bool isFault(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE; }

bool defaultEndsProcess(int sig) {
  switch (sig) {
    case SIGKILL:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
      return false;
    default:
      // 32 and 33 belong to the C library's threads, below SIGRTMIN.
      return sig >= 1 && sig < kSignalSlots && (sig < 32 || (sig >= SIGRTMIN && sig <= SIGRTMAX));
  }
}

bool isHandler(const struct sigaction& a) { return a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN; }

void endingSignal(int sig, siginfo_t* info, void* context);
void resetHandSignal(int sig, siginfo_t* info, void* context);

bool isOurs(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) && (a.sa_sigaction == &endingSignal || a.sa_sigaction == &resetHandSignal);
}

// What the kernel holds for a watched signal whose program disposition is `p`.
struct sigaction kernelActionFor(const struct sigaction& p) {
  struct sigaction k = p;
  if (p.sa_handler == SIG_DFL) {
    k = {};
    k.sa_sigaction = &endingSignal;
    sigfillset(&k.sa_mask);
    k.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  } else if (isHandler(p) && (p.sa_flags & SA_RESETHAND)) {
    k.sa_sigaction = &resetHandSignal;
    k.sa_flags = (p.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
  }
  return k;
}

// Locked. Sets the program's disposition and what the kernel holds for it.
int setLocked(int sig, const struct sigaction& p) {
  struct sigaction k = kernelActionFor(p);
  if (__sigaction(sig, &k, nullptr) != 0) return -1;
  g_program[sig] = p;
  if (isOurs(k)) {
    // Read back as the C library would have stored the program's own action.
    struct sigaction back {};
    __sigaction(sig, nullptr, &back);
    g_program[sig].sa_flags |= back.sa_flags & kRestorerFlag;
    g_program[sig].sa_restorer = back.sa_restorer;
  }
  return 0;
}

// Locked. The program's disposition of a watched signal. The kernel is the
// truth unless it holds a gtap handler: an action set without the C library's
// sigaction (a raw system call) is adopted, and a default one gets gtap's
// closing handler back.
struct sigaction viewLocked(int sig) {
  struct sigaction k {};
  __sigaction(sig, nullptr, &k);
  if (isOurs(k)) return g_program[sig];
  g_program[sig] = k;
  if (k.sa_handler == SIG_DFL || (k.sa_flags & SA_RESETHAND)) setLocked(sig, k);
  return k;
}

bool watched(int sig) {
  return g_armed.load(std::memory_order_acquire) && sig > 0 && sig < kSignalSlots && g_watched[sig];
}

// The program's disposition is the default: close the capture, then let the
// default action happen exactly as without gtap.
void endingSignal(int sig, siginfo_t* info, void*) {
  int savedErrno = errno;
  finishSessionFromSignal(sig, 3000);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  __sigaction(sig, &dfl, nullptr);
  // A fault the kernel raised (si_code > 0) comes back when the instruction
  // runs again; a sent one (raise, kill, tgkill, sigqueue: si_code <= 0) is
  // sent again, and delivered once this handler returns and unblocks it.
  bool hardwareFault = isFault(sig) && info && info->si_code > 0;
  if (!hardwareFault) ::syscall(SYS_tgkill, ::getpid(), ::syscall(SYS_gettid), sig);
  errno = savedErrno;
}

// The program's handler with SA_RESETHAND: the reset is done here, to the
// program's default (gtap's closing handler), then its handler runs.
void resetHandSignal(int sig, siginfo_t* info, void* context) {
  struct sigaction handler;
  {
    DispositionLock lock;
    handler = g_program[sig];
    struct sigaction reset = handler;
    reset.sa_handler = SIG_DFL;
    reset.sa_flags &= ~SA_RESETHAND;
    setLocked(sig, reset);
  }
  if (!isHandler(handler))
    endingSignal(sig, info, context);
  else if (handler.sa_flags & SA_SIGINFO)
    handler.sa_sigaction(sig, info, context);
  else
    handler.sa_handler(sig);
}

int programSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  // A vfork child shares the parent's memory but not its dispositions: what
  // it sets (often the defaults, before exec) is its own and must not become
  // the parent's view.
  if (!watched(sig) || inVforkOrCloneChild()) return __sigaction(sig, act, old);
  DispositionLock lock;
  struct sigaction before = viewLocked(sig);
  if (act && setLocked(sig, *act) != 0) return -1;
  if (old) *old = before;
  return 0;
}

using SighandlerFn = void (*)(int);

}  // namespace

int realSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  return __sigaction(sig, act, old);
}

void armSignals() {
  if (g_armed.load()) return;
  int scopeSignal = config().scopeSignal, toggleSignal = config().toggleSignal;
  DispositionLock lock;
  for (int sig = 1; sig < kSignalSlots; ++sig) {
    if (!defaultEndsProcess(sig) || sig == scopeSignal || sig == toggleSignal) continue;
    struct sigaction current {};
    if (__sigaction(sig, nullptr, &current) != 0) continue;
    g_program[sig] = current;
    g_watched[sig] = true;
    if (!isHandler(current) && current.sa_handler == SIG_IGN) continue;  // stays ignored, untouched
    if (current.sa_handler == SIG_DFL || (current.sa_flags & SA_RESETHAND)) setLocked(sig, current);
  }
  g_armed.store(true, std::memory_order_release);
}

}  // namespace gtap::core

using gtap::core::programSigaction;

extern "C" __attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act,
                                                                 struct sigaction* old) {
  return programSigaction(sig, act, old);
}

namespace {

// signal() with BSD semantics, as the C library gives it: the handler stays,
// the signal is blocked while it runs, and calls restart unless siginterrupt
// said otherwise.
gtap::core::SighandlerFn bsdSignal(int sig, gtap::core::SighandlerFn handler) {
  if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
    errno = EINVAL;
    return SIG_ERR;
  }
  struct sigaction act {}, old {};
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, sig);
  act.sa_flags = sigismember(&gtap::core::g_interruptible, sig) ? 0 : SA_RESTART;
  if (programSigaction(sig, &act, &old) < 0) return SIG_ERR;
  return old.sa_handler;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) gtap::core::SighandlerFn signal(int sig,
                                                                                  gtap::core::SighandlerFn h) {
  return bsdSignal(sig, h);
}

extern "C" __attribute__((visibility("default"))) gtap::core::SighandlerFn bsd_signal(int sig,
                                                                                      gtap::core::SighandlerFn h) {
  return bsdSignal(sig, h);
}

// System V semantics: one delivery, then back to the default; not blocked
// while it runs.
extern "C" __attribute__((visibility("default"))) gtap::core::SighandlerFn sysv_signal(int sig,
                                                                                       gtap::core::SighandlerFn h) {
  if (h == SIG_ERR || sig < 1 || sig >= NSIG) {
    errno = EINVAL;
    return SIG_ERR;
  }
  struct sigaction act {}, old {};
  act.sa_handler = h;
  sigemptyset(&act.sa_mask);
  act.sa_flags = SA_RESETHAND | SA_NODEFER;
  if (programSigaction(sig, &act, &old) < 0) return SIG_ERR;
  return old.sa_handler;
}

extern "C" __attribute__((visibility("default"))) int siginterrupt(int sig, int flag) {
  if (sig < 1 || sig >= NSIG) {
    errno = EINVAL;
    return -1;
  }
  struct sigaction act {};
  if (programSigaction(sig, nullptr, &act) < 0) return -1;
  if (flag) {
    sigaddset(&gtap::core::g_interruptible, sig);
    act.sa_flags &= ~SA_RESTART;
  } else {
    sigdelset(&gtap::core::g_interruptible, sig);
    act.sa_flags |= SA_RESTART;
  }
  return programSigaction(sig, &act, nullptr);
}

// sigset's hold and release go through the C library's own; the disposition
// it leaves is then taken as the program's (and a default one gets gtap's
// closing handler back), and the old disposition it reports is the program's.
extern "C" __attribute__((visibility("default"))) gtap::core::SighandlerFn sigset(int sig,
                                                                                  gtap::core::SighandlerFn h) {
  using namespace gtap::core;
  static auto real = reinterpret_cast<SighandlerFn (*)(int, SighandlerFn)>(realDlsym(RTLD_NEXT, "sigset"));
  if (!real) {
    errno = ENOSYS;
    return SIG_ERR;
  }
  if (!watched(sig)) return real(sig, h);
  // Not locked around the C library's call: it changes the signal mask.
  struct sigaction before;
  {
    DispositionLock lock;
    before = viewLocked(sig);
  }
  SighandlerFn result = real(sig, h);
  void* got = reinterpret_cast<void*>(result);
  if (got == reinterpret_cast<void*>(&endingSignal) || got == reinterpret_cast<void*>(&resetHandSignal))
    result = before.sa_handler;
  DispositionLock lock;
  viewLocked(sig);
  return result;
}
