// Where a session gets its data out when the process ends: atexit (flush), the
// library destructor (close), fatal signals (flush, then the program's own
// handler or the default action), and fork (the child starts afresh).
#pragma once

namespace gtap::core {

struct ThreadState;

void installExitHooks();               // once per process, at the first session
void registerThreadExit(ThreadState* t);
void markThreadExited(ThreadState* t);  // session.cpp
void initSessionGlobals();              // session.cpp

}  // namespace gtap::core
