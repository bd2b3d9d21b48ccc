// gtap dump: every record of a capture's replay stream, with its fields named
// per op, then what the stream needs to be replayed (a summary).
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "gtap/readers/json.h"
#include "gtap/readers/replay_fields.h"
#include "gtap/readers/replay_summary.h"
#include "open_captures.h"

namespace gtap::cli {

namespace {

struct DumpOptions {
  std::string file;
  std::string format = "text";
};

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

std::string functionOf(const readers::Capture& c, const readers::ReplayRecord& r) {
  return r.function == ~0u ? std::string("gtap") : c.functionName(r.function);
}

std::string partsText(const readers::ReplayStream& stream, const format::Hash128& hash) {
  auto it = stream.blobs.find(hash);
  if (it == stream.blobs.end()) return "[missing from the file]";
  std::string s = "[";
  for (size_t i = 0; i < it->second.size(); ++i) {
    const auto& p = it->second[i];
    s += (i ? "," : "") + std::to_string(p.fileOffset()) + "+" + std::to_string(p.fileLength());
  }
  return s + "]";
}

std::string partsJson(const readers::ReplayStream& stream, const format::Hash128& hash) {
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

std::string fileJson(const readers::FileReference& f) {
  std::string s = "{\"path\":";
  readers::appendJsonString(s, f.path);
  s += ",\"offset\":" + std::to_string(f.offset) + ",\"file_size\":" + std::to_string(f.fileSize) +
       ",\"device\":" + std::to_string(f.device) + ",\"inode\":" + std::to_string(f.inode) +
       ",\"mtime_ns\":" + std::to_string(f.mtimeNs);
  if (f.hasDigest) s += ",\"digest\":\"" + f.digest.hex() + "\"";
  return s + "}";
}

std::string payloadText(const readers::ReplayStream& stream, const readers::ReplayPayload& p) {
  using K = readers::ReplayPayload::Kind;
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
      if (p.origin) s += " origin=" + readers::describeFileIdentity(*p.origin) + "@" + std::to_string(p.origin->offset);
      return s;
    }
    case K::file:
      return " payload=file:" + readers::describeFileIdentity(p.file) + " offset=" + std::to_string(p.file.offset) +
             " size=" + std::to_string(p.size);
  }
  return "";
}

std::string payloadJson(const readers::ReplayStream& stream, const readers::ReplayPayload& p) {
  using K = readers::ReplayPayload::Kind;
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

void printText(const readers::Capture& c, const readers::ReplayStream& stream) {
  for (const auto& r : stream.records) {
    std::string line = "seq " + std::to_string(r.seq) + " thread " + std::to_string(r.thread) + " " +
                       readers::replayOpName(r.op) + " (" + functionOf(c, r) + ")";
    for (const auto& f : readers::replayFields(r)) line += " " + readers::fieldText(f);
    line += payloadText(stream, r.payload);
    std::cout << line << "\n";
  }
  auto s = readers::summarizeReplay(c, stream);
  std::cout << "\nsummary: " << s.records << " records, seq " << s.firstSeq << ".." << s.lastSeq << "\n";
  std::cout << "  stream: "
            << (stream.complete ? "complete (the file was closed cleanly)" : "CUT SHORT: " + stream.cutDescription)
            << "\n";
  auto list = [](const std::map<std::string, uint64_t>& m) {
    std::string t;
    for (const auto& [k, v] : m) t += (t.empty() ? "" : ", ") + k + " " + std::to_string(v);
    return t.empty() ? std::string("none") : t;
  };
  std::cout << "  records by op: " << list(s.byOp) << "\n";
  std::cout << "  objects: " << list(s.objects) << "\n";
  std::cout << "  operations: " << list(s.operations) << "; executes " << s.executes << "\n";
  std::cout << "  payload bytes: inline " << s.inlineBytes << ", in blobs " << s.blobBytes << ", in external files "
            << s.fileBytes << "\n";
  std::cout << "  unsupported: " << (s.unsupported.empty() ? "none" : std::to_string(s.unsupported.size())) << "\n";
  for (const auto& u : s.unsupported)
    std::cout << "    seq " << u.seq << " " << u.function << ": " << u.reason << "\n";
  std::cout << "  scopes: " << (s.scopes.empty() ? std::string("none") : std::to_string(s.scopes.size())) << "\n";
  for (const auto& [name, sc] : s.scopes)
    std::cout << "    " << name << ": " << sc.begins << " begin, " << sc.ends << " end\n";
  std::cout << "  hermetic: " << (s.hermetic() ? "yes" : "no (payloads read external files)") << "\n";
  if (!s.externalFiles.empty()) std::cout << "  external files:\n";
  for (const auto& f : s.externalFiles) std::cout << "    " << readers::describeFileIdentity(f) << "\n";
}

void printJsonLines(const readers::Capture& c, const readers::ReplayStream& stream) {
  for (const auto& r : stream.records) {
    std::string line = "{\"type\":\"record\",\"seq\":" + std::to_string(r.seq) +
                       ",\"thread\":" + std::to_string(r.thread) + ",\"op\":\"" + readers::replayOpName(r.op) +
                       "\",\"function\":";
    readers::appendJsonString(line, functionOf(c, r));
    for (const auto& f : readers::replayFields(r)) {
      line += ",";
      readers::appendJsonString(line, f.name);
      line += ":" + readers::fieldJson(f);
    }
    line += payloadJson(stream, r.payload) + "}";
    std::cout << line << "\n";
  }
  auto s = readers::summarizeReplay(c, stream);
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
    readers::appendJsonString(line, stream.cutDescription);
  }
  line += ",\"by_op\":" + object(s.byOp) + ",\"objects\":" + object(s.objects) +
          ",\"operations\":" + object(s.operations) + ",\"executes\":" + std::to_string(s.executes) +
          ",\"inline_bytes\":" + std::to_string(s.inlineBytes) + ",\"blob_bytes\":" + std::to_string(s.blobBytes) +
          ",\"file_bytes\":" + std::to_string(s.fileBytes) + ",\"unsupported\":[";
  for (size_t i = 0; i < s.unsupported.size(); ++i) {
    line += std::string(i ? "," : "") + "{\"seq\":" + std::to_string(s.unsupported[i].seq) + ",\"function\":";
    readers::appendJsonString(line, s.unsupported[i].function);
    line += ",\"reason\":";
    readers::appendJsonString(line, s.unsupported[i].reason);
    line += "}";
  }
  line += "],\"scopes\":[";
  bool first = true;
  for (const auto& [name, sc] : s.scopes) {
    line += std::string(first ? "" : ",") + "{\"name\":";
    readers::appendJsonString(line, name);
    line += ",\"begins\":" + std::to_string(sc.begins) + ",\"ends\":" + std::to_string(sc.ends) + "}";
    first = false;
  }
  line += std::string("],\"hermetic\":") + (s.hermetic() ? "true" : "false") + ",\"external_files\":[";
  for (size_t i = 0; i < s.externalFiles.size(); ++i) line += (i ? "," : "") + fileJson(s.externalFiles[i]);
  std::cout << line << "]}\n";
}

int dump(const DumpOptions& o) {
  if (o.format != "text" && o.format != "jsonl") {
    std::cerr << "gtap dump: --format must be text or jsonl\n";
    return 2;
  }
  auto opened = openCaptures({o.file}, "dump");
  if (opened.captures.empty()) return 1;
  const readers::Capture& c = *opened.captures.front();
  readers::ReplayStream stream;
  try {
    stream = readers::loadReplayStream(c);
  } catch (const std::exception& e) {
    std::cerr << "gtap dump: " << e.what() << "\n";
    return 1;
  }
  for (const auto& n : stream.notes) std::cerr << "gtap dump: " << n << "\n";
  if (!stream.complete)
    std::cerr << "gtap dump: " << c.path() << ": the replay stream is cut short: " << stream.cutDescription << "\n";
  if (o.format == "jsonl") printJsonLines(c, stream);
  else printText(c, stream);
  std::cout.flush();
  return std::cout ? 0 : 1;
}

}  // namespace

Action addDumpCommand(CLI::App& app) {
  auto o = std::make_shared<DumpOptions>();
  auto* cmd = app.add_subcommand("dump", "Every record of a capture's replay stream (--mode=replay), then a summary");
  cmd->add_option("file", o->file, "Capture file")->required();
  cmd->add_option("--format", o->format, "text or jsonl");
  return [o] { return dump(*o); };
}

}  // namespace gtap::cli
