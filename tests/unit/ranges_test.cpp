// Named ranges read back from captures written here: the loader, the
// innermost-range lookup kernels --by=range uses, and where timelines put
// ranges (on the thread's track when they nest with its calls, on a track of
// their own when they cross one).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "gtap/readers/capture.h"
#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/ranges.h"
#include "gtap/readers/timeline_builder.h"
#include "profile_capture_builder.h"

namespace {

using gtap::readers::TimelineTrack;

class RangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gtap-ranges-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const gtap::test::ProfileCaptureBuilder& b) {
    std::string path = (dir_ / ("capture" + std::to_string(files_++) + ".gtap")).string();
    EXPECT_EQ(b.write(path), "");
    return path;
  }
  std::filesystem::path dir_;
  int files_ = 0;
};

// "outer" around three siblings; each chunk names its own range.
gtap::test::ProfileCaptureBuilder siblings() {
  gtap::test::ProfileCaptureBuilder b;
  b.range("a", 200, 300, 1);
  b.range("b", 400, 500, 1);
  b.range("a", 600, 700, 1);
  b.range("outer", 100, 1000, 0);
  return b;
}

TEST_F(RangesTest, LoaderMergesNamesAcrossChunksAndSortsOuterFirst) {
  auto b = siblings();
  b.range("unclosed", 1200, 5000, 0, true);
  b.unmatchedPops = 3;
  gtap::readers::Capture c(write(b));
  auto ranges = gtap::readers::loadRanges(c);
  EXPECT_TRUE(ranges.problems.empty());
  ASSERT_EQ(ranges.ranges.size(), 5u);
  EXPECT_EQ(ranges.names.size(), 4u);  // a, b, outer, unclosed
  EXPECT_EQ(ranges.nameOf(ranges.ranges[0]), "outer");
  EXPECT_EQ(ranges.nameOf(ranges.ranges[1]), "a");
  EXPECT_EQ(ranges.nameOf(ranges.ranges[3]), "a");
  EXPECT_EQ(ranges.ranges[1].name, ranges.ranges[3].name);
  EXPECT_EQ(ranges.unmatchedPops, 3u);
  EXPECT_EQ(ranges.openAtEnd(), 1u);
  EXPECT_EQ(gtap::readers::describeRanges(ranges), "5 (4 names; 1 open at the end; 3 pops without a push)");
}

TEST_F(RangesTest, LookupFindsTheInnermostOpenRange) {
  gtap::readers::Capture c(write(siblings()));
  auto ranges = gtap::readers::loadRanges(c);
  gtap::readers::RangeLookup lookup(ranges);
  auto at = [&](int64_t ns, uint32_t thread = 0) {
    const auto* r = lookup.innermostAt(thread, ns);
    return r ? ranges.nameOf(*r) : std::string("none");
  };
  EXPECT_EQ(at(50), "none");
  EXPECT_EQ(at(100), "outer");  // a range holds its begin...
  EXPECT_EQ(at(250), "a");
  EXPECT_EQ(at(300), "outer");  // ...not its end
  EXPECT_EQ(at(450), "b");
  EXPECT_EQ(at(550), "outer");  // after closed siblings: the range around them
  EXPECT_EQ(at(650), "a");
  EXPECT_EQ(at(999), "outer");
  EXPECT_EQ(at(1000), "none");
  EXPECT_EQ(at(250, 7), "none");  // another thread's
}

TEST_F(RangesTest, KernelsByRangeCountEachLaunchInItsInnermostRange) {
  auto b = siblings();
  b.kernel("k", 50, 60, 70);     // before any range
  b.kernel("k", 250, 260, 270);  // a
  b.kernel("k", 650, 660, 670);  // a
  b.kernel("k", 450, 460, 470);  // b
  b.kernel("k", 550, 560, 570);  // outer, between siblings
  gtap::readers::Capture c(write(b));
  std::vector<const gtap::readers::Capture*> captures{&c};
  std::vector<std::string> notes;
  auto rows = gtap::readers::kernelRowsStreamed(captures, gtap::readers::KernelGrouping::range, false, notes);
  std::map<std::string, uint64_t> counts;
  for (const auto& r : rows) counts[r.key] += r.time.count + r.untimed;
  EXPECT_EQ(counts, (std::map<std::string, uint64_t>{{"(no range)", 1}, {"a", 2}, {"b", 1}, {"outer", 1}}));
}

