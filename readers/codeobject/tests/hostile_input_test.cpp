// Input that is not a well-formed code object must be refused with a
// std::runtime_error that says what was wrong, never crash or read outside
// the given bytes. Each corrupted input gets its own exactly-sized buffer so
// AddressSanitizer or valgrind would see a read past the end.
#include <gtest/gtest.h>

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <sstream>

#include "fixture_files.h"
#include "gtap/readers/code_object.h"

namespace gtap::readers {
namespace {

using testing::findMetadataNote;
using testing::kFixtures;
using testing::readFile;

enum class Outcome { parsed, refused };

// Only std::runtime_error counts as a clean refusal; anything else escapes
// and fails the test.
Outcome parseOutcome(const std::vector<uint8_t>& bytes) {
  try {
    const CodeObjectInfo info = parseAmdgpuCodeObject(bytes.data(), bytes.size());
    size_t touched = info.target.size();
    for (const KernelInfo& k : info.kernels) touched += k.name.size() + k.args.size();
    (void)touched;
    return Outcome::parsed;
  } catch (const std::runtime_error&) {
    return Outcome::refused;
  }
}

std::string refusal(const std::vector<uint8_t>& bytes) {
  try {
    parseAmdgpuCodeObject(bytes.data(), bytes.size());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(parsed)";
}

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GTAP_REQUIRE_FIXTURE(kFixtures[0]);
    original_ = readFile(kFixtures[0].path);
    note_ = findMetadataNote(original_);
  }
  std::vector<uint8_t> original_;
  testing::NoteLocation note_;
};

TEST(HostileInput, NotElf) {
  const std::string text = "certainly not a code object";
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  EXPECT_EQ(refusal(bytes), "not an ELF file: the first bytes are not \\x7fELF");
  EXPECT_FALSE(looksLikeAmdgpuCodeObject(bytes.data(), bytes.size()));
  EXPECT_THROW(parseAmdgpuCodeObject(nullptr, 0), std::runtime_error);
  EXPECT_FALSE(looksLikeAmdgpuCodeObject(nullptr, 0));
}

TEST(HostileInput, ElfOfAnotherMachine) {
  const std::vector<uint8_t> self = readFile("/proc/self/exe");
  EXPECT_FALSE(looksLikeAmdgpuCodeObject(self.data(), self.size()));
#if defined(__x86_64__)
  EXPECT_EQ(refusal(self), "e_machine 62 is not EM_AMDGPU (224)");
#else
  EXPECT_NE(refusal(self).find("is not EM_AMDGPU (224)"), std::string::npos);
#endif
}

TEST_F(HostileInputTest, HeaderProblemsAreNamed) {
  std::vector<uint8_t> bytes = original_;
  bytes[4] = 1;  // EI_CLASS: ELFCLASS32
  EXPECT_EQ(refusal(bytes), "ELF class 1 is not ELFCLASS64 (2): AMDGPU code objects are 64-bit");
  EXPECT_FALSE(looksLikeAmdgpuCodeObject(bytes.data(), bytes.size()));

  bytes = original_;
  bytes[5] = 2;  // EI_DATA: big-endian
  EXPECT_NE(refusal(bytes).find("is not ELFDATA2LSB"), std::string::npos);

  bytes.assign(original_.begin(), original_.begin() + 40);
  EXPECT_EQ(refusal(bytes), "truncated ELF header: 40 bytes, a 64-bit header needs 64");
}

TEST_F(HostileInputTest, MissingNoteIsNamed) {
  std::vector<uint8_t> bytes = original_;
  bytes[note_.header + 8] = 33;  // n_type
  EXPECT_NE(refusal(bytes).find("no NT_AMDGPU_METADATA note (owner \"AMDGPU\", type 32)"),
            std::string::npos)
      << refusal(bytes);
}

TEST_F(HostileInputTest, MetadataProblemsSayWhere) {
  std::vector<uint8_t> bytes = original_;
  bytes[note_.desc] = 0xc1;  // the one byte MessagePack never uses
  EXPECT_EQ(refusal(bytes).rfind("NT_AMDGPU_METADATA note in section .note: msgpack: ", 0), 0u)
      << refusal(bytes);

  bytes = original_;
  bytes[note_.desc] = 0x90;  // an empty array where the root map was
  EXPECT_EQ(refusal(bytes),
            "NT_AMDGPU_METADATA note in section .note: metadata root: expected a map, found an "
            "array");

  // The first kernel's kernarg size is a one-byte integer; an empty string is
  // one byte too.
  bytes = original_;
  const std::string key = ".kernarg_segment_size";
  const auto keyAt = std::search(bytes.begin() + note_.desc,
                                 bytes.begin() + note_.desc + note_.descSize, key.begin(), key.end());
  ASSERT_NE(keyAt, bytes.begin() + note_.desc + note_.descSize);
  const size_t valueAt = (keyAt - bytes.begin()) + key.size();
  ASSERT_EQ(bytes[valueAt], 28);  // vector_add
  bytes[valueAt] = 0xa0;
  EXPECT_EQ(refusal(bytes),
            "NT_AMDGPU_METADATA note in section .note: amdhsa.kernels[0] (vector_add): "
            ".kernarg_segment_size: expected an unsigned integer, found a string");
}

// A length field claiming four billion entries must be refused before
// anything of that size is allocated.
TEST_F(HostileInputTest, ForgedLengthsAllocateNothingLarge) {
  const std::pair<uint8_t, const char*> cases[] = {
      {0xdd, "array size overflow"},  // array32: caught by the parser's limits
      {0xdf, "map size overflow"},    // map32: likewise
      {0xdb, "insufficient bytes"},   // str32: msgpack checks the bytes are there
      {0xc6, "insufficient bytes"},   // bin32
  };
  for (const auto& [marker, expected] : cases) {
    SCOPED_TRACE(int(marker));
    std::vector<uint8_t> bytes = original_;
    bytes[note_.desc] = marker;
    for (int i = 1; i <= 4; ++i) bytes[note_.desc + i] = 0xff;
    EXPECT_EQ(refusal(bytes),
              std::string("NT_AMDGPU_METADATA note in section .note: msgpack: ") + expected);
  }
}

TEST_F(HostileInputTest, DeepNestingIsRefused) {
  std::vector<uint8_t> bytes = original_;
  std::fill_n(bytes.begin() + note_.desc, note_.descSize, 0x91);  // [[[[...]]]]
  EXPECT_EQ(refusal(bytes), "NT_AMDGPU_METADATA note in section .note: msgpack: depth size overflow");
}

// Without the whole note there is nothing to parse. Once the note segment
// (padded to 4 bytes) is complete, the program headers at the front find it
// even though the section headers at the end are gone.
TEST_F(HostileInputTest, CutAtEveryOffset) {
  const size_t noteSegmentEnd = note_.desc + (note_.descSize + 3) / 4 * 4;
  for (size_t size = 0; size <= original_.size(); ++size) {
    SCOPED_TRACE(size);
    const std::vector<uint8_t> bytes(original_.begin(), original_.begin() + size);
    const Outcome outcome = parseOutcome(bytes);
    if (size < note_.desc + note_.descSize) {
      EXPECT_EQ(outcome, Outcome::refused);
    } else if (size >= noteSegmentEnd) {
      EXPECT_EQ(outcome, Outcome::parsed) << refusal(bytes);
    }
  }
}

TEST_F(HostileInputTest, EveryNoteByteFlipped) {
  const uint8_t replacements[] = {0x00, 0x7f, 0x80, 0x90, 0xa0, 0xc0, 0xc1, 0xc2, 0xcc, 0xcd,
                                  0xce, 0xcf, 0xd0, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xff};
  size_t refused = 0;
  size_t parsed = 0;
  for (size_t at = note_.header; at < note_.desc + note_.descSize; ++at) {
    std::vector<uint8_t> variants;
    variants.push_back(original_[at] ^ 0xff);
    variants.push_back(original_[at] ^ 0x01);
    variants.insert(variants.end(), std::begin(replacements), std::end(replacements));
    for (uint8_t value : variants) {
      std::vector<uint8_t> bytes = original_;
      bytes[at] = value;
      (parseOutcome(bytes) == Outcome::refused ? refused : parsed) += 1;
    }
  }
  // Both must happen: a changed name or number still parses, a broken
  // structure does not.
  EXPECT_GT(refused, 0u);
  EXPECT_GT(parsed, 0u);
}

// The file range of the section named `name` (empty when there is none).
std::pair<size_t, size_t> sectionRange(const std::vector<uint8_t>& file, const std::string& name) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, file.data(), sizeof eh);
  auto header = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, file.data() + eh.e_shoff + i * eh.e_shentsize, sizeof sh);
    return sh;
  };
  Elf64_Shdr names = header(eh.e_shstrndx);
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = header(i);
    if (reinterpret_cast<const char*>(file.data() + names.sh_offset + sh.sh_name) == name && sh.sh_type != SHT_NOBITS)
      return {sh.sh_offset, sh.sh_offset + sh.sh_size};
  }
  return {0, 0};
}

