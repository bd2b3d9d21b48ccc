#include "replay_stream.h"

#include <capnp/message.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_set>

#include "chunk_producer.h"
#include "clock.h"
#include "config.h"
#include "functions.h"
#include "log.h"
#include "session.h"
#include "signals.h"

namespace gtap::core::replay {

namespace {

struct Stream {
  std::mutex mu;
  std::vector<Record> records;
  std::vector<std::pair<format::Hash128, std::vector<uint8_t>>> blobs;  // kept, not yet written
  std::unordered_set<format::Hash128, format::Hash128Hasher> known;    // written or kept
  uint32_t signalScopesSeen = 0;
  std::unordered_set<uint32_t> functionsDefined;  // writer thread only
};

Stream& stream() {
  static Stream* s = new Stream();  // outlives static destructors: calls may come after them
  return *s;
}

std::atomic<uint64_t> g_seq{1};
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

void produce(ChunkSink& sink, bool) {
  if (!enabled()) return;
  Stream& s = stream();
  std::vector<Record> records;
  std::vector<std::pair<format::Hash128, std::vector<uint8_t>>> blobs;
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
  for (const Record& r : records)
    if (r.function != kNoFunction && s.functionsDefined.insert(r.function).second) newFunctions.push_back(r.function);
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
  // Kept bytes were hashed as copied (keepBlob): not hashed again here.
  for (auto& [hash, bytes] : blobs) sink.writeBlob(bytes.data(), bytes.size(), hash);
  blobs.clear();
  // Bounded chunks: a chunk of a few thousand records compresses well and a
  // damaged one loses little.
  constexpr size_t kPerChunk = 4096;
  for (size_t first = 0; first < records.size(); first += kPerChunk) {
    size_t n = std::min(kPerChunk, records.size() - first);
    capnp::MallocMessageBuilder message;
    auto list = message.initRoot<schema::Replay>().initRecords(static_cast<unsigned>(n));
    for (size_t i = 0; i < n; ++i) {
      Record& r = records[first + i];
      auto b = list[static_cast<unsigned>(i)];
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

void add(Record record) {
  Stream& s = stream();
  uint32_t toggles = g_signalToggles.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(s.mu);
  while (s.signalScopesSeen != toggles) {
    ++s.signalScopesSeen;
    s.records.push_back(marker(s.signalScopesSeen & 1, "signal", record.thread));
  }
  s.records.push_back(std::move(record));
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
  format::Hash128 hash = format::contentHash(data, size);
  Stream& s = stream();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.known.count(hash)) return hash;  // bytes the file holds (or will) under that hash
  }
  // New bytes: copy them, then hash the copy. The device or another thread may
  // be writing this memory now (shared allocations under asynchronous work);
  // the record must name the bytes the file holds, and the file names a blob by
  // the hash of what it wrote.
  auto* bytes = static_cast<const uint8_t*>(data);
  std::vector<uint8_t> copy(bytes, bytes + size);
  hash = format::contentHash(copy.data(), copy.size());
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.known.insert(hash).second) s.blobs.emplace_back(hash, std::move(copy));
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
