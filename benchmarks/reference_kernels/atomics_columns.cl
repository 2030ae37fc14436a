// Hand-written GPU kernels: what the GPU shape of a tensor atomic and of a column sum
// should look like on the warp model (benchmarks/warp_atomics_columns.py).

// A histogram: each work-item loads its elements of the block (lid-consecutive, a warp
// reads 128 contiguous bytes) and runs their atomics itself.
__kernel void histogram_atomics(__global const int* x, __global int* bins, int n,
                                int block) {
  int start = get_group_id(0) * block;
  for (int i = get_local_id(0); i < block; i += get_local_size(0)) {
    int k = start + i;
    if (k < n) atomic_add(&bins[x[k]], 1);
  }
}

// The sum of each column of a [rows, cols] matrix over a COLS-wide slab per group:
// work-item lid sums column lid % COLS over the rows strip, strip + STRIPS, ... with
// STRIPS = local size / COLS (a warp reads whole rows); the partials meet in __local
// memory after one barrier, and the first COLS work-items add them up.
__kernel void column_sum_strips(__global const float* x, __global float* out, int rows,
                                int cols, int COLS, __local float* partials) {
  int lid = get_local_id(0);
  int strips = get_local_size(0) / COLS;
  int column = lid % COLS, strip = lid / COLS;
  int c = get_group_id(0) * COLS + column;
  float sum = 0.0f;
  if (c < cols)
    for (int r = strip; r < rows; r += strips) sum += x[r * cols + c];
  partials[strip * COLS + column] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < COLS && c < cols) {
    float total = partials[column];
    for (int s = 1; s < strips; ++s) total += partials[s * COLS + column];
    out[c] = total;
  }
}
