// Command lists. A regular list records commands until it is closed and is
// then executed by queues, any number of times. An immediate list hands each
// command to its own worker as it is appended (asynchronously unless it was
// created with ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS).
#include "api.h"
#include "commands.h"
#include "engine.h"
#include "metric_query.h"

#include <cstring>

namespace sim {

CommandList::CommandList() : Object(kKind) {}
CommandList::~CommandList() = default;

namespace {

// The trailing (hSignalEvent, numWaitEvents, phWaitEvents) of most appends.
ze_result_t resolveEvents(ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents,
                          Command& c) {
  SIM_CHECK(!(phWaitEvents == nullptr && numWaitEvents > 0), ZE_RESULT_ERROR_INVALID_SIZE);
  if (hSignalEvent != nullptr) {
    if (ze_result_t r = lookup(hSignalEvent, c.signal); r != ZE_RESULT_SUCCESS) return r;
  }
  c.waits.reserve(numWaitEvents);
  for (uint32_t i = 0; i < numWaitEvents; ++i) {
    std::shared_ptr<Event> e;
    if (ze_result_t r = lookup(phWaitEvents[i], e); r != ZE_RESULT_SUCCESS) return r;
    c.waits.push_back(std::move(e));
  }
  return ZE_RESULT_SUCCESS;
}

// Records the command (regular list) or runs it (immediate list).
ze_result_t append(CommandList& list, Command&& c) {
  if (c.signal && c.signal->pool->counterBased) {
    // Counter-based events: in-order lists only, of the kind the pool was made for.
    SIM_CHECK(list.inOrder, ZE_RESULT_ERROR_INVALID_ARGUMENT);
#ifdef GTAP_SIM_HAS_COUNTER_BASED_EVENTS
    uint32_t needed = list.immediate ? ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_IMMEDIATE
                                     : ZE_EVENT_POOL_COUNTER_BASED_EXP_FLAG_NON_IMMEDIATE;
    SIM_CHECK(c.signal->pool->counterBased & needed, ZE_RESULT_ERROR_INVALID_ARGUMENT);
#endif
  }
  if (list.immediate) {
    auto stream = std::make_shared<CommandStream>();
    stream->push_back(std::move(c));
    uint64_t seq = list.engine->submit({std::move(stream)}, nullptr);
    if (list.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) return list.engine->wait(seq, UINT64_MAX);
    return ZE_RESULT_SUCCESS;
  }
  std::lock_guard lock(list.mutex);
  SIM_CHECK(!list.closed, ZE_RESULT_ERROR_INVALID_ARGUMENT);  // closed lists are read-only until reset
  list.stream->push_back(std::move(c));
  return ZE_RESULT_SUCCESS;
}

bool overlaps(const uint8_t* a, size_t an, const uint8_t* b, size_t bn) { return a < b + bn && b < a + an; }

// Byte span touched by a region copy, for the overlap check.
size_t regionSpan(const ze_copy_region_t& r, uint32_t pitch, uint32_t slicePitch) {
  if (r.width == 0 || r.height == 0 || r.depth == 0) return 0;
  return size_t(r.depth - 1) * slicePitch + size_t(r.height - 1) * pitch + r.width;
}

size_t regionStart(const ze_copy_region_t& r, uint32_t pitch, uint32_t slicePitch) {
  return size_t(r.originZ) * slicePitch + size_t(r.originY) * pitch + r.originX;
}

ze_result_t appendLaunch(ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
                         const ze_group_count_t* groups, bool indirect, ze_event_handle_t hSignalEvent,
                         uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_LOOKUP(kernel, Kernel, hKernel);
  SIM_NOT_NULL(groups);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  SIM_CHECK(groupCanCompute(list->ordinal), ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
  std::shared_ptr<LaunchState> launch;
  if (ze_result_t r = kernel->snapshot(launch); r != ZE_RESULT_SUCCESS) return r;
  c.launches.push_back(std::move(launch));
  if (indirect) {
    c.op = Op::LaunchIndirect;
    c.groupsPtr = groups;
  } else {
    c.op = Op::Launch;
    c.groups = *groups;
  }
  return append(*list, std::move(c));
}

}  // namespace

ze_result_t zeCommandListCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                const ze_command_list_desc_t* desc, ze_command_list_handle_t* phCommandList) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(desc);
  SIM_NOT_NULL(phCommandList);
#ifdef GTAP_SIM_HAS_COUNTER_BASED_EVENTS
  SIM_CHECK(desc->flags <= 0xf, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  // "Cannot be combined with ZE_COMMAND_LIST_FLAG_RELAXED_ORDERING."
  SIM_CHECK(!((desc->flags & ZE_COMMAND_LIST_FLAG_IN_ORDER) && (desc->flags & ZE_COMMAND_LIST_FLAG_RELAXED_ORDERING)),
            ZE_RESULT_ERROR_INVALID_ARGUMENT);
#else
  SIM_CHECK(desc->flags <= 0x7, ZE_RESULT_ERROR_INVALID_ENUMERATION);
#endif
  SIM_CHECK(desc->commandQueueGroupOrdinal < kNumQueueGroups, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  auto list = std::make_shared<CommandList>();
#ifdef GTAP_SIM_HAS_COUNTER_BASED_EVENTS
  list->inOrder = (desc->flags & ZE_COMMAND_LIST_FLAG_IN_ORDER) != 0;
#endif
  list->ordinal = desc->commandQueueGroupOrdinal;
  list->stream = std::make_shared<CommandStream>();
  registerObject(list);
  *phCommandList = toHandle<ze_command_list_handle_t>(list);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListCreateImmediate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                         const ze_command_queue_desc_t* altdesc,
                                         ze_command_list_handle_t* phCommandList) {
  SIM_LOOKUP(context, Context, hContext);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(altdesc);
  SIM_NOT_NULL(phCommandList);
  if (ze_result_t r = checkQueueDesc(altdesc); r != ZE_RESULT_SUCCESS) return r;
  auto list = std::make_shared<CommandList>();
  list->ordinal = altdesc->ordinal;
  list->immediate = true;
  list->mode = altdesc->mode;
#ifdef GTAP_SIM_HAS_COUNTER_BASED_EVENTS
  list->inOrder = (altdesc->flags & ZE_COMMAND_QUEUE_FLAG_IN_ORDER) != 0;
#endif
  list->engine = std::make_unique<Engine>(!groupCanCompute(list->ordinal));
  registerObject(list);
  *phCommandList = toHandle<ze_command_list_handle_t>(list);
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListDestroy(ze_command_list_handle_t hCommandList) {
  std::shared_ptr<CommandList> list;
  if (ze_result_t r = take(hCommandList, list); r != ZE_RESULT_SUCCESS) return r;
  if (list->engine) list->engine->shutdown();
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListClose(ze_command_list_handle_t hCommandList) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  if (list->immediate) return ZE_RESULT_SUCCESS;  // immediate lists are never closed
  std::lock_guard lock(list->mutex);
  list->closed = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t zeCommandListReset(ze_command_list_handle_t hCommandList) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  if (list->immediate) return list->engine->waitIdle(UINT64_MAX);
  std::lock_guard lock(list->mutex);
  // A new stream: executions still in flight keep reading the old one.
  list->stream = std::make_shared<CommandStream>();
  list->closed = false;
  return ZE_RESULT_SUCCESS;
}

#ifdef GTAP_SIM_ZE_HAVE_zeCommandListHostSynchronize
// Waits on the host until everything appended to an immediate list so far has
// finished (ZE_RESULT_NOT_READY when the timeout passes first); the spec allows
// it only on immediate lists.
ze_result_t zeCommandListHostSynchronize(ze_command_list_handle_t hCommandList, uint64_t timeout) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_CHECK(list->immediate, ZE_RESULT_ERROR_INVALID_ARGUMENT);
  return list->engine->waitIdle(timeout);
}
#endif

ze_result_t zeCommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t hCommandList, uint64_t* dstptr,
                                                    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                    ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(dstptr);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  c.op = Op::WriteTimestamp;
  c.dst = dstptr;
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t hCommandList, ze_event_handle_t hSignalEvent,
                                       uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  // Commands run strictly in order, so a barrier only has its events to honour.
  c.op = Op::Barrier;
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendMemoryRangesBarrier(ze_command_list_handle_t hCommandList, uint32_t,
                                                   const size_t* pRangeSizes, const void** pRanges,
                                                   ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                   ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(pRangeSizes);
  SIM_NOT_NULL(pRanges);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  c.op = Op::Barrier;
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t hCommandList, void* dstptr, const void* srcptr,
                                          size_t size, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                          ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(dstptr);
  SIM_NOT_NULL(srcptr);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  c.op = Op::Copy;
  c.dst = dstptr;
  c.src = srcptr;
  c.size = size;
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t hCommandList, void* ptr, const void* pattern,
                                          size_t pattern_size, size_t size, ze_event_handle_t hSignalEvent,
                                          uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(ptr);
  SIM_NOT_NULL(pattern);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  // "The pattern size must be a power-of-two and less than or equal to the
  // maxMemoryFillPatternSize" of the list's queue group.
  SIM_CHECK(pattern_size != 0 && (pattern_size & (pattern_size - 1)) == 0 &&
                pattern_size <= queueGroup(list->ordinal).maxFillPatternSize,
            ZE_RESULT_ERROR_INVALID_SIZE);
  c.op = Op::Fill;
  c.dst = ptr;
  c.size = size;
  c.pattern.assign(static_cast<const uint8_t*>(pattern), static_cast<const uint8_t*>(pattern) + pattern_size);
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendMemoryCopyRegion(ze_command_list_handle_t hCommandList, void* dstptr,
                                                const ze_copy_region_t* dstRegion, uint32_t dstPitch,
                                                uint32_t dstSlicePitch, const void* srcptr,
                                                const ze_copy_region_t* srcRegion, uint32_t srcPitch,
                                                uint32_t srcSlicePitch, ze_event_handle_t hSignalEvent,
                                                uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(dstptr);
  SIM_NOT_NULL(dstRegion);
  SIM_NOT_NULL(srcptr);
  SIM_NOT_NULL(srcRegion);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  SIM_CHECK(dstRegion->width == srcRegion->width && dstRegion->height == srcRegion->height &&
                dstRegion->depth == srcRegion->depth,
            ZE_RESULT_ERROR_INVALID_SIZE);
  auto* d = static_cast<const uint8_t*>(dstptr) + regionStart(*dstRegion, dstPitch, dstSlicePitch);
  auto* s = static_cast<const uint8_t*>(srcptr) + regionStart(*srcRegion, srcPitch, srcSlicePitch);
  SIM_CHECK(!overlaps(d, regionSpan(*dstRegion, dstPitch, dstSlicePitch), s,
                      regionSpan(*srcRegion, srcPitch, srcSlicePitch)),
            ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
  c.op = Op::CopyRegion;
  c.dst = dstptr;
  c.src = srcptr;
  c.dstRegion = *dstRegion;
  c.srcRegion = *srcRegion;
  c.dstPitch = dstPitch;
  c.dstSlicePitch = dstSlicePitch;
  c.srcPitch = srcPitch;
  c.srcSlicePitch = srcSlicePitch;
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendMemoryCopyFromContext(ze_command_list_handle_t hCommandList, void* dstptr,
                                                     ze_context_handle_t hContextSrc, const void* srcptr, size_t size,
                                                     ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                     ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_LOOKUP(source, Context, hContextSrc);
  SIM_NOT_NULL(dstptr);
  SIM_NOT_NULL(srcptr);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  c.op = Op::Copy;  // one address space for every context
  c.dst = dstptr;
  c.src = srcptr;
  c.size = size;
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendMemoryPrefetch(ze_command_list_handle_t hCommandList, const void* ptr, size_t) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(ptr);
  return ZE_RESULT_SUCCESS;  // a hint; the memory is already where the "device" reads it
}

ze_result_t zeCommandListAppendMemAdvise(ze_command_list_handle_t hCommandList, ze_device_handle_t hDevice,
                                         const void* ptr, size_t, ze_memory_advice_t advice) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_LOOKUP(device, Device, hDevice);
  SIM_NOT_NULL(ptr);
  SIM_CHECK(advice <= ZE_MEMORY_ADVICE_BIAS_UNCACHED, ZE_RESULT_ERROR_INVALID_ENUMERATION);
  return ZE_RESULT_SUCCESS;  // a hint, as the specification allows
}

ze_result_t zeCommandListAppendSignalEvent(ze_command_list_handle_t hCommandList, ze_event_handle_t hEvent) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_LOOKUP(event, Event, hEvent);
  Command c;
  c.op = Op::SignalEvent;
  c.signal = std::move(event);
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendWaitOnEvents(ze_command_list_handle_t hCommandList, uint32_t numEvents,
                                            ze_event_handle_t* phEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(phEvents);
  Command c;
  if (ze_result_t r = resolveEvents(nullptr, numEvents, phEvents, c); r != ZE_RESULT_SUCCESS) return r;
  c.op = Op::WaitEvents;
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendEventReset(ze_command_list_handle_t hCommandList, ze_event_handle_t hEvent) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_LOOKUP(event, Event, hEvent);
  SIM_CHECK(!event->pool->counterBased, ZE_RESULT_ERROR_INVALID_ARGUMENT);  // never reset, only re-armed
  Command c;
  c.op = Op::ResetEvent;
  c.events.push_back(std::move(event));
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendQueryKernelTimestamps(ze_command_list_handle_t hCommandList, uint32_t numEvents,
                                                     ze_event_handle_t* phEvents, void* dstptr,
                                                     const size_t* pOffsets, ze_event_handle_t hSignalEvent,
                                                     uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(phEvents);
  SIM_NOT_NULL(dstptr);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  c.events.reserve(numEvents);
  for (uint32_t i = 0; i < numEvents; ++i) {
    std::shared_ptr<Event> e;
    if (ze_result_t r = lookup(phEvents[i], e); r != ZE_RESULT_SUCCESS) return r;
    SIM_CHECK(e->pool->timestamps(), ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
    c.events.push_back(std::move(e));
  }
  if (pOffsets != nullptr) c.offsets.assign(pOffsets, pOffsets + numEvents);
  c.op = Op::QueryTimestamps;
  c.dst = dstptr;
  return append(*list, std::move(c));
}

ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
                                            const ze_group_count_t* pLaunchFuncArgs, ze_event_handle_t hSignalEvent,
                                            uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  return appendLaunch(hCommandList, hKernel, pLaunchFuncArgs, false, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t zeCommandListAppendLaunchCooperativeKernel(ze_command_list_handle_t hCommandList,
                                                       ze_kernel_handle_t hKernel,
                                                       const ze_group_count_t* pLaunchFuncArgs,
                                                       ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                       ze_event_handle_t* phWaitEvents) {
  // Groups run one after another, so group-wide synchronisation across the
  // whole grid (the point of cooperative launches) cannot be honoured; the
  // launch itself runs like any other.
  return appendLaunch(hCommandList, hKernel, pLaunchFuncArgs, false, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t zeCommandListAppendLaunchKernelIndirect(ze_command_list_handle_t hCommandList,
                                                    ze_kernel_handle_t hKernel,
                                                    const ze_group_count_t* pLaunchArgumentsBuffer,
                                                    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                    ze_event_handle_t* phWaitEvents) {
  return appendLaunch(hCommandList, hKernel, pLaunchArgumentsBuffer, true, hSignalEvent, numWaitEvents,
                      phWaitEvents);
}

ze_result_t zeCommandListAppendLaunchMultipleKernelsIndirect(ze_command_list_handle_t hCommandList,
                                                             uint32_t numKernels, ze_kernel_handle_t* phKernels,
                                                             const uint32_t* pCountBuffer,
                                                             const ze_group_count_t* pLaunchArgumentsBuffer,
                                                             ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                             ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_NOT_NULL(phKernels);
  SIM_NOT_NULL(pCountBuffer);
  SIM_NOT_NULL(pLaunchArgumentsBuffer);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  SIM_CHECK(groupCanCompute(list->ordinal), ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
  for (uint32_t i = 0; i < numKernels; ++i) {
    SIM_LOOKUP(kernel, Kernel, phKernels[i]);
    std::shared_ptr<LaunchState> launch;
    if (ze_result_t r = kernel->snapshot(launch); r != ZE_RESULT_SUCCESS) return r;
    c.launches.push_back(std::move(launch));
  }
  c.op = Op::LaunchMultiIndirect;
  c.countPtr = pCountBuffer;
  c.groupsPtr = pLaunchArgumentsBuffer;
  return append(*list, std::move(c));
}

// Metric queries measure what the list's engine runs between begin and end;
// only engines that run kernels have anything to count.
ze_result_t zetCommandListAppendMetricQueryBegin(zet_command_list_handle_t hCommandList,
                                                 zet_metric_query_handle_t hMetricQuery) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_LOOKUP(query, MetricQuery, hMetricQuery);
  SIM_CHECK(groupCanCompute(list->ordinal), ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
  Command c;
  c.op = Op::MetricQueryBegin;
  c.query = std::move(query);
  return append(*list, std::move(c));
}

ze_result_t zetCommandListAppendMetricQueryEnd(zet_command_list_handle_t hCommandList,
                                               zet_metric_query_handle_t hMetricQuery, ze_event_handle_t hSignalEvent,
                                               uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
  SIM_LOOKUP(list, CommandList, hCommandList);
  SIM_LOOKUP(query, MetricQuery, hMetricQuery);
  Command c;
  if (ze_result_t r = resolveEvents(hSignalEvent, numWaitEvents, phWaitEvents, c); r != ZE_RESULT_SUCCESS) return r;
  SIM_CHECK(groupCanCompute(list->ordinal), ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
  c.op = Op::MetricQueryEnd;
  c.query = std::move(query);
  return append(*list, std::move(c));
}

}  // namespace sim
