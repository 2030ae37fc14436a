# ruff: noqa
"""Reduced OpenCL C for gpu_bf16_load_with_scan_reads_zero.py (and, likely, the SPIR-V
finding spirv_gpu_bf16_masked_load_gets_other.py): the GPU-shaped pattern of a masked
per-work-item load of a bf16 (or f16) value into a one-element private tile, a math
builtin (sqrt, asinh, exp, sin, ...) on it, the result kept in a private tile across a
barrier and stored after it. Intel's CPU OpenCL runtime (2026.22.10) stores a wrong value
(sqrt(0)); built with -cl-opt-disable and under PoCL it stores -sqrt(0.734375) = -0.857. A uniform load (x0[0]) or no
builtin (x * 2) computes right. The unreduced kernel of the finding replays right under Oclgrind
(--data-races --uninitialized, no report) and on PoCL.

Run: python3 tests/fuzz/findings/intel_gpu_shape_reduced_opencl_c.py
"""
import numpy as np
import pyopencl as cl

SOURCE = """
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void k(__global ushort* x0, __global float* o1) {
  float v1_tile[1];
  float v7_tile[1];
  long lid_x = get_local_id(0);
  bool v4 = lid_x < 16;
  if (v4) {
    long v5 = (ulong)lid_x % (ulong)2;
    long v6 = (ulong)lid_x / (ulong)2;
    if (v6 < 1 && v5 < 1) {
      v1_tile[0] = as_float((uint)x0[v6 + v5] << 16);
    }
  }
  if (v4) {
    float v2_1 = sqrt(v1_tile[0]);
    v7_tile[0] = -v2_1;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (lid_x == 0) o1[0] = v7_tile[0];
}
"""


def run(platform, options=""):
    device = platform.get_devices()[0]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, SOURCE).build(options=options)
    mf = cl.mem_flags
    x = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.array([0x3F3C], np.uint16))  # 0.734375
    out = np.full(1, 7, np.float32)
    o = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    program.k(queue, (64,), (64,), x, o)
    cl.enqueue_copy(queue, out, o)
    return float(out[0])


if __name__ == "__main__":
    expected = -float(np.sqrt(np.float32(0.734375)))
    for platform in cl.get_platforms():
        for options in ("", "-cl-opt-disable"):
            got = run(platform, options)
            verdict = "right" if abs(got - expected) < 1e-5 else "WRONG"
            print(f"{platform.name} {options or '(default)'}: {got} ({verdict}, expected {expected:.6f})")
