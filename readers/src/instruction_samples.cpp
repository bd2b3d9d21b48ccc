#include "gtap/readers/instruction_samples.h"

#include <kj/exception.h>

#include <fnmatch.h>

#include <algorithm>
#include <set>
#include <cstdio>
#include <tuple>

#include "gtap/format/container.h"
#include "gtap/format/schema/capture.capnp.h"

namespace gtap::readers {

namespace {

// An address further than this past a kernel's first instruction is not
// taken as the kernel's (no kernel is that large; it lies in other code).
constexpr uint64_t kMaxKernelBytes = uint64_t(64) << 20;
// Kernels below the nearest one looked at for one that was loaded then.
constexpr int kMaxCandidates = 64;

// Counts from a file add up without wrapping (a crafted one could).
uint64_t addSat(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

struct Entry {
  uint64_t address;
  uint64_t kernel;
  uint64_t module;
  int64_t from, to;  // when its module was loaded (to 0: till the end)
};

}  // namespace

InstructionSamples loadInstructionSamples(const Capture& capture, const DeviceWork& work) {
  InstructionSamples out;
  std::map<uint32_t, std::vector<Entry>> byDevice;
  for (const auto& [id, o] : work.objects) {
    if (o.kind != schema::ObjectKind::KERNEL || o.codeAddress == 0) continue;
    Entry e{o.codeAddress, id, 0, o.createdNs, o.destroyedNs};
    if (auto m = work.objects.find(o.parent); m != work.objects.end() && m->second.kind == schema::ObjectKind::MODULE) {
      e.module = m->first;
      e.from = m->second.createdNs;
      e.to = m->second.destroyedNs;
    }
    byDevice[o.device].push_back(e);
  }
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, uint32_t> codeIds;  // device, address, module
  for (auto& [device, entries] : byDevice) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return std::tie(a.address, a.from) < std::tie(b.address, b.from); });
    for (const Entry& e : entries) {
      auto [it, added] = codeIds.try_emplace({device, e.address, e.module}, uint32_t(out.codes.size()));
      if (added) {
        SampledCode c;
        c.device = device;
        c.address = e.address;
        c.module = e.module;
        c.kernel = work.objects.at(e.kernel).name;
        out.codes.push_back(std::move(c));
      }
      out.codeOfKernel[e.kernel] = it->second;
    }
  }

  const auto& reader = capture.reader();
  for (const auto& c : reader.chunks()) {
    if (c.kind != static_cast<uint16_t>(schema::ChunkKind::INSTRUCTION_SAMPLES)) continue;
    out.recorded = true;
    std::string where = capture.path() + ": chunk at offset " + std::to_string(c.offset) + ": ";
    try {
      auto d = reader.decode(c);
      auto root = d.root<schema::InstructionSamples>();
      uint32_t device = root.getDevice();
      std::string deviceName = "device " + std::to_string(device);
      if (auto it = work.devices.find(device); it != work.devices.end() && !it->second.name.empty())
        deviceName += " (" + it->second.name + ")";
      if (root.hasNote() && root.getNote().size()) {
        out.notes.push_back(capture.path() + ": " + deviceName + " was not sampled: " + std::string(root.getNote()));
        continue;
      }
      if (!root.hasSamples()) {
        ++out.sampledDevices;  // a sampled device's first record names it and its reasons
        if (out.reasons.empty())
          for (auto r : root.getReasons()) out.reasons.emplace_back(r);
        continue;
      }
      if (out.reasons.empty())
        for (auto r : root.getReasons()) out.reasons.emplace_back(r);
      out.dropped |= root.getDropped();
      const size_t reasons = out.reasons.size();
      const int64_t from = root.getFromNs(), to = root.getToNs();
      const std::vector<Entry>* entries = nullptr;
      if (auto it = byDevice.find(device); it != byDevice.end()) entries = &it->second;
      for (auto s : root.getSamples()) {
        auto counts = s.getCounts();
        uint64_t total = 0;
        for (uint64_t v : counts) total = addSat(total, v);
        out.samples = addSat(out.samples, total);
        const Entry* found = nullptr;
        if (entries) {
          const uint64_t ip = s.getIp();
          auto it = std::upper_bound(entries->begin(), entries->end(), ip,
                                     [](uint64_t a, const Entry& e) { return a < e.address; });
          for (int k = 0; it != entries->begin() && k < kMaxCandidates; ++k) {
            --it;
            if (ip - it->address > kMaxKernelBytes) break;
            if (it->from <= to && (it->to == 0 || it->to >= from)) {
              found = &*it;
              break;
            }
          }
        }
        if (!found) {
          out.unattributed = addSat(out.unattributed, total);
          continue;
        }
        SampledCode& code = out.codes[codeIds.at({device, found->address, found->module})];
        std::vector<uint64_t>& at = code.offsets[s.getIp() - found->address];
        if (at.size() < reasons) at.resize(reasons);
        for (size_t k = 0; k < counts.size() && k < reasons; ++k) at[k] = addSat(at[k], counts[k]);
        code.samples = addSat(code.samples, total);
      }
    } catch (const format::FormatError& e) {
      out.notes.push_back(e.what());
    } catch (const kj::Exception& e) {
      out.notes.push_back(where + "malformed instructionSamples: " + e.getDescription().cStr());
    }
  }
  if (out.unattributed)
    out.notes.push_back(capture.path() + ": " + std::to_string(out.unattributed) + " of " +
                        std::to_string(out.samples) +
                        " instruction samples are at addresses of no kernel gtap knows the code address of");
  if (out.dropped) out.notes.push_back(capture.path() + ": the runtime dropped instruction samples");
  return out;
}

