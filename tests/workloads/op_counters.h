/* The calling thread's heap allocations and lock acquisitions so far, when
 * tests/support/op_counters.c is preloaded (tests that show gtap takes none
 * per operation); without it the loads do not print them. C and C++. */
#ifndef GTAP_WORKLOAD_OP_COUNTERS_H
#define GTAP_WORKLOAD_OP_COUNTERS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>

typedef struct {
  unsigned long long allocations, locks;
  int counted;
} op_counts;

static inline op_counts op_counts_now(void) {
  typedef void (*read_fn)(unsigned long long*, unsigned long long*);
  op_counts c = {0, 0, 0};
  read_fn read = (read_fn)dlsym(RTLD_DEFAULT, "gtap_op_counters");
  if (read) {
    read(&c.allocations, &c.locks);
    c.counted = 1;
  }
  return c;
}

/* "op_counts NAME allocations A locks L" on stderr: what the thread did
 * between `start` and now (nothing when not counted). */
static inline void op_counts_report(const char* name, op_counts start) {
  op_counts now = op_counts_now();
  if (!start.counted || !now.counted) return;
  fprintf(stderr, "op_counts %s allocations %llu locks %llu\n", name, now.allocations - start.allocations,
          now.locks - start.locks);
}

#endif
