// AMD's AQL profile extension: events the simulated device counts truthfully,
// the start/stop/read packets that bracket the work to measure, and reading
// the results. Described in tests/sim/README.md ("AQL profile extension").
#include "aqlprofile.h"

#include "agent.h"
#include "clock.h"

#include <hsa/hsa_ven_amd_aqlprofile.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace sim_hsa {

namespace {

// The events, by block and counter_id (the select values of AMD's gfx9
// GRBM_PERF_SEL_* and SQ_PERF_SEL_*); every block has one instance (0).
enum class Counter { GrbmCount, GrbmGuiActive, GrbmCpBusy, SqWaves };
struct EventName {
  hsa_ven_amd_aqlprofile_block_name_t block;
  uint32_t counter_id;
  Counter counter;
};
constexpr EventName kEvents[] = {
    {HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM, 0, Counter::GrbmCount},
    {HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM, 2, Counter::GrbmGuiActive},
    {HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM, 3, Counter::GrbmCpBusy},
    {HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_SQ, 4, Counter::SqWaves},
};

// Counter registers per block, as on GFX9: how many of its events one
// profile can count together (get_info BLOCK_COUNTERS).
uint32_t blockCounters(hsa_ven_amd_aqlprofile_block_name_t block) {
  switch (block) {
    case HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM: return 2;
    case HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_SQ: return 8;
    default: return 0;
  }
}

const EventName* findEvent(const hsa_ven_amd_aqlprofile_event_t& e) {
  if (e.block_index != 0) return nullptr;
  for (const EventName& n : kEvents) {
    if (n.block == e.block_name && n.counter_id == e.counter_id) return &n;
  }
  return nullptr;
}

// The packet's body after its 16-bit header (the pm4_command words), and what
// the caller's command and output buffers hold. All little-endian.
constexpr uint8_t kFormatPm4Ib = 1;  // AmdFormat of ROCr's PM4 indirect-buffer packets
constexpr uint32_t kPacketMagic = 0x4c514167;   // "gAQL"
constexpr uint32_t kCommandMagic = 0x444d4367;  // "gCMD"
enum Op : uint32_t { kOpStart = 1, kOpStop = 2, kOpRead = 3 };
enum State : uint32_t { kPrepared = 0, kStarted = 1, kStopped = 2 };

struct PacketBody {  // at byte 0 of the packet; the header is the caller's
  uint16_t header;
  uint8_t format;  // kFormatPm4Ib
  uint8_t reserved;
  uint32_t magic;  // kPacketMagic
  uint32_t op;
  uint32_t event_count;
  uint64_t command_buffer;
  uint64_t output_buffer;
};
static_assert(sizeof(PacketBody) <= offsetof(hsa_ext_amd_aql_pm4_packet_t, completion_signal));

struct CommandHeader {  // at the start of the command buffer
  uint32_t magic;  // kCommandMagic
  uint32_t event_count;
  uint32_t state;
  uint32_t reserved;
  uint64_t start_ticks;
  uint64_t start_busy_ticks;
  uint64_t start_waves;
  uint64_t start_cp_busy_ticks;
  uint64_t unused[2];
};
static_assert(sizeof(CommandHeader) == 64);
struct CommandEvent {  // event_count of them after the header
  uint32_t block_name;
  uint32_t block_index;
  uint32_t counter_id;
  uint32_t reserved;
};

struct OutputHeader {  // at the start of the output buffer, then one uint64_t per event
  uint64_t complete;  // 1 once a stop (or read) packet wrote the values
};

uint32_t commandBytes(uint32_t events) { return uint32_t(sizeof(CommandHeader) + events * sizeof(CommandEvent)); }
uint32_t outputBytes(uint32_t events) { return uint32_t(sizeof(OutputHeader) + events * sizeof(uint64_t)); }

thread_local std::string t_error = "no error";

hsa_status_t fail(hsa_status_t status, std::string message) {
  t_error = std::move(message);
  return status;
}

// --- The extension's functions ----------------------------------------------

uint32_t versionMajor() { return HSA_AQLPROFILE_VERSION_MAJOR; }
uint32_t versionMinor() { return HSA_AQLPROFILE_VERSION_MINOR; }

hsa_status_t errorString(const char** str) {
  if (str == nullptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *str = t_error.c_str();
  return HSA_STATUS_SUCCESS;
}

hsa_status_t checkAgent(hsa_agent_t agent) {
  if (!isOpen()) return fail(HSA_STATUS_ERROR_NOT_INITIALIZED, "the HSA runtime is not initialized");
  const Agent* a = toAgent(agent);
  if (a == nullptr || !isGpu(a)) {
    return fail(HSA_STATUS_ERROR_INVALID_AGENT, "aqlprofile: the profile's agent is not the GPU agent");
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t validateEvent(hsa_agent_t agent, const hsa_ven_amd_aqlprofile_event_t* event, bool* result) {
  if (hsa_status_t s = checkAgent(agent); s != HSA_STATUS_SUCCESS) return s;
  if (event == nullptr || result == nullptr) {
    return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, "aqlprofile_validate_event: null event or result");
  }
  *result = findEvent(*event) != nullptr;
  return HSA_STATUS_SUCCESS;
}

// The checks every use of a profile shares; `buffers`: the command and output
// buffers must be there and large enough.
hsa_status_t checkProfile(const hsa_ven_amd_aqlprofile_profile_t* profile, const char* fn, bool buffers) {
  if (profile == nullptr) return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, std::string(fn) + ": null profile");
  if (hsa_status_t s = checkAgent(profile->agent); s != HSA_STATUS_SUCCESS) return s;
  if (profile->type != HSA_VEN_AMD_AQLPROFILE_EVENT_TYPE_PMC) {
    return fail(HSA_STATUS_ERROR, std::string(fn) + ": only PMC profiles are supported (no thread traces)");
  }
  if (profile->events == nullptr || profile->event_count == 0) {
    return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, std::string(fn) + ": the profile has no events");
  }
  for (uint32_t i = 0; i < profile->event_count; ++i) {
    const hsa_ven_amd_aqlprofile_event_t& e = profile->events[i];
    if (findEvent(e) == nullptr) {
      return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  std::string(fn) + ": event " + std::to_string(i) + " (block " + std::to_string(e.block_name) +
                      ", instance " + std::to_string(e.block_index) + ", counter " + std::to_string(e.counter_id) +
                      ") is not offered by the device");
    }
    uint32_t sameBlock = 0;
    for (uint32_t j = 0; j < profile->event_count; ++j) sameBlock += profile->events[j].block_name == e.block_name;
    if (sameBlock > blockCounters(e.block_name)) {
      return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  std::string(fn) + ": the profile has " + std::to_string(sameBlock) + " events of block " +
                      std::to_string(e.block_name) + ", which counts " + std::to_string(blockCounters(e.block_name)) +
                      " at once (HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS)");
    }
  }
  if (!buffers) return HSA_STATUS_SUCCESS;
  const uint32_t n = profile->event_count;
  if (profile->command_buffer.ptr == nullptr || profile->command_buffer.size < commandBytes(n)) {
    return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": the command buffer is null or smaller than " + std::to_string(commandBytes(n)) +
                    " bytes (HSA_VEN_AMD_AQLPROFILE_INFO_COMMAND_BUFFER_SIZE)");
  }
  if (profile->output_buffer.ptr == nullptr || profile->output_buffer.size < outputBytes(n)) {
    return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": the output buffer is null or smaller than " + std::to_string(outputBytes(n)) +
                    " bytes (HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA_SIZE)");
  }
  return HSA_STATUS_SUCCESS;
}

