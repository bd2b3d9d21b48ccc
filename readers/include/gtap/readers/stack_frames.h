// The CPU stacks of a capture as named frames: each code address resolved
// once (source frames, inlined ones expanded), each stack cut at main, every
// distinct frame kept once for all captures read. What flame graphs and the
// exports that carry stacks share.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gtap/readers/device_work.h"

namespace gtap::readers {

// One source frame of a code address, innermost first (inlined frames
// before the function they were inlined into).
struct ResolvedFrame {
  std::string function;  // empty when unknown
  std::string file;      // empty when unknown
  int line = 0;
  bool inlined = false;
};
// Turns a return address inside `module` into source frames; an empty result
// means no symbol (the frame then reads module+0xoffset). `problem` takes
// what made the module unusable.
using FrameResolver =
    std::function<std::vector<ResolvedFrame>(const HostModule& module, uint64_t address, std::string& problem)>;

struct NamedFrame {
  std::string function;  // empty when no symbol
  std::string module;    // basename of the module; empty outside every module
  std::string file;      // source file, when debug information says
  int line = 0;
  bool inlined = false;
  uint64_t offset = 0;   // in the module (or the address, outside every module)
  // The function, " [inlined]" after an inlined one; module+0xoffset, or
  // 0xaddress, without a symbol.
  std::string text() const;
  bool operator<(const NamedFrame& o) const {
    return std::tie(function, module, file, line, inlined, offset) <
           std::tie(o.function, o.module, o.file, o.line, o.inlined, o.offset);
  }
};

class StackFrames {
 public:
  // `resolve` may be empty: every frame is then module+0xoffset.
  explicit StackFrames(FrameResolver resolve) : resolve_(std::move(resolve)) {}

  // Stack ids and addresses belong to one process: call before each capture.
  void beginCapture() {
    addresses_.clear();
    stacks_.clear();
  }
  // The frames of `stack` in `work`, root first, from main where main is
  // among them (what runs main is not the program's): indices into frames().
  // Empty for a stack the capture does not hold (`found` says which).
  const std::vector<uint32_t>& of(const DeviceWork& work, uint32_t stack, bool* found = nullptr);
  const std::vector<NamedFrame>& frames() const { return frames_; }
  // What made modules unusable, each once, since the last call.
  std::vector<std::string> takeProblems() { return std::exchange(problems_, {}); }

 private:
  const std::vector<uint32_t>& at(const DeviceWork& work, uint64_t pc);
  uint32_t add(NamedFrame f);

  FrameResolver resolve_;
  std::vector<NamedFrame> frames_;
  std::map<NamedFrame, uint32_t> ids_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> addresses_;  // innermost first
  std::unordered_map<uint32_t, std::pair<bool, std::vector<uint32_t>>> stacks_;
  std::set<std::string> said_;
  std::vector<std::string> problems_;
};

}  // namespace gtap::readers
