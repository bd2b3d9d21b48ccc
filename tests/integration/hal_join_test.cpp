// IREE HAL dispatches joined to the HSA dispatches they became, in one
// process: tests/workloads/hal/hal_on_hsa, an IREE-shaped driver that runs its
// command buffers on the simulated HSA runtime, under `gtap run --sim`.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "process.h"
#include "sqlite_query.h"

namespace gtap::test {
namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<nlohmann::json> jsonLines(const std::string& text) {
  std::vector<nlohmann::json> rows;
  for (const auto& line : linesOf(text)) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

class HalJoin : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(freshDirectory("hal-join"));
    EnvChanges env = {{"LD_LIBRARY_PATH", std::string(GTAP_TEST_SIM_DIR) + "/hsa"}};
    plain_ = new ProcessResult(runProcess({workload("hal_on_hsa"), "3"}, env));
    watched_ = new ProcessResult(runProcess(
        {gtapBinary(), "run", "--sim", "-q", "-m", "api,kernels", "-o", file(), "--", workload("hal_on_hsa"), "3"},
        env));
  }
  static void TearDownTestSuite() {
    delete plain_;
    delete watched_;
    delete dir_;
  }
  static std::string file() { return *dir_ + "/join.gtap"; }
  static nlohmann::json::array_t exported() {
    std::string lines = *dir_ + "/join.jsonl";
    auto r = runProcess({gtapBinary(), "export", "--format", "jsonl", "--force", "-o", lines, file()});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::ifstream in(lines);
    std::string text(std::istreambuf_iterator<char>(in), {});
    // "-o -": the same lines on standard output.
    auto piped = runProcess({gtapBinary(), "export", "--format", "jsonl", "-o", "-", file()});
    EXPECT_EQ(piped.exitCode, 0) << piped.err;
    EXPECT_EQ(piped.out, text);
    nlohmann::json::array_t ops;
    for (auto& j : jsonLines(text))
      if (j["type"] == "device") ops.push_back(j);
    return ops;
  }

  static std::string* dir_;
  static ProcessResult* plain_;
  static ProcessResult* watched_;
};

std::string* HalJoin::dir_ = nullptr;
ProcessResult* HalJoin::plain_ = nullptr;
ProcessResult* HalJoin::watched_ = nullptr;

TEST_F(HalJoin, TheProgramRunsTheSameWatched) {
  ASSERT_EQ(plain_->exitCode, 0) << plain_->err;
  ASSERT_EQ(watched_->exitCode, 0) << watched_->err;
  EXPECT_EQ(watched_->out, plain_->out);
  auto lines = linesOf(plain_->out);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "hsa dispatch vector_add"), 6);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "hsa dispatch scale"), 5);
}

