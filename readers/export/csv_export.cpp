// The CSV export: a file per table of the SQLite export, with its columns as
// the header (RFC 4180: fields holding a comma, a quote or a line break are
// quoted, quotes doubled; NULL is an empty field, empty text "").
#include <charconv>
#include <ostream>
#include <string>
#include <vector>

#include "gtap/readers/record_export.h"
#include "record_tables.h"

namespace gtap::readers {

namespace {

class CsvSink : public RecordSink {
 public:
  explicit CsvSink(const CsvOpener& open) : open_(open), streams_(recordTables().size()), opened_(streams_.size()) {}

  void row(RecordTable table, std::span<const RecordValue> values) override {
    std::ostream* out = stream(table);
    if (!out) return;
    char buffer[32];
    bool first = true;
    for (const RecordValue& v : values) {
      if (!first) out->put(',');
      first = false;
      switch (v.kind) {
        case RecordValue::Kind::null: break;
        case RecordValue::Kind::integer: {
          auto r = std::to_chars(buffer, buffer + sizeof buffer, v.integer);
          out->write(buffer, r.ptr - buffer);
          break;
        }
        case RecordValue::Kind::real: {
          auto r = std::to_chars(buffer, buffer + sizeof buffer, v.real);
          out->write(buffer, r.ptr - buffer);
          break;
        }
        case RecordValue::Kind::text: text(*out, v.text); break;
      }
    }
    out->put('\n');
  }

  // The tables every capture has, header only when they got no row.
  void finish() {
    for (const RecordTableInfo& t : recordTables())
      if (t.always) stream(t.table);
  }

 private:
  std::ostream* stream(RecordTable table) {
    size_t i = static_cast<size_t>(table);
    if (!opened_[i]) {
      opened_[i] = true;
      const RecordTableInfo& info = recordTable(table);
      streams_[i] = open_(info.name);
      if (streams_[i]) {
        for (size_t c = 0; c < info.columns.size(); ++c) {
          if (c) streams_[i]->put(',');
          *streams_[i] << info.columns[c].name;
        }
        streams_[i]->put('\n');
      }
    }
    return streams_[i];
  }

  static void text(std::ostream& out, std::string_view s) {
    if (!s.empty() && s.find_first_of(",\"\r\n") == std::string_view::npos) {
      out.write(s.data(), static_cast<std::streamsize>(s.size()));
      return;
    }
    out.put('"');
    for (char ch : s) {
      if (ch == '"') out.put('"');
      out.put(ch);
    }
    out.put('"');
  }

  const CsvOpener& open_;
  std::vector<std::ostream*> streams_;
  std::vector<bool> opened_;
};

}  // namespace

std::vector<std::string> recordTableNames() {
  std::vector<std::string> names;
  for (const RecordTableInfo& t : recordTables()) names.emplace_back(t.name);
  return names;
}

void writeCsv(std::span<const Capture* const> captures, const CsvOpener& open, std::vector<std::string>& notes,
              const std::function<FrameResolver()>& resolverForPart,
              const std::function<InstructionResolver()>& instructionsForPart) {
  CsvSink sink(open);
  writeRecordRows(captures, sink, notes, resolverForPart, instructionsForPart);
  sink.finish();
}

void writeCsv(const std::vector<LoadedCapture>& captures, const CsvOpener& open, const FrameResolver& resolve) {
  CsvSink sink(open);
  writeRecordRows(captures, sink, resolve);
  sink.finish();
}

}  // namespace gtap::readers