// What a parse gave, for comparing two: every field of every kernel.
std::string describe(const CodeObjectInfo& info) {
  std::ostringstream out;
  out << info.target << "|" << info.abiVersion << "|" << info.metadataVersion << "|" << info.elfFlags;
  for (const KernelInfo& k : info.kernels) {
    out << "\n" << k.name << "|" << k.symbol << "|" << k.language << "|" << k.kernargSegmentSize << "|"
        << k.kernargSegmentAlign << "|" << k.groupSegmentFixedSize << "|" << k.privateSegmentFixedSize << "|"
        << k.sgprCount << "|" << k.vgprCount << "|" << k.agprCount << "|" << k.wavefrontSize << "|"
        << k.maxFlatWorkgroupSize << "|" << k.hasDescriptor << "|" << k.descriptorAddress << "|"
        << k.descriptorOffset;
    for (const KernelArg& a : k.args) out << "|" << a.name << ":" << a.offset << ":" << a.size;
  }
  return out.str();
}

// Every refusal is one of the reader's own, each naming what it found wrong.
bool knownRefusal(const std::string& message) {
  static const char* const kFamilies[] = {
      "not an ELF file: ",        "truncated ELF header: ",      "ELF class ",
      "ELF data encoding ",       "e_machine ",                  "libelf cannot read the ELF image: ",
      "no NT_AMDGPU_METADATA note", "NT_AMDGPU_METADATA note in "};
  for (const char* family : kFamilies)
    if (message.rfind(family, 0) == 0) return message.size() > std::strlen(family);
  return false;
}

