// Mode samples on the simulated Level Zero device: a kernel whose time is on
// one source line (hot_loop in tests/workloads/ze/workload_kernels.c, the
// line marked GTAP_HOT_LINE, launched by ze_hot_line from two call paths)
// gets most of its samples on that line; gtap flame splits each launch's
// device time over the sampled lines (the totals are the capture's own
// kernel times); gtap kernels --instructions lists them; and what has no
// samples keeps the kernel as its leaf, said once.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "process.h"
#include "sqlite_query.h"

namespace gtap::test {
namespace {

// The line of workload_kernels.c holding the hot loop.
int hotLine() {
  std::ifstream in(std::string(GTAP_TEST_SOURCE_DIR) + "/tests/workloads/ze/workload_kernels.c");
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find("for (") != std::string::npos && line.find("GTAP_HOT_LINE") != std::string::npos) return n;
  }
  return 0;
}

std::map<std::string, uint64_t> foldedLines(const std::string& text) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return out;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class Samples : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(freshDirectory("samples"));
    auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,stacks,samples", "--sample-period-us", "50",
                           "-o", sampled(), "--", workload("ze_hot_line"), "4000000", "2"});
    ASSERT_EQ(run.exitCode, 0) << run.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string sampled() { return *dir_ + "/hot.gtap"; }

  static ProcessResult gtap(std::vector<std::string> args) {
    args.insert(args.begin(), gtapBinary());
    return runProcess(args);
  }

  // The device time of every hot_loop launch, by the capture's own records.
  static uint64_t kernelNs(const std::string& path, uint64_t* launches = nullptr) {
    readers::Capture c(path);
    auto work = readers::loadDeviceWork(c);
    uint64_t ns = 0, n = 0;
    for (const auto& op : work.ops) {
      if (op.kind != schema::DeviceOpKind::KERNEL) continue;
      EXPECT_TRUE(op.timed);
      EXPECT_EQ(op.name, "hot_loop");
      ns += uint64_t(op.durationNs());
      ++n;
    }
    if (launches) *launches = n;
    return ns;
  }

  static std::string* dir_;
};
std::string* Samples::dir_ = nullptr;

TEST_F(Samples, TheHotLineHoldsMostSamples) {
  const int line = hotLine();
  ASSERT_GT(line, 0);
  auto r = gtap({"kernels", "--instructions", "hot_*", "--format", "jsonl", sampled()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream in(r.out);
  std::vector<nlohmann::json> rows;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) rows.push_back(nlohmann::json::parse(l));
  ASSERT_FALSE(rows.empty()) << r.out << r.err;
  uint64_t samples = 0, active = 0;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("kernel"), "hot_loop");
    samples += row.at("samples").get<uint64_t>();
    active += row.at("Active").get<uint64_t>();  // the simulated device's only reason
  }
  EXPECT_EQ(active, samples);
  // A few tens of ms of kernel at 50 us: hundreds of samples, the most on the loop's line.
  EXPECT_GE(samples, 100u) << r.out;
  const auto& top = rows.front();
  std::string where = "tests/workloads/ze/workload_kernels.c:" + std::to_string(line);
  std::string location = top.at("location");
  EXPECT_EQ(location.size() >= where.size() ? location.substr(location.size() - where.size()) : location, where)
      << r.out;
  EXPECT_EQ(top.at("instruction"), "workload_kernels.c:" + std::to_string(line));
  EXPECT_GE(double(top.at("samples").get<uint64_t>()), 0.8 * double(samples)) << r.out;

  // The summary names each kernel's hottest line.
  auto summary = gtap({"summary", sampled()});
  ASSERT_EQ(summary.exitCode, 0) << summary.err;
  EXPECT_NE(summary.out.find("hottest line"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("workload_kernels.c:" + std::to_string(line) + " ("), std::string::npos) << summary.out;
  // The text table says what it shows.
  auto text = gtap({"kernels", "--instructions", "hot_loop", sampled()});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_NE(text.out.find("Instruction samples of kernels matching hot_loop: " + std::to_string(samples) +
                          " samples over 4 launches"),
            std::string::npos)
      << text.out;
}

