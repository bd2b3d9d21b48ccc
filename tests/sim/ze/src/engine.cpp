#include "engine.h"

#include "sync.h"

#include <pthread.h>

#include <cstdlib>
#include <cstring>

namespace sim {

namespace {
bool inlineMode() {
  static const bool on = [] {
    const char* v = std::getenv("GTAP_SIM_INLINE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}
}  // namespace

Engine::Engine(bool copyOnly) : inline_(inlineMode()) {
  totals_.copyEngine = copyOnly;
  if (!inline_) thread_ = std::thread([this] { run(); });
}

void Engine::startWorkerLocked() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void Engine::finishLocked(Batch& batch) {
  if (batch.fence) batch.fence->signaled = true;
  ++completed_;
  sync::notifyAll();
}

bool Engine::runInline(Batch& batch) {
  for (; batch.stream < batch.streams.size(); ++batch.stream, batch.command = 0) {
    const CommandStream& stream = *batch.streams[batch.stream];
    for (; batch.command < stream.size(); ++batch.command) {
      const Command& c = stream[batch.command];
      const Arms& arms = batch.arms[batch.stream][batch.command];
      if (!events::ready(c.waits, &arms.waits)) return false;
      execute(c, arms, &stopping_, totals_);
    }
  }
  batch.streams.clear();  // drop kernels and modules before reporting completion
  return true;
}

Engine::~Engine() { shutdown(); }

uint64_t Engine::submit(Streams streams, std::shared_ptr<Fence> fence) {
  std::unique_lock lock(sync::mutex());
  // Counter-based events are armed in submission order: a command waits for
  // the arm its wait event had when it was submitted, not a later one.
  std::vector<std::vector<Arms>> arms;
  arms.reserve(streams.size());
  for (const auto& stream : streams) {
    auto& perCommand = arms.emplace_back();
    perCommand.reserve(stream->size());
    for (const Command& c : *stream) perCommand.push_back(events::armLocked(c));
  }
  uint64_t seq = ++submitted_;
  Batch batch{std::move(streams), std::move(fence), std::move(arms)};
  if (inline_ && pending_.empty() && !running_ && !stopping_) {
    running_ = true;
    lock.unlock();
    bool done = runInline(batch);
    lock.lock();
    running_ = false;
    if (done) {
      finishLocked(batch);
    } else {
      pending_.push_front(std::move(batch));
      startWorkerLocked();
    }
    sync::notifyAll();
    return seq;
  }
  pending_.push_back(std::move(batch));
  if (inline_) startWorkerLocked();
  sync::notifyAll();
  return seq;
}

ze_result_t Engine::wait(uint64_t seq, uint64_t timeout_ns) {
  std::unique_lock lock(sync::mutex());
  return sync::waitFor(lock, timeout_ns, [&] { return completed_ >= seq; });
}

ze_result_t Engine::waitIdle(uint64_t timeout_ns) {
  std::unique_lock lock(sync::mutex());
  uint64_t target = submitted_;
  return sync::waitFor(lock, timeout_ns, [&] { return completed_ >= target; });
}

void Engine::shutdown() {
  {
    std::lock_guard lock(sync::mutex());
    stopping_ = true;
    sync::notifyAll();
  }
  if (thread_.joinable()) thread_.join();
}

void Engine::run() {
  pthread_setname_np(pthread_self(), "gtap-sim-ze");
  std::unique_lock lock(sync::mutex());
  for (;;) {
    // Inline work runs first: what is queued comes after it.
    sync::cv().wait(lock, [&] { return (stopping_ && !running_) || (!pending_.empty() && !running_); });
    if (pending_.empty()) return;  // stopping, and everything queued has run
    Batch batch = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    for (; batch.stream < batch.streams.size(); ++batch.stream, batch.command = 0) {
      const CommandStream& stream = *batch.streams[batch.stream];
      for (; batch.command < stream.size(); ++batch.command)
        execute(stream[batch.command], batch.arms[batch.stream][batch.command], &stopping_, totals_);
    }
    batch.streams.clear();  // drop kernels and modules before reporting completion
    lock.lock();
    finishLocked(batch);
  }
}

}  // namespace sim
