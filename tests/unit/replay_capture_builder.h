// Writes capture files holding replay streams with the format's own writer,
// so that dump, replay and bench are tested on files whose every record the
// test chose (including damaged, unsupported and file-referencing ones).
// Records are given in the positional form of formats 1.0-1.1 (short to
// write) and stored typed, as gtap writes them today, unless positional(true).
#pragma once

#include <capnp/message.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gtap/format/writer.h"
#include "gtap/readers/replay_positional.h"

namespace gtap::test {

struct BuiltPayload {
  enum class Kind { none, inlineBytes, blob, file };
  Kind kind = Kind::none;
  std::vector<uint8_t> bytes;  // inline or blob contents
  // file
  std::string path;
  uint64_t offset = 0, size = 0;
  struct stat identity {};
};

struct BuiltRecord {
  uint64_t seq = 0;
  schema::ReplayOp op = schema::ReplayOp::UNSUPPORTED;
  uint64_t object = 0;
  std::vector<uint64_t> objects, values, addresses;
  BuiltPayload payload;
  std::string text;
  uint32_t function = ~0u;
  uint32_t thread = 0;
};

template <class T>
std::vector<uint8_t> bytesOf(const T& value) {
  std::vector<uint8_t> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

class ReplayCaptureBuilder {
 public:
  // Adds a record; seq follows the previous one unless given.
  BuiltRecord& add(schema::ReplayOp op, uint64_t object = 0, std::vector<uint64_t> objects = {},
                   std::vector<uint64_t> values = {}, std::vector<uint64_t> addresses = {}) {
    BuiltRecord r;
    r.seq = records_.empty() ? 1 : records_.back().seq + 1;
    r.op = op;
    r.object = object;
    r.objects = std::move(objects);
    r.values = std::move(values);
    r.addresses = std::move(addresses);
    records_.push_back(std::move(r));
    return records_.back();
  }
  static BuiltPayload inlineBytes(std::vector<uint8_t> b) {
    BuiltPayload p;
    p.kind = BuiltPayload::Kind::inlineBytes;
    p.bytes = std::move(b);
    return p;
  }
  static BuiltPayload blob(std::vector<uint8_t> b) {
    BuiltPayload p;
    p.kind = BuiltPayload::Kind::blob;
    p.bytes = std::move(b);
    return p;
  }
  // A reference to `size` bytes at `offset` of the file as it is now.
  static BuiltPayload file(const std::string& path, uint64_t offset, uint64_t size) {
    BuiltPayload p;
    p.kind = BuiltPayload::Kind::file;
    p.path = path;
    p.offset = offset;
    p.size = size;
    stat(path.c_str(), &p.identity);
    return p;
  }
  std::vector<BuiltRecord>& records() { return records_; }
  // Stores the records as formats 1.0-1.1 did.
  void positional(bool on) { positional_ = on; }
  // Changes each chunk's typed records after they are built (a damaged file).
  void tamper(std::function<void(capnp::List<schema::ReplayRecord>::Builder)> f) { tamper_ = std::move(f); }

  // Writes the file; records go in two chunks, the later half first, as
  // racing threads may leave them. Returns an error or "".
  std::string write(const std::string& path, bool close = true) {
    std::string error;
    auto w = format::CaptureWriter::create(path, error);
    if (!w) return error;
    {
      capnp::MallocMessageBuilder m;
      auto info = m.initRoot<schema::FileInfo>();
      info.setPid(777);
      info.setMode("replay");
      w->writeMessage(schema::ChunkKind::FILE_INFO, m);
    }
    {
      capnp::MallocMessageBuilder m;
      auto defs = m.initRoot<schema::Definitions>();
      auto fns = defs.initFunctions(2);
      fns[0].setId(1);
      fns[0].setApi(schema::Api::LEVEL_ZERO);
      fns[0].setName("zeCommandListAppendLaunchKernel");
      fns[1].setId(2);
      fns[1].setApi(schema::Api::LEVEL_ZERO);
      fns[1].setName("zeMemAllocHost");
      w->writeMessage(schema::ChunkKind::DEFINITIONS, m);
    }
    size_t half = records_.size() / 2;
    writeChunk(*w, half, records_.size());
    writeChunk(*w, 0, half);
    if (close && !w->close(0, 0, 0, "exit")) return w->error();
    return w->ok() ? "" : w->error();
  }

 private:
  void writeChunk(format::CaptureWriter& w, size_t from, size_t to) {
    if (from == to) return;
    std::vector<format::Hash128> hashes(to - from);
    for (size_t i = from; i < to; ++i)
      if (records_[i].payload.kind == BuiltPayload::Kind::blob)
        hashes[i - from] = w.writeBlob(records_[i].payload.bytes.data(), records_[i].payload.bytes.size());
    capnp::MallocMessageBuilder m;
    auto list = m.initRoot<schema::Replay>().initRecords(static_cast<unsigned>(to - from));
    for (size_t i = from; i < to; ++i) {
      const BuiltRecord& r = records_[i];
      auto out = list[static_cast<unsigned>(i - from)];
      out.setSeq(r.seq);
      out.setThread(r.thread);
      out.setOp(r.op);
      out.setFunction(r.function);
      out.setObject(r.object);
      auto objs = out.initObjects(static_cast<unsigned>(r.objects.size()));
      for (unsigned k = 0; k < r.objects.size(); ++k) objs.set(k, r.objects[k]);
      auto vals = out.initValues(static_cast<unsigned>(r.values.size()));
      for (unsigned k = 0; k < r.values.size(); ++k) vals.set(k, r.values[k]);
      auto addrs = out.initAddresses(static_cast<unsigned>(r.addresses.size()));
      for (unsigned k = 0; k < r.addresses.size(); ++k) addrs.set(k, r.addresses[k]);
      out.setText(r.text);
      auto p = out.initPayload();
      switch (r.payload.kind) {
        case BuiltPayload::Kind::none: p.setNone(); break;
        case BuiltPayload::Kind::inlineBytes:
          p.setSize(r.payload.bytes.size());
          p.setInline(capnp::Data::Reader(r.payload.bytes.data(), r.payload.bytes.size()));
          break;
        case BuiltPayload::Kind::blob: {
          p.setSize(r.payload.bytes.size());
          auto b = p.initBlob();
          b.setHashLow(hashes[i - from].low);
          b.setHashHigh(hashes[i - from].high);
          b.setSize(r.payload.bytes.size());
          break;
        }
        case BuiltPayload::Kind::file: {
          p.setSize(r.payload.size);
          auto f = p.initFile();
          f.setPath(r.payload.path);
          f.setOffset(r.payload.offset);
          f.setFileSize(static_cast<uint64_t>(r.payload.identity.st_size));
          f.setDevice(r.payload.identity.st_dev);
          f.setInode(r.payload.identity.st_ino);
          f.setMtimeNs(static_cast<int64_t>(r.payload.identity.st_mtim.tv_sec) * 1000000000 +
                       r.payload.identity.st_mtim.tv_nsec);
          break;
        }
      }
    }
    if (positional_) {
      w.writeMessage(schema::ChunkKind::REPLAY, m);
      return;
    }
    auto typed = readers::typedRecords(m.getRoot<schema::Replay>().asReader().getRecords());
    if (tamper_) tamper_(typed->getRoot<schema::Replay>().getRecords());
    w.writeMessage(schema::ChunkKind::REPLAY, *typed);
  }

  std::vector<BuiltRecord> records_;
  bool positional_ = false;
  std::function<void(capnp::List<schema::ReplayRecord>::Builder)> tamper_;
};

}  // namespace gtap::test
