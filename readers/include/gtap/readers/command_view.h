// One command list or command buffer of a capture, as iree-profile's command
// buffer projection shows it: the commands appended (or recorded) into it in
// order, and the device times of each on each execution. `gtap command`
// prints them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"

namespace gtap::readers {

struct CommandTime {
  bool ran = false;    // the command ran in this execution (as recorded)
  bool timed = false;  // startNs / endNs valid
  int64_t startNs = 0, endNs = 0;  // host clock
};

struct ListCommand {
  std::string kind;  // kernel, copy, fill, barrier, other; an IREE HAL command's method (dispatch, fill_buffer, ...)
  std::string name;  // kernel or export name, or the kind
  std::array<uint32_t, 3> groupCount{}, groupSize{};
  uint64_t bytes = 0;
  schema::CopyDirection direction = schema::CopyDirection::UNKNOWN;
  int64_t appendNs = 0;  // when it was appended or recorded
  std::vector<CommandTime> times;  // one per execution
};

struct CommandListView {
  const Capture* capture = nullptr;
  uint64_t id = 0;   // gtap's object id, unique in its process
  std::string kind;  // "ze command list", "ze immediate list", "hal command buffer"
  std::string name;
  std::vector<int64_t> executions;  // host submit time of each execution, in order
  std::vector<ListCommand> commands;
  int64_t deviceNs = 0;  // the commands' device time over every execution
};

// Every command list and command buffer of `work` (loaded whole from
// `capture`) that holds a command, by id. A Level Zero regular list runs its
// commands on each execute; an immediate list runs each once as it is
// appended (one execution); an IREE HAL command buffer runs on each
// queue_execute, its dispatches timed by the device dispatches they became.
std::vector<CommandListView> commandListViews(const Capture& capture, const DeviceWork& work);

}  // namespace gtap::readers
