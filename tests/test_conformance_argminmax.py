"""tl.argmax / tl.argmin (and tl.max / tl.min with return_indices) on rows holding NaNs
give what Triton's interpreter gives (TRITON_INTERPRET=1, run in a subprocess on this
very module): NaNs are skipped, ties go to the first index."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import triton
import triton.language as tl

R, C = 8, 16


@triton.jit
def arg_reductions_kernel(x_ptr, out_ptr, vals_ptr, R: tl.constexpr, C: tl.constexpr):
    rows, cols = tl.arange(0, R), tl.arange(0, C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :])
    tl.store(out_ptr + 0 * R + rows, tl.argmax(x, 1))
    tl.store(out_ptr + 1 * R + rows, tl.argmin(x, 1))
    tl.store(out_ptr + 2 * R + rows, tl.argmax(x, 1, tie_break_left=False))
    tl.store(out_ptr + 3 * R + rows, tl.argmin(x, 1, tie_break_left=False))
    vmax, imax = tl.max(x, 1, return_indices=True)
    vmin, imin = tl.min(x, 1, return_indices=True)
    tl.store(out_ptr + 4 * R + rows, imax)
    tl.store(out_ptr + 5 * R + rows, imin)
    tl.store(vals_ptr + rows, vmax)
    tl.store(vals_ptr + R + rows, vmin)
    tl.store(out_ptr + 6 * R + cols, tl.argmax(x, 0), mask=cols < C)


def rows_with_nans(dtype):
    """Distinct values (no ties), NaNs first, last, in the middle, next to the
    extremes, and a row of one NaN among equal-looking neighbours."""
    g = torch.Generator().manual_seed(0)
    x = torch.randperm(R * C, generator=g).float().reshape(R, C) - R * C / 2
    nan = float("nan")
    x[0, 0] = nan
    x[1, C - 1] = nan
    x[2, 3] = x[2, 9] = nan
    x[3, x[3].argmax()] = nan                  # the maximum itself
    x[4, int(x[4].argmax()) + 1 if int(x[4].argmax()) + 1 < C else 0] = nan
    x[5, ::2] = nan                            # every other element
    x[6, 1:] = nan                             # one number, then NaNs
    return x.to(dtype)


def run_arg_reductions(x):
    out = torch.full((7 * max(R, C),), -1, dtype=torch.int32)
    vals = torch.empty(2 * R, dtype=x.dtype)
    arg_reductions_kernel[(1,)](x, out, vals, R=R, C=C)
    return out.numpy(), vals.float().numpy()


@pytest.fixture(scope="module")
def interpreter_results(tmp_path_factory):
    path = tmp_path_factory.mktemp("interp") / "ref.npz"
    script = textwrap.dedent(f"""
        import sys, numpy as np, torch
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import test_conformance_argminmax as t
        results = {{}}
        for name in ("float32", "float16"):
            out, vals = t.run_arg_reductions(t.rows_with_nans(getattr(torch, name)))
            results[name + "_out"], results[name + "_vals"] = out, vals
        np.savez({str(path)!r}, **results)
    """)
    env = dict(os.environ, TRITON_INTERPRET="1")
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=300)
    data = np.load(path)
    return {key: data[key] for key in data.files}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_arg_reductions_with_nans_match_the_interpreter(dtype, interpreter_results):
    name = str(dtype).split(".")[-1]
    out, vals = run_arg_reductions(rows_with_nans(dtype))
    np.testing.assert_array_equal(out, interpreter_results[name + "_out"])
    np.testing.assert_array_equal(vals, interpreter_results[name + "_vals"])
    # Independently: numpy's nanargmax / nanargmin over the rows.
    x = rows_with_nans(dtype).float().numpy()
    np.testing.assert_array_equal(out[:R], np.nanargmax(x, 1))
    np.testing.assert_array_equal(out[R:2 * R], np.nanargmin(x, 1))


@triton.jit
def argmax_row_kernel(x_ptr, out_ptr, C: tl.constexpr):
    tl.store(out_ptr, tl.argmax(tl.load(x_ptr + tl.arange(0, C)), 0))
    tl.store(out_ptr + 1, tl.argmin(tl.load(x_ptr + tl.arange(0, C)), 0))


def test_all_nan_row_gives_the_first_index_as_numpy_and_torch_do():
    # The interpreter raises on an all-NaN row (np.nanargmax); numpy's and torch's
    # argmax give the first NaN.
    x = torch.full((C,), float("nan"))
    out = torch.full((2,), -1, dtype=torch.int32)
    argmax_row_kernel[(1,)](x, out, C=C)
    assert out.tolist() == [int(np.argmax(x.numpy())), int(torch.argmin(x))] == [0, 0]


@triton.jit
def sum_and_max_kernel(x_ptr, out_ptr, C: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, C))
    tl.store(out_ptr, tl.sum(x, 0) + tl.max(x, 0))


def test_only_arg_reductions_get_the_nan_guard():
    """IR in, IR out: the TTIR of an argmax converts to a linalg.generic that tests
    both operands for NaN (`arith.cmpf uno`); sum and max reductions do not."""
    from triton_spirv.stages import ttir_to_linalg_text
    x, out = torch.randn(C), torch.empty(2, dtype=torch.int32)
    argmax_ttir = argmax_row_kernel[(1,)](x, out, C=C).asm["ttir"]
    assert ttir_to_linalg_text(argmax_ttir).count("arith.cmpf uno") == 4   # 2 per reduction
    other_ttir = sum_and_max_kernel[(1,)](x, torch.empty(1), C=C).asm["ttir"]
    assert "arith.cmpf uno" not in ttir_to_linalg_text(other_ttir)
