#include "slot_tables.h"

#include <cstring>

namespace gtap::hal {

namespace {
#include "hal_slot_tables.inc"
}  // namespace

const SlotLayout* slotLayouts(size_t& count) {
  count = sizeof kLayouts / sizeof kLayouts[0];
  return kLayouts;
}

bool objectFieldOffset(const char* version, const char* interface, const char* field, size_t& offset) {
  for (size_t i = 0; i + 1 < sizeof kObjects / sizeof kObjects[0]; ++i) {  // the last is an empty end
    const ObjectLayout& o = kObjects[i];
    if (std::strcmp(o.version, version) != 0 || std::strcmp(o.interface, interface) != 0) continue;
    for (size_t f = 0; f < o.count; ++f)
      if (std::strcmp(o.fields[f].name, field) == 0) {
        offset = o.fields[f].offset;
        return true;
      }
  }
  return false;
}

}  // namespace gtap::hal
