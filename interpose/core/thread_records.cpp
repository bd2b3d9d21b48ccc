#include "thread_records.h"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <new>

#include "internal_error.h"

namespace gtap::core::threadrecords {

namespace {

constexpr uint32_t kBlockBytes = 256 * 1024;

struct Block {
  std::atomic<uint32_t> committed{0};
  std::atomic<Block*> next{nullptr};
  uint32_t capacity = 0;
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
};
static_assert(sizeof(Block) % 8 == 0);

// One thread's records on one channel. The producer appends to `current`;
// the writer reads from `head`. A buffer whose thread exited is drained, then
// handed to the next new thread, which goes on writing in the same chain of
// blocks.
struct Buffer {
  // Producer.
  Block* current = nullptr;
  uint32_t used = 0;
  // Writer.
  Block* head = nullptr;
  uint32_t consumed = 0;
  // 0 in use, 1 its thread exited, 2 drained and free for a new thread.
  std::atomic<int> state{0};
  Buffer* next = nullptr;  // the registry, a list that only grows
};

std::atomic<Buffer*> g_buffers[kChannels];
std::mutex g_poolLock;  // the free blocks: once per block, never per record
Block* g_freeBlocks = nullptr;
pthread_key_t g_exitKeys[kChannels];
pthread_once_t g_keyOnce = PTHREAD_ONCE_INIT;

__thread Buffer* t_buffers[kChannels] __attribute__((tls_model("initial-exec"))) = {};

Block* newBlock(uint32_t atLeast) {
  if (atLeast <= kBlockBytes) {
    std::lock_guard<std::mutex> lock(g_poolLock);
    if (Block* b = g_freeBlocks) {
      g_freeBlocks = b->next.load(std::memory_order_relaxed);
      b->committed.store(0, std::memory_order_relaxed);
      b->next.store(nullptr, std::memory_order_relaxed);
      return b;
    }
  }
  uint32_t capacity = atLeast <= kBlockBytes ? kBlockBytes : atLeast;
  void* memory = ::operator new(sizeof(Block) + capacity, std::align_val_t(alignof(Block)));
  Block* b = new (memory) Block();
  b->capacity = capacity;
  return b;
}

void freeBlock(Block* b) {
  if (b->capacity != kBlockBytes) {
    b->~Block();
    ::operator delete(b, std::align_val_t(alignof(Block)));
    return;
  }
  std::lock_guard<std::mutex> lock(g_poolLock);
  b->next.store(g_freeBlocks, std::memory_order_relaxed);
  g_freeBlocks = b;
}

void threadExited(void* buffer) { static_cast<Buffer*>(buffer)->state.store(1, std::memory_order_release); }

// The pool's lock is held across a fork: a child must not find it held by a
// thread it does not have (the writer giving blocks back, another thread
// taking one).
void beforeFork() { g_poolLock.lock(); }
void afterForkParent() { g_poolLock.unlock(); }

void afterForkChild() {
  g_poolLock.unlock();
  // The child's only thread is the one that forked: every other buffer's
  // thread is gone, and the parent's records are the parent's file's.
  for (unsigned c = 0; c < kChannels; ++c) {
    for (Buffer* b = g_buffers[c].load(std::memory_order_acquire); b; b = b->next) {
      if (b->current) {
        b->head = b->current;
        b->consumed = b->current->committed.load(std::memory_order_relaxed);
      }
      if (b != t_buffers[c] && b->state.load() == 0) b->state.store(1);
    }
  }
}

void makeKeys() {
  for (unsigned c = 0; c < kChannels; ++c) pthread_key_create(&g_exitKeys[c], &threadExited);
  pthread_atfork(&beforeFork, &afterForkParent, &afterForkChild);
}

Buffer* threadBuffer(unsigned c) {
  if (Buffer* b = t_buffers[c]) return b;
  pthread_once(&g_keyOnce, &makeKeys);
  Buffer* b = nullptr;
  for (Buffer* r = g_buffers[c].load(std::memory_order_acquire); r && !b; r = r->next) {
    int drained = 2;
    if (r->state.compare_exchange_strong(drained, 0)) b = r;
  }
  if (!b) {
    b = new Buffer();
    b->current = b->head = newBlock(kBlockBytes);
    Buffer* top = g_buffers[c].load(std::memory_order_relaxed);
    do b->next = top;
    while (!g_buffers[c].compare_exchange_weak(top, b, std::memory_order_release, std::memory_order_relaxed));
  }
  pthread_setspecific(g_exitKeys[c], b);
  t_buffers[c] = b;
  return b;
}

constexpr uint64_t roundUp8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// Before each record in a block: whether it stands.
enum : uint32_t { kKept = 0, kPending = 1, kDropped = 2 };
struct Prefix {
  std::atomic<uint32_t> state{kKept};
  uint32_t size = 0;  // the prefix and the record
};
static_assert(sizeof(Prefix) == 8);
Prefix* prefixOf(void* record) { return static_cast<Prefix*>(record) - 1; }

}  // namespace

void* begin(Channel channel, uint64_t bytes) {
  if (bytes > (uint64_t{1} << 30)) return nullptr;
  uint32_t size = static_cast<uint32_t>(roundUp8(sizeof(Prefix) + bytes));
  Buffer* buffer;
  try {
    buffer = threadBuffer(static_cast<unsigned>(channel));
    if (buffer->used + size > buffer->current->capacity) {
      Block* b = newBlock(size);
      buffer->current->next.store(b, std::memory_order_release);
      buffer->current = b;
      buffer->used = 0;
    }
  } GTAP_CATCH_INTERNAL {
    stopAfterInternalError("a thread's record buffer");
    return nullptr;
  }
  auto* prefix = new (buffer->current->data() + buffer->used) Prefix();
  prefix->size = size;
  return prefix + 1;
}

void commit(Channel channel, void* record) {
  Buffer* buffer = t_buffers[static_cast<unsigned>(channel)];
  buffer->used += prefixOf(record)->size;
  buffer->current->committed.store(buffer->used, std::memory_order_release);
}

void commitPending(Channel channel, void* record) {
  prefixOf(record)->state.store(kPending, std::memory_order_relaxed);
  commit(channel, record);
}

void settle(void* record, bool keep) {
  prefixOf(record)->state.store(keep ? kKept : kDropped, std::memory_order_release);
}

void drain(Channel channel, std::vector<const void*>& out, std::vector<void*>& done) {
  for (Buffer* b = g_buffers[static_cast<unsigned>(channel)].load(std::memory_order_acquire); b; b = b->next) {
    if (b->state.load(std::memory_order_acquire) == 2) continue;
    bool exited = b->state.load(std::memory_order_acquire) == 1;
    for (;;) {
      // The next block first: once it is linked, the producer is done with this one.
      Block* next = b->head->next.load(std::memory_order_acquire);
      uint32_t committed = b->head->committed.load(std::memory_order_acquire);
      bool waiting = false;
      while (b->consumed < committed) {
        auto* prefix = reinterpret_cast<Prefix*>(b->head->data() + b->consumed);
        uint32_t state = prefix->state.load(std::memory_order_acquire);
        if (state == kPending) {
          waiting = true;  // its call is still running: the rest waits for the next flush
          break;
        }
        b->consumed += prefix->size;
        if (state != kDropped) out.push_back(prefix + 1);
      }
      if (waiting || !next) break;
      done.push_back(b->head);
      b->head = next;
      b->consumed = 0;
    }
    // Read to its end after its thread exited: free for the next new thread
    // (which appends after what was read: the records stay where they are).
    if (exited && !b->head->next.load() && b->consumed == b->head->committed.load()) b->state.store(2, std::memory_order_release);
  }
}

void release(std::vector<void*>& done) {
  for (void* b : done) freeBlock(static_cast<Block*>(b));
  done.clear();
}

}  // namespace gtap::core::threadrecords