// Fills everything of the packet but its header and completion signal.
void fillPacket(const hsa_ven_amd_aqlprofile_profile_t& profile, Op op, hsa_ext_amd_aql_pm4_packet_t* packet) {
  PacketBody body{};
  std::memcpy(&body.header, &packet->header, sizeof body.header);
  body.format = kFormatPm4Ib;
  body.magic = kPacketMagic;
  body.op = op;
  body.event_count = profile.event_count;
  body.command_buffer = reinterpret_cast<uint64_t>(profile.command_buffer.ptr);
  body.output_buffer = reinterpret_cast<uint64_t>(profile.output_buffer.ptr);
  std::memset(packet->pm4_command, 0, sizeof packet->pm4_command);
  std::memcpy(reinterpret_cast<uint8_t*>(packet) + sizeof body.header,
              reinterpret_cast<const uint8_t*>(&body) + sizeof body.header, sizeof body - sizeof body.header);
}

hsa_status_t start(hsa_ven_amd_aqlprofile_profile_t* profile, hsa_ext_amd_aql_pm4_packet_t* packet) {
  if (hsa_status_t s = checkProfile(profile, "aqlprofile_start", true); s != HSA_STATUS_SUCCESS) return s;
  if (packet == nullptr) return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, "aqlprofile_start: null packet");
  // The command buffer carries the events, so the packets do not depend on
  // the caller's event array once they are made.
  auto* cmd = static_cast<uint8_t*>(profile->command_buffer.ptr);
  CommandHeader header{};
  header.magic = kCommandMagic;
  header.event_count = profile->event_count;
  header.state = kPrepared;
  std::memcpy(cmd, &header, sizeof header);
  for (uint32_t i = 0; i < profile->event_count; ++i) {
    const CommandEvent e{uint32_t(profile->events[i].block_name), profile->events[i].block_index,
                         profile->events[i].counter_id, 0};
    std::memcpy(cmd + sizeof header + i * sizeof e, &e, sizeof e);
  }
  std::memset(profile->output_buffer.ptr, 0, outputBytes(profile->event_count));
  fillPacket(*profile, kOpStart, packet);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t stopOrRead(const hsa_ven_amd_aqlprofile_profile_t* profile, hsa_ext_amd_aql_pm4_packet_t* packet,
                        Op op, const char* fn) {
  if (hsa_status_t s = checkProfile(profile, fn, true); s != HSA_STATUS_SUCCESS) return s;
  if (packet == nullptr) return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, std::string(fn) + ": null packet");
  CommandHeader header;
  std::memcpy(&header, profile->command_buffer.ptr, sizeof header);
  if (header.magic != kCommandMagic || header.event_count != profile->event_count) {
    return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT,
                std::string(fn) + ": the profile's command buffer was not prepared by aqlprofile_start");
  }
  fillPacket(*profile, op, packet);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t stop(const hsa_ven_amd_aqlprofile_profile_t* profile, hsa_ext_amd_aql_pm4_packet_t* packet) {
  return stopOrRead(profile, packet, kOpStop, "aqlprofile_stop");
}

