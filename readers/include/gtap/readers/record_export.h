// Exports of a capture's records, one line or one row per API call and
// device operation: JSON Lines and an SQLite database. docs/export.md
// describes both; the timeline exporters are in timeline.h.
#pragma once

#include <ostream>
#include <stdexcept>
#include <vector>

#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/output_file.h"

namespace gtap::readers {

// One JSON object a line: every API call, then every device operation, of
// each capture in turn.
void writeJsonLines(const std::vector<LoadedCapture>& captures, std::ostream& out);

// What SQLite refused, in its own words.
struct SqliteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The captures as one database in `out`'s temporary file (the caller commits
// it), in one transaction. Throws SqliteError when SQLite fails.
void writeSqlite(const std::vector<LoadedCapture>& captures, OutputFile& out);

// "device", "hal" or "host": the level an operation was recorded at.
const char* operationLevel(const DeviceOp& op);

}  // namespace gtap::readers
