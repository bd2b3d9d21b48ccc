// What the gtap command writes and how it ends, with the real binary: every
// command that writes a file refuses links, devices, directories and (without
// --force) existing files and leaves nothing behind when it fails; every
// usage error exits 2; --remap and --substitute refuse what they cannot use.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "process.h"

namespace gtap::test {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A replay-and-profile capture of the vector addition on the simulated
// device, made once: every writing command and format reads it.
class OutputSafety : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string dir = freshDirectory("output-safety-capture");
    capture_ = dir + "/cap.gtap";
    auto r = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels,memory,replay", "-o", capture_, "--",
                         workload("ze_vector_add"), "2", "4096"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
  }
  static std::string capture_;
};
std::string OutputSafety::capture_;

const std::vector<std::string> kFormats = {"chrome", "perfetto", "jsonl", "sqlite"};

// One command line per writing command and format, writing to `target`.
struct Writer {
  std::string name;
  std::vector<std::string> args;  // before the target
  std::vector<std::string> after;
  bool hasForce;
};

std::vector<Writer> writers(const std::string& capture) {
  std::vector<Writer> w;
  for (const auto& f : kFormats) w.push_back({"export " + f, {"export", "--format", f, "-o"}, {capture}, true});
  w.push_back({"bench --profile", {"bench", "--sim", "--iterations", "1", "--profile"}, {capture}, false});
  return w;
}

ProcessResult runWriter(const Writer& w, const std::string& target, bool force) {
  std::vector<std::string> argv = {gtapBinary()};
  argv.insert(argv.end(), w.args.begin(), w.args.end());
  argv.push_back(target);
  if (force) argv.push_back("--force");
  argv.insert(argv.end(), w.after.begin(), w.after.end());
  return runProcess(argv);
}

TEST_F(OutputSafety, ASymbolicLinkTargetIsRefusedAndWhatItNamesIsUntouched) {
  for (const auto& w : writers(capture_)) {
    SCOPED_TRACE(w.name);
    std::string dir = freshDirectory("symlink-target");
    put(dir + "/victim", "precious");
    fs::create_symlink(dir + "/victim", dir + "/out");
    fs::create_symlink(dir + "/nowhere", dir + "/dangling");
    for (bool force : {false, true}) {
      if (force && !w.hasForce) continue;
      auto r = runWriter(w, dir + "/out", force);
      EXPECT_EQ(r.exitCode, 2) << r.err;
      EXPECT_TRUE(contains(r.err, dir + "/out is a symbolic link")) << r.err;
      auto d = runWriter(w, dir + "/dangling", force);
      EXPECT_EQ(d.exitCode, 2) << d.err;
      EXPECT_TRUE(contains(d.err, "symbolic link")) << d.err;
    }
    EXPECT_EQ(slurp(dir + "/victim"), "precious");
    EXPECT_TRUE(fs::is_symlink(dir + "/out"));
    EXPECT_FALSE(fs::exists(dir + "/nowhere"));
    EXPECT_EQ(entries(dir), (std::set<std::string>{"victim", "out", "dangling"}));
  }
}

