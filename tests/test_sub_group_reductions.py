"""GPU-shaped reductions through sub-group functions
(triton_spirv/memref_stage/work_group_sub_groups.py; the rewrite's IR in and out:
tests/filecheck/work_group_sub_groups.mlir). The emitter's `sub_group_reduce_*` and
sub-group ids, the capability in the target description and its key, and results
against numpy / torch on the device in use: sub-groups where it has them (Intel's
runtime: OpenCL C 3.0 `__opencl_c_subgroups`), the `__local` tree where it has not
(PoCL 3.1)."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from emitter_opencl import emit_opencl
from mlir import ir
from test_work_group_collectives import (BLOCK, FLOAT_REFERENCES, float_rows, int_rows,
                                         run_rows)
from triton_spirv.stages import new_context
from triton_spirv.target import COLLECTIVES_ENV, SUB_GROUPS_ENV, TARGET_ENV, resolve_target


@pytest.fixture(autouse=True)
def no_target_override(monkeypatch):
    for name in (TARGET_ENV, COLLECTIVES_ENV, SUB_GROUPS_ENV):
        monkeypatch.delenv(name, raising=False)


def device_has_sub_groups() -> bool:
    return bool(resolve_target("gpu").sub_group_functions)


def assert_reduced_the_devices_way(source: str) -> None:
    """Sub-group reductions where the device has sub-group functions, and then no
    work-group collective; the `__local` tree's halving steps elsewhere."""
    assert ("sub_group_reduce_" in source) == device_has_sub_groups(), source
    if device_has_sub_groups():
        assert "work_group_reduce_" not in source and "get_num_sub_groups()" in source, source


# ---------------------------------------------------------------------------------------
# The emitter

SUB_GROUP_REDUCTIONS = """
func.func @k(%f: memref<?xf32>, %i: memref<?xi32>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %lid = gpu.thread_id x
  %x = memref.load %f[%lid] : memref<?xf32>
  %n = memref.load %i[%lid] : memref<?xi32>
  %sum = gpu.subgroup_reduce add %x uniform : (f32) -> f32
  %umax = gpu.subgroup_reduce maxui %n uniform : (i32) -> i32
  %lane = gpu.lane_id
  %sub_group = gpu.subgroup_id : index
  %count = gpu.num_subgroups : index
  memref.store %sum, %f[%sub_group] : memref<?xf32>
  memref.store %umax, %i[%lane] : memref<?xi32>
  memref.store %umax, %i[%count] : memref<?xi32>
  return
}"""


def test_sub_group_ops_print_as_opencl_sub_group_functions():
    with new_context():
        kernel = emit_opencl(ir.Module.parse(SUB_GROUP_REDUCTIONS))
    source = kernel.source
    assert kernel.sub_group_functions and not kernel.work_group_collectives
    assert "(sub-group functions)" in source
    assert "sub_group_reduce_add(arg0_elem)" in source, source
    assert "(int)sub_group_reduce_max((uint)" in source, source
    for builtin in ("get_sub_group_local_id()", "get_sub_group_id()", "get_num_sub_groups()"):
        assert f"(long){builtin}" in source, source


def test_switching_sub_groups_off_changes_the_description_and_its_key(monkeypatch):
    described = resolve_target()
    monkeypatch.setenv(SUB_GROUPS_ENV, "0")
    without = resolve_target()
    assert without.sub_group_functions == ""
    assert without.work_group_collectives == described.work_group_collectives
    assert (without.key() != described.key()) == bool(described.sub_group_functions)
    monkeypatch.setenv(SUB_GROUPS_ENV, "1")
    monkeypatch.setenv(COLLECTIVES_ENV, "0")    # no collectives: the tree, no sub-groups
    assert resolve_target().sub_group_functions == ""


# ---------------------------------------------------------------------------------------
# Results on the device in use, GPU shape


