// A tool library for sim_hsa_smoke_test, shaped like the tools ROCr loads:
// OnLoad / OnUnload, and HSA_AMD_TOOL_PRIORITY so that it is found when
// preloaded. It keeps the table it was given (smoke_tool_table) and, when
// GTAP_SIM_HSA_SMOKE_TOOL_LOG names a file, appends one line per event there,
// so a test can read what happened after the runtime unloaded the tool.
// GTAP_SIM_HSA_SMOKE_TOOL_WRAP=1 wraps hsa_agent_get_info;
// GTAP_SIM_HSA_SMOKE_TOOL_REFUSE=1 makes OnLoad return false.
#include <hsa/hsa_api_trace.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
__attribute__((visibility("default"))) extern const uint32_t HSA_AMD_TOOL_PRIORITY = 25;
__attribute__((visibility("default"))) HsaApiTable* smoke_tool_table = nullptr;
}

namespace {

decltype(hsa_agent_get_info)* g_next_agent_get_info = nullptr;

bool flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "1") == 0;
}

void log(const char* format, ...) __attribute__((format(printf, 1, 2)));
void log(const char* format, ...) {
  const char* path = std::getenv("GTAP_SIM_HSA_SMOKE_TOOL_LOG");
  if (path == nullptr) return;
  FILE* f = std::fopen(path, "a");
  if (f == nullptr) return;
  va_list args;
  va_start(args, format);
  std::vfprintf(f, format, args);
  va_end(args);
  std::fputc('\n', f);
  std::fclose(f);
}

hsa_status_t wrappedAgentGetInfo(hsa_agent_t agent, hsa_agent_info_t attribute, void* value) {
  log("wrapped hsa_agent_get_info");
  return g_next_agent_get_info(agent, attribute, value);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) bool OnLoad(HsaApiTable* table, uint64_t runtime_version,
                                                              uint64_t failed_tool_count,
                                                              const char* const* failed_tool_names) {
  // Each table's minor_id is its size: what a tool checks before touching a field.
  const bool sizes = table->version.major_id == HSA_API_TABLE_MAJOR_VERSION &&
                     table->version.minor_id == sizeof(HsaApiTable) &&
                     table->core_->version.major_id == HSA_CORE_API_TABLE_MAJOR_VERSION &&
                     table->core_->version.minor_id == sizeof(CoreApiTable) &&
                     table->amd_ext_->version.major_id == HSA_AMD_EXT_API_TABLE_MAJOR_VERSION &&
                     table->amd_ext_->version.minor_id == sizeof(AmdExtTable) &&
                     table->finalizer_ext_->version.minor_id == sizeof(FinalizerExtTable) &&
                     table->image_ext_->version.minor_id == sizeof(ImageExtTable);
  const bool refuse = flag("GTAP_SIM_HSA_SMOKE_TOOL_REFUSE");
  log("load version=%llu sizes=%d failed=%llu first_failed=%s%s", static_cast<unsigned long long>(runtime_version),
      sizes ? 1 : 0, static_cast<unsigned long long>(failed_tool_count),
      failed_tool_count > 0 && failed_tool_names != nullptr ? failed_tool_names[0] : "-",
      refuse ? " refused" : "");
  if (refuse) return false;
  smoke_tool_table = table;
  if (flag("GTAP_SIM_HSA_SMOKE_TOOL_WRAP") &&
      offsetof(CoreApiTable, hsa_agent_get_info_fn) < table->core_->version.minor_id) {
    g_next_agent_get_info = table->core_->hsa_agent_get_info_fn;
    table->core_->hsa_agent_get_info_fn = wrappedAgentGetInfo;
  }
  return true;
}

extern "C" __attribute__((visibility("default"))) void OnUnload() {
  log("unload");
  smoke_tool_table = nullptr;
}
