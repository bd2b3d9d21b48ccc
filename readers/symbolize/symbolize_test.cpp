// Symbolises addresses of this very test program (built with -g -O2), of
// stripped, changed and missing copies of it, and of libc.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "gtap/readers/symbolizer.h"
#include "symbolize_test_twin.h"

extern char** environ;

using gtap::readers::ModuleRef;
using gtap::readers::SourceFrame;
using gtap::readers::Symbolizer;
using gtap::readers::SymbolizeResult;

#if defined(__clang__)
#define FIXTURE_OPAQUE [[gnu::noinline]]
#else
// Also stops constant propagation into clones, which would rename the function.
#define FIXTURE_OPAQUE [[gnu::noinline, gnu::noipa]]
#endif

namespace fixture {

struct Capture {
  uintptr_t returnAddress = 0;
  int captureLine = 0;  // line of the call inside innerInlined
  int callLine = 0;     // line where outerFunction calls innerInlined
};
Capture captured;
volatile int sideEffect = 0;

FIXTURE_OPAQUE void captureHere(int captureLine, int callLine) {
  captured.returnAddress =
      reinterpret_cast<uintptr_t>(__builtin_extract_return_addr(__builtin_return_address(0)));
  captured.captureLine = captureLine;
  captured.callLine = callLine;
}

[[gnu::always_inline]] inline void innerInlined(int callLine) {
  captureHere(__LINE__, callLine);
  sideEffect = sideEffect + 1;  // work after the call, so it is not turned into a jump
}

FIXTURE_OPAQUE void outerFunction() {
  innerInlined(__LINE__);
  sideEffect = sideEffect + 1;
}

}  // namespace fixture

namespace {

// Internal linkage: GCC gives these no DWARF linkage name.
[[gnu::always_inline]] inline void innerHidden(int callLine) {
  fixture::captureHere(__LINE__, callLine);
  fixture::sideEffect = fixture::sideEffect + 1;
}

FIXTURE_OPAQUE void outerHidden() {
  innerHidden(__LINE__);
  fixture::sideEffect = fixture::sideEffect + 1;
}

}  // namespace

namespace {

constexpr const char* kInnerName = "fixture::innerInlined(int)";
constexpr const char* kOuterName = "fixture::outerFunction()";

// Where an address sits in this process, found the way gtap's recorder does:
// dl_iterate_phdr for path and load bias, the build-id note from memory.
struct LoadedModule {
  ModuleRef ref;
  uintptr_t executableStart = 0;  // the first executable segment
  size_t executableSize = 0;
};

std::string buildIdFromNotes(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const size_t align = ph.p_align >= 8 ? 8 : 4;
    auto pad = [align](size_t n) { return (n + align - 1) & ~(align - 1); };
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const auto* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const unsigned char* name = p + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + pad(note->n_namesz);
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::string(reinterpret_cast<const char*>(name), 3) == "GNU") {
        std::string hex;
        char digits[3];
        for (size_t k = 0; k < note->n_descsz; ++k) {
          std::snprintf(digits, sizeof digits, "%02x", desc[k]);
          hex += digits;
        }
        return hex;
      }
      p = desc + pad(note->n_descsz);
    }
  }
  return {};
}

std::optional<LoadedModule> moduleContaining(uintptr_t address) {
  struct Search {
    uintptr_t address;
    std::optional<LoadedModule> found;
  } search{address, std::nullopt};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        bool contains = false;
        LoadedModule module;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (s->address >= start && s->address < start + ph.p_memsz) contains = true;
          if ((ph.p_flags & PF_X) && module.executableSize == 0) {
            module.executableStart = start;
            module.executableSize = ph.p_memsz;
          }
        }
        if (!contains) return 0;
        std::string path = info->dlpi_name;
        if (path.empty()) path = std::filesystem::read_symlink("/proc/self/exe").string();
        module.ref = ModuleRef{path, buildIdFromNotes(info), info->dlpi_addr};
        s->found = module;
        return 1;
      },
      &search);
  return search.found;
}

void run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0) << args[0];
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << args[0] << " " << args[1];
}

