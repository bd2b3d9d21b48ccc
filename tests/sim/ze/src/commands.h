// Recorded commands and what executes them.
#pragma once

#include "objects.h"

#include <memory>
#include <vector>

namespace sim {

enum class Op {
  Launch,               // launches[0] with groups
  LaunchIndirect,       // launches[0] with *groupsPtr read at execution
  LaunchMultiIndirect,  // launches[i] with groupsPtr[i], count min(*countPtr, launches.size())
  Copy,
  CopyRegion,
  Fill,
  Barrier,
  SignalEvent,          // signals `signal` only
  WaitEvents,           // waits on `waits` only
  ResetEvent,           // resets events[0]
  WriteTimestamp,       // *dst = global ticks
  QueryTimestamps,      // copies events' kernel timestamps to dst (+offsets)
  Nop,                  // prefetch and advice: accepted, nothing to do
  MetricQueryBegin,     // query: takes the engine's work totals and the time
  MetricQueryEnd,       // query: its report, the work done since its begin
};

struct MetricQuery;

// What an engine has run so far, for metric queries (counted by execute on
// whichever thread runs the engine's work, one at a time).
struct WorkTotals {
  bool copyEngine = false;  // the engine's kind, for Sysman's engine groups (sysman.cpp)
  uint64_t kernels = 0;
  uint64_t workGroups = 0;
  uint64_t workItems = 0;
  uint64_t busyNs = 0;  // host time spent running kernel bodies
};

struct Command {
  Op op = Op::Nop;
  std::vector<std::shared_ptr<Event>> waits;  // all must be signaled before the command starts
  std::shared_ptr<Event> signal;              // signaled (with timestamps) when it ends
  std::vector<std::shared_ptr<LaunchState>> launches;
  ze_group_count_t groups{};
  const ze_group_count_t* groupsPtr = nullptr;
  const uint32_t* countPtr = nullptr;
  void* dst = nullptr;
  const void* src = nullptr;
  size_t size = 0;
  std::vector<uint8_t> pattern;
  ze_copy_region_t dstRegion{}, srcRegion{};
  uint32_t dstPitch = 0, dstSlicePitch = 0, srcPitch = 0, srcSlicePitch = 0;
  std::vector<std::shared_ptr<Event>> events;
  std::vector<size_t> offsets;
  std::shared_ptr<MetricQuery> query;
};

// What submitting a command fixed about its counter-based events: the arm
// its signal event got (0: none, or an ordinary event), and per wait event
// the arm it waits for (0: wait for the event to be signaled).
struct Arms {
  uint64_t signal = 0;
  std::vector<uint64_t> waits;
};

// Runs one command on the calling (worker) thread, adding the kernels it ran
// to `totals` (the engine's). While *abandon is true (read under the sync
// lock) waits on events give up, so a queue being torn down never blocks on an
// event nobody will signal.
void execute(const Command& c, const Arms& arms, const bool* abandon, WorkTotals& totals);

namespace metricQueries {
// The commands' effects on their query (metric_query.cpp).
void begin(MetricQuery& q, const WorkTotals& totals);
void end(MetricQuery& q, const WorkTotals& totals);
}  // namespace metricQueries

namespace events {
// Marks an event signaled and, for timestamp pools, records the device ticks
// of the work it ends (masked to the kernel timestamp width).
// `arm` is the counter-based arm the signalling command got (0 otherwise): a
// counter-based event is signaled only by the completion of its latest arm.
void signal(Event& e, uint64_t startTicks, uint64_t endTicks, uint64_t arm = 0);
void reset(Event& e);
// Submitting a command: the arms it waits for, then its signal event's new
// arm. Called with sync::mutex() held.
Arms armLocked(const Command& c);
// `targets` (one per event, see Arms::waits) or null: wait for signaled.
void waitAll(const std::vector<std::shared_ptr<Event>>& events, const std::vector<uint64_t>* targets,
             const bool* abandon);
// Whether waitAll would return at once (called without sync::mutex()).
bool ready(const std::vector<std::shared_ptr<Event>>& events, const std::vector<uint64_t>* targets);
// Copies the event's kernel timestamp; false if it has none yet.
bool readTimestamp(Event& e, ze_kernel_timestamp_result_t* out);
// As the device reads them: the timestamps last written, also while a
// counter-based event is armed again (not signaled) for a later call.
bool deviceTimestamp(Event& e, ze_kernel_timestamp_result_t* out);
}  // namespace events

}  // namespace sim
