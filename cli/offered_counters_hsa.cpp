// The counters HSA agents offer through the AQL profile extension
// (offered_counters.h).
#include "offered_counters.h"

namespace gtap::cli {

std::vector<OfferedDevice> offeredHsaCounters(std::string& note) {
  note = "HSA counters are not listed yet";
  return {};
}

}  // namespace gtap::cli
