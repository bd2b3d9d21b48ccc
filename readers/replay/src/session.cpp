#include "session.h"

#include "gtap/readers/replay_fields.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <tuple>

namespace gtap::replay {

namespace {

using O = readers::ReplayOp;
using readers::ReplayError;
using readers::ReplayRecord;

// Cleanup waits at most this long for work still queued: after a failure,
// some may wait on events that will never be signalled.
constexpr uint64_t kCleanupTimeoutNs = 10'000'000'000;

// One side of a copy region as recorded.
struct RegionSide {
  schema::Dim3::Reader origin, extent;
  uint64_t pitch = 0, slicePitch = 0;
  ze_copy_region_t box() const {
    return {static_cast<uint32_t>(origin.getX()), static_cast<uint32_t>(origin.getY()),
            static_cast<uint32_t>(origin.getZ()), static_cast<uint32_t>(extent.getX()),
            static_cast<uint32_t>(extent.getY()), static_cast<uint32_t>(extent.getZ())};
  }
};

// The bytes a copy region touches from its base address, or nullopt when a
// field does not fit the 32 bits the driver takes or the extent overflows.
std::optional<uint64_t> regionExtent(const RegionSide& side) {
  uint64_t x = side.origin.getX(), y = side.origin.getY(), z = side.origin.getZ();
  uint64_t w = side.extent.getX(), h = side.extent.getY(), d = side.extent.getZ();
  uint64_t pitch = side.pitch, slice = side.slicePitch;
  for (uint64_t v : {x, y, z, w, h, d, pitch, slice})
    if (v > UINT32_MAX) return std::nullopt;
  h = std::max<uint64_t>(h, 1);
  d = std::max<uint64_t>(d, 1);
  uint64_t depthBytes, rowBytes, extent;
  if (__builtin_mul_overflow(z + d - 1, slice, &depthBytes) || __builtin_mul_overflow(y + h - 1, pitch, &rowBytes) ||
      __builtin_add_overflow(depthBytes, rowBytes, &extent) || __builtin_add_overflow(extent, x + w, &extent))
    return std::nullopt;
  return extent;
}

}  // namespace

Session::Session(const ReplaySetup& setup, readers::ReplayResult& result)
    : setup_(setup), ze_(*setup.ze), result_(result) {}

Session::~Session() { cleanup(); }

const char* Session::kindName(Kind kind) {
  switch (kind) {
    case Kind::context: return "context";
    case Kind::allocation: return "allocation";
    case Kind::module: return "module";
    case Kind::kernel: return "kernel";
    case Kind::queue: return "command queue";
    case Kind::list: return "command list";
    case Kind::pool: return "event pool";
    case Kind::event: return "event";
    case Kind::fence: return "fence";
  }
  return "object";
}

void Session::check(const ReplayRecord& r, ze_result_t result, const char* function) {
  if (result != ZE_RESULT_SUCCESS)
    throw ReplayError(setup_.where(r) + ": " + function + " returned " + resultName(result));
}

template <class Handle>
Handle Session::get(const ReplayRecord& r, uint64_t id, Kind kind, const char* role, bool optional) {
  if (id == 0 && optional) return nullptr;
  auto it = objects_.find(id);
  if (it == objects_.end() || it->second.kind != kind)
    throw ReplayError(setup_.where(r) + ": " + role + " id " + std::to_string(id) + " is not a live " +
                      kindName(kind) +
                      (it == objects_.end() ? " (never created, or already destroyed)"
                                            : std::string(" (it is a ") + kindName(it->second.kind) + ")"));
  return static_cast<Handle>(it->second.handle);
}

ze_device_handle_t Session::device(const ReplayRecord& r, uint64_t id, bool optional) {
  if (id == 0 && optional) return nullptr;
  auto it = setup_.devices.byId.find(id);
  if (it == setup_.devices.byId.end())
    throw ReplayError(setup_.where(r) + ": device id " + std::to_string(id) + " has no device record");
  return it->second.device;
}

std::vector<ze_event_handle_t> Session::events(const ReplayRecord& r, capnp::List<uint64_t>::Reader ids) {
  std::vector<ze_event_handle_t> out;
  for (uint64_t id : ids) out.push_back(get<ze_event_handle_t>(r, id, Kind::event, "wait event"));
  return out;
}

uint8_t* Session::translate(const ReplayRecord& r, uint64_t address, uint64_t size, const char* role) {
  auto hit = addresses_.find(address);
  if (!hit) return nullptr;
  if (size > hit->range->size - hit->offset) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(address));
    throw ReplayError(setup_.where(r) + ": " + role + " " + buf + " + " + std::to_string(size) +
                      " bytes runs past the end of allocation " + std::to_string(hit->range->id) + " (" +
                      std::to_string(hit->range->size) + " bytes)");
  }
  return hit->replay();
}

