// Every reader entry point on crafted hostile captures (hostile_captures.h):
// each ends in a clean answer or an error naming the file (never another
// exception, a crash or a hang), and memory stays bounded.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtap/readers/api_stats.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/executables.h"
#include "gtap/readers/kernel_stats.h"
#include "gtap/readers/memory_stats.h"
#include "gtap/readers/overview.h"
#include "gtap/readers/replay_fields.h"
#include "gtap/readers/replay_stream.h"
#include "gtap/readers/replay_summary.h"
#include "gtap/readers/replayer.h"
#include "gtap/readers/timeline_builder.h"
#include "hostile_captures.h"

namespace gtap::test {
namespace {

std::vector<uint8_t> someKernels() {
  std::vector<uint8_t> k(3001);
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i * 7 + 3);
  return k;
}

std::string tempDir() {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-hostile-unit-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string writeFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  return path;
}

long maxRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// What the readers said about one file: errors thrown and notes made.
struct Outcome {
  std::vector<std::string> errors;
  std::vector<std::string> notes;
  bool all(const std::string& part) const {
    for (const auto& e : errors)
      if (e.find(part) == std::string::npos) return false;
    return true;
  }
  bool any(const std::string& part) const {
    for (const auto* list : {&errors, &notes})
      for (const auto& e : *list)
        if (e.find(part) != std::string::npos) return true;
    return false;
  }
};

// Runs `f`; a reader's own error (std::runtime_error and its kinds) is
// recorded, anything else (std::bad_alloc, std::length_error, ...) fails.
template <class F>
void guarded(const std::string& what, Outcome& out, F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    out.errors.push_back(e.what());
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not a reader's error: " << typeid(e).name() << ": " << e.what();
  } catch (...) {
    ADD_FAILURE() << what << ": unknown exception";
  }
}

Outcome readEverything(const std::string& path) {
  Outcome out;
  guarded(path + ": Capture", out, [&] {
    readers::Capture capture(path);
    guarded(path + ": summarizeApi", out, [&] { readers::summarizeApi({&capture}); });
    std::vector<readers::LoadedCapture> loaded;
    guarded(path + ": loadDeviceWork", out, [&] { loaded.push_back({&capture, readers::loadDeviceWork(capture)}); });
    if (!loaded.empty()) {
      guarded(path + ": overview", out, [&] { readers::overviewOf(loaded[0], 3); });
      guarded(path + ": kernels", out, [&] { readers::kernelRows(loaded, readers::KernelGrouping::shape, true); });
      guarded(path + ": memory", out, [&] {
        readers::allocationRows(loaded, false);
        readers::transferRows(loaded, false);
      });
      guarded(path + ": timeline", out, [&] { readers::buildTimeline(loaded); });
      guarded(path + ": streamed timeline", out, [&] {
        const readers::Capture* one[] = {&capture};
        std::vector<std::string> notes;
        readers::buildTimeline(one, notes);
      });
      guarded(path + ": executables", out, [&] { readers::executableRows(loaded, out.notes); });
      for (const auto& n : loaded[0].work.notes) out.notes.push_back(n);
    }
    guarded(path + ": replay", out, [&] {
      readers::ReplayStream stream = readers::loadReplayStream(capture);
      for (const auto& r : stream.records)
        for (const auto& f : readers::replayFields(r)) readers::fieldText(f);
      readers::summarizeReplay(capture, stream);
      for (const auto& [hash, parts] : stream.blobs) stream.blob(capture, hash);
      guarded(path + ": replay prepare", out, [&] {
        readers::Replayer replayer(capture, stream, {});
        replayer.prepare();
      });
    });
    for (const auto& n : capture.notes()) out.notes.push_back(n);
  });
  return out;
}

TEST(HostileCapture, EveryReaderEndsCleanlyOnEveryCraftedFile) {
  std::string dir = tempDir();
  std::string fifo = dir + "/payload.fifo";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  long before = maxRssKb();
  auto cases = hostile::allCases(someKernels(), fifo);
  ASSERT_GT(cases.size(), 100u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = writeFile(dir + "/" + c.name + ".gtap", c.bytes);
    Outcome out = readEverything(path);
    // Errors name the file (and so say which capture is damaged).
    EXPECT_TRUE(out.all(path)) << (out.errors.empty() ? "" : out.errors[0]);
    // The valid files read without a note (the profile-only one has no
    // replay stream, and nothing here has a driver to replay on).
    if (c.name.rfind("valid", 0) == 0) {
      EXPECT_TRUE(out.notes.empty()) << out.notes[0];
      for (const auto& e : out.errors)
        EXPECT_TRUE(e.find("holds no replay stream") != std::string::npos || e.find("zeInit") != std::string::npos ||
                    e.find("Level Zero") != std::string::npos)
            << e;
    }
    // A damaged or incomplete module binary is reported naming its blob.
    if (!c.mustName.empty()) {
      EXPECT_TRUE(out.any(c.mustName)) << c.mustName;
    }
    std::filesystem::remove(path);
  }
  // Memory stays proportional to the files (a few KiB each), never to what
  // they declare (GiBs).
  EXPECT_LT(maxRssKb() - before, 256 * 1024);
  std::filesystem::remove_all(dir);
}

