#include "gtap/format/regular_file.h"
#include "substitution.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

namespace gtap::replay {

namespace {

using readers::ReplayError;
using readers::ReplayRecord;
using O = readers::ReplayOp;

// What a substitution check creates, destroyed whatever happens.
struct Scratch {
  explicit Scratch(const ZeFunctions& functions) : ze(functions) {}
  const ZeFunctions& ze;
  ze_context_handle_t context = nullptr;
  std::vector<ze_module_handle_t> modules;
  std::vector<ze_kernel_handle_t> kernels;
  ~Scratch() {
    for (auto k : kernels) ze.zeKernelDestroy(k);
    for (auto m : modules) ze.zeModuleDestroy(m);
    if (context) ze.zeContextDestroy(context);
  }
};

// Opens a --substitute file without blocking (a FIFO would wait for a
// writer) and refuses anything but a regular file small enough to be a module.
int openSubstituteFile(const std::string& path, const std::string& what, uint64_t& size) {
  struct stat st {};
  std::string error;
  int fd = format::openRegularFile(path, st, error);
  if (fd < 0) throw ReplayError(what + ": " + path + ": " + error + "; a module binary or code object is expected");
  if (static_cast<uint64_t>(st.st_size) > readers::kMaxSubstituteBytes) {
    close(fd);
    throw ReplayError(what + ": " + path + " holds " + std::to_string(st.st_size) +
                      " bytes, more than a module or code object can (" + std::to_string(readers::kMaxSubstituteBytes) + ")");
  }
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

ze_module_handle_t createModule(Scratch& s, ze_device_handle_t device, const ReplayRecord& create, const Bytes& binary,
                                const std::string& what) {
  auto m = create.fields.getModuleCreate();
  ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, static_cast<ze_module_format_t>(m.getFormat()),
                        binary.size, binary.data, m.getBuildFlags().cStr(), nullptr};
  ze_module_handle_t module = nullptr;
  ze_result_t r = s.ze.zeModuleCreate(s.context, device, &desc, &module, nullptr);
  if (r != ZE_RESULT_SUCCESS) throw ReplayError(what + ": zeModuleCreate returned " + resultName(r));
  s.modules.push_back(module);
  return module;
}

}  // namespace

// The file as it was checked: exactly the size fstat gave, never more.
Bytes readSubstituteFile(const std::string& path, const std::string& what) {
  uint64_t size = 0;
  int fd = openSubstituteFile(path, what, size);
  auto bytes = std::make_shared<std::vector<uint8_t>>(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, bytes->data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string reason = n < 0 ? std::strerror(errno) : "it became shorter while being read";
      close(fd);
      throw ReplayError(what + ": cannot read " + path + ": " + reason);
    }
    done += static_cast<uint64_t>(n);
  }
  close(fd);
  return {bytes, bytes->data(), bytes->size()};
}

std::map<uint64_t, Bytes> checkSubstitutions(const ReplaySetup& setup,
                                             const std::vector<readers::ModuleSubstitution>& substitutions) {
  std::map<uint64_t, Bytes> out;
  const auto& records = setup.stream->records;
  for (const auto& sub : substitutions) {
    std::string what = setup.capture->path() + ": --substitute " + sub.selector + "=" + sub.path;
    // The modules the selector names.
    std::set<uint64_t> modules;
    bool numeric = !sub.selector.empty() && sub.selector.find_first_not_of("0123456789") == std::string::npos;
    for (const auto& r : records) {
      if (r.op == O::MODULE_CREATE) {
        uint64_t id = r.fields.getModuleCreate().getModule();
        if (sub.selector == "all" || (numeric && std::to_string(id) == sub.selector)) modules.insert(id);
      }
      if (!numeric && r.op == O::KERNEL_CREATE && r.fields.getKernelCreate().getName() == sub.selector)
        modules.insert(r.fields.getKernelCreate().getModule());
    }
    if (modules.empty())
      throw ReplayError(what + ": " +
                        (sub.selector == "all" ? std::string("the stream creates no module")
                         : numeric             ? "the stream creates no module with id " + sub.selector
                                               : "the stream creates no kernel named " + sub.selector));
    Bytes replacement = readSubstituteFile(sub.path, what);
    for (uint64_t id : modules) {
      size_t at = 0;
      while (at < records.size() &&
             !(records[at].op == O::MODULE_CREATE && records[at].fields.getModuleCreate().getModule() == id))
        ++at;
      if (at == records.size()) throw ReplayError(what + ": module " + std::to_string(id) + " is never created");
      const ReplayRecord& create = records[at];
      auto dev = setup.devices.byId.find(create.fields.getModuleCreate().getDevice());
      if (dev == setup.devices.byId.end())
        throw ReplayError(what + ": module " + std::to_string(id) + " names no captured device");
      Scratch s(*setup.ze);
      ze_context_desc_t cdesc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
      ze_result_t r = setup.ze->zeContextCreate(dev->second.driver, &cdesc, &s.context);
      if (r != ZE_RESULT_SUCCESS) throw ReplayError(what + ": zeContextCreate returned " + resultName(r));
      std::string moduleName = "module " + std::to_string(id) + " (" + readers::recordLabel(create) + ")";
      auto original = createModule(s, dev->second.device, create, setup.payloads.of(at), what + ": original " + moduleName);
      auto replaced = createModule(s, dev->second.device, create, replacement, what + ": replacement for " + moduleName);
      std::set<std::string> checked;
      for (const auto& k : records) {
        if (k.op != O::KERNEL_CREATE) continue;
        auto kc = k.fields.getKernelCreate();
        std::string name = kc.getName();
        if (kc.getModule() != id || !checked.insert(name).second) continue;
        std::string kernelWhat = what + ": kernel " + name + " (" + readers::recordLabel(k) + ")";
        ze_kernel_desc_t kdesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name.c_str()};
        ze_kernel_handle_t a = nullptr, b = nullptr;
        r = setup.ze->zeKernelCreate(original, &kdesc, &a);
        if (r != ZE_RESULT_SUCCESS)
          throw ReplayError(kernelWhat + ": the original module's zeKernelCreate returned " + resultName(r));
        s.kernels.push_back(a);
        r = setup.ze->zeKernelCreate(replaced, &kdesc, &b);
        if (r != ZE_RESULT_SUCCESS)
          throw ReplayError(kernelWhat + ": the replacement does not have it (zeKernelCreate returned " +
                            resultName(r) + ")");
        s.kernels.push_back(b);
        ze_kernel_properties_t pa{}, pb{};
        pa.stype = pb.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
        r = setup.ze->zeKernelGetProperties(a, &pa);
        if (r == ZE_RESULT_SUCCESS) r = setup.ze->zeKernelGetProperties(b, &pb);
        if (r != ZE_RESULT_SUCCESS) throw ReplayError(kernelWhat + ": zeKernelGetProperties returned " + resultName(r));
        if (pa.numKernelArgs != pb.numKernelArgs)
          throw ReplayError(kernelWhat + ": the replacement takes " + std::to_string(pb.numKernelArgs) +
                            " arguments, the original " + std::to_string(pa.numKernelArgs));
      }
      out[id] = replacement;
    }
  }
  return out;
}

}  // namespace gtap::replay

namespace gtap::readers {

void checkSubstituteFile(const std::string& path, const std::string& what) {
  uint64_t size = 0;
  close(replay::openSubstituteFile(path, what, size));
}

}  // namespace gtap::readers
