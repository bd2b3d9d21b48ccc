// gtap dump, replay and bench as processes, on replay streams written with the
// format's writer: a vector addition on the simulated device whose result is
// read back, and variants that must be refused (cut, unsupported, a missing or
// changed external file, a replacement module that lacks a kernel).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "../unit/replay_capture_builder.h"
#include "process.h"

namespace gtap::test {
namespace {

using O = schema::ReplayOp;

constexpr uint64_t kA = 0x10000000, kB = 0x20000000, kC = 0x30000000;  // captured allocation addresses
constexpr uint64_t kHostBuffer = 0x7fff00000000;  // ordinary host memory in the program
constexpr uint32_t kCount = 1024;
constexpr uint64_t kBytes = kCount * sizeof(float);

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> floats(float (*f)(uint32_t)) {
  std::vector<float> v(kCount);
  for (uint32_t i = 0; i < kCount; ++i) v[i] = f(i);
  std::vector<uint8_t> out(kBytes);
  std::memcpy(out.data(), v.data(), kBytes);
  return out;
}

struct StreamOptions {
  std::string bFromFile;      // b's bytes come from this file (a file reference), not hostData
  bool unsupported = false;
  bool wrongExpectation = false;
  bool scope = false;
};

// c = a + b on the simulated device: a and b shared allocations written by the
// host, c copied to ordinary host memory on an immediate list and read back.
ReplayCaptureBuilder vectorAdd(const StreamOptions& o = {}) {
  ReplayCaptureBuilder s;
  auto a = floats([](uint32_t i) { return static_cast<float>(i); });
  auto b = floats([](uint32_t i) { return 0.5f * static_cast<float>(i); });
  auto c = floats([](uint32_t i) { return 1.5f * static_cast<float>(i); });
  if (o.wrongExpectation) c[100] ^= 1;
  s.add(O::DEVICE, 1, {}, {0, 0, 0x6774, 0x5a01}).text = "gtap simulated GPU";
  s.add(O::CONTEXT_CREATE, 2, {}, {0});
  s.add(O::MEM_ALLOC, 3, {2, 1}, {3, kBytes, 64}, {kA});
  s.add(O::MEM_ALLOC, 4, {2, 1}, {3, kBytes, 64}, {kB});
  s.add(O::MEM_ALLOC, 5, {2, 1}, {2, kBytes, 64}, {kC});
  s.add(O::MODULE_CREATE, 6, {2, 1}, {1}).payload = ReplayCaptureBuilder::blob(readFile(GTAP_TEST_WORKLOAD_KERNELS));
  s.add(O::KERNEL_CREATE, 7, {6}, {0}).text = "vector_add";
  s.add(O::KERNEL_SET_GROUP_SIZE, 7, {}, {64, 1, 1});
  s.add(O::KERNEL_SET_ARGUMENT, 7, {}, {0, 8, 1}).payload = ReplayCaptureBuilder::inlineBytes(bytesOf(kA));
  s.add(O::KERNEL_SET_ARGUMENT, 7, {}, {1, 8, 1}).payload = ReplayCaptureBuilder::inlineBytes(bytesOf(kB));
  s.add(O::KERNEL_SET_ARGUMENT, 7, {}, {2, 8, 1}).payload = ReplayCaptureBuilder::inlineBytes(bytesOf(kC));
  s.add(O::KERNEL_SET_ARGUMENT, 7, {}, {3, 4, 1}).payload = ReplayCaptureBuilder::inlineBytes(bytesOf(kCount));
  s.add(O::LIST_CREATE_IMMEDIATE, 8, {2, 1}, {0, 0, 0, 0, 0});
  s.add(O::EVENT_POOL_CREATE, 9, {2}, {1, 2});
  s.add(O::EVENT_CREATE, 10, {9}, {0, 4, 4});
  s.add(O::HOST_DATA, 3, {}, {0, 0}, {kA}).payload = ReplayCaptureBuilder::blob(a);
  if (o.bFromFile.empty()) {
    s.add(O::HOST_DATA, 4, {}, {0, 0}, {kB}).payload = ReplayCaptureBuilder::blob(b);
  } else {
    std::ofstream(o.bFromFile, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), kBytes);
    s.add(O::COPY, 8, {0}, {kBytes}, {kB, kHostBuffer + 0x100000}).payload =
        ReplayCaptureBuilder::file(o.bFromFile, 0, kBytes);
    s.add(O::BARRIER, 8, {0});
  }
  if (o.unsupported) s.add(O::UNSUPPORTED).text = "zeImageCreate: images are not replayed";
  if (o.scope) s.add(O::SCOPE_BEGIN).text = "compute";
  s.add(O::LAUNCH_KERNEL, 8, {7, 0}, {kCount / 64, 1, 1, 0, 0}).function = 1;
  if (o.scope) s.add(O::SCOPE_END).text = "compute";
  uint64_t copySeq = s.add(O::COPY, 8, {10}, {kBytes}, {kHostBuffer, kC}).seq;
  s.add(O::EVENT_HOST_SYNCHRONIZE, 10, {}, {UINT64_MAX});
  s.add(O::READ_BACK, copySeq, {}, {0}, {kHostBuffer}).payload = ReplayCaptureBuilder::blob(c);
  s.add(O::EVENT_DESTROY, 10);
  s.add(O::EVENT_POOL_DESTROY, 9);
  s.add(O::LIST_DESTROY, 8);
  s.add(O::KERNEL_DESTROY, 7);
  s.add(O::MODULE_DESTROY, 6);
  for (uint64_t id : {5, 4, 3}) s.add(O::MEM_FREE, id, {2}, {}, {id == 3 ? kA : id == 4 ? kB : kC});
  s.add(O::CONTEXT_DESTROY, 2);
  return s;
}

std::string write(const std::string& dir, const std::string& name, ReplayCaptureBuilder s, bool close = true) {
  std::string path = dir + "/" + name;
  EXPECT_EQ(s.write(path, close), "");
  return path;
}

ProcessResult gtap(std::vector<std::string> args, const EnvChanges& env = {}, const std::vector<std::string>& unset = {}) {
  args.insert(args.begin(), gtapBinary());
  return runProcess(args, env, unset);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Replay, VerifiesTheReadBackOnTheSimulatedDevice) {
  std::string dir = freshDirectory("replay-verify");
  std::string file = write(dir, "vadd.gtap", vectorAdd());
  auto r = gtap({"replay", "--sim", "--verify", file});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "verified 1 read-backs, 0 mismatched")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 kernel launches")) << r.out;
}

