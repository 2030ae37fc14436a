"""Row reductions in the per-work-item shape (CPU devices; emitters/reduction.py): one
work-item per row, several rows per work-group, lane accumulators packed into vectors
by lanes.py. Checked against numpy for rows that the lanes do not divide, rows past
the last one in a work-group, short rows, NaN/Inf, integers, argmax, several outputs,
dynamic shapes; the GPU shape (tree) is still checked when forced."""
import os

import numpy as np
import pytest

from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.runtime import ModuleRunner
from triton_spirv.hlo.target import ROW_REDUCTION_ENV, emit_target
from triton_spirv.target import TARGET_ENV

rng = np.random.default_rng(7)

REDUCER_TEXT = ("{name} {{{{\n  a = {{T}}[] parameter(0)\n  b = {{T}}[] parameter(1)\n"
                "  ROOT s = {{T}}[] {op}(a, b)\n}}}}\n")
REDUCER = {name: REDUCER_TEXT.format(name=name, op=op)
           for name, op in [("add", "add"), ("max", "maximum"), ("min", "minimum")]}


def reduce_module(shape, dims, T="f32", reducer="add", init="0", operand="x = {T}[{shape}] copy(p)",
                  in_T=None, epilogue=None):
    """fused: x = f(p); r = reduce(x) over `dims`; ROOT = epilogue(r) or r."""
    in_T = in_T or T
    out = ",".join(str(d) for k, d in enumerate(shape) if k not in dims)
    shape_text = ",".join(map(str, shape))
    root = f"  ROOT r = {T}[{out}] reduce(x, z), dimensions={{{','.join(map(str, dims))}}}, " \
           f"to_apply={reducer}\n"
    if epilogue:
        root = root.replace("ROOT r", "r") + f"  ROOT e = {T}[{out}] {epilogue}(r)\n"
    return (f"HloModule m\n{REDUCER[reducer].format(T=T)}"
            f"fused {{\n  p = {in_T}[{shape_text}] parameter(0)\n"
            f"  {operand.format(T=T, shape=shape_text)}\n  z = {T}[] constant({init})\n{root}}}\n"
            f"ENTRY main {{\n  p = {in_T}[{shape_text}] parameter(0)\n"
            f"  ROOT f = {T}[{out}] fusion(p), kind=kInput, calls=fused\n}}\n")


@pytest.fixture
def per_work_item(monkeypatch):
    monkeypatch.setenv(ROW_REDUCTION_ENV, "per_work_item")


@pytest.fixture
def tree(monkeypatch):
    monkeypatch.setenv(ROW_REDUCTION_ENV, "tree")


def run(text, inputs):
    runner = ModuleRunner(read_hlo(text))
    outputs = runner.run(inputs)
    fusion = runner.fusions[runner.module.entry.root]
    return outputs, fusion.report, fusion.kernels[0].source


def test_cpu_device_gets_the_per_work_item_shape(monkeypatch):
    monkeypatch.delenv(ROW_REDUCTION_ENV, raising=False)
    monkeypatch.delenv(TARGET_ENV, raising=False)
    import pyopencl as cl
    from launcher import get_device
    is_cpu = bool(get_device().device.type & cl.device_type.CPU)
    assert emit_target().row_reduction == ("per_work_item" if is_cpu else "tree")
    monkeypatch.setenv(ROW_REDUCTION_ENV, "sideways")
    with pytest.raises(ValueError, match="tree, per_work_item"):
        emit_target()


@pytest.mark.parametrize("shape, dims, rows, lanes", [
    ((37, 1000), (1,), 1, 16),        # 1000 = 62 * 16 + 8: the rest goes to lane 0
    ((2053, 100), (1,), 16, 16),      # rows per group; the last group has rows past 2053
    ((300, 7), (1,), 4, 4),           # rows shorter than 16 lanes
    ((5, 1), (1,), 1, 1),             # one element per row: no lanes
    ((4, 5, 300), (1, 2), 1, 16),     # several reduced dimensions
    ((4099,), (0,), 1, 16),           # a full reduction
])
def test_row_reduction_matches_numpy(per_work_item, shape, dims, rows, lanes):
    text = reduce_module(shape, dims, operand="x = {T}[{shape}] exponential(p)",
                         epilogue="negate")
    x = rng.standard_normal(shape).astype(np.float32)
    (out,), report, source = run(text, [x])
    np.testing.assert_allclose(out, -np.exp(x).sum(axis=dims), rtol=2e-5)
    assert f"local {rows} work-items (one work-item per row" in report.launch[0]
    assert f"{lanes} lanes of accumulators" in report.launch[0]
    assert "barrier" not in source
    row = np.prod([shape[d] for d in dims])
    if row >= 2 * lanes:   # packed: one float16 accumulator, vector loads, exp on vectors
        assert f"float{lanes} acc" in source and f"vload{lanes}" in source
    # (one step of the lanes is no loop: its lanes stay scalars)


