// The writer thread: everything gtap writes to the capture file is written
// here, never on a program thread: the preamble and the file's description,
// each thread's call records as ApiEvents chunks, the front ends' chunks
// (chunk_producer.h) at every flush, and the trailer at the end or before an
// exec. The session (session.cpp) starts it and tells it when to flush or stop.
#include "session_state.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "capnp/message.h"
#include "chunk_producer.h"
#include "functions.h"
#include "gtap/format/api_events.h"
#include "exit_summary.h"
#include "internal_error.h"
#include "log.h"
#include "output_path.h"
#include "session.h"

namespace gtap::core {

namespace {

constexpr size_t kEventsPerChunk = 65536;
// Registered from constructors, read-only once a session runs.
// Room for every front end's producer and core's own; registerChunkProducer
// stops the process's build-time mistake of one too many loudly.
constexpr size_t kMaxProducers = 16;
ChunkProducer g_producers[kMaxProducers];
size_t g_producerCount = 0;

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

}  // namespace

struct Session::Sink : ChunkSink {
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

void Session::writeFileInfo() {
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
  info.setStartRealtimeNs(startRealtimeNs);
  info.setStartHostNs(startHostNs);
  info.setMode(cfg.modeText);
  auto kv = info.initConfig(static_cast<unsigned>(cfg.raw.size()));
  for (size_t i = 0; i < cfg.raw.size(); ++i) {
    kv[static_cast<unsigned>(i)].setKey(cfg.raw[i].first);
    kv[static_cast<unsigned>(i)].setValue(cfg.raw[i].second);
  }
  file->writeMessage(schema::ChunkKind::FILE_INFO, message);
}

// Gathers the thread's records from the writer's position up to the count
// `upTo` as spans into `spans`. With `take`, the position moves on and the
// blocks passed wait in `toRelease` until the spans pointing into them are
// encoded; without, the records are only read (calls still open at the final
// drain, whose records their threads may yet fill).
size_t Session::collectSpans(ThreadState* t, uint64_t upTo, bool take) {
  Block* b = t->head;
  uint32_t at = t->consumed;
  uint64_t taken = t->taken;
  size_t n = 0;
  while (taken < upTo) {
    if (at == kBlockRecords) {
      // The producer linked the next block before it published (or reserved)
      // any record in it, so the count read says it is there.
      Block* next = b->next.load(std::memory_order_acquire);
      if (take) toRelease.push_back(b);
      b = next;
      at = 0;
    }
    uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(kBlockRecords - at, upTo - taken));
    spans.emplace_back(b->records + at, b->records + at + count);
    at += count;
    taken += count;
    n += count;
  }
  if (take) {
    t->head = b;
    t->consumed = at;
    t->taken = taken;
  }
  return n;
}

void Session::releaseConsumed() {
  for (Block* b : toRelease) pool.release(b);
  toRelease.clear();
}

bool Session::fullyDrained(ThreadState* t) { return t->taken == t->published.load(std::memory_order_acquire); }

// Encodes one thread's newly published records: definitions first when new
// threads or functions appear, then ApiEvents chunks of call events (one per
// record; a record still open is a call that has not returned, written as a
// begin). Ticks become ns by one multiply (TickConverter::Fast).
void Session::encode(ThreadState* t, const std::vector<std::pair<const Record*, const Record*>>& published, size_t total) {
  const TickConverter::Fast conv = ticks.fast();
  const bool summaryOn = cfg.summary;
  auto span = published.begin();
  const Record* r = span->first;
  for (size_t done = 0; done < total;) {
    size_t n = std::min(kEventsPerChunk, total - done);
    const bool newThread = !t->defined;
    if (newThread) t->lastNs = std::max(conv.toNs(r->begin), t->lastNs);
    int64_t base = t->lastNs;
    // Encoded into the encoder's columns first: sizing the message for the
    // worst case would have Cap'n Proto zero 50 bytes per event.
    format::CallEventEncoder encoder(n, base);
    newFunctions.clear();
    int64_t first = 0;
    for (size_t i = 0; i < n; ++i, ++r) {
      if (r == span->second) r = (++span)->first;
      if (__builtin_expect(!functionDefined[r->function], 0)) {
        functionDefined[r->function] = 1;
        newFunctions.push_back(r->function);
      }
      int64_t ns = std::max(conv.toNs(r->begin), encoder.lastNs());
      if (i == 0) first = ns;
      if (__builtin_expect(r->kind == RecordKind::returned, 1)) {
        // A TSC that went back (another core, a re-anchor) is a zero duration.
        int64_t dticks = static_cast<int64_t>(r->end - r->begin);
        int64_t spanNs = dticks > 0 ? conv.spanNs(static_cast<uint64_t>(dticks)) : 0;
        encoder.addCall(r->function, ns, spanNs, r->result, r->depth);
        if (summaryOn) summary::noteCall(r->function, spanNs);
      } else {
        encoder.addBegin(r->function, ns, r->depth);
        if (summaryOn) summary::noteCall(r->function, 0);
      }
    }
    if (newThread || !newFunctions.empty()) {
      capnp::MallocMessageBuilder defsMessage;
      auto defs = defsMessage.initRoot<schema::Definitions>();
      if (newThread) defineThread(t, defs, base);
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
      file->writeMessage(schema::ChunkKind::DEFINITIONS, defsMessage);
    }
    capnp::MallocMessageBuilder message(static_cast<unsigned>(encoder.size() / 8 + 16));
    auto ev = message.initRoot<schema::ApiEvents>();
    ev.setThread(t->id);
    ev.setFirstIndex(t->eventsConsumed);
    ev.setBaseHostNs(base);
    ev.setCount(encoder.count());
    ev.setCallEvents(true);
    encoder.write(ev.initEncoded(static_cast<unsigned>(encoder.size())).begin());
    t->lastNs = encoder.lastNs();
    t->eventsConsumed += n;
    done += n;
    if (file->writeMessage(schema::ChunkKind::API_EVENTS, message, {first, t->lastNs}))
      eventsWritten += n;
    else
      eventsDropped += n;
  }
}

// The thread's published records; with `withOpenCalls` also those after
// them, of calls that have not returned (and calls made inside those): at the
// final drain, and for a thread that exited inside a call.
void Session::encodeThread(ThreadState* t, bool withOpenCalls) {
  spans.clear();
  size_t total = collectSpans(t, t->published.load(std::memory_order_acquire), true);
  if (withOpenCalls) total += collectSpans(t, t->produced.load(std::memory_order_acquire), false);
  if (total) {
    if (recording.load() && file->ok())
      encode(t, spans, total);
    else
      eventsDropped += total;
  }
}

void Session::defineThread(ThreadState* t, schema::Definitions::Builder defs, int64_t firstNs) {
  t->defined = true;
  t->lastNs = firstNs;
  ++threadsSeen;
  auto list = defs.initThreads(1);
  list[0].setId(t->id);
  list[0].setOsTid(t->osTid);
  list[0].setName(t->name);
  list[0].setFirstHostNs(firstNs);
}

void Session::stopRecordingAfterError() {
  if (!recording.exchange(false)) return;
  logLine("writing %s failed (%s); capture stops here, the file keeps what was written",
          file->path().c_str(), file->error().c_str());
  pool.stopWaiting();
  g_generation.fetch_add(1);
}

void Session::drain(bool final) {
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
    encodeThread(t, final || exited);
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

void Session::run() {
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
    drain(stop);
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
  // Asked for, it is printed even with GTAP_QUIET.
  if (closedOk) summary::print(pid, file->path(), monotonicNs() - startHostNs);
  writerDone.store(true);
}

// The program is about to replace itself: the file is made complete as at
// exit (everything published so far, then the trailer), but stays open (the
// kernel closes it at a successful exec: O_CLOEXEC). When every exec under
// way has failed and returned, the trailer is cut off again and capture goes
// on in the same file; records made meanwhile waited in their buffers.
void Session::suspendForExec(uint32_t asked) {
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

void Session::stopAfterException() {
  recording.store(false);
  stopAfterInternalError("the writer thread");
  pool.stopWaiting();
  g_generation.fetch_add(1);
  writerDone.store(true);
}


void registerChunkProducer(ChunkProducer producer) {
  if (g_producerCount >= kMaxProducers) {
    std::fputs("gtap: internal: too many chunk producers; raise kMaxProducers\n", stderr);
    std::abort();
  }
  g_producers[g_producerCount++] = producer;
}

}  // namespace gtap::core
