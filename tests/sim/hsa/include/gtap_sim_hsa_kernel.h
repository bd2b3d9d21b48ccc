/*
 * Code objects for gtap's simulated HSA runtime.
 *
 * A code object is a host shared object (built with gtap_add_sim_hsa_code_object)
 * whose bytes a program hands to hsa_code_object_reader_create_from_memory (or
 * whose file it opens for _from_file), exactly as it would an AMDGPU code
 * object. Each kernel is declared with one of the macros below, followed by
 * its body:
 *
 *   #include "gtap_sim_hsa_kernel.h"
 *
 *   typedef struct {
 *     const float* a;
 *     const float* b;
 *     float* c;
 *     uint32_t n;
 *   } vector_add_args;
 *
 *   GTAP_SIM_HSA_KERNEL(vector_add, vector_add_args) {
 *     const vector_add_args* args = GTAP_SIM_HSA_ARGS(vector_add_args);
 *     uint64_t i = item->global_id[0];
 *     if (i < args->n) args->c[i] = args->a[i] + args->b[i];
 *   }
 *
 * The kernarg segment is described by a C type: its size and alignment are
 * what hsa_executable_symbol_get_info reports (alignment at least 16, the AQL
 * minimum), and the body reads the segment the dispatch packet points at. The
 * body sees one parameter, `const gtap_sim_hsa_item* item`:
 *
 *   GTAP_SIM_HSA_KERNEL(name, args_type)             once per work-item
 *   GTAP_SIM_HSA_GROUP_KERNEL(name, args_type, group_bytes)
 *                                                    once per work-group (local_id
 *                                                    0, global_id the group's first
 *                                                    item), with group_bytes of
 *                                                    static group memory
 *   GTAP_SIM_HSA_KERNEL_FULL(name, granularity, kernarg_size, kernarg_align,
 *                            group_bytes, private_bytes)
 *                                                    everything explicit
 *
 * After its body, at file scope, each kernel lists its arguments: the fields
 * of args_type in the order a compiler would give them in the code object's
 * metadata, each with its kind. Offsets and sizes are the fields'.
 *
 *   GTAP_SIM_HSA_ARGUMENTS(vector_add, vector_add_args,
 *       GTAP_SIM_HSA_ARG_BUFFER(a),        pointer to global memory
 *       GTAP_SIM_HSA_ARG_BUFFER(b),          (global_buffer, address space global)
 *       GTAP_SIM_HSA_ARG_BUFFER(c),
 *       GTAP_SIM_HSA_ARG_VALUE(n));        by_value
 *
 *   GTAP_SIM_HSA_ARG_DYNAMIC_GROUP(field)  offset into the group segment
 *                                          (dynamic_shared_pointer, address
 *                                          space local)
 *   GTAP_SIM_HSA_ARG_HIDDEN(field, kind)   a hidden argument; kind is the
 *                                          metadata's value kind as a string,
 *                                          e.g. "hidden_global_offset_x"
 *
 * A kernel without arguments writes GTAP_SIM_HSA_ARGUMENTS(name, args_type).
 * The build turns these lists into the code object's AMDGPU metadata note
 * (tests/sim/README.md) and refuses a kernel that has none.
 *
 * The kernel's symbol is "<name>.kd", as for AMDGPU code objects (version 3
 * and later), and its KERNEL_OBJECT is the address of its descriptor in the
 * loaded copy of the code object: the value a dispatch packet carries.
 * Work-groups and work-items run one after another on the queue's packet
 * processor thread, in order: group z, y, x, then local z, y, x. Works as C
 * and C++.
 */
#ifndef GTAP_SIM_HSA_KERNEL_H
#define GTAP_SIM_HSA_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the layout of the structures below changes; the runtime
 * refuses code objects built against another version. */
#define GTAP_SIM_HSA_KERNEL_ABI_VERSION 1u

enum {
  GTAP_SIM_HSA_PER_WORK_ITEM = 0,
  GTAP_SIM_HSA_PER_WORK_GROUP = 1
};

