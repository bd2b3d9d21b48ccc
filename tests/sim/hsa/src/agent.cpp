// Agents, instruction set architectures, caches, wavefronts and extension
// queries.
#include "agent.h"

#include "api.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace sim_hsa {

namespace {

Agent g_cpu{HSA_DEVICE_TYPE_CPU, 0};
Agent g_gpu{HSA_DEVICE_TYPE_GPU, 1};

// The GPU's one ISA. Its name says what the "device code" really is: host
// code of this machine, which is what code objects for it must contain.
struct Isa {
  const char* name;
};
#if defined(__x86_64__)
const Isa g_isa{"gtap-sim-host-x86_64"};
#elif defined(__aarch64__)
const Isa g_isa{"gtap-sim-host-aarch64"};
#else
#error "the simulated HSA runtime needs to name the host architecture"
#endif

struct Wavefront {
  uint32_t size;
};
const Wavefront g_wavefront{gpu::kWavefrontSize};

struct Cache {
  const char* name;
  uint8_t level;
  uint32_t size;
};
const Cache g_gpuCaches[] = {{"L1", 1, 16 * 1024}, {"L2", 2, 4 * 1024 * 1024}};

// Write-only sinks for the HDP flush registers a real GPU maps into the
// process: programs that write them must not crash.
uint32_t g_hdpSink[2];

const Isa* toIsa(hsa_isa_t isa) { return isa.handle == reinterpret_cast<uint64_t>(&g_isa) ? &g_isa : nullptr; }
const Cache* toCache(hsa_cache_t cache) {
  for (const Cache& c : g_gpuCaches) {
    if (cache.handle == reinterpret_cast<uint64_t>(&c)) return &c;
  }
  return nullptr;
}

void copyName(void* value, const char* text, size_t capacity) {
  std::memset(value, 0, capacity);
  std::memcpy(value, text, std::min(std::strlen(text), capacity - 1));
}

uint32_t cpuCores() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? uint32_t(n) : 1;
}

void setBit(uint8_t* mask, uint32_t bit) { mask[bit / 8] |= uint8_t(1u << (bit % 8)); }

// The extensions the runtime offers: HSA_EXTENSION_AMD_PROFILER
// (hsa_amd_profiling_*, no function table) and HSA_EXTENSION_AMD_AQLPROFILE
// (its table from hsa_system_get_major_extension_table, aqlprofile.cpp).
bool supportsExtension(uint16_t extension, uint16_t major) {
  return (extension == HSA_EXTENSION_AMD_PROFILER || extension == HSA_EXTENSION_AMD_AQLPROFILE) && major == 1;
}

}  // namespace

Agent& cpuAgent() { return g_cpu; }
Agent& gpuAgent() { return g_gpu; }

Agent* toAgent(hsa_agent_t handle) {
  if (handle.handle == reinterpret_cast<uint64_t>(&g_cpu)) return &g_cpu;
  if (handle.handle == reinterpret_cast<uint64_t>(&g_gpu)) return &g_gpu;
  return nullptr;
}

hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void* data), void* data) {
  SIM_OPEN();
  SIM_NOT_NULL(callback);
  for (Agent* a : {&g_cpu, &g_gpu}) {
    hsa_status_t r = callback(toHandle(a), data);
    if (r != HSA_STATUS_SUCCESS) return r;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void* value) {
  SIM_OPEN();
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_NOT_NULL(value);
  const bool isGpuAgent = isGpu(a);
  // Kernel-agent attributes read 0 on the CPU, as in ROCr.
  auto kernel = [&](uint32_t v) { return isGpuAgent ? v : 0u; };
  switch (uint32_t(attribute)) {
    case HSA_AGENT_INFO_NAME:
      copyName(value, isGpuAgent ? gpu::kName : "gtap-sim-cpu", 64);
      break;
    case HSA_AGENT_INFO_VENDOR_NAME:
      copyName(value, isGpuAgent ? "gtap" : "CPU", 64);
      break;
    case HSA_AGENT_INFO_FEATURE:
      *static_cast<hsa_agent_feature_t*>(value) =
          isGpuAgent ? HSA_AGENT_FEATURE_KERNEL_DISPATCH : hsa_agent_feature_t(0);
      break;
    case HSA_AGENT_INFO_MACHINE_MODEL:
      *static_cast<hsa_machine_model_t*>(value) = HSA_MACHINE_MODEL_LARGE;
      break;
    case HSA_AGENT_INFO_PROFILE:
      *static_cast<hsa_profile_t*>(value) = isGpuAgent ? HSA_PROFILE_BASE : HSA_PROFILE_FULL;
      break;
    case HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
      *static_cast<hsa_default_float_rounding_mode_t*>(value) = HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR;
      break;
    case HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES:
      *static_cast<uint32_t*>(value) = HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO | HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR;
      break;
    case HSA_AGENT_INFO_FAST_F16_OPERATION:
      *static_cast<bool*>(value) = false;
      break;
    case HSA_AGENT_INFO_WAVEFRONT_SIZE:
      *static_cast<uint32_t*>(value) = kernel(gpu::kWavefrontSize);
      break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_DIM: {
      auto* dims = static_cast<uint16_t*>(value);
      dims[0] = dims[1] = dims[2] = uint16_t(kernel(gpu::kWorkgroupMaxSize));
      break;
    }
    case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
      *static_cast<uint32_t*>(value) = kernel(gpu::kWorkgroupMaxSize);
      break;
    case HSA_AGENT_INFO_GRID_MAX_DIM:
      *static_cast<hsa_dim3_t*>(value) = {kernel(UINT32_MAX), kernel(UINT32_MAX), kernel(UINT32_MAX)};
      break;
    case HSA_AGENT_INFO_GRID_MAX_SIZE:
      *static_cast<uint32_t*>(value) = kernel(UINT32_MAX);
      break;
    case HSA_AGENT_INFO_FBARRIER_MAX_SIZE:
      *static_cast<uint32_t*>(value) = kernel(32);
      break;
    case HSA_AGENT_INFO_QUEUES_MAX:
      *static_cast<uint32_t*>(value) = kernel(gpu::kQueuesMax);
      break;
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
      *static_cast<uint32_t*>(value) = kernel(gpu::kQueueMinSize);
      break;
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
      *static_cast<uint32_t*>(value) = kernel(gpu::kQueueMaxSize);
      break;
    case HSA_AGENT_INFO_QUEUE_TYPE:
      *static_cast<hsa_queue_type32_t*>(value) = HSA_QUEUE_TYPE_MULTI;
      break;
    case HSA_AGENT_INFO_NODE:
      *static_cast<uint32_t*>(value) = a->node;
      break;
    case HSA_AGENT_INFO_DEVICE:
      *static_cast<hsa_device_type_t*>(value) = a->type;
      break;
    case HSA_AGENT_INFO_CACHE_SIZE: {
      auto* sizes = static_cast<uint32_t*>(value);
      std::memset(sizes, 0, 4 * sizeof(uint32_t));
      if (isGpuAgent) {
        for (const Cache& c : g_gpuCaches) sizes[c.level - 1] = c.size;
      }
      break;
    }
    case HSA_AGENT_INFO_ISA:
      static_cast<hsa_isa_t*>(value)->handle = isGpuAgent ? reinterpret_cast<uint64_t>(&g_isa) : 0;
      break;
    case HSA_AGENT_INFO_EXTENSIONS: {
      auto* mask = static_cast<uint8_t*>(value);
      std::memset(mask, 0, 128);
      if (isGpuAgent) setBit(mask, HSA_EXTENSION_AMD_PROFILER);
      if (isGpuAgent) setBit(mask, HSA_EXTENSION_AMD_AQLPROFILE);
      break;
    }
    case HSA_AGENT_INFO_VERSION_MAJOR:
      *static_cast<uint16_t*>(value) = 1;
      break;
    case HSA_AGENT_INFO_VERSION_MINOR:
      *static_cast<uint16_t*>(value) = 1;
      break;
    case HSA_AMD_AGENT_INFO_CHIP_ID:
      *static_cast<uint32_t*>(value) = isGpuAgent ? 0x5a02 : 0;  // made up on purpose
      break;
    case HSA_AMD_AGENT_INFO_CACHELINE_SIZE:
      *static_cast<uint32_t*>(value) = 64;
      break;
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
      *static_cast<uint32_t*>(value) = isGpuAgent ? gpu::kComputeUnits : cpuCores();
      break;
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:  // MHz
      *static_cast<uint32_t*>(value) = 1000;
      break;
    case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID:
      *static_cast<uint32_t*>(value) = a->node;
      break;
    case HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS:
    case HSA_AMD_AGENT_INFO_BDFID:
    case HSA_AMD_AGENT_INFO_DOMAIN:
    case HSA_AMD_AGENT_INFO_ASIC_REVISION:
      *static_cast<uint32_t*>(value) = 0;
      break;
    case HSA_AMD_AGENT_INFO_MEMORY_WIDTH:
      *static_cast<uint32_t*>(value) = kernel(64);
      break;
    case HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY:
      *static_cast<uint32_t*>(value) = kernel(1000);
      break;
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
      copyName(value, isGpuAgent ? gpu::kProductName : "gtap simulated host CPU", 64);
      break;
    case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU:
      *static_cast<uint32_t*>(value) = kernel(32);
      break;
    case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU:
      *static_cast<uint32_t*>(value) = kernel(4);
      break;
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES:
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE:
      *static_cast<uint32_t*>(value) = kernel(1);
      break;
    case HSA_AMD_AGENT_INFO_HDP_FLUSH:
      SIM_CHECK(isGpuAgent, HSA_STATUS_ERROR_INVALID_ARGUMENT);
      *static_cast<hsa_amd_hdp_flush_t*>(value) = {&g_hdpSink[0], &g_hdpSink[1]};
      break;
    case HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES:
      *static_cast<bool*>(value) = false;
      break;
    case HSA_AMD_AGENT_INFO_UUID:
      // "gtapsim1" in hex; the CPU has none, which ROCr spells "CPU-XX".
      copyName(value, isGpuAgent ? "GPU-6774617073696d31" : "CPU-XX", 21);
      break;
    case HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS:
      *static_cast<bool*>(value) = true;  // all its memory is host memory
      break;
    case HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT:
      *static_cast<uint32_t*>(value) = kernel(gpu::kComputeUnits);
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent, hsa_status_t (*callback)(hsa_isa_t isa, void* data),
                                    void* data) {
  SIM_OPEN();
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_NOT_NULL(callback);
  if (!isGpu(a)) return HSA_STATUS_SUCCESS;
  return callback(hsa_isa_t{reinterpret_cast<uint64_t>(&g_isa)}, data);
}

hsa_status_t hsa_agent_iterate_caches(hsa_agent_t agent, hsa_status_t (*callback)(hsa_cache_t cache, void* data),
                                      void* data) {
  SIM_OPEN();
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_NOT_NULL(callback);
  if (!isGpu(a)) return HSA_STATUS_SUCCESS;
  for (const Cache& c : g_gpuCaches) {
    hsa_status_t r = callback(hsa_cache_t{reinterpret_cast<uint64_t>(&c)}, data);
    if (r != HSA_STATUS_SUCCESS) return r;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_cache_get_info(hsa_cache_t cache, hsa_cache_info_t attribute, void* value) {
  SIM_OPEN();
  const Cache* c = toCache(cache);
  SIM_CHECK(c != nullptr, HSA_STATUS_ERROR_INVALID_CACHE);
  SIM_NOT_NULL(value);
  switch (attribute) {
    case HSA_CACHE_INFO_NAME_LENGTH:
      *static_cast<uint32_t*>(value) = uint32_t(std::strlen(c->name));
      break;
    case HSA_CACHE_INFO_NAME:
      std::memcpy(value, c->name, std::strlen(c->name));  // not NUL-terminated, as specified
      break;
    case HSA_CACHE_INFO_LEVEL:
      *static_cast<uint8_t*>(value) = c->level;
      break;
    case HSA_CACHE_INFO_SIZE:
      *static_cast<uint32_t*>(value) = c->size;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_from_name(const char* name, hsa_isa_t* isa) {
  SIM_OPEN();
  SIM_CHECK(name != nullptr && isa != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  SIM_CHECK(std::strcmp(name, g_isa.name) == 0, HSA_STATUS_ERROR_INVALID_ISA_NAME);
  isa->handle = reinterpret_cast<uint64_t>(&g_isa);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void* value) {
  SIM_OPEN();
  const Isa* i = toIsa(isa);
  SIM_CHECK(i != nullptr, HSA_STATUS_ERROR_INVALID_ISA);
  SIM_NOT_NULL(value);
  switch (attribute) {
    case HSA_ISA_INFO_NAME_LENGTH:
      *static_cast<uint32_t*>(value) = uint32_t(std::strlen(i->name));
      break;
    case HSA_ISA_INFO_NAME:
      std::memcpy(value, i->name, std::strlen(i->name));  // not NUL-terminated, as specified
      break;
    case HSA_ISA_INFO_MACHINE_MODELS: {
      auto* models = static_cast<bool*>(value);
      models[HSA_MACHINE_MODEL_SMALL] = false;
      models[HSA_MACHINE_MODEL_LARGE] = true;
      break;
    }
    case HSA_ISA_INFO_PROFILES: {
      auto* profiles = static_cast<bool*>(value);
      profiles[HSA_PROFILE_BASE] = true;
      profiles[HSA_PROFILE_FULL] = false;
      break;
    }
    case HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES:
    case HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: {
      auto* modes = static_cast<bool*>(value);
      modes[HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT] = false;
      modes[HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO] = true;
      modes[HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR] = true;
      break;
    }
    case HSA_ISA_INFO_FAST_F16_OPERATION:
      *static_cast<bool*>(value) = false;
      break;
    case HSA_ISA_INFO_WORKGROUP_MAX_DIM: {
      auto* dims = static_cast<uint16_t*>(value);
      dims[0] = dims[1] = dims[2] = uint16_t(gpu::kWorkgroupMaxSize);
      break;
    }
    case HSA_ISA_INFO_WORKGROUP_MAX_SIZE:
      *static_cast<uint32_t*>(value) = gpu::kWorkgroupMaxSize;
      break;
    case HSA_ISA_INFO_GRID_MAX_DIM:
      *static_cast<hsa_dim3_t*>(value) = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
      break;
    case HSA_ISA_INFO_GRID_MAX_SIZE:
      *static_cast<uint64_t*>(value) = UINT64_MAX;
      break;
    case HSA_ISA_INFO_FBARRIER_MAX_SIZE:
      *static_cast<uint32_t*>(value) = 32;
      break;
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

// The v1.0 form: call-convention attributes take an index (one convention).
hsa_status_t hsa_isa_get_info(hsa_isa_t isa, hsa_isa_info_t attribute, uint32_t index, void* value) {
  SIM_OPEN();
  SIM_CHECK(toIsa(isa) != nullptr, HSA_STATUS_ERROR_INVALID_ISA);
  SIM_NOT_NULL(value);
  switch (attribute) {
    case HSA_ISA_INFO_CALL_CONVENTION_COUNT:
      *static_cast<uint32_t*>(value) = 1;
      return HSA_STATUS_SUCCESS;
    case HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE:
      SIM_CHECK(index == 0, HSA_STATUS_ERROR_INVALID_INDEX);
      *static_cast<uint32_t*>(value) = gpu::kWavefrontSize;
      return HSA_STATUS_SUCCESS;
    case HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT:
      SIM_CHECK(index == 0, HSA_STATUS_ERROR_INVALID_INDEX);
      *static_cast<uint32_t*>(value) = 32;
      return HSA_STATUS_SUCCESS;
    default:
      return sim_hsa::hsa_isa_get_info_alt(isa, attribute, value);
  }
}

hsa_status_t hsa_isa_compatible(hsa_isa_t code_object_isa, hsa_isa_t agent_isa, bool* result) {
  SIM_OPEN();
  SIM_CHECK(toIsa(code_object_isa) != nullptr && toIsa(agent_isa) != nullptr, HSA_STATUS_ERROR_INVALID_ISA);
  SIM_NOT_NULL(result);
  *result = true;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_get_round_method(hsa_isa_t isa, hsa_fp_type_t fp_type, hsa_flush_mode_t flush_mode,
                                      hsa_round_method_t* round_method) {
  SIM_OPEN();
  SIM_CHECK(toIsa(isa) != nullptr, HSA_STATUS_ERROR_INVALID_ISA);
  SIM_NOT_NULL(round_method);
  *round_method = HSA_ROUND_METHOD_SINGLE;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_iterate_wavefronts(hsa_isa_t isa, hsa_status_t (*callback)(hsa_wavefront_t wavefront, void* data),
                                        void* data) {
  SIM_OPEN();
  SIM_CHECK(toIsa(isa) != nullptr, HSA_STATUS_ERROR_INVALID_ISA);
  SIM_NOT_NULL(callback);
  return callback(hsa_wavefront_t{reinterpret_cast<uint64_t>(&g_wavefront)}, data);
}

hsa_status_t hsa_wavefront_get_info(hsa_wavefront_t wavefront, hsa_wavefront_info_t attribute, void* value) {
  SIM_OPEN();
  SIM_CHECK(wavefront.handle == reinterpret_cast<uint64_t>(&g_wavefront), HSA_STATUS_ERROR_INVALID_WAVEFRONT);
  SIM_NOT_NULL(value);
  SIM_CHECK(attribute == HSA_WAVEFRONT_INFO_SIZE, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  *static_cast<uint32_t*>(value) = g_wavefront.size;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_extension_supported(uint16_t extension, uint16_t version_major, uint16_t version_minor,
                                            bool* result) {
  SIM_OPEN();
  SIM_NOT_NULL(result);
  *result = supportsExtension(extension, version_major) && version_minor == 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_major_extension_supported(uint16_t extension, uint16_t version_major,
                                                  uint16_t* version_minor, bool* result) {
  SIM_OPEN();
  SIM_CHECK(version_minor != nullptr && result != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  *result = supportsExtension(extension, version_major);
  if (*result) *version_minor = 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_extension_supported(uint16_t extension, hsa_agent_t agent, uint16_t version_major,
                                           uint16_t version_minor, bool* result) {
  SIM_OPEN();
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_NOT_NULL(result);
  *result = isGpu(a) && supportsExtension(extension, version_major) && version_minor == 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_major_extension_supported(uint16_t extension, hsa_agent_t agent, uint16_t version_major,
                                                 uint16_t* version_minor, bool* result) {
  SIM_OPEN();
  Agent* a = toAgent(agent);
  SIM_CHECK(a != nullptr, HSA_STATUS_ERROR_INVALID_AGENT);
  SIM_CHECK(version_minor != nullptr && result != nullptr, HSA_STATUS_ERROR_INVALID_ARGUMENT);
  *result = isGpu(a) && supportsExtension(extension, version_major);
  if (*result) *version_minor = 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_extension_get_name(uint16_t extension, const char** name) {
  SIM_OPEN();
  SIM_NOT_NULL(name);
  switch (extension) {
    case HSA_EXTENSION_FINALIZER: *name = "HSA_EXTENSION_FINALIZER"; break;
    case HSA_EXTENSION_IMAGES: *name = "HSA_EXTENSION_IMAGES"; break;
    case HSA_EXTENSION_PERFORMANCE_COUNTERS: *name = "HSA_EXTENSION_PERFORMANCE_COUNTERS"; break;
    case HSA_EXTENSION_PROFILING_EVENTS: *name = "HSA_EXTENSION_PROFILING_EVENTS"; break;
    case HSA_EXTENSION_AMD_PROFILER: *name = "HSA_EXTENSION_AMD_PROFILER"; break;
    case HSA_EXTENSION_AMD_LOADER: *name = "HSA_EXTENSION_AMD_LOADER"; break;
    case HSA_EXTENSION_AMD_AQLPROFILE: *name = "HSA_EXTENSION_AMD_AQLPROFILE"; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

}  // namespace sim_hsa
