#include "tools.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <list>
#include <string>
#include <vector>

namespace sim_hsa {

namespace {

using OnLoadFn = bool (*)(HsaApiTable* table, uint64_t runtime_version, uint64_t failed_tool_count,
                          const char* const* failed_tool_names);
using OnUnloadFn = void (*)();

std::vector<void*> g_tools;  // in load order; guarded by the runtime's boot lock

// HSA_TOOLS_LIB is split on spaces; double quotes group a name holding
// spaces and a backslash takes the next character literally, as in ROCr's
// parse_tool_names. Colons are part of a name, not separators.
std::vector<std::string> parseToolNames(const char* text) {
  std::vector<std::string> names;
  std::string name;
  bool quoted = false;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p == '\\' && p[1] != '\0') {
      name += *++p;
    } else if (*p == '"') {
      if (quoted) {
        names.push_back(name);
        name.clear();
      }
      quoted = !quoted;
    } else if (*p == ' ' && !quoted) {
      if (!name.empty()) names.push_back(name);
      name.clear();
    } else {
      name += *p;
    }
  }
  if (!name.empty()) names.push_back(name);
  return names;
}

// dlsym also searches the library's dependencies; only the library's own
// definitions count (ROCr's GetExportAddress).
void* ownSymbol(void* library, const char* name) {
  void* address = dlsym(library, name);
  if (address == nullptr) return nullptr;
  link_map* own = nullptr;
  link_map* found = nullptr;
  Dl_info info{};
  if (dlinfo(library, RTLD_DI_LINKMAP, &own) != 0 ||
      dladdr1(address, &info, reinterpret_cast<void**>(&found), RTLD_DL_LINKMAP) == 0 || found != own) {
    return nullptr;
  }
  return address;
}

std::vector<std::string> loadedLibraryNames() {
  std::vector<std::string> names;
  // Collected first: dlopen must not run inside dl_iterate_phdr's callback.
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        }
        return 0;
      },
      &names);
  return names;
}

bool reportLoadFailures() {
  const char* v = std::getenv("HSA_TOOLS_REPORT_LOAD_FAILURE");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

struct Candidate {
  void* library;
  uint64_t order;
  std::string name;
};

}  // namespace

void loadTools(HsaApiTable* table) {
  // HSA_TOOLS_ROCPROFILER_V1_TOOLS only matters from ROCr 6.1, which offers
  // its tables to rocprofiler-register first; like 5.x, this runtime always
  // loads HSA_TOOLS_LIB.
  std::vector<std::string> envNames;
  if (const char* text = std::getenv("HSA_TOOLS_LIB")) envNames = parseToolNames(text);

  std::list<Candidate> candidates;
  std::list<std::string> failedNames;  // stable storage for the pointers below
  std::vector<const char*> failed;

  // Libraries already loaded that declare themselves tools come after the
  // HSA_TOOLS_LIB ones, ordered by their priority.
  const uint64_t envCount = envNames.size();
  for (const std::string& name : loadedLibraryNames()) {
    void* library = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) continue;
    if (const auto* priority = static_cast<const uint32_t*>(ownSymbol(library, "HSA_AMD_TOOL_PRIORITY"))) {
      candidates.push_back({library, uint64_t(*priority) + envCount, name});
    } else {
      dlclose(library);
    }
  }
  uint64_t index = 0;
  for (const std::string& name : envNames) {
    void* library = dlopen(name.c_str(), RTLD_LAZY);
    if (library == nullptr) {
      if (reportLoadFailures()) std::fprintf(stderr, "Tool lib \"%s\" failed to load.\n", name.c_str());
      failed.push_back(failedNames.emplace_back(name).c_str());
      continue;
    }
    candidates.push_back({library, index++, name});
  }

  // A library named twice (say, preloaded and in HSA_TOOLS_LIB) is loaded
  // once, at its earliest place.
  candidates.sort([](const Candidate& a, const Candidate& b) {
    return a.library != b.library ? a.library < b.library : a.order < b.order;
  });
  for (auto it = candidates.begin(); it != candidates.end();) {
    auto next = std::next(it);
    if (next != candidates.end() && next->library == it->library) {
      dlclose(next->library);
      candidates.erase(next);
    } else {
      it = next;
    }
  }
  candidates.sort([](const Candidate& a, const Candidate& b) { return a.order < b.order; });

  for (Candidate& c : candidates) {
    auto onLoad = reinterpret_cast<OnLoadFn>(ownSymbol(c.library, "OnLoad"));
    // ROCr passes the table's major version as the runtime version.
    if (onLoad == nullptr ||
        !onLoad(table, table->version.major_id, failed.size(), failed.empty() ? nullptr : failed.data())) {
      failed.push_back(failedNames.emplace_back(c.name).c_str());
      dlclose(c.library);
      continue;
    }
    g_tools.push_back(c.library);
  }
}

void unloadTools() {
  for (auto it = g_tools.rbegin(); it != g_tools.rend(); ++it) {
    if (auto onUnload = reinterpret_cast<OnUnloadFn>(ownSymbol(*it, "OnUnload"))) onUnload();
  }
}

void closeTools() {
  for (void* library : g_tools) dlclose(library);
  g_tools.clear();
}

}  // namespace sim_hsa
