// The words of GTAP_MODE / --mode: what a capture records. Shared by the
// launcher (to check arguments) and libgtap.so (to act on them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gtap::format {

enum ModeBits : uint32_t {
  kModeApi = 1u << 0,      // API call spans
  kModeKernels = 1u << 1,  // device work: kernels, copies, fills with device times
  kModeMemory = 1u << 2,   // allocations and frees
  kModeStacks = 1u << 3,   // CPU call stacks at launches and allocations
  kModeReplay = 1u << 4,   // replay streams: objects, operations and the bytes the device reads
  kModeSamples = 1u << 5,  // where inside kernels the device spends time (instruction sampling)
};

struct ModeWord {
  std::string_view word;
  uint32_t bits;
  std::string_view meaning;
};

inline constexpr ModeWord kModeWords[] = {
    {"api", kModeApi, "every API call: function, thread, begin and end time, result"},
    {"kernels", kModeKernels, "device work: kernels, copies, fills, barriers with device start and end times"},
    {"memory", kModeMemory, "allocations and frees: kind, size, device, address"},
    {"stacks", kModeStacks, "CPU call stacks at launches and allocations (GTAP_STACK_DEPTH frames)"},
    {"replay", kModeReplay, "what to run again: objects, operations, and the bytes the device reads (gtap replay)"},
    // Samples are split over the kernels' device time: the word brings kernels.
    {"samples", kModeSamples | kModeKernels,
     "where inside kernels the device spends time: Level Zero instruction sampling every GTAP_SAMPLE_PERIOD_US "
     "(implies kernels)"},
};

// Parses a comma-separated list; returns false and sets `error` on an unknown
// or empty list.
inline bool parseModeList(std::string_view text, uint32_t& bits, std::string& error) {
  uint32_t out = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view word = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (word.empty()) continue;
    bool known = false;
    for (const auto& m : kModeWords) {
      if (m.word == word) {
        out |= m.bits;
        known = true;
      }
    }
    if (!known) {
      error = "unknown mode '" + std::string(word) + "' (known:";
      for (const auto& m : kModeWords) error += " " + std::string(m.word);
      error += ")";
      return false;
    }
  }
  if (!out) {
    error = "empty mode list";
    return false;
  }
  bits = out;
  return true;
}

}  // namespace gtap::format
