// Inputs the fuzz targets (tests/fuzz, docs/testing.md) found, minimised and
// fed through the same calls as there (tests/fuzz/fuzz_inputs.h).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <capnp/message.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <vector>

#include "counter_capture_builder.h"
#include "fuzz_inputs.h"
#include "gtap/format/container.h"
#include "gtap/format/writer.h"

namespace {

// Keeps this process's address space within `extra` bytes of what it uses
// now. Run in a death-test child: a reader that sizes its buffers by a
// number the file declares, not by the bytes it holds, fails to allocate
// there (std::bad_alloc) instead of taking the machine's memory and time.
void limitAddressSpace(uint64_t extra) {
  uint64_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  uint64_t limit = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) + extra;
  rlimit r{limit, limit};
  if (setrlimit(RLIMIT_AS, &r) != 0) std::_Exit(3);
}

constexpr uint64_t kHeadroom = 256ull << 20;
// For a test that reads thousands of inputs in one child: AddressSanitizer
// keeps freed memory in quarantine (256 MiB by default) and maps its
// allocator's regions ahead, so its child needs more room than one read.
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kManyReadsHeadroom = 2048ull << 20;
#else
constexpr uint64_t kManyReadsHeadroom = kHeadroom;
#endif

// The fuzzing build skips chunk checksums (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION),
// so its findings carry stale ones: they are recomputed here, so that this
// build's reader reaches the same decoders.
std::vector<uint8_t> withChecksums(std::span<const uint8_t> input) {
  namespace f = gtap::format;
  std::vector<uint8_t> bytes(input.begin(), input.end());
  size_t at = f::kPreambleSize;
  while (at + f::kChunkHeaderSize <= bytes.size()) {
    uint8_t* h = bytes.data() + at;
    uint32_t magic, stored;
    std::memcpy(&magic, h, 4);
    std::memcpy(&stored, h + 8, 4);
    if (magic != f::kChunkMagic || stored > bytes.size() - at - f::kChunkHeaderSize) break;
    uint64_t sum = f::chunkChecksum(h, h + f::kChunkHeaderSize, stored);
    std::memcpy(h + 16, &sum, 8);
    at += f::kChunkHeaderSize + stored;
  }
  return bytes;
}

// capture_reader_fuzzer, a timeout: an apiEvents chunk declaring some four
// billion events in a few encoded bytes. The API summary reserved room for
// half that many calls before decoding any.
const uint8_t kDeclaredEventCount[] = {
    0x47, 0x54, 0x41, 0x50, 0x0d, 0x0a, 0x1a, 0x0a, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x47, 0x54, 0x43, 0x4b, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0f,
    0x75, 0x66, 0x6b, 0x00, 0x5c, 0x2f, 0x28, 0x02, 0x47, 0x54, 0x43, 0x4b, 0x03, 0x00, 0x01, 0x00,
    0x5c, 0x00, 0x00, 0x00, 0x98, 0x00, 0x00, 0x00, 0xcc, 0x28, 0x39, 0x3d, 0x43, 0x67, 0x21, 0xaa,
    0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x98, 0x9d, 0x02, 0x00, 0xb2, 0xc4, 0x0e, 0x17, 0xa0, 0x35, 0xe9,
    0xf3, 0x06, 0x55, 0x55, 0x6f, 0x05, 0x28, 0x6f, 0x8a, 0x64, 0x17, 0x0f, 0x6f, 0xc1, 0xcb, 0x42,
    0x7b, 0xef, 0xbd, 0x53, 0x5f, 0xb2, 0x46, 0xc1, 0xde, 0x4d, 0xec, 0x1d, 0x58, 0xd6, 0xb5, 0xd6,
    0x07, 0xcd, 0x5d, 0x2b, 0xf5, 0x31, 0x4a, 0xea, 0x04, 0xe0, 0xf7, 0x56, 0x5c, 0x03, 0x81, 0x1c,
    0x81, 0xcd, 0x4f, 0xd3, 0xb6, 0xf0, 0x1f, 0x09, 0x00, 0xe0, 0x08, 0xc8, 0x07, 0x06, 0x03, 0x99,
    0x00, 0xb2, 0x40, 0xa6, 0x96, 0x9d, 0x6d, 0x03, 0x78, 0x30, 0x50, 0x04,
};

