// The 1.4 device-operation stream (format/include/gtap/format/device_ops.h):
// every field of every kind of operation comes back as it went in, whatever
// the previous row was; damaged streams are refused with the row named, and
// never read past their end.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "gtap/format/device_ops.h"

namespace {

using gtap::format::DeviceOpFields;
using gtap::format::OpBinding;
using gtap::format::OpSemaphore;
namespace schema = gtap::schema;

// An operation with owned parts, as a test writes and expects it.
struct Op {
  DeviceOpFields f;
  std::string note, operation;
  std::vector<uint8_t> arguments;
  std::vector<uint32_t> grid;
  std::vector<OpBinding> bindings;
  std::vector<OpSemaphore> waits, signals;
  std::vector<uint64_t> counterValues;
  std::vector<uint8_t> counterRaw;
  DeviceOpFields fields() const {
    DeviceOpFields out = f;
    out.note = note;
    out.operation = operation;
    out.arguments = arguments;
    out.grid = grid;
    out.bindings = bindings;
    out.waits = waits;
    out.signals = signals;
    out.counterValues = counterValues;
    out.counterRaw = counterRaw;
    return out;
  }
};

Op randomOp(std::mt19937_64& rng, int64_t& t) {
  auto pick = [&](uint64_t n) { return rng() % n; };
  // Values at both ends of their ranges as often as in between.
  auto wide = [&]() -> uint64_t {
    switch (pick(5)) {
      case 0: return 0;
      case 1: return ~uint64_t{0};
      case 2: return pick(200);
      case 3: return uint64_t{1} << pick(64);
      default: return rng();
    }
  };
  Op o;
  DeviceOpFields& f = o.f;
  f.kind = static_cast<schema::DeviceOpKind>(pick(5));
  f.timed = pick(2);
  f.device = pick(4) ? static_cast<uint32_t>(pick(3)) : ~0u;
  f.queue = pick(3) ? pick(4) : wide();
  f.list = pick(3) ? pick(4) : wide();
  f.kernel = pick(3) ? pick(4) : wide();
  for (auto& v : f.groupCount) v = pick(2) ? 1 : static_cast<uint32_t>(wide());
  for (auto& v : f.groupSize) v = pick(2) ? 64 : static_cast<uint32_t>(wide());
  f.bytes = pick(2) ? 0 : wide();
  f.direction = static_cast<schema::CopyDirection>(pick(5));
  f.thread = pick(3) ? static_cast<uint32_t>(pick(3)) : ~0u;
  f.appendIndex = pick(4) ? wide() : ~uint64_t{0};
  // Times jump back as often as forward (ops of several threads interleave).
  t += static_cast<int64_t>(pick(2000000)) - 500000;
  f.appendNs = pick(20) ? t : static_cast<int64_t>(wide());
  f.submitNs = pick(3) ? 0 : (pick(2) ? t + static_cast<int64_t>(pick(100000)) : static_cast<int64_t>(wide()));
  f.submitThread = pick(3) ? ~0u : static_cast<uint32_t>(pick(5));
  f.startTicks = pick(3) ? 0 : wide();
  f.endTicks = pick(2) ? f.startTicks + pick(10000) : wide();
  f.stack = pick(2) ? 0 : static_cast<uint32_t>(wide());
  f.completedNs = pick(2) ? 0 : (pick(2) ? t + 1000 : static_cast<int64_t>(wide()));
  f.packetHeader = pick(2) ? 0 : static_cast<uint16_t>(rng());
  f.queueIndex = pick(2) ? 0 : wide();
  f.recordedBy = static_cast<schema::Api>(pick(6));
  if (pick(3) == 0) o.note = std::string(pick(40), static_cast<char>('a' + pick(26)));
  if (pick(3) == 0) o.operation = pick(2) ? "queue_execute" : "dispatch";
  if (pick(3) == 0) o.arguments.resize(pick(300), static_cast<uint8_t>(rng()));
  if (pick(3) == 0) o.grid.assign(pick(4), static_cast<uint32_t>(wide()));
  if (pick(3) == 0)
    for (uint64_t i = pick(5); i > 0; --i)
      o.bindings.push_back({wide(), wide(), wide(), static_cast<uint32_t>(wide())});
  if (pick(3) == 0)
    for (uint64_t i = pick(4); i > 0; --i) o.waits.push_back({wide(), wide()});
  if (pick(3) == 0)
    for (uint64_t i = pick(4); i > 0; --i) o.signals.push_back({wide(), wide()});
  if (pick(3) == 0) {
    f.counterSet = pick(2) ? 1 + static_cast<uint32_t>(pick(3)) : ~0u;
    for (uint64_t i = pick(8); i > 0; --i) o.counterValues.push_back(wide());
    o.counterRaw.resize(pick(100), static_cast<uint8_t>(rng()));
  }
  return o;
}

void expectSame(const DeviceOpFields& a, const DeviceOpFields& b, size_t i) {
  SCOPED_TRACE("operation " + std::to_string(i));
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.timed, b.timed);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.queue, b.queue);
  EXPECT_EQ(a.list, b.list);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.groupCount, b.groupCount);
  EXPECT_EQ(a.groupSize, b.groupSize);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.direction, b.direction);
  EXPECT_EQ(a.thread, b.thread);
  EXPECT_EQ(a.appendIndex, b.appendIndex);
  EXPECT_EQ(a.appendNs, b.appendNs);
  EXPECT_EQ(a.submitNs, b.submitNs);
  EXPECT_EQ(a.submitThread, b.submitThread);
  EXPECT_EQ(a.startTicks, b.startTicks);
  EXPECT_EQ(a.endTicks, b.endTicks);
  EXPECT_EQ(a.stack, b.stack);
  EXPECT_EQ(a.completedNs, b.completedNs);
  EXPECT_EQ(a.note, b.note);
  EXPECT_EQ(std::vector<uint8_t>(a.arguments.begin(), a.arguments.end()),
            std::vector<uint8_t>(b.arguments.begin(), b.arguments.end()));
  EXPECT_EQ(a.packetHeader, b.packetHeader);
  EXPECT_EQ(a.queueIndex, b.queueIndex);
  EXPECT_EQ(std::vector<uint32_t>(a.grid.begin(), a.grid.end()), std::vector<uint32_t>(b.grid.begin(), b.grid.end()));
  EXPECT_EQ(a.recordedBy, b.recordedBy);
  EXPECT_EQ(std::vector<OpBinding>(a.bindings.begin(), a.bindings.end()),
            std::vector<OpBinding>(b.bindings.begin(), b.bindings.end()));
  EXPECT_EQ(a.operation, b.operation);
  EXPECT_EQ(std::vector<OpSemaphore>(a.waits.begin(), a.waits.end()),
            std::vector<OpSemaphore>(b.waits.begin(), b.waits.end()));
  EXPECT_EQ(std::vector<OpSemaphore>(a.signals.begin(), a.signals.end()),
            std::vector<OpSemaphore>(b.signals.begin(), b.signals.end()));
  EXPECT_EQ(a.counterSet, b.counterSet);
  EXPECT_EQ(std::vector<uint64_t>(a.counterValues.begin(), a.counterValues.end()),
            std::vector<uint64_t>(b.counterValues.begin(), b.counterValues.end()));
  EXPECT_EQ(std::vector<uint8_t>(a.counterRaw.begin(), a.counterRaw.end()),
            std::vector<uint8_t>(b.counterRaw.begin(), b.counterRaw.end()));
}

