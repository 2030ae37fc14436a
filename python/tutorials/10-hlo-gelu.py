"""The seed's GELU fusion through the HLO frontend, timed next to XLA:CPU (JAX).

    python3 python/tutorials/10-hlo-gelu.py [--dtype f32|bf16]

Reads the seed's module (tests/hlo/seed_gelu.hlo; f32 variant by substitution),
compiles its fusion with the loop emitter, prints the report and the generated
OpenCL C, checks the result against numpy, then times the fusion's kernel (median
after warm-up) and, when JAX is installed, the same function jitted by XLA:CPU.
"""
import argparse
import os
import statistics
import time

import numpy as np

from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.runtime import ModuleRunner, to_storage

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = os.path.join(HERE, "..", "..", "tests", "hlo", "seed_gelu.hlo")


def median_seconds(fn, warmup=3, repeat=15):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    args = parser.parse_args()
    text = open(SEED).read().replace("bf16", args.dtype)
    runner = ModuleRunner(read_hlo(text))
    fusion = runner.compile_all()[0]
    kernel = fusion.kernels[0]
    print(fusion.report)
    print(kernel.source[:1500], "...\n")

    x = np.random.default_rng(0).standard_normal((6, 512, 4096)).astype(np.float32)
    out = runner.run([x])[0]
    xr = x if args.dtype == "f32" else out  # bf16 inputs are rounded on the way in
    if args.dtype == "f32":
        ref = x * 0.5 * (1 + np.tanh(0.79785 * (x + 0.044708 * x ** 3)))
        print(f"max |error| vs numpy: {np.abs(out - ref).max():.3g}")
    del xr

    element = fusion.computation.root.shape.element
    x_storage = to_storage(x, element)
    y_storage = np.empty(x.size, dtype=x_storage.dtype)
    ours = median_seconds(lambda: runner.launch(kernel, [x_storage, y_storage]))
    nbytes = x_storage.nbytes * 2
    print(f"OpenCL (HLO frontend) GELU {args.dtype}[6,512,4096]: {ours * 1e3:.2f} ms "
          f"({nbytes / ours / 1e9:.1f} GB/s)")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("JAX is not installed: no XLA:CPU comparison")
        return
    dtype = jnp.float32 if args.dtype == "f32" else jnp.bfloat16

    @jax.jit
    def gelu(v):
        return v * 0.5 * (1 + jnp.tanh(0.79785 * (v + 0.044708 * v * v * v)))
    xj = jnp.asarray(x, dtype=dtype)
    xla = median_seconds(lambda: gelu(xj).block_until_ready())
    print(f"XLA:CPU (JAX {jax.__version__}) GELU {args.dtype}[6,512,4096]: {xla * 1e3:.2f} ms "
          f"({nbytes / xla / 1e9:.1f} GB/s)")


if __name__ == "__main__":
    main()
