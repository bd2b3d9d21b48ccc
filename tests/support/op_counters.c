/* libgtap_op_counters.so: preloaded by tests beside libgtap.so, it counts per
 * thread the heap allocations and lock acquisitions the thread makes, so a
 * test can show that gtap takes none per launch or dispatch: a load reads its
 * own thread's counts around its measured loop (tests/workloads/op_counters.h)
 * and the test compares the counts under gtap with the program alone, at two
 * loop lengths. Lock-free atomics and futex calls made directly are not seen:
 * what is counted is what goes through the C library's allocator and POSIX
 * lock functions, which std::mutex, std::shared_mutex, new and the containers
 * all do. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <time.h>

/* initial-exec: reading the counters must never allocate (a dynamic TLS
 * access may, and would recurse into malloc). */
static __thread unsigned long long t_allocations __attribute__((tls_model("initial-exec")));
static __thread unsigned long long t_locks __attribute__((tls_model("initial-exec")));

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);

__attribute__((visibility("default"))) void gtap_op_counters(unsigned long long* allocations,
                                                             unsigned long long* locks) {
  *allocations = t_allocations;
  *locks = t_locks;
}

__attribute__((visibility("default"))) void* malloc(size_t n) {
  ++t_allocations;
  return __libc_malloc(n);
}
__attribute__((visibility("default"))) void* calloc(size_t n, size_t size) {
  ++t_allocations;
  return __libc_calloc(n, size);
}
__attribute__((visibility("default"))) void* realloc(void* p, size_t n) {
  ++t_allocations;
  return __libc_realloc(p, n);
}
__attribute__((visibility("default"))) void* memalign(size_t alignment, size_t n) {
  ++t_allocations;
  return __libc_memalign(alignment, n);
}
__attribute__((visibility("default"))) void* aligned_alloc(size_t alignment, size_t n) {
  ++t_allocations;
  return __libc_memalign(alignment, n);
}
__attribute__((visibility("default"))) int posix_memalign(void** out, size_t alignment, size_t n) {
  ++t_allocations;
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

/* The next definition of each lock function, found on first use: another
 * preloaded library's constructor may lock before this one's would run. */
#define NEXT(type, name) \
  static type real_##name; \
  if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name)

typedef int (*mutex_fn)(pthread_mutex_t*);
typedef int (*mutex_timed_fn)(pthread_mutex_t*, const struct timespec*);
typedef int (*rwlock_fn)(pthread_rwlock_t*);
typedef int (*rwlock_timed_fn)(pthread_rwlock_t*, const struct timespec*);
typedef int (*spin_fn)(pthread_spinlock_t*);
typedef int (*sem_fn)(sem_t*);
typedef int (*sem_timed_fn)(sem_t*, const struct timespec*);

#define COUNTED_LOCK(ret, name, fn_type, params, args) \
  __attribute__((visibility("default"))) ret name params { \
    NEXT(fn_type, name); \
    ++t_locks; \
    return real_##name args; \
  }

COUNTED_LOCK(int, pthread_mutex_lock, mutex_fn, (pthread_mutex_t * m), (m))
COUNTED_LOCK(int, pthread_mutex_trylock, mutex_fn, (pthread_mutex_t * m), (m))
COUNTED_LOCK(int, pthread_mutex_timedlock, mutex_timed_fn, (pthread_mutex_t * m, const struct timespec* t), (m, t))
COUNTED_LOCK(int, pthread_rwlock_rdlock, rwlock_fn, (pthread_rwlock_t * l), (l))
COUNTED_LOCK(int, pthread_rwlock_wrlock, rwlock_fn, (pthread_rwlock_t * l), (l))
COUNTED_LOCK(int, pthread_rwlock_tryrdlock, rwlock_fn, (pthread_rwlock_t * l), (l))
COUNTED_LOCK(int, pthread_rwlock_trywrlock, rwlock_fn, (pthread_rwlock_t * l), (l))
COUNTED_LOCK(int, pthread_rwlock_timedrdlock, rwlock_timed_fn, (pthread_rwlock_t * l, const struct timespec* t),
             (l, t))
COUNTED_LOCK(int, pthread_rwlock_timedwrlock, rwlock_timed_fn, (pthread_rwlock_t * l, const struct timespec* t),
             (l, t))
COUNTED_LOCK(int, pthread_spin_lock, spin_fn, (pthread_spinlock_t * l), (l))
COUNTED_LOCK(int, pthread_spin_trylock, spin_fn, (pthread_spinlock_t * l), (l))
COUNTED_LOCK(int, sem_wait, sem_fn, (sem_t * s), (s))
COUNTED_LOCK(int, sem_timedwait, sem_timed_fn, (sem_t * s, const struct timespec* t), (s, t))
