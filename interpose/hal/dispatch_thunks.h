// Host execution records for CPU drivers that run an executable's workgroups
// through its export functions rather than its issue_call (IREE's local-task
// after 3.11): a command buffer takes the function out of the executable's
// dispatch_ptrs table when it is recorded and calls it on worker threads. A
// freshly prepared executable's table is replaced, in the executable object,
// by one of gtap's thunks, each counting its workgroup around the original
// (see docs/interception.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recorder.h"

namespace gtap::hal {

enum class ThunkOutcome {
  installed,
  notNeeded,  // no function table (the driver goes through issue_call), no exports, or gtap's already
  refused,    // something did not check out: `why` says what; the executable is untouched
  exhausted,  // every thunk is in use: the executable is untouched
};

// Checks the local executable at `executable` (its members at `layout`)
// against what it told gtap through its vtable (`functionCount` exports,
// named `names`, "" where function_info gave none) and against the process's
// mappings, and only when everything agrees points its dispatch_ptrs at
// thunks calling its own functions (one aligned pointer store into the
// executable object).
ThunkOutcome installDispatchThunks(void* executable, const LocalExecutableLayout& layout, uint64_t functionCount,
                                   const std::vector<std::string>& names, std::string& why);

// How many exports the thunks can serve in all.
uint64_t dispatchThunkCapacity();

}  // namespace gtap::hal
