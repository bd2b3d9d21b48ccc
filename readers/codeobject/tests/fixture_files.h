// Shared by the code object tests: the code objects built from kernels.cl at
// build time, and the bytes of the note inside them that the tests corrupt.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gtap::readers::testing {

struct FixtureSpec {
  const char* label;      // test name suffix
  const char* path;       // empty when clang could not build it
  const char* processor;  // -mcpu
  const char* target;     // expected target ID
  const char* codeObjectVersion;
  const char* metadataVersion;
  uint32_t wavefrontSize;
  bool argNames;  // built with -cl-kernel-arg-info
};

inline const FixtureSpec kFixtures[] = {
    {"gfx90a_v4", GTAP_TEST_CODEOBJECT_GFX90A, "gfx90a", "amdgcn-amd-amdhsa--gfx90a", "4", "1.1",
     64, true},
    // V3 has no amdhsa.target: the target comes from e_flags, where gfx908
    // records sramecc and xnack as "on or any".
    {"gfx908_v3", GTAP_TEST_CODEOBJECT_GFX908_V3, "gfx908",
     "amdgcn-amd-amdhsa--gfx908:sramecc+:xnack+", "3", "1.0", 64, false},
    // RDNA defaults to wave32 unless built with -mwavefrontsize64.
    {"gfx1030_v4", GTAP_TEST_CODEOBJECT_GFX1030, "gfx1030", "amdgcn-amd-amdhsa--gfx1030", "4",
     "1.1", 32, true},
};

// Names the parameter in test listings instead of dumping its bytes.
inline void PrintTo(const FixtureSpec& spec, std::ostream* out) { *out << spec.label; }

inline std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Skips the test when the fixture could not be built; more text may be streamed.
#define GTAP_REQUIRE_FIXTURE(spec)                                                            \
  if ((spec).path[0] != '\0') {                                                               \
  } else                                                                                      \
    GTEST_SKIP() << "no clang able to build " << (spec).processor                             \
                 << " code objects was found when configuring; install clang and lld (Debian) " \
                    "and reconfigure"

// Where the NT_AMDGPU_METADATA note sits in a code object, found by its
// header bytes (namesz 7, type 32, "AMDGPU\0" padded to 8), independently of
// the parser under test.
struct NoteLocation {
  size_t header = 0;  // offset of n_namesz
  size_t desc = 0;    // offset of the MessagePack bytes
  size_t descSize = 0;
};

inline uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

inline NoteLocation findMetadataNote(const std::vector<uint8_t>& file) {
  static const uint8_t owner[8] = {'A', 'M', 'D', 'G', 'P', 'U', 0, 0};
  for (size_t at = 0; at + 20 <= file.size(); ++at) {
    const uint8_t* p = file.data() + at;
    if (le32(p) == 7 && le32(p + 8) == 32 && std::memcmp(p + 12, owner, 8) == 0) {
      const size_t descSize = le32(p + 4);
      if (at + 20 + descSize <= file.size()) return {at, at + 20, descSize};
    }
  }
  throw std::runtime_error("no NT_AMDGPU_METADATA note in the fixture");
}

}  // namespace gtap::readers::testing
