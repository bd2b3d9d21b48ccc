#include "session.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <new>

#include "capnp/message.h"
#include "chunk_producer.h"
#include "clock.h"
#include "exit_hooks.h"
#include "functions.h"
#include "gtap/format/api_events.h"
#include "gtap/format/writer.h"
#include "exit_summary.h"
#include "internal_error.h"
#include "log.h"
#include "output_path.h"
#include "session_state.h"
#include "stack_table.h"

namespace gtap::core {

__thread ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;
__thread uint8_t t_guard __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<uint32_t> g_generation{1};
bool g_recordApi = true;

namespace {

// Registered from constructors, read-only once a session runs.
ExitWork g_exitWork[8];
size_t g_exitWorkCount = 0;
constexpr int kFinishTimeoutMs = 10000;

// A thread that has exited points here: its calls (from later TLS destructors)
// pass through unrecorded. Generation 0 never matches g_generation.
ThreadState g_deadThread;

Config& configStorage() {
  static Config* c = new Config(readConfig());  // never destroyed: used until the very end
  return *c;
}

int g_pid = 0;              // this process's pid, refreshed in a forked child
int g_parentSessionPid = 0; // pid whose session the child was forked from
int g_disabledPid = 0;      // pid for which starting a session failed
std::mutex g_startMutex;

uint32_t currentTid() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

// Never replaces an existing file (output_path.h): a name taken, by another
// file or by the program this process ran before an exec (same pid), gets a
// numbered alternative, and gtap says so.
std::unique_ptr<format::CaptureWriter> createOutput(std::string path, std::string& error) {
  struct stat st {};
  if (!path.empty() && (path.back() == '/' || (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))) {
    if (path.back() != '/') path += '/';
    path += "gtap-" + std::to_string(g_pid) + ".gtap";
  }
  std::string chosen;
  int fd = createOutputFile(path, chosen, error);
  if (fd < 0) return nullptr;
  if (chosen != path) logLine("%s exists; writing %s instead", path.c_str(), chosen.c_str());
  // Created here (so a bad path is known at once); written only by the
  // writer thread, preamble included.
  return std::make_unique<format::CaptureWriter>(fd, chosen);
}

void kickCurrentWriter();

}  // namespace

Session::Session(const Config& c) : cfg(c), pool(c.bufferBytes, &kickCurrentWriter) {}

void Session::kick() {
  uint64_t one = 1;
  ssize_t ignored = ::write(wakeFd, &one, sizeof one);
  (void)ignored;
}

ThreadState* Session::registerThread() {
  auto* t = new ThreadState();
  t->pool = &pool;
  t->osTid = currentTid();
  char name[64] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  t->name = name;
  // Sets head before the writer can see the state.
  if (!t->nextBlock()) {
    delete t;
    throw std::bad_alloc();
  }
  std::lock_guard<std::mutex> lock(registryMutex);
  t->id = nextThreadId++;
  threads.push_back(t);
  return t;
}

bool Session::waitFor(const std::atomic<bool>& flag, int timeoutMs) {
  for (int waited = 0; !flag.load(); waited += 1) {
    if (waited >= timeoutMs) return false;
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
  return true;
}

namespace {


std::atomic<Session*> g_session{nullptr};

void kickCurrentWriter() {
  if (Session* s = g_session.load(std::memory_order_acquire)) s->kick();
}

// A process made without gtap's fork handlers (a vfork child, which shares
// the parent's memory and runs on its stack until it execs or exits, or any
// other clone) has a pid other than g_pid: nothing of gtap's is its own, and
// it must change none of it. The kernel's pid, since nothing else can be
// trusted there.
bool pidIsNotGPid() { return static_cast<int>(::syscall(SYS_getpid)) != g_pid; }

// The session of g_pid, as the fork handlers see it (the child's pid is not
// g_pid yet in afterForkChild).
Session* sessionOfGPid() {
  Session* s = g_session.load(std::memory_order_acquire);
  return s && s->pid == g_pid ? s : nullptr;
}

Session* liveSession() {
  Session* s = sessionOfGPid();
  return s && !pidIsNotGPid() ? s : nullptr;
}

Session* startSession() {
  std::lock_guard<std::mutex> lock(g_startMutex);
  if (Session* s = liveSession()) return s;
  if (g_disabledPid == g_pid) return nullptr;
  const Config& cfg = configStorage();
  for (const auto& problem : cfg.problems) logLine("%s", problem.c_str());

  auto s = std::make_unique<Session>(cfg);
  s->pid = g_pid;
  std::string path, error;
  RankInfo rank = detectRank();
  if (!expandOutputPattern(cfg.output, g_pid, rank, std::time(nullptr), path, error)) {
    logLine("GTAP_OUTPUT='%s': %s; continuing without capture", cfg.output.c_str(), error.c_str());
    g_disabledPid = g_pid;
    return nullptr;
  }
  // The default name in a working directory this process cannot write (a
  // read-only container filesystem, a directory of another user): the file
  // goes to $TMPDIR, else /tmp, and gtap says where.
  if (!cfg.outputGiven && path.find('/') == std::string::npos && ::access(".", W_OK) != 0) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = tmp && tmp[0] == '/' && ::access(tmp, W_OK | X_OK) == 0 ? tmp : "/tmp";
    path = dir + "/" + path;
    logLine("the working directory is not writable; writing %s", path.c_str());
  }
  s->file = createOutput(path, error);
  if (!s->file) {
    logLine("cannot create capture file %s; continuing without capture", error.c_str());
    g_disabledPid = g_pid;
    return nullptr;
  }
  s->forkedFrom = g_parentSessionPid;
  summary::restart();
  s->startHostNs = monotonicNs();
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  s->startRealtimeNs = static_cast<int64_t>(rt.tv_sec) * 1000000000 + rt.tv_nsec;
  s->wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wakeFd < 0) {
    logLine("cannot start capture to %s; continuing without capture", path.c_str());
    g_disabledPid = g_pid;
    return nullptr;
  }
  Session* raw = s.release();
  // The writer thread starts with every signal blocked (and blocks them again
  // itself): a signal sent to the process must reach one of the program's
  // threads, as without gtap, even in the moment before the writer first runs.
  sigset_t all, callerMask;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &callerMask);
  struct RestoreMask {
    const sigset_t& mask;
    ~RestoreMask() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{callerMask};
  raw->writer = std::thread([raw] {
    // Nothing the writer meets (a failed allocation, a library's exception)
    // may end the program: recording stops, the program runs on.
    try {
      raw->run();
    } GTAP_CATCH_INTERNAL {
      raw->stopAfterException();
    }
  });
  raw->writerHandle = raw->writer.native_handle();
  g_session.store(raw, std::memory_order_release);
  installExitHooks();
  return raw;
}

}  // namespace