// Captures gtap wrote in format 1.1 (tests/data/format-1.1: a regular-list
// pipeline and immediate lists, on the simulated device) still dump as they
// did then and replay with every read-back matching.
TEST(Replay, CapturesOfFormat11DumpAndReplayAsWritten) {
  const std::string dir = std::string(GTAP_TEST_SOURCE_DIR) + "/tests/data/format-1.1/";
  auto text = [](const std::string& path) {
    std::ifstream in(path);
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  };
  // What 1.1's dump printed, less hostData's `target` (1.2 names the member).
  auto without = [](std::string s, const std::string& what) {
    for (size_t at; (at = s.find(what)) != std::string::npos;) s.erase(at, what.size());
    return s;
  };
  for (const std::string name : {"ze_pipeline", "ze_immediate"}) {
    SCOPED_TRACE(name);
    std::string capture = dir + name + ".gtap";
    auto dump = gtap({"dump", capture});
    ASSERT_EQ(dump.exitCode, 0) << dump.err;
    // 1.6 adds readBack's `allocation` (0 for Level Zero's).
    std::string out = dump.out;
    for (size_t at; (at = out.find(" allocation=0 payload=")) != std::string::npos;) out.erase(at, 13);
    EXPECT_EQ(out, without(without(text(dir + name + ".dump.txt"), " target=0"), " target=1"));
    auto jsonl = gtap({"dump", "--format", "jsonl", capture});
    ASSERT_EQ(jsonl.exitCode, 0) << jsonl.err;
    std::string rows = jsonl.out;
    for (size_t at; (at = rows.find(",\"allocation\":0,\"payload\"")) != std::string::npos;) rows.erase(at, 15);
    EXPECT_EQ(rows, without(without(text(dir + name + ".dump.jsonl"), ",\"target\":0"), ",\"target\":1"));
    auto replay = gtap({"replay", "--sim", "--verify", capture});
    EXPECT_EQ(replay.exitCode, 0) << replay.out << replay.err;
    EXPECT_NE((replay.out + replay.err).find(", 0 mismatched"), std::string::npos) << replay.out << replay.err;
    EXPECT_EQ((replay.out + replay.err).find("verified 0 read-backs"), std::string::npos) << replay.out << replay.err;
  }
}