// Only a regular file is ever replaced, and only with --force (bench
// --profile never replaces one).
TEST_F(OutputSafety, OnlyARegularFileIsReplacedAndOnlyWithForce) {
  for (const auto& w : writers(capture_)) {
    SCOPED_TRACE(w.name);
    std::string dir = freshDirectory("special-targets");
    put(dir + "/out", "before");
    auto refused = runWriter(w, dir + "/out", false);
    EXPECT_EQ(refused.exitCode, 2) << refused.err;
    EXPECT_TRUE(contains(refused.err, dir + "/out exists")) << refused.err;
    EXPECT_EQ(slurp(dir + "/out"), "before");
    EXPECT_EQ(entries(dir), std::set<std::string>{"out"}) << "no temporary file left";
    if (w.hasForce) {
      auto replaced = runWriter(w, dir + "/out", true);
      EXPECT_EQ(replaced.exitCode, 0) << replaced.err;
      std::string now = slurp(dir + "/out");
      EXPECT_GT(now.size(), 100u);
      if (w.name == "export sqlite") {
        EXPECT_EQ(now.rfind("SQLite format 3", 0), 0u);
      }
      EXPECT_EQ(entries(dir), std::set<std::string>{"out"});
    }
    fs::remove(dir + "/out");
    // Devices of the test's own (a null device and a full one, as /dev/null
    // and /dev/full) where it may make them: a gtap that replaced devices
    // would otherwise replace the machine's.
    std::vector<std::string> devices = {"/dev/null", "/dev/full"};
    if (geteuid() == 0) {
      ASSERT_EQ(mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
      ASSERT_EQ(mknod((dir + "/full").c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
      devices = {dir + "/null", dir + "/full"};
    }

    fs::create_directory(dir + "/sub");
    ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
    for (bool force : {false, true}) {
      if (force && !w.hasForce) continue;
      for (const auto& device : devices) {
        auto r = runWriter(w, device, force);
        EXPECT_EQ(r.exitCode, 2) << r.err;
        EXPECT_TRUE(contains(r.err, device + " is a character device")) << r.err;
        EXPECT_TRUE(fs::is_character_file(device)) << device;
      }
      auto sub = runWriter(w, dir + "/sub", force);
      EXPECT_EQ(sub.exitCode, 2) << sub.err;
      EXPECT_TRUE(contains(sub.err, "is a directory")) << sub.err;
      auto fifo = runWriter(w, dir + "/fifo", force);
      EXPECT_EQ(fifo.exitCode, 2) << fifo.err;
      EXPECT_TRUE(contains(fifo.err, "is a FIFO")) << fifo.err;
    }
    EXPECT_TRUE(fs::is_directory(dir + "/sub"));
    EXPECT_TRUE(fs::is_empty(dir + "/sub"));
    EXPECT_TRUE(fs::is_fifo(dir + "/fifo"));
    std::set<std::string> left = {"sub", "fifo"};
    if (geteuid() == 0) left.insert({"null", "full"});
    EXPECT_EQ(entries(dir), left);
  }
}

// gtap used to write OUT.partial-PID through whatever was at that name: a
// link planted there (the test knows the pid: exec keeps it) made it write
// the file the link points to.
TEST_F(OutputSafety, APlantedLinkAtTheOldTemporaryNameRedirectsNothing) {
  for (const auto& w : writers(capture_)) {
    SCOPED_TRACE(w.name);
    std::string dir = freshDirectory("planted");
    put(dir + "/victim", "precious");
    std::string command = "ln -s " + dir + "/victim " + dir + "/out.partial-$$ && exec " + gtapBinary();
    for (const auto& a : w.args) command += " '" + a + "'";
    command += " " + dir + "/out";
    for (const auto& a : w.after) command += " '" + a + "'";
    auto r = runProcess({"sh", "-c", command});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(slurp(dir + "/victim") == "precious") << "the file the link points to was written";
    EXPECT_GT(slurp(dir + "/out").size(), 100u);
    EXPECT_FALSE(fs::is_symlink(dir + "/out"));
    auto names = entries(dir);
    EXPECT_EQ(names.size(), 3u) << "victim, out and the planted link, nothing else";
  }
}

// Failures after the output was opened leave the target as it was and no
// temporary file: an input that is not a capture, a write past the file size
// limit (which kills the process with SIGXFSZ mid-write), a directory that
// does not exist.
TEST_F(OutputSafety, AFailureLeavesNoTemporaryFile) {
  std::string inputs = freshDirectory("failure-inputs");
  put(inputs + "/corrupt.gtap", std::string("GTAP\r\n\x1a\n", 8) + std::string(4000, '\x7f'));
  for (const auto& f : kFormats) {
    SCOPED_TRACE(f);
    std::string dir = freshDirectory("failure-" + f);
    put(dir + "/out", "before");
    auto corrupt = runProcess({gtapBinary(), "export", "--format", f, "-o", dir + "/out", "--force",
                               inputs + "/corrupt.gtap"});
    EXPECT_EQ(corrupt.exitCode, 1) << corrupt.err;
    EXPECT_TRUE(contains(corrupt.err, "corrupt.gtap")) << corrupt.err;
    EXPECT_EQ(slurp(dir + "/out"), "before");
    EXPECT_EQ(entries(dir), std::set<std::string>{"out"});

    auto killed = runProcess({"sh", "-c", "ulimit -c 0; ulimit -f 0; exec " + gtapBinary() + " export --force --format " + f +
                                              " -o " + dir + "/out " + capture_});
    EXPECT_EQ(killed.signal, SIGXFSZ) << killed.exitCode << killed.err;
    EXPECT_EQ(slurp(dir + "/out"), "before");
    EXPECT_EQ(entries(dir), std::set<std::string>{"out"});

    auto missing = runProcess({gtapBinary(), "export", "--format", f, "-o", dir + "/no/out", capture_});
    EXPECT_EQ(missing.exitCode, 1) << missing.err;
    EXPECT_TRUE(contains(missing.err, dir + "/no")) << missing.err;
  }
  // The kept profile: a replay that fails (no such scope) leaves nothing.
  std::string dir = freshDirectory("failure-bench");
  auto bench = runProcess({gtapBinary(), "bench", "--sim", "--iterations", "1", "--scope", "nope", "--profile",
                           dir + "/profile.gtap", capture_});
  EXPECT_EQ(bench.exitCode, 1) << bench.err;
  EXPECT_TRUE(entries(dir).empty());
  auto kept = runProcess(
      {gtapBinary(), "bench", "--sim", "--iterations", "1", "--profile", dir + "/profile.gtap", capture_});
  EXPECT_EQ(kept.exitCode, 0) << kept.err;
  EXPECT_EQ(entries(dir), std::set<std::string>{"profile.gtap"});
  auto info = runProcess({gtapBinary(), "info", dir + "/profile.gtap"});
  EXPECT_EQ(info.exitCode, 0) << info.err;
  EXPECT_TRUE(contains(info.out, "closed cleanly")) << info.out;
}

// Every verb: an unknown option, a missing argument and a bad value exit 2;
// --help and --version exit 0, and the help says what each status means.
TEST_F(OutputSafety, UsageErrorsExitTwoInEveryVerb) {
  const std::string& cap = capture_;
  std::vector<std::vector<std::string>> usage = {
      {},
      {"frobnicate"},
      {"--bogus"},
      {"run", "--bogus", "--", "true"},
      {"run", "--flush-ms", "0", "--", "true"},
      {"run", "--mode", "nothing", "--", "true"},
      {"run"},
      {"info", "--bogus", cap},
      {"info"},
      {"info", "--format", "xml", cap},
      {"api", "--bogus", cap},
      {"api"},
      {"api", "--format", "xml", cap},
      {"kernels", "--bogus", cap},
      {"kernels"},
      {"kernels", "--by", "colour", cap},
      {"memory", "--bogus", cap},
      {"memory"},
      {"memory", "--format", "xml", cap},
      {"summary", "--bogus", cap},
      {"summary"},
      {"summary", "--format", "xml", cap},
      {"explain", "--bogus", cap},
      {"explain"},
      {"executables", "--bogus", cap},
      {"executables"},
      {"executables", "--format", "xml", cap},
      {"export", "--bogus", "--format", "jsonl", "-o", "-", cap},
      {"export", "--format", "jsonl", cap},
      {"export", "--format", "xml", "-o", "-", cap},
      {"export", "--format", "sqlite", "-o", "-", cap},
      {"export", "--format", "jsonl", "-o", "-", cap, "--format"},
      {"dump", "--bogus", cap},
      {"dump"},
      {"dump", "--format", "xml", cap},
      {"replay", "--bogus", cap},
      {"replay"},
      {"replay", "--remap", "nothing", cap},
      {"bench", "--bogus", cap},
      {"bench"},
      {"bench", "--iterations", "0", cap},
      {"bench", "--format", "xml", cap},
  };
  for (const auto& args : usage) {
    std::vector<std::string> argv = {gtapBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string line;
    for (const auto& a : args) line += " " + a;
    auto r = runProcess(argv);
    EXPECT_EQ(r.exitCode, 2) << "gtap" << line << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << "gtap" << line;
  }
  for (std::vector<std::string> ok : {std::vector<std::string>{"--help"}, {"--version"}, {"export", "--help"},
                                      {"run", "--help"}, {"replay", "--help"}, {"bench", "--help"}}) {
    ok.insert(ok.begin(), gtapBinary());
    auto r = runProcess(ok);
    EXPECT_EQ(r.exitCode, 0) << ok[1] << r.err;
  }
  auto help = runProcess({gtapBinary(), "--help"});
  for (const char* said : {"Exit status: 0 success", "1 error", "2 usage", "3 replay --verify", "126", "127", "128+N"})
    EXPECT_TRUE(contains(help.out, said)) << said << "\n" << help.out;
  // Replaying on the simulated device runs the capture's code as host code.
  for (const char* verb : {"replay", "bench"}) {
    auto h = runProcess({gtapBinary(), verb, "--help"});
    EXPECT_TRUE(contains(h.out, "like running a program")) << h.out;
    EXPECT_TRUE(contains(h.out, "do not trust")) << h.out;
  }
  // An input that cannot be read is an error, not usage.
  auto missing = runProcess({gtapBinary(), "summary", "/nonexistent/cap.gtap"});
  EXPECT_EQ(missing.exitCode, 1) << missing.err;
  EXPECT_TRUE(contains(missing.err, "/nonexistent/cap.gtap")) << missing.err;
}

TEST_F(OutputSafety, RemapNeedsBothSides) {
  for (const char* verb : {"replay", "bench"}) {
    for (const std::string remap : {"/old=", "=/new", "foo", "="}) {
      auto r = runProcess({gtapBinary(), verb, "--sim", "--remap", remap, capture_});
      EXPECT_EQ(r.exitCode, 2) << verb << " --remap " << remap << "\n" << r.err;
      EXPECT_TRUE(contains(r.err, "--remap " + remap + ": expected OLD=NEW")) << r.err;
      EXPECT_FALSE(contains(r.out, "performed")) << "refused before replaying";
    }
  }
}

// A referenced file remapped to a FIFO (which has no writer) is refused, not
// waited for.
TEST_F(OutputSafety, RemapToAFifoIsRefusedWithoutWaiting) {
  std::string dir = freshDirectory("remap-fifo");
  std::string input = dir + "/weights.bin";
  ASSERT_EQ(runProcess({workload("ze_mapped_input"), "--make", input, "200000"}).exitCode, 0);
  auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "replay", "-o", dir + "/cap.gtap", "--",
                         workload("ze_mapped_input"), input});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  auto r = runProcess(
      {"timeout", "60", gtapBinary(), "replay", "--sim", "--remap", input + "=" + dir + "/fifo", dir + "/cap.gtap"});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_TRUE(contains(r.err, dir + "/fifo (captured as " + input + ") cannot be opened: not a regular file (a FIFO)")) << r.err;
}

// Each path is refused by its kind or size before anything is read from it
// (the FIFO has no writer, /dev/zero never ends); `timeout` bounds a gtap
// that would read them.
TEST_F(OutputSafety, SubstituteRefusesWhatCannotBeAModule) {
  std::string dir = freshDirectory("substitute");
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  fs::create_directory(dir + "/sub");
  {
    std::ofstream(dir + "/huge.bin").close();
    fs::resize_file(dir + "/huge.bin", (uint64_t{1} << 30) + 1);  // sparse: no disk used
  }
  std::vector<std::pair<std::string, std::string>> refused = {{"/dev/zero", ": not a regular file (a character device)"},
                                                              {dir + "/sub", ": not a regular file (a directory)"},
                                                              {dir + "/fifo", ": not a regular file (a FIFO)"},
                                                              {dir + "/huge.bin", " holds 1073741825 bytes"}};
  for (const char* verb : {"replay", "bench"}) {
    for (const auto& [path, reason] : refused) {
      auto r = runProcess({"timeout", "60", gtapBinary(), verb, "--sim", "--substitute", "all=" + path, capture_});
      EXPECT_EQ(r.exitCode, 2) << verb << " " << path << "\n" << r.err;
      EXPECT_TRUE(contains(r.err, path + reason)) << r.err;
      EXPECT_FALSE(contains(r.out, "performed"));
    }
  }
  EXPECT_EQ(fs::file_size(dir + "/huge.bin"), (uint64_t{1} << 30) + 1);
}

}  // namespace
}  // namespace gtap::test

