// Named ranges from the program (gtap_range_push / gtap_range_pop, as NVTX
// and ITT users mark their code). On the program's thread a push or pop is a
// time stamp and the name's bytes appended to the thread's own buffer (no
// lock, no allocation once the thread has a buffer); the writer pairs them
// per thread and writes each range once closed, as a `ranges` chunk
// (docs/format.md). A range begun while recording was paused is not written
// (phases.h); one still open at the last flush is closed there and marked.
#include <atomic>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "chunk_producer.h"
#include "clock.h"
#include "phases.h"
#include "thread_records.h"

namespace gtap::core {
namespace {

// Longer names are cut here: a range name is a label, not a payload.
constexpr uint32_t kMaxNameBytes = 1024;

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

void record(bool push, const char* name, uint32_t depth) {
  uint32_t thread = currentThreadId();
  if (thread == ~0u) return;  // no session records (GTAP_ENABLE=0, or recording stopped)
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
  std::vector<std::string> names;
  std::unordered_map<std::string, uint32_t> nameIds;
  std::unordered_map<uint32_t, std::vector<Open>> open;  // by thread
  std::vector<Closed> closed;
  std::vector<const void*> published;
  std::vector<void*> done;
  const ChunkSink* lastSink = nullptr;
  uint64_t unmatchedWritten = 0;

  uint32_t nameId(const RangeRecord& r) {
    std::string name(r.name, r.nameBytes);
    auto [it, fresh] = nameIds.try_emplace(std::move(name), static_cast<uint32_t>(names.size()));
    if (fresh) names.push_back(it->first);
    return it->second;
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
    if (&sink != lastSink) {  // a forked child's new file
      lastSink = &sink;
      unmatchedWritten = 0;
    }
    published.clear();
    threadrecords::drain(threadrecords::Channel::ranges, published, done);
    for (const void* r : published) take(*static_cast<const RangeRecord*>(r));
    threadrecords::release(done);
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
    std::vector<const Closed*> kept;
    for (const Closed& c : closed)
      if (!phases::droppedAt(c.beginTicks)) kept.push_back(&c);
    if (kept.empty() && unmatched == unmatchedWritten) {
      closed.clear();
      return;
    }
    // The chunk names only what its ranges use.
    std::unordered_map<uint32_t, uint32_t> chunkName;
    std::vector<uint32_t> order;
    for (const Closed* c : kept)
      if (chunkName.try_emplace(c->name, static_cast<uint32_t>(order.size())).second) order.push_back(c->name);
    capnp::MallocMessageBuilder m;
    auto root = m.initRoot<schema::Ranges>();
    auto nameList = root.initNames(static_cast<unsigned>(order.size()));
    for (unsigned i = 0; i < order.size(); ++i) nameList.set(i, names[order[i]]);
    auto list = root.initRanges(static_cast<unsigned>(kept.size()));
    for (unsigned i = 0; i < kept.size(); ++i) {
      const Closed& c = *kept[i];
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
    closed.clear();
  }
};

void produceRanges(ChunkSink& sink, bool final) {
  static RangeWriter& writer = *new RangeWriter;
  writer.produce(sink, final);
}

__attribute__((constructor(105))) void registerRanges() { registerChunkProducer(&produceRanges); }

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
