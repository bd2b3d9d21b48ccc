// The real gtap commands on crafted hostile captures (tests/unit/
// hostile_captures.h), each under an address-space limit proportional to the
// file plus a fixed base and a time limit: every run ends in an answer or an
// error naming the file, never a crash, a hang or unbounded memory.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../unit/hostile_captures.h"
#include "process.h"

namespace gtap::test {
namespace {

// What gtap itself maps (libraries, the simulated driver) plus a little per
// byte of input: a reader that sizes anything by what a file declares, not
// by what it holds, goes past it.
constexpr uint64_t kBaseAddressSpace = 1536ull << 20;
constexpr uint64_t kPerInputByte = 1024;

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

ProcessResult bounded(const std::vector<std::string>& args, uint64_t inputBytes) {
  std::vector<std::string> argv{"timeout", "-s", "KILL", "60",
                                "prlimit", "--as=" + std::to_string(kBaseAddressSpace + kPerInputByte * inputBytes),
                                gtapBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv);
}

// A clean end: an answer, or an error that names the file.
void expectClean(const ProcessResult& r, const std::string& file, const std::string& what) {
  EXPECT_GE(r.exitCode, 0) << what << ": killed by signal " << r.signal << " (a crash, or the time limit)\n" << r.err;
  EXPECT_NE(r.exitCode, 137) << what << ": killed (time limit)";
  for (const char* bad : {"terminate called", "bad_alloc", "Segmentation", "Aborted", "length_error"})
    EXPECT_EQ(std::string::npos, r.err.find(bad)) << what << ": " << r.err;
  if (r.exitCode != 0) {
    EXPECT_NE(std::string::npos, r.err.find(file)) << what << ": the error names no file:\n" << r.err;
  }
}

TEST(HostileCaptureCli, EveryCommandEndsCleanlyOnEveryCraftedFile) {
  std::string dir = freshDirectory("hostile-cli");
  std::string fifo = dir + "/payload.fifo";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  auto cases = hostile::allCases(readFile(GTAP_TEST_WORKLOAD_KERNELS), fifo);
  cases.push_back(hostile::bomb(schema::ChunkKind::REPLAY, 1u << 30, "replay-bomb"));
  cases.push_back(hostile::bomb(schema::ChunkKind::BLOB, 32u << 20, "blob-bomb-32MiB"));
  cases.push_back(hostile::bomb(schema::ChunkKind::BLOB, 1u << 30, "blob-bomb-1GiB"));
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string file = dir + "/" + c.name + ".gtap";
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(c.bytes.data()), static_cast<std::streamsize>(c.bytes.size()));
    std::string out = dir + "/" + c.name + "-export.jsonl";
    std::vector<std::vector<std::string>> commands = {
        {"info", file},          {"summary", file}, {"kernels", file}, {"api", file},
        {"memory", file},        {"executables", file}, {"explain", file},
        {"export", "--format", "jsonl", "-o", out, file}, {"dump", file},
        {"counters", file},      {"counters", "--per-dispatch", file}, {"counters", "--roofline", file},
        {"kernels", "--counters", file}};
    if (c.replay) commands.push_back({"replay", "--sim", "--verify", file});
    for (const auto& args : commands) {
      ProcessResult r = bounded(args, c.bytes.size());
      expectClean(r, file, args[0]);
      // The valid files are answered (a profile capture has no stream to dump).
      if (c.name.rfind("valid", 0) == 0 && (c.replay || args[0] != "dump")) {
        EXPECT_EQ(0, r.exitCode) << args[0] << ": " << r.err;
      }
      if (!c.mustName.empty() && (args[0] == "executables" || args[0] == "replay") && r.exitCode != 0) {
        EXPECT_NE(std::string::npos, r.err.find(c.mustName)) << args[0] << ": " << r.err;
      }
    }
    std::filesystem::remove(out);
    std::filesystem::remove(file);
  }
}

TEST(HostileCaptureCli, ReplayRefusesAModuleWithFlippedBitsNamingIt) {
  std::string dir = freshDirectory("hostile-cli-flip");
  auto kernels = readFile(GTAP_TEST_WORKLOAD_KERNELS);
  hostile::Hooks h;
  h.blob = [](schema::Blob::Builder b, int part) {
    if (part) b.getData()[b.getData().size() / 3] ^= 0x04;
  };
  std::string file = dir + "/flip.gtap";
  auto bytes = hostile::build(true, h, kernels, true);
  std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  ProcessResult r = bounded({"replay", "--sim", file}, bytes.size());
  expectClean(r, file, "replay");
  EXPECT_NE(0, r.exitCode);
  std::string hash = format::contentHash(kernels.data(), kernels.size()).hex();
  EXPECT_NE(std::string::npos, r.err.find("blob " + hash)) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("seq 6 (moduleCreate)")) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("damaged")) << r.err;
}

TEST(HostileCaptureCli, AFifoGivenAsACaptureIsRefusedAtOnce) {
  std::string dir = freshDirectory("hostile-cli-fifo");
  std::string fifo = dir + "/capture.gtap";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  for (const char* command : {"info", "dump", "summary"}) {
    ProcessResult r = bounded({command, fifo}, 0);
    expectClean(r, fifo, command);
    EXPECT_NE(0, r.exitCode);
    EXPECT_NE(std::string::npos, r.err.find("not a regular file (a FIFO)")) << r.err;
  }
}

}  // namespace
}  // namespace gtap::test