def test_sum_of_a_parameter_is_one_vector_add_per_step(per_work_item):
    text = reduce_module((64, 256), (1,))
    x = rng.standard_normal((64, 256)).astype(np.float32)
    (out,), _, source = run(text, [x])
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-5, atol=1e-5)
    loop = source[source.index("for ("):source.index("}", source.index("for ("))]
    assert "vload16" in loop and "float16 s = acc + " in loop, loop


@pytest.mark.parametrize("reducer, init, reference", [
    ("add", "0", np.sum), ("max", "-inf", np.max), ("min", "inf", np.min)])
def test_nan_and_inf(per_work_item, reducer, init, reference):
    x = rng.standard_normal((6, 70)).astype(np.float32)
    x[1, 3] = np.nan            # a lane of the vector part
    x[2, 69] = np.nan           # the rest, after the lanes
    x[3, 10], x[3, 11] = np.inf, -np.inf
    x[4, 20] = np.inf
    x[5, 68] = -np.inf
    (out,), _, _ = run(reduce_module((6, 70), (1,), reducer=reducer, init=init), [x])
    with np.errstate(invalid="ignore"):             # inf + -inf
        expected = reference(x, axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-6)   # NaN where NaN


@pytest.mark.parametrize("T, dtype, reducer, init", [
    ("s32", np.int32, "add", "0"), ("s32", np.int32, "min", "2147483647"),
    ("u32", np.uint32, "max", "0"), ("s8", np.int8, "add", "0"), ("s64", np.int64, "add", "0")])
def test_integer_reductions(per_work_item, T, dtype, reducer, init):
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, (9, 135), dtype=dtype, endpoint=True)
    (out,), _, _ = run(reduce_module((9, 135), (1,), T=T, reducer=reducer, init=init), [x])
    reference = {"add": lambda a: a.sum(1, dtype=dtype), "min": lambda a: a.min(1),
                 "max": lambda a: a.max(1)}[reducer](x)      # integer sums wrap around
    np.testing.assert_array_equal(out, reference)


def test_f64_uses_eight_lanes(per_work_item):
    x = rng.standard_normal((10, 1003))
    (out,), report, source = run(reduce_module((10, 1003), (1,), T="f64"), [x])
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-12)
    assert "8 lanes of accumulators" in report.launch[0] and "double8 acc" in source