/* What the body of a kernel sees. Sizes and ids are in work-items. */
typedef struct gtap_sim_hsa_item {
  const void* kernarg;           /* the packet's kernarg_address */
  uint32_t dimensions;           /* 1..3, from the packet's setup field */
  uint32_t workgroup_size[3];    /* from the packet; 1 in unused dimensions */
  uint32_t grid_size[3];         /* from the packet; 1 in unused dimensions */
  uint32_t group_count[3];       /* ceil(grid_size / workgroup_size) */
  uint32_t group_id[3];
  uint32_t group_size[3];        /* this group's size: partial at the grid's far edge */
  uint32_t local_id[3];
  uint64_t global_id[3];         /* group_id * workgroup_size + local_id */
  /* This work-group's group memory: max(packet, static) bytes, zeroed when
   * the group starts. Null when the size is 0. */
  void* group_segment;
  uint32_t group_segment_size;
  /* Private memory, max(packet, static) bytes per work-item, zeroed: this
   * work-item's for GTAP_SIM_HSA_PER_WORK_ITEM, the group's items back to
   * back (in local linear order) for GTAP_SIM_HSA_PER_WORK_GROUP. */
  void* private_segment;
  uint32_t private_segment_size;
  const void* dispatch_packet;   /* the hsa_kernel_dispatch_packet_t being run */
  uint64_t dispatch_id;          /* the packet's index in its queue */
  uint64_t (*device_ticks)(void);/* the device clock (as s_memrealtime reads it) */
} gtap_sim_hsa_item;

typedef void (*gtap_sim_hsa_kernel_fn)(const gtap_sim_hsa_item* item);

/* One per kernel, emitted by the macros; 64-byte aligned like an AMDGPU
 * kernel descriptor, whose role it plays. */
typedef struct gtap_sim_hsa_kernel_desc {
  uint32_t abi_version;
  uint32_t granularity; /* GTAP_SIM_HSA_PER_WORK_ITEM or _PER_WORK_GROUP */
  const char* name;     /* without ".kd" */
  uint32_t kernarg_segment_size;
  uint32_t kernarg_segment_alignment;
  uint32_t group_segment_size;   /* static group memory */
  uint32_t private_segment_size; /* static private memory per work-item */
  gtap_sim_hsa_kernel_fn fn;
} gtap_sim_hsa_kernel_desc;

#define GTAP_SIM_HSA_ARGS(type) ((const type*)item->kernarg)

/* Bumped whenever the layout of the two structures below changes; the
 * metadata generator refuses code objects built against another version.
 * The runtime does not read them. */
#define GTAP_SIM_HSA_ARGUMENTS_VERSION 1u

/* One kernel argument, as the code object's metadata describes it. */
typedef struct gtap_sim_hsa_arg_desc {
  const char* name;          /* the field's name */
  uint32_t offset;           /* in the kernarg segment */
  uint32_t size;
  const char* value_kind;    /* "global_buffer", "by_value", "hidden_..." */
  const char* address_space; /* "global", "local", or null */
} gtap_sim_hsa_arg_desc;

/* One per GTAP_SIM_HSA_ARGUMENTS. */
typedef struct gtap_sim_hsa_kernel_args {
  uint32_t version; /* GTAP_SIM_HSA_ARGUMENTS_VERSION */
  const gtap_sim_hsa_kernel_desc* kernel;
  /* The arguments, in order, and their count. */
  const gtap_sim_hsa_arg_desc* (*arguments)(uint32_t* count);
  const char* source_file;
} gtap_sim_hsa_kernel_args;

/* The macros put a pointer to each descriptor in the "gtap_sim_hsa_kernels"
 * section; the linker gathers them between __start_ and __stop_ symbols, and
 * gtap_sim_hsa_code_object_kernels() (the one symbol the runtime looks up)
 * returns them. It is weak so that every source file of a code object may
 * include this header. */
#define GTAP_SIM_HSA__SECTION \
  __attribute__((used, section("gtap_sim_hsa_kernels"), aligned(sizeof(void*))))

/* The runtime includes this header only for the types above. */
#ifndef GTAP_SIM_HSA_KERNEL_TYPES_ONLY

extern const gtap_sim_hsa_kernel_desc* const __start_gtap_sim_hsa_kernels[]
    __attribute__((weak, visibility("hidden")));
extern const gtap_sim_hsa_kernel_desc* const __stop_gtap_sim_hsa_kernels[]
    __attribute__((weak, visibility("hidden")));

__attribute__((weak, used, visibility("default"))) const gtap_sim_hsa_kernel_desc* const*
gtap_sim_hsa_code_object_kernels(uint32_t* count) {
  *count = (uint32_t)(__stop_gtap_sim_hsa_kernels - __start_gtap_sim_hsa_kernels);
  return __start_gtap_sim_hsa_kernels;
}

/* The argument lists, gathered the same way in "gtap_sim_hsa_arguments". */
extern const gtap_sim_hsa_kernel_args* const __start_gtap_sim_hsa_arguments[]
    __attribute__((weak, visibility("hidden")));
extern const gtap_sim_hsa_kernel_args* const __stop_gtap_sim_hsa_arguments[]
    __attribute__((weak, visibility("hidden")));

__attribute__((weak, used, visibility("default"))) const gtap_sim_hsa_kernel_args* const*
gtap_sim_hsa_code_object_arguments(uint32_t* count) {
  *count = (uint32_t)(__stop_gtap_sim_hsa_arguments - __start_gtap_sim_hsa_arguments);
  return __start_gtap_sim_hsa_arguments;
}