std::string describe(const SymbolizeResult& result) {
  std::string text = result.problem.empty() ? "" : "problem: " + result.problem + "\n";
  for (const SourceFrame& f : result.frames)
    text += (f.inlined ? "[inlined] " : "") + f.function + " at " + f.file + ":" +
            std::to_string(f.line) + ":" + std::to_string(f.column) + "\n";
  return text;
}

// The two frames the fixture must produce, in this file at the recorded lines.
void expectFixtureFrames(const SymbolizeResult& result) {
  SCOPED_TRACE(describe(result));
  ASSERT_TRUE(result.problem.empty());
  ASSERT_EQ(result.frames.size(), 2u);
  const SourceFrame& inner = result.frames[0];
  const SourceFrame& outer = result.frames[1];
  EXPECT_EQ(inner.function, kInnerName);
  EXPECT_TRUE(inner.inlined);
  EXPECT_EQ(std::filesystem::path(inner.file).filename(), "symbolize_test.cpp");
  EXPECT_EQ(inner.line, fixture::captured.captureLine);
  EXPECT_EQ(outer.function, kOuterName);
  EXPECT_FALSE(outer.inlined);
  EXPECT_EQ(outer.file, inner.file);
  EXPECT_EQ(outer.line, fixture::captured.callLine);
  EXPECT_GT(outer.column, 0);
}

class SymbolizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture::outerFunction();
    ASSERT_NE(fixture::captured.returnAddress, 0u);
    std::optional<LoadedModule> module = moduleContaining(fixture::captured.returnAddress);
    ASSERT_TRUE(module.has_value());
    self_ = *module;
    ASSERT_FALSE(self_.ref.buildId.empty()) << "the test program is linked with --build-id";

    std::string pattern = (std::filesystem::temp_directory_path() / "gtap_symbolize_XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    temp_ = pattern;
  }
  void TearDown() override {
    if (!temp_.empty()) std::filesystem::remove_all(temp_);
  }

  // A build-id directory (DIR/xx/yyyy.debug) holding this program's debug file.
  std::string makeDebugDirectory() {
    const std::string& id = self_.ref.buildId;
    std::filesystem::path dir = temp_ / "debug";
    std::filesystem::create_directories(dir / id.substr(0, 2));
    run({GTAP_TEST_OBJCOPY, "--only-keep-debug", self_.ref.path,
         (dir / id.substr(0, 2) / (id.substr(2) + ".debug")).string()});
    return dir.string();
  }

  // This program without its DWARF (its symbol table stays).
  std::string makeStrippedCopy() {
    std::string stripped = (temp_ / "stripped").string();
    run({GTAP_TEST_OBJCOPY, "--strip-debug", self_.ref.path, stripped});
    return stripped;
  }

  // This program with one byte of its build-id changed, as after a rebuild.
  std::string makeChangedCopy() {
    std::string note = (temp_ / "note").string();
    run({GTAP_TEST_OBJCOPY, "-O", "binary", "--only-section=.note.gnu.build-id", self_.ref.path,
         note});
    std::string bytes;
    {
      std::ifstream in(note, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    EXPECT_FALSE(bytes.empty());
    if (!bytes.empty()) bytes.back() = static_cast<char>(bytes.back() ^ 0x5a);
    std::ofstream(note, std::ios::binary) << bytes;
    std::string changed = (temp_ / "changed").string();
    run({GTAP_TEST_OBJCOPY, "--update-section", ".note.gnu.build-id=" + note, self_.ref.path,
         changed});
    return changed;
  }

  ModuleRef selfAt(const std::string& path) const {
    return ModuleRef{path, self_.ref.buildId, self_.ref.loadBias};
  }

  // The fixture's captured return address, as if this program had run from `path`.
  SymbolizeResult captureIn(Symbolizer& symbolizer, const std::string& path) const {
    return symbolizer.symbolize(selfAt(path), fixture::captured.returnAddress, true);
  }

  LoadedModule self_;
  std::filesystem::path temp_;
};

TEST_F(SymbolizerTest, InlinedFunctionComesOutWithItsCallSite) {
  Symbolizer symbolizer;
  expectFixtureFrames(symbolizer.symbolize(self_.ref, fixture::captured.returnAddress, true));
}

TEST_F(SymbolizerTest, FunctionsWithInternalLinkageAreQualified) {
  outerHidden();
  Symbolizer symbolizer;
  SymbolizeResult result = symbolizer.symbolize(self_.ref, fixture::captured.returnAddress, true);
  SCOPED_TRACE(describe(result));
  ASSERT_EQ(result.frames.size(), 2u);
  // From the declaration's enclosing scopes (a linkage name would add "(int)").
  EXPECT_TRUE(result.frames[0].function.starts_with("(anonymous namespace)::innerHidden"));
  EXPECT_TRUE(result.frames[0].inlined);
  EXPECT_EQ(result.frames[0].line, fixture::captured.captureLine);
  // From the symbol table, which keeps the parameter types.
  EXPECT_EQ(result.frames[1].function, "(anonymous namespace)::outerHidden()");
  EXPECT_EQ(result.frames[1].line, fixture::captured.callLine);
}

TEST_F(SymbolizerTest, ReturnAddressFlagSelectsTheCallInstruction) {
  Symbolizer symbolizer;
  // Taken as it is, the return address is the instruction after the call.
  SymbolizeResult asIs = symbolizer.symbolize(self_.ref, fixture::captured.returnAddress, false);
  SCOPED_TRACE(describe(asIs));
  ASSERT_FALSE(asIs.frames.empty());
  EXPECT_NE(asIs.frames[0].line, fixture::captured.captureLine);
  // Both answers are cached apart.
  expectFixtureFrames(symbolizer.symbolize(self_.ref, fixture::captured.returnAddress, true));
}

TEST_F(SymbolizerTest, FunctionEntryIsTheFunctionItself) {
  Symbolizer symbolizer;
  auto entry = reinterpret_cast<uintptr_t>(&fixture::outerFunction);
  SymbolizeResult result = symbolizer.symbolize(self_.ref, entry, false);
  SCOPED_TRACE(describe(result));
  ASSERT_FALSE(result.frames.empty());
  EXPECT_EQ(result.frames.back().function, kOuterName);
  EXPECT_FALSE(result.frames.back().inlined);
}

TEST_F(SymbolizerTest, StrippedCopyUsesSymbolTableAlone) {
  Symbolizer symbolizer;
  SymbolizeResult result = captureIn(symbolizer, makeStrippedCopy());
  SCOPED_TRACE(describe(result));
  EXPECT_TRUE(result.problem.empty());
  ASSERT_EQ(result.frames.size(), 1u);
  EXPECT_EQ(result.frames[0].function, kOuterName);
  EXPECT_TRUE(result.frames[0].file.empty());
  EXPECT_FALSE(result.frames[0].inlined);
}

TEST_F(SymbolizerTest, StrippedCopyUsesDebugFileFromGivenDirectory) {
  std::string stripped = makeStrippedCopy();
  Symbolizer symbolizer({makeDebugDirectory()});
  expectFixtureFrames(captureIn(symbolizer, stripped));
}

TEST_F(SymbolizerTest, DebugRootWithBuildIdFolderIsAccepted) {
  std::string stripped = makeStrippedCopy();
  std::filesystem::path root = temp_ / "root";
  std::filesystem::create_directories(root);
  std::filesystem::rename(makeDebugDirectory(), root / ".build-id");
  Symbolizer symbolizer({root.string() + "/"});
  expectFixtureFrames(captureIn(symbolizer, stripped));
}

TEST_F(SymbolizerTest, MissingFileIsRefused) {
  const std::string missing = (temp_ / "gone").string();
  Symbolizer symbolizer;
  SymbolizeResult result = captureIn(symbolizer, missing);
  EXPECT_TRUE(result.frames.empty());
  EXPECT_NE(result.problem.find(missing), std::string::npos) << result.problem;
  EXPECT_NE(result.problem.find("no such file"), std::string::npos) << result.problem;
  EXPECT_NE(result.problem.find(self_.ref.buildId), std::string::npos) << result.problem;

  ModuleRef withoutId{missing, "", self_.ref.loadBias};
  SymbolizeResult noId = symbolizer.symbolize(withoutId, fixture::captured.returnAddress, true);
  EXPECT_TRUE(noId.frames.empty());
  EXPECT_NE(noId.problem.find("captured build-id none"), std::string::npos) << noId.problem;
}

TEST_F(SymbolizerTest, FileThatIsNotElfIsRefused) {
  const std::string text = (temp_ / "text").string();
  std::ofstream(text) << "not an ELF file\n";
  Symbolizer symbolizer;
  SymbolizeResult result = captureIn(symbolizer, text);
  EXPECT_TRUE(result.frames.empty());
  EXPECT_NE(result.problem.find(text + ": cannot be read as ELF"), std::string::npos)
      << result.problem;
}

TEST_F(SymbolizerTest, MissingFileIsSymbolisedThroughDebugFile) {
  Symbolizer symbolizer({makeDebugDirectory()});
  expectFixtureFrames(captureIn(symbolizer, (temp_ / "gone").string()));
}

TEST_F(SymbolizerTest, ChangedBinaryIsRefused) {
  const std::string changed = makeChangedCopy();
  Symbolizer symbolizer;
  SymbolizeResult result = captureIn(symbolizer, changed);
  EXPECT_TRUE(result.frames.empty());
  EXPECT_NE(result.problem.find(changed), std::string::npos) << result.problem;
  EXPECT_NE(result.problem.find(self_.ref.buildId), std::string::npos) << result.problem;
  std::string changedId = self_.ref.buildId;
  const int lastByte = std::stoi(changedId.substr(changedId.size() - 2), nullptr, 16) ^ 0x5a;
  char lastDigits[3];
  std::snprintf(lastDigits, sizeof lastDigits, "%02x", lastByte);
  changedId.replace(changedId.size() - 2, 2, lastDigits);
  EXPECT_NE(result.problem.find(changedId), std::string::npos) << result.problem;
  EXPECT_NE(result.problem.find("changed"), std::string::npos) << result.problem;

  // Asked for with the changed file's own id, the same file is fine.
  ModuleRef asItIsNow{changed, changedId, self_.ref.loadBias};
  expectFixtureFrames(symbolizer.symbolize(asItIsNow, fixture::captured.returnAddress, true));
}

TEST_F(SymbolizerTest, ChangedBinaryIsSymbolisedThroughDebugFile) {
  const std::string changed = makeChangedCopy();
  Symbolizer symbolizer({makeDebugDirectory()});
  expectFixtureFrames(captureIn(symbolizer, changed));
}

TEST_F(SymbolizerTest, StaleDebugFileUnderTheRightNameIsNotUsed) {
  // A debug file named for our build-id that holds another one.
  const std::string id = self_.ref.buildId;
  std::filesystem::path dir = temp_ / "stale";
  std::filesystem::create_directories(dir / id.substr(0, 2));
  run({GTAP_TEST_OBJCOPY, "--only-keep-debug", makeChangedCopy(),
       (dir / id.substr(0, 2) / (id.substr(2) + ".debug")).string()});
  Symbolizer symbolizer({dir.string()});
  SymbolizeResult result = captureIn(symbolizer, (temp_ / "gone").string());
  EXPECT_TRUE(result.frames.empty());
  EXPECT_NE(result.problem.find(dir.string()), std::string::npos) << result.problem;

  // Nor for a stripped file that is right: it keeps to its symbol table.
  SymbolizeResult stripped = captureIn(symbolizer, makeStrippedCopy());
  SCOPED_TRACE(describe(stripped));
  ASSERT_EQ(stripped.frames.size(), 1u);
  EXPECT_TRUE(stripped.frames[0].file.empty());
}

TEST_F(SymbolizerTest, LibcFunctionIsNamed) {
  auto address = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "getpid"));
  ASSERT_NE(address, 0u);
  std::optional<LoadedModule> libc = moduleContaining(address);
  ASSERT_TRUE(libc.has_value());
  ASSERT_NE(libc->ref.path.find("libc"), std::string::npos) << libc->ref.path;
  Symbolizer symbolizer;
  // Not at the very entry, as a return address into it would be.
  SymbolizeResult result = symbolizer.symbolize(libc->ref, address + 2, true);
  SCOPED_TRACE(describe(result));
  EXPECT_TRUE(result.problem.empty());
  ASSERT_FALSE(result.frames.empty());
  EXPECT_NE(result.frames.back().function.find("getpid"), std::string::npos);
}

