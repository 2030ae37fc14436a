# ruff: noqa
"""Reduced OpenCL C for gpu_bf16_load_with_scan_reads_zero.py and
spirv_gpu_bf16_masked_load_gets_other.py: a fault of Intel's CPU OpenCL runtime
(2026.22.10), device quirk fneg_across_barrier (triton_spirv/target.py). A float negation
(LLVM `fneg`: -x, x * -1.0f, -0.0f - x, the sign bit flipped by an integer xor) whose
result a work-item keeps in private memory across a barrier is kept once for the whole
work-group: after the barrier every work-item reads one work-item's value (of the last
vector of work-items; here work-items 16-63 write nothing, so -0.0 or garbage). Nothing
in the code is undefined (the private tile is initialized on every path): PoCL, Oclgrind
and Intel's build with -cl-opt-disable (or with its vectorizer off,
CL_CONFIG_USE_VECTORIZER=False) compute it right, and so does Intel's default build of
fma(x, -1.0f, -0.0f), the exact negation the compiler emits instead on Intel in kernels
that hold barriers (memref_stage/barrier_negations.py). The bf16 load and the math
builtin of the findings are not needed. Test: tests/test_intel_quirks.py.

Run: python3 tests/fuzz/findings/intel_gpu_shape_reduced_opencl_c.py (prints each
platform's result for the plain form and the emitted form; exits 1 when the emitted form
is wrong anywhere)
"""
import numpy as np
import pyopencl as cl

SOURCE = """
__attribute__((reqd_work_group_size(64, 1, 1)))
__kernel void k(__global ushort* x0, __global float* o1) {
  float v1_tile[1] = {1.0f};
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
    v7_tile[0] = NEGATION;
  }
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (lid_x == 0) o1[0] = v7_tile[0];
}
"""


PLAIN = "-v2_1"
EMITTED_ON_INTEL = "fma(v2_1, -1.0f, -0.0f)"


def run(platform, options="", negation=PLAIN):
    device = platform.get_devices()[0]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, SOURCE.replace("NEGATION", negation)).build(options=options)
    mf = cl.mem_flags
    x = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.array([0x3F3C], np.uint16))  # 0.734375
    out = np.full(1, 7, np.float32)
    o = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    program.k(queue, (64,), (64,), x, o)
    cl.enqueue_copy(queue, out, o)
    return float(out[0])


if __name__ == "__main__":
    import sys

    expected = -float(np.sqrt(np.float32(0.734375)))
    emitted_wrong = False
    for platform in cl.get_platforms():
        for negation, options in ((PLAIN, ""), (PLAIN, "-cl-opt-disable"), (EMITTED_ON_INTEL, "")):
            got = run(platform, options, negation)
            right = abs(got - expected) < 1e-5
            emitted_wrong |= negation == EMITTED_ON_INTEL and not right
            print(f"{platform.name} {negation} {options or '(default)'}: {got} "
                  f"({'right' if right else 'WRONG'}, expected {expected:.6f})")
    sys.exit(1 if emitted_wrong else 0)
