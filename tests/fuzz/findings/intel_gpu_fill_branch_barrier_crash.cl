/* Intel's OpenCL CPU runtime 2026.22.10: its compiler dies (SIGSEGV in its pass
   "sycl-kernel-reduce-cross-barrier-values") building this kernel optimized, reduced
   from tests/fuzz/findings/intel_gpu_cumsum_cross_barrier_crash.py: a value a
   work-item keeps (`kept`, a masked load held in a private array) across a barrier at
   the end of a partial tile's fill branch (`if (is_partial)`), each such branch
   followed by a loop of async work-group copies. With -cl-opt-disable, on PoCL, or
   with each barrier after its branch (-D BARRIER_AFTER_FILL: quirk
   barrier_in_fill_branch's form) it builds and writes OUT [1, 0, 0, ...].
   Work-group of 128, rows = 1, column = 0, y[0] = 5. */
#ifdef BARRIER_AFTER_FILL
#define BARRIER_IN_BRANCH
#define BARRIER_AFTER_BRANCH barrier(CLK_LOCAL_MEM_FENCE);
#else
#define BARRIER_IN_BRANCH barrier(CLK_LOCAL_MEM_FENCE);
#define BARRIER_AFTER_BRANCH
#endif

__kernel void k(__global const float* x, __global const int* y, __global const int* z, int rows, int column, __global int* out) {
  __local int column_ids[16];
  __local int row_ids[2];
  __local uchar flags[128];
  __local float a[32];
  int kept = 0;
  __local int b[32];
  long lid = get_local_id(0);
  if (lid < 2) row_ids[lid] = column + lid;
  int first = column * 16;
  for (long i = lid; i < 16; i += 128) {
    column_ids[i] = first + i;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (long i = lid; i < 32; i += 128) {
    flags[i] = row_ids[i / 16] <= column_ids[i % 16];
  }
  long extent = rows;
  long extent_1 = min(1 - (long)first, 16L);
  bool is_partial = (extent != 2) | (extent_1 != 16);
  if (is_partial) {
    for (long i = lid; i < 8; i += 128) {
      a[i] = 1.0f;
    }
    BARRIER_IN_BRANCH
  }
  BARRIER_AFTER_BRANCH
  event_t ev = 0;
  for (long r = 0; r < extent; ++r) {
    ev = async_work_group_strided_copy(a + r * 16, x + r, extent_1, 2, ev);
  }
  if (lid < 32) {
    if ((lid / 16 < extent) & (lid % 16 < extent_1)) {
      kept = y[lid];
    }
  }
  if (is_partial) {
    for (long i = lid; i < 32; i += 128) {
      b[i] = 0;
    }
    BARRIER_IN_BRANCH
  }
  BARRIER_AFTER_BRANCH
  event_t ev_1 = 0;
  for (long r = 0; r < extent; ++r) {
    ev_1 = async_work_group_copy(b + r * 16, z + r, extent_1, ev_1);
  }
  bool flag = flags[lid];
  if (lid < 32) out[lid] = flag & (kept > 0);
}
