/*
 * Kernel modules for gtap's simulated Level Zero device.
 *
 * A kernel module is a host shared object (built with gtap_add_sim_ze_module)
 * whose bytes a program passes to zeModuleCreate with ZE_MODULE_FORMAT_NATIVE.
 * Each kernel is declared with one of the macros below, followed by its body:
 *
 *   #include "gtap_sim_kernel.h"
 *
 *   GTAP_SIM_KERNEL(vector_add, sizeof(float*), sizeof(float*), sizeof(float*),
 *                   sizeof(uint32_t)) {
 *     const float* a = GTAP_SIM_ARG(const float*, 0);
 *     const float* b = GTAP_SIM_ARG(const float*, 1);
 *     float* c = GTAP_SIM_ARG(float*, 2);
 *     uint64_t i = item->global_id[0];
 *     if (i < GTAP_SIM_ARG(uint32_t, 3)) c[i] = a[i] + b[i];
 *   }
 *
 * The arguments after the kernel name are the sizes in bytes of the kernel's
 * arguments, in order (zeKernelSetArgumentValue checks index and size against
 * them); GTAP_SIM_ARG_LOCAL declares a local (shared) memory argument, whose
 * size the program sets per launch with a null value. The body sees one
 * parameter, `const gtap_sim_item* item`:
 *
 *   GTAP_SIM_KERNEL            body runs once per work-item
 *   GTAP_SIM_GROUP_KERNEL      body runs once per work-group (local_id is 0,
 *                              global_id the group's first item); use it for
 *                              local memory and group-wide algorithms
 *   GTAP_SIM_KERNEL_REQD       per work-item, with a required group size
 *                              (reported by zeKernelGetProperties, enforced by
 *                              zeKernelSetGroupSize)
 *
 * Work-groups and work-items run one after another on the queue's worker
 * thread, in order: group z, y, x, then local z, y, x.
 * Kernel names are C identifiers and unique within a module. Each body is a
 * static function of the kernel's name (its symbol in the module's symbol
 * table), so a kernel's name must not be used for anything else in its source
 * file (a kernel named `exp` clashes with <math.h>). Works as C and C++.
 */
#ifndef GTAP_SIM_KERNEL_H
#define GTAP_SIM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the layout of the structures below changes; the driver
 * refuses modules built against another version. */
#define GTAP_SIM_KERNEL_ABI_VERSION 1u

/* Declared size of a local (work-group shared) memory argument. */
#define GTAP_SIM_ARG_LOCAL 0u

enum {
  GTAP_SIM_PER_WORK_ITEM = 0,
  GTAP_SIM_PER_WORK_GROUP = 1
};

/* What the body of a kernel sees. */
typedef struct gtap_sim_item {
  uint64_t global_id[3];     /* global_offset + group_id * group_size + local_id */
  uint32_t local_id[3];
  uint32_t group_id[3];
  uint32_t group_size[3];    /* zeKernelSetGroupSize */
  uint32_t group_count[3];   /* from the launch's ze_group_count_t */
  uint32_t global_offset[3]; /* zeKernelSetGlobalOffsetExp */
  uint32_t num_args;
  /* args[i] points at a copy of argument i's value (16-byte aligned), or at
   * this work-group's local memory for a GTAP_SIM_ARG_LOCAL argument. */
  void* const* args;
} gtap_sim_item;

typedef void (*gtap_sim_kernel_fn)(const gtap_sim_item* item);

/* One per kernel, emitted by the macros. */
typedef struct gtap_sim_kernel_desc {
  uint32_t abi_version;
  uint32_t granularity; /* GTAP_SIM_PER_WORK_ITEM or GTAP_SIM_PER_WORK_GROUP */
  const char* name;
  uint32_t num_args;
  const uint32_t* arg_sizes;
  uint32_t required_group_size[3]; /* all 0 when none is required */
  gtap_sim_kernel_fn fn;
} gtap_sim_kernel_desc;

/* Argument access inside a body. */
#define GTAP_SIM_ARG(type, index) (*(type const*)(item->args[(index)]))
#define GTAP_SIM_LOCAL_MEM(type, index) ((type*)(item->args[(index)]))
#define GTAP_SIM_GLOBAL_SIZE(dim) \
  ((uint64_t)item->group_count[(dim)] * (uint64_t)item->group_size[(dim)])

/* The macros put a pointer to each descriptor in the "gtap_sim_kernels"
 * section; the linker gathers them between __start_ and __stop_ symbols, and
 * gtap_sim_ze_module_kernels() (the one symbol the driver looks up) returns
 * them. It is weak so that every source file of a module may include this
 * header. */
#define GTAP_SIM__SECTION __attribute__((used, section("gtap_sim_kernels"), aligned(sizeof(void*))))

/* The driver includes this header only for the types above. */
#ifndef GTAP_SIM_KERNEL_TYPES_ONLY

extern const gtap_sim_kernel_desc* const __start_gtap_sim_kernels[]
    __attribute__((weak, visibility("hidden")));
extern const gtap_sim_kernel_desc* const __stop_gtap_sim_kernels[]
    __attribute__((weak, visibility("hidden")));

__attribute__((weak, used, visibility("default"))) const gtap_sim_kernel_desc* const*
gtap_sim_ze_module_kernels(uint32_t* count) {
  *count = (uint32_t)(__stop_gtap_sim_kernels - __start_gtap_sim_kernels);
  return __start_gtap_sim_kernels;
}

#endif /* GTAP_SIM_KERNEL_TYPES_ONLY */

/* The body is a static function named exactly as the kernel (the assembler
 * label keeps C++ from mangling the name), so the module's symbol table names
 * each kernel's code by the kernel's name, as a device binary with debug
 * information does: a tool that finds an instruction address in the module
 * finds the kernel. */
#define GTAP_SIM__DEFINE_KERNEL(name, granularity, rx, ry, rz, ...)                           \
  static void name(const gtap_sim_item* item) __asm__(#name);                                 \
  static const uint32_t gtap_sim__sizes_##name[] = {0u, __VA_ARGS__};                         \
  static const gtap_sim_kernel_desc gtap_sim__desc_##name = {                                 \
      GTAP_SIM_KERNEL_ABI_VERSION,                                                            \
      (granularity),                                                                          \
      #name,                                                                                  \
      (uint32_t)(sizeof(gtap_sim__sizes_##name) / sizeof(gtap_sim__sizes_##name[0])) - 1u,    \
      gtap_sim__sizes_##name + 1,                                                             \
      {(rx), (ry), (rz)},                                                                     \
      name};                                                                                  \
  static const gtap_sim_kernel_desc* const gtap_sim__entry_##name GTAP_SIM__SECTION =         \
      &gtap_sim__desc_##name;                                                                 \
  static void name(const gtap_sim_item* item)

#define GTAP_SIM_KERNEL(name, ...) \
  GTAP_SIM__DEFINE_KERNEL(name, GTAP_SIM_PER_WORK_ITEM, 0u, 0u, 0u, __VA_ARGS__)
#define GTAP_SIM_GROUP_KERNEL(name, ...) \
  GTAP_SIM__DEFINE_KERNEL(name, GTAP_SIM_PER_WORK_GROUP, 0u, 0u, 0u, __VA_ARGS__)
#define GTAP_SIM_KERNEL_REQD(name, x, y, z, ...) \
  GTAP_SIM__DEFINE_KERNEL(name, GTAP_SIM_PER_WORK_ITEM, (x), (y), (z), __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* GTAP_SIM_KERNEL_H */