void Session::perform(const ReplayRecord& r, size_t index) {
  const auto f = r.fields;
  // The object a destroy names, checked below before it is destroyed.
  uint64_t destroyed = 0;
  switch (r.op) {
    case O::DEVICE: return;  // mapped by prepare()
    case O::UNSUPPORTED:
      throw ReplayError(setup_.where(r) + ": " + setup_.capture->functionName(r.function) +
                        " cannot be replayed: " + f.getUnsupported().getReason().cStr());
    case O::CONTEXT_CREATE:
    case O::MEM_ALLOC:
    case O::MODULE_CREATE:
    case O::KERNEL_CREATE:
    case O::QUEUE_CREATE:
    case O::LIST_CREATE:
    case O::LIST_CREATE_IMMEDIATE:
    case O::EVENT_POOL_CREATE:
    case O::EVENT_CREATE:
    case O::FENCE_CREATE: return performCreate(r, index);
    case O::LAUNCH_KERNEL:
    case O::COPY:
    case O::COPY_REGION:
    case O::FILL:
    case O::BARRIER:
    case O::SIGNAL_EVENT:
    case O::WAIT_ON_EVENTS:
    case O::EVENT_RESET: return performAppend(r, index);
    case O::HOST_DATA: return performHostData(r, index);
    case O::READ_BACK: return performReadBack(r, index);
    case O::CONTEXT_DESTROY:
      destroyed = f.getContextDestroy().getContext();
      get<ze_context_handle_t>(r, destroyed, Kind::context, "context");
      break;
    case O::MEM_FREE:
      destroyed = f.getMemFree().getAllocation();
      get<void*>(r, destroyed, Kind::allocation, "allocation");
      break;
    case O::MODULE_DESTROY:
      destroyed = f.getModuleDestroy().getModule();
      get<ze_module_handle_t>(r, destroyed, Kind::module, "module");
      break;
    case O::KERNEL_DESTROY:
      destroyed = f.getKernelDestroy().getKernel();
      get<ze_kernel_handle_t>(r, destroyed, Kind::kernel, "kernel");
      break;
    case O::QUEUE_DESTROY:
      destroyed = f.getQueueDestroy().getQueue();
      get<ze_command_queue_handle_t>(r, destroyed, Kind::queue, "queue");
      break;
    case O::LIST_DESTROY:
      destroyed = f.getListDestroy().getList();
      get<ze_command_list_handle_t>(r, destroyed, Kind::list, "list");
      break;
    case O::EVENT_POOL_DESTROY:
      destroyed = f.getEventPoolDestroy().getPool();
      get<ze_event_pool_handle_t>(r, destroyed, Kind::pool, "pool");
      break;
    case O::EVENT_DESTROY:
      destroyed = f.getEventDestroy().getEvent();
      get<ze_event_handle_t>(r, destroyed, Kind::event, "event");
      break;
    case O::FENCE_DESTROY:
      destroyed = f.getFenceDestroy().getFence();
      get<ze_fence_handle_t>(r, destroyed, Kind::fence, "fence");
      break;
    case O::KERNEL_SET_GROUP_SIZE:
    {
      auto g = f.getKernelSetGroupSize();
      auto size = g.getGroupSize();
      check(r, ze_.zeKernelSetGroupSize(get<ze_kernel_handle_t>(r, g.getKernel(), Kind::kernel, "kernel"),
                                        static_cast<uint32_t>(size.getX()), static_cast<uint32_t>(size.getY()),
                                        static_cast<uint32_t>(size.getZ())),
            "zeKernelSetGroupSize");
      return;
    }
    case O::KERNEL_SET_ARGUMENT: {
      auto a = f.getKernelSetArgument();
      auto kernel = get<ze_kernel_handle_t>(r, a.getKernel(), Kind::kernel, "kernel");
      uint64_t size = a.getSize();
      bool hasValue = a.getHasValue() != 0;
      const Bytes& payload = setup_.payloads.of(index);
      std::vector<uint8_t> bytes;
      if (hasValue) {
        // Checked before anything is sized by it: the value's bytes are in the file.
        if (payload.size < size)
          throw ReplayError(setup_.where(r) + ": the argument is " + std::to_string(size) + " bytes, the payload " +
                            std::to_string(payload.size));
        bytes.assign(payload.data, payload.data + size);
        // Pointers, also inside by-value structs: aligned 8-byte words that
        // fall inside a live captured allocation.
        for (size_t at = 0; at + 8 <= size; at += 8) {
          uint64_t word;
          std::memcpy(&word, bytes.data() + at, 8);
          if (auto hit = addresses_.find(word)) {
            uint64_t replay = reinterpret_cast<uint64_t>(hit->replay());
            std::memcpy(bytes.data() + at, &replay, 8);
          }
        }
      }
      check(r, ze_.zeKernelSetArgumentValue(kernel, a.getIndex(), size,
                                            hasValue ? bytes.data() : nullptr),
            "zeKernelSetArgumentValue");
      return;
    }
    case O::KERNEL_SET_INDIRECT_ACCESS:
      check(r, ze_.zeKernelSetIndirectAccess(
                   get<ze_kernel_handle_t>(r, f.getKernelSetIndirectAccess().getKernel(), Kind::kernel, "kernel"),
                   static_cast<ze_kernel_indirect_access_flags_t>(f.getKernelSetIndirectAccess().getFlags())),
            "zeKernelSetIndirectAccess");
      return;
    case O::KERNEL_SET_GLOBAL_OFFSET: {
      if (!ze_.zeKernelSetGlobalOffsetExp)
        throw ReplayError(setup_.where(r) + ": the Level Zero loader has no zeKernelSetGlobalOffsetExp");
      auto g = f.getKernelSetGlobalOffset();
      auto offset = g.getOffset();
      check(r, ze_.zeKernelSetGlobalOffsetExp(get<ze_kernel_handle_t>(r, g.getKernel(), Kind::kernel, "kernel"),
                                              static_cast<uint32_t>(offset.getX()),
                                              static_cast<uint32_t>(offset.getY()),
                                              static_cast<uint32_t>(offset.getZ())),
            "zeKernelSetGlobalOffsetExp");
      return;
    }
    case O::LIST_CLOSE:
      check(r, ze_.zeCommandListClose(get<ze_command_list_handle_t>(r, f.getListClose().getList(), Kind::list, "list")),
            "zeCommandListClose");
      return;
    case O::LIST_RESET:
      check(r, ze_.zeCommandListReset(get<ze_command_list_handle_t>(r, f.getListReset().getList(), Kind::list, "list")),
            "zeCommandListReset");
      return;
    case O::EVENT_HOST_SIGNAL:
      check(r, ze_.zeEventHostSignal(get<ze_event_handle_t>(r, f.getEventHostSignal().getEvent(), Kind::event, "event")),
            "zeEventHostSignal");
      return;
    case O::EVENT_HOST_RESET:
      check(r, ze_.zeEventHostReset(get<ze_event_handle_t>(r, f.getEventHostReset().getEvent(), Kind::event, "event")),
            "zeEventHostReset");
      return;
    // The program's wait succeeded, so the work did finish: wait for it
    // whatever timeout it gave (a query that returned success included).
    case O::EVENT_HOST_SYNCHRONIZE:
    case O::EVENT_QUERY_STATUS: {
      uint64_t event = r.op == O::EVENT_QUERY_STATUS ? f.getEventQueryStatus().getEvent()
                                                     : f.getEventHostSynchronize().getEvent();
      check(r, ze_.zeEventHostSynchronize(get<ze_event_handle_t>(r, event, Kind::event, "event"), UINT64_MAX),
            "zeEventHostSynchronize");
      return;
    }
    case O::FENCE_HOST_SYNCHRONIZE:
    case O::FENCE_QUERY_STATUS: {
      uint64_t fence = r.op == O::FENCE_QUERY_STATUS ? f.getFenceQueryStatus().getFence()
                                                     : f.getFenceHostSynchronize().getFence();
      check(r, ze_.zeFenceHostSynchronize(get<ze_fence_handle_t>(r, fence, Kind::fence, "fence"), UINT64_MAX),
            "zeFenceHostSynchronize");
      return;
    }
    case O::FENCE_RESET:
      check(r, ze_.zeFenceReset(get<ze_fence_handle_t>(r, f.getFenceReset().getFence(), Kind::fence, "fence")),
            "zeFenceReset");
      return;
    case O::QUEUE_SYNCHRONIZE:
      check(r,
            ze_.zeCommandQueueSynchronize(
                get<ze_command_queue_handle_t>(r, f.getQueueSynchronize().getQueue(), Kind::queue, "queue"),
                UINT64_MAX),
            "zeCommandQueueSynchronize");
      return;
    case O::EXECUTE: {
      auto e = f.getExecute();
      auto queue = get<ze_command_queue_handle_t>(r, e.getQueue(), Kind::queue, "queue");
      auto fence = get<ze_fence_handle_t>(r, e.getFence(), Kind::fence, "fence", true);
      std::vector<ze_command_list_handle_t> lists;
      for (uint64_t id : e.getLists()) lists.push_back(get<ze_command_list_handle_t>(r, id, Kind::list, "list"));
      check(r, ze_.zeCommandQueueExecuteCommandLists(queue, static_cast<uint32_t>(lists.size()), lists.data(), fence),
            "zeCommandQueueExecuteCommandLists");
      return;
    }
    default:
      // An operation this replayer does not know (a newer or damaged file,
      // or one of formats 1.0-1.1 left positional) is never skipped.
      throw ReplayError(setup_.where(r) + ": unknown operation " + readers::replayOpName(r.op));
  }
  // Destroys: the object was checked above.
  switch (r.op) {
    case O::CONTEXT_DESTROY:
      if (auto it = syncEvents_.find(destroyed); it != syncEvents_.end()) {
        ze_.zeEventDestroy(it->second.event);
        ze_.zeEventPoolDestroy(it->second.pool);
        syncEvents_.erase(it);
      }
      check(r, ze_.zeContextDestroy(static_cast<ze_context_handle_t>(objects_[destroyed].handle)), "zeContextDestroy");
      break;
    case O::MEM_FREE: {
      const Live& a = objects_[destroyed];
      auto context = objects_.find(a.context);
      if (context == objects_.end())
        throw ReplayError(setup_.where(r) + ": allocation " + std::to_string(destroyed) + "'s context " +
                          std::to_string(a.context) + " is no longer live");
      check(r, ze_.zeMemFree(static_cast<ze_context_handle_t>(context->second.handle), a.handle), "zeMemFree");
      addresses_.remove(a.capturedAddress, destroyed);
      liveAllocationBytes_ -= a.size;
      break;
    }
    case O::MODULE_DESTROY:
      check(r, ze_.zeModuleDestroy(static_cast<ze_module_handle_t>(objects_[destroyed].handle)), "zeModuleDestroy");
      break;
    case O::KERNEL_DESTROY:
      check(r, ze_.zeKernelDestroy(static_cast<ze_kernel_handle_t>(objects_[destroyed].handle)), "zeKernelDestroy");
      break;
    case O::QUEUE_DESTROY:
      check(r, ze_.zeCommandQueueDestroy(static_cast<ze_command_queue_handle_t>(objects_[destroyed].handle)),
            "zeCommandQueueDestroy");
      break;
    case O::LIST_DESTROY:
      check(r, ze_.zeCommandListDestroy(static_cast<ze_command_list_handle_t>(objects_[destroyed].handle)),
            "zeCommandListDestroy");
      break;
    case O::EVENT_POOL_DESTROY:
      check(r, ze_.zeEventPoolDestroy(static_cast<ze_event_pool_handle_t>(objects_[destroyed].handle)),
            "zeEventPoolDestroy");
      break;
    case O::EVENT_DESTROY:
      check(r, ze_.zeEventDestroy(static_cast<ze_event_handle_t>(objects_[destroyed].handle)), "zeEventDestroy");
      break;
    case O::FENCE_DESTROY:
      check(r, ze_.zeFenceDestroy(static_cast<ze_fence_handle_t>(objects_[destroyed].handle)), "zeFenceDestroy");
      break;
    default: return;
  }
  objects_.erase(destroyed);
}

