// Running a kernel dispatch packet: the grid is cut into work-groups, and the
// kernel's function runs per work-item (or per work-group) on this thread.
#include "agent.h"
#include "clock.h"
#include "code_object.h"
#include "queue.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace sim_hsa {

namespace {

uint64_t readDeviceClock() { return clock::deviceTicks(); }

hsa_status_t run(const hsa_kernel_dispatch_packet_t& packet, uint64_t index) {
  KernelRef kernel;
  // On hardware an unknown kernel object is a memory fault; here it is a
  // queue error the program's callback hears about.
  if (!findKernelObject(packet.kernel_object, kernel)) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  const gtap_sim_hsa_kernel_desc& desc = *kernel.desc;

  const uint32_t dims = (packet.setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) & 0x3;
  if (dims < 1) return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  const uint32_t wg[3] = {packet.workgroup_size_x, dims > 1 ? packet.workgroup_size_y : 1u,
                          dims > 2 ? packet.workgroup_size_z : 1u};
  const uint32_t grid[3] = {packet.grid_size_x, dims > 1 ? packet.grid_size_y : 1u,
                            dims > 2 ? packet.grid_size_z : 1u};
  for (int d = 0; d < 3; ++d) {
    if (wg[d] == 0 || grid[d] == 0) return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  }
  if (uint64_t(wg[0]) * wg[1] * wg[2] > gpu::kWorkgroupMaxSize) return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;

  const uint32_t groupBytes = std::max(packet.group_segment_size, desc.group_segment_size);
  const uint32_t privateBytes = std::max(packet.private_segment_size, desc.private_segment_size);
  if (groupBytes > gpu::kGroupSegmentMax || privateBytes > gpu::kPrivateSegmentMax) {
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  }
  const bool perGroup = desc.granularity == GTAP_SIM_HSA_PER_WORK_GROUP;

  gtap_sim_hsa_item item{};
  item.kernarg = packet.kernarg_address;
  item.dimensions = dims;
  item.dispatch_packet = &packet;
  item.dispatch_id = index;
  item.device_ticks = &readDeviceClock;
  item.group_segment_size = groupBytes;
  item.private_segment_size = privateBytes;
  for (int d = 0; d < 3; ++d) {
    item.workgroup_size[d] = wg[d];
    item.grid_size[d] = grid[d];
    item.group_count[d] = uint32_t((uint64_t(grid[d]) + wg[d] - 1) / wg[d]);
  }
  std::vector<uint8_t> groupMemory(groupBytes);
  const size_t groupItems = size_t(wg[0]) * wg[1] * wg[2];
  std::vector<uint8_t> privateMemory(size_t(privateBytes) * (perGroup ? groupItems : 1));
  item.group_segment = groupBytes != 0 ? groupMemory.data() : nullptr;
  item.private_segment = privateBytes != 0 ? privateMemory.data() : nullptr;

  for (uint32_t gz = 0; gz < item.group_count[2]; ++gz) {
    for (uint32_t gy = 0; gy < item.group_count[1]; ++gy) {
      for (uint32_t gx = 0; gx < item.group_count[0]; ++gx) {
        const uint32_t g[3] = {gx, gy, gz};
        uint32_t items = 1;
        for (int d = 0; d < 3; ++d) {
          item.group_id[d] = g[d];
          // Work-groups at the far edge of the grid may be partial.
          item.group_size[d] = std::min<uint32_t>(wg[d], grid[d] - g[d] * wg[d]);
          items *= item.group_size[d];
        }
        std::fill(groupMemory.begin(), groupMemory.end(), 0);
        if (perGroup) {
          std::fill(privateMemory.begin(), privateMemory.begin() + size_t(privateBytes) * items, 0);
          for (int d = 0; d < 3; ++d) {
            item.local_id[d] = 0;
            item.global_id[d] = uint64_t(g[d]) * wg[d];
          }
          desc.fn(&item);
          continue;
        }
        for (uint32_t lz = 0; lz < item.group_size[2]; ++lz) {
          for (uint32_t ly = 0; ly < item.group_size[1]; ++ly) {
            for (uint32_t lx = 0; lx < item.group_size[0]; ++lx) {
              const uint32_t l[3] = {lx, ly, lz};
              for (int d = 0; d < 3; ++d) {
                item.local_id[d] = l[d];
                item.global_id[d] = uint64_t(g[d]) * wg[d] + l[d];
              }
              if (privateBytes != 0) std::fill(privateMemory.begin(), privateMemory.end(), 0);
              desc.fn(&item);
            }
          }
        }
      }
    }
  }
  return HSA_STATUS_SUCCESS;
}

}  // namespace

hsa_status_t runKernelDispatch(const hsa_kernel_dispatch_packet_t& packet, uint64_t index) {
  try {
    return run(packet, index);
  } catch (const std::bad_alloc&) {
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  } catch (...) {
    // A C++ kernel threw: the closest thing to a hardware exception.
    return HSA_STATUS_ERROR_EXCEPTION;
  }
}

}  // namespace sim_hsa
