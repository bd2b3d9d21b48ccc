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
#include "internal_error.h"
#include "log.h"
#include "output_path.h"
#include "stack_table.h"

namespace gtap::core {

__thread ThreadState* t_state __attribute__((tls_model("initial-exec"))) = nullptr;
__thread uint8_t t_guard __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<uint32_t> g_generation{1};
bool g_recordApi = true;

namespace {

constexpr size_t kEventsPerChunk = 65536;
// Registered from constructors, read-only once a session runs.
ChunkProducer g_producers[8];
size_t g_producerCount = 0;
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

std::string readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string executablePath() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::vector<std::string> commandLine() {
  std::string raw = readFile("/proc/self/cmdline");
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\0') {
      args.emplace_back(raw.substr(start, i - start));
      start = i + 1;
    }
  }
  return args;
}

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

// "signal 11 (SIGSEGV)", "signal 36 (SIGRTMIN+2)": the close reason of a file
// whose process a signal ended.
std::string signalReason(int sig) {
  std::string name;
  if (sig >= SIGRTMIN && sig <= SIGRTMAX)
    name = sig == SIGRTMIN ? "SIGRTMIN" : "SIGRTMIN+" + std::to_string(sig - SIGRTMIN);
  else if (const char* abbrev = sigabbrev_np(sig))
    name = std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig) + (name.empty() ? "" : " (" + name + ")");
}

struct Session {
  explicit Session(const Config& c) : cfg(c), pool(c.bufferBytes, &kickCurrentWriter) {}

  Config cfg;
  int pid = 0;
  int forkedFrom = 0;
  std::unique_ptr<format::CaptureWriter> file;
  BlockPool pool;
  std::mutex registryMutex;
  std::vector<ThreadState*> threads;
  uint32_t nextThreadId = 0;
  std::thread writer;
  pthread_t writerHandle{};
  int wakeFd = -1;

  std::atomic<bool> recording{true};  // false once a write failed
  std::atomic<bool> stopRequested{false};
  std::atomic<bool> writerDone{false};
  std::atomic<uint32_t> flushRequests{0};
  std::atomic<uint32_t> flushesDone{0};
  std::atomic<int> stopSignal{0};
  // Exec: each exec takes a number (execRequests) and waits until the writer
  // has written everything and the trailer after seeing that number
  // (execServed); the writer then waits while an exec is under way
  // (execPending > 0).
  std::atomic<uint32_t> execRequests{0};
  std::atomic<uint32_t> execServed{0};
  std::atomic<int> execPending{0};
  // Set when the process starts to exit: from then on only the exiting
  // thread's calls (its atexit handlers, static destructors) are recorded, so
  // threads still calling cannot keep the final drains chasing their records.
  std::atomic<bool> exiting{false};
  pthread_t exitingThread{};
  // Why the session stops: set once, before stopRequested, by the first
  // finishSession (a string literal, so the writer may read it any time);
  // null when a signal stopped it (stopSignal says which).
  std::atomic<const char*> stopReason{nullptr};

  // Writer thread only.
  TickConverter ticks;
  std::vector<bool> functionDefined = std::vector<bool>(65536, false);
  std::vector<std::pair<const Record*, const Record*>> spans;
  std::vector<Block*> toRelease;
  std::vector<uint8_t> eventBytes;
  uint64_t eventsWritten = 0;
  uint64_t eventsDropped = 0;
  uint32_t threadsSeen = 0;
  StackTable stacks;  // this file's

  struct Sink : ChunkSink {
    Session& s;
    explicit Sink(Session& session) : s(session) {}
    bool write(schema::ChunkKind kind, capnp::MessageBuilder& message) override {
      return s.file->ok() && s.file->writeMessage(kind, message);
    }
    format::Hash128 writeBlob(const void* data, size_t size) override { return s.file->writeBlob(data, size); }
    format::Hash128 writeBlob(const void* data, size_t size, const format::Hash128& hash) override {
      return s.file->writeBlob(data, size, hash);
    }
    int64_t toHostNs(uint64_t t) const override { return s.ticks.toNs(t); }
    uint32_t internStack(const std::vector<uint64_t>& frames) override { return s.stacks.intern(frames); }
    void writeNewStacks() override { s.stacks.writeNew(*this); }
  };

