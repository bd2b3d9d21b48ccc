// The account `gtap explain` writes, on captures written here whose every
// call and device operation is known: the busy shares, where device time
// went, idle gaps and the host's calls in them, the slowest launches, what is
// said when there was no device work (for each reason), and the top-N cutoff.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "gtap/readers/capture.h"
#include "gtap/readers/explain.h"
#include "profile_capture_builder.h"

namespace {

using gtap::test::ProfileCaptureBuilder;

class Explain : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gtap-explain-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The account of the capture `b` writes, naming `top` of each.
  std::string explain(const ProfileCaptureBuilder& b, size_t top = 3, bool close = true) {
    std::string path = (dir_ / ("capture" + std::to_string(files_++) + ".gtap")).string();
    std::string error = b.write(path, close);
    EXPECT_EQ(error, "");
    gtap::readers::Capture capture(path);
    gtap::readers::LoadedCapture loaded{&capture, gtap::readers::loadDeviceWork(capture)};
    gtap::readers::Symbolizer symbolizer;
    std::ostringstream out;
    gtap::readers::writeExplanation(loaded, top, symbolizer, out);
    // What `gtap explain` writes, reading the operations a batch at a time
    // (or whole, with IREE HAL submissions), is the same account.
    std::ostringstream streamed;
    gtap::readers::writeExplanation(capture, top, symbolizer, streamed);
    EXPECT_EQ(streamed.str(), out.str());
    return out.str();
  }

  static size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
  }

 private:
  std::filesystem::path dir_;
  int files_ = 0;
};

// Two kernels with an idle gap between them while the host waited: the run
// is 1000..9000 (the calls), the device busy 3000 ns of its 3000..8000.
ProfileCaptureBuilder twoKernels() {
  ProfileCaptureBuilder b;
  b.call("zeInit", 1000, 2000);
  b.call("zeCommandQueueSynchronize", 4500, 9000);
  b.kernel("k1", 2500, 3000, 5000, {4, 1, 1}, {64, 1, 1});
  b.kernel("k2", 5500, 7000, 8000);
  return b;
}

TEST_F(Explain, WholeAccountOfTwoKernelsAndAnIdleGap) {
  EXPECT_EQ(explain(twoKernels()),
            "pid 4242 (/usr/bin/app) ran 8.00 us.\n"
            "\n"
            "test GPU was busy 3.00 us, 37.5% of the run and 60.0% of the stretch from its first operation to its "
            "last.\n"
            "\n"
            "Where device time went:\n"
            "  1. k1: 66.7% of kernel time, 1 run, 2.00 us in all, median 2.00 us\n"
            "  2. k2: 33.3% of kernel time, 1 run, 1.00 us in all, median 1.00 us\n"
            "\n"
            "test GPU sat idle 2.00 us between its first and last operation. Longest idle stretches:\n"
            "  2.00 us after k1, before k2 (at +4.00 us); the host meanwhile was in zeCommandQueueSynchronize "
            "(2.00 us)\n"
            "\n"
            "Slowest launches:\n"
            "  k1 took 2.00 us (groups 4x1x1 of 64x1x1), submitted at +1.50 us\n"
            "      (no stack: the capture was recorded with mode api,kernels; record stacks with "
            "--mode=api,kernels,stacks)\n"
            "  k2 took 1.00 us (groups 1x1x1 of 1x1x1), submitted at +4.50 us\n"
            "      (no stack: the capture was recorded with mode api,kernels; record stacks with "
            "--mode=api,kernels,stacks)\n"
            "\n");
}

