"""tanh on the OpenCL device: the emitter's float helper next to the rational
approximation it replaced (clamped at |x| = 7.9) and the OpenCL builtin `tanh`,
measured in one run, plus the accuracy of each against fp64.

    python3 benchmarks/tanh.py                  # 16M floats in [-10, 10]
    python3 benchmarks/tanh.py --n 4194304 --repeats 20

Each variant is a kernel of one work-item per element reading x and writing tanh(x);
the figure is the fastest of `--repeats` launches, taken in turns so that a busy
machine slows all three alike. Accuracy: the largest distance in ulps from the
correctly rounded value over every 7th float in [2^-20, 12] (both signs), and
whether the tails are exactly +-1 where the correctly rounded value is.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The helper before it was made exact in the tails (Eigen's and XLA:CPU's form).
RATIONAL_CLAMPED = """\
static inline float rational_tanh(float x) {
  x = clamp(x, -7.90531110763549805f, 7.90531110763549805f);
  float x2 = x * x;
  float p = fma(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
  p = fma(x2, p, -8.60467152213735e-11f);
  p = fma(x2, p, 5.12229709037114e-08f);
  p = fma(x2, p, 1.48572235717979e-05f);
  p = fma(x2, p, 6.37261928875436e-04f);
  p = fma(x2, p, 4.89352455891786e-03f);
  float q = fma(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
  q = fma(x2, q, 2.26843463243900e-03f);
  q = fma(x2, q, 4.89352518554385e-03f);
  return x * p / q;
}"""

VARIANTS = {"helper": "tanh_float", "rational (before)": "rational_tanh", "builtin tanh": "tanh"}


def program_source() -> str:
    from emitter_opencl.helpers import helper_source
    kernels = [f"__kernel void k{i}(__global const float* x, __global float* y) {{\n"
               f"  size_t i = get_global_id(0);\n  y[i] = {fn}(x[i]);\n}}"
               for i, fn in enumerate(VARIANTS.values())]
    return "\n\n".join([helper_source("tanh_float"), RATIONAL_CLAMPED] + kernels)


def ulps_from_correctly_rounded(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    want = np.tanh(x.astype(np.float64)).astype(np.float32)

    def ordered(v):
        bits = v.view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    return np.abs(ordered(got) - ordered(want))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--repeats", type=int, default=12)
    args = parser.parse_args()

    import pyopencl as cl
    from launcher import get_device
    dev = get_device()
    program = cl.Program(dev.context, program_source()).build()
    kernels = {name: cl.Kernel(program, f"k{i}") for i, name in enumerate(VARIANTS)}
    mf = cl.mem_flags

    def run(kernel, x):
        xb = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
        yb = cl.Buffer(dev.context, mf.WRITE_ONLY, x.nbytes)
        kernel.set_args(xb, yb)
        cl.enqueue_nd_range_kernel(dev.queue, kernel, (x.size,), None)
        y = np.empty_like(x)
        cl.enqueue_copy(dev.queue, y, yb)
        return y

    start, stop = np.float32(2.0 ** -20).view(np.int32), np.float32(12.0).view(np.int32)
    sweep = np.arange(start, stop, 7, dtype=np.int32).view(np.float32)
    sweep = np.concatenate([sweep, -sweep])
    print(f"device: {dev.name}")
    for name, kernel in kernels.items():
        got = run(kernel, sweep)
        ulps = ulps_from_correctly_rounded(got, sweep)
        want = np.tanh(sweep.astype(np.float64)).astype(np.float32)
        exact_tails = bool(np.array_equal(np.abs(got) == 1, np.abs(want) == 1))
        print(f"  {name:18s} max {int(ulps.max())} ulp (at x = {sweep[int(ulps.argmax())]:.7g}), "
              f"+-1 exactly where tanh rounds to +-1: {exact_tails}")

    x = np.random.default_rng(0).uniform(-10, 10, args.n).astype(np.float32)
    xb = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(dev.context, mf.WRITE_ONLY, x.nbytes)
    best = {name: float("inf") for name in kernels}
    for _ in range(args.repeats):
        for name, kernel in kernels.items():
            kernel.set_args(xb, yb)
            t = time.perf_counter()
            cl.enqueue_nd_range_kernel(dev.queue, kernel, (args.n,), None)
            dev.queue.finish()
            best[name] = min(best[name], time.perf_counter() - t)
    helper = best["helper"]
    print(f"time for {args.n} floats (fastest of {args.repeats}):")
    for name, seconds in best.items():
        print(f"  {name:18s} {seconds * 1e3:8.2f} ms  {seconds / helper:5.2f}x the helper")


if __name__ == "__main__":
    main()