void Session::performCreate(const ReplayRecord& r, size_t index) {
  const auto f = r.fields;
  uint64_t made = readers::createdObject(r);
  if (made == 0 || objects_.count(made))
    throw ReplayError(setup_.where(r) + ": id " + std::to_string(made) +
                      (made ? " is already live" : " is not a valid id"));
  Live live{Kind::context};
  switch (r.op) {
    case O::CONTEXT_CREATE: {
      auto c = f.getContextCreate();
      std::vector<ze_device_handle_t> devices;
      ze_driver_handle_t driver = nullptr;
      for (uint64_t id : c.getDevices()) {
        devices.push_back(device(r, id));
        driver = driver ? driver : setup_.devices.byId.at(id).driver;
      }
      if (!driver) {
        // No device named: the driver of the first captured device.
        driver = setup_.devices.byId.empty() ? (setup_.devices.drivers.empty() ? nullptr : setup_.devices.drivers[0])
                                             : setup_.devices.byId.begin()->second.driver;
      }
      if (!driver) throw ReplayError(setup_.where(r) + ": no Level Zero driver to create the context on");
      ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, static_cast<ze_context_flags_t>(c.getFlags())};
      ze_context_handle_t context = nullptr;
      if (devices.empty()) check(r, ze_.zeContextCreate(driver, &desc, &context), "zeContextCreate");
      else
        check(r, ze_.zeContextCreateEx(driver, &desc, static_cast<uint32_t>(devices.size()), devices.data(), &context),
              "zeContextCreateEx");
      live = {Kind::context, context};
      live.driver = driver;
      break;
    }
    case O::MEM_ALLOC: {
      auto m = f.getMemAlloc();
      auto context = get<ze_context_handle_t>(r, m.getContext(), Kind::context, "context");
      auto dev = device(r, m.getDevice(), true);
      uint64_t kind = m.getKind(), size = m.getSize(), alignment = m.getAlignment();
      if (m.getAddress() == 0) throw ReplayError(setup_.where(r) + ": expected the captured address");
      ze_host_mem_alloc_desc_t host{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
      ze_device_mem_alloc_desc_t dmem{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
      void* ptr = nullptr;
      if (kind == 1) check(r, ze_.zeMemAllocHost(context, &host, size, alignment, &ptr), "zeMemAllocHost");
      else if (kind == 2) check(r, ze_.zeMemAllocDevice(context, &dmem, size, alignment, dev, &ptr), "zeMemAllocDevice");
      else if (kind == 3)
        check(r, ze_.zeMemAllocShared(context, &dmem, &host, size, alignment, dev, &ptr), "zeMemAllocShared");
      else throw ReplayError(setup_.where(r) + ": unknown allocation kind " + std::to_string(kind));
      live = {Kind::allocation, ptr, m.getContext()};
      live.capturedAddress = m.getAddress();
      live.size = size;
      live.memoryKind = kind;
      addresses_.add(m.getAddress(), {size, static_cast<uint8_t*>(ptr), made});
      liveAllocationBytes_ += size;
      break;
    }
    case O::MODULE_CREATE: {
      auto m = f.getModuleCreate();
      auto context = get<ze_context_handle_t>(r, m.getContext(), Kind::context, "context");
      auto dev = device(r, m.getDevice());
      auto sub = setup_.moduleBinaries.find(made);
      const Bytes& binary = sub != setup_.moduleBinaries.end() ? sub->second : setup_.payloads.of(index);
      if (!binary.data) throw ReplayError(setup_.where(r) + ": the module has no binary payload");
      ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, static_cast<ze_module_format_t>(m.getFormat()),
                            binary.size, binary.data, m.getBuildFlags().cStr(), nullptr};
      ze_module_handle_t module = nullptr;
      ze_module_build_log_handle_t log = nullptr;
      ze_result_t result = ze_.zeModuleCreate(context, dev, &desc, &module, &log);
      std::string logText;
      if (log) {
        size_t n = 0;
        if (result != ZE_RESULT_SUCCESS && ze_.zeModuleBuildLogGetString(log, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
          std::string text(n, '\0');
          if (ze_.zeModuleBuildLogGetString(log, &n, text.data()) == ZE_RESULT_SUCCESS)
            logText = text.c_str();
        }
        ze_.zeModuleBuildLogDestroy(log);
      }
      if (result != ZE_RESULT_SUCCESS)
        throw ReplayError(setup_.where(r) + ": zeModuleCreate returned " + resultName(result) +
                          (logText.empty() ? "" : "; build log: " + logText));
      live = {Kind::module, module, m.getContext()};
      break;
    }
    case O::KERNEL_CREATE: {
      auto k = f.getKernelCreate();
      auto module = get<ze_module_handle_t>(r, k.getModule(), Kind::module, "module");
      ze_kernel_desc_t desc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, static_cast<ze_kernel_flags_t>(k.getFlags()),
                            k.getName().cStr()};
      ze_kernel_handle_t kernel = nullptr;
      ze_result_t result = ze_.zeKernelCreate(module, &desc, &kernel);
      if (result != ZE_RESULT_SUCCESS)
        throw ReplayError(setup_.where(r) + ": zeKernelCreate(\"" + k.getName().cStr() + "\") returned " +
                          resultName(result));
      live = {Kind::kernel, kernel, objects_[k.getModule()].context};
      break;
    }
    case O::QUEUE_CREATE:
    case O::LIST_CREATE_IMMEDIATE: {
      // The two structs have the same fields: a queue's description.
      auto fill = [&](auto q) {
        return std::tuple{q.getContext(), q.getDevice(),
                          ze_command_queue_desc_t{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, q.getOrdinal(),
                                                  q.getIndex(), static_cast<ze_command_queue_flags_t>(q.getFlags()),
                                                  static_cast<ze_command_queue_mode_t>(q.getMode()),
                                                  static_cast<ze_command_queue_priority_t>(q.getPriority())}};
      };
      auto [contextId, deviceId, desc] =
          r.op == O::QUEUE_CREATE ? fill(f.getQueueCreate()) : fill(f.getListCreateImmediate());
      auto context = get<ze_context_handle_t>(r, contextId, Kind::context, "context");
      auto dev = device(r, deviceId);
      if (r.op == O::QUEUE_CREATE) {
        ze_command_queue_handle_t queue = nullptr;
        check(r, ze_.zeCommandQueueCreate(context, dev, &desc, &queue), "zeCommandQueueCreate");
        live = {Kind::queue, queue, contextId};
      } else {
        ze_command_list_handle_t list = nullptr;
        check(r, ze_.zeCommandListCreateImmediate(context, dev, &desc, &list), "zeCommandListCreateImmediate");
        live = {Kind::list, list, contextId};
        live.immediate = true;
      }
      break;
    }
    case O::LIST_CREATE: {
      auto l = f.getListCreate();
      auto context = get<ze_context_handle_t>(r, l.getContext(), Kind::context, "context");
      auto dev = device(r, l.getDevice());
      ze_command_list_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, l.getOrdinal(),
                                  static_cast<ze_command_list_flags_t>(l.getFlags())};
      ze_command_list_handle_t list = nullptr;
      check(r, ze_.zeCommandListCreate(context, dev, &desc, &list), "zeCommandListCreate");
      live = {Kind::list, list, l.getContext()};
      break;
    }
    case O::EVENT_POOL_CREATE: {
      auto p = f.getEventPoolCreate();
      auto context = get<ze_context_handle_t>(r, p.getContext(), Kind::context, "context");
      std::vector<ze_device_handle_t> devices;
      for (uint64_t id : p.getDevices()) devices.push_back(device(r, id));
      ze_event_pool_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr,
                                static_cast<ze_event_pool_flags_t>(p.getFlags()), p.getCount()};
      ze_event_pool_handle_t pool = nullptr;
      check(r,
            ze_.zeEventPoolCreate(context, &desc, static_cast<uint32_t>(devices.size()),
                                  devices.empty() ? nullptr : devices.data(), &pool),
            "zeEventPoolCreate");
      live = {Kind::pool, pool, p.getContext()};
      break;
    }
    case O::EVENT_CREATE: {
      auto e = f.getEventCreate();
      auto pool = get<ze_event_pool_handle_t>(r, e.getPool(), Kind::pool, "pool");
      ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, e.getIndex(),
                           static_cast<ze_event_scope_flags_t>(e.getSignalScope()),
                           static_cast<ze_event_scope_flags_t>(e.getWaitScope())};
      ze_event_handle_t event = nullptr;
      check(r, ze_.zeEventCreate(pool, &desc, &event), "zeEventCreate");
      live = {Kind::event, event, objects_[e.getPool()].context};
      break;
    }
    case O::FENCE_CREATE: {
      auto c = f.getFenceCreate();
      auto queue = get<ze_command_queue_handle_t>(r, c.getQueue(), Kind::queue, "queue");
      ze_fence_desc_t desc{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, static_cast<ze_fence_flags_t>(c.getFlags())};
      ze_fence_handle_t fence = nullptr;
      check(r, ze_.zeFenceCreate(queue, &desc, &fence), "zeFenceCreate");
      live = {Kind::fence, fence, objects_[c.getQueue()].context};
      break;
    }
    default: return;
  }
  objects_[made] = live;
  // Fresh host-visible memory starts as zeros, as the capture's page
  // comparison assumes for pages it never saw change.
  if (r.op == O::MEM_ALLOC && live.memoryKind != 2) std::memset(live.handle, 0, live.size);
}