hsa_status_t read(const hsa_ven_amd_aqlprofile_profile_t* profile, hsa_ext_amd_aql_pm4_packet_t* packet) {
  return stopOrRead(profile, packet, kOpRead, "aqlprofile_read");
}

hsa_status_t legacyGetPm4(const hsa_ext_amd_aql_pm4_packet_t*, void*) {
  return fail(HSA_STATUS_ERROR, "aqlprofile_legacy_get_pm4: the device is not a legacy (PM4-only) device");
}

hsa_status_t getInfo(const hsa_ven_amd_aqlprofile_profile_t* profile, hsa_ven_amd_aqlprofile_info_type_t attribute,
                     void* value) {
  if (value == nullptr) return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, "aqlprofile_get_info: null value");
  switch (attribute) {
    case HSA_VEN_AMD_AQLPROFILE_INFO_COMMAND_BUFFER_SIZE:
    case HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA_SIZE: {
      if (hsa_status_t s = checkProfile(profile, "aqlprofile_get_info", false); s != HSA_STATUS_SUCCESS) return s;
      const uint32_t n = profile->event_count;
      *static_cast<uint32_t*>(value) =
          attribute == HSA_VEN_AMD_AQLPROFILE_INFO_COMMAND_BUFFER_SIZE ? commandBytes(n) : outputBytes(n);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_COUNTERS: {
      // How many of the block's events one profile can count together: its
      // counter registers.
      if (profile == nullptr || profile->events == nullptr) {
        return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, "aqlprofile_get_info: BLOCK_COUNTERS needs a profile with an event");
      }
      const auto block = profile->events[0].block_name;
      if (blockCounters(block) == 0) {
        return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT,
                    "aqlprofile_get_info: block " + std::to_string(block) + " is not offered by the device");
      }
      *static_cast<uint32_t*>(value) = blockCounters(block);
      return HSA_STATUS_SUCCESS;
    }
    case HSA_VEN_AMD_AQLPROFILE_INFO_BLOCK_ID: {
      auto* query = static_cast<hsa_ven_amd_aqlprofile_id_query_t*>(value);
      if (query->name == nullptr) return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, "aqlprofile_get_info: null block name");
      const std::string name = query->name;
      if (name == "GRBM") {
        query->id = HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_GRBM;
      } else if (name == "SQ") {
        query->id = HSA_VEN_AMD_AQLPROFILE_BLOCK_NAME_SQ;
      } else {
        return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT,
                    "aqlprofile_get_info: block \"" + name + "\" is not offered by the device (GRBM, SQ)");
      }
      query->instance_count = 1;
      return HSA_STATUS_SUCCESS;
    }
    default:
      return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT,
                  "aqlprofile_get_info: attribute " + std::to_string(attribute) + " is not supported");
  }
}

