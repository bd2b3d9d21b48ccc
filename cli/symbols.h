// Naming code addresses for the commands that show stacks: where separate
// debug files are looked for, and the resolver the readers take.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "gtap/readers/instruction_samples.h"
#include "gtap/readers/stack_frames.h"
#include "gtap/readers/symbolizer.h"

namespace gtap::cli {

// --debug-dir's directories, then GTAP_DEBUG_PATH's (colon-separated; empty
// entries name nothing).
inline std::vector<std::string> debugDirectories(std::vector<std::string> dirs) {
  if (const char* env = std::getenv("GTAP_DEBUG_PATH")) {
    std::string list = env;
    for (size_t from = 0; from <= list.size();) {
      size_t colon = std::min(list.find(':', from), list.size());
      if (colon > from) dirs.push_back(list.substr(from, colon - from));
      from = colon + 1;
    }
  }
  return dirs;
}

// Frames from `symbolizer`, which must outlive the resolver.
inline readers::FrameResolver resolverFor(readers::Symbolizer& symbolizer) {
  return [&symbolizer](const readers::HostModule& m, uint64_t address, std::string& problem) {
    // Every captured frame is a return address (the call is just before it).
    auto r = symbolizer.symbolize({m.path, m.buildId, m.loadBias}, address, true);
    problem = r.problem;
    std::vector<readers::ResolvedFrame> frames;
    for (const auto& f : r.frames) frames.push_back({f.function, f.file, f.line, f.inlined});
    return frames;
  };
}

// Symbolizers for readers that work on several threads (a Symbolizer is not
// shared between threads): borrow() hands one that is nobody else's until the
// pointer is dropped, made on first need; each module is read once per
// symbolizer, so at most once per thread. Outlives what it lends.
class SymbolizerPool {
 public:
  explicit SymbolizerPool(std::vector<std::string> debugDirs) : dirs_(std::move(debugDirs)) {}
  std::shared_ptr<readers::Symbolizer> borrow() {
    std::unique_ptr<readers::Symbolizer> s;
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        s = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!s) s = std::make_unique<readers::Symbolizer>(dirs_);
    return std::shared_ptr<readers::Symbolizer>(s.release(), [this](readers::Symbolizer* back) {
      std::lock_guard lock(mutex_);
      free_.emplace_back(back);
    });
  }
  // An instruction resolver holding a borrowed symbolizer for as long as it
  // lives.
  readers::InstructionResolver instructionResolver();
  // A resolver holding a borrowed symbolizer for as long as it lives.
  readers::FrameResolver resolver() {
    auto s = borrow();
    auto resolve = resolverFor(*s);
    return [s, resolve](const readers::HostModule& m, uint64_t address, std::string& problem) {
      return resolve(m, address, problem);
    };
  }

 private:
  std::vector<std::string> dirs_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<readers::Symbolizer>> free_;
};

// Names sampled kernel instructions from the modules' debug ELF, which the
// capture holds as a blob: each is put in an anonymous file once and read
// there like any ELF (`symbolizer` must outlive the resolver). The kernel's
// first instruction is the function symbol named like the kernel.
inline readers::InstructionResolver instructionResolverFor(readers::Symbolizer& symbolizer) {
  struct Image {
    int fd = -1;
    std::string path, problem;
    ~Image() {
      if (fd >= 0) ::close(fd);
    }
  };
  struct Symbol {
    bool found = false;
    uint64_t address = 0, size = 0;
  };
  struct State {
    std::map<std::pair<uint64_t, uint64_t>, std::unique_ptr<Image>> images;  // by the blob's hash
    std::map<std::tuple<uint64_t, uint64_t, std::string>, Symbol> symbols;
  };
  auto state = std::make_shared<State>();
  return [&symbolizer, state](const readers::Capture& capture, const readers::Object& module, const std::string& kernel,
                              uint64_t offset, std::string& problem) -> std::vector<readers::ResolvedFrame> {
    const std::string name = "module#" + std::to_string(module.id);
    if (module.debugInfoSize == 0) {
      problem = capture.path() + ": " + name + " has no debug ELF in the capture; its kernels' instructions are offsets";
      return {};
    }
    const auto key = std::make_pair(module.debugInfoHashLow, module.debugInfoHashHigh);
    auto& image = state->images[key];
    if (!image) {
      image = std::make_unique<Image>();
      auto bytes = capture.blob(key.first, key.second);
      if (!bytes) {
        image->problem = capture.path() + ": the debug ELF of " + name + " is missing or damaged";
      } else {
        image->fd = memfd_create("gtap-debug-elf", MFD_CLOEXEC);
        size_t done = 0;
        while (image->fd >= 0 && done < bytes->size()) {
          ssize_t n = ::write(image->fd, bytes->data() + done, bytes->size() - done);
          if (n <= 0) break;
          done += size_t(n);
        }
        if (image->fd < 0 || done != bytes->size())
          image->problem = "could not hold the debug ELF of " + name + " in memory";
        else
          image->path = "/proc/self/fd/" + std::to_string(image->fd);
      }
    }
    if (!image->problem.empty()) {
      problem = image->problem;
      return {};
    }
    auto [it, added] = state->symbols.try_emplace(std::make_tuple(key.first, key.second, kernel));
    if (added) it->second.found = readers::findFunctionSymbol(image->path, kernel, it->second.address, it->second.size);
    if (!it->second.found) {
      problem = capture.path() + ": " + name + "'s debug ELF has no function named " + kernel +
                "; its instructions are offsets";
      return {};
    }
    // Past the kernel's own code (a function it calls) the address is still
    // named by whatever symbol and line hold it.
    auto r = symbolizer.symbolize({image->path, "", 0}, it->second.address + offset, false);
    if (!r.problem.empty()) problem = r.problem;
    std::vector<readers::ResolvedFrame> frames;
    for (const auto& f : r.frames) frames.push_back({f.function, f.file, f.line, f.inlined});
    return frames;
  };
}

inline readers::InstructionResolver SymbolizerPool::instructionResolver() {
  auto s = borrow();
  auto resolve = instructionResolverFor(*s);
  return [s, resolve](auto&&... args) { return resolve(std::forward<decltype(args)>(args)...); };
}

}  // namespace gtap::cli
