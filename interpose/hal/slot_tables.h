// The layouts of IREE's HAL vtables, per supported IREE version: which method
// each slot holds. Generated at build time from interpose/hal/slots/*.txt
// (facts read off IREE's headers by generate_slot_tables.py).
#pragma once

#include <cstddef>

namespace gtap::hal {

struct SlotMethod {
  const char* name;    // "queue_execute"
  bool returnsStatus;  // returns iree_status_t: its code is the call's result
  unsigned variant;    // argument layout where gtap reads arguments (embed_slot_tables.py)
};

struct SlotLayout {
  const char* version;    // IREE version the layout was read from
  const char* interface;  // "device", "command_buffer", ...
  const SlotMethod* methods;
  size_t count;
};

const SlotLayout* slotLayouts(size_t& count);

}  // namespace gtap::hal
