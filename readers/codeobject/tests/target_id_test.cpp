// Target IDs from e_flags: checked against what clang wrote into amdhsa.target
// for the same objects, and against the documented feature encodings.
#include <gtest/gtest.h>

#include "fixture_files.h"
#include "gtap/readers/code_object.h"
#include "target_id.h"

namespace gtap::readers::codeobject {
namespace {

using testing::kFixtures;
using testing::readFile;

class TargetFromFlagsTest : public ::testing::TestWithParam<testing::FixtureSpec> {};

TEST_P(TargetFromFlagsTest, MatchesTheCompiler) {
  GTAP_REQUIRE_FIXTURE(GetParam());
  const std::vector<uint8_t> bytes = readFile(GetParam().path);
  const CodeObjectInfo info = parseAmdgpuCodeObject(bytes.data(), bytes.size());
  EXPECT_EQ(processorName(info.elfFlags), GetParam().processor);
  // EI_OSABI and EI_ABIVERSION are bytes 7 and 8 of e_ident.
  EXPECT_EQ(targetIdFromElfHeader(bytes[7], bytes[8], info.elfFlags), GetParam().target);
}

INSTANTIATE_TEST_SUITE_P(Targets, TargetFromFlagsTest, ::testing::ValuesIn(kFixtures),
                         [](const auto& param) { return std::string(param.param.label); });

TEST(TargetFromFlags, FeatureSettingsPerVersion) {
  // V4 on: two bits per feature (unsupported, any, off, on).
  EXPECT_EQ(targetIdFromElfHeader(64, 2, 0x03f), "amdgcn-amd-amdhsa--gfx90a");
  EXPECT_EQ(targetIdFromElfHeader(64, 2, 0x53f), "amdgcn-amd-amdhsa--gfx90a");
  EXPECT_EQ(targetIdFromElfHeader(64, 2, 0x23f), "amdgcn-amd-amdhsa--gfx90a:xnack-");
  EXPECT_EQ(targetIdFromElfHeader(64, 3, 0xf3f), "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+");
  EXPECT_EQ(targetIdFromElfHeader(64, 3, 0x84c), "amdgcn-amd-amdhsa--gfx942:sramecc-");
  // V3: one bit per feature.
  EXPECT_EQ(targetIdFromElfHeader(64, 1, 0x12c), "amdgcn-amd-amdhsa--gfx900:xnack+");
  EXPECT_EQ(targetIdFromElfHeader(64, 1, 0x02c), "amdgcn-amd-amdhsa--gfx900");
  // V2: xnack in bit 0.
  EXPECT_EQ(targetIdFromElfHeader(64, 0, 0x02d), "amdgcn-amd-amdhsa--gfx902:xnack+");
}

TEST(TargetFromFlags, OtherOperatingSystemsAndUnknownProcessors) {
  EXPECT_EQ(targetIdFromElfHeader(65, 0, 0x041), "amdgcn-amd-amdpal--gfx1100");
  EXPECT_EQ(targetIdFromElfHeader(64, 2, 0x0fe), "amdgcn-amd-amdhsa--mach-0xfe");
  EXPECT_EQ(processorName(0x000), "");
  EXPECT_EQ(processorName(0x051), "gfx9-generic");
  EXPECT_EQ(codeObjectVersion(64, 3), "5");
  EXPECT_EQ(codeObjectVersion(65, 3), "");
}

}  // namespace
}  // namespace gtap::readers::codeobject
