#include "replay_stream.h"

#include <capnp/message.h>
#include <signal.h>

#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "chunk_producer.h"
#include "clock.h"
#include "config.h"
#include "functions.h"
#include "log.h"
#include "session.h"
#include "signals.h"
#include "thread_records.h"

namespace gtap::core::replay {

namespace {

// Bytes kept for the writer. Whole words, the last one zero-padded: the
// writer stores large ones from where they lie.
struct KeptBlob {
  format::Hash128 hash;
  size_t size = 0;
  size_t capacity = 0;  // bytes
  std::unique_ptr<uint64_t[]> words;
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words.get()); }
};

// Buffers at least this large are recycled once written: a fresh buffer of a
// few MiB faults in every page again on each upload.
constexpr size_t kRecycled = 64u << 10;

struct Stream {
  std::mutex mu;
  std::vector<Record> records;
  std::vector<KeptBlob> blobs;   // kept, not yet written
  std::vector<KeptBlob> spare;   // written, for reuse (kRecycled and larger)
  // Capacity of the kept buffers and those being written; with the spare
  // ones, at most GTAP_BUFFER_MB (one larger blob alone excepted): past it
  // the program waits for the writer rather than memory growing.
  uint64_t pendingBytes = 0;
  uint64_t spareBytes = 0;
  std::condition_variable written;  // pendingBytes went down
  // Sources whose last bytes were new: copied before they are looked up.
  struct Recent {
    uintptr_t address = 0;
    size_t size = 0;
    bool wasNew = false;
  } recent[16];
  std::unordered_set<format::Hash128, format::Hash128Hasher> known;    // written or kept
  std::atomic<uint32_t> signalScopesSeen{0};  // written under mu
  std::unordered_set<uint32_t> functionsDefined;  // writer thread only
};

Stream& stream() {
  static Stream* s = new Stream();  // outlives static destructors: calls may come after them
  return *s;
}

std::atomic<uint64_t> g_seq{1};

// The command's schema struct (the one place a ListCommand becomes one).
void setListCommand(schema::ReplayRecord::Builder f, const ListCommand& c) {
  auto fill = [&](capnp::List<uint64_t>::Builder ids) {
    for (uint32_t i = 0; i < c.eventCount; ++i) ids.set(i, c.events()[i]);
  };
  switch (c.kind) {
    case ListCommand::Kind::launch: {
      auto l = f.initLaunchKernel();
      l.setList(c.list);
      l.setKernel(c.kernel);
      l.setSignal(c.event);
      fill(l.initWaits(c.eventCount));
      if (c.hasGroups) {
        auto g = l.initGroups();
        g.setX(c.groups[0]);
        g.setY(c.groups[1]);
        g.setZ(c.groups[2]);
      }
      l.setCooperative(static_cast<uint8_t>(c.cooperative ? 1 : 0));
      l.setDispatch(c.dispatch);
      return;
    }
    case ListCommand::Kind::barrier: {
      auto b = f.initBarrier();
      b.setList(c.list);
      b.setSignal(c.event);
      fill(b.initWaits(c.eventCount));
      return;
    }
    case ListCommand::Kind::waitOnEvents: {
      auto w = f.initWaitOnEvents();
      w.setList(c.list);
      fill(w.initEvents(c.eventCount));
      return;
    }
    case ListCommand::Kind::signalEvent:
    case ListCommand::Kind::eventReset: {
      auto e = c.kind == ListCommand::Kind::signalEvent ? f.initSignalEvent() : f.initEventReset();
      e.setList(c.list);
      e.setEvent(c.event);
      return;
    }
  }
  f.initUnsupported().setReason("a list command of an unknown kind");
}
// Deliveries of GTAP_SCOPE_SIGNAL; odd counts mean the scope is open.
std::atomic<uint32_t> g_signalToggles{0};

void onScopeSignal(int) { g_signalToggles.fetch_add(1, std::memory_order_relaxed); }

Record marker(bool begin, const std::string& name, uint32_t thread) {
  Record r;
  r.seq = nextSeq();
  r.thread = thread;
  auto f = r.fields();
  (begin ? f.initScopeBegin() : f.initScopeEnd()).setScope(name);
  r.ticks = nowTicks();
  return r;
}

uint64_t budget() { return std::max<uint64_t>(config().bufferBytes, 1u << 20); }

