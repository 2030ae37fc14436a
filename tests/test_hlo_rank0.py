"""Rank-0 (scalar) results through every HLO emitter, against numpy and JAX.

A fusion that writes a rank-0 result has a thread map whose result list is empty,
`(th_x, bl_x)[vector_index] -> ()`: the delinearization of its single element
(indexing.linear_index_of). The modules below write or read rank-0 values through the
loop, reduction, transpose, concatenate, scatter and dynamic-update-slice emitters:
hand-written ones (full reductions, XLA:GPU-style `kInput` fusions with their backend
configs, multi-output fusions mixing rank 0 and rank 1) and XLA-printed ones
(tests/hlo/rank0/, made by generate_rank0.py: XLA:CPU's optimized text and the
unoptimized text of the same functions, with JAX's outputs).
"""
import glob
import os

import numpy as np
import pytest

from hlo_helpers import hlo_path
from triton_spirv.hlo import read_hlo, read_hlo_file
from triton_spirv.hlo.indexing import (Const, IndexingMap, linear_index_of, thread_linear_index,
                                       thread_map)
from triton_spirv.hlo.runtime import ModuleRunner
from triton_spirv.hlo.target import ROW_REDUCTION_ENV, TRANSPOSE_ENV

rng = np.random.default_rng(31)

# The backend config XLA:GPU prints on its fusions.
GPU_BACKEND = ('backend_config={"operation_queue_id":"0","wait_on_operation_queues":[],'
               '"force_earliest_schedule":false,"reification_cost":[],'
               '"device_type":"DEVICE_TYPE_INVALID","native_emitter_backend_config":'
               '{"type":"NATIVE_EMITTER_TYPE_INVALID","unroll_factor":0}}')


def run(text, inputs):
    runner = ModuleRunner(read_hlo(text))
    return runner, runner.run(inputs)


def emitters_of(runner):
    return sorted(f.report.emitter for f in runner.fusions.values())


def assert_close(out, expected, tol=1e-5):
    out, expected = np.asarray(out), np.asarray(expected)
    assert out.shape == expected.shape
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(out, expected)


# ---------------------------------------------------------------------------
# The indexing maps of a rank-0 output
# ---------------------------------------------------------------------------

def test_empty_results_are_the_delinearization_of_one_element():
    m = thread_map(1, 1, 1, ())
    assert str(m) == ("(th_x, bl_x)[vector_index] -> (), "
                      "domain: th_x in [0, 0], bl_x in [0, 0], vector_index in [0, 0]")
    assert linear_index_of([], ()) == Const(0)
    assert thread_linear_index(m, ()) == Const(0)


def test_results_that_do_not_match_the_rank_are_still_refused():
    with pytest.raises(ValueError, match="not a delinearization"):
        thread_linear_index(IndexingMap([(0, 0), (0, 0)], [Const(0)], [(0, 0)]), ())


# ---------------------------------------------------------------------------
# Full reductions: reduce to rank 0 (unfused, as the reduction emitter's fusion)
# ---------------------------------------------------------------------------

REDUCERS = {   # HLO opcode, init, numpy reference
    "sum": ("add", "0", np.sum),
    "max": ("maximum", "-inf", np.max),
    "min": ("minimum", "inf", np.min),
    "product": ("multiply", "1", np.prod),
}
FULL_SHAPES = [(1000,), (7,), (256,), (37, 53), (64, 32), (7, 13, 5), (3, 1, 17)]


def full_reduce_text(op: str, shape) -> str:
    opcode, init, _ = REDUCERS[op]
    dims = ",".join(map(str, shape))
    layout = ",".join(map(str, reversed(range(len(shape)))))
    return f"""HloModule full_{op}, entry_computation_layout={{(f32[{dims}]{{{layout}}})->f32[]}}

%combine (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] {opcode}(%a, %b)
}}

ENTRY %main (x: f32[{dims}]) -> f32[] {{
  %x = f32[{dims}]{{{layout}}} parameter(0)
  %init = f32[] constant({init})
  ROOT %r = f32[] reduce(%x, %init), dimensions={{{",".join(map(str, range(len(shape))))}}}, to_apply=%combine
}}
"""


