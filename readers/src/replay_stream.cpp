#include "gtap/readers/replay_stream.h"

#include "gtap/format/modes.h"

#include <kj/exception.h>

#include <algorithm>
#include <cstring>

namespace gtap::readers {

namespace {

FileReference fileReference(schema::FileRef::Reader f) {
  FileReference out;
  out.path = f.getPath();
  out.offset = f.getOffset();
  out.fileSize = f.getFileSize();
  out.device = f.getDevice();
  out.inode = f.getInode();
  out.mtimeNs = f.getMtimeNs();
  out.hasDigest = f.getHasDigest();
  out.digest = {f.getDigestLow(), f.getDigestHigh()};
  return out;
}

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
      if (p.hasOrigin() && p.getOrigin().getPath().size() > 0) out.origin = fileReference(p.getOrigin());
      break;
    }
    case schema::Payload::FILE:
      out.kind = ReplayPayload::Kind::file;
      out.file = fileReference(p.getFile());
      break;
  }
  return out;
}

ReplayRecord recordOf(schema::ReplayRecord::Reader r) {
  ReplayRecord out;
  out.seq = r.getSeq();
  out.thread = r.getThread();
  out.op = r.getOp();
  out.function = r.getFunction();
  out.object = r.getObject();
  for (auto v : r.getObjects()) out.objects.push_back(v);
  for (auto v : r.getValues()) out.values.push_back(v);
  for (auto v : r.getAddresses()) out.addresses.push_back(v);
  if (r.hasPayload()) out.payload = payloadOf(r.getPayload());
  out.text = r.getText();
  out.hostNs = r.getHostNs();
  return out;
}

std::string chunkAt(const Capture& capture, const format::ChunkInfo& c) {
  return capture.path() + ": chunk at offset " + std::to_string(c.offset);
}

}  // namespace

std::string replayOpName(schema::ReplayOp op) {
  using O = schema::ReplayOp;
  switch (op) {
    case O::UNSUPPORTED: return "unsupported";
    case O::DEVICE: return "device";
    case O::CONTEXT_CREATE: return "contextCreate";
    case O::CONTEXT_DESTROY: return "contextDestroy";
    case O::MEM_ALLOC: return "memAlloc";
    case O::MEM_FREE: return "memFree";
    case O::MODULE_CREATE: return "moduleCreate";
    case O::MODULE_DESTROY: return "moduleDestroy";
    case O::KERNEL_CREATE: return "kernelCreate";
    case O::KERNEL_DESTROY: return "kernelDestroy";
    case O::KERNEL_SET_GROUP_SIZE: return "kernelSetGroupSize";
    case O::KERNEL_SET_ARGUMENT: return "kernelSetArgument";
    case O::KERNEL_SET_INDIRECT_ACCESS: return "kernelSetIndirectAccess";
    case O::KERNEL_SET_GLOBAL_OFFSET: return "kernelSetGlobalOffset";
    case O::QUEUE_CREATE: return "queueCreate";
    case O::QUEUE_DESTROY: return "queueDestroy";
    case O::LIST_CREATE: return "listCreate";
    case O::LIST_CREATE_IMMEDIATE: return "listCreateImmediate";
    case O::LIST_CLOSE: return "listClose";
    case O::LIST_RESET: return "listReset";
    case O::LIST_DESTROY: return "listDestroy";
    case O::EVENT_POOL_CREATE: return "eventPoolCreate";
    case O::EVENT_POOL_DESTROY: return "eventPoolDestroy";
    case O::EVENT_CREATE: return "eventCreate";
    case O::EVENT_DESTROY: return "eventDestroy";
    case O::EVENT_HOST_SIGNAL: return "eventHostSignal";
    case O::EVENT_HOST_RESET: return "eventHostReset";
    case O::EVENT_HOST_SYNCHRONIZE: return "eventHostSynchronize";
    case O::EVENT_QUERY_STATUS: return "eventQueryStatus";
    case O::FENCE_CREATE: return "fenceCreate";
    case O::FENCE_DESTROY: return "fenceDestroy";
    case O::FENCE_RESET: return "fenceReset";
    case O::FENCE_HOST_SYNCHRONIZE: return "fenceHostSynchronize";
    case O::FENCE_QUERY_STATUS: return "fenceQueryStatus";
    case O::QUEUE_SYNCHRONIZE: return "queueSynchronize";
    case O::EXECUTE: return "execute";
    case O::LAUNCH_KERNEL: return "launchKernel";
    case O::COPY: return "copy";
    case O::COPY_REGION: return "copyRegion";
    case O::FILL: return "fill";
    case O::BARRIER: return "barrier";
    case O::SIGNAL_EVENT: return "signalEvent";
    case O::WAIT_ON_EVENTS: return "waitOnEvents";
    case O::EVENT_RESET: return "eventReset";
    case O::HOST_DATA: return "hostData";
    case O::READ_BACK: return "readBack";
    case O::SCOPE_BEGIN: return "scopeBegin";
    case O::SCOPE_END: return "scopeEnd";
  }
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
      auto decoded = reader.decode(c);
      for (auto r : decoded.root<schema::Replay>().getRecords()) stream.records.push_back(recordOf(r));
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
                              ": the program made no Level Zero call gtap records for replay");
    throw ReplayStreamError(capture.path() + " holds no replay stream: it was recorded with mode " + mode +
                            " (capture with --mode=" + mode + ",replay)");
  }
  stream.blobs = capture.blobIndex();
  // Threads race to the lock, so chunks may hold records out of order (a
  // single-threaded program's never do: no sort then).
  auto bySeq = [](const ReplayRecord& a, const ReplayRecord& b) { return a.seq < b.seq; };
  if (!std::is_sorted(stream.records.begin(), stream.records.end(), bySeq))
    std::stable_sort(stream.records.begin(), stream.records.end(), bySeq);
  const auto& rec = capture.recovery();
  if (!rec.closedCleanly || !stream.notes.empty()) {
    stream.complete = false;
    const ReplayRecord& last = stream.records.back();
    std::string why = !rec.closedCleanly
                          ? "the file was not closed cleanly: " + std::to_string(rec.validBytes) + " of " +
                                std::to_string(rec.fileSize) + " bytes are whole" +
                                (rec.stopReason.empty() ? std::string() : " (" + rec.stopReason + ")")
                          : std::to_string(stream.notes.size()) + " replay chunk(s) could not be decoded";
    stream.cutDescription = why + "; the last record read is " + recordLabel(last);
  }
  return stream;
}

}  // namespace gtap::readers
