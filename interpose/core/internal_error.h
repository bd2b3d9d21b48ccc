// No exception of gtap's reaches the program. Wherever gtap's code runs on a
// thread that is not gtap's own (wrappers, hooks, thunks, runtime callbacks,
// exit work), a catch boundary turns an exception into
// stopAfterInternalError: recording stops for the whole process with one
// message on stderr, and the call goes on to the runtime as without gtap.
//
// A hook that makes the runtime call itself does so through a RealCall, so the
// boundary knows whether the runtime was already called (then its result is
// returned and it is not called again) or not (then it is called with the
// program's own arguments).
#pragma once

#include <cxxabi.h>

#include <atomic>
#include <cstdint>

namespace gtap::core {

// Set once, by the first internal error of this process (a forked child
// inherits it: its parent's gtap state is what broke).
extern std::atomic<bool> g_internalError;

inline bool stoppedAfterInternalError() { return g_internalError.load(std::memory_order_relaxed); }

// Called inside a catch block: stops recording (first call only: one message
// naming `where` and the exception's what()). Never throws.
void stopAfterInternalError(const char* where) noexcept;

// A thread being cancelled or calling pthread_exit unwinds with
// abi::__forced_unwind, which must go on; every other exception is gtap's.
//   try { ... } GTAP_CATCH_INTERNAL { stopAfterInternalError("..."); ... }
#define GTAP_CATCH_INTERNAL \
  catch (::abi::__forced_unwind&) { throw; }  \
  catch (...)

// The runtime's function as a hook calls it: notes that the call was made and
// what it returned (stack stores only).
template <typename Fn>
class RealCall;

template <typename R, typename... A>
class RealCall<R (*)(A...)> {
 public:
  using Fn = R (*)(A...);
  explicit RealCall(Fn fn) : fn_(fn) {}

  R operator()(A... a) {
    state_ = kInside;
    result_ = fn_(a...);
    state_ = kReturned;
    return result_;
  }
  // The program's call was made by other means (another entry that does the
  // same, as an intercept queue's create for a queue's), with this result.
  void made(R r) {
    result_ = r;
    state_ = kReturned;
  }
  // An attempt that changed nothing in the runtime (it failed): the boundary
  // may still make the program's call.
  void undo() { state_ = kNotCalled; }
  Fn function() const { return fn_; }

  // In a catch block: what the program's call returns after gtap failed
  // around it. An exception that left the runtime itself is the runtime's
  // and goes on to the program, as without gtap.
  R recover(const char* where, A... a) {
    if (state_ == kInside) throw;
    stopAfterInternalError(where);
    if (state_ == kReturned) return result_;
    return fn_(a...);
  }

 private:
  enum : uint8_t { kNotCalled, kInside, kReturned };
  Fn fn_;
  R result_;  // read only once returned
  uint8_t state_ = kNotCalled;
};

// --- test-only fault injection --------------------------------------------------------
// GTAP_TEST_THROW_AT=SITE[:N] (read once at load) throws at the N-th time
// (default 1st) the named site is reached, to test the boundaries. Unset, a
// site costs a load and a not-taken branch, and sites sit on paths that do
// far more (gtap's own bookkeeping), never on the bare per-call path.
enum class TestSite : uint8_t {
  none,
  zeBeforeCall,   // "ze-before": a Level Zero hook, its runtime call not made yet (event substituted)
  zeAfterCall,    // "ze-after": a Level Zero hook, after its runtime call
  hsaHook,        // "hsa": an HSA hook, after its runtime call
  hsaPacket,      // "hsa-packet": the HSA queue intercept handler, packets half rewritten
  halCall,        // "hal-call": a HAL vtable thunk's call start
  halThunk,       // "hal-thunk": a dispatch thunk (on the driver's worker thread)
  recordBuffer,   // "record-buffer": a thread's new record block
  writer,         // "writer": the writer thread's drain
};
extern TestSite g_testThrowAt;
[[gnu::cold, gnu::noinline]] void testThrowReached(TestSite site);
inline void testThrowPoint(TestSite site) {
  if (__builtin_expect(g_testThrowAt == site, 0)) testThrowReached(site);
}

}  // namespace gtap::core
