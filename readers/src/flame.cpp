#include "gtap/readers/flame.h"


#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "gtap/format/modes.h"
#include "gtap/readers/instruction_samples.h"
#include "gtap/readers/parallel.h"
#include "gtap/readers/recorded_mode.h"
#include "gtap/readers/table.h"

namespace gtap::readers {

const char* frameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::process: return "process";
    case FrameKind::program: return "program";
    case FrameKind::runtime: return "runtime library";
    case FrameKind::api: return "API call";
    case FrameKind::hal: return "IREE HAL dispatch";
    case FrameKind::kernel: return "device work";
    case FrameKind::instruction: return "kernel instruction";
    case FrameKind::missing: return "no symbol";
  }
  return "frame";
}

std::string FlameGraph::valueText(uint64_t value) const {
  if (weight == FlameWeight::count) return std::to_string(value) + (value == 1 ? " operation" : " operations");
  return formatNanoseconds(static_cast<int64_t>(value));
}

const char* FlameGraph::weightName() const {
  switch (weight) {
    case FlameWeight::device: return "device time";
    case FlameWeight::api: return "host time in the API call";
    case FlameWeight::count: return "device operations";
  }
  return "weight";
}

std::string FlameGraph::caveats() const {
  std::string said;
  if (weight == FlameWeight::device && untimed)
    said += std::to_string(untimed) + " operation" + (untimed == 1 ? "" : "s") + " without device times counted as zero. ";
  if (withoutStack)
    said += std::to_string(withoutStack) + " launch" + (withoutStack == 1 ? "" : "es") +
            " without a stack under [no stack]. ";
  return said;
}

namespace {

constexpr uint32_t kNoFrame = ~uint32_t{0};

// The libraries of GPU runtimes and their programming models: frames in them
// are the runtime's, not the program's.
bool isRuntimeModule(const std::string& base) {
  static const char* const kPrefixes[] = {"libze_",      "libhsa-runtime", "libhsakmt",  "libamdhip",  "libhip",
                                          "libsycl",     "libur_",         "libpi_",     "libiree",    "libOpenCL",
                                          "libigdrcl",   "libze-",         "librocprof", "libamd_comgr", "libgtap_sim",
                                          "libgtap_hsa_sim", "libtbb"};
  for (const char* p : kPrefixes)
    if (base.rfind(p, 0) == 0) return true;
  return false;
}

std::string baseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// A frame's text as the folded format can hold it: no ';' (the separator), no
// line breaks.
std::string foldable(std::string s) {
  for (char& c : s)
    if (c == ';') c = ':';
    else if (c == '\n' || c == '\r') c = ' ';
  return s;
}

class Builder {
 public:
  Builder(const FlameOptions& options, const FrameResolver& resolve, const InstructionResolver* instructions)
      : o_(options), stacks_(resolve), instructions_(instructions) {
    g_.weight = options.weight;
    g_.nodes.emplace_back();  // the root
  }

