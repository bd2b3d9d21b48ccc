// libgtap_peer_tracer.so: a minimal tracer built on the Level Zero loader's
// own tracing layer, to compare gtap with tools that trace that way. Per call
// it does what such a tool does: a timestamp in the prologue, a second one in
// the epilogue and a record appended to a per-thread buffer in memory.
//
//   ZE_ENABLE_TRACING_LAYER=1 LD_PRELOAD=/path/libgtap_peer_tracer.so program
//
// The library calls zeInit when it loads, creates one tracer, registers a
// prologue and an epilogue for every core function the tracing layer offers
// (the list is generated from the installed zel_tracing_register_cb.h) and
// enables it. Records stay in memory until the program exits, so the memory
// use grows with the number of calls. At exit, if GTAP_PEER_SUMMARY names a
// file, it receives
//
//   records N                   records across all threads
//   zeDriverGetApiVersion N     records of that function
//
// and nothing else is written. If the tracing layer cannot be used (zeInit or
// zelTracerCreate fails), one line on stderr says so and the program runs
// untraced.
#include <level_zero/ze_api.h>
#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

namespace {

enum FunctionId : uint32_t {
#define GTAP_PEER_FUNCTION(Name, Callback) k##Name,
#include "ze_peer_functions.inc"
#undef GTAP_PEER_FUNCTION
  kFunctionCount
};

struct Record {
  uint32_t function;
  uint32_t thread;
  uint64_t startNs;
  uint64_t endNs;
};

// One thread's records: fixed-size chunks, so an append never moves earlier
// records and a new chunk is the only allocation.
class ThreadLog {
 public:
  static constexpr uint32_t kChunkRecords = 4096;

  void append(const Record& record) {
    if (used_ == kChunkRecords) grow();
    current_[used_++] = record;
  }

  // Calls f(record) for every record. Only when no thread appends any more.
  template <class F>
  void forEach(F&& f) const {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      uint32_t n = c + 1 == chunks_.size() ? used_ : kChunkRecords;
      for (uint32_t i = 0; i < n; ++i) f(chunks_[c][i]);
    }
  }

 private:
  void grow() {
    chunks_.push_back(std::make_unique_for_overwrite<Record[]>(kChunkRecords));
    current_ = chunks_.back().get();
    used_ = 0;
  }

  std::vector<std::unique_ptr<Record[]>> chunks_;
  Record* current_ = nullptr;
  uint32_t used_ = kChunkRecords;
};

// The tracer's user data. Allocated once and never freed: callbacks may still
// run while the program's static objects are destroyed.
struct State {
  zel_tracer_handle_t tracer = nullptr;
  std::mutex mutex;
  std::vector<std::unique_ptr<ThreadLog>> logs;  // every thread that recorded
};

State* gState = nullptr;

thread_local ThreadLog* tLog = nullptr;
thread_local uint32_t tThreadId = 0;

inline uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

inline uint32_t threadId() {
  if (tThreadId == 0) tThreadId = static_cast<uint32_t>(syscall(SYS_gettid));
  return tThreadId;
}

// The thread's log, created and registered the first time the thread records.
[[gnu::noinline]] ThreadLog* newThreadLog(State* state) {
  auto log = std::make_unique<ThreadLog>();
  ThreadLog* raw = log.get();
  std::lock_guard<std::mutex> lock(state->mutex);
  state->logs.push_back(std::move(log));
  return raw;
}

static_assert(sizeof(void*) >= sizeof(uint64_t), "the start time is kept in the per-call user data pointer");

template <uint32_t Id, class Params>
void ZE_APICALL prologue(Params, ze_result_t, void*, void** instanceData) {
  *instanceData = reinterpret_cast<void*>(static_cast<uintptr_t>(nowNs()));
}

template <uint32_t Id, class Params>
void ZE_APICALL epilogue(Params, ze_result_t, void* tracerData, void** instanceData) {
  const uint64_t end = nowNs();
  const uint64_t start = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(*instanceData));
  ThreadLog* log = tLog;
  if (log == nullptr) log = tLog = newThreadLog(static_cast<State*>(tracerData));
  log->append(Record{Id, threadId(), start, end});
}

// The parameter structure pointer a callback type takes first.
template <class F>
struct FirstArg;
template <class P, class... Rest>
struct FirstArg<void(ZE_APICALL*)(P, Rest...)> {
  using type = P;
};

// Registers a prologue and an epilogue for every function; false if any fails.
bool registerCallbacks(zel_tracer_handle_t tracer) {
  bool ok = true;
#define GTAP_PEER_FUNCTION(Name, Callback)                                                                      \
  ok = zelTracer##Name##RegisterCallback(tracer, ZEL_REGISTER_PROLOGUE,                                          \
                                         &prologue<k##Name, FirstArg<Callback>::type>) == ZE_RESULT_SUCCESS &&  \
       ok;                                                                                                       \
  ok = zelTracer##Name##RegisterCallback(tracer, ZEL_REGISTER_EPILOGUE,                                          \
                                         &epilogue<k##Name, FirstArg<Callback>::type>) == ZE_RESULT_SUCCESS &&  \
       ok;
#include "ze_peer_functions.inc"
#undef GTAP_PEER_FUNCTION
  return ok;
}

[[gnu::constructor]] void start() {
  ze_result_t result = zeInit(ZE_INIT_FLAG_GPU_ONLY);
  if (result != ZE_RESULT_SUCCESS) {
    std::fprintf(stderr, "gtap_peer_tracer: zeInit failed (0x%x); not tracing\n", unsigned(result));
    return;
  }
  auto* state = new State;
  zel_tracer_desc_t desc{ZEL_STRUCTURE_TYPE_TRACER_DESC, nullptr, state};
  result = zelTracerCreate(&desc, &state->tracer);
  if (result != ZE_RESULT_SUCCESS) {
    std::fprintf(stderr,
                 "gtap_peer_tracer: zelTracerCreate failed (0x%x); is ZE_ENABLE_TRACING_LAYER=1 set? not tracing\n",
                 unsigned(result));
    delete state;
    return;
  }
  if (!registerCallbacks(state->tracer)) {
    std::fprintf(stderr, "gtap_peer_tracer: registering the callbacks failed; not tracing\n");
    zelTracerDestroy(state->tracer);
    delete state;
    return;
  }
  result = zelTracerSetEnabled(state->tracer, true);
  if (result != ZE_RESULT_SUCCESS) {
    std::fprintf(stderr, "gtap_peer_tracer: zelTracerSetEnabled failed (0x%x); not tracing\n", unsigned(result));
    zelTracerDestroy(state->tracer);
    delete state;
    return;
  }
  gState = state;
}

// After the program's own exit handlers, so its calls have all been recorded.
[[gnu::destructor]] void finish() {
  State* state = gState;
  if (state == nullptr) return;
  const char* path = std::getenv("GTAP_PEER_SUMMARY");
  if (path == nullptr || *path == '\0') return;
  uint64_t records = 0, apiVersion = 0;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    for (const auto& log : state->logs)
      log->forEach([&](const Record& r) {
        ++records;
        apiVersion += r.function == kDriverGetApiVersion;
      });
  }
  FILE* out = std::fopen(path, "w");
  if (out == nullptr) return;
  std::fprintf(out, "records %llu\nzeDriverGetApiVersion %llu\n", static_cast<unsigned long long>(records),
               static_cast<unsigned long long>(apiVersion));
  std::fclose(out);
}

}  // namespace
