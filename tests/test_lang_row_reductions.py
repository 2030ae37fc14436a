"""Row reductions of tiles with fewer rows than the work-group has work-items
(memref_stage/work_group_rows.py: in the GPU shape each row's columns are split into
interleaved strips folded by all work-items, then the owners of the row statistics fold
the strips' partials). Checked in the CPU and the GPU shape on the active device
against torch, the online-softmax statistics of an attention loop too, and the GPU
form under Oclgrind's race detector (the partials are written and read by different
work-items across a barrier)."""
import os
import shutil
import subprocess
import sys

import pytest
import torch
import triton
import triton.language as tl

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OCLGRIND = shutil.which("oclgrind")
SHAPES = ["cpu", "gpu"]


@triton.jit
def row_stats_kernel(x_ptr, max_ptr, min_ptr, sum_ptr, rows, cols,
                     ROWS: tl.constexpr, COLS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, COLS)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None] * cols + c[None, :], mask=mask, other=float("nan"))
    tl.store(max_ptr + r, tl.max(tl.where(mask, x, -float("inf")), axis=1), mask=r < rows)
    tl.store(min_ptr + r, tl.min(tl.where(mask, x, float("inf")), axis=1), mask=r < rows)
    tl.store(sum_ptr + r, tl.sum(tl.where(mask, x, 0.0), axis=1), mask=r < rows)


@triton.jit
def row_int_kernel(x_ptr, sum_ptr, xor_ptr, max_ptr, cols, ROWS: tl.constexpr,
                   COLS: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, COLS)
    x = tl.load(x_ptr + r[:, None] * cols + c[None, :], mask=c[None, :] < cols, other=0)
    tl.store(sum_ptr + r, tl.sum(x, axis=1))
    tl.store(xor_ptr + r, tl.xor_sum(x, axis=1))
    tl.store(max_ptr + r, tl.max(x, axis=1))


@triton.jit
def online_softmax_stats_kernel(q_ptr, k_ptr, m_ptr, l_ptr, n_ctx, scale,
                                M: tl.constexpr, N: tl.constexpr, D: tl.constexpr):
    """The row statistics of attention's inner loop (tutorial 06): row max and row sum
    of exp2 over blocks of N keys, rescaled as the max grows."""
    r = tl.program_id(0) * M + tl.arange(0, M)
    c = tl.arange(0, N)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + r[:, None] * D + d[None, :])
    m_i = tl.zeros([M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([M], dtype=tl.float32) + 1.0
    for start in range(0, n_ctx, N):
        k = tl.load(k_ptr + (start + c[:, None]) * D + d[None, :])
        qk = tl.dot(q, tl.trans(k))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * scale)
        p = tl.exp2(qk * scale - m_ij[:, None])
        alpha = tl.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_ij
    tl.store(m_ptr + r, m_i)
    tl.store(l_ptr + r, l_i)


def _row_stats(rows, cols, block_rows, block_cols, num_warps, shape, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cols, generator=gen)
    outs = [torch.full((rows,), 7.0) for _ in range(3)]
    row_stats_kernel[(triton.cdiv(rows, block_rows),)](
        x, *outs, rows, cols, ROWS=block_rows, COLS=block_cols, num_warps=num_warps,
        opencl_target=shape)
    return x, outs


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("rows, cols, block_rows, block_cols, num_warps", [
    (64, 32, 64, 32, 4),       # 2 strips of a row for 128 work-items
    (16, 512, 16, 512, 4),     # 8 strips
    (8, 64, 8, 64, 8),         # 32 strips (256 work-items), 2 columns each
    (45, 50, 16, 64, 4),       # masked rows and columns, 3 programs
    (8, 7, 8, 8, 8),           # 7 columns after the first: 2 strips (a power of two)
    (128, 32, 128, 32, 4),     # one row per work-item: nothing to split
])
def test_float_row_statistics(rows, cols, block_rows, block_cols, num_warps, shape):
    x, (row_max, row_min, row_sum) = _row_stats(rows, cols, block_rows, block_cols,
                                                num_warps, shape)
    torch.testing.assert_close(row_max, x.amax(1), rtol=0, atol=0)
    torch.testing.assert_close(row_min, x.amin(1), rtol=0, atol=0)
    torch.testing.assert_close(row_sum, x.sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("cols, block_cols", [(32, 32), (100, 128)])
def test_integer_row_reductions(cols, block_cols, shape):
    rows, block_rows = 32, 16
    x = torch.randint(-1000, 1000, (rows, cols), generator=torch.Generator().manual_seed(1),
                      dtype=torch.int32)
    outs = [torch.zeros(rows, dtype=torch.int32) for _ in range(3)]
    row_int_kernel[(rows // block_rows,)](x, *outs, cols, ROWS=block_rows, COLS=block_cols,
                                          num_warps=4, opencl_target=shape)
    xor = torch.zeros(rows, dtype=torch.int32)
    for column in x.unbind(1):
        xor ^= column
    assert torch.equal(outs[0], x.sum(1, dtype=torch.int32))
    assert torch.equal(outs[1], xor)
    assert torch.equal(outs[2], x.amax(1))


def _online_stats(shape, m=64, n=32, d=64, n_ctx=128, scale=0.5):
    gen = torch.Generator().manual_seed(2)
    q = torch.randn(2 * m, d, generator=gen)
    k = torch.randn(n_ctx, d, generator=gen)
    row_max, row_sum = torch.empty(2 * m), torch.empty(2 * m)
    online_softmax_stats_kernel[(2,)](q, k, row_max, row_sum, n_ctx, scale, M=m, N=n, D=d,
                                      num_warps=4, opencl_target=shape)
    scores = (q.double() @ k.double().T) * scale
    expected_max = scores.amax(1)
    # l starts at 1 (times 2^(m_0 - m) = 0 once the first block's max is finite).
    expected_sum = torch.exp2(scores - expected_max[:, None]).sum(1)
    return (row_max, row_sum), (expected_max.float(), expected_sum.float())


@pytest.mark.parametrize("shape", SHAPES)
def test_online_softmax_statistics(shape):
    (row_max, row_sum), (expected_max, expected_sum) = _online_stats(shape)
    torch.testing.assert_close(row_max, expected_max, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(row_sum, expected_sum, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(OCLGRIND is None, reason="oclgrind is not installed")
def test_gpu_form_has_no_race_under_oclgrind(tmp_path):
    from launcher.replay import list_recordings, recording

    with recording(str(tmp_path)):
        _row_stats(64, 32, 64, 32, 4, "gpu")
        _row_stats(8, 7, 8, 8, 8, "gpu")
        _online_stats("gpu")
    paths = list_recordings(str(tmp_path))
    assert len(paths) == 3, "the launches were not recorded"
    proc = subprocess.run([OCLGRIND, "--data-races", "--uninitialized", "--local-mem-size",
                           str(256 * 1024), sys.executable,
                           os.path.join(REPO_ROOT, "launcher", "replay.py"), *paths],
                          capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert "data race" not in proc.stderr and "Uninitialized" not in proc.stderr, \
        proc.stderr[-3000:]
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