hsa_status_t iterateData(const hsa_ven_amd_aqlprofile_profile_t* profile,
                         hsa_ven_amd_aqlprofile_data_callback_t callback, void* data) {
  if (hsa_status_t s = checkProfile(profile, "aqlprofile_iterate_data", true); s != HSA_STATUS_SUCCESS) return s;
  if (callback == nullptr) return fail(HSA_STATUS_ERROR_INVALID_ARGUMENT, "aqlprofile_iterate_data: null callback");
  const auto* out = static_cast<const uint8_t*>(profile->output_buffer.ptr);
  // __atomic: the packet processor writes the flag last, with release.
  if (__atomic_load_n(reinterpret_cast<const uint64_t*>(out), __ATOMIC_ACQUIRE) != 1) {
    return fail(HSA_STATUS_ERROR,
                "aqlprofile_iterate_data: no results yet: the profile's stop (or read) packet has not completed");
  }
  for (uint32_t i = 0; i < profile->event_count; ++i) {
    hsa_ven_amd_aqlprofile_info_data_t info{};
    info.sample_id = 0;  // the block instance: each block has one
    info.pmc_data.event = profile->events[i];
    std::memcpy(&info.pmc_data.result, out + sizeof(OutputHeader) + i * sizeof(uint64_t), sizeof(uint64_t));
    if (hsa_status_t s = callback(HSA_VEN_AMD_AQLPROFILE_INFO_PMC_DATA, &info, data); s != HSA_STATUS_SUCCESS) {
      return s;
    }
  }
  return HSA_STATUS_SUCCESS;
}

const hsa_ven_amd_aqlprofile_1_00_pfn_t kTable = {
    versionMajor, versionMinor, errorString, validateEvent, start, stop, read, legacyGetPm4, getInfo, iterateData,
};

}  // namespace

uint64_t dispatchWaves(const hsa_kernel_dispatch_packet_t& packet) {
  const uint32_t dims = (packet.setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) & 0x3;
  const uint64_t wg[3] = {packet.workgroup_size_x, dims > 1 ? packet.workgroup_size_y : 1u,
                          dims > 2 ? packet.workgroup_size_z : 1u};
  const uint64_t grid[3] = {packet.grid_size_x, dims > 1 ? packet.grid_size_y : 1u,
                            dims > 2 ? packet.grid_size_z : 1u};
  // Work-groups are full but at the grid's far edge in each dimension: sum
  // over the 8 kinds (full or partial per dimension) of count * waves each.
  uint64_t waves = 0;
  for (int kind = 0; kind < 8; ++kind) {
    uint64_t groups = 1, items = 1;
    for (int d = 0; d < 3; ++d) {
      const bool partial = (kind >> d) & 1;
      const uint64_t full = grid[d] / wg[d], rest = grid[d] % wg[d];
      groups *= partial ? (rest != 0 ? 1 : 0) : full;
      items *= partial ? rest : wg[d];
    }
    waves += groups * ((items + gpu::kWavefrontSize - 1) / gpu::kWavefrontSize);
  }
  return waves;
}

