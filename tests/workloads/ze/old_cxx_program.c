/* A program that loads an old libstdc++.so.6 (old_cxx_runtime.c) and prints
   what it answers. */
#include <stdio.h>

int old_cxx_runtime_answer(void);

int main(void) {
  printf("old runtime says %d\n", old_cxx_runtime_answer());
  return 0;
}