  void kick() {
    uint64_t one = 1;
    ssize_t ignored = ::write(wakeFd, &one, sizeof one);
    (void)ignored;
  }

  ThreadState* registerThread() {
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

  void writeFileInfo() {
    capnp::MallocMessageBuilder message;
    auto info = message.initRoot<schema::FileInfo>();
    info.setFormatMajor(format::kFormatMajor);
    info.setFormatMinor(format::kFormatMinor);
    info.setProducer("gtap " GTAP_VERSION);
    info.setPid(static_cast<uint32_t>(pid));
    info.setPpid(static_cast<uint32_t>(::getppid()));
    info.setForkedFromPid(static_cast<uint32_t>(forkedFrom));
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    info.setHostname(host);
    info.setExecutable(executablePath());
    auto args = commandLine();
    auto list = info.initArguments(static_cast<unsigned>(args.size()));
    for (size_t i = 0; i < args.size(); ++i) list.set(static_cast<unsigned>(i), args[i]);
    RankInfo rank = detectRank();
    info.setRank(rank.rank);
    info.setWorldSize(rank.worldSize);
    timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    info.setStartRealtimeNs(static_cast<int64_t>(rt.tv_sec) * 1000000000 + rt.tv_nsec);
    info.setStartHostNs(monotonicNs());
    info.setMode(cfg.modeText);
    auto kv = info.initConfig(static_cast<unsigned>(cfg.raw.size()));
    for (size_t i = 0; i < cfg.raw.size(); ++i) {
      kv[static_cast<unsigned>(i)].setKey(cfg.raw[i].first);
      kv[static_cast<unsigned>(i)].setValue(cfg.raw[i].second);
    }
    file->writeMessage(schema::ChunkKind::FILE_INFO, message);
  }

  // Gathers every record the thread has published as spans into `spans`; the
  // blocks the thread has moved past wait in `toRelease` until the spans
  // pointing into them are encoded.
  size_t collectSpans(ThreadState* t) {
    size_t n = 0;
    Block* b = t->head;
    while (b) {
      uint32_t c = b->committed.load(std::memory_order_acquire);
      Block* next = b->next.load(std::memory_order_acquire);
      // The producer published its last count before linking the next block.
      if (next) c = b->committed.load(std::memory_order_acquire);
      if (c > t->consumed) {
        spans.emplace_back(b->records + t->consumed, b->records + c);
        n += c - t->consumed;
        t->consumed = c;
      }
      if (!next) break;
      toRelease.push_back(b);
      b = next;
      t->head = next;
      t->consumed = 0;
    }
    return n;
  }

  void releaseConsumed() {
    for (Block* b : toRelease) pool.release(b);
    toRelease.clear();
  }

  bool fullyDrained(ThreadState* t) {
    Block* b = t->head;
    return !b || (!b->next.load(std::memory_order_acquire) &&
                  b->committed.load(std::memory_order_acquire) == t->consumed);
  }

  // Encodes one thread's newly published records: definitions first when new
  // threads or functions appear, then ApiEvents chunks.
  void encode(ThreadState* t, const std::vector<std::pair<const Record*, const Record*>>& spans, size_t total) {
    capnp::MallocMessageBuilder defsMessage;
    auto defs = defsMessage.initRoot<schema::Definitions>();
    std::vector<uint16_t> newFunctions;
    for (const auto& [begin, end] : spans)
      for (const Record* r = begin; r != end; ++r)
        if (!functionDefined[r->function]) {
          functionDefined[r->function] = true;
          newFunctions.push_back(r->function);
        }
    bool newThread = !t->defined;
    if (newThread) defineThread(t, defs, std::max(ticks.toNs(spans.front().first->ticks), t->lastNs));
    if (!newFunctions.empty()) {
      auto list = defs.initFunctions(static_cast<unsigned>(newFunctions.size()));
      for (size_t i = 0; i < newFunctions.size(); ++i) {
        const FunctionInfo* info = functionInfo(newFunctions[i]);
        list[static_cast<unsigned>(i)].setId(newFunctions[i]);
        list[static_cast<unsigned>(i)].setApi(
            static_cast<schema::Api>(info ? static_cast<uint16_t>(info->api) : 0));
        list[static_cast<unsigned>(i)].setName(info ? info->name : "unknown");
      }
    }
    if (newThread || !newFunctions.empty()) file->writeMessage(schema::ChunkKind::DEFINITIONS, defsMessage);

    auto span = spans.begin();
    const Record* r = span->first;
    for (size_t done = 0; done < total;) {
      size_t n = std::min(kEventsPerChunk, total - done);
      // Encoded into a reused buffer first: sizing the message for the worst
      // case would have Cap'n Proto zero 30 bytes per event.
      eventBytes.resize(n * format::ApiEventEncoder::kMaxEventBytes);
      int64_t base = t->lastNs;
      format::ApiEventEncoder encoder(eventBytes.data(), base);
      int64_t first = 0;
      for (size_t i = 0; i < n; ++i) {
        if (r == span->second) r = (++span)->first;
        int64_t ns = std::max(ticks.toNs(r->ticks), encoder.lastNs());
        if (i == 0) first = ns;
        encoder.add(static_cast<format::ApiEventKind>(r->kind), r->function, ns, r->value);
        ++r;
      }
      capnp::MallocMessageBuilder message(static_cast<unsigned>(encoder.size() / 8 + 16));
      auto ev = message.initRoot<schema::ApiEvents>();
      ev.setThread(t->id);
      ev.setFirstIndex(t->eventsConsumed);
      ev.setBaseHostNs(base);
      ev.setCount(encoder.count());
      ev.setEncoded(capnp::Data::Reader(encoder.data(), encoder.size()));
      t->lastNs = encoder.lastNs();
      t->eventsConsumed += n;
      done += n;
      if (file->writeMessage(schema::ChunkKind::API_EVENTS, message, {first, t->lastNs}))
        eventsWritten += n;
      else
        eventsDropped += n;
    }
  }

  void defineThread(ThreadState* t, schema::Definitions::Builder defs, int64_t firstNs) {
    t->defined = true;
    t->lastNs = firstNs;
    ++threadsSeen;
    auto list = defs.initThreads(1);
    list[0].setId(t->id);
    list[0].setOsTid(t->osTid);
    list[0].setName(t->name);
    list[0].setFirstHostNs(firstNs);
  }

  void stopRecordingAfterError() {
    if (!recording.exchange(false)) return;
    logLine("writing %s failed (%s); capture stops here, the file keeps what was written",
            file->path().c_str(), file->error().c_str());
    pool.stopWaiting();
    g_generation.fetch_add(1);
  }

  void drain() {
    testThrowPoint(TestSite::writer);
    ticks.sample();
    std::vector<ThreadState*> snapshot;
    {
      std::lock_guard<std::mutex> lock(registryMutex);
      snapshot = threads;
    }
    std::vector<ThreadState*> gone;
    for (ThreadState* t : snapshot) {
      bool exited = t->exited.load(std::memory_order_acquire);
      // Records stay in their blocks until encoded: the spans are encoded
      // before the blocks they point into are recycled below.
      spans.clear();
      size_t total = collectSpans(t);
      if (total) {
        if (recording.load() && file->ok())
          encode(t, spans, total);
        else
          eventsDropped += total;
      }
      releaseConsumed();
      if (!file->ok()) stopRecordingAfterError();
      if (exited && fullyDrained(t)) gone.push_back(t);
    }
    // Threads known only through other records (device work, allocations)
    // still get their definition.
    for (ThreadState* t : snapshot) {
      if (t->defined || !file->ok() || !recording.load()) continue;
      capnp::MallocMessageBuilder defsMessage;
      defineThread(t, defsMessage.initRoot<schema::Definitions>(), ticks.toNs(nowTicks()));
      file->writeMessage(schema::ChunkKind::DEFINITIONS, defsMessage);
    }
    if (recording.load() && file->ok()) {
      Sink sink(*this);
      for (size_t i = 0; i < g_producerCount; ++i) g_producers[i](sink, stopRequested.load());
      if (!file->ok()) stopRecordingAfterError();
    }
    if (!gone.empty()) {
      std::lock_guard<std::mutex> lock(registryMutex);
      for (ThreadState* t : gone) {
        threads.erase(std::find(threads.begin(), threads.end(), t));
        if (t->head) pool.release(t->head);
        delete t;
      }
    }
  }

  void run() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    t_guard = kGuardGtap;
    // Every write happens here, never on a program thread, so a file size
    // limit's SIGXFSZ (blocked on this thread) can never reach the program.
    if (file->writePreamble()) writeFileInfo();
    pollfd pfd{wakeFd, POLLIN, 0};
    for (;;) {
      ::poll(&pfd, 1, static_cast<int>(cfg.flushIntervalMs));
      uint64_t count;
      ssize_t ignored = ::read(wakeFd, &count, sizeof count);
      (void)ignored;
      uint32_t requested = flushRequests.load();
      bool stop = stopRequested.load();
      // Read before the drain, as the flush requests: what the exec's thread
      // published before asking is then in this drain.
      uint32_t execAsked = execRequests.load();
      drain();
      flushesDone.store(requested);
      if (stop) break;
      if (execAsked != execServed.load()) suspendForExec(execAsked);
    }
    const char* why = stopReason.load();
    std::string reason = why ? why : "exit";
    if (int sig = stopSignal.load()) reason = signalReason(sig);
    bool closedOk = file->close(eventsWritten, eventsDropped, monotonicNs(), reason);
    if (!cfg.quiet) {
      if (closedOk)
        logLine("wrote %s (%llu events from %u threads, %llu KiB%s)", file->path().c_str(),
                static_cast<unsigned long long>(eventsWritten), threadsSeen,
                static_cast<unsigned long long>(file->bytesWritten() / 1024),
                pool.waits() ? "; the program waited for the writer at times: raise GTAP_BUFFER_MB" : "");
      else if (!file->error().empty() && recording.load())
        logLine("closing %s failed: %s", file->path().c_str(), file->error().c_str());
    }
    writerDone.store(true);
  }

