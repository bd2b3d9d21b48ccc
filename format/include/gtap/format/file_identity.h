// An external file some replay bytes come from, with the identity it had
// (schema FileRef): what libgtap records and readers check, one definition
// for both sides.
#pragma once

#include <cstdint>
#include <string>

#include "gtap/format/hash.h"
#include "gtap/format/schema/capture.capnp.h"

namespace gtap::format {

struct FileIdentity {
  std::string path;  // empty: none
  uint64_t offset = 0;
  uint64_t fileSize = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t mtimeNs = 0;
  bool hasDigest = false;  // XXH3-128 of the whole file
  Hash128 digest;
};

inline void setFileRef(schema::FileRef::Builder b, const FileIdentity& f) {
  b.setPath(f.path);
  b.setOffset(f.offset);
  b.setFileSize(f.fileSize);
  b.setDevice(f.device);
  b.setInode(f.inode);
  b.setMtimeNs(f.mtimeNs);
  b.setHasDigest(f.hasDigest);
  b.setDigestLow(f.digest.low);
  b.setDigestHigh(f.digest.high);
}

inline FileIdentity fileIdentityOf(schema::FileRef::Reader f) {
  FileIdentity out;
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

}  // namespace gtap::format
