// Instruction sampling of launches (see sampling.h and tests/sim/README.md).
//
// Each thread that runs a sampled launch gets, once, a POSIX timer on its own
// CPU time (CLOCK_THREAD_CPUTIME_ID) that sends SIGRTMAX - 2 to that thread
// only (SIGEV_THREAD_ID), carrying the address of the thread's state as its
// value. The timer is armed with the streamer's period when a launch starts
// and disarmed when it ends. The handler runs in the interrupted kernel's
// thread and must be async-signal-safe: it allocates nothing and takes no
// lock; it reads thread-local state through the initial-exec model (a plain
// load, never the dynamic TLS path that may allocate), and writes the report
// into the streamer's lock-free ring.
#include "sampling.h"

#include "clock.h"
#include "metrics.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace sim::sampling {

struct ThreadState {
  ~ThreadState();
  timer_t timer{};
  bool hasTimer = false;
  uint64_t generation = 0;  // fork generation the timer was created in
  // What the handler reads; set before the timer is armed, cleared after it
  // is disarmed, on this same thread.
  std::atomic<Device*> device{nullptr};
  std::atomic<const Module::CodeRange*> code{nullptr};
  std::atomic<size_t> codeCount{0};
};

namespace {

// The thread's state, for the handler: initial-exec TLS is a load relative
// to the thread pointer, safe in a signal handler.
__attribute__((tls_model("initial-exec"))) thread_local ThreadState* t_state = nullptr;
// Owns t_state and deletes it (and its timer) when the thread exits.
thread_local std::unique_ptr<ThreadState> t_owner;

// Fork generation: timers are not inherited by a child, so a thread's timer
// from before a fork must not be used after it.
std::atomic<uint64_t> g_generation{0};
// Signal handlers between reading a device's streamer and being done with it.
std::atomic<uint64_t> g_inHandler{0};
std::atomic<uint64_t> g_discarded{0};

// The disposition the program had before the handler was installed.
struct sigaction g_previous;
std::once_flag g_installOnce;

uintptr_t interruptedPc(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
#error "the simulated Level Zero driver needs to know where the interrupted PC is saved"
#endif
}

void storeLe(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = uint8_t(v >> (8 * i));
}

// A CPU-time timer expires on the scheduler tick, which may be longer than
// the period: the expiry then stands for 1 + overrun periods of the thread's
// running time, and writes one report for each, all at the instruction
// interrupted now (the only one known). Bounded, so the handler stays short.
constexpr int kMaxReportsPerSignal = 4096;

void sample(ThreadState& t, const siginfo_t& info, const void* context) {
  g_inHandler.fetch_add(1, std::memory_order_seq_cst);
  Device* device = t.device.load(std::memory_order_relaxed);
  MetricStreamer* s = device ? device->sampling.load(std::memory_order_seq_cst) : nullptr;
  const Module::CodeRange* code = t.code.load(std::memory_order_relaxed);
  const size_t n = t.codeCount.load(std::memory_order_relaxed);
  if (s != nullptr && code != nullptr) {
    const uintptr_t pc = interruptedPc(context);
    bool inside = false;
    for (size_t i = 0; i < n && !inside; ++i) inside = pc >= code[i].begin && pc < code[i].end;
    if (inside) {
      uint8_t r[report::kSize] = {};
      storeLe(r + report::kIp, pc, 8);
      storeLe(r + report::kCounts, 1, 2);  // Active; the device knows no stall reasons
      storeLe(r + report::kSubslice, 0, 2);
      storeLe(r + report::kFlags, report::kValid, 4);
      storeLe(r + report::kTimestamp, clock::ticksAtStarted(clock::hostNs()), 8);
      const int periods = 1 + std::clamp(info.si_overrun, 0, kMaxReportsPerSignal - 1);
      for (int i = 0; i < periods; ++i) {
        if (!s->ring.push(r)) {
          s->dropped.store(true, std::memory_order_relaxed);
          break;
        }
      }
    } else {
      g_discarded.fetch_add(1, std::memory_order_relaxed);
    }
  }
  g_inHandler.fetch_sub(1, std::memory_order_seq_cst);
}

// A signal of our number that is not a sampling timer's goes where it would
// have gone without the driver: the program's handler (with its mask), SIG_IGN,
// or the default action (which ends the process for a real-time signal).
void forward(int sig, siginfo_t* info, void* context) {
  const struct sigaction& p = g_previous;
  if (p.sa_flags & SA_SIGINFO) {
    if (p.sa_sigaction == nullptr) return;
    sigset_t saved;
    pthread_sigmask(SIG_BLOCK, &p.sa_mask, &saved);
    p.sa_sigaction(sig, info, context);
    pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    return;
  }
  if (p.sa_handler == SIG_IGN) return;
  if (p.sa_handler == SIG_DFL) {
    // Restore the default and send the signal again: it is delivered (and
    // takes its default action) as soon as this handler returns.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig);
    return;
  }
  sigset_t saved;
  pthread_sigmask(SIG_BLOCK, &p.sa_mask, &saved);
  p.sa_handler(sig);
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

void onSignal(int sig, siginfo_t* info, void* context) {
  const int savedErrno = errno;
  ThreadState* t = t_state;
  if (info != nullptr && info->si_code == SI_TIMER && t != nullptr && info->si_value.sival_ptr == t) {
    sample(*t, *info, context);
  } else {
    forward(sig, info, context);
  }
  errno = savedErrno;
}

// Whether the handler is still the signal's disposition: a program that
// installs its own handler later takes the signal over, and then no launch is
// sampled (the program must never see a sampling timer's signal).
bool handlerInstalled() {
  struct sigaction current {};
  if (sigaction(signalNumber(), nullptr, &current) != 0) return false;
  return (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == &onSignal;
}

// A thread that blocks the signal (a program thread running launches inline,
// or a worker that inherited the program's mask) is not sampled: its
// signals would wait until the program unblocks them.
bool blockedHere() {
  sigset_t mask;
  sigemptyset(&mask);
  if (pthread_sigmask(SIG_BLOCK, nullptr, &mask) != 0) return true;
  return sigismember(&mask, signalNumber()) == 1;
}

ThreadState* threadState() {
  ThreadState* t = t_state;
  if (t == nullptr) {
    t_owner = std::make_unique<ThreadState>();
    t = t_owner.get();
    t_state = t;
  }
  const uint64_t generation = g_generation.load(std::memory_order_acquire);
  if (!t->hasTimer || t->generation != generation) {
    sigevent sev{};
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signalNumber();
    sev.sigev_value.sival_ptr = t;
    sev._sigev_un._tid = static_cast<pid_t>(gettid());
    t->hasTimer = false;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer) != 0) return nullptr;
    t->hasTimer = true;
    t->generation = generation;
  }
  return t;
}

}  // namespace

