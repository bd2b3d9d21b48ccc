// The container: round trip, a file cut at every offset, flipped bytes.
#include <gtest/gtest.h>
#include <capnp/message.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "gtap/format/api_events.h"
#include "gtap/format/reader.h"
#include "gtap/format/writer.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/executables.h"
#include "gtap/readers/timeline_builder.h"

#include <set>

namespace {

using gtap::format::CaptureReader;
using gtap::format::CaptureWriter;
using gtap::format::FormatError;

std::string tempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-unit-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::vector<uint8_t> readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes a small capture: file info, definitions, `batches` event chunks of
// `perBatch` calls each, a blob, and (when `close`) the trailer.
std::string writeSample(const std::string& name, int batches, int perBatch, bool close = true) {
  std::string path = tempPath(name);
  std::filesystem::remove(path);
  std::string error;
  auto w = CaptureWriter::create(path, error);
  EXPECT_TRUE(w) << error;
  {
    capnp::MallocMessageBuilder m;
    auto info = m.initRoot<gtap::schema::FileInfo>();
    info.setPid(4242);
    info.setHostname("unit-host");
    info.setMode("api");
    EXPECT_TRUE(w->writeMessage(gtap::schema::ChunkKind::FILE_INFO, m));
  }
  {
    capnp::MallocMessageBuilder m;
    auto defs = m.initRoot<gtap::schema::Definitions>();
    auto fns = defs.initFunctions(2);
    fns[0].setId(7);
    fns[0].setName("zeAlpha");
    fns[1].setId(9);
    fns[1].setName("zeBeta");
    auto threads = defs.initThreads(1);
    threads[0].setId(0);
    threads[0].setOsTid(99);
    EXPECT_TRUE(w->writeMessage(gtap::schema::ChunkKind::DEFINITIONS, m));
  }
  uint64_t index = 0;
  int64_t t = 1000;
  for (int b = 0; b < batches; ++b) {
    capnp::MallocMessageBuilder m;
    auto ev = m.initRoot<gtap::schema::ApiEvents>();
    ev.setThread(0);
    ev.setFirstIndex(index);
    ev.setBaseHostNs(t);
    unsigned n = static_cast<unsigned>(perBatch) * 2;
    std::vector<uint8_t> buf(n * gtap::format::ApiEventEncoder::kMaxEventBytes);
    gtap::format::ApiEventEncoder enc(buf.data(), t);
    for (unsigned i = 0; i < n; ++i) {
      t += 10 + i % 5;
      enc.add(static_cast<gtap::format::ApiEventKind>(i % 2), (i / 2) % 3 == 0 ? 9 : 7, t,
              i % 2 ? -static_cast<int64_t>(i % 3) : 0);
    }
    ev.setCount(enc.count());
    ev.setEncoded(capnp::Data::Reader(enc.data(), enc.size()));
    index += n;
    EXPECT_TRUE(w->writeMessage(gtap::schema::ChunkKind::API_EVENTS, m));
  }
  std::string payload(5000, 'x');
  w->writeBlob(payload.data(), payload.size());
  w->writeBlob(payload.data(), payload.size());  // stored once
  if (close) {
    EXPECT_TRUE(w->close(index, 0, t, "exit"));
  }
  return path;
}

uint64_t countCalls(const gtap::readers::Capture& c) {
  uint64_t n = 0;
  c.forEachCall([&](const gtap::readers::ApiCall& call) { n += call.finished; });
  return n;
}

TEST(Container, RoundTrip) {
  std::string path = writeSample("roundtrip.gtap", 3, 100);
  gtap::readers::Capture c(path);
  EXPECT_TRUE(c.recovery().closedCleanly);
  EXPECT_EQ(c.process().pid, 4242u);
  EXPECT_EQ(c.process().hostname, "unit-host");
  EXPECT_EQ(c.functionName(7), "zeAlpha");
  EXPECT_EQ(c.functionName(9), "zeBeta");
  EXPECT_EQ(countCalls(c), 300u);
  EXPECT_EQ(c.trailer().eventsWritten, 600u);
  EXPECT_EQ(c.kindStats().at(static_cast<uint16_t>(gtap::schema::ChunkKind::BLOB)).chunks, 1u);
  EXPECT_TRUE(c.notes().empty());
}

TEST(Container, EventStreamRoundTripAndDamage) {
  std::vector<uint8_t> buf(10 * gtap::format::ApiEventEncoder::kMaxEventBytes);
  gtap::format::ApiEventEncoder enc(buf.data(), 1000);
  const int64_t results[] = {0, -1, 0x78000001, INT64_MIN, INT64_MAX};
  int64_t t = 1000;
  for (int i = 0; i < 10; ++i) {
    t += i * 1000003;
    enc.add(static_cast<gtap::format::ApiEventKind>(i % 2), static_cast<uint32_t>(i * 977), t, results[i % 5]);
  }
  std::vector<gtap::format::ApiEvent> back;
  std::vector<uint8_t> bytes(enc.data(), enc.data() + enc.size());
  auto problem = gtap::format::decodeApiEvents(bytes.data(), bytes.size(), enc.count(), 1000,
                                               [&](const gtap::format::ApiEvent& e) { back.push_back(e); });
  ASSERT_EQ(problem, "");
  ASSERT_EQ(back.size(), 10u);
  t = 1000;
  for (int i = 0; i < 10; ++i) {
    t += i * 1000003;
    EXPECT_EQ(back[i].function, static_cast<uint32_t>(i * 977));
    EXPECT_EQ(back[i].timeNs, t);
    EXPECT_EQ(back[i].result, i % 2 ? results[i % 5] : 0);
  }
  // Every cut and a wrong count are reported, never read past.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    EXPECT_NE(gtap::format::decodeApiEvents(part.data(), part.size(), enc.count(), 0, [](const auto&) {}), "");
  }
  EXPECT_NE(gtap::format::decodeApiEvents(bytes.data(), bytes.size(), enc.count() - 1, 0,
                                          [](const auto&) {}),
            "");
}