bool isProfilePacket(const AqlPacket& packet) {
  PacketBody body;
  std::memcpy(&body, packet.bytes, sizeof body);
  return body.format == kFormatPm4Ib && body.magic == kPacketMagic;
}

hsa_status_t runProfilePacket(const AqlPacket& packet, const QueueCounters& counters) {
  PacketBody body;
  std::memcpy(&body, packet.bytes, sizeof body);
  auto* cmd = reinterpret_cast<uint8_t*>(body.command_buffer);
  auto* out = reinterpret_cast<uint8_t*>(body.output_buffer);
  if (cmd == nullptr || out == nullptr) return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  CommandHeader header;
  std::memcpy(&header, cmd, sizeof header);
  if (header.magic != kCommandMagic || header.event_count != body.event_count) {
    return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  }
  const uint64_t now = clock::deviceTicks();
  if (body.op == kOpStart) {
    header.state = kStarted;
    header.start_ticks = now;
    header.start_busy_ticks = counters.busy_ticks;
    header.start_waves = counters.waves;
    header.start_cp_busy_ticks = counters.cp_busy_ticks;
    std::memcpy(cmd, &header, sizeof header);
    __atomic_store_n(reinterpret_cast<uint64_t*>(out), uint64_t(0), __ATOMIC_RELEASE);
    return HSA_STATUS_SUCCESS;
  }
  if (body.op != kOpStop && body.op != kOpRead) return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  // Counters stopped before they ran give nothing to read: a queue error.
  if (header.state != kStarted) return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  for (uint32_t i = 0; i < header.event_count; ++i) {
    CommandEvent ce;
    std::memcpy(&ce, cmd + sizeof header + i * sizeof ce, sizeof ce);
    const hsa_ven_amd_aqlprofile_event_t e{hsa_ven_amd_aqlprofile_block_name_t(ce.block_name), ce.block_index,
                                           ce.counter_id};
    const EventName* name = findEvent(e);
    if (name == nullptr) return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    uint64_t value = 0;
    switch (name->counter) {
      case Counter::GrbmCount: value = now - header.start_ticks; break;
      case Counter::GrbmGuiActive: value = counters.busy_ticks - header.start_busy_ticks; break;
      case Counter::GrbmCpBusy: value = counters.cp_busy_ticks - header.start_cp_busy_ticks; break;
      case Counter::SqWaves: value = counters.waves - header.start_waves; break;
    }
    std::memcpy(out + sizeof(OutputHeader) + i * sizeof value, &value, sizeof value);
  }
  if (body.op == kOpStop) {
    header.state = kStopped;
    std::memcpy(cmd, &header, sizeof header);
  }
  __atomic_store_n(reinterpret_cast<uint64_t*>(out), uint64_t(1), __ATOMIC_RELEASE);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_get_major_extension_table(uint16_t extension, uint16_t version_major, size_t table_length,
                                                  void* table) {
  SIM_OPEN();
  SIM_NOT_NULL(table);
  // As ROCr: the extensions it knows but this runtime does not provide give
  // HSA_STATUS_ERROR, others are invalid arguments.
  if (extension == HSA_EXTENSION_AMD_AQLPROFILE) {
    SIM_CHECK(version_major == hsa_ven_amd_aqlprofile_VERSION_MAJOR, HSA_STATUS_ERROR);
    std::memcpy(table, &kTable, std::min(table_length, sizeof kTable));
    return HSA_STATUS_SUCCESS;
  }
  SIM_CHECK(extension <= HSA_EXTENSION_STD_LAST ||
                (extension >= HSA_AMD_FIRST_EXTENSION && extension <= HSA_EXTENSION_AMD_AQLPROFILE),
            HSA_STATUS_ERROR_INVALID_ARGUMENT);
  return HSA_STATUS_ERROR;
}

}  // namespace sim_hsa