@pytest.mark.parametrize("op", list(FLOAT_REFERENCES) + ["sum"])
def test_float_reductions_match_numpy(op):
    rows = float_rows(np.float32)
    got, source = run_rows(rows, op)
    if op == "sum":
        rows = np.nan_to_num(rows[:, :], nan=0.0, posinf=0.0, neginf=0.0)
        got, source = run_rows(rows, op)
        np.testing.assert_allclose(got, rows.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, FLOAT_REFERENCES[op](rows, axis=1))
    assert_reduced_the_devices_way(source)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64], ids=["int8", "int32", "int64"])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_integer_reductions_match_numpy(op, dtype):
    rows = int_rows(dtype)
    got, source = run_rows(rows, op)
    reduce = {"sum": np.add.reduce, "max": np.maximum.reduce, "min": np.minimum.reduce}[op]
    np.testing.assert_array_equal(got, reduce(rows, axis=1, dtype=dtype))   # wrapping sums
    assert_reduced_the_devices_way(source)


@pytest.mark.parametrize("op", ["max", "min"])
def test_unsigned_extremes_match_numpy(op):
    rows = int_rows(np.int32)
    got, source = run_rows(rows, op, unsigned=True)
    reduce = np.maximum.reduce if op == "max" else np.minimum.reduce
    np.testing.assert_array_equal(got.view(np.uint32), reduce(rows.view(np.uint32), axis=1))
    assert_reduced_the_devices_way(source)


@pytest.mark.parametrize("op", ["max_nan", "min"])
def test_sub_groups_and_the_tree_give_the_same_floats(op):
    if not device_has_sub_groups():
        pytest.skip("the device has no sub-group functions: the tree only")
    rows = float_rows(np.float32)
    sub_groups, _ = run_rows(rows, op)
    tree, tree_source = run_rows(rows, op, work_group_collectives=False)
    assert "sub_group_reduce" not in tree_source and "work_group_reduce" not in tree_source
    np.testing.assert_array_equal(sub_groups, tree)


@triton.jit
def argmax_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    tl.store(out_ptr + row, tl.argmax(x, axis=0))


def test_argmax_matches_torch():
    x = torch.randn(6, BLOCK)
    x[2, 17] = 100.0
    x[3, :] = 1.0                                   # ties: the first index
    out = torch.empty(6, dtype=torch.int32)
    argmax_kernel[(6,)](x, out, BLOCK=BLOCK, opencl_target="gpu")
    torch.testing.assert_close(out.long(), torch.argmax(x, dim=1))


@triton.jit
def softmax_kernel(out_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row * n_cols + offsets, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + offsets, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def layer_norm_kernel(out_ptr, x_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row * n_cols + offsets, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    centered = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centered * centered, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    tl.store(out_ptr + row * n_cols + offsets, centered * rstd * w + b, mask=mask)


def run_softmax(**options):
    x = torch.randn(37, 1000)
    x[5, 3] = 80.0                                  # a large maximum
    out = torch.empty_like(x)
    compiled = softmax_kernel[(37,)](out, x, 1000, BLOCK=1024, opencl_target="gpu", **options)
    torch.testing.assert_close(out, torch.softmax(x, dim=1))
    return compiled


def test_softmax_matches_torch():
    assert_reduced_the_devices_way(run_softmax().asm["cl"])


def test_layer_norm_matches_torch():
    x, w, b = torch.randn(19, 777), torch.randn(777), torch.randn(777)
    out = torch.empty_like(x)
    compiled = layer_norm_kernel[(19,)](out, x, w, b, 777, 1e-5, BLOCK=1024,
                                        opencl_target="gpu")
    torch.testing.assert_close(out, torch.nn.functional.layer_norm(x, (777,), w, b, 1e-5),
                               rtol=1e-4, atol=1e-4)
    assert_reduced_the_devices_way(compiled.asm["cl"])


def test_softmax_through_spirv_uses_sub_group_scope():
    target = resolve_target("gpu")
    if not target.sub_group_functions or not target.il_versions:
        pytest.skip("the device takes no SPIR-V with sub-group functions")
    spirv = run_softmax(program="spirv").asm["spvasm"]
    assert "GroupFMax" not in spirv or "<Subgroup>" in spirv or "Subgroup" in spirv, spirv
    assert "Subgroup" in spirv, spirv
