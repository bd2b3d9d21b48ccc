// What replay records of the HSA table entries that have no hook of their own
// (docs/replay.md, HSA): signals made, their host operations, the loads and
// waits the program's view of device work is ordered by, and the calls replay
// cannot reproduce. The generic wrapper (hsa_tables.h) asks, per entry, at
// compile time; entries of kind `none` cost nothing more.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <cstdint>
#include <string_view>
#include <tuple>

#include "call_scope.h"

namespace gtap::hsa {

enum class ReplayCall : uint8_t {
  none,
  signalCreate,     // hsa_signal_create
  amdSignalCreate,  // hsa_amd_signal_create
  signalOp,         // stores and read-modify-writes
  signalLoad,
  signalWait,       // hsa_signal_wait_*
  signalWaitAny,    // hsa_amd_signal_wait_any
  groupCreate,
  groupWait,
  unsupported,
};

constexpr bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The operation code of HsaSignalOp for a signal operation's name.
constexpr uint8_t signalOpOf(std::string_view n) {
  if (startsWith(n, "hsa_signal_store_") || startsWith(n, "hsa_signal_silent_store_")) return 0;
  if (startsWith(n, "hsa_signal_add_")) return 1;
  if (startsWith(n, "hsa_signal_subtract_")) return 2;
  if (startsWith(n, "hsa_signal_and_")) return 3;
  if (startsWith(n, "hsa_signal_or_")) return 4;
  if (startsWith(n, "hsa_signal_xor_")) return 5;
  if (startsWith(n, "hsa_signal_exchange_")) return 6;
  if (startsWith(n, "hsa_signal_cas_")) return 7;
  return 0xff;
}

constexpr ReplayCall replayCallOf(std::string_view n) {
  if (n == "hsa_signal_create") return ReplayCall::signalCreate;
  if (n == "hsa_amd_signal_create") return ReplayCall::amdSignalCreate;
  if (startsWith(n, "hsa_signal_load_")) return ReplayCall::signalLoad;
  if (startsWith(n, "hsa_signal_wait_")) return ReplayCall::signalWait;
  if (n == "hsa_amd_signal_wait_any") return ReplayCall::signalWaitAny;
  if (n == "hsa_signal_group_create") return ReplayCall::groupCreate;
  if (startsWith(n, "hsa_signal_group_wait_any_")) return ReplayCall::groupWait;
  if (signalOpOf(n) != 0xff) return ReplayCall::signalOp;
  // Work or memory replay cannot make again: shared across processes, with
  // other APIs, migrated, or written where replay cannot see it.
  for (std::string_view prefix : {"hsa_amd_ipc_", "hsa_amd_interop_", "hsa_amd_svm_", "hsa_amd_vmem_",
                                  "hsa_amd_portable_", "hsa_amd_image_", "hsa_ext_image_"})
    if (startsWith(n, prefix)) return ReplayCall::unsupported;
  for (std::string_view name :
       {"hsa_amd_memory_migrate", "hsa_amd_memory_async_copy_rect", "hsa_amd_memory_async_copy_on_engine",
        "hsa_soft_queue_create", "hsa_queue_inactivate", "hsa_executable_load_program_code_object",
        "hsa_executable_load_code_object", "hsa_executable_global_variable_define",
        "hsa_executable_agent_global_variable_define", "hsa_executable_readonly_variable_define",
        "hsa_amd_signal_value_pointer", "hsa_amd_queue_intercept_create"})
    if (n == name) return ReplayCall::unsupported;
  return ReplayCall::none;
}

// Recording, from the generic wrapper (replay_recorder.cpp).
namespace replaycalls {
bool on(const core::CallScope& scope);
void signalCreated(const core::CallScope& scope, hsa_status_t status, hsa_signal_value_t initial, uint32_t count,
                   const hsa_agent_t* consumers, uint64_t attributes, const hsa_signal_t* signal);
uint64_t opBegin(const core::CallScope& scope, hsa_signal_t signal);
void opDone(uint64_t seq, const core::CallScope& scope, hsa_signal_t signal, uint8_t op, hsa_signal_value_t value,
            hsa_signal_value_t expected);
void loaded(const core::CallScope& scope, hsa_signal_t signal, hsa_signal_value_t value);
hsa_signal_value_t load(hsa_signal_t signal);
void waited(const core::CallScope& scope, uint32_t count, const hsa_signal_t* signals,
            const hsa_signal_condition_t* conditions, const hsa_signal_value_t* values, uint32_t index,
            hsa_signal_value_t observed, uint8_t kind);
void groupCreated(const core::CallScope& scope, hsa_status_t status, uint32_t count, const hsa_signal_t* signals,
                  const hsa_signal_group_t* group);
void groupWaited(const core::CallScope& scope, hsa_status_t status, hsa_signal_group_t group,
                 const hsa_signal_condition_t* conditions, const hsa_signal_value_t* values,
                 const hsa_signal_t* signal, const hsa_signal_value_t* value);
void unsupported(const core::CallScope& scope, const char* name);
}  // namespace replaycalls

// Calls the runtime's entry `fn` for table entry `name` of kind `Kind` and
// records what replay needs of it.
template <ReplayCall Kind, uint8_t Op, typename R, typename... A>
R observedCall(const core::CallScope& scope, const char* name, R (*fn)(A...), A... a) {
  auto args = std::make_tuple(a...);
  if constexpr (Kind == ReplayCall::signalOp) {
    hsa_signal_t signal = std::get<0>(args);
    uint64_t seq = replaycalls::on(scope) ? replaycalls::opBegin(scope, signal) : 0;
    if constexpr (std::is_void_v<R>) {
      fn(a...);
      if (seq) replaycalls::opDone(seq, scope, signal, Op, std::get<1>(args), 0);
    } else {
      R r = fn(a...);
      if constexpr (Op == 7)  // cas(signal, expected, value)
        if (seq) replaycalls::opDone(seq, scope, signal, Op, std::get<2>(args), std::get<1>(args));
      if constexpr (Op != 7)
        if (seq) replaycalls::opDone(seq, scope, signal, Op, std::get<1>(args), 0);
      return r;
    }
  } else {
    R r = fn(a...);
    if (!replaycalls::on(scope)) return r;
    if constexpr (Kind == ReplayCall::signalCreate) {
      replaycalls::signalCreated(scope, r, std::get<0>(args), std::get<1>(args), std::get<2>(args), 0,
                                 std::get<3>(args));
    } else if constexpr (Kind == ReplayCall::amdSignalCreate) {
      replaycalls::signalCreated(scope, r, std::get<0>(args), std::get<1>(args), std::get<2>(args),
                                 std::get<3>(args), std::get<4>(args));
    } else if constexpr (Kind == ReplayCall::signalLoad) {
      replaycalls::loaded(scope, std::get<0>(args), r);
    } else if constexpr (Kind == ReplayCall::signalWait) {
      hsa_signal_t signal = std::get<0>(args);
      hsa_signal_condition_t condition = std::get<1>(args);
      hsa_signal_value_t compare = std::get<2>(args);
      replaycalls::waited(scope, 1, &signal, &condition, &compare, 0, r, 0);
    } else if constexpr (Kind == ReplayCall::signalWaitAny) {
      // (count, signals, conditions, values, timeout, wait hint, satisfying value)
      const hsa_signal_value_t* satisfying = std::get<6>(args);
      const hsa_signal_t* signals = std::get<1>(args);
      if (signals && r < std::get<0>(args))
        replaycalls::waited(scope, std::get<0>(args), signals, std::get<2>(args), std::get<3>(args), r,
                            satisfying ? *satisfying : replaycalls::load(signals[r]), 1);
    } else if constexpr (Kind == ReplayCall::groupCreate) {
      replaycalls::groupCreated(scope, r, std::get<0>(args), std::get<1>(args), std::get<4>(args));
    } else if constexpr (Kind == ReplayCall::groupWait) {
      replaycalls::groupWaited(scope, r, std::get<0>(args), std::get<1>(args), std::get<2>(args), std::get<4>(args),
                               std::get<5>(args));
    } else if constexpr (Kind == ReplayCall::unsupported) {
      if constexpr (std::is_same_v<R, hsa_status_t>) {
        if (r == HSA_STATUS_SUCCESS) replaycalls::unsupported(scope, name);
      } else {
        replaycalls::unsupported(scope, name);
      }
    }
    return r;
  }
}

}  // namespace gtap::hsa
