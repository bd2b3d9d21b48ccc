// The interposer core in-process, without a runtime: several threads record
// calls through CallScope, and replay records both through their thread's
// buffer (ListCommand) and the locked stream, while the writer drains; then
// the session is closed and the file read back. Every call must be there
// once, in each thread's order, and every replay record once with its
// fields. And the table of work counted in parts by several threads at once
// (the workgroups of IREE's CPU drivers): every work finishes once, with all
// its parts. Built as is in every run, and under ThreadSanitizer on request.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "call_scope.h"
#include "functions.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/replay_stream.h"
#include "replay_stream.h"
#include "session.h"
#include "work_in_flight.h"

namespace {

const gtap::core::FunctionInfo kFunctions[] = {{"stressFirst", gtap::core::ApiKind::levelZero},
                                               {"stressSecond", gtap::core::ApiKind::levelZero}};
constexpr uint16_t kBase = gtap::core::kZeFunctionBase;

__attribute__((constructor(150))) void registerStressFunctions() {
  gtap::core::registerFunctions(kBase, kFunctions, 2);
}

TEST(CoreStress, EveryCallOnceInThreadOrder) {
  const char* pattern = std::getenv("GTAP_OUTPUT");
  ASSERT_NE(pattern, nullptr) << "run with GTAP_OUTPUT set (CTest does)";
  std::string output = pattern;
  output.replace(output.find("%p"), 2, std::to_string(getpid()));
  ASSERT_TRUE(gtap::core::replay::enabled()) << "run with GTAP_MODE holding replay (CTest does)";
  constexpr int kThreads = 4, kCalls = 60000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kCalls; ++i) {
        uint16_t f = kBase + (i % 3 == 0 ? 1 : 0);
        gtap::core::CallScope scope(gtap::core::kGuardZe, f);
        // A nested call on the same thread is the runtime's own: not recorded.
        gtap::core::CallScope nested(gtap::core::kGuardZe, kBase);
        nested.end(0);
        scope.end(i);
        // Every other call makes a replay record: its list is the thread, its
        // kernel the call. Most go through the thread's buffer; some take the
        // locked path, and some carry many ids.
        if (i % 2) continue;
        uint32_t waits = i % 1000 == 0 ? 200 : static_cast<uint32_t>(i % 5);
        auto fill = [&](gtap::core::replay::ListCommand& c) {
          c.seq = gtap::core::replay::nextSeq();
          c.thread = static_cast<uint32_t>(t);
          c.function = f;
          c.ticks = gtap::core::nowTicks();
          c.list = static_cast<uint64_t>(t) + 1;
          c.kernel = static_cast<uint64_t>(i);
          c.hasGroups = true;
          c.groups[0] = static_cast<uint32_t>(i);
          for (uint32_t k = 0; k < waits; ++k) c.events()[k] = static_cast<uint64_t>(i) + k;
        };
        gtap::core::replay::ListCommand* direct = i % 7 ? gtap::core::replay::beginListCommand(waits) : nullptr;
        if (direct) {
          fill(*direct);
          gtap::core::replay::commitListCommand(direct);
        } else {
          std::vector<uint64_t> room(sizeof(gtap::core::replay::ListCommand) / 8 + waits);
          auto* c = new (room.data()) gtap::core::replay::ListCommand();
          c->eventCount = waits;
          fill(*c);
          gtap::core::replay::add(gtap::core::replay::listCommandRecord(*c));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  gtap::core::finishSession("test");

  gtap::readers::Capture capture(output);
  ASSERT_TRUE(capture.recovery().closedCleanly) << capture.recovery().stopReason;
  std::map<uint32_t, std::vector<gtap::readers::ApiCall>> byThread;
  capture.forEachCall([&](const gtap::readers::ApiCall& c) { byThread[c.thread].push_back(c); });
  ASSERT_EQ(byThread.size(), static_cast<size_t>(kThreads));
  for (auto& [thread, calls] : byThread) {
    ASSERT_EQ(calls.size(), static_cast<size_t>(kCalls)) << "thread " << thread;
    for (int i = 0; i < kCalls; ++i) {
      const auto& c = calls[static_cast<size_t>(i)];
      ASSERT_TRUE(c.finished);
      ASSERT_EQ(c.result, i) << "thread " << thread;
      ASSERT_EQ(capture.functionName(c.function), i % 3 == 0 ? "stressSecond" : "stressFirst");
      ASSERT_EQ(c.depth, 0u);
    }
  }

  gtap::readers::ReplayStream stream = gtap::readers::loadReplayStream(capture);
  std::map<std::pair<uint64_t, uint64_t>, int> seen;  // (list, kernel) -> records
  uint64_t lastSeq = 0;
  for (const auto& r : stream.records) {
    ASSERT_GT(r.seq, lastSeq) << "records in seq order, each seq once";
    lastSeq = r.seq;
    ASSERT_EQ(r.op, gtap::readers::ReplayOp::LAUNCH_KERNEL) << gtap::readers::recordLabel(r);
    auto l = r.fields.getLaunchKernel();
    uint64_t t = l.getList() - 1, i = l.getKernel();
    ASSERT_LT(t, static_cast<uint64_t>(kThreads));
    ASSERT_EQ(r.thread, t);
    ++seen[{t, i}];
    uint32_t waits = i % 1000 == 0 ? 200 : static_cast<uint32_t>(i % 5);
    ASSERT_EQ(l.getWaits().size(), waits) << gtap::readers::recordLabel(r);
    ASSERT_TRUE(l.hasGroups());
    ASSERT_EQ(l.getGroups().getX(), i);
    for (uint32_t k = 0; k < waits; ++k) ASSERT_EQ(l.getWaits()[k], i + k);
    ASSERT_EQ(capture.functionName(r.function), i % 3 == 0 ? "stressSecond" : "stressFirst");
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kThreads) * kCalls / 2);
  for (const auto& [key, n] : seen) ASSERT_EQ(n, 1) << "thread " << key.first << " call " << key.second;
}

}  // namespace