void Session::performAppend(const ReplayRecord& r, size_t index) {
  const auto f = r.fields;
  switch (r.op) {
    case O::LAUNCH_KERNEL: {
      auto l = f.getLaunchKernel();
      auto list = get<ze_command_list_handle_t>(r, l.getList(), Kind::list, "list");
      auto kernel = get<ze_kernel_handle_t>(r, l.getKernel(), Kind::kernel, "kernel");
      auto signal = get<ze_event_handle_t>(r, l.getSignal(), Kind::event, "signal event", true);
      auto waits = events(r, l.getWaits());
      auto g = l.getGroups();
      ze_group_count_t groups{static_cast<uint32_t>(g.getX()), static_cast<uint32_t>(g.getY()),
                              static_cast<uint32_t>(g.getZ())};
      if (l.getCooperative())
        check(r,
              ze_.zeCommandListAppendLaunchCooperativeKernel(list, kernel, &groups, signal,
                                                             static_cast<uint32_t>(waits.size()), waits.data()),
              "zeCommandListAppendLaunchCooperativeKernel");
      else
        check(r,
              ze_.zeCommandListAppendLaunchKernel(list, kernel, &groups, signal, static_cast<uint32_t>(waits.size()),
                                                  waits.data()),
              "zeCommandListAppendLaunchKernel");
      ++result_.kernels;
      return;
    }
    case O::COPY:
    case O::COPY_REGION: {
      bool region = r.op == O::COPY_REGION;
      // The fields copy and copyRegion share (only the active member is read).
      auto common = [](auto c) { return std::tuple{c.getList(), c.getSignal(), c.getWaits(), c.getDst(), c.getSrc()}; };
      auto [listId, signalId, waitIds, dstAddress, srcAddress] = region ? common(f.getCopyRegion()) : common(f.getCopy());
      auto list = get<ze_command_list_handle_t>(r, listId, Kind::list, "list");
      auto signal = get<ze_event_handle_t>(r, signalId, Kind::event, "signal event", true);
      auto waits = events(r, waitIds);
      RegionSide dstSide, srcSide;
      std::optional<uint64_t> dstExtent, srcExtent;
      if (region) {
        auto c = f.getCopyRegion();
        dstSide = {c.getDstOrigin(), c.getDstExtent(), c.getDstPitch(), c.getDstSlicePitch()};
        srcSide = {c.getSrcOrigin(), c.getSrcExtent(), c.getSrcPitch(), c.getSrcSlicePitch()};
        dstExtent = regionExtent(dstSide);
        srcExtent = regionExtent(srcSide);
      } else {
        dstExtent = srcExtent = f.getCopy().getSize();
      }
      if (!dstExtent || !srcExtent)
        throw ReplayError(setup_.where(r) + ": a copy region field does not fit in 32 bits");
      uint64_t dstBytes = *dstExtent, srcBytes = *srcExtent;
      uint8_t* dst = translate(r, dstAddress, dstBytes, "destination");
      uint8_t* src = translate(r, srcAddress, srcBytes, "source");
      const Bytes& whole = setup_.payloads.of(index);
      // The replay's own buffers for ends outside every captured allocation
      // are bounded by what the file holds (the payload) or what the replay
      // already allocated for the program, never by a size field alone.
      uint64_t stagingLimit = std::max<uint64_t>(whole.size, liveAllocationBytes_);
      for (auto [end, bytes, name] : {std::tuple{dst, dstBytes, "destination"}, std::tuple{src, srcBytes, "source"}})
        if (!end && bytes > stagingLimit)
          throw ReplayError(setup_.where(r) + ": the copy's " + name + " of " + std::to_string(bytes) +
                            " bytes lies outside every live captured allocation and exceeds both its payload (" +
                            std::to_string(whole.size) + " bytes) and all live allocations together (" +
                            std::to_string(liveAllocationBytes_) + " bytes)");
      CopyBuffers& buffers = copies_[r.seq];
      if (!dst) {
        buffers.destination.assign(dstBytes, 0);
        dst = buffers.destination.data();
      }
      buffers.replayDestination = dst;
      buffers.destinationSize = dstBytes;
      if (!src && !region && whole.data && whole.size >= srcBytes) {
        // Ordinary host memory the payload holds whole: the device reads the
        // payload itself, which lives as long as the replay (no staging copy).
        src = const_cast<uint8_t*>(whole.data);
      } else if (!src) {
        buffers.source.assign(srcBytes, 0);
        // The payload holds the bytes from where the copy starts reading: a
        // region's first byte (origin z, y, x) rather than its base address.
        // (The sides fit 32 bits, checked above: no overflow.)
        uint64_t start = region ? srcSide.origin.getZ() * srcSide.slicePitch + srcSide.origin.getY() * srcSide.pitch +
                                      srcSide.origin.getX()
                                : 0;
        const Bytes& payload = setup_.payloads.of(index);
        if (payload.data && start < srcBytes)
          std::memcpy(buffers.source.data() + start, payload.data, std::min<uint64_t>(payload.size, srcBytes - start));
        src = buffers.source.data();
      }
      if (!region) {
        check(r,
              ze_.zeCommandListAppendMemoryCopy(list, dst, src, dstBytes, signal, static_cast<uint32_t>(waits.size()),
                                                waits.data()),
              "zeCommandListAppendMemoryCopy");
        return;
      }
      ze_copy_region_t dstRegion = dstSide.box(), srcRegion = srcSide.box();
      check(r,
            ze_.zeCommandListAppendMemoryCopyRegion(
                list, dst, &dstRegion, static_cast<uint32_t>(dstSide.pitch), static_cast<uint32_t>(dstSide.slicePitch),
                src, &srcRegion, static_cast<uint32_t>(srcSide.pitch), static_cast<uint32_t>(srcSide.slicePitch),
                signal, static_cast<uint32_t>(waits.size()), waits.data()),
            "zeCommandListAppendMemoryCopyRegion");
      return;
    }
    case O::FILL: {
      auto fill = f.getFill();
      auto list = get<ze_command_list_handle_t>(r, fill.getList(), Kind::list, "list");
      auto signal = get<ze_event_handle_t>(r, fill.getSignal(), Kind::event, "signal event", true);
      auto waits = events(r, fill.getWaits());
      uint8_t* dst = translate(r, fill.getDst(), fill.getSize(), "destination");
      if (!dst)
        throw ReplayError(setup_.where(r) + ": the fill's destination is outside every live captured allocation");
      const Bytes& pattern = setup_.payloads.of(index);
      if (!pattern.data || pattern.size == 0) throw ReplayError(setup_.where(r) + ": the fill has no pattern payload");
      check(r,
            ze_.zeCommandListAppendMemoryFill(list, dst, pattern.data, pattern.size, fill.getSize(), signal,
                                              static_cast<uint32_t>(waits.size()), waits.data()),
            "zeCommandListAppendMemoryFill");
      return;
    }
    case O::BARRIER: {
      auto b = f.getBarrier();
      auto list = get<ze_command_list_handle_t>(r, b.getList(), Kind::list, "list");
      auto signal = get<ze_event_handle_t>(r, b.getSignal(), Kind::event, "signal event", true);
      auto waits = events(r, b.getWaits());
      check(r, ze_.zeCommandListAppendBarrier(list, signal, static_cast<uint32_t>(waits.size()), waits.data()),
            "zeCommandListAppendBarrier");
      return;
    }
    case O::SIGNAL_EVENT:
    case O::EVENT_RESET: {
      auto e = r.op == O::SIGNAL_EVENT ? f.getSignalEvent() : f.getEventReset();
      auto list = get<ze_command_list_handle_t>(r, e.getList(), Kind::list, "list");
      auto event = get<ze_event_handle_t>(r, e.getEvent(), Kind::event, "event");
      if (r.op == O::SIGNAL_EVENT)
        check(r, ze_.zeCommandListAppendSignalEvent(list, event), "zeCommandListAppendSignalEvent");
      else
        check(r, ze_.zeCommandListAppendEventReset(list, event), "zeCommandListAppendEventReset");
      return;
    }
    case O::WAIT_ON_EVENTS: {
      auto w = f.getWaitOnEvents();
      auto list = get<ze_command_list_handle_t>(r, w.getList(), Kind::list, "list");
      auto waits = events(r, w.getEvents());
      check(r, ze_.zeCommandListAppendWaitOnEvents(list, static_cast<uint32_t>(waits.size()), waits.data()),
            "zeCommandListAppendWaitOnEvents");
      return;
    }
    default: return;
  }
}

