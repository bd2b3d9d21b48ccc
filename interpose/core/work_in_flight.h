// Work that several threads count in parts at once, such as the workgroups of
// an IREE dispatch on a CPU driver's worker threads: the first part to begin
// makes the work, the end of its last part finishes it, and the finished work
// waits for the writer.
//
// A part's begin and end take no lock. Works in flight live in a fixed table
// of slots found by the hash of their key; a part finds its work's slot with
// a few atomic loads and counts its end with one compare-and-swap on the
// slot's state word, which also holds the slot's generation, so a count is
// never taken by a later work that reused the slot. Only making a work (once
// per work) and finishing it take the table's short spin lock: claims are
// serialised so that a key is never live in two slots. A full table (more
// works in flight at once than slots, or works whose parts never all end)
// keeps the rest in a map under the same lock, as before the table existed.
#pragma once

#include <sched.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#pragma GCC visibility push(hidden)
namespace gtap::core {

// Spins, then yields: threads that met on a mutex would sleep in the kernel
// and be woken, which costs more than the few operations it guards.
class SpinLock {
 public:
  void lock() {
    unsigned spins = 0;
    while (flag_.exchange(true, std::memory_order_acquire))
      while (flag_.load(std::memory_order_relaxed)) {
        if (++spins < 128)
          __builtin_ia32_pause();
        else
          sched_yield();
      }
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

// `Info` describes a work (trivially copyable); kSlots is a power of two.
template <class Info, size_t kSlots = 1024>
class WorkInFlight {
  static_assert((kSlots & (kSlots - 1)) == 0, "kSlots is a power of two");

 public:
  using Key = std::array<uint64_t, 3>;
  struct Finished {
    Key key;
    Info info;
    uint64_t parts;  // how many ended
    int64_t endNs;   // when the last one did
  };

  // Counts the beginning of a part of the work `key`. When the work is not in
  // flight, this part makes it: describe(Info&) sets what the work is and
  // returns how many parts it has.
  template <class Describe>
  void begin(const Key& key, Describe&& describe) {
    if (find(key).slot) return;
    std::lock_guard<SpinLock> lock(lock_);
    if (find(key).slot) return;  // made by another part meanwhile
    if (overflowUsed_.load(std::memory_order_relaxed) && overflow_.count(key)) return;
    size_t home = hash(key);
    for (size_t i = 0; i < kSlots; ++i) {
      Slot& s = slots_[(home + i) & (kSlots - 1)];
      uint64_t state = s.state.load(std::memory_order_relaxed);
      if (state & kLive) continue;
      // A reader that sees any of the key's new words sees the generation
      // the slot was freed with (a seqlock: this fence, the readers' acquire
      // fence before they read the state again).
      std::atomic_thread_fence(std::memory_order_release);
      for (size_t w = 0; w < 3; ++w) s.key[w].store(key[w], std::memory_order_relaxed);
      uint64_t parts = describe(s.info);
      s.parts = parts < kMaxParts ? parts : kMaxParts;
      if (i > maxProbe_.load(std::memory_order_relaxed)) maxProbe_.store(i, std::memory_order_release);
      s.state.store((state & kGenerationMask) | kLive, std::memory_order_release);
      return;
    }
    Overflowing& o = overflow_[key];
    o.parts = describe(o.info);
    overflowUsed_.store(true, std::memory_order_relaxed);
  }

  // Counts the end of a part begun with begin(); the end of the last makes
  // the work finished at `endNs`.
  void end(const Key& key, int64_t endNs) {
    for (;;) {
      Found f = find(key);
      if (!f.slot) break;
      uint64_t state = f.state;
      for (;;) {
        uint64_t next = state + kOnePart;
        if (f.slot->state.compare_exchange_weak(state, next, std::memory_order_acq_rel, std::memory_order_acquire)) {
          uint64_t ended = (next & kPartsMask) >> 1;
          if (ended < f.slot->parts) return;
          std::lock_guard<SpinLock> lock(lock_);
          finished_.push_back({key, f.slot->info, ended, endNs});
          // Freed with the next generation.
          f.slot->state.store(((next & kGenerationMask) + kOneGeneration) & kGenerationMask,
                              std::memory_order_release);
          return;
        }
        if ((state & kGenerationMask) != (f.state & kGenerationMask) || !(state & kLive)) break;  // reused: find again
      }
    }
    if (!overflowUsed_.load(std::memory_order_acquire)) return;  // never begun: nothing to count
    std::lock_guard<SpinLock> lock(lock_);
    auto it = overflow_.find(key);
    if (it == overflow_.end() || ++it->second.ended < it->second.parts) return;
    finished_.push_back({key, it->second.info, it->second.ended, endNs});
    overflow_.erase(it);
  }

  // Hands each finished work to take(const Finished&), in the order they
  // finished. One caller at a time (the HAL recorder drains under its mutex).
  template <class Take>
  void drain(Take&& take) {
    {
      std::lock_guard<SpinLock> lock(lock_);
      draining_.swap(finished_);  // both keep their room
    }
    for (const Finished& f : draining_) take(f);
    draining_.clear();
  }

  // Works in flight (for tests): live slots and overflowing ones.
  size_t inFlight() {
    std::lock_guard<SpinLock> lock(lock_);
    size_t n = overflow_.size();
    for (const Slot& s : slots_) n += (s.state.load(std::memory_order_relaxed) & kLive) != 0;
    return n;
  }

 private:
  // A slot's state word: the generation (bumped each time the slot is
  // freed), the parts ended so far, and whether a work is live in it.
  static constexpr uint64_t kLive = 1;
  static constexpr uint64_t kOnePart = 2;
  static constexpr unsigned kGenerationShift = 44;
  static constexpr uint64_t kPartsMask = ((uint64_t{1} << kGenerationShift) - 1) & ~kLive;
  static constexpr uint64_t kOneGeneration = uint64_t{1} << kGenerationShift;
  static constexpr uint64_t kGenerationMask = ~((uint64_t{1} << kGenerationShift) - 1);
  static constexpr uint64_t kMaxParts = (uint64_t{1} << (kGenerationShift - 1)) - 1;

  struct Slot {
    std::atomic<uint64_t> state{0};
    std::atomic<uint64_t> key[3]{};
    uint64_t parts = 0;  // written before the work is live, read by the part that ends it
    Info info{};
  };
  struct Found {
    Slot* slot = nullptr;
    uint64_t state = 0;
  };
  struct Overflowing {
    Info info{};
    uint64_t parts = 0, ended = 0;
  };

  static size_t hash(const Key& k) {
    uint64_t h = k[0] * 0x9e3779b97f4a7c15ull ^ k[1] * 0xc2b2ae3d27d4eb4full ^ k[2] * 0x165667b19e3779f9ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }

  // The live slot holding `key`, with the state it was read in.
  Found find(const Key& key) {
    size_t home = hash(key);
    size_t probes = maxProbe_.load(std::memory_order_acquire);
    for (size_t i = 0; i <= probes; ++i) {
      Slot& s = slots_[(home + i) & (kSlots - 1)];
      uint64_t state = s.state.load(std::memory_order_acquire);
      if (!(state & kLive)) continue;
      Key k;
      for (size_t w = 0; w < 3; ++w) k[w] = s.key[w].load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      // Freed and made again meanwhile: its key may be another's.
      if ((s.state.load(std::memory_order_relaxed) & kGenerationMask) != (state & kGenerationMask)) continue;
      if (k == key) return {&s, state};
    }
    return {};
  }

  Slot slots_[kSlots];
  std::atomic<size_t> maxProbe_{0};  // the farthest from its home slot a work was made
  SpinLock lock_;
  // Under lock_.
  std::vector<Finished> finished_, draining_;
  std::map<Key, Overflowing> overflow_;
  std::atomic<bool> overflowUsed_{false};
};

}  // namespace gtap::core
#pragma GCC visibility pop
