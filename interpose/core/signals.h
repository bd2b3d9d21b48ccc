// Signals that end the process: gtap closes the capture before the default
// action happens, and keeps the program's own view of its dispositions (see
// signals.cpp and docs/interception.md, "Signals").
#pragma once

#include <signal.h>

namespace gtap::core {

// Puts gtap's closing handler on every default-terminate signal whose
// disposition is the default (once per process, at the first session).
void armSignals();

// The C library's own sigaction, for gtap's own handlers (the exported
// `sigaction` is the program's view).
int realSigaction(int sig, const struct sigaction* act, struct sigaction* old);

}  // namespace gtap::core
