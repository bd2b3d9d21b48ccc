// Real code objects from kernels.cl: the parsed metadata must match what the
// kernels declare, for each target and code object version built.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "fixture_files.h"
#include "gtap/readers/code_object.h"

namespace gtap::readers {
namespace {

using testing::FixtureSpec;
using testing::kFixtures;
using testing::readFile;

const KernelInfo& kernelNamed(const CodeObjectInfo& info, const std::string& name) {
  for (const KernelInfo& kernel : info.kernels) {
    if (kernel.name == name) return kernel;
  }
  throw std::runtime_error("no kernel " + name);
}

struct ExpectedArg {
  const char* name;
  uint32_t offset;
  uint32_t size;
  const char* valueKind;
  const char* addressSpace;
  bool isPointer;
};

void expectArgs(const KernelInfo& kernel, const std::vector<ExpectedArg>& expected,
                bool argNames) {
  ASSERT_EQ(kernel.explicitArgCount(), expected.size()) << kernel.name;
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(kernel.name + " arg " + std::to_string(i));
    const KernelArg& arg = kernel.args[i];
    EXPECT_EQ(arg.name, argNames ? expected[i].name : "");
    EXPECT_EQ(arg.offset, expected[i].offset);
    EXPECT_EQ(arg.size, expected[i].size);
    EXPECT_EQ(arg.valueKind, expected[i].valueKind);
    EXPECT_EQ(arg.addressSpace, expected[i].addressSpace);
    EXPECT_EQ(arg.isPointer, expected[i].isPointer);
    EXPECT_FALSE(arg.hidden);
  }
}

class CodeObjectTest : public ::testing::TestWithParam<FixtureSpec> {
 protected:
  void SetUp() override {
    GTAP_REQUIRE_FIXTURE(GetParam());
    bytes_ = readFile(GetParam().path);
    info_ = parseAmdgpuCodeObject(bytes_.data(), bytes_.size());
  }
  std::vector<uint8_t> bytes_;
  CodeObjectInfo info_;
};

TEST_P(CodeObjectTest, TargetAndVersions) {
  EXPECT_TRUE(looksLikeAmdgpuCodeObject(bytes_.data(), bytes_.size()));
  EXPECT_EQ(info_.target, GetParam().target);
  EXPECT_EQ(info_.abiVersion, GetParam().codeObjectVersion);
  EXPECT_EQ(info_.metadataVersion, GetParam().metadataVersion);
  std::vector<std::string> names;
  for (const KernelInfo& kernel : info_.kernels) names.push_back(kernel.name);
  EXPECT_EQ(names, (std::vector<std::string>{"vector_add", "scale_by_struct", "tile_sum",
                                             "offset_fill"}));
}

TEST_P(CodeObjectTest, VectorAdd) {
  const KernelInfo& k = kernelNamed(info_, "vector_add");
  EXPECT_EQ(k.symbol, "vector_add.kd");
  EXPECT_EQ(k.language, "OpenCL C 1.2");
  expectArgs(k,
             {{"a", 0, 8, "global_buffer", "global", true},
              {"b", 8, 8, "global_buffer", "global", true},
              {"c", 16, 8, "global_buffer", "global", true},
              {"n", 24, 4, "by_value", "", false}},
             GetParam().argNames);
  // Unused implicit arguments are dropped at -O2, hidden ones with them.
  EXPECT_EQ(k.hiddenArgCount(), 0u);
  EXPECT_EQ(k.args[0].kind, ArgValueKind::globalBuffer);
  EXPECT_EQ(k.args[3].kind, ArgValueKind::byValue);
  EXPECT_EQ(k.args[0].typeName, "float*");
  EXPECT_EQ(k.args[3].typeName, "uint");
  EXPECT_EQ(k.kernargSegmentSize, 28u);
  EXPECT_EQ(k.kernargSegmentAlign, 8u);
  EXPECT_EQ(k.groupSegmentFixedSize, 0u);
  EXPECT_EQ(k.privateSegmentFixedSize, 0u);
  EXPECT_EQ(k.wavefrontSize, GetParam().wavefrontSize);
  EXPECT_EQ(k.maxFlatWorkgroupSize, 256u);
  EXPECT_EQ(k.requiredWorkgroupSize, (std::array<uint32_t, 3>{0, 0, 0}));
}

TEST_P(CodeObjectTest, ByValueStruct) {
  const KernelInfo& k = kernelNamed(info_, "scale_by_struct");
  expectArgs(k,
             {{"data", 0, 8, "global_buffer", "global", true},
              {"p", 8, 16, "by_value", "", false},
              {"count", 24, 8, "by_value", "", false}},
             GetParam().argNames);
  EXPECT_EQ(k.hiddenArgCount(), 0u);
  EXPECT_EQ(k.args[1].typeName, "scale_params");
  EXPECT_EQ(k.kernargSegmentSize, 32u);
  EXPECT_EQ(k.kernargSegmentAlign, 8u);
  EXPECT_EQ(k.groupSegmentFixedSize, 0u);
}

TEST_P(CodeObjectTest, LocalMemoryAndRequiredWorkgroupSize) {
  const KernelInfo& k = kernelNamed(info_, "tile_sum");
  expectArgs(k,
             {{"in", 0, 8, "global_buffer", "global", true},
              {"out", 8, 8, "global_buffer", "global", true},
              {"scratch", 16, 4, "dynamic_shared_pointer", "local", true}},
             GetParam().argNames);
  EXPECT_EQ(k.args[2].kind, ArgValueKind::dynamicSharedPointer);
  EXPECT_EQ(k.kernargSegmentSize, 20u);
  // `local int fixed[128]`; the dynamic pointer's memory is sized at dispatch.
  EXPECT_EQ(k.groupSegmentFixedSize, 512u);
  EXPECT_EQ(k.requiredWorkgroupSize, (std::array<uint32_t, 3>{64, 1, 1}));
  EXPECT_EQ(k.maxFlatWorkgroupSize, 64u);
  EXPECT_EQ(k.wavefrontSize, GetParam().wavefrontSize);
}

TEST_P(CodeObjectTest, HiddenArguments) {
  const KernelInfo& k = kernelNamed(info_, "offset_fill");
  expectArgs(k,
             {{"out", 0, 8, "global_buffer", "global", true},
              {"value", 8, 4, "by_value", "", false}},
             GetParam().argNames);
  // The V3/V4 implicit block as clang 14 lays it out: three 64-bit global
  // offsets, three unused slots, the multigrid sync pointer.
  const std::vector<std::pair<std::string, ArgValueKind>> hidden = {
      {"hidden_global_offset_x", ArgValueKind::hiddenGlobalOffsetX},
      {"hidden_global_offset_y", ArgValueKind::hiddenGlobalOffsetY},
      {"hidden_global_offset_z", ArgValueKind::hiddenGlobalOffsetZ},
      {"hidden_none", ArgValueKind::hiddenNone},
      {"hidden_none", ArgValueKind::hiddenNone},
      {"hidden_none", ArgValueKind::hiddenNone},
      {"hidden_multigrid_sync_arg", ArgValueKind::hiddenMultigridSyncArg}};
  ASSERT_EQ(k.hiddenArgCount(), hidden.size());
  ASSERT_EQ(k.args.size(), 2 + hidden.size());
  for (size_t i = 0; i < hidden.size(); ++i) {
    SCOPED_TRACE(i);
    const KernelArg& arg = k.args[2 + i];
    EXPECT_TRUE(arg.hidden);
    EXPECT_EQ(arg.valueKind, hidden[i].first);
    EXPECT_EQ(arg.kind, hidden[i].second);
    EXPECT_EQ(arg.offset, 16 + 8 * i);
    EXPECT_EQ(arg.size, 8u);
    EXPECT_EQ(arg.isPointer, arg.kind == ArgValueKind::hiddenMultigridSyncArg);
  }
  EXPECT_EQ(k.kernargSegmentSize, 72u);
  EXPECT_EQ(k.kernargSegmentAlign, 8u);
}

TEST_P(CodeObjectTest, RegisterCounts) {
  for (const KernelInfo& k : info_.kernels) {
    SCOPED_TRACE(k.name);
    EXPECT_GT(k.sgprCount, 0u);
    EXPECT_LE(k.sgprCount, 112u);
    EXPECT_GT(k.vgprCount, 0u);
    EXPECT_LE(k.vgprCount, 256u);
    // Nothing in these kernels uses the MFMA accumulators or spills.
    EXPECT_EQ(k.agprCount, 0u);
    EXPECT_EQ(k.sgprSpillCount, 0u);
    EXPECT_EQ(k.vgprSpillCount, 0u);
    EXPECT_EQ(k.privateSegmentFixedSize, 0u);
  }
}

// The descriptor the loader hands to the hardware repeats three sizes from
// the metadata (AMDGPUUsage, "Kernel Descriptor": group segment, private
// segment and kernarg sizes at offsets 0, 4 and 8).
TEST_P(CodeObjectTest, DescriptorsAgreeWithMetadata) {
  std::set<uint64_t> offsets;
  for (const KernelInfo& k : info_.kernels) {
    SCOPED_TRACE(k.name);
    ASSERT_TRUE(k.hasDescriptor);
    EXPECT_EQ(k.descriptorAddress % 64, 0u);
    ASSERT_LE(k.descriptorOffset + 64, bytes_.size());
    const uint8_t* d = bytes_.data() + k.descriptorOffset;
    EXPECT_EQ(testing::le32(d + 0), k.groupSegmentFixedSize);
    EXPECT_EQ(testing::le32(d + 4), k.privateSegmentFixedSize);
    EXPECT_EQ(testing::le32(d + 8), k.kernargSegmentSize);
    offsets.insert(k.descriptorOffset);
  }
  EXPECT_EQ(offsets.size(), info_.kernels.size());
}

TEST_P(CodeObjectTest, InputNeedsNoAlignmentAndIsNotWritten) {
  std::vector<uint8_t> shifted(bytes_.size() + 1);
  std::copy(bytes_.begin(), bytes_.end(), shifted.begin() + 1);
  const std::vector<uint8_t> before = shifted;
  const CodeObjectInfo again = parseAmdgpuCodeObject(shifted.data() + 1, bytes_.size());
  EXPECT_EQ(shifted, before);
  ASSERT_EQ(again.kernels.size(), info_.kernels.size());
  for (size_t i = 0; i < again.kernels.size(); ++i) {
    EXPECT_EQ(again.kernels[i].name, info_.kernels[i].name);
    EXPECT_EQ(again.kernels[i].args.size(), info_.kernels[i].args.size());
    EXPECT_EQ(again.kernels[i].descriptorOffset, info_.kernels[i].descriptorOffset);
  }
}

// The addresses a dispatch's kernarg bytes hold, and what each points at.
TEST_P(CodeObjectTest, KernargAddresses) {
  auto segment = [](std::initializer_list<std::pair<uint32_t, uint64_t>> words, size_t size) {
    std::vector<uint8_t> bytes(size, 0xee);
    for (auto [offset, value] : words)
      for (int b = 0; b < 8 && offset + b < size; ++b) bytes[offset + b] = uint8_t(value >> (8 * b));
    return bytes;
  };
  using K = KernargAddressKind;
  std::vector<std::string> problems;
  {
    const KernelInfo& k = kernelNamed(info_, "vector_add");
    auto bytes = segment({{0, 0x1000}, {8, 0x2000}, {16, 0x3000}, {24, 7}}, k.kernargSegmentSize);
    auto a = kernargAddresses(k, bytes.data(), bytes.size(), problems);
    ASSERT_EQ(a.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(a[i].arg, i);
      EXPECT_EQ(a[i].offset, 8 * i);
      EXPECT_EQ(a[i].size, 8u);
      EXPECT_EQ(a[i].value, 0x1000u * (i + 1));
      EXPECT_EQ(a[i].kind, K::programMemory);
    }
    EXPECT_TRUE(problems.empty());
    // A segment cut short: what lies outside it is named, not read.
    auto cut = kernargAddresses(k, bytes.data(), 12, problems);
    ASSERT_EQ(cut.size(), 1u);
    EXPECT_EQ(cut[0].value, 0x1000u);
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_NE(problems[0].find("vector_add argument 1"), std::string::npos) << problems[0];
    EXPECT_NE(problems[0].find("outside the 12-byte kernarg segment"), std::string::npos) << problems[0];
    problems.clear();
    EXPECT_TRUE(kernargAddresses(k, nullptr, 0, problems).empty());
    EXPECT_EQ(problems.size(), 3u);
    problems.clear();
  }
  {
    // The dynamic LDS pointer is an offset in the group segment, 4 bytes.
    const KernelInfo& k = kernelNamed(info_, "tile_sum");
    auto bytes = segment({{0, 0x5000}, {8, 0x6000}, {16, 0x200}}, k.kernargSegmentSize);
    auto a = kernargAddresses(k, bytes.data(), bytes.size(), problems);
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[2].kind, K::groupSegment);
    EXPECT_EQ(a[2].size, 4u);
    EXPECT_EQ(a[2].value, 0x200u);
    EXPECT_EQ(a[1].kind, K::programMemory);
  }
  {
    // A hidden pointer is the runtime's: replay's runtime fills its own.
    const KernelInfo& k = kernelNamed(info_, "offset_fill");
    auto bytes = segment({{0, 0x7000}, {64, 0x8000}}, k.kernargSegmentSize);
    auto a = kernargAddresses(k, bytes.data(), bytes.size(), problems);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].kind, K::programMemory);
    EXPECT_EQ(a[1].offset, 64u);
    EXPECT_EQ(a[1].value, 0x8000u);
    EXPECT_EQ(a[1].kind, K::runtimeOwned);
  }
  EXPECT_TRUE(problems.empty());
}

