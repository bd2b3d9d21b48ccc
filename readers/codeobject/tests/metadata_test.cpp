// Metadata shapes the clang on the build machine does not write (code object
// V5 arguments, register and spill counts, unknown keys) and malformed
// values, each in a minimal code object whose note the test writes itself.
#include <gtest/gtest.h>

#include <msgpack.hpp>

#include <string_view>

#include "gtap/readers/code_object.h"
#include "synthetic_code_object.h"

namespace gtap::readers {
namespace {

using testing::synthesizeCodeObject;

class MetadataWriter {
 public:
  MetadataWriter& map(uint32_t entries) { return packed(packer_.pack_map(entries)); }
  MetadataWriter& array(uint32_t elements) { return packed(packer_.pack_array(elements)); }
  MetadataWriter& str(std::string_view text) {
    packer_.pack_str(static_cast<uint32_t>(text.size()));
    packer_.pack_str_body(text.data(), static_cast<uint32_t>(text.size()));
    return *this;
  }
  MetadataWriter& number(uint64_t value) { return packed(packer_.pack_uint64(value)); }
  MetadataWriter& signedNumber(int64_t value) { return packed(packer_.pack_int64(value)); }
  MetadataWriter& entry(std::string_view key, uint64_t value) { return str(key).number(value); }
  MetadataWriter& entry(std::string_view key, std::string_view value) { return str(key).str(value); }

  std::vector<uint8_t> bytes() const {
    const auto* data = reinterpret_cast<const uint8_t*>(buffer_.data());
    return {data, data + buffer_.size()};
  }

