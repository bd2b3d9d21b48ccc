// Calling the loader's own entry points from gtap's hooks (never recorded).
#pragma once

#include "ze_function_ids.h"
#include "ze_runtime.h"

namespace gtap::ze {

template <typename Fn>
inline Fn real(ZeFn id) {
  return reinterpret_cast<Fn>(realFunction(static_cast<uint32_t>(id)));
}

#define GTAP_ZE_REAL(name) ::gtap::ze::real<decltype(&name)>(::gtap::ze::ZeFn::name)

}  // namespace gtap::ze
