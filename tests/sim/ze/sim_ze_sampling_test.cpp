// Instruction sampling of the simulated Level Zero driver through the tools
// API ("EuStallSampling": metric group, streamer, calculation), the kernel
// base address and the module's debug information, driven through the real
// Level Zero loader as a profiling tool would use them.
#include <ze_api.h>
#include <zet_api.h>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>
#include "sim_ze_test_setup.h"

namespace {

constexpr uint64_t kForever = UINT64_MAX;
constexpr size_t kReportSize = 64;
constexpr uint32_t kMetricCount = 10;
constexpr uint32_t kPeriodNs = 50'000;

#define ZE_OK(expr) ASSERT_EQ(ZE_RESULT_SUCCESS, (expr))

using simtest::interceptMode;

int samplingSignal() { return SIGRTMAX - 2; }

using simtest::readFile;

// A function symbol of an ELF file, read from its section headers and
// symbol table by hand.
struct Symbol {
  uint64_t value = 0;
  uint64_t size = 0;
  bool found = false;
};

Symbol findSymbol(const std::vector<uint8_t>& elf, const char* name, unsigned type) {
  Symbol out;
  if (elf.size() < sizeof(Elf64_Ehdr)) return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, elf.data(), sizeof eh);
  if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > elf.size())
    return out;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), elf.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strings = sections[sh.sh_link];
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, elf.data() + sh.sh_offset + off, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != type || sym.st_name >= strings.sh_size) continue;
      const char* symName = reinterpret_cast<const char*>(elf.data() + strings.sh_offset + sym.st_name);
      if (std::strcmp(symName, name) != 0) continue;
      out.value = sym.st_value;
      out.size = sym.st_size;
      out.found = true;
      return out;
    }
  }
  return out;
}

// A zero-initialised Level Zero structure with its type tag set.
using simtest::typed;