const Config& config() { return configStorage(); }

bool recordKernels() { return configStorage().mode & format::kModeKernels; }
bool recordMemory() { return configStorage().mode & format::kModeMemory; }
bool recordStacks() { return configStorage().mode & format::kModeStacks; }
bool recordSamples() { return configStorage().mode & format::kModeSamples; }

ThreadState* enterSlow() {
  ThreadState* t = t_state;
  if (t == &g_deadThread || stoppedAfterInternalError()) return nullptr;
  if (!configStorage().enabled) return nullptr;
  // A session that records no more answers without a system call: calls
  // after the end (or after a failed write) pass through at little cost.
  Session* s = sessionOfGPid();
  if (s && (!s->recording.load() || s->stopRequested.load())) return nullptr;
  if (pidIsNotGPid()) return nullptr;
  uint8_t saved = t_guard;
  t_guard |= kGuardGtap;  // whatever the session start calls is not ours to record
  if (!s) {
    // Starting a session allocates and creates a thread; if that fails the
    // program runs on without capture.
    try {
      s = startSession();
    } catch (const std::exception& e) {
      logLine("cannot start capture (%s); continuing without capture", e.what());
      g_disabledPid = g_pid;
      s = nullptr;
    }
  }
  ThreadState* result = nullptr;
  if (s && s->recording.load() && !s->stopRequested.load() &&
      (!s->exiting.load() || pthread_equal(s->exitingThread, pthread_self()))) {
    if (!t || t->pool != &s->pool) {
      try {
        t = s->registerThread();
      } catch (const std::exception&) {
        t_guard = saved;
        return nullptr;  // this thread's calls pass through unrecorded
      }
      t_state = t;
      registerThreadExit(t);
    }
    t->generation = g_generation.load();
    result = t;
  }
  // While the process exits, another thread's call passes through; it gives
  // up the processor first so the writer's final flush is not starved by
  // threads the exit is about to end anyway (it never waits).
  if (!result && s && s->exiting.load() && !pthread_equal(s->exitingThread, pthread_self())) sched_yield();
  t_guard = saved;
  return result;
}

void registerExitWork(ExitWork work) {
  if (g_exitWorkCount < 8) g_exitWork[g_exitWorkCount++] = work;
}

uint32_t currentThreadId() {
  uint8_t saved = t_guard;
  t_guard = 0;
  ThreadState* t = enterCall(0);
  t_guard = saved;
  return t ? t->id : ~0u;
}

void runExitWork() {
  if (!liveSession() || stoppedAfterInternalError()) return;
  uint8_t saved = t_guard;
  t_guard |= kGuardGtap;
  try {
    for (size_t i = 0; i < g_exitWorkCount; ++i) g_exitWork[i]();
  } GTAP_CATCH_INTERNAL {
    stopAfterInternalError("the work gtap does at exit");
  }
  t_guard = saved;
}

void stopSessionAfterInternalError(const char* where, const char* what) {
  Session* s = liveSession();
  if (s && s->file)
    logLine("internal error in %s (%s); capture stops here (%s keeps what was recorded before), calls pass "
            "through to the runtime",
            where, what, s->file->path().c_str());
  else
    logLine("internal error in %s (%s); nothing is recorded from here, calls pass through to the runtime", where,
            what);
  if (s) s->pool.stopWaiting();
  g_generation.fetch_add(1);  // every thread re-checks and passes through
}

