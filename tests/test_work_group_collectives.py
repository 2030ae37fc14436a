"""GPU-shaped reductions through work-group collective functions
(triton_spirv/memref_stage/work_group_collectives.py; the rewrite's IR in and out:
tests/filecheck/work_group_collectives.mlir). The emitter's `work_group_reduce_*`, the
capability in the target description and its key, and results against numpy on the
device in use: collectives where it has them (Intel's runtime), the `__local` tree where
it has not (PoCL 3.1), equal to each other, NaN handled as each combiner says."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from emitter_opencl import emit_opencl
from emitter_opencl.errors import OpenCLEmitError
from triton_spirv.stages import new_context
from triton_spirv.target import COLLECTIVES_ENV, SUB_GROUPS_ENV, TARGET_ENV, resolve_target
from mlir import ir
from test_lang_reduce_scan import _nan_max, _nan_min   # tl.maximum/minimum(propagate_nan=ALL)


@pytest.fixture(autouse=True)
def no_target_override(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    monkeypatch.delenv(COLLECTIVES_ENV, raising=False)
    # The work-group collectives' form: devices with sub-group functions would reduce
    # through those instead (tests/test_sub_group_reductions.py).
    monkeypatch.setenv(SUB_GROUPS_ENV, "0")
    # The variable is read when a kernel compiles, and Triton keeps a JIT function's
    # kernels in memory: test_sub_group_reductions.py compiles this file's kernel with
    # sub-groups in the same process.
    row_reduce_kernel.device_caches.clear()


def device_has_collectives() -> bool:
    return bool(resolve_target("gpu").work_group_collectives)


# ---------------------------------------------------------------------------------------
# The emitter

REDUCTIONS = """
func.func @k(%f: memref<?xf32>, %i: memref<?xi32>, %l: memref<?xi64>) attributes {opencl.local_size = array<i64: 64, 1, 1>} {
  %c0 = arith.constant 0 : index
  %lid = gpu.thread_id x
  %x = memref.load %f[%lid] : memref<?xf32>
  %n = memref.load %i[%lid] : memref<?xi32>
  %w = memref.load %l[%lid] : memref<?xi64>
  %sum = gpu.all_reduce add %x uniform {} : (f32) -> f32
  %max = gpu.all_reduce maxsi %n uniform {} : (i32) -> i32
  %umin = gpu.all_reduce minui %n uniform {} : (i32) -> i32
  %total = gpu.all_reduce add %w uniform {} : (i64) -> i64
  memref.store %sum, %f[%c0] : memref<?xf32>
  memref.store %max, %i[%c0] : memref<?xi32>
  memref.store %umin, %i[%c0] : memref<?xi32>
  memref.store %total, %l[%c0] : memref<?xi64>
  return
}"""


def emit(text: str):
    with new_context():
        return emit_opencl(ir.Module.parse(text))


def test_all_reduce_prints_as_work_group_reduce():
    kernel = emit(REDUCTIONS)
    source = kernel.source
    assert kernel.work_group_collectives
    assert "OpenCL C 2.0 (work-group collective functions)" in source
    assert "work_group_reduce_add(" in source and "work_group_reduce_max(" in source
    # unsigned minimum on uint; integer sums on the unsigned type, where they wrap
    assert "(int)work_group_reduce_min((uint)" in source, source
    assert "(long)work_group_reduce_add((ulong)" in source, source
    plain = emit("func.func @k(%f: memref<?xf32>) {\n  return\n}")
    assert not plain.work_group_collectives and "OpenCL C 1.2" in plain.source


def test_float_maximum_collective_is_refused_naming_why():
    text = REDUCTIONS.replace("gpu.all_reduce add %x", "gpu.all_reduce maxnumf %x")
    with pytest.raises(OpenCLEmitError, match=r"gpu.all_reduce at .*no work-group collective "
                                              r"for 'maxnumf' of f32.*integer ones"):
        emit(text)


# ---------------------------------------------------------------------------------------
# The target: capability, its switch and the compile key


def test_switching_collectives_off_changes_the_description_and_its_key(monkeypatch):
    described = resolve_target("gpu")
    monkeypatch.setenv(COLLECTIVES_ENV, "0")
    without = resolve_target("gpu")
    assert without.work_group_collectives == ""
    assert (without.key() != described.key()) == bool(described.work_group_collectives)


# ---------------------------------------------------------------------------------------
# Results on the device in use, GPU shape


@triton.jit
def row_reduce_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, OP: tl.constexpr,
                      UNSIGNED: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * BLOCK + tl.arange(0, BLOCK))
    if UNSIGNED:
        x = x.to(tl.uint32, bitcast=True)
    if OP == "sum":
        r = tl.sum(x, axis=0)
    elif OP == "max":
        r = tl.max(x, axis=0)
    elif OP == "min":
        r = tl.min(x, axis=0)
    elif OP == "max_nan":
        r = tl.reduce(x, 0, _nan_max)
    elif OP == "min_nan":
        r = tl.reduce(x, 0, _nan_min)
    else:
        r = tl.xor_sum(x, axis=0)
    if UNSIGNED:
        r = r.to(tl.int32, bitcast=True)
    tl.store(out_ptr + row, r)


BLOCK = 1024


def float_rows(dtype) -> np.ndarray:
    """Rows of random values and the NaN, infinity and signed-zero cases."""
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((7, BLOCK)).astype(dtype)
    rows[1, 100] = np.nan                        # one NaN
    rows[2, :] = np.nan                          # only NaN
    rows[3, :] = -np.inf
    rows[3, 700] = np.nan                        # NaN among -inf
    rows[4, :] = -0.0
    rows[4, 5] = 0.0                             # signed zeros
    rows[5, :] = -rows[5, :] ** 2 - 1.0          # all negative
    rows[6, 1023] = np.inf
    rows[6, 0] = -np.inf
    return rows


def int_rows(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    rows = rng.integers(info.min, info.max, (4, BLOCK), dtype=dtype, endpoint=True)
    rows[1, :] = info.max                        # sums that wrap around
    rows[2, :] = info.min
    return rows


# numpy's reductions with the meaning of each Triton one: tl.max / tl.min ignore NaN
# (fmax / fmin), the combiners with propagate_nan=ALL keep it.
FLOAT_REFERENCES = {"max": np.fmax.reduce, "min": np.fmin.reduce,
                    "max_nan": np.maximum.reduce, "min_nan": np.minimum.reduce}


def run_rows(rows: np.ndarray, op: str, unsigned: bool = False, dtype=None,
             **options) -> tuple[np.ndarray, str]:
    """The kernel on `rows` (as torch `dtype` where given: bf16, which numpy lacks, comes
    back as float32) -> (one result per row, the OpenCL C)."""
    x = torch.from_numpy(rows.copy())
    x = x if dtype is None else x.to(dtype)
    out = torch.empty(rows.shape[0], dtype=x.dtype)
    compiled = row_reduce_kernel[(rows.shape[0],)](x, out, BLOCK=BLOCK, OP=op, UNSIGNED=unsigned,
                                                   opencl_target="gpu", **options)
    return (out if dtype is None else out.float()).numpy(), compiled.asm["cl"]


def assert_reduced_the_devices_way(source: str, collective: bool) -> None:
    assert ("work_group_reduce_" in source) == (collective and device_has_collectives()), source


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, torch.bfloat16],
                         ids=["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("op", list(FLOAT_REFERENCES))
def test_float_minima_and_maxima_match_numpy_with_nan(op, dtype):
    if dtype is torch.bfloat16:    # the values bf16 holds, reduced in float32 (exact)
        rows = torch.from_numpy(float_rows(np.float32)).to(dtype).float().numpy()
        got, source = run_rows(rows, op, dtype=dtype)
    else:
        rows = float_rows(dtype)
        got, source = run_rows(rows, op)
    with np.errstate(invalid="ignore"):
        expected = FLOAT_REFERENCES[op](rows, axis=1)
    np.testing.assert_array_equal(got, expected)
    assert_reduced_the_devices_way(source, collective=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_sums_match_numpy(dtype):
    rows = float_rows(dtype)[[0, 5, 6]]
    rows[2, [0, 1023]] = 1.0
    got, source = run_rows(rows, "sum")
    np.testing.assert_allclose(got, rows.astype(np.float64).sum(axis=1),
                               rtol=1e-5 if dtype == np.float32 else 1e-12)
    assert_reduced_the_devices_way(source, collective=True)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize("op", ["sum", "max", "min", "xor"])
def test_integer_reductions_match_numpy(op, dtype):
    rows = int_rows(dtype)
    got, source = run_rows(rows, op)
    reduce = {"sum": np.add.reduce, "max": np.maximum.reduce, "min": np.minimum.reduce,
              "xor": np.bitwise_xor.reduce}[op]
    np.testing.assert_array_equal(got, reduce(rows, axis=1, dtype=dtype))   # wrapping sums
    assert_reduced_the_devices_way(source, collective=op != "xor")


@pytest.mark.parametrize("op", ["max", "min"])
def test_unsigned_minima_and_maxima_match_numpy(op):
    rows = int_rows(np.int32)
    got, source = run_rows(rows, op, unsigned=True)
    reduce = np.maximum.reduce if op == "max" else np.minimum.reduce
    np.testing.assert_array_equal(got.view(np.uint32), reduce(rows.view(np.uint32), axis=1))
    assert_reduced_the_devices_way(source, collective=True)


@pytest.mark.parametrize("op", ["max", "max_nan", "min_nan"])
def test_collectives_and_the_tree_give_the_same_floats(op):
    if not device_has_collectives():
        pytest.skip("the device has no work-group collective functions: the tree only")
    rows = float_rows(np.float32)
    collective, source = run_rows(rows, op)
    assert "work_group_reduce_max" in source or "work_group_reduce_min" in source
    tree, tree_source = run_rows(rows, op, work_group_collectives=False)
    assert "work_group_reduce" not in tree_source and "__local" in tree_source
    np.testing.assert_array_equal(collective, tree)


def test_a_corrupted_cache_entry_is_rebuilt_with_its_opencl_c_version(tmp_path, monkeypatch):
    # The cache repair (launcher/cache_repair.py) builds the .cl again: with the
    # `-cl-std` the kernel's metadata names, else work_group_reduce_* is undeclared.
    if not device_has_collectives():
        pytest.skip("the device has no work-group collective functions: the tree only")
    import glob
    import json
    from launcher import unpack_clbin
    monkeypatch.setattr(triton.knobs.cache, "dir", str(tmp_path / "cache"))
    rows = float_rows(np.float32)

    def run_from_disk():     # a new JITFunction: no in-memory cache, the kernel from disk
        x, out = torch.from_numpy(rows.copy()), torch.empty(rows.shape[0])
        triton.jit(row_reduce_kernel.fn)[(rows.shape[0],)](x, out, BLOCK=BLOCK, OP="max_nan",
                                                           UNSIGNED=False, opencl_target="gpu")
        np.testing.assert_array_equal(out.numpy(), np.maximum.reduce(rows, axis=1))
    run_from_disk()
    (path,) = glob.glob(str(tmp_path / "cache" / "*" / "row_reduce_kernel.clbin"))
    (meta,) = glob.glob(str(tmp_path / "cache" / "*" / "row_reduce_kernel.json"))
    std = f"-cl-std={resolve_target('gpu').work_group_collectives}"
    assert json.load(open(meta))["build_options"] == [std]
    with open(path, "rb") as f:
        good = f.read()
    with open(path, "wb") as f:
        f.write(good[:len(good) // 2])
    with pytest.warns(RuntimeWarning, match="was corrupted.*rebuilt it"):
        run_from_disk()
    with open(path, "rb") as f:
        assert unpack_clbin(f.read())["build_options"] == (std,)
