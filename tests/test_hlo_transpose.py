"""The transpose emitter's two kernel shapes (emitters/transpose.py): `segments` on CPU
devices (one work-item per 16 output elements, a vector store, no __local memory) and
`tiles` on GPU targets (a 32x33 __local tile, barriers). Both are checked against numpy
for sizes the segments and tiles do not divide, single rows and columns, 3-D and 4-D
permutations, an operand computed in the prologue and a root computed in the epilogue,
and f32/f16/bf16/s8 elements."""
import numpy as np
import pytest

from triton_spirv.hlo import read_hlo
from triton_spirv.hlo.runtime import ModuleRunner
from triton_spirv.hlo.shapes import bf16_bits_to_f32, f32_to_bf16_bits
from triton_spirv.hlo.target import TRANSPOSE_ENV, emit_target
from triton_spirv.target import TARGET_ENV

rng = np.random.default_rng(11)


def transpose_module(shape, perm, T="f32"):
    """ROOT = negate(p)^perm + q: a prologue before the transpose, an epilogue after."""
    out = [shape[p] for p in perm]
    s_in, s_out = ",".join(map(str, shape)), ",".join(map(str, out))
    dims = ",".join(map(str, perm))
    return (f"HloModule t\nfused {{\n  p = {T}[{s_in}] parameter(0)\n"
            f"  q = {T}[{s_out}] parameter(1)\n  n = {T}[{s_in}] negate(p)\n"
            f"  t = {T}[{s_out}] transpose(n), dimensions={{{dims}}}\n"
            f"  ROOT a = {T}[{s_out}] add(t, q)\n}}\n"
            f"ENTRY main {{\n  p = {T}[{s_in}] parameter(0)\n  q = {T}[{s_out}] parameter(1)\n"
            f"  ROOT f = {T}[{s_out}] fusion(p, q), kind=kInput, calls=fused\n}}\n")


def inputs_for(shape, perm, T):
    out = [shape[p] for p in perm]
    if T == "s8":
        return [rng.integers(-128, 128, size, dtype=np.int8) for size in (shape, out)]
    x, y = (rng.standard_normal(size).astype(np.float32) for size in (shape, out))
    if T == "f16":
        x, y = x.astype(np.float16).astype(np.float32), y.astype(np.float16).astype(np.float32)
    if T == "bf16":
        x, y = (bf16_bits_to_f32(f32_to_bf16_bits(v)) for v in (x, y))
    return [x, y]


def run(text, inputs):
    runner = ModuleRunner(read_hlo(text))
    out = runner.run(inputs)[0]
    fusion = runner.fusions[runner.module.entry.root]
    return out, fusion.report, fusion.kernels[0].source


def test_target_chooses_the_transpose_shape(monkeypatch):
    monkeypatch.delenv(TRANSPOSE_ENV, raising=False)
    monkeypatch.setenv(TARGET_ENV, "cpu")
    assert emit_target().transpose == "segments"
    monkeypatch.setenv(TARGET_ENV, "gpu")
    assert emit_target().transpose == "tiles"
    monkeypatch.setenv(TRANSPOSE_ENV, "segments")       # forced on a GPU target
    assert emit_target().transpose == "segments"
    monkeypatch.setenv(TRANSPOSE_ENV, "diagonal")
    with pytest.raises(ValueError, match="TRITON_SPIRV_HLO_TRANSPOSE='diagonal'.*tiles, segments"):
        emit_target()


