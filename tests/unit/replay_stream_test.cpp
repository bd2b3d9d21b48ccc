// Reading replay streams: records sorted by seq across chunks, blobs located
// and assembled, fields named per op, the summary, and damaged files.
#include <capnp/any.h>
#include <capnp/schema.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtap/readers/replay_dump.h"
#include "gtap/readers/replay_fields.h"
#include "gtap/readers/replay_stream.h"
#include "gtap/readers/replay_summary.h"
#include "replay_capture_builder.h"

namespace gtap::test {
namespace {

using O = schema::ReplayOp;

std::string tempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-replay-unit-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return (dir / name).string();
}

ReplayCaptureBuilder sampleStream(const std::string& externalFile) {
  ReplayCaptureBuilder b;
  b.add(O::DEVICE, 1, {}, {0, 0, 0x6774, 0x5a01}).text = "gtap simulated GPU";
  b.add(O::CONTEXT_CREATE, 2, {}, {0});
  b.add(O::MEM_ALLOC, 3, {2, 0}, {1, 4096, 64}, {0x7000}).function = 2;
  b.add(O::MODULE_CREATE, 4, {2, 1}, {1}).payload = ReplayCaptureBuilder::blob(std::vector<uint8_t>(10000, 0xab));
  b.add(O::KERNEL_CREATE, 5, {4}, {0}).text = "vector_add";
  b.add(O::KERNEL_SET_ARGUMENT, 5, {}, {0, 8, 1}).payload = ReplayCaptureBuilder::inlineBytes(bytesOf<uint64_t>(0x7000));
  b.add(O::SCOPE_BEGIN).text = "phase";
  auto& launch = b.add(O::LAUNCH_KERNEL, 6, {5, 0, 8, 9}, {4, 1, 1, 0, 0});
  launch.function = 1;
  b.add(O::SCOPE_END).text = "phase";
  b.add(O::COPY, 6, {0}, {16}, {0x7000, 0x9000}).payload = ReplayCaptureBuilder::file(externalFile, 4, 16);
  b.add(O::UNSUPPORTED).text = "images are not replayed";
  return b;
}

std::string externalFile() {
  std::string path = tempPath("weights.bin");
  std::ofstream(path) << std::string(64, 'w');
  return path;
}

TEST(ReplayStream, RecordsSortedAcrossChunksAndBlobsLocated) {
  std::string path = tempPath("sorted.gtap");
  auto b = sampleStream(externalFile());
  ASSERT_EQ(b.write(path), "");
  readers::Capture c(path);
  EXPECT_TRUE(c.notes().empty()) << c.notes().front();
  auto s = readers::loadReplayStream(c);
  ASSERT_EQ(s.records.size(), b.records().size());
  for (size_t i = 0; i < s.records.size(); ++i) EXPECT_EQ(s.records[i].seq, i + 1);
  EXPECT_TRUE(s.complete);
  const auto& module = s.records[3];
  ASSERT_EQ(module.payload.kind, readers::ReplayPayload::Kind::blob);
  ASSERT_EQ(s.blobs.count(module.payload.blob), 1u);
  auto parts = s.blobs.at(module.payload.blob);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_GT(parts[0].fileOffset(), 16u);
  auto bytes = s.blob(c, module.payload.blob);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes, std::vector<uint8_t>(10000, 0xab));
  EXPECT_EQ(s.records[5].payload.bytes, bytesOf<uint64_t>(0x7000));
  EXPECT_EQ(s.records[9].payload.file.offset, 4u);
}

TEST(ReplayStream, FieldsAreNamedPerOp) {
  std::string path = tempPath("fields.gtap");
  ASSERT_EQ(sampleStream(externalFile()).write(path), "");
  readers::Capture c(path);
  auto s = readers::loadReplayStream(c);
  auto text = [&](size_t i) {
    std::string t;
    for (const auto& f : readers::replayFields(s.records[i])) t += (t.empty() ? "" : " ") + readers::fieldText(f);
    return t;
  };
  EXPECT_EQ(text(7), "list=6 kernel=5 signal=0 waits=[8,9] groups=4,1,1 cooperative=0 dispatch=0");
  EXPECT_EQ(text(2), "allocation=3 context=2 device=0 kind=1 size=4096 alignment=64 address=0x7000");
  EXPECT_EQ(text(0), "device=1 driverIndex=0 deviceIndex=0 vendorId=0x6774 deviceId=0x5a01 name=\"gtap simulated GPU\"");
  EXPECT_EQ(text(9), "list=6 signal=0 waits=[] size=16 dst=0x7000 src=0x9000");
  EXPECT_EQ(text(4), "kernel=5 module=4 flags=0 name=\"vector_add\"");
}