  void addCapture(const Capture& capture) {
    stacks_.beginCapture();
    DeviceWork work;
    std::vector<Launch> launches;
    uint64_t filtered = 0, untimed = 0, noStack = 0;
    int64_t start = capture.process().startHostNs;
    std::string_view lastName;
    uint32_t lastLeaf = kNoFrame;
    bool lastMatches = true, haveLast = false;
    schema::DeviceOpKind lastKind{};
    auto add = [&](const DeviceOp& op) {
      // HAL-level records are a second record of work the device level
      // records; a dispatch's run on a CPU driver is device work.
      if (op.recordedBy == schema::Api::IREE_HAL && op.operation != "host_execution") return;
      // Names come in runs: each new one gets its --kernel answer, and its
      // leaf frame when first kept, once.
      if (op.name != lastName || op.kind != lastKind || !haveLast) {
        lastMatches = o_.kernelGlob.empty() || fnmatch(o_.kernelGlob.c_str(), std::string(op.name).c_str(), 0) == 0;
        lastLeaf = kNoFrame;
        lastName = op.name;
        lastKind = op.kind;
        haveLast = true;
      }
      // When it happened in the run: by when the device ran it, else when it was submitted.
      int64_t at = (op.timed ? op.startNs : (op.submitNs ? op.submitNs : op.appendNs)) - start;
      double seconds = static_cast<double>(at) / 1e9;
      if (!lastMatches || (o_.fromSeconds >= 0 && seconds < o_.fromSeconds) ||
          (o_.toSeconds >= 0 && seconds > o_.toSeconds)) {
        ++filtered;
        return;
      }
      if (lastLeaf == kNoFrame) {
        bool kernel = op.kind == schema::DeviceOpKind::KERNEL;
        lastLeaf = frame(std::string(op.name) + (kernel ? " [kernel]" : " [device]"), FrameKind::kernel,
                         kernel ? std::string(op.module) : std::string(), {});
      }
      uint32_t hal = op.hal ? frame(std::string(op.hal->name) + " [hal]", FrameKind::hal, {}, {}) : kNoFrame;
      untimed += !op.timed;
      noStack += op.stack == 0;
      uint32_t slice = at <= 0 ? 0 : static_cast<uint32_t>(std::min<int64_t>(at / FlameGraph::kSliceNs, UINT32_MAX));
      launches.push_back({op.appendIndex, op.thread, op.stack, lastLeaf, hal, slice,
                          op.timed ? static_cast<uint64_t>(op.durationNs()) : 0,
                          op.kind == schema::DeviceOpKind::KERNEL ? op.kernel : 0});
    };
    streamDeviceWorkJoined(
        capture, work,
        [&](std::span<const DeviceOp> ops) {
          for (const DeviceOp& op : ops) add(op);
        },
        [&] {
          launches.clear();
          filtered = untimed = noStack = 0;
        });
    for (const auto& n : work.notes) note(n);
    g_.filteredOut += filtered;
    g_.untimed += untimed;
    g_.withoutStack += noStack;
    g_.operations += launches.size();

    // The instruction level: each kernel launch's weight split over its
    // code's sampled instructions (host time in the API call is not split).
    InstructionSamples samples;
    if (o_.weight != FlameWeight::api) {
      samples = loadInstructionSamples(capture, work);
      anySampled_ |= samples.recorded || recorded(capture, format::kModeSamples);
      for (const auto& n : samples.notes) note(n);
    }
    auto codeOf = [&](const Launch& l) -> uint32_t {
      if (!l.kernel || o_.weight == FlameWeight::api) return kNoFrame;
      ++kernelLaunches_;
      auto it = samples.codeOfKernel.find(l.kernel);
      if (it == samples.codeOfKernel.end() || samples.codes[it->second].samples == 0) {
        ++unsampledLaunches_;
        return kNoFrame;
      }
      return it->second;
    };

    // The API call of each launch: its function and time, found by a merge
    // of the launches sorted by call with the calls as they are read.
    std::sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) {
      return std::tie(a.thread, a.appendIndex) < std::tie(b.thread, b.appendIndex);
    });
    struct Call {
      uint32_t thread;
      uint64_t index;
      uint32_t function = ~0u;
      uint64_t ns = 0;
    };
    std::vector<Call> calls;
    for (const Launch& l : launches)
      if (l.appendIndex != ~uint64_t{0} && (calls.empty() || calls.back().thread != l.thread ||
                                            calls.back().index != l.appendIndex))
        calls.push_back({l.thread, l.appendIndex});
    if (!calls.empty()) {
      capture.forEachCallBatch([&](std::span<const ApiCall> batch) {
        for (const ApiCall& c : batch) {
          auto it = std::lower_bound(calls.begin(), calls.end(), std::make_pair(c.thread, c.beginIndex),
                                     [](const Call& x, const std::pair<uint32_t, uint64_t>& k) {
                                       return std::tie(x.thread, x.index) < std::tie(k.first, k.second);
                                     });
          if (it == calls.end() || it->thread != c.thread || it->index != c.beginIndex) continue;
          it->function = c.function;
          it->ns = c.finished && c.endNs > c.beginNs ? static_cast<uint64_t>(c.endNs - c.beginNs) : 0;
        }
      });
    }
    std::unordered_map<uint32_t, uint32_t> apiFrames;  // function -> frame
    auto apiFrame = [&](uint32_t function) {
      if (function == ~0u) return kNoFrame;
      auto [it, added] = apiFrames.try_emplace(function, kNoFrame);
      if (added) it->second = frame(capture.functionName(function), FrameKind::api, {}, {});
      return it->second;
    };