struct Decoded {
  std::string problem;
  std::vector<Op> ops;
};

Decoded decode(const std::vector<uint8_t>& bytes, uint32_t count) {
  Decoded d;
  d.problem = gtap::format::decodeDeviceOps(bytes.data(), bytes.size(), count, [&](const DeviceOpFields& f) {
    Op o;
    o.f = f;
    o.note = f.note;
    o.operation = f.operation;
    o.arguments.assign(f.arguments.begin(), f.arguments.end());
    o.grid.assign(f.grid.begin(), f.grid.end());
    o.bindings.assign(f.bindings.begin(), f.bindings.end());
    o.waits.assign(f.waits.begin(), f.waits.end());
    o.signals.assign(f.signals.begin(), f.signals.end());
    o.counterValues.assign(f.counterValues.begin(), f.counterValues.end());
    o.counterRaw.assign(f.counterRaw.begin(), f.counterRaw.end());
    d.ops.push_back(std::move(o));
  });
  return d;
}

TEST(DeviceOpStream, EveryFieldOfEveryOperationRoundTrips) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    int64_t t = 1'000'000'000;
    std::vector<Op> ops;
    gtap::format::DeviceOpEncoder enc;
    // Reused between chunks, as the writer does: each chunk starts afresh.
    for (int chunk = 0; chunk < 2; ++chunk) {
      enc.reset();
      ops.clear();
      for (int i = 0; i < 300; ++i) {
        ops.push_back(randomOp(rng, t));
        enc.add(ops.back().fields());
      }
      std::vector<uint8_t> bytes(enc.bytes().begin(), enc.bytes().end());
      ASSERT_EQ(enc.count(), ops.size());
      Decoded back = decode(bytes, enc.count());
      ASSERT_EQ(back.problem, "");
      ASSERT_EQ(back.ops.size(), ops.size());
      for (size_t i = 0; i < ops.size(); ++i) expectSame(back.ops[i].fields(), ops[i].fields(), i);
    }
  }
}