// Each submission of a command buffer runs its dispatches once: the warm-up
// the driver makes itself joins nothing, buffer A's three dispatches join the
// HSA dispatches of each of its three submissions in order, B's one its one,
// and C, never submitted, none.
TEST_F(HalJoin, EachSubmittedDispatchJoinsTheHsaDispatchItBecame) {
  ASSERT_EQ(watched_->exitCode, 0) << watched_->err;
  auto ops = exported();
  std::vector<const nlohmann::json*> device;
  std::map<uint64_t, std::vector<const nlohmann::json*>> halByBuffer;  // in recording order
  std::map<size_t, const nlohmann::json*> byIndex;
  for (const auto& op : ops) {
    byIndex[op["index"].get<size_t>()] = &op;
    if (op["kind"] != "kernel") continue;
    if (op["level"] == "device") device.push_back(&op);
    else if (op["level"] == "hal") halByBuffer[op["command_buffer"].get<uint64_t>()].push_back(&op);
  }
  std::sort(device.begin(), device.end(),
            [](const nlohmann::json* a, const nlohmann::json* b) { return (*a)["submit_ns"].get<int64_t>() < (*b)["submit_ns"].get<int64_t>(); });
  ASSERT_EQ(device.size(), 11u);
  ASSERT_EQ(halByBuffer.size(), 3u) << "buffers A, B and C";
  const auto& a = halByBuffer.begin()->second;
  const auto& b = std::next(halByBuffer.begin())->second;
  const auto& c = std::next(halByBuffer.begin(), 2)->second;
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 1u);
  ASSERT_EQ(c.size(), 1u);

  EXPECT_EQ((*device[0])["name"], "scale");
  EXPECT_FALSE(device[0]->contains("hal_dispatch")) << "the driver's warm-up came from no HAL dispatch";
  std::vector<size_t> submissions;
  for (size_t i = 1; i < device.size(); ++i) {
    const auto& d = *device[i];
    ASSERT_TRUE(d.contains("hal_dispatch")) << d.dump();
    const auto& hal = *byIndex.at(d["hal_dispatch"].get<size_t>());
    const auto& submission = *byIndex.at(d["hal_submission"].get<size_t>());
    const auto& expected = i <= 9 ? *a[(i - 1) % 3] : *b[0];
    EXPECT_EQ(hal["index"], expected["index"]) << "device dispatch " << i;
    EXPECT_EQ(hal["name"], d["name"]);
    EXPECT_EQ(submission["operation"], "queue_execute");
    EXPECT_EQ(submission["command_buffer"], hal["command_buffer"]);
    EXPECT_LE(submission["submit_ns"].get<int64_t>(), d["submit_ns"].get<int64_t>());
    submissions.push_back(d["hal_submission"].get<size_t>());
  }
  // One submission per round of A, then B's.
  EXPECT_EQ(std::set<size_t>(submissions.begin(), submissions.end()).size(), 4u);
  for (size_t i = 0; i + 1 < submissions.size(); ++i)
    EXPECT_EQ(submissions[i] == submissions[i + 1], (i + 1) % 3 != 0 && i + 1 < 9) << i;
  // The dispatch's bindings, as the program passed them (an
  // iree_hal_buffer_ref_list_t on the stack after the config): vector_add
  // binds three buffers, scale two, each of 1024 floats.
  for (const auto& [buffer, dispatches] : halByBuffer)
    for (const auto* hal : dispatches) {
      ASSERT_EQ((*hal)["buffers"].size(), (*hal)["name"] == "vector_add" ? 3u : 2u) << hal->dump();
      for (const auto& b : (*hal)["buffers"]) {
        EXPECT_NE(b[0], 0);
        EXPECT_EQ(b[1], 0);
        EXPECT_EQ(b[2], 4096);
      }
    }
  for (const auto* hal : a) EXPECT_EQ((*hal)["device_dispatches"], 3);
  EXPECT_EQ((*b[0])["device_dispatches"], 1);
  EXPECT_EQ((*c[0])["device_dispatches"], 0) << "buffer C was never submitted";
}