// HSA records: signal values are signed, a dispatch's kernarg pointers are
// a list of structs shown field by field.
TEST(ReplayStream, HsaFieldsShowSignedValuesAndPointerLists) {
  capnp::MallocMessageBuilder m;
  auto root = m.initRoot<schema::ReplayRecord>();
  auto w = root.initHsaSignalWait();
  w.initSignals(2).set(0, 7);
  w.initConditions(2).set(1, 2);
  auto values = w.initValues(2);
  values.set(0, -1);
  values.set(1, 5);
  w.setSatisfied(1);
  w.setObserved(-3);
  readers::ReplayRecord r;
  r.op = readers::ReplayOp::HSA_SIGNAL_WAIT;
  r.fields = root.asReader();
  std::string t;
  for (const auto& f : readers::replayFields(r)) t += (t.empty() ? "" : " ") + readers::fieldText(f);
  EXPECT_EQ(t, "signals=[7,0] conditions=[0,2] values=[-1,5] satisfied=1 observed=-3 kind=0");
  std::string j;
  for (const auto& f : readers::replayFields(r)) j += f.name + ":" + readers::fieldJson(f) + " ";
  EXPECT_NE(j.find("values:[-1,5] "), std::string::npos) << j;
  EXPECT_NE(j.find("observed:-3 "), std::string::npos) << j;

  capnp::MallocMessageBuilder d;
  auto dispatch = d.initRoot<schema::ReplayRecord>().initHsaDispatch();
  auto pointers = dispatch.initPointers(2);
  pointers[0].setOffset(8);
  pointers[0].setSize(8);
  pointers[1].setOffset(16);
  pointers[1].setSize(4);
  pointers[1].setKind(1);
  pointers[1].setQueue(3);
  r.op = readers::ReplayOp::HSA_DISPATCH;
  r.fields = d.getRoot<schema::ReplayRecord>().asReader();
  for (const auto& f : readers::replayFields(r)) {
    if (f.name != "pointers") continue;
    EXPECT_EQ(readers::fieldText(f), "pointers=[{offset=8 size=8 kind=0 queue=0},{offset=16 size=4 kind=1 queue=3}]");
    EXPECT_EQ(readers::fieldJson(f),
              "[{\"offset\":8,\"size\":8,\"kind\":0,\"queue\":0},{\"offset\":16,\"size\":4,\"kind\":1,\"queue\":3}]");
  }
}

// Records of formats 1.0-1.1 (positional) read as the same typed records
// gtap writes today: every field of every record alike.
TEST(ReplayStream, PositionalRecordsOfFormat11ReadAsTyped) {
  std::string file = externalFile();
  std::string typedPath = tempPath("typed.gtap"), positionalPath = tempPath("positional.gtap");
  auto typed = sampleStream(file);
  typed.add(O::HOST_DATA, 10, {}, {1, 32}, {0x9020}).payload = ReplayCaptureBuilder::blob({1, 2, 3});
  typed.add(O::COPY_REGION, 6, {0, 8}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {0x7000, 0x9000});
  ASSERT_EQ(typed.write(typedPath), "");
  auto positional = typed;
  positional.positional(true);
  ASSERT_EQ(positional.write(positionalPath), "");
  readers::Capture a(typedPath), b(positionalPath);
  auto sa = readers::loadReplayStream(a), sb = readers::loadReplayStream(b);
  ASSERT_EQ(sa.records.size(), sb.records.size());
  auto text = [](const readers::ReplayRecord& r) {
    std::string t = readers::replayOpName(r.op);
    for (const auto& f : readers::replayFields(r)) t += " " + readers::fieldText(f);
    return t;
  };
  for (size_t i = 0; i < sa.records.size(); ++i) {
    EXPECT_FALSE(sa.records[i].fields.isPositional());
    EXPECT_FALSE(sb.records[i].fields.isPositional());
    EXPECT_EQ(text(sa.records[i]), text(sb.records[i]));
  }
  EXPECT_EQ(text(sb.records[11]), "hostData copy=10 offset=32 address=0x9020");
  EXPECT_EQ(text(sb.records[12]),
            "copyRegion list=6 signal=0 waits=[8] dstOrigin=1,2,3 dstExtent=4,5,6 dstPitch=7 dstSlicePitch=8 "
            "srcOrigin=9,10,11 srcExtent=12,13,14 srcPitch=15 srcSlicePitch=16 dst=0x7000 src=0x9000");
  EXPECT_EQ(readers::createdObject(sb.records[2]), 3u);
}

