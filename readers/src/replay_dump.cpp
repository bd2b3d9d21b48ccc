#include "gtap/readers/replay_dump.h"

#include <map>
#include <ostream>

#include "gtap/readers/json.h"
#include "gtap/readers/replay_fields.h"
#include "gtap/readers/replay_summary.h"

namespace gtap::readers {

namespace {

// Inline payloads up to this size are shown whole; longer ones are cut.
constexpr size_t kInlineShown = 64;

std::string hexBytes(const std::vector<uint8_t>& bytes, size_t limit) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < bytes.size() && i < limit; ++i) {
    s += kHex[bytes[i] >> 4];
    s += kHex[bytes[i] & 15];
  }
  if (bytes.size() > limit) s += "...";
  return s;
}

std::string functionOf(const Capture& c, const ReplayRecord& r) {
  return r.function == ~0u ? std::string("gtap") : c.functionName(r.function);
}

std::string partsText(const ReplayStream& stream, const format::Hash128& hash) {
  auto it = stream.blobs.find(hash);
  if (it == stream.blobs.end()) return "[missing from the file]";
  std::string s = "[";
  for (size_t i = 0; i < it->second.size(); ++i) {
    const auto& p = it->second[i];
    s += (i ? "," : "") + std::to_string(p.fileOffset()) + "+" + std::to_string(p.fileLength());
  }
  return s + "]";
}

std::string partsJson(const ReplayStream& stream, const format::Hash128& hash) {
  auto it = stream.blobs.find(hash);
  std::string s = "[";
  if (it != stream.blobs.end()) {
    for (size_t i = 0; i < it->second.size(); ++i) {
      const auto& p = it->second[i];
      s += std::string(i ? "," : "") + "{\"file_offset\":" + std::to_string(p.fileOffset()) +
           ",\"file_length\":" + std::to_string(p.fileLength()) + ",\"blob_offset\":" + std::to_string(p.blobOffset) +
           ",\"length\":" + std::to_string(p.length) +
           ",\"compressed\":" + (p.chunk.codec == format::Codec::zstd ? "true" : "false") + "}";
    }
  }
  return s + "]";
}

std::string fileJson(const FileReference& f) {
  std::string s = "{\"path\":";
  appendJsonString(s, f.path);
  s += ",\"offset\":" + std::to_string(f.offset) + ",\"file_size\":" + std::to_string(f.fileSize) +
       ",\"device\":" + std::to_string(f.device) + ",\"inode\":" + std::to_string(f.inode) +
       ",\"mtime_ns\":" + std::to_string(f.mtimeNs);
  if (f.hasDigest) s += ",\"digest\":\"" + f.digest.hex() + "\"";
  return s + "}";
}

std::string payloadText(const ReplayStream& stream, const ReplayPayload& p) {
  using K = ReplayPayload::Kind;
  switch (p.kind) {
    case K::none: return "";
    case K::inlineBytes:
      return " payload=inline:" + std::to_string(p.bytes.size()) + "B:" + hexBytes(p.bytes, kInlineShown);
    case K::blob: {
      std::string s = " payload=blob:" + p.blob.hex() + " size=" + std::to_string(p.size);
      auto parts = stream.blobs.find(p.blob);
      uint64_t total = parts != stream.blobs.end() && !parts->second.empty() ? parts->second[0].totalSize : p.blobSize;
      if (p.blobOffset || total != p.size)
        s += " from=" + std::to_string(p.blobOffset) + " of " + std::to_string(total);
      s += " chunks=" + partsText(stream, p.blob);
      if (p.origin) s += " origin=" + describeFileIdentity(*p.origin) + "@" + std::to_string(p.origin->offset);
      return s;
    }
    case K::file:
      return " payload=file:" + describeFileIdentity(p.file) + " offset=" + std::to_string(p.file.offset) +
             " size=" + std::to_string(p.size);
  }
  return "";
}

std::string payloadJson(const ReplayStream& stream, const ReplayPayload& p) {
  using K = ReplayPayload::Kind;
  switch (p.kind) {
    case K::none: return "";
    case K::inlineBytes:
      return ",\"payload\":{\"kind\":\"inline\",\"size\":" + std::to_string(p.size) + ",\"hex\":\"" +
             hexBytes(p.bytes, p.bytes.size()) + "\"}";
    case K::blob: {
      std::string s = ",\"payload\":{\"kind\":\"blob\",\"hash\":\"" + p.blob.hex() + "\",\"size\":" +
                      std::to_string(p.size) + ",\"blob_offset\":" + std::to_string(p.blobOffset) +
                      ",\"blob_size\":" + std::to_string(p.blobSize) + ",\"chunks\":" + partsJson(stream, p.blob);
      if (p.origin) s += ",\"origin\":" + fileJson(*p.origin);
      return s + "}";
    }
    case K::file:
      return ",\"payload\":{\"kind\":\"file\",\"size\":" + std::to_string(p.size) + ",\"file\":" + fileJson(p.file) + "}";
  }
  return "";
}

}  // namespace

