#include "stack_table.h"

#include <libunwind.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace gtap::core {

namespace {
uint64_t g_selfStart = 0, g_selfEnd = 0;

struct ScanState {
  std::vector<std::tuple<std::string, std::string, uint64_t, uint64_t, uint64_t>> found;
};

std::string buildIdOf(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    auto* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const uint8_t* name = p + sizeof(ElfW(Nhdr));
      const uint8_t* desc = name + ((n->n_namesz + 3) & ~3u);
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
          desc + n->n_descsz <= end)
        return std::string(reinterpret_cast<const char*>(desc), n->n_descsz);
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return {};
}

void rangeOf(const dl_phdr_info* info, uint64_t& start, uint64_t& end) {
  start = ~uint64_t{0};
  end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    start = std::min<uint64_t>(start, info->dlpi_addr + ph.p_vaddr);
    end = std::max<uint64_t>(end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
}

}  // namespace

bool isGtapAddress(uint64_t pc) {
  if (!g_selfEnd) {
    Dl_info info{};
    link_map* map = nullptr;
    if (dladdr1(reinterpret_cast<void*>(&isGtapAddress), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP)) {
      dl_iterate_phdr(
          [](dl_phdr_info* i, size_t, void* base) {
            if (i->dlpi_addr != reinterpret_cast<uint64_t>(base)) return 0;
            uint64_t s, e;
            rangeOf(i, s, e);
            g_selfStart = s;
            g_selfEnd = e;
            return 1;
          },
          reinterpret_cast<void*>(map->l_addr));
    }
    if (!g_selfEnd) g_selfEnd = 1;
  }
  return pc >= g_selfStart && pc < g_selfEnd;
}

uint32_t StackTable::intern(const std::vector<uint64_t>& frames) {
  if (frames.empty()) return 0;
  std::string key(reinterpret_cast<const char*>(frames.data()), frames.size() * sizeof(uint64_t));
  auto it = ids_.find(key);
  if (it != ids_.end()) return it->second;
  uint32_t id = nextId_++;
  ids_.emplace(std::move(key), id);
  new_.push_back(frames);
  return id;
}

bool StackTable::covered(uint64_t pc) const {
  auto it = modules_.upper_bound(pc);
  if (it == modules_.begin()) return false;
  --it;
  return pc < it->second.end;
}

void StackTable::rescanModules() {
  ScanState state;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* st = static_cast<ScanState*>(data);
        uint64_t s, e;
        rangeOf(info, s, e);
        if (e <= s) return 0;
        std::string path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "";
        st->found.emplace_back(path, buildIdOf(info), info->dlpi_addr, s, e);
        return 0;
      },
      &state);
  for (auto& [path, buildId, bias, start, end] : state.found) {
    if (modules_.count(start)) continue;
    // The main program has no name in the list; /proc/self/exe names it.
    std::string name = path;
    if (name.empty()) {
      char buf[4096];
      ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
      name = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "[main program]";
    }
    Module m{nextModuleId_++, name, buildId, bias, start, end};
    modules_[start] = m;
    newModules_.push_back(m);
  }
}

void StackTable::writeNew(ChunkSink& sink) {
  if (new_.empty()) return;
  bool missing = false;
  for (const auto& s : new_)
    for (uint64_t pc : s) missing |= !covered(pc);
  if (missing) rescanModules();
  capnp::MallocMessageBuilder m;
  auto root = m.initRoot<schema::Stacks>();
  auto mods = root.initModules(static_cast<unsigned>(newModules_.size()));
  for (unsigned i = 0; i < newModules_.size(); ++i) {
    const Module& mod = newModules_[i];
    mods[i].setId(mod.id);
    mods[i].setPath(mod.path);
    mods[i].setBuildId(capnp::Data::Reader(reinterpret_cast<const uint8_t*>(mod.buildId.data()), mod.buildId.size()));
    mods[i].setLoadBias(mod.bias);
    mods[i].setStart(mod.start);
    mods[i].setEnd(mod.end);
  }
  auto stacks = root.initStacks(static_cast<unsigned>(new_.size()));
  uint32_t firstId = nextId_ - static_cast<uint32_t>(new_.size());
  for (unsigned i = 0; i < new_.size(); ++i) {
    stacks[i].setId(firstId + i);
    auto frames = stacks[i].initFrames(static_cast<unsigned>(new_[i].size()));
    for (unsigned j = 0; j < new_[i].size(); ++j) frames.set(j, new_[i][j]);
  }
  sink.write(schema::ChunkKind::STACKS, m);
  new_.clear();
  newModules_.clear();
}

std::vector<uint64_t> captureStack(uint32_t depth) {
  void* frames[256];
  int got = unw_backtrace(frames, static_cast<int>(std::min<uint32_t>(depth + 8, 256)));
  std::vector<uint64_t> out;
  out.reserve(static_cast<size_t>(got));
  for (int i = 0; i < got; ++i) {
    auto pc = reinterpret_cast<uint64_t>(frames[i]);
    // gtap's own frames (this function, the hook, the wrapper) are not the program's.
    if (out.empty() && isGtapAddress(pc)) continue;
    out.push_back(pc);
    if (out.size() == depth) break;
  }
  return out;
}

uint32_t captureStackInto(uint64_t* out, uint32_t depth, bool skipGtap) {
  void* frames[256];
  int got = unw_backtrace(frames, static_cast<int>(std::min<uint32_t>(depth + 8, 256)));
  uint32_t n = 0;
  for (int i = 0; i < got && n < depth; ++i) {
    auto pc = reinterpret_cast<uint64_t>(frames[i]);
    if (skipGtap && n == 0 && isGtapAddress(pc)) continue;
    out[n++] = pc;
  }
  return n;
}

}  // namespace gtap::core