uint64_t loadLe(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void storeLe(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = uint8_t(v >> (8 * i));
}

// The program's own handler for the signal number the driver samples with,
// installed before zeInit.
std::atomic<int> g_programSignals{0};
std::atomic<int> g_lastCode{0};
std::atomic<intptr_t> g_lastValue{0};

void programHandler(int, siginfo_t* info, void*) {
  g_lastCode = info->si_code;
  g_lastValue = reinterpret_cast<intptr_t>(info->si_value.sival_ptr);
  ++g_programSignals;
}

// One row of calculated values: the address, then the nine reasons' counts.
struct Row {
  uint64_t ip;
  uint64_t counts[kMetricCount - 1];
};

class SimZeSampling : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Once per process (the suite may be set up again with --gtest_repeat):
    // installed later, after the driver's, the program's handler would take
    // the signal over and launches would no longer be sampled.
    static bool installed = false;
    if (!installed) {
      struct sigaction sa {};
      sa.sa_sigaction = programHandler;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_SIGINFO;
      ASSERT_EQ(0, sigaction(samplingSignal(), &sa, nullptr));
      installed = true;
    }

    simtest::SimZeSession s;
    simtest::openSimZe(GTAP_SIM_ZE_DRIVER_PATH, GTAP_SIM_ZE_SAMPLING_KERNELS_PATH, s);
    driver_ = s.driver;
    device_ = s.device;
    context_ = s.context;
    module_ = s.module;
    moduleBytes_ = s.moduleBytes;
    if (HasFatalFailure()) return;
    uint32_t n = 1;
    ASSERT_EQ(ZE_RESULT_SUCCESS, zetMetricGroupGet(device_, &n, &group_));
  }

  static void TearDownTestSuite() { simtest::closeSimZe(module_, context_, moduleBytes_); }

  void SetUp() override {
    out_ = static_cast<uint64_t*>(sharedAlloc(64 * sizeof(uint64_t)));
    ze_kernel_desc_t kdesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "hot_loop"};
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeKernelCreate(module_, &kdesc, &hot_));
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeKernelSetArgumentValue(hot_, 1, sizeof out_, &out_));
  }

  void TearDown() override {
    if (opened_ != nullptr) {  // left open by a failed test
      EXPECT_EQ(ZE_RESULT_SUCCESS, zetMetricStreamerClose(opened_));
    }
    EXPECT_EQ(ZE_RESULT_SUCCESS, zetContextActivateMetricGroups(context_, device_, 0, nullptr));
    if (hot_) {
      EXPECT_EQ(ZE_RESULT_SUCCESS, zeKernelDestroy(hot_));
    }
    if (out_) {
      EXPECT_EQ(ZE_RESULT_SUCCESS, zeMemFree(context_, out_));
    }
  }

  void* sharedAlloc(size_t size) {
    ze_device_mem_alloc_desc_t d{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    ze_host_mem_alloc_desc_t h{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* p = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeMemAllocShared(context_, &d, &h, size, 64, device_, &p));
    return p;
  }

  ze_command_list_handle_t syncImmediate() {
    auto q = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
    q.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    ze_command_list_handle_t h = nullptr;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeCommandListCreateImmediate(context_, device_, &q, &h));
    return h;
  }

  // One launch of hot_loop, `rounds` steps in each of `groups` work-groups,
  // finished when this returns.
  void runHot(ze_command_list_handle_t l, uint64_t rounds, uint32_t groups = 1) {
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeKernelSetArgumentValue(hot_, 0, sizeof rounds, &rounds));
    ze_group_count_t count{groups, 1, 1};
    ASSERT_EQ(ZE_RESULT_SUCCESS, zeCommandListAppendLaunchKernel(l, hot_, &count, nullptr, 0, nullptr));
  }

  ze_result_t open(zet_metric_streamer_handle_t* streamer, uint32_t period = kPeriodNs, uint32_t notify = 0,
                   ze_event_handle_t event = nullptr) {
    zet_metric_streamer_desc_t desc{ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, nullptr, notify, period};
    ze_result_t r = zetMetricStreamerOpen(context_, device_, group_, &desc, event, streamer);
    if (r == ZE_RESULT_SUCCESS) opened_ = *streamer;
    return r;
  }

  ze_result_t close(zet_metric_streamer_handle_t s) {
    if (s == opened_) opened_ = nullptr;
    return zetMetricStreamerClose(s);
  }

  void activate() { ASSERT_EQ(ZE_RESULT_SUCCESS, zetContextActivateMetricGroups(context_, device_, 1, &group_)); }

  // Everything the streamer holds: a size query, then a read.
  std::vector<uint8_t> readAll(zet_metric_streamer_handle_t s) {
    size_t size = 0;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr));
    EXPECT_EQ(0u, size % kReportSize);
    std::vector<uint8_t> raw(size);
    if (size == 0) return raw;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zetMetricStreamerReadData(s, UINT32_MAX, &size, raw.data()));
    EXPECT_EQ(0u, size % kReportSize);
    raw.resize(size);
    return raw;
  }

  std::vector<Row> calculate(const std::vector<uint8_t>& raw) {
    std::vector<Row> rows;
    uint32_t count = 0;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zetMetricGroupCalculateMetricValues(
                                     group_, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw.size(),
                                     raw.data(), &count, nullptr));
    EXPECT_EQ(0u, count % kMetricCount);
    std::vector<zet_typed_value_t> values(count);
    EXPECT_EQ(ZE_RESULT_SUCCESS, zetMetricGroupCalculateMetricValues(
                                     group_, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw.size(),
                                     raw.data(), &count, values.data()));
    for (uint32_t i = 0; i + kMetricCount <= count; i += kMetricCount) {
      Row row{};
      for (uint32_t k = 0; k < kMetricCount; ++k) {
        EXPECT_EQ(ZET_VALUE_TYPE_UINT64, values[i + k].type);
        if (k == 0) {
          row.ip = values[i].value.ui64;
        } else {
          row.counts[k - 1] = values[i + k].value.ui64;
        }
      }
      rows.push_back(row);
    }
    return rows;
  }

  // Where the driver loaded the module: the load bias of the object holding
  // the module's exported global.
  uintptr_t moduleLoadBias() {
    void* anchor = nullptr;
    size_t size = 0;
    EXPECT_EQ(ZE_RESULT_SUCCESS, zeModuleGetGlobalPointer(module_, "sampling_anchor", &size, &anchor));
    Dl_info info{};
    link_map* map = nullptr;
    EXPECT_NE(0, dladdr1(anchor, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP));
    if (map == nullptr) return 0;
    Symbol sym = findSymbol(*moduleBytes_, "sampling_anchor", STT_OBJECT);
    EXPECT_TRUE(sym.found);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(anchor), map->l_addr + sym.value);
    return map->l_addr;
  }

  static inline ze_driver_handle_t driver_ = nullptr;
  static inline ze_device_handle_t device_ = nullptr;
  static inline ze_context_handle_t context_ = nullptr;
  static inline ze_module_handle_t module_ = nullptr;
  static inline zet_metric_group_handle_t group_ = nullptr;
  static inline std::vector<uint8_t>* moduleBytes_ = nullptr;
  ze_kernel_handle_t hot_ = nullptr;
  uint64_t* out_ = nullptr;
  zet_metric_streamer_handle_t opened_ = nullptr;
};