TEST_F(Explain, BusySharesCountOverlappingWorkOnce) {
  // Two kernels overlapping by 500 ns: busy 1500 of a 4000 ns run and of the
  // 1500 ns stretch, with no idle gap to name.
  ProfileCaptureBuilder b;
  b.call("zeInit", 1000, 5000);
  b.kernel("a", 1500, 2000, 3000);
  b.kernel("b", 1500, 2500, 3500);
  std::string text = explain(b);
  EXPECT_NE(text.find("test GPU was busy 1.50 us, 37.5% of the run and 100.0% of the stretch from its first "
                      "operation to its last.\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("sat idle"), std::string::npos) << text;
}

TEST_F(Explain, GapWithoutHostCallsSaysSo) {
  ProfileCaptureBuilder b;
  b.call("zeInit", 0, 100);
  b.kernel("a", 100, 1000, 2000);
  b.kernel("b", 100, 5000, 6000);
  std::string text = explain(b);
  EXPECT_NE(text.find("  3.00 us after a, before b (at +2.00 us); the host made no API call meanwhile\n"),
            std::string::npos)
      << text;
}

TEST_F(Explain, NoDeviceWorkInACaptureThatDidNotRecordIt) {
  ProfileCaptureBuilder b;
  b.mode = "";  // files that name no mode were recorded with "api"
  b.call("zeInit", 1000, 3000);
  EXPECT_EQ(explain(b),
            "pid 4242 (/usr/bin/app) ran 2.00 us.\n"
            "No device work was recorded: the capture was recorded with mode api (record it with "
            "--mode=api,kernels).\n\n");
}

TEST_F(Explain, NoDeviceWorkInACaptureThatRecordsIt) {
  ProfileCaptureBuilder b;
  b.mode = "api,kernels,memory";
  b.call("zeInit", 1000, 3000);
  EXPECT_EQ(explain(b),
            "pid 4242 (/usr/bin/app) ran 2.00 us.\n"
            "No device work was found: the capture was recorded with mode api,kernels,memory, which records it, and "
            "the program ran none gtap could see.\n\n");
}

TEST_F(Explain, NoDeviceWorkBelowIreeHalDispatches) {
  ProfileCaptureBuilder b;
  b.call("zeInit", 1000, 3000);
  b.hal("dispatch", 1, 1500, "k");
  b.hal("dispatch", 1, 1600, "k");
  b.hal("queue_execute", 1, 1700);
  EXPECT_EQ(explain(b),
            "pid 4242 (/usr/bin/app) ran 2.00 us.\n"
            "No device work was recorded: the 2 IREE HAL dispatches recorded into command buffers carry no device "
            "times (those come from the device runtime underneath, HSA or Level Zero, when the driver uses one).\n\n");
}

// Four kernels, longest first (400, 300, 200, 100 ns), with idle gaps of 600,
// 700 and 800 ns between them.
ProfileCaptureBuilder fourKernels() {
  ProfileCaptureBuilder b;
  b.call("zeInit", 0, 100);
  b.kernel("a", 100, 1000, 1400);
  b.kernel("b", 100, 2000, 2300);
  b.kernel("c", 100, 3000, 3200);
  b.kernel("d", 100, 4000, 4100);
  return b;
}

TEST_F(Explain, TopNamesThatManyKernelsGapsAndLaunches) {
  std::string two = explain(fourKernels(), 2);
  EXPECT_NE(two.find("  2. b: 30.0% of kernel time"), std::string::npos) << two;
  EXPECT_EQ(two.find("  3. "), std::string::npos) << two;
  // The longest gaps, longest first.
  EXPECT_EQ(count(two, " ns after "), 2u) << two;
  EXPECT_NE(two.find("Longest idle stretches:\n  800 ns after c, before d (at +3.20 us); the host made no API "
                     "call meanwhile\n  700 ns after b, before c"),
            std::string::npos)
      << two;
  // The slowest launches, slowest first.
  EXPECT_EQ(count(two, " took "), 2u) << two;
  EXPECT_NE(two.find("  a took 400 ns"), std::string::npos) << two;
  EXPECT_LT(two.find("  a took 400 ns"), two.find("  b took 300 ns")) << two;

  std::string three = explain(fourKernels(), 3);
  EXPECT_NE(three.find("  3. c: 20.0% of kernel time"), std::string::npos) << three;
  EXPECT_EQ(three.find("  4. "), std::string::npos) << three;
  EXPECT_EQ(count(three, " ns after "), 3u) << three;
  EXPECT_EQ(count(three, " took "), 3u) << three;
  EXPECT_EQ(three.find("  d took"), std::string::npos) << three;
}

TEST_F(Explain, LaunchWithoutAStackInACaptureThatRecordsStacks) {
  ProfileCaptureBuilder b = twoKernels();
  b.mode = "api,kernels,stacks";
  std::string text = explain(b);
  EXPECT_EQ(count(text, "      (no stack recorded for this launch)\n"), 2u) << text;
  EXPECT_EQ(text.find("record stacks with"), std::string::npos) << text;
}

TEST_F(Explain, UntimedWorkAndACutShortCaptureAreSaid) {
  ProfileCaptureBuilder b = twoKernels();
  b.untimedKernel("k3", 6000, "the event was reset before it was read");
  std::string text = explain(b, 3, false);
  EXPECT_NE(text.find("\nSome device work has no device times: the event was reset before it was read.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nThe capture was cut short and recovered: "), std::string::npos) << text;
  // Untimed launches are no slowest launch.
  EXPECT_EQ(text.find("k3 took"), std::string::npos) << text;
}

TEST_F(Explain, IreeHalDispatchesJoinedToTheDeviceDispatchesTheyBecame) {
  ProfileCaptureBuilder b;
  b.call("zeInit", 1000, 1100);
  b.hal("begin", 1, 1200);
  b.hal("dispatch", 1, 1300, "k");
  b.hal("queue_execute", 1, 1400);
  b.kernel("k", 1500, 2000, 3000);
  b.kernel("driver_own", 1600, 3500, 3600);
  std::string text = explain(b);
  EXPECT_NE(text.find("  k took 1.00 us (groups 1x1x1 of 1x1x1), submitted at +500 ns\n"
                      "      the IREE HAL dispatch of k it became, recorded into command buffer 1 at +300 ns, "
                      "submitted by queue_execute at +400 ns\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nIREE HAL: the command buffers the program submitted ran 1 dispatch; 1 joined the device "
                      "dispatch of the same kernel they became (in submission order). 1 of the 2 device dispatches "
                      "came from no HAL dispatch (the driver's own work, or another library's).\n"),
            std::string::npos)
      << text;
  // HAL dispatches carry no device time: not among where it went.
  EXPECT_EQ(count(text, ". k: "), 1u) << text;
}

}  // namespace
