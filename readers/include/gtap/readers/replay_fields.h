// A replay record's fields, named and typed as the schema defines its
// operation (format/schema/capture.capnp, ReplayRecord's union), read by
// reflection: dump's text and JSON output, the summary and docs/replay.md's
// table all follow the one definition.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gtap/readers/replay_stream.h"

namespace gtap::readers {

struct ReplayField {
  enum class Kind {
    id,       // one gtap replay id (0: none), or the seq of another record
    ids,      // a list of ids: waits=[3,4]
    number,   // one scalar
    tuple,    // scalars that belong together: groups=4,1,1
    address,  // an address as the program had it, shown in hex
    hex,      // a scalar best read in hex (vendor and device ids)
    text,
    integer,   // one signed scalar (signal values)
    integers,  // a list of signed scalars: values=[1,-1]
    records,  // a list of structs, each its own fields: pointers=[{offset=0 size=8 ...}]
  };
  std::string name;
  Kind kind = Kind::number;
  std::vector<uint64_t> values;
  std::string text;
  std::vector<std::vector<ReplayField>> records;
};

// Every field of the record's operation, in the schema's order. Text fields
// appear when the record holds them.
std::vector<ReplayField> replayFields(const ReplayRecord& r);

// Throws kj::Exception when any pointer in the record (its operation's
// fields, payload, function) is not of the kind the schema gives it: readers
// check each record once at load, so later reads cannot throw.
void checkReplayRecordShape(schema::ReplayRecord::Reader r);

// "kernel=7", "waits=[3,4]", "groups=4,1,1", "dst=0x7f00", "name=\"vector_add\"".
std::string fieldText(const ReplayField& f);
// The field's value as JSON (number, array or string).
std::string fieldJson(const ReplayField& f);

// What the schema says of an operation ($replayMakes, $replayAppends).
bool createsObject(ReplayOp op);
bool isDeviceOperation(ReplayOp op);
// The id of the object an operation that makes one makes (its struct's first
// field), or 0.
uint64_t createdObject(const ReplayRecord& r);

// Every operation with its fields and notes as a Markdown table
// (docs/replay.md's "Records", `gtap dump --ops`).
void writeReplayOpsMarkdown(std::ostream& out);

}  // namespace gtap::readers