TEST(HostileCapture, ApiEventsCountBeyondItsBytesIsNotedNotAllocated) {
  hostile::Hooks h;
  h.apiEvents = [](schema::ApiEvents::Builder e) { e.setCount(0xFFFFFFFF); };
  std::string path = writeFile(tempDir() + "/count.gtap", hostile::build(true, h, someKernels(), false));
  readers::Capture capture(path);
  uint64_t events = capture.forEachCall([](const readers::ApiCall&) {});
  EXPECT_EQ(0u, events);
  ASSERT_FALSE(capture.notes().empty());
  EXPECT_NE(std::string::npos, capture.notes()[0].find("count 4294967295")) << capture.notes()[0];
  EXPECT_NE(std::string::npos, capture.notes()[0].find("offset")) << capture.notes()[0];
}

TEST(HostileCapture, BlobDeclaringMoreThanItsPartsHoldIsRefusedBeforeAllocation) {
  hostile::Hooks h;
  h.blob = [](schema::Blob::Builder b, int) { b.setTotalSize(uint64_t{4} << 30); };
  auto kernels = someKernels();
  std::string path = writeFile(tempDir() + "/blob4g.gtap", hostile::build(true, h, kernels, false));
  readers::Capture capture(path);
  long before = maxRssKb();
  auto hash = format::contentHash(kernels.data(), kernels.size());
  try {
    capture.checkedBlob(hash);
    ADD_FAILURE() << "a blob declaring 4 GiB was assembled";
  } catch (const format::FormatError& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find(hash.hex())) << e.what();
    EXPECT_NE(std::string::npos, std::string(e.what()).find("declares 4294967296 bytes")) << e.what();
  }
  EXPECT_LT(maxRssKb() - before, 64 * 1024);
}

TEST(HostileCapture, BlobWhoseBytesDoNotMatchItsHashIsRefusedNamingIt) {
  hostile::Hooks h;
  h.blob = [](schema::Blob::Builder b, int part) {
    if (part) b.getData()[10] ^= 1;
  };
  auto kernels = someKernels();
  std::string path = writeFile(tempDir() + "/flip.gtap", hostile::build(false, h, kernels, true));
  readers::Capture capture(path);
  auto hash = format::contentHash(kernels.data(), kernels.size());
  EXPECT_THROW(capture.checkedBlob(hash), format::FormatError);
  EXPECT_FALSE(capture.blob(hash.low, hash.high).has_value());
  // Replay refuses the module before loading anything.
  readers::ReplayStream stream = readers::loadReplayStream(capture);
  readers::Replayer replayer(capture, stream, {});
  try {
    replayer.prepare();
    ADD_FAILURE() << "a module with flipped bits was accepted";
  } catch (const readers::ReplayError& e) {
    std::string what = e.what();
    EXPECT_NE(std::string::npos, what.find(hash.hex())) << what;
    EXPECT_NE(std::string::npos, what.find("moduleCreate")) << what;
    EXPECT_NE(std::string::npos, what.find("chunks at offsets")) << what;
  }
}

TEST(HostileCapture, FirstChunkWithBadChecksumIsReportedAsSuch) {
  hostile::Hooks h;
  h.header = [](uint16_t kind, format::ChunkHeader&, std::vector<uint8_t>&, bool& bad) {
    bad = kind == static_cast<uint16_t>(schema::ChunkKind::FILE_INFO);
  };
  std::string path = writeFile(tempDir() + "/sum.gtap", hostile::build(true, h, someKernels(), false));
  try {
    readers::Capture capture(path);
    ADD_FAILURE() << "opened";
  } catch (const format::FormatError& e) {
    std::string what = e.what();
    EXPECT_NE(std::string::npos, what.find("checksum mismatch in fileInfo chunk")) << what;
    EXPECT_NE(std::string::npos, what.find("offset 16")) << what;
  }
}

TEST(HostileCapture, DecompressionBombsAreBoundedByKind) {
  std::string dir = tempDir();
  // Record chunks: refused, expanding more than any record chunk does.
  {
    auto c = hostile::bomb(schema::ChunkKind::REPLAY, 1u << 30, "replay-bomb");
    std::string path = writeFile(dir + "/replay-bomb.gtap", c.bytes);
    readers::Capture capture(path);
    long before = maxRssKb();
    EXPECT_THROW(readers::loadReplayStream(capture), readers::ReplayStreamError);
    EXPECT_LT(maxRssKb() - before, 64 * 1024);
  }
  // Blob chunks: no larger than a blob part; larger ones end the walk.
  {
    auto c = hostile::bomb(schema::ChunkKind::BLOB, 1u << 30, "blob-bomb");
    std::string path = writeFile(dir + "/blob-bomb.gtap", c.bytes);
    readers::Capture capture(path);
    EXPECT_NE(std::string::npos, capture.recovery().stopReason.find("larger than any blob part"))
        << capture.recovery().stopReason;
    EXPECT_TRUE(capture.blobIndex().empty());
  }
}

TEST(HostileCapture, SpecialFilesAreRefusedAtOnce) {
  std::string dir = tempDir();
  std::string fifo = dir + "/capture.fifo";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  for (const std::string& path : {fifo, std::string("/dev/null"), dir}) {
    try {
      readers::Capture capture(path);
      ADD_FAILURE() << path << " opened";
    } catch (const format::FormatError& e) {
      EXPECT_NE(std::string::npos, std::string(e.what()).find("not a regular file")) << e.what();
    }
  }
  std::filesystem::remove(fifo);
}

}  // namespace
}  // namespace gtap::test
