// Shared by the HSA table entries gtap does more for than record the call
// (listed in hooked_functions.txt; one file per concern in this folder). Each
// records its call like the generic wrapper, calls the runtime's entry, and
// tells the tracker what the program made or did.
#pragma once

#include "hsa_tables.h"
#include "tracker.h"

namespace gtap::hsa::hooks {

// A recorded call whose result the hook may look at before the end record.
class Call {
 public:
  explicit Call(uint16_t id) : outer_(core::t_guard), scope_(core::kGuardHsa, id) {}
  hsa_status_t done(hsa_status_t status) {
    scope_.end(static_cast<int32_t>(status));
    return status;
  }
  // The program's call (not the runtime's own, nor gtap's), while recording.
  bool program() const { return scope_.thread() != nullptr; }
  const core::CallScope& scope() const { return scope_; }
  // The thread's guard when the call was made: what a callback the runtime
  // runs during the call gets back.
  uint8_t outerGuard() const { return outer_; }

 private:
  uint8_t outer_;
  core::CallScope scope_;
};

inline Tracker& tracker() { return Tracker::get(); }

#define GTAP_UNPAREN(...) __VA_ARGS__
// Defines hook NAME: the entry records the call and runs the body (which
// follows the macro, with `real`, the runtime's entry, and `call`) inside a
// catch boundary; gtap's failure in the body leaves the program's call to
// the runtime, made once (internal_error.h). An entry the runtime left null
// answers as the runtime's exported function does (hsa_tables.h).
#define GTAP_HSA_HOOK(name, params, args)                                                            \
  static hsa_status_t body_##name(core::RealCall<decltype(&::name)>& real, Call& call,               \
                                  GTAP_UNPAREN params);                                              \
  hsa_status_t name params {                                                                         \
    Call call(GTAP_HSA_ID(name));                                                                    \
    core::RealCall<decltype(&::name)> real(GTAP_HSA_REAL(name));                                     \
    if (!real.function()) return call.done(missingEntryResult<hsa_status_t>());                      \
    hsa_status_t status;                                                                             \
    try {                                                                                            \
      status = body_##name(real, call, GTAP_UNPAREN args);                                           \
    } GTAP_CATCH_INTERNAL {                                                                          \
      status = real.recover("the HSA hook of " #name, GTAP_UNPAREN args);                            \
    }                                                                                                \
    return call.done(status);                                                                        \
  }                                                                                                  \
  static hsa_status_t body_##name(core::RealCall<decltype(&::name)>& real, Call& call, GTAP_UNPAREN params)

}  // namespace gtap::hsa::hooks