void forEachSampledInstruction(const Capture& capture, const DeviceWork& work, const InstructionSamples& samples,
                               const InstructionResolver& resolve, std::vector<std::string>& notes,
                               const SampledInstructionVisitor& visit) {
  std::vector<ResolvedFrame> frames;
  for (const SampledCode& code : samples.codes) {
    if (code.samples == 0) continue;
    const Object* module = nullptr;
    if (auto m = work.objects.find(code.module); m != work.objects.end()) module = &m->second;
    for (const auto& [offset, counts] : code.offsets) {
      frames.clear();
      if (resolve && module) {
        std::string problem;
        frames = resolve(capture, *module, code.kernel, offset, problem);
        if (!problem.empty() && std::find(notes.begin(), notes.end(), problem) == notes.end())
          notes.push_back(problem);
      }
      visit(code, offset, counts, frames);
    }
  }
}

std::string instructionText(const std::vector<ResolvedFrame>& frames, const std::string& kernel, uint64_t offset) {
  if (!frames.empty() && !frames.front().file.empty()) {
    const ResolvedFrame& f = frames.front();
    std::string file = f.file.substr(f.file.rfind('/') + 1);
    std::string text;
    if (!f.function.empty() && f.function != kernel) text = f.function + (f.inlined ? " [inlined] " : " ");
    return text + file + ":" + std::to_string(f.line);
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "+0x%llx", static_cast<unsigned long long>(offset));
  return kernel + hex;
}

}  // namespace gtap::readers

namespace gtap::readers {

InstructionReport instructionReport(std::span<const Capture* const> captures, const std::string& kernelGlob,
                                    const InstructionResolver& resolve) {
  InstructionReport report;
  std::map<std::pair<std::string, std::string>, InstructionRow> rows;  // kernel, text
  std::map<std::string, uint64_t> kernelSamples;
  std::map<std::string, int64_t> kernelNs;
  std::set<std::string> said;
  auto note = [&](const std::string& n) {
    if (!n.empty() && said.insert(n).second) report.notes.push_back(n);
  };
  for (const Capture* capture : captures) {
    DeviceWork work;
    // The launches of matching kernels, for their device time.
    std::unordered_map<uint64_t, bool> matches;  // kernel object -> its name matches
    auto matching = [&](uint64_t kernel) {
      auto [it, added] = matches.try_emplace(kernel, false);
      if (added)
        if (auto o = work.objects.find(kernel); o != work.objects.end())
          it->second = fnmatch(kernelGlob.c_str(), o->second.name.c_str(), 0) == 0;
      return it->second;
    };
    std::map<std::string, int64_t> ns;
    uint64_t launches = 0;
    streamDeviceWork(*capture, work, false, [&](std::span<const DeviceOp> ops) {
      for (const DeviceOp& op : ops) {
        if (op.kind != schema::DeviceOpKind::KERNEL || !op.kernel || !matching(op.kernel)) continue;
        ++launches;
        if (op.timed) ns[std::string(op.name)] += op.durationNs();
      }
      return true;
    });
    for (const auto& n : work.notes) note(n);
    InstructionSamples samples = loadInstructionSamples(*capture, work);
    report.recorded |= samples.recorded;
    for (const auto& n : samples.notes) note(n);
    if (report.reasons.empty()) report.reasons = samples.reasons;
    report.launches += launches;
    for (const auto& [name, t] : ns) {
      kernelNs[name] += t;
      report.deviceNs += t;
    }
    // Only the matching kernels' code is named (the rest counts as unsampled here).
    for (SampledCode& code : samples.codes) {
      if (fnmatch(kernelGlob.c_str(), code.kernel.c_str(), 0) != 0) code.samples = 0;
      kernelSamples[code.kernel] += code.samples;
      report.samples += code.samples;
    }
    std::vector<std::string> problems;
    forEachSampledInstruction(
        *capture, work, samples, resolve, problems,
        [&](const SampledCode& code, uint64_t offset, const std::vector<uint64_t>& counts,
            const std::vector<ResolvedFrame>& frames) {
          const std::string text = instructionText(frames, code.kernel, offset);
          InstructionRow& row = rows[{code.kernel, text}];
          uint64_t n = 0;
          for (uint64_t c : counts) n += c;
          if (row.kernel.empty()) {
            row.kernel = code.kernel;
            row.text = text;
            if (!frames.empty() && !frames.front().file.empty())
              row.location = frames.front().file + ":" + std::to_string(frames.front().line);
          }
          if (row.counts.size() < counts.size()) row.counts.resize(counts.size());
          for (size_t k = 0; k < counts.size(); ++k) row.counts[k] += counts[k];
          if (row.offsets == 0 || n > row.hottest) {  // the hottest offset names the row
            row.offset = offset;
            row.hottest = n;
          }
          ++row.offsets;
          row.samples += n;
        });
    for (const auto& p : problems) note(p);
  }
  for (auto& [key, row] : rows) {
    uint64_t all = kernelSamples[row.kernel];
    row.share = all ? static_cast<double>(row.samples) / static_cast<double>(all) : 0;
    row.timeNs = static_cast<int64_t>(static_cast<double>(kernelNs[row.kernel]) * row.share + 0.5);
    report.rows.push_back(std::move(row));
  }
  std::stable_sort(report.rows.begin(), report.rows.end(), [](const InstructionRow& a, const InstructionRow& b) {
    return std::tie(b.samples, a.kernel, a.text) < std::tie(a.samples, b.kernel, b.text);
  });
  return report;
}

}  // namespace gtap::readers