TEST_F(SimZeSampling, SamplingGroupFirstWithTenMetrics) {
  uint32_t count = 0;
  ZE_OK(zetMetricGroupGet(device_, &count, nullptr));
  ASSERT_EQ(5u, count);  // then the four query-based groups (sim_ze_metric_query_test.cpp)
  count = 7;  // more than there are: the count is corrected
  zet_metric_group_handle_t groups[7] = {};
  ZE_OK(zetMetricGroupGet(device_, &count, groups));
  EXPECT_EQ(5u, count);
  EXPECT_EQ(group_, groups[0]);
  EXPECT_NE(groups[0], groups[1]);

  auto gp = typed<zet_metric_group_properties_t>(ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES);
  ZE_OK(zetMetricGroupGetProperties(group_, &gp));
  EXPECT_STREQ("EuStallSampling", gp.name);
  EXPECT_GT(std::strlen(gp.description), 0u);
  EXPECT_EQ(ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED, gp.samplingType);
  EXPECT_EQ(0u, gp.domain);
  EXPECT_EQ(kMetricCount, gp.metricCount);

  count = 0;
  ZE_OK(zetMetricGet(group_, &count, nullptr));
  ASSERT_EQ(kMetricCount, count);
  std::vector<zet_metric_handle_t> metrics(count);
  ZE_OK(zetMetricGet(group_, &count, metrics.data()));
  const char* names[kMetricCount] = {"IP",        "Active",    "ControlStall", "PipeStall",       "SendStall",
                                     "DistStall", "SbidStall", "SyncStall",    "InstrFetchStall", "OtherStall"};
  for (uint32_t i = 0; i < kMetricCount; ++i) {
    auto mp = typed<zet_metric_properties_t>(ZET_STRUCTURE_TYPE_METRIC_PROPERTIES);
    ZE_OK(zetMetricGetProperties(metrics[i], &mp));
    EXPECT_STREQ(names[i], mp.name);
    EXPECT_GT(std::strlen(mp.description), 0u) << names[i];
    EXPECT_EQ(ZET_VALUE_TYPE_UINT64, mp.resultType) << names[i];
    if (i == 0) {
      EXPECT_EQ(0x7ffffffe, int(mp.metricType));  // ZET_METRIC_TYPE_IP_EXP
      EXPECT_STREQ("Address", mp.resultUnits);
      EXPECT_STREQ("XVE", mp.component);
    } else {
      EXPECT_EQ(ZET_METRIC_TYPE_EVENT, mp.metricType) << names[i];
      EXPECT_STREQ("Events", mp.resultUnits) << names[i];
    }
  }
  // Only some of them.
  count = 3;
  ZE_OK(zetMetricGet(group_, &count, metrics.data()));
  EXPECT_EQ(3u, count);
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetMetricGet(group_, nullptr, nullptr));
}

