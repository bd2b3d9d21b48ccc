#include "engine.h"

#include "sync.h"

#include <pthread.h>

namespace sim {

Engine::Engine() : thread_([this] { run(); }) {}

Engine::~Engine() { shutdown(); }

uint64_t Engine::submit(Streams streams, std::shared_ptr<Fence> fence) {
  std::lock_guard lock(sync::mutex());
  // Counter-based events are armed in submission order: a command waits for
  // the arm its wait event had when it was submitted, not a later one.
  std::vector<std::vector<Arms>> arms;
  arms.reserve(streams.size());
  for (const auto& stream : streams) {
    auto& perCommand = arms.emplace_back();
    perCommand.reserve(stream->size());
    for (const Command& c : *stream) perCommand.push_back(events::armLocked(c));
  }
  pending_.push_back(Batch{std::move(streams), std::move(fence), std::move(arms)});
  uint64_t seq = ++submitted_;
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
    sync::cv().wait(lock, [&] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping, and everything queued has run
    Batch batch = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    for (size_t s = 0; s < batch.streams.size(); ++s) {
      const CommandStream& stream = *batch.streams[s];
      for (size_t i = 0; i < stream.size(); ++i) execute(stream[i], batch.arms[s][i], &stopping_);
    }
    batch.streams.clear();  // drop kernels and modules before reporting completion
    lock.lock();
    if (batch.fence) batch.fence->signaled = true;
    ++completed_;
    sync::notifyAll();
  }
}

}  // namespace sim