// The 1.3 layout: one event per call (results and depths only when not 0, a
// begin alone for a call that never returned) round-trips; every cut and a
// wrong count are reported, never read past.
TEST(Container, CallEventStreamRoundTripAndDamage) {
  const int64_t results[] = {0, -1, 0x78000001, INT64_MIN, INT64_MAX, 0};
  gtap::format::CallEventEncoder enc(12, 1000);
  int64_t t = 1000;
  for (int i = 0; i < 12; ++i) {
    t += i * 1000003;
    if (i == 11)
      enc.addBegin(7, t, 2);
    else
      enc.addCall(static_cast<uint32_t>(i * 977), t, i * 131, results[i % 6], static_cast<uint32_t>(i % 3));
  }
  std::vector<uint8_t> bytes(enc.size());
  enc.write(bytes.data());
  std::vector<gtap::format::ApiEvent> back;
  auto problem = gtap::format::decodeCallEvents(bytes.data(), bytes.size(), enc.count(), 1000,
                                                [&](const gtap::format::ApiEvent& e) { back.push_back(e); });
  ASSERT_EQ(problem, "");
  ASSERT_EQ(back.size(), 12u);
  t = 1000;
  for (int i = 0; i < 11; ++i) {
    t += i * 1000003;
    EXPECT_EQ(back[i].kind, gtap::format::ApiEventKind::call);
    EXPECT_EQ(back[i].function, static_cast<uint32_t>(i * 977));
    EXPECT_EQ(back[i].timeNs, t);
    EXPECT_EQ(back[i].endNs, t + i * 131);
    EXPECT_EQ(back[i].result, results[i % 6]);
    EXPECT_EQ(back[i].depth, static_cast<uint32_t>(i % 3));
  }
  EXPECT_EQ(back[11].kind, gtap::format::ApiEventKind::callBegin);
  EXPECT_EQ(back[11].function, 7u);
  EXPECT_EQ(back[11].depth, 2u);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    EXPECT_NE(gtap::format::decodeCallEvents(part.data(), part.size(), enc.count(), 0, [](const auto&) {}), "");
  }
  EXPECT_NE(gtap::format::decodeCallEvents(bytes.data(), bytes.size(), enc.count() - 1, 0, [](const auto&) {}), "");
}