// The record exports carry the same samples: a JSON Lines row per sampled
// instruction, an SQLite row per instruction and reason.
TEST_F(Samples, RecordExportsCarryTheSamples) {
  const int line = hotLine();
  auto k = gtap({"kernels", "--instructions", "hot_loop", "--format", "jsonl", sampled()});
  ASSERT_EQ(k.exitCode, 0) << k.err;
  uint64_t samples = 0;
  std::istringstream rows(k.out);
  for (std::string l; std::getline(rows, l);)
    if (!l.empty()) samples += nlohmann::json::parse(l).at("samples").get<uint64_t>();
  ASSERT_GT(samples, 0u);

  auto j = gtap({"export", "--format", "jsonl", "-o", "-", sampled()});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  uint64_t exported = 0, onLine = 0;
  std::istringstream in(j.out);
  for (std::string l; std::getline(in, l);) {
    auto row = nlohmann::json::parse(l);
    if (row.at("type") != "instruction") continue;
    EXPECT_EQ(row.at("kernel"), "hot_loop");
    uint64_t n = row.at("samples").get<uint64_t>();
    EXPECT_EQ(n, row.at("counts").at("Active").get<uint64_t>()) << l;
    exported += n;
    if (row.contains("line") && row.at("line") == line) onLine += n;
  }
  EXPECT_EQ(exported, samples);
  EXPECT_GE(double(onLine), 0.8 * double(samples));

  std::string db = *dir_ + "/hot.sqlite";
  auto q = gtap({"export", "--format", "sqlite", "-o", db, sampled()});
  ASSERT_EQ(q.exitCode, 0) << q.err;
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(queryInt(handle, "SELECT SUM(count) FROM instruction_samples WHERE kernel = 'hot_loop' AND reason = 'Active'"),
            static_cast<int64_t>(samples));
  EXPECT_GE(double(queryInt(handle, "SELECT SUM(count) FROM instruction_samples WHERE line = " + std::to_string(line))),
            0.8 * double(samples));
  sqlite3_close(handle);
}

TEST_F(Samples, FlameSplitsEachLaunchOverItsSampledLines) {
  const int line = hotLine();
  uint64_t launches = 0;
  const uint64_t deviceNs = kernelNs(sampled(), &launches);
  ASSERT_EQ(launches, 4u);
  for (const char* weight : {"device", "count"}) {
    SCOPED_TRACE(weight);
    auto r = gtap({"flame", sampled(), "-o", "-", std::string("--weight=") + weight});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err.find("no instruction samples"), std::string::npos) << r.err;
    uint64_t total = 0, hot = 0;
    std::map<std::string, uint64_t> byPath;
    for (const auto& [path, value] : foldedLines(r.out)) {
      auto at = path.find(";hot_loop [kernel];");
      ASSERT_NE(at, std::string::npos) << path;  // every leaf is below the kernel
      std::string leaf = path.substr(at + std::string(";hot_loop [kernel];").size());
      EXPECT_EQ(leaf.find(';'), std::string::npos) << path;
      total += value;
      if (leaf == "workload_kernels.c:" + std::to_string(line)) hot += value;
      byPath[path.substr(0, at)] += value;
    }
    // The split keeps each launch's whole weight.
    EXPECT_EQ(total, std::string(weight) == "device" ? deviceNs : launches);
    EXPECT_GE(double(hot), 0.8 * double(total)) << r.out;
    // Both call paths, each above its own lines.
    ASSERT_EQ(byPath.size(), 2u) << r.out;
    for (const auto& [path, value] : byPath) {
      EXPECT_TRUE(path.rfind("main;shortRuns(", 0) == 0 || path.rfind("main;longRuns(", 0) == 0) << path;
      if (std::string(weight) == "count") {
        EXPECT_EQ(value, 2u) << path;
      }
    }
  }
  // Host time in the API call is not the kernel's: no instruction level.
  auto api = gtap({"flame", sampled(), "-o", "-", "--weight=api"});
  ASSERT_EQ(api.exitCode, 0) << api.err;
  for (const auto& [path, value] : foldedLines(api.out)) {
    EXPECT_GE(path.size(), std::string("hot_loop [kernel]").size());
    EXPECT_EQ(path.substr(path.size() - std::string("hot_loop [kernel]").size()), "hot_loop [kernel]") << path;
  }
  // The picture colours them as kernel instructions.
  std::string svg = *dir_ + "/hot.svg";
  auto pic = gtap({"flame", sampled(), "-o", svg});
  ASSERT_EQ(pic.exitCode, 0) << pic.err;
  std::ifstream in(svg);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("workload_kernels.c:" + std::to_string(line)), std::string::npos);
  EXPECT_NE(text.find("kernel instruction"), std::string::npos);
}