  // The program is about to replace itself: the file is made complete as at
  // exit (everything published so far, then the trailer), but stays open (the
  // kernel closes it at a successful exec: O_CLOEXEC). When every exec under
  // way has failed and returned, the trailer is cut off again and capture goes
  // on in the same file; records made meanwhile waited in their buffers.
  void suspendForExec(uint32_t asked) {
    bool complete = recording.load() && file->ok() &&
                    file->writeTrailer(eventsWritten, eventsDropped, monotonicNs(), "exec");
    if (complete && !cfg.quiet)
      logLine("wrote %s (%llu events from %u threads, %llu KiB) before an exec", file->path().c_str(),
              static_cast<unsigned long long>(eventsWritten), threadsSeen,
              static_cast<unsigned long long>(file->bytesWritten() / 1024));
    execServed.store(asked);
    pollfd pfd{wakeFd, POLLIN, 0};
    // Until every exec has returned; or until a newer exec asks, whose
    // thread may have recorded more since: back to drain, and a new trailer.
    while (execPending.load() > 0 && execRequests.load() == asked && !stopRequested.load()) {
      // Flushes asked for meanwhile have nothing more to wait for.
      flushesDone.store(flushRequests.load());
      ::poll(&pfd, 1, 100);
      uint64_t count;
      ssize_t ignored = ::read(wakeFd, &count, sizeof count);
      (void)ignored;
    }
    if (complete && !file->removeTrailer()) stopRecordingAfterError();
    if (execRequests.load() != asked) kick();  // serve the newer exec at once
  }

