// parseCodeObjectMetadata: the simulated HSA runtime's code objects (host
// shared objects whose build adds the NT_AMDGPU_METADATA note a compiler
// would) read through the same path as AMDGPU ones, with each kernel's
// arguments as its C struct lays them out; real code objects read exactly as
// parseAmdgpuCodeObject reads them; other ELFs refused.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <map>
#include <set>

#include "fixture_files.h"
#include "gtap/readers/code_object.h"
#include "hsa_workload_args.h"

namespace gtap::readers {
namespace {

using testing::findMetadataNote;
using testing::kFixtures;
using testing::readFile;

#if defined(__x86_64__)
constexpr char kSimTarget[] = "gtap-sim-host-x86_64";
#elif defined(__aarch64__)
constexpr char kSimTarget[] = "gtap-sim-host-aarch64";
#endif

struct Arg {
  std::string name;
  size_t offset;
  size_t size;
  std::string valueKind;
  std::string addressSpace;
};

Arg buffer(const char* name, size_t offset) { return {name, offset, sizeof(void*), "global_buffer", "global"}; }
Arg value(const char* name, size_t offset, size_t size) { return {name, offset, size, "by_value", ""}; }

struct Expected {
  size_t kernargSize;
  uint32_t kernargAlign;
  uint32_t groupBytes;
  uint32_t privateBytes;
  std::vector<Arg> args;
};

std::string refusal(const std::vector<uint8_t>& bytes) {
  try {
    parseCodeObjectMetadata(bytes.data(), bytes.size());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(parsed)";
}

void expectKernels(const CodeObjectInfo& info, const std::map<std::string, Expected>& expected) {
  EXPECT_EQ(info.target, kSimTarget);
  EXPECT_EQ(info.metadataVersion, "1.2");
  EXPECT_EQ(info.abiVersion, "");  // a host ELF: no AMDGPU_HSA OS ABI
  EXPECT_EQ(info.elfFlags, 0u);
  std::set<std::string> names;
  for (const KernelInfo& k : info.kernels) {
    SCOPED_TRACE(k.name);
    names.insert(k.name);
    const auto found = expected.find(k.name);
    ASSERT_NE(found, expected.end());
    const Expected& e = found->second;
    EXPECT_EQ(k.symbol, k.name + ".kd");
    EXPECT_FALSE(k.hasDescriptor);  // no NAME.kd ELF symbol in a simulated code object
    EXPECT_EQ(k.kernargSegmentSize, e.kernargSize);
    EXPECT_EQ(k.kernargSegmentAlign, e.kernargAlign);
    EXPECT_EQ(k.groupSegmentFixedSize, e.groupBytes);
    EXPECT_EQ(k.privateSegmentFixedSize, e.privateBytes);
    EXPECT_EQ(k.wavefrontSize, 64u);
    EXPECT_EQ(k.maxFlatWorkgroupSize, 1024u);
    EXPECT_EQ(k.sgprCount, 0u);
    EXPECT_EQ(k.vgprCount, 0u);
    EXPECT_EQ(k.requiredWorkgroupSize, (std::array<uint32_t, 3>{0, 0, 0}));
    ASSERT_EQ(k.args.size(), e.args.size());
    EXPECT_EQ(k.explicitArgCount(), e.args.size());
    for (size_t i = 0; i < e.args.size(); ++i) {
      SCOPED_TRACE("argument " + std::to_string(i));
      const KernelArg& a = k.args[i];
      EXPECT_EQ(a.name, e.args[i].name);
      EXPECT_EQ(a.offset, e.args[i].offset);
      EXPECT_EQ(a.size, e.args[i].size);
      EXPECT_EQ(a.valueKind, e.args[i].valueKind);
      EXPECT_EQ(a.addressSpace, e.args[i].addressSpace);
      EXPECT_EQ(a.isPointer, e.args[i].valueKind == "global_buffer");
      EXPECT_FALSE(a.hidden);
    }
  }
  std::set<std::string> expectedNames;
  for (const auto& [name, e] : expected) expectedNames.insert(name);
  EXPECT_EQ(names, expectedNames);
  EXPECT_EQ(info.kernels.size(), expected.size());
}

TEST(SimulatedCodeObject, WorkloadKernelsAsTheirStructs) {
  const std::vector<uint8_t> bytes = readFile(GTAP_TEST_SIM_HSA_WORKLOAD_KERNELS);
  EXPECT_FALSE(looksLikeAmdgpuCodeObject(bytes.data(), bytes.size()));
  const CodeObjectInfo info = parseCodeObjectMetadata(bytes.data(), bytes.size());
  // The layouts as written out by hand for vector_add, then from the structs
  // of hsa_workload_args.h for every kernel.
  const KernelInfo* vectorAdd = nullptr;
  for (const KernelInfo& k : info.kernels) {
    if (k.name == "vector_add") vectorAdd = &k;
  }
  ASSERT_NE(vectorAdd, nullptr);
  ASSERT_EQ(vectorAdd->args.size(), 4u);
  EXPECT_EQ(vectorAdd->kernargSegmentSize, 32u);
  const uint32_t offsets[] = {0, 8, 16, 24};
  const uint32_t sizes[] = {8, 8, 8, 4};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(vectorAdd->args[i].name, std::string(1, "abcn"[i]));
    EXPECT_EQ(vectorAdd->args[i].offset, offsets[i]);
    EXPECT_EQ(vectorAdd->args[i].size, sizes[i]);
  }
  EXPECT_EQ(vectorAdd->args[3].valueKind, "by_value");

#define GTAP_FIELD(type, field) offsetof(type, field)
#define GTAP_SIZE(type, field) sizeof(((type*)nullptr)->field)
#define GTAP_VALUE(type, field) value(#field, GTAP_FIELD(type, field), GTAP_SIZE(type, field))
#define GTAP_BUFFER(type, field) buffer(#field, GTAP_FIELD(type, field))
  expectKernels(
      info,
      {{"vector_add",
        {sizeof(hsa_vector_add_args), 8, 0, 0,
         {GTAP_BUFFER(hsa_vector_add_args, a), GTAP_BUFFER(hsa_vector_add_args, b),
          GTAP_BUFFER(hsa_vector_add_args, c), GTAP_VALUE(hsa_vector_add_args, n)}}},
       {"scale",
        {sizeof(hsa_scale_args), 8, 0, 0,
         {GTAP_BUFFER(hsa_scale_args, x), GTAP_BUFFER(hsa_scale_args, y), GTAP_VALUE(hsa_scale_args, factor),
          GTAP_VALUE(hsa_scale_args, n)}}},
       {"add",
        {sizeof(hsa_add_args), 8, 0, 0,
         {GTAP_BUFFER(hsa_add_args, a), GTAP_BUFFER(hsa_add_args, b), GTAP_BUFFER(hsa_add_args, c),
          GTAP_VALUE(hsa_add_args, n)}}},
       {"reduce_partial",
        {sizeof(hsa_reduce_partial_args), 8, 0, 0,
         {GTAP_BUFFER(hsa_reduce_partial_args, in), GTAP_BUFFER(hsa_reduce_partial_args, partial),
          GTAP_VALUE(hsa_reduce_partial_args, n)}}},
       {"spin",
        {sizeof(hsa_spin_args), 8, 0, 0, {GTAP_VALUE(hsa_spin_args, ns), GTAP_BUFFER(hsa_spin_args, marks)}}},
       {"tiny", {sizeof(hsa_tiny_args), 8, 0, 0, {GTAP_BUFFER(hsa_tiny_args, counter)}}}});
#undef GTAP_FIELD
#undef GTAP_SIZE
#undef GTAP_VALUE
#undef GTAP_BUFFER
}

// The smoke test's kernels (tests/sim/hsa/smoke_kernels.c): static group and
// private memory, an explicit kernarg alignment, values before buffers.
TEST(SimulatedCodeObject, SmokeKernelsWithSegmentSizes) {
  const std::vector<uint8_t> bytes = readFile(GTAP_TEST_SIM_HSA_SMOKE_KERNELS);
  const CodeObjectInfo info = parseCodeObjectMetadata(bytes.data(), bytes.size());
  expectKernels(info,
                {{"vector_add", {32, 8, 0, 0, {buffer("a", 0), buffer("b", 8), buffer("c", 16), value("n", 24, 4)}}},
                 {"append", {16, 8, 0, 0, {buffer("log", 0), value("value", 8, 4)}}},
                 {"spin", {16, 8, 0, 0, {value("ns", 0, 8), buffer("ticks", 8)}}},
                 {"group_sum", {16, 8, 1024, 0, {buffer("in", 0), buffer("out", 8)}}},
                 {"geometry", {16, 8, 0, 8, {buffer("ids", 0), buffer("group_items", 8)}}}});
}

TEST(SimulatedCodeObject, NoteIsAWellFormedElfNote) {
  const std::vector<uint8_t> bytes = readFile(GTAP_TEST_SIM_HSA_WORKLOAD_KERNELS);
  const testing::NoteLocation note = findMetadataNote(bytes);
  EXPECT_EQ(note.header % 4, 0u);  // notes are 4-byte aligned in the file
  EXPECT_EQ(testing::le32(bytes.data() + note.header), 7u);  // namesz: "AMDGPU\0"
}

// What parseAmdgpuCodeObject refuses, it refuses for its machine; the
// metadata reader takes the note.
TEST(SimulatedCodeObject, AmdgpuParserRefusesItTheMetadataReaderDoesNot) {
  const std::vector<uint8_t> bytes = readFile(GTAP_TEST_SIM_HSA_SMOKE_KERNELS);
  try {
    parseAmdgpuCodeObject(bytes.data(), bytes.size());
    ADD_FAILURE() << "parsed a host shared object as an AMDGPU code object";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not EM_AMDGPU (224)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(refusal(bytes), "(parsed)");
}

TEST(CodeObjectMetadata, ElfWithoutTheNoteIsRefused) {
  const std::vector<uint8_t> self = readFile("/proc/self/exe");
  const std::string why = refusal(self);
  EXPECT_NE(why.find("no NT_AMDGPU_METADATA note (owner \"AMDGPU\", type 32)"), std::string::npos) << why;
#if defined(__x86_64__)
  EXPECT_NE(why.find("of this ELF for e_machine 62: neither an AMDGPU code object nor one carrying AMDGPU "
                     "metadata"),
            std::string::npos)
      << why;
#endif
  const std::string text = "not an ELF";
  EXPECT_EQ(refusal({text.begin(), text.end()}), "not an ELF file: the first bytes are not \\x7fELF");
  EXPECT_THROW(parseCodeObjectMetadata(nullptr, 0), std::runtime_error);
  std::vector<uint8_t> bytes = readFile(GTAP_TEST_SIM_HSA_SMOKE_KERNELS);
  bytes[4] = 1;  // ELFCLASS32
  EXPECT_EQ(refusal(bytes), "ELF class 1 is not ELFCLASS64 (2): AMDGPU code objects are 64-bit");
}

// Cut short anywhere, the simulated code object loses its section headers
// (at the end of the file), where alone its note is found: refused, cleanly.
TEST(CodeObjectMetadata, SimulatedCodeObjectCutShortIsRefused) {
  const std::vector<uint8_t> original = readFile(GTAP_TEST_SIM_HSA_SMOKE_KERNELS);
  for (size_t size = 0; size < original.size(); ++size) {
    SCOPED_TRACE(size);
    const std::vector<uint8_t> bytes(original.begin(), original.begin() + size);
    EXPECT_NE(refusal(bytes), "(parsed)");
  }
}

// Any byte of the note replaced: parsed or refused with a runtime_error,
// never anything else.
TEST(CodeObjectMetadata, SimulatedNoteBytesReplaced) {
  const std::vector<uint8_t> original = readFile(GTAP_TEST_SIM_HSA_SMOKE_KERNELS);
  const testing::NoteLocation note = findMetadataNote(original);
  size_t refused = 0;
  size_t parsed = 0;
  for (size_t at = note.header; at < note.desc + note.descSize; ++at) {
    for (uint8_t replacement : {uint8_t{0x00}, uint8_t{0xc1}, uint8_t{0xdf}, uint8_t{0xff}}) {
      if (original[at] == replacement) continue;
      std::vector<uint8_t> bytes = original;
      bytes[at] = replacement;
      (refusal(bytes) == "(parsed)" ? parsed : refused) += 1;
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(parsed, 0u);  // e.g. a changed letter in a name
}

// Real AMDGPU code objects: the same result as parseAmdgpuCodeObject.
class CodeObjectMetadataOfAmdgpu : public ::testing::TestWithParam<testing::FixtureSpec> {};

TEST_P(CodeObjectMetadataOfAmdgpu, SameAsTheAmdgpuParser) {
  GTAP_REQUIRE_FIXTURE(GetParam());
  const std::vector<uint8_t> bytes = readFile(GetParam().path);
  const CodeObjectInfo a = parseAmdgpuCodeObject(bytes.data(), bytes.size());
  const CodeObjectInfo b = parseCodeObjectMetadata(bytes.data(), bytes.size());
  EXPECT_EQ(b.target, a.target);
  EXPECT_EQ(b.target, GetParam().target);
  EXPECT_EQ(b.abiVersion, a.abiVersion);
  EXPECT_EQ(b.metadataVersion, a.metadataVersion);
  EXPECT_EQ(b.elfFlags, a.elfFlags);
  ASSERT_EQ(b.kernels.size(), a.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    SCOPED_TRACE(a.kernels[i].name);
    const KernelInfo& x = a.kernels[i];
    const KernelInfo& y = b.kernels[i];
    EXPECT_EQ(y.name, x.name);
    EXPECT_EQ(y.kernargSegmentSize, x.kernargSegmentSize);
    EXPECT_EQ(y.hasDescriptor, x.hasDescriptor);
    EXPECT_TRUE(y.hasDescriptor);
    EXPECT_EQ(y.descriptorOffset, x.descriptorOffset);
    ASSERT_EQ(y.args.size(), x.args.size());
    for (size_t j = 0; j < x.args.size(); ++j) {
      EXPECT_EQ(y.args[j].offset, x.args[j].offset);
      EXPECT_EQ(y.args[j].valueKind, x.args[j].valueKind);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, CodeObjectMetadataOfAmdgpu, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) { return std::string(info.param.label); });

}  // namespace
}  // namespace gtap::readers
