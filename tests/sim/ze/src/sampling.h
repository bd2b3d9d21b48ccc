// Instruction sampling of launches, for real: while a metric streamer is open
// on the device, every launch arms a timer on the CPU time of the thread that
// runs it; each expiry interrupts the kernel with a signal whose handler reads
// the interrupted instruction's address and, when it lies in the module's
// code, writes a raw report into the streamer.
#pragma once

#include "objects.h"

#include <cstdint>

namespace sim::sampling {

// SIGRTMAX - 2: the signal every sampling timer sends.
int signalNumber();

// Installs the handler (once; the first streamer opened calls it). A
// disposition the program had before is kept and receives every signal of
// that number that is not a sampling timer's.
void installHandler();

// Waits until no signal handler may still be writing into a streamer whose
// device no longer publishes it (Device::sampling was cleared before).
void waitForHandlers();

// Samples the launch of a kernel of `module` on the calling thread for as
// long as the scope lives (nothing happens when no streamer is open on the
// device). Afterwards, notifies the streamer when enough reports wait.
class LaunchScope {
 public:
  explicit LaunchScope(const Module& module);
  ~LaunchScope();
  LaunchScope(const LaunchScope&) = delete;
  LaunchScope& operator=(const LaunchScope&) = delete;

 private:
  struct ThreadState* thread_ = nullptr;
  Device* device_ = nullptr;
};

// Samples interrupted outside the running module's code (the driver's loops,
// the C library), which are not reported. For diagnosis only.
uint64_t discardedSamples();

// In a forked child: no streamer is open and no timer of the parent exists.
void forkChild();

}  // namespace sim::sampling