// A run of launches of one kernel on one list, the common case, costs a few
// bytes each: only what changes is written.
TEST(DeviceOpStream, ALaunchLikeItsPredecessorTakesAFewBytes) {
  gtap::format::DeviceOpEncoder enc;
  DeviceOpFields f;
  f.device = 0;
  f.queue = 7;
  f.list = 9;
  f.kernel = 12;
  f.groupCount = {1, 1, 1};
  f.groupSize = {64, 1, 1};
  f.thread = 0;
  f.timed = true;
  for (int i = 0; i < 1000; ++i) {
    f.appendIndex = 100 + 3 * static_cast<uint64_t>(i);
    f.appendNs = 5'000'000'000 + 900 * i;
    f.submitNs = f.appendNs + 40'000;
    f.completedNs = f.submitNs + 60'000;
    f.startTicks = 9'000'000 + 1000 * static_cast<uint64_t>(i);
    f.endTicks = f.startTicks + 120;
    enc.add(f);
  }
  // The first row carries the ids and absolute times; the rest differences.
  EXPECT_LT(enc.bytes().size(), 1000u * 16);
  Decoded back = decode({enc.bytes().begin(), enc.bytes().end()}, enc.count());
  ASSERT_EQ(back.problem, "");
  ASSERT_EQ(back.ops.size(), 1000u);
  expectSame(back.ops.back().fields(), f, 999);
}

TEST(DeviceOpStream, DamageIsNamedAndNeverReadPast) {
  std::mt19937_64 rng(7);
  int64_t t = 0;
  gtap::format::DeviceOpEncoder enc;
  for (int i = 0; i < 40; ++i) enc.add(randomOp(rng, t).fields());
  std::vector<uint8_t> bytes(enc.bytes().begin(), enc.bytes().end());
  // Every cut: refused (never a crash, never a read past the cut, which
  // AddressSanitizer builds would see: the copy holds exactly the cut bytes).
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    Decoded back = decode(part, enc.count());
    EXPECT_NE(back.problem, "") << "cut at " << cut;
    EXPECT_LT(back.ops.size(), 40u);
  }
  // A count larger than the bytes can hold sizes nothing.
  EXPECT_NE(decode(bytes, 0xffffffffu).problem.find("at most"), std::string::npos);
  // Fewer rows than the bytes hold: the rest is named.
  EXPECT_NE(decode(bytes, 39).problem.find("bytes left after 39 operations"), std::string::npos);
  // Field bits no writer sets.
  std::vector<uint8_t> unknown{0x80, 0x80, 0x80, 0x80, 0x40, 0x00};
  EXPECT_NE(decode(unknown, 1).problem.find("unknown field bits"), std::string::npos);
  // A list longer than the stream.
  gtap::format::DeviceOpEncoder one;
  DeviceOpFields f;
  std::vector<OpSemaphore> waits{{1, 2}};
  f.waits = waits;
  one.add(f);
  std::vector<uint8_t> longList(one.bytes().begin(), one.bytes().end());
  // The row: its head (the waits bit alone), then the waits' count, the
  // semaphore, the value, and the time.
  size_t countAt = longList.size() - 4;  // count, semaphore, value, time
  ASSERT_EQ(longList[countAt], 1);
  longList[countAt] = 100;
  EXPECT_NE(decode(longList, 1).problem.find("waits: 100 entries cannot fit"), std::string::npos);
  // Random damage anywhere: refused or read, never past the end.
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> copy = bytes;
    for (int k = 0; k < 3; ++k) copy[rng() % copy.size()] = static_cast<uint8_t>(rng());
    Decoded back = decode(copy, enc.count());
    EXPECT_LE(back.ops.size(), 40u);
  }
}

}  // namespace

// A visitor that returns false stops the decoding there: the rows after it
// are not decoded, and their damage is not reported (a streaming reader that
// has what it wanted reads no further); a visitor that returns nothing sees
// every row.
TEST(DeviceOpStream, AVisitorThatSaysStopEndsTheDecoding) {
  std::mt19937_64 rng(7);
  int64_t t = 1'000'000'000;
  std::vector<Op> ops;
  gtap::format::DeviceOpEncoder enc;
  for (int i = 0; i < 100; ++i) {
    ops.push_back(randomOp(rng, t));
    enc.add(ops.back().fields());
  }
  std::vector<uint8_t> bytes(enc.bytes().begin(), enc.bytes().end());
  std::vector<uint8_t> damaged(bytes.begin(), bytes.end() - 3);  // the last row cut short
  for (uint32_t stopAfter : {1u, 40u, 99u}) {
    SCOPED_TRACE("stop after " + std::to_string(stopAfter));
    uint32_t seen = 0;
    std::string problem = gtap::format::decodeDeviceOps(damaged.data(), damaged.size(), enc.count(),
                                                        [&](const DeviceOpFields& f) {
                                                          expectSame(f, ops[seen].fields(), seen);
                                                          return ++seen < stopAfter;
                                                        });
    EXPECT_EQ(problem, "");
    EXPECT_EQ(seen, stopAfter);
  }
  Decoded all = decode(damaged, enc.count());
  EXPECT_NE(all.problem, "");
  EXPECT_EQ(all.ops.size(), 99u);
}