#endif /* GTAP_SIM_HSA_KERNEL_TYPES_ONLY */

#define GTAP_SIM_HSA_KERNEL_FULL(name, granularity, kernarg_size, kernarg_align, group_bytes,     \
                                 private_bytes)                                                   \
  static void gtap_sim_hsa__body_##name(const gtap_sim_hsa_item* item);                           \
  static const gtap_sim_hsa_kernel_desc gtap_sim_hsa__desc_##name __attribute__((aligned(64))) = { \
      GTAP_SIM_HSA_KERNEL_ABI_VERSION,                                                            \
      (granularity),                                                                              \
      #name,                                                                                      \
      (uint32_t)(kernarg_size),                                                                   \
      (uint32_t)(kernarg_align),                                                                  \
      (uint32_t)(group_bytes),                                                                    \
      (uint32_t)(private_bytes),                                                                  \
      gtap_sim_hsa__body_##name};                                                                 \
  static const gtap_sim_hsa_kernel_desc* const gtap_sim_hsa__entry_##name GTAP_SIM_HSA__SECTION = \
      &gtap_sim_hsa__desc_##name;                                                                 \
  static void gtap_sim_hsa__body_##name(const gtap_sim_hsa_item* item)

#define GTAP_SIM_HSA_KERNEL(name, args_type)                                               \
  GTAP_SIM_HSA_KERNEL_FULL(name, GTAP_SIM_HSA_PER_WORK_ITEM, sizeof(args_type),            \
                           __alignof__(args_type), 0u, 0u)
#define GTAP_SIM_HSA_GROUP_KERNEL(name, args_type, group_bytes)                            \
  GTAP_SIM_HSA_KERNEL_FULL(name, GTAP_SIM_HSA_PER_WORK_GROUP, sizeof(args_type),           \
                           __alignof__(args_type), (group_bytes), 0u)

/* The items name fields of gtap_sim_hsa__args_type, the block-scope typedef
 * GTAP_SIM_HSA__ARGUMENTS gives args_type. The list starts with a placeholder
 * (an empty initialiser list is not C) and the outer macro appends an empty
 * argument, so that a kernel without arguments needs no item and the list
 * ends with a comma, which initialisers allow. */
#define GTAP_SIM_HSA__ARG(field, value_kind, address_space)                      \
  {#field, (uint32_t)offsetof(gtap_sim_hsa__args_type, field),                   \
   (uint32_t)sizeof(((gtap_sim_hsa__args_type*)0)->field), (value_kind), (address_space)}
#define GTAP_SIM_HSA_ARG_BUFFER(field) GTAP_SIM_HSA__ARG(field, "global_buffer", "global")
#define GTAP_SIM_HSA_ARG_VALUE(field) GTAP_SIM_HSA__ARG(field, "by_value", NULL)
#define GTAP_SIM_HSA_ARG_DYNAMIC_GROUP(field) \
  GTAP_SIM_HSA__ARG(field, "dynamic_shared_pointer", "local")
#define GTAP_SIM_HSA_ARG_HIDDEN(field, value_kind) GTAP_SIM_HSA__ARG(field, value_kind, NULL)

#define GTAP_SIM_HSA_ARGUMENTS(...) GTAP_SIM_HSA__ARGUMENTS(__VA_ARGS__, )
#define GTAP_SIM_HSA__ARGUMENTS(name, args_type, ...)                                         \
  static const gtap_sim_hsa_arg_desc* gtap_sim_hsa__arguments_##name(uint32_t* count) {      \
    typedef args_type gtap_sim_hsa__args_type __attribute__((unused));                        \
    static const gtap_sim_hsa_arg_desc list[] = {{NULL, 0u, 0u, NULL, NULL}, __VA_ARGS__};    \
    *count = (uint32_t)(sizeof(list) / sizeof(list[0]) - 1u);                                 \
    return list + 1;                                                                          \
  }                                                                                           \
  static const gtap_sim_hsa_kernel_args gtap_sim_hsa__args_##name = {                        \
      GTAP_SIM_HSA_ARGUMENTS_VERSION, &gtap_sim_hsa__desc_##name,                             \
      gtap_sim_hsa__arguments_##name, __FILE__};                                              \
  static const gtap_sim_hsa_kernel_args* const gtap_sim_hsa__args_entry_##name                \
      __attribute__((used, section("gtap_sim_hsa_arguments"), aligned(sizeof(void*)))) =      \
          &gtap_sim_hsa__args_##name

#ifdef __cplusplus
}
#endif

#endif /* GTAP_SIM_HSA_KERNEL_H */
