/* Runs the IREE-shaped fixture from a library loaded with dlopen, as a Python
 * extension or a plugin brings IREE's HAL into a process after it started:
 *
 *   hal_fixture_dlopen LIBRARY [N [THREADS]]
 *
 * Prints what hal_fixture prints. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY [N [THREADS]]\n", argv[0]);
    return 64;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  int (*run)(int, char**) = (int (*)(int, char**))dlsym(library, "hal_fixture_main");
  if (!run) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  argv[1] = argv[0];
  return run(argc - 1, argv + 1);
}