    // Launches that share a path add up before the tree sees them.
    uint32_t processFrame = kNoFrame;
    if (o_.perProcess)
      processFrame = frame(capture.label() + " (" + baseName(capture.process().executable) + ")",
                           FrameKind::process, {}, {});
    std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>, uint64_t> paths;
    size_t call = 0;
    for (size_t i = 0; i < launches.size(); ++i) {
      const Launch& l = launches[i];
      uint32_t function = ~0u;
      bool firstOfCall = false;
      if (l.appendIndex != ~uint64_t{0}) {
        while (call < calls.size() && std::tie(calls[call].thread, calls[call].index) < std::tie(l.thread, l.appendIndex))
          ++call;
        if (call < calls.size() && calls[call].thread == l.thread && calls[call].index == l.appendIndex) {
          function = calls[call].function;
          firstOfCall = i == 0 || launches[i - 1].thread != l.thread || launches[i - 1].appendIndex != l.appendIndex;
        }
      }
      uint64_t w = 0;
      switch (o_.weight) {
        case FlameWeight::device: w = l.deviceNs; break;
        case FlameWeight::count: w = 1; break;
        case FlameWeight::api: w = firstOfCall ? calls[call].ns : 0; break;
      }
      paths[{l.stack, apiFrame(function), l.hal, l.leaf, l.slice, codeOf(l)}] += w;
    }
    launches = {};
    // Each drawn code's lines, hottest first (offsets on one line add up);
    // only the code of launches kept is named.
    std::vector<char> used(samples.codes.size());
    for (const auto& [key, w] : paths)
      if (uint32_t code = std::get<5>(key); code != kNoFrame) used[code] = 1;
    for (size_t i = 0; i < used.size(); ++i)
      if (!used[i]) samples.codes[i].samples = 0;
    std::vector<std::map<uint32_t, uint64_t>> byFrame(samples.codes.size());
    std::vector<std::string> problems;
    forEachSampledInstruction(
        capture, work, samples, instructions_ ? *instructions_ : InstructionResolver(), problems,
        [&](const SampledCode& code, uint64_t offset, const std::vector<uint64_t>& counts,
            const std::vector<ResolvedFrame>& frames) {
          uint64_t n = 0;
          for (uint64_t c : counts) n = n + c < n ? UINT64_MAX : n + c;
          std::string location;
          if (!frames.empty() && !frames.front().file.empty())
            location = stripped(frames.front().file) + ":" + std::to_string(frames.front().line);
          uint64_t& sum = byFrame[static_cast<size_t>(&code - samples.codes.data())]
                                 [frame(instructionText(frames, code.kernel, offset), FrameKind::instruction, {},
                                        location)];
          sum = sum + n < sum ? UINT64_MAX : sum + n;
        });
    for (const auto& p : problems) note(p);
    std::vector<std::vector<std::pair<uint32_t, uint64_t>>> codeLines(samples.codes.size());
    for (size_t i = 0; i < codeLines.size(); ++i) {
      codeLines[i].assign(byFrame[i].begin(), byFrame[i].end());
      std::stable_sort(codeLines[i].begin(), codeLines[i].end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
    }
    std::vector<uint32_t> path;
    for (const auto& [key, w] : paths) {
      auto [stack, api, hal, leaf, slice, code] = key;
      path.clear();
      if (processFrame != kNoFrame) path.push_back(processFrame);
      if (stack == 0) {
        path.push_back(frame("[no stack]", FrameKind::missing, {}, {}));
      } else {
        appendStack(work, stack, path);
      }
      if (api != kNoFrame) path.push_back(api);
      if (hal != kNoFrame) path.push_back(hal);
      path.push_back(leaf);
      if (code == kNoFrame || w == 0) {
        uint32_t node = insert(path, w);
        // Processes overlap: each one's slices count from its own start.
        if (w) g_.slices.push_back({node, slice, w});
        continue;
      }
      const auto& lines = codeLines[code];
      const SampledCode& sampled = samples.codes[code];
      // w times each line's share of the samples; what rounding leaves goes
      // to the hottest line, so the kernel's total stays w.
      uint64_t given = 0;
      std::vector<uint64_t> parts(lines.size());
      for (size_t i = 0; i < lines.size(); ++i) {
        // (A crafted file's counts could make a share above 1: none exceeds what is left.)
        parts[i] = std::min<uint64_t>(
            w - given, static_cast<uint64_t>((static_cast<unsigned __int128>(w) * lines[i].second) / sampled.samples));
        given += parts[i];
      }
      if (!parts.empty()) parts[0] += w - given;
      path.push_back(0);
      for (size_t i = 0; i < lines.size(); ++i) {
        if (!parts[i]) continue;
        path.back() = lines[i].first;
        uint32_t node = insert(path, parts[i]);
        if (parts[i]) g_.slices.push_back({node, slice, parts[i]});
      }
    }
  }

