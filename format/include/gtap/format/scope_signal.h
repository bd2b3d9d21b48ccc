// The signal of GTAP_SCOPE_SIGNAL / --scope-signal. Shared by the launcher (to
// refuse a bad one before the program starts) and libgtap.so (to refuse it
// when set by hand). Only signals no runtime or shell gives a meaning to may
// be borrowed: a fault, termination or job-control signal taken over by gtap
// would hang or outlive the program that expects it.
#pragma once

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>  // sigabbrev_np
#include <string>
#include <string_view>

namespace gtap::format {

inline constexpr const char* kScopeSignalsAccepted =
    "SIGUSR1, SIGUSR2, or a real-time signal (RTMIN, RTMIN+N, RTMAX-N, or its number)";

// "SIGUSR2", "USR2", "RTMIN+3", "SIGRTMAX-1" or a number, into a signal number;
// 0 with `error` set when it is not one gtap may borrow.
inline int parseScopeSignal(std::string_view text, std::string& error) {
  std::string_view name = text;
  if (name.substr(0, 3) == "SIG") name.remove_prefix(3);
  auto number = [](std::string_view digits, long& out) {
    if (digits.empty() || digits.size() > 4) return false;
    std::string s(digits);
    char* end = nullptr;
    errno = 0;
    out = std::strtol(s.c_str(), &end, 10);
    return !errno && *end == '\0' && s[0] >= '0' && s[0] <= '9';
  };
  long sig = 0;
  if (name == "USR1") {
    sig = SIGUSR1;
  } else if (name == "USR2") {
    sig = SIGUSR2;
  } else if (name.substr(0, 5) == "RTMIN" || name.substr(0, 5) == "RTMAX") {
    bool min = name[3] == 'I';
    std::string_view rest = name.substr(5);
    long offset = 0;
    if (!rest.empty()) {
      if (rest[0] != (min ? '+' : '-') || !number(rest.substr(1), offset)) {
        error = "'" + std::string(text) + "' is not a signal; accepted: " + kScopeSignalsAccepted;
        return 0;
      }
    }
    sig = min ? SIGRTMIN + offset : SIGRTMAX - offset;
  } else if (!number(name, sig)) {
    // Another signal's name ("TERM"): named in the refusal below.
    sig = 0;
    for (int n = 1; n < 32 && !sig; ++n)
      if (const char* abbrev = sigabbrev_np(n); abbrev && name == abbrev) sig = n;
  }
  if (sig == 0) {
    error = "'" + std::string(text) + "' is not a signal; accepted: " + kScopeSignalsAccepted;
    return 0;
  }
  if (sig == SIGUSR1 || sig == SIGUSR2 || (sig >= SIGRTMIN && sig <= SIGRTMAX)) return static_cast<int>(sig);
  std::string what = "signal " + std::to_string(sig);
  if (sig > 0 && sig < 32)
    if (const char* abbrev = sigabbrev_np(static_cast<int>(sig))) what += std::string(" (SIG") + abbrev + ")";
  error = what + " cannot be borrowed for scopes: the program or its runtime relies on what it does; accepted: " +
          kScopeSignalsAccepted;
  return 0;
}

}  // namespace gtap::format
