// Named ranges from the program (gtap_range_push / gtap_range_pop, as NVTX
// and ITT users mark their code). On the program's thread a push or pop is a
// time stamp and the name's bytes appended to the thread's own buffer (no
// lock, no allocation once the thread has a buffer); the writer pairs them
// per thread and writes each range once closed, as a `ranges` chunk
// (docs/format.md). A range begun while recording was paused is not written
// (phases.h); one still open at the last flush is closed there and marked.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "chunk_producer.h"
#include "clock.h"
#include "phases.h"
#include "session.h"
#include "thread_records.h"

namespace gtap::core {
namespace {

// Longer names are cut here: a range name is a label, not a payload.
constexpr uint32_t kMaxNameBytes = 1024;
// Records the writer has not taken yet, over every thread. Past this a
// thread pushing or popping waits for the writer (the program slows down, no
// range is lost), as a thread making API calls does when their buffers are
// full: memory stays bounded however fast a program marks ranges.
constexpr int64_t kMaxPendingRecords = int64_t{1} << 20;
// Ranges per chunk: a reader decodes a chunk whole.
constexpr size_t kRangesPerChunk = 65536;

struct RangeRecord {
  uint64_t ticks;
  uint32_t thread;     // gtap thread id
  uint32_t depth;      // ranges open on the thread around this push (a push)
  uint16_t nameBytes;  // the name follows the record (a push)
  bool push;
  char name[];
};

// Ranges the calling thread has open, whether or not recorded: a pop with
// none open is the program's mistake, counted and otherwise ignored.
__thread uint32_t t_openRanges __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<uint64_t> g_unmatchedPops{0};
std::atomic<int64_t> g_pendingRecords{0};
std::atomic<bool> g_forked{false};  // set in a forked child, for the writer

// False when the writer is gone (the process is ending, or recording stopped):
// the record is then not made.
bool roomForRecord() {
  if (__builtin_expect(g_pendingRecords.load(std::memory_order_relaxed) < kMaxPendingRecords, 1)) return true;
  for (unsigned spins = 0; g_pendingRecords.load(std::memory_order_relaxed) >= kMaxPendingRecords; ++spins) {
    if (!wakeWriter() || spins > 50000) return false;  // at most ~10 s
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

void record(bool push, const char* name, uint32_t depth) {
  uint32_t thread = currentThreadId();
  if (thread == ~0u) return;  // no session records (GTAP_ENABLE=0, or recording stopped)
  if (!roomForRecord()) return;
  size_t bytes = push ? strnlen(name, kMaxNameBytes) : 0;
  void* at = threadrecords::begin(threadrecords::Channel::ranges, sizeof(RangeRecord) + bytes);
  if (!at) return;
  auto* r = static_cast<RangeRecord*>(at);
  r->ticks = nowTicks();
  r->thread = thread;
  r->depth = depth;
  r->nameBytes = static_cast<uint16_t>(bytes);
  r->push = push;
  if (bytes) std::memcpy(r->name, name, bytes);
  threadrecords::commit(threadrecords::Channel::ranges, r);
  g_pendingRecords.fetch_add(1, std::memory_order_relaxed);
}

// Writer thread only; never destroyed (the last flush may come after static
// destructors).
struct RangeWriter {
  struct Open {
    uint64_t ticks;
    uint32_t name;  // into names
    uint32_t depth;
  };
  struct Closed {
    uint32_t thread, name, depth;
    uint64_t beginTicks, endTicks;
    bool openAtEnd;
  };
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const { return std::hash<std::string_view>()(v); }
  };
  std::vector<std::string> names;
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> nameIds;
  std::unordered_map<uint32_t, std::vector<Open>> open;  // by thread
  std::vector<Closed> closed;
  std::vector<const Closed*> kept;  // closed, less those begun while paused
  std::vector<const void*> published;
  std::vector<void*> done;
  uint64_t unmatchedWritten = 0;

  uint32_t nameId(const RangeRecord& r) {
    std::string_view name(r.name, r.nameBytes);
    if (auto it = nameIds.find(name); it != nameIds.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(names.size());
    names.emplace_back(name);
    nameIds.emplace(names.back(), id);
    return id;
  }

  void take(const RangeRecord& r) {
    std::vector<Open>& stack = open[r.thread];
    if (r.push) {
      stack.push_back({r.ticks, nameId(r), r.depth});
    } else if (!stack.empty()) {  // else its push was made before this session recorded
      closed.push_back({r.thread, stack.back().name, stack.back().depth, stack.back().ticks, r.ticks, false});
      stack.pop_back();
    }
  }

  void produce(ChunkSink& sink, bool final) {
    if (g_forked.exchange(false)) {
      // A forked child's file holds the ranges the child pushes: the ones
      // its parent had open are the parent's file's.
      open.clear();
      closed.clear();
      unmatchedWritten = 0;
    }
    published.clear();
    threadrecords::drain(threadrecords::Channel::ranges, published, done);
    for (const void* r : published) take(*static_cast<const RangeRecord*>(r));
    threadrecords::release(done);
    g_pendingRecords.fetch_sub(static_cast<int64_t>(published.size()), std::memory_order_relaxed);
    if (final) {
      uint64_t end = nowTicks();
      for (auto& [thread, stack] : open) {
        for (const Open& o : stack) closed.push_back({thread, o.name, o.depth, o.ticks, end, true});
        stack.clear();
      }
    }
    write(sink);
  }

  void write(ChunkSink& sink) {
    uint64_t unmatched = g_unmatchedPops.load(std::memory_order_relaxed);
    kept.clear();
    for (const Closed& c : closed)
      if (!phases::droppedAt(c.beginTicks)) kept.push_back(&c);
    if (!kept.empty() || unmatched != unmatchedWritten) {
      size_t from = 0;
      do {
        size_t count = std::min(kept.size() - from, kRangesPerChunk);
        writeChunk(sink, std::span<const Closed* const>(kept.data() + from, count), unmatched);
        from += count;
      } while (from < kept.size());
    }
    kept.clear();
    closed.clear();
  }

  void writeChunk(ChunkSink& sink, std::span<const Closed* const> rows, uint64_t unmatched) {
    // The chunk names only what its ranges use.
    std::unordered_map<uint32_t, uint32_t> chunkName;
    std::vector<uint32_t> order;
    for (const Closed* c : rows)
      if (chunkName.try_emplace(c->name, static_cast<uint32_t>(order.size())).second) order.push_back(c->name);
    capnp::MallocMessageBuilder m;
    auto root = m.initRoot<schema::Ranges>();
    auto nameList = root.initNames(static_cast<unsigned>(order.size()));
    for (unsigned i = 0; i < order.size(); ++i) nameList.set(i, names[order[i]]);
    auto list = root.initRanges(static_cast<unsigned>(rows.size()));
    for (unsigned i = 0; i < rows.size(); ++i) {
      const Closed& c = *rows[i];
      auto row = list[i];
      row.setThread(c.thread);
      row.setName(chunkName[c.name]);
      row.setBeginNs(sink.toHostNs(c.beginTicks));
      row.setEndNs(sink.toHostNs(c.endTicks));
      row.setDepth(c.depth);
      row.setOpenAtEnd(c.openAtEnd);
    }
    root.setUnmatchedPops(unmatched);
    if (sink.write(schema::ChunkKind::RANGES, m)) unmatchedWritten = unmatched;
  }
};

void produceRanges(ChunkSink& sink, bool final) {
  static RangeWriter& writer = *new RangeWriter;
  writer.produce(sink, final);
}

// The child's only thread is the one that forked; the parent's records it
// could not read are dropped (thread_records.cpp), and so is their count.
// The thread's count of open ranges stays: popping one its parent pushed is
// no mistake, though the child's file does not hold that range.
void afterForkChild() {
  g_pendingRecords.store(0, std::memory_order_relaxed);
  g_unmatchedPops.store(0, std::memory_order_relaxed);
  g_forked.store(true);
}

__attribute__((constructor(105))) void registerRanges() {
  registerChunkProducer(&produceRanges);
  pthread_atfork(nullptr, nullptr, &afterForkChild);
}

}  // namespace
}  // namespace gtap::core

extern "C" {

// Opens a range named NAME on the calling thread, inside any it has open.
__attribute__((visibility("default"))) void gtap_range_push(const char* name) {
  uint32_t depth = gtap::core::t_openRanges++;
  gtap::core::record(true, name ? name : "", depth);
}

// Closes the calling thread's innermost open range; with none open, counts
// the mistake and does nothing else.
__attribute__((visibility("default"))) void gtap_range_pop(void) {
  if (!gtap::core::t_openRanges) {
    gtap::core::g_unmatchedPops.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  --gtap::core::t_openRanges;
  gtap::core::record(false, nullptr, 0);
}

}  // extern "C"
