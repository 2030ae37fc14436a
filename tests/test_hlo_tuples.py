"""Nested tuples: leaves/nest round trips and the fused-computation rewrite that gives
kernels flat parameters and a flat root tuple (HLO in, HLO out)."""
import numpy as np
import pytest

from triton_spirv.hlo import HloUnsupportedError, read_hlo
from triton_spirv.hlo.tuples import flatten_fused_tuples, leaf_paths, leaves, nest

FUSED = """HloModule m

%fused (p0: f32[4], p1: ((f32[4], s32[4]), s32[4])) -> ((f32[4], s32[4]), f32[4]) {
  %p0 = f32[4]{0} parameter(0)
  %p1 = ((f32[4]{0}, s32[4]{0}), s32[4]{0}) parameter(1)
  %pair = (f32[4]{0}, s32[4]{0}) get-tuple-element(%p1), index=0
  %x = f32[4]{0} get-tuple-element(%pair), index=0
  %i = s32[4]{0} get-tuple-element(%pair), index=1
  %j = s32[4]{0} get-tuple-element(%p1), index=1
  %sum = f32[4]{0} add(%p0, %x)
  %k = s32[4]{0} add(%i, %j)
  %inner = (f32[4]{0}, s32[4]{0}) tuple(%sum, %k)
  ROOT %out = ((f32[4]{0}, s32[4]{0}), f32[4]{0}) tuple(%inner, %x)
}

ENTRY %main (a: f32[4], b: ((f32[4], s32[4]), s32[4])) -> ((f32[4], s32[4]), f32[4]) {
  %a = f32[4]{0} parameter(0)
  %b = ((f32[4]{0}, s32[4]{0}), s32[4]{0}) parameter(1)
  ROOT %f = ((f32[4]{0}, s32[4]{0}), f32[4]{0}) fusion(%a, %b), kind=kLoop, calls=%fused
}
"""


def describe(computation):
    """The computation as `name = shape opcode(operands)` lines, in order."""
    return [f"{i.name} = {i.shape} {i.opcode}({', '.join(o.name for o in i.operands)})"
            + (f" #{i.parameter_number}" if i.opcode == "parameter" else "")
            for i in computation.instructions if i in computation.post_order()]


def test_flatten_fused_tuples_in_and_out():
    module = read_hlo(FUSED)
    fused = module.computations["fused"]
    flatten_fused_tuples(fused)
    assert describe(fused) == [
        "p0 = f32[4] parameter() #0",
        "p1.0.0 = f32[4] parameter() #1",
        "p1.0.1 = s32[4] parameter() #2",
        "p1.1 = s32[4] parameter() #3",
        "sum = f32[4] add(p0, p1.0.0)",
        "k = s32[4] add(p1.0.1, p1.1)",
        "out = (f32[4], s32[4], f32[4]) tuple(sum, k, p1.0.0)",
    ]
    assert not any(i.opcode == "get-tuple-element" for i in fused.instructions)
    # Users point at the new parameters (the partitioner walks users).
    assert [u.name for u in fused.by_name("p1.0.0").users] == ["sum", "out"]
    flatten_fused_tuples(fused)            # idempotent
    assert len(fused.parameters) == 4


def test_fusion_with_nested_tuples_runs_against_numpy():
    from triton_spirv.hlo.runtime import ModuleRunner
    rng = np.random.default_rng(5)
    a, x = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    i, j = np.arange(4, dtype=np.int32), np.array([7, -3, 2, 0], np.int32)
    out = ModuleRunner(read_hlo(FUSED)).run([a, ((x, i), j)])
    np.testing.assert_allclose(out[0], a + x, rtol=1e-6)
    np.testing.assert_array_equal(out[1], i + j)
    np.testing.assert_array_equal(out[2], x)


def test_a_tuple_parameter_read_whole_is_refused():
    source = FUSED.replace("ROOT %out = ((f32[4]{0}, s32[4]{0}), f32[4]{0}) tuple(%inner, %x)",
                           "ROOT %out = ((f32[4]{0}, s32[4]{0}), s32[4]{0}) tuple(%pair, %j)")
    fused = read_hlo(source).computations["fused"]
    with pytest.raises(HloUnsupportedError, match=r"%out \(tuple\) in computation fused.*"
                                                  r"reads the tuple parameter %p1 whole"):
        flatten_fused_tuples(fused)


def test_leaves_and_nest_round_trip():
    shape = read_hlo(FUSED).entry.root.shape
    value = ((1, 2), 3)
    assert leaves(value) == [1, 2, 3]
    assert nest([1, 2, 3], shape) == value
    assert leaf_paths(shape) == [(0, 0), (0, 1), (1,)]
    with pytest.raises(ValueError, match="1 leaves left over"):
        nest([1, 2, 3, 4], shape)
