// Kernels compiled for several AMDGPU targets at build time; the tests check
// that the parsed metadata matches these declarations. There are no device
// libraries, so work-item ids come from the __builtin_amdgcn_* intrinsics.

typedef struct {
  float scale;
  int offset;
  float bias[2];
} scale_params;  // 16 bytes, passed by value

kernel void vector_add(global const float* a, global const float* b, global float* c, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}

kernel void scale_by_struct(global float* data, scale_params p, ulong count) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < count) data[i] = data[i] * p.scale + p.bias[0] + p.bias[1] + p.offset;
}

// 512 bytes of static LDS plus a dynamic LDS pointer, fixed work-group size.
__attribute__((reqd_work_group_size(64, 1, 1)))
kernel void tile_sum(global const int* in, global int* out, local int* scratch) {
  local int fixed[128];
  uint l = __builtin_amdgcn_workitem_id_x();
  uint i = __builtin_amdgcn_workgroup_id_x() * 64 + l;
  scratch[l] = in[i];
  fixed[l] = in[i] * 2;
  fixed[l + 64] = in[i] * 3;
  __builtin_amdgcn_s_barrier();
  out[i] = scratch[63 - l] + fixed[127 - l];
}

// Reading the implicit arguments (the global offset comes first) makes the
// compiler keep the hidden kernel arguments in the metadata.
kernel void offset_fill(global uint* out, uint value) {
  constant ulong* implicit = (constant ulong*)__builtin_amdgcn_implicitarg_ptr();
  ulong gid = implicit[0] + __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  out[gid] = value;
}
