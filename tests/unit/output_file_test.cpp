// OutputFile on real files, links, devices and FIFOs: what it refuses, what it
// leaves behind on failure (nothing), and that a name swapped under it cannot
// make it write anywhere else.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "gtap/readers/output_file.h"

namespace gtap::readers {
namespace {

namespace fs = std::filesystem;
using Kind = OutputError::Kind;

std::string freshDir(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("gtap-output-file-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::set<std::string> entries(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// The kind of OutputError `f` throws; fails the test when it throws none.
template <typename F>
Kind thrownKind(F f, std::string* message = nullptr) {
  try {
    f();
  } catch (const OutputError& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no OutputError";
  return Kind::io;
}

TEST(OutputFile, WritesANewFileInPlaceAndLeavesNothingElse) {
  std::string dir = freshDir("new");
  std::string target = dir + "/out.json";
  {
    OutputFile out(target, false);
    struct stat st {};
    ASSERT_EQ(lstat(out.temporaryPath().c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u) << "the temporary file is private while it is written";
    EXPECT_EQ(fs::path(out.temporaryPath()).parent_path(), fs::path(dir));
    EXPECT_FALSE(fs::exists(target)) << "nothing at the target until commit";
    out.stream() << "hello";
    out.commit();
  }
  EXPECT_EQ(slurp(target), "hello");
  EXPECT_EQ(entries(dir), std::set<std::string>{"out.json"});
  mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(fs::status(target).permissions(), static_cast<fs::perms>(0666 & ~mask));
}

TEST(OutputFile, TemporaryNamesAreUnpredictable) {
  std::string dir = freshDir("names");
  OutputFile a(dir + "/out", false);
  OutputFile b(dir + "/out", false);
  EXPECT_NE(a.temporaryPath(), b.temporaryPath());
  EXPECT_EQ(fs::path(a.temporaryPath()).filename().string().find(std::to_string(getpid())), std::string::npos);
}

TEST(OutputFile, AnExistingFileIsReplacedOnlyWhenAllowed) {
  std::string dir = freshDir("existing");
  std::string target = dir + "/out";
  put(target, "before");
  std::string message;
  EXPECT_EQ(thrownKind([&] { OutputFile out(target, false); }, &message), Kind::exists);
  EXPECT_NE(message.find(target), std::string::npos) << message;
  EXPECT_EQ(slurp(target), "before");
  EXPECT_EQ(entries(dir), std::set<std::string>{"out"});

  OutputFile out(target, true);
  out.stream() << "after";
  out.commit();
  EXPECT_EQ(slurp(target), "after");
  EXPECT_EQ(entries(dir), std::set<std::string>{"out"});
}

TEST(OutputFile, ASymbolicLinkIsNeverWrittenThrough) {
  std::string dir = freshDir("symlink");
  std::string victim = dir + "/victim";
  put(victim, "precious");
  fs::create_symlink(victim, dir + "/link");
  fs::create_symlink(dir + "/nowhere", dir + "/dangling");
  for (bool replace : {false, true}) {
    std::string message;
    EXPECT_EQ(thrownKind([&] { OutputFile out(dir + "/link", replace); }, &message), Kind::symlink);
    EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
    EXPECT_EQ(thrownKind([&] { OutputFile out(dir + "/dangling", replace); }), Kind::symlink);
  }
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_FALSE(fs::exists(dir + "/nowhere"));
  EXPECT_EQ(entries(dir), (std::set<std::string>{"victim", "link", "dangling"}));
}

TEST(OutputFile, DevicesDirectoriesAndFifosAreNeverReplaced) {
  std::string dir = freshDir("special");
  fs::create_directory(dir + "/sub");
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  for (bool replace : {false, true}) {
    std::string message;
    EXPECT_EQ(thrownKind([&] { OutputFile out("/dev/null", replace); }, &message), Kind::notRegular);
    EXPECT_NE(message.find("character device"), std::string::npos) << message;
    EXPECT_EQ(thrownKind([&] { OutputFile out(dir + "/sub", replace); }), Kind::notRegular);
    EXPECT_EQ(thrownKind([&] { OutputFile out(dir + "/sub/", replace); }), Kind::notRegular);
    EXPECT_EQ(thrownKind([&] { OutputFile out(dir + "/fifo", replace); }), Kind::notRegular);
    EXPECT_EQ(thrownKind([&] { OutputFile::checkTarget("/dev/full", replace); }), Kind::notRegular);
  }
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_TRUE(fs::is_directory(dir + "/sub"));
  EXPECT_TRUE(fs::is_fifo(dir + "/fifo"));
  EXPECT_EQ(entries(dir), (std::set<std::string>{"sub", "fifo"}));
}

TEST(OutputFile, AMissingDirectoryIsAnError) {
  std::string dir = freshDir("missing");
  std::string message;
  EXPECT_EQ(thrownKind([&] { OutputFile out(dir + "/no/out", false); }, &message), Kind::io);
  EXPECT_NE(message.find(dir + "/no"), std::string::npos) << message;
}

TEST(OutputFile, NothingIsLeftWhenNotCommitted) {
  std::string dir = freshDir("abandoned");
  put(dir + "/out", "before");
  try {
    OutputFile out(dir + "/out", true);
    out.stream() << "half";
    throw std::runtime_error("the input was bad");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(slurp(dir + "/out"), "before");
  EXPECT_EQ(entries(dir), std::set<std::string>{"out"});
}

// What appears at the target while the file is written is checked again at
// commit: a file (when not replacing), or a link even when replacing.
TEST(OutputFile, TheTargetIsCheckedAgainAtCommit) {
  std::string dir = freshDir("raced");
  {
    OutputFile out(dir + "/out", false);
    out.stream() << "mine";
    put(dir + "/out", "theirs");
    EXPECT_EQ(thrownKind([&] { out.commit(); }), Kind::exists);
  }
  EXPECT_EQ(slurp(dir + "/out"), "theirs");
  put(dir + "/victim", "precious");
  {
    OutputFile out(dir + "/link", true);
    out.stream() << "mine";
    fs::create_symlink(dir + "/victim", dir + "/link");
    EXPECT_EQ(thrownKind([&] { out.commit(); }), Kind::symlink);
  }
  EXPECT_EQ(slurp(dir + "/victim"), "precious");
  EXPECT_TRUE(fs::is_symlink(dir + "/link"));
  EXPECT_EQ(entries(dir), (std::set<std::string>{"out", "victim", "link"}));
}

// A write that fails (the file size limit here) is reported at commit with
// the system's reason, and the temporary file is removed.
TEST(OutputFile, AFailedWriteIsReportedAndRemoved) {
  std::string dir = freshDir("full");
  put(dir + "/out", "before");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    try {
      OutputFile out(dir + "/out", true);
      out.stream() << std::string(1 << 20, 'x');
      out.commit();
    } catch (const OutputError& e) {
      _exit(std::string(e.what()).find("File too large") != std::string::npos ? 0 : 3);
    }
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(slurp(dir + "/out"), "before");
  EXPECT_EQ(entries(dir), std::set<std::string>{"out"});
}

// SIGTERM or SIGINT while writing: the process still dies of the signal, and
// the temporary file goes with it.
TEST(OutputFile, ASignalWhileWritingRemovesTheTemporaryFile) {
  for (int sig : {SIGTERM, SIGINT}) {
    std::string dir = freshDir("signal" + std::to_string(sig));
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      OutputFile out(dir + "/out", false);
      out.stream() << "half";
      out.stream().flush();
      raise(sig);
      _exit(5);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << status;
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(entries(dir).empty()) << *entries(dir).begin();
  }
}

// For a writer that opens by name: the check finds the very file created, and
// not one put in its place.
TEST(OutputFile, OpenedElsewhereMeansTheSameFile) {
  std::string dir = freshDir("byname");
  OutputFile out(dir + "/db", false);
  EXPECT_EQ(thrownKind([&] { out.checkOpenedElsewhere(); }), Kind::io) << "nobody opened it yet";
  int fd = open(out.temporaryPath().c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  out.checkOpenedElsewhere();
  close(fd);

  OutputFile swapped(dir + "/db2", false);
  std::string name = swapped.temporaryPath();
  ASSERT_EQ(unlink(name.c_str()), 0);
  put(name, "");
  fd = open(name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(thrownKind([&] { swapped.checkOpenedElsewhere(); }), Kind::io);
  close(fd);
}

}  // namespace
}  // namespace gtap::readers