TEST_F(SimZeSampling, StreamerNeedsAnActivatedGroupAndIsOnePerDevice) {
  zet_metric_streamer_handle_t s = nullptr;
  // Not activated: Intel's driver's answer.
  EXPECT_EQ(ZE_RESULT_NOT_READY, open(&s));
  EXPECT_EQ(nullptr, s);
  // The 1.8 loader's intercept layer answers a null array itself.
  EXPECT_EQ(interceptMode() ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE : ZE_RESULT_ERROR_INVALID_SIZE,
            zetContextActivateMetricGroups(context_, device_, 1, nullptr));
  zet_metric_group_handle_t twice[2] = {group_, group_};
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetContextActivateMetricGroups(context_, device_, 2, twice));
  activate();

  // Activated on another context only.
  ze_context_desc_t cdesc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  ze_context_handle_t other = nullptr;
  ZE_OK(zeContextCreate(driver_, &cdesc, &other));
  zet_metric_streamer_desc_t desc{ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, nullptr, 0, kPeriodNs};
  EXPECT_EQ(ZE_RESULT_NOT_READY, zetMetricStreamerOpen(other, device_, group_, &desc, nullptr, &s));
  ZE_OK(zeContextDestroy(other));

  // Open, then a second one on the same device is refused; close and open again.
  for (int round = 0; round < 3; ++round) {
    ZE_OK(open(&s));
    ASSERT_NE(nullptr, s);
    zet_metric_streamer_handle_t second = nullptr;
    EXPECT_EQ(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, open(&second));
    ZE_OK(close(s));
  }
  if (!interceptMode()) {  // the intercept layer dereferences null handles
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetMetricStreamerClose(nullptr));
  }

  // The period is clamped to [20 us, 1 s] and the value used written back.
  desc.samplingPeriod = 1000;
  ZE_OK(zetMetricStreamerOpen(context_, device_, group_, &desc, nullptr, &s));
  EXPECT_EQ(20'000u, desc.samplingPeriod);
  ZE_OK(close(s));
  desc.samplingPeriod = 3'000'000'000u;
  ZE_OK(zetMetricStreamerOpen(context_, device_, group_, &desc, nullptr, &s));
  EXPECT_EQ(1'000'000'000u, desc.samplingPeriod);
  ZE_OK(close(s));

  // A notification event must come from a host-visible pool.
  ze_event_pool_desc_t pdesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, 0, 1};
  ze_event_pool_handle_t pool = nullptr;
  ZE_OK(zeEventPoolCreate(context_, &pdesc, 1, &device_, &pool));
  ze_event_desc_t edesc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
  ze_event_handle_t event = nullptr;
  ZE_OK(zeEventCreate(pool, &edesc, &event));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT, open(&s, kPeriodNs, 1, event));
  ZE_OK(zeEventDestroy(event));
  ZE_OK(zeEventPoolDestroy(pool));

  // Deactivated again: refused again.
  ZE_OK(zetContextActivateMetricGroups(context_, device_, 0, nullptr));
  EXPECT_EQ(ZE_RESULT_NOT_READY, open(&s));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
            zetMetricStreamerOpen(context_, device_, group_, nullptr, nullptr, &s));
}

