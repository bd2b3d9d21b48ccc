// The HSA runtime's API tables as gtap sees them. ROCr (and any runtime that
// follows its tool contract) hands a tool the live tables in OnLoad; gtap
// saves each entry and puts a wrapper in its place. Every exported hsa_*
// function calls through these tables, so a program that linked the runtime
// and one that dlsym'd it are both seen, each call once.
//
// The entries come from the installed hsa_api_trace.h (generate_entries.py):
// one function id per entry, a generic recording wrapper for each, and a
// hand-written hook (hooks/*.cpp) for the entries listed in hooked_functions.txt.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <hsa/hsa_ext_amd.h>

#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "call_scope.h"
#include "functions.h"
#include "replay_calls.h"

namespace gtap::hsa {

enum Fn : uint16_t {
#define GTAP_HSA_ENTRY(Table, name, id, hooked, before, since) fn_##name = id,
#include "hsa_entries.inc"
#undef GTAP_HSA_ENTRY
  kFunctionCount
};

// Each entry's name, and what replay records of it (replay_calls.h).
inline constexpr std::string_view kNames[] = {
#define GTAP_HSA_ENTRY(Table, name, id, hooked, before, since) #name,
#include "hsa_entries.inc"
#undef GTAP_HSA_ENTRY
};
inline constexpr ReplayCall kReplayCalls[] = {
#define GTAP_HSA_ENTRY(Table, name, id, hooked, before, since) hooked ? ReplayCall::none : replayCallOf(#name),
#include "hsa_entries.inc"
#undef GTAP_HSA_ENTRY
};

// An API call's result as recorded: the status for functions that return
// one, 0 for the others (signal values, queue indices, void).
template <typename R>
int32_t resultCode(R r) {
  if constexpr (std::is_same_v<R, hsa_status_t>)
    return static_cast<int32_t>(r);
  else
    return 0;
}

// What the program gets from a function whose table entry the runtime left
// null: its exported function answers HSA_STATUS_ERROR (or a zero value)
// without doing anything, and so does gtap's wrapper, which takes the empty
// slot so that the call is still seen.
template <typename R>
R missingEntryResult() {
  if constexpr (std::is_same_v<R, hsa_status_t>)
    return HSA_STATUS_ERROR;
  else if constexpr (!std::is_void_v<R>)
    return R{};
}

// One table entry: the runtime's function saved at OnLoad (null when the
// runtime left the entry empty), and the wrapper that records a call and
// calls it.
template <uint16_t Id, typename F>
struct Entry;
template <uint16_t Id, typename R, typename... A>
struct Entry<Id, R (*)(A...)> {
  static inline R (*real)(A...) = nullptr;
  static R wrapper(A... a) {
    core::CallScope scope(core::kGuardHsa, static_cast<uint16_t>(core::kHsaFunctionBase + Id));
    R (*fn)(A...) = real;
    if constexpr (kReplayCalls[Id] != ReplayCall::none) {
      if (fn) {
        if constexpr (std::is_void_v<R>) {
          observedCall<kReplayCalls[Id], signalOpOf(kNames[Id])>(scope, kNames[Id].data(), fn, a...);
          scope.end(0);
          return;
        } else {
          R r = observedCall<kReplayCalls[Id], signalOpOf(kNames[Id])>(scope, kNames[Id].data(), fn, a...);
          scope.end(resultCode(r));
          return r;
        }
      }
    }
    if constexpr (std::is_void_v<R>) {
      if (fn) fn(a...);
      scope.end(0);
    } else {
      R r = fn ? fn(a...) : missingEntryResult<R>();
      scope.end(resultCode(r));
      return r;
    }
  }
};

// The runtime's own entry for `name` (as saved at OnLoad; null before).
#define GTAP_HSA_REAL(name) (::gtap::hsa::Entry<::gtap::hsa::fn_##name, decltype(&::name)>::real)
// Calls the runtime's entry for `name` when the runtime has one (a table
// older than gtap's headers may lack it); HSA_STATUS_ERROR otherwise.
template <typename F, typename... A>
hsa_status_t callIfThere(F f, A... a) {
  return f ? f(a...) : HSA_STATUS_ERROR;
}
#define GTAP_HSA_CALL(name, ...) ::gtap::hsa::callIfThere(GTAP_HSA_REAL(name), __VA_ARGS__)
// The call's id for a CallScope in a hook.
#define GTAP_HSA_ID(name) static_cast<uint16_t>(::gtap::core::kHsaFunctionBase + ::gtap::hsa::fn_##name)

// The AMD extension's agent attributes go where hsa_agent_info_t is expected
// (hsa_ext_amd.h); their values lie outside that enum's range, so the value
// is carried over bit for bit rather than converted.
inline hsa_agent_info_t amdAgentInfo(hsa_amd_agent_info_t attribute) {
  using Underlying = std::underlying_type_t<hsa_agent_info_t>;
  static_assert(sizeof(Underlying) == sizeof(hsa_agent_info_t));
  return std::bit_cast<hsa_agent_info_t>(static_cast<Underlying>(attribute));
}

// A string attribute of `agent` of at most `size` bytes; empty when the
// runtime does not say.
inline std::string agentString(hsa_agent_t agent, hsa_agent_info_t attribute, size_t size) {
  std::vector<char> buf(size + 1, '\0');
  if (GTAP_HSA_CALL(hsa_agent_get_info, agent, attribute, buf.data()) != HSA_STATUS_SUCCESS) return {};
  return std::string(buf.data());
}

// Hooks: same signature as the function they replace.
namespace hooks {
#define GTAP_HSA_ENTRY(Table, name, id, hooked, before, since) GTAP_HSA_HOOK_##hooked(name)
#define GTAP_HSA_HOOK_0(name)
#define GTAP_HSA_HOOK_1(name) extern decltype(::name) name;
#include "hsa_entries.inc"
#undef GTAP_HSA_HOOK_1
#undef GTAP_HSA_HOOK_0
#undef GTAP_HSA_ENTRY
}  // namespace hooks

// Whether the runtime's tables are in gtap's hands (between OnLoad and OnUnload).
bool tablesInstalled();

}  // namespace gtap::hsa
