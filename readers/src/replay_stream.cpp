#include "gtap/readers/replay_stream.h"

#include "gtap/format/modes.h"
#include "gtap/readers/replay_fields.h"
#include "gtap/readers/replay_positional.h"

#include <capnp/schema.h>
#include <kj/exception.h>

#include <algorithm>
#include <cstring>

namespace gtap::readers {

namespace {

ReplayPayload payloadOf(schema::Payload::Reader p) {
  ReplayPayload out;
  out.size = p.getSize();
  switch (p.which()) {
    case schema::Payload::NONE: break;
    case schema::Payload::INLINE: {
      auto d = p.getInline();
      out.kind = ReplayPayload::Kind::inlineBytes;
      out.bytes.assign(d.begin(), d.end());
      break;
    }
    case schema::Payload::BLOB: {
      auto b = p.getBlob();
      out.kind = ReplayPayload::Kind::blob;
      out.blob = {b.getHashLow(), b.getHashHigh()};
      out.blobSize = b.getSize();
      out.blobOffset = p.getBlobOffset();
      if (p.hasOrigin() && p.getOrigin().getPath().size() > 0) out.origin = format::fileIdentityOf(p.getOrigin());
      break;
    }
    case schema::Payload::FILE:
      out.kind = ReplayPayload::Kind::file;
      out.file = format::fileIdentityOf(p.getFile());
      break;
  }
  return out;
}

ReplayRecord recordOf(schema::ReplayRecord::Reader r) {
  ReplayRecord out;
  out.seq = r.getSeq();
  out.thread = r.getThread();
  out.op = r.which();
  out.function = r.getFunction();
  if (r.hasPayload()) out.payload = payloadOf(r.getPayload());
  out.hostNs = r.getHostNs();
  out.fields = r;
  return out;
}

std::string chunkAt(const Capture& capture, const format::ChunkInfo& c) {
  return capture.path() + ": chunk at offset " + std::to_string(c.offset);
}

}  // namespace

std::string replayOpName(ReplayOp op) {
  auto member = capnp::Schema::from<schema::ReplayRecord>().getFieldByDiscriminant(static_cast<uint16_t>(op));
  KJ_IF_MAYBE (field, member) return field->getProto().getName();
  return "op" + std::to_string(static_cast<unsigned>(op));
}

std::string recordLabel(const ReplayRecord& r) {
  return "seq " + std::to_string(r.seq) + " (" + replayOpName(r.op) + ")";
}

std::optional<size_t> ReplayStream::find(uint64_t seq) const {
  auto it = std::lower_bound(records.begin(), records.end(), seq,
                             [](const ReplayRecord& r, uint64_t s) { return r.seq < s; });
  if (it == records.end() || it->seq != seq) return std::nullopt;
  return static_cast<size_t>(it - records.begin());
}

std::optional<std::vector<uint8_t>> ReplayStream::blob(const Capture& capture, const format::Hash128& hash) const {
  if (!blobs.count(hash)) return std::nullopt;
  try {
    return capture.checkedBlob(hash);
  } catch (const format::FormatError&) {
    return std::nullopt;
  }
}

ReplayStream loadReplayStream(const Capture& capture) {
  ReplayStream stream;
  const auto& reader = capture.reader();
  for (const auto& c : reader.chunks()) {
    auto kind = static_cast<schema::ChunkKind>(c.kind);
    if (kind != schema::ChunkKind::REPLAY) continue;
    try {
      // Copied once into a message the stream owns (positional records
      // converted): the copy checks every pointer under the chunk's reading
      // limits, and later reads (replay and bench read each record once per
      // iteration) meet neither those limits nor a malformed pointer.
      auto decoded = reader.decode(c);
      std::shared_ptr<capnp::MallocMessageBuilder> owned = typedRecords(decoded.root<schema::Replay>().getRecords());
      auto records = owned->getRoot<schema::Replay>().asReader().getRecords();
      stream.storage.push_back(std::move(owned));  // before any record points into it
      if (size_t need = stream.records.size() + records.size(); need > stream.records.capacity())
        stream.records.reserve(std::max(need, 2 * stream.records.capacity()));
      for (unsigned i = 0; i < records.size(); ++i) {
        try {
          checkReplayRecordShape(records[i]);
          stream.records.push_back(recordOf(records[i]));
        } catch (const kj::Exception& e) {
          // One malformed record is named and left out; the chunk's others stay.
          stream.notes.push_back(chunkAt(capture, c) + ": record " + std::to_string(i) + " of " +
                                 std::to_string(records.size()) + " is malformed: " + e.getDescription().cStr());
        }
      }
    } catch (const format::FormatError& e) {
      stream.notes.push_back(e.what());
    } catch (const kj::Exception& e) {
      stream.notes.push_back(chunkAt(capture, c) + ": malformed " + kindName(c.kind) + ": " +
                             e.getDescription().cStr());
    }
  }
  if (stream.records.empty()) {
    // Suggest the mode only to a capture that was not recorded with it.
    const std::string& mode = capture.process().mode.empty() ? std::string("api") : capture.process().mode;
    uint32_t bits = 0;
    std::string error;
    if (format::parseModeList(mode, bits, error) && (bits & format::kModeReplay))
      throw ReplayStreamError(capture.path() + " holds no replay stream although it was recorded with mode " + mode +
                              ": the program made no Level Zero or HSA call gtap records for replay");
    throw ReplayStreamError(capture.path() + " holds no replay stream: it was recorded with mode " + mode +
                            " (capture with --mode=" + mode + ",replay)");
  }
  stream.blobs = capture.blobIndex();
  // Records of several threads, or a thread's appends left in its buffer
  // until the next flush, may come in a later chunk than records with a
  // higher seq (docs/replay.md); a one-thread program's come in order.
  auto bySeq = [](const ReplayRecord& a, const ReplayRecord& b) { return a.seq < b.seq; };
  if (!std::is_sorted(stream.records.begin(), stream.records.end(), bySeq)) {
    // The order worked out on (seq, place) pairs, then each record moved
    // once: records are large to move about.
    std::vector<std::pair<uint64_t, size_t>> order(stream.records.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = {stream.records[i].seq, i};
    std::sort(order.begin(), order.end());
    std::vector<ReplayRecord> sorted;
    sorted.reserve(order.size());
    for (const auto& [seq, at] : order) sorted.push_back(std::move(stream.records[at]));
    stream.records = std::move(sorted);
  }
  const auto& rec = capture.recovery();
  if (!rec.closedCleanly || !stream.notes.empty()) {
    stream.complete = false;
    const ReplayRecord& last = stream.records.back();
    std::string why = !rec.closedCleanly
                          ? "the file was not closed cleanly: " + std::to_string(rec.validBytes) + " of " +
                                std::to_string(rec.fileSize) + " bytes are whole" +
                                (rec.stopReason.empty() ? std::string() : " (" + rec.stopReason + ")")
                          : std::to_string(stream.notes.size()) + " replay chunk(s) or record(s) could not be read";
    stream.cutDescription = why + "; the last record read is " + recordLabel(last);
  }
  return stream;
}

}  // namespace gtap::readers