namespace {

struct WorkInfo {
  uint32_t firstThread = ~0u;
  uint32_t round = 0;
};

// Four threads each run a quarter of the parts of every work, works and
// parts interleaved, while a fifth drains; the same keys come back in every
// round, so slots are freed and made again under the threads' feet. Each
// work of each round finishes exactly once, with every part, described by
// the thread that began it first.
template <size_t kSlots>
void everyWorkFinishesOnce(size_t works, uint32_t rounds, bool allBegunFirst) {
  constexpr uint32_t kThreads = 4, kPartsPerThread = 16;
  gtap::core::WorkInFlight<WorkInfo, kSlots> table;
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> finished;  // (round, key) -> parts
  auto take = [&](const auto& f) {
    ++finished[{f.info.round, f.key[0]}];
    EXPECT_EQ(f.parts, uint64_t{kThreads} * kPartsPerThread);
    EXPECT_LT(f.info.firstThread, kThreads);
    EXPECT_EQ(f.key[1], f.key[0] * 3);
    EXPECT_EQ(f.key[2], ~f.key[0]);
  };
  std::atomic<bool> running{true};
  std::thread drainer([&] {
    while (running.load()) table.drain(take);
  });
  for (uint32_t round = 0; round < rounds; ++round) {
    std::atomic<uint32_t> begun{0};
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        auto key = [](size_t w) { return std::array<uint64_t, 3>{w + 1, (w + 1) * 3, ~uint64_t(w + 1)}; };
        auto describe = [&](WorkInfo& info) {
          info.firstThread = t;
          info.round = round;
          return uint64_t{kThreads} * kPartsPerThread;
        };
        if (allBegunFirst) {
          // Every work in flight at once: more than the table's slots.
          for (size_t w = 0; w < works; ++w)
            for (uint32_t p = 0; p < kPartsPerThread; ++p) table.begin(key(w), describe);
          begun.fetch_add(1);
          while (begun.load() < kThreads) std::this_thread::yield();
          for (size_t w = 0; w < works; ++w)
            for (uint32_t p = 0; p < kPartsPerThread; ++p) table.end(key(w), static_cast<int64_t>(p));
          return;
        }
        for (uint32_t p = 0; p < kPartsPerThread; ++p)
          for (size_t w = (t * 7) % works, n = 0; n < works; ++n, w = (w + 1) % works) {
            table.begin(key(w), describe);
            table.end(key(w), static_cast<int64_t>(p));
          }
      });
    }
    for (auto& th : threads) th.join();
    // A work whose parts all ended is not in flight.
    EXPECT_EQ(table.inFlight(), 0u) << "round " << round;
  }
  running.store(false);
  drainer.join();
  table.drain(take);
  // A work finishes only once its every part ended, and each part began
  // before it ended: once per round.
  EXPECT_EQ(finished.size(), works * rounds);
  for (const auto& [k, n] : finished) EXPECT_EQ(n, 1u) << "round " << k.first << " work " << k.second;
}

TEST(WorkInFlight, EveryWorkOfManyThreadsFinishesOnceWithAllItsParts) {
  everyWorkFinishesOnce<1024>(64, 20, true);
}

TEST(WorkInFlight, WorksBeyondTheTableStillFinish) {
  everyWorkFinishesOnce<8>(40, 5, true);
}

// Parts begun and ended one at a time in every order: the table never loses
// a part's count (every finished work had all its parts) and ends empty.
TEST(WorkInFlight, InterleavedPartsNeverFinishAWorkEarly) {
  everyWorkFinishesOnce<16>(12, 10, false);
}

TEST(WorkInFlight, AWorkWhosePartsDoNotAllEndStaysInFlight) {
  gtap::core::WorkInFlight<WorkInfo, 4> table;
  std::array<uint64_t, 3> key{1, 2, 3};
  table.begin(key, [](WorkInfo&) { return uint64_t{3}; });
  table.end(key, 10);
  table.end(key, 11);
  size_t finished = 0;
  table.drain([&](const auto&) { ++finished; });
  EXPECT_EQ(finished, 0u);
  EXPECT_EQ(table.inFlight(), 1u);
  table.end(key, 12);
  table.drain([&](const auto& f) {
    ++finished;
    EXPECT_EQ(f.parts, 3u);
    EXPECT_EQ(f.endNs, 12);
  });
  EXPECT_EQ(finished, 1u);
  EXPECT_EQ(table.inFlight(), 0u);
  // An end with no begin counts nothing.
  table.end({9, 9, 9}, 13);
  table.drain([&](const auto&) { ++finished; });
  EXPECT_EQ(finished, 1u);
}

}  // namespace