// A loaded stream's records can be read any number of times (replay and
// bench go over them once per iteration): the file's reading limits apply
// once, at load.
TEST(ReplayStream, RecordsReadAgainAndAgainAfterLoading) {
  std::string path = tempPath("again.gtap");
  ReplayCaptureBuilder b;
  b.add(O::DEVICE, 1, {}, {0, 0, 1, 2});
  for (uint64_t i = 0; i < 200; ++i) b.add(O::LAUNCH_KERNEL, 6, {5, 0, 8, 9}, {4, 1, 1, 0, i});
  ASSERT_EQ(b.write(path), "");
  readers::Capture c(path);
  auto s = readers::loadReplayStream(c);
  ASSERT_EQ(s.records.size(), 201u);
  size_t fields = 0;
  for (int pass = 0; pass < 50; ++pass)
    for (const auto& r : s.records) fields += readers::replayFields(r).size();
  EXPECT_EQ(fields, 50u * (5 + 200 * 7));  // the device has no name here
}

// A positional value that does not fit its typed field (flags are 32 bits)
// makes its chunk unreadable, said with the file and offset: never truncated.
TEST(ReplayStream, PositionalValueTooWideForItsFieldIsReported) {
  std::string path = tempPath("wide.gtap");
  ReplayCaptureBuilder b;
  b.positional(true);
  b.add(O::DEVICE, 1, {}, {0, 0, 1, 2});
  b.add(O::CONTEXT_CREATE, 2, {}, {uint64_t{1} << 40});
  ASSERT_EQ(b.write(path), "");
  readers::Capture c(path);
  auto s = readers::loadReplayStream(c);  // the builder writes each record in a chunk of its own
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_EQ(s.records[0].op, readers::ReplayOp::DEVICE);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find(path + ": chunk at offset"), std::string::npos) << s.notes[0];
  EXPECT_FALSE(s.complete);
}

// An operation's fields held behind a pointer of another kind (a list where
// the schema has a struct; found by replay_dump_fuzzer): that record is left
// out at load with a note naming it, the chunk's other records stay, and
// dumping the stream reads nothing that throws.
TEST(ReplayStream, RecordWithPointerOfTheWrongKindIsNamedAndLeftOut) {
  std::string path = tempPath("kind.gtap");
  ReplayCaptureBuilder b;
  b.add(O::DEVICE, 1, {}, {0, 0, 1, 2});
  b.add(O::CONTEXT_CREATE, 2, {}, {0});
  b.add(O::MEM_ALLOC, 3, {2, 0}, {1, 4096, 64}, {0x7000});
  b.add(O::CONTEXT_CREATE, 4, {}, {0});
  auto member = capnp::Schema::from<schema::ReplayRecord>().getFieldByName("memAlloc");
  auto slot = member.getProto().getSlot().getOffset();
  b.tamper([slot](capnp::List<schema::ReplayRecord>::Builder records) {
    for (auto r : records) {
      if (!r.isMemAlloc()) continue;
      capnp::AnyStruct::Builder any = capnp::toAny(r);
      any.getPointerSection()[slot].initAs<capnp::List<uint64_t>>(3);
    }
  });
  ASSERT_EQ(b.write(path), "");
  readers::Capture c(path);
  auto s = readers::loadReplayStream(c);
  ASSERT_EQ(s.records.size(), 3u);
  for (const auto& r : s.records) EXPECT_NE(r.op, readers::ReplayOp::MEM_ALLOC);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find(path + ": chunk at offset"), std::string::npos) << s.notes[0];
  EXPECT_NE(s.notes[0].find("record 0 of 2 is malformed"), std::string::npos) << s.notes[0];
  EXPECT_FALSE(s.complete);
  std::ostringstream text, jsonl;
  EXPECT_NO_THROW(readers::writeReplayDumpText(text, c, s));
  EXPECT_NO_THROW(readers::writeReplayDumpJsonLines(jsonl, c, s));
  EXPECT_NE(text.str().find("CUT SHORT: 1 replay chunk(s) or record(s) could not be read"), std::string::npos) << text.str();
}

