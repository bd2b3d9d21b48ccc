// Shared by the hand-written hooks: each receives the real function and the
// call's scope, makes the real call itself, and tells the profiler what
// happened. Hooks act only on the program's own calls (not nested ones) and
// only when a mode that needs them is on.
#pragma once

#include <level_zero/ze_api.h>

#include "call_scope.h"
#include "profiler.h"
#include "real.h"
#include "replay_recorder.h"

// `real` makes the runtime call and notes that it was made, for the wrapper's
// catch boundary (internal_error.h).
#define GTAP_ZE_HOOK(name, ...) \
  ze_result_t hook_##name(core::RealCall<decltype(&name)>& real, core::CallScope& scope, __VA_ARGS__)

namespace gtap::ze {

inline bool profiling(const core::CallScope& scope) {
  return !scope.nested() && (recordKernels() || recordMemory());
}

inline Profiler& profiler() { return Profiler::get(); }
inline ReplayRecorder& replayRecorder() { return ReplayRecorder::get(); }

// The replay record's seq for this call, taken before it is made; 0 when
// replay does not record it.
inline uint64_t replaySeq(const core::CallScope& scope) { return replaying(scope) ? replayRecorder().begin() : 0; }

}  // namespace gtap::ze