// Random bytes overwritten anywhere: the reader refuses with one of its own
// messages or parses, and what it parses stays inside the file (each kernel
// descriptor's 64 bytes lie in it). Bytes the reader never interprets, the
// machine code in .text, change nothing: a corruption confined to them parses
// exactly as the original does.
TEST_F(HostileInputTest, RandomCorruptionAnywhere) {
  const std::string original = describe(parseAmdgpuCodeObject(original_.data(), original_.size()));
  const auto [textBegin, textEnd] = sectionRange(original_, ".text");
  ASSERT_LT(textBegin, textEnd) << "the fixture has machine code in .text";
  std::mt19937 random(20240611);
  std::uniform_int_distribution<size_t> anywhere(0, original_.size() - 1);
  std::uniform_int_distribution<size_t> inText(textBegin, textEnd - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> count(1, 8);
  const int rounds = std::getenv("GTAP_LONG_FUZZ") != nullptr ? 200000 : 4000;
  size_t refused = 0, parsed = 0, codeOnly = 0;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE(round);
    // Every fourth round corrupts machine code only.
    const bool onlyCode = round % 4 == 0;
    std::vector<uint8_t> bytes = original_;
    for (int n = count(random); n > 0; --n)
      bytes[onlyCode ? inText(random) : anywhere(random)] = static_cast<uint8_t>(byte(random));
    try {
      const CodeObjectInfo info = parseAmdgpuCodeObject(bytes.data(), bytes.size());
      ++parsed;
      for (const KernelInfo& k : info.kernels) {
        if (k.hasDescriptor) {
          EXPECT_LE(k.descriptorOffset + 64, bytes.size()) << k.name;
        }
      }
      if (onlyCode) {
        ++codeOnly;
        EXPECT_EQ(describe(info), original);
      }
    } catch (const std::runtime_error& e) {
      ++refused;
      EXPECT_FALSE(onlyCode) << "refused a file whose machine code alone changed: " << e.what();
      EXPECT_TRUE(knownRefusal(e.what())) << e.what();
    }
  }
  EXPECT_EQ(codeOnly, static_cast<size_t>((rounds + 3) / 4));
  EXPECT_GT(refused, 0u);
  EXPECT_GT(parsed, codeOnly) << "some corruption outside the machine code still parses";
}

}  // namespace
}  // namespace gtap::readers
