// Report output: one table, printed for people (aligned text) or for scripts
// (CSV with a header row, or JSON Lines with one object per row). Numbers keep
// their raw value for scripts and a readable form for people.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gtap/readers/json.h"

namespace gtap::readers {

enum class OutputFormat { text, csv, jsonl };
// Returns false for an unknown name.
bool parseOutputFormat(const std::string& name, OutputFormat& out);

struct Cell {
  std::string text;               // shown to people
  std::optional<int64_t> integer; // raw value for scripts
  std::optional<double> real;

  static Cell str(std::string s) { return {std::move(s), std::nullopt, std::nullopt}; }
  static Cell count(int64_t v);
  static Cell nanoseconds(int64_t ns);  // text like "1.25 us"
  static Cell bytes(int64_t b);         // text like "3.0 MiB"
  static Cell ratio(double v, int decimals = 2);
};

// In JSON Lines each row begins with "type": the table's row type (as
// iree-profile's rows do), so rows of several tables can share one stream.
class Table {
 public:
  // `rowType` names what one row is ("kernel", "api_function"); no column may
  // be called "type".
  Table(std::string rowType, std::vector<std::string> columns);
  void add(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size(); }
  void print(std::ostream& out, OutputFormat format) const;

 private:
  std::string rowType_;
  std::vector<std::string> columns_;
  std::vector<std::vector<Cell>> rows_;
};

std::string formatNanoseconds(int64_t ns);
std::string formatBytes(uint64_t bytes);

}  // namespace gtap::readers