@pytest.mark.parametrize("shape, perm", [
    ((37, 53), (1, 0)),               # neither 16 nor 32 divides: partial segments / tiles
    ((64, 48), (1, 0)),               # whole segments only
    ((1, 300), (1, 0)),               # 1xN and Nx1: too thin to tile (loop emitter)
    ((300, 1), (1, 0)),
    ((5, 33, 40), (2, 0, 1)),         # 3-D: the minor dimension moves to the middle
    ((20, 17, 70), (0, 2, 1)),        # a batch dimension in front
    ((3, 18, 2, 21), (1, 3, 0, 2)),   # 4-D, two other dimensions
])
@pytest.mark.parametrize("T", ["f32", "f16", "bf16", "s8"])
@pytest.mark.parametrize("kernel_shape", ["segments", "tiles"])
def test_transpose_matches_numpy(monkeypatch, kernel_shape, shape, perm, T):
    monkeypatch.setenv(TRANSPOSE_ENV, kernel_shape)
    x, y = inputs_for(shape, perm, T)
    out, report, _ = run(transpose_module(shape, perm, T), [x, y])
    expected = (-x).transpose(perm) + y
    if T == "s8":
        np.testing.assert_array_equal(out, expected)     # int8 wraps in numpy as in C
    else:
        tol = {"f32": 1e-6, "f16": 1e-3, "bf16": 1e-2}[T]
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
    thin = min(shape[perm[-1]], shape[-1]) < 16
    assert report.emitter == ("loop" if thin else "transpose")


def test_segments_shape_on_cpu_targets(monkeypatch):
    """The CPU shape: 128 work-items per group, one per 16 output elements, a float16
    store (a partial segment at the end of each output row is stored element by
    element), no __local memory and no barrier."""
    monkeypatch.delenv(TRANSPOSE_ENV, raising=False)
    monkeypatch.setenv(TARGET_ENV, "cpu")
    shape, perm = (37, 53), (1, 0)
    out, report, source = run(transpose_module(shape, perm), inputs_for(shape, perm, "f32"))
    # 53 rows of cdiv(37, 16) = 3 segments: 159 work-items, 2 groups of 128
    assert "grid 2 x local 128 work-items, one per segment of 16" in report.launch[0]
    assert "__local float" not in source and "barrier(" not in source
    assert "float16 " in source and "vstore16(" in source
    assert "for (long" in source                       # the partial segments


def test_segments_store_bf16_one_by_one(monkeypatch):
    """bf16 has no vector stores in the memref stage: its segments are loops."""
    monkeypatch.setenv(TRANSPOSE_ENV, "segments")
    shape, perm = (64, 48), (1, 0)
    _, report, source = run(transpose_module(shape, perm, "bf16"), inputs_for(shape, perm, "bf16"))
    assert "stored one by one" in report.launch[0]
    assert "vstore" not in source.split("__kernel")[1] and "for (long" in source


def test_tiles_shape_on_gpu_targets(monkeypatch):
    monkeypatch.delenv(TRANSPOSE_ENV, raising=False)
    monkeypatch.setenv(TARGET_ENV, "gpu")
    shape, perm = (37, 53), (1, 0)
    x, y = inputs_for(shape, perm, "f32")
    out, report, source = run(transpose_module(shape, perm), [x, y])
    np.testing.assert_allclose(out, -x.T + y, rtol=1e-6)
    assert "grid 4 x local 256 work-items (tiles 32x33" in report.launch[0]
    assert "__local float" in source and "[32 * 33]" in source and "barrier(" in source


@pytest.mark.parametrize("kernel_shape", ["segments", "tiles"])
def test_emitted_ir_of_each_shape(kernel_shape):
    """The tensor-level kernel each shape emits: segments build one 16-lane vector
    from scalars and write it with one transfer (no tile, no barrier); tiles go
    through a 32x33 tensor (a __local array once bufferized) and a barrier."""
    from dataclasses import replace
    from mlir import ir
    from triton_spirv.hlo.compile import build_fusion
    from triton_spirv.hlo.passes import run_passes
    from triton_spirv.hlo.target import EmitTarget
    module = read_hlo(transpose_module((64, 40), (1, 0)))
    fused = module.computations["fused"]
    with ir.Context(), ir.Location.unknown():
        _, plans = build_fusion("f", fused, None, replace(EmitTarget(), transpose=kernel_shape))
        run_passes(plans[0].module)
        text = str(plans[0].module)
    if kernel_shape == "segments":
        assert "vector.from_elements" in text and "vector<16xf32>" in text
        assert "vector.transfer_write" in text or "vector.store" in text
        assert "gpu.barrier" not in text and "memref.alloc" not in text
    else:
        assert "gpu.barrier" in text and "memref<32x33xf32" in text
        assert "vector.from_elements" not in text
