#include "gtap/readers/replay_summary.h"

#include <cstdio>
#include <tuple>

namespace gtap::readers {

std::string describeFileIdentity(const FileReference& f) {
  char mtime[48];
  std::snprintf(mtime, sizeof mtime, "%lld.%09lld s", static_cast<long long>(f.mtimeNs / 1000000000),
                static_cast<long long>(f.mtimeNs % 1000000000));
  std::string s = f.path + " (size " + std::to_string(f.fileSize) + ", device " + std::to_string(f.device) +
                  ", inode " + std::to_string(f.inode) + ", mtime " + mtime;
  if (f.hasDigest) s += ", digest " + f.digest.hex();
  return s + ")";
}

ReplaySummary summarizeReplay(const Capture& capture, const ReplayStream& stream) {
  ReplaySummary s;
  s.records = stream.records.size();
  if (!stream.records.empty()) {
    s.firstSeq = stream.records.front().seq;
    s.lastSeq = stream.records.back().seq;
  }
  auto sameFile = [](const FileReference& a, const FileReference& b) {
    return std::tie(a.path, a.fileSize, a.device, a.inode, a.mtimeNs) ==
           std::tie(b.path, b.fileSize, b.device, b.inode, b.mtimeNs);
  };
  for (const ReplayRecord& r : stream.records) {
    std::string name = replayOpName(r.op);
    ++s.byOp[name];
    if (createsObject(r.op)) ++s.objects[name];
    if (isDeviceOperation(r.op)) ++s.operations[name];
    if (r.op == ReplayOp::EXECUTE) ++s.executes;
    if (r.op == ReplayOp::UNSUPPORTED)
      s.unsupported.push_back({r.seq, r.function == ~0u ? std::string("-") : capture.functionName(r.function),
                               r.fields.getUnsupported().getReason()});
    if (r.op == ReplayOp::SCOPE_BEGIN) ++s.scopes[r.fields.getScopeBegin().getScope()].begins;
    if (r.op == ReplayOp::SCOPE_END) ++s.scopes[r.fields.getScopeEnd().getScope()].ends;
    switch (r.payload.kind) {
      case ReplayPayload::Kind::none: break;
      case ReplayPayload::Kind::inlineBytes: s.inlineBytes += r.payload.size; break;
      case ReplayPayload::Kind::blob: s.blobBytes += r.payload.size; break;
      case ReplayPayload::Kind::file: {
        s.fileBytes += r.payload.size;
        bool known = false;
        for (const auto& f : s.externalFiles) known = known || sameFile(f, r.payload.file);
        if (!known) s.externalFiles.push_back(r.payload.file);
        break;
      }
    }
  }
  return s;
}

}  // namespace gtap::readers