// api-mode captures gtap wrote in format 1.2 (tests/data/format-1.2: Level
// Zero calls; HSA calls made inside the runtime's callbacks, nested in the
// call that runs them; an IREE HAL driver over HSA, whose HAL calls hold HSA
// calls and whose dispatches link to the calls that made them) read as they
// did then: gtap api's table, and the API slices and flow starts (a call's
// link to its device work) of the Chrome export, whose device slices other
// readers shape.
TEST(Replay, ApiCapturesOfFormat12ReadAsWritten) {
  const std::string dir = std::string(GTAP_TEST_SOURCE_DIR) + "/tests/data/format-1.2/";
  auto text = [](const std::string& path) {
    std::ifstream in(path);
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  };
  auto callLines = [](const std::string& json) {
    std::string kept;
    std::istringstream in(json);
    for (std::string line; std::getline(in, line);)
      if (contains(line, "\"cat\":\"api\"") || contains(line, "\"ph\":\"s\"")) kept += line + "\n";
    return kept;
  };
  for (const std::string name : {"ze_api_counts", "hsa_callbacks", "hal_on_hsa"}) {
    SCOPED_TRACE(name);
    std::string capture = dir + name + ".gtap";
    auto api = gtap({"api", capture});
    ASSERT_EQ(api.exitCode, 0) << api.err;
    EXPECT_EQ(api.out, text(dir + name + ".api.txt"));
    std::string out = freshDirectory("format-1.2-" + name) + "/chrome.json";
    auto chrome = gtap({"export", "--format", "chrome", "-o", out, capture});
    ASSERT_EQ(chrome.exitCode, 0) << chrome.err;
    std::string expected = callLines(text(dir + name + ".chrome.json"));
    EXPECT_NE(expected, "");
    EXPECT_EQ(callLines(text(out)), expected);
  }
}