TEST_F(SimZeSampling, HotKernelSamplesLieInItsBody) {
  const uintptr_t bias = moduleLoadBias();
  Symbol body = findSymbol(*moduleBytes_, "hot_loop", STT_FUNC);
  ASSERT_TRUE(body.found) << "the module's symbol table names no function hot_loop";
  ASSERT_GT(body.size, 0u);
  const uint64_t begin = bias + body.value, end = begin + body.size;

  activate();
  zet_metric_streamer_handle_t s = nullptr;
  ZE_OK(open(&s));
  uint64_t hostBefore = 0, ticksBefore = 0, hostAfter = 0, ticksAfter = 0;
  ZE_OK(zeDeviceGetGlobalTimestamps(device_, &hostBefore, &ticksBefore));

  // Launches on a synchronous immediate list and through a queue, until
  // enough samples are in.
  ze_command_list_handle_t imm = syncImmediate();
  auto qdesc = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
  qdesc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  ze_command_queue_handle_t q = nullptr;
  ZE_OK(zeCommandQueueCreate(context_, device_, &qdesc, &q));
  auto ldesc = typed<ze_command_list_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC);
  ze_command_list_handle_t regular = nullptr;
  ZE_OK(zeCommandListCreate(context_, device_, &ldesc, &regular));
  constexpr uint64_t kRounds = 20'000'000;  // tens of milliseconds per launch
  ASSERT_NO_FATAL_FAILURE(runHot(regular, kRounds, 2));
  ZE_OK(zeCommandListClose(regular));

  std::vector<uint8_t> raw;
  const int before = g_programSignals.load();
  for (int i = 0; i < 40 && raw.size() / kReportSize < 20; ++i) {
    if (i % 2 == 0) {
      ASSERT_NO_FATAL_FAILURE(runHot(imm, kRounds));
    } else {
      ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &regular, nullptr));
    }
    std::vector<uint8_t> more = readAll(s);
    raw.insert(raw.end(), more.begin(), more.end());
  }
  ZE_OK(zeDeviceGetGlobalTimestamps(device_, &hostAfter, &ticksAfter));
  EXPECT_EQ(before, g_programSignals.load()) << "a sampling signal reached the program's handler";
  const size_t reports = raw.size() / kReportSize;
  ASSERT_GE(reports, 20u);

  // Each raw report as documented.
  for (size_t i = 0; i < reports; ++i) {
    const uint8_t* r = raw.data() + i * kReportSize;
    const uint64_t ip = loadLe(r, 8);
    EXPECT_TRUE(ip >= begin && ip < end) << std::hex << ip << " not in [" << begin << ", " << end << ")";
    EXPECT_EQ(1u, loadLe(r + 8, 2)) << "Active";
    for (int k = 1; k < 9; ++k) EXPECT_EQ(0u, loadLe(r + 8 + 2 * k, 2)) << "reason " << k;
    EXPECT_EQ(0u, loadLe(r + 26, 2)) << "subslice";
    EXPECT_EQ(1u, loadLe(r + 28, 4)) << "flags";
    const uint64_t ticks = loadLe(r + 32, 8);
    EXPECT_GE(ticks, ticksBefore);
    EXPECT_LE(ticks, ticksAfter);
    for (int b = 40; b < 64; ++b) EXPECT_EQ(0u, r[b]);
  }

  // Calculated: rows in ascending address order, all in the body, Active
  // summing to the number of reports, no stall reason.
  std::vector<Row> rows = calculate(raw);
  ASSERT_FALSE(rows.empty());
  uint64_t active = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(rows[i - 1].ip, rows[i].ip);
    }
    EXPECT_TRUE(rows[i].ip >= begin && rows[i].ip < end);
    active += rows[i].counts[0];
    for (int k = 1; k < 9; ++k) EXPECT_EQ(0u, rows[i].counts[k]);
  }
  EXPECT_EQ(reports, active);

  // The size query with nothing pending, and a read into a small buffer.
  size_t size = 0;
  ZE_OK(zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr));
  EXPECT_EQ(0u, size);
  ASSERT_NO_FATAL_FAILURE(runHot(imm, kRounds));
  ZE_OK(zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr));
  if (size >= 2 * kReportSize) {
    std::vector<uint8_t> one(kReportSize * 2);
    size_t small = one.size();
    ZE_OK(zetMetricStreamerReadData(s, 1, &small, one.data()));  // maxReportCount 1
    EXPECT_EQ(kReportSize, small);
  }
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetMetricStreamerReadData(s, UINT32_MAX, nullptr, nullptr));

  ZE_OK(close(s));
  if (!interceptMode()) {  // the intercept layer freed its wrapper of the handle
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr));
  }
  ZE_OK(zeCommandListDestroy(regular));
  ZE_OK(zeCommandQueueDestroy(q));
  ZE_OK(zeCommandListDestroy(imm));
}

TEST_F(SimZeSampling, NothingIsSampledWithoutAnOpenStreamer) {
  activate();
  ze_command_list_handle_t imm = syncImmediate();
  // Before any streamer, and after one was closed: a new streamer starts
  // empty, and the launches in between left nothing anywhere.
  ASSERT_NO_FATAL_FAILURE(runHot(imm, 20'000'000));
  zet_metric_streamer_handle_t s = nullptr;
  ZE_OK(open(&s));
  EXPECT_TRUE(readAll(s).empty());
  ASSERT_NO_FATAL_FAILURE(runHot(imm, 20'000'000));
  ZE_OK(close(s));
  const int before = g_programSignals.load();
  ASSERT_NO_FATAL_FAILURE(runHot(imm, 40'000'000));
  EXPECT_EQ(before, g_programSignals.load());
  ZE_OK(open(&s));
  EXPECT_TRUE(readAll(s).empty());
  ZE_OK(close(s));
  ZE_OK(zeCommandListDestroy(imm));
}

TEST_F(SimZeSampling, NotificationEventIsSignaledAfterEnoughReports) {
  activate();
  ze_event_pool_desc_t pdesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
  ze_event_pool_handle_t pool = nullptr;
  ZE_OK(zeEventPoolCreate(context_, &pdesc, 1, &device_, &pool));
  ze_event_desc_t edesc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t event = nullptr;
  ZE_OK(zeEventCreate(pool, &edesc, &event));
  zet_metric_streamer_handle_t s = nullptr;
  ZE_OK(open(&s, kPeriodNs, 3, event));
  ze_command_list_handle_t imm = syncImmediate();
  EXPECT_EQ(ZE_RESULT_NOT_READY, zeEventQueryStatus(event));
  for (int i = 0; i < 40 && zeEventQueryStatus(event) != ZE_RESULT_SUCCESS; ++i)
    ASSERT_NO_FATAL_FAILURE(runHot(imm, 20'000'000));
  ZE_OK(zeEventQueryStatus(event));
  size_t size = 0;
  ZE_OK(zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr));
  EXPECT_GE(size, 3 * kReportSize);
  ZE_OK(close(s));
  ZE_OK(zeCommandListDestroy(imm));
  ZE_OK(zeEventDestroy(event));
  ZE_OK(zeEventPoolDestroy(pool));
}

