#include "gtap/readers/capture.h"

#include <kj/exception.h>

#include <algorithm>
#include <cstring>

#include "gtap/format/api_events.h"
#include "gtap/readers/report_filter.h"

namespace gtap::readers {

namespace {
std::string at(const format::ChunkInfo& c) { return "chunk at offset " + std::to_string(c.offset); }
}  // namespace

std::string kindName(uint16_t kind) {
  std::string name = format::chunkKindName(kind);
  return name.rfind("kind ", 0) == 0 ? "kind" + std::to_string(kind) : name;
}

bool isErrorResult(schema::Api api, int64_t result) {
  switch (api) {
    case schema::Api::LEVEL_ZERO:
    case schema::Api::LEVEL_ZERO_TOOLS:
    case schema::Api::LEVEL_ZERO_SYSMAN:
      return static_cast<uint32_t>(result) >= 0x70000000u;
    case schema::Api::IREE_HAL:
      return result != 0;  // an iree_status_t's code; 0 is OK
    default:
      return static_cast<uint32_t>(result) >= 0x1000u;
  }
}

std::string apiName(schema::Api api) {
  switch (api) {
    case schema::Api::LEVEL_ZERO: return "ze";
    case schema::Api::LEVEL_ZERO_TOOLS: return "zet";
    case schema::Api::LEVEL_ZERO_SYSMAN: return "zes";
    case schema::Api::HSA: return "hsa";
    case schema::Api::IREE_HAL: return "hal";
    default: return "unknown";
  }
}

Capture::Capture(const std::string& path) : reader_(std::make_unique<format::CaptureReader>(path)) {
  readMetadata();
}

Capture::Capture(std::span<const uint8_t> data, const std::string& name)
    : reader_(std::make_unique<format::CaptureReader>(data, name)) {
  readMetadata();
}

std::vector<std::string> Capture::unrecordedFunctions() const {
  std::vector<std::string> names;
  for (const auto& [id, f] : functions_)
    if (f.unrecorded) names.push_back(f.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string Capture::functionName(uint32_t id) const {
  auto it = functions_.find(id);
  return it == functions_.end() ? "function#" + std::to_string(id) : it->second.name;
}

std::string Capture::label() const {
  std::string pid = "pid " + std::to_string(process_.pid);
  return process_.rank >= 0 ? "rank " + std::to_string(process_.rank) + " (" + pid + ")" : pid;
}

void Capture::readMetadata() {
  const auto& chunks = reader_->chunks();
  // With no whole chunk the reason the walk stopped (a damaged first chunk,
  // a cut) is the answer.
  if (chunks.empty())
    throw format::FormatError(reader_->recovery().stopReason.empty()
                                  ? path() + ": offset 16: the file holds no chunk"
                                  : reader_->recovery().stopReason + " (no whole chunk before it)");
  if (chunks.front().kind != static_cast<uint16_t>(schema::ChunkKind::FILE_INFO))
    throw format::FormatError(path() + ": offset 16: expected the fileInfo chunk first, found " +
                              kindName(chunks.front().kind));
  for (const auto& c : chunks) {
    auto& s = kindStats_[c.kind];
    ++s.chunks;
    s.storedBytes += format::kChunkHeaderSize + c.storedSize;
    s.rawBytes += c.rawSize;
    auto kind = static_cast<schema::ChunkKind>(c.kind);
    if (kind != schema::ChunkKind::FILE_INFO && kind != schema::ChunkKind::DEFINITIONS &&
        kind != schema::ChunkKind::TRAILER) {
      if (c.kind > static_cast<uint16_t>(schema::ChunkKind::RANGES))
        notes_.push_back(at(c) + ": unknown chunk kind " + std::to_string(c.kind) + ", skipped");
      continue;
    }
    try {
      auto decoded = reader_->decode(c);
      if (kind == schema::ChunkKind::FILE_INFO) {
        auto info = decoded.root<schema::FileInfo>();
        process_.pid = info.getPid();
        process_.ppid = info.getPpid();
        process_.forkedFromPid = info.getForkedFromPid();
        process_.hostname = info.getHostname();
        process_.executable = info.getExecutable();
        for (auto a : info.getArguments()) process_.arguments.emplace_back(a);
        process_.rank = info.getRank();
        process_.worldSize = info.getWorldSize();
        process_.startRealtimeNs = info.getStartRealtimeNs();
        process_.startHostNs = info.getStartHostNs();
        process_.mode = info.getMode();
        process_.producer = info.getProducer();
        for (auto kv : info.getConfig()) process_.config.emplace_back(kv.getKey(), kv.getValue());
      } else if (kind == schema::ChunkKind::DEFINITIONS) {
        auto defs = decoded.root<schema::Definitions>();
        for (auto f : defs.getFunctions()) functions_[f.getId()] = {f.getName(), f.getApi(), f.getUnrecorded()};
        for (auto t : defs.getThreads())
          threads_[t.getId()] = {t.getId(), t.getOsTid(), t.getName(), t.getFirstHostNs()};
      } else {
        auto t = decoded.root<schema::Trailer>();
        trailer_.present = true;
        trailer_.eventsWritten = t.getEventsWritten();
        trailer_.eventsDropped = t.getEventsDropped();
        trailer_.endHostNs = t.getEndHostNs();
        trailer_.closeReason = t.getCloseReason();
        // The index is not used to find chunks (the walk does that), but an
        // entry that disagrees with the file says the trailer is damaged.
        uint64_t wrong = 0;
        std::string firstWrong;
        for (auto ref : t.getChunks()) {
          auto it = std::lower_bound(chunks.begin(), chunks.end(), ref.getOffset(),
                                     [](const format::ChunkInfo& x, uint64_t off) { return x.offset < off; });
          if (it != chunks.end() && it->offset == ref.getOffset() && it->kind == ref.getKind() &&
              it->storedSize == ref.getStoredSize())
            continue;
          if (!wrong++)
            firstWrong = "offset " + std::to_string(ref.getOffset()) + ", " + kindName(ref.getKind()) + ", " +
                         std::to_string(ref.getStoredSize()) + " bytes";
        }
        if (wrong)
          notes_.push_back(path() + ": " + at(c) + ": trailer: " + std::to_string(wrong) + " of " +
                           std::to_string(t.getChunks().size()) +
                           " index entries name no chunk of the file (first: " + firstWrong + ")");
      }
    } catch (const format::FormatError& e) {
      notes_.push_back(e.what());
    } catch (const kj::Exception& e) {
      notes_.push_back(path() + ": " + at(c) + ": malformed " + kindName(c.kind) + ": " +
                       e.getDescription().cStr());
    }
  }
}

const format::BlobIndex& Capture::blobIndex() const {
  if (!blobIndex_) blobIndex_ = format::indexBlobs(*reader_, notes_);
  return *blobIndex_;
}

std::vector<uint8_t> Capture::checkedBlob(const format::Hash128& hash) const {
  const auto& index = blobIndex();
  auto it = index.find(hash);
  if (it == index.end()) throw format::FormatError(path() + ": blob " + hash.hex() + " is not in the file");
  auto bytes = format::assembleBlob(*reader_, hash, it->second, verifiedBlobs_.count(hash) != 0);
  verifiedBlobs_.insert(hash);
  return bytes;
}

std::optional<std::vector<uint8_t>> Capture::blob(uint64_t hashLow, uint64_t hashHigh) const {
  if (!blobIndex().count({hashLow, hashHigh})) return std::nullopt;
  try {
    return checkedBlob({hashLow, hashHigh});
  } catch (const format::FormatError& e) {
    notes_.push_back(e.what());
    return std::nullopt;
  }
}

uint64_t Capture::forEachCall(const std::function<void(const ApiCall&)>& visit) const {
  return forEachCallBatch([&](std::span<const ApiCall> calls) {
    for (const ApiCall& call : calls) visit(call);
  });
}

void Capture::setFilter(std::shared_ptr<const ReportFilter> filter) {
  filter_ = std::move(filter);
  keptLaunches_.reset();
}

uint64_t Capture::forEachCallBatch(const std::function<void(std::span<const ApiCall>)>& visit) const {
  if (!filter_ || !filter_->narrowsRecords()) return forEachRecordedCallBatch(visit);
  if (!filter_->kernel.empty() && !keptLaunches_) {
    keptLaunches_ = callsOfKeptOps(*this);
    std::sort(keptLaunches_->begin(), keptLaunches_->end());
  }
  std::vector<ApiCall> kept;
  return forEachRecordedCallBatch([&](std::span<const ApiCall> calls) {
    kept.clear();
    for (const ApiCall& call : calls) {
      if (!filter_->keepsCallTime(*this, call)) continue;
      if (keptLaunches_ && !std::binary_search(keptLaunches_->begin(), keptLaunches_->end(),
                                               std::make_pair(call.thread, call.beginIndex)))
        continue;
      kept.push_back(call);
    }
    if (!kept.empty()) visit(kept);
  });
}

uint64_t Capture::forEachRecordedCallBatch(const std::function<void(std::span<const ApiCall>)>& visit) const {
  struct Open {
    uint32_t function;
    int64_t beginNs;
    uint64_t index;
  };
  struct ThreadCursor {
    std::vector<Open> open;
    uint64_t nextIndex = 0;
    bool seen = false;
  };
  std::map<uint32_t, ThreadCursor> cursors;
  std::vector<ApiCall> batch;
  uint64_t events = 0;
  for (const auto& c : reader_->chunks()) {
    if (c.kind != static_cast<uint16_t>(schema::ChunkKind::API_EVENTS)) continue;
    try {
      auto decoded = reader_->decode(c);
      auto ev = decoded.root<schema::ApiEvents>();
      const uint32_t n = ev.getCount();
      const uint32_t thread = ev.getThread();
      const uint64_t firstIndex = ev.getFirstIndex();
      auto encoded = ev.getEncoded();
      const bool callEvents = ev.getCallEvents();
      // Every event takes at least two bytes (two one-byte varints): a count
      // beyond that is damage, refused before it sizes anything.
      if (n > encoded.size() / 2) {
        notes_.push_back(path() + ": " + at(c) + ": apiEvents: count " + std::to_string(n) + " but only " +
                         std::to_string(encoded.size()) + " encoded bytes (at most " +
                         std::to_string(encoded.size() / 2) + " events)");
        continue;
      }
      ThreadCursor& cur = cursors[thread];
      if (cur.seen && firstIndex != cur.nextIndex)
        notes_.push_back(path() + ": " + at(c) + ": thread " + std::to_string(thread) + " events " +
                         std::to_string(cur.nextIndex) + ".." + std::to_string(firstIndex) + " are missing");
      cur.seen = true;
      cur.nextIndex = firstIndex + n;
      batch.clear();
      std::string problem;
      if (callEvents) {
        // One event per call, in the order the calls began; a begin alone is
        // a call that never returned.
        batch.reserve(n);
        uint64_t index = firstIndex;
        problem = format::decodeCallEvents(
            encoded.begin(), encoded.size(), n, ev.getBaseHostNs(), [&](const format::ApiEvent& e) {
              batch.push_back({thread, e.function, e.timeNs, e.endNs, e.result, e.kind == format::ApiEventKind::call,
                               e.depth, index++});
            });
      } else {
        // A call is two events of at least 2 and 3 encoded bytes: the
        // declared count alone must not size the batch.
        batch.reserve(std::min<size_t>(n / 2, encoded.size() / 5) + 1);
        uint32_t index = 0;
        problem = format::decodeApiEvents(
            encoded.begin(), encoded.size(), n, ev.getBaseHostNs(), [&](const format::ApiEvent& e) {
              if (e.kind == format::ApiEventKind::callBegin) {
                cur.open.push_back({e.function, e.timeNs, firstIndex + index});
              } else if (cur.open.empty() || cur.open.back().function != e.function) {
                notes_.push_back(path() + ": " + at(c) + ": event " + std::to_string(index) + ": end of " +
                                 functionName(e.function) + " without its begin");
              } else {
                const Open& o = cur.open.back();
                batch.push_back({thread, o.function, o.beginNs, e.timeNs, e.result, true,
                                 static_cast<uint32_t>(cur.open.size() - 1), o.index});
                cur.open.pop_back();
              }
              ++index;
            });
      }
      if (!problem.empty()) notes_.push_back(path() + ": " + at(c) + ": apiEvents: " + problem);
      events += n;
      if (!batch.empty()) visit(batch);
    } catch (const format::FormatError& e) {
      notes_.push_back(e.what());
    } catch (const kj::Exception& e) {
      notes_.push_back(path() + ": " + at(c) + ": malformed apiEvents: " + e.getDescription().cStr());
    }
  }
  batch.clear();
  for (auto& [thread, cur] : cursors) {
    for (size_t d = 0; d < cur.open.size(); ++d)
      batch.push_back({thread, cur.open[d].function, cur.open[d].beginNs, 0, 0, false, static_cast<uint32_t>(d),
                       cur.open[d].index});
  }
  if (!batch.empty()) visit(batch);
  return events;
}

}  // namespace gtap::readers