void Session::performHostData(const ReplayRecord& r, size_t index) {
  const Bytes& payload = setup_.payloads.of(index);
  auto h = r.fields.getHostData();
  uint64_t offset = h.getOffset();
  uint8_t* base = nullptr;
  uint64_t size = 0;
  if (h.isAllocation()) {
    uint64_t id = h.getAllocation();
    auto it = objects_.find(id);
    if (it == objects_.end() || it->second.kind != Kind::allocation)
      throw ReplayError(setup_.where(r) + ": allocation id " + std::to_string(id) + " is not live");
    if (it->second.memoryKind == 2)
      throw ReplayError(setup_.where(r) + ": host data for device allocation " + std::to_string(id) +
                        ", which the host cannot write");
    base = static_cast<uint8_t*>(it->second.handle);
    size = it->second.size;
  } else {
    uint64_t seq = h.getCopy();
    auto it = copies_.find(seq);
    if (it == copies_.end() || it->second.source.empty())
      throw ReplayError(setup_.where(r) + ": copy seq " + std::to_string(seq) +
                        " has no source buffer of the replay's own (no such copy, or its source is an allocation)");
    base = it->second.source.data();
    size = it->second.source.size();
  }
  if (offset > size || payload.size > size - offset)
    throw ReplayError(setup_.where(r) + ": bytes " + std::to_string(offset) + "+" + std::to_string(payload.size) +
                      " lie outside the " + std::to_string(size) + "-byte target");
  if (payload.size) std::memcpy(base + offset, payload.data, payload.size);
}

