// Replay records of formats 1.0 and 1.1 held each operation's fields in
// positional lists (`object`, `objects`, `values`, `addresses`, `text`).
// Readers convert them on load into today's typed records, so everything
// after loading reads one form.
#pragma once

#include <capnp/message.h>

#include <memory>

#include "gtap/format/schema/capture.capnp.h"

namespace gtap::readers {

bool anyPositional(capnp::List<schema::ReplayRecord>::Reader records);

// A message whose root Replay holds `records` with every positional record
// converted (the others copied as they are). Throws kj::Exception for a
// record whose values do not fit its operation's fields.
std::unique_ptr<capnp::MallocMessageBuilder> convertPositionalRecords(
    capnp::List<schema::ReplayRecord>::Reader records);

}  // namespace gtap::readers