// docs/replay.md's table of operations is the schema's, as `gtap dump --ops`
// prints it.
TEST(ReplayStream, DocsTableOfOperationsIsTheSchemas) {
  std::ifstream in(std::string(GTAP_TEST_SOURCE_DIR) + "/docs/replay.md");
  std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string begin = "<!-- operations: gtap dump --ops -->\n", end = "<!-- end of operations -->";
  auto from = doc.find(begin), to = doc.find(end);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  std::ostringstream table;
  readers::writeReplayOpsMarkdown(table);
  EXPECT_EQ(doc.substr(from + begin.size(), to - from - begin.size()), table.str())
      << "docs/replay.md is out of date: replace the table between the markers with `gtap dump --ops`";
}

TEST(ReplayStream, SummaryCountsScopesUnsupportedAndExternalFiles) {
  std::string file = externalFile();
  std::string path = tempPath("summary.gtap");
  ASSERT_EQ(sampleStream(file).write(path), "");
  readers::Capture c(path);
  auto s = readers::loadReplayStream(c);
  auto sum = readers::summarizeReplay(c, s);
  EXPECT_EQ(sum.records, 11u);
  EXPECT_EQ(sum.objects.at("memAlloc"), 1u);
  EXPECT_EQ(sum.operations.at("launchKernel"), 1u);
  ASSERT_EQ(sum.unsupported.size(), 1u);
  EXPECT_EQ(sum.unsupported[0].seq, 11u);
  EXPECT_EQ(sum.unsupported[0].reason, "images are not replayed");
  EXPECT_EQ(sum.scopes.at("phase").begins, 1u);
  EXPECT_EQ(sum.scopes.at("phase").ends, 1u);
  EXPECT_FALSE(sum.hermetic());
  ASSERT_EQ(sum.externalFiles.size(), 1u);
  EXPECT_EQ(sum.externalFiles[0].path, file);
}

TEST(ReplayStream, NoReplayRecordsIsAClearError) {
  std::string path = tempPath("empty.gtap");
  ReplayCaptureBuilder b;
  ASSERT_EQ(b.write(path), "");
  readers::Capture c(path);
  try {
    readers::loadReplayStream(c);
    FAIL() << "expected an error";
  } catch (const readers::ReplayStreamError& e) {
    EXPECT_EQ(std::string(e.what()), path +
                                          " holds no replay stream although it was recorded with mode replay: the "
                                          "program made no Level Zero or HSA call gtap records for replay");
  }
}

// A file cut anywhere either fails to open, holds no stream, or holds a
// stream that says it is cut short.
TEST(ReplayStream, CutFilesAreReportedNeverTakenAsWhole) {
  std::string path = tempPath("whole.gtap");
  ASSERT_EQ(sampleStream(externalFile()).write(path), "");
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    std::string part = tempPath("cut.gtap");
    std::ofstream(part, std::ios::binary).write(bytes.data(), static_cast<long>(cut));
    try {
      readers::Capture c(part);
      auto s = readers::loadReplayStream(c);
      EXPECT_FALSE(s.complete) << "cut at " << cut;
      EXPECT_NE(s.cutDescription.find("not closed cleanly"), std::string::npos) << s.cutDescription;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gtap::test