void Session::performReadBack(const ReplayRecord& r, size_t index) {
  if (!setup_.options.verify) return;
  auto b = r.fields.getReadBack();
  uint64_t copySeq = b.getCopy();
  auto it = copies_.find(copySeq);
  if (it == copies_.end())
    throw ReplayError(setup_.where(r) + ": read-back of copy seq " + std::to_string(copySeq) +
                      ", which this replay has not performed");
  const Bytes& expected = setup_.payloads.of(index);
  uint64_t offset = b.getOffset();
  uint64_t size = it->second.destinationSize;
  if (offset > size || expected.size > size - offset)
    throw ReplayError(setup_.where(r) + ": read-back bytes " + std::to_string(offset) + "+" +
                      std::to_string(expected.size) + " lie outside copy seq " + std::to_string(copySeq) + "'s " +
                      std::to_string(size) + "-byte destination");
  const uint8_t* actual = it->second.replayDestination + offset;
  ++result_.readBacks;
  readers::ReadBackMismatch m{r.seq, copySeq, 0, 0, expected.size};
  m.offset = offset;
  for (uint64_t i = 0; i < expected.size; ++i) {
    if (actual[i] != expected.data[i]) {
      if (!m.differing) m.firstOffset = i;
      ++m.differing;
    }
  }
  if (m.differing) result_.mismatches.push_back(m);
}

