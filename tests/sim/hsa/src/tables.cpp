#include "tables.h"

#include "api.h"

#include <cstring>

namespace sim_hsa {

namespace {

template <class Table>
void initVersion(Table& table, uint32_t major, uint32_t step) {
  std::memset(&table, 0, sizeof table);  // unimplemented entries stay null
  // minor_id is the table's size in bytes: how a tool knows which fields exist.
  table.version.major_id = major;
  table.version.minor_id = sizeof(Table);
  table.version.step_id = step;
}

void fill(LiveTables& t) {
  initVersion(t.root, HSA_API_TABLE_MAJOR_VERSION, HSA_API_TABLE_STEP_VERSION);
  initVersion(t.core, HSA_CORE_API_TABLE_MAJOR_VERSION, HSA_CORE_API_TABLE_STEP_VERSION);
  initVersion(t.amd_ext, HSA_AMD_EXT_API_TABLE_MAJOR_VERSION, HSA_AMD_EXT_API_TABLE_STEP_VERSION);
  initVersion(t.finalizer_ext, HSA_FINALIZER_API_TABLE_MAJOR_VERSION, HSA_FINALIZER_API_TABLE_STEP_VERSION);
  initVersion(t.image_ext, HSA_IMAGE_API_TABLE_MAJOR_VERSION, HSA_IMAGE_API_TABLE_STEP_VERSION);
  t.root.core_ = &t.core;
  t.root.amd_ext_ = &t.amd_ext;
  t.root.finalizer_ext_ = &t.finalizer_ext;
  t.root.image_ext_ = &t.image_ext;
#define GTAP_SIM_HSA_FILL(table, name) t.table.name##_fn = &sim_hsa::name;
  GTAP_SIM_HSA_FUNCTIONS(GTAP_SIM_HSA_FILL)
#undef GTAP_SIM_HSA_FILL
}

}  // namespace

LiveTables& liveTables() {
  static LiveTables* tables = [] {
    auto* t = new LiveTables;
    fill(*t);
    return t;
  }();
  return *tables;
}

void resetTables() { fill(liveTables()); }

}  // namespace sim_hsa
