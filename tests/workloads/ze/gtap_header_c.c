/* include/gtap/gtap.h from C (C99, without _GNU_SOURCE): every call, made
 * twice (the range calls keep what they looked up), does nothing without
 * gtap and is harmless with it. Prints "gtap.h calls returned". */
#include <stdio.h>

#include "gtap/gtap.h"

int main(void) {
  int i;
  for (i = 0; i < 2; ++i) {
    gtap_range_pop();
    gtap_range_push("c");
    gtap_scope_begin("c");
    gtap_stop();
    gtap_start();
    gtap_scope_end("c");
    gtap_range_pop();
    gtap_flush();
  }
  printf("gtap.h calls returned\n");
  return 0;
}
