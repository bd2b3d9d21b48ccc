// A capture file opened for analysis: its process facts, definitions, chunk
// statistics and what recovery found, plus streaming access to API calls.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "gtap/format/blobs.h"
#include "gtap/format/reader.h"

namespace gtap::readers {

struct ReportFilter;

struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t forkedFromPid = 0;
  std::string hostname;
  std::string executable;
  std::vector<std::string> arguments;
  int32_t rank = -1;
  int32_t worldSize = -1;
  int64_t startRealtimeNs = 0;
  int64_t startHostNs = 0;
  std::string mode;
  std::string producer;
  std::vector<std::pair<std::string, std::string>> config;
};

struct FunctionName {
  std::string name;
  schema::Api api = schema::Api::UNKNOWN;
  bool unrecorded = false;  // passed through without being recorded (no events)
};

struct ThreadInfo {
  uint32_t id = 0;
  uint32_t osTid = 0;
  std::string name;
  int64_t firstHostNs = 0;
};

struct KindStats {
  uint64_t chunks = 0;
  uint64_t storedBytes = 0;  // including chunk headers
  uint64_t rawBytes = 0;
};

struct TrailerInfo {
  bool present = false;
  uint64_t eventsWritten = 0;
  uint64_t eventsDropped = 0;
  int64_t endHostNs = 0;
  std::string closeReason;
};

// One API call, paired from its begin and end events.
struct ApiCall {
  uint32_t thread = 0;
  uint32_t function = 0;
  int64_t beginNs = 0;
  int64_t endNs = 0;  // meaningful only when finished
  int64_t result = 0;
  bool finished = true;
  uint32_t depth = 0;  // nesting on its thread (0 = outermost)
  uint64_t beginIndex = 0;  // per-thread event index of its begin (device work refers to it)
};

class Capture {
 public:
  // Opens and reads the metadata; throws format::FormatError when the file
  // cannot be used at all. Damage after the first chunks is reported through
  // recovery() and notes(), not thrown.
  explicit Capture(const std::string& path);
  // Reads a capture held in memory (`data` must outlive this object).
  Capture(std::span<const uint8_t> data, const std::string& name);

  const std::string& path() const { return reader_->path(); }
  const format::Recovery& recovery() const { return reader_->recovery(); }
  const format::CaptureReader& reader() const { return *reader_; }
  const ProcessInfo& process() const { return process_; }
  const std::map<uint32_t, FunctionName>& functions() const { return functions_; }
  const std::map<uint32_t, ThreadInfo>& threads() const { return threads_; }
  const std::map<uint16_t, KindStats>& kindStats() const { return kindStats_; }
  const TrailerInfo& trailer() const { return trailer_; }
  // Problems met while reading (chunks that failed to decode, unknown kinds).
  const std::vector<std::string>& notes() const { return notes_; }

  std::string functionName(uint32_t id) const;
  // Functions the program could reach that gtap passed through unrecorded
  // (a newer runtime's, a driver's extensions), by name.
  std::vector<std::string> unrecordedFunctions() const;
  // "pid 123" or "rank 3 (pid 123)": how reports label this process.
  std::string label() const;

  // The bytes of a stored blob (its parts put together and checked against
  // its hash), or nothing when the file does not hold all of it or it is
  // damaged; what was wrong is added to notes().
  std::optional<std::vector<uint8_t>> blob(uint64_t hashLow, uint64_t hashHigh) const;
  // The same, throwing format::FormatError naming the blob and the chunk.
  std::vector<uint8_t> checkedBlob(const format::Hash128& hash) const;
  // Where every blob's parts are (made on first use, once).
  const format::BlobIndex& blobIndex() const;

  // Streams every API call in the file in per-thread order (threads
  // interleaved by chunk). Calls still open at the end of the file are passed
  // with finished == false. Returns the number of events read.
  uint64_t forEachCall(const std::function<void(const ApiCall&)>& visit) const;
  // The same calls, in the same order, a chunk's worth at a time: for readers
  // that go through every call, one indirect call per batch instead of per call.
  uint64_t forEachCallBatch(const std::function<void(std::span<const ApiCall>)>& visit) const;
  // The same whatever the filter: every call recorded.
  uint64_t forEachRecordedCallBatch(const std::function<void(std::span<const ApiCall>)>& visit) const;

  // What reports keep of this capture (report_filter.h): the calls above and
  // the device operations streamed (streamDeviceOps) are only those it keeps.
  void setFilter(std::shared_ptr<const ReportFilter> filter);
  const ReportFilter* filter() const { return filter_.get(); }

 private:
  void readMetadata();

  std::unique_ptr<format::CaptureReader> reader_;
  ProcessInfo process_;
  std::map<uint32_t, FunctionName> functions_;
  std::map<uint32_t, ThreadInfo> threads_;
  std::map<uint16_t, KindStats> kindStats_;
  TrailerInfo trailer_;
  mutable std::vector<std::string> notes_;
  mutable std::optional<format::BlobIndex> blobIndex_;
  // Blobs whose bytes were hashed and matched once: not hashed again.
  mutable std::unordered_set<format::Hash128, format::Hash128Hasher> verifiedBlobs_;
  std::shared_ptr<const ReportFilter> filter_;
  // With a kernel filter: the calls that appended a kept operation, found once.
  mutable std::optional<std::vector<std::pair<uint32_t, uint64_t>>> keptLaunches_;
};

// Whether a call's result is an error of its API: Level Zero's errors are
// 0x70000000 and up (ZE_RESULT_NOT_READY, 1, is not one); HSA's are 0x1000 and
// up (HSA_STATUS_INFO_BREAK, 1, is not one); an IREE HAL call's result is the
// code of the iree_status_t it returned, and any code but 0 (OK) is an error.
bool isErrorResult(schema::Api api, int64_t result);

std::string kindName(uint16_t kind);
std::string apiName(schema::Api api);

}  // namespace gtap::readers
