#include "gtap/readers/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gtap::readers {

namespace {
std::atomic<unsigned> configuredJobs{0};
}  // namespace

void setReadJobs(unsigned jobs) { configuredJobs.store(jobs); }

unsigned readJobs() {
  unsigned jobs = configuredJobs.load();
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  return jobs;
}

void forEachInParallel(size_t count, const std::function<void(size_t)>& work,
                       const std::function<void(size_t)>& inOrder) {
  size_t threads = std::min<size_t>(readJobs(), count);
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) {
      work(i);
      inOrder(i);
    }
    return;
  }
  const size_t window = 2 * threads;
  std::mutex mutex;
  std::condition_variable changed;
  size_t next = 0;       // the next index to work on
  size_t merged = 0;     // indices below have had inOrder (or failed)
  bool merging = false;  // a thread is running inOrder calls
  std::vector<char> done(count, 0);
  std::vector<std::exception_ptr> errors(count);
  auto run = [&] {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return next >= count || next < merged + window; });
      if (next >= count) break;
      size_t i = next++;
      lock.unlock();
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      lock.lock();
      done[i] = 1;
      if (merging) continue;  // the thread merging takes this one too
      merging = true;
      while (merged < count && done[merged]) {
        size_t m = merged;
        if (!errors[m]) {
          lock.unlock();
          try {
            inOrder(m);
          } catch (...) {
            errors[m] = std::current_exception();
          }
          lock.lock();
        }
        ++merged;
        changed.notify_all();
      }
      merging = false;
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

void forEachInParallel(size_t count, const std::function<void(size_t)>& work) {
  forEachInParallel(count, work, [](size_t) {});
}

}  // namespace gtap::readers
