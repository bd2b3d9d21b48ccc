// The per-object views (gtap queue, gtap command, gtap memory --events and
// --at) and the report-side filters (--kernel, --from, --to, --pid, --rank)
// on captures of the workloads, checked against what the workloads do.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "jsonl_rows.h"
#include "process.h"

namespace gtap::test {
namespace {

using nlohmann::json;


std::string capture(const std::string& name, const std::vector<std::string>& program,
                    const std::string& mode = "api,kernels,memory") {
  std::string dir = freshDirectory("views-" + name);
  std::string file = dir + "/cap.gtap";
  std::vector<std::string> args = {"run", "--sim", "-m", mode, "-o", file, "--"};
  args.insert(args.end(), program.begin(), program.end());
  auto run = runGtap(args);
  EXPECT_EQ(run.exitCode, 0) << run.err;
  return file;
}

std::string seconds(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9f", static_cast<double>(ns) / 1e9);
  return buf;
}

// ze_pipeline executes its one regular list (copy, fill, three launches, two
// copies, a barrier) EXECUTIONS times on one queue: that many submissions,
// each running the eight operations, one after another on the device.
TEST(Views, QueueOfALevelZeroPipelineHasOneSubmissionPerExecution) {
  const int executions = 4;
  std::string file = capture("ze-queue", {workload("ze_pipeline"), std::to_string(executions)});
  auto r = runGtap({"queue", "--format=jsonl", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto subs = jsonlRows(r.out, "queue_submission");
  ASSERT_EQ(subs.size(), size_t(executions)) << r.out;
  int64_t previousSubmit = -1, previousEnd = -1;
  for (size_t i = 0; i < subs.size(); ++i) {
    const auto& s = subs[i];
    SCOPED_TRACE(s.dump());
    EXPECT_EQ(s["queue"], subs[0]["queue"]);
    EXPECT_EQ(s["submission"], i);
    EXPECT_EQ(s["what"], "execute");
    EXPECT_EQ(s["operations"], 8);
    EXPECT_EQ(s["waits"], "-");
    int64_t submit = s["submit_at"], start = s["start_at"], span = s["device_span"];
    EXPECT_GT(submit, previousSubmit);
    EXPECT_GE(start, submit);
    EXPECT_GT(span, 0);
    if (i == 0) {
      EXPECT_EQ(s["gap"], "-");
    } else {
      EXPECT_EQ(s["gap"].get<int64_t>(), start - previousEnd);
    }
    previousSubmit = submit;
    previousEnd = start + span;
  }
  auto queues = jsonlRows(r.out, "queue");
  ASSERT_EQ(queues.size(), 1u);
  EXPECT_EQ(queues[0]["submissions"], executions);
  EXPECT_EQ(queues[0]["operations"], 8 * executions);
  EXPECT_EQ(queues[0]["kind"], "ze queue");
  EXPECT_GT(queues[0]["busy_share"].get<double>(), 0);
  EXPECT_LE(queues[0]["busy_share"].get<double>(), 1);

  // --id: that queue alone; an id no queue has names the ones there are.
  std::string id = std::to_string(subs[0]["queue"].get<int64_t>());
  auto one = runGtap({"queue", "--format=jsonl", "--id", id, file});
  ASSERT_EQ(one.exitCode, 0) << one.err;
  EXPECT_EQ(jsonlRows(one.out, "queue_submission").size(), size_t(executions));
  auto none = runGtap({"queue", "--id", "999999", file});
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("no queue 999999 in " + file + "; the queues are " + id), std::string::npos) << none.err;
}

// hsa_pipeline writes five packets per iteration to its queue (barrier-AND,
// scale, add, barrier-OR, reduce_partial) and three async copies to the copy
// engine: every packet and copy is a submission of its own.
TEST(Views, QueueOfAnHsaPipelineHasOneSubmissionPerPacket) {
  const int iterations = 4;
  std::string file = capture("hsa-queue", {workload("hsa_pipeline"), std::to_string(iterations)});
  auto r = runGtap({"queue", "--format=jsonl", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::map<int64_t, std::vector<json>> byQueue;
  for (auto& s : jsonlRows(r.out, "queue_submission")) byQueue[s["queue"].get<int64_t>()].push_back(s);
  ASSERT_EQ(byQueue.size(), 2u) << r.out;
  std::vector<std::string> packets, copies;
  for (auto& [id, subs] : byQueue) {
    auto& into = subs.size() == size_t(5 * iterations) ? packets : copies;
    for (auto& s : subs) {
      EXPECT_EQ(s["operations"], 1) << s.dump();
      into.push_back(s["what"]);
    }
  }
  std::vector<std::string> expected;
  for (int i = 0; i < iterations; ++i)
    for (const char* w : {"barrier", "kernel", "kernel", "barrier", "kernel"}) expected.push_back(w);
  EXPECT_EQ(packets, expected);
  EXPECT_EQ(copies, std::vector<std::string>(3 * iterations, "copy"));
  for (auto& q : jsonlRows(r.out, "queue")) EXPECT_EQ(q["kind"], "hsa queue");
}

// The command view of ze_pipeline's list: the eight commands in the order
// they were appended, each timed on each execution.
TEST(Views, CommandViewListsWhatWasAppendedWithTimesPerExecution) {
  const int executions = 3;
  std::string file = capture("ze-command", {workload("ze_pipeline"), std::to_string(executions)});
  auto lists = runGtap({"command", "--format=jsonl", file});
  ASSERT_EQ(lists.exitCode, 0) << lists.err;
  auto listed = jsonlRows(lists.out, "command_list");
  ASSERT_EQ(listed.size(), 1u) << lists.out;
  EXPECT_EQ(listed[0]["kind"], "ze command list");
  EXPECT_EQ(listed[0]["commands"], 8);
  EXPECT_EQ(listed[0]["executions"], executions);
  std::string id = std::to_string(listed[0]["list"].get<int64_t>());
  auto r = runGtap({"command", "--format=jsonl", "--id", id, file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto commands = jsonlRows(r.out, "command");
  ASSERT_EQ(commands.size(), size_t(8 * executions)) << r.out;
  std::vector<std::string> appended;
  std::map<int, std::set<int>> executionsOf;
  for (const auto& c : commands) {
    SCOPED_TRACE(c.dump());
    if (c["execution"] == 0) appended.push_back(c["kind"].get<std::string>() + " " + c["name"].get<std::string>());
    executionsOf[c["command"]].insert(c["execution"].get<int>());
    // Timed on every execution (a barrier may take less than a device tick).
    ASSERT_TRUE(c["duration"].is_number_integer());
    ASSERT_TRUE(c["start_at"].is_number_integer());
    EXPECT_GE(c["duration"].get<int64_t>(), 0);
    EXPECT_GE(c["start_at"].get<int64_t>(), c["submit_at"].get<int64_t>());
  }
  EXPECT_EQ(appended, (std::vector<std::string>{"copy copy", "fill fill", "kernel scale", "kernel add",
                                                "kernel reduce_partial", "copy copy", "copy copy",
                                                "barrier barrier"}));
  for (auto& [command, seen] : executionsOf) EXPECT_EQ(seen.size(), size_t(executions)) << command;
  auto none = runGtap({"command", "--id", "999999", file});
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("the lists are " + id), std::string::npos) << none.err;
}

// ze_api_counts allocates 4 KiB of host memory and frees it, three times:
// between an allocation and its free exactly that allocation is live, and
// nothing between a free and the next allocation.
TEST(Views, MemoryEventsAndTheLiveSetBetweenKnownOperations) {
  std::string file = capture("memory-events", {workload("ze_api_counts"), "direct"}, "api,memory");
  auto r = runGtap({"memory", "--events", "--format=jsonl", file});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto events = jsonlRows(r.out, "memory_event");
  ASSERT_EQ(events.size(), 6u) << r.out;
  for (size_t i = 0; i < events.size(); ++i) {
    SCOPED_TRACE(events[i].dump());
    EXPECT_EQ(events[i]["event"], i % 2 ? "free" : "allocate");
    EXPECT_EQ(events[i]["function"], i % 2 ? "zeMemFree" : "zeMemAllocHost");
    if (i % 2 == 0) {
      EXPECT_EQ(events[i]["size"], 4096);
      EXPECT_EQ(events[i]["kind"], "host");
    } else {
      EXPECT_EQ(events[i]["address"], events[i - 1]["address"]);
    }
    if (i) {
      EXPECT_GE(events[i]["time"].get<int64_t>(), events[i - 1]["time"].get<int64_t>());
    }
  }
  auto between = [&](size_t i) {
    int64_t a = events[i]["time"], b = events[i + 1]["time"];
    return seconds(a + (b - a) / 2);
  };
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    SCOPED_TRACE(i);
    auto live = runGtap({"memory", "--at", between(i), "--format=jsonl", file});
    ASSERT_EQ(live.exitCode, 0) << live.err;
    auto set = jsonlRows(live.out, "live_allocation");
    if (i % 2 == 0) {
      ASSERT_EQ(set.size(), 1u) << live.out;
      EXPECT_EQ(set[0]["address"], events[i]["address"]);
      EXPECT_EQ(set[0]["time"], events[i]["time"]);
    } else {
      EXPECT_TRUE(set.empty()) << live.out;
    }
  }
  auto text = runGtap({"memory", "--at", between(1), file});
  EXPECT_NE(text.out.find("nothing allocated was live then"), std::string::npos) << text.out;
  auto bad = runGtap({"memory", "--at", "-1", file});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("--at must be an offset into the run"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace gtap::test
