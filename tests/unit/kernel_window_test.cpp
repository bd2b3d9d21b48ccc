// Device time per kernel within timed windows (what `gtap bench` reports), on
// a capture written here: only launches submitted inside a window count, both
// ends included, and a launch never submitted counts by when it was appended.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "gtap/readers/kernel_stats.h"
#include "profile_capture_builder.h"

namespace {

std::map<std::string, uint64_t> countsWithin(const gtap::test::ProfileCaptureBuilder& b,
                                             const std::vector<std::pair<int64_t, int64_t>>& windows) {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-kernel-window-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "capture.gtap").string();
  std::filesystem::remove(path);
  EXPECT_EQ(b.write(path), "");
  gtap::readers::Capture capture(path);
  auto rows = gtap::readers::kernelRowsWithin({&capture, gtap::readers::loadDeviceWork(capture)}, windows);
  std::filesystem::remove_all(dir);
  std::map<std::string, uint64_t> counts;
  for (const auto& r : rows) counts[r.key] = r.time.count + r.untimed;
  return counts;
}

TEST(KernelWindows, OnlyLaunchesSubmittedInsideAWindowCount) {
  gtap::test::ProfileCaptureBuilder b;
  b.kernel("warmup", 50, 60, 70);     // before the first window
  b.kernel("a", 100, 110, 120);       // at the first window's start
  b.kernel("a", 200, 210, 220);       // at its end
  b.kernel("between", 250, 260, 270);  // between the windows
  b.kernel("b", 300, 310, 320);
  b.untimedKernel("b", 350, "the event was reset before it was read");
  b.kernel("after", 401, 410, 420);   // just past the second
  auto counts = countsWithin(b, {{100, 200}, {300, 400}});
  EXPECT_EQ(counts, (std::map<std::string, uint64_t>{{"a", 2}, {"b", 2}}));
}

TEST(KernelWindows, ALaunchNeverSubmittedCountsByItsAppend) {
  gtap::test::ProfileCaptureBuilder b;
  b.appendedKernel("appended", 150);
  b.appendedKernel("outside", 250);
  auto counts = countsWithin(b, {{100, 200}});
  EXPECT_EQ(counts, (std::map<std::string, uint64_t>{{"appended", 1}}));
}

TEST(KernelWindows, NoWindowsNoKernels) {
  gtap::test::ProfileCaptureBuilder b;
  b.kernel("a", 100, 110, 120);
  EXPECT_TRUE(countsWithin(b, {}).empty());
}

}  // namespace
