// The interposer core in-process, without a runtime: several threads record
// calls through CallScope while the writer drains, then the session is closed
// and the file read back. Every call must be there once, in each thread's
// order. Built as is in every run, and under ThreadSanitizer on request.
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "call_scope.h"
#include "functions.h"
#include "gtap/readers/capture.h"
#include "session.h"

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
  constexpr int kThreads = 4, kCalls = 60000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kCalls; ++i) {
        uint16_t f = kBase + (i % 3 == 0 ? 1 : 0);
        gtap::core::CallScope scope(gtap::core::kGuardZe, f);
        // A nested call on the same thread is the runtime's own: not recorded.
        gtap::core::CallScope nested(gtap::core::kGuardZe, kBase);
        nested.end(0);
        scope.end(i);
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
}

}  // namespace
