// A worker thread that runs submitted command streams in order: the
// "hardware" behind a command queue or an immediate command list.
#pragma once

#include "commands.h"

#include <deque>
#include <memory>
#include <thread>
#include <vector>

namespace sim {

class Engine {
 public:
  using Streams = std::vector<std::shared_ptr<const CommandStream>>;

  Engine();  // starts the thread; throws std::system_error if it cannot
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues the streams (and the fence to signal after them); returns the
  // batch's sequence number.
  uint64_t submit(Streams streams, std::shared_ptr<Fence> fence);
  // Waits until batch `seq` has completed (Level Zero timeout semantics).
  ze_result_t wait(uint64_t seq, uint64_t timeout_ns);
  // Waits until everything submitted so far has completed.
  ze_result_t waitIdle(uint64_t timeout_ns);
  // Finishes queued work (event waits no longer block) and joins the thread.
  void shutdown();

 private:
  struct Batch {
    Streams streams;
    std::shared_ptr<Fence> fence;
    std::vector<std::vector<Arms>> arms;  // per stream, per command
  };
  void run();

  // Guarded by sync::mutex().
  std::deque<Batch> pending_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sim