void Session::synchronizeList(uint64_t listId, uint64_t timeoutNs) {
  const Live& list = objects_.at(listId);
  SyncEvent& sync = syncEvents_[list.context];
  auto context = static_cast<ze_context_handle_t>(objects_.at(list.context).handle);
  if (!sync.pool) {
    ze_event_pool_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_result_t r = ze_.zeEventPoolCreate(context, &desc, 0, nullptr, &sync.pool);
    if (r != ZE_RESULT_SUCCESS) throw ReplayError("zeEventPoolCreate (to wait for a list) returned " + resultName(r));
    ze_event_desc_t edesc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    r = ze_.zeEventCreate(sync.pool, &edesc, &sync.event);
    if (r != ZE_RESULT_SUCCESS) throw ReplayError("zeEventCreate (to wait for a list) returned " + resultName(r));
  }
  auto handle = static_cast<ze_command_list_handle_t>(list.handle);
  ze_result_t r = ze_.zeCommandListAppendBarrier(handle, sync.event, 0, nullptr);
  if (r == ZE_RESULT_SUCCESS) r = ze_.zeEventHostSynchronize(sync.event, timeoutNs);
  ze_.zeEventHostReset(sync.event);
  if (r != ZE_RESULT_SUCCESS)
    throw ReplayError("waiting for immediate list " + std::to_string(listId) + " returned " + resultName(r));
}

