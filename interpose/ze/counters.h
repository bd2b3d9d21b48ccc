// Hardware counters per dispatch on Level Zero (GTAP_COUNTERS): metric
// queries of the tools API around each kernel launch gtap records.
//
// For each device the program finds, gtap plans the request over the metric
// groups the device offers (format::planCounters, one group per pass) and
// takes the pass GTAP_COUNTER_PASS asks for: that pass's group is activated
// on each (context, device) the program launches on, and each measured launch
// is bracketed by a barrier, a query's begin, the launch, the query's end and
// a barrier, so that measured dispatches run one at a time. The raw data is
// read with the launch's timestamps; values are calculated by the runtime on
// the writer thread (calculate), never on the program's.
#pragma once

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "profile_records.h"

namespace gtap::ze {

class Counters {
 public:
  static Counters& get();
  // Counters asked for (and kernels recorded).
  static bool on();

  // A device the program found (gtap's id for it): plans its pass once and
  // adds its counter set, notes and the request to the records given. No
  // lock of the caller may be held (runtime calls).
  void deviceSeen(ze_device_handle_t device, uint32_t deviceId, std::vector<core::profile::CounterSetRecord>& sets,
                  std::vector<core::profile::CounterNoteRecord>& notes, std::string& requested);
  // After a zeDeviceGet's devices were seen: says once on stderr when no
  // device measures anything (unless GTAP_COUNTERS_OPTIONAL).
  void devicesDone();
  // The counter set launches on the device are measured with (0: none).
  uint32_t setOf(uint32_t deviceId);
  // A reset query for a launch on (context, device); the group is activated
  // there first. Null when none can be had.
  zet_metric_query_handle_t takeQuery(ze_context_handle_t context, ze_device_handle_t device, uint32_t deviceId);
  // Back for the next launch (reset first).
  void giveQuery(zet_metric_query_handle_t query);
  // Resets a query for its next use by the same launch (a regular list's).
  void reset(zet_metric_query_handle_t query);
  // The query's raw data: 1 read, 0 not ready yet, -1 none can be read.
  int read(zet_metric_query_handle_t query, std::vector<uint8_t>& raw);
  // On the writer thread: the values of a record whose raw data was read.
  void calculate(core::profile::OpRecord& r);
  // The program destroys a context: gtap's queries and pools in it go first.
  void contextDestroying(ze_context_handle_t context);

  struct Impl;

 private:
  Counters();
  Impl* impl_;
};

}  // namespace gtap::ze