TEST_F(SymbolizerTest, AddressesOutsideCodeGiveNothingAndNoProblem) {
  Symbolizer symbolizer;
  const uint64_t bias = self_.ref.loadBias;
  for (uint64_t address : {uint64_t{0}, bias, bias + 8, ~uint64_t{0}}) {
    SymbolizeResult result = symbolizer.symbolize(self_.ref, address, true);
    EXPECT_TRUE(result.problem.empty()) << result.problem;
    EXPECT_TRUE(result.frames.empty()) << describe(result);
  }
}

// Objects built with different options hold copies of one inline function
// that differ in size; the DWARF of the copy the linker dropped says it sits
// at address 0, where the file has its ELF header and no code.
TEST_F(SymbolizerTest, DroppedCopyOfAnInlineFunctionClaimsNoAddress) {
  EXPECT_EQ(twin::sumBelow(7), twin::sumBelowFromUnoptimised(7));
  Symbolizer symbolizer;
  for (uint64_t elfAddress : {0, 1, 4, 8}) {
    SymbolizeResult result = symbolizer.symbolize(self_.ref, self_.ref.loadBias + elfAddress, false);
    EXPECT_TRUE(result.problem.empty()) << result.problem;
    EXPECT_TRUE(result.frames.empty()) << "at " << elfAddress << ":\n" << describe(result);
  }
  // The copy that was kept is still named.
  SymbolizeResult kept =
      symbolizer.symbolize(self_.ref, reinterpret_cast<uintptr_t>(&twin::sumBelow), false);
  SCOPED_TRACE(describe(kept));
  ASSERT_FALSE(kept.frames.empty());
  EXPECT_EQ(kept.frames.back().function, "twin::sumBelow(int)");
  EXPECT_FALSE(kept.frames.back().inlined);
}