void markThreadExited(ThreadState* t) {
  if (t_state == t) t_state = &g_deadThread;
  t->exited.store(true, std::memory_order_release);
}

void beginExit() {
  Session* s = liveSession();
  if (!s || s->exiting.load()) return;
  s->exitingThread = pthread_self();
  s->exiting.store(true);
  g_generation.fetch_add(1);  // the other threads re-check and pass through
}

bool wakeWriter() {
  Session* s = liveSession();
  if (!s || s->writerDone.load() || !s->recording.load() || s->stopRequested.load()) return false;
  s->kick();
  return true;
}

void flushSession() {
  Session* s = liveSession();
  if (!s || s->writerDone.load()) return;
  uint32_t want = s->flushRequests.fetch_add(1) + 1;
  s->kick();
  for (int i = 0; i < 5000 && s->flushesDone.load() < want && !s->writerDone.load(); ++i) {
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
}

void finishSession(const char* reason) {
  Session* s = liveSession();
  if (!s) return;
  // The reason first, so the writer never sees the stop without it.
  const char* none = nullptr;
  bool first = s->stopReason.compare_exchange_strong(none, reason);
  if (s->stopRequested.exchange(true) || !first) {
    s->waitFor(s->writerDone, kFinishTimeoutMs);
    return;
  }
  g_generation.fetch_add(1);  // threads re-check and see stopRequested
  s->kick();
  if (pthread_equal(pthread_self(), s->writerHandle)) return;
  if (s->waitFor(s->writerDone, kFinishTimeoutMs)) {
    s->writer.join();
  } else {
    logLine("the writer did not finish %s in %d s; the file may lack its trailer",
            s->file->path().c_str(), kFinishTimeoutMs / 1000);
    s->writer.detach();
  }
}

bool flushSessionFromSignal(int timeoutMs) {
  Session* s = liveSession();
  if (!s || s->writerDone.load() || pthread_equal(pthread_self(), s->writerHandle)) return false;
  uint32_t want = s->flushRequests.fetch_add(1) + 1;
  s->kick();
  for (int waited = 0; s->flushesDone.load() < want && !s->writerDone.load(); ++waited) {
    if (waited >= timeoutMs) return false;
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
  return true;
}

void finishSessionFromSignal(int sig, int timeoutMs) {
  Session* s = liveSession();
  if (!s || pthread_equal(pthread_self(), s->writerHandle)) return;
  if (!s->stopRequested.exchange(true)) {
    s->stopSignal.store(sig);
    g_generation.fetch_add(1);
  }
  s->kick();
  s->waitFor(s->writerDone, timeoutMs);
}

bool suspendSessionForExec() {
  Session* s = liveSession();
  if (!s || s->writerDone.load() || s->stopRequested.load() || pthread_equal(pthread_self(), s->writerHandle))
    return false;
  s->execPending.fetch_add(1);
  uint32_t mine = s->execRequests.fetch_add(1) + 1;
  s->kick();
  // Bounded, with sleeps only: exec may be called from a signal handler.
  bool served = false;
  for (int waited = 0; waited < kFinishTimeoutMs && !s->writerDone.load(); ++waited) {
    if (static_cast<int32_t>(s->execServed.load() - mine) >= 0) {
      served = true;
      break;
    }
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
  }
  if (!served && !s->writerDone.load())
    logLine("the writer did not finish %s in %d s before the exec; the file may lack its trailer",
            s->file->path().c_str(), kFinishTimeoutMs / 1000);
  return true;
}

void resumeSessionAfterExec() {
  Session* s = liveSession();
  if (!s) return;
  s->execPending.fetch_sub(1);
  s->kick();
}

bool inVforkOrCloneChild() { return pidIsNotGPid(); }

void prepareFork() {
  g_startMutex.lock();
  if (Session* s = sessionOfGPid()) {
    s->registryMutex.lock();
    s->pool.mutex().lock();
  }
}

void afterForkParent() {
  if (Session* s = sessionOfGPid()) {
    s->pool.mutex().unlock();
    s->registryMutex.unlock();
  }
  g_startMutex.unlock();
}

void afterForkChild() {
  Session* parent = sessionOfGPid();
  if (parent) {
    parent->pool.mutex().unlock();
    parent->registryMutex.unlock();
    g_parentSessionPid = parent->pid;
  }
  // The parent's session, writer and file stay the parent's: the child leaves
  // them untouched and starts its own on its first recorded call.
  g_pid = static_cast<int>(::getpid());
  g_session.store(nullptr);
  g_generation.fetch_add(1);
  g_startMutex.unlock();
}

void initSessionGlobals() {
  g_pid = static_cast<int>(::getpid());
  initClock();
  g_recordApi = (configStorage().mode & format::kModeApi) != 0;
  // Intel's driver offers its metric groups (instruction sampling among
  // them) only with ZET_ENABLE_METRICS=1 set when zeInit runs, as every
  // Level Zero profiler sets it; a value the user set is kept. Set at load,
  // before the program's first call.
  if (configStorage().enabled && (configStorage().mode & format::kModeSamples))
    setenv("ZET_ENABLE_METRICS", "1", 0);
}

}  // namespace gtap::core
