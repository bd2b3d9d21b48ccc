// libgtap.so's OnLoad against the HSA API tables runtimes hand tools: a
// table shorter than gtap's headers (an older runtime), where entries inside
// the sizes the table declares are wrapped and still reach the runtime's
// functions and entries past them are neither read nor written; tables laid
// out as ROCr 5.2 (Debian 12), 5.7 and 6.1 (Debian 13) lay them out, whatever
// headers gtap was built with; tables of versions gtap does not know, left
// alone; and null entries, wrapped so that the call is seen. The "runtime"
// here is this test's own functions (or none) in the tables.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <hsa/hsa_api_trace.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <vector>

namespace {

int g_getInfoCalls = 0;
int g_initCalls = 0;

hsa_status_t fakeInit() {
  ++g_initCalls;
  return HSA_STATUS_SUCCESS;
}
hsa_status_t fakeShutDown() { return HSA_STATUS_SUCCESS; }
hsa_status_t fakeGetInfo(hsa_system_info_t, void* value) {
  ++g_getInfoCalls;
  if (value) *static_cast<uint64_t*>(value) = 1000000000;
  return HSA_STATUS_SUCCESS;
}

using OnLoadFn = bool (*)(HsaApiTable*, uint64_t, uint64_t, const char* const*);

TEST(HsaToolTable, ShortTablesAreWrappedOnlyAsFarAsTheyGo) {
  void* gtap = dlopen(GTAP_TEST_LIBGTAP, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(gtap, nullptr) << dlerror();
  auto onLoad = reinterpret_cast<OnLoadFn>(dlsym(gtap, "OnLoad"));
  ASSERT_NE(onLoad, nullptr);
  ASSERT_NE(dlsym(gtap, "OnUnload"), nullptr);
  auto* priority = static_cast<const uint32_t*>(dlsym(gtap, "HSA_AMD_TOOL_PRIORITY"));
  ASSERT_NE(priority, nullptr);

  // A core table that ends after hsa_system_get_info; every later slot holds
  // a marker that must survive untouched. An AMD extension table with no
  // entries at all.
  CoreApiTable core;
  std::memset(&core, 0xab, sizeof core);
  core.version = {1, static_cast<uint32_t>(offsetof(CoreApiTable, hsa_system_extension_supported_fn)), 0, 0};
  core.hsa_init_fn = &fakeInit;
  core.hsa_shut_down_fn = &fakeShutDown;
  core.hsa_system_get_info_fn = &fakeGetInfo;
  CoreApiTable marker;
  std::memset(&marker, 0xab, sizeof marker);
  AmdExtTable amd;
  std::memset(&amd, 0xcd, sizeof amd);
  amd.version = {1, static_cast<uint32_t>(sizeof(ApiTableVersion)), 0, 0};
  AmdExtTable amdMarker;
  std::memset(&amdMarker, 0xcd, sizeof amdMarker);
  amdMarker.version = amd.version;
  HsaApiTable root{};
  root.version = {1, static_cast<uint32_t>(sizeof(HsaApiTable)), 0, 0};
  root.core_ = &core;
  root.amd_ext_ = &amd;

  ASSERT_TRUE(onLoad(&root, 1, 0, nullptr));
  // Wrapped: the slots no longer hold the runtime's functions...
  EXPECT_NE(core.hsa_init_fn, &fakeInit);
  EXPECT_NE(core.hsa_system_get_info_fn, &fakeGetInfo);
  // ...but calls through them still reach them.
  int before = g_getInfoCalls;
  uint64_t frequency = 0;
  EXPECT_EQ(core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency), HSA_STATUS_SUCCESS);
  EXPECT_EQ(frequency, 1000000000u);
  EXPECT_EQ(g_getInfoCalls, before + 1);
  EXPECT_EQ(core.hsa_init_fn(), HSA_STATUS_SUCCESS);
  EXPECT_EQ(g_initCalls, 1);
  // Past the declared size: not a byte changed.
  size_t tail = offsetof(CoreApiTable, hsa_system_extension_supported_fn);
  EXPECT_EQ(std::memcmp(reinterpret_cast<char*>(&core) + tail, reinterpret_cast<char*>(&marker) + tail,
                        sizeof core - tail),
            0);
  EXPECT_EQ(std::memcmp(&amd, &amdMarker, sizeof amd), 0);

  // A table handed over twice is not wrapped twice (the wrapper never
  // becomes its own "runtime" function).
  auto wrapped = core.hsa_system_get_info_fn;
  ASSERT_TRUE(onLoad(&root, 1, 0, nullptr));
  EXPECT_EQ(core.hsa_system_get_info_fn, wrapped);
  before = g_getInfoCalls;
  EXPECT_EQ(core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency), HSA_STATUS_SUCCESS);
  EXPECT_EQ(g_getInfoCalls, before + 1);
}

