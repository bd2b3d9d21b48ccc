// hsa_amd_memory_async_copy: copies run on one worker thread, in submission
// order (like a DMA engine's queue), each after its dependency signals reach
// 0; then the completion signal is decremented.
#include "agent.h"
#include "api.h"
#include "clock.h"
#include "profiling.h"
#include "runtime.h"
#include "signal.h"

#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace sim_hsa {

namespace {

struct CopyJob {
  void* dst;
  const void* src;
  size_t size;
  std::vector<hsa_signal_t> dependencies;
  hsa_signal_t completion;
  const Agent* timer;  // whose clock stamps the copy: the GPU if it takes part
  bool profiled;
};

struct State {
  std::mutex lock;
  std::deque<CopyJob> jobs;
  std::thread thread;
  bool stop = false;
  futex::Epoch work;
};

State& state() {
  static auto* s = new State;  // never destroyed: the worker may outlive exit
  return *s;
}

bool stopping(State& s) {
  std::lock_guard<std::mutex> lock(s.lock);
  return s.stop;
}

void runJob(State& s, const CopyJob& job) {
  auto satisfied = [&] {
    if (stopping(s)) return true;
    for (hsa_signal_t d : job.dependencies) {
      Signal* dep = toSignal(d);
      if (dep != nullptr && loadValue(dep, std::memory_order_acquire) != 0) return false;
    }
    return true;
  };
  futex::waitUntil(anySignalChanged(), UINT64_MAX, satisfied);
  if (stopping(s)) return;
  const bool device = isGpu(job.timer);
  uint64_t start = device ? clock::deviceTicks() : clock::systemNs();
  std::memcpy(job.dst, job.src, job.size);
  uint64_t end = device ? clock::deviceTicks() : clock::systemNs();
  Signal* completion = toSignal(job.completion);
  if (completion == nullptr) return;
  if (job.profiled) {
    // Raw times in the signal, as ROCr keeps them; translated when queried.
    completion->abi.start_ts = start;
    completion->abi.end_ts = end;
    completion->copy_agent.store(job.timer, std::memory_order_relaxed);
  }
  subtractValue(completion, 1, std::memory_order_release);
}

void run() {
  State& s = state();
  for (;;) {
    CopyJob job;
    auto ready = [&] {
      std::lock_guard<std::mutex> lock(s.lock);
      if (s.stop) return true;
      if (s.jobs.empty()) return false;
      job = std::move(s.jobs.front());
      s.jobs.pop_front();
      return true;
    };
    futex::waitUntil(s.work, UINT64_MAX, ready);
    if (stopping(s)) return;
    runJob(s, job);
  }
}

}  // namespace

hsa_status_t hsa_amd_memory_async_copy(void* dst, hsa_agent_t dst_agent, const void* src, hsa_agent_t src_agent,
                                       size_t size, uint32_t num_dep_signals, const hsa_signal_t* dep_signals,
                                       hsa_signal_t completion_signal) {
  SIM_OPEN();
  SIM_CHECK(dst != nullptr && src != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  const Agent* dstAgent = toAgent(dst_agent);
  const Agent* srcAgent = toAgent(src_agent);
  SIM_CHECK(dstAgent != nullptr && srcAgent != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_CHECK(toSignal(completion_signal) != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  SIM_CHECK(num_dep_signals == 0 || dep_signals != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  for (uint32_t i = 0; i < num_dep_signals; ++i) {
    SIM_CHECK(toSignal(dep_signals[i]) != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  }
  SIM_TRY
  CopyJob job{dst, src, size, {dep_signals, dep_signals + num_dep_signals}, completion_signal,
              isGpu(dstAgent) || isGpu(srcAgent) ? &gpuAgent() : &cpuAgent(), asyncCopyProfilingEnabled()};
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.lock);
    if (!s.thread.joinable()) {
      s.stop = false;
      s.thread = std::thread(run);
    }
    s.jobs.push_back(std::move(job));
  }
  s.work.bump();
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

void stopCopyEngine() {
  State& s = state();
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(s.lock);
    s.stop = true;
    s.jobs.clear();
    thread = std::move(s.thread);
  }
  s.work.bump();
  anySignalChanged().bump();  // a copy waiting on its dependencies gives up
  if (thread.joinable()) thread.join();
}

}  // namespace sim_hsa
