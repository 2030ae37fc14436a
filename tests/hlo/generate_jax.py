"""Generates the XLA-printed HLO test data: for each function below, the HLO that XLA:CPU
prints after compiling it (`jax.jit(f).lower(*args).compile().as_text()`), the inputs and
JAX's outputs (the reference). Run once with JAX installed:

    python tests/hlo/generate_jax.py

Tests read tests/hlo/jax/<name>.hlo and <name>.npz without needing JAX.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax")
rng = np.random.default_rng(1234)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def gelu(x):
    return jax.nn.gelu(x, approximate=True)


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def integer_ops(a, b):
    b = jnp.where(b == 0, 3, b)
    return (a // b) + (a % b) * 7 + (a << 2) - (a >> 1) + (a & b) - (a | 5) ^ b


def select_clip(x, y):
    return jnp.where(x > y, jnp.clip(x, -0.5, 0.5), y * 2) + jnp.isfinite(x / y)


def math_mix(x, y):
    return lax.erf(x) + jax.nn.sigmoid(y) + jnp.arctan2(x, y) + jnp.abs(x) ** 1.5 + jnp.sign(y)


CASES = {
    "gelu_f32": (gelu, [normal(64, 256)]),
    "gelu_bf16": (gelu, [normal(6, 64, 128).astype(jnp.bfloat16)]),
    "softmax": (lambda x: jax.nn.softmax(x, axis=-1), [normal(8, 128)]),
    "layer_norm": (layer_norm, [normal(16, 64), normal(64), normal(64)]),
    "row_sum": (lambda x: jnp.sum(x * x, axis=1), [normal(32, 100)]),
    "column_sum": (lambda x: jnp.sum(jnp.exp(x), axis=0), [normal(100, 48)]),
    "full_mean": (lambda x: jnp.mean(x), [normal(37, 53)]),
    "argmax": (lambda x: jnp.argmax(x, axis=1), [normal(16, 40)]),
    "transpose_exp": (lambda x: jnp.exp(x.T) + 1.0, [normal(64, 96)]),
    "matmul_bias": (lambda a, b, c: jnp.tanh(a @ b + c), [normal(16, 32), normal(32, 24), normal(24)]),
    "concat_slices": (lambda x, y: jnp.concatenate([x[:, :3], y * 2.0, x[:, ::2]], axis=1),
                      [normal(10, 8), normal(10, 5)]),
    "pad": (lambda x: jnp.pad(x, ((1, 2), (0, 3)), constant_values=-1.0) * 2.0, [normal(7, 9)]),
    "dynamic_update_slice": (lambda x, u, i: lax.dynamic_update_slice(x, u * 3.0, (i, np.int32(2))),
                             [normal(12, 10), normal(3, 4), np.array(5, np.int32)]),
    "scatter_add": (lambda x, idx, u: x.at[idx].add(u),
                    [normal(10, 4), np.array([1, 3, 1, 9, 0], np.int32), normal(5, 4)]),
    "gather_take": (lambda x, idx: jnp.take(x, idx, axis=0) * 2.0,
                    [normal(20, 6), np.array([3, 0, 19, 7, 7], np.int32)]),
    "cumsum": (lambda x: jnp.cumsum(x, axis=1), [normal(6, 50)]),
    "max_pool": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID"),
                 [normal(16, 20)]),
    "integer_ops": (integer_ops, [rng.integers(-1000, 1000, (8, 16)).astype(np.int32),
                                  rng.integers(-9, 9, (8, 16)).astype(np.int32)]),
    "select_clip": (select_clip, [normal(12, 12), normal(12, 12)]),
    "math_mix": (math_mix, [normal(9, 33), normal(9, 33)]),
    "iota_reverse": (lambda x: x[::-1] + jnp.arange(x.shape[0], dtype=jnp.float32)[:, None],
                     [normal(11, 7)]),
    "f64_u8": (lambda x, y: (x * 2.5).astype(jnp.float64) + (y // 3).astype(jnp.float64),
               [normal(5, 6), rng.integers(0, 255, (5, 6)).astype(np.uint8)]),
    "batched_dot": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b), [normal(3, 8, 5), normal(3, 5, 6)]),
}


def main():
    jax.config.update("jax_enable_x64", True)
    os.makedirs(HERE, exist_ok=True)
    for name, (fn, args) in CASES.items():
        jitted = jax.jit(fn)
        text = jitted.lower(*args).compile().as_text()
        outputs = jitted(*args)
        outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        with open(os.path.join(HERE, f"{name}.hlo"), "w") as f:
            f.write(text)
        arrays = {f"arg{k}": np.asarray(a.astype(np.float32) if a.dtype == jnp.bfloat16 else a)
                  for k, a in enumerate(args)}
        arrays.update({f"out{k}": np.asarray(o.astype(jnp.float32) if o.dtype == jnp.bfloat16 else o)
                       for k, o in enumerate(outputs)})
        np.savez(os.path.join(HERE, f"{name}.npz"), **arrays)
        print(name, len(text.splitlines()), "lines")


if __name__ == "__main__":
    main()
