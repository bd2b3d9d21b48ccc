// Reading many capture files at once (gtap -j N): the reports hand each file
// to one of N threads, keep what each file gave apart, and merge the parts in
// the order the files were given, so the output is the same whatever N is.
// At most N files are in flight, each read a batch at a time, so memory grows
// with N, not with the number of files.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <unordered_set>
#include <vector>

namespace gtap::readers {

// How many files reports read at once; 0 (the default) means as many as the
// machine has processors.
void setReadJobs(unsigned jobs);
unsigned readJobs();

// Calls work(i) for every i below `count`, on up to readJobs() threads (never
// more than `count`), each index once; returns when all are done. An
// exception thrown by a call is rethrown here (the first, by index) once
// every thread has stopped.
void forEachInParallel(size_t count, const std::function<void(size_t)>& work);

// The same, and then inOrder(i) for every i in order, one at a time, as soon
// as work(i) and every inOrder before it are done: the caller merges each
// file's part there and drops it. No work(i) starts more than twice the
// threads ahead of the next inOrder, so at most that many parts are held,
// however many files there are. inOrder is not called for an index whose
// work threw.
void forEachInParallel(size_t count, const std::function<void(size_t)>& work,
                       const std::function<void(size_t)>& inOrder);

// Calls produce(i, stream) for every i below `count` on up to readJobs()
// threads, taking the indices in order, each into a stream of its own, and
// copies what each wrote to `out` in the order of i as it comes: at most
// `held` bytes of each stream wait in memory (a producer ahead of the one
// being copied waits for room), so an export of any size streams. The first
// exception a produce threw (by index) is rethrown once every thread has
// stopped; what the indices before it wrote is copied.
void writeInOrder(size_t count, std::ostream& out, const std::function<void(size_t, std::ostream&)>& produce,
                  size_t held = size_t{16} << 20);

// What each file's part found wrong, joined in the files' order: a note
// several parts share (a module none of them can read) is said once, as one
// reader of all the files would say it.
class PartNotes {
 public:
  explicit PartNotes(std::vector<std::string>& notes) : notes_(notes) {}
  void add(std::vector<std::string>&& part) {
    for (auto& n : part)
      if (said_.insert(n).second) notes_.push_back(std::move(n));
    part.clear();
  }

 private:
  std::vector<std::string>& notes_;
  std::unordered_set<std::string> said_;
};

}  // namespace gtap::readers
