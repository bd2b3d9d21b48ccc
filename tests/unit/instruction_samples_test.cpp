// Instruction samples read back from crafted captures: every stall reason's
// count comes out in its column, samples go to the kernel whose code starts
// nearest below them among the modules loaded while they were taken, and
// what cannot be attributed is counted and said.
#include <capnp/message.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtap/format/writer.h"
#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "gtap/readers/instruction_samples.h"

namespace gtap {
namespace {

const std::vector<std::string> kReasons = {"Active",    "ControlStall", "PipeStall",       "SendStall", "DistStall",
                                           "SbidStall", "SyncStall",    "InstrFetchStall", "OtherStall"};

struct Obj {
  uint64_t id;
  schema::ObjectKind kind;
  uint64_t parent;
  std::string name;
  int64_t created;
  int64_t destroyed;  // 0: alive
  uint64_t code;
};

struct Sample {
  uint64_t ip;
  std::vector<uint64_t> counts;
};

struct Batch {
  uint32_t device;
  int64_t from, to;
  std::vector<Sample> samples;
  std::string note;
  bool dropped = false;
};

std::string writeCapture(const std::string& name, const std::vector<Obj>& objects, const std::vector<Batch>& batches) {
  std::string path = ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid()) + ".gtap";
  unlink(path.c_str());
  std::string error;
  auto w = format::CaptureWriter::create(path, error);
  EXPECT_TRUE(w) << error;
  {
    capnp::MallocMessageBuilder m;
    auto info = m.initRoot<schema::FileInfo>();
    info.setPid(77);
    info.setMode("api,kernels,samples");
    w->writeMessage(schema::ChunkKind::FILE_INFO, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto d = m.initRoot<schema::Devices>().initDevices(2);
    for (unsigned i = 0; i < 2; ++i) {
      d[i].setId(i);
      d[i].setApi(schema::Api::LEVEL_ZERO);
      d[i].setName(i == 0 ? "sampled GPU" : "plain GPU");
      d[i].setTimerFrequencyHz(1000000000);
    }
    w->writeMessage(schema::ChunkKind::DEVICES, m);
  }
  {
    capnp::MallocMessageBuilder m;
    auto root = m.initRoot<schema::Objects>();
    auto created = root.initCreated(static_cast<unsigned>(objects.size()));
    unsigned ended = 0;
    for (unsigned i = 0; i < objects.size(); ++i) {
      const Obj& o = objects[i];
      created[i].setId(o.id);
      created[i].setKind(o.kind);
      created[i].setDevice(0);
      created[i].setParent(o.parent);
      created[i].setName(o.name);
      created[i].setCreatedNs(o.created);
      created[i].setCodeAddress(o.code);
      ended += o.destroyed != 0;
    }
    auto destroyed = root.initDestroyed(ended);
    unsigned k = 0;
    for (const Obj& o : objects)
      if (o.destroyed) {
        destroyed[k].setId(o.id);
        destroyed[k++].setDestroyedNs(o.destroyed);
      }
    w->writeMessage(schema::ChunkKind::OBJECTS, m);
  }
  for (const Batch& b : batches) {
    capnp::MallocMessageBuilder m;
    auto root = m.initRoot<schema::InstructionSamples>();
    root.setDevice(b.device);
    root.setGroup("EuStallSampling");
    auto reasons = root.initReasons(static_cast<unsigned>(kReasons.size()));
    for (unsigned i = 0; i < kReasons.size(); ++i) reasons.set(i, kReasons[i]);
    root.setPeriodNs(100000);
    root.setFromNs(b.from);
    root.setToNs(b.to);
    root.setDropped(b.dropped);
    root.setNote(b.note);
    if (!b.samples.empty()) {
      auto list = root.initSamples(static_cast<unsigned>(b.samples.size()));
      for (unsigned i = 0; i < b.samples.size(); ++i) {
        list[i].setIp(b.samples[i].ip);
        auto c = list[i].initCounts(static_cast<unsigned>(b.samples[i].counts.size()));
        for (unsigned k = 0; k < b.samples[i].counts.size(); ++k) c.set(k, b.samples[i].counts[k]);
      }
    }
    w->writeMessage(schema::ChunkKind::INSTRUCTION_SAMPLES, m);
  }
  EXPECT_TRUE(w->close(0, 0, 1000, "exit")) << w->error();
  return path;
}

readers::DeviceWork objectsOf(const readers::Capture& c) {
  readers::DeviceWork work;
  readers::streamDeviceWork(c, work, false, [](std::span<const readers::DeviceOp>) { return true; });
  return work;
}

constexpr auto kModule = schema::ObjectKind::MODULE;
constexpr auto kKernel = schema::ObjectKind::KERNEL;

TEST(InstructionSamples, EveryReasonRoundTripsAndLandsInItsKernel) {
  // Module 1 holds two kernels; module 2 is loaded after module 1 is gone,
  // its kernel at the address module 1's second kernel had.
  std::vector<Obj> objects = {
      {1, kModule, 0, "", 0, 500, 0},       {2, kKernel, 1, "first", 10, 0, 0x10000},
      {3, kKernel, 1, "second", 10, 0, 0x10400}, {4, kModule, 0, "", 600, 0, 0},
      {5, kKernel, 4, "reloaded", 610, 0, 0x10400}, {6, kKernel, 1, "first", 20, 0, 0x10000},  // created again
  };
  std::vector<uint64_t> stalls = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<Batch> batches = {
      {0, 0, 0, {}, ""},                       // names the sampled device
      {1, 0, 0, {}, "the device offers no metric groups"},
      {0, 100, 400, {{0x10010, stalls}, {0x10010, {1, 0, 0, 0, 0, 0, 0, 0, 0}}, {0x10420, {0, 0, 0, 0, 0, 0, 0, 0, 5}}}, ""},
      {0, 620, 900, {{0x10420, {3, 0, 0, 0, 0, 0, 0, 0, 0}}, {0x500, {2, 0, 0, 0, 0, 0, 0, 0, 0}}}, "", true},
  };
  std::string path = writeCapture("samples", objects, batches);
  readers::Capture capture(path);
  auto work = objectsOf(capture);
  auto s = readers::loadInstructionSamples(capture, work);
  EXPECT_TRUE(s.recorded);
  EXPECT_EQ(1u, s.sampledDevices);
  EXPECT_EQ(kReasons, s.reasons);
  EXPECT_TRUE(s.dropped);
  EXPECT_EQ(45u + 1 + 5 + 3 + 2, s.samples);
  EXPECT_EQ(2u, s.unattributed);  // below every kernel

  const readers::SampledCode* first = s.codeOf(2);
  ASSERT_NE(nullptr, first);
  EXPECT_EQ(first, s.codeOf(6));  // the same code, created twice
  EXPECT_EQ("first", first->kernel);
  ASSERT_EQ(1u, first->offsets.size());
  std::vector<uint64_t> expected = {2, 2, 3, 4, 5, 6, 7, 8, 9};  // both rows on one offset add up
  EXPECT_EQ(expected, first->offsets.at(0x10));
  EXPECT_EQ(46u, first->samples);

  const readers::SampledCode* second = s.codeOf(3);
  ASSERT_NE(nullptr, second);
  ASSERT_EQ(1u, second->offsets.size());
  EXPECT_EQ(5u, second->offsets.at(0x20).back());  // OtherStall
  EXPECT_EQ(5u, second->samples);

  // After module 1 was unloaded the address is the reloaded kernel's.
  const readers::SampledCode* reloaded = s.codeOf(5);
  ASSERT_NE(nullptr, reloaded);
  EXPECT_EQ(3u, reloaded->offsets.at(0x20).front());
  EXPECT_EQ(3u, reloaded->samples);

  bool saidUnsampled = false, saidUnattributed = false, saidDropped = false;
  for (const auto& n : s.notes) {
    saidUnsampled |= n.find("device 1 (plain GPU) was not sampled: the device offers no metric groups") != std::string::npos;
    saidUnattributed |= n.find("2 of 56 instruction samples") != std::string::npos;
    saidDropped |= n.find("dropped") != std::string::npos;
  }
  EXPECT_TRUE(saidUnsampled);
  EXPECT_TRUE(saidUnattributed);
  EXPECT_TRUE(saidDropped);
  unlink(path.c_str());
}

TEST(InstructionSamples, AnAddressFarPastEveryKernelIsNoKernels) {
  std::vector<Obj> objects = {{1, kModule, 0, "", 0, 0, 0}, {2, kKernel, 1, "k", 0, 0, 0x1000}};
  std::string path = writeCapture("far", objects, {{0, 0, 10, {{0x1000 + (uint64_t(1) << 30), {4}}}, ""}});
  readers::Capture capture(path);
  auto work = objectsOf(capture);
  auto s = readers::loadInstructionSamples(capture, work);
  EXPECT_EQ(4u, s.unattributed);
  EXPECT_EQ(nullptr, s.codeOf(2));
  unlink(path.c_str());
}

TEST(InstructionSamples, ACaptureWithoutSamplesSaysItWasNotRecorded) {
  std::string path = writeCapture("none", {{1, kModule, 0, "", 0, 0, 0}}, {});
  readers::Capture capture(path);
  auto work = objectsOf(capture);
  auto s = readers::loadInstructionSamples(capture, work);
  EXPECT_FALSE(s.recorded);
  EXPECT_TRUE(s.codes.empty());
  unlink(path.c_str());
}

TEST(InstructionSamples, InstructionText) {
  using readers::ResolvedFrame;
  EXPECT_EQ("k+0x1a", readers::instructionText({}, "k", 0x1a));
  EXPECT_EQ("kernels.c:42", readers::instructionText({{"k", "/src/kernels.c", 42, false}}, "k", 8));
  EXPECT_EQ("helper [inlined] kernels.c:7",
            readers::instructionText({{"helper", "/src/kernels.c", 7, true}, {"k", "/src/kernels.c", 40, false}}, "k", 8));
  EXPECT_EQ("k+0x8", readers::instructionText({{"k", "", 0, false}}, "k", 8));  // a symbol but no line
}

}  // namespace
}  // namespace gtap
