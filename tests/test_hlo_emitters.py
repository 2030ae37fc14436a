"""Each emitter end to end on the OpenCL device, against numpy references."""
import numpy as np
import pytest

from hlo_helpers import gelu_reference, hlo_path, run_file
from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.runtime import ModuleRunner
from triton_spirv.hlo.target import TRANSPOSE_ENV

rng = np.random.default_rng(7)


def seed_gelu_text(dtype: str, dims: str) -> str:
    text = open(hlo_path("seed_gelu.hlo")).read()
    return text.replace("bf16", dtype).replace("6,512,4096", dims)


def emitters_of(runner):
    return [f.report.emitter for f in runner.fusions.values()]


@pytest.mark.parametrize("dtype, tol", [("f32", 1e-5), ("bf16", 3e-2), ("f16", 3e-3)])
def test_seed_gelu_small(dtype, tol):
    runner = ModuleRunner(read_hlo(seed_gelu_text(dtype, "6,8,64")))
    x = rng.standard_normal((6, 8, 64)).astype(np.float32)
    out = runner.run([x])[0]
    np.testing.assert_allclose(out, gelu_reference(x), atol=tol, rtol=tol)
    assert emitters_of(runner) == ["loop"]
    source = runner.fusions[runner.module.entry.root].kernels[0].source
    assert dtype == "bf16" or "vload" in source   # bf16 buffers are read lane by lane


def test_seed_gelu_bf16_full_shape():
    """The seed's module as written: bf16[6,512,4096]."""
    x = rng.standard_normal((6, 512, 4096)).astype(np.float32)
    runner, (out,) = run_file(hlo_path("seed_gelu.hlo"), [x])
    # the input is rounded to bf16 on the way in; compare on the rounded values
    from triton_spirv.hlo.shapes import bf16_bits_to_f32, f32_to_bf16_bits
    xr = bf16_bits_to_f32(f32_to_bf16_bits(x))
    np.testing.assert_allclose(out, gelu_reference(xr), atol=3e-2, rtol=3e-2)
    report = runner.fusions[runner.module.entry.root].report
    assert "grid 24576 x local 128" in report.launch[0]


