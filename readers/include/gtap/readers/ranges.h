// Named ranges the program pushed and popped (gtap_range_push / pop): the
// capture's ranges chunks (format 1.9).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gtap::readers {

class Capture;

struct NamedRange {
  uint32_t thread = 0;  // ThreadInfo id
  uint32_t name = 0;    // index into ProgramRanges::names
  int64_t beginNs = 0;  // host ns
  int64_t endNs = 0;    // host ns; the capture's close when openAtEnd
  uint32_t depth = 0;   // the thread's ranges open around it when pushed
  bool openAtEnd = false;
};

struct ProgramRanges {
  std::vector<std::string> names;  // each distinct name once
  // By thread, then begin; a range before the ranges inside it.
  std::vector<NamedRange> ranges;
  uint64_t unmatchedPops = 0;  // pops with no range open on their thread
  std::vector<std::string> problems;

  const std::string& nameOf(const NamedRange& r) const { return names[r.name]; }
  size_t openAtEnd() const;
};

ProgramRanges loadRanges(const Capture& capture);

// The innermost range open on a thread at a moment: a search among the
// thread's ranges, then up through the ranges around the one found.
class RangeLookup {
 public:
  explicit RangeLookup(const ProgramRanges& ranges);
  // Null when no range of `thread` was open at `ns` (begin <= ns < end).
  const NamedRange* innermostAt(uint32_t thread, int64_t ns) const;

 private:
  const ProgramRanges& ranges_;
  std::vector<uint32_t> parent_;  // per range: the range around it, or ~0u
};

// "5 (3 names; 1 open at the end; 2 pops without a push)"; empty when the
// program named none and popped none.
std::string describeRanges(const ProgramRanges& ranges);

}  // namespace gtap::readers