TEST_F(SimZeSampling, CalculationAggregatesCraftedReports) {
  // Two reports on one address, one on a lower one, one invalid report; every
  // reason column set somewhere.
  auto make = [](uint64_t ip, std::initializer_list<uint16_t> counts, uint32_t flags) {
    std::vector<uint8_t> r(kReportSize, 0);
    storeLe(r.data(), ip, 8);
    int k = 0;
    for (uint16_t c : counts) storeLe(r.data() + 8 + 2 * k++, c, 2);
    storeLe(r.data() + 28, flags, 4);
    storeLe(r.data() + 32, 12345, 8);
    return r;
  };
  std::vector<uint8_t> raw;
  for (const auto& r : {make(0x2000, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1), make(0x1000, {9, 8, 7, 6, 5, 4, 3, 2, 1}, 1),
                        make(0x2000, {10, 20, 30, 40, 50, 60, 70, 80, 90}, 1),
                        make(0x3000, {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, 0)}) {
    raw.insert(raw.end(), r.begin(), r.end());
  }
  std::vector<Row> rows = calculate(raw);
  ASSERT_EQ(2u, rows.size());
  EXPECT_EQ(0x1000u, rows[0].ip);
  EXPECT_EQ(0x2000u, rows[1].ip);
  for (int k = 0; k < 9; ++k) {
    EXPECT_EQ(uint64_t(9 - k), rows[0].counts[k]) << k;
    EXPECT_EQ(uint64_t(11 * (k + 1)), rows[1].counts[k]) << k;
  }
  // Both calculation types give the same here.
  uint32_t count = 0;
  ZE_OK(zetMetricGroupCalculateMetricValues(group_, ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES, raw.size(),
                                            raw.data(), &count, nullptr));
  EXPECT_EQ(2 * kMetricCount, count);
  // Fewer values than needed: only those.
  count = 13;
  std::vector<zet_typed_value_t> values(count);
  ZE_OK(zetMetricGroupCalculateMetricValues(group_, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw.size(),
                                            raw.data(), &count, values.data()));
  EXPECT_EQ(13u, count);
  EXPECT_EQ(0x2000u, values[10].value.ui64);
  EXPECT_EQ(11u, values[11].value.ui64);
  // More than needed: the count is corrected.
  count = 100;
  values.resize(count);
  ZE_OK(zetMetricGroupCalculateMetricValues(group_, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw.size(),
                                            raw.data(), &count, values.data()));
  EXPECT_EQ(2 * kMetricCount, count);

  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SIZE,
            zetMetricGroupCalculateMetricValues(group_, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES,
                                                raw.size() - 1, raw.data(), &count, nullptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ENUMERATION,
            zetMetricGroupCalculateMetricValues(group_, zet_metric_group_calculation_type_t(2), raw.size(),
                                                raw.data(), &count, nullptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
            zetMetricGroupCalculateMetricValues(group_, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES,
                                                raw.size(), nullptr, &count, nullptr));
  // No reports: no values.
  count = 0;
  ZE_OK(zetMetricGroupCalculateMetricValues(group_, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 0, raw.data(),
                                            &count, nullptr));
  EXPECT_EQ(0u, count);
}

TEST_F(SimZeSampling, KernelBaseAddressAndDebugInfo) {
  const uintptr_t bias = moduleLoadBias();
  Symbol body = findSymbol(*moduleBytes_, "hot_loop", STT_FUNC);
  ASSERT_TRUE(body.found);

  void* fn = nullptr;
  ZE_OK(zeDriverGetExtensionFunctionAddress(driver_, "zexKernelGetBaseAddress", &fn));
  ASSERT_NE(nullptr, fn);
  auto getBase = reinterpret_cast<ze_result_t (*)(ze_kernel_handle_t, uint64_t*)>(fn);
  uint64_t base = 0;
  if (interceptMode()) {
    // Behind the loader's intercept layer the program holds the loader's
    // kernel handles, which the driver's own function does not know.
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, getBase(hot_, &base));
  } else {
    ZE_OK(getBase(hot_, &base));
    EXPECT_EQ(bias + body.value, base);
    // Inside the module's mapped code.
    Dl_info info{};
    ASSERT_NE(0, dladdr(reinterpret_cast<void*>(base), &info));
    EXPECT_EQ(bias, reinterpret_cast<uintptr_t>(info.dli_fbase));
    EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER, getBase(hot_, nullptr));
  }

  size_t size = 0;
  ZE_OK(zetModuleGetDebugInfo(module_, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &size, nullptr));
  ASSERT_EQ(moduleBytes_->size(), size);
  std::vector<uint8_t> debug(size);
  ZE_OK(zetModuleGetDebugInfo(module_, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &size, debug.data()));
  EXPECT_EQ(*moduleBytes_, debug);
  size_t tooSmall = size - 1;
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_SIZE,
            zetModuleGetDebugInfo(module_, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &tooSmall, debug.data()));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_ENUMERATION,
            zetModuleGetDebugInfo(module_, zet_module_debug_info_format_t(1), &size, nullptr));
  EXPECT_EQ(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
            zetModuleGetDebugInfo(module_, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, nullptr, nullptr));
}