// Captures with device work written in format 1.3, whose device operations
// are Cap'n Proto struct lists (1.4 writes rows of varints), read as they did
// then (tests/data/format-1.3: Level Zero launches, copies and fills with
// memory and stacks; HSA packets with kernarg bytes and grid sizes; an IREE
// HAL driver over HSA, whose HAL operations carry bindings, waits, signals
// and are joined to the HSA dispatches they became): every row of the JSON
// Lines export, and the kernels and memory reports.
TEST(Replay, DeviceWorkOfFormat13ReadsAsWritten) {
  const std::string dir = std::string(GTAP_TEST_SOURCE_DIR) + "/tests/data/format-1.3/";
  auto text = [](const std::string& path) {
    std::ifstream in(path);
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  };
  for (const std::string name : {"ze_pipeline", "hsa_pipeline", "hal_on_hsa"}) {
    SCOPED_TRACE(name);
    std::string capture = dir + name + ".gtap";
    auto jsonl = gtap({"export", "--format", "jsonl", "-o", "-", capture});
    ASSERT_EQ(jsonl.exitCode, 0) << jsonl.err;
    std::string expected = text(dir + name + ".jsonl");
    EXPECT_NE(expected.find("\"type\":\"device\""), std::string::npos);
    // Since 1.4's readers a launch names its stack and each stack has a row
    // (its frames named from whatever binaries are there now): the rest of
    // every line is as it was.
    std::string lines, stackRows;
    std::istringstream in(jsonl.out);
    for (std::string line; std::getline(in, line);) {
      if (line.find("{\"type\":\"stack\",") == 0) {
        stackRows += line + "\n";
        continue;
      }
      // Rows of types later readers added: the schema, each process, the
      // totals per level and copy direction, the memory events.
      bool added = false;
      for (const char* type : {"schema", "process", "level", "copy_direction", "memory"})
        added |= line.find("{\"type\":\"" + std::string(type) + "\",") == 0;
      if (added) continue;
      if (auto at = line.find(",\"stack\":"); at != std::string::npos)
        line.erase(at, line.find_first_of(",}", at + 1) - at);
      lines += line + "\n";
    }
    EXPECT_EQ(lines, expected);
    EXPECT_EQ(jsonl.out.find("{\"type\":\"schema\",\"version\":"), 0u) << "the schema line comes first";
    if (name == "ze_pipeline") {
      EXPECT_NE(stackRows, "");
    }
    for (const std::string verb : {"kernels", "memory"}) {
      auto report = gtap({verb, capture});
      ASSERT_EQ(report.exitCode, 0) << report.err;
      EXPECT_EQ(report.out, text(dir + name + "." + verb + ".txt")) << verb;
    }
  }
}

TEST(Replay, AMismatchedReadBackIsNamedAndFailsTheExitStatus) {
  std::string dir = freshDirectory("replay-mismatch");
  StreamOptions o;
  o.wrongExpectation = true;
  auto s = vectorAdd(o);
  uint64_t readBack = 0;
  for (const auto& r : s.records())
    if (r.op == O::READ_BACK) readBack = r.seq;
  std::string file = write(dir, "vadd.gtap", s);
  auto r = gtap({"replay", "--sim", "--verify", file});
  EXPECT_EQ(r.exitCode, 3) << r.err;
  EXPECT_TRUE(contains(r.out, "verified 1 read-backs, 1 mismatched")) << r.out;
  EXPECT_TRUE(contains(r.out, "read-back seq " + std::to_string(readBack))) << r.out;
  EXPECT_TRUE(contains(r.out, "1 of 4096 bytes differ, the first at offset 100")) << r.out;
}

TEST(Replay, UnsupportedRecordsAreRefusedBeforeAnyDeviceWork) {
  std::string dir = freshDirectory("replay-unsupported");
  StreamOptions o;
  o.unsupported = true;
  std::string file = write(dir, "vadd.gtap", vectorAdd(o));
  // No driver at all: a refusal that came after zeInit would say so instead.
  auto r = gtap({"replay", file}, {{"ZE_ENABLE_ALT_DRIVERS", "/nonexistent/driver.so"}});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_TRUE(contains(r.err, file)) << r.err;
  EXPECT_TRUE(contains(r.err, "unsupported records")) << r.err;
  EXPECT_TRUE(contains(r.err, "images are not replayed")) << r.err;
}

// A call that fails on replay stops it, naming the record and the result.
TEST(Replay, AFailingCallNamesTheRecordAndResult) {
  std::string dir = freshDirectory("replay-failing-call");
  auto s = vectorAdd();
  uint64_t seq = 0;
  for (auto& r : s.records()) {
    if (r.op == O::KERNEL_SET_ARGUMENT && r.values[0] == 3) {
      r.values[1] = 8;  // the kernel's argument 3 is 4 bytes
      r.payload = ReplayCaptureBuilder::inlineBytes(bytesOf<uint64_t>(kCount));
      seq = r.seq;
    }
  }
  std::string file = write(dir, "vadd.gtap", s);
  auto r = gtap({"replay", "--sim", file});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_TRUE(contains(r.err, file + ": record seq " + std::to_string(seq) + " (kernelSetArgument): "
                              "zeKernelSetArgumentValue returned ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE"))
      << r.err;
}

