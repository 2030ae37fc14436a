"""Arg reductions along rows of at least 32 elements run in 16 lanes of (value, index)
pairs in the CPU shape (ttir_to_linalg/reductions.py, `_lane_pair_combine`): lane l
keeps the extreme of elements l, l + 16, ..., then the lanes combine. Regrouping is
right only for combines that order the pairs totally (ties to the smaller index), so
these rows hold many ties and NaNs. References: numpy, as Triton's interpreter computes
tl.argmax / tl.argmin (NaNs skipped, the first index of the extreme, the first element
of an all-NaN row), and torch eager for the combine Inductor writes (a NaN the extreme)."""
import numpy as np
import pytest
import torch
import torch._dynamo
import torch._inductor.config as inductor_config

import triton
import triton.language as tl

R, C = 16, 256


@triton.jit
def arg_extremes_kernel(x_ptr, out_ptr, vals_ptr, R: tl.constexpr, C: tl.constexpr):
    rows, cols = tl.arange(0, R), tl.arange(0, C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :])
    vmax, imax = tl.max(x, 1, return_indices=True, return_indices_tie_break_left=True)
    vmin, imin = tl.min(x, 1, return_indices=True, return_indices_tie_break_left=True)
    tl.store(out_ptr + rows, imax)
    tl.store(out_ptr + R + rows, imin)
    tl.store(out_ptr + 2 * R + rows, tl.argmax(x, 1, tie_break_left=False))
    tl.store(vals_ptr + rows, vmax)
    tl.store(vals_ptr + R + rows, vmin)


def _rows(dtype) -> torch.Tensor:
    gen = torch.Generator().manual_seed(3)
    x = (torch.randn(R, C, generator=gen) * 3).round()      # many ties
    if dtype.is_floating_point:
        x[1, 5] = x[2, 200] = x[2, 17] = float("nan")
        x[3, :] = float("nan")
        x[4, ::3] = float("nan")
        x[5, :] = 7.0                                       # all tied
    return x.to(dtype)


def _first_extremes(x: np.ndarray, pick) -> list:
    """Per row: the first index of the extreme non-NaN value, 0 for an all-NaN row."""
    out = []
    for row in x:
        finite = ~np.isnan(row)
        if not finite.any():
            out.append(0)
            continue
        extreme = pick(row[finite])
        out.append(int(np.flatnonzero(finite & (row == extreme))[0]))
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_triton_arg_extremes_in_lanes(dtype):
    x = _rows(dtype)
    out = torch.zeros(3 * R, dtype=torch.int32)
    vals = torch.zeros(2 * R, dtype=dtype)
    arg_extremes_kernel[(1,)](x, out, vals, R, C)
    xs = x.float().numpy()
    assert out[:R].tolist() == _first_extremes(xs, np.max)
    assert out[R:2 * R].tolist() == _first_extremes(xs, np.min)
    # tie_break_left=False: any index of the maximum
    for row, index in enumerate(out[2 * R:].tolist()):
        finite = xs[row][~np.isnan(xs[row])]
        if finite.size:
            assert xs[row][index] == finite.max(), (row, index)


def test_inductor_argmax_in_lanes_takes_nans_as_torch_does():
    x = _rows(torch.float32)
    fn = lambda t: (t.argmax(1), t.argmin(1), torch.max(t, 1))  # noqa: E731
    expected = fn(x)
    torch._dynamo.reset()
    try:
        with inductor_config.patch(cpu_backend="triton", compile_threads=1,
                                   force_disable_caches=True):
            got = torch.compile(fn)(x)
    finally:
        torch._dynamo.reset()
    torch.testing.assert_close(got, expected, equal_nan=True)
