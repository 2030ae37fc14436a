"""Generates the XLA-printed HLO test data of rank-0 (scalar) results: for each function
below, the HLO that XLA prints for it, the inputs and JAX's outputs (the reference), in
tests/hlo/rank0/:

    <name>.cpu.hlo      XLA:CPU after optimization (`jit(f).lower(*args).compile().as_text()`)
    <name>.lowered.hlo  unoptimized (`jit(f).lower(*args).as_text(dialect="hlo")`)
    <name>.npz          inputs arg0.. and JAX:CPU outputs out0..

Run once with JAX installed:

    JAX_PLATFORMS=cpu python tests/hlo/generate_rank0.py

Tests (tests/test_hlo_rank0.py) read the files without needing JAX.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rank0")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rng = np.random.default_rng(2718)


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CASES = {
    "sum": (lambda x: jnp.sum(x), [normal(37, 53)]),
    "max": (lambda x: jnp.max(x), [normal(37, 53)]),
    "min_rank3": (lambda x: jnp.min(x), [normal(7, 13, 5)]),
    "prod_rank1": (lambda x: jnp.prod(x), [rng.uniform(0.9, 1.1, (101,)).astype(np.float32)]),
    "mean": (lambda x: jnp.mean(x), [normal(37, 53)]),
    "sum_times_y": (lambda x, y: x.sum() * y, [normal(37, 53), normal(5)]),
    "int_sum": (lambda x: jnp.sum(x), [rng.integers(-50, 50, (3, 33)).astype(np.int32)]),
    "scalar_math": (lambda a, b: jnp.exp(a * b) + jnp.tanh(a) - b,
                    [np.float32(0.75), np.float32(-1.25)]),
    "dynamic_slice": (lambda x, i: lax.dynamic_slice(x, (i,), (1,))[0] * 2.0,
                      [normal(9), np.array(4, np.int32)]),
    "dynamic_slice_2d": (lambda x, i, j: lax.dynamic_slice(x, (i, j), (1, 1))[0, 0] + 1.0,
                         [normal(6, 7), np.array(2, np.int32), np.array(9, np.int32)]),
    "dynamic_update_slice": (lambda x, v, i: lax.dynamic_update_slice(x, v[None] * 3.0, (i,)),
                             [normal(9), np.float32(1.5), np.array(7, np.int32)]),
    "scatter_scalar_update": (lambda x, i, v: x.at[i].add(v),
                              [normal(9), np.array(-2, np.int32), np.float32(2.5)]),
    "sum_and_scaled": (lambda x: (jnp.sum(x), x * 2.0), [normal(11)]),
    "norm": (lambda x: jnp.sqrt(jnp.sum(x * x)), [normal(3, 5, 17)]),
}


def write(name: str, kind: str, text: str) -> None:
    with open(os.path.join(HERE, f"{name}.{kind}.hlo"), "w") as f:
        f.write(text.replace(ROOT + os.sep, ""))    # source paths relative to the repository


def main() -> None:
    os.makedirs(HERE, exist_ok=True)
    for name, (fn, args) in CASES.items():
        jitted = jax.jit(fn)
        write(name, "cpu", jitted.lower(*args).compile().as_text())
        write(name, "lowered", jitted.lower(*args).as_text(dialect="hlo"))
        outputs = jitted(*args)
        outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        arrays = {f"arg{k}": np.asarray(a) for k, a in enumerate(args)}
        arrays.update({f"out{k}": np.asarray(o) for k, o in enumerate(outputs)})
        np.savez(os.path.join(HERE, f"{name}.npz"), **arrays)
        print(name)


if __name__ == "__main__":
    main()
