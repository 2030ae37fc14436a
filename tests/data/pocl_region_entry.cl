// PoCL 3.1 (work-group methods loopvec and workitemloops alike) drops work-item 0's copy
// into a_tile below: the copy is lost when the masked clear of b_tile follows it before
// the next barrier. Intel's OpenCL runtime and Oclgrind (no data race) copy it. Built
// with -DSHARED_COPY, every work-item converts its own elements of the block instead, as
// GPU-shaped kernels do (memref_stage/shared_copies.py), and PoCL copies them too.
//
// Per step: a_tile gets a rows x n block of fp16 `a` (n = the step's columns, up to 16:
// 16 at a time, then the rest of each row); every work-item clears its part of b_tile
// when the block is partial; work-item 0 fills b_tile; every work-item copies a_tile out.
__attribute__((reqd_work_group_size(128, 1, 1)))
__kernel void region_entry(__global const half* a, __global float* out, int rows, int cols,
                           int steps) {
  __local float a_tile[16 * 16];
  __local float b_tile[16 * 32];
  long lid = get_local_id(0);
  for (int step = 0; step < steps; ++step) {
    long n = min(max((long)(cols - step * 16), 0L), 16L);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (n != 16) {
      for (long j = lid * 2; j < 256; j += 256) {
        a_tile[j] = 0.0f;
        a_tile[j + 1] = 0.0f;
      }
    }
    bool first = lid == 0;
    barrier(CLK_LOCAL_MEM_FENCE);
#ifdef SHARED_COPY
    for (long e = lid; e < rows * n; e += 128)
      a_tile[e / n * 16 + e % n] = vload_half(e / n * cols + step * 16 + e % n, a);
#else
    if (first) {
      for (long r = 0; r < rows; ++r) {
        for (long c = 0; c < n / 16 * 16; c += 16)
          vstore16(vload_half16(0, a + r * cols + step * 16 + c), 0, a_tile + r * 16 + c);
        for (long c = n / 16 * 16; c < n; ++c)
          a_tile[r * 16 + c] = vload_half(r * cols + step * 16 + c, a);
      }
    }
#endif
    if (n != 16) {
      for (long j = lid * 4; j < 512; j += 512)
        for (long k = 0; k < 4; ++k)
          b_tile[j + k] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (first) {
      for (long r = 0; r < n; ++r)
        vstore16(vload_half16(0, a + r * cols), 0, b_tile + r * 32);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long j = lid; j < 256; j += 128)
      out[step * 256 + j] = a_tile[j];
  }
}