// A written (or unneeded) buffer: kept for reuse while the budget allows.
void giveBack(Stream& s, KeptBlob&& b) {
  KeptBlob dropped;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.pendingBytes -= b.capacity;
    if (b.capacity >= kRecycled && s.pendingBytes + s.spareBytes + b.capacity <= budget()) {
      s.spareBytes += b.capacity;
      s.spare.push_back(std::move(b));
    } else {
      dropped = std::move(b);  // freed outside the lock
    }
  }
  s.written.notify_all();
}

// Room for `bytes` more kept bytes: waits while the writer has the budget's
// worth in hand (any amount alone goes through). Gives up waiting when no
// writer is there to make room, or it made none for two seconds.
void reserve(Stream& s, std::unique_lock<std::mutex>& lock, uint64_t bytes) {
  const uint64_t limit = budget();
  // Half the budget in hand: the writer starts now, not at its next interval.
  if (s.pendingBytes + bytes > limit / 2) wakeWriter();
  unsigned idle = 0;
  while (s.pendingBytes > 0 && s.pendingBytes + bytes > limit && idle < 200) {
    uint64_t before = s.pendingBytes;
    if (!wakeWriter()) break;
    s.written.wait_for(lock, std::chrono::milliseconds(10));
    idle = s.pendingBytes < before ? 0 : idle + 1;
  }
  s.pendingBytes += bytes;
}

// A buffer for `size` bytes whose capacity is already counted in pendingBytes
// (the caller reserved capacityFor(size)).
size_t capacityFor(size_t size) {
  size_t words = (size + 7) / 8 * 8;
  return words < kRecycled ? words : (words + kRecycled - 1) / kRecycled * kRecycled;
}

KeptBlob takeBuffer(Stream& s, size_t size) {
  KeptBlob b;
  b.size = size;
  b.capacity = capacityFor(size);
  if (b.capacity >= kRecycled) {
    std::vector<KeptBlob> freed;  // spares that no longer fit the budget, freed outside the lock
    std::lock_guard<std::mutex> lock(s.mu);
    for (size_t i = 0; i < s.spare.size(); ++i) {
      if (s.spare[i].capacity != b.capacity) continue;
      b.words = std::move(s.spare[i].words);
      s.spareBytes -= b.capacity;
      s.spare.erase(s.spare.begin() + static_cast<ptrdiff_t>(i));
      break;
    }
    while (!b.words && !s.spare.empty() && s.pendingBytes + s.spareBytes > budget()) {
      s.spareBytes -= s.spare.front().capacity;
      freed.push_back(std::move(s.spare.front()));
      s.spare.erase(s.spare.begin());
    }
    if (b.words) return b;
  }
  b.words.reset(new uint64_t[b.capacity / 8]);
  return b;
}

// Copies the bytes into `b` and hashes the copy, a block at a time (the block
// is hashed while in cache): the hash names exactly what will be written,
// whatever writes the source meanwhile.
void copyAndHash(KeptBlob& b, const uint8_t* src) {
  constexpr size_t kBlock = 64u << 10;
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  uint8_t* dst = b.data();
  for (size_t at = 0; at < b.size; at += kBlock) {
    size_t n = std::min(kBlock, b.size - at);
    std::memcpy(dst + at, src + at, n);
    XXH3_128bits_update(&state, dst + at, n);
  }
  std::memset(dst + b.size, 0, b.capacity - b.size);
  XXH128_hash_t h = XXH3_128bits_digest(&state);
  b.hash = {h.low64, h.high64};
}

