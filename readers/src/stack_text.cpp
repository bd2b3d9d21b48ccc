#include "gtap/readers/stack_text.h"

#include <cstdio>

namespace gtap::readers {

std::vector<std::string> describeStack(const DeviceWork& work, uint32_t stack, Symbolizer& symbolizer,
                                       std::vector<std::string>* problems) {
  std::vector<std::string> lines;
  auto it = work.stacks.find(stack);
  if (it == work.stacks.end()) return lines;
  for (uint64_t pc : it->second) {
    const HostModule* m = work.moduleFor(pc);
    char offset[64];
    if (!m) {
      std::snprintf(offset, sizeof offset, "0x%llx", static_cast<unsigned long long>(pc));
      lines.push_back(std::string(offset) + " (no module)");
      continue;
    }
    std::snprintf(offset, sizeof offset, "+0x%llx", static_cast<unsigned long long>(pc - m->loadBias));
    std::string base = m->path.substr(m->path.rfind('/') + 1);
    // Every captured frame is a return address (the call site is just before).
    SymbolizeResult r = symbolizer.symbolize({m->path, m->buildId, m->loadBias}, pc, true);
    if (!r.problem.empty() && problems) problems->push_back(r.problem);
    if (r.frames.empty()) {
      lines.push_back(base + offset);
      continue;
    }
    for (const SourceFrame& f : r.frames) {
      std::string line = (f.function.empty() ? base + offset : f.function);
      if (f.inlined) line += " (inlined)";
      if (!f.file.empty()) line += " at " + f.file.substr(f.file.rfind('/') + 1) + ":" + std::to_string(f.line);
      else line += " in " + base;
      lines.push_back(line);
    }
  }
  return lines;
}

}  // namespace gtap::readers
