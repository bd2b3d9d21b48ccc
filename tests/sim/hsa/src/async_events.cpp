// The runtime's asynchronous event thread: hsa_amd_signal_async_handler and
// hsa_amd_async_function. Handlers are level-triggered as in ROCr: one that
// returns true stays registered and runs again whenever its condition holds.
#include "api.h"
#include "runtime.h"
#include "signal.h"

#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace sim_hsa {

namespace {

struct Handler {
  hsa_signal_t signal;
  hsa_signal_condition_t condition;
  hsa_signal_value_t value;
  hsa_amd_signal_handler handler;
  void* arg;
};

struct Function {
  void (*callback)(void*);
  void* arg;
};

struct State {
  std::mutex lock;
  std::vector<Handler> handlers;
  std::deque<Function> functions;
  std::thread thread;
  bool stop = false;
};

// Never destroyed: the thread may outlive static destruction at exit.
State& state() {
  static auto* s = new State;
  return *s;
}

void run() {
  State& s = state();
  for (;;) {
    std::vector<Function> functions;
    std::vector<std::pair<Handler, int64_t>> due;
    auto ready = [&] {
      std::lock_guard<std::mutex> lock(s.lock);
      if (s.stop) return true;
      functions.assign(s.functions.begin(), s.functions.end());
      s.functions.clear();
      // Handlers that are due leave the list while they run; those that
      // return true come back.
      for (auto it = s.handlers.begin(); it != s.handlers.end();) {
        Signal* signal = toSignal(it->signal);
        if (signal == nullptr) {
          it = s.handlers.erase(it);  // destroyed: nothing left to watch
          continue;
        }
        int64_t v = loadValue(signal, std::memory_order_acquire);
        if (conditionHolds(it->condition, v, it->value)) {
          due.emplace_back(*it, v);
          it = s.handlers.erase(it);
        } else {
          ++it;
        }
      }
      return !functions.empty() || !due.empty();
    };
    futex::waitUntil(anySignalChanged(), UINT64_MAX, ready);
    {
      std::lock_guard<std::mutex> lock(s.lock);
      if (s.stop) return;
    }
    for (const Function& f : functions) f.callback(f.arg);
    for (auto& [h, v] : due) {
      if (h.handler(v, h.arg)) {
        std::lock_guard<std::mutex> lock(s.lock);
        s.handlers.push_back(h);
      }
    }
  }
}

// Starts the thread on first use; false if it cannot be started.
bool ensureRunning(State& s) {
  if (s.thread.joinable()) return true;
  s.stop = false;
  try {
    s.thread = std::thread(run);
  } catch (...) {
    return false;
  }
  return true;
}

}  // namespace

hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t signal, hsa_signal_condition_t cond,
                                          hsa_signal_value_t value, hsa_amd_signal_handler handler, void* arg) {
  SIM_OPEN();
  SIM_CHECK(toSignal(signal) != nullptr, HSA_STATUS_ERROR_INVALID_SIGNAL);
  SIM_NOT_NULL(handler);
  SIM_CHECK(cond >= HSA_SIGNAL_CONDITION_EQ && cond <= HSA_SIGNAL_CONDITION_GTE, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  State& s = state();
  SIM_TRY
  {
    std::lock_guard<std::mutex> lock(s.lock);
    SIM_CHECK(ensureRunning(s), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    s.handlers.push_back({signal, cond, value, handler, arg});
  }
  anySignalChanged().bump();  // the thread re-checks its list
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

hsa_status_t hsa_amd_async_function(void (*callback)(void* arg), void* arg) {
  SIM_OPEN();
  SIM_NOT_NULL(callback);
  State& s = state();
  SIM_TRY
  {
    std::lock_guard<std::mutex> lock(s.lock);
    SIM_CHECK(ensureRunning(s), HSA_STATUS_ERROR_OUT_OF_RESOURCES);
    s.functions.push_back({callback, arg});
  }
  anySignalChanged().bump();
  return HSA_STATUS_SUCCESS;
  SIM_CATCH
}

void stopAsyncEvents() {
  State& s = state();
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(s.lock);
    s.stop = true;
    s.handlers.clear();
    s.functions.clear();
    thread = std::move(s.thread);
  }
  anySignalChanged().bump();
  if (!thread.joinable()) return;
  // hsa_shut_down called from a handler cannot wait for its own thread.
  if (thread.get_id() == std::this_thread::get_id()) {
    thread.detach();
  } else {
    thread.join();
  }
}

}  // namespace sim_hsa
