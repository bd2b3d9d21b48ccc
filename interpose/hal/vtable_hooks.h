// The IREE HAL front end: finds the HAL vtables of the loaded images and
// swaps their slots for thunks that record each call (see docs/interception.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "image_symbols.h"
#include "slot_tables.h"

namespace gtap::hal {

// What became of one vtable.
struct VtableOutcome {
  std::string image;
  std::string vtable;        // iree_hal_task_device_vtable
  std::string interface;     // device, when a layout matched
  std::string versions;      // the IREE versions whose layout matched, "3.3.0, 3.4.0"
  uint32_t slotsHooked = 0;
  std::string refused;       // why it was left alone (empty when hooked)
};

// Which layout a vtable's slots match. `methods[i]` holds the method names read
// off slot i's function (its symbols named iree_hal_<impl>_<method>; several
// when identical functions were folded into one; none for a null slot or a
// function named otherwise). A slot agrees with a layout when one of its
// names is the layout's method there, and disagrees when one of its names is
// the layout's method at another slot (implementations may name a function
// otherwise than the vtable member it fills: neither). A layout matches when
// it has as many slots, no slot disagrees, and at least two slots (one of a
// one-slot vtable) and a third of them agree.
// Of the matching layouts, the one most slots agree with wins (an executable
// loader also agrees with an executable cache in two slots); two interfaces
// that agree equally and would read the slots differently refuse the vtable.
// Returns that layout (`versions`: every version with it for that interface
// and as many agreeing slots), or nullptr with `why` naming the closest
// layout and the first slot that differs.
const SlotLayout* matchLayout(const std::vector<std::vector<std::string>>& methods, std::string& versions,
                              std::string& why);

// Reads the images loaded since the last call (all of them the first time)
// and hooks every vtable whose layout matches. Called at load, before the
// program starts its threads, and when a dlsym finds new images (serialised).
std::vector<VtableOutcome> installHooks();

}  // namespace gtap::hal
