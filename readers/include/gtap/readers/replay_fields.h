// A replay record's generic fields named as docs/replay.md lists them per op
// (launchKernel: list, kernel, signal, waits, groups, cooperative, dispatch),
// for dump's text and JSON output alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gtap/readers/replay_stream.h"

namespace gtap::readers {

struct ReplayField {
  enum class Kind {
    id,       // one gtap replay id (0: none)
    ids,      // a list of ids: waits=[3,4]
    number,   // one scalar
    tuple,    // scalars that belong together: groups=4,1,1
    address,  // an address as the program had it, shown in hex
    hex,      // a scalar best read in hex (vendor and device ids)
    text,
  };
  std::string name;
  Kind kind = Kind::number;
  std::vector<uint64_t> values;
  std::string text;
};

// Every field of the record (object, objects, values, addresses, text); values
// beyond what the op defines are kept under "extra" so nothing is hidden.
std::vector<ReplayField> replayFields(const ReplayRecord& r);

// "kernel=7", "waits=[3,4]", "groups=4,1,1", "dst=0x7f00", "name=\"vector_add\"".
std::string fieldText(const ReplayField& f);
// The field's value as JSON (number, array or string).
std::string fieldJson(const ReplayField& f);

}  // namespace gtap::readers