  // In the writer's catch block: nothing more is written (the file keeps
  // what was, without a trailer).
  void stopAfterException() {
    recording.store(false);
    stopAfterInternalError("the writer thread");
    pool.stopWaiting();
    g_generation.fetch_add(1);
    writerDone.store(true);
  }

  // Waits for the writer with sleeps only (usable from a signal handler).
  bool waitFor(const std::atomic<bool>& flag, int timeoutMs) {
    for (int waited = 0; !flag.load(); waited += 1) {
      if (waited >= timeoutMs) return false;
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
    return true;
  }
};

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
  s->file = createOutput(path, error);
  if (!s->file) {
    logLine("cannot create capture file %s; continuing without capture", error.c_str());
    g_disabledPid = g_pid;
    return nullptr;
  }
  s->forkedFrom = g_parentSessionPid;
  s->wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wakeFd < 0) {
    logLine("cannot start capture to %s; continuing without capture", path.c_str());
    g_disabledPid = g_pid;
    return nullptr;
  }
  Session* raw = s.release();
  // The writer thread is created with the caller's mask; it blocks all signals
  // itself at once.
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

void registerChunkProducer(ChunkProducer producer) {
  if (g_producerCount < 8) g_producers[g_producerCount++] = producer;
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
}

}  // namespace gtap::core