TEST_F(SimZeSampling, ProgramsOwnSignalsOfTheSameNumberReachItsHandler) {
  activate();
  zet_metric_streamer_handle_t s = nullptr;
  ZE_OK(open(&s));  // the driver's handler is installed now
  const int before = g_programSignals.load();
  errno = 1234;
  ASSERT_EQ(0, raise(samplingSignal()));
  EXPECT_EQ(1234, errno) << "errno changed across the signal";
  EXPECT_EQ(before + 1, g_programSignals.load());
  EXPECT_EQ(SI_TKILL, g_lastCode.load());

  // With a value (pthread_sigqueue): delivered as sent.
  union sigval value;
  value.sival_ptr = reinterpret_cast<void*>(intptr_t{0x5a5a});
  ASSERT_EQ(0, pthread_sigqueue(pthread_self(), samplingSignal(), value));
  EXPECT_EQ(before + 2, g_programSignals.load());
  EXPECT_EQ(SI_QUEUE, g_lastCode.load());
  EXPECT_EQ(0x5a5a, g_lastValue.load());

  // Sampling a hot kernel sends the program nothing.
  ze_command_list_handle_t imm = syncImmediate();
  ASSERT_NO_FATAL_FAILURE(runHot(imm, 40'000'000));
  EXPECT_FALSE(readAll(s).empty());
  EXPECT_EQ(before + 2, g_programSignals.load());

  ZE_OK(close(s));
  ASSERT_EQ(0, raise(samplingSignal()));
  EXPECT_EQ(before + 3, g_programSignals.load());
  ZE_OK(zeCommandListDestroy(imm));
}

// A handler the program installs after the driver's takes the signal over:
// launches are then not sampled, and the program never sees a sampling
// timer's signal. Putting the driver's back resumes sampling.
TEST_F(SimZeSampling, AProgramHandlerInstalledLaterTakesTheSignalOver) {
  activate();
  zet_metric_streamer_handle_t s = nullptr;
  ZE_OK(open(&s));
  struct sigaction mine {}, drivers {};
  mine.sa_sigaction = programHandler;
  sigemptyset(&mine.sa_mask);
  mine.sa_flags = SA_SIGINFO;
  ASSERT_EQ(0, sigaction(samplingSignal(), &mine, &drivers));
  const int before = g_programSignals.load();
  ze_command_list_handle_t imm = syncImmediate();
  ASSERT_NO_FATAL_FAILURE(runHot(imm, 40'000'000));
  EXPECT_TRUE(readAll(s).empty());
  EXPECT_EQ(before, g_programSignals.load());
  ASSERT_EQ(0, sigaction(samplingSignal(), &drivers, nullptr));
  ASSERT_NO_FATAL_FAILURE(runHot(imm, 40'000'000));
  EXPECT_FALSE(readAll(s).empty());
  EXPECT_EQ(before, g_programSignals.load());
  ZE_OK(close(s));
  ZE_OK(zeCommandListDestroy(imm));
}

