/* Hand-written GPU kernels for the warp-model table (benchmarks/warp_model.py): the
 * form a GPU engineer would write for each family of scripts/gpu_replay/record.py, at
 * its "small" sizes, 128 work-items per group (num_warps 4, as ours; the transpose
 * 32 x 8, as the usual padded-tile transpose). Row kernels run
 * one group per row; each work-item keeps its elements in registers (read once,
 * lid-consecutive) and a row's statistics reduce through one __local array per step. */

#define GROUP 128

/* A transpose through a padded tile (32 x 33: one word of padding per row), 32 x 8
 * work-items per group. */
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void transpose_ref(__global const float* x, __global float* y, int rows, int cols) {
  __local float tile[32][33];                      /* one word of padding per row */
  int c = get_group_id(0) * 32 + get_local_id(0), r0 = get_group_id(1) * 32;
  for (int j = get_local_id(1); j < 32; j += 8)
    if (r0 + j < rows && c < cols) tile[j][get_local_id(0)] = x[(r0 + j) * cols + c];
  barrier(CLK_LOCAL_MEM_FENCE);
  int r = r0 + get_local_id(0), c0 = get_group_id(0) * 32;
  for (int j = get_local_id(1); j < 32; j += 8)
    if (c0 + j < cols && r < rows) y[(c0 + j) * rows + r] = tile[get_local_id(0)][j];
}

/* Sum of a work-group's `value`s, for every work-item: partials in __local, 16
 * work-items fold 8 each, every work-item reads the 16 results (a broadcast). Two
 * barriers; `partial` must not be reused before a third (the caller's). */
inline float group_sum(float value, __local float* partial, __local float* sums) {
  const int lid = get_local_id(0);
  partial[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 16) {
    float s = 0.0f;
    for (int i = 0; i < 8; ++i) s += partial[lid + 16 * i];   /* lid-consecutive: no conflict */
    sums[lid] = s;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float total = 0.0f;
  for (int i = 0; i < 16; ++i) total += sums[i];
  return total;
}

inline float group_max(float value, __local float* partial, __local float* maxima) {
  const int lid = get_local_id(0);
  partial[lid] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 16) {
    float m = -INFINITY;
    for (int i = 0; i < 8; ++i) m = fmax(m, partial[lid + 16 * i]);
    maxima[lid] = m;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float total = -INFINITY;
  for (int i = 0; i < 16; ++i) total = fmax(total, maxima[i]);
  return total;
}

/* out = x + y, 1024 elements per group: each work-item two float4s, 512 bytes apart,
 * so that a warp's 32 float4s are 512 consecutive bytes. */
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void vector_add_ref(__global const float* x, __global const float* y, __global float* out, int n) {
  for (int part = 0; part < 2; ++part) {
    const int i = get_group_id(0) * 1024 + part * 512 + get_local_id(0) * 4;
    if (i + 4 <= n) {
      vstore4(vload4(0, x + i) + vload4(0, y + i), 0, out + i);
    } else {
      for (int j = i; j < n; ++j) out[j] = x[j] + y[j];
    }
  }
}

/* Row softmax, a row of `cols` <= 256 per group: elements lid and lid + 128. */
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void softmax_ref(__global const float* x, __global float* out, int cols) {
  __local float partial[2][GROUP];
  __local float folded[2][16];
  const int lid = get_local_id(0);
  __global const float* row = x + (size_t)get_group_id(0) * cols;
  const float a = lid < cols ? row[lid] : -INFINITY;
  const float b = lid + GROUP < cols ? row[lid + GROUP] : -INFINITY;
  const float m = group_max(fmax(a, b), partial[0], folded[0]);
  const float ea = exp(a - m), eb = exp(b - m);
  const float inverse = 1.0f / group_sum(ea + eb, partial[1], folded[1]);
  __global float* result = out + (size_t)get_group_id(0) * cols;
  if (lid < cols) result[lid] = ea * inverse;
  if (lid + GROUP < cols) result[lid + GROUP] = eb * inverse;
}

/* Layer norm of fp16 rows (`cols` <= 256), fp32 statistics, as tutorial 05. */
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void layer_norm_ref(__global const half* x, __global const half* w, __global const half* b,
                    __global half* y, __global float* mean_out, __global float* rstd_out,
                    int cols, float eps) {
  __local float partial[2][GROUP];
  __local float folded[2][16];
  const int lid = get_local_id(0), row = get_group_id(0);
  __global const half* xr = x + (size_t)row * cols;
  const bool has_a = lid < cols, has_b = lid + GROUP < cols;
  const float a = has_a ? vload_half(lid, xr) : 0.0f;
  const float c = has_b ? vload_half(lid + GROUP, xr) : 0.0f;
  const float mean = group_sum(a + c, partial[0], folded[0]) / cols;
  const float da = has_a ? a - mean : 0.0f, dc = has_b ? c - mean : 0.0f;
  const float rstd = rsqrt(group_sum(da * da + dc * dc, partial[1], folded[1]) / cols + eps);
  __global half* yr = y + (size_t)row * cols;
  if (has_a) vstore_half(da * rstd * vload_half(lid, w) + vload_half(lid, b), lid, yr);
  if (has_b) vstore_half(dc * rstd * vload_half(lid + GROUP, w) + vload_half(lid + GROUP, b), lid + GROUP, yr);
  if (lid == 0) { mean_out[row] = mean; rstd_out[row] = rstd; }
}

/* Inclusive prefix sums of rows (`cols` <= 256): work-item lid owns elements 2 lid and
 * 2 lid + 1 (a warp reads 256 consecutive bytes); the 128 pair sums scan in __local,
 * ping-ponging two arrays (one barrier per step). */
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void cumsum_ref(__global const float* x, __global float* out, int cols) {
  __local float scan[2][GROUP];
  const int lid = get_local_id(0), first = 2 * lid;
  __global const float* row = x + (size_t)get_group_id(0) * cols;
  const float2 pair = first + 1 < cols ? vload2(lid, row) : (float2)(first < cols ? row[first] : 0.0f, 0.0f);
  const float a = pair.x, b = pair.y;
  int from = 0;
  scan[0][lid] = a + b;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 1; step < GROUP; step *= 2) {
    const float add = lid >= step ? scan[from][lid - step] : 0.0f;
    scan[1 - from][lid] = scan[from][lid] + add;
    from = 1 - from;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float before = scan[from][lid] - (a + b);
  __global float* result = out + (size_t)get_group_id(0) * cols;
  if (first + 1 < cols) vstore2((float2)(before + a, before + a + b), lid, result);
  else if (first < cols) result[first] = before + a;
}

/* Row sums (`cols` <= 256 per row), one group per row. */
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))
void row_sum_ref(__global const float* x, __global float* out, int cols) {
  __local float partial[GROUP];
  __local float folded[16];
  const int lid = get_local_id(0);
  __global const float* row = x + (size_t)get_group_id(0) * cols;
  const float value = (lid < cols ? row[lid] : 0.0f) + (lid + GROUP < cols ? row[lid + GROUP] : 0.0f);
  const float total = group_sum(value, partial, folded);
  if (lid == 0) out[get_group_id(0)] = total;
}
