// Flame graphs of device time by CPU call path: each device operation under
// the stack recorded at the API call that launched it (root first, from main
// or the thread's start), then the API function, then the IREE HAL dispatch it
// came from where there is one, then the operation itself, then (mode
// samples) the kernel's sampled source lines.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtap/readers/capture.h"
#include "gtap/readers/device_work.h"
#include "gtap/readers/instruction_samples.h"
#include "gtap/readers/stack_frames.h"

namespace gtap::readers {

enum class FlameWeight {
  device,  // device time of the work the launch produced (untimed work counts 0)
  api,     // host time inside the API call that launched it, once per call
  count,   // device operations
};

enum class FrameKind : uint8_t { process, program, runtime, api, hal, kernel, instruction, missing };
// "program", "runtime library", ... as a picture's legend says them.
const char* frameKindName(FrameKind kind);

struct FlameFrame {
  std::string name;      // what the folded text and the picture show
  FrameKind kind = FrameKind::program;
  std::string module;    // basename of the module it is in, when known
  std::string location;  // file:line, when debug information says
};

struct FlameOptions {
  FlameWeight weight = FlameWeight::device;
  bool perProcess = false;        // each process its own root frame
  std::vector<std::string> stripPrefixes;  // taken off function names and files
  uint32_t maxDepth = 0;          // program frames kept from the root (0: all)
  std::string kernelGlob;         // only operations whose name matches (fnmatch)
  double fromSeconds = -1, toSeconds = -1;  // offsets into each process's run (negative: unbounded)
};

// The graph as a tree: nodes[0] is the root (no frame); a node's total is its
// own weight plus its children's.
struct FlameGraph {
  struct Node {
    uint32_t frame = 0;
    uint32_t parent = 0;
    uint64_t total = 0;
    uint64_t self = 0;
    std::vector<uint32_t> children;
  };
  FlameWeight weight = FlameWeight::device;
  std::vector<FlameFrame> frames;
  std::vector<Node> nodes;
  uint64_t operations = 0;     // device operations in the graph
  uint64_t untimed = 0;        // of those, without device times (weight 0 by device time)
  uint64_t withoutStack = 0;   // of those, launched with no stack recorded
  uint64_t filteredOut = 0;    // left out by --kernel, --from, --to
  std::vector<std::string> notes;  // what reading or symbolising found wrong, each once
  // The weight by time: each leaf's weight per slice of kSliceNs from its
  // process's start (processes overlap), for the heatmap of the html output.
  static constexpr int64_t kSliceNs = 20'000'000;
  struct Slice {
    uint32_t node;
    uint32_t slice;
    uint64_t weight;
  };
  std::vector<Slice> slices;
  // What a weight of `value` reads as: "1.20 ms", "3 launches".
  std::string valueText(uint64_t value) const;
  // "device time", "host time in the API call" or "device operations".
  const char* weightName() const;
  // What the pictures say of work the graph shows as zero or without a
  // stack (empty when there is none).
  std::string caveats() const;
};

// Builds the graph of `captures` (their device operations streamed a batch
// at a time), naming code addresses with `resolve`. Kernels with instruction
// samples (mode samples) get their sampled source lines as leaves below them,
// named with `instructions` (may be empty: offsets then), their weight split
// in proportion to the samples.
FlameGraph buildFlameGraph(std::span<const Capture* const> captures, const FlameOptions& options,
                           const FrameResolver& resolve, const InstructionResolver& instructions = {});

// The same graph, each capture's part built on one of up to readJobs()
// threads with the resolvers `resolverForPart()` and `instructionsForPart()`
// give it (called once a capture, on its thread) and taken in in the order
// given: the same graph whatever the number of threads.
FlameGraph buildFlameGraphInParallel(std::span<const Capture* const> captures, const FlameOptions& options,
                                     const std::function<FrameResolver()>& resolverForPart,
                                     const std::function<InstructionResolver()>& instructionsForPart);

// The collapsed-stack text flamegraph.pl, inferno, speedscope and FlameScope
// read: "frame;frame;frame value" per leaf with a weight, frames root first.
void writeFolded(const FlameGraph& graph, std::ostream& out);
// A self-contained interactive SVG (no network, no external script): frames
// coloured by kind, details on hover, click to zoom, search with the share
// matched. Frames narrower than `minWidthPixels` are left out and the picture
// says how many and how much weight they held.
void writeFlameSvg(const FlameGraph& graph, const std::string& title, std::ostream& out,
                   double minWidthPixels = 0.1);
// The same graph in a self-contained HTML page under a sub-second heatmap
// (FlameScope's: a column per second of the run, a row per 20 ms within it,
// coloured by weight); selecting cells draws the graph of that time only.
// `appendix` is HTML put after the graph (gtap flame's roofline section).
void writeFlameHtml(const FlameGraph& graph, const std::string& title, std::ostream& out,
                    double minWidthPixels = 0.1, std::string_view appendix = {});

}  // namespace gtap::readers