  // Says once what has no instruction level, after the last capture.
  void finish() {
    if (o_.weight == FlameWeight::api || unsampledLaunches_ == 0) return;
    if (!anySampled_)
      note("no instruction samples (recorded without mode samples: add samples to --mode); kernels are the leaves");
    else
      note(std::to_string(unsampledLaunches_) + " of " + std::to_string(kernelLaunches_) +
           " kernel launches have no instruction samples (HSA or IREE CPU work, a device without instruction "
           "sampling, or kernels too short to be sampled); their kernels are the leaves");
  }

  // Takes in `part`'s graph (a later capture's, built on its own): its
  // frames, its nodes with their weights, its slices and counts, as if its
  // capture had been added here.
  void absorb(Builder&& part) {
    FlameGraph& p = part.g_;
    std::vector<uint32_t> frameOf(p.frames.size());
    for (size_t i = 0; i < p.frames.size(); ++i)
      frameOf[i] = frame(p.frames[i].name, p.frames[i].kind, p.frames[i].module, p.frames[i].location);
    // A node comes after its parent (insert() makes them in that order).
    std::vector<uint32_t> nodeOf(p.nodes.size(), 0);
    g_.nodes[0].total += p.nodes[0].total;
    g_.nodes[0].self += p.nodes[0].self;
    for (size_t i = 1; i < p.nodes.size(); ++i) {
      const FlameGraph::Node& n = p.nodes[i];
      uint32_t node = child(nodeOf[n.parent], frameOf[n.frame]);
      nodeOf[i] = node;
      g_.nodes[node].total += n.total;
      g_.nodes[node].self += n.self;
    }
    for (const auto& sl : p.slices) g_.slices.push_back({nodeOf[sl.node], sl.slice, sl.weight});
    g_.operations += p.operations;
    g_.untimed += p.untimed;
    g_.withoutStack += p.withoutStack;
    g_.filteredOut += p.filteredOut;
    for (const auto& n : p.notes) note(n);
    anySampled_ |= part.anySampled_;
    kernelLaunches_ += part.kernelLaunches_;
    unsampledLaunches_ += part.unsampledLaunches_;
  }

  FlameGraph take() {
    // Children by name, so the output is the same however the files were read.
    for (auto& n : g_.nodes)
      std::sort(n.children.begin(), n.children.end(), [&](uint32_t a, uint32_t b) {
        return g_.frames[g_.nodes[a].frame].name < g_.frames[g_.nodes[b].frame].name;
      });
    return std::move(g_);
  }

 private:
  struct Launch {
    uint64_t appendIndex;
    uint32_t thread;
    uint32_t stack;
    uint32_t leaf;
    uint32_t hal;
    uint32_t slice;
    uint64_t deviceNs;
    uint64_t kernel;  // the kernel object of a kernel launch, else 0
  };

  void note(const std::string& n) {
    if (said_.insert(n).second) g_.notes.push_back(n);
  }

  std::string stripped(std::string s) const {
    for (const auto& p : o_.stripPrefixes)
      if (!p.empty() && s.rfind(p, 0) == 0) s.erase(0, p.size());
    return s;
  }

  // The frame of that name and kind (one per module for code).
  uint32_t frame(const std::string& name, FrameKind kind, const std::string& module, const std::string& location) {
    std::string text = foldable(name);
    auto [it, added] = frameIds_.try_emplace(std::make_tuple(text, kind, module), 0);
    if (added) {
      it->second = static_cast<uint32_t>(g_.frames.size());
      g_.frames.push_back({text, kind, module, location});
    } else if (!location.empty()) {
      // One function called from several lines: its first is shown.
      FlameFrame& f = g_.frames[it->second];
      if (f.location.empty()) f.location = location;
    }
    return it->second;
  }

  // Stack `id`'s frames, root first, from main where main is among them,
  // at most maxDepth of them.
  void appendStack(const DeviceWork& work, uint32_t id, std::vector<uint32_t>& path) {
    bool found = false;
    const auto& named = stacks_.of(work, id, &found);
    for (const auto& p : stacks_.takeProblems()) note(p);
    if (!found) {
      path.push_back(frame("[stack " + std::to_string(id) + " missing]", FrameKind::missing, {}, {}));
      return;
    }
    size_t kept = o_.maxDepth ? std::min<size_t>(named.size(), o_.maxDepth) : named.size();
    for (size_t i = 0; i < kept; ++i) path.push_back(flameFrame(named[i]));
  }