void produce(ChunkSink& sink, bool) {
  if (!enabled()) return;
  Stream& s = stream();
  std::vector<Record> records;
  std::vector<KeptBlob> blobs;
  // Writer thread only; kept across flushes.
  static auto& direct = *new std::vector<const void*>;
  static auto& doneBlocks = *new std::vector<void*>;
  direct.clear();
  threadrecords::drain(threadrecords::Channel::replay, direct, doneBlocks);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    records.swap(s.records);
    blobs.swap(s.blobs);
  }
  // The functions the records name, so a replay-only capture (no API events,
  // which define them otherwise) still names its calls. A function defined
  // twice in a file is harmless: readers keep one definition per id.
  capnp::MallocMessageBuilder defsMessage;
  std::vector<uint32_t> newFunctions;
  auto define = [&](uint32_t function) {
    if (function != kNoFunction && s.functionsDefined.insert(function).second) newFunctions.push_back(function);
  };
  for (const Record& r : records) define(r.function);
  for (const void* d : direct) define(static_cast<const ListCommand*>(d)->function);
  if (!newFunctions.empty()) {
    auto list = defsMessage.initRoot<schema::Definitions>().initFunctions(static_cast<unsigned>(newFunctions.size()));
    for (size_t i = 0; i < newFunctions.size(); ++i) {
      const FunctionInfo* info = functionInfo(static_cast<uint16_t>(newFunctions[i]));
      list[static_cast<unsigned>(i)].setId(newFunctions[i]);
      list[static_cast<unsigned>(i)].setApi(static_cast<schema::Api>(info ? static_cast<uint16_t>(info->api) : 0));
      list[static_cast<unsigned>(i)].setName(info ? info->name : "unknown");
    }
    sink.write(schema::ChunkKind::DEFINITIONS, defsMessage);
  }
  // Blobs first: a reader meets the bytes before the records that use them.
  // Kept bytes were hashed as copied (keepBlob): not hashed again here. Each
  // buffer is handed back as soon as it is written, so a program waiting for
  // room goes on while the others are written.
  for (KeptBlob& b : blobs) {
    sink.writeBlob(b.data(), b.size, b.hash);
    giveBack(s, std::move(b));
  }
  blobs.clear();
  // Bounded chunks: a chunk of a few thousand records compresses well and a
  // damaged one loses little.
  constexpr size_t kPerChunk = 4096;
  // Both kinds in seq order, so a reader of a file written by one thread
  // finds its records in order (it sorts them otherwise).
  const size_t total = records.size() + direct.size();
  static auto& order = *new std::vector<std::pair<uint64_t, size_t>>;  // writer thread only
  order.clear();
  for (size_t i = 0; i < records.size(); ++i) order.push_back({records[i].seq, i});
  for (size_t i = 0; i < direct.size(); ++i)
    order.push_back({static_cast<const ListCommand*>(direct[i])->seq, records.size() + i});
  if (!std::is_sorted(order.begin(), order.end())) std::sort(order.begin(), order.end());
  for (size_t first = 0; first < total; first += kPerChunk) {
    size_t n = std::min(kPerChunk, total - first);
    capnp::MallocMessageBuilder message;
    auto list = message.initRoot<schema::Replay>().initRecords(static_cast<unsigned>(n));
    for (size_t i = 0; i < n; ++i) {
      auto b = list[static_cast<unsigned>(i)];
      const size_t at = order[first + i].second;
      if (at >= records.size()) {
        const auto* d = static_cast<const ListCommand*>(direct[at - records.size()]);
        setListCommand(b, *d);
        b.setSeq(d->seq);
        b.setThread(d->thread);
        b.setFunction(d->function);
        b.initPayload().setNone();
        b.setHostNs(sink.toHostNs(d->ticks));
        continue;
      }
      Record& r = records[at];
      if (r.message) {
        list.setWithCaveats(static_cast<unsigned>(i), r.message->getRoot<schema::ReplayRecord>().asReader());
      } else {
        // Cannot happen (every record names its operation); written so replay
        // stops on it rather than taking it for something it is not.
        b.initUnsupported().setReason("a record without its operation");
      }
      b.setSeq(r.seq);
      b.setThread(r.thread);
      b.setFunction(r.function);
      auto p = b.initPayload();
      p.setSize(r.payload.size);
      switch (r.payload.kind) {
        case Payload::Kind::none:
          p.setNone();
          break;
        case Payload::Kind::inlined:
          p.setInline(capnp::Data::Reader(r.payload.bytes.data(), r.payload.bytes.size()));
          break;
        case Payload::Kind::blob: {
          auto ref = p.initBlob();
          ref.setHashLow(r.payload.hash.low);
          ref.setHashHigh(r.payload.hash.high);
          ref.setSize(r.payload.blobSize ? r.payload.blobSize : r.payload.size);
          p.setBlobOffset(r.payload.blobOffset);
          if (!r.payload.file.path.empty()) format::setFileRef(p.initOrigin(), r.payload.file);
          break;
        }
        case Payload::Kind::file:
          format::setFileRef(p.initFile(), r.payload.file);
          break;
      }
      b.setHostNs(sink.toHostNs(r.ticks));
    }
    sink.write(schema::ChunkKind::REPLAY, message);
  }
  threadrecords::release(doneBlocks);
}

struct Registration {
  Registration() {
    registerChunkProducer(&produce);
    // Installed at load, before the program can send the signal: its default
    // action would end the program.
    const Config& c = config();
    if (c.enabled && (c.mode & format::kModeReplay) && c.scopeSignal) {
      struct sigaction sa {};
      sa.sa_handler = &onScopeSignal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      realSigaction(c.scopeSignal, &sa, nullptr);
    }
  }
} registration;

}  // namespace

