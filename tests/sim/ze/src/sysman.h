// Sysman (zes): the device's engine groups, whose activity follows what the
// engines really ran, and its frequency domain, the simulated clock's.
#pragma once

#include "objects.h"

#include <cstdint>

namespace sim {

// Makes the device's engine groups and frequency domain (at zeInit, with the device).
void createSysmanObjects(Device& device);

namespace activity {
// Marks an engine busy (running a command) for its lifetime: the device's
// ALL group and its COMPUTE_ALL or COPY_ALL group count the time at least one
// of their engines is busy.
class Busy {
 public:
  explicit Busy(bool copyEngine);
  ~Busy();
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  const bool copy_;
};
}  // namespace activity

}  // namespace sim