  // The graph's frame of a named frame.
  uint32_t flameFrame(uint32_t named) {
    if (named >= flameOf_.size()) flameOf_.resize(named + 1, kNoFrame);
    uint32_t& id = flameOf_[named];
    if (id != kNoFrame) return id;
    const NamedFrame& f = stacks_.frames()[named];
    FrameKind kind = f.function.empty() ? FrameKind::missing
                     : isRuntimeModule(f.module) ? FrameKind::runtime
                                                 : FrameKind::program;
    std::string name = f.function.empty() ? f.text() : stripped(f.function) + (f.inlined ? " [inlined]" : "");
    std::string location = f.file.empty() ? std::string() : stripped(f.file) + ":" + std::to_string(f.line);
    return id = frame(name, kind, f.module, location);
  }

  // The node of frame `f` under `parent`, made when new.
  uint32_t child(uint32_t parent, uint32_t f) {
    auto [it, added] = children_.try_emplace((uint64_t{parent} << 32) | f, 0);
    if (added) {
      it->second = static_cast<uint32_t>(g_.nodes.size());
      FlameGraph::Node n;
      n.frame = f;
      n.parent = parent;
      g_.nodes.push_back(std::move(n));
      g_.nodes[parent].children.push_back(it->second);
    }
    return it->second;
  }

  // Adds `w` along `path`; returns its last node.
  uint32_t insert(const std::vector<uint32_t>& path, uint64_t w) {
    uint32_t node = 0;
    g_.nodes[0].total += w;
    for (uint32_t f : path) {
      node = child(node, f);
      g_.nodes[node].total += w;
    }
    g_.nodes[node].self += w;
    return node;
  }

  const FlameOptions& o_;
  FlameGraph g_;
  std::set<std::string> said_;
  std::map<std::tuple<std::string, FrameKind, std::string>, uint32_t> frameIds_;
  StackFrames stacks_;
  std::vector<uint32_t> flameOf_;  // named frame -> the graph's frame
  std::unordered_map<uint64_t, uint32_t> children_;
  const InstructionResolver* instructions_ = nullptr;
  bool anySampled_ = false;  // some capture was recorded with mode samples
  uint64_t kernelLaunches_ = 0, unsampledLaunches_ = 0;
};

}  // namespace

FlameGraph buildFlameGraph(std::span<const Capture* const> captures, const FlameOptions& options,
                           const FrameResolver& resolve, const InstructionResolver& instructions) {
  Builder b(options, resolve, &instructions);
  for (const Capture* c : captures) b.addCapture(*c);
  b.finish();
  return b.take();
}

FlameGraph buildFlameGraphInParallel(std::span<const Capture* const> captures, const FlameOptions& options,
                                     const std::function<FrameResolver()>& resolverForPart,
                                     const std::function<InstructionResolver()>& instructionsForPart) {
  Builder whole(options, FrameResolver(), nullptr);
  std::vector<std::unique_ptr<Builder>> parts(captures.size());
  forEachInParallel(
      captures.size(),
      [&](size_t i) {
        InstructionResolver instructions = instructionsForPart();
        auto part = std::make_unique<Builder>(options, resolverForPart(), &instructions);
        part->addCapture(*captures[i]);
        parts[i] = std::move(part);
      },
      [&](size_t i) {
        whole.absorb(std::move(*parts[i]));
        parts[i].reset();
        captures[i]->reader().releasePages();
      });
  whole.finish();
  return whole.take();
}

void writeFolded(const FlameGraph& g, std::ostream& out) {
  // Depth first, children in name order: the path so far as text.
  std::string line;
  struct Step {
    uint32_t node;
    size_t length;  // of `line` before this node's frame
  };
  std::vector<Step> todo;
  for (auto it = g.nodes[0].children.rbegin(); it != g.nodes[0].children.rend(); ++it) todo.push_back({*it, 0});
  while (!todo.empty()) {
    Step s = todo.back();
    todo.pop_back();
    const FlameGraph::Node& n = g.nodes[s.node];
    line.resize(s.length);
    if (s.length) line += ';';
    line += g.frames[n.frame].name;
    if (n.self) out << line << ' ' << n.self << '\n';
    for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) todo.push_back({*it, line.size()});
  }
}

}  // namespace gtap::readers
