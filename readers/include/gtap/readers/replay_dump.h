// gtap dump's output (docs/replay.md): every record of a replay stream with
// its fields named per op, then what the stream needs to be replayed (a
// summary), as text or as JSON lines.
#pragma once

#include <iosfwd>

#include "gtap/readers/capture.h"
#include "gtap/readers/replay_stream.h"

namespace gtap::readers {

void writeReplayDumpText(std::ostream& out, const Capture& capture, const ReplayStream& stream);
void writeReplayDumpJsonLines(std::ostream& out, const Capture& capture, const ReplayStream& stream);

}  // namespace gtap::readers