// Two captures with the same pid (ranks on different hosts) stay two
// processes in a timeline.
TEST(Timeline, SamePidStaysTwoProcesses) {
  gtap::readers::Capture a(writeSample("pid-a.gtap", 1, 5));
  gtap::readers::Capture b(writeSample("pid-b.gtap", 1, 5));
  ASSERT_EQ(a.process().pid, b.process().pid);
  std::vector<gtap::readers::LoadedCapture> loaded{{&a, gtap::readers::loadDeviceWork(a)},
                                                   {&b, gtap::readers::loadDeviceWork(b)}};
  auto t = gtap::readers::buildTimeline(loaded);
  std::set<uint32_t> pids;
  for (const auto& track : t.tracks) pids.insert(track.pid);
  EXPECT_EQ(pids.size(), 2u);
  EXPECT_EQ(t.slices.size(), 10u);
}

// A module whose stored binary is a real AMDGPU code object (built by clang at
// build time) is described from its metadata.
TEST(Executables, AmdgpuCodeObjectMetadataFromTheCapture) {
  auto fixture = readAll(GTAP_TEST_GFX90A_FIXTURE);
  if (fixture.empty()) GTEST_SKIP() << "no AMDGPU fixture at " << GTAP_TEST_GFX90A_FIXTURE;
  std::string path = tempPath("amdgpu.gtap");
  std::filesystem::remove(path);
  std::string error;
  auto w = CaptureWriter::create(path, error);
  ASSERT_TRUE(w) << error;
  {
    capnp::MallocMessageBuilder m;
    m.initRoot<gtap::schema::FileInfo>().setPid(7);
    ASSERT_TRUE(w->writeMessage(gtap::schema::ChunkKind::FILE_INFO, m));
  }
  auto hash = w->writeBlob(fixture.data(), fixture.size());
  {
    capnp::MallocMessageBuilder m;
    auto created = m.initRoot<gtap::schema::Objects>().initCreated(1);
    created[0].setId(3);
    created[0].setKind(gtap::schema::ObjectKind::MODULE);
    auto b = created[0].initBinary();
    b.setHashLow(hash.low);
    b.setHashHigh(hash.high);
    b.setSize(fixture.size());
    ASSERT_TRUE(w->writeMessage(gtap::schema::ChunkKind::OBJECTS, m));
  }
  ASSERT_TRUE(w->close(0, 0, 0, "exit"));
  gtap::readers::Capture c(path);
  std::vector<gtap::readers::LoadedCapture> loaded{{&c, gtap::readers::loadDeviceWork(c)}};
  std::vector<std::string> notes;
  auto rows = gtap::readers::executableRows(loaded, notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  bool found = false;
  for (const auto& r : rows) {
    EXPECT_EQ(r.format, "amdgpu");
    EXPECT_NE(r.target.find("gfx90a"), std::string::npos) << r.target;
    EXPECT_EQ(r.source, "metadata");
    if (r.kernel == "vector_add") {
      found = true;
      EXPECT_EQ(r.args, 4);
      EXPECT_EQ(r.wavefront, 64);
      EXPECT_GT(r.vgprs, 0);
    }
  }
  EXPECT_TRUE(found);
}

// A simulated HSA code object (a host shared object with the metadata note
// its build adds) is described from its metadata too; a Level Zero module of
// the simulated driver (a host ELF without the note) from the runtime's
// answers, without a note to the user.
TEST(Executables, SimulatedHsaCodeObjectMetadataFromTheCapture) {
  const auto codeObject = readAll(GTAP_TEST_SIM_HSA_WORKLOAD_KERNELS);
  const auto zeModule = readAll(GTAP_TEST_WORKLOAD_KERNELS);
  ASSERT_FALSE(codeObject.empty());
  ASSERT_FALSE(zeModule.empty());
  std::string path = tempPath("sim-hsa.gtap");
  std::filesystem::remove(path);
  std::string error;
  auto w = CaptureWriter::create(path, error);
  ASSERT_TRUE(w) << error;
  {
    capnp::MallocMessageBuilder m;
    m.initRoot<gtap::schema::FileInfo>().setPid(7);
    ASSERT_TRUE(w->writeMessage(gtap::schema::ChunkKind::FILE_INFO, m));
  }
  const std::vector<uint8_t>* binaries[] = {&codeObject, &zeModule};
  {
    capnp::MallocMessageBuilder m;
    auto created = m.initRoot<gtap::schema::Objects>().initCreated(2);
    for (unsigned i = 0; i < 2; ++i) {
      auto hash = w->writeBlob(binaries[i]->data(), binaries[i]->size());
      created[i].setId(3 + i);
      created[i].setKind(gtap::schema::ObjectKind::MODULE);
      auto b = created[i].initBinary();
      b.setHashLow(hash.low);
      b.setHashHigh(hash.high);
      b.setSize(binaries[i]->size());
    }
    ASSERT_TRUE(w->writeMessage(gtap::schema::ChunkKind::OBJECTS, m));
  }
  ASSERT_TRUE(w->close(0, 0, 0, "exit"));
  gtap::readers::Capture c(path);
  std::vector<gtap::readers::LoadedCapture> loaded{{&c, gtap::readers::loadDeviceWork(c)}};
  std::vector<std::string> notes;
  auto rows = gtap::readers::executableRows(loaded, notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  std::set<std::string> kernels;
  size_t zeRows = 0;
  for (const auto& r : rows) {
    if (r.module == 4) {
      ++zeRows;
      EXPECT_NE(r.source, "metadata");
      continue;
    }
    EXPECT_EQ(r.module, 3u);
    EXPECT_EQ(r.target.rfind("gtap-sim-host-", 0), 0u) << r.target;
    EXPECT_EQ(r.source, "metadata");
    EXPECT_EQ(r.wavefront, 64);
    kernels.insert(r.kernel);
    if (r.kernel == "scale") {
      EXPECT_EQ(r.args, 4);  // x, y, factor, n
      EXPECT_EQ(r.hiddenArgs, 0);
      EXPECT_EQ(r.kernargBytes, 24);
    }
  }
  EXPECT_EQ(kernels, (std::set<std::string>{"vector_add", "scale", "add", "reduce_partial", "spin", "tiny"}));
  EXPECT_EQ(zeRows, 1u);  // no kernel objects recorded: the module alone
}

TEST(Container, NeverOverwritesOrFollowsLinks) {
  std::string path = writeSample("exists.gtap", 1, 1);
  std::string error;
  EXPECT_FALSE(CaptureWriter::create(path, error));
  EXPECT_NE(error.find("File exists"), std::string::npos) << error;
  std::string link = tempPath("link.gtap");
  std::filesystem::remove(link);
  std::filesystem::create_symlink(tempPath("target-missing.gtap"), link);
  EXPECT_FALSE(CaptureWriter::create(link, error));
  EXPECT_FALSE(std::filesystem::exists(tempPath("target-missing.gtap")));
  auto perms = std::filesystem::status(path).permissions();
  EXPECT_EQ(perms & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST(Container, UnclosedFileIsRecovered) {
  std::string path = writeSample("unclosed.gtap", 2, 50, false);
  gtap::readers::Capture c(path);
  EXPECT_FALSE(c.recovery().closedCleanly);
  EXPECT_NE(c.recovery().stopReason.find("no trailer"), std::string::npos);
  EXPECT_EQ(countCalls(c), 100u);
}

// Every prefix of a file opens (or is refused as not a capture when even the
// preamble is cut), yields exactly the whole chunks before the cut, and never
// reads out of bounds (run under ASan/valgrind in CI's fuzz job as well).
TEST(Container, CutAtEveryOffset) {
  std::string path = writeSample("cut.gtap", 4, 20);
  auto bytes = readAll(path);
  CaptureReader whole(std::span<const uint8_t>(bytes.data(), bytes.size()), "whole");
  ASSERT_TRUE(whole.recovery().closedCleanly);
  const auto& chunks = whole.chunks();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    if (cut < gtap::format::kPreambleSize) {
      EXPECT_THROW(CaptureReader(std::span<const uint8_t>(prefix.data(), prefix.size()), "cut"), FormatError);
      continue;
    }
    CaptureReader r(std::span<const uint8_t>(prefix.data(), prefix.size()), "cut");
    size_t expected = 0;
    for (const auto& c : chunks)
      if (c.offset + gtap::format::kChunkHeaderSize + c.storedSize <= cut) ++expected;
    ASSERT_EQ(r.chunks().size(), expected) << "cut at " << cut;
    EXPECT_FALSE(r.recovery().closedCleanly) << "cut at " << cut;
    EXPECT_FALSE(r.recovery().stopReason.empty());
    for (const auto& c : r.chunks()) EXPECT_NO_THROW(r.decode(c));
  }
}

// A flipped byte anywhere is caught by a checksum or a header check; the chunks
// before it still decode.
TEST(Container, FlippedBytesAreDetected) {
  std::string path = writeSample("flip.gtap", 3, 20);
  auto bytes = readAll(path);
  CaptureReader whole(std::span<const uint8_t>(bytes.data(), bytes.size()), "whole");
  std::mt19937 rng(1234);
  for (size_t pos = gtap::format::kPreambleSize; pos < bytes.size(); pos += 1 + rng() % 7) {
    auto copy = bytes;
    copy[pos] ^= static_cast<uint8_t>(1u << (rng() % 8));
    CaptureReader r(std::span<const uint8_t>(copy.data(), copy.size()), "flipped");
    size_t before = 0;
    for (const auto& c : whole.chunks())
      if (c.offset + gtap::format::kChunkHeaderSize + c.storedSize <= pos) ++before;
    bool inFooter = pos >= bytes.size() - gtap::format::kFooterSize;
    if (!inFooter) {
      EXPECT_EQ(r.chunks().size(), before) << "flip at " << pos;
      EXPECT_NE(r.recovery().stopReason.find("offset"), std::string::npos) << r.recovery().stopReason;
    }
    EXPECT_FALSE(r.recovery().closedCleanly) << "flip at " << pos;
    for (const auto& c : r.chunks()) EXPECT_NO_THROW(r.decode(c));
  }
}

TEST(Container, RejectsWhatIsNotACapture) {
  std::string path = tempPath("text.gtap");
  std::ofstream(path) << "hello, this is not a capture file at all\n";
  try {
    CaptureReader r(path);
    FAIL() << "opened a text file";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("not a gtap capture"), std::string::npos);
  }
  EXPECT_THROW(CaptureReader(tempPath("missing.gtap")), FormatError);
}

TEST(Container, LargeBlobsSplitAndDeduplicate) {
  std::string path = tempPath("blob.gtap");
  std::filesystem::remove(path);
  std::string error;
  auto w = CaptureWriter::create(path, error);
  ASSERT_TRUE(w);
  // Its last part ends inside a word: written from where it lies but for
  // that word, which must not take bytes past the blob.
  std::vector<uint8_t> big((70u << 20) + 5);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  auto h1 = w->writeBlob(big.data(), big.size());
  auto h2 = w->writeBlob(big.data(), big.size());
  EXPECT_EQ(h1, h2);
  ASSERT_TRUE(w->close(0, 0, 0, "exit"));
  CaptureReader r(path);
  uint64_t total = 0;
  int parts = 0;
  for (const auto& c : r.chunks()) {
    if (c.kind != static_cast<uint16_t>(gtap::schema::ChunkKind::BLOB)) continue;
    auto d = r.decode(c);
    auto blob = d.root<gtap::schema::Blob>();
    EXPECT_EQ(blob.getTotalSize(), big.size());
    EXPECT_EQ(std::memcmp(blob.getData().begin(), big.data() + blob.getOffset(), blob.getData().size()), 0);
    total += blob.getData().size();
    ++parts;
  }
  EXPECT_EQ(total, big.size());
  EXPECT_EQ(parts, 3);
}

}  // namespace