INSTANTIATE_TEST_SUITE_P(Targets, CodeObjectTest, ::testing::ValuesIn(kFixtures),
                         [](const auto& param) { return std::string(param.param.label); });

TEST(ArgValueKind, DocumentedStringsAreKnown) {
  const char* documented[] = {
      "by_value", "global_buffer", "dynamic_shared_pointer", "sampler", "image", "pipe", "queue",
      "hidden_global_offset_x", "hidden_global_offset_y", "hidden_global_offset_z", "hidden_none",
      "hidden_printf_buffer", "hidden_hostcall_buffer", "hidden_default_queue",
      "hidden_completion_action", "hidden_multigrid_sync_arg", "hidden_block_count_x",
      "hidden_block_count_y", "hidden_block_count_z", "hidden_group_size_x",
      "hidden_group_size_y", "hidden_group_size_z", "hidden_remainder_x", "hidden_remainder_y",
      "hidden_remainder_z", "hidden_grid_dims", "hidden_heap_v1", "hidden_dynamic_lds_size",
      "hidden_private_base", "hidden_shared_base", "hidden_queue_ptr"};
  std::set<ArgValueKind> kinds;
  for (const char* text : documented) {
    SCOPED_TRACE(text);
    const ArgValueKind kind = argValueKindFromString(text);
    EXPECT_NE(kind, ArgValueKind::other);
    kinds.insert(kind);
  }
  EXPECT_EQ(kinds.size(), std::size(documented));
  EXPECT_EQ(argValueKindFromString("hidden_something_new"), ArgValueKind::other);
  EXPECT_EQ(argValueKindFromString(""), ArgValueKind::other);
}

}  // namespace
}  // namespace gtap::readers
