#include "tracker_impl.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "clock.h"
#include "session.h"

namespace gtap::hsa {

// --- code objects and executables ------------------------------------------------------

void Tracker::readerFromMemory(hsa_code_object_reader_t reader, const void* data, size_t size) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->readers[reader.handle] = {data, size, {}};
}

void Tracker::readerFromFile(hsa_code_object_reader_t reader, hsa_file_t file) {
  // The runtime has read the file (from its start) by now; gtap reads the same
  // bytes with pread, leaving the descriptor's offset as the runtime left it.
  ReaderInfo info;
  struct stat st {};
  if (fstat(file, &st) == 0 && st.st_size > 0) {
    info.owned.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < info.owned.size()) {
      ssize_t n = pread(file, info.owned.data() + got, info.owned.size() - got, static_cast<off_t>(got));
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    info.owned.resize(got);
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->readers[reader.handle] = std::move(info);
}

void Tracker::readerDestroyed(hsa_code_object_reader_t reader) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->readers.erase(reader.handle);
}

bool Tracker::readerBytes(hsa_code_object_reader_t reader, const void*& data, size_t& size) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->readers.find(reader.handle);
  if (it == impl_->readers.end()) return false;
  const ReaderInfo& r = it->second;
  data = r.owned.empty() ? r.data : r.owned.data();
  size = r.owned.empty() ? r.size : r.owned.size();
  return data && size;
}

void Tracker::executableCreated(hsa_executable_t executable, const core::CallScope& scope) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ExecutableInfo& e = impl_->executables[executable.handle];
  e = ExecutableInfo{};
  e.id = impl_->objectLocked(schema::ObjectKind::EXECUTABLE, executable.handle, kNoDevice, 0, "", threadIdOf(scope));
}

void Tracker::codeObjectLoaded(hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t reader,
                               const core::CallScope& scope) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  auto r = impl_->readers.find(reader.handle);
  if (e == impl_->executables.end()) return;
  ModuleInfo mod;
  mod.agent = agent;
  if (r != impl_->readers.end()) {
    const ReaderInfo& ri = r->second;
    if (!ri.owned.empty())
      mod.bytes = ri.owned;
    else if (ri.data && ri.size)
      mod.bytes.assign(static_cast<const uint8_t*>(ri.data), static_cast<const uint8_t*>(ri.data) + ri.size);
  }
  core::profile::ObjectRecord extras;
  extras.binary = mod.bytes;
  bool elf = mod.bytes.size() >= sizeof(Elf64_Ehdr) && std::memcmp(mod.bytes.data(), ELFMAG, SELFMAG) == 0;
  uint16_t machine = 0;
  if (elf) std::memcpy(&machine, mod.bytes.data() + offsetof(Elf64_Ehdr, e_machine), sizeof machine);
  extras.binaryFormat = !elf ? "unknown" : machine == 224 /* EM_AMDGPU */ ? "amdgpu" : "elf";
  mod.id = impl_->objectLocked(schema::ObjectKind::MODULE, reader.handle, impl_->deviceOf(agent), e->second.id, "",
                               threadIdOf(scope), std::move(extras));
  e->second.modules.push_back(std::move(mod));
}

namespace {

struct SymbolWalk {
  std::vector<hsa_executable_symbol_t> kernels;
};

// Which of the executable's code objects holds `name`: the one whose bytes
// contain it as a string (its symbol or metadata), else the last one loaded
// for the agent.
uint64_t moduleFor(const ExecutableInfo& e, hsa_agent_t agent, const std::string& name) {
  uint64_t fallback = 0;
  for (const ModuleInfo& m : e.modules) {
    if (m.agent.handle != agent.handle) continue;
    fallback = m.id;
    std::string needle = name;
    needle.push_back('\0');
    if (std::search(m.bytes.begin(), m.bytes.end(), needle.begin(), needle.end()) != m.bytes.end()) return m.id;
  }
  return fallback ? fallback : (e.modules.empty() ? e.id : e.modules.back().id);
}

}  // namespace

