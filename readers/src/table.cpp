#include "gtap/readers/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gtap::readers {

bool parseOutputFormat(const std::string& name, OutputFormat& out) {
  if (name == "text") out = OutputFormat::text;
  else if (name == "csv") out = OutputFormat::csv;
  else if (name == "jsonl") out = OutputFormat::jsonl;
  else return false;
  return true;
}

std::string formatNanoseconds(int64_t ns) {
  char buf[32];
  double v = static_cast<double>(ns);
  double a = std::fabs(v);
  if (a < 1e3) std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  else if (a < 1e6) std::snprintf(buf, sizeof buf, "%.2f us", v / 1e3);
  else if (a < 1e9) std::snprintf(buf, sizeof buf, "%.2f ms", v / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3f s", v / 1e9);
  return buf;
}

std::string formatBytes(uint64_t b) {
  char buf[32];
  double v = static_cast<double>(b);
  if (b < 1024) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  else if (b < (1ull << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", v / 1024);
  else if (b < (1ull << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", v / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.2f GiB", v / (1 << 30));
  return buf;
}

Cell Cell::count(int64_t v) { return {std::to_string(v), v, std::nullopt}; }
Cell Cell::nanoseconds(int64_t ns) { return {formatNanoseconds(ns), ns, std::nullopt}; }
Cell Cell::bytes(int64_t b) { return {formatBytes(static_cast<uint64_t>(b)), b, std::nullopt}; }
Cell Cell::ratio(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return {buf, std::nullopt, v};
}


namespace {
std::string raw(const Cell& c) {
  if (c.integer) return std::to_string(*c.integer);
  if (c.real) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", *c.real);
    return buf;
  }
  return c.text;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
// A column's name for scripts (JSON Lines keys, CSV header): spaces become
// underscores, as in "device_time".
std::string key(std::string column) {
  std::replace(column.begin(), column.end(), ' ', '_');
  return column;
}
}  // namespace

Table::Table(std::string rowType, std::vector<std::string> columns)
    : rowType_(std::move(rowType)), columns_(std::move(columns)) {
  for (const auto& c : columns_)
    if (c == "type") throw std::logic_error("table " + rowType_ + ": a column may not be called \"type\"");
}

void Table::print(std::ostream& out, OutputFormat format) const {
  if (format == OutputFormat::jsonl) {
    for (const auto& row : rows_) {
      out << "{\"type\":\"" << jsonEscape(rowType_) << '"';
      for (size_t i = 0; i < columns_.size() && i < row.size(); ++i) {
        out << ",\"" << jsonEscape(key(columns_[i])) << "\":";
        const Cell& c = row[i];
        if (c.integer || c.real) out << raw(c);
        else out << '"' << jsonEscape(c.text) << '"';
      }
      out << "}\n";
    }
    return;
  }
  if (format == OutputFormat::csv) {
    for (size_t i = 0; i < columns_.size(); ++i) out << (i ? "," : "") << csvField(key(columns_[i]));
    out << '\n';
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csvField(raw(row[i]));
      out << '\n';
    }
    return;
  }
  std::vector<size_t> width(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) width[i] = columns_[i].size();
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].text.size());
  auto line = [&](auto cellText, auto isNumber) {
    for (size_t i = 0; i < columns_.size(); ++i) {
      std::string t = cellText(i);
      size_t pad = width[i] - std::min(width[i], t.size());
      if (i) out << "  ";
      if (isNumber(i)) out << std::string(pad, ' ') << t;
      else out << t << (i + 1 < columns_.size() ? std::string(pad, ' ') : "");
    }
    out << '\n';
  };
  auto numericColumn = [&](size_t i) {
    for (const auto& row : rows_)
      if (i < row.size() && (row[i].integer || row[i].real)) return true;
    return false;
  };
  line([&](size_t i) { return columns_[i]; }, numericColumn);
  for (const auto& row : rows_)
    line([&](size_t i) { return i < row.size() ? row[i].text : std::string(); },
         [&](size_t i) { return i < row.size() && (row[i].integer || row[i].real); });
}

}  // namespace gtap::readers