TEST(FuzzRegression, ApiEventsDeclaringMoreEventsThanTheyHold) {
  EXPECT_EXIT(
      {
        limitAddressSpace(kHeadroom);
        gtap::fuzz::captureReader(withChecksums(kDeclaredEventCount));
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// replay_validate_fuzzer, a timeout: a blob chunk whose total size was
// changed to gigabytes while it holds a few bytes (the finding was a 33 KB
// replay capture the minimiser could not shrink: it is rebuilt here, from the
// format's writer, down to the one record and the one blob that matter).
// Resolving the module's payload allocated the declared size before finding
// that the file cannot fill it.
std::vector<uint8_t> blobDeclaringGigabytes() {
  namespace f = gtap::format;
  std::string path = ::testing::TempDir() + "blob-declaring-gigabytes-" + std::to_string(getpid()) + ".gtap";
  std::remove(path.c_str());
  std::string error;
  auto w = f::CaptureWriter::create(path, error);
  EXPECT_TRUE(w) << error;
  if (!w) return {};
  {
    capnp::MallocMessageBuilder m;
    m.initRoot<gtap::schema::FileInfo>().setMode("replay");
    w->writeMessage(gtap::schema::ChunkKind::FILE_INFO, m);
  }
  const uint8_t binary[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  {
    capnp::MallocMessageBuilder m;
    auto b = m.initRoot<gtap::schema::Blob>();
    b.setHashLow(0x1234);
    b.setHashHigh(0x5678);
    b.setTotalSize(uint64_t{3} << 30);
    b.setData(capnp::Data::Reader(binary, sizeof binary));
    w->writeMessage(gtap::schema::ChunkKind::BLOB, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto r = m.initRoot<gtap::schema::Replay>().initRecords(1)[0];
    r.setSeq(1);
    r.setOp(gtap::schema::ReplayOp::MODULE_CREATE);
    auto p = r.initPayload();
    p.setSize(sizeof binary);
    auto ref = p.initBlob();
    ref.setHashLow(0x1234);
    ref.setHashHigh(0x5678);
    ref.setSize(sizeof binary);
    w->writeMessage(gtap::schema::ChunkKind::REPLAY, m);
  }
  EXPECT_TRUE(w->close(0, 0, 0, "exit")) << w->error();
  w.reset();
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return bytes;
}

TEST(FuzzRegression, BlobDeclaringMoreBytesThanItsPartsHold) {
  std::vector<uint8_t> input = blobDeclaringGigabytes();
  ASSERT_FALSE(input.empty());
  EXPECT_EXIT(
      {
        limitAddressSpace(kHeadroom);
        std::string why = gtap::fuzz::replayValidate(input);
        // Refused for what it is, not for want of memory.
        std::_Exit(why.find("blob 0000000000005678") != std::string::npos &&
                           why.find("declares 3221225472 bytes, its parts in the file hold 16") != std::string::npos
                       ? 0
                       : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// The counter readers on hostile counter data (what capture_reader_fuzzer
// reaches from its counter seed): values naming no set, more or fewer values
// than counters, device metrics whose values are not one per metric per
// sample, non-finite reals, set ids at the limit; then every byte of that
// file changed in turn, checksums made right again so that the decoders see
// it. Each ends in an answer, never a crash.
TEST(FuzzRegression, HostileCountersAndDeviceMetrics) {
  gtap::test::CounterCaptureBuilder b;
  b.peakFlops = 1e12;
  b.peakBytes = 1e11;
  b.sets.push_back({1, "hsaAqlProfile", "", {{"SQ_WAVES"}, {"GRBM_COUNT", "cycles"}}});
  b.sets.push_back({0xffffffffu, "levelZeroMetricQuery", "G",
                    {{"FLOP", "flop", gtap::schema::CounterType::REAL},
                     {"BYTES_READ", "", gtap::schema::CounterType::SIGNED}}});
  b.kernel("good", 0, 100, 1, {4, 100}, {0, 0, 0});
  b.kernel("ghost", 200, 300, 7, {1, 2});
  b.kernel("long", 400, 500, 1, {1, 2, 3});
  b.kernel("short", 600, 700, 1, {1});
  b.kernel("reals", 800, 800, 0xffffffffu, {INFINITY, -5});
  b.kernel("nan", 900, 1000, 0xffffffffu, {NAN, 0});
  b.series.push_back({"sysman", 1, {{"a"}, {"b", "", true}}, {0, 0, -5}, {1, 2, 3, 4, 5}});
  b.series.push_back({"sysman", 1, {{"c", "", true}}, {5, 5, 1}, {NAN, INFINITY, -1}});
  b.series.push_back({"rocmSmi", 0, {}, {}, {}, "no device metrics: none here"});
  std::string path = ::testing::TempDir() + "hostile-counters-" + std::to_string(getpid()) + ".gtap";
  std::remove(path.c_str());
  ASSERT_EQ(b.write(path), "");
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  ASSERT_FALSE(bytes.empty());
  EXPECT_EXIT(
      {
        limitAddressSpace(kManyReadsHeadroom);
        gtap::fuzz::captureReader(bytes);
        for (size_t at = gtap::format::kPreambleSize; at < bytes.size(); ++at) {
          std::vector<uint8_t> changed = bytes;
          changed[at] ^= static_cast<uint8_t>(0x5a + at);
          gtap::fuzz::captureReader(withChecksums(changed));
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
