// Output pattern expansion and MPI rank detection (interpose/core).
#include <gtest/gtest.h>
#include <stdlib.h>

#include "output_path.h"

namespace {

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

}  // namespace
