// Recording phases: gtap_start / gtap_stop from the program, GTAP_START_PAUSED
// and the toggle signal from outside. ze_phases runs three rounds of 2, 3 and
// 4 launches; only the round recorded while not paused is in the capture.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "perfetto_trace.pb.h"
#include "process.h"

namespace gtap::test {
namespace {

std::string simDriver() { return std::string(GTAP_TEST_SIM_DIR) + "/libze_gtap_sim.so"; }

// The lines of `out` printed between "round R" and the next round (or end).
std::vector<std::string> roundLines(const std::string& out, unsigned round) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("round ", 0) == 0) {
      inside = line == "round " + std::to_string(round);
      continue;
    }
    if (inside && line.rfind("checksum", 0) == 0) break;
    if (inside) lines.push_back(line);
  }
  return lines;
}

size_t countPrefix(const std::vector<std::string>& lines, const std::string& prefix) {
  size_t n = 0;
  for (const auto& l : lines) n += l.rfind(prefix, 0) == 0;
  return n;
}

struct Recorded {
  size_t kernels = 0, copies = 0, allocations = 0, frees = 0, launchCalls = 0;
};

Recorded recorded(const std::string& file) {
  readers::Capture capture(file);
  EXPECT_TRUE(capture.recovery().closedCleanly) << file;
  Recorded r;
  auto work = readers::loadDeviceWork(capture);
  for (const auto& op : work.ops) {
    r.kernels += op.kind == schema::DeviceOpKind::KERNEL;
    r.copies += op.kind == schema::DeviceOpKind::COPY;
  }
  for (const auto& m : work.memory) (m.isFree ? r.frees : r.allocations)++;
  capture.forEachCall([&](const readers::ApiCall& c) {
    r.launchCalls += capture.functionName(c.function) == "zeCommandListAppendLaunchKernel";
  });
  return r;
}

TEST(Phases, StartAndStopFromTheProgramRecordOnlyThatRound) {
  std::string dir = freshDirectory("phases-api");
  auto traced = runProcess({gtapBinary(), "run", "--sim", "-q", "--mode=api,kernels,memory", "--start-paused", "-o", dir + "/cap.gtap", "--",
                            workload("ze_phases"), "--api"});
  ASSERT_EQ(traced.exitCode, 0) << traced.err;
  auto round1 = roundLines(traced.out, 1);
  ASSERT_EQ(countPrefix(round1, "launch"), 3u) << traced.out;
  ASSERT_EQ(countPrefix(roundLines(traced.out, 0), "launch"), 2u) << traced.out;
  EXPECT_NE(traced.out.find("handler own"), std::string::npos) << traced.out;

  Recorded r = recorded(dir + "/cap.gtap");
  EXPECT_EQ(r.kernels, countPrefix(round1, "launch"));
  EXPECT_EQ(r.launchCalls, countPrefix(round1, "launch"));
  EXPECT_EQ(r.copies, countPrefix(round1, "copy"));
  // Allocated while paused (before round 1): not recorded; frees always are.
  EXPECT_EQ(r.allocations, 0u);
  EXPECT_EQ(r.frees, 4u);
}

