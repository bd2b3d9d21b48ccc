// The record exports' tables (SQLite and CSV): their names and columns, and
// the one source of their rows. docs/export.md describes each table; the
// SQLite export creates them with these columns and types, the CSV export
// writes a file per table with these columns as its header.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtap/readers/instruction_samples.h"
#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/stack_frames.h"

namespace gtap::readers {

// A table, by its place in recordTables().
enum class RecordTable : uint8_t {
  processes,
  threads,
  strings,
  apiCalls,
  deviceOps,
  allocations,
  frames,
  stackFrames,
  instructionSamples,
  counterSets,
  counterSetCounters,
  counters,
  counterNotes,
  deviceMetrics,
  ranges,
};

struct RecordColumn {
  const char* name;
  const char* sqlType;  // the SQLite declaration after the name ("INTEGER REFERENCES processes")
};

struct RecordTableInfo {
  RecordTable table;
  const char* name;
  std::vector<RecordColumn> columns;
  // Written even without rows (a CSV file holding its header): the tables
  // every capture has.
  bool always;
};

// Every table, in RecordTable order.
std::span<const RecordTableInfo> recordTables();
const RecordTableInfo& recordTable(RecordTable table);
// The table named `name`, or nullptr.
const RecordTableInfo* recordTableNamed(std::string_view name);

// One value of a row: NULL, a whole number, a real number or text. Text is
// only pointed to: it lives as long as the row call.
struct RecordValue {
  enum class Kind : uint8_t { null, integer, real, text };
  Kind kind = Kind::null;
  int64_t integer = 0;
  double real = 0;
  std::string_view text;

  RecordValue() = default;
  template <std::integral T>
  RecordValue(T v) : kind(Kind::integer), integer(static_cast<int64_t>(v)) {}
  RecordValue(std::string_view v) : kind(Kind::text), text(v) {}
  RecordValue(const std::string& v) : kind(Kind::text), text(v) {}
  RecordValue(const char* v) : kind(Kind::text), text(v) {}
  // A measured number: a whole one as an integer, others as reals, NULL when
  // not finite.
  static RecordValue number(double v);
  // `v` when `set`, else NULL.
  static RecordValue integerOr(bool set, int64_t v) { return set ? RecordValue(v) : RecordValue(); }
  static RecordValue textOr(std::string_view v) { return v.empty() ? RecordValue() : RecordValue(v); }
};

// Where the rows go. A row holds a value per column of its table, in order.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void row(RecordTable table, std::span<const RecordValue> values) = 0;
  void row(RecordTable table, std::initializer_list<RecordValue> values) {
    row(table, std::span<const RecordValue>(values.begin(), values.size()));
  }
};

// Every row of the captures, table by table as each capture is read: its
// process and threads, its API calls, counter sets, device operations (with
// their counters), device metrics, allocations and frees, stacks and frames,
// and sampled instructions. Strings the rows share (function and kernel
// names, queues) are rows of `strings`, each once, before the first row that
// names them.
void writeRecordRows(const std::vector<LoadedCapture>& captures, RecordSink& sink, const FrameResolver& resolve);
// The same, reading each capture's device operations a batch at a time,
// several captures at once (up to readJobs(), each on a thread of its own
// with the resolvers `resolverForPart()` and `instructionsForPart()` give
// it; empty functions: frames as module+0xoffset); the sink gets the rows in
// capture order on the calling thread, the same whatever the number of
// threads. What reading found wrong is added to `notes`, each note once.
void writeRecordRows(std::span<const Capture* const> captures, RecordSink& sink, std::vector<std::string>& notes,
                     const std::function<FrameResolver()>& resolverForPart,
                     const std::function<InstructionResolver()>& instructionsForPart);

}  // namespace gtap::readers