def reduce_input(op, shape):
    if op == "product":     # factors near 1: the product stays finite
        return rng.uniform(0.97, 1.03, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("row_shape", ["tree", "per_work_item"])
@pytest.mark.parametrize("shape", FULL_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", sorted(REDUCERS))
def test_full_reduction(monkeypatch, op, shape, row_shape):
    monkeypatch.setenv(ROW_REDUCTION_ENV, row_shape)
    x = reduce_input(op, shape)
    runner, (out,) = run(full_reduce_text(op, shape), [x])
    expected = REDUCERS[op][2](x.astype(np.float64))
    assert_close(out, np.float32(expected), tol=1e-4)
    assert emitters_of(runner) == ["reduction"]


def test_full_integer_reduction():
    text = full_reduce_text("sum", (5, 21)).replace("f32", "s32")
    x = rng.integers(-100, 100, (5, 21)).astype(np.int32)
    _, (out,) = run(text, [x])
    assert_close(out, np.int32(x.sum()))


# ---------------------------------------------------------------------------
# The loop emitter: scalar elementwise fusions, rank-0 transposes and copies
# ---------------------------------------------------------------------------

SCALAR_LOOP = """HloModule scalar_loop

%fused_computation (p0: f32[], p1: f32[], p2: s32[]) -> f32[] {
  %p0 = f32[] parameter(0)
  %p1 = f32[] parameter(1)
  %p2 = s32[] parameter(2)
  %m = f32[] multiply(%p0, %p1)
  %e = f32[] exponential(%m)
  %f = f32[] convert(%p2)
  %t = f32[] transpose(%f), dimensions={}
  ROOT %r = f32[] add(%e, %t)
}

ENTRY %main (a: f32[], b: f32[], n: s32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %n = s32[] parameter(2)
  ROOT %fusion = f32[] fusion(%a, %b, %n), kind=kLoop, calls=%fused_computation
}
"""


def test_scalar_elementwise_loop_fusion():
    a, b, n = np.float32(0.5), np.float32(-1.5), np.int32(7)
    runner, (out,) = run(SCALAR_LOOP, [a, b, n])
    assert_close(out, np.float32(np.exp(a * b) + n))
    assert emitters_of(runner) == ["loop"]
    assert "-> ()" in runner.fusions[runner.module.entry.root].report.maps[0]


UNFUSED_SCALARS = """HloModule unfused_scalars

ENTRY %main (a: f32[], b: f32[]) -> (f32[], f32[]) {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %s = f32[] subtract(%a, %b)
  %q = f32[] sqrt(%s)
  %c = f32[] copy(%q)
  %t = f32[] transpose(%c), dimensions={}
  ROOT %out = (f32[], f32[]) tuple(%t, %s)
}
"""


def test_unfused_scalar_instructions():
    a, b = np.float32(7.0), np.float32(3.0)
    _, (t, s) = run(UNFUSED_SCALARS, [a, b])
    assert_close(t, np.float32(2.0))
    assert_close(s, np.float32(4.0))


BROADCAST_OF_SCALAR = """HloModule broadcast_of_scalar

%fused_computation (p0: f32[], p1: f32[5,6]) -> f32[5,6] {
  %p0 = f32[] parameter(0)
  %b = f32[5,6]{1,0} broadcast(%p0), dimensions={}
  %p1 = f32[5,6]{1,0} parameter(1)
  ROOT %r = f32[5,6]{1,0} multiply(%b, %p1)
}

ENTRY %main (s: f32[], x: f32[5,6]) -> f32[5,6] {
  %s = f32[] parameter(0)
  %x = f32[5,6]{1,0} parameter(1)
  ROOT %fusion = f32[5,6]{1,0} fusion(%s, %x), kind=kLoop, calls=%fused_computation
}
"""


def test_loop_fusion_reading_a_scalar():
    s, x = np.float32(-2.5), rng.standard_normal((5, 6)).astype(np.float32)
    _, (out,) = run(BROADCAST_OF_SCALAR, [s, x])
    assert_close(out, s * x)


# ---------------------------------------------------------------------------
# dynamic-slice and dynamic-update-slice of scalars
# ---------------------------------------------------------------------------

SCALAR_DYNAMIC_SLICE = """HloModule scalar_dynamic_slice

ENTRY %main (x: f32[10], i: s32[], y: f32[]) -> (f32[], f32[]) {
  %x = f32[10]{0} parameter(0)
  %i = s32[] parameter(1)
  %d = f32[1]{0} dynamic-slice(%x, %i), dynamic_slice_sizes={1}
  %r = f32[] reshape(%d)
  %y = f32[] parameter(2)
  %d0 = f32[] dynamic-slice(%y), dynamic_slice_sizes={}
  ROOT %out = (f32[], f32[]) tuple(%r, %d0)
}
"""


@pytest.mark.parametrize("i", [3, 0, 9, 12, -4])
def test_unfused_scalar_dynamic_slice(i):
    x = rng.standard_normal(10).astype(np.float32)
    _, (r, d0) = run(SCALAR_DYNAMIC_SLICE, [x, np.int32(i), np.float32(4.25)])
    assert_close(r, x[min(max(i, 0), 9)])        # XLA clamps the start into range
    assert_close(d0, np.float32(4.25))


FUSED_SCALAR_DYNAMIC_SLICE = """HloModule fused_scalar_dynamic_slice

%fused_computation (p0: f32[4,6], p1: s32[], p2: s32[]) -> f32[] {
  %p0 = f32[4,6]{1,0} parameter(0)
  %p1 = s32[] parameter(1)
  %p2 = s32[] parameter(2)
  %d = f32[1,1]{1,0} dynamic-slice(%p0, %p1, %p2), dynamic_slice_sizes={1,1}
  %b = f32[] bitcast(%d)
  ROOT %n = f32[] negate(%b)
}

ENTRY %main (x: f32[4,6], i: s32[], j: s32[]) -> f32[] {
  %x = f32[4,6]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %j = s32[] parameter(2)
  ROOT %fusion = f32[] fusion(%x, %i, %j), kind=kLoop, calls=%fused_computation
}
"""


@pytest.mark.parametrize("i, j", [(2, 5), (7, -1)])
def test_fused_scalar_dynamic_slice(i, j):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    _, (out,) = run(FUSED_SCALAR_DYNAMIC_SLICE, [x, np.int32(i), np.int32(j)])
    assert_close(out, -x[min(max(i, 0), 3), min(max(j, 0), 5)])


SCALAR_DUS_UNFUSED = """HloModule scalar_dus

ENTRY %main (x: f32[], u: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %u = f32[] parameter(1)
  ROOT %d = f32[] dynamic-update-slice(%x, %u)
}
"""

SCALAR_DUS_FUSED = """HloModule scalar_dus_fusion

%fused_computation (p0: f32[], p1: f32[]) -> f32[] {
  %p0 = f32[] parameter(0)
  %p1 = f32[] parameter(1)
  %e = f32[] exponential(%p1)
  ROOT %d = f32[] dynamic-update-slice(%p0, %e)
}

ENTRY %main (x: f32[], u: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %u = f32[] parameter(1)
  ROOT %fusion = f32[] fusion(%x, %u), kind=kLoop, calls=%fused_computation
}
"""


def test_rank0_dynamic_update_slice_unfused():
    runner, (out,) = run(SCALAR_DUS_UNFUSED, [np.float32(1.0), np.float32(-6.0)])
    assert_close(out, np.float32(-6.0))
    assert emitters_of(runner) == ["dynamic_update_slice"]


def test_rank0_dynamic_update_slice_fusion():
    runner, (out,) = run(SCALAR_DUS_FUSED, [np.float32(1.0), np.float32(0.5)])
    assert_close(out, np.exp(np.float32(0.5)))
    assert emitters_of(runner) == ["dynamic_update_slice"]


DUS_OF_SCALAR_FUSED = """HloModule dus_of_scalar

%fused_computation (p0: f32[8], p1: s32[], p2: f32[]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0)
  %p2 = f32[] parameter(2)
  %b = f32[1]{0} bitcast(%p2)
  %p1 = s32[] parameter(1)
  ROOT %d = f32[8]{0} dynamic-update-slice(%p0, %b, %p1)
}

ENTRY %main (x: f32[8], i: s32[], v: f32[]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %i = s32[] parameter(1)
  %v = f32[] parameter(2)
  ROOT %fusion = f32[8]{0} fusion(%x, %i, %v), kind=kLoop, calls=%fused_computation
}
"""


@pytest.mark.parametrize("i", [0, 5, 11])
def test_dynamic_update_slice_of_a_scalar_fusion(i):
    x = rng.standard_normal(8).astype(np.float32)
    _, (out,) = run(DUS_OF_SCALAR_FUSED, [x, np.int32(i), np.float32(9.0)])
    expected = x.copy()
    expected[min(i, 7)] = 9.0
    assert_close(out, expected)


# ---------------------------------------------------------------------------
# Concatenate, transpose and scatter consuming or producing rank 0
# ---------------------------------------------------------------------------

CONCAT_OF_SCALARS = """HloModule concat_of_scalars

%fused_computation (p0: f32[], p1: f32[], p2: f32[3]) -> f32[5] {
  %p0 = f32[] parameter(0)
  %r0 = f32[1]{0} reshape(%p0)
  %p1 = f32[] parameter(1)
  %n1 = f32[] negate(%p1)
  %r1 = f32[1]{0} bitcast(%n1)
  %p2 = f32[3]{0} parameter(2)
  ROOT %c = f32[5]{0} concatenate(%r0, %p2, %r1), dimensions={0}
}

ENTRY %main (a: f32[], b: f32[], x: f32[3]) -> f32[5] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %x = f32[3]{0} parameter(2)
  ROOT %fusion = f32[5]{0} fusion(%a, %b, %x), kind=kLoop, calls=%fused_computation
}
"""


def test_concatenate_of_scalars():
    a, b = np.float32(1.5), np.float32(2.5)
    x = rng.standard_normal(3).astype(np.float32)
    runner, (out,) = run(CONCAT_OF_SCALARS, [a, b, x])
    assert_close(out, np.concatenate([[a], x, [-b]]).astype(np.float32))
    assert emitters_of(runner) == ["concatenate"]


TRANSPOSE_WITH_SCALAR = """HloModule transpose_with_scalar

%fused_computation (p0: f32[48,40], p1: f32[]) -> f32[40,48] {
  %p0 = f32[48,40]{1,0} parameter(0)
  %t = f32[40,48]{1,0} transpose(%p0), dimensions={1,0}
  %p1 = f32[] parameter(1)
  %b = f32[40,48]{1,0} broadcast(%p1), dimensions={}
  ROOT %r = f32[40,48]{1,0} multiply(%t, %b)
}

ENTRY %main (x: f32[48,40], s: f32[]) -> f32[40,48] {
  %x = f32[48,40]{1,0} parameter(0)
  %s = f32[] parameter(1)
  ROOT %fusion = f32[40,48]{1,0} fusion(%x, %s), kind=kInput, calls=%fused_computation
}
"""


@pytest.mark.parametrize("kernel_shape", ["tiles", "segments"])
def test_transpose_reading_a_scalar(monkeypatch, kernel_shape):
    monkeypatch.setenv(TRANSPOSE_ENV, kernel_shape)
    x = rng.standard_normal((48, 40)).astype(np.float32)
    runner, (out,) = run(TRANSPOSE_WITH_SCALAR, [x, np.float32(3.0)])
    assert_close(out, x.T * 3.0)
    assert emitters_of(runner) == ["transpose"]


SCATTER_INTO_SCALAR = """HloModule scatter_into_scalar

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[], u: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %idx = s32[0]{0} constant({})
  %u = f32[] parameter(1)
  ROOT %s = f32[] scatter(%x, %idx, %u), update_window_dims={}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, index_vector_dim=0, to_apply=%add
}
"""


def test_scatter_producing_rank0():
    runner, (out,) = run(SCATTER_INTO_SCALAR, [np.float32(1.25), np.float32(2.0)])
    assert_close(out, np.float32(3.25))
    assert emitters_of(runner) == ["scatter"]


SCATTER_SCALAR_UPDATES = """HloModule scatter_scalar_updates

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}

%fused_computation (p0: f32[6], p1: s32[1], p2: f32[]) -> f32[6] {
  %p0 = f32[6]{0} parameter(0)
  %p1 = s32[1]{0} parameter(1)
  %p2 = f32[] parameter(2)
  ROOT %s = f32[6]{0} scatter(%p0, %p1, %p2), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=%max
}

ENTRY %main (x: f32[6], i: s32[1], v: f32[]) -> f32[6] {
  %x = f32[6]{0} parameter(0)
  %i = s32[1]{0} parameter(1)
  %v = f32[] parameter(2)
  ROOT %fusion = f32[6]{0} fusion(%x, %i, %v), kind=kInput, calls=%fused_computation
}
"""


@pytest.mark.parametrize("i", [2, 6])
def test_scatter_of_a_scalar_update(i):
    x = rng.standard_normal(6).astype(np.float32)
    runner, (out,) = run(SCATTER_SCALAR_UPDATES, [x, np.array([i], np.int32), np.float32(5.0)])
    expected = x.copy()
    if i < 6:          # an update out of range is skipped
        expected[i] = 5.0
    assert_close(out, expected)
    assert emitters_of(runner) == ["scatter"]


# ---------------------------------------------------------------------------
# Multi-output fusions mixing rank 0 and rank 1
# ---------------------------------------------------------------------------

SUM_AND_MAX = """HloModule sum_and_max

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%max (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %m = f32[] maximum(%c, %d)
}

%fused_reduce (param_0: f32[300]) -> (f32[], f32[]) {
  %param_0 = f32[300]{0} parameter(0)
  %zero = f32[] constant(0)
  %sum = f32[] reduce(%param_0, %zero), dimensions={0}, to_apply=%add
  %ninf = f32[] constant(-inf)
  %e = f32[300]{0} exponential(%param_0)
  %max = f32[] reduce(%e, %ninf), dimensions={0}, to_apply=%max
  ROOT %t = (f32[], f32[]) tuple(%sum, %max)
}

ENTRY %main (x: f32[300]) -> (f32[], f32[]) {
  %x = f32[300]{0} parameter(0)
  ROOT %input_reduce_fusion = (f32[], f32[]) fusion(%x), kind=kInput, calls=%fused_reduce, backend_config={"operation_queue_id":"0","wait_on_operation_queues":[],"force_earliest_schedule":false,"reification_cost":[]}
}
"""


@pytest.mark.parametrize("row_shape", ["tree", "per_work_item"])
def test_multi_output_full_reductions(monkeypatch, row_shape):
    monkeypatch.setenv(ROW_REDUCTION_ENV, row_shape)
    x = rng.standard_normal(300).astype(np.float32)
    runner, (s, m) = run(SUM_AND_MAX, [x])
    assert_close(s, np.float32(x.astype(np.float64).sum()), tol=1e-4)
    assert_close(m, np.exp(x).max())
    assert emitters_of(runner) == ["reduction"]


MIXED_RANKS = """HloModule mixed_ranks

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%fused_computation (param_0: f32[40], param_1: f32[]) -> (f32[], f32[40], f32[]) {
  %param_0 = f32[40]{0} parameter(0)
  %param_1 = f32[] parameter(1)
  %zero = f32[] constant(0)
  %sum = f32[] reduce(%param_0, %zero), dimensions={0}, to_apply=%add
  %scaled = f32[] multiply(%sum, %param_1)
  %b = f32[40]{0} broadcast(%param_1), dimensions={}
  %m = f32[40]{0} multiply(%param_0, %b)
  %n = f32[] negate(%param_1)
  ROOT %t = (f32[], f32[40]{0}, f32[]) tuple(%scaled, %m, %n)
}

ENTRY %main (x: f32[40], s: f32[]) -> (f32[], f32[40], f32[]) {
  %x = f32[40]{0} parameter(0)
  %s = f32[] parameter(1)
  ROOT %fusion = (f32[], f32[40]{0}, f32[]) fusion(%x, %s), kind=kLoop, calls=%fused_computation
}
"""


def test_fusion_output_tuple_mixing_rank0_and_rank1():
    x, s = rng.standard_normal(40).astype(np.float32), np.float32(0.5)
    runner, (scaled, m, n) = run(MIXED_RANKS, [x, s])
    assert_close(scaled, np.float32(x.astype(np.float64).sum() * s), tol=1e-4)
    assert_close(m, x * s)
    assert_close(n, -s)
    # one kernel per output size: the two rank-0 leaves together, the rank-1 leaf alone
    fusion = runner.fusions[runner.module.entry.root]
    assert [k.name for k in fusion.kernels] == ["fusion_out0", "fusion_out1"]


# XLA:GPU's sibling multi-output fusion: the reduction and an elementwise user of its
# input in one kInput fusion (the outputs' "heroes" have the same shape).
GPU_SUM_AND_SIBLING = f"""HloModule jit__lambda, is_scheduled=true, entry_computation_layout={{(f32[11]{{0}})->(f32[], f32[11]{{0}})}}

%region_0.1 (reduce_sum.3: f32[], reduce_sum.4: f32[]) -> f32[] {{
  %reduce_sum.4 = f32[] parameter(1)
  %reduce_sum.3 = f32[] parameter(0)
  ROOT %reduce_sum.5.0 = f32[] add(%reduce_sum.3, %reduce_sum.4)
}}

%fused_reduce (param_0.1: f32[11]) -> (f32[], f32[11]) {{
  %param_0.1 = f32[11]{{0}} parameter(0)
  %constant_1_1 = f32[] constant(0)
  %reduce_sum.7.1 = f32[] reduce(%param_0.1, %constant_1_1), dimensions={{0}}, to_apply=%region_0.1
  %constant_2_1 = f32[] constant(2)
  %broadcast.2.1 = f32[11]{{0}} broadcast(%constant_2_1), dimensions={{}}
  %mul.1.1 = f32[11]{{0}} multiply(%param_0.1, %broadcast.2.1)
  ROOT %tuple.3 = (f32[], f32[11]{{0}}) tuple(%reduce_sum.7.1, %mul.1.1)
}}

ENTRY %main.2 (x.1: f32[11]) -> (f32[], f32[11]) {{
  %x.1 = f32[11]{{0}} parameter(0), sharding={{replicated}}
  %input_reduce_fusion = (f32[], f32[11]{{0}}) fusion(%x.1), kind=kInput, calls=%fused_reduce, {GPU_BACKEND}
  %get-tuple-element.1 = f32[] get-tuple-element(%input_reduce_fusion), index=0
  %get-tuple-element.2 = f32[11]{{0}} get-tuple-element(%input_reduce_fusion), index=1
  ROOT %tuple.4 = (f32[], f32[11]{{0}}) tuple(%get-tuple-element.1, %get-tuple-element.2)
}}
"""


def test_xla_gpu_style_reduction_with_a_sibling_output():
    x = rng.standard_normal(11).astype(np.float32)
    _, (total, doubled) = run(GPU_SUM_AND_SIBLING, [x])
    assert_close(total, np.float32(x.astype(np.float64).sum()))
    assert_close(doubled, x * 2.0)


# ---------------------------------------------------------------------------
# XLA:GPU-style modules: kInput fusions of full reductions, as XLA:GPU prints them
# ---------------------------------------------------------------------------

GPU_MEAN = f"""HloModule jit__lambda, is_scheduled=true, entry_computation_layout={{(f32[37,53]{{1,0}})->f32[]}}, allow_spmd_sharding_propagation_to_output={{true}}, frontend_attributes={{fingerprint_before_lhs="7b4bd5cba2c4ad8a9d2f1b0e3c5d6a71"}}

%region_0.1 (reduce_sum.3: f32[], reduce_sum.4: f32[]) -> f32[] {{
  %reduce_sum.4 = f32[] parameter(1)
  %reduce_sum.3 = f32[] parameter(0)
  ROOT %reduce_sum.5.0 = f32[] add(%reduce_sum.3, %reduce_sum.4), metadata={{op_name="jit(<lambda>)/reduce_sum"}}
}}

%fused_reduce (param_0.2: f32[37,53]) -> f32[] {{
  %param_0.2 = f32[37,53]{{1,0}} parameter(0)
  %bitcast.5.1 = f32[1961]{{0}} bitcast(%param_0.2)
  %constant_2_1 = f32[] constant(0)
  %reduce_sum.7.1 = f32[] reduce(%bitcast.5.1, %constant_2_1), dimensions={{0}}, to_apply=%region_0.1, metadata={{op_name="jit(<lambda>)/reduce_sum"}}
  %constant_3_1 = f32[] constant(0.00050994393)
  ROOT %div.3.1 = f32[] multiply(%reduce_sum.7.1, %constant_3_1), metadata={{op_name="jit(<lambda>)/div"}}
}}

ENTRY %main.2 (x.1: f32[37,53]) -> f32[] {{
  %x.1 = f32[37,53]{{1,0}} parameter(0), sharding={{replicated}}, metadata={{op_name="x"}}
  ROOT %input_reduce_fusion = f32[] fusion(%x.1), kind=kInput, calls=%fused_reduce, metadata={{op_name="jit(<lambda>)/div"}}, {GPU_BACKEND}
}}
"""

# XLA:GPU's tree reduction rewriter: a long row is padded, viewed as [rows, 1024],
# reduced per row (kInput), then the partial results are reduced to rank 0 (kInput).
GPU_TREE_SUM = f"""HloModule jit__lambda, is_scheduled=true, entry_computation_layout={{(f32[5000]{{0}})->f32[]}}

%region_0.1 (reduce_sum.3: f32[], reduce_sum.4: f32[]) -> f32[] {{
  %reduce_sum.4 = f32[] parameter(1)
  %reduce_sum.3 = f32[] parameter(0)
  ROOT %reduce_sum.5.0 = f32[] add(%reduce_sum.3, %reduce_sum.4)
}}

%fused_reduce (param_0.3: f32[5000]) -> f32[5] {{
  %param_0.3 = f32[5000]{{0}} parameter(0)
  %constant_4 = f32[] constant(0)
  %pad.1 = f32[5120]{{0}} pad(%param_0.3, %constant_4), padding=0_120
  %bitcast.6 = f32[5,1024]{{1,0}} bitcast(%pad.1)
  ROOT %reduce.2 = f32[5]{{0}} reduce(%bitcast.6, %constant_4), dimensions={{1}}, to_apply=%region_0.1
}}

%fused_reduce.1 (param_0.4: f32[5]) -> f32[] {{
  %param_0.4 = f32[5]{{0}} parameter(0)
  %constant_5 = f32[] constant(0)
  ROOT %reduce.3 = f32[] reduce(%param_0.4, %constant_5), dimensions={{0}}, to_apply=%region_0.1
}}

ENTRY %main.2 (x.1: f32[5000]) -> f32[] {{
  %x.1 = f32[5000]{{0}} parameter(0), sharding={{replicated}}
  %input_reduce_fusion = f32[5]{{0}} fusion(%x.1), kind=kInput, calls=%fused_reduce, {GPU_BACKEND}
  ROOT %input_reduce_fusion.1 = f32[] fusion(%input_reduce_fusion), kind=kInput, calls=%fused_reduce.1, {GPU_BACKEND}
}}
"""


@pytest.mark.parametrize("row_shape", ["tree", "per_work_item"])
def test_xla_gpu_style_mean(monkeypatch, row_shape):
    monkeypatch.setenv(ROW_REDUCTION_ENV, row_shape)
    x = rng.standard_normal((37, 53)).astype(np.float32)
    runner, (out,) = run(GPU_MEAN, [x])
    assert_close(out, np.float32(x.astype(np.float64).mean()))
    assert emitters_of(runner) == ["reduction"]


@pytest.mark.parametrize("row_shape", ["tree", "per_work_item"])
def test_xla_gpu_style_tree_sum(monkeypatch, row_shape):
    monkeypatch.setenv(ROW_REDUCTION_ENV, row_shape)
    x = rng.standard_normal(5000).astype(np.float32)
    runner, (out,) = run(GPU_TREE_SUM, [x])
    assert_close(out, np.float32(x.astype(np.float64).sum()), tol=1e-4)
    assert emitters_of(runner) == ["reduction", "reduction"]


# ---------------------------------------------------------------------------
# XLA-printed modules (tests/hlo/rank0/: XLA:CPU-optimized and unoptimized text)
# ---------------------------------------------------------------------------

XLA_MODULES = sorted(os.path.basename(p)[:-4] for p in glob.glob(hlo_path("rank0", "*.hlo")))


def test_xla_module_set():
    names = {m.split(".")[0] for m in XLA_MODULES}
    assert {"sum", "max", "mean", "sum_times_y"} <= names
    assert len(XLA_MODULES) == 2 * len(names)     # each function: .cpu and .lowered


@pytest.mark.parametrize("module", XLA_MODULES)
def test_xla_printed_module(module):
    name = module.split(".")[0]
    data = np.load(hlo_path("rank0", f"{name}.npz"))
    runner = ModuleRunner(read_hlo_file(hlo_path("rank0", f"{module}.hlo")))
    inputs = [data[f"arg{k}"] for k in range(len(runner.module.entry.parameters))]
    outputs = runner.run(inputs)
    expected = [data[k] for k in sorted((k for k in data if k.startswith("out")),
                                        key=lambda k: int(k[3:]))]
    assert len(outputs) == len(expected)
    for out, ref in zip(outputs, expected):
        assert_close(out, ref, tol=1e-4)
