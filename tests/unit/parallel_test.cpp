// Reading many files at once: writeInOrder copies each index's bytes in the
// order of the indices whatever the threads, holds at most its share of each
// in memory, and stops copying at the first failure.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gtap/readers/parallel.h"

namespace gtap::readers {
namespace {

struct Jobs {
  explicit Jobs(unsigned n) { setReadJobs(n); }
  ~Jobs() { setReadJobs(0); }
};

// Index i writes `lines` lines naming itself, large enough to fill several
// blocks of the channel, with a held share far below its size.
std::string expected(size_t count, size_t lines) {
  std::string all;
  for (size_t i = 0; i < count; ++i)
    for (size_t l = 0; l < lines; ++l) all += "index " + std::to_string(i) + " line " + std::to_string(l) + "\n";
  return all;
}

TEST(WriteInOrder, SameBytesWhateverTheThreadsAndTheShareHeld) {
  const size_t count = 9, lines = 40000;  // about 0.8 MB an index
  for (unsigned jobs : {1u, 2u, 4u}) {
    Jobs j(jobs);
    std::atomic<size_t> running{0}, most{0};
    std::ostringstream out;
    writeInOrder(
        count, out,
        [&](size_t i, std::ostream& s) {
          size_t now = ++running;
          for (size_t seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
          }
          // Later indices finish first sometimes: order must not follow.
          if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
          for (size_t l = 0; l < lines; ++l) s << "index " << i << " line " << l << "\n";
          --running;
        },
        64 << 10);
    EXPECT_EQ(out.str(), expected(count, lines)) << jobs << " jobs";
    EXPECT_LE(most.load(), jobs);
    if (jobs > 1) {
      EXPECT_GT(most.load(), 1u) << "the indices ran at once";
    }
  }
}

TEST(WriteInOrder, TheFirstFailureIsRethrownAndWhatCameBeforeIsKept) {
  Jobs j(3);
  std::ostringstream out;
  EXPECT_THROW(writeInOrder(6, out,
                            [&](size_t i, std::ostream& s) {
                              s << "part " << i << "\n";
                              if (i == 2 || i == 4) throw std::runtime_error("index " + std::to_string(i));
                            }),
               std::runtime_error);
  // Indices 0 and 1 whole, then what index 2 wrote before it failed.
  EXPECT_EQ(out.str().substr(0, 14), "part 0\npart 1\n");
  EXPECT_EQ(out.str().find("part 3"), std::string::npos);
  try {
    writeInOrder(3, out, [&](size_t i, std::ostream&) {
      if (i) throw std::runtime_error("index " + std::to_string(i));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 1");
  }
}

// The per-file parts of a report: merged in the order given, never more than
// twice the threads of them waiting, whatever order the work ends in.
TEST(ForEachInParallel, MergesInOrderHoldingABoundedWindow) {
  for (unsigned jobs : {1u, 2u, 3u}) {
    Jobs j(jobs);
    const size_t count = 40;
    std::vector<int> parts(count, -1);
    std::vector<size_t> merged;
    std::atomic<size_t> held{0}, most{0};
    forEachInParallel(
        count,
        [&](size_t i) {
          if (i % 4 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
          parts[i] = static_cast<int>(i * i);
          size_t now = ++held;
          for (size_t seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
          }
        },
        [&](size_t i) {
          EXPECT_EQ(parts[i], static_cast<int>(i * i));
          merged.push_back(i);
          --held;
        });
    std::vector<size_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = i;
    EXPECT_EQ(merged, order) << jobs << " jobs";
    EXPECT_LE(most.load(), 2 * jobs + 1) << jobs << " jobs";
  }
}

// The parts' notes in the files' order, a note two parts share said once
// (where the first part said it), those already there left as they are.
TEST(PartNotes, SharedNotesAreSaidOnceInOrder) {
  std::vector<std::string> notes = {"earlier"};
  PartNotes joined(notes);
  joined.add({"a.gtap: recovered", "module libx.so: no symbols"});
  joined.add({"module libx.so: no symbols", "b.gtap: 3 events missing"});
  joined.add({});
  EXPECT_EQ(notes, (std::vector<std::string>{"earlier", "a.gtap: recovered", "module libx.so: no symbols",
                                             "b.gtap: 3 events missing"}));
}

}  // namespace
}  // namespace gtap::readers