TEST_F(Samples, WithoutSamplesTheKernelIsTheLeafSaidOnce) {
  std::string plain = *dir_ + "/plain.gtap";
  auto run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels,stacks", "-o", plain, "--",
                         workload("ze_hot_line"), "10000", "1"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  // Two files, one note.
  auto r = gtap({"flame", plain, plain, "-o", "-", "--weight=count"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(occurrences(r.err, "no instruction samples"), 1u) << r.err;
  for (const auto& [path, value] : foldedLines(r.out))
    EXPECT_EQ(path.substr(path.size() - std::string("hot_loop [kernel]").size()), "hot_loop [kernel]") << path;
  auto plainSummary = gtap({"summary", plain});
  EXPECT_EQ(plainSummary.out.find("hottest line"), std::string::npos) << plainSummary.out;
  auto k = gtap({"kernels", "--instructions", "hot_loop", plain});
  EXPECT_EQ(k.exitCode, 0) << k.err;
  EXPECT_NE(k.err.find("no instruction samples in " + plain), std::string::npos) << k.err;

  // HSA has no instruction sampling: recorded with mode samples, its kernels
  // stay leaves and the graph says why, once.
  std::string hsa = *dir_ + "/hsa.gtap";
  run = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "api,stacks,samples", "-o", hsa, "--",
                    workload("hsa_vector_add")},
                   {{"LD_LIBRARY_PATH", std::string(GTAP_TEST_SIM_DIR) + "/hsa"}});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  r = gtap({"flame", hsa, "-o", "-", "--weight=count"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(occurrences(r.err, "kernel launches have no instruction samples (HSA"), 1u) << r.err;
  EXPECT_NE(r.out.find("[kernel] "), std::string::npos) << r.out;
}

TEST_F(Samples, InstructionsTakeNoGrouping) {
  for (std::vector<std::string> extra : {std::vector<std::string>{"--by=shape"}, {"--per-process"}}) {
    std::vector<std::string> args = {"kernels", "--instructions", "hot_loop", sampled()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = gtap(args);
    EXPECT_EQ(r.exitCode, 2) << extra[0];
    EXPECT_NE(r.err.find("takes no --by or --per-process"), std::string::npos) << r.err;
  }
}

// Intel's driver offers metric groups only with ZET_ENABLE_METRICS=1 at
// zeInit: mode samples sets it for the program, unless the user set it.
TEST_F(Samples, MetricsAreEnabledForTheDriver) {
  auto seen = [&](const char* mode, EnvChanges env) {
    auto r = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", mode, "-o", *dir_ + "/env-%p.gtap", "--",
                         "/bin/sh", "-c", "echo \"[${ZET_ENABLE_METRICS-unset}]\""},
                        env);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(seen("api,samples", {}), "[1]\n");
  EXPECT_EQ(seen("api,kernels", {}), "[unset]\n");
  EXPECT_EQ(seen("samples", {{"ZET_ENABLE_METRICS", "0"}}), "[0]\n");
}

TEST_F(Samples, BadPeriodsAreRefused) {
  for (const char* period : {"0", "1000001", "x"}) {
    auto r = runProcess({gtapBinary(), "run", "--sim", "-q", "-m", "samples", "--sample-period-us", period, "--",
                         workload("ze_hot_line"), "10", "1"});
    EXPECT_NE(r.exitCode, 0) << period;
    EXPECT_NE(r.err.find("--sample-period-us"), std::string::npos) << r.err;
  }
}

// gtap counters --list asks the runtimes themselves: every metric group and
// metric the simulated Level Zero device offers, the sampling group with its
// instruction pointer among them, and the simulated HSA agent's AQL profile
// events; without --list or files it is a usage error.
TEST(Counters, ListShowsWhatTheDriverOffers) {
  auto r = runProcess({gtapBinary(), "counters", "--list", "--sim", "--format", "jsonl"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream in(r.out);
  size_t rows = 0, hsaRows = 0;
  bool ip = false, waves = false;
  std::set<std::string> queryGroups;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    EXPECT_FALSE(j["group"].get<std::string>().empty()) << line;
    if (j["runtime"] == "hsa") {
      ++hsaRows;
      waves = waves || (j["group"] == "SQ" && j["metric"] == "SQ_WAVES");
      continue;
    }
    ++rows;
    EXPECT_EQ(j["runtime"], "level-zero") << line;
    EXPECT_EQ(j["device"], "0.0 gtap simulated GPU") << line;
    ip = ip || (j["group"] == "EuStallSampling" && j["metric"] == "IP" && j["sampling"] == "time");
    if (j["sampling"] == "per-dispatch") queryGroups.insert(j["group"]);
  }
  EXPECT_GE(rows, 10u);
  EXPECT_TRUE(ip) << r.out;
  EXPECT_EQ(queryGroups, (std::set<std::string>{"ComputeBasic", "ComputeTiming", "ComputeBusy", "ComputeWork"}));
  EXPECT_GE(hsaRows, 3u);
  EXPECT_TRUE(waves) << r.out;
  auto usage = runProcess({gtapBinary(), "counters"});
  EXPECT_EQ(usage.exitCode, 2);
  EXPECT_NE(usage.err.find("--list"), std::string::npos) << usage.err;
}

}  // namespace
}  // namespace gtap::test