 private:
  MetadataWriter& packed(msgpack::packer<msgpack::sbuffer>&) { return *this; }
  msgpack::sbuffer buffer_;
  msgpack::packer<msgpack::sbuffer> packer_{buffer_};
};

std::string refusal(const std::vector<uint8_t>& metadata) {
  const std::vector<uint8_t> object = synthesizeCodeObject(metadata);
  try {
    parseAmdgpuCodeObject(object.data(), object.size());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(parsed)";
}

constexpr std::string_view kWhere = "NT_AMDGPU_METADATA note in PT_NOTE segment 0: ";

// {"amdhsa.kernels": [{".name": "k", <field>: <value written by `field`>}]}
template <typename WriteField>
std::vector<uint8_t> oneKernelWith(WriteField field) {
  MetadataWriter w;
  w.map(1).str("amdhsa.kernels").array(1).map(2).entry(".name", "k");
  field(w);
  return w.bytes();
}

TEST(SyntheticMetadata, CodeObjectV5Kernel) {
  MetadataWriter w;
  w.map(4);
  w.str("amdhsa.version").array(2).number(1).number(2);
  w.str("amdhsa.target").str("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-");
  w.number(7).str("a key that is not a string is skipped");
  w.str("amdhsa.kernels").array(1).map(13);
  w.entry(".name", "k5").entry(".symbol", "k5.kd");
  w.entry(".kernarg_segment_size", 280).entry(".kernarg_segment_align", 8);
  w.entry(".agpr_count", 12).entry(".sgpr_spill_count", 3).entry(".vgpr_spill_count", 4);
  w.entry(".uniform_work_group_size", 1).entry(".wavefront_size", 64);
  w.entry(".max_flat_workgroup_size", 1024);
  w.str(".reqd_workgroup_size").array(3).number(256).number(2).number(1);
  w.str(".language_version").array(2).number(2).number(0);  // no .language: version alone
  w.str(".args").array(7);
  w.map(5).entry(".offset", 0).entry(".size", 8).entry(".value_kind", "global_buffer")
      .entry(".address_space", "global").entry(".name", "out");
  w.map(4).entry(".offset", 8).entry(".size", 8).entry(".value_kind", "image").entry(".name", "img");
  w.map(3).entry(".offset", 16).entry(".size", 4).entry(".value_kind", "hidden_block_count_x");
  w.map(3).entry(".offset", 28).entry(".size", 2).entry(".value_kind", "hidden_group_size_x");
  w.map(4).entry(".offset", 112).entry(".size", 8).entry(".value_kind", "hidden_heap_v1")
      .entry(".address_space", "global");
  w.map(3).entry(".offset", 216).entry(".size", 8).entry(".value_kind", "hidden_queue_ptr");
  w.map(4).entry(".offset", 224).entry(".size", 8).entry(".value_kind", "hidden_from_the_future")
      .entry(".address_space", "global");

  const std::vector<uint8_t> object = synthesizeCodeObject(w.bytes());
  const CodeObjectInfo info = parseAmdgpuCodeObject(object.data(), object.size());
  EXPECT_EQ(info.target, "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-");
  EXPECT_EQ(info.metadataVersion, "1.2");
  EXPECT_EQ(info.abiVersion, "4");
  ASSERT_EQ(info.kernels.size(), 1u);
  const KernelInfo& k = info.kernels[0];
  EXPECT_EQ(k.name, "k5");
  EXPECT_EQ(k.language, "2.0");
  EXPECT_EQ(k.kernargSegmentSize, 280u);
  EXPECT_EQ(k.agprCount, 12u);
  EXPECT_EQ(k.sgprSpillCount, 3u);
  EXPECT_EQ(k.vgprSpillCount, 4u);
  EXPECT_EQ(k.maxFlatWorkgroupSize, 1024u);
  EXPECT_EQ(k.requiredWorkgroupSize, (std::array<uint32_t, 3>{256, 2, 1}));
  EXPECT_FALSE(k.hasDescriptor);  // no symbol table at all
  EXPECT_EQ(k.explicitArgCount(), 2u);
  EXPECT_EQ(k.hiddenArgCount(), 5u);

  const std::vector<std::tuple<ArgValueKind, bool, bool>> expected = {
      // kind, hidden, isPointer
      {ArgValueKind::globalBuffer, false, true},
      {ArgValueKind::image, false, true},
      {ArgValueKind::hiddenBlockCountX, true, false},
      {ArgValueKind::hiddenGroupSizeX, true, false},
      {ArgValueKind::hiddenHeapV1, true, true},
      {ArgValueKind::hiddenQueuePtr, true, true},
      // An unknown hidden kind keeps its text; its address space alone does
      // not make it a pointer.
      {ArgValueKind::other, true, false},
  };
  ASSERT_EQ(k.args.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(k.args[i].kind, std::get<0>(expected[i]));
    EXPECT_EQ(k.args[i].hidden, std::get<1>(expected[i]));
    EXPECT_EQ(k.args[i].isPointer, std::get<2>(expected[i]));
  }
  EXPECT_EQ(k.args[6].valueKind, "hidden_from_the_future");
  EXPECT_EQ(k.args[1].name, "img");
}

TEST(SyntheticMetadata, NoKernelsAndNoTargetFallBackToFlags) {
  MetadataWriter w;
  w.map(1).str("amdhsa.version").array(2).number(1).number(1);
  const std::vector<uint8_t> object = synthesizeCodeObject(w.bytes(), 0x230 /* gfx908, xnack off */);
  const CodeObjectInfo info = parseAmdgpuCodeObject(object.data(), object.size());
  EXPECT_EQ(info.target, "amdgcn-amd-amdhsa--gfx908:xnack-");
  EXPECT_TRUE(info.kernels.empty());
}

TEST(SyntheticMetadata, BadValuesAreNamedWithTheirPath) {
  EXPECT_EQ(refusal(oneKernelWith([](MetadataWriter& w) { w.entry(".sgpr_count", 1ull << 32); })),
            std::string(kWhere) + "amdhsa.kernels[0] (k): .sgpr_count: 4294967296 does not fit in 32 bits");
  EXPECT_EQ(refusal(oneKernelWith([](MetadataWriter& w) { w.str(".vgpr_count").signedNumber(-1); })),
            std::string(kWhere) +
                "amdhsa.kernels[0] (k): .vgpr_count: expected an unsigned integer, found a negative integer");
  EXPECT_EQ(refusal(oneKernelWith([](MetadataWriter& w) {
              w.str(".reqd_workgroup_size").array(2).number(64).number(1);
            })),
            std::string(kWhere) + "amdhsa.kernels[0] (k): .reqd_workgroup_size: expected 3 elements, found 2");
  EXPECT_EQ(refusal(oneKernelWith([](MetadataWriter& w) {
              w.str(".args").array(1).map(2).entry(".offset", 0).entry(".size", 8);
            })),
            std::string(kWhere) + "amdhsa.kernels[0] (k): .args[0]: missing .value_kind");
  EXPECT_EQ(refusal(oneKernelWith([](MetadataWriter& w) { w.str(".args").map(0); })),
            std::string(kWhere) + "amdhsa.kernels[0] (k): .args: expected an array, found a map");

  MetadataWriter nameless;
  nameless.map(1).str("amdhsa.kernels").array(1).map(1).entry(".sgpr_count", 3);
  EXPECT_EQ(refusal(nameless.bytes()), std::string(kWhere) + "amdhsa.kernels[0]: missing .name");

  EXPECT_EQ(refusal({}), std::string(kWhere) + "msgpack: insufficient bytes");
}

// The kernel name goes into every error path; a forged huge one is cut.
TEST(SyntheticMetadata, HugeKernelNameIsShortenedInErrors) {
  const std::string name(100000, 'n');
  MetadataWriter w;
  w.map(1).str("amdhsa.kernels").array(1).map(2).entry(".name", name);
  w.str(".args").array(1).map(1).entry(".offset", "zero");
  EXPECT_EQ(refusal(w.bytes()), std::string(kWhere) + "amdhsa.kernels[0] (" +
                                    std::string(80, 'n') +
                                    "...): .args[0]: .offset: expected an unsigned integer, found a string");
}

}  // namespace
}  // namespace gtap::readers