TEST_F(RangesTest, RangesNestingWithCallsShareTheThreadsTrack) {
  auto b = siblings();
  b.call("zeInit", 150, 160);
  b.call("zeCommandListAppendLaunchKernel", 210, 290);
  gtap::readers::Capture c(write(b));
  std::vector<const gtap::readers::Capture*> captures{&c};
  std::vector<std::string> notes;
  auto t = gtap::readers::buildTimeline(captures, notes);
  uint64_t thread = 0;
  for (const auto& track : t.tracks) {
    EXPECT_NE(track.kind, TimelineTrack::Kind::ranges) << track.name;
    if (track.kind == TimelineTrack::Kind::hostThread) thread = track.id;
  }
  size_t ranges = 0;
  for (const auto& s : t.slices) {
    if (s.category != "range") continue;
    ++ranges;
    EXPECT_EQ(s.track, thread);
  }
  EXPECT_EQ(ranges, 4u);
}

TEST_F(RangesTest, RangesCrossingACallGetATrackOfTheirOwn) {
  gtap::test::ProfileCaptureBuilder b;
  b.range("callback", 200, 400);  // pushed inside the call below, popped after it
  b.call("zeCommandListHostSynchronize", 150, 250);
  gtap::readers::Capture c(write(b));
  std::vector<const gtap::readers::Capture*> captures{&c};
  std::vector<std::string> notes;
  auto t = gtap::readers::buildTimeline(captures, notes);
  const TimelineTrack* own = nullptr;
  uint64_t thread = 0;
  for (const auto& track : t.tracks) {
    if (track.kind == TimelineTrack::Kind::ranges) own = &track;
    if (track.kind == TimelineTrack::Kind::hostThread) thread = track.id;
  }
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->name, "thread 4242 ranges");
  for (const auto& s : t.slices) {
    if (s.category == "range") {
      EXPECT_EQ(s.track, own->id);
    } else if (s.category == "api") {
      EXPECT_EQ(s.track, thread);
    }
  }
  // Both exporters take the track: a thread of its own in Chrome's form.
  std::ostringstream chrome, perfetto;
  gtap::readers::writeChromeTrace(t, chrome);
  gtap::readers::writePerfettoTrace(t, perfetto);
  EXPECT_NE(chrome.str().find("\"thread 4242 ranges\""), std::string::npos) << chrome.str();
  EXPECT_NE(perfetto.str().find("thread 4242 ranges"), std::string::npos);
}

// A row naming a name the chunk does not have is skipped and said, naming the
// chunk, by the loader and by kernels --by=range; the good rows stand.
TEST_F(RangesTest, ARowWithABadNameIsSkippedAndSaid) {
  std::string path = (dir_ / "bad.gtap").string();
  {
    std::string error;
    auto w = gtap::format::CaptureWriter::create(path, error);
    ASSERT_TRUE(w) << error;
    capnp::MallocMessageBuilder info;
    info.initRoot<gtap::schema::FileInfo>().setPid(7);
    w->writeMessage(gtap::schema::ChunkKind::FILE_INFO, info);
    capnp::MallocMessageBuilder m;
    auto root = m.initRoot<gtap::schema::Ranges>();
    root.initNames(1).set(0, "good");
    auto rows = root.initRanges(2);
    rows[0].setBeginNs(10);
    rows[0].setEndNs(20);
    rows[1].setName(5);
    rows[1].setBeginNs(30);
    rows[1].setEndNs(40);
    w->writeMessage(gtap::schema::ChunkKind::RANGES, m);
    ASSERT_TRUE(w->close(0, 0, 0, "exit")) << w->error();
  }
  gtap::readers::Capture c(path);
  auto ranges = gtap::readers::loadRanges(c);
  ASSERT_EQ(ranges.ranges.size(), 1u);
  EXPECT_EQ(ranges.nameOf(ranges.ranges[0]), "good");
  ASSERT_EQ(ranges.problems.size(), 1u);
  EXPECT_NE(ranges.problems[0].find("chunk at offset"), std::string::npos) << ranges.problems[0];
  EXPECT_NE(ranges.problems[0].find("row 1: name 5 past the chunk's 1 names; skipped"), std::string::npos)
      << ranges.problems[0];
  std::vector<const gtap::readers::Capture*> captures{&c};
  std::vector<std::string> notes;
  gtap::readers::kernelRowsStreamed(captures, gtap::readers::KernelGrouping::range, false, notes);
  EXPECT_EQ(notes, ranges.problems);
}

}  // namespace
