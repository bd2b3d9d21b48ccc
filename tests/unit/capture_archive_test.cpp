// Merged capture files (readers/capture_archive.h): members read back as the
// captures merged, merged files inside merged files flatten, and every
// damaged header, index and footer is refused naming the file and offset,
// never read past (every byte of the index and footer mutated, every length
// cut).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtap/format/reader.h"
#include "gtap/readers/capture_archive.h"
#include "hostile_captures.h"

namespace {

using gtap::readers::CaptureArchive;

std::string tempDir() {
  auto dir = std::filesystem::temp_directory_path() / ("gtap-archive-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

void writeFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Archive {
  std::string dir = tempDir();
  std::string a = dir + "/rank-0.gtap", b = dir + "/rank-1.gtap", all = dir + "/all.gtap";
  std::vector<uint8_t> aBytes = gtap::test::hostile::build(false, {}, std::vector<uint8_t>(64, 0x5a), false);
  std::vector<uint8_t> bBytes = gtap::test::hostile::build(true, {}, std::vector<uint8_t>(40, 0x11), false);
  Archive() {
    writeFile(a, aBytes);
    writeFile(b, bBytes);
    std::ofstream out(all, std::ios::binary);
    EXPECT_EQ(gtap::readers::writeCaptureArchive({a, b}, out), 2u);
  }
  ~Archive() { std::filesystem::remove_all(dir); }
};

TEST(CaptureArchive, MembersReadBackAsTheCapturesMerged) {
  Archive f;
  ASSERT_TRUE(gtap::readers::isCaptureArchive(f.all));
  EXPECT_FALSE(gtap::readers::isCaptureArchive(f.a));
  CaptureArchive archive(f.all);
  ASSERT_EQ(archive.members().size(), 2u);
  EXPECT_EQ(archive.members()[0].name, "rank-0.gtap");
  EXPECT_EQ(archive.members()[1].name, "rank-1.gtap");
  auto first = archive.bytes(archive.members()[0]);
  auto second = archive.bytes(archive.members()[1]);
  EXPECT_EQ(std::vector<uint8_t>(first.begin(), first.end()), f.aBytes);
  EXPECT_EQ(std::vector<uint8_t>(second.begin(), second.end()), f.bBytes);
  auto file = gtap::readers::openCaptureFile(f.all);
  ASSERT_EQ(file.captures.size(), 2u);
  EXPECT_EQ(file.captures[0]->path(), f.all + "(rank-0.gtap)");
  EXPECT_EQ(file.captures[0]->process().pid, 4242u);
  // A capture file opens as itself.
  EXPECT_EQ(gtap::readers::openCaptureFile(f.a).captures.size(), 1u);
  // One capture file cannot be opened as one capture from a merged file.
  try {
    gtap::readers::Capture c(f.all);
    ADD_FAILURE() << "a merged file opened as one capture";
  } catch (const gtap::format::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("a merged file of several captures (gtap merge)"), std::string::npos)
        << e.what();
  }
}

TEST(CaptureArchive, MergedFilesInsideMergedFilesFlatten) {
  Archive f;
  std::string again = f.dir + "/again.gtap";
  std::ofstream out(again, std::ios::binary);
  EXPECT_EQ(gtap::readers::writeCaptureArchive({f.all, f.a}, out), 3u);
  out.close();
  CaptureArchive archive(again);
  ASSERT_EQ(archive.members().size(), 3u);
  EXPECT_EQ(archive.members()[2].name, "rank-0.gtap");
  auto third = archive.bytes(archive.members()[2]);
  EXPECT_EQ(std::vector<uint8_t>(third.begin(), third.end()), f.aBytes);
}

TEST(CaptureArchive, AnInputThatIsNotACaptureIsNamed) {
  Archive f;
  std::string junk = f.dir + "/junk.gtap";
  writeFile(junk, std::vector<uint8_t>(100, 0x42));
  std::ostringstream out;
  try {
    gtap::readers::writeCaptureArchive({f.a, junk}, out);
    ADD_FAILURE() << "junk merged";
  } catch (const gtap::format::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(junk), std::string::npos) << e.what();
  }
  EXPECT_EQ(out.str(), "") << "nothing written before every input was checked";
}

// Opens `bytes` as a merged file: a FormatError naming the file, or members
// that lie within the file (then each opens as a capture or is refused).
void openHostile(const std::string& path, const std::vector<uint8_t>& bytes) {
  writeFile(path, bytes);
  try {
    auto file = gtap::readers::openCaptureFile(path);
    for (const auto& m : file.archive->members()) {
      EXPECT_LE(m.offset + m.size, bytes.size());
      EXPECT_GE(m.offset, gtap::readers::kArchiveHeaderSize);
    }
  } catch (const gtap::format::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(CaptureArchive, DamagedIndexAndFooterAreRefusedNamingWhere) {
  Archive f;
  std::vector<uint8_t> good = readFile(f.all);
  std::string path = f.dir + "/hostile.gtap";
  uint64_t indexOffset;
  std::memcpy(&indexOffset, good.data() + good.size() - 24, 8);
  ASSERT_LT(indexOffset, good.size());
  // Every byte of the header, the index and the footer, mutated three ways.
  std::vector<size_t> positions;
  for (size_t i = 0; i < 16; ++i) positions.push_back(i);
  for (size_t i = indexOffset; i < good.size(); ++i) positions.push_back(i);
  for (size_t i : positions)
    for (uint8_t v : {uint8_t(0), uint8_t(0xff), uint8_t(good[i] ^ 0x80)}) {
      auto bytes = good;
      bytes[i] = v;
      openHostile(path, bytes);
    }
  // Every length cut short.
  for (size_t n = 0; n < good.size(); n += 7) openHostile(path, std::vector<uint8_t>(good.begin(), good.begin() + n));
  // A member count far beyond the index is refused before anything is read.
  auto huge = good;
  uint64_t count = ~uint64_t{0} / 2;
  std::memcpy(huge.data() + huge.size() - 16, &count, 8);
  writeFile(path, huge);
  EXPECT_THROW(CaptureArchive archive(path), gtap::format::FormatError);
  // Overlapping members are refused.
  auto overlap = good;
  uint64_t second = gtap::readers::kArchiveHeaderSize;
  size_t firstEntryEnd = indexOffset + ((20 + std::string("rank-0.gtap").size() + 7) & ~size_t{7});
  std::memcpy(overlap.data() + firstEntryEnd, &second, 8);
  writeFile(path, overlap);
  EXPECT_THROW(CaptureArchive archive(path), gtap::format::FormatError);
}

}  // namespace
