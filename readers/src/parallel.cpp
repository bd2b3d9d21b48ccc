#include "gtap/readers/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
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

void forEachInParallel(size_t count, const std::function<void(size_t)>& work) {
  size_t threads = std::min<size_t>(readJobs(), count);
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) work(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(count);
  auto run = [&] {
    for (size_t i; (i = next.fetch_add(1)) < count;) {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
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

}  // namespace gtap::readers