void Tracker::executableFrozen(hsa_executable_t executable, const core::CallScope& scope) {
  core::testThrowPoint(core::TestSite::hsaHook);
  SymbolWalk walk;
  GTAP_HSA_CALL(hsa_executable_iterate_symbols, 
      executable,
      [](hsa_executable_t, hsa_executable_symbol_t s, void* v) {
        hsa_symbol_kind_t kind{};
        if (GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind) ==
                HSA_STATUS_SUCCESS &&
            kind == HSA_SYMBOL_KIND_KERNEL)
          static_cast<SymbolWalk*>(v)->kernels.push_back(s);
        return HSA_STATUS_SUCCESS;
      },
      &walk);
  uint32_t thread = threadIdOf(scope);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  if (e == impl_->executables.end()) return;
  for (hsa_executable_symbol_t s : walk.kernels) {
    auto info = [&](hsa_executable_symbol_info_t attribute, auto& value) {
      return GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, attribute, &value) == HSA_STATUS_SUCCESS;
    };
    uint32_t nameLength = 0, kernarg = 0, group = 0, priv = 0;
    uint64_t object = 0;
    hsa_agent_t agent{};
    if (!info(HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, nameLength) ||
        !info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, object))
      continue;
    std::string name(nameLength, '\0');
    if (GTAP_HSA_CALL(hsa_executable_symbol_get_info, s, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name.data()) !=
        HSA_STATUS_SUCCESS)
      continue;
    name.resize(std::strlen(name.c_str()));
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, kernarg);
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, group);
    info(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, priv);
    info(HSA_EXECUTABLE_SYMBOL_INFO_AGENT, agent);
    // Code object v3+ kernel symbols are "<name>.kd" (the kernel descriptor).
    std::string kernelName = name;
    if (kernelName.size() > 3 && kernelName.compare(kernelName.size() - 3, 3, ".kd") == 0)
      kernelName.resize(kernelName.size() - 3);
    core::profile::ObjectRecord extras;
    extras.properties.emplace_back("symbol", name);
    extras.properties.emplace_back("kernargSegmentSize", std::to_string(kernarg));
    extras.properties.emplace_back("groupSegmentSize", std::to_string(group));
    extras.properties.emplace_back("privateSegmentSize", std::to_string(priv));
    extras.properties.emplace_back("executable", std::to_string(e->second.id));
    uint64_t parent = moduleFor(e->second, agent, kernelName);
    uint64_t id = impl_->objectLocked(schema::ObjectKind::KERNEL, object, impl_->deviceOf(agent), parent, kernelName,
                                      thread, std::move(extras));
    impl_->kernels[object] = {id, kernarg, core::kernelNameWanted(kernelName)};
    e->second.kernelObjects.push_back(object);
  }
  impl_->publishKernelsLocked();
  // The bytes are in the records; the search above was their last use.
  for (ModuleInfo& m : e->second.modules) std::vector<uint8_t>().swap(m.bytes);
}

void Tracker::Impl::publishKernelsLocked() {
  kernelViews.push_back(std::make_unique<KernelMap>(kernels));
  kernelsView.store(kernelViews.back().get(), std::memory_order_release);
}

void Tracker::executableDestroyed(hsa_executable_t executable) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto e = impl_->executables.find(executable.handle);
  if (e == impl_->executables.end()) return;
  uint64_t now = core::nowTicks();
  for (uint64_t object : e->second.kernelObjects) {
    auto k = impl_->kernels.find(object);
    if (k == impl_->kernels.end()) continue;
    impl_->out.destroyed.emplace_back(k->second.id, now);
    impl_->kernels.erase(k);
  }
  impl_->publishKernelsLocked();
  for (const ModuleInfo& m : e->second.modules) impl_->out.destroyed.emplace_back(m.id, now);
  impl_->out.destroyed.emplace_back(e->second.id, now);
  impl_->executables.erase(e);
}

}  // namespace gtap::hsa
