// gtap export --format=otf2, read back with OTF2's own otf2-print: the
// locations, location groups, regions and events of a two-rank capture (a
// Level Zero rank and an HSA rank) are what the captures hold.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "process.h"

namespace gtap::test {
namespace {

ProcessResult otf2Print(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {GTAP_TEST_OTF2_PRINT};
  argv.insert(argv.end(), args.begin(), args.end());
  return runProcess(argv);
}

std::vector<std::vector<std::string>> csvRows(const std::string& text) {
  // The tables read here hold no quoted fields.
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> row;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) row.push_back(f);
    if (!line.empty() && line.back() == ',') row.push_back("");
    rows.push_back(row);
  }
  return rows;
}

struct Expected {
  std::map<std::string, int> callsPerProcess;    // finished API calls, by process label
  std::map<std::string, int> timedOpsPerProcess;  // timed device operations
  std::set<std::string> functions, kernels;
  std::map<std::string, std::set<std::string>> queuesPerProcess;
  std::map<std::string, int> threadsPerProcess;
};

// What the CSV export says the captures hold.
Expected expectedFrom(const std::vector<std::string>& files) {
  auto table = [&](const char* name) {
    std::vector<std::string> args = {"export", "--format=csv", "-o", "-", "--table", name};
    args.insert(args.end(), files.begin(), files.end());
    auto r = runGtap(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    auto rows = csvRows(r.out);
    if (!rows.empty()) rows.erase(rows.begin());
    return rows;
  };
  std::map<std::string, std::string> labels, strings;
  for (const auto& r : table("processes")) labels[r[0]] = r[3];
  for (const auto& r : table("strings")) strings[r[0]] = r[1];
  Expected e;
  for (const auto& r : table("threads")) ++e.threadsPerProcess[labels[r[1]]];
  for (const auto& r : table("api_calls")) {
    if (r[5].empty()) continue;  // still open at the end
    ++e.callsPerProcess[labels[r[1]]];
    e.functions.insert(strings[r[3]]);
  }
  for (const auto& r : table("device_ops")) {
    if (r[13].empty()) continue;  // untimed
    ++e.timedOpsPerProcess[labels[r[1]]];
    e.queuesPerProcess[labels[r[1]]].insert(strings[r[4]]);
    if (r[2] == "kernel") e.kernels.insert(strings[r[3]]);
  }
  return e;
}

TEST(Otf2Export, TwoRanksAreOneTraceOtf2PrintReads) {
  std::string dir = freshDirectory("otf2-export");
  std::string ze = dir + "/rank-0.gtap", hsa = dir + "/rank-1.gtap", out = dir + "/trace";
  ASSERT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels", "-o", ze, "--", workload("ze_pipeline")},
                    {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}).exitCode, 0);
  ASSERT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels", "-o", hsa, "--", workload("hsa_pipeline")},
                    {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}).exitCode, 0);
  auto exported = runGtap({"export", "--format=otf2", "-o", out, ze, hsa});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  EXPECT_NE(exported.err.find("wrote " + out + "/traces.otf2 (2 processes"), std::string::npos) << exported.err;
  Expected expected = expectedFrom({ze, hsa});
  ASSERT_EQ(expected.callsPerProcess.size(), 2u);
  ASSERT_FALSE(expected.kernels.empty());

  auto defs = otf2Print({"-G", out + "/traces.otf2"});
  ASSERT_EQ(defs.exitCode, 0) << defs.err;
  // LOCATION_GROUP <id>  Name: "rank 0 (pid N)" <s>, Type: PROCESS, ...
  std::map<std::string, std::string> groupNames;  // id -> name
  std::map<std::string, std::string> groupOfLocation, locationType;
  std::map<std::string, uint64_t> declaredEvents;
  std::map<std::string, std::set<std::string>> streamNames;  // group name -> accelerator stream names
  std::map<std::string, int> threadLocations;
  std::set<std::string> regions;
  std::regex group(R"re(^LOCATION_GROUP\s+(\d+)\s+Name: "([^"]*)" <\d+>, Type: PROCESS)re");
  std::regex location(
      R"re(^LOCATION\s+(\d+)\s+Name: "([^"]*)" <\d+>, Type: (\w+), # Events: (\d+), Group: "([^"]*)" <\d+>)re");
  std::regex region(R"re(^REGION\s+\d+\s+Name: "([^"]*)")re");
  std::istringstream lines(defs.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, group)) groupNames[m[1]] = m[2];
    if (std::regex_search(line, m, location)) {
      groupOfLocation[m[1]] = m[5];
      locationType[m[1]] = m[3];
      declaredEvents[m[1]] = std::stoull(m[4]);
      if (m[3] == "ACCELERATOR_STREAM") streamNames[m[5]].insert(m[2]);
      else if (m[3] == "CPU_THREAD") ++threadLocations[m[5]];
    }
    if (std::regex_search(line, m, region)) regions.insert(m[1]);
  }
  ASSERT_EQ(groupNames.size(), 2u) << defs.out;
  std::set<std::string> names;
  for (const auto& [id, name] : groupNames) names.insert(name);
  for (const auto& [label, n] : expected.callsPerProcess) EXPECT_TRUE(names.count(label)) << label;
  EXPECT_TRUE(std::regex_search(*names.begin(), std::regex("^rank 0 \\(pid \\d+\\)$"))) << *names.begin();
  EXPECT_EQ(streamNames, expected.queuesPerProcess);
  EXPECT_EQ(threadLocations, expected.threadsPerProcess);
  for (const auto& f : expected.functions) EXPECT_TRUE(regions.count(f)) << f;
  for (const auto& k : expected.kernels) EXPECT_TRUE(regions.count(k)) << k;

  auto events = otf2Print({out + "/traces.otf2"});
  ASSERT_EQ(events.exitCode, 0) << events.err;
  std::map<std::string, uint64_t> printed;  // per location
  std::map<std::string, int> enters, leaves;  // per group
  std::map<std::string, int> threadEnters, streamEnters;
  std::set<uint64_t> launches, launched;
  std::regex event(R"re(^(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: "([^"]*)")re");
  std::regex attribute(R"re(ADDITIONAL ATTRIBUTES: \("gtap (launch|launched by)" <\d+>; UINT64; (\d+)\))re");
  std::istringstream evts(events.out);
  for (std::string line; std::getline(evts, line);) {
    std::smatch m;
    if (std::regex_search(line, m, event)) {
      std::string loc = m[2];
      ++printed[loc];
      const std::string& g = groupOfLocation[loc];
      if (m[1] == "ENTER") {
        ++enters[g];
        ++(locationType[loc] == "CPU_THREAD" ? threadEnters : streamEnters)[g];
      } else {
        ++leaves[g];
      }
    } else if (std::regex_search(line, m, attribute)) {
      (m[1] == "launch" ? launches : launched).insert(std::stoull(m[2]));
    }
  }
  EXPECT_EQ(printed, declaredEvents);
  EXPECT_EQ(enters, leaves);
  EXPECT_EQ(threadEnters, expected.callsPerProcess);
  EXPECT_EQ(streamEnters, expected.timedOpsPerProcess);
  // Every device operation's launching call carries the same id.
  ASSERT_FALSE(launched.empty());
  for (uint64_t id : launched) EXPECT_TRUE(launches.count(id)) << id;
}

// The export streams: the same archive whatever -j is; a target that holds
// something else is never replaced, an archive only with --force.
TEST(Otf2Export, SameArchiveAnyJobsAndNothingReplacedUnasked) {
  std::string dir = freshDirectory("otf2-export-jobs");
  std::vector<std::string> files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(dir + "/r" + std::to_string(i) + ".gtap");
    ASSERT_EQ(runGtap({"run", "--sim", "-q", "-m", "api,kernels", "-o", files.back(), "--", workload("ze_pipeline")},
                      {{"PMI_RANK", std::to_string(i)}, {"PMI_SIZE", "3"}}).exitCode, 0);
  }
  auto print = [&](const std::string& out) {
    auto r = otf2Print({out + "/traces.otf2"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    auto g = otf2Print({"-G", out + "/traces.otf2"});
    return r.out + g.out;
  };
  std::vector<std::string> one = {"-j", "1", "export", "--format=otf2", "-o", dir + "/one"};
  std::vector<std::string> two = {"-j", "2", "export", "--format=otf2", "-o", dir + "/two"};
  one.insert(one.end(), files.begin(), files.end());
  two.insert(two.end(), files.begin(), files.end());
  ASSERT_EQ(runGtap(one).exitCode, 0);
  ASSERT_EQ(runGtap(two).exitCode, 0);
  std::string a = print(dir + "/one");
  EXPECT_EQ(a, print(dir + "/two"));
  EXPECT_NE(a.find("rank 2 (pid"), std::string::npos);

  // An archive there: refused without --force, replaced with it.
  auto again = runGtap({"export", "--format=otf2", "-o", dir + "/one", files[0]});
  EXPECT_EQ(again.exitCode, 2);
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  EXPECT_EQ(print(dir + "/one"), a);
  ASSERT_EQ(runGtap({"export", "--format=otf2", "--force", "-o", dir + "/one", files[0]}).exitCode, 0);
  EXPECT_EQ(print(dir + "/one").find("rank 2 (pid"), std::string::npos);
  // A folder of other things, a file and a link: never.
  std::filesystem::create_directory(dir + "/mine");
  std::ofstream(dir + "/mine/notes.txt") << "keep\n";
  auto other = runGtap({"export", "--format=otf2", "--force", "-o", dir + "/mine", files[0]});
  EXPECT_EQ(other.exitCode, 2);
  EXPECT_TRUE(std::filesystem::exists(dir + "/mine/notes.txt"));
  std::filesystem::create_directory_symlink(dir + "/mine", dir + "/link");
  EXPECT_EQ(runGtap({"export", "--format=otf2", "--force", "-o", dir + "/link", files[0]}).exitCode, 2);
  EXPECT_EQ(runGtap({"export", "--format=otf2", "-o", files[1], files[0]}).exitCode, 2);
  EXPECT_EQ(runGtap({"export", "--format=otf2", "-o", "-", files[0]}).exitCode, 2);
  // Nothing left beside the targets.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".gtap-"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace gtap::test
