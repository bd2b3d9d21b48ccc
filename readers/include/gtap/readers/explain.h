// The account `gtap explain` gives of one process, for a person: how long it
// ran, how busy each device was and where its time went, when it sat idle
// and what the host did meanwhile, the slowest launches and where they were
// made from, and what the capture could not tell.
#pragma once

#include <cstddef>
#include <ostream>

#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/symbolizer.h"
#include "gtap/readers/table.h"

namespace gtap::readers {

// Writes the account of `capture` to `out`, as text for a person or as JSON
// Lines (rows of type explain_process, explain_device, explain_kernel,
// explain_gap, explain_launch, explain_hal_join, explain_note); `top` kernels, idle gaps per
// device and launches are named. The symbolizer names the launches' stack
// frames (shared between captures so that each module is read once).
void writeExplanation(const LoadedCapture& capture, size_t top, Symbolizer& symbolizer, std::ostream& out,
                      OutputFormat format = OutputFormat::text);
// The same account, reading the device operations a batch at a time
// (overviewStreamed) so that memory holds the slowest `top` launches and each
// timed operation's interval, never every operation; a capture with IREE HAL
// command-buffer work (joinsHal) is joined (joinHalStreamed) and read again.
void writeExplanation(const Capture& capture, size_t top, Symbolizer& symbolizer, std::ostream& out,
                      OutputFormat format = OutputFormat::text);

}  // namespace gtap::readers
