// Replay records of formats 1.0 and 1.1 held each operation's fields in
// positional lists (`object`, `objects`, `values`, `addresses`, `text`).
// Readers convert them on load into today's typed records (copying the
// others into a message of their own), so everything after loading reads one
// form from memory the reader owns.
#pragma once

#include <capnp/message.h>

#include <memory>

#include "gtap/format/schema/capture.capnp.h"

namespace gtap::readers {

// A message whose root Replay holds `records`, every positional record
// converted and the others copied as they are. Throws kj::Exception for a
// malformed record or one whose values do not fit its operation's fields.
std::unique_ptr<capnp::MallocMessageBuilder> typedRecords(capnp::List<schema::ReplayRecord>::Reader records);

}  // namespace gtap::readers
