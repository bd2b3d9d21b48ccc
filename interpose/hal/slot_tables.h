// The layouts of IREE's HAL vtables, per supported IREE version: which method
// each slot holds, and where the few object members gtap reads sit. Generated
// at build time from interpose/hal/slots/*.txt (facts read off IREE's headers
// by generate_slot_tables.py).
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

// Where an object member gtap reads sits in an IREE version's struct.
struct ObjectField {
  const char* name;  // "dispatch_ptrs"
  size_t offset;     // bytes from the object's start (x86-64)
};

struct ObjectLayout {
  const char* version;    // IREE version the offsets were read from
  const char* interface;  // the object's vtable interface: "local_executable"
  const ObjectField* fields;
  size_t count;
};

// The offset of `field` in the objects of `interface` in IREE `version`;
// false when that version's struct has no such member (or was not read).
bool objectFieldOffset(const char* version, const char* interface, const char* field, size_t& offset);

}  // namespace gtap::hal