TEST(Replay, CutFilesAreRefusedNamingTheFile) {
  std::string dir = freshDirectory("replay-cut");
  std::string whole = write(dir, "whole.gtap", vectorAdd());
  auto bytes = readFile(whole);
  for (size_t cut : {size_t{10}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 20, bytes.size() - 1}) {
    std::string part = dir + "/cut-" + std::to_string(cut) + ".gtap";
    std::ofstream(part, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(cut));
    auto r = gtap({"replay", "--sim", part});
    EXPECT_NE(r.exitCode, 0) << "cut at " << cut;
    EXPECT_TRUE(contains(r.err, part)) << r.err;
    auto d = gtap({"dump", part});
    if (d.exitCode == 0) {
      EXPECT_TRUE(contains(d.out, "CUT SHORT")) << d.out;
    }
  }
  // Without its trailer the stream may lack its end: refused, saying where it stopped.
  std::string open = write(dir, "unclosed.gtap", vectorAdd(), false);
  auto r = gtap({"replay", "--sim", open});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_TRUE(contains(r.err, "cut short")) << r.err;
  EXPECT_TRUE(contains(r.err, "the last record read is seq")) << r.err;
}

TEST(Replay, ExternalFileMissingOrChangedIsRefusedBeforeDeviceWork) {
  std::string dir = freshDirectory("replay-files");
  StreamOptions o;
  o.bFromFile = dir + "/b.bin";
  std::string file = write(dir, "vadd.gtap", vectorAdd(o));
  auto ok = gtap({"replay", "--sim", "--verify", file});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  auto dump = gtap({"dump", file});
  EXPECT_TRUE(contains(dump.out, "hermetic: no")) << dump.out;
  EXPECT_TRUE(contains(dump.out, o.bFromFile)) << dump.out;

  // Moved: found again with --remap (a copy keeping the modification time).
  std::filesystem::create_directories(dir + "/moved");
  std::filesystem::copy_file(o.bFromFile, dir + "/moved/b.bin");
  std::filesystem::last_write_time(dir + "/moved/b.bin", std::filesystem::last_write_time(o.bFromFile));
  std::filesystem::remove(o.bFromFile);
  const EnvChanges noDriver = {{"ZE_ENABLE_ALT_DRIVERS", "/nonexistent/driver.so"}};
  auto missing = gtap({"replay", file}, noDriver);
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_TRUE(contains(missing.err, o.bFromFile + " cannot be opened")) << missing.err;
  auto remapped = gtap({"replay", "--sim", "--verify", "--remap", dir + "/b.bin=" + dir + "/moved/b.bin", file});
  EXPECT_EQ(remapped.exitCode, 0) << remapped.err;

  // Changed in place (same size): its modification time gives it away.
  std::filesystem::copy_file(dir + "/moved/b.bin", o.bFromFile);
  auto changed = gtap({"replay", file}, noDriver);
  EXPECT_EQ(changed.exitCode, 1);
  EXPECT_TRUE(contains(changed.err, "changed since the capture")) << changed.err;
  EXPECT_TRUE(contains(changed.err, "mtime")) << changed.err;
}

TEST(Replay, SubstitutedModuleMustOfferTheSameKernels) {
  std::string dir = freshDirectory("replay-substitute");
  std::string file = write(dir, "vadd.gtap", vectorAdd());
  auto same = gtap({"replay", "--sim", "--verify", "--substitute", "vector_add=" GTAP_TEST_SIM_SMOKE_KERNELS, file});
  EXPECT_EQ(same.exitCode, 0) << same.err;
  EXPECT_TRUE(contains(same.out, "0 mismatched")) << same.out;
  auto lacking = gtap({"replay", "--sim", "--substitute", "6=" GTAP_TEST_SIM_SECOND_MODULE, file});
  EXPECT_EQ(lacking.exitCode, 1);
  EXPECT_TRUE(contains(lacking.err, "kernel vector_add")) << lacking.err;
  EXPECT_TRUE(contains(lacking.err, "the replacement does not have it")) << lacking.err;
  auto unknown = gtap({"replay", "--sim", "--substitute", "no_such_kernel=" GTAP_TEST_SIM_SECOND_MODULE, file});
  EXPECT_EQ(unknown.exitCode, 1);
  EXPECT_TRUE(contains(unknown.err, "no kernel named no_such_kernel")) << unknown.err;
}

