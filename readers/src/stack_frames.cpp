#include "gtap/readers/stack_frames.h"

#include <algorithm>
#include <cstdio>

namespace gtap::readers {

std::string NamedFrame::text() const {
  char hex[40];
  if (function.empty()) {
    if (module.empty()) {
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(offset));
      return hex;
    }
    std::snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(offset));
    return module + hex;
  }
  return inlined ? function + " [inlined]" : function;
}

uint32_t StackFrames::add(NamedFrame f) {
  auto [it, added] = ids_.try_emplace(f, static_cast<uint32_t>(frames_.size()));
  if (added) frames_.push_back(std::move(f));
  return it->second;
}

const std::vector<uint32_t>& StackFrames::at(const DeviceWork& work, uint64_t pc) {
  auto [it, added] = addresses_.try_emplace(pc);
  if (!added) return it->second;
  std::vector<uint32_t>& out = it->second;
  const HostModule* m = work.moduleFor(pc);
  NamedFrame f;
  if (!m) {
    f.offset = pc;
    out.push_back(add(std::move(f)));
    return out;
  }
  f.module = m->path.substr(m->path.rfind('/') + 1);
  f.offset = pc - m->loadBias;
  std::string problem;
  // Every captured frame is a return address (the call is just before it).
  std::vector<ResolvedFrame> resolved = resolve_ ? resolve_(*m, pc, problem) : std::vector<ResolvedFrame>{};
  if (!problem.empty() && said_.insert(problem).second) problems_.push_back(problem);
  if (resolved.empty()) {
    out.push_back(add(std::move(f)));
    return out;
  }
  for (const ResolvedFrame& r : resolved) {
    NamedFrame named = f;
    named.function = r.function;
    named.file = r.file;
    named.line = r.line;
    named.inlined = r.inlined;
    out.push_back(add(std::move(named)));
  }
  return out;
}

const std::vector<uint32_t>& StackFrames::of(const DeviceWork& work, uint32_t stack, bool* found) {
  auto [it, added] = stacks_.try_emplace(stack);
  auto& [known, frames] = it->second;
  if (added) {
    auto s = work.stacks.find(stack);
    known = s != work.stacks.end();
    if (known) {
      for (uint64_t pc : s->second) {
        const auto& here = at(work, pc);
        frames.insert(frames.end(), here.begin(), here.end());
      }
      std::reverse(frames.begin(), frames.end());
      for (size_t i = 0; i < frames.size(); ++i) {
        const NamedFrame& f = frames_[frames[i]];
        if (f.function == "main" && !f.inlined) {
          frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
    }
  }
  if (found) *found = known;
  return frames;
}

}  // namespace gtap::readers