TEST(HsaToolTable, UnknownTableVersionIsLeftAlone) {
  void* gtap = dlopen(GTAP_TEST_LIBGTAP, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(gtap, nullptr) << dlerror();
  auto onLoad = reinterpret_cast<OnLoadFn>(dlsym(gtap, "OnLoad"));
  ASSERT_NE(onLoad, nullptr);
  CoreApiTable core;
  std::memset(&core, 0, sizeof core);
  core.version = {1, static_cast<uint32_t>(sizeof core), 0, 0};
  core.hsa_system_get_info_fn = &fakeGetInfo;
  HsaApiTable root{};
  root.version = {4, static_cast<uint32_t>(sizeof(HsaApiTable)), 0, 0};  // a major version gtap does not know
  root.core_ = &core;
  EXPECT_TRUE(onLoad(&root, 4, 0, nullptr));
  EXPECT_EQ(core.hsa_system_get_info_fn, &fakeGetInfo);
}

// --- tables laid out as ROCr lays them out, not as gtap's headers do ---------
//
// From ROCR-Runtime's src/inc/hsa_api_trace.h and hsa_api_trace_version.h at
// the release tags. Every table starts with ApiTableVersion {major, minor =
// the table's size in bytes, step, reserved}, then one pointer per entry.
//   ROCr 5.2 (Debian 12): HsaApiTable 1 (4 pointers, 48 bytes); CoreApiTable 1
//     (125 entries, 1016 bytes); AmdExtTable 1 (48 entries, 400 bytes).
//   ROCr 5.7: as 5.2 but AmdExtTable 1 holds 55 entries (456 bytes): 5.6 put
//     hsa_amd_memory_async_copy_on_engine and hsa_amd_memory_copy_engine_status
//     at entries 16 and 17 (counted from 0 after the version), right after
//     hsa_amd_memory_async_copy (15); what was at 16 and later moved by two.
//   ROCr 6.1 (Debian 13's 6.1.2): HsaApiTable 3 (5 pointers, tools_ added;
//     56 bytes); CoreApiTable 2 (the same 125 entries); AmdExtTable 2, step 1
//     (68 entries, 560 bytes: 5.7's 55, then vmem and scratch-limit entries).
// The core table's entries never moved: hsa_init is entry 0,
// hsa_system_get_info entry 2.
constexpr int kCoreEntries = 125;
constexpr int kAmdEntries52 = 48;
constexpr int kAmdEntries57 = 55;
constexpr int kAmdEntries61 = 68;
constexpr int kAmdCopyEngine = 16;  // first of the two entries 5.6 inserted

// A table as raw memory: the version, then `entries` pointers, then a tail of
// markers past the declared size that nothing may touch.
class RawTable {
 public:
  RawTable(uint32_t major, uint32_t step, int entries, void* fill = nullptr) : entries_(entries) {
    words_.assign(2 + entries + kTail, reinterpret_cast<void*>(0x7a11));
    for (int i = 0; i < entries; ++i) words_[2 + i] = fill;
    ApiTableVersion v{major, static_cast<uint32_t>(sizeof(ApiTableVersion) + entries * sizeof(void*)), step, 0};
    std::memcpy(words_.data(), &v, sizeof v);
  }
  void* get(int i) const { return words_.at(2 + i); }
  void set(int i, void* p) { words_.at(2 + i) = p; }
  void* data() { return words_.data(); }
  int entries() const { return entries_; }
  bool tailUntouched() const {
    for (size_t i = 2 + entries_; i < words_.size(); ++i)
      if (words_[i] != reinterpret_cast<void*>(0x7a11)) return false;
    return true;
  }

 private:
  static constexpr int kTail = 8;
  int entries_;
  std::vector<void*> words_;
};

struct Runtime {
  RawTable root, core, amd;
  Runtime(uint32_t rootMajor, int rootPointers, uint32_t coreMajor, uint32_t amdMajor, uint32_t amdStep,
          int amdEntries)
      : root(rootMajor, 0, rootPointers), core(coreMajor, 0, kCoreEntries), amd(amdMajor, amdStep, amdEntries) {
    root.set(0, core.data());
    root.set(1, amd.data());
    core.set(0, reinterpret_cast<void*>(&fakeInit));
    core.set(1, reinterpret_cast<void*>(&fakeShutDown));
    core.set(2, reinterpret_cast<void*>(&fakeGetInfo));
  }
  HsaApiTable* table() { return static_cast<HsaApiTable*>(root.data()); }
};

Runtime rocr52() { return Runtime(1, 4, 1, 1, 0, kAmdEntries52); }
Runtime rocr57() { return Runtime(1, 4, 1, 1, 0, kAmdEntries57); }
Runtime rocr61() { return Runtime(3, 5, 2, 2, 1, kAmdEntries61); }

OnLoadFn loadGtap() {
  void* gtap = dlopen(GTAP_TEST_LIBGTAP, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(gtap, nullptr) << dlerror();
  return gtap ? reinterpret_cast<OnLoadFn>(dlsym(gtap, "OnLoad")) : nullptr;
}

// Each table layout is wrapped entry by entry, the same wrapper for the same
// function wherever the layout puts it: gtap maps its entries onto the
// runtime's layout instead of assuming its headers' one.
TEST(HsaToolTable, RocrLayoutsFrom52To61AreWrappedByName) {
  OnLoadFn onLoad = loadGtap();
  ASSERT_NE(onLoad, nullptr);
  Runtime old = rocr52(), mid = rocr57(), now = rocr61();
  for (Runtime* r : {&old, &mid, &now}) {
    ASSERT_TRUE(onLoad(r->table(), 1, 0, nullptr));
    // Still reaching the runtime's function through the wrapper.
    int before = g_getInfoCalls;
    uint64_t frequency = 0;
    auto getInfo = reinterpret_cast<decltype(&fakeGetInfo)>(r->core.get(2));
    ASSERT_NE(getInfo, &fakeGetInfo);
    EXPECT_EQ(getInfo(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency), HSA_STATUS_SUCCESS);
    EXPECT_EQ(g_getInfoCalls, before + 1);
    EXPECT_TRUE(r->core.tailUntouched());
    EXPECT_TRUE(r->amd.tailUntouched());
    EXPECT_TRUE(r->root.tailUntouched());
  }
  // The core table: the same wrapper in the same place in every version.
  for (int i = 0; i < kCoreEntries; ++i) {
    EXPECT_NE(old.core.get(i), nullptr) << i;
    EXPECT_EQ(old.core.get(i), mid.core.get(i)) << i;
    EXPECT_EQ(old.core.get(i), now.core.get(i)) << i;
  }
  // The AMD extension table: 5.2's entry i is 5.7's and 6.1's entry i before
  // the insertion, i + 2 after it.
  std::set<void*> wrappers;
  for (int i = 0; i < kAmdEntries52; ++i) {
    int moved = i < kAmdCopyEngine ? i : i + 2;
    ASSERT_NE(old.amd.get(i), nullptr) << i;
    EXPECT_EQ(old.amd.get(i), mid.amd.get(moved)) << i;
    EXPECT_EQ(old.amd.get(i), now.amd.get(moved)) << i;
    wrappers.insert(old.amd.get(i));
  }
  EXPECT_EQ(wrappers.size(), static_cast<size_t>(kAmdEntries52)) << "one wrapper per function";
  // The inserted entries: wrapped by gtap built with headers that have them
  // (then with wrappers of their own), left as they were otherwise.
  for (int i : {kAmdCopyEngine, kAmdCopyEngine + 1}) {
    EXPECT_EQ(mid.amd.get(i), now.amd.get(i)) << i;
    if (mid.amd.get(i)) {
      EXPECT_EQ(wrappers.count(mid.amd.get(i)), 0u) << i;
    }
  }
}

// Tables whose major version gtap does not know are left exactly as they
// were, the root's, the core table's or the AMD extension table's, while the
// same tables with the versions ROCr 6.1 gives them are wrapped.
TEST(HsaToolTable, UnknownMajorVersionsOfAnyTableAreLeftAlone) {
  OnLoadFn onLoad = loadGtap();
  ASSERT_NE(onLoad, nullptr);
  Runtime known(3, 5, 2, 2, 1, kAmdEntries61);
  ASSERT_TRUE(onLoad(known.table(), 3, 0, nullptr));
  EXPECT_NE(known.core.get(2), reinterpret_cast<void*>(&fakeGetInfo));
  EXPECT_NE(known.amd.get(0), nullptr);
  Runtime futureRoot(4, 5, 2, 2, 1, kAmdEntries61);
  Runtime futureCore(3, 5, 3, 2, 1, kAmdEntries61);
  Runtime futureAmd(3, 5, 2, 3, 1, kAmdEntries61);
  for (Runtime* r : {&futureRoot, &futureCore, &futureAmd}) {
    ASSERT_TRUE(onLoad(r->table(), 3, 0, nullptr));
    EXPECT_EQ(r->core.get(2), reinterpret_cast<void*>(&fakeGetInfo));
    for (int i = 3; i < kCoreEntries; ++i) EXPECT_EQ(r->core.get(i), nullptr) << i;
    for (int i = 0; i < kAmdEntries61; ++i) EXPECT_EQ(r->amd.get(i), nullptr) << i;
  }
}

// An entry the runtime left null is wrapped too, and the wrapper answers as
// a runtime's exported function does for it: HSA_STATUS_ERROR.
TEST(HsaToolTable, NullEntriesAreWrappedAndAnswerAnError) {
  OnLoadFn onLoad = loadGtap();
  ASSERT_NE(onLoad, nullptr);
  Runtime r = rocr52();
  constexpr int kGetMajorExtensionTable = 98;  // hsa_system_get_major_extension_table
  static_assert(offsetof(CoreApiTable, hsa_system_get_major_extension_table_fn) ==
                sizeof(ApiTableVersion) + kGetMajorExtensionTable * sizeof(void*));
  ASSERT_EQ(r.core.get(kGetMajorExtensionTable), nullptr);
  ASSERT_TRUE(onLoad(r.table(), 1, 0, nullptr));
  auto fn = reinterpret_cast<decltype(&hsa_system_get_major_extension_table)>(r.core.get(kGetMajorExtensionTable));
  ASSERT_NE(fn, nullptr);
  char table[64];
  EXPECT_EQ(fn(HSA_EXTENSION_AMD_LOADER, 1, sizeof table, table), HSA_STATUS_ERROR);
}

}  // namespace
