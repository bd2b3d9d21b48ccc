#include "gtap/readers/executables.h"

#include <cstring>
#include <stdexcept>

#include "gtap/readers/code_object.h"

namespace gtap::readers {

namespace {
std::string property(const Object& o, const std::string& key) {
  for (const auto& [k, v] : o.properties)
    if (k == key) return v;
  return {};
}

int64_t number(const std::string& s) {
  if (s.empty()) return -1;
  try {
    return std::stoll(s);
  } catch (const std::exception&) {
    return -1;
  }
}
}  // namespace

std::vector<ExecutableKernelRow> executableRows(const std::vector<LoadedCapture>& captures,
                                                std::vector<std::string>& notes) {
  std::vector<ExecutableKernelRow> rows;
  for (const auto& lc : captures) {
    for (const auto& [id, module] : lc.work.objects) {
      // Level Zero modules and HSA code objects; IREE HAL executables hold
      // their bytes themselves (HSA executables do not: their code objects do).
      bool halExecutable = module.kind == schema::ObjectKind::EXECUTABLE && module.binarySize != 0;
      if (module.kind != schema::ObjectKind::MODULE && !halExecutable) continue;
      ExecutableKernelRow base;
      base.process = lc.capture->label();
      base.module = id;
      base.format = module.binaryFormat;
      base.size = module.binarySize;
      base.hash = module.binaryHash;
      auto bytes = module.binarySize ? lc.capture->blob(module.binaryHashLow, module.binaryHashHigh) : std::nullopt;
      if (module.binarySize && !bytes)
        notes.push_back(lc.capture->path() + ": module " + std::to_string(id) + ": its binary is not (all) in the file");
      bool fromMetadata = false;
      // AMDGPU code objects, and any other ELF with their metadata note (the
      // simulated HSA runtime's code objects).
      const bool amdgpu = bytes && looksLikeAmdgpuCodeObject(bytes->data(), bytes->size());
      const bool elf = bytes && bytes->size() >= 4 && std::memcmp(bytes->data(), "\x7f" "ELF", 4) == 0;
      if (elf) {
        try {
          CodeObjectInfo info = parseCodeObjectMetadata(bytes->data(), bytes->size());
          if (amdgpu) base.format = "amdgpu";
          base.target = info.target;
          for (const auto& k : info.kernels) {
            ExecutableKernelRow r = base;
            r.kernel = k.name;
            r.source = "metadata";
            r.args = static_cast<int64_t>(k.explicitArgCount());
            r.hiddenArgs = static_cast<int64_t>(k.hiddenArgCount());
            r.kernargBytes = k.kernargSegmentSize;
            r.sgprs = k.sgprCount;
            r.vgprs = k.vgprCount;
            r.ldsBytes = k.groupSegmentFixedSize;
            r.scratchBytes = k.privateSegmentFixedSize;
            r.wavefront = k.wavefrontSize;
            r.requiredGroupSize = std::to_string(k.requiredWorkgroupSize[0]) + "," +
                                  std::to_string(k.requiredWorkgroupSize[1]) + "," +
                                  std::to_string(k.requiredWorkgroupSize[2]);
            rows.push_back(std::move(r));
          }
          fromMetadata = true;
        } catch (const std::exception& e) {
          // Other ELFs (Level Zero modules, host code) are not expected to have the note.
          if (amdgpu) notes.push_back(lc.capture->path() + ": module " + std::to_string(id) + ": " + e.what());
        }
      }
      if (fromMetadata) continue;
      // What the runtime said about the kernels the program created.
      bool any = false;
      for (const auto& [kid, k] : lc.work.objects) {
        if (k.kind != schema::ObjectKind::KERNEL || k.parent != id) continue;
        ExecutableKernelRow r = base;
        r.kernel = k.name;
        r.source = "runtime";
        // Level Zero kernel properties, or HSA kernel symbol attributes.
        r.args = number(property(k, "numKernelArgs"));
        r.kernargBytes = number(property(k, "kernargSegmentSize"));
        r.ldsBytes = number(property(k, property(k, "localMemSize").empty() ? "groupSegmentSize" : "localMemSize"));
        r.scratchBytes =
            number(property(k, property(k, "privateMemSize").empty() ? "privateSegmentSize" : "privateMemSize"));
        r.requiredGroupSize = property(k, "requiredGroupSize");
        if (r.requiredGroupSize.empty()) r.requiredGroupSize = property(k, "workgroup_size");  // IREE HAL export
        rows.push_back(std::move(r));
        any = true;
      }
      if (!any) rows.push_back(base);
    }
  }
  return rows;
}

}  // namespace gtap::readers
