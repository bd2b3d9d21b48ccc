// HSA replay in process on the simulated HSA runtime: replay streams built
// record by record (typed, as gtap writes them) with captured addresses far
// from any the replay gets, so that every address the device uses must have
// been translated. Nothing here opens the Level Zero loader (ctest points it
// at a driver that does not exist): an HSA-only stream must not need it.
#include <capnp/message.h>
#include <gtest/gtest.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <msgpack.hpp>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "gtap/format/writer.h"
#include "gtap/readers/replay_stream.h"
#include "gtap/readers/replayer.h"
#include "synthetic_code_object.h"

namespace gtap::test {
namespace {

using Record = schema::ReplayRecord::Builder;

const std::string kSimIsa =
#if defined(__x86_64__)
    "gtap-sim-host-x86_64";
#else
    "gtap-sim-host-aarch64";
#endif

// Captured addresses: nowhere near what the replay's runtime hands out.
constexpr uint64_t kA = 0x100000000000, kB = kA + 0x10000, kC = kA + 0x20000, kKernarg = kA + 0x30000;
constexpr uint64_t kLock = kA + 0x40000, kLockAgent = kA + 0x50000, kDevice = kA + 0x60000;
constexpr uint64_t kHost = 0x300000000000, kQueue = 0x200000000000;
constexpr uint32_t kN = 1024;

constexpr uint16_t kDispatchHeader =
    (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);

std::vector<uint8_t> fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class T>
std::vector<uint8_t> bytesOf(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Typed replay records, written as one replay chunk of a capture file.
class HsaStreamBuilder {
 public:
  enum class Payload { none, inlineBytes, blob };
  struct Built {
    uint64_t seq = 0;
    std::function<void(Record)> fill;
    Payload kind = Payload::none;
    std::vector<uint8_t> bytes;
  };

  // Adds a record with the next seq; returns the seq.
  uint64_t add(std::function<void(Record)> fill, Payload kind = Payload::none, std::vector<uint8_t> bytes = {}) {
    records_.push_back({records_.size() + 1, std::move(fill), kind, std::move(bytes)});
    return records_.back().seq;
  }

  std::string write(const std::string& path) const {
    std::string error;
    auto w = format::CaptureWriter::create(path, error);
    if (!w) return error;
    {
      capnp::MallocMessageBuilder m;
      auto info = m.initRoot<schema::FileInfo>();
      info.setPid(4242);
      info.setMode("replay");
      w->writeMessage(schema::ChunkKind::FILE_INFO, m);
    }
    std::vector<format::Hash128> hashes(records_.size());
    for (size_t i = 0; i < records_.size(); ++i)
      if (records_[i].kind == Payload::blob) hashes[i] = w->writeBlob(records_[i].bytes.data(), records_[i].bytes.size());
    capnp::MallocMessageBuilder m;
    auto list = m.initRoot<schema::Replay>().initRecords(static_cast<unsigned>(records_.size()));
    for (size_t i = 0; i < records_.size(); ++i) {
      const Built& b = records_[i];
      auto out = list[static_cast<unsigned>(i)];
      out.setSeq(b.seq);
      out.setFunction(~0u);
      auto p = out.initPayload();
      if (b.kind == Payload::none) {
        p.setNone();
      } else if (b.kind == Payload::inlineBytes) {
        p.setSize(b.bytes.size());
        p.setInline(capnp::Data::Reader(b.bytes.data(), b.bytes.size()));
      } else {
        p.setSize(b.bytes.size());
        auto ref = p.initBlob();
        ref.setHashLow(hashes[i].low);
        ref.setHashHigh(hashes[i].high);
        ref.setSize(b.bytes.size());
      }
      b.fill(out);
    }
    w->writeMessage(schema::ChunkKind::REPLAY, m);
    if (!w->close(0, 0, 0, "exit")) return w->error();
    return "";
  }

 private:
  std::vector<Built> records_;
};

// The ids the streams below use.
enum : uint64_t {
  kCpu = 1, kGpu, kHostPool, kKernargPool, kDevicePool, kAllocA, kAllocB, kAllocC, kAllocKernarg, kSignal, kQueueId,
  kCodeObject, kExecutable, kKernel, kLockId, kDeviceAlloc
};

void agents(HsaStreamBuilder& s, const std::string& gpuIsa = kSimIsa) {
  s.add([](Record r) {
    auto a = r.initHsaAgent();
    a.setAgent(kCpu);
    a.setIndex(0);
    a.setDeviceType(HSA_DEVICE_TYPE_CPU);
    a.setName("gtap-sim-cpu");
  });
  s.add([gpuIsa](Record r) {
    auto a = r.initHsaAgent();
    a.setAgent(kGpu);
    a.setIndex(1);
    a.setDeviceType(HSA_DEVICE_TYPE_GPU);
    a.setName("gtap-sim-gpu");
    a.setIsa(gpuIsa);
  });
}

void pool(HsaStreamBuilder& s, uint64_t id, uint64_t agent, uint32_t flags) {
  s.add([=](Record r) {
    auto p = r.initHsaPool();
    p.setPool(id);
    p.setAgent(agent);
    p.setSegment(HSA_AMD_SEGMENT_GLOBAL);
    p.setGlobalFlags(flags);
    p.setOrdinal(0);
  });
}

void allocate(HsaStreamBuilder& s, uint64_t id, uint64_t poolId, uint64_t size, uint64_t address, bool host) {
  s.add([=](Record r) {
    auto a = r.initHsaAllocate();
    a.setAllocation(id);
    a.setPool(poolId);
    a.setSize(size);
    a.setAddress(address);
    a.setHostAccessible(host);
  });
}

void hostData(HsaStreamBuilder& s, uint64_t id, uint64_t offset, std::vector<uint8_t> bytes) {
  s.add(
      [=](Record r) {
        auto h = r.initHostData();
        h.setAllocation(id);
        h.setOffset(offset);
      },
      HsaStreamBuilder::Payload::blob, std::move(bytes));
}

void signalCreate(HsaStreamBuilder& s, uint64_t id, int64_t initial) {
  s.add([=](Record r) {
    auto c = r.initHsaSignalCreate();
    c.setSignal(id);
    c.setInitialValue(initial);
  });
}

void waitBelowOne(HsaStreamBuilder& s, uint64_t signal) {
  s.add([=](Record r) {
    auto w = r.initHsaSignalWait();
    w.initSignals(1).set(0, signal);
    w.initConditions(1).set(0, HSA_SIGNAL_CONDITION_LT);
    w.initValues(1).set(0, 1);
  });
}

void storeSignal(HsaStreamBuilder& s, uint64_t signal, int64_t value) {
  s.add([=](Record r) {
    auto o = r.initHsaSignalOp();
    o.setSignal(signal);
    o.setOp(0);
    o.setValue(value);
  });
}

void readBackAllocation(HsaStreamBuilder& s, uint64_t id, uint64_t offset, std::vector<uint8_t> bytes) {
  s.add(
      [=](Record r) {
        auto b = r.initReadBack();
        b.setAllocation(id);
        b.setOffset(offset);
      },
      HsaStreamBuilder::Payload::blob, std::move(bytes));
}

// The queue and the loaded code object, up to the kernel `symbol`.
void queueAndKernel(HsaStreamBuilder& s, std::vector<uint8_t> codeObject, const std::string& symbol,
                    uint32_t kernargSize) {
  s.add([](Record r) {
    auto q = r.initHsaQueueCreate();
    q.setQueue(kQueueId);
    q.setAgent(kGpu);
    q.setSize(64);
    q.setType(HSA_QUEUE_TYPE_MULTI);
    q.setPrivateSegmentSize(UINT32_MAX);
    q.setGroupSegmentSize(UINT32_MAX);
    q.setAddress(kQueue);
  });
  s.add([](Record r) { r.initHsaCodeObject().setCodeObject(kCodeObject); }, HsaStreamBuilder::Payload::blob,
        std::move(codeObject));
  s.add([](Record r) { r.initHsaExecutableCreate().setExecutable(kExecutable); });
  s.add([](Record r) {
    auto l = r.initHsaExecutableLoad();
    l.setExecutable(kExecutable);
    l.setAgent(kGpu);
    l.setCodeObject(kCodeObject);
  });
  s.add([](Record r) { r.initHsaExecutableFreeze().setExecutable(kExecutable); });
  s.add([=](Record r) {
    auto k = r.initHsaKernel();
    k.setKernel(kKernel);
    k.setExecutable(kExecutable);
    k.setAgent(kGpu);
    k.setCodeObject(kCodeObject);
    k.setSymbol(symbol);
    k.setObject(0xdead0000);
    k.setKernargSize(kernargSize);
    k.setKernargAlignment(16);
  });
}

// One dispatch of `kernel` on the queue, with 8-byte pointers (kind 0) at
// `pointerOffsets` in `kernarg`.
void dispatch(HsaStreamBuilder& s, std::vector<uint8_t> kernarg, std::vector<uint32_t> pointerOffsets,
              uint64_t kernargAddress, uint32_t workgroup, uint32_t grid, uint32_t groupSegment = 0) {
  s.add(
      [=](Record r) {
        auto d = r.initHsaDispatch();
        d.setQueue(kQueueId);
        d.setHeader(kDispatchHeader);
        d.setSetup(1);
        auto wg = d.initWorkgroup();
        wg.setX(workgroup);
        wg.setY(1);
        wg.setZ(1);
        auto g = d.initGrid();
        g.setX(grid);
        g.setY(1);
        g.setZ(1);
        d.setGroupSegmentSize(groupSegment);
        d.setKernel(kKernel);
        d.setKernargAddress(kernargAddress);
        d.setSignal(kSignal);
        auto list = d.initPointers(static_cast<unsigned>(pointerOffsets.size()));
        for (unsigned i = 0; i < pointerOffsets.size(); ++i) {
          list[i].setOffset(pointerOffsets[i]);
          list[i].setSize(8);
          list[i].setKind(0);
        }
      },
      HsaStreamBuilder::Payload::inlineBytes, std::move(kernarg));
}

std::vector<float> iota(float scale) {
  std::vector<float> v(kN);
  for (uint32_t i = 0; i < kN; ++i) v[i] = scale * static_cast<float>(i);
  return v;
}

struct VectorAdd {
  std::string gpuIsa = kSimIsa;
  uint64_t bPointer = kB;                 // what the kernarg segment holds for b
  bool kernargInAllocation = true;        // else: in memory the capture did not record
  uint32_t hostPoolFlags = HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED;
  std::vector<float> readBack = iota(3);  // what the program saw in c
  uint64_t readBackFrom = 0;              // element
  std::vector<uint8_t> codeObject = fileBytes(GTAP_TEST_HSA_KERNELS);
  std::string symbol = "vector_add.kd";
  uint32_t workgroup = 256;
  std::function<void(HsaStreamBuilder&)> beforeDispatch, afterDispatch;
};

// c = a + b on 1024 floats (a[i] = i, b[i] = 2i), waited for, c read back.
HsaStreamBuilder vectorAdd(const VectorAdd& v) {
  HsaStreamBuilder s;
  agents(s, v.gpuIsa);
  pool(s, kHostPool, kCpu, v.hostPoolFlags);
  pool(s, kKernargPool, kCpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT | HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  allocate(s, kAllocA, kHostPool, kN * 4, kA, true);
  allocate(s, kAllocB, kHostPool, kN * 4, kB, true);
  allocate(s, kAllocC, kHostPool, kN * 4, kC, true);
  allocate(s, kAllocKernarg, kKernargPool, 64, kKernarg, true);
  signalCreate(s, kSignal, 1);
  queueAndKernel(s, v.codeObject, v.symbol, 32);
  hostData(s, kAllocA, 0, bytesOf(iota(1)));
  hostData(s, kAllocB, 0, bytesOf(iota(2)));
  struct {
    uint64_t a, b, c;
    uint32_t n, pad;
  } args{kA, v.bPointer, kC, kN, 0};
  std::vector<uint8_t> kernarg(sizeof args);
  std::memcpy(kernarg.data(), &args, sizeof args);
  // The program wrote the segment into its kernarg allocation: the page is
  // host data like any other, with the captured (untranslated) pointers.
  if (v.kernargInAllocation) hostData(s, kAllocKernarg, 0, kernarg);
  if (v.beforeDispatch) v.beforeDispatch(s);
  dispatch(s, kernarg, {0, 8, 16}, v.kernargInAllocation ? kKernarg : kA + 0x7000000, v.workgroup, kN);
  if (v.afterDispatch) v.afterDispatch(s);
  waitBelowOne(s, kSignal);
  std::vector<float> seen(v.readBack.begin() + static_cast<long>(v.readBackFrom), v.readBack.end());
  readBackAllocation(s, kAllocC, v.readBackFrom * 4, bytesOf(seen));
  return s;
}

class HsaReplayer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gtap-hsa-replayer-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const HsaStreamBuilder& s, const std::string& name = "stream.gtap") {
    std::string path = (dir_ / name).string();
    std::string error = s.write(path);
    EXPECT_EQ(error, "");
    return path;
  }

  static readers::ReplayOptions options() {
    readers::ReplayOptions o;
    o.verify = true;
    o.hsaRuntime = GTAP_TEST_SIM_HSA_RUNTIME;
    return o;
  }

  // Replays the file `runs` times on one Replayer; the last run's result.
  readers::ReplayResult replay(const std::string& file, readers::ReplayOptions o = options(), int runs = 1,
                               const readers::ReplayCallbacks& callbacks = {}) {
    readers::Capture capture(file);
    auto stream = readers::loadReplayStream(capture);
    readers::Replayer replayer(capture, stream, o);
    replayer.prepare();
    readers::ReplayResult result;
    for (int i = 0; i < runs; ++i) result = replayer.run(callbacks);
    return result;
  }

  // The ReplayError replaying the file gives ("" when it replays).
  std::string refusal(const std::string& file, readers::ReplayOptions o = options()) {
    try {
      replay(file, o);
    } catch (const readers::ReplayError& e) {
      return e.what();
    }
    return "";
  }

  std::string stringOf(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

  std::filesystem::path dir_;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(HsaReplayer, DispatchesWithTranslatedKernargsAndEveryReadBackMatches) {
  std::string file = write(vectorAdd({}));
  // Twice on one replayer, as bench does: each run makes and destroys its own.
  readers::ReplayResult r = replay(file, options(), 2);
  EXPECT_EQ(r.kernels, 1u);
  EXPECT_EQ(r.readBacks, 1u);
  EXPECT_TRUE(r.mismatches.empty());
  EXPECT_GT(r.records, 20u);
}

TEST_F(HsaReplayer, KernargSegmentOutsideEveryAllocationGoesToKernargMemory) {
  VectorAdd v;
  v.kernargInAllocation = false;
  readers::ReplayResult r = replay(write(vectorAdd(v)));
  EXPECT_EQ(r.kernels, 1u);
  EXPECT_TRUE(r.mismatches.empty());
}

// Host data rewriting the page that holds an earlier dispatch's segment with
// the program's bytes (its untranslated pointers) keeps the translation.
TEST_F(HsaReplayer, HostDataOverAKernargSegmentKeepsItTranslated) {
  VectorAdd v;
  v.afterDispatch = [](HsaStreamBuilder& s) {
    struct {
      uint64_t a, b, c;
      uint32_t n, pad;
    } args{kA, kB, kC, kN, 0};
    std::vector<uint8_t> page(64, 0);
    std::memcpy(page.data(), &args, sizeof args);
    page[40] = 7;  // a change elsewhere in the allocation brought the page back
    hostData(s, kAllocKernarg, 0, page);
  };
  readers::ReplayResult r = replay(write(vectorAdd(v)));
  EXPECT_TRUE(r.mismatches.empty());
}

TEST_F(HsaReplayer, ADifferentReadBackIsAMismatchAtItsOffset) {
  VectorAdd v;
  v.readBackFrom = 256;                // the read-back covers c[256..1023], bytes 1024..4095
  v.readBack[300] = 0.1f;              // the program saw another value in c[300]: every byte differs
  readers::ReplayResult r = replay(write(vectorAdd(v)));
  EXPECT_EQ(r.readBacks, 1u);
  ASSERT_EQ(r.mismatches.size(), 1u);
  const auto& m = r.mismatches[0];
  EXPECT_EQ(m.allocation, kAllocC);
  EXPECT_EQ(m.copySeq, 0u);
  EXPECT_EQ(m.offset, 1024u);
  EXPECT_EQ(m.size, 3072u);
  EXPECT_EQ(m.firstOffset, (300u - 256u) * 4u) << "c[300]'s first byte, counted from the read-back's start";
  EXPECT_EQ(m.differing, 4u);
  // Without --verify nothing is compared.
  auto o = options();
  o.verify = false;
  r = replay(write(vectorAdd(v), "again.gtap"), o);
  EXPECT_EQ(r.readBacks, 0u);
  EXPECT_TRUE(r.mismatches.empty());
}

TEST_F(HsaReplayer, AnAddressInNoAllocationIsRefusedNamingTheOffset) {
  VectorAdd v;
  v.bPointer = 0x123450000;
  std::string e = refusal(write(vectorAdd(v)));
  EXPECT_TRUE(contains(e, "(hsaDispatch)")) << e;
  EXPECT_TRUE(contains(e, "0x123450000 at offset 8")) << e;
  EXPECT_TRUE(contains(e, "lies in no live captured allocation or locked range")) << e;
}

TEST_F(HsaReplayer, AnAgentTheRuntimeLacksIsRefusedBeforeAnythingRuns) {
  VectorAdd v;
  v.gpuIsa = "amdgcn-amd-amdhsa--gfx90a:xnack-";
  std::string file = write(vectorAdd(v));
  readers::Capture capture(file);
  auto stream = readers::loadReplayStream(capture);
  readers::Replayer replayer(capture, stream, options());
  try {
    replayer.prepare();
    FAIL() << "prepare accepted a GPU agent of another ISA";
  } catch (const readers::ReplayError& e) {
    std::string m = e.what();
    EXPECT_TRUE(contains(m, "GPU agent 2 \"gtap-sim-gpu\" (ISA amdgcn-amd-amdhsa--gfx90a:xnack-)")) << m;
    EXPECT_TRUE(contains(m, "1 GPU \"gtap-sim-gpu\" (ISA " + kSimIsa + ")")) << m;
  }
  auto o = options();
  o.device = 1;
  std::string e = refusal(write(vectorAdd({}), "device.gtap"), o);
  EXPECT_TRUE(contains(e, "--device 1: this HSA runtime has 1 GPU agent(s)")) << e;
  o.device = 0;
  EXPECT_EQ(refusal(write(vectorAdd({}), "device0.gtap"), o), "");
}

TEST_F(HsaReplayer, APoolTheAgentLacksIsRefused) {
  VectorAdd v;
  v.hostPoolFlags = 0x40;
  std::string e = refusal(write(vectorAdd(v)));
  EXPECT_TRUE(contains(e, "pool " + std::to_string(kHostPool) + ", global pool with global flags 0x40")) << e;
  EXPECT_TRUE(contains(e, "0 such pool(s)")) << e;
}

TEST_F(HsaReplayer, AWaitThatNeverHoldsGivesUpNamingTheSignal) {
  HsaStreamBuilder s;
  agents(s);
  signalCreate(s, kSignal, 1);
  waitBelowOne(s, kSignal);
  auto o = options();
  o.waitTimeoutNs = 300'000'000;
  auto start = std::chrono::steady_clock::now();
  std::string e = refusal(write(s), o);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
  EXPECT_TRUE(contains(e, "signal " + std::to_string(kSignal) + " still holds 1 after 0.3 s waiting for it to be < 1"))
      << e;
}

// A locked range and device memory: copies in both directions with a
// captured completion signal, a synchronous copy from memory the capture did
// not record (its bytes in the payload), a fill, and read-backs of the copy's
// own destination and of the locked range.
TEST_F(HsaReplayer, CopiesFillsAndLockedMemory) {
  HsaStreamBuilder s;
  agents(s);
  pool(s, kDevicePool, kGpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
  s.add([](Record r) {
    auto l = r.initHsaLock();
    l.setLock(kLockId);
    l.setAddress(kLock);
    l.setSize(kN * 4);
    l.setAgentAddress(kLockAgent);
  });
  hostData(s, kLockId, 0, bytesOf(iota(1)));
  allocate(s, kDeviceAlloc, kDevicePool, kN * 4, kDevice, false);
  signalCreate(s, kSignal, 1);
  auto copy = [&](uint64_t dst, uint64_t dstAgent, uint64_t src, uint64_t srcAgent, uint64_t size, bool sync,
                  std::vector<uint8_t> payload = {}) {
    return s.add(
        [=](Record r) {
          auto c = r.initHsaCopy();
          c.setDst(dst);
          c.setDstAgent(dstAgent);
          c.setSrc(src);
          c.setSrcAgent(srcAgent);
          c.setSize(size);
          c.setSignal(sync ? uint64_t{0} : uint64_t{kSignal});
          c.setSynchronous(sync);
        },
        payload.empty() ? HsaStreamBuilder::Payload::none : HsaStreamBuilder::Payload::inlineBytes, payload);
  };
  copy(kDevice, kGpu, kLockAgent, kCpu, kN * 4, false);
  waitBelowOne(s, kSignal);
  storeSignal(s, kSignal, 1);
  copy(kDevice + 1024, 0, kHost + 0x1000, 0, 64, true, std::vector<uint8_t>(64, 0xab));
  s.add([](Record r) {
    auto f = r.initHsaFill();
    f.setDst(kDevice);
    f.setValue(0x3f800000);  // 1.0f
    f.setCount(16);
  });
  uint64_t back = copy(kHost, kCpu, kDevice, kGpu, kN * 4, false);
  waitBelowOne(s, kSignal);
  std::vector<float> expected = iota(1);
  for (int i = 0; i < 16; ++i) expected[i] = 1.0f;
  std::vector<uint8_t> expectedBytes = bytesOf(expected);
  std::memset(expectedBytes.data() + 1024, 0xab, 64);
  s.add(
      [=](Record r) {
        auto b = r.initReadBack();
        b.setCopy(back);
        b.setDst(kHost);
      },
      HsaStreamBuilder::Payload::blob, expectedBytes);
  readBackAllocation(s, kLockId, 0, bytesOf(iota(1)));
  s.add([](Record r) { r.initHsaUnlock().setLock(kLockId); });
  s.add([](Record r) {
    auto f = r.initHsaFree();
    f.setAllocation(kDeviceAlloc);
    f.setAddress(kDevice);
  });
  s.add([](Record r) { r.initHsaSignalDestroy().setSignal(kSignal); });
  readers::ReplayResult r = replay(write(s));
  EXPECT_EQ(r.readBacks, 2u);
  EXPECT_TRUE(r.mismatches.empty()) << "first mismatch at " << (r.mismatches.empty() ? 0 : r.mismatches[0].firstOffset);
}

// Bench's scope windows: synchronizeAll inside the callbacks waits for the
// dispatch between them (spin busies its one work-group for 200 ms).
TEST_F(HsaReplayer, SynchronizeAllWaitsForDispatchedWork) {
  HsaStreamBuilder s;
  agents(s);
  pool(s, kHostPool, kCpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  allocate(s, kAllocA, kHostPool, 64, kA, true);
  signalCreate(s, kSignal, 1);
  queueAndKernel(s, fileBytes(GTAP_TEST_HSA_KERNELS), "spin.kd", 16);
  s.add([](Record r) { r.initScopeBegin().setScope("spin"); });
  struct {
    uint64_t ns, marks;
  } args{200'000'000, kA};
  std::vector<uint8_t> kernarg(sizeof args);
  std::memcpy(kernarg.data(), &args, sizeof args);
  dispatch(s, kernarg, {8}, kA + 0x7000000, 1, 1);
  s.add([](Record r) { r.initScopeEnd().setScope("spin"); });
  waitBelowOne(s, kSignal);
  readBackAllocation(s, kAllocA, 0, bytesOf(std::vector<uint32_t>{1}));
  std::string file = write(s);
  readers::Capture capture(file);
  auto stream = readers::loadReplayStream(capture);
  auto o = options();
  o.requiredScopes = {"spin"};
  readers::Replayer replayer(capture, stream, o);
  replayer.prepare();
  std::chrono::steady_clock::time_point begin, end;
  readers::ReplayCallbacks callbacks;
  callbacks.scopeBegin = [&](const readers::ReplayRecord&) {
    replayer.synchronizeAll();
    begin = std::chrono::steady_clock::now();
  };
  callbacks.scopeEnd = [&](const readers::ReplayRecord&) {
    replayer.synchronizeAll();
    end = std::chrono::steady_clock::now();
  };
  readers::ReplayResult r = replayer.run(callbacks);
  EXPECT_GE(end - begin, std::chrono::milliseconds(180));
  EXPECT_EQ(r.readBacks, 1u);
  EXPECT_TRUE(r.mismatches.empty());
}

// A stream with Level Zero and HSA records (a program using both runtimes):
// one replay performs both in seq order, each record by its runtime, host
// data and read-backs by the runtime whose memory or copy they name.
TEST_F(HsaReplayer, LevelZeroAndHsaRecordsReplayTogether) {
  setenv("ZE_ENABLE_ALT_DRIVERS", GTAP_TEST_SIM_ZE_DRIVER, 1);
  constexpr uint64_t kDev = 101, kContext = 102, kList = 103, kZeHost = 104, kZeDevice = 105;
  constexpr uint64_t kZeHostAddress = 0x400000000000, kZeDeviceAddress = 0x400000100000;
  std::vector<uint8_t> pattern(4096);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 3);
  VectorAdd v;
  v.beforeDispatch = [&](HsaStreamBuilder& s) {
    s.add([](Record r) {
      auto d = r.initDevice();
      d.setDevice(kDev);
      d.setName("gtap simulated GPU");
    });
    s.add([](Record r) {
      auto c = r.initContextCreate();
      c.setContext(kContext);
      c.initDevices(1).set(0, kDev);
    });
    s.add([](Record r) {
      auto l = r.initListCreateImmediate();
      l.setList(kList);
      l.setContext(kContext);
      l.setDevice(kDev);
      l.setMode(1);  // synchronous: each append has finished when it returns
    });
    auto alloc = [&](uint64_t id, uint8_t kind, uint64_t address) {
      s.add([=](Record r) {
        auto m = r.initMemAlloc();
        m.setAllocation(id);
        m.setContext(kContext);
        m.setDevice(kind == 2 ? kDev : 0);
        m.setKind(kind);
        m.setSize(4096);
        m.setAddress(address);
      });
    };
    alloc(kZeHost, 1, kZeHostAddress);
    alloc(kZeDevice, 2, kZeDeviceAddress);
    hostData(s, kZeHost, 0, pattern);
    auto copy = [&](uint64_t dst, uint64_t src) {
      return s.add([=](Record r) {
        auto c = r.initCopy();
        c.setList(kList);
        c.setSize(4096);
        c.setDst(dst);
        c.setSrc(src);
      });
    };
    copy(kZeDeviceAddress, kZeHostAddress);
    uint64_t back = copy(kHost, kZeDeviceAddress);
    s.add(
        [=](Record r) {
          auto b = r.initReadBack();
          b.setCopy(back);
          b.setDst(kHost);
        },
        HsaStreamBuilder::Payload::blob, pattern);
  };
  readers::ReplayResult r = replay(write(vectorAdd(v)));
  EXPECT_EQ(r.kernels, 1u);
  EXPECT_EQ(r.readBacks, 2u);
  EXPECT_TRUE(r.mismatches.empty());
}

// --- substitution ---------------------------------------------------------------------

struct KernelAbi {
  uint32_t kernargSize = 32, kernargAlign = 16, group = 0;
  std::vector<std::tuple<const char*, uint32_t, uint32_t, const char*>> args = {
      {"a", 0, 8, "global_buffer"}, {"b", 8, 8, "global_buffer"}, {"c", 16, 8, "global_buffer"}, {"n", 24, 4, "by_value"}};
  std::vector<uint32_t> required;  // .reqd_workgroup_size
};

// An AMDGPU code object whose metadata describes vector_add as `abi` says.
std::vector<uint8_t> codeObjectWith(const KernelAbi& abi) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> p(buffer);
  auto str = [&](const std::string& s) {
    p.pack_str(static_cast<uint32_t>(s.size()));
    p.pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
  };
  p.pack_map(2);
  str("amdhsa.version");
  p.pack_array(2);
  p.pack_uint32(1);
  p.pack_uint32(1);
  str("amdhsa.kernels");
  p.pack_array(1);
  p.pack_map(abi.required.empty() ? 7 : 8);
  str(".name");
  str("vector_add");
  str(".symbol");
  str("vector_add.kd");
  str(".kernarg_segment_size");
  p.pack_uint32(abi.kernargSize);
  str(".kernarg_segment_align");
  p.pack_uint32(abi.kernargAlign);
  str(".group_segment_fixed_size");
  p.pack_uint32(abi.group);
  str(".private_segment_fixed_size");
  p.pack_uint32(0);
  if (!abi.required.empty()) {
    str(".reqd_workgroup_size");
    p.pack_array(3);
    for (uint32_t v : abi.required) p.pack_uint32(v);
  }
  str(".args");
  p.pack_array(static_cast<uint32_t>(abi.args.size()));
  for (const auto& [name, offset, size, kind] : abi.args) {
    p.pack_map(4);
    str(".name");
    str(name);
    str(".offset");
    p.pack_uint32(offset);
    str(".size");
    p.pack_uint32(size);
    str(".value_kind");
    str(kind);
  }
  return readers::testing::synthesizeCodeObject(std::vector<uint8_t>(buffer.data(), buffer.data() + buffer.size()));
}

class HsaSubstitution : public HsaReplayer {
 protected:
  // The refusal of replaying a vector_add captured from `original` with
  // `replacement` for vector_add.
  std::string refusalOf(const KernelAbi& original, const KernelAbi& replacement, const std::string& selector = "vector_add") {
    VectorAdd v;
    v.codeObject = codeObjectWith(original);
    std::string n = std::to_string(++files_);
    std::string file = write(vectorAdd(v), "stream" + n + ".gtap");
    std::string path = (dir_ / ("replacement" + n + ".hsaco")).string();
    auto bytes = codeObjectWith(replacement);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    auto o = options();
    o.substitutions.push_back({selector, path});
    readers::Capture capture(file);
    auto stream = readers::loadReplayStream(capture);
    readers::Replayer replayer(capture, stream, o);
    try {
      replayer.prepare();  // no run: the check comes before anything runs
    } catch (const readers::ReplayError& e) {
      return e.what();
    }
    return "";
  }
  int files_ = 0;
};

TEST_F(HsaSubstitution, TheSameAbiPassesOnTheSimulatedRuntime) {
  std::string path = (dir_ / "smoke.so").string();
  std::filesystem::copy_file(GTAP_TEST_SIM_SMOKE_KERNELS, path);
  std::string file = write(vectorAdd({}));
  for (std::string selector : {std::string("vector_add"), std::string("vector_add.kd"), std::string("all"),
                               std::to_string(kCodeObject)}) {
    auto o = options();
    o.substitutions.push_back({selector, path});
    readers::ReplayResult r = replay(file, o);
    EXPECT_EQ(r.kernels, 1u) << selector;
    EXPECT_TRUE(r.mismatches.empty()) << selector;
  }
}

TEST_F(HsaSubstitution, AKernelTheReplacementLacksIsRefused) {
  VectorAdd v;
  v.symbol = "scale.kd";  // the workloads' scale: the smoke test's code object has none
  std::string file = write(vectorAdd(v));
  auto o = options();
  o.substitutions.push_back({"scale", GTAP_TEST_SIM_SMOKE_KERNELS});
  std::string e = refusal(file, o);
  EXPECT_TRUE(contains(e, "kernel scale of code object " + std::to_string(kCodeObject))) << e;
  EXPECT_TRUE(contains(e, "the replacement does not have it")) << e;
  o.substitutions = {{"no_such_kernel", GTAP_TEST_SIM_SMOKE_KERNELS}};
  e = refusal(file, o);
  EXPECT_TRUE(contains(e, "the stream has no kernel named no_such_kernel")) << e;
}

TEST_F(HsaSubstitution, AnAbiDifferenceIsRefusedNamingIt) {
  KernelAbi original;
  EXPECT_EQ(refusalOf(original, original), "");

  KernelAbi extra = original;  // one more argument, in the original's padding
  extra.args.insert(extra.args.begin() + 3, {"scale", 24, 4, "by_value"});
  std::get<1>(extra.args[4]) = 28;
  std::string e = refusalOf(original, extra);
  EXPECT_TRUE(contains(e, "kernel vector_add of code object")) << e;
  EXPECT_TRUE(contains(e, "the replacement takes 5 arguments, the original 4")) << e;

  KernelAbi bigger = original;
  bigger.kernargSize = 48;
  e = refusalOf(original, bigger);
  EXPECT_TRUE(contains(e, "the replacement's kernarg segment is 48 bytes, the original's 32")) << e;

  KernelAbi aligned = original;
  aligned.kernargAlign = 64;
  e = refusalOf(original, aligned);
  EXPECT_TRUE(contains(e, "aligned to 64 bytes, the original's to 16")) << e;

  KernelAbi moved = original;
  std::get<1>(moved.args[3]) = 28;
  e = refusalOf(original, moved);
  EXPECT_TRUE(contains(e, "argument 3 (n) of the replacement is at offset 28, 4 bytes, by_value; the original's argument 3 (n) at offset 24")) << e;

  KernelAbi kind = original;
  std::get<3>(kind.args[1]) = "by_value";
  e = refusalOf(original, kind);
  EXPECT_TRUE(contains(e, "argument 1 (b) of the replacement is at offset 8, 8 bytes, by_value")) << e;

  KernelAbi required = original;
  required.required = {64, 1, 1};
  e = refusalOf(original, required);
  EXPECT_TRUE(contains(e, "the replacement requires work-groups of 64x1x1, a dispatch")) << e;
  EXPECT_TRUE(contains(e, "uses 256x1x1")) << e;

  KernelAbi group = original;
  group.group = 1024;
  e = refusalOf(original, group);
  EXPECT_TRUE(contains(e, "needs 1024 bytes of group memory, a dispatch")) << e;
  EXPECT_TRUE(contains(e, "gives 0")) << e;
}

}  // namespace
}  // namespace gtap::test
