// What the IREE HAL front end records beyond each call's span: the HAL
// operations the program issues, as HAL-level device ops naming their method
// and objects (command-buffer commands, dispatches with executable, export,
// workgroup count and size, constants and bindings; queue submissions,
// transfers, allocations and flushes; semaphore signals and waits; file
// imports), executables from the executable cache (format, bytes, exports as
// kernels), command buffers, buffer allocations, and on CPU drivers each
// dispatch's run on the host. Arguments are read from the registers and stack
// the enter stub saved, by the layout the matched IREE version gives each method.
#pragma once

#include <cstddef>
#include <cstdint>

#include "thread_state.h"

namespace gtap::hal {

// What a hooked slot records beyond the call itself.
enum class Decoder : uint8_t {
  none,
  prepareExecutable,     // executable_cache.prepare_executable(cache, const params*, out executable**)
  executableDestroy,     // executable.destroy
  dispatchConfig,        // command_buffer.dispatch, IREE 3.7 and later (iree_hal_dispatch_config_t by value)
  dispatchCountPointer,  // command_buffer.dispatch, IREE 3.0 to 3.6 (workgroup count by pointer)
  commandBufferDestroy,  // command_buffer.destroy
  allocateBuffer,        // allocator.allocate_buffer(allocator, const params*, size, out buffer**)
  bufferDestroy,         // buffer.destroy
  queueFill,             // device.queue_fill
  queueUpdate,           // device.queue_update: host memory to a buffer
  queueCopy,             // device.queue_copy: buffer to buffer
  queueRead,             // device.queue_read: file to buffer
  queueWrite,            // device.queue_write: buffer to file
  queueExecute,          // device.queue_execute: a command buffer (or none: a barrier) and its binding table
  queueAllocaOutR8,      // device.queue_alloca, IREE 3.0 to 3.3 (no flags: the out buffer in r8)
  queueAllocaOutR9,      // device.queue_alloca, IREE 3.4 and later
  queueDealloca,         // device.queue_dealloca
  queueFlush,            // device.queue_flush
  waitSemaphores,        // device.wait_semaphores: a list of semaphore values
  importFile,            // device.import_file
  semaphoreSignal,       // semaphore.signal(semaphore, value, ...)
  semaphoreWait,         // semaphore.wait(semaphore, value, timeout, ...)
  commandBufferBegin,    // command_buffer.begin
  commandBufferEnd,      // command_buffer.end
  executionBarrier,      // command_buffer.execution_barrier
  fillBuffer,            // command_buffer.fill_buffer
  updateBuffer,          // command_buffer.update_buffer: host memory to a buffer
  copyBuffer,            // command_buffer.copy_buffer
  issueCall,             // local_executable.issue_call: one workgroup of a dispatch on a CPU driver
  queueHostCall,         // device.queue_host_call: the program's function, called by the driver later or inline
  importBuffer,          // allocator.import_buffer: the program's release callback, called when the buffer goes
};

// The registers the enter stub saved (trampoline_x86_64.S).
struct SavedRegisters {
  uint64_t xmm[16];
  uint64_t rdi, rsi, rdx, rcx, r8, r9, rax, r10;
};

// A call in progress: where it started, and what its end needs.
struct CallContext {
  core::ThreadState* thread = nullptr;
  uint64_t beginIndex = 0;
  uint64_t ticks = 0;
  // Made from inside another hooked HAL call on the thread: the driver's own
  // work (a deferred command buffer replaying into an inline one inside
  // queue_execute), not the program's.
  bool nested = false;
  uint64_t keep[3] = {};
  void* pending = nullptr;  // a record to commit when the call succeeds
};

// `implementation` names the object's type ("iree_hal_deferred_command_buffer");
// `stack` points at the call's first stack argument.
void atCallStart(Decoder decoder, const char* implementation, const SavedRegisters& regs, const uint64_t* stack,
                 CallContext& call);
// `status` is the iree_status_t the call returned (0: OK).
void atCallEnd(Decoder decoder, uint64_t status, CallContext& call);

// Where a CPU driver's local executable (iree_hal_local_executable_t) keeps
// its export functions, export count and export names, in the IREE version
// its vtable matched; all 0 in versions whose drivers call no export function
// directly (IREE 3.11 and before).
struct LocalExecutableLayout {
  size_t dispatchPtrs = 0, exportCount = 0, exportNames = 0;
  bool known() const { return dispatchPtrs != 0 && exportCount != 0 && exportNames != 0; }
};

// A hooked executable implementation's vtable.
struct ExecutableVtable {
  const char* implementation = nullptr;  // "iree_hal_elf_executable"
  // The slots of function_info (export_info before IREE renamed it), through
  // which export names are asked of the executable, and of function_count
  // (export_count); SIZE_MAX where the layout has none.
  size_t infoSlot = SIZE_MAX;
  size_t countSlot = SIZE_MAX;
  LocalExecutableLayout local;  // local executables only
};

void noteExecutableVtable(const void* vtable, const ExecutableVtable& info);

// The image's IREE waits on semaphore lists through
// iree_async_semaphore_multi_wait (iree_hal_semaphore_list_wait,
// iree_hal_fence_wait, iree_hal_device_wait_semaphores since IREE's semaphores
// became async semaphores), which calls no vtable slot: those waits are not
// recorded, and the capture says so (an object named after the function,
// kind unknown, its image and how it was found as properties). Once per image.
// `address`: the function's, 0 when only the semaphore layout told.
void noteUnrecordedWaits(const std::string& image, uint64_t address, const char* foundBy);


// One workgroup of a dispatch on a CPU driver, whichever way the driver runs
// it: through the executable's issue_call, or through the export's function
// (gtap's thunk, dispatch_thunks.cpp). A dispatch in flight is keyed by
// executable, export and the dispatch state's binding pointers, which its
// workgroups share whatever worker runs them.
struct HostWorkgroup {
  uint64_t executable = 0, ordinal = 0, bindings = 0;
};

// Counts a workgroup about to run on this thread (`dispatchState`: its
// iree_hal_executable_dispatch_state_v0_t). False when it is not counted: no
// dispatch state, or a workgroup already counted on this thread is running it
// (a driver's issue_call that calls the export's function).
bool hostWorkgroupStart(uint64_t executable, uint64_t ordinal, const void* dispatchState, uint32_t thread,
                        uint64_t ticks, HostWorkgroup& workgroup);
// The workgroup ended (failed or not); the last of its dispatch writes the
// dispatch's host_execution record.
void hostWorkgroupEnd(const HostWorkgroup& workgroup);

}  // namespace gtap::hal