ThreadState::~ThreadState() {
  t_state = nullptr;
  if (hasTimer && generation == g_generation.load(std::memory_order_acquire)) timer_delete(timer);
}

int signalNumber() { return SIGRTMAX - 2; }

void installHandler() {
  std::call_once(g_installOnce, [] {
    const int sig = signalNumber();
    // The previous disposition is recorded before the handler can run.
    struct sigaction previous {};
    sigaction(sig, nullptr, &previous);
    g_previous = previous;
    struct sigaction ours {};
    ours.sa_sigaction = &onSignal;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(sig, &ours, nullptr);
  });
}

void waitForHandlers() {
  // A handler that read the streamer before it was unpublished has
  // incremented the count before that read (both sequentially consistent).
  while (g_inHandler.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
}

LaunchScope::LaunchScope(const Module& module) {
  Device* device = theDevice();
  if (device == nullptr || device->sampling.load(std::memory_order_acquire) == nullptr) return;
  const uint32_t period = device->samplingPeriodNs.load(std::memory_order_acquire);
  if (period == 0 || !handlerInstalled() || blockedHere()) return;
  ThreadState* t = nullptr;
  try {
    t = threadState();
  } catch (...) {
    return;  // no memory for the thread's state: this launch is not sampled
  }
  if (t == nullptr) return;
  t->device.store(device, std::memory_order_relaxed);
  t->codeCount.store(module.code.size(), std::memory_order_relaxed);
  t->code.store(module.code.data(), std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  itimerspec spec{};
  spec.it_value.tv_sec = time_t(period / 1'000'000'000u);
  spec.it_value.tv_nsec = long(period % 1'000'000'000u);
  spec.it_interval = spec.it_value;
  if (timer_settime(t->timer, 0, &spec, nullptr) != 0) {
    t->code.store(nullptr, std::memory_order_relaxed);
    return;
  }
  thread_ = t;
  device_ = device;
}

LaunchScope::~LaunchScope() {
  if (thread_ == nullptr) return;
  itimerspec off{};
  timer_settime(thread_->timer, 0, &off, nullptr);
  // A signal generated before the disarm was delivered when the call
  // returned; later ones find no code range.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  thread_->code.store(nullptr, std::memory_order_relaxed);
  thread_->codeCount.store(0, std::memory_order_relaxed);
  try {
    notifyReports(*device_);
  } catch (...) {
    // A notification that cannot be made (no memory for a lock) is skipped.
  }
}

uint64_t discardedSamples() { return g_discarded.load(std::memory_order_relaxed); }

void forkChild() {
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  g_inHandler.store(0, std::memory_order_relaxed);
  if (Device* device = theDevice()) {
    device->sampling.store(nullptr, std::memory_order_relaxed);
    device->samplingPeriodNs.store(0, std::memory_order_relaxed);
    // The parent's streamer stays alive and unused (like its other objects).
    static auto* graveyard = new std::vector<std::shared_ptr<MetricStreamer>>;
    if (device->streamer) graveyard->push_back(std::move(device->streamer));
    device->streamer.reset();
  }
}

}  // namespace sim::sampling
