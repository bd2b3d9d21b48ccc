// The exported hsa_* functions: each calls its entry in the live HsaApiTable,
// as ROCr's do, so tools that rewrite entries see every call.
//
// The list comes from the installed headers (generate_exports.cmake). Each
// function is declared with the header's own type and defined as a GNU
// indirect function whose resolver returns a forwarder instantiated for that
// table entry: the compiler derives every signature, so there is no
// hand-written parameter list to get wrong. A null entry (a function the
// runtime does not implement) makes the call return HSA_STATUS_ERROR.
#include "tables.h"

#include <type_traits>

namespace {

template <class Table>
Table& live();
template <>
CoreApiTable& live<CoreApiTable>() { return sim_hsa::liveTables().core; }
template <>
AmdExtTable& live<AmdExtTable>() { return sim_hsa::liveTables().amd_ext; }
template <>
FinalizerExtTable& live<FinalizerExtTable>() { return sim_hsa::liveTables().finalizer_ext; }
template <>
ImageExtTable& live<ImageExtTable>() { return sim_hsa::liveTables().image_ext; }

template <auto Slot, class Table, class R, class... Args>
R forward(Args... args) {
  auto fn = live<Table>().*Slot;
  if (fn == nullptr) {
    if constexpr (std::is_same_v<R, hsa_status_t>) {
      return HSA_STATUS_ERROR;
    } else if constexpr (!std::is_void_v<R>) {
      return R{};
    } else {
      return;
    }
  }
  return fn(args...);
}

template <auto Slot, class Table, class R, class... Args>
auto forwarderFor(R (*Table::*)(Args...)) -> R (*)(Args...) {
  return &forward<Slot, Table, R, Args...>;
}

#define GTAP_SIM_HSA_FORWARDER(table, name) \
  forwarderFor<&decltype(sim_hsa::LiveTables::table)::name##_fn>(&decltype(sim_hsa::LiveTables::table)::name##_fn)

}  // namespace

#define GTAP_SIM_HSA_EXPORT(table, name)                                                        \
  extern "C" decltype(&::name) gtap_sim_hsa_resolve_##name() { return GTAP_SIM_HSA_FORWARDER(table, name); } \
  extern "C" __attribute__((visibility("default"))) decltype(::name) name                       \
      __attribute__((ifunc("gtap_sim_hsa_resolve_" #name)));

// The deprecated names share the entry of their sc variant.
#define GTAP_SIM_HSA_EXPORT_ALIAS(name, target)                                                    \
  extern "C" decltype(&::name) gtap_sim_hsa_resolve_##name() { return GTAP_SIM_HSA_FORWARDER(core, target); } \
  extern "C" __attribute__((visibility("default"))) decltype(::name) name                          \
      __attribute__((ifunc("gtap_sim_hsa_resolve_" #name)));

#include "exports.inc"

// Exported by ROCr but held in no public table (its image library's own).
extern "C" __attribute__((visibility("default"))) hsa_status_t hsa_amd_image_get_info_max_dim(
    hsa_agent_t, hsa_agent_info_t, void*) {
  return HSA_STATUS_ERROR;
}