void writeReplayDumpText(std::ostream& out, const Capture& c, const ReplayStream& stream) {
  for (const auto& r : stream.records) {
    std::string line = "seq " + std::to_string(r.seq) + " thread " + std::to_string(r.thread) + " " +
                       replayOpName(r.op) + " (" + functionOf(c, r) + ")";
    for (const auto& f : replayFields(r)) line += " " + fieldText(f);
    line += payloadText(stream, r.payload);
    out << line << "\n";
  }
  auto s = summarizeReplay(c, stream);
  out << "\nsummary: " << s.records << " records, seq " << s.firstSeq << ".." << s.lastSeq << "\n";
  out << "  stream: "
            << (stream.complete ? "complete (the file was closed cleanly)" : "CUT SHORT: " + stream.cutDescription)
            << "\n";
  auto list = [](const std::map<std::string, uint64_t>& m) {
    std::string t;
    for (const auto& [k, v] : m) t += (t.empty() ? "" : ", ") + k + " " + std::to_string(v);
    return t.empty() ? std::string("none") : t;
  };
  out << "  records by op: " << list(s.byOp) << "\n";
  out << "  objects: " << list(s.objects) << "\n";
  out << "  operations: " << list(s.operations) << "; executes " << s.executes << "\n";
  out << "  payload bytes: inline " << s.inlineBytes << ", in blobs " << s.blobBytes << ", in external files "
            << s.fileBytes << "\n";
  out << "  unsupported: " << (s.unsupported.empty() ? "none" : std::to_string(s.unsupported.size())) << "\n";
  for (const auto& u : s.unsupported)
    out << "    seq " << u.seq << " " << u.function << ": " << u.reason << "\n";
  out << "  scopes: " << (s.scopes.empty() ? std::string("none") : std::to_string(s.scopes.size())) << "\n";
  for (const auto& [name, sc] : s.scopes)
    out << "    " << name << ": " << sc.begins << " begin, " << sc.ends << " end\n";
  out << "  hermetic: ";
  if (s.hermetic()) out << "yes\n";
  else if (!s.unsupported.empty() && !s.externalFiles.empty())
    out << "no (it holds work replay does not run, and payloads read external files)\n";
  else if (!s.unsupported.empty()) out << "no (it holds work replay does not run)\n";
  else out << "no (payloads read external files)\n";
  if (!s.externalFiles.empty()) out << "  external files:\n";
  for (const auto& f : s.externalFiles) out << "    " << describeFileIdentity(f) << "\n";
}

void writeReplayDumpJsonLines(std::ostream& out, const Capture& c, const ReplayStream& stream) {
  for (const auto& r : stream.records) {
    std::string line = "{\"type\":\"record\",\"seq\":" + std::to_string(r.seq) +
                       ",\"thread\":" + std::to_string(r.thread) + ",\"op\":\"" + replayOpName(r.op) +
                       "\",\"function\":";
    appendJsonString(line, functionOf(c, r));
    for (const auto& f : replayFields(r)) {
      line += ",";
      appendJsonString(line, f.name);
      line += ":" + fieldJson(f);
    }
    line += payloadJson(stream, r.payload) + "}";
    out << line << "\n";
  }
  auto s = summarizeReplay(c, stream);
  auto object = [](const std::map<std::string, uint64_t>& m) {
    std::string t = "{";
    for (const auto& [k, v] : m) t += (t.size() > 1 ? ",\"" : "\"") + k + "\":" + std::to_string(v);
    return t + "}";
  };
  std::string line = "{\"type\":\"summary\",\"records\":" + std::to_string(s.records) +
                     ",\"first_seq\":" + std::to_string(s.firstSeq) + ",\"last_seq\":" + std::to_string(s.lastSeq) +
                     ",\"complete\":" + (stream.complete ? "true" : "false");
  if (!stream.complete) {
    line += ",\"cut\":";
    appendJsonString(line, stream.cutDescription);
  }
  line += ",\"by_op\":" + object(s.byOp) + ",\"objects\":" + object(s.objects) +
          ",\"operations\":" + object(s.operations) + ",\"executes\":" + std::to_string(s.executes) +
          ",\"inline_bytes\":" + std::to_string(s.inlineBytes) + ",\"blob_bytes\":" + std::to_string(s.blobBytes) +
          ",\"file_bytes\":" + std::to_string(s.fileBytes) + ",\"unsupported\":[";
  for (size_t i = 0; i < s.unsupported.size(); ++i) {
    line += std::string(i ? "," : "") + "{\"seq\":" + std::to_string(s.unsupported[i].seq) + ",\"function\":";
    appendJsonString(line, s.unsupported[i].function);
    line += ",\"reason\":";
    appendJsonString(line, s.unsupported[i].reason);
    line += "}";
  }
  line += "],\"scopes\":[";
  bool first = true;
  for (const auto& [name, sc] : s.scopes) {
    line += std::string(first ? "" : ",") + "{\"name\":";
    appendJsonString(line, name);
    line += ",\"begins\":" + std::to_string(sc.begins) + ",\"ends\":" + std::to_string(sc.ends) + "}";
    first = false;
  }
  line += std::string("],\"hermetic\":") + (s.hermetic() ? "true" : "false") + ",\"external_files\":[";
  for (size_t i = 0; i < s.externalFiles.size(); ++i) line += (i ? "," : "") + fileJson(s.externalFiles[i]);
  out << line << "]}\n";
}

}  // namespace gtap::readers
