// joinHalDispatches on device work built in memory: what a submission runs
// (the buffer's contents since its last begin), submission order, the time
// bound, and device dispatches no HAL dispatch made.
#include <gtest/gtest.h>

#include "gtap/readers/device_work.h"

namespace gtap::readers {
namespace {

// The file-order indices of the HAL dispatch and submission a device
// dispatch was joined to, or kNone.
constexpr size_t kNone = SIZE_MAX;
size_t dispatchOf(const DeviceOp& op) { return op.hal ? op.hal->dispatch : kNone; }
size_t submissionOf(const DeviceOp& op) { return op.hal ? op.hal->submission : kNone; }

class Work {
 public:
  // A HAL command-buffer record (dispatch of `name`, or begin) at `ns`.
  size_t hal(const std::string& operation, uint64_t buffer, int64_t ns, const std::string& name = {}) {
    DeviceOp op;
    op.recordedBy = schema::Api::IREE_HAL;
    op.kind = operation == "dispatch" ? schema::DeviceOpKind::KERNEL : schema::DeviceOpKind::OTHER;
    op.operation = w.intern(operation);
    op.list = buffer;
    op.name = w.intern(name);
    op.appendNs = op.submitNs = ns;
    op.appendIndex = w.ops.size();
    w.ops.push_back(op);
    return w.ops.size() - 1;
  }
  size_t device(const std::string& name, int64_t submitNs) {
    DeviceOp op;
    op.recordedBy = schema::Api::HSA;
    op.name = w.intern(name);
    op.submitNs = submitNs;
    w.ops.push_back(op);
    return w.ops.size() - 1;
  }
  DeviceWork w;
};

TEST(HalJoinUnit, ASubmissionRunsWhatTheBufferHeldSinceItsLastBegin) {
  Work t;
  size_t early = t.device("k", 5);  // before any HAL dispatch: never joined
  t.hal("begin", 1, 10);
  size_t first = t.hal("dispatch", 1, 11, "k");
  size_t submit1 = t.hal("queue_execute", 1, 20);
  size_t d1 = t.device("k", 21);
  t.hal("begin", 1, 30);  // recorded again: the old dispatch is gone
  size_t second = t.hal("dispatch", 1, 31, "k");
  size_t other = t.hal("dispatch", 1, 32, "m");
  size_t submit2 = t.hal("queue_execute", 1, 40);
  size_t d2 = t.device("k", 41);
  size_t d3 = t.device("m", 42);
  size_t stray = t.device("m", 43);  // the driver's own, after the HAL work
  joinHalDispatches(t.w);
  const auto& ops = t.w.ops;
  EXPECT_EQ(dispatchOf(ops[early]), kNone);
  EXPECT_EQ(dispatchOf(ops[d1]), first);
  EXPECT_EQ(submissionOf(ops[d1]), submit1);
  // What the device dispatch knows of its origin without the operations.
  ASSERT_NE(ops[d1].hal, nullptr);
  EXPECT_EQ(ops[d1].hal->op, d1);
  EXPECT_EQ(ops[d1].hal->name, "k");
  EXPECT_EQ(ops[d1].hal->list, 1u);
  EXPECT_EQ(ops[d1].hal->dispatchNs, 11);
  EXPECT_EQ(ops[d1].hal->submissionNs, 20);
  EXPECT_EQ(ops[d1].hal->submissionAppendIndex, submit1);
  EXPECT_EQ(dispatchOf(ops[d2]), second);
  EXPECT_EQ(submissionOf(ops[d2]), submit2);
  EXPECT_EQ(dispatchOf(ops[d3]), other);
  EXPECT_EQ(dispatchOf(ops[stray]), kNone);
  EXPECT_EQ(ops[first].deviceDispatches, 1u);
  EXPECT_EQ(ops[second].deviceDispatches, 1u);
  EXPECT_EQ(t.w.halJoin.executions, 3u);
  EXPECT_EQ(t.w.halJoin.joined, 3u);
  EXPECT_EQ(t.w.halJoin.deviceKernels, 5u);
  EXPECT_EQ(t.w.halJoin.notFromHal, 2u);
}

TEST(HalJoinUnit, SubmissionsTakeDeviceDispatchesInTheOrderTheyWereSubmitted) {
  Work t;
  size_t a = t.hal("dispatch", 1, 10, "k");
  size_t b = t.hal("dispatch", 2, 11, "k");
  // B is submitted first, then A twice; the device saw three k's in that order.
  size_t sb = t.hal("queue_execute", 2, 20);
  size_t sa1 = t.hal("queue_execute", 1, 30);
  size_t sa2 = t.hal("queue_execute", 1, 40);
  std::vector<size_t> device = {t.device("k", 45), t.device("k", 25), t.device("k", 35)};  // out of file order
  joinHalDispatches(t.w);
  const auto& ops = t.w.ops;
  EXPECT_EQ(dispatchOf(ops[device[1]]), b);
  EXPECT_EQ(submissionOf(ops[device[1]]), sb);
  EXPECT_EQ(dispatchOf(ops[device[2]]), a);
  EXPECT_EQ(submissionOf(ops[device[2]]), sa1);
  EXPECT_EQ(dispatchOf(ops[device[0]]), a);
  EXPECT_EQ(submissionOf(ops[device[0]]), sa2);
  EXPECT_EQ(ops[a].deviceDispatches, 2u);
  EXPECT_EQ(ops[b].deviceDispatches, 1u);
}

TEST(HalJoinUnit, ADispatchThatFindsNothingLeftDoesNotStopEarlierOnesOfItsBuffer) {
  Work t;
  t.hal("begin", 1, 1);
  size_t a = t.hal("dispatch", 1, 10, "k");
  size_t b = t.hal("dispatch", 1, 30, "k");
  // The device saw k twice, both before b was recorded: b never joins, a
  // joins once per submission.
  size_t k1 = t.device("k", 20);
  size_t k2 = t.device("k", 25);
  size_t s1 = t.hal("queue_execute", 1, 40);
  size_t s2 = t.hal("queue_execute", 1, 50);
  joinHalDispatches(t.w);
  const auto& ops = t.w.ops;
  EXPECT_EQ(dispatchOf(ops[k1]), a);
  EXPECT_EQ(submissionOf(ops[k1]), s1);
  EXPECT_EQ(dispatchOf(ops[k2]), a);
  EXPECT_EQ(submissionOf(ops[k2]), s2);
  EXPECT_EQ(ops[a].deviceDispatches, 2u);
  EXPECT_EQ(ops[b].deviceDispatches, 0u);
  EXPECT_EQ(t.w.halJoin.executions, 4u);
  EXPECT_EQ(t.w.halJoin.joined, 2u);
}

TEST(HalJoinUnit, DispatchesRecordedAfterASubmissionRunOnlyInLaterOnes) {
  Work t;
  t.hal("begin", 1, 1);
  size_t a = t.hal("dispatch", 1, 10, "k");
  size_t s1 = t.hal("queue_execute", 1, 20);
  size_t d1 = t.device("k", 21);
  // Recorded into the same buffer with no begin between: the buffer grows.
  size_t m = t.hal("dispatch", 1, 30, "m");
  size_t b = t.hal("dispatch", 1, 31, "k");
  size_t s2 = t.hal("queue_execute", 1, 40);
  size_t d2 = t.device("k", 41);
  size_t d3 = t.device("m", 42);
  size_t d4 = t.device("k", 43);
  joinHalDispatches(t.w);
  const auto& ops = t.w.ops;
  EXPECT_EQ(dispatchOf(ops[d1]), a);
  EXPECT_EQ(submissionOf(ops[d1]), s1);
  EXPECT_EQ(dispatchOf(ops[d2]), a);
  EXPECT_EQ(submissionOf(ops[d2]), s2);
  EXPECT_EQ(dispatchOf(ops[d3]), m);
  EXPECT_EQ(dispatchOf(ops[d4]), b);
  EXPECT_EQ(submissionOf(ops[d4]), s2);
  EXPECT_EQ(t.w.halJoin.executions, 4u);
  EXPECT_EQ(t.w.halJoin.joined, 4u);
}

TEST(HalJoinUnit, NoSubmissionsNoJoin) {
  Work t;
  size_t d = t.hal("dispatch", 1, 10, "k");
  size_t k = t.device("k", 20);
  joinHalDispatches(t.w);
  EXPECT_EQ(dispatchOf(t.w.ops[k]), kNone);
  EXPECT_EQ(t.w.ops[d].deviceDispatches, 0u);
  EXPECT_EQ(t.w.halJoin.executions, 0u);
  EXPECT_EQ(t.w.halJoin.notFromHal, 1u);
}

}  // namespace
}  // namespace gtap::readers
