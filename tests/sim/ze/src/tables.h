// How the driver's *GetProcAddrTable functions (generated from the headers'
// dispatch tables and implemented_functions.txt into sim_ze_tables.cpp; the
// only symbols the driver exports) fill the tables the Level Zero loader
// hands them.
//
// An entry introduced in a later API version than the caller asked for is
// left alone, since the caller's table (built from older headers) has no room
// for it. An entry the driver does not implement is null, which the loader
// turns into ZE_RESULT_ERROR_UNSUPPORTED_FEATURE.
#pragma once

#include "api.h"

#include <ze_ddi.h>
#include <zes_ddi.h>
#include <zet_ddi.h>

#include <cstdint>

namespace sim::tables {

// Checks the caller's request; a caller at least as new as these headers has
// a table at least as large, which is cleared so that every entry the driver
// does not fill is null. (The 1.8 loader refuses a driver that lacks any of
// the tool and sysman tables, so those are exported and left empty.)
template <class Table>
ze_result_t begin(ze_api_version_t version, Table* table) {
  if (table == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Tables only grow within a major version; another major is another ABI.
  if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT)) {
    return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  }
  if (uint32_t(version) >= uint32_t(ZE_API_VERSION_CURRENT)) *table = Table{};
  return ZE_RESULT_SUCCESS;
}

template <class Slot, class Value>
void fill(Slot& slot, Value value, ze_api_version_t requested, uint32_t since) {
  if (uint32_t(requested) >= since) slot = value;
}

}  // namespace sim::tables
