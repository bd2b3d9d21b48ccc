// Appends of device work: each is timed by an event that carries kernel
// timestamps (the program's own when its pool has them, else one of gtap's)
// and recorded as an operation of its command list.
#include <level_zero/zet_api.h>

#include <algorithm>

#include "hook.h"

namespace gtap::ze {

namespace {

// `append(event)` makes the real append with the event to signal.
template <typename Append>
ze_result_t timedAppend(core::CallScope& scope, ze_command_list_handle_t list, ze_event_handle_t programEvent,
                        Op op, bool wanted, Append&& append) {
  // A launch that failed gives its dispatch number back (GTAP_DISPATCH_RANGE).
  auto untimed = [&] {
    ze_result_t r = append(programEvent);
    if (r != ZE_RESULT_SUCCESS) profiler().launchFailed(list, op);
    return r;
  };
  if (scope.nested() || !recordKernels()) return untimed();
  if (programEvent) profiler().programEventSignalling(list, programEvent);
  if (!wanted) return untimed();
  bool signalAfter = false, known = false;
  ze_event_handle_t event = profiler().eventForAppend(list, programEvent, signalAfter, known);
  if (!known) return append(programEvent);
  bool own = event != programEvent;
  // Taken before the call: on an immediate list the work may run inside it.
  op.appendTicks = core::nowTicks();
  core::testThrowPoint(core::TestSite::zeBeforeCall);
  ze_result_t r = append(event);
  core::testThrowPoint(core::TestSite::zeAfterCall);
  if (r != ZE_RESULT_SUCCESS) {
    profiler().appendFailed(list, event, own);
    profiler().launchFailed(list, op);
    return r;
  }
  if (signalAfter) {
    // The program's event is from a pool gtap could not give timestamps to:
    // it is signalled right after gtap's, in the list's order.
    ze_result_t s = GTAP_ZE_REAL(zeCommandListAppendSignalEvent)(list, programEvent);
    if (s != ZE_RESULT_SUCCESS) r = s;
  }
  profiler().appended(list, std::move(op), event, own, scope);
  return r;
}

// Replay's part of an append: `appending` before the real call, `done(append)`
// after it succeeded.
template <typename Call, typename Done>
ze_result_t replayedAppend(core::CallScope& scope, ze_command_list_handle_t list, bool launch, Call&& call,
                           Done&& done) {
  if (!replaying(scope)) return call();
  ReplayRecorder::Append a = replayRecorder().appending(scope, list, launch);
  ze_result_t r = call();
  if (r == ZE_RESULT_SUCCESS) done(a);
  return r;
}

using ROp = ReplayRecorder::Op;

// A launch GTAP_COUNTERS measures: a barrier, the query's begin, the launch,
// the query's end and a barrier, so that it runs alone between its query's
// commands. Through the real functions: none of it is the program's.
template <typename Launch>
ze_result_t measured(ze_command_list_handle_t list, void* query, Launch&& launch) {
  if (!query) return launch();
  auto q = static_cast<zet_metric_query_handle_t>(query);
  GTAP_ZE_REAL(zeCommandListAppendBarrier)(list, nullptr, 0, nullptr);
  bool begun = GTAP_ZE_REAL(zetCommandListAppendMetricQueryBegin)(list, q) == ZE_RESULT_SUCCESS;
  ze_result_t r = launch();
  if (r == ZE_RESULT_SUCCESS && begun) {
    GTAP_ZE_REAL(zetCommandListAppendMetricQueryEnd)(list, q, nullptr, 0, nullptr);
    GTAP_ZE_REAL(zeCommandListAppendBarrier)(list, nullptr, 0, nullptr);
  }
  return r;
}

Op kernelOp(ze_kernel_handle_t kernel, const ze_group_count_t* groups) {
  Op op;
  op.kind = OpKind::kernel;
  op.kernel = reinterpret_cast<uint64_t>(kernel);
  if (groups) op.groupCount = {groups->groupCountX, groups->groupCountY, groups->groupCountZ};
  return op;
}
}  // namespace

GTAP_ZE_HOOK(zeCommandListAppendLaunchKernel, ze_command_list_handle_t list, ze_kernel_handle_t kernel,
             const ze_group_count_t* groups, ze_event_handle_t signal, uint32_t numWait, ze_event_handle_t* waits) {
  return replayedAppend(
      scope, list, true,
      [&] {
        Op op = kernelOp(kernel, groups);
        bool wanted = !scope.nested() && profiler().launchStarting(list, kernel, op);
        void* query = wanted && recordKernels() ? profiler().queryForLaunch(list, op) : nullptr;
        return timedAppend(scope, list, signal, std::move(op), wanted, [&](ze_event_handle_t e) {
          return measured(list, query, [&] { return real(list, kernel, groups, e, numWait, waits); });
        });
      },
      [&](const ReplayRecorder::Append& a) {
        replayRecorder().launched(a, scope, list, kernel, groups, false, signal, numWait, waits);
      });
}

GTAP_ZE_HOOK(zeCommandListAppendLaunchCooperativeKernel, ze_command_list_handle_t list, ze_kernel_handle_t kernel,
             const ze_group_count_t* groups, ze_event_handle_t signal, uint32_t numWait, ze_event_handle_t* waits) {
  return replayedAppend(
      scope, list, true,
      [&] {
        Op op = kernelOp(kernel, groups);
        bool wanted = !scope.nested() && profiler().launchStarting(list, kernel, op);
        void* query = wanted && recordKernels() ? profiler().queryForLaunch(list, op) : nullptr;
        return timedAppend(scope, list, signal, std::move(op), wanted, [&](ze_event_handle_t e) {
          return measured(list, query, [&] { return real(list, kernel, groups, e, numWait, waits); });
        });
      },
      [&](const ReplayRecorder::Append& a) {
        replayRecorder().launched(a, scope, list, kernel, groups, true, signal, numWait, waits);
      });
}

GTAP_ZE_HOOK(zeCommandListAppendMemoryCopy, ze_command_list_handle_t list, void* dst, const void* src, size_t size,
             ze_event_handle_t signal, uint32_t numWait, ze_event_handle_t* waits) {
  Op op;
  op.kind = OpKind::copy;
  op.bytes = size;
  if (!scope.nested() && recordKernels()) op.direction = profiler().directionOf(dst, src);
  return replayedAppend(
      scope, list, false,
      [&] {
        return timedAppend(scope, list, signal, std::move(op), true,
                           [&](ze_event_handle_t e) { return real(list, dst, src, size, e, numWait, waits); });
      },
      [&](const ReplayRecorder::Append& a) {
        replayRecorder().copied(a, scope, list, dst, src, size, nullptr, signal, numWait, waits);
      });
}

// The group count lives in device memory and is read when the launch runs:
// recorded as 0,0,0.
GTAP_ZE_HOOK(zeCommandListAppendLaunchKernelIndirect, ze_command_list_handle_t list, ze_kernel_handle_t kernel,
             const ze_group_count_t* groupsOnDevice, ze_event_handle_t signal, uint32_t numWait,
             ze_event_handle_t* waits) {
  if (replaying(scope)) replayRecorder().unsupported(scope, "indirect launches (group counts in device memory) are not replayed");
  Op op = kernelOp(kernel, nullptr);
  bool wanted = profiler().shouldTimeKernel(kernel);
  void* query = wanted && !scope.nested() ? profiler().queryForLaunch(list, op) : nullptr;
  return timedAppend(scope, list, signal, std::move(op), wanted, [&](ze_event_handle_t e) {
    return measured(list, query, [&] { return real(list, kernel, groupsOnDevice, e, numWait, waits); });
  });
}

GTAP_ZE_HOOK(zeCommandListAppendMemoryCopyRegion, ze_command_list_handle_t list, void* dst,
             const ze_copy_region_t* dstRegion, uint32_t dstPitch, uint32_t dstSlicePitch, const void* src,
             const ze_copy_region_t* srcRegion, uint32_t srcPitch, uint32_t srcSlicePitch, ze_event_handle_t signal,
             uint32_t numWait, ze_event_handle_t* waits) {
  Op op;
  op.kind = OpKind::copy;
  if (srcRegion) op.bytes = uint64_t{srcRegion->width} * srcRegion->height * std::max<uint32_t>(srcRegion->depth, 1);
  if (!scope.nested() && recordKernels()) op.direction = profiler().directionOf(dst, src);
  return replayedAppend(
      scope, list, false,
      [&] {
        return timedAppend(scope, list, signal, std::move(op), true, [&](ze_event_handle_t e) {
          return real(list, dst, dstRegion, dstPitch, dstSlicePitch, src, srcRegion, srcPitch, srcSlicePitch, e,
                      numWait, waits);
        });
      },
      [&](const ReplayRecorder::Append& a) {
        if (!dstRegion || !srcRegion) return;  // the call failed on them
        ReplayRecorder::Region region{dstRegion, dstPitch, dstSlicePitch, srcRegion, srcPitch, srcSlicePitch};
        replayRecorder().copied(a, scope, list, dst, src, 0, &region, signal, numWait, waits);
      });
}

GTAP_ZE_HOOK(zeCommandListAppendMemoryCopyFromContext, ze_command_list_handle_t list, void* dst,
             ze_context_handle_t srcContext, const void* src, size_t size, ze_event_handle_t signal, uint32_t numWait,
             ze_event_handle_t* waits) {
  Op op;
  op.kind = OpKind::copy;
  op.bytes = size;
  if (!scope.nested() && recordKernels()) op.direction = profiler().directionOf(dst, src);
  // Replayed as a copy: replay has one context per captured context, and the
  // source's allocation is found by its address whatever context made it.
  return replayedAppend(
      scope, list, false,
      [&] {
        return timedAppend(scope, list, signal, std::move(op), true, [&](ze_event_handle_t e) {
          return real(list, dst, srcContext, src, size, e, numWait, waits);
        });
      },
      [&](const ReplayRecorder::Append& a) {
        replayRecorder().copied(a, scope, list, dst, src, size, nullptr, signal, numWait, waits);
      });
}

GTAP_ZE_HOOK(zeCommandListAppendMemoryFill, ze_command_list_handle_t list, void* ptr, const void* pattern,
             size_t patternSize, size_t size, ze_event_handle_t signal, uint32_t numWait, ze_event_handle_t* waits) {
  Op op;
  op.kind = OpKind::fill;
  op.bytes = size;
  return replayedAppend(
      scope, list, false,
      [&] {
        return timedAppend(scope, list, signal, std::move(op), true, [&](ze_event_handle_t e) {
          return real(list, ptr, pattern, patternSize, size, e, numWait, waits);
        });
      },
      [&](const ReplayRecorder::Append& a) {
        replayRecorder().filled(a, scope, list, ptr, pattern, patternSize, size, signal, numWait, waits);
      });
}

GTAP_ZE_HOOK(zeCommandListAppendBarrier, ze_command_list_handle_t list, ze_event_handle_t signal, uint32_t numWait,
             ze_event_handle_t* waits) {
  Op op;
  op.kind = OpKind::barrier;
  return replayedAppend(
      scope, list, false,
      [&] {
        return timedAppend(scope, list, signal, std::move(op), true,
                           [&](ze_event_handle_t e) { return real(list, e, numWait, waits); });
      },
      [&](const ReplayRecorder::Append& a) { replayRecorder().listOp(a, scope, ROp::BARRIER, list, signal, numWait, waits); });
}

GTAP_ZE_HOOK(zeCommandListAppendEventReset, ze_command_list_handle_t list, ze_event_handle_t event) {
  if (!scope.nested() && recordKernels()) profiler().deviceResetAppending(list, event);
  return replayedAppend(
      scope, list, false, [&] { return real(list, event); },
      [&](const ReplayRecorder::Append& a) { replayRecorder().listOp(a, scope, ROp::EVENT_RESET, list, event, 0, nullptr); });
}

GTAP_ZE_HOOK(zeCommandListAppendSignalEvent, ze_command_list_handle_t list, ze_event_handle_t event) {
  if (!scope.nested() && recordKernels() && event) profiler().programEventSignalling(list, event);
  return replayedAppend(
      scope, list, false, [&] { return real(list, event); },
      [&](const ReplayRecorder::Append& a) { replayRecorder().listOp(a, scope, ROp::SIGNAL_EVENT, list, event, 0, nullptr); });
}

GTAP_ZE_HOOK(zeCommandListAppendWaitOnEvents, ze_command_list_handle_t list, uint32_t count,
             ze_event_handle_t* events) {
  return replayedAppend(
      scope, list, false, [&] { return real(list, count, events); },
      [&](const ReplayRecorder::Append& a) {
        replayRecorder().listOp(a, scope, ROp::WAIT_ON_EVENTS, list, nullptr, count, events);
      });
}

GTAP_ZE_HOOK(zeCommandQueueExecuteCommandLists, ze_command_queue_handle_t queue, uint32_t count,
             ze_command_list_handle_t* lists, ze_fence_handle_t fence) {
  // Before the real call: the previous executions are read, and gtap's events
  // reset, before the device can start this one.
  if (!scope.nested() && recordKernels()) profiler().executing(queue, count, lists, scope);
  uint64_t rs = replaying(scope) ? replayRecorder().executing(scope, queue, count, lists, fence) : 0;
  ze_result_t r = real(queue, count, lists, fence);
  if (rs) replayRecorder().executed(rs, scope, queue, r);
  return r;
}

// Points where the program learns work has finished: gtap reads device times.
GTAP_ZE_HOOK(zeCommandQueueSynchronize, ze_command_queue_handle_t queue, uint64_t timeout) {
  ze_result_t r = real(queue, timeout);
  if (r == ZE_RESULT_SUCCESS && !scope.nested() && recordKernels()) profiler().resolve();
  if (r == ZE_RESULT_SUCCESS && replaying(scope)) replayRecorder().waited(scope, ROp::QUEUE_SYNCHRONIZE, queue, timeout);
  return r;
}

#ifdef GTAP_ZE_HAVE_zeCommandListHostSynchronize
// An immediate list's work is done when this returns, as a queue's is after
// zeCommandQueueSynchronize: device times are read. Replay has no operation
// for it yet, so a replay capture says so by name.
GTAP_ZE_HOOK(zeCommandListHostSynchronize, ze_command_list_handle_t list, uint64_t timeout) {
  ze_result_t r = real(list, timeout);
  if (r == ZE_RESULT_SUCCESS && !scope.nested() && recordKernels()) profiler().resolve();
  if (r == ZE_RESULT_SUCCESS) replayUnsupported(scope, "zeCommandListHostSynchronize");
  return r;
}
#endif

GTAP_ZE_HOOK(zeFenceHostSynchronize, ze_fence_handle_t fence, uint64_t timeout) {
  ze_result_t r = real(fence, timeout);
  if (r == ZE_RESULT_SUCCESS && !scope.nested() && recordKernels()) profiler().resolve();
  if (r == ZE_RESULT_SUCCESS && replaying(scope)) replayRecorder().waited(scope, ROp::FENCE_HOST_SYNCHRONIZE, fence, timeout);
  return r;
}

GTAP_ZE_HOOK(zeFenceQueryStatus, ze_fence_handle_t fence) {
  ze_result_t r = real(fence);
  if (r == ZE_RESULT_SUCCESS && !scope.nested() && recordKernels()) profiler().resolve();
  if (r == ZE_RESULT_SUCCESS && replaying(scope)) replayRecorder().waited(scope, ROp::FENCE_QUERY_STATUS, fence, 0);
  return r;
}

GTAP_ZE_HOOK(zeEventHostSynchronize, ze_event_handle_t event, uint64_t timeout) {
  ze_result_t r = real(event, timeout);
  if (r == ZE_RESULT_SUCCESS && !scope.nested() && recordKernels()) profiler().resolve();
  if (r == ZE_RESULT_SUCCESS && replaying(scope)) replayRecorder().waited(scope, ROp::EVENT_HOST_SYNCHRONIZE, event, timeout);
  return r;
}

GTAP_ZE_HOOK(zeEventQueryStatus, ze_event_handle_t event) {
  ze_result_t r = real(event);
  if (r == ZE_RESULT_SUCCESS && !scope.nested() && recordKernels()) profiler().resolve();
  if (r == ZE_RESULT_SUCCESS && replaying(scope)) replayRecorder().waited(scope, ROp::EVENT_QUERY_STATUS, event, 0);
  return r;
}

}  // namespace gtap::ze
