"""Whole modules that XLA:CPU itself printed (tests/hlo/jax/, made by generate_jax.py):
read, compiled (one kernel set per fusion and per unfused instruction) and run on the
OpenCL device, against JAX's own outputs stored next to them."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

from hlo_helpers import hlo_path
from triton_spirv.hlo import read_hlo_file
from triton_spirv.hlo.runtime import ModuleRunner

NAMES = sorted(os.path.basename(p)[:-4] for p in glob.glob(hlo_path("jax", "*.hlo")))
SLOW = {"softmax", "layer_norm", "cumsum"}
TOLERANCE = {"gelu_bf16": 2e-2, "full_mean": 1e-5, "column_sum": 1e-5, "row_sum": 1e-5,
             "layer_norm": 1e-5, "softmax": 1e-6}


def run_case(name):
    module = read_hlo_file(hlo_path("jax", f"{name}.hlo"))
    data = np.load(hlo_path("jax", f"{name}.npz"))
    runner = ModuleRunner(module)
    outputs = runner.run([data[f"arg{k}"] for k in range(len(module.entry.parameters))])
    for k, out in enumerate(outputs):
        expected = data[f"out{k}"]
        assert out.shape == expected.shape
        tol = TOLERANCE.get(name, 1e-5)
        if np.issubdtype(expected.dtype, np.floating):
            np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(out, expected)
    return runner


def test_at_least_fifteen_xla_modules():
    assert len(NAMES) >= 15


@pytest.mark.parametrize("name", [n if n not in SLOW else pytest.param(n, marks=pytest.mark.slow)
                                  for n in NAMES])
def test_xla_printed_module(name):
    run_case(name)


@pytest.mark.parametrize("name, emitter", [("softmax", "reduction"), ("layer_norm", "reduction")])
def test_softmax_and_layer_norm_as_xla_fuses_them(name, emitter):
    runner = run_case(name)
    assert emitter in [f.report.emitter for f in runner.fusions.values()]


def test_command_line_run_and_emit(tmp_path):
    data = np.load(hlo_path("jax", "matmul_bias.npz"))
    inputs = tmp_path / "in.npz"
    np.savez(inputs, **{k: data[k] for k in data if k.startswith("arg")})
    out = tmp_path / "out.npz"
    cli = [sys.executable, "-m", "triton_spirv.hlo.cli"]
    path = hlo_path("jax", "matmul_bias.hlo")
    subprocess.run(cli + ["run", path, "--inputs", str(inputs), "--out", str(out)], check=True)
    np.testing.assert_allclose(np.load(out)["out0"], data["out0"], rtol=1e-5, atol=1e-5)
    subprocess.run(cli + ["emit", path, "-o", str(tmp_path / "emit")], check=True)
    report = (tmp_path / "emit" / "report.txt").read_text()
    assert "emitter=" in report and "launch:" in report and "indexing:" in report
    assert len(list((tmp_path / "emit").glob("*.cl"))) >= 2


def test_against_live_jax():
    import jax
    import jax.numpy as jnp
    from triton_spirv.hlo import read_hlo

    def f(x, y):
        return jnp.sum(jnp.tanh(x) * y, axis=0) + jnp.max(x)
    x = np.random.default_rng(3).standard_normal((24, 40)).astype(np.float32)
    y = np.random.default_rng(4).standard_normal((24, 40)).astype(np.float32)
    text = jax.jit(f).lower(x, y).compile().as_text()
    out = ModuleRunner(read_hlo(text)).run([x, y])[0]
    np.testing.assert_allclose(out, np.asarray(jax.jit(f)(x, y)), rtol=1e-5, atol=1e-5)