bool enabled() { return config().mode & format::kModeReplay; }

uint64_t nextSeq() { return g_seq.fetch_add(1, std::memory_order_relaxed); }

uint64_t newId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void add(Record record) {
  Stream& s = stream();
  uint32_t toggles = g_signalToggles.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(s.mu);
  for (uint32_t seen = s.signalScopesSeen.load(std::memory_order_relaxed); seen != toggles;) {
    s.signalScopesSeen.store(++seen, std::memory_order_relaxed);
    s.records.push_back(marker(seen & 1, "signal", record.thread));
  }
  s.records.push_back(std::move(record));
}

ListCommand* beginListCommand(uint32_t eventCount) {
  // A scope marker a signal asked for is written by add().
  if (g_signalToggles.load(std::memory_order_relaxed) != stream().signalScopesSeen.load(std::memory_order_relaxed))
    return nullptr;
  void* at = threadrecords::begin(threadrecords::Channel::replay, sizeof(ListCommand) + 8ull * eventCount);
  if (!at) return nullptr;
  auto* c = new (at) ListCommand();
  c->eventCount = eventCount;
  return c;
}

void commitListCommand(ListCommand* command) { threadrecords::commit(threadrecords::Channel::replay, command); }

Record listCommandRecord(const ListCommand& command) {
  Record r;
  r.seq = command.seq;
  r.thread = command.thread;
  r.function = command.function;
  r.ticks = command.ticks;
  setListCommand(r.fields(), command);
  return r;
}

void notReplayed(std::atomic<bool>& once, const char* reason) {
  static std::atomic<bool> told{false};  // one line however many runtimes say it
  if (!enabled() || once.exchange(true, std::memory_order_relaxed) || told.exchange(true)) return;
  if (!config().quiet) logLine("--mode=replay: %s; the capture's replay stream holds no work to replay", reason);
  Record r;
  r.seq = nextSeq();
  r.thread = currentThreadId();
  r.fields().initUnsupported().setReason(reason);
  r.ticks = nowTicks();
  add(std::move(r));
}

bool retract(uint64_t seq) {
  Stream& s = stream();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = std::find_if(s.records.rbegin(), s.records.rend(), [&](const Record& r) { return r.seq == seq; });
  if (it == s.records.rend()) return false;
  s.records.erase(std::next(it).base());
  return true;
}

format::Hash128 keepBlob(const void* data, size_t size) {
  Stream& s = stream();
  auto* bytes = static_cast<const uint8_t*>(data);
  Stream::Recent& recent = s.recent[(reinterpret_cast<uintptr_t>(data) >> 12) % std::size(s.recent)];
  bool expectNew;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    expectNew = recent.address == reinterpret_cast<uintptr_t>(data) && recent.size == size && recent.wasNew;
  }
  if (!expectNew) {
    // Most likely bytes the file holds (or will) already: one pass to hash
    // them, no copy.
    format::Hash128 hash = format::contentHash(data, size);
    std::lock_guard<std::mutex> lock(s.mu);
    bool isNew = !s.known.count(hash);
    recent = {reinterpret_cast<uintptr_t>(data), size, isNew};
    if (!isNew) return hash;
  }
  // New bytes: copy them, hashing the copy. The device or another thread may
  // be writing this memory now (shared allocations under asynchronous work);
  // the record must name the bytes the file holds, and the file names a blob by
  // the hash of what it wrote.
  {
    std::unique_lock<std::mutex> lock(s.mu);
    reserve(s, lock, capacityFor(size));
  }
  KeptBlob b = takeBuffer(s, size);
  copyAndHash(b, bytes);
  format::Hash128 hash = b.hash;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    recent = {reinterpret_cast<uintptr_t>(data), size, true};
    if (s.known.insert(hash).second) {
      s.blobs.push_back(std::move(b));
      return hash;
    }
    recent.wasNew = false;
  }
  giveBack(s, std::move(b));  // the same bytes as a blob kept already
  return hash;
}

void scopeMarker(bool begin, const std::string& name, uint32_t thread) { add(marker(begin, name, thread)); }

void dispatchesStarting(uint64_t first, uint64_t count, uint32_t thread) {
  for (const auto& scope : config().scopes)
    if (scope.first >= first && scope.first - first < count) add(marker(true, scope.name, thread));
}

void dispatchesDone(uint64_t first, uint64_t count, uint32_t thread) {
  for (const auto& scope : config().scopes)
    if (scope.last >= first && scope.last - first < count) add(marker(false, scope.name, thread));
}

}  // namespace gtap::core::replay
