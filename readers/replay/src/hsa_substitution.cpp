#include "hsa_substitution.h"

#include <array>

#include "gtap/readers/code_object.h"
#include "substitution.h"

namespace gtap::replay {

namespace {

using O = readers::ReplayOp;
using readers::ReplayError;
using readers::ReplayRecord;

std::string withoutKd(const std::string& s) {
  return s.size() > 3 && s.compare(s.size() - 3, 3, ".kd") == 0 ? s.substr(0, s.size() - 3) : s;
}

bool numeric(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// The code object whose metadata describes the kernel of record `at`: the
// one the record names, else the only one its executable loaded for its
// agent before it (0: none or several).
uint64_t codeObjectOf(const readers::ReplayStream& stream, size_t at) {
  auto k = stream.records[at].fields.getHsaKernel();
  if (k.getCodeObject()) return k.getCodeObject();
  uint64_t found = 0;
  for (size_t i = 0; i < at; ++i) {
    const ReplayRecord& r = stream.records[i];
    if (r.op != O::HSA_EXECUTABLE_LOAD) continue;
    auto l = r.fields.getHsaExecutableLoad();
    if (l.getExecutable() != k.getExecutable() || l.getAgent() != k.getAgent()) continue;
    if (found && found != l.getCodeObject()) return 0;
    found = l.getCodeObject();
  }
  return found;
}

readers::CodeObjectInfo metadataOf(const Bytes& bytes) { return readers::parseCodeObjectMetadata(bytes.data, bytes.size); }

const readers::KernelInfo* findKernel(const readers::CodeObjectInfo& info, const std::string& symbol) {
  for (const auto& k : info.kernels)
    if (k.symbol == symbol || k.name == withoutKd(symbol)) return &k;
  return nullptr;
}

std::string argumentText(const readers::KernelArg& a, size_t i) {
  return "argument " + std::to_string(i) + (a.name.empty() ? std::string() : " (" + a.name + ")");
}

std::string argumentShape(const readers::KernelArg& a) {
  return "offset " + std::to_string(a.offset) + ", " + std::to_string(a.size) + " bytes, " + a.valueKind;
}

// The first way the replacement's kernel differs from the original's ABI,
// or "" when they agree.
std::string abiDifference(const readers::KernelInfo& original, const readers::KernelInfo& replacement) {
  if (original.kernargSegmentSize != replacement.kernargSegmentSize)
    return "the replacement's kernarg segment is " + std::to_string(replacement.kernargSegmentSize) +
           " bytes, the original's " + std::to_string(original.kernargSegmentSize);
  if (original.kernargSegmentAlign != replacement.kernargSegmentAlign)
    return "the replacement's kernarg segment is aligned to " + std::to_string(replacement.kernargSegmentAlign) +
           " bytes, the original's to " + std::to_string(original.kernargSegmentAlign);
  size_t common = std::min(original.args.size(), replacement.args.size());
  for (size_t i = 0; i < common; ++i) {
    const auto& a = original.args[i];
    const auto& b = replacement.args[i];
    if (a.offset != b.offset || a.size != b.size || a.valueKind != b.valueKind)
      return argumentText(b, i) + " of the replacement is at " + argumentShape(b) + "; the original's " +
             argumentText(a, i) + " at " + argumentShape(a);
  }
  if (original.args.size() != replacement.args.size()) {
    const auto& longer = original.args.size() > replacement.args.size() ? original : replacement;
    const auto& extra = longer.args[common];
    return "the replacement takes " + std::to_string(replacement.args.size()) + " arguments, the original " +
           std::to_string(original.args.size()) + " (" + (&longer == &original ? "the original's " : "the replacement's ") +
           argumentText(extra, common) + ": " + argumentShape(extra) + ")";
  }
  return "";
}

std::string dim3(uint64_t x, uint64_t y, uint64_t z) {
  return std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z);
}

}  // namespace

bool selectsHsaCodeObject(const readers::ReplayStream& stream, const std::string& selector) {
  for (const auto& r : stream.records) {
    if (r.op == O::HSA_CODE_OBJECT &&
        (selector == "all" || (numeric(selector) && std::to_string(r.fields.getHsaCodeObject().getCodeObject()) == selector)))
      return true;
    if (!numeric(selector) && r.op == O::HSA_KERNEL &&
        withoutKd(r.fields.getHsaKernel().getSymbol()) == withoutKd(selector))
      return true;
  }
  return false;
}

HsaSubstitutions checkHsaSubstitutions(const ReplaySetup& setup,
                                       const std::vector<readers::ModuleSubstitution>& substitutions) {
  HsaSubstitutions out;
  const auto& stream = *setup.stream;
  const auto& records = stream.records;
  for (const auto& sub : substitutions) {
    std::string what = setup.capture->path() + ": --substitute " + sub.selector + "=" + sub.path;
    // The code objects the selector names, each with where it is made.
    std::map<uint64_t, size_t> selected;
    for (size_t i = 0; i < records.size(); ++i) {
      const ReplayRecord& r = records[i];
      if (r.op == O::HSA_CODE_OBJECT) {
        uint64_t id = r.fields.getHsaCodeObject().getCodeObject();
        if (sub.selector == "all" || (numeric(sub.selector) && std::to_string(id) == sub.selector)) selected[id] = i;
      }
      if (!numeric(sub.selector) && sub.selector != "all" && r.op == O::HSA_KERNEL &&
          withoutKd(r.fields.getHsaKernel().getSymbol()) == withoutKd(sub.selector)) {
        uint64_t id = codeObjectOf(stream, i);
        if (!id)
          throw ReplayError(what + ": kernel " + withoutKd(sub.selector) + " (record seq " + std::to_string(r.seq) +
                            ") comes from no code object the stream can name (its executable loaded none, or "
                            "several, for its agent)");
        selected[id] = records.size();
      }
    }
    if (selected.empty()) continue;  // the Level Zero check says so when nothing else matches
    Bytes replacement = readSubstituteFile(sub.path, what);
    readers::CodeObjectInfo replaced;
    try {
      replaced = metadataOf(replacement);
    } catch (const std::exception& e) {
      throw ReplayError(what + ": the replacement's metadata cannot be read: " + e.what());
    }
    for (auto& [id, at] : selected) {
      if (at == records.size()) {
        for (at = 0; at < records.size(); ++at)
          if (records[at].op == O::HSA_CODE_OBJECT && records[at].fields.getHsaCodeObject().getCodeObject() == id)
            break;
        if (at == records.size()) throw ReplayError(what + ": code object " + std::to_string(id) + " is never made");
      }
      std::string codeObject = "code object " + std::to_string(id) + " (record seq " + std::to_string(records[at].seq) + ")";
      readers::CodeObjectInfo original;
      try {
        original = metadataOf(setup.payloads.of(at));
      } catch (const std::exception& e) {
        throw ReplayError(what + ": the original " + codeObject +
                          " has no metadata to compare the replacement with: " + e.what());
      }
      // Every kernel of that code object the stream dispatches.
      for (size_t k = 0; k < records.size(); ++k) {
        if (records[k].op != O::HSA_KERNEL || codeObjectOf(stream, k) != id) continue;
        auto kernel = records[k].fields.getHsaKernel();
        std::vector<const ReplayRecord*> dispatches;
        for (const auto& d : records)
          if (d.op == O::HSA_DISPATCH && d.fields.getHsaDispatch().getKernel() == kernel.getKernel())
            dispatches.push_back(&d);
        if (dispatches.empty()) {
          out.uncheckedKernels.insert(kernel.getKernel());
          continue;
        }
        std::string symbol = kernel.getSymbol();
        std::string kernelWhat = what + ": kernel " + withoutKd(symbol) + " of " + codeObject;
        const readers::KernelInfo* a = findKernel(original, symbol);
        if (!a) throw ReplayError(kernelWhat + ": the original's metadata does not describe it");
        const readers::KernelInfo* b = findKernel(replaced, symbol);
        if (!b) throw ReplayError(kernelWhat + ": the replacement does not have it");
        std::string difference = abiDifference(*a, *b);
        if (!difference.empty()) throw ReplayError(kernelWhat + ": " + difference);
        const auto& required = b->requiredWorkgroupSize;
        for (const ReplayRecord* d : dispatches) {
          auto p = d->fields.getHsaDispatch();
          auto wg = p.getWorkgroup();
          std::string at = " (record seq " + std::to_string(d->seq) + ")";
          if (required != std::array<uint32_t, 3>{} &&
              (wg.getX() != required[0] || wg.getY() != required[1] || wg.getZ() != required[2]))
            throw ReplayError(kernelWhat + ": the replacement requires work-groups of " +
                              dim3(required[0], required[1], required[2]) + ", a dispatch" + at + " uses " +
                              dim3(wg.getX(), wg.getY(), wg.getZ()));
          if (b->groupSegmentFixedSize > p.getGroupSegmentSize())
            throw ReplayError(kernelWhat + ": the replacement needs " + std::to_string(b->groupSegmentFixedSize) +
                              " bytes of group memory, a dispatch" + at + " gives " +
                              std::to_string(p.getGroupSegmentSize()));
          if (b->privateSegmentFixedSize > p.getPrivateSegmentSize())
            throw ReplayError(kernelWhat + ": the replacement needs " + std::to_string(b->privateSegmentFixedSize) +
                              " bytes of private memory per work-item, a dispatch" + at + " gives " +
                              std::to_string(p.getPrivateSegmentSize()));
        }
        out.checkedKernels.insert(kernel.getKernel());
      }
      out.binaries[id] = replacement;
    }
  }
  return out;
}

}  // namespace gtap::replay