TEST(Dump, NamesFieldsPerOpAndSummarises) {
  std::string dir = freshDirectory("dump");
  std::string file = write(dir, "vadd.gtap", vectorAdd());
  auto r = gtap({"dump", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "launchKernel (zeCommandListAppendLaunchKernel) list=8 kernel=7 signal=0 waits=[] "
                              "groups=16,1,1 cooperative=0 dispatch=0"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "payload=inline:8B:0000001000000000")) << r.out;
  EXPECT_TRUE(contains(r.out, "payload=blob:")) << r.out;
  EXPECT_TRUE(contains(r.out, "chunks=[")) << r.out;
  EXPECT_TRUE(contains(r.out, "hermetic: yes")) << r.out;
  EXPECT_TRUE(contains(r.out, "unsupported: none")) << r.out;
  EXPECT_TRUE(contains(r.out, "stream: complete")) << r.out;

  auto j = gtap({"dump", "--format=jsonl", file});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  std::istringstream lines(j.out);
  std::string line, last;
  size_t records = 0;
  while (std::getline(lines, line)) {
    if (contains(line, "\"type\":\"record\"")) ++records;
    last = line;
  }
  EXPECT_EQ(records, vectorAdd().records().size());
  EXPECT_TRUE(contains(last, "\"type\":\"summary\"")) << last;
  EXPECT_TRUE(contains(last, "\"hermetic\":true")) << last;
  EXPECT_TRUE(contains(j.out, "\"waits\":[],\"groups\":[16,1,1]")) << j.out;

  ReplayCaptureBuilder none;
  std::string empty = write(dir, "empty.gtap", none);
  auto e = gtap({"dump", empty});
  EXPECT_EQ(e.exitCode, 1);
  EXPECT_TRUE(contains(e.err, empty + " holds no replay stream although it was recorded with mode replay: the program made no Level Zero or HSA call gtap records for replay")) << e.err;
}

TEST(Bench, TimesIterationsAndKernelsFromItsOwnProfile) {
  std::string dir = freshDirectory("bench");
  StreamOptions o;
  o.scope = true;
  std::string file = write(dir, "vadd.gtap", vectorAdd(o));
  auto r = gtap({"bench", "--sim", "--iterations", "3", "--profile", dir + "/profile.gtap", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "3 iterations")) << r.out;
  EXPECT_TRUE(contains(r.out, "about 1 us per launch")) << r.out;
  EXPECT_TRUE(contains(r.out, "vector_add")) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/profile.gtap"));

  auto again = gtap({"bench", "--sim", "--iterations", "2", "--profile", dir + "/profile.gtap", file});
  EXPECT_EQ(again.exitCode, 2);
  EXPECT_TRUE(contains(again.err, "exists")) << again.err;

  auto scoped = gtap({"bench", "--sim", "--iterations", "2", "--scope", "compute", "--format", "json", file});
  ASSERT_EQ(scoped.exitCode, 0) << scoped.err;
  EXPECT_TRUE(contains(scoped.out, "\"scope\":\"compute\"")) << scoped.out;
  EXPECT_TRUE(contains(scoped.out, "\"name\":\"vector_add\",\"count\":2")) << scoped.out;

  auto missing = gtap({"bench", "--sim", "--iterations", "2", "--scope", "nope", file});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_TRUE(contains(missing.err, "no scope named nope")) << missing.err;
}

}  // namespace
}  // namespace gtap::test