@pytest.mark.slow
def test_seed_gelu_f32_full_shape():
    runner = ModuleRunner(read_hlo(seed_gelu_text("f32", "6,512,4096")))
    x = rng.standard_normal((6, 512, 4096)).astype(np.float32)
    np.testing.assert_allclose(runner.run([x])[0], gelu_reference(x), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("shape, launch, code", [
    ("tiles", "grid 960 x local 256", ("__local float", "[32 * 33]", "barrier(")),
    ("segments", "grid 425 x local 128", ("vstore16(",))])
def test_seed_transpose(monkeypatch, shape, launch, code):
    """Both kernel shapes of the transpose emitter (tests/test_hlo_transpose.py)."""
    monkeypatch.setenv(TRANSPOSE_ENV, shape)
    x = rng.standard_normal((20, 160, 170)).astype(np.float32)
    runner, (out,) = run_file(hlo_path("seed_transpose.hlo"), [x])
    np.testing.assert_allclose(out, np.abs(np.exp(x).transpose(2, 1, 0)), rtol=1e-5)
    fusion = runner.fusions[runner.module.entry.root]
    assert fusion.report.emitter == "transpose"
    assert launch in fusion.report.launch[0]
    source = fusion.kernels[0].source
    assert all(c in source for c in code)


def test_log_transpose_add():
    x = rng.uniform(0.5, 2.0, (64, 64)).astype(np.float32)
    runner, (out,) = run_file(hlo_path("log_transpose_add.hlo"), [x])
    np.testing.assert_allclose(out, np.log(x) + np.log(x).T, rtol=1e-5, atol=1e-6)


REDUCE = """HloModule r
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
fused {{
  p = f32[{shape}] parameter(0)
  e = f32[{shape}] exponential(p)
  z = f32[] constant(0)
  r = f32[{out}] reduce(e, z), dimensions={{{dims}}}, to_apply=add
  ROOT n = f32[{out}] negate(r)
}}
ENTRY main {{
  p = f32[{shape}] parameter(0)
  ROOT f = f32[{out}] fusion(p), kind=kInput, calls=fused
}}
"""


@pytest.mark.parametrize("shape, dims, kind", [
    ((6, 100), (1,), "row"), ((70, 50), (0,), "column"), ((3, 40, 33), (1,), "column"),
    ((1000,), (0,), "row"), ((4, 5, 300), (1, 2), "row")])
def test_reductions(shape, dims, kind):
    out_shape = [d for k, d in enumerate(shape) if k not in dims]
    text = REDUCE.format(shape=",".join(map(str, shape)), out=",".join(map(str, out_shape)),
                         dims=",".join(map(str, dims)))
    runner = ModuleRunner(read_hlo(text))
    x = rng.standard_normal(shape).astype(np.float32)
    out = runner.run([x])[0]
    np.testing.assert_allclose(out, -np.exp(x).sum(axis=dims), rtol=1e-5)
    report = runner.fusions[runner.module.entry.root].report
    assert report.emitter == "reduction" and f"{kind} reduction" in report.launch[0]


def test_multi_output_variadic_reduction():
    text = """HloModule r
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, a, b)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[16,40] parameter(0)
  io = s32[16,40] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  z = s32[] constant(0)
  zf = f32[] constant(0)
  r = (f32[16], s32[16]) reduce(p, io, ninf, z), dimensions={1}, to_apply=argmax
  s = f32[16] reduce(p, zf), dimensions={1}, to_apply=add
  ROOT t = ((f32[16], s32[16]), f32[16]) tuple(r, s)
}
ENTRY main {
  p = f32[16,40] parameter(0)
  ROOT f = ((f32[16], s32[16]), f32[16]) fusion(p), kind=kInput, calls=fused
}
"""
    text = text.replace("ROOT t = ((f32[16], s32[16]), f32[16]) tuple(r, s)",
                        "m = f32[16] get-tuple-element(r), index=0\n  i = s32[16] get-tuple-element(r), index=1\n"
                        "  ROOT t = (f32[16], s32[16], f32[16]) tuple(m, i, s)")
    text = text.replace("((f32[16], s32[16]), f32[16]) fusion", "(f32[16], s32[16], f32[16]) fusion")
    runner = ModuleRunner(read_hlo(text))
    x = rng.standard_normal((16, 40)).astype(np.float32)
    m, i, s = runner.run([x])
    np.testing.assert_allclose(m, x.max(1))
    np.testing.assert_array_equal(i, x.argmax(1))
    np.testing.assert_allclose(s, x.sum(1), rtol=1e-5, atol=1e-5)


def test_concatenate_input_slices_dus_scatter():
    a, b = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    runner, (out,) = run_file(hlo_path("modules", "concat.hlo"), [a, b])
    np.testing.assert_allclose(out, np.concatenate([a, np.exp(b)], 1), rtol=1e-6)
    assert emitters_of(runner) == ["concatenate"]

    x = rng.standard_normal((10, 6)).astype(np.float32)
    runner, (s1, s2) = run_file(hlo_path("modules", "slices.hlo"), [x])
    np.testing.assert_array_equal(s1, -x[0:3])
    np.testing.assert_array_equal(s2, -x[2:10:2, 1:6:2])
    assert emitters_of(runner) == ["input_slices"]

    a, u = rng.standard_normal((8, 6)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    for start in (7, -3, 2):   # starts are clamped into the operand
        runner, (out,) = run_file(hlo_path("modules", "dus.hlo"), [a, u, np.array(start, np.int32)])
        row = min(max(start, 0), 6)
        expected = a.copy()
        expected[row:row + 2, 3:6] = u
        np.testing.assert_array_equal(out, expected)
    assert emitters_of(runner) == ["dynamic_update_slice"]

    op, upd = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    idx = np.array([[1], [3], [1], [7]], np.int32)   # repeated and out-of-range indices
    runner, (out,) = run_file(hlo_path("modules", "scatter.hlo"), [op, idx, upd])
    expected = op.copy()
    for n in range(4):
        if 0 <= idx[n, 0] < 5:
            expected[idx[n, 0]] += upd[n]
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert emitters_of(runner) == ["scatter"]


def test_generated_opencl_names_hlo_instructions():
    runner = ModuleRunner(read_hlo(seed_gelu_text("f32", "6,8,64")))
    source = runner.compile_all()[0].kernels[0].source
    assert "// %tanh_0 = f32[6,8,64] tanh(" in source
    assert "float tanh_0 = tanh_float(" in source
