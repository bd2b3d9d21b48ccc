// Calls a few HSA functions a known number of times through every route a
// program has to the runtime, so a test can hold gtap's call counts against
// them exactly:
//
//   hsa_api_counts [N=1000]
//
// 1. hsa_init, then N x hsa_system_get_info through the linked symbol and N x
//    through a pointer from dlsym on the program's own dlopen handle
//    (RTLD_LOCAL), as IREE's amdgpu driver resolves the runtime;
// 2. a nested hsa_init / hsa_shut_down pair (reference counted: the runtime
//    stays up);
// 3. the last hsa_shut_down, then a fresh hsa_init (the runtime starts again
//    and loads its tools again), N more hsa_system_get_info, hsa_shut_down.
//
// Stdout: "calls NAME COUNT" for each function, then "checksum ...". Exit
// status: 0, 1 when an HSA call fails, 64 for bad arguments.
#include <dlfcn.h>
#include <hsa/hsa.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int fail(const char* what, hsa_status_t s) {
  std::fprintf(stderr, "%s failed: 0x%x\n", what, static_cast<unsigned>(s));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned long n = 1000;
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [N]\n", argv[0]);
    return 64;
  }
  if (argc == 2) {
    char* end = nullptr;
    n = std::strtoul(argv[1], &end, 10);
    if (*argv[1] == '\0' || *end != '\0' || n == 0 || n > (1ul << 24)) {
      std::fprintf(stderr, "usage: %s [N]\n", argv[0]);
      return 64;
    }
  }
  void* runtime = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!runtime) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  using GetInfo = hsa_status_t (*)(hsa_system_info_t, void*);
  auto viaDlsym = reinterpret_cast<GetInfo>(dlsym(runtime, "hsa_system_get_info"));
  if (!viaDlsym) {
    std::fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }

  uint64_t sum = 0, value = 0;
  hsa_status_t s;
  if ((s = hsa_init()) != HSA_STATUS_SUCCESS) return fail("hsa_init", s);
  for (unsigned long i = 0; i < n; ++i) {
    if ((s = hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &value)) != HSA_STATUS_SUCCESS)
      return fail("hsa_system_get_info", s);
    sum += value;
    if ((s = viaDlsym(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &value)) != HSA_STATUS_SUCCESS)
      return fail("hsa_system_get_info (dlsym)", s);
    sum += value;
  }
  if ((s = hsa_init()) != HSA_STATUS_SUCCESS) return fail("hsa_init (nested)", s);
  if ((s = hsa_shut_down()) != HSA_STATUS_SUCCESS) return fail("hsa_shut_down (nested)", s);
  if ((s = hsa_shut_down()) != HSA_STATUS_SUCCESS) return fail("hsa_shut_down", s);

  if ((s = hsa_init()) != HSA_STATUS_SUCCESS) return fail("hsa_init (again)", s);
  for (unsigned long i = 0; i < n; ++i) {
    if ((s = hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &value)) != HSA_STATUS_SUCCESS)
      return fail("hsa_system_get_info", s);
    sum += value;
  }
  if ((s = hsa_shut_down()) != HSA_STATUS_SUCCESS) return fail("hsa_shut_down (again)", s);
  dlclose(runtime);

  std::printf("calls hsa_init 3\ncalls hsa_shut_down 3\ncalls hsa_system_get_info %lu\n", 3 * n);
  std::printf("checksum frequencies %llx\n", static_cast<unsigned long long>(sum));
  return 0;
}