// Paused times are a "paused" slice each on a "gtap recording" track of the
// process, around the recorded round; summary says how long.
TEST(Phases, PausedTimesAreInThePerfettoExportAndSummary) {
  std::string dir = freshDirectory("phases-perfetto");
  auto traced = runProcess({gtapBinary(), "run", "--sim", "-q", "--mode=api,kernels", "--start-paused", "-o",
                            dir + "/cap.gtap", "--", workload("ze_phases"), "--api"});
  ASSERT_EQ(traced.exitCode, 0) << traced.err;
  std::string path = dir + "/cap.pftrace";
  auto r = runProcess({gtapBinary(), "export", "--format=perfetto", "-o", path, dir + "/cap.gtap"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::ifstream in(path, std::ios::binary);
  std::string bytes(std::istreambuf_iterator<char>(in), {});
  perfetto::protos::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes));
  uint64_t recordingTrack = 0;
  for (const auto& p : trace.packet())
    if (p.has_track_descriptor() && p.track_descriptor().name() == "gtap recording")
      recordingTrack = p.track_descriptor().uuid();
  ASSERT_NE(recordingTrack, 0u);
  std::vector<std::pair<uint64_t, uint64_t>> paused;  // begin, end
  std::vector<uint64_t> kernels;
  for (const auto& p : trace.packet()) {
    if (!p.has_track_event()) continue;
    const auto& e = p.track_event();
    if (e.track_uuid() == recordingTrack) {
      if (e.type() == perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN) {
        EXPECT_EQ(e.name(), "paused");
        paused.push_back({p.timestamp(), 0});
      } else if (e.type() == perfetto::protos::TrackEvent::TYPE_SLICE_END && !paused.empty()) {
        paused.back().second = p.timestamp();
      }
    } else if (e.type() == perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN && e.name() == "scale") {
      kernels.push_back(p.timestamp());
    }
  }
  ASSERT_EQ(paused.size(), 2u);  // from the start to round 1, and after it to the end
  ASSERT_EQ(kernels.size(), 3u);
  for (uint64_t k : kernels) {
    EXPECT_GT(k, paused[0].second);
    EXPECT_LT(k, paused[1].first);
  }
  EXPECT_LE(paused[1].first, paused[1].second);

  auto summary = runProcess({gtapBinary(), "summary", dir + "/cap.gtap"});
  ASSERT_EQ(summary.exitCode, 0) << summary.err;
  EXPECT_NE(summary.out.find("(2 pauses)"), std::string::npos) << summary.out;
}

TEST(Phases, WithoutGtapTheCallsDoNothing) {
  auto plain = runProcess({workload("ze_phases"), "--api"}, {{"ZE_ENABLE_ALT_DRIVERS", simDriver()}});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_EQ(countPrefix(roundLines(plain.out, 1), "launch"), 3u) << plain.out;
  EXPECT_NE(plain.out.find("handler own"), std::string::npos) << plain.out;
}

// Reads lines up to "waiting ROUND PID"; returns PID (0 when not seen).
pid_t waitingPid(RunningProcess& p, unsigned round) {
  std::string line, want = "waiting " + std::to_string(round) + " ";
  while (p.readLine(line, std::chrono::seconds(60)))
    if (line.rfind(want, 0) == 0) return static_cast<pid_t>(std::stol(line.substr(want.size())));
  return 0;
}

void release(const std::string& fifo) {
  int fd = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << fifo;
  ASSERT_EQ(::write(fd, "go\n", 3), 3);
  ::close(fd);
}

TEST(Phases, ToggleSignalRecordsOnlyTheRoundBetweenTwoDeliveries) {
  std::string dir = freshDirectory("phases-signal");
  std::string fifo = dir + "/go";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  RunningProcess p({gtapBinary(), "run", "--sim", "-q", "--mode=api,kernels,memory", "--start-paused", "--toggle-signal", "SIGUSR2", "-o",
                    dir + "/cap.gtap", "--", workload("ze_phases"), "--wait", fifo});
  // A delivered signal is handled before the program returns from its read,
  // so each toggle takes effect before the round after it starts.
  pid_t pid = waitingPid(p, 1);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGUSR2), 0);
  release(fifo);
  ASSERT_EQ(waitingPid(p, 2), pid);
  ASSERT_EQ(::kill(pid, SIGUSR2), 0);
  release(fifo);
  std::string rest, line;
  while (p.readLine(line, std::chrono::seconds(60))) rest += line + "\n";
  auto result = p.wait();
  ASSERT_EQ(result.exitCode, 0);
  // The program's own SIGUSR1 handler is untouched.
  EXPECT_NE(rest.find("handler own"), std::string::npos) << rest;

  Recorded r = recorded(dir + "/cap.gtap");
  EXPECT_EQ(r.kernels, 3u);  // round 1's launches
  EXPECT_EQ(r.launchCalls, 3u);
  EXPECT_EQ(r.copies, 1u);
}

TEST(Phases, BadToggleSignalIsAUsageError) {
  auto r = runProcess({gtapBinary(), "run", "--sim", "--toggle-signal", "SIGSEGV", "--", workload("ze_phases")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--toggle-signal"), std::string::npos) << r.err;
  auto same = runProcess({gtapBinary(), "run", "--sim", "--mode=api,replay", "--toggle-signal", "USR2",
                          "--scope-signal", "SIGUSR2", "--", workload("ze_phases")});
  EXPECT_EQ(same.exitCode, 2);
  EXPECT_NE(same.err.find("same signal"), std::string::npos) << same.err;
}

}  // namespace
}  // namespace gtap::test