def test_bf16_input(per_work_item):
    floats = rng.standard_normal((12, 333)).astype(np.float32)
    bits = (floats.view(np.uint32) >> 16).astype(np.uint16)
    text = reduce_module((12, 333), (1,), in_T="bf16", operand="x = {T}[{shape}] convert(p)")
    (out,), _, _ = run(text, [bits])
    values = (bits.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_allclose(out, values.sum(1), rtol=1e-5, atol=1e-5)


ARGMAX = """HloModule argmax
argmax {
  a = f32[] parameter(0)
  ai = INDEX[] parameter(1)
  b = f32[] parameter(2)
  bi = INDEX[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, a, b)
  i = INDEX[] select(keep, ai, bi)
  ROOT t = (f32[], INDEX[]) tuple(v, i)
}
fused {
  p = f32[50,300] parameter(0)
  io = INDEX[50,300] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  z = INDEX[] constant(0)
  ROOT r = (f32[50], INDEX[50]) reduce(p, io, ninf, z), dimensions={1}, to_apply=argmax
}
ENTRY main {
  p = f32[50,300] parameter(0)
  ROOT f = (f32[50], INDEX[50]) fusion(p), kind=kInput, calls=fused
}
"""


@pytest.mark.parametrize("index, packed", [("s32", "int16 acc"), ("s64", None)])
def test_argmax(per_work_item, index, packed):
    """s32 indices pack (iota lanes are cast(i) + [0..15]); s64 indices do not (a float
    comparison gives int8 masks, a long one long8, which OpenCL C cannot combine): the
    lanes stay scalar, with the same results."""
    x = rng.standard_normal((50, 300)).astype(np.float32)
    x[7, 100:104] = 9.0                                   # ties: the first index wins
    x[8, 290] = 9.0                                       # the maximum in the rest
    (values, indices), _, source = run(ARGMAX.replace("INDEX", index), [x])
    np.testing.assert_array_equal(values, x.max(1))
    np.testing.assert_array_equal(indices, x.argmax(1))
    if packed:
        assert packed in source
    else:
        assert "acc = (float8)" not in source and "float acc" in source


def test_two_outputs_share_the_row(per_work_item):
    text = """HloModule two
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
fused {
  p = f32[33,250] parameter(0)
  q = f32[33,250] multiply(p, p)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s = f32[33] reduce(q, z), dimensions={1}, to_apply=add
  m = f32[33] reduce(p, ninf), dimensions={1}, to_apply=max
  r = f32[33] sqrt(s)
  ROOT t = (f32[33], f32[33]) tuple(r, m)
}
ENTRY main {
  p = f32[33,250] parameter(0)
  ROOT f = (f32[33], f32[33]) fusion(p), kind=kInput, calls=fused
}
"""
    x = rng.standard_normal((33, 250)).astype(np.float32)
    (norm, peak), _, source = run(text, [x])
    np.testing.assert_allclose(norm, np.sqrt((x * x).sum(1)), rtol=1e-5)
    np.testing.assert_array_equal(peak, x.max(1))
    assert source.count("float16 acc") == 2


def test_dynamic_rows_and_lengths(per_work_item):
    text = """HloModule row_sum_dynamic
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[R,C] parameter(0)
  zero = f32[] constant(0)
  ROOT sum = f32[R] reduce(x, zero), dimensions={1}, to_apply=add
}
"""
    runner = ModuleRunner(read_hlo(text))
    for shape in [(3, 5), (40, 16), (7, 1001), (1, 1)]:
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(runner.run([x])[0], x.sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape, dims", [((37, 1000), (1,)), ((4, 5, 300), (1, 2))])
def test_tree_shape_still_correct(tree, shape, dims):
    text = reduce_module(shape, dims, operand="x = {T}[{shape}] exponential(p)")
    x = rng.standard_normal(shape).astype(np.float32)
    (out,), report, source = run(text, [x])
    np.testing.assert_allclose(out, np.exp(x).sum(axis=dims), rtol=2e-5)
    assert "tree through __local" in report.launch[0] and "barrier" in source


def test_tree_shape_argmax_keeps_the_first_tie(tree):
    """The tree folds 8 partials per level until 8 are left (256 -> 32 -> 8, a barrier
    after each write), then every work-item folds those 8: pairs still combine in the
    order of their indices, so ties keep the first."""
    x = rng.standard_normal((50, 300)).astype(np.float32)
    x[7, 100:104] = 9.0
    x[9, [3, 35, 67, 99, 131, 163, 195, 227, 259, 291]] = 9.0   # one per partial's walk
    (values, indices), report, source = run(ARGMAX.replace("INDEX", "s32"), [x])
    np.testing.assert_array_equal(values, x.max(1))
    np.testing.assert_array_equal(indices, x.argmax(1))
    assert "tree through __local" in report.launch[0]
    assert source.count("barrier(CLK_LOCAL_MEM_FENCE);") == 3, source
    assert "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)" not in source


def test_clean_under_oclgrind(per_work_item, tmp_path, monkeypatch):
    """The per-work-item kernels (rows past the end of the last group, lanes, the rest
    loop, packed argmax) make no invalid accesses. Without --uninitialized: Oclgrind
    21.10's uninitialized-value checker crashes on every vloadN (a one-line kernel
    `float4 v = vload4(0, p);` is enough)."""
    import test_oclgrind
    from test_oclgrind import OCLGRIND, _record, run_under_oclgrind
    if OCLGRIND is None:
        pytest.skip("oclgrind is not installed")
    monkeypatch.setattr(test_oclgrind, "OCLGRIND_ARGS", ["--data-races"])
    from launcher.replay import list_recordings
    x = rng.standard_normal((131, 37)).astype(np.float32)
    runs = {
        "rows": lambda: run(reduce_module((131, 37), (1,)), [x]),
        "argmax": lambda: run(ARGMAX.replace("INDEX", "s32"),
                              [rng.standard_normal((50, 300)).astype(np.float32)]),
    }
    paths = []
    for name, fn in runs.items():
        _record(str(tmp_path / name), fn)
        paths += list_recordings(str(tmp_path / name))
    assert paths
    results, diagnostics, _ = run_under_oclgrind(paths)
    for path in paths:
        key = os.path.basename(path)
        assert not results[key]["problems"], results[key]["problems"]
        assert not diagnostics.get(key), diagnostics.get(key)
