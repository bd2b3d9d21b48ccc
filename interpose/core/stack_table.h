// CPU stacks for the file: each distinct stack is stored once and referred to
// by id; the host modules its addresses fall in (path, build-id, load bias)
// are recorded once, so readers can symbolise offline. Writer thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "chunk_producer.h"

namespace gtap::core {

// True for addresses inside libgtap.so itself.
bool isGtapAddress(uint64_t pc);

// The calling thread's return addresses, innermost first, at most `depth`,
// starting at the first frame outside libgtap.so. Any thread, any time.
std::vector<uint64_t> captureStack(uint32_t depth);
// The same into `frames` (room for `depth`), allocating nothing; returns how
// many. `skipGtap` false keeps gtap's frames (the caller trims them).
uint32_t captureStackInto(uint64_t* frames, uint32_t depth, bool skipGtap = true);

class StackTable {
 public:
  // 0 for an empty stack.
  uint32_t intern(const std::vector<uint64_t>& frames);
  // Writes stacks interned since the last call, and the modules they need.
  void writeNew(ChunkSink& sink);

 private:
  struct Module {
    uint32_t id;
    std::string path;
    std::string buildId;
    uint64_t bias, start, end;
  };
  bool covered(uint64_t pc) const;
  void rescanModules();

  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::vector<uint64_t>> new_;
  uint32_t nextId_ = 1;
  std::map<uint64_t, Module> modules_;  // by start address
  std::vector<Module> newModules_;
  uint32_t nextModuleId_ = 1;
};

}  // namespace gtap::core
