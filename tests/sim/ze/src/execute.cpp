// Executes recorded commands on a worker thread: kernels really run (the
// module's body for every work-item or work-group), copies and fills really
// move bytes, and timestamp events get the device ticks of the work.
#include "clock.h"
#include "commands.h"
#include "sampling.h"
#include "sysman.h"

#include <cstddef>
#include <cstring>

namespace sim {

namespace {

void runLaunch(const LaunchState& launch, const ze_group_count_t& groups, WorkTotals& totals) {
  const uint64_t startNs = clock::hostNs();
  // Sampled while a metric streamer is open on the device.
  sampling::LaunchScope sampled(*launch.module);
  const gtap_sim_kernel_desc* d = launch.desc;
  const uint32_t n = d->num_args;
  // Fresh copies per run: a body that scribbles on its argument copy must not
  // change the next execution of the same command list.
  std::vector<std::vector<uint8_t>> values = launch.values;
  std::vector<std::vector<std::max_align_t>> local(n);
  std::vector<void*> args(n, nullptr);
  for (uint32_t i = 0; i < n; ++i) {
    if (d->arg_sizes[i] == GTAP_SIM_ARG_LOCAL) {
      local[i].resize((launch.localSizes[i] + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
      args[i] = local[i].data();
    } else {
      args[i] = values[i].data();
    }
  }

  gtap_sim_item item{};
  item.num_args = n;
  item.args = args.data();
  const uint32_t count[3] = {groups.groupCountX, groups.groupCountY, groups.groupCountZ};
  for (int k = 0; k < 3; ++k) {
    item.group_size[k] = launch.groupSize[k];
    item.group_count[k] = count[k];
    item.global_offset[k] = launch.globalOffset[k];
  }
  const bool perGroup = d->granularity == GTAP_SIM_PER_WORK_GROUP;
  const uint32_t* gs = item.group_size;
  for (uint32_t gz = 0; gz < count[2]; ++gz) {
    for (uint32_t gy = 0; gy < count[1]; ++gy) {
      for (uint32_t gx = 0; gx < count[0]; ++gx) {
        item.group_id[0] = gx;
        item.group_id[1] = gy;
        item.group_id[2] = gz;
        // Local memory starts zeroed for every group, for repeatable runs.
        for (auto& buffer : local) {
          if (!buffer.empty()) std::memset(buffer.data(), 0, buffer.size() * sizeof(std::max_align_t));
        }
        const uint32_t lx = perGroup ? 1 : gs[0], ly = perGroup ? 1 : gs[1], lz = perGroup ? 1 : gs[2];
        for (uint32_t z = 0; z < lz; ++z) {
          for (uint32_t y = 0; y < ly; ++y) {
            for (uint32_t x = 0; x < lx; ++x) {
              const uint32_t lid[3] = {x, y, z};
              for (int k = 0; k < 3; ++k) {
                item.local_id[k] = lid[k];
                item.global_id[k] =
                    uint64_t(item.global_offset[k]) + uint64_t(item.group_id[k]) * gs[k] + lid[k];
              }
              d->fn(&item);
            }
          }
        }
      }
    }
  }
  const uint64_t groupCount = uint64_t(count[0]) * count[1] * count[2];
  totals.kernels += 1;
  totals.workGroups += groupCount;
  totals.workItems += groupCount * gs[0] * gs[1] * gs[2];
  totals.busyNs += clock::hostNs() - startNs;
}

void fill(void* dst, const std::vector<uint8_t>& pattern, size_t size) {
  auto* out = static_cast<uint8_t*>(dst);
  const size_t p = pattern.size();
  if (p == 1) {
    std::memset(out, pattern[0], size);
    return;
  }
  for (size_t off = 0; off < size; off += p) std::memcpy(out + off, pattern.data(), size - off < p ? size - off : p);
}

void copyRegion(const Command& c) {
  auto* dst = static_cast<uint8_t*>(c.dst);
  auto* src = static_cast<const uint8_t*>(c.src);
  const ze_copy_region_t& dr = c.dstRegion;
  const ze_copy_region_t& sr = c.srcRegion;
  for (uint32_t z = 0; z < dr.depth; ++z) {
    for (uint32_t y = 0; y < dr.height; ++y) {
      size_t dOff = size_t(dr.originZ + z) * c.dstSlicePitch + size_t(dr.originY + y) * c.dstPitch + dr.originX;
      size_t sOff = size_t(sr.originZ + z) * c.srcSlicePitch + size_t(sr.originY + y) * c.srcPitch + sr.originX;
      std::memcpy(dst + dOff, src + sOff, dr.width);
    }
  }
}

void queryTimestamps(const Command& c) {
  auto* base = static_cast<uint8_t*>(c.dst);
  for (size_t i = 0; i < c.events.size(); ++i) {
    ze_kernel_timestamp_result_t r{};
    // Undefined for unsignaled events by the specification; zeros here.
    events::deviceTimestamp(*c.events[i], &r);
    size_t off = c.offsets.empty() ? i * sizeof r : c.offsets[i];
    std::memcpy(base + off, &r, sizeof r);
  }
}

}  // namespace

void execute(const Command& c, const Arms& arms, const bool* abandon, WorkTotals& totals) {
  events::waitAll(c.waits, &arms.waits, abandon);
  // Busy from here to the end of the command, for Sysman's engine activity.
  const activity::Busy busy(totals.copyEngine);
  const uint64_t start = clock::nowTicks();
  switch (c.op) {
    case Op::Launch:
      runLaunch(*c.launches[0], c.groups, totals);
      break;
    case Op::LaunchIndirect: {
      ze_group_count_t g;
      std::memcpy(&g, c.groupsPtr, sizeof g);  // read when it runs, as on a device
      runLaunch(*c.launches[0], g, totals);
      break;
    }
    case Op::LaunchMultiIndirect: {
      uint32_t n = *c.countPtr;
      if (n > c.launches.size()) n = uint32_t(c.launches.size());
      for (uint32_t i = 0; i < n; ++i) runLaunch(*c.launches[i], c.groupsPtr[i], totals);
      break;
    }
    case Op::Copy:
      std::memmove(c.dst, c.src, c.size);
      break;
    case Op::CopyRegion:
      copyRegion(c);
      break;
    case Op::Fill:
      fill(c.dst, c.pattern, c.size);
      break;
    case Op::ResetEvent:
      events::reset(*c.events[0]);
      break;
    case Op::WriteTimestamp: {
      uint64_t now = clock::nowTicks();  // global timestamps keep all 64 bits
      std::memcpy(c.dst, &now, sizeof now);
      break;
    }
    case Op::QueryTimestamps:
      queryTimestamps(c);
      break;
    case Op::MetricQueryBegin:
      metricQueries::begin(*c.query, totals);
      break;
    case Op::MetricQueryEnd:
      metricQueries::end(*c.query, totals);
      break;
    case Op::Barrier:
    case Op::SignalEvent:
    case Op::WaitEvents:
    case Op::Nop:
      break;
  }
  if (c.signal) events::signal(*c.signal, start, clock::nowTicks(), arms.signal);
}

}  // namespace sim
