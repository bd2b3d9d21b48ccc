// Exports of a capture's records, one line or one row per API call and
// device operation: JSON Lines and an SQLite database. docs/export.md
// describes both; the timeline exporters are in timeline.h.
#pragma once

#include <functional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gtap/readers/instruction_samples.h"
#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/output_file.h"
#include "gtap/readers/stack_frames.h"

namespace gtap::readers {

// The device operations of one capture as an export reads them: calls its
// argument with every operation in file order, a batch at a time.
using OpBatches = std::function<void(const std::function<void(std::span<const DeviceOp>)>&)>;

// The version of the JSON Lines export's rows, in its first line
// (`"type":"schema"`); raised when a row type's fields change meaning.
inline constexpr int kJsonLinesSchemaVersion = 1;

// One JSON object a line: a schema line, then for each capture in turn its
// process line, every API call, every device operation (a launch with the id
// of its stack), the totals per level and copy direction, every allocation
// and free, and every CPU stack, its frames named by `resolve`
// (module+0xoffset without one).
void writeJsonLines(const std::vector<LoadedCapture>& captures, std::ostream& out, const FrameResolver& resolve = {});
// The same, reading each capture's device operations a batch at a time
// (visitDeviceWork); what reading found wrong is added to `notes`. Mode
// samples adds a line per sampled kernel instruction (`"type":"instruction"`),
// named by `instructions`.
void writeJsonLines(std::span<const Capture* const> captures, std::ostream& out, std::vector<std::string>& notes,
                    const FrameResolver& resolve = {}, const InstructionResolver& instructions = {});

// The same lines, each capture's written on a thread of its own (up to
// readJobs() at once) and copied out in order, so the output is the same
// whatever the number of threads; a capture's stacks are named by the
// resolvers `resolverForPart()` and `instructionsForPart()` give it (called
// once a capture, on its thread).
void writeJsonLinesInParallel(std::span<const Capture* const> captures, std::ostream& out,
                              std::vector<std::string>& notes, const std::function<FrameResolver()>& resolverForPart,
                              const std::function<InstructionResolver()>& instructionsForPart);

// What SQLite refused, in its own words.
struct SqliteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The captures as one database in `out`'s temporary file (the caller commits
// it), in one transaction. Throws SqliteError when SQLite fails.
void writeSqlite(const std::vector<LoadedCapture>& captures, OutputFile& out, const FrameResolver& resolve = {});
// The same, reading each capture's device operations a batch at a time and
// several captures at once (gtap -j), each capture's stacks named by the
// resolvers `resolverForPart()` and `instructionsForPart()` give it (called
// once a capture, on its thread; empty: module+0xoffset), sampled
// instructions in `instruction_samples`. The database is the same whatever
// the number of threads.
void writeSqlite(std::span<const Capture* const> captures, OutputFile& out, std::vector<std::string>& notes,
                 const std::function<FrameResolver()>& resolverForPart = {},
                 const std::function<InstructionResolver()>& instructionsForPart = {});

// The CSV export: a file per table of the SQLite export, with the same
// columns (its header line) and rows. `open(table)` gives the stream of a
// table's file the first time the table has a row, and at the end for the
// tables every capture has (processes, threads, strings, api_calls,
// device_ops, allocations) that had none; nullptr leaves a table out.
using CsvOpener = std::function<std::ostream*(std::string_view table)>;
// The captures are read as writeSqlite reads them.
void writeCsv(std::span<const Capture* const> captures, const CsvOpener& open, std::vector<std::string>& notes,
              const std::function<FrameResolver()>& resolverForPart = {},
              const std::function<InstructionResolver()>& instructionsForPart = {});
void writeCsv(const std::vector<LoadedCapture>& captures, const CsvOpener& open, const FrameResolver& resolve = {});
// The tables of the SQLite and CSV exports, in order.
std::vector<std::string> recordTableNames();

// "device", "hal" or "host": the level an operation was recorded at.
const char* operationLevel(const DeviceOp& op);

}  // namespace gtap::readers