namespace gtap::test {
namespace {

// A working directory the program cannot write (a read-only filesystem, as
// in a container): the default file goes to $TMPDIR, else /tmp, and gtap
// says where; a GTAP_OUTPUT given is used as given. The directory is made
// read-only by a bind mount in a private mount namespace (unshare).
TEST(OutputDirectory, AnUnwritableWorkingDirectorySendsTheDefaultFileToTmpdir) {
  std::string dir = freshDirectory("output-readonly-cwd");
  std::string ro = dir + "/ro", tmp = dir + "/tmp";
  fs::create_directories(ro);
  fs::create_directories(tmp);
  auto probe = runProcess({"unshare", "-rm", "sh", "-c", "mount --bind " + ro + " " + ro + " && mount -o remount,bind,ro " + ro});
  if (probe.exitCode != 0) GTEST_SKIP() << "no private mount namespace here (unshare -rm): " << probe.err;
  auto inReadOnly = [&](const std::string& command) {
    return runProcess({"unshare", "-rm", "sh", "-c",
                       "mount --bind " + ro + " " + ro + " && mount -o remount,bind,ro " + ro + " && cd " + ro +
                           " && " + command});
  };
  std::string run = gtapBinary() + " run --sim -m api -- " + workload("ze_vector_add") + " 1 64";
  auto withTmpdir = inReadOnly("TMPDIR=" + tmp + " " + run);
  ASSERT_EQ(withTmpdir.exitCode, 0) << withTmpdir.err;
  EXPECT_NE(withTmpdir.err.find("the working directory is not writable; writing " + tmp + "/gtap-"), std::string::npos)
      << withTmpdir.err;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(tmp)) {
    ++files;
    auto info = runProcess({gtapBinary(), "info", e.path().string()});
    EXPECT_EQ(info.exitCode, 0) << info.err;
  }
  EXPECT_EQ(files, 1u);
  EXPECT_TRUE(fs::is_empty(ro));
  // Without TMPDIR: /tmp, named on stderr, removed here.
  auto withoutTmpdir = inReadOnly("unset TMPDIR; " + run);
  ASSERT_EQ(withoutTmpdir.exitCode, 0) << withoutTmpdir.err;
  std::string said = "the working directory is not writable; writing ";
  size_t at = withoutTmpdir.err.find(said);
  ASSERT_NE(at, std::string::npos) << withoutTmpdir.err;
  std::string path = withoutTmpdir.err.substr(at + said.size());
  path = path.substr(0, path.find('\n'));
  EXPECT_EQ(path.rfind("/tmp/gtap-", 0), 0u) << path;
  EXPECT_TRUE(fs::is_regular_file(path)) << path;
  fs::remove(path);
  // A pattern given is the user's: in the read-only directory it fails (the
  // program runs on untouched) and nothing goes elsewhere.
  auto given = inReadOnly("TMPDIR=" + tmp + " " + gtapBinary() + " run --sim -m api -o mine.gtap -- " +
                          workload("ze_vector_add") + " 1 64");
  EXPECT_EQ(given.exitCode, 0) << given.err;
  EXPECT_NE(given.err.find("cannot create capture file"), std::string::npos) << given.err;
  size_t after = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp)) ++after;
  EXPECT_EQ(after, 1u);
}

}  // namespace
}  // namespace gtap::test
