"""HLO benchmark cases: our HLO frontend next to XLA:CPU (JAX) on the same machine."""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SEED_GELU = os.path.join(HERE, "..", "tests", "hlo", "seed_gelu.hlo")

TRANSPOSE = """HloModule transpose

fused_transpose {
  p = f32[4096,4096]{1,0} parameter(0)
  ROOT t = f32[4096,4096]{1,0} transpose(p), dimensions={1,0}
}

ENTRY main {
  x = f32[4096,4096]{1,0} parameter(0)
  ROOT f = f32[4096,4096]{1,0} fusion(x), kind=kInput, calls=fused_transpose
}
"""

ROW_REDUCTION = """HloModule row_sum

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused_reduce {
  p = f32[4096,4096]{1,0} parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4096]{0} reduce(p, zero), dimensions={1}, to_apply=add
}

ENTRY main {
  x = f32[4096,4096]{1,0} parameter(0)
  ROOT f = f32[4096]{0} fusion(x), kind=kInput, calls=fused_reduce
}
"""


def _interleaved_ms(calls: dict, warmup=3, repeat=15) -> dict:
    """Median milliseconds of each call, timed alternately call by call, so that a burst
    of load on a busy machine lands on every side alike (timing one side's repeats and
    then the other's swung the ratio from 0.6x to 4.8x between runs)."""
    import statistics
    import time
    for fn in calls.values():
        for _ in range(warmup):
            fn()
    times = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def _xla_call(fn, x):
    """XLA:CPU's compiled version of `fn`, or why there is none."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return "jax not installed"
    jitted = jax.jit(fn(jnp))
    xj = jax.device_put(x)
    return lambda: jitted(xj).block_until_ready()


def _run_case(text, x, reference, xla_fn, name, nbytes):
    from triton_spirv.hlo import read_hlo
    from triton_spirv.hlo.runtime import ModuleRunner
    runner = ModuleRunner(read_hlo(text))
    out = runner.run([x])[0]
    if not np.allclose(out, reference, rtol=1e-4, atol=1e-4):
        raise AssertionError(f"{name}: differs from numpy by {np.abs(out - reference).max()}")
    target = [np.empty_like(out)]
    calls = {"ours": lambda: runner.run([x], out=target)}
    xla = _xla_call(xla_fn, x)
    if callable(xla):
        calls["xla_cpu"] = xla
    ms = _interleaved_ms(calls)
    rate = lambda ms: nbytes / (ms * 1e-3) / 1e9  # noqa: E731
    peers = {"xla_cpu": {"ms": ms["xla_cpu"], "rate": rate(ms["xla_cpu"])} if callable(xla)
             else {"skipped": xla}}
    return {"case": name, "unit": "GB/s", "ours": {"ms": ms["ours"], "rate": rate(ms["ours"])},
            "peers": peers}


def hlo_gelu(quick=False):
    text = open(SEED_GELU).read().replace("bf16", "f32")
    shape = (6, 512, 4096)
    if quick:
        text, shape = text.replace("6,512,4096", "2,128,1024"), (2, 128, 1024)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    reference = x * 0.5 * (1 + np.tanh(0.79785 * (x + 0.044708 * x ** 3)))
    gelu = lambda jnp: lambda v: v * 0.5 * (1 + jnp.tanh(0.79785 * (v + 0.044708 * v ** 3)))  # noqa: E731
    return _run_case(text, x, reference, gelu, f"hlo_gelu f32{list(shape)}", 2 * x.nbytes)


def hlo_transpose(quick=False):
    n = 1024 if quick else 4096
    text = TRANSPOSE.replace("4096", str(n))
    x = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    return _run_case(text, x, x.T, lambda jnp: lambda v: jnp.transpose(v),
                     f"hlo_transpose f32[{n},{n}]", 2 * x.nbytes)


def hlo_row_reduction(quick=False):
    n = 1024 if quick else 4096
    text = ROW_REDUCTION.replace("4096", str(n))
    x = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    return _run_case(text, x, x.sum(axis=1), lambda jnp: lambda v: jnp.sum(v, axis=1),
                     f"hlo_row_reduction f32[{n},{n}]", x.nbytes)
