// Output pattern expansion and MPI rank detection (interpose/core).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "output_path.h"

namespace {

using gtap::core::createOutputFile;
using gtap::core::detectRank;
using gtap::core::expandOutputPattern;
using gtap::core::RankInfo;

void clearRankVariables() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                        "PMIX_RANK", "MV2_COMM_WORLD_RANK", "PALS_RANKID", "FLUX_TASK_RANK",
                        "FLUX_JOB_SIZE", "SLURM_PROCID", "SLURM_NTASKS"})
    unsetenv(v);
}

TEST(OutputPath, Placeholders) {
  RankInfo rank;
  rank.rank = 3;
  setenv("GTAP_TEST_JOB", "job42", 1);
  std::string out, error;
  ASSERT_TRUE(expandOutputPattern("run-%p-r%r-%e{GTAP_TEST_JOB}-100%%.gtap", 1234, rank, 0, out, error)) << error;
  EXPECT_EQ(out, "run-1234-r3-job42-100%.gtap");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  ASSERT_TRUE(expandOutputPattern("%h.gtap", 1, rank, 0, out, error));
  EXPECT_EQ(out, std::string(host) + ".gtap");
  ASSERT_TRUE(expandOutputPattern("t-%t", 1, rank, 86400 * 365, out, error));
  EXPECT_EQ(out.size(), std::string("t-19710101-000000").size());
}

TEST(OutputPath, Errors) {
  RankInfo rank;
  std::string out, error;
  EXPECT_FALSE(expandOutputPattern("x-%q", 1, rank, 0, out, error));
  EXPECT_NE(error.find("%q"), std::string::npos);
  EXPECT_FALSE(expandOutputPattern("x-%", 1, rank, 0, out, error));
  EXPECT_FALSE(expandOutputPattern("x-%e", 1, rank, 0, out, error));
  EXPECT_FALSE(expandOutputPattern("x-%e{}", 1, rank, 0, out, error));
  EXPECT_FALSE(expandOutputPattern("", 1, rank, 0, out, error));
}

TEST(OutputPath, RankFromEachLauncher) {
  const std::pair<const char*, const char*> launchers[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"},
      {"PMIX_RANK", nullptr}, {"MV2_COMM_WORLD_RANK", nullptr}, {"PALS_RANKID", nullptr},
      {"FLUX_TASK_RANK", "FLUX_JOB_SIZE"}, {"SLURM_PROCID", "SLURM_NTASKS"}};
  for (const auto& [rankVar, sizeVar] : launchers) {
    clearRankVariables();
    setenv(rankVar, "5", 1);
    if (sizeVar) setenv(sizeVar, "8", 1);
    RankInfo r = detectRank();
    EXPECT_EQ(r.rank, 5) << rankVar;
    if (sizeVar) {
      EXPECT_EQ(r.worldSize, 8) << rankVar;
    }
    std::string out, error;
    ASSERT_TRUE(expandOutputPattern("out-%r", 1, r, 0, out, error));
    EXPECT_EQ(out, "out-5");
  }
  clearRankVariables();
  setenv("SLURM_PROCID", "2", 1);
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);  // the MPI library's own variable wins
  EXPECT_EQ(detectRank().rank, 1);
  clearRankVariables();
  EXPECT_EQ(detectRank().rank, -1);
  setenv("PMI_RANK", "not-a-number", 1);
  EXPECT_EQ(detectRank().rank, -1);
  clearRankVariables();
}

// A fresh empty directory of this test's own.
std::string freshDirectory(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-unit-" + std::to_string(getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

bool isEmptyDirectory(const std::string& dir) { return std::filesystem::is_empty(dir); }

unsigned modeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Restores the umask when a test ends, however it ends.
struct UmaskScope {
  explicit UmaskScope(mode_t m) : saved(umask(m)) {}
  ~UmaskScope() { umask(saved); }
  mode_t saved;
};

// Directories gtap makes are its own, even when the umask would let anyone in.
TEST(OutputFile, NewDirectoriesAre0700UnderUmask000) {
  std::string base = freshDirectory("mode");
  UmaskScope scope(0);
  std::string path = base + "/a/b/c/cap.gtap", chosen, error;
  int fd = createOutputFile(path, chosen, error);
  ASSERT_GE(fd, 0) << error;
  close(fd);
  EXPECT_EQ(chosen, path);
  EXPECT_EQ(modeOf(base + "/a"), 0700u);
  EXPECT_EQ(modeOf(base + "/a/b"), 0700u);
  EXPECT_EQ(modeOf(base + "/a/b/c"), 0700u);
  EXPECT_EQ(modeOf(path), 0600u);
}

// A path the system cannot name fails before anything exists, instead of
// after thousands of nested directories.
TEST(OutputFile, TooLongPathCreatesNothing) {
  std::string base = freshDirectory("too-long");
  std::string path = base;
  while (path.size() < 6000) path += "/d";
  path += "/cap.gtap";
  std::string chosen, error;
  EXPECT_EQ(createOutputFile(path, chosen, error), -1);
  EXPECT_NE(error.find("limit is 4095"), std::string::npos) << error;
  EXPECT_TRUE(isEmptyDirectory(base));
}

TEST(OutputFile, TooLongNameDeepDownCreatesNothing) {
  std::string base = freshDirectory("long-name");
  std::string path = base + "/a/b/" + std::string(300, 'x') + "/cap.gtap", chosen, error;
  EXPECT_EQ(createOutputFile(path, chosen, error), -1);
  EXPECT_NE(error.find("is 300 bytes long; the system's limit is 255"), std::string::npos) << error;
  EXPECT_TRUE(isEmptyDirectory(base));
}

// The error names the component that is in the way, not the whole path.
TEST(OutputFile, FileInTheWayIsNamed) {
  std::string base = freshDirectory("file-in-the-way");
  std::ofstream(base + "/blocker") << "a file where a directory would have to be";
  std::string path = base + "/blocker/x/y/cap.gtap", chosen, error;
  EXPECT_EQ(createOutputFile(path, chosen, error), -1);
  EXPECT_EQ(error, base + "/blocker: exists and is not a directory");
  EXPECT_EQ(std::filesystem::directory_iterator(base)->path().filename(), "blocker");
}

// Creation that fails part-way (here: out of descriptors once the first new
// directory exists) removes the directories it made.
TEST(OutputFile, FailurePartWayRemovesWhatWasCreated) {
  std::string base = freshDirectory("part-way");
  // Exactly two descriptors left: enough to walk to the deepest existing
  // directory, not to enter the first new one.
  int firstFree = -1, secondFree = -1;
  for (int fd = 0; secondFree < 0; ++fd)
    if (fcntl(fd, F_GETFD) < 0) (firstFree < 0 ? firstFree : secondFree) = fd;
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(secondFree + 1);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::string path = base + "/a/b/cap.gtap", chosen, error;
  int fd = createOutputFile(path, chosen, error);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(error, base + "/a: Too many open files") << error;
  EXPECT_TRUE(isEmptyDirectory(base));
}

}  // namespace
