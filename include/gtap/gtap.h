/* Optional calls a program can make to gtap. Each looks its function up in
 * the process (dlsym), so a program built with this header runs unchanged,
 * and does nothing, when libgtap.so is not loaded. Link with -ldl on old C
 * libraries.
 *
 *   gtap_scope_begin("prefill");  ... device work ...  gtap_scope_end("prefill");
 *
 * Scopes are markers in the replay stream (gtap run --mode=replay): `gtap bench
 * FILE --scope prefill` times that phase alone while the whole stream still
 * replays.
 *
 *   gtap_stop(); ... warm-up ...  gtap_start();  ... measured work ...  gtap_stop();
 *
 * Phases pause and resume the profile records (API calls, device work,
 * allocations), as `gtap run --start-paused` and `--toggle-signal` do; the
 * replay stream is not paused.
 *
 *   gtap_range_push("step");  gtap_range_push("attention");  ...  gtap_range_pop();  gtap_range_pop();
 *
 * Ranges name parts of the program's own time, per thread and nested, as
 * NVTX's and ITT's do: timelines show them as slices on the thread's track
 * and `gtap kernels --by=range` groups kernels by the innermost range open
 * when they were launched. */
#ifndef GTAP_GTAP_H
#define GTAP_GTAP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>

static inline void gtap_call_named_(const char* function, const char* name) {
  void (*fn)(const char*) = (void (*)(const char*))dlsym(RTLD_DEFAULT, function);
  if (fn) fn(name);
}

/* Opens the scope NAME in the replay stream. */
static inline void gtap_scope_begin(const char* name) { gtap_call_named_("gtap_scope_begin", name); }
/* Closes the scope NAME. */
static inline void gtap_scope_end(const char* name) { gtap_call_named_("gtap_scope_end", name); }
/* Writes what gtap has buffered now. */
static inline void gtap_flush(void) {
  void (*fn)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gtap_flush");
  if (fn) fn();
}

/* Resumes recording (after gtap_stop or GTAP_START_PAUSED=1). */
static inline void gtap_start(void) {
  void (*fn)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gtap_start");
  if (fn) fn();
}
/* Pauses recording: device work submitted from now on is not recorded; work
 * submitted before is, whenever it completes. */
static inline void gtap_stop(void) {
  void (*fn)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gtap_stop");
  if (fn) fn();
}

/* Ranges may be pushed and popped millions of times: the functions are
 * looked up once per file that includes this header (a lookup costs more
 * than the push itself), the answer kept with relaxed atomic loads and stores
 * so threads may race to make it. (void*)1: looked up, not there. */
static inline void* gtap_range_function_(void** cache, const char* function) {
  void* fn = __atomic_load_n(cache, __ATOMIC_RELAXED);
  if (!fn) {
    fn = dlsym(RTLD_DEFAULT, function);
    if (!fn) fn = (void*)1;
    __atomic_store_n(cache, fn, __ATOMIC_RELAXED);
  }
  return fn == (void*)1 ? (void*)0 : fn;
}
/* Opens a range named NAME on the calling thread, inside any it has open
 * (the name is copied). */
static inline void gtap_range_push(const char* name) {
  static void* cache;
  void (*fn)(const char*) = (void (*)(const char*))gtap_range_function_(&cache, "gtap_range_push");
  if (fn) fn(name);
}
/* Closes the calling thread's innermost open range (none open: ignored). */
static inline void gtap_range_pop(void) {
  static void* cache;
  void (*fn)(void) = (void (*)(void))gtap_range_function_(&cache, "gtap_range_pop");
  if (fn) fn();
}

#endif
