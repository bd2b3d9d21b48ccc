#include "sync.h"

namespace sim::sync {

namespace {

// Never destroyed, so worker threads still running during process exit never
// touch a destroyed mutex.
std::mutex*& mutexSlot() {
  static std::mutex* m = new std::mutex;
  return m;
}

std::condition_variable*& cvSlot() {
  static std::condition_variable* c = new std::condition_variable;
  return c;
}

}  // namespace

std::mutex& mutex() { return *mutexSlot(); }
std::condition_variable& cv() { return *cvSlot(); }

void replaceAfterFork() {
  // The parent's lock was taken before the fork and is not released in the
  // child. Its condition variable remembers waiters that were threads of the
  // parent; they never wake in the child, and a broadcast would wait for them
  // forever. The child gets fresh ones; the old ones are abandoned.
  mutexSlot() = new std::mutex;
  cvSlot() = new std::condition_variable;
}

}  // namespace sim::sync