// Streamers opened and closed while kernels run on another thread: every
// close returns, and nothing is written into a closed streamer (which would
// crash or corrupt the heap).
TEST_F(SimZeSampling, OpenAndCloseWhileKernelsRun) {
  activate();
  ze_command_queue_desc_t qdesc = typed<ze_command_queue_desc_t>(ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
  qdesc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  ze_command_list_handle_t async = nullptr;
  ZE_OK(zeCommandListCreateImmediate(context_, device_, &qdesc, &async));
  for (int i = 0; i < 20; ++i) ASSERT_NO_FATAL_FAILURE(runHot(async, 5'000'000));
  for (int i = 0; i < 50; ++i) {
    zet_metric_streamer_handle_t s = nullptr;
    ZE_OK(open(&s, 20'000));
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (i % 10)));
    readAll(s);
    ZE_OK(close(s));
  }
  ZE_OK(zeCommandListDestroy(async));  // lets the queued launches finish
}

// One report per sampling period of the kernel's running time, also when the
// period is shorter than the scheduler tick on which CPU-time timers expire.
TEST_F(SimZeSampling, ReportsFollowThePeriod) {
  activate();
  ze_event_pool_desc_t pdesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                             ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 1};
  ze_event_pool_handle_t pool = nullptr;
  ZE_OK(zeEventPoolCreate(context_, &pdesc, 1, &device_, &pool));
  ze_event_desc_t edesc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
  ze_event_handle_t event = nullptr;
  ZE_OK(zeEventCreate(pool, &edesc, &event));
  ze_command_list_handle_t imm = syncImmediate();
  zet_metric_streamer_handle_t s = nullptr;
  ZE_OK(open(&s));
  const uint64_t rounds = 40'000'000;
  ZE_OK(zeKernelSetArgumentValue(hot_, 0, sizeof rounds, &rounds));
  ze_group_count_t one{1, 1, 1};
  ZE_OK(zeCommandListAppendLaunchKernel(imm, hot_, &one, event, 0, nullptr));
  ze_kernel_timestamp_result_t ts{};
  ZE_OK(zeEventQueryKernelTimestamp(event, &ts));
  const double ns = double((ts.global.kernelEnd - ts.global.kernelStart) & 0xffffffffull) * 1e9 / 19.2e6;
  const double periods = ns / kPeriodNs;
  const size_t reports = readAll(s).size() / kReportSize;
  // The kernel's CPU time is at most its device time; on a loaded machine it
  // may be much less.
  EXPECT_LE(double(reports), periods + 2) << ns << " ns";
  EXPECT_GE(double(reports), periods / 4) << ns << " ns";
  ZE_OK(close(s));
  ZE_OK(zeCommandListDestroy(imm));
  ZE_OK(zeEventDestroy(event));
  ZE_OK(zeEventPoolDestroy(pool));
}

// A full streamer (65 536 reports: about 1.3 s of kernel time at 20 us)
// drops new samples, and the next read says so, once, with the data.
TEST_F(SimZeSampling, AFullStreamerDropsAndSaysSoOnce) {
  activate();
  ze_command_list_handle_t imm = syncImmediate();
  zet_metric_streamer_handle_t s = nullptr;
  ZE_OK(open(&s, 20'000));
  constexpr size_t kCapacity = 65'536;
  size_t size = 0;
  for (int i = 0; i < 100 && size < kCapacity * kReportSize; ++i) {
    ASSERT_NO_FATAL_FAILURE(runHot(imm, 200'000'000));
    ZE_OK(zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr));
  }
  ASSERT_EQ(kCapacity * kReportSize, size);
  ASSERT_NO_FATAL_FAILURE(runHot(imm, 20'000'000));  // surely dropped
  std::vector<uint8_t> raw(size);
  EXPECT_EQ(ZE_RESULT_WARNING_DROPPED_DATA, zetMetricStreamerReadData(s, UINT32_MAX, &size, raw.data()));
  EXPECT_EQ(kCapacity * kReportSize, size);
  ASSERT_NO_FATAL_FAILURE(runHot(imm, 20'000'000));
  size = raw.size();
  EXPECT_EQ(ZE_RESULT_SUCCESS, zetMetricStreamerReadData(s, UINT32_MAX, &size, raw.data()));
  EXPECT_GT(size, 0u);
  ZE_OK(close(s));
  ZE_OK(zeCommandListDestroy(imm));
}

}  // namespace
