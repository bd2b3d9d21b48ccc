// A worker thread that runs submitted command streams in order: the
// "hardware" behind a command queue or an immediate command list.
//
// With GTAP_SIM_INLINE set (not "0"), work runs on the thread that submits
// it, before submit returns, while nothing is queued ahead of it and each
// command's wait events are already signaled; from the first command that
// would have to wait, the rest goes to the worker thread, started then.
// Events, fences and timestamps behave the same either way.
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

  // `copyOnly`: an engine of a queue group that runs no kernels (for Sysman's
  // engine groups). Starts the thread (inline: when first needed); throws std::system_error if it cannot
  explicit Engine(bool copyOnly);
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
    size_t stream = 0, command = 0;       // where to carry on
  };
  void run();
  // Runs `batch` from where it stands until a command would wait; true when it finished.
  bool runInline(Batch& batch);
  void finishLocked(Batch& batch);
  void startWorkerLocked();

  // Guarded by sync::mutex().
  std::deque<Batch> pending_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  bool stopping_ = false;
  bool running_ = false;  // a submitting thread is running work inline
  // Used by the one thread running this engine's work (handed over under sync::mutex()).
  WorkTotals totals_;
  const bool inline_;
  std::thread thread_;
};

}  // namespace sim
