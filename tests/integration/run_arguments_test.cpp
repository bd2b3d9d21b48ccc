// How `gtap run` tells its options from the program's arguments: the first
// argument that is none of its options is the program's name, and it and
// everything after it (options, "--") are the program's; a "--" before it
// ends gtap's options.
#include <gtest/gtest.h>

#include "process.h"

namespace gtap::test {
namespace {

ProcessResult gtapRun(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {gtapBinary(), "run", "-q", "-o", freshDirectory("run-arguments") + "/cap-%p.gtap"};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv);
}

TEST(RunArguments, EverythingAfterTheProgramsNameIsTheProgramsOwn) {
  auto r = gtapRun({"/bin/echo", "-m", "x", "--output", "y", "--", "-q", "--help"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "-m x --output y -- -q --help\n");
}

TEST(RunArguments, ASeparatorEndsGtapsOptionsAndOnlyTheFirstIsGtaps) {
  auto r = gtapRun({"-m", "api", "--", "/bin/echo", "a", "--", "b"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "a -- b\n");
}

TEST(RunArguments, OptionsWithValuesBeforeTheProgramAreGtaps) {
  // Each option's value, in both spellings, is taken as the option's and not
  // as the program's name.
  auto r = gtapRun({"--mode", "api,replay", "--dispatch-range", "0:3", "--kernel-filter=vec*", "--scope", "first=0:1",
                    "--scope-signal", "SIGUSR2", "--stack-depth", "8", "--flush-ms=20", "--buffer-mb", "4",
                    "--file-policy", "reference", "--file-validation", "identity", "/bin/echo", "ran"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
}

TEST(RunArguments, AnUnknownOptionBeforeTheProgramIsAUsageError) {
  auto r = gtapRun({"--no-such-option", "/bin/echo", "ran"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << r.err;
}

TEST(RunArguments, NoProgramIsAUsageError) {
  for (auto args : {std::vector<std::string>{}, std::vector<std::string>{"--"}, std::vector<std::string>{"-m", "api"}}) {
    auto r = gtapRun(args);
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("no program given"), std::string::npos) << r.err;
  }
}

TEST(RunArguments, AProgramNamedLikeAnOptionGoesAfterTheSeparator) {
  auto r = gtapRun({"--", "-no-such-program"});
  EXPECT_EQ(r.exitCode, 127);
  EXPECT_NE(r.err.find("'-no-such-program'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gtap::test