// Not a timed assertion: prints the cost per address, cold and cached, so a
// change that makes reports slow shows up in the test log.
TEST_F(SymbolizerTest, RepeatedAddressesAreAnsweredFromCache) {
  constexpr size_t kAddresses = 10000;
  constexpr int kRepeats = 20;
  ASSERT_GT(self_.executableSize, kAddresses);
  std::vector<uint64_t> addresses;
  for (size_t i = 0; i < kAddresses; ++i)
    addresses.push_back(self_.executableStart + 1 + i * (self_.executableSize / kAddresses));

  using Clock = std::chrono::steady_clock;
  Symbolizer symbolizer;
  std::vector<SymbolizeResult> first;
  auto start = Clock::now();
  first.push_back(symbolizer.symbolize(self_.ref, addresses[0], true));
  const double openNs = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  start = Clock::now();
  for (size_t i = 1; i < kAddresses; ++i)
    first.push_back(symbolizer.symbolize(self_.ref, addresses[i], true));
  const double coldNs = std::chrono::duration<double, std::nano>(Clock::now() - start).count();

  size_t named = 0;
  for (const SymbolizeResult& r : first)
    if (!r.frames.empty() && !r.frames.back().function.empty()) ++named;
  EXPECT_GT(named, kAddresses * 9 / 10);

  start = Clock::now();
  size_t mismatches = 0;
  for (int repeat = 0; repeat < kRepeats; ++repeat)
    for (size_t i = 0; i < kAddresses; ++i) {
      SymbolizeResult again = symbolizer.symbolize(self_.ref, addresses[i], true);
      if (again.frames.size() != first[i].frames.size() ||
          (!again.frames.empty() && again.frames[0].function != first[i].frames[0].function))
        ++mismatches;
    }
  const double warmNs = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  EXPECT_EQ(mismatches, 0u);

  const double coldPerAddress = coldNs / (kAddresses - 1);
  const double warmPerAddress = warmNs / (double(kAddresses) * kRepeats);
  std::printf(
      "symbolize: opening the module and the first address %.1f ms; %zu more distinct "
      "addresses %.0f ns each; cached %.0f ns each\n",
      openNs / 1e6, kAddresses - 1, coldPerAddress, warmPerAddress);
  RecordProperty("open_ms", std::to_string(openNs / 1e6));
  RecordProperty("cold_ns_per_address", std::to_string(coldPerAddress));
  RecordProperty("cached_ns_per_address", std::to_string(warmPerAddress));
}

}  // namespace
