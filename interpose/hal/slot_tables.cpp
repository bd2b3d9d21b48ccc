#include "slot_tables.h"

namespace gtap::hal {

namespace {
#include "hal_slot_tables.inc"
}  // namespace

const SlotLayout* slotLayouts(size_t& count) {
  count = sizeof kLayouts / sizeof kLayouts[0];
  return kLayouts;
}

}  // namespace gtap::hal