void Session::synchronizeAll() {
  for (const auto& [id, live] : objects_) {
    if (live.kind == Kind::queue) {
      ze_result_t r = ze_.zeCommandQueueSynchronize(static_cast<ze_command_queue_handle_t>(live.handle), UINT64_MAX);
      if (r != ZE_RESULT_SUCCESS)
        throw ReplayError("zeCommandQueueSynchronize on queue " + std::to_string(id) + " returned " + resultName(r));
    }
  }
  std::vector<uint64_t> immediate;
  for (const auto& [id, live] : objects_)
    if (live.kind == Kind::list && live.immediate) immediate.push_back(id);
  for (uint64_t id : immediate) synchronizeList(id, UINT64_MAX);
}

void Session::destroy(uint64_t id) {
  const Live& o = objects_.at(id);
  switch (o.kind) {
    case Kind::context: ze_.zeContextDestroy(static_cast<ze_context_handle_t>(o.handle)); break;
    case Kind::allocation: {
      auto ctx = objects_.find(o.context);
      if (ctx != objects_.end()) ze_.zeMemFree(static_cast<ze_context_handle_t>(ctx->second.handle), o.handle);
      break;
    }
    case Kind::module: ze_.zeModuleDestroy(static_cast<ze_module_handle_t>(o.handle)); break;
    case Kind::kernel: ze_.zeKernelDestroy(static_cast<ze_kernel_handle_t>(o.handle)); break;
    case Kind::queue: ze_.zeCommandQueueDestroy(static_cast<ze_command_queue_handle_t>(o.handle)); break;
    case Kind::list: ze_.zeCommandListDestroy(static_cast<ze_command_list_handle_t>(o.handle)); break;
    case Kind::pool: ze_.zeEventPoolDestroy(static_cast<ze_event_pool_handle_t>(o.handle)); break;
    case Kind::event: ze_.zeEventDestroy(static_cast<ze_event_handle_t>(o.handle)); break;
    case Kind::fence: ze_.zeFenceDestroy(static_cast<ze_fence_handle_t>(o.handle)); break;
  }
}

void Session::cleanup() noexcept {
  // Let queued work finish (bounded: after a failure some may never run),
  // then destroy users before what they use.
  for (const auto& [id, live] : objects_) {
    if (live.kind == Kind::queue)
      ze_.zeCommandQueueSynchronize(static_cast<ze_command_queue_handle_t>(live.handle), kCleanupTimeoutNs);
  }
  for (const auto& [id, live] : objects_) {
    if (live.kind != Kind::list || !live.immediate) continue;
    try {
      synchronizeList(id, kCleanupTimeoutNs);
    } catch (...) {
      // Destroying the list below is all that is left to do.
    }
  }
  for (auto& [context, sync] : syncEvents_) {
    if (sync.event) ze_.zeEventDestroy(sync.event);
    if (sync.pool) ze_.zeEventPoolDestroy(sync.pool);
  }
  syncEvents_.clear();
  for (Kind kind : {Kind::kernel, Kind::module, Kind::event, Kind::pool, Kind::fence, Kind::list, Kind::queue,
                    Kind::allocation, Kind::context}) {
    for (const auto& [id, live] : objects_)
      if (live.kind == kind) destroy(id);
  }
  objects_.clear();
  addresses_.clear();
  liveAllocationBytes_ = 0;
  copies_.clear();
}

}  // namespace gtap::replay