TEST_F(HalJoin, ReportsShowBothLevelsAndTheJoin) {
  ASSERT_EQ(watched_->exitCode, 0) << watched_->err;
  auto kernels = runProcess({gtapBinary(), "kernels", "--format", "jsonl", file()});
  ASSERT_EQ(kernels.exitCode, 0) << kernels.err;
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> rows;  // (name, level) -> count, joined
  for (const auto& j : jsonLines(kernels.out))
    rows[{j["kernel"], j["level"]}] = {j["count"].get<int64_t>(), j["joined"].get<int64_t>()};
  using Row = std::pair<int64_t, int64_t>;
  EXPECT_EQ((rows[{"vector_add", "device"}]), Row(6, 6));
  EXPECT_EQ((rows[{"scale", "device"}]), Row(5, 4)) << "the warm-up is not from HAL";
  EXPECT_EQ((rows[{"vector_add", "hal"}]), Row(3, 6)) << "A's two, three times; C's none";
  EXPECT_EQ((rows[{"scale", "hal"}]), Row(2, 4)) << "A's one three times, B's once";

  auto summary = runProcess({gtapBinary(), "summary", "--format", "jsonl", file()});
  ASSERT_EQ(summary.exitCode, 0) << summary.err;
  // The process row comes first; top kernels and transfers follow.
  auto s = nlohmann::json::parse(summary.out.substr(0, summary.out.find('\n')));
  EXPECT_EQ(s["type"], "process_summary");
  EXPECT_EQ(s["hal_dispatches"], 5);
  EXPECT_EQ(s["hal_submissions"], 4);
  EXPECT_EQ(s["hal_executions"], 10);
  EXPECT_EQ(s["hal_joined"], 10);

  auto explain = runProcess({gtapBinary(), "explain", file()});
  ASSERT_EQ(explain.exitCode, 0) << explain.err;
  EXPECT_NE(explain.out.find("ran 10 dispatches; 10 joined the device dispatch"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("1 of the 11 device dispatches came from no HAL dispatch"), std::string::npos)
      << explain.out;

  // SQLite: each joined device row names its HAL dispatch row, of the same kernel.
  std::string db = *dir_ + "/join.sqlite";
  auto exported = runProcess({gtapBinary(), "export", "--format", "sqlite", "-o", db, file()});
  ASSERT_EQ(exported.exitCode, 0) << exported.err;
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  int64_t joined = queryInt(handle,
                            "SELECT COUNT(*) FROM device_ops d JOIN device_ops h ON h.id = d.hal_dispatch_id "
                            "JOIN device_ops s ON s.id = d.hal_submission_id JOIN strings o ON o.id = s.operation_id "
                            "WHERE d.level = 'device' AND h.level = 'hal' AND h.name_id = d.name_id "
                            "AND o.string = 'queue_execute'");
  sqlite3_close(handle);
  EXPECT_EQ(joined, 10);

  // The timeline: a flow from each queue_execute to the first device
  // dispatch it made, and every joined slice names its HAL dispatch.
  std::string trace = *dir_ + "/join.json";
  auto chrome = runProcess({gtapBinary(), "export", "--format", "chrome", "-o", trace, file()});
  ASSERT_EQ(chrome.exitCode, 0) << chrome.err;
  auto events = nlohmann::json::parse(std::ifstream(trace))["traceEvents"];
  std::set<std::pair<int64_t, double>> submits;  // (tid, ts) of the queue_execute calls
  size_t named = 0;
  for (const auto& e : events) {
    if (e["ph"] != "X") continue;
    if (e["name"] == "iree_hal_hsa_fixture_device_queue_execute")
      submits.insert({e["tid"].get<int64_t>(), e["ts"].get<double>()});
    if (e.contains("args") && e["args"].contains("IREE HAL dispatch")) {
      EXPECT_EQ(e["args"]["IREE HAL dispatch"], e["name"]);
      ++named;
    }
  }
  EXPECT_EQ(named, 10u);
  EXPECT_EQ(submits.size(), 4u);
  std::set<uint64_t> fromSubmits, ended;
  for (const auto& e : events) {
    if (e["ph"] == "s" && submits.count({e["tid"].get<int64_t>(), e["ts"].get<double>()}))
      fromSubmits.insert(e["id"].get<uint64_t>());
    if (e["ph"] == "f") ended.insert(e["id"].get<uint64_t>());
  }
  EXPECT_EQ(fromSubmits.size(), 4u);
  for (uint64_t id : fromSubmits) EXPECT_TRUE(ended.count(id)) << "flow " << id << " ends on a device dispatch";
}

// Without api the HAL is still hooked: its operations (kernels) are recorded
// and joined; no call is.
TEST_F(HalJoin, KernelsWithoutApiStillRecordsAndJoinsTheHalOperations) {
  std::string only = *dir_ + "/kernels-only.gtap";
  EnvChanges env = {{"LD_LIBRARY_PATH", std::string(GTAP_TEST_SIM_DIR) + "/hsa"}};
  auto r = runProcess(
      {gtapBinary(), "run", "--sim", "-q", "-m", "kernels", "-o", only, "--", workload("hal_on_hsa"), "2"}, env);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto summary = runProcess({gtapBinary(), "summary", "--format", "jsonl", only});
  ASSERT_EQ(summary.exitCode, 0) << summary.err;
  // The process row comes first; top kernels and transfers follow.
  auto s = nlohmann::json::parse(summary.out.substr(0, summary.out.find('\n')));
  EXPECT_EQ(s["type"], "process_summary");
  EXPECT_EQ(s["api_calls"], 0);
  EXPECT_EQ(s["hal_dispatches"], 5);
  EXPECT_EQ(s["hal_submissions"], 3);
  EXPECT_EQ(s["hal_executions"], 7) << "A's three twice, B's one";
  EXPECT_EQ(s["hal_joined"], 7);
}

}  // namespace
}  // namespace gtap::test
